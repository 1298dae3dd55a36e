/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Incident lifetime and its manifest; see incident.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "basic/alloc-util.h"
#include "basic/json-writer.h"
#include "basic/string-util.h"
#include "basic/time-util.h"
#include "incident/incident-cgroups.h"
#include "incident/incident-threads.h"
#include "incident/incident.h"

void incident_rule_done(IncidentRule *r) {
        r->name = mfree(r->name);
        r->description = mfree(r->description);
        r->source = mfree(r->source);
        r->origin = mfree(r->origin);
        r->match = mfree(r->match);
        r->severity = mfree(r->severity);
        r->group = mfree(r->group);
}

Incident *incident_free(Incident *i) {
        if (!i)
                return NULL;
        free(i->id);
        incident_rule_done(&i->rule);
        free(i->message);
        free(i->unit);
        free(i->comm);
        for (size_t k = 0; k < i->n_joined; k++)
                free(i->joined[k].rule);
        for (size_t k = 0; k < i->n_captures; k++) {
                free(i->captures[k].name);
                free(i->captures[k].value);
        }
        free(i->captures);
        free(i->note);
        free(i);
        return NULL;
}

static int strdup_or_null(char **dst, const char *src) {
        if (!src) {
                *dst = NULL;
                return 0;
        }
        *dst = strdup(src);
        return *dst ? 0 : -ENOMEM;
}

static int rule_copy(IncidentRule *dst, const IncidentRule *src) {
        *dst = (IncidentRule) {
                .before_usec = src->before_usec,
                .after_usec = src->after_usec,
                .cooldown_usec = src->cooldown_usec,
        };
        if (strdup_or_null(&dst->name, src->name) < 0 || strdup_or_null(&dst->description, src->description) < 0 ||
            strdup_or_null(&dst->source, src->source) < 0 || strdup_or_null(&dst->origin, src->origin) < 0 ||
            strdup_or_null(&dst->match, src->match) < 0 || strdup_or_null(&dst->severity, src->severity) < 0 ||
            strdup_or_null(&dst->group, src->group) < 0) {
                incident_rule_done(dst);
                return -ENOMEM;
        }
        return 0;
}

int incident_new(const IncidentRule *rule, uint64_t t_ns, uint64_t realtime_usec, const ClockMap *clock,
                 Incident **ret) {
        _cleanup_(incident_freep) Incident *i = NULL;
        char stamp[32], rule_name[128];
        uint8_t rnd[BUNDLE_SHORT_ID_LEN / 2];
        struct tm tm;
        time_t sec;

        i = calloc(1, sizeof(Incident));
        if (!i)
                return -ENOMEM;
        if (rule_copy(&i->rule, rule) < 0)
                return -ENOMEM;

        i->source = _LOG_SOURCE_INVALID;
        i->priority = i->facility = -1;
        i->clock = *clock;
        i->t_ns = t_ns;
        i->t_mono_ns = clock_map_perf_to_mono(clock, t_ns);
        i->t_realtime_usec = realtime_usec ?: clock_map_perf_to_realtime(clock, t_ns) / NSEC_PER_USEC;
        i->error_ns = clock->error_ns;
        i->alignment = "kmsg-timestamp";
        i->repeats = 1;
        i->last_repeat_ns = t_ns;
        i->from_ns = t_ns > rule->before_usec * NSEC_PER_USEC ? t_ns - rule->before_usec * NSEC_PER_USEC : 0;
        i->to_ns = t_ns + rule->after_usec * NSEC_PER_USEC;
        i->created_realtime_usec = now_usec(CLOCK_REALTIME);

        if (getrandom(rnd, sizeof rnd, GRND_NONBLOCK) != (ssize_t) sizeof rnd) {
                /* Early boot without entropy: the id only has to be unique on this host. */
                uint64_t x = now_nsec(CLOCK_MONOTONIC) ^ ((uint64_t) getpid() << 32);
                memcpy(rnd, &x, sizeof rnd);
        }
        for (size_t k = 0; k < sizeof rnd; k++)
                snprintf(i->short_id + 2 * k, 3, "%02x", rnd[k]);

        sec = (time_t) (i->t_realtime_usec / USEC_PER_SEC);
        if (!gmtime_r(&sec, &tm))
                return -EINVAL;
        strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
        snprintf(rule_name, sizeof rule_name, "%s", rule->name ?: "unnamed");
        filename_sanitize(rule_name);
        if (asprintf(&i->id, "%s-%s-%s", stamp, rule_name, i->short_id) < 0) {
                i->id = NULL;
                return -ENOMEM;
        }
        *ret = TAKE_PTR(i);
        return 0;
}

