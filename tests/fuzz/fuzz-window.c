/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzz target for window files (docs/window-format.md). tprof-bundle reads windows from bundles
 * that may come from another machine, and a damaged disk or a crash leaves damaged windows in the
 * ring, so the reader must take any bytes. The input is a whole file, put in a memfd and read
 * through its /proc/self/fd path twice: as it is (header and chunk checksums mostly fail, which
 * exercises the resync and truncation paths), and with every checksum the harness can locate
 * recomputed, so that mutations reach the header strings, the chain tables and the sample
 * columns. Each pass runs window_read() and, chunk by chunk in reverse (to rebuild chain state
 * from scratch), window_file_open(verify) + window_file_decode_chunk(), touching every sample.
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
#include "store/store-codec.h"
#include "store/store-window.h"
#include "fuzz-util.h"
#include "fuzz-window-util.h"

static int memfd = -EBADF;
static char memfd_path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv) {
        memfd = memfd_create("fuzz-window", MFD_CLOEXEC);
        if (memfd < 0)
                abort();
        snprintf(memfd_path, sizeof memfd_path, "/proc/self/fd/%d", memfd);
        return 0;
}

static void put_file(const uint8_t *data, size_t size) {
        if (ftruncate(memfd, 0) < 0 || (size > 0 && pwrite(memfd, data, size, 0) != (ssize_t) size))
                abort();
}

static volatile size_t sink;

static void touch_sample(const Sample *s) {
        size_t n = strlen(s->comm);

        for (uint32_t i = 0; i < s->n_frames; i++) {
                n += strlen(s->frames[i].symbol) + strlen(s->frames[i].dso) + (size_t) s->frames[i].kernel;
                if (s->frames[i].build_id) /* the chain's build id table's hex */
                        n += strlen(s->frames[i].build_id);
        }
        if (s->cgroup)
                n += strlen(s->cgroup);
        sink += n;
}

static int on_sample(const Sample *s, void *userdata) {
        touch_sample(s);
        return 0;
}

static void read_file(void) {
        _cleanup_(window_file_freep) WindowFile *w = NULL;
        WindowReadStats st;
        int r;

        r = window_read(memfd_path, on_sample, NULL, &st);
        assert(r >= 0 || r == -EBADMSG || r == -EPROTONOSUPPORT || r == -ENOMEM || r == -E2BIG);
        if (r >= 0)
                assert(st.corrupt_chunks == 0 || st.first_corrupt_offset != UINT64_MAX);

        if (window_file_open(memfd_path, /* verify= */ true, &w) < 0)
                return;
        (void) strlen(w->header.info.host);
        (void) strlen(w->header.info.boot_id);
        (void) strlen(w->header.info.kernel_release);
        (void) strlen(w->header.info.event);
        for (size_t i = w->n_chunks; i > 0; i--) {
                _cleanup_(decoded_chunk_freep) DecodedChunk *d = NULL;

                if (window_file_decode_chunk(w, i - 1, &d) < 0)
                        continue;
                for (size_t k = 0; k < decoded_chunk_n_samples(d); k++) {
                        Sample s;
                        decoded_chunk_sample(d, k, &s);
                        touch_sample(&s);
                        assert(decoded_chunk_sample_time(d, k) == s.t_ns);
                }
                for (size_t k = 0; k < decoded_chunk_n_lost(d); k++) {
                        uint32_t cpu;
                        uint64_t n;
                        decoded_chunk_lost(d, k, &cpu, &n);
                        sink += cpu + n;
                }
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ uint8_t *copy = NULL;

        /* Larger inputs only repeat what smaller ones reach, more slowly. */
        if (size > 256 * 1024)
                return 0;

        put_file(data, size);
        read_file();

        copy = (uint8_t *) fuzz_copy(data, size);
        if (!copy)
                return 0;
        fuzz_window_fix_checksums(copy, size);
        if (size == 0 || memcmp(copy, data, size) != 0) {
                put_file(copy, size);
                read_file();
        }
        return 0;
}
