/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reading a staged bundle's pending manifest back; see incident-resume.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "basic/alloc-util.h"
#include "basic/cleanup.h"
#include "basic/fileio.h"
#include "basic/json-reader.h"
#include "basic/string-util.h"
#include "basic/time-parse.h"
#include "basic/time-util.h"
#include "bundle/bundle-format.h"
#include "incident/incident-resume.h"

/* What incident_set_trigger() and incident_manager_capture() set, so the incident can keep pointing
 * to static text as it does when it is made at a match. */
static const char *const alignments[] = {
        "kmsg-timestamp",
        "journal-source-monotonic",
        "journal-monotonic",
        "capture-request",
};

static const JsonValue *get(const JsonValue *j, const char *path) {
        return json_object_get_path(j, path);
}

/* A string field that may be null or absent; false when it is of another type. */
static bool opt_string(const JsonValue *j, const char *path, const char **ret) {
        const JsonValue *v = get(j, path);

        *ret = json_string_value(v);
        return !v || json_is_null(v) || *ret;
}

static bool need_u64(const JsonValue *j, const char *path, uint64_t *ret) {
        return json_u64_value(get(j, path), ret);
}

static int strdup_field(char **dst, const char *src) {
        if (!src)
                return 0;
        *dst = strdup(src);
        return *dst ? 0 : -ENOMEM;
}

static bool short_id_valid(const char *s) {
        if (!s || strlen(s) != BUNDLE_SHORT_ID_LEN)
                return false;
        for (; *s; s++)
                if (!strchr("0123456789abcdef", *s))
                        return false;
        return true;
}

/* The id names the folder: <UTC>-<rule>-<short id>, one plain name, as incident_new() makes it. */
static bool id_valid(const char *id, const char *short_id) {
        size_t l = id ? strlen(id) : 0;

        if (l <= BUNDLE_SHORT_ID_LEN + 1 || l > 255 || id[0] == '.' || strchr(id, '/'))
                return false;
        return id[l - BUNDLE_SHORT_ID_LEN - 1] == '-' && streq(id + l - BUNDLE_SHORT_ID_LEN, short_id);
}

static int parse_rule(const JsonValue *j, IncidentRule *r) {
        const char *name, *description, *source, *origin, *match, *severity, *group;

        name = json_string_value(get(j, "rule.name"));
        if (!name || !opt_string(j, "rule.description", &description) || !opt_string(j, "rule.source", &source) ||
            !opt_string(j, "rule.origin", &origin) || !opt_string(j, "rule.match", &match) ||
            !opt_string(j, "rule.severity", &severity) || !opt_string(j, "rule.group", &group) ||
            !need_u64(j, "rule.before_usec", &r->before_usec) || !need_u64(j, "rule.after_usec", &r->after_usec) ||
            !need_u64(j, "rule.cooldown_usec", &r->cooldown_usec))
                return -EBADMSG;
        /* A slice that long is not one a rule could have asked for: the numbers are damaged. */
        if (r->before_usec > UINT64_C(86400) * USEC_PER_SEC || r->after_usec > UINT64_C(86400) * USEC_PER_SEC)
                return -EBADMSG;
        if (strdup_field(&r->name, name) < 0 || strdup_field(&r->description, description) < 0 ||
            strdup_field(&r->source, source) < 0 || strdup_field(&r->origin, origin) < 0 ||
            strdup_field(&r->match, match) < 0 || strdup_field(&r->severity, severity) < 0 ||
            strdup_field(&r->group, group) < 0)
                return -ENOMEM;
        return 0;
}

