/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One piece of work at a time on a thread of its own, finished on the event loop.
 *
 * Writing a bundle reads every sample of its windows and writes folded stacks, the report and the
 * manifest: at the sample rates of a large host that is seconds of work, and on the daemon's one
 * thread those seconds were seconds in which nobody drained the perf rings (samples lost) or
 * answered the control socket. The worker runs work(job) on a thread and, when it returns, calls
 * done(job) on the event loop, where everything else about the job happens.
 *
 * The work function must touch only what the job owns or what nobody changes while it runs: the
 * caller hands the job over at incident_worker_start() and gets it back in done().
 */
#pragma once

#include <stdbool.h>

#include <systemd/sd-event.h>

typedef struct IncidentWorker IncidentWorker;

typedef void (*IncidentWorkFunc)(void *job);
typedef void (*IncidentWorkDoneFunc)(void *job, void *userdata);

int incident_worker_new(sd_event *e, int64_t priority, IncidentWorkDoneFunc done, void *userdata,
                        IncidentWorker **ret);
/* Waits for work still running; its done is not called (the owner is going away). */
IncidentWorker *incident_worker_free(IncidentWorker *w);

bool incident_worker_busy(const IncidentWorker *w);
/* -EBUSY while a job runs. */
int incident_worker_start(IncidentWorker *w, IncidentWorkFunc work, void *job);
/* Waits for the running job, if any, and calls its done now (for a daemon that is stopping). */
void incident_worker_wait(IncidentWorker *w);

#include "basic/cleanup.h"
DEFINE_TRIVIAL_CLEANUP_FUNC(IncidentWorker *, incident_worker_free);
