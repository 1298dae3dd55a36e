/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The incident lifecycle on the daemon's event loop: a rule match (or a capture request) becomes an
 * incident, is staged as incidents/.tmp-<id> with the windows of its slice pinned, waits on a
 * deadline until t + after has been sampled, then is sliced, published, announced in the journal,
 * handed to the bundle hook (incident-hook.h), and kept until its cooldown ends so repeats join it (the manifest is
 * rewritten to count them). It also keeps incidents/ within its limits.
 *
 *   match ──trigger_decide()──► new: stage, pin, arm the deadline      repeat: count, rewrite
 *   deadline ──► queue ─► flush (the owner's callback) ─► pin again ─► copy the log lines
 *            ─► [writer thread: slice ─► publish] ─► announce, limits, hook, the capture's done
 *               callback ─► expire at the end of the cooldown
 *
 * Bundles are written one at a time on a thread of their own (incident-worker.h); everything else
 * happens on the event loop, and repeats that come while a bundle is written join it afterwards.
 * It owns the incidents, the trigger, the hook runner and the writer; it borrows the event loop, the ring store,
 * the log context and the clock mapping from its owner, which keeps them alive and up to date.
 * Like the daemon code it came from, it logs what happens to incidents and bundles.
 */
#pragma once

#include <stdint.h>

#include <systemd/sd-event.h>

#include "basic/clock-map.h"
#include "incident/incident-hook.h"
#include "incident/incident-limits.h"
#include "incident/incident-trigger.h"
#include "incident/incident.h"
#include "logsrc/log-context.h"
#include "logsrc/log-record.h"
#include "store/ring-store.h"

/* What a capture request is told when its bundle is published (error == 0) or not: error is < 0,
 * -ECANCELED when the incident was dropped before its deadline (the daemon stopped). id and path
 * are set on success only. */
typedef struct IncidentResult {
        int error;
        const char *id;
        const char *path;
        BundleStatus status;
} IncidentResult;

typedef void (*IncidentDoneFunc)(const IncidentResult *res, void *userdata);

/* Called when an incident needs every sample up to now on disk: drain the sampler, flush the ring. */
typedef void (*IncidentFlushFunc)(void *userdata);

typedef struct IncidentManagerOptions {
        sd_event *event;
        int64_t priority_incident;     /* deadlines */
        int64_t priority_housekeeping; /* manifest rewrites, hooks */
        const char *state_dir;         /* bundles go to <state_dir>/incidents, which must exist */
        RingStore *ring;               /* borrowed: pinned and sliced at deadlines */
        LogContext *log_context;       /* borrowed: the bundle's log lines */
        const ClockMap *clock;         /* borrowed: the owner refreshes it in place */
        IncidentHost host;             /* strings borrowed */
        IncidentProfile profile;       /* strings borrowed */
        IncidentLimits limits;
        IncidentHookOptions hook;      /* incidents.on_bundle; copied */
        IncidentFlushFunc flush;
        void *userdata;                /* for flush */
        uint64_t started_mono_usec;    /* when this run started, before it sampled; 0: now */
} IncidentManagerOptions;

typedef struct IncidentManagerStats {
        uint64_t written, failed;
        unsigned open;
        unsigned writing, queued; /* bundles on the worker (0 or 1), and past their deadline waiting for it */
        TriggerStats trigger;
        IncidentHookStats hook;
} IncidentManagerStats;

typedef struct IncidentManager IncidentManager;

/* Removes the unfinished bundles an earlier run left that cannot be resumed, their pending manifest
 * missing or damaged (before the ring opens, so their pins go). */
void incident_manager_remove_unfinished(const char *state_dir);

int incident_manager_new(const IncidentManagerOptions *o, IncidentManager **ret);
/* Unpublished incidents are discarded (call incident_manager_finish() first to publish them);
 * running hooks get SIGTERM. */
IncidentManager *incident_manager_free(IncidentManager *im);

/* Takes up the unfinished bundles an earlier run left (incident-resume.h): each is an open incident
 * again, published at t + after (at once when that has passed, or when it is of another boot). One
 * that cannot be is removed. Call once, after incident_manager_remove_unfinished() and before
 * the log sources start. */
void incident_manager_resume(IncidentManager *im);

/* Settings a reload may change. */
void incident_manager_set_limits(IncidentManager *im, const IncidentLimits *limits);
int incident_manager_set_hook(IncidentManager *im, const IncidentHookOptions *hook);

/* A capture group of a rule match; value points into the record, not NUL-terminated. */
typedef struct IncidentMatchCapture {
        const char *name;
        const char *value;
        size_t value_len;
} IncidentMatchCapture;

/* A rule matched rec: starts an incident, joins the rule's open one, or is dropped by the trigger's
 * limits (counted). rule is copied. Failures are logged; returns 0. */
int incident_manager_match(IncidentManager *im, const IncidentRule *rule, const LogRecord *rec,
                           const IncidentMatchCapture *captures, size_t n_captures);

/*
 * A manual capture of [now - before, now + after]. done is called exactly once, later, from the
 * event loop (or from incident_manager_finish()/free()). Returns -EBUSY when too many incidents are
 * being recorded; on success *ret_short_id (optional) points to the incident's short id, valid
 * until done is called.
 */
int incident_manager_capture(IncidentManager *im, uint64_t before_usec, uint64_t after_usec, const char *note,
                             IncidentDoneFunc done, void *userdata, const char **ret_short_id);

/* Publishes every incident still recording, with what was sampled so far (the daemon stops). */
void incident_manager_finish(IncidentManager *im);

void incident_manager_get_stats(const IncidentManager *im, IncidentManagerStats *ret);

#include "basic/cleanup.h"
DEFINE_TRIVIAL_CLEANUP_FUNC(IncidentManager *, incident_manager_free);
