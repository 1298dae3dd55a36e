/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Decides what a rule match becomes: a new incident, a repeat that joins the rule's incident
 * inside its cooldown, or nothing because a storm hit the global limits. Pure bookkeeping, no I/O:
 * the incident manager owns the incidents and hands them in as opaque cookies.
 *
 * Limits, so a flood of matches (thousands a second, many rules) stays a bounded number of
 * bundles: at most max_open incidents being recorded at once, and at most max_per_hour new
 * incidents in any sliding hour. Every match that does not become or join an incident is counted.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "basic/cleanup.h"

#define TRIGGER_MAX_OPEN_DEFAULT 8U
#define TRIGGER_MAX_PER_HOUR_DEFAULT 60U
#define TRIGGER_RULES_MAX 4096U

typedef enum TriggerVerdict {
        TRIGGER_NEW,          /* start an incident, then call trigger_register() */
        TRIGGER_JOINED,       /* a repeat inside the cooldown: *ret_cookie is the rule's incident */
        TRIGGER_RATE_LIMITED, /* dropped: too many incidents this hour */
        TRIGGER_TOO_MANY_OPEN, /* dropped: too many incidents being recorded */
        _TRIGGER_VERDICT_MAX,
} TriggerVerdict;

const char *trigger_verdict_to_string(TriggerVerdict v);

typedef struct TriggerLimits {
        unsigned max_open;
        unsigned max_per_hour;
} TriggerLimits;

typedef struct TriggerStats {
        uint64_t matches, incidents, joined, rate_limited, too_many_open;
} TriggerStats;

typedef struct Trigger Trigger;

Trigger *trigger_new(const TriggerLimits *limits);
Trigger *trigger_free(Trigger *t);

/*
 * event_ns is the match's time on the perf clock (cooldowns are measured between events), now_ns a
 * monotonic "now" (the hourly budget is measured in real time passing).
 */
TriggerVerdict trigger_decide(Trigger *t, const char *rule, uint64_t event_ns, uint64_t cooldown_ns,
                              uint64_t now_ns, void **ret_cookie);

/* Records the incident a TRIGGER_NEW verdict started; it counts as open until trigger_closed(). */
int trigger_register(Trigger *t, const char *rule, uint64_t event_ns, uint64_t cooldown_ns, uint64_t now_ns,
                     void *cookie);
/* The incident's bundle is written (or abandoned): it no longer counts as open, but repeats inside
 * its cooldown still join it until trigger_forget(). */
void trigger_closed(Trigger *t, void *cookie);
/* The incident is gone (cooldown over, or abandoned): later matches start a new one. */
void trigger_forget(Trigger *t, void *cookie);

unsigned trigger_n_open(const Trigger *t);
void trigger_get_stats(const Trigger *t, TriggerStats *ret);
DEFINE_TRIVIAL_CLEANUP_FUNC(Trigger *, trigger_free);
