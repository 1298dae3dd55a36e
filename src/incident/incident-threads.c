/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The processes of a bundle's named threads; see incident-threads.h.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "basic/alloc-util.h"
#include "basic/fileio.h"
#include "basic/hashmap.h"
#include "basic/macro.h"
#include "basic/string-util.h"
#include "basic/time-util.h"
#include "incident/incident-threads.h"

/* The kernel's comms are 15 bytes; a longer name (a reader's own) is not counted. */
#define THREAD_COMM_BYTES_MAX 64U
/* Beside a tid in a count's low 32 bits: a tid is at most PID_MAX_LIMIT, 2^22. */
#define MAIN_SEEN (UINT64_C(1) << 31)

struct IncidentThreads {
        /* pid -> its main thread's comm (owned, strdup'd), as its slice samples last carried it, or
         * as /proc said it (incident_threads_resolve()) */
        Hashmap *mains;
        /* pid -> the time of its last slice sample, any thread's (perf clock) */
        Hashmap *last;
        /* comm '\0' pid (4 bytes) -> slice samples << 32 | MAIN_SEEN (the main thread carried the
         * name) | the last tid seen, main threads included */
        Hashmap *threads;
};

IncidentThreads *incident_threads_new(void) {
        IncidentThreads *t = new0(IncidentThreads, 1);

        if (!t)
                return NULL;
        t->mains = hashmap_new();
        t->threads = hashmap_new();
        t->last = hashmap_new();
        if (!t->mains || !t->threads || !t->last)
                return incident_threads_free(t);
        return t;
}

IncidentThreads *incident_threads_free(IncidentThreads *t) {
        const void *k;
        size_t kl;
        uint64_t v;

        if (!t)
                return NULL;
        for (size_t i = 0; t->mains && hashmap_iterate(t->mains, &i, &k, &kl, &v);)
                free(HASHMAP_PTR(v));
        hashmap_free(t->mains);
        hashmap_free(t->threads);
        hashmap_free(t->last);
        return mfree(t);
}

static int main_seen(IncidentThreads *t, uint32_t pid, const char *comm) {
        uint64_t v;
        char *old, *c;

        if (hashmap_get(t->mains, &pid, sizeof pid, &v)) {
                old = HASHMAP_PTR(v);
                if (streq(old, comm))
                        return 0;
        } else {
                old = NULL;
                if (hashmap_size(t->mains) >= INCIDENT_THREADS_COUNTED_MAX)
                        return 0;
        }
        c = strdup(comm);
        if (!c)
                return -ENOMEM;
        if (hashmap_put(t->mains, &pid, sizeof pid, PTR_HASHMAP(c)) < 0) {
                free(c);
                return -ENOMEM;
        }
        free(old);
        return 0;
}

int incident_threads_add(IncidentThreads *t, const Sample *s, bool in_slice) {
        const char *comm = s->comm ?: "";
        size_t l = strlen(comm);
        char key[THREAD_COMM_BYTES_MAX + 1 + sizeof(uint32_t)];
        uint64_t *v, *last;
        int r;

        /* Only the slice's seconds: a main thread seen minutes before may be another program's by
         * now (a reused pid, an exec). The idle task is pid 0 on every CPU. */
        if (!in_slice || s->pid == 0 || l > THREAD_COMM_BYTES_MAX)
                return 0;
        /* A main thread is counted under its name too: a name that is mostly a process's own is
         * that process's, not the thread of another that shares it. */
        if (s->tid == s->pid) {
                r = main_seen(t, s->pid, comm);
                if (r < 0)
                        return r;
        }
        if (hashmap_size(t->last) < INCIDENT_THREADS_COUNTED_MAX ||
            hashmap_get(t->last, &s->pid, sizeof s->pid, NULL)) {
                last = hashmap_slot(t->last, &s->pid, sizeof s->pid, 0, NULL);
                if (!last)
                        return -ENOMEM;
                *last = MAX(*last, s->t_ns);
        }
        memcpy(key, comm, l);
        key[l] = '\0';
        memcpy(key + l + 1, &s->pid, sizeof s->pid);
        if (hashmap_size(t->threads) >= INCIDENT_THREADS_COUNTED_MAX &&
            !hashmap_get(t->threads, key, l + 1 + sizeof s->pid, NULL))
                return 0;
        v = hashmap_slot(t->threads, key, l + 1 + sizeof s->pid, 0, NULL);
        if (!v)
                return -ENOMEM;
        *v = (((*v >> 32) + 1) << 32) | (*v & MAIN_SEEN) | (s->tid == s->pid ? MAIN_SEEN : 0) |
             (s->tid & ~(uint32_t) MAIN_SEEN);
        return 0;
}

