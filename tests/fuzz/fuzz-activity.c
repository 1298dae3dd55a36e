/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzz target for a bundle's activity.tsv (src/bundle/bundle-activity.c) and the heat map show
 * draws from it (src/tprof-bundle/bundle-show-activity.c): tprof-bundle shows bundles copied from
 * other machines, damaged or edited by hand. The input is a 16-byte header, then activity.tsv:
 *
 *   byte 0       flags: 1 UTF-8 blocks, 2 the rule captured a CPU, 4 the event's second is known,
 *                8 the slice lost samples
 *   byte 1       the terminal's columns (0: not cut)
 *   bytes 2-3    the slice's length in seconds (activity_load()'s hint), little-endian
 *   bytes 4-5    the captured CPU
 *   bytes 6-7    the event's second (taken modulo the grid's seconds + 1, as show's can only be
 *                within its slice)
 *   bytes 8-11   the profile's rate in Hz
 *   bytes 12-15  the seconds [from, to) the slice's samples cover whole, 16 bits each
 *
 * The file is read with activity_load() from a memfd, judged by activity_shortfalls() and drawn
 * by show_print_activity() (to /dev/null), as tprof-bundle show does.
 */
#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bundle/bundle-activity.h"
#include "tprof-bundle/bundle-show.h"
#include "tprof-bundle/tprof-bundle.h"
#include "fuzz-util.h"

/* tprof-bundle.c's, which holds main() and is not linked here. */
const char *arg_state_dir = "/nonexistent";
const char *arg_control_socket = NULL;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define HEADER 16

static uint32_t le16(const uint8_t *p) {
        return (uint32_t) p[0] | (uint32_t) p[1] << 8;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
        (void) argc;
        (void) argv;
        /* The heat map is printed; only what it does on the way matters. */
        assert(freopen("/dev/null", "w", stdout));
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        BundleManifest m = {};
        BundleEntry e = { .id = (char *) "x", .dirname = (char *) "x", .path = (char *) "/nonexistent" };
        Show s = { .entry = &e, .m = &m };
        char path[64];
        unsigned from, to;
        uint64_t freq;
        int fd, r;

        if (size < HEADER)
                return 0;
        fd = memfd_create("activity.tsv", MFD_CLOEXEC);
        if (fd < 0)
                return 0;
        if (write(fd, data + HEADER, size - HEADER) != (ssize_t) (size - HEADER)) {
                close(fd);
                return 0;
        }
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);

        s.utf8 = data[0] & 1;
        s.has_cpu = data[0] & 2;
        s.cpu = le16(data + 4);
        m.slice_lost = data[0] & 8 ? 1 : 0;
        m.profile_freq_hz = freq = (uint64_t) le16(data + 8) | (uint64_t) le16(data + 10) << 16;
        s.columns = data[1];
        s.n_seconds = le16(data + 2);
        from = le16(data + 12);
        to = le16(data + 14);

        r = activity_load(path, s.n_seconds, &s.activity);
        close(fd);
        s.activity_error = r;
        if (r >= 0) {
                const Activity *a = &s.activity;

                assert(a->n_cpus <= ACTIVITY_CPUS_MAX && a->n_seconds <= ACTIVITY_SECONDS_MAX);
                assert(a->n_seconds >= s.n_seconds);
                assert((a->n_cpus == 0 || a->n_seconds == 0) == !a->samples);
                /* What the heat map's levels rely on: no cell busier than it has samples. */
                for (size_t k = 0; a->samples && k < (size_t) a->n_cpus * a->n_seconds; k++)
                        assert(a->busy[k] <= a->samples[k]);
                s.n_seconds = a->n_seconds;
                s.has_event_second = data[0] & 4;
                s.event_second = le16(data + 6) % (a->n_seconds + 1);

                s.n_shortfalls = activity_shortfalls(a, freq, from, to, s.shortfalls, SHOW_SHORTFALLS_MAX);
                assert(s.n_shortfalls <= SHOW_SHORTFALLS_MAX);
                for (size_t i = 0; i < s.n_shortfalls; i++) {
                        const CpuShortfall *c = &s.shortfalls[i];
                        assert(c->cpu < a->n_cpus);
                        assert(c->expected > 0 && 2 * c->samples < c->expected);
                        assert(i == 0 || (double) s.shortfalls[i - 1].samples / (double) s.shortfalls[i - 1].expected <=
                                                 (double) c->samples / (double) c->expected);
                }
        } else
                assert(r == -EFBIG || r == -ENOMEM);

        show_print_activity(&s);
        activity_done(&s.activity);
        return 0;
}
