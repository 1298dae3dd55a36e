/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * activity.tsv's grid and the CPUs short of samples (bundle-activity.h). Every row is checked and
 * malformed ones are counted rather than trusted; the grid is bounded by ACTIVITY_CPUS_MAX and
 * ACTIVITY_SECONDS_MAX.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "basic/alloc-util.h"
#include "basic/macro.h"
#include "bundle/bundle-activity.h"

void activity_done(Activity *a) {
        free(a->samples);
        free(a->busy);
        *a = (Activity) {};
}

int activity_load(const char *path, unsigned n_seconds_hint, Activity *ret) {
        _cleanup_fclose_ FILE *in = NULL;
        _cleanup_free_ char *line = NULL;
        _cleanup_free_ unsigned (*rows)[4] = NULL;
        size_t n = 0, allocated = 0, cap = 0;
        unsigned max_cpu = 0, max_sec = 0;
        uint64_t skipped = 0;
        Activity a = {};
        ssize_t l;

        in = fopen(path, "re");
        if (!in)
                return -errno;
        while ((l = getline(&line, &cap, in)) >= 0) {
                unsigned sec, cpu, samples, busy;
                char extra;

                if (line[0] == '#' || line[0] == '\n')
                        continue;
                if (l > 256 || sscanf(line, "%u\t%u\t%u\t%u %c", &sec, &cpu, &samples, &busy, &extra) != 4 ||
                    cpu >= ACTIVITY_CPUS_MAX || sec >= ACTIVITY_SECONDS_MAX || busy > samples) {
                        skipped++;
                        continue;
                }
                if (n >= (size_t) ACTIVITY_CPUS_MAX * 600) {
                        skipped++;
                        continue;
                }
                if (!GREEDY_REALLOC(rows, allocated, n + 1))
                        return -ENOMEM;
                rows[n][0] = sec;
                rows[n][1] = cpu;
                rows[n][2] = samples;
                rows[n][3] = busy;
                n++;
                max_cpu = MAX(max_cpu, cpu + 1);
                max_sec = MAX(max_sec, sec + 1);
        }
        a.n_cpus = max_cpu;
        n_seconds_hint = MIN(n_seconds_hint, ACTIVITY_SECONDS_MAX);
        a.n_seconds = MAX(max_sec, n_seconds_hint);
        a.n_skipped = skipped;
        if (a.n_cpus > 0 && a.n_seconds > 0) {
                if ((uint64_t) a.n_cpus * a.n_seconds > (UINT64_C(64) << 20))
                        return -EFBIG;
                a.samples = new0(uint32_t, (size_t) a.n_cpus * a.n_seconds);
                a.busy = new0(uint32_t, (size_t) a.n_cpus * a.n_seconds);
                if (!a.samples || !a.busy) {
                        activity_done(&a);
                        return -ENOMEM;
                }
                /* A cell's rows are summed, saturated: a damaged file's repeated rows must not wrap
                 * its samples below its busy samples (show's levels index by their ratio). */
                for (size_t i = 0; i < n; i++) {
                        size_t k = (size_t) rows[i][1] * a.n_seconds + rows[i][0];
                        a.samples[k] = (uint32_t) MIN((uint64_t) a.samples[k] + rows[i][2], (uint64_t) UINT32_MAX);
                        a.busy[k] = (uint32_t) MIN((uint64_t) a.busy[k] + rows[i][3], (uint64_t) UINT32_MAX);
                }
        }
        *ret = a;
        return 0;
}

static int cmp_shortfall(const void *x, const void *y) {
        const CpuShortfall *a = x, *b = y;
        double l = (double) a->samples / (double) a->expected, r = (double) b->samples / (double) b->expected;

        if (l != r)
                return l < r ? -1 : 1;
        return (a->cpu > b->cpu) - (a->cpu < b->cpu);
}

size_t activity_shortfalls(const Activity *a, uint64_t freq_hz, unsigned from, unsigned to, CpuShortfall *ret,
                           size_t max_n) {
        _cleanup_free_ bool *sampled = NULL; /* seconds in which some CPU had samples */
        size_t n = 0;

        to = MIN(to, a->n_seconds);
        /* Rows dropped (malformed, or past the reader's cap) would read as missing samples. */
        if (freq_hz == 0 || freq_hz > SHORTFALL_FREQ_MAX || max_n == 0 || to <= from || a->n_skipped > 0)
                return 0;
        sampled = new0(bool, to);
        if (!sampled)
                return 0;
        for (unsigned cpu = 0; cpu < a->n_cpus; cpu++)
                for (unsigned sec = from; sec < to; sec++)
                        sampled[sec] = sampled[sec] || a->samples[(size_t) cpu * a->n_seconds + sec] > 0;

        for (unsigned cpu = 0; cpu < a->n_cpus; cpu++) {
                const uint32_t *sm = a->samples + (size_t) cpu * a->n_seconds, *bz = a->busy + (size_t) cpu * a->n_seconds;
                unsigned first = to, last = from, judged = 0, idle = 0;
                uint64_t got = 0;

                /* From its first second with samples to its last (a CPU brought online or taken
                 * off inside the slice), leaving out the seconds no CPU has (the daemon stopped). */
                for (unsigned sec = from; sec < to; sec++)
                        if (sm[sec] > 0) {
                                first = MIN(first, sec);
                                last = sec;
                        }
                if (first == to) /* none at all: offline, or never sampled */
                        continue;
                for (unsigned sec = first; sec <= last; sec++) {
                        if (!sampled[sec])
                                continue;
                        judged++;
                        got += sm[sec];
                        idle += sm[sec] > bz[sec];
                }
                /* Only a CPU whose clock is seen to fire while it idles: where it does not (cycles,
                 * some hypervisors' idle), an idle CPU's missing samples are no lost time. */
                if (judged < SHORTFALL_SECONDS_MIN || 2 * idle < judged || 2 * got >= freq_hz * judged)
                        continue;
                CpuShortfall c = { cpu, got, freq_hz * judged };
                if (n < max_n)
                        ret[n++] = c;
                else if (cmp_shortfall(&c, &ret[n - 1]) < 0)
                        ret[n - 1] = c;
                qsort(ret, n, sizeof ret[0], cmp_shortfall);
        }
        return n;
}
