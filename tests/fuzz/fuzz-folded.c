/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzz target for the analysis of a bundle's folded stacks (src/bundle/bundle-analyze.c):
 * tprof-bundle shows bundles copied from other machines, and its one-line answer reads
 * stacks.folded, baseline.folded and event.folded as they are. The input is a byte (the host's
 * CPUs in the manifest), then the three files separated by NUL bytes. Each is read with
 * folded_load_file(); then everything show and the page do with them: the rankings of both
 * comparisons, the rest of the bundle, the answer and where its rise ran, the top functions.
 */
#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle/bundle-analyze.h"
#include "fuzz-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void load(const char *p, size_t n, Folded *ret) {
        FILE *f;

        *ret = FOLDED_NULL;
        if (n == 0)
                return;
        f = fmemopen((void *) p, n, "r");
        if (!f)
                return;
        if (folded_load_file(f, ret) < 0)
                *ret = FOLDED_NULL;
        fclose(f);
}

static void check_rises(const Rise *r, size_t n) {
        for (size_t i = 0; i < n; i++) {
                assert(r[i].name);
                assert(isfinite(r[i].z) && r[i].z >= RISE_Z_MIN);
                assert(r[i].slice_share >= 0 && r[i].slice_share <= 1);
                assert(r[i].baseline_share >= 0 && r[i].baseline_share <= 1);
                assert(i == 0 || r[i - 1].z >= r[i].z);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        Folded f[3];
        Folded rest = FOLDED_NULL;
        Rise *lists[4] = {};
        size_t ns[4] = {};
        Answer answer = {};
        FunctionStat *fs = NULL;
        size_t n_fs = 0;
        char *buf, *p, *end;
        unsigned n_cpus;
        bool has_rest;

        if (size < 1)
                return 0;
        n_cpus = data[0];
        buf = fuzz_copy(data + 1, size - 1);
        if (!buf)
                return 0;
        p = buf;
        end = buf + size - 1;
        for (size_t k = 0; k < 3; k++) {
                char *nul = memchr(p, '\0', (size_t) (end - p));
                size_t n = nul ? (size_t) (nul - p) : (size_t) (end - p);
                load(p, n, &f[k]);
                p = nul ? nul + 1 : end;
        }

        (void) folded_rises(&f[0], &f[1], RISE_PROCESS, SIZE_MAX, &lists[0], &ns[0]);
        (void) folded_rises(&f[0], &f[1], RISE_FUNCTION, SIZE_MAX, &lists[1], &ns[1]);
        has_rest = folded_rest(&f[0], &f[1], &f[2], &rest) >= 0;
        if (has_rest) {
                (void) folded_rises(&f[2], &rest, RISE_PROCESS, SIZE_MAX, &lists[2], &ns[2]);
                (void) folded_rises(&f[2], &rest, RISE_FUNCTION, SIZE_MAX, &lists[3], &ns[3]);
        }
        for (size_t k = 0; k < 4; k++)
                check_rises(lists[k], ns[k]);

        if (answer_choose(&(AnswerInput) {
                                  .slice_proc = lists[0],
                                  .n_slice_proc = ns[0],
                                  .slice_func = lists[1],
                                  .n_slice_func = ns[1],
                                  .near_proc = lists[2],
                                  .n_near_proc = ns[2],
                                  .near_func = lists[3],
                                  .n_near_func = ns[3],
                                  .near = has_rest ? &f[2] : NULL,
                                  .rest = has_rest ? &rest : NULL,
                                  .n_cpus = n_cpus,
                          },
                          &f[0], &f[1], &answer) >= 0 &&
            answer.rise.name) {
                assert(answer.from >= 0 && answer.from < _ANSWER_FROM_MAX);
                assert(isfinite(answer.rise.z));
                assert(!answer.under || answer.under[0] != '\0');
                double share = folded_key_share(&f[0], answer_from_function(answer.from) ? RISE_FUNCTION : RISE_PROCESS,
                                                answer.rise.name);
                assert(share >= 0 && share <= 1);
        }
        if (folded_functions(&f[0], &fs, &n_fs) >= 0)
                function_stats_free(fs, n_fs);

        answer_done(&answer);
        for (size_t k = 0; k < 4; k++)
                rises_free(lists[k], ns[k]);
        folded_done(&rest);
        for (size_t k = 0; k < 3; k++)
                folded_done(&f[k]);
        free(buf);
        return 0;
}
