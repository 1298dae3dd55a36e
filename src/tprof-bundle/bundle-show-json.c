/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tprof-bundle show --json: the content of the text output for programs, the manifest included
 * whole; see bundle-show.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "basic/alloc-util.h"
#include "basic/json-reader.h"
#include "basic/json-writer.h"
#include "basic/log.h"
#include "basic/macro.h"
#include "tprof-bundle/bundle-output.h"
#include "tprof-bundle/bundle-show.h"

static void json_value_write(JsonWriter *w, const JsonValue *v) {
        switch (v->type) {
        case JSON_TYPE_NULL:
                json_null(w);
                break;
        case JSON_TYPE_BOOLEAN:
                json_bool(w, v->b);
                break;
        case JSON_TYPE_INTEGER:
                json_i64(w, v->i);
                break;
        case JSON_TYPE_UNSIGNED:
                json_u64(w, v->u);
                break;
        case JSON_TYPE_REAL:
                json_double(w, v->d);
                break;
        case JSON_TYPE_STRING:
                json_string_n(w, v->string.s, v->string.len);
                break;
        case JSON_TYPE_ARRAY:
                json_begin_array(w);
                for (size_t i = 0; i < v->container.n; i++)
                        json_value_write(w, v->container.items[i]);
                json_end_array(w);
                break;
        case JSON_TYPE_OBJECT:
                json_begin_object(w);
                for (size_t i = 0; i < v->container.n; i++) {
                        json_key(w, v->container.keys[i]);
                        json_value_write(w, v->container.items[i]);
                }
                json_end_object(w);
                break;
        default:
                json_null(w);
        }
}

/* A process's unit, container and pod, as bundle_process_cgroup() finds them for a rise
 * (direction > 0) or a fall (< 0), in the event's own seconds (near) or the slice. */
static void json_attribution(JsonWriter *w, const Show *s, const char *comm, int direction, bool near) {
        const JsonValue *c = bundle_process_cgroup(s->m, comm, direction, near, NULL, 0);
        char b[BUNDLE_SERVICE_NAME_BYTES];

        json_key(w, "cgroup");
        if (!c) {
                json_null(w);
                return;
        }
        json_begin_object(w);
        json_kv_string(w, "path", json_string_value(json_object_get(c, "path")));
        json_kv_string(w, "unit", json_string_value(json_object_get(c, "unit")));
        json_kv_string(w, "container", json_object_get(c, "container_id") ?
                                               bundle_cgroup_name(c, CGROUP_BY_CONTAINER, b, sizeof b) : NULL);
        json_kv_string(w, "pod", json_object_get(c, "pod_uid") ? bundle_cgroup_name(c, CGROUP_BY_POD, b, sizeof b) : NULL);
        json_end_object(w);
}

/* One rise's fields: "process" (and "function" for a function's rise), counts, shares and z; a
 * process's unit, container and pod and its function that rose most. */
static void json_rise_fields(JsonWriter *w, const Show *s, const Rise *r, bool process, bool near) {
        const char *semi = strchr(r->name, ';');

        _cleanup_free_ char *comm = strndup(r->name, !process && semi ? (size_t) (semi - r->name) : strlen(r->name));
        char pbuf[256];
        uint64_t n;

        json_kv_string(w, "process", comm);
        /* For a process's rise or a function's in its process alike. */
        json_kv_string(w, "thread_of", comm ? bundle_thread_process(s->m, comm, pbuf, sizeof pbuf) : NULL);
        /* how many processes carried the name in the slice, where more than one; else null */
        n = bundle_comm_processes(s->m, comm);
        json_key(w, "processes");
        if (n)
                json_u64(w, n);
        else
                json_null(w);
        if (!process)
                json_kv_string(w, "function", semi ? semi + 1 : NULL);
        json_kv_u64(w, "slice_samples", r->slice);
        json_kv_u64(w, "baseline_samples", r->baseline);
        json_kv_double(w, "slice_share", r->slice_share);
        json_kv_double(w, "baseline_share", r->baseline_share);
        json_kv_double(w, "z", r->z);
        if (process) {
                json_attribution(w, s, r->name, r->z < 0 ? -1 : +1, near);
                /* a group's rise ("wrk-*"): the one thread that carried it, or null */
                json_kv_string(w, "thread", r->thread);
                json_kv_string(w, "top_function", r->top_function);
                if (r->top_function) {
                        json_kv_double(w, "top_function_slice_share", r->function_slice_share);
                        json_kv_double(w, "top_function_baseline_share", r->function_baseline_share);
                        json_kv_double(w, "top_function_z", r->function_z);
                }
        }
}