typedef struct ThreadCount {
        const char *comm; /* NUL-terminated: the key's first part */
        uint32_t pid, tid;
        uint64_t n;
        bool main_seen; /* the process's main thread carried the name */
} ThreadCount;

static int cmp_count(const void *a, const void *b) {
        const ThreadCount *x = a, *y = b;
        int c;

        if (x->n != y->n)
                return x->n > y->n ? -1 : 1;
        c = strcmp(x->comm, y->comm);
        return c != 0 ? c : (x->pid > y->pid) - (x->pid < y->pid);
}

/* The threads by slice samples, most first; NULL on OOM. */
static ThreadCount *ranked(const IncidentThreads *t, size_t *ret_n) {
        ThreadCount *all = new(ThreadCount, hashmap_size(t->threads) ?: 1);
        size_t n = 0;
        const void *k;
        size_t kl;
        uint64_t v;

        if (!all)
                return NULL;
        for (size_t i = 0; hashmap_iterate(t->threads, &i, &k, &kl, &v);) {
                ThreadCount *c = &all[n++];
                c->comm = k;
                memcpy(&c->pid, (const char *) k + kl - sizeof c->pid, sizeof c->pid);
                c->tid = (uint32_t) (v & ~MAIN_SEEN);
                c->main_seen = v & MAIN_SEEN;
                c->n = v >> 32;
        }
        qsort(all, n, sizeof all[0], cmp_count);
        *ret_n = n;
        return all;
}

/* Calls f for each thread name once, with the process that had most of its samples, in order of
 * samples, until f returns false. */
static void each_name(const IncidentThreads *t, bool (*f)(const ThreadCount *c, void *ud), void *ud) {
        size_t n = 0;
        _cleanup_free_ ThreadCount *all = ranked(t, &n);
        _cleanup_(hashmap_freep) Hashmap *listed = hashmap_new();
        bool added;

        if (!all || !listed)
                return;
        for (size_t i = 0; i < n; i++) {
                if (!hashmap_slot(listed, all[i].comm, strlen(all[i].comm), 0, &added))
                        return;
                if (added && !f(&all[i], ud))
                        return;
        }
}

/* Whether process pid under prefix has a thread named comm: tid first (the last one sampled),
 * else any of its threads (a pool whose workers come and go), at most TASKS_SCANNED_MAX: with
 * 2 * INCIDENT_THREADS_MAX names looked up, a bound on the files one bundle reads. */
#define TASKS_SCANNED_MAX 256U
static bool has_thread_named(const char *prefix, uint32_t pid, uint32_t tid, const char *comm) {
        _cleanup_free_ char *fn = NULL, *line = NULL;
        _cleanup_closedir_ DIR *d = NULL;
        unsigned n = 0;

        if (asprintf(&fn, "%s/proc/%" PRIu32 "/task/%" PRIu32 "/comm", prefix, pid, tid) < 0)
                return false;
        if (read_one_line_file(fn, &line) >= 0 && streq(line, comm))
                return true;
        fn = mfree(fn);
        if (asprintf(&fn, "%s/proc/%" PRIu32 "/task", prefix, pid) < 0)
                return false;
        d = opendir(fn);
        for (struct dirent *de; d && (de = readdir(d)) && n < TASKS_SCANNED_MAX;) {
                _cleanup_free_ char *p = NULL, *l = NULL;
                if (de->d_name[0] == '.')
                        continue;
                n++;
                if (asprintf(&p, "%s/%s/comm", fn, de->d_name) >= 0 && read_one_line_file(p, &l) >= 0 &&
                    streq(l, comm))
                        return true;
        }
        return false;
}

/* Whether process pid under prefix started before boot_ns (CLOCK_BOOTTIME): its start time,
 * /proc/PID/stat's 22nd field, is the boot time it was made at in clock ticks, rounded down
 * (do_task_stat(), fs/proc/array.c, Linux 6.12: nsec_to_clock_t(task->start_boottime)). A pid
 * reused is another process's made after the first one's exit, after that one's last sample. */