int incident_set_trigger(Incident *i, const LogRecord *rec, const char *alignment, uint64_t error_ns) {
        size_t n = MIN(rec->message_len, (size_t) LOG_MESSAGE_BYTES_MAX);

        i->source = rec->source;
        i->kernel_origin = rec->kernel_origin;
        i->priority = rec->priority;
        i->facility = rec->facility;
        i->seq = rec->seq;
        i->alignment = alignment;
        i->error_ns = error_ns;
        free(i->message);
        i->message = memdup(rec->message ?: "", n + 1);
        if (!i->message)
                return -ENOMEM;
        i->message[n] = '\0';
        i->message_len = n;
        free(i->unit);
        free(i->comm);
        if (strdup_or_null(&i->unit, rec->unit) < 0 || strdup_or_null(&i->comm, rec->comm) < 0)
                return -ENOMEM;
        return 0;
}

int incident_add_capture(Incident *i, const char *name, const char *value, size_t value_len) {
        IncidentCapture *c;

        if (i->n_captures >= INCIDENT_CAPTURES_MAX)
                return -E2BIG;
        c = reallocarray(i->captures, i->n_captures + 1, sizeof(IncidentCapture));
        if (!c)
                return -ENOMEM;
        i->captures = c;
        c = &i->captures[i->n_captures];
        c->name = strdup(name);
        c->value = strndup(value, MIN(value_len, (size_t) LOG_FIELD_BYTES_MAX));
        if (!c->name || !c->value) {
                free(c->name);
                free(c->value);
                return -ENOMEM;
        }
        i->n_captures++;
        return 0;
}

int incident_add_repeat(Incident *i, const char *rule, uint64_t t_ns) {
        i->repeats++;
        if (t_ns > i->last_repeat_ns)
                i->last_repeat_ns = t_ns;
        if (!rule || streq(rule, i->rule.name))
                return 0;
        for (size_t k = 0; k < i->n_joined; k++)
                if (streq(i->joined[k].rule, rule)) {
                        i->joined[k].matches++;
                        return 0;
                }
        if (i->n_joined >= INCIDENT_JOINED_RULES_MAX)
                return -E2BIG;
        i->joined[i->n_joined].rule = strdup(rule);
        if (!i->joined[i->n_joined].rule)
                return -ENOMEM;
        i->joined[i->n_joined++].matches = 1;
        return 0;
}

const char *incident_capture(const Incident *i, const char *name) {
        for (size_t k = 0; k < i->n_captures; k++)
                if (streq(i->captures[k].name, name))
                        return i->captures[k].value;
        return NULL;
}

BundleStatus incident_status(const Incident *i, const IncidentSlice *s) {
        /* A sampling gap of a couple of periods at either end is not a hole in coverage. */
        const uint64_t slack_ns = 2 * NSEC_PER_SEC;

        if (s->samples == 0)
                return BUNDLE_NO_COVERAGE;
        if (s->covered_from_ns > i->from_ns + slack_ns || s->covered_to_ns + slack_ns < i->to_ns)
                return BUNDLE_PARTIAL;
        /* Resumed inside the slice: nothing was sampled between the earlier run's end and this one's
         * start, a hole that the ends do not show. */
        if (i->resumed_ns > i->from_ns && i->resumed_ns < i->to_ns &&
            (s->resume_gap_to_ns ?: i->to_ns) > (s->resume_gap_from_ns ?: i->from_ns) + slack_ns)
                return BUNDLE_PARTIAL;
        /* Samples the kernel dropped leave holes inside the slice that its ends do not show. */
        if (s->lost > 0 && (double) s->lost >= INCIDENT_LOST_PARTIAL * (double) (s->samples + s->lost))
                return BUNDLE_PARTIAL;
        return BUNDLE_COMPLETE;
}

static void kv_time(JsonWriter *w, const char *key, const ClockMap *m, uint64_t perf_ns) {
        char buf[FORMAT_TIMESTAMP_MAX];
        json_kv_string(w, key, format_timestamp_utc(buf, sizeof buf, clock_map_perf_to_realtime(m, perf_ns) / NSEC_PER_USEC));
}

