/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Cooldown, repeat joining and storm limits; see incident-trigger.h. The per-rule table is a small
 * array (rule sets are bounded) and the hourly budget a ring of the last max_per_hour start times.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "basic/alloc-util.h"
#include "basic/cleanup.h"
#include "basic/macro.h"
#include "basic/time-util.h"
#include "incident/incident-trigger.h"

typedef struct RuleState {
        char *rule;
        void *cookie;        /* NULL when the rule has no incident */
        uint64_t event_ns;   /* the incident's first event */
        uint64_t cooldown_ns;
} RuleState;

struct Trigger {
        TriggerLimits limits;
        RuleState *rules;
        size_t n_rules, allocated;
        uint64_t *starts; /* ring of start times (now_ns) of the last max_per_hour incidents */
        size_t n_starts, next_start;
        /* The incidents being recorded, of every rule. Not a flag in the rule's slot: a rule whose
         * cooldown is shorter than its before + after has several incidents recording at once, and
         * each new one takes the slot over. */
        void **open;
        size_t n_open, allocated_open;
        TriggerStats stats;
};

const char *trigger_verdict_to_string(TriggerVerdict v) {
        static const char *const table[_TRIGGER_VERDICT_MAX] = {
                [TRIGGER_NEW] = "new",
                [TRIGGER_JOINED] = "joined",
                [TRIGGER_RATE_LIMITED] = "rate-limited",
                [TRIGGER_TOO_MANY_OPEN] = "too-many-open",
        };
        return v < _TRIGGER_VERDICT_MAX ? table[v] : NULL;
}

Trigger *trigger_new(const TriggerLimits *limits) {
        Trigger *t = calloc(1, sizeof(Trigger));

        if (!t)
                return NULL;
        t->limits = limits ? *limits
                           : (TriggerLimits) { TRIGGER_MAX_OPEN_DEFAULT, TRIGGER_MAX_PER_HOUR_DEFAULT };
        if (t->limits.max_open == 0)
                t->limits.max_open = TRIGGER_MAX_OPEN_DEFAULT;
        if (t->limits.max_per_hour == 0)
                t->limits.max_per_hour = TRIGGER_MAX_PER_HOUR_DEFAULT;
        t->starts = new0(uint64_t, t->limits.max_per_hour);
        if (!t->starts)
                return mfree(t);
        return t;
}

Trigger *trigger_free(Trigger *t) {
        if (!t)
                return NULL;
        for (size_t i = 0; i < t->n_rules; i++)
                free(t->rules[i].rule);
        free(t->rules);
        free(t->starts);
        free(t->open);
        free(t);
        return NULL;
}

static RuleState *find_rule(Trigger *t, const char *rule) {
        for (size_t i = 0; i < t->n_rules; i++)
                if (streq(t->rules[i].rule, rule))
                        return &t->rules[i];
        return NULL;
}

static RuleState *find_cookie(Trigger *t, void *cookie) {
        for (size_t i = 0; i < t->n_rules; i++)
                if (t->rules[i].cookie == cookie)
                        return &t->rules[i];
        return NULL;
}

unsigned trigger_n_open(const Trigger *t) {
        return (unsigned) t->n_open;
}

/* Drops cookie from the incidents being recorded, if it is one of them. */
static void open_remove(Trigger *t, void *cookie) {
        for (size_t i = 0; i < t->n_open; i++)
                if (t->open[i] == cookie) {
                        t->open[i] = t->open[--t->n_open];
                        return;
                }
}

/* Starts inside the last hour; the ring holds at most max_per_hour of them. */
static size_t starts_in_last_hour(const Trigger *t, uint64_t now_ns) {
        uint64_t hour_ns = USEC_PER_HOUR * NSEC_PER_USEC;
        size_t n = 0;

        for (size_t i = 0; i < t->n_starts; i++)
                if (now_ns < hour_ns || t->starts[i] > now_ns - hour_ns)
                        n++;
        return n;
}

TriggerVerdict trigger_decide(Trigger *t, const char *rule, uint64_t event_ns, uint64_t cooldown_ns,
                              uint64_t now_ns, void **ret_cookie) {
        RuleState *rs = find_rule(t, rule);

        t->stats.matches++;
        if (rs && rs->cookie && event_ns >= rs->event_ns && event_ns - rs->event_ns < rs->cooldown_ns) {
                t->stats.joined++;
                *ret_cookie = rs->cookie;
                return TRIGGER_JOINED;
        }
        /* An event older than the rule's open incident (sources deliver out of order) joins it too. */
        if (rs && rs->cookie && event_ns < rs->event_ns) {
                t->stats.joined++;
                *ret_cookie = rs->cookie;
                return TRIGGER_JOINED;
        }
        if (trigger_n_open(t) >= t->limits.max_open) {
                t->stats.too_many_open++;
                return TRIGGER_TOO_MANY_OPEN;
        }
        if (starts_in_last_hour(t, now_ns) >= t->limits.max_per_hour) {
                t->stats.rate_limited++;
                return TRIGGER_RATE_LIMITED;
        }
        *ret_cookie = NULL;
        return TRIGGER_NEW;
}

int trigger_register(Trigger *t, const char *rule, uint64_t event_ns, uint64_t cooldown_ns, uint64_t now_ns,
                     void *cookie) {
        RuleState *rs = find_rule(t, rule);

        if (!GREEDY_REALLOC(t->open, t->allocated_open, t->n_open + 1))
                return -ENOMEM;
        if (!rs) {
                if (t->n_rules >= TRIGGER_RULES_MAX)
                        return -E2BIG;
                if (!GREEDY_REALLOC(t->rules, t->allocated, t->n_rules + 1))
                        return -ENOMEM;
                char *name = strdup(rule);
                if (!name)
                        return -ENOMEM;
                rs = &t->rules[t->n_rules++];
                *rs = (RuleState) { .rule = name };
        }
        rs->cookie = cookie;
        t->open[t->n_open++] = cookie;
        rs->event_ns = event_ns;
        rs->cooldown_ns = cooldown_ns;

        t->starts[t->next_start] = now_ns;
        t->next_start = (t->next_start + 1) % t->limits.max_per_hour;
        if (t->n_starts < t->limits.max_per_hour)
                t->n_starts++;
        t->stats.incidents++;
        return 0;
}

void trigger_closed(Trigger *t, void *cookie) {
        open_remove(t, cookie);
}

void trigger_forget(Trigger *t, void *cookie) {
        RuleState *rs = find_cookie(t, cookie);

        open_remove(t, cookie);
        if (rs)
                rs->cookie = NULL;
}

void trigger_get_stats(const Trigger *t, TriggerStats *ret) {
        *ret = t->stats;
}
