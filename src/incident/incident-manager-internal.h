/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What incident-manager.c (the incidents, their queue, deadlines and repeats) and incident-job.c
 * (writing one incident's bundle) share: the manager's state and an open incident's. Included by
 * those two files only; everyone else goes through incident-manager.h.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <systemd/sd-event.h>

#include "incident/incident-cgroups.h"
#include "incident/incident-hook.h"
#include "incident/incident-manager.h"
#include "incident/incident-threads.h"
#include "incident/incident-trigger.h"
#include "incident/incident-worker.h"
#include "incident/incident.h"

/* Repeats whose lines are marked as triggers in the bundle's log. */
#define REPEAT_MARKS_MAX 64U

/* Repeats that arrive while the bundle is written wait here, each with its rule's name; past this
 * many only their number is kept. */
#define DEFERRED_REPEATS_MAX 4096U

typedef struct OpenIncident {
        IncidentManager *manager;
        Incident *incident;
        int dir_fd; /* incidents/.tmp-<id> while recording; -EBADF once published */
        bool published;
        IncidentSlice slice;  /* kept after publishing, for manifest rewrites on repeats */
        IncidentCgroups *cgroups; /* slice.cgroups points here once published */
        IncidentThreads *threads; /* slice.threads likewise */
        char **windows;
        size_t n_windows;
        sd_event_source *deadline; /* t + after has been sampled: publish */
        uint64_t event_ns;         /* the match on this boot's perf clock, where its cooldown starts */
        bool other_boot;           /* resumed from a boot before this one: windows/ holds its slice */
        uint64_t armed_mono_usec;  /* when the match was read, CLOCK_MONOTONIC */
        sd_event_source *expire;   /* the cooldown is over: forget */
        sd_event_source *rewrite;  /* repeats joined the published bundle: update its manifest soon */
        uint64_t repeat_ns[REPEAT_MARKS_MAX];
        size_t n_repeat_marks;
        IncidentDoneFunc done; /* a capture request waiting for this bundle, or NULL */
        void *done_userdata;
        /* While the worker writes the bundle it reads the incident, so repeats wait here and join
         * the incident when it is done. */
        bool writing;
        struct {
                char *rule;
                uint64_t t_ns;
        } *deferred;
        size_t n_deferred, allocated_deferred;
        unsigned deferred_unnamed;
        uint64_t deferred_unnamed_ns;
} OpenIncident;

struct IncidentManager {
        IncidentManagerOptions opts;
        char *incidents_path, *state_dir;
        int incidents_fd;
        Trigger *trigger;
        IncidentHook *hook;

        OpenIncident **incidents;
        size_t n_incidents, allocated_incidents;

        /* Bundles are written one at a time on the worker; incidents past their deadline queue. */
        IncidentWorker *worker;
        OpenIncident **queue;
        size_t n_queue, allocated_queue;
        bool stopping; /* finish() or free(): no more jobs on the worker */
        char *test_gate; /* $TPROF_TEST_BUNDLE_GATE: see incident_job_run() */

        uint64_t written, failed;
};