static bool started_before(const char *prefix, uint32_t pid, uint64_t boot_ns) {
        _cleanup_free_ char *fn = NULL, *line = NULL;
        long hz = sysconf(_SC_CLK_TCK);
        unsigned long long ticks;
        const char *p;

        if (hz <= 0 || asprintf(&fn, "%s/proc/%" PRIu32 "/stat", prefix, pid) < 0 ||
            read_one_line_file(fn, &line) < 0)
                return false;
        /* after the comm, which may hold blanks and ')': the state is field 3, the start time 22 */
        p = strrchr(line, ')');
        for (unsigned field = 2; p && field < 22; field++)
                p = strchr(p + 1, ' ');
        if (!p || sscanf(p + 1, "%llu", &ticks) != 1 || ticks >= UINT64_MAX / NSEC_PER_SEC - 1)
                return false;
        return (ticks + 1) * (NSEC_PER_SEC / (uint64_t) hz) <= boot_ns;
}

/* The name of a process whose main thread had no sample in the slice: from /proc, if it is still the
 * process sampled (else the pid may be another process's now): where it still has a thread of c's
 * name, or where it started before its last sample in the slice (its threads of that name may be
 * gone: a server's request threads; its main thread may only have waited). last_boot_ns is that
 * sample's time on CLOCK_BOOTTIME, 0 where unknown. */
static int proc_name(const char *root, const ThreadCount *c, uint64_t last_boot_ns, char **ret) {
        _cleanup_free_ char *fn = NULL;
        const char *prefix = streq(root, "/") ? "" : root;

        if (!has_thread_named(prefix, c->pid, c->tid, c->comm) &&
            (last_boot_ns == 0 || !started_before(prefix, c->pid, last_boot_ns)))
                return -ESRCH;
        if (asprintf(&fn, "%s/proc/%" PRIu32 "/comm", prefix, c->pid) < 0)
                return -ENOMEM;
        return read_one_line_file(fn, ret);
}

typedef struct Resolve {
        IncidentThreads *t;
        const char *root;
        int64_t boot_minus_perf_ns;
        Hashmap *named; /* the pids /proc named */
        size_t left;
} Resolve;

static bool resolve_one(const ThreadCount *c, void *ud) {
        Resolve *r = ud;
        _cleanup_free_ char *name = NULL;
        uint64_t v, last = 0;

        /* A thread named as its process's main thread is not listed: no lookup; nor is a process
         * /proc named already (a pool's hundreds of names ask the same). */
        if ((hashmap_get(r->t->mains, &c->pid, sizeof c->pid, &v) && streq(HASHMAP_PTR(v), c->comm)) ||
            hashmap_get(r->named, &c->pid, sizeof c->pid, NULL))
                return true;
        if (hashmap_get(r->t->last, &c->pid, sizeof c->pid, &v) && (int64_t) v + r->boot_minus_perf_ns > 0)
                last = (uint64_t) ((int64_t) v + r->boot_minus_perf_ns);
        /* /proc before the slice's samples: a main thread last sampled between its fork and its
         * exec bears its parent's name ("bash"), and one that only waits on its threads is never
         * sampled again. Only the lookups in /proc are counted. */
        if (proc_name(r->root, c, last, &name) >= 0) {
                (void) main_seen(r->t, c->pid, name);
                (void) hashmap_put(r->named, &c->pid, sizeof c->pid, 0);
        }
        return --r->left > 0;
}

void incident_threads_resolve(IncidentThreads *t, const char *root, int64_t boot_minus_perf_ns) {
        _cleanup_(hashmap_freep) Hashmap *named = hashmap_new();
        /* Names whose process is their own are not listed: look up a few more than are. */
        Resolve r = { t, root, boot_minus_perf_ns, named, 2 * INCIDENT_THREADS_MAX };

        if (named)
                each_name(t, resolve_one, &r);
}

typedef struct Listing {
        const IncidentThreads *t;
        JsonWriter *w;
        size_t shown;
} Listing;

static bool list_one(const ThreadCount *c, void *ud) {
        Listing *l = ud;
        uint64_t v;

        /* A main thread under another name than its process's is that process before an exec or
         * a rename, not one of its threads. */
        if (c->tid == c->pid || !hashmap_get(l->t->mains, &c->pid, sizeof c->pid, &v) ||
            streq(HASHMAP_PTR(v), c->comm))
                return true;
        json_begin_object(l->w);
        json_kv_string(l->w, "comm", c->comm);
        json_kv_u64(l->w, "pid", c->pid);
        json_kv_string(l->w, "process", HASHMAP_PTR(v));
        json_kv_u64(l->w, "samples", c->n);
        json_end_object(l->w);
        return ++l->shown < INCIDENT_THREADS_MAX;
}