static void json_rises(JsonWriter *w, const Show *s, const Rise *r, size_t n, bool process, bool near) {
        json_begin_array(w);
        for (size_t i = 0; i < n; i++) {
                json_begin_object(w);
                json_rise_fields(w, s, &r[i], process, near);
                json_end_object(w);
        }
        json_end_array(w);
}

int show_print_json(const Show *s, bool pretty) {
        _cleanup_free_ char *text = NULL;
        const BundleEntry *e = s->entry;
        JsonWriter w;
        int r;

        json_writer_init(&w, pretty);
        json_begin_object(&w);
        json_kv_string(&w, "id", e->id);
        json_kv_string(&w, "short_id", e->short_id[0] ? e->short_id : NULL);
        json_kv_string(&w, "path", e->path);
        json_kv_string(&w, "status", bundle_entry_state_to_string(e->state));
        json_kv_u64(&w, "bytes", e->bytes);
        json_kv_u64(&w, "windows_bytes", e->windows_bytes);
        json_key(&w, "manifest");
        if (s->m)
                json_value_write(&w, s->m->json);
        else
                json_null(&w);

        /* The task the OOM kill the event opened killed, from the bundle's log; null for any other
         * event, or a kill whose victim the log does not name. */
        json_key(&w, "oom_victim");
        if (s->victim.found) {
                json_begin_object(&w);
                json_kv_u64(&w, "pid", s->victim.pid);
                json_kv_string(&w, "comm", s->victim.comm);
                if (s->victim.t_perf_ns > 0)
                        json_kv_u64(&w, "t_perf_ns", s->victim.t_perf_ns);
                json_end_object(&w);
        } else
                json_null(&w);

        json_key(&w, "log");
        json_begin_object(&w);
        json_kv_u64(&w, "lines_total", s->n_log);
        json_kv_u64(&w, "lines_before_shown", s->log_first);
        json_kv_u64(&w, "lines_after_shown", s->n_log - s->log_end);
        json_key(&w, "lines");
        json_begin_array(&w);
        for (size_t i = s->log_first; i < s->log_end; i++) {
                const LogLine *l = &s->log[i];
                json_begin_object(&w);
                json_key(&w, "t_realtime_usec");
                if (l->has_realtime)
                        json_u64(&w, l->realtime_usec);
                else
                        json_null(&w);
                json_key(&w, "offset_ns");
                if (l->has_perf && s->m && s->m->has_event_perf_ns)
                        json_i64(&w, (int64_t) (l->perf_ns - s->m->event_t_perf_ns));
                else
                        json_null(&w);
                json_kv_string(&w, "source", l->source);
                json_kv_string(&w, "who", l->who);
                json_kv_i64(&w, "priority", l->priority);
                json_key(&w, "message");
                if (l->message)
                        json_string_n(&w, l->message, l->message_len);
                else
                        json_null(&w);
                json_kv_bool(&w, "trigger", l->trigger);
                json_end_object(&w);
        }
        json_end_array(&w);
        json_end_object(&w);

        json_key(&w, "activity");
        if (s->activity_error >= 0) {
                const Activity *a = &s->activity;
                json_begin_object(&w);
                json_kv_u64(&w, "seconds", a->n_seconds);
                /* CPUs that delivered under half the samples their rate asks for */
                json_key(&w, "shortfalls");
                json_begin_array(&w);
                for (size_t i = 0; i < s->n_shortfalls; i++) {
                        json_begin_object(&w);
                        json_kv_u64(&w, "cpu", s->shortfalls[i].cpu);
                        json_kv_u64(&w, "samples", s->shortfalls[i].samples);
                        json_kv_u64(&w, "expected", s->shortfalls[i].expected);
                        json_end_object(&w);
                }
                json_end_array(&w);
                json_key(&w, "event_second");
                if (s->has_event_second)
                        json_u64(&w, s->event_second);
                else
                        json_null(&w);
                json_key(&w, "cpus");
                json_begin_array(&w);
                for (unsigned cpu = 0; cpu < a->n_cpus; cpu++) {
                        json_begin_object(&w);
                        json_kv_u64(&w, "cpu", cpu);
                        json_key(&w, "busy_ratio");
                        json_begin_array(&w);
                        for (unsigned sec = 0; sec < a->n_seconds; sec++) {
                                uint32_t sm = a->samples[cpu * a->n_seconds + sec];
                                if (sm == 0)
                                        json_null(&w);
                                else
                                        json_double(&w, (double) a->busy[cpu * a->n_seconds + sec] / sm);
                        }
                        json_end_array(&w);
                        json_end_object(&w);
                }
                json_end_array(&w);
                json_end_object(&w);
        } else
                json_null(&w);

        json_key(&w, "top_stacks");
        json_begin_array(&w);
        for (size_t i = 0; s->slice_error >= 0 && i < MIN(s->slice.n, (size_t) TOP_STACKS); i++) {
                json_begin_object(&w);
                json_kv_string(&w, "stack", s->slice.lines[i].stack);
                json_kv_u64(&w, "samples", s->slice.lines[i].count);
                json_kv_double(&w, "share", (double) s->slice.lines[i].count / (double) s->slice.total);
                json_end_object(&w);
        }
        json_end_array(&w);
        json_key(&w, "top_functions");
        json_begin_array(&w);
        for (size_t i = 0; i < MIN(s->n_functions, (size_t) TOP_FUNCTIONS); i++) {
                json_begin_object(&w);
                json_kv_string(&w, "function", s->functions[i].name);
                json_kv_u64(&w, "self_samples", s->functions[i].self);
                json_kv_u64(&w, "total_samples", s->functions[i].total);
                json_kv_double(&w, "self_share", (double) s->functions[i].self / (double) s->slice.total);
                json_kv_double(&w, "total_share", (double) s->functions[i].total / (double) s->slice.total);
                json_end_object(&w);
        }
        json_end_array(&w);

        /* The rise the one-line answer names (rises_answer()): "from" "slice" (against the baseline)
         * or "near" (the event's seconds against the rest), "kind" "process" or "function". */
        json_key(&w, "answer");
        if (s->answer.rise.name) {
                json_begin_object(&w);
                json_kv_string(&w, "from", answer_from_near(s->answer.from) ? "near" : "slice");
                json_kv_string(&w, "kind", answer_from_function(s->answer.from) ? "function" : "process");
                /* false: no rise passed the floors, this is the strongest there is */
                json_kv_bool(&w, "clear", s->answer.clear);
                json_rise_fields(&w, s, &s->answer.rise, !answer_from_function(s->answer.from), answer_from_near(s->answer.from));
                if (answer_from_function(s->answer.from)) {
                        /* A function's process is said with its unit, container and pod too, as the
                         * text's In short says them. */
                        const char *semi = strchr(s->answer.rise.name, ';');
                        _cleanup_free_ char *comm = strndup(s->answer.rise.name, semi ? (size_t) (semi - s->answer.rise.name)
                                                                                      : strlen(s->answer.rise.name));
                        if (comm)
                                json_attribution(&w, s, comm, +1, answer_from_near(s->answer.from));
                }
                json_kv_string(&w, "under", s->answer.under);
                /* Of a group's rise ("pool-*"), the one thread that carried it ("pool-2"), or null:
                 * the rise is the group's, spread over its threads. */
                json_kv_string(&w, "thread", s->answer.thread);
                json_end_object(&w);
        } else
                json_null(&w);
        /* The process that fell most in the event's seconds against the rest (folded_fall()):
         * "slice_*" are those seconds', "baseline_*" the rest's, z negative; null without one. */
        json_key(&w, "fall");
        if (s->answer.fall.name) {
                json_begin_object(&w);
                json_rise_fields(&w, s, &s->answer.fall, true, /* near= */ true);
                json_end_object(&w);
        } else
                json_null(&w);

        json_key(&w, "unusual");
        json_begin_object(&w);
        json_kv_double(&w, "z_min", RISE_Z_MIN);
        json_key(&w, "processes");
        json_rises(&w, s, s->proc_rises, s->n_proc_rises, true, false);
        json_key(&w, "functions");
        json_rises(&w, s, s->func_rises, s->n_func_rises, false, false);
        json_end_object(&w);

        /* event.folded against the rest of the bundle: "slice_*" are the event's seconds there,
         * "baseline_*" the rest. null in bundles without it. */
        json_key(&w, "around_event");
        if (s->near_error >= 0 && s->slice_error >= 0 && s->baseline_error >= 0) {
                json_begin_object(&w);
                json_kv_u64(&w, "before_ns", s->near_from_ns);
                json_kv_u64(&w, "after_ns", s->near_to_ns);
                json_kv_u64(&w, "samples", s->near.total);
                json_kv_u64(&w, "rest_samples", s->near_rest.total);
                json_key(&w, "processes");
                json_rises(&w, s, s->near_proc_rises, s->n_near_proc_rises, true, true);
                json_key(&w, "functions");
                json_rises(&w, s, s->near_func_rises, s->n_near_func_rises, false, true);
                json_end_object(&w);
        } else
                json_null(&w);

        json_key(&w, "services");
        if (s->has_services) {
                static const char *const keys[] = { "units", "containers", "pods" };
                json_begin_object(&w);
                for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
                        json_key(&w, keys[i]);
                        json_begin_array(&w);
                        for (size_t k = 0; k < s->n_services[i]; k++) {
                                const Rise *sv = &s->services[i][k];
                                json_begin_object(&w);
                                json_kv_string(&w, "name", sv->name);
                                json_kv_u64(&w, "slice_samples", sv->slice);
                                json_kv_u64(&w, "baseline_samples", sv->baseline);
                                json_kv_double(&w, "slice_share", sv->slice_share);
                                json_kv_double(&w, "baseline_share", sv->baseline_share);
                                json_kv_double(&w, "z", sv->z);
                                json_kv_string(&w, "top_process", sv->top_function);
                                json_end_object(&w);
                        }
                        json_end_array(&w);
                }
                json_end_object(&w);
        } else
                json_null(&w);

        /* The files that are there but could not be read: what they hold is left out above. */
        json_key(&w, "unreadable");
        json_begin_array(&w);
        for (size_t i = 0; i < s->unreadable.n; i++) {
                json_begin_object(&w);
                json_kv_string(&w, "path", s->unreadable.files[i].path);
                json_kv_string(&w, "error", strerror(-s->unreadable.files[i].error));
                json_end_object(&w);
        }
        json_end_array(&w);

        json_key(&w, "files");
        json_begin_array(&w);
        {
                static const char *const files[] = { BUNDLE_MANIFEST, BUNDLE_LOG_TEXT, BUNDLE_LOG_JSON,
                                                     BUNDLE_FOLDED, BUNDLE_PERF_SCRIPT, BUNDLE_BASELINE_FOLDED,
                                                     BUNDLE_NEAR_EVENT_FOLDED, BUNDLE_ACTIVITY, BUNDLE_REPORT };
                char n1[64], n2[64];
                snprintf(n1, sizeof n1, BUNDLE_CPU_FOLDED_FMT, s->cpu);
                snprintf(n2, sizeof n2, BUNDLE_CPU_BASELINE_FOLDED_FMT, s->cpu);
                for (size_t i = 0; i < ELEMENTSOF(files) + 2; i++) {
                        const char *name = i < ELEMENTSOF(files) ? files[i] : i == ELEMENTSOF(files) ? n1 : n2;
                        _cleanup_free_ char *p = NULL;
                        if (i >= ELEMENTSOF(files) && !s->has_cpu)
                                break;
                        p = show_bundle_file(s, name);
                        if (p && access(p, F_OK) >= 0)
                                json_string(&w, p);
                }
        }
        json_end_array(&w);

        json_key(&w, "cpu");
        if (s->has_cpu) {
                json_begin_object(&w);
                json_kv_u64(&w, "cpu", s->cpu);
                json_kv_u64(&w, "slice_samples", s->cpu_slice.total);
                json_kv_u64(&w, "baseline_samples", s->cpu_baseline.total);
                json_key(&w, "processes");
                json_rises(&w, s, s->cpu_rises, s->n_cpu_rises, true, false);
                json_end_object(&w);
        } else
                json_null(&w);
        json_end_object(&w);

        text = json_finish(&w, &r);
        json_writer_done(&w);
        if (!text)
                return log_error_errno(r, "Failed to format JSON: %m");
        json_text_print(text);
        return 0;
}
