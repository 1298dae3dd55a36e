/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The bundle hook (incidents.on_bundle): a command, run without a shell, after each bundle is
 * published, with the bundle described in TPROF_* environment variables (README, tprofd(8)).
 *
 * Limits, so a failing, hanging or slow hook never holds up sampling or the next bundle: at most
 * max_running hooks run at once and at most max_queued wait (more are dropped and counted); each
 * runs for at most timeout_usec, then gets SIGTERM (its whole process group), then SIGKILL
 * HOOK_KILL_USEC later. Processes are watched through pidfds on the event loop; their standard
 * output and error share one pipe read on the loop, and at most HOOK_OUTPUT_BYTES_MAX of it per run
 * is logged, line by line, with the exit status; the rest is read a pipe's worth ten times a second
 * and thrown away (a hook that writes faster waits on the pipe). The owner must block SIGCHLD
 * (incident_hook_new() does) so sd-event can reap the children.
 *
 * Like the incident manager, it logs what happens to each run.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <systemd/sd-event.h>

#define HOOK_TIMEOUT_USEC_DEFAULT (60 * UINT64_C(1000000))
#define HOOK_KILL_USEC (5 * UINT64_C(1000000))
#define HOOK_RUNNING_MAX_DEFAULT 2U
#define HOOK_QUEUED_MAX_DEFAULT 16U
#define HOOK_OUTPUT_BYTES_MAX 8192U
#define HOOK_ARGV_MAX 64U

typedef struct IncidentHookOptions {
        char **argv;           /* NULL-terminated; NULL or empty: no hook. argv[0] is an absolute path. */
        uint64_t timeout_usec; /* 0: HOOK_TIMEOUT_USEC_DEFAULT */
        unsigned max_running;  /* 0: HOOK_RUNNING_MAX_DEFAULT */
        unsigned max_queued;   /* 0: HOOK_QUEUED_MAX_DEFAULT */
} IncidentHookOptions;

/* What the hook is told about a bundle; every field becomes one TPROF_* variable. */
typedef struct IncidentHookBundle {
        const char *path;          /* TPROF_BUNDLE_PATH */
        const char *id;            /* TPROF_BUNDLE_ID */
        const char *short_id;      /* TPROF_SHORT_ID */
        const char *rule;          /* TPROF_RULE */
        const char *host;          /* TPROF_HOST */
        const char *status;        /* TPROF_STATUS: complete, partial, no-coverage */
        const char *state_dir;     /* TPROF_STATE_DIR */
        const char *message;       /* TPROF_TRIGGER_MESSAGE: the trigger line, or the capture's note */
        uint64_t trigger_realtime_usec; /* TPROF_TRIGGER_TIME (UTC, ISO 8601), TPROF_TRIGGER_REALTIME_USEC */
        uint64_t trigger_perf_ns;  /* TPROF_TRIGGER_PERF_NS: perf clock, as in the manifest */
} IncidentHookBundle;

typedef struct IncidentHookStats {
        uint64_t started, succeeded, failed, timed_out, dropped;
        unsigned running, queued;
} IncidentHookStats;

typedef struct IncidentHook IncidentHook;

int incident_hook_new(sd_event *e, int64_t priority, const IncidentHookOptions *o, IncidentHook **ret);
/*
 * Whether a hook run now could open an IP socket: false where the process is sandboxed without
 * them (systemd's RestrictAddressFamilies=AF_UNIX in the shipped unit, which the hook inherits),
 * and an uploading hook would fail at every bundle.
 */
bool incident_hook_has_network(void);

/* Whether the hook for the bundle id is running or waiting to run (its bundle must stay). */
bool incident_hook_holds(const IncidentHook *h, const char *id);

/* Running hooks get SIGTERM (their process group) and are not waited for; queued ones are dropped. */
IncidentHook *incident_hook_free(IncidentHook *h);
/* A reload: new runs use the new options; running ones keep theirs. */
int incident_hook_set_options(IncidentHook *h, const IncidentHookOptions *o);
bool incident_hook_enabled(const IncidentHook *h);

/* Starts the hook for b now, or queues it. Returns 0, or -ENOBUFS when the queue is full (dropped,
 * counted, logged). Nothing is done (0) when no hook is configured. */
int incident_hook_submit(IncidentHook *h, const IncidentHookBundle *b);

/* Logs the bundle b and sends the journal entry a log pipeline finds every bundle by (MESSAGE_ID),
 * with the facts the hook gets. */
void incident_announce(const IncidentHookBundle *b);

void incident_hook_get_stats(const IncidentHook *h, IncidentHookStats *ret);

#include "basic/cleanup.h"
DEFINE_TRIVIAL_CLEANUP_FUNC(IncidentHook *, incident_hook_free);
