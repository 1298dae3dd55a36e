/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The section of tprof-bundle show that draws the slice's CPU activity: a row of busy shares per
 * CPU (per group of CPUs on a large host, the busiest of them), the event's second marked under
 * it, and the CPUs that delivered too few samples to be believed.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "basic/macro.h"
#include "basic/time-util.h"
#include "tprof-bundle/bundle-output.h"
#include "tprof-bundle/bundle-show.h"

static const char *level_char(const Show *s, uint64_t busy, uint64_t samples, char *buf) {
        static const char *const blocks[] = { "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█" };
        static const char ascii[] = ".:-=+*#%@";

        if (samples == 0)
                return " ";
        double ratio = (double) busy / (double) samples;
        if (s->utf8)
                return blocks[(size_t) lround(ratio * 7)];
        buf[0] = ascii[(size_t) lround(ratio * 8)];
        buf[1] = '\0';
        return buf;
}

static void heat_row(const Show *s, const char *label, unsigned cpu_from, unsigned cpu_to, unsigned bucket,
                     unsigned n_cols, bool captured) {
        const Activity *a = &s->activity;
        char buf[2];

        printf("  %-7s |", label);
        for (unsigned c = 0; c < n_cols; c++) {
                /* A row of several CPUs shows the busiest of them: a pegged CPU must not be averaged away. */
                uint64_t best_busy = 0, best_samples = 0;
                for (unsigned cpu = cpu_from; cpu < cpu_to && cpu < a->n_cpus; cpu++) {
                        uint64_t busy = 0, samples = 0;
                        for (unsigned sec = c * bucket; sec < (c + 1) * bucket && sec < a->n_seconds; sec++) {
                                busy += a->busy[cpu * a->n_seconds + sec];
                                samples += a->samples[cpu * a->n_seconds + sec];
                        }
                        if (samples > 0 &&
                            (best_samples == 0 || (double) busy / (double) samples > (double) best_busy / (double) best_samples)) {
                                best_busy = busy;
                                best_samples = samples;
                        }
                }
                fputs(level_char(s, best_busy, best_samples, buf), stdout);
        }
        printf("|%s\n", captured ? " (named by the rule)" : "");
}

void show_print_activity(const Show *s) {
        const Activity *a = &s->activity;
        unsigned width = (s->columns ?: 80) > 20 ? (s->columns ?: 80) - 12 : 8;
        unsigned bucket, n_cols, group;
        char label[32];

        show_section(s, "CPU activity over the slice");
        if (s->activity_error < 0) {
                if (!show_print_unreadable(s, NULL, BUNDLE_ACTIVITY, NULL))
                        printf("  (no %s: %s)\n", BUNDLE_ACTIVITY, strerror(-s->activity_error));
                return;
        }
        if (a->n_cpus == 0 || a->n_seconds == 0) {
                printf("  (no samples in the slice)\n");
                return;
        }
        bucket = (a->n_seconds + width - 1) / width;
        n_cols = (a->n_seconds + bucket - 1) / bucket;
        group = (a->n_cpus + HEATMAP_ROWS_MAX - 1) / HEATMAP_ROWS_MAX;
        printf("  busy share of the samples (the idle task left out, not its interrupt work), %s per column, %s 0%% .. %s 100%%, blank: no samples\n",
               bucket == 1 ? "1s" : (snprintf(label, sizeof label, "%us", bucket), label),
               s->utf8 ? "▁" : ".", s->utf8 ? "█" : "@");
        if (group > 1)
                printf("  rows of %u CPUs show the busiest of them\n", group);
        for (unsigned cpu = 0; cpu < a->n_cpus; cpu += group) {
                if (group == 1)
                        snprintf(label, sizeof label, "cpu%u", cpu);
                else
                        snprintf(label, sizeof label, "%u-%u", cpu, MIN(cpu + group, a->n_cpus) - 1);
                heat_row(s, label, cpu, cpu + group, bucket, n_cols, group == 1 && s->has_cpu && s->cpu == cpu);
        }
        if (group > 1 && s->has_cpu && s->cpu < a->n_cpus) {
                snprintf(label, sizeof label, "cpu%u", s->cpu);
                heat_row(s, label, s->cpu, s->cpu + 1, bucket, n_cols, true);
        }
        if (s->has_event_second) {
                char o[32];
                unsigned col = s->event_second / bucket;
                printf("  %-7s  %*s^ event (%s into the slice)\n", "", (int) col, "",
                       show_format_offset(o, sizeof o, (int64_t) s->event_second * (int64_t) NSEC_PER_SEC));
        }
        for (size_t i = 0; i < s->n_shortfalls; i++) {
                const CpuShortfall *f = &s->shortfalls[i];
                printf("  %scpu%u delivered %u%% of the samples its %" PRIu64 " Hz asks for%s: time it did not have "
                       "(a vCPU the host did not run, interrupts held off%s), so its work is undercounted\n",
                       s->color ? ANSI_YELLOW : "", f->cpu, (unsigned) (100 * f->samples / f->expected),
                       s->m->profile_freq_hz, s->color ? ANSI_NORMAL : "",
                       s->m->slice_lost > 0 ? ", or samples lost in the rings" : "");
        }
        if (a->n_skipped > 0)
                printf("  (%" PRIu64 " malformed rows of %s skipped)\n", a->n_skipped, BUNDLE_ACTIVITY);
}
