/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "basic/fileio.h"
#include "basic/log.h"
#include "basic/parse-util.h"
#include "basic/string-util.h"
#include "basic/time-util.h"
#include "bundle/bundle-format.h"
#include "tprofd/daemon-control.h"

#define CAPTURE_BEFORE_USEC_DEFAULT (60 * USEC_PER_SEC)
#define CAPTURE_AFTER_USEC_DEFAULT (10 * USEC_PER_SEC)
#define CAPTURE_BEFORE_USEC_MAX (15 * USEC_PER_MINUTE)
#define CAPTURE_AFTER_USEC_MAX (5 * USEC_PER_MINUTE)

static int parse_usec_field(const ControlMessage *msg, const char *key, uint64_t def, uint64_t max, uint64_t *ret) {
        const char *v = control_message_get(msg, key);

        if (!v) {
                *ret = def;
                return 0;
        }
        if (safe_atou64(v, ret) < 0 || *ret > max)
                return -EINVAL;
        return 0;
}

/* The capture's bundle is written (or failed, or abandoned): answer the client that waits for it. */
static void on_capture_done(const IncidentResult *res, void *userdata) {
        ControlRequest *req = userdata;
        _cleanup_strbuf_ StrBuf b = STRBUF_NULL;
        char text[256];

        if (res->error == -ECANCELED) {
                (void) control_request_error(req, "the capture was abandoned");
                return;
        }
        if (res->error < 0) {
                snprintf(text, sizeof text, "failed to write the bundle: %s", strerror(-res->error));
                (void) control_request_error(req, text);
                return;
        }
        (void) control_message_append(&b, "OK", "1");
        (void) control_message_append(&b, "ID", res->id);
        (void) control_message_append(&b, "PATH", res->path);
        (void) control_message_append(&b, "STATUS", bundle_status_to_string(res->status));
        (void) control_request_reply(req, b.data ?: "", b.len);
}

static void control_capture(const DaemonParts *p, ControlRequest *req, const ControlMessage *msg) {
        const char *note = control_message_get(msg, "NOTE"), *short_id = NULL;
        uint64_t before_usec, after_usec;
        int r;

        if (parse_usec_field(msg, "BEFORE_USEC", CAPTURE_BEFORE_USEC_DEFAULT, CAPTURE_BEFORE_USEC_MAX,
                             &before_usec) < 0 ||
            parse_usec_field(msg, "AFTER_USEC", CAPTURE_AFTER_USEC_DEFAULT, CAPTURE_AFTER_USEC_MAX, &after_usec) < 0) {
                (void) control_request_error(req, "BEFORE_USEC must be at most 15 min, AFTER_USEC at most 5 min");
                return;
        }
        r = incident_manager_capture(p->incidents, before_usec, after_usec, note, on_capture_done, req, &short_id);
        if (r == -EBUSY) {
                (void) control_request_error(req, "too many incidents are being recorded, try again later");
                return;
        }
        if (r == -ENOMEM) {
                (void) control_request_error(req, "out of memory");
                return;
        }
        if (r < 0) {
                log_error_errno(r, "Failed to start a manual capture: %m");
                (void) control_request_error(req, "failed to stage the bundle");
                return;
        }
        log_info("Manual capture %s requested by UID %u: %s before, %s after.", short_id,
                 (unsigned) control_request_uid(req), FORMAT_TIMESPAN(before_usec), FORMAT_TIMESPAN(after_usec));
}

