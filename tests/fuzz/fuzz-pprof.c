/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzz target for the pprof builder fed from a window file, as tprof-bundle export --format pprof
 * feeds it: every sample the window reader gives (its frames' DSOs, symbols and build ids, its comm
 * and cgroup come from the file, so they may be anything) goes into a builder, which is then encoded.
 * The encoding is read back and must hold together: mapping, location and function ids are their
 * place in their lists plus one, every id a sample, location or line names exists, every string
 * index is in the string table, and the main program's mapping, moved first for the encoding, is
 * moved back (a second encoding is the same bytes). The input is a whole window file, in a memfd
 * read through its /proc/self/fd path, with every checksum the harness can locate recomputed (as
 * fuzz-window's second pass does), so that mutations reach the frames.
 */
#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "basic/cleanup.h"
#include "pprof/pprof-builder.h"
#include "pprof/profile.pb-c.h"
#include "store/store-codec.h"
#include "store/store-window.h"
#include "fuzz-util.h"
#include "fuzz-window-util.h"

static int memfd = -EBADF;
static char memfd_path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv) {
        memfd = memfd_create("fuzz-pprof", MFD_CLOEXEC);
        if (memfd < 0)
                abort();
        snprintf(memfd_path, sizeof memfd_path, "/proc/self/fd/%d", memfd);
        return 0;
}

static int on_sample(const Sample *s, void *userdata) {
        PprofBuilder *b = userdata;
        PprofLabel extra = { .key = "cgroup", .str = s->cgroup };
        int r;

        r = pprof_builder_add_sample(b, s, (int64_t) s->t_ns, &extra, s->cgroup ? 1 : 0);
        assert(r >= 0 || r == -ENOMEM || r == -EFBIG);
        return 0;
}

static void check_profile(const uint8_t *buf, size_t n) {
        Perftools__Profiles__Profile *p = perftools__profiles__profile__unpack(NULL, n, buf);

        assert(p);
        assert(p->n_string_table > 0 && p->string_table[0][0] == '\0');
#define STR_OK(i) assert((i) >= 0 && (uint64_t) (i) < p->n_string_table)
        for (size_t i = 0; i < p->n_mapping; i++) {
                assert(p->mapping[i]->id == i + 1);
                STR_OK(p->mapping[i]->filename);
                STR_OK(p->mapping[i]->build_id);
        }
        for (size_t i = 0; i < p->n_function; i++) {
                assert(p->function[i]->id == i + 1);
                STR_OK(p->function[i]->name);
                STR_OK(p->function[i]->system_name);
        }
        for (size_t i = 0; i < p->n_location; i++) {
                const Perftools__Profiles__Location *l = p->location[i];

                assert(l->id == i + 1);
                assert(l->mapping_id >= 1 && l->mapping_id <= p->n_mapping);
                for (size_t k = 0; k < l->n_line; k++)
                        assert(l->line[k]->function_id >= 1 && l->line[k]->function_id <= p->n_function);
        }
        for (size_t i = 0; i < p->n_sample; i++) {
                const Perftools__Profiles__Sample *s = p->sample[i];

                for (size_t k = 0; k < s->n_location_id; k++)
                        assert(s->location_id[k] >= 1 && s->location_id[k] <= p->n_location);
                for (size_t k = 0; k < s->n_label; k++) {
                        STR_OK(s->label[k]->key);
                        STR_OK(s->label[k]->str);
                        STR_OK(s->label[k]->num_unit);
                }
        }
#undef STR_OK
        perftools__profiles__profile__free_unpacked(p, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(pprof_builder_freep) PprofBuilder *b = NULL;
        _cleanup_free_ uint8_t *copy = NULL, *a = NULL, *again = NULL;
        size_t na, nagain;
        int r;

        if (size > 256 * 1024)
                return 0;
        copy = (uint8_t *) fuzz_copy(data, size);
        if (!copy)
                return 0;
        fuzz_window_fix_checksums(copy, size);
        if (ftruncate(memfd, 0) < 0 || (size > 0 && pwrite(memfd, copy, size, 0) != (ssize_t) size))
                abort();

        if (pprof_builder_new(10 * 1000 * 1000, &b) < 0)
                return 0;
        r = window_read(memfd_path, on_sample, b, NULL);
        assert(r >= 0 || r == -EBADMSG || r == -EPROTONOSUPPORT || r == -ENOMEM || r == -E2BIG);

        if (pprof_builder_encode(b, /* gzip= */ false, &a, &na) < 0)
                return 0;
        check_profile(a, na);
        if (pprof_builder_encode(b, /* gzip= */ false, &again, &nagain) < 0)
                return 0;
        assert(na == nagain && memcmp(a, again, na) == 0);
        return 0;
}
