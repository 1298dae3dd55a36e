/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A bundle's attribution, read from its manifest's "cgroups" list (written by the daemon with
 * the counts of the slice and the baseline per cgroup, the names derived from each path and those
 * the host's container runtimes and kubelet gave): the services (units, containers, pods) ranked
 * by their share of the slice against the baseline, which service a process ran in, and the
 * unit=, container=, pod= and cgroup= filters of `tprof-bundle ls`. Bundles without the list
 * (written before it existed) have no services and match none of those filters. From its
 * "threads" list: whose thread a comm is, and the threads of one process ranked as one.
 */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#include "bundle/bundle-analyze.h"
#include "bundle/bundle-read.h"
#include "profile/profile-cgroup.h"

#define BUNDLE_SERVICE_NAME_BYTES 320U

/* The name of one manifest cgroup entry as a unit, container or pod: a container by its name where
 * the runtime had one, else "<runtime>-<id12>"; a pod as "namespace/name" where the kubelet had
 * them, else "pod-<uid>"; "[no-unit]" and the like where there is none. Returns buf. */
const char *bundle_cgroup_name(const JsonValue *cgroup, CgroupBy by, char *buf, size_t l);

/*
 * The services of the slice by their share of it, largest first, at most max_n: each a Rise with
 * its name, counts, shares and z against the baseline, and as top_function the process that had
 * most of its samples. -ENODATA when the manifest lists no cgroups.
 */
int bundle_services(const BundleManifest *m, CgroupBy by, size_t max_n, Rise **ret, size_t *ret_n);

/*
 * Where process comm ran in the slice (NULL if nowhere known), and a short text naming its unit,
 * container and pod ("unit kubelet.service", "container web (docker), pod default/web-1") into
 * buf ("" if nothing is known). Of the cgroups it ran in, for direction 0 the one with the most
 * of its samples; for a process that rose (direction > 0) the one where its share of the samples
 * rose most, for one that fell (< 0) fell most: two services running one program (java,
 * python3) are told apart by which of them changed. The change is the one the rise was found in:
 * near, the event's own seconds against the rest of the bundle; else the slice against the
 * baseline (the event's seconds need none). It is the process's own in each cgroup where the
 * manifest counts it so (bundles written since), else the whole cgroup's, in the slice against the
 * baseline; a process is all the entries of its key in a cgroup ("ksoftirqd/0", "ksoftirqd/1" of
 * "ksoftirqd/" "*"), their samples summed.
 */
const JsonValue *bundle_process_cgroup(const BundleManifest *m, const char *comm, int direction, bool near, char *buf,
                                       size_t l);

/*
 * The process whose thread comm is (as the folded stacks name it, a group of threads by its key:
 * "wrk-*"), from the manifest's "threads", tidied into buf as a comm is: "r3-mt" for its thread
 * "r3-wrk". NULL when comm is no thread of a process of another name (or the bundle predates the
 * list).
 */
const char *bundle_thread_process(const BundleManifest *m, const char *comm, char *buf, size_t l);

/*
 * How many processes carried comm (as the folded stacks name it) in the slice, from the manifest's
 * "processes": 812 for a shell loop's children "true", each a few milliseconds. 0 where the manifest
 * lists it for none or one (a name of one process, a key of many names, "wrk-*" or "kworker/" "*",
 * or a bundle written before the list existed).
 */
uint64_t bundle_comm_processes(const BundleManifest *m, const char *comm);

/*
 * Threads of one process that differ only in a number rank as one, as per-CPU kernel threads do
 * (folded_comm_key()): a pool's work spread over "wrk-0" ... "wrk-15", each with a sliver, is a
 * rise of the process, which no thread alone shows. Their key is the name with its last run of
 * digits as '*' ("wrk-*", "GC_Thread#*", "CPU_*" "/KVM"), and threads are grouped only where the
 * manifest's "threads" names two or more of one process with that key: by name alone a pool's
 * threads cannot be told from programs of alike names ("python3", "gcc-12"). Bundles without the
 * list are not grouped. Where the list is full (BUNDLE_THREADS_LISTED_MAX entries, as many as
 * tprofd writes, those with most samples), a comm it had no room for ranks under the group of its
 * key, where the list made one of that key for one process alone and names the comm nowhere:
 * a pool that makes a thread for each request ("rq-1" ... "rq-5000", a sample or two each) has
 * most of its work in threads the list leaves out. A process that renamed itself in the slice
 * (the manifest's "renames") is one too: its former name's stacks rank under its name.
 *
 * bundle_thread_group_key() writes comm's key into buf and returns it, NULL for a comm without
 * digits or of digits only. bundle_threads_grouped() makes *ret from f with the first frame of the
 * stacks of every grouped thread its key, the stacks that then read alike summed, and returns 1;
 * 0 (and *ret empty) when the manifest groups none of f's threads.
 */
const char *bundle_thread_group_key(const char *comm, char buf[static FOLDED_COMM_KEY_MAX]);
int bundle_threads_grouped(const BundleManifest *m, const Folded *f, Folded *ret);
/* f made its grouped form in place (bundle_threads_grouped()), where there is anything to group.
 * 0, or a negative errno (f as it was). */
int bundle_threads_group(const BundleManifest *m, Folded *f);

/*
 * One thread of a group carrying its rise: a pool's thread stuck spinning while the others idle is
 * not the pool getting busier, and the answer names it ("pool-2 of mt, one of its threads
 * pool-*"). A thread carries the rise where it gained BUNDLE_THREAD_CARRIES or more of the samples
 * that the group's threads gained, each thread's gain its samples on the side that rose beyond its
 * share of the other side's (a thread that lost counts for none: it takes nothing from another's
 * gain). Of threads sharing a rise evenly, none: four busier threads of a pool are the pool busier.
 *
 * bundle_threads_own() makes *ret from f's stacks of the threads the manifest groups under a key
 * with '*' (bundle_threads_grouped(); not a former name), each as its own comm and leaf ("wrk-3;spin",
 * a comm alone where the stack has no frame), summed, their interrupt work left out (it ranks as
 * PROFILE_IRQ_KEY); ret->total is f's total. Made before the grouping, it is small: a line per
 * thread and leaf.
 *
 * bundle_thread_carrying() finds, in such own stacks of x against y (the two sides of the
 * comparison, their totals those of the whole sides), the thread carrying the rise of key ("wrk-*",
 * or "wrk-*;spin" for kind RISE_FUNCTION): 1 with *ret its comm, 0 and *ret NULL for none.
 *
 * bundle_answer_thread() sets a->thread so, for an answer whose rise is a group's, from the own
 * stacks of the slice, the baseline, near and the rest of the bundle beside near (near and rest
 * NULL without event.folded) as the rise was found: near against the rest or the slice against
 * the baseline: 1 where it names one, 0 where not.
 *
 * bundle_threads_name() names them all as show and the page give them: the answer's
 * (bundle_answer_thread()) and each process row's of the slice's rankings (proc) and of near's
 * (near_proc; bundle_rises_threads()), the own rest made once from the own slice, baseline and
 * near (NULL without event.folded), rest_total its samples as the rankings count them. 0, or
 * -ENOMEM (what could be named is).
 */
#define BUNDLE_THREAD_CARRIES (2.0 / 3.0)
int bundle_threads_own(const BundleManifest *m, const Folded *f, Folded *ret);
int bundle_thread_carrying(const Folded *x, const Folded *y, const char *key, RiseKind kind, char **ret);
/* Sets r[i].thread of each of the n process rises of x against y whose key is a group's
 * (bundle_thread_carrying(), x and y own stacks as there): the rankings' rows name the thread
 * that carried a group's rise as the answer does. 0, or -ENOMEM. */
int bundle_rises_threads(const Folded *x, const Folded *y, Rise *r, size_t n);
int bundle_answer_thread(const Folded *slice, const Folded *baseline, const Folded *near, const Folded *rest,
                         Answer *a);
int bundle_threads_name(const Folded *own_slice, const Folded *own_baseline, const Folded *own_near, uint64_t rest_total,
                        Answer *a, Rise *proc, size_t n_proc, Rise *near_proc, size_t n_near_proc);

/* For `ls`: whether field is one of unit, container, pod, cgroup, and whether a cgroup of the
 * slice has that value. */
bool bundle_cgroups_field(const char *field);
bool bundle_cgroups_match(const BundleManifest *m, const char *field, const char *value);
