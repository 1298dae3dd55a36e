/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reading samples into a report, and the report of a range of the ring (no bundle, so no log and
 * no baseline): its header comes from the newest window's header.
 */
#include <errno.h>
#include <stdlib.h>

#include "basic/cleanup.h"
#include "basic/time-util.h"
#include "report/report-internal.h"
#include "report/report.h"
#include "store/store-export.h"

static int on_sample(const Sample *sample, void *userdata) {
        return report_stacks_add_sample(userdata, sample);
}

typedef struct Outside {
        ReportStacks *s;
        uint64_t from, to;
} Outside;

static int on_sample_outside(const Sample *sample, void *userdata) {
        const Outside *o = userdata;

        if (sample->t_ns >= o->from && sample->t_ns <= o->to)
                return 0;
        return report_stacks_add_sample(o->s, sample);
}

int report_read_samples(ReportStacks *s, char *const *paths, size_t n, uint64_t from_perf_ns, uint64_t to_perf_ns,
                        uint64_t focus_from_perf_ns, uint64_t focus_to_perf_ns, char **ret_event,
                        SliceStats *ret_stats) {
        _cleanup_free_ char **keep = NULL;
        _cleanup_free_ char *ev = NULL;
        size_t n_keep = 0;
        int r;

        r = export_select_event(paths, n, from_perf_ns, to_perf_ns, NULL, &keep, &n_keep, &ev, NULL);
        if (r < 0)
                return r;
        r = slice_read(keep, n_keep, from_perf_ns, to_perf_ns, on_sample, s, ret_stats);
        if (r < 0)
                return r;
        /* The tree was cut, in time order: read again, the event's seconds first (rare, so the
         * common case reads the windows once). */
        if (report_stacks_cut_stacks(s) > 0 && focus_from_perf_ns < focus_to_perf_ns) {
                Outside o = { s, MAX(from_perf_ns, focus_from_perf_ns), MIN(to_perf_ns, focus_to_perf_ns) };
                SliceStats again = {};

                r = report_stacks_reset(s);
                if (r >= 0 && o.from <= o.to)
                        r = slice_read(keep, n_keep, o.from, o.to, on_sample, s, NULL);
                if (r >= 0)
                        r = slice_read(keep, n_keep, from_perf_ns, to_perf_ns, on_sample_outside, &o, &again);
                slice_stats_done(&again);
                if (r < 0)
                        return r;
        }
        if (ret_event)
                *ret_event = TAKE_PTR(ev);
        return 0;
}

int report_write_range(char *const *paths, size_t n, uint64_t from_perf_ns, uint64_t to_perf_ns, FILE *out) {
        _cleanup_(report_stacks_freep) ReportStacks *s = report_stacks_new();
        _cleanup_free_ char *event = NULL, *json = NULL, *title = NULL;
        SliceStats st = {};
        WindowInfo info = {};
        char a[FORMAT_TIMESTAMP_MAX], b[FORMAT_TIMESTAMP_MAX];
        uint64_t from_rt, to_rt;
        JsonWriter w;
        int r;

        if (!s)
                return -ENOMEM;
        if (n == 0)
                return -ENODATA;
        r = report_read_samples(s, paths, n, from_perf_ns, to_perf_ns, 0, 0, &event, &st);
        if (r < 0)
                goto finish;
        if (report_stacks_n_samples(s) == 0) {
                r = -ENODATA;
                goto finish;
        }
        r = window_info_load(paths[n - 1], /* verify= */ false, &info);
        if (r < 0)
                goto finish;
        const WindowHeaderInfo *h = &info.header.info;
        from_rt = clock_map_perf_to_realtime(&h->clock, from_perf_ns) / 1000;
        to_rt = clock_map_perf_to_realtime(&h->clock, to_perf_ns) / 1000;
        if (asprintf(&title, "tprof: %s %s .. %s", h->host ?: "-", format_timestamp_utc(a, sizeof a, from_rt),
                     format_timestamp_utc(b, sizeof b, to_rt)) < 0) {
                r = -ENOMEM;
                goto finish;
        }

        json_writer_init(&w, false);
        json_begin_object(&w);
        json_kv_u64(&w, "v", 1);
        json_kv_string(&w, "kind", "range");
        json_kv_string(&w, "title", title);
        json_key(&w, "header");
        json_begin_object(&w);
        json_kv_string(&w, "host", h->host);
        json_kv_string(&w, "kernel", h->kernel_release);
        json_kv_string(&w, "boot_id", h->boot_id);
        json_kv_string(&w, "event", event);
        json_kv_u64(&w, "freq_hz", h->freq_hz);
        json_kv_u64(&w, "n_cpus", h->n_cpus);
        json_kv_string(&w, "from_utc", a);
        json_kv_string(&w, "to_utc", b);
        json_kv_string(&w, "alignment", clock_map_method_to_string(h->clock.method));
        json_kv_u64(&w, "lost", st.lost);
        json_end_object(&w);
        json_kv_u64(&w, "slice_from_us", from_perf_ns / 1000);
        json_kv_u64(&w, "slice_to_us", to_perf_ns / 1000);
        /* perf µs + offset = realtime µs, for the labels */
        json_kv_i64(&w, "realtime_offset_us",
                    (int64_t) (clock_map_perf_to_realtime(&h->clock, from_perf_ns) / 1000) - (int64_t) (from_perf_ns / 1000));
        json_key(&w, "logs");
        json_begin_array(&w);
        json_end_array(&w);
        r = report_stacks_write_json(s, &w);
        if (r < 0) {
                json_writer_done(&w);
                goto finish;
        }
        json_end_object(&w);
        json = json_finish(&w, &r);
        if (!json)
                goto finish;
        r = report_html_write(out, title, json);

finish:
        window_info_done(&info);
        slice_stats_done(&st);
        return r;
}