int incident_manifest_json(const Incident *i, const IncidentHost *h, const IncidentProfile *p,
                           const IncidentSlice *s, char *const *windows, size_t n_windows, bool pending,
                           char **ret) {
        char buf[FORMAT_TIMESTAMP_MAX];
        JsonWriter w;
        char *out;
        int r = 0;

        json_writer_init(&w, true);
        json_begin_object(&w);
        json_kv_u64(&w, "format", BUNDLE_FORMAT_VERSION);
        json_kv_string(&w, "id", i->id);
        json_kv_string(&w, "short_id", i->short_id);
        json_kv_string(&w, "status",
                       pending ? bundle_status_to_string(BUNDLE_PENDING_STATUS)
                               : bundle_status_to_string(incident_status(i, s)));
        json_kv_string(&w, "tprof_version", TPROF_VERSION);
        json_kv_string(&w, "created_utc", format_timestamp_utc(buf, sizeof buf, i->created_realtime_usec));
        json_kv_string(&w, "host", h->host);
        json_kv_string(&w, "boot_id", h->boot_id);
        json_kv_string(&w, "kernel_release", h->kernel_release);

        json_key(&w, "rule");
        json_begin_object(&w);
        json_kv_string(&w, "name", i->rule.name);
        json_kv_string(&w, "description", i->rule.description);
        json_kv_string(&w, "source", i->rule.source);
        json_kv_string(&w, "origin", i->rule.origin);
        json_kv_string(&w, "match", i->rule.match);
        json_kv_u64(&w, "before_usec", i->rule.before_usec);
        json_kv_u64(&w, "after_usec", i->rule.after_usec);
        json_kv_u64(&w, "cooldown_usec", i->rule.cooldown_usec);
        json_kv_string(&w, "severity", i->rule.severity);
        json_kv_string(&w, "group", i->rule.group);
        json_end_object(&w);

        json_key(&w, "event");
        json_begin_object(&w);
        json_kv_u64(&w, "t_perf_ns", i->t_ns);
        json_kv_u64(&w, "t_monotonic_ns", i->t_mono_ns);
        json_kv_u64(&w, "t_realtime_usec", i->t_realtime_usec);
        json_kv_string(&w, "utc", format_timestamp_utc(buf, sizeof buf, i->t_realtime_usec));
        json_kv_string(&w, "source", i->source >= 0 ? log_source_to_string(i->source) : "manual");
        json_kv_bool(&w, "kernel_origin", i->kernel_origin);
        json_kv_i64(&w, "priority", i->priority);
        json_kv_i64(&w, "facility", i->facility);
        json_kv_u64(&w, "seq", i->seq);
        json_kv_string(&w, "unit", i->unit);
        json_kv_string(&w, "comm", i->comm);
        json_key(&w, "message");
        if (i->message)
                json_string_n(&w, i->message, i->message_len);
        else
                json_null(&w);
        json_key(&w, "captures");
        json_begin_object(&w);
        for (size_t k = 0; k < i->n_captures; k++)
                json_kv_string(&w, i->captures[k].name, i->captures[k].value);
        json_end_object(&w);
        json_key(&w, "alignment");
        json_begin_object(&w);
        json_kv_string(&w, "method", i->alignment);
        json_kv_string(&w, "clock_map", clock_map_method_to_string(i->clock.method));
        json_kv_u64(&w, "error_ns", i->error_ns);
        json_end_object(&w);
        json_end_object(&w);

        json_kv_u64(&w, "repeats", i->repeats);
        json_kv_u64(&w, "last_repeat_perf_ns", i->last_repeat_ns);
        json_key(&w, "joined_rules");
        json_begin_object(&w);
        for (size_t k = 0; k < i->n_joined; k++)
                json_kv_u64(&w, i->joined[k].rule, i->joined[k].matches);
        json_end_object(&w);
        json_kv_string(&w, "note", i->note);
        json_key(&w, "interrupted");
        if (i->resumed_realtime_usec > 0) {
                json_begin_object(&w);
                json_kv_string(&w, "resumed_utc", format_timestamp_utc(buf, sizeof buf, i->resumed_realtime_usec));
                json_end_object(&w);
        } else
                json_null(&w);

        json_key(&w, "profile");
        json_begin_object(&w);
        json_kv_string(&w, "event", p->event);
        json_kv_u64(&w, "freq_hz", p->freq_hz);
        json_kv_u64(&w, "n_cpus", p->n_cpus);
        json_end_object(&w);

        json_key(&w, "slice");
        json_begin_object(&w);
        json_kv_u64(&w, "from_perf_ns", i->from_ns);
        json_kv_u64(&w, "to_perf_ns", i->to_ns);
        kv_time(&w, "from_utc", &i->clock, i->from_ns);
        kv_time(&w, "to_utc", &i->clock, i->to_ns);
        json_kv_u64(&w, "samples", s->samples);
        json_kv_u64(&w, "near_samples", s->near_samples);
        json_kv_u64(&w, "lost", s->lost);
        json_kv_u64(&w, "covered_from_perf_ns", s->covered_from_ns);
        json_kv_u64(&w, "covered_to_perf_ns", s->covered_to_ns);
        json_end_object(&w);

        json_key(&w, "baseline");
        json_begin_object(&w);
        json_kv_u64(&w, "from_perf_ns", s->baseline_from_ns);
        json_kv_u64(&w, "to_perf_ns", s->baseline_to_ns);
        json_kv_u64(&w, "samples", s->baseline_samples);
        json_end_object(&w);

        if (s->cgroups)
                incident_cgroups_json(s->cgroups, "/", &w);
        if (s->threads)
                incident_threads_json(s->threads, &w);

        json_key(&w, "windows");
        json_begin_array(&w);
        for (size_t k = 0; k < n_windows; k++)
                json_string(&w, windows[k]);
        json_end_array(&w);
        json_end_object(&w);

        out = json_finish(&w, &r);
        if (!out)
                return r;
        *ret = out;
        return 0;
}