/* The trigger record, the captures and the repeats. */
static int parse_event(const JsonValue *j, Incident *i) {
        const JsonValue *message = get(j, "event.message"), *captures = get(j, "event.captures"),
                        *joined = get(j, "joined_rules");
        const char *source = json_string_value(get(j, "event.source")), *unit, *comm;
        LogRecord rec = LOG_RECORD_NULL;
        int64_t priority = -1, facility = -1;
        uint64_t repeats = 1;
        int r;

        if (!source || !opt_string(j, "event.unit", &unit) || !opt_string(j, "event.comm", &comm) ||
            (message && !json_is_null(message) && message->type != JSON_TYPE_STRING))
                return -EBADMSG;
        if (!streq(source, "manual")) {
                if (streq(source, log_source_to_string(LOG_SOURCE_KMSG)))
                        rec.source = LOG_SOURCE_KMSG;
                else if (streq(source, log_source_to_string(LOG_SOURCE_JOURNAL)))
                        rec.source = LOG_SOURCE_JOURNAL;
                else if (streq(source, log_source_to_string(LOG_SOURCE_TEXT)))
                        rec.source = LOG_SOURCE_TEXT;
                else
                        return -EBADMSG;
                if (!message || message->type != JSON_TYPE_STRING)
                        return -EBADMSG; /* a match always has its line */
                (void) json_bool_value(get(j, "event.kernel_origin"), &rec.kernel_origin);
                (void) json_i64_value(get(j, "event.priority"), &priority);
                (void) json_i64_value(get(j, "event.facility"), &facility);
                (void) json_u64_value(get(j, "event.seq"), &rec.seq);
                rec.priority = priority >= -1 && priority < 8 ? (int) priority : -1;
                rec.facility = facility >= -1 && facility < 1024 ? (int) facility : -1;
                rec.message = message->string.s;
                rec.message_len = message->string.len;
                rec.unit = unit;
                rec.comm = comm;
                rec.t_ns = i->t_ns;
                rec.realtime_usec = i->t_realtime_usec;
                r = incident_set_trigger(i, &rec, i->alignment, i->error_ns);
                if (r < 0)
                        return r;
        }

        if (captures && !json_is_null(captures)) {
                if (captures->type != JSON_TYPE_OBJECT)
                        return -EBADMSG;
                for (size_t k = 0; k < captures->container.n; k++) {
                        const JsonValue *v = captures->container.items[k];
                        if (v->type != JSON_TYPE_STRING)
                                return -EBADMSG;
                        r = incident_add_capture(i, captures->container.keys[k], v->string.s, v->string.len);
                        if (r == -E2BIG)
                                break;
                        if (r < 0)
                                return r;
                }
        }

        /* Repeats counted before the earlier run ended (the pending manifest is written at the match,
         * so usually none). */
        (void) json_u64_value(get(j, "repeats"), &repeats);
        i->repeats = repeats == 0 ? 1 : (unsigned) MIN(repeats, (uint64_t) UINT32_MAX);
        (void) json_u64_value(get(j, "last_repeat_perf_ns"), &i->last_repeat_ns);
        i->last_repeat_ns = MAX(i->last_repeat_ns, i->t_ns);
        if (joined && joined->type == JSON_TYPE_OBJECT)
                for (size_t k = 0; k < joined->container.n && i->n_joined < INCIDENT_JOINED_RULES_MAX; k++) {
                        uint64_t n;
                        if (!json_u64_value(joined->container.items[k], &n))
                                continue;
                        i->joined[i->n_joined].rule = strdup(joined->container.keys[k]);
                        if (!i->joined[i->n_joined].rule)
                                return -ENOMEM;
                        i->joined[i->n_joined++].matches = (unsigned) MIN(n, (uint64_t) UINT32_MAX);
                }
        return 0;
}

