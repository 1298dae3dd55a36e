/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The report of a bundle: its manifest (the header show prints), log.jsonl (every line, marked on
 * the time axis), the slice's samples cut from windows/ exactly as stacks.perf-script was cut
 * (the manifest's slice range, one event), baseline.folded for the differential view, and the
 * unusual ranking computed by bundle-analyze from stacks.folded and baseline.folded as show does.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic/alloc-util.h"
#include "basic/fileio.h"
#include "basic/string-util.h"
#include "basic/time-util.h"
#include "bundle/bundle-analyze.h"
#include "bundle/bundle-cgroups.h"
#include "bundle/bundle-format.h"
#include "bundle/bundle-oom.h"
#include "bundle/bundle-read.h"
#include "report/report-internal.h"
#include "report/report.h"

#define REPORT_RISES 10

static char *path_join2(const char *dir, const char *name) {
        char *p;
        return asprintf(&p, "%s/%s", dir, name) < 0 ? NULL : p;
}

/* Adds dir/name to u where error is one of a file that is there but could not be read: not ENOENT
 * (a bundle without it), nor, for a window (window: true), a damaged one's (its header or chunks),
 * which the page counts. Returns error. */
static int unreadable_add(BundleUnreadable *u, const char *dir, const char *name, bool window, int error) {
        if (!u || (window && error != -EACCES && error != -EPERM && error != -EIO && error != -EISDIR))
                return error;
        return bundle_unreadable_add(u, dir, name, error);
}

/* The window files of dir/windows, sorted (names start with their UTC start). */
static int list_windows(const char *dir, char ***ret, size_t *ret_n) {
        _cleanup_free_ char *wdir = path_join2(dir, BUNDLE_WINDOWS_DIR);
        _cleanup_closedir_ DIR *d = NULL;
        char **l = NULL;
        size_t n = 0, allocated = 0;
        struct dirent *de;

        if (!wdir)
                return -ENOMEM;
        d = opendir(wdir);
        if (!d) {
                if (errno == ENOENT) {
                        *ret = NULL;
                        *ret_n = 0;
                        return 0;
                }
                return -errno;
        }
        while ((de = readdir(d))) {
                if (de->d_name[0] == '.')
                        continue;
                if (!GREEDY_REALLOC(l, allocated, n + 1))
                        goto oom;
                l[n] = path_join2(wdir, de->d_name);
                if (!l[n])
                        goto oom;
                n++;
        }
        if (n > 0)
                qsort(l, n, sizeof(char *), cmp_string_ptr);
        *ret = l;
        *ret_n = n;
        return 0;
oom:
        for (size_t i = 0; i < n; i++)
                free(l[i]);
        free(l);
        return -ENOMEM;
}

/* One line of log.jsonl as the page reads it; false for a line that is not one. */
static bool log_line_parse(const char *line, size_t n, JsonValue **ret, uint64_t *ret_t_ns, bool *ret_trigger) {
        _cleanup_(json_value_freep) JsonValue *v = NULL;

        if (json_parse(line, n, 8, &v, NULL) < 0 || v->type != JSON_TYPE_OBJECT ||
            !json_u64_value(json_object_get(v, "t_perf_ns"), ret_t_ns))
                return false;
        *ret_trigger = false;
        (void) json_bool_value(json_object_get(v, "trigger"), ret_trigger);
        if (ret)
                *ret = TAKE_PTR(v);
        return true;
}

/* A message past the page's bound is cut between characters and ends in "…", so the page shows
 * that it goes on in log.jsonl. */
static void log_message(JsonWriter *w, const char *s, size_t n) {
        char buf[REPORT_LOG_LINE_BYTES_MAX + sizeof "\xe2\x80\xa6"];
        size_t l = utf8_prefix_length(s, n, REPORT_LOG_LINE_BYTES_MAX);

        if (l == n) {
                json_string_n(w, s, n);
                return;
        }
        memcpy(buf, s, l);
        memcpy(buf + l, "\xe2\x80\xa6", 3);
        json_string_n(w, buf, l + 3);
}

/* "logs": the lines of log.jsonl, at most REPORT_LOG_LINES_MAX of them. A longer log (a storm of
 * lines before the event: the daemon keeps 20,000 a source) keeps the lines around the trigger
 * line, or around the event's time without one, so the line that made the bundle is always there;
 * "logs_omitted_before" and "logs_omitted_after" count what was left out, for the page to say. */
static void write_logs(JsonWriter *w, const char *dir, const BundleManifest *m, BundleUnreadable *u) {
        _cleanup_free_ char *path = path_join2(dir, BUNDLE_LOG_JSON), *line = NULL;
        _cleanup_fclose_ FILE *in = NULL;
        size_t cap = 0, n_lines = 0, center = SIZE_MAX, n_early = 0, from = 0, i = 0;
        OomVictim victim = {};
        ssize_t n;

        in = path ? fopen(path, "re") : NULL;
        if (path && !in)
                (void) unreadable_add(u, dir, BUNDLE_LOG_JSON, false, -errno);
        while (in && (n = getline(&line, &cap, in)) >= 0) {
                _cleanup_(json_value_freep) JsonValue *v = NULL;
                const JsonValue *msg;
                uint64_t t_ns;
                bool trigger, kernel = false;

                if (!log_line_parse(line, (size_t) n, &v, &t_ns, &trigger))
                        continue;
                msg = json_object_get(v, "message");
                (void) json_bool_value(json_object_get(v, "kernel_origin"), &kernel);
                if (json_string_value(msg))
                        bundle_oom_victim_feed(&victim, msg->string.s, msg->string.len, kernel, trigger, t_ns);
                if (trigger && center == SIZE_MAX)
                        center = n_lines;
                if (m->has_event_perf_ns && t_ns < m->event_t_perf_ns)
                        n_early++;
                n_lines++;
        }
        if (center == SIZE_MAX)
                center = n_early;
        if (n_lines > REPORT_LOG_LINES_MAX) {
                from = center > REPORT_LOG_LINES_MAX / 2 ? center - REPORT_LOG_LINES_MAX / 2 : 0;
                from = MIN(from, n_lines - REPORT_LOG_LINES_MAX);
        }
        if (in)
                rewind(in);

        json_key(w, "logs");
        json_begin_array(w);
        while (in && i < from + REPORT_LOG_LINES_MAX && (n = getline(&line, &cap, in)) >= 0) {
                _cleanup_(json_value_freep) JsonValue *v = NULL;
                const JsonValue *msg;
                uint64_t t_ns;
                bool trigger;

                if (!log_line_parse(line, (size_t) n, &v, &t_ns, &trigger) || i++ < from)
                        continue;
                msg = json_object_get(v, "message");
                json_begin_array(w);
                json_u64(w, t_ns / 1000);
                json_u64(w, trigger);
                json_string(w, json_string_value(json_object_get(v, "utc")) ?: "");
                json_string(w, json_string_value(json_object_get(v, "source")) ?: "");
                if (json_string_value(msg))
                        log_message(w, msg->string.s, msg->string.len);
                else
                        json_string(w, "");
                json_end_array(w);
        }
        json_end_array(w);
        json_kv_u64(w, "logs_omitted_before", MIN(from, n_lines));
        json_kv_u64(w, "logs_omitted_after", n_lines - MIN(n_lines, from + REPORT_LOG_LINES_MAX));
        /* Who the OOM kill the event opened killed, as show names it. */
        if (victim.found) {
                json_key(w, "oom_victim");
                json_begin_object(w);
                json_kv_u64(w, "pid", victim.pid);
                json_kv_string(w, "comm", victim.comm);
                json_end_object(w);
        }
}

/* "processes": how many processes carried a name in the slice, where more than one; else null. */
static void write_processes(JsonWriter *w, const BundleManifest *m, const char *comm) {
        uint64_t n = bundle_comm_processes(m, comm);

        json_key(w, "processes");
        if (n)
                json_u64(w, n);
        else
                json_null(w);
}

static void write_rises(JsonWriter *w, const BundleManifest *m, const char *key, const Rise *r, size_t n,
                        bool process) {
        json_key(w, key);
        json_begin_array(w);
        for (size_t i = 0; i < n; i++) {
                json_begin_object(w);
                json_kv_string(w, "name", r[i].name);
                json_kv_u64(w, "slice", r[i].slice);
                json_kv_u64(w, "baseline", r[i].baseline);
                json_kv_double(w, "slice_share", r[i].slice_share);
                json_kv_double(w, "baseline_share", r[i].baseline_share);
                json_kv_double(w, "z", r[i].z);
                json_kv_string(w, "top_function", r[i].top_function);
                json_kv_string(w, "thread", r[i].thread);
                if (process)
                        write_processes(w, m, r[i].name);
                json_end_object(w);
        }
        json_end_array(w);
}

/* "where": the unit, container and pod of a rise's (or fall's) process, as show names them;
 * "thread_of": the process of a thread with a name of its own; and "processes". */
static void write_where(JsonWriter *w, const BundleManifest *m, const char *name, int direction, bool near) {
        _cleanup_free_ char *comm = strndup(name, strcspn(name, ";"));
        char where[3 * BUNDLE_SERVICE_NAME_BYTES], pbuf[256];

        json_kv_string(w, "thread_of", comm ? bundle_thread_process(m, comm, pbuf, sizeof pbuf) : NULL);
        write_processes(w, m, comm);
        if (comm && bundle_process_cgroup(m, comm, direction, near, where, sizeof where) && where[0])
                json_kv_string(w, "where", where);
        else {
                json_key(w, "where");
                json_null(w);
        }
}

/* The unusual rankings, exactly as show computes them (the slice against the baseline, the event's
 * own seconds against the rest); also feeds the baseline into the stacks. */
static int write_analysis(JsonWriter *w, const char *dir, const BundleManifest *m, ReportStacks *s,
                          BundleUnreadable *u) {
        unsigned n_cpus = (unsigned) MIN(m->profile_n_cpus, (uint64_t) UINT32_MAX);
        _cleanup_free_ char *p1 = path_join2(dir, BUNDLE_FOLDED), *p2 = path_join2(dir, BUNDLE_BASELINE_FOLDED),
                            *p3 = path_join2(dir, BUNDLE_NEAR_EVENT_FOLDED);
        _cleanup_(folded_donep) Folded slice = FOLDED_NULL, baseline = FOLDED_NULL, near = FOLDED_NULL,
                                       rest = FOLDED_NULL;
        Rise *proc = NULL, *func = NULL, *near_proc = NULL, *near_func = NULL;
        size_t n_proc = 0, n_func = 0, n_near_proc = 0, n_near_func = 0;
        int r, rs, rb, rn;

        if (!p1 || !p2 || !p3)
                return -ENOMEM;
        rs = unreadable_add(u, dir, BUNDLE_FOLDED, false, folded_load(p1, &slice));
        rb = unreadable_add(u, dir, BUNDLE_BASELINE_FOLDED, false, folded_load(p2, &baseline));
        rn = unreadable_add(u, dir, BUNDLE_NEAR_EVENT_FOLDED, false, folded_load(p3, &near));
        /* Each grouped thread's own stacks, before the grouping: which one thread of a group
         * carried its rise, as show names it. */
        _cleanup_(folded_donep) Folded own_slice = FOLDED_NULL, own_baseline = FOLDED_NULL, own_near = FOLDED_NULL;
        int ro = rs >= 0 && rb >= 0 ? 0 : -ENODATA;
        if (ro >= 0)
                ro = bundle_threads_own(m, &slice, &own_slice);
        if (ro >= 0)
                ro = bundle_threads_own(m, &baseline, &own_baseline);
        if (ro >= 0 && rn >= 0)
                ro = bundle_threads_own(m, &near, &own_near);
        if (rb >= 0)
                for (size_t i = 0; i < baseline.n; i++) {
                        r = report_stacks_add_baseline(s, baseline.lines[i].stack, baseline.lines[i].count);
                        if (r < 0)
                                return r;
                }
        /* Ranked as show ranks them: a process's threads that differ only in a number as one. */
        Folded *ranked[] = { rs >= 0 ? &slice : NULL, rb >= 0 ? &baseline : NULL, rn >= 0 ? &near : NULL };
        for (size_t i = 0; i < ELEMENTSOF(ranked); i++)
                if (ranked[i] && (r = bundle_threads_group(m, ranked[i])) < 0)
                        return r;
        if (rs >= 0 && rb >= 0) {
                (void) folded_rises(&slice, &baseline, RISE_PROCESS, SIZE_MAX, &proc, &n_proc);
                (void) folded_rises(&slice, &baseline, RISE_FUNCTION, SIZE_MAX, &func, &n_func);
                if (rn >= 0)
                        rn = folded_rest(&slice, &baseline, &near, &rest);
        } else if (rn >= 0)
                rn = -ENODATA;
        if (rn >= 0) {
                (void) folded_rises(&near, &rest, RISE_PROCESS, SIZE_MAX, &near_proc, &n_near_proc);
                (void) folded_rises(&near, &rest, RISE_FUNCTION, SIZE_MAX, &near_func, &n_near_func);
        }
        /* The one-line answer from every rise, as show chooses it; then the lists cut for the page. */
        _cleanup_(answer_done) Answer answer = {};
        SampledCpus cpus;
        bundle_sampled_cpus(m, rs >= 0 ? slice.total : 0, rb >= 0 ? baseline.total : 0, rn >= 0 ? near.total : 0,
                            rn >= 0 ? rest.total : 0, &cpus);
        (void) answer_choose(&(AnswerInput) {
                                     .slice_proc = proc,
                                     .n_slice_proc = n_proc,
                                     .slice_func = func,
                                     .n_slice_func = n_func,
                                     .near_proc = near_proc,
                                     .n_near_proc = n_near_proc,
                                     .near_func = near_func,
                                     .n_near_func = n_near_func,
                                     .near = rn >= 0 ? &near : NULL,
                                     .rest = rn >= 0 ? &rest : NULL,
                                     .n_cpus = n_cpus,
                                     .cpus = cpus,
                             },
                             &slice, &baseline, &answer);
        rises_truncate(proc, &n_proc, REPORT_RISES);
        rises_truncate(func, &n_func, REPORT_RISES);
        rises_truncate(near_proc, &n_near_proc, REPORT_RISES);
        rises_truncate(near_func, &n_near_func, REPORT_RISES);
        /* The answer and each row of a group's rise name the one thread that carried it, as show's do. */
        if (ro >= 0)
                (void) bundle_threads_name(&own_slice, &own_baseline, rn >= 0 ? &own_near : NULL,
                                           rn >= 0 ? rest.total : 0, &answer, proc, n_proc, near_proc, n_near_proc);

        json_key(w, "analysis");
        json_begin_object(w);
        json_kv_bool(w, "has_slice", rs >= 0);
        json_kv_bool(w, "has_baseline", rb >= 0);
        json_kv_u64(w, "slice_total", rs >= 0 ? slice.total : 0);
        json_kv_u64(w, "baseline_total", rb >= 0 ? baseline.total : 0);
        /* Fewer samples to compare with than this, and show says that nothing could be told from
         * the comparison instead of giving its rankings: the page does the same. */
        json_kv_u64(w, "samples_min", ANSWER_BASELINE_SAMPLES_MIN);
        write_rises(w, m, "processes", proc, n_proc, true);
        write_rises(w, m, "functions", func, n_func, false);
        /* event.folded against the rest: "slice" is the event's seconds, "baseline" the rest */
        json_key(w, "near");
        if (rn >= 0) {
                json_begin_object(w);
                json_kv_u64(w, "total", near.total);
                json_kv_u64(w, "rest_total", rest.total);
                write_rises(w, m, "processes", near_proc, n_near_proc, true);
                write_rises(w, m, "functions", near_func, n_near_func, false);
                json_end_object(w);
        } else
                json_null(w);
        /* The rise the one-line answer names, as show chooses it: from the slice's comparison or the
         * event's seconds' ("near"), a process or a function ("comm;function"); null without one. */
        json_key(w, "answer");
        if (answer.rise.name) {
                json_begin_object(w);
                json_kv_string(w, "from", answer_from_near(answer.from) ? "near" : "slice");
                json_kv_string(w, "kind", answer_from_function(answer.from) ? "function" : "process");
                json_kv_bool(w, "clear", answer.clear);
                json_kv_string(w, "name", answer.rise.name);
                json_kv_double(w, "slice_share", answer.rise.slice_share);
                json_kv_double(w, "baseline_share", answer.rise.baseline_share);
                json_kv_double(w, "z", answer.rise.z);
                json_kv_string(w, "top_function", answer.rise.top_function);
                json_kv_string(w, "under", answer.under);
                json_kv_string(w, "thread", answer.thread);
                write_where(w, m, answer.rise.name, +1, answer_from_near(answer.from));
                json_end_object(w);
        } else
                json_null(w);
        /* The process that fell most in the event's seconds against the rest, as show gives it. */
        json_key(w, "fall");
        if (answer.fall.name) {
                json_begin_object(w);
                json_kv_string(w, "name", answer.fall.name);
                json_kv_double(w, "near_share", answer.fall.slice_share);
                json_kv_double(w, "rest_share", answer.fall.baseline_share);
                json_kv_double(w, "z", answer.fall.z);
                write_where(w, m, answer.fall.name, -1, /* near= */ true);
                json_end_object(w);
        } else
                json_null(w);
        json_end_object(w);
        rises_free(proc, n_proc);
        rises_free(func, n_func);
        rises_free(near_proc, n_near_proc);
        rises_free(near_func, n_near_func);
        return 0;
}

static void write_header(JsonWriter *w, const BundleManifest *m, const char *event) {
        char ts[FORMAT_TIMESTAMP_MAX];

        json_key(w, "header");
        json_begin_object(w);
        json_kv_string(w, "id", m->id);
        json_kv_string(w, "short_id", m->short_id);
        json_kv_string(w, "status", m->status);
        json_kv_string(w, "rule", m->rule_name);
        json_kv_string(w, "rule_description", m->rule_description);
        json_kv_string(w, "rule_match", m->rule_match);
        json_kv_string(w, "host", m->host);
        json_kv_string(w, "kernel", m->kernel_release);
        json_kv_string(w, "boot_id", m->boot_id);
        json_kv_string(w, "utc", m->has_event_realtime ? format_timestamp_utc(ts, sizeof ts, m->event_realtime_usec)
                                                       : m->event_utc);
        json_kv_string(w, "message", m->event_message);
        json_kv_string(w, "source", m->event_source);
        json_kv_string(w, "unit", m->event_unit);
        json_kv_string(w, "comm", m->event_comm);
        json_kv_string(w, "alignment", m->alignment_method);
        if (m->has_alignment_error)
                json_kv_u64(w, "alignment_error_ns", m->alignment_error_ns);
        json_kv_u64(w, "repeats", m->repeats);
        if (m->interrupted) {
                /* tprofd stopped while recording the slice and its next start finished the bundle */
                json_key(w, "interrupted");
                json_begin_object(w);
                json_kv_string(w, "resumed_utc", m->interrupted_resumed_utc);
                json_end_object(w);
        }
        json_kv_string(w, "note", m->note);
        json_kv_string(w, "event", event ?: m->profile_event);
        json_kv_u64(w, "freq_hz", m->profile_freq_hz);
        json_kv_u64(w, "n_cpus", m->profile_n_cpus);
        json_kv_u64(w, "slice_samples", m->slice_samples);
        json_kv_u64(w, "lost", m->slice_lost);
        json_kv_u64(w, "before_usec", m->rule_before_usec);
        json_kv_u64(w, "after_usec", m->rule_after_usec);
        json_end_object(w);
}

/* The selection the page opens with: at most REPORT_DEFAULT_SPAN_USEC before and after the trigger. */
static uint64_t default_before_usec(const BundleManifest *m) {
        return MIN(m->rule_before_usec ?: REPORT_DEFAULT_SPAN_USEC, REPORT_DEFAULT_SPAN_USEC);
}

static uint64_t default_after_usec(const BundleManifest *m) {
        return MIN(m->rule_after_usec ?: REPORT_DEFAULT_SPAN_USEC, REPORT_DEFAULT_SPAN_USEC);
}

static int build_json(const char *dir, const BundleManifest *m, char **ret_json, char **ret_title,
                      BundleUnreadable *u) {
        _cleanup_(report_stacks_freep) ReportStacks *s = report_stacks_new();
        _cleanup_free_ char *event = NULL, *title = NULL;
        char **paths = NULL;
        size_t n_paths = 0;
        unsigned cpu, n_unreadable = 0;
        SliceStats st = {};
        JsonWriter w;
        int r;

        if (!s)
                return -ENOMEM;
        r = list_windows(dir, &paths, &n_paths);
        if (r == -EACCES || r == -EPERM)
                /* windows/ this user may not list costs their samples, as a window it may not read. */
                (void) unreadable_add(u, dir, BUNDLE_WINDOWS_DIR, /* window= */ true, r);
        else if (r < 0)
                return r;
        /* A window that cannot be read costs its samples, not the report: the header, the log and
         * the ranking are still worth having, and the page says what is missing. */
        for (size_t i = 0; i < n_paths;) {
                WindowInfo info;
                r = window_info_load(paths[i], /* verify= */ false, &info);
                if (r >= 0 && info.error >= 0) {
                        window_info_done(&info);
                        i++;
                        continue;
                }
                (void) unreadable_add(u, paths[i], NULL, /* window= */ true, r < 0 ? r : info.error);
                if (r >= 0)
                        window_info_done(&info);
                free(paths[i]);
                memmove(paths + i, paths + i + 1, (n_paths - i - 1) * sizeof(char *));
                n_paths--;
                n_unreadable++;
        }
        if (m->has_slice && n_paths > 0) {
                uint64_t ff = 0, ft = 0;
                if (m->has_event_perf_ns) { /* the selection the page opens with */
                        ff = m->event_t_perf_ns - MIN(m->event_t_perf_ns, default_before_usec(m) * 1000);
                        ft = m->event_t_perf_ns + default_after_usec(m) * 1000;
                }
                r = report_read_samples(s, paths, n_paths, m->slice_from_perf_ns, m->slice_to_perf_ns, ff, ft, &event,
                                        &st);
                if (r < 0)
                        goto finish;
        }
        if (asprintf(&title, "tprof %s: %s", m->rule_name ?: "bundle", m->id ?: "") < 0) {
                r = -ENOMEM;
                goto finish;
        }

        json_writer_init(&w, false);
        json_begin_object(&w);
        json_kv_u64(&w, "v", 1);
        json_kv_string(&w, "kind", "bundle");
        json_kv_string(&w, "title", title);
        write_header(&w, m, event);
        json_kv_u64(&w, "windows_unreadable", n_unreadable);
        json_kv_u64(&w, "chunks_damaged", st.corrupt_chunks);
        if (m->has_slice) {
                json_kv_u64(&w, "slice_from_us", m->slice_from_perf_ns / 1000);
                json_kv_u64(&w, "slice_to_us", m->slice_to_perf_ns / 1000);
        }
        if (m->has_event_perf_ns)
                json_kv_u64(&w, "trigger_us", m->event_t_perf_ns / 1000);
        if (m->has_event_perf_ns && m->has_event_realtime)
                json_kv_i64(&w, "realtime_offset_us",
                            (int64_t) m->event_realtime_usec - (int64_t) (m->event_t_perf_ns / 1000));
        json_kv_u64(&w, "default_before_us", default_before_usec(m));
        json_kv_u64(&w, "default_after_us", default_after_usec(m));
        if (bundle_manifest_capture_cpu(m, &cpu))
                json_kv_u64(&w, "captured_cpu", cpu);
        write_logs(&w, dir, m, u);
        r = write_analysis(&w, dir, m, s, u);
        if (r >= 0)
                r = report_stacks_write_json(s, &w);
        if (r < 0) {
                json_writer_done(&w);
                goto finish;
        }
        json_end_object(&w);
        *ret_json = json_finish(&w, &r);
        if (!*ret_json)
                goto finish;
        *ret_title = TAKE_PTR(title);
        r = 0;

finish:
        for (size_t i = 0; i < n_paths; i++)
                free(paths[i]);
        free(paths);
        slice_stats_done(&st);
        return r;
}

int report_write_bundle(const char *dir, FILE *out, BundleUnreadable *ret_unreadable) {
        _cleanup_(bundle_manifest_freep) BundleManifest *m = NULL;
        _cleanup_free_ char *mpath = path_join2(dir, BUNDLE_MANIFEST), *json = NULL, *title = NULL;
        int r;

        if (!mpath)
                return -ENOMEM;
        r = bundle_manifest_load(mpath, &m, NULL);
        if (r < 0)
                return r;
        r = build_json(dir, m, &json, &title, ret_unreadable);
        if (r < 0)
                return r;
        return report_html_write(out, title, json);
}

int report_write_bundle_file(const char *dir, const char *name) {
        _cleanup_free_ char *path = path_join2(dir, name), *tmp = NULL;
        _cleanup_fclose_ FILE *f = NULL;
        int fd, r;

        if (!path || asprintf(&tmp, "%s/.%s.tmp-XXXXXX", dir, name) < 0)
                return -ENOMEM;
        fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                return -errno;
        f = fdopen(fd, "w");
        if (!f) {
                r = -errno;
                close(fd);
                goto fail;
        }
        r = report_write_bundle(dir, f, /* ret_unreadable= */ NULL);
        if (r >= 0 && (fflush(f) != 0 || fchmod(fd, BUNDLE_FILE_MODE) < 0 || fsync(fd) < 0))
                r = -errno;
        if (r < 0)
                goto fail;
        if (rename(tmp, path) < 0) {
                r = -errno;
                goto fail;
        }
        return 0;
fail:
        (void) unlink(tmp);
        return r;
}
