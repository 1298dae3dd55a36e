/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pprof export of a range of windows; see pprof-export.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "basic/alloc-util.h"
#include "basic/macro.h"
#include "basic/string-util.h"
#include "basic/time-util.h"
#include "pprof/pprof-builder.h"
#include "pprof/pprof-export.h"
#include "profile/profile-cgroup.h"

/* A window's samples from first_ns on were taken every period_ns (1e9 / its frequency). */
typedef struct WindowPeriod {
        uint64_t first_ns, period_ns;
} WindowPeriod;

typedef struct ExportPprof {
        PprofBuilder *builder;
        const ClockMap *clock;
        uint64_t exclude_from_ns, exclude_to_ns;
        bool exclude;
        WindowPeriod *periods; /* by first_ns */
        size_t n_periods, cur;
} ExportPprof;

static int window_period_compare(const void *a, const void *b) {
        const WindowPeriod *x = a, *y = b;
        return x->first_ns < y->first_ns ? -1 : x->first_ns > y->first_ns;
}

/* The period of the window a sample comes from: the last to start at or before it (a window being
 * written may have grown past the end its info gave). Samples come in time order. */
static uint64_t sample_period(ExportPprof *e, uint64_t t_ns) {
        if (e->n_periods == 0)
                return 0;
        if (t_ns < e->periods[e->cur].first_ns)
                e->cur = 0;
        while (e->cur + 1 < e->n_periods && e->periods[e->cur + 1].first_ns <= t_ns)
                e->cur++;
        return e->periods[e->cur].period_ns;
}

static int pprof_handler(const Sample *s, void *ud) {
        ExportPprof *e = ud;

        if (e->exclude && s->t_ns >= e->exclude_from_ns && s->t_ns <= e->exclude_to_ns)
                return 0;
        /* A daemon restarted with another --freq between two windows: each sample weighs its own
         * window's period, not the newest's. */
        pprof_builder_set_sample_period(e->builder, sample_period(e, s->t_ns));
        /* Attribution: the cgroup path and the names derived from it, only those the path has, so a
         * backend can filter and group by service, container and pod. */
        PprofLabel extra[4];
        size_t n_extra = 0;
        char container[CGROUP_UNIT_BYTES + 64], pod[CGROUP_UNIT_BYTES + 64];
        CgroupNames names;

        if (s->cgroup) {
                cgroup_names_parse(s->cgroup, &names);
                extra[n_extra++] = (PprofLabel) { .key = "cgroup", .str = s->cgroup };
                if (names.unit[0])
                        extra[n_extra++] = (PprofLabel) { .key = "unit", .str = names.unit };
                if (names.container_id[0])
                        extra[n_extra++] = (PprofLabel) {
                                .key = "container",
                                .str = cgroup_group_name(s->cgroup, CGROUP_BY_CONTAINER, container, sizeof container) };
                if (names.pod_uid[0])
                        extra[n_extra++] = (PprofLabel) {
                                .key = "pod", .str = cgroup_group_name(s->cgroup, CGROUP_BY_POD, pod, sizeof pod) };
        }
        return pprof_builder_add_sample(e->builder, s, (int64_t) clock_map_perf_to_realtime(e->clock, s->t_ns),
                                        extra, n_extra);
}

int export_pprof(char *const *paths, size_t n, uint64_t from_perf_ns, uint64_t to_perf_ns, const PprofMeta *meta,
                 FILE *out, ExportStats *ret_stats) {
        _cleanup_(pprof_builder_freep) PprofBuilder *b = NULL;
        PprofLabel labels[4];
        size_t n_labels = 0;
        WindowInfo info = {};
        bool have_info = false;
        ExportStats st = {};
        ExportPprof e = {};
        uint32_t freq_hz;
        int r;

        /* The newest readable window gives the profile's period and the clock mapping; every
         * window with samples the period of its own. */
        e.periods = new0(WindowPeriod, MAX(n, 1U));
        if (!e.periods)
                return -ENOMEM;
        for (size_t i = n; i > 0; i--) {
                WindowInfo wi = {};

                r = window_info_load(paths[i - 1], /* verify= */ false, &wi);
                if (r < 0) {
                        if (have_info)
                                window_info_done(&info);
                        free(e.periods);
                        return r;
                }
                if (wi.error >= 0 && wi.samples > 0)
                        e.periods[e.n_periods++] = (WindowPeriod) {
                                .first_ns = wi.first_ns, .period_ns = NSEC_PER_SEC / (wi.header.info.freq_hz ?: 1) };
                if (wi.error >= 0 && !have_info) {
                        info = wi;
                        have_info = true;
                } else
                        window_info_done(&wi);
        }
        if (!have_info) {
                free(e.periods);
                return -ENODATA;
        }
        qsort(e.periods, e.n_periods, sizeof *e.periods, window_period_compare);
        freq_hz = info.header.info.freq_hz ?: 1;

        r = pprof_builder_new(NSEC_PER_SEC / freq_hz, &b);
        if (r < 0)
                goto finish;
        if (meta && meta->host)
                labels[n_labels++] = (PprofLabel) { .key = "host", .str = meta->host };
        if (meta && meta->rule)
                labels[n_labels++] = (PprofLabel) { .key = "rule", .str = meta->rule };
        if (meta && meta->incident)
                labels[n_labels++] = (PprofLabel) { .key = "incident", .str = meta->incident };
        if (meta && meta->kind)
                labels[n_labels++] = (PprofLabel) { .key = "slice", .str = meta->kind };
        r = pprof_builder_set_common_labels(b, labels, n_labels);
        for (size_t i = 0; r >= 0 && meta && i < ELEMENTSOF(meta->comments) && meta->comments[i]; i++)
                r = pprof_builder_add_comment(b, meta->comments[i]);
        if (r < 0)
                goto finish;
        e.builder = b;
        e.clock = &info.header.info.clock;
        if (meta && (meta->exclude_from_ns || meta->exclude_to_ns)) {
                e.exclude = true;
                e.exclude_from_ns = meta->exclude_from_ns;
                e.exclude_to_ns = meta->exclude_to_ns;
        }
        /* The duration is the time the samples come from: a baseline's leaves its slice out, or
         * pprof's share of the wall time ("Total samples = 7.7s (51.7%)") would be a fraction of
         * what the CPUs did. */
        uint64_t duration_ns = to_perf_ns >= from_perf_ns ? to_perf_ns - from_perf_ns : 0;
        if (e.exclude) {
                uint64_t lo = MAX(from_perf_ns, e.exclude_from_ns), hi = MIN(to_perf_ns, e.exclude_to_ns);
                if (hi >= lo)
                        duration_ns -= MIN(duration_ns, hi - lo);
        }
        pprof_builder_set_time(b, (int64_t) clock_map_perf_to_realtime(&info.header.info.clock, from_perf_ns),
                               (int64_t) duration_ns);
        r = slice_read(paths, n, from_perf_ns, to_perf_ns, pprof_handler, &e, &st.slice);
        if (r < 0)
                goto finish;
        PprofBuilderStats bs;
        pprof_builder_get_stats(b, &bs);
        if (bs.samples == 0) {
                r = -ENODATA;
                goto finish;
        }
        st.slice.samples = bs.samples; /* what was written, after any exclusion */
        r = pprof_builder_write(b, out);

finish:
        free(e.periods);
        window_info_done(&info);
        if (ret_stats)
                *ret_stats = st;
        else
                export_stats_done(&st);
        return r;
}