static void control_status(const DaemonParts *p, ControlRequest *req) {
        _cleanup_strbuf_ StrBuf b = STRBUF_NULL;
        SamplerStats st = {};
        IncidentManagerStats is = {};
        LogSourceStats ks = {}, js = {};
        SamplerDebugStats ds = {};
        uint64_t rss = 0;

        (void) sampler_drain_if_older(p->sampler, USEC_PER_SEC); /* counts of a second ago at most */
        sampler_get_stats(p->sampler, &st);
        sampler_get_debug_stats(p->sampler, &ds);
        (void) self_rss_bytes(&rss);
        incident_manager_get_stats(p->incidents, &is);
        kmsg_source_get_stats(p->kmsg, &ks);
        if (p->journal)
                journal_source_get_stats(p->journal, &js);
        (void) control_message_append(&b, "OK", "1");
        (void) control_message_append(&b, "VERSION", TPROF_VERSION);
        (void) control_message_appendf(&b, "PID", "%d", (int) getpid());
        (void) control_message_appendf(&b, "UPTIME_USEC", "%llu", (unsigned long long) (now_usec(CLOCK_MONOTONIC) - p->started_usec));
        (void) control_message_append(&b, "STATE_DIR", p->config->state_dir);
        (void) control_message_append(&b, "RULES_PATH", p->config->rules_path);
        (void) control_message_appendf(&b, "RULES", "%zu", rule_set_size(p->rules));
        (void) control_message_append(&b, "EVENT", sampler_event_name(p->sampler));
        (void) control_message_appendf(&b, "FREQ_HZ", "%u", p->config->freq_hz);
        (void) control_message_appendf(&b, "CPUS", "%u", sampler_n_cpus(p->sampler));
        (void) control_message_appendf(&b, "SAMPLES", "%llu", (unsigned long long) st.samples);
        (void) control_message_appendf(&b, "LOST", "%llu", (unsigned long long) st.lost);
        (void) control_message_appendf(&b, "THROTTLED", "%llu", (unsigned long long) st.throttled);
        (void) control_message_appendf(&b, "WINDOW_USEC", "%llu", (unsigned long long) p->config->window_usec);
        (void) control_message_append(&b, "WINDOW_OPEN", ring_store_current_name(p->ring) ?: "");
        (void) control_message_append(&b, "CLOCK_MAP", clock_map_method_to_string(p->clock->method));
        (void) control_message_appendf(&b, "CLOCK_ERROR_NS", "%llu", (unsigned long long) p->clock->error_ns);
        (void) control_message_appendf(&b, "KMSG_RECORDS", "%llu", (unsigned long long) ks.records);
        (void) control_message_appendf(&b, "KMSG_LOST", "%llu", (unsigned long long) ks.lost);
        (void) control_message_append(&b, "JOURNAL", p->journal ? "yes" : "no");
        (void) control_message_appendf(&b, "JOURNAL_RECORDS", "%llu", (unsigned long long) js.records);
        (void) control_message_appendf(&b, "MATCHES", "%llu", (unsigned long long) is.trigger.matches);
        (void) control_message_appendf(&b, "INCIDENTS_OPEN", "%u", is.open);
        (void) control_message_appendf(&b, "INCIDENTS_WRITTEN", "%llu", (unsigned long long) is.written);
        (void) control_message_appendf(&b, "INCIDENTS_FAILED", "%llu", (unsigned long long) is.failed);
        (void) control_message_appendf(&b, "INCIDENTS_WRITING", "%u", is.writing);
        (void) control_message_appendf(&b, "INCIDENTS_QUEUED", "%u", is.queued);
        (void) control_message_appendf(&b, "MATCHES_DROPPED", "%llu",
                                       (unsigned long long) (is.trigger.rate_limited + is.trigger.too_many_open));
        (void) control_message_appendf(&b, "HOOKS_STARTED", "%llu", (unsigned long long) is.hook.started);
        (void) control_message_appendf(&b, "HOOKS_FAILED", "%llu", (unsigned long long) (is.hook.failed + is.hook.timed_out));
        (void) control_message_appendf(&b, "HOOKS_DROPPED", "%llu", (unsigned long long) is.hook.dropped);
        (void) control_message_appendf(&b, "HOOKS_RUNNING", "%u", is.hook.running);
        (void) control_message_appendf(&b, "RSS_BYTES", "%llu", (unsigned long long) rss);
        (void) control_message_appendf(&b, "HEAP_BYTES", "%llu", (unsigned long long) self_heap_bytes());
        (void) control_message_appendf(&b, "TASKS", "%llu", (unsigned long long) ds.tasks_live);
        (void) control_message_appendf(&b, "SYMBOL_FILES", "%llu", (unsigned long long) ds.files_loaded);
        (void) control_message_appendf(&b, "SYMBOL_CACHE_BYTES", "%llu", (unsigned long long) ds.cache_bytes);
        (void) control_message_appendf(&b, "SYMBOL_CACHE_DROPS", "%llu", (unsigned long long) ds.cache_flushes);
        (void) control_message_appendf(&b, "SYMBOL_LOADS_DEFERRED", "%llu", (unsigned long long) ds.loads_deferred);
        (void) control_message_appendf(&b, "STACK_CACHE_BYTES", "%llu", (unsigned long long) ds.stack_cache_bytes);
        (void) control_message_appendf(&b, "UNWIND_CACHE_BYTES", "%llu", (unsigned long long) ds.unwind_cache_bytes);
        (void) control_message_appendf(&b, "UNWIND_CACHE_DROPS", "%llu", (unsigned long long) ds.unwind_cache_flushes);
        (void) control_message_appendf(&b, "UNWIND_LOADS_DEFERRED", "%llu", (unsigned long long) ds.unwind_loads_deferred);
        (void) control_request_reply(req, b.data ?: "", b.len);
}

void daemon_control_request(const DaemonParts *p, ControlRequest *req, const ControlMessage *msg) {
        const char *op = control_message_get(msg, "OP");

        if (!op)
                (void) control_request_error(req, "missing OP");
        else if (streq(op, "status"))
                control_status(p, req);
        else if (streq(op, "capture"))
                control_capture(p, req, msg);
        else
                (void) control_request_error(req, "unknown OP");
}