int incident_resume_parse(const char *text, size_t size, Incident **ret, char **ret_boot_id) {
        _cleanup_(json_value_freep) JsonValue *j = NULL;
        _cleanup_(incident_freep) Incident *i = NULL;
        _cleanup_free_ char *boot_id = NULL;
        IncidentRule rule = {};
        const char *id, *short_id, *status, *created, *method, *map, *note, *boot;
        uint64_t format, t_ns, t_mono_ns, t_realtime_usec, error_ns = 0, created_usec;
        ClockMap clock;
        size_t offset;
        int r;

        r = json_parse(text, size, JSON_READER_DEPTH_DEFAULT, &j, &offset);
        if (r == -ENOMEM)
                return r;
        if (r < 0 || j->type != JSON_TYPE_OBJECT)
                return -EBADMSG;
        if (!need_u64(j, "format", &format))
                return -EBADMSG;
        if (format > BUNDLE_FORMAT_VERSION)
                return -EPROTO;
        id = json_string_value(get(j, "id"));
        short_id = json_string_value(get(j, "short_id"));
        status = json_string_value(get(j, "status"));
        created = json_string_value(get(j, "created_utc"));
        method = json_string_value(get(j, "event.alignment.method"));
        map = json_string_value(get(j, "event.alignment.clock_map"));
        if (!short_id_valid(short_id) || !id_valid(id, short_id) ||
            !status || !streq(status, bundle_status_to_string(BUNDLE_PENDING_STATUS)) || !created ||
            parse_timestamp(created, 0, &created_usec) < 0 || !method || !opt_string(j, "note", &note) ||
            !opt_string(j, "boot_id", &boot) || !need_u64(j, "event.t_perf_ns", &t_ns) ||
            !need_u64(j, "event.t_monotonic_ns", &t_mono_ns) ||
            !need_u64(j, "event.t_realtime_usec", &t_realtime_usec) || t_realtime_usec == 0)
                return -EBADMSG;
        (void) need_u64(j, "event.alignment.error_ns", &error_ns);

        /* The mapping the incident was made with, as its times show it: its slice's UTC times and its
         * log lines are placed by it. */
        clock = (ClockMap) {
                .method = clock_map_method_from_string(map),
                .perf_minus_mono_ns = (int64_t) (t_ns - t_mono_ns),
                .realtime_minus_mono_ns = (int64_t) (t_realtime_usec * NSEC_PER_USEC - t_mono_ns),
                .error_ns = error_ns,
        };
        if (clock.method < 0)
                clock.method = CLOCK_MAP_RECORDED;

        r = parse_rule(j, &rule);
        if (r < 0) {
                incident_rule_done(&rule);
                return r;
        }
        r = incident_new(&rule, t_ns, t_realtime_usec, &clock, &i);
        incident_rule_done(&rule);
        if (r < 0)
                return r;
        i->t_mono_ns = t_mono_ns;
        i->created_realtime_usec = created_usec;
        i->alignment = NULL;
        for (size_t k = 0; k < ELEMENTSOF(alignments); k++)
                if (streq(method, alignments[k]))
                        i->alignment = alignments[k];
        if (!i->alignment)
                return -EBADMSG;
        free(i->id);
        i->id = strdup(id);
        if (!i->id)
                return -ENOMEM;
        memcpy(i->short_id, short_id, BUNDLE_SHORT_ID_LEN + 1);
        if (note) {
                i->note = strdup(note);
                if (!i->note)
                        return -ENOMEM;
        }
        r = parse_event(j, i);
        if (r < 0)
                return r;
        i->error_ns = error_ns;

        if (ret_boot_id && boot) {
                boot_id = strdup(boot);
                if (!boot_id)
                        return -ENOMEM;
        }
        if (ret_boot_id)
                *ret_boot_id = TAKE_PTR(boot_id);
        *ret = TAKE_PTR(i);
        return 0;
}

int incident_resume_load(int dir_fd, Incident **ret, char **ret_boot_id) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *text = NULL;
        size_t size;
        int r;

        fd = openat(dir_fd, BUNDLE_PENDING, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        if (fd < 0)
                return -errno;
        r = read_full_fd(fd, BUNDLE_MANIFEST_BYTES_MAX, &text, &size);
        if (r < 0)
                return r;
        return incident_resume_parse(text, size, ret, ret_boot_id);
}

bool incident_resumed_trigger(const Incident *i, const IncidentRule *rule, const LogRecord *rec) {
        uint64_t d, slack;

        if (i->resumed_realtime_usec == 0 || i->source < 0 || rec->source != i->source || !i->message ||
            !streq(rule->name, i->rule.name) || rec->message_len != i->message_len ||
            memcmp(rec->message ?: "", i->message, i->message_len) != 0)
                return false;
        if (rec->source == LOG_SOURCE_KMSG)
                return rec->seq == i->seq && rec->t_ns == i->t_ns;
        d = rec->t_ns > i->t_ns ? rec->t_ns - i->t_ns : i->t_ns - rec->t_ns;
        slack = i->error_ns + rec->t_error_ns + NSEC_PER_MSEC;
        return rec->t_ns != 0 && d <= slack;
}

void incident_trigger_record(const Incident *i, LogRecord *ret) {
        *ret = LOG_RECORD_NULL;
        ret->source = i->source;
        ret->kernel_origin = i->kernel_origin;
        ret->priority = i->priority;
        ret->facility = i->facility;
        ret->seq = i->seq;
        ret->t_ns = i->t_ns;
        ret->realtime_usec = i->t_realtime_usec;
        ret->t_error_ns = i->error_ns;
        ret->message = i->message;
        ret->message_len = i->message_len;
        ret->unit = i->unit;
        ret->comm = i->comm;
}
