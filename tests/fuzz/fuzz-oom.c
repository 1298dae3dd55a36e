/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzz target for the OOM killer's victim in a bundle's log (src/bundle/bundle-oom.c): show and
 * report read the kernel's lines of log.jsonl, which a bundle copied from another machine may
 * hold in any shape. The input is the log's lines, '\n' between them, each a byte of flags (1: the
 * kernel's line, 2: the rule's trigger) then the message. Each message, an exact-size copy
 * without a NUL, is classified by bundle_oom_line() and fed to bundle_oom_victim_feed() in order.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bundle/bundle-oom.h"
#include "fuzz-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        OomVictim v = {};
        const uint8_t *p = data, *end = data + size;
        uint64_t t = 0;

        while (p < end) {
                const uint8_t *nl = memchr(p, '\n', (size_t) (end - p));
                const uint8_t *le = nl ?: end;
                uint8_t flags = *p;
                size_t n = le > p ? (size_t) (le - p - 1) : 0;
                char *msg = fuzz_copy(p + 1, n);
                const char *comm = NULL;
                size_t comm_len = SIZE_MAX;
                uint64_t pid = 0;
                OomLine l;

                if (!msg)
                        return 0;
                l = bundle_oom_line(msg, n, &pid, &comm, &comm_len);
                if (l == OOM_LINE_CHOSEN || l == OOM_LINE_KILLED) {
                        assert(comm >= msg && comm_len <= OOM_COMM_MAX && comm + comm_len < msg + n);
                        assert(comm[comm_len] == ')');
                }
                bundle_oom_victim_feed(&v, msg, n, flags & 1, flags & 2, ++t);
                if (v.found) {
                        assert(strlen(v.comm) <= OOM_COMM_MAX);
                        assert(v.t_perf_ns > 0 && v.t_perf_ns <= t);
                }
                free(msg);
                p = nl ? nl + 1 : end;
        }
        return 0;
}