/* The slice's samples of each comm, over every process: comm '\0' -> samples. */
static Hashmap *comm_totals(const IncidentThreads *t) {
        _cleanup_(hashmap_freep) Hashmap *h = hashmap_new();
        const void *k;
        size_t kl;
        uint64_t v;

        if (!h)
                return NULL;
        for (size_t i = 0; hashmap_iterate(t->threads, &i, &k, &kl, &v);) {
                uint64_t *n = hashmap_slot(h, k, strlen(k), 0, NULL);
                if (!n)
                        return NULL;
                *n += v >> 32;
        }
        return TAKE_PTR(h);
}

/* The main threads sampled under another name than their process's (a PR_SET_NAME, an exec), where
 * that process had most of that name's samples: one process whose work the rankings would split
 * over two names. */
static void list_renames(const IncidentThreads *t, JsonWriter *w) {
        _cleanup_(hashmap_freep) Hashmap *totals = comm_totals(t);
        _cleanup_free_ ThreadCount *all = NULL;
        size_t n = 0, shown = 0;
        uint64_t v, total;

        json_key(w, "renames");
        json_begin_array(w);
        all = totals ? ranked(t, &n) : NULL;
        for (size_t i = 0; all && i < n && shown < INCIDENT_THREADS_MAX; i++) {
                const ThreadCount *c = &all[i];

                /* the main thread carried the name (its other threads may still: they keep the name
                 * they were made with, and the last sample of it may be theirs) */
                if (!c->main_seen || !hashmap_get(t->mains, &c->pid, sizeof c->pid, &v) ||
                    streq(HASHMAP_PTR(v), c->comm) || !hashmap_get(totals, c->comm, strlen(c->comm), &total) ||
                    2 * c->n <= total)
                        continue;
                json_begin_object(w);
                json_kv_string(w, "comm", c->comm);
                json_kv_u64(w, "pid", c->pid);
                json_kv_string(w, "process", HASHMAP_PTR(v));
                json_kv_u64(w, "samples", c->n);
                json_end_object(w);
                shown++;
        }
        json_end_array(w);
}

typedef struct CommProcesses {
        const char *comm; /* NUL-terminated: a key's first part */
        uint64_t pids, samples;
} CommProcesses;

static int cmp_processes(const void *a, const void *b) {
        const CommProcesses *x = a, *y = b;

        if (x->samples != y->samples)
                return x->samples > y->samples ? -1 : 1;
        return strcmp(x->comm, y->comm);
}

/* The comms carried by more than one process in the slice (a shell loop's thousands of children
 * of a few milliseconds each, all "true"), with how many: one name's rise may be many programs,
 * which the folded files, keyed by the comm alone, cannot tell. */
static void list_processes(const IncidentThreads *t, JsonWriter *w) {
        _cleanup_(hashmap_freep) Hashmap *index = hashmap_new();
        _cleanup_free_ CommProcesses *all = new(CommProcesses, hashmap_size(t->threads) ?: 1);
        size_t n = 0, shown = 0;
        const void *k;
        size_t kl;
        uint64_t v;

        json_key(w, "processes");
        json_begin_array(w);
        for (size_t i = 0; index && all && hashmap_iterate(t->threads, &i, &k, &kl, &v);) {
                bool added;
                uint64_t *slot = hashmap_slot(index, k, strlen(k), n, &added);

                if (!slot)
                        break;
                if (added)
                        all[n++] = (CommProcesses) { .comm = k };
                all[*slot].pids++;
                all[*slot].samples += v >> 32;
        }
        if (all)
                qsort(all, n, sizeof all[0], cmp_processes);
        for (size_t i = 0; all && i < n && shown < INCIDENT_PROCESSES_MAX; i++) {
                if (all[i].pids < 2)
                        continue;
                json_begin_object(w);
                json_kv_string(w, "comm", all[i].comm);
                json_kv_u64(w, "processes", all[i].pids);
                json_kv_u64(w, "samples", all[i].samples);
                json_end_object(w);
                shown++;
        }
        json_end_array(w);
}

void incident_threads_json(const IncidentThreads *t, JsonWriter *w) {
        Listing l = { t, w, 0 };

        json_key(w, "threads");
        json_begin_array(w);
        each_name(t, list_one, &l);
        json_end_array(w);
        list_renames(t, w);
        list_processes(t, w);
}
