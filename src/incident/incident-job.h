/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Writing one incident's bundle, a job the manager schedules (incident-manager.c, which keeps the
 * queue, the deadlines and the repeats). Included by incident-manager.c and incident-job.c only.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "incident/incident-manager.h"
#include "incident/incident-write.h"
#include "incident/incident.h"
#include "logsrc/log-record.h"

typedef struct OpenIncident OpenIncident; /* incident-manager-internal.h */

typedef struct CollectLog {
        IncidentLogLine *lines;
        LogRecord **copies;
        size_t n, allocated, allocated_copies;
        const OpenIncident *oi;
} CollectLog;

typedef struct SliceFiles {
        char **paths;
        size_t n;
        uint64_t from_ns, to_ns;
        IncidentSink *sink;
} SliceFiles;

/*
 * Writing a bundle is a job in three steps. On the event loop, prepare() flushes the rings, pins
 * what appeared since the match and copies the log lines; on the worker, run() reads every sample
 * of the pinned windows and publishes the bundle; on the event loop again, finish() announces it,
 * keeps incidents/ within its limits and hands it to the hook. run() reads only the job and the
 * incident, which the event loop leaves alone meanwhile (repeats wait in the OpenIncident).
 */
typedef struct BundleJob {
        OpenIncident *oi;
        int incidents_fd;
        IncidentHost host;
        IncidentProfile profile;
        CollectLog log;
        SliceFiles files;
        uint64_t read_to_ns; /* the samples the bundle takes end here (perf clock) */
        char **names;
        IncidentSink *sink;
        uint64_t started_usec;
        const char *test_gate;
        int error; /* run()'s */
} BundleJob;

BundleJob *incident_job_free(BundleJob *job);
/* On the event loop: flushes the rings, pins the windows again, copies the log lines. On failure
 * nothing is left to free. */
int incident_job_prepare(IncidentManager *im, OpenIncident *oi, BundleJob **ret);
/* On the worker (or, when the daemon stops, on the event loop): reads the slice and publishes the
 * bundle; the result is in job->error. */
void incident_job_run(void *p);
