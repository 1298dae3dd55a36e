/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Which process each of a bundle's threads belongs to, when the thread has a name of its own. The
 * folded stacks are rooted in the thread's comm, as perf script prints them: a Java or C++ service
 * that names its threads ("pool-1-thread-3", "r3-wrk") rises under that name, and the answer
 * should say whose thread it is. Written into the manifest as "threads": for each comm with
 * samples in the slice, the process (pid) that had most of them, main threads included, and that
 * process's name, where it is not the comm itself: as /proc says it when the bundle is written,
 * while the pid is still that process's (so that a reused pid names nothing): it still has a thread
 * of that comm, or it started before the pid's last sample in the slice (a server whose main thread
 * only waits and whose request threads are gone), else its
 * main thread's comm as the slice's samples last carried it (which, for a main thread sampled only
 * between its fork and its exec, is its parent's).
 *
 * And as "renames": the main threads sampled in the slice under another name than their process's
 * (a process that renamed itself with PR_SET_NAME, or exec'd, during the slice), with that name,
 * where the process had most of the name's samples: the rankings count the two names as one.
 *
 * And as "processes": the comms that more than one process carried in the slice, with how many
 * (pids): a rise of thousands of short-lived processes of one name is not one busy program.
 *
 * Bounded: at most INCIDENT_THREADS_COUNTED_MAX threads and processes are counted, and
 * INCIDENT_THREADS_MAX thread names and as many renames listed, INCIDENT_PROCESSES_MAX comms of
 * many processes (most samples first).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "basic/json-writer.h"
#include "bundle/bundle-format.h"
#include "profile/profile-sample.h"

#define INCIDENT_THREADS_MAX BUNDLE_THREADS_LISTED_MAX
#define INCIDENT_THREADS_COUNTED_MAX 65536U
#define INCIDENT_PROCESSES_MAX 256U

typedef struct IncidentThreads IncidentThreads;

IncidentThreads *incident_threads_new(void);
IncidentThreads *incident_threads_free(IncidentThreads *t);
int incident_threads_add(IncidentThreads *t, const Sample *s, bool in_slice);
/* Names the processes of the threads to be listed from /proc under root ("/") where it still has
 * them, once, when the bundle is written: a manifest written again later says the same. A process
 * is the one sampled where it still has a thread of the name, or where it started before its last
 * sample in the slice; boot_minus_perf_ns is CLOCK_BOOTTIME minus the perf clock, for the times. */
void incident_threads_resolve(IncidentThreads *t, const char *root, int64_t boot_minus_perf_ns);
/* Writes the "threads", "renames" and "processes" arrays (keys included). */
void incident_threads_json(const IncidentThreads *t, JsonWriter *w);

#include "basic/cleanup.h"
DEFINE_TRIVIAL_CLEANUP_FUNC(IncidentThreads *, incident_threads_free);
