/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An incident: one rule match (plus its repeats) on its way to becoming a bundle. Owns copies of
 * everything it needs, because the rule set may be reloaded and the log record is gone when the
 * match callback returns. incident_manifest_json() renders docs/bundle-format.md's manifest.json.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "basic/clock-map.h"
#include "bundle/bundle-format.h"
#include "logsrc/log-record.h"

#define INCIDENT_CAPTURES_MAX 32U

typedef struct IncidentRule {
        char *name;
        char *description;
        char *source;   /* "kernel", "journal" or "manual" */
        char *origin;   /* "kernel", "any", or NULL */
        char *match;
        char *severity; /* or NULL */
        char *group;    /* the cooldown it shares with other rules, or NULL: its own */
        uint64_t before_usec, after_usec, cooldown_usec;
} IncidentRule;

/* The cooldown a rule's matches are counted in: its group's, or its own. */
static inline const char *incident_rule_cooldown_key(const IncidentRule *r) {
        return r->group ?: r->name;
}

#define INCIDENT_JOINED_RULES_MAX 16U

typedef struct IncidentCapture {
        char *name;
        char *value;
} IncidentCapture;

typedef struct IncidentProfile {
        const char *event;
        uint32_t freq_hz;
        uint32_t n_cpus;
} IncidentProfile;

typedef struct IncidentSlice {
        uint64_t samples, lost;
        uint64_t near_samples; /* of samples, those in the event's own seconds (event.folded's) */
        uint64_t covered_from_ns, covered_to_ns; /* first and last sample inside the slice; 0 if none */
        /* A resumed incident (Incident.resumed_ns): the slice's last sample before the restart and
         * first after it; 0 if none. */
        uint64_t resume_gap_from_ns, resume_gap_to_ns;
        uint64_t baseline_from_ns, baseline_to_ns, baseline_samples;
        const struct IncidentCgroups *cgroups; /* the cgroups its samples ran in; NULL: none known yet */
        const struct IncidentThreads *threads; /* the processes of its named threads; NULL: not known yet */
} IncidentSlice;

typedef struct Incident {
        char *id;       /* directory name: <UTC>-<rule>-<short id> */
        char short_id[BUNDLE_SHORT_ID_LEN + 1];
        IncidentRule rule;

        /* The triggering record, copied. */
        LogSource source; /* _LOG_SOURCE_INVALID for a manual capture */
        bool kernel_origin;
        int priority, facility;
        uint64_t seq;
        char *message;
        size_t message_len;
        char *unit, *comm;
        IncidentCapture *captures;
        size_t n_captures;

        uint64_t t_ns;            /* perf clock */
        uint64_t t_mono_ns;
        uint64_t t_realtime_usec;
        const char *alignment;    /* docs/bundle-format.md event.alignment.method */
        ClockMap clock;
        uint64_t error_ns;

        unsigned repeats;
        uint64_t last_repeat_ns;
        /* Other rules of the group whose matches joined as repeats, with their counts (the first
         * INCIDENT_JOINED_RULES_MAX names; later ones count in repeats only). */
        struct {
                char *rule;
                unsigned matches;
        } joined[INCIDENT_JOINED_RULES_MAX];
        size_t n_joined;
        char *note;

        uint64_t from_ns, to_ns; /* the slice: [t - before, t + after] */
        uint64_t created_realtime_usec;

        /* An incident an earlier run staged and did not finish (it was killed, or crashed), taken up
         * again from its pending manifest (incident-resume.h): when that happened, and on the perf
         * clock (0 when the incident is of another boot, whose perf clock this is not). */
        uint64_t resumed_realtime_usec;
        uint64_t resumed_ns;
} Incident;

void incident_rule_done(IncidentRule *r);
Incident *incident_free(Incident *i);

/*
 * Makes an incident for rule at event time t_ns (perf clock), with the id derived from the UTC
 * time and rule name. The UTC time is realtime_usec, or when that is 0 t_ns's through clock (an
 * entry of another boot has no place on this boot's perf clock, only its own realtime). The caller
 * fills the trigger fields (incident_set_trigger() for a log record).
 */
int incident_new(const IncidentRule *rule, uint64_t t_ns, uint64_t realtime_usec, const ClockMap *clock,
                 Incident **ret);
int incident_set_trigger(Incident *i, const LogRecord *rec, const char *alignment, uint64_t error_ns);
int incident_add_capture(Incident *i, const char *name, const char *value, size_t value_len);
/* Counts a repeat: a later match of the incident's rule, or of another rule of its group. */
int incident_add_repeat(Incident *i, const char *rule, uint64_t t_ns);
const char *incident_capture(const Incident *i, const char *name);

/* Describes where the samples of the slice came from, for the manifest. */
typedef struct IncidentHost {
        const char *host, *boot_id, *kernel_release;
} IncidentHost;

/* The share of the slice's samples lost (of those taken and lost) from which it is partial. */
#define INCIDENT_LOST_PARTIAL 0.05
BundleStatus incident_status(const Incident *i, const IncidentSlice *s);

int incident_manifest_json(const Incident *i, const IncidentHost *h, const IncidentProfile *p,
                           const IncidentSlice *s, char *const *windows, size_t n_windows, bool pending,
                           char **ret);

#include "basic/cleanup.h"
DEFINE_TRIVIAL_CLEANUP_FUNC(Incident *, incident_free);
