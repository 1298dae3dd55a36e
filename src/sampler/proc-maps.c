/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The task table: a chained hash keyed by tid (the shared hashmap cannot delete, and exited tasks
 * come and go all day), per-process sorted arrays of executable mappings, and the /proc scan that
 * seeds both at start.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "basic/alloc-util.h"
#include "basic/cleanup.h"
#include "basic/macro.h"
#include "basic/string-util.h"
#include "sampler/proc-maps.h"

#define PROC_TABLE_BUCKETS_MIN 1024U

struct ProcTable {
        ProcTask **buckets;
        size_t n_buckets;
        size_t n_tasks;
        size_t n_exited;          /* tasks kept after their exit, for samples that trail it */
        uint64_t first_exit_ns;   /* the earliest exit among them: nothing to reap before it */
        uint64_t maps_gen_last; /* the last generation handed out */
        ProcTableStats stats;
};

void proc_map_done(ProcMap *m) {
        if (!m)
                return;
        m->path = mfree(m->path);
}

static void task_free(ProcTask *task) {
        for (size_t i = 0; i < task->n_maps; i++)
                proc_map_done(&task->maps[i]);
        free(task->maps);
        free(task);
}

static void task_clear_maps(ProcTask *task) {
        for (size_t i = 0; i < task->n_maps; i++)
                proc_map_done(&task->maps[i]);
        task->n_maps = 0;
}

ProcTable *proc_table_new(void) {
        ProcTable *t = new0(ProcTable, 1);
        if (!t)
                return NULL;
        t->buckets = new0(ProcTask *, PROC_TABLE_BUCKETS_MIN);
        if (!t->buckets)
                return mfree(t);
        t->n_buckets = PROC_TABLE_BUCKETS_MIN;
        return t;
}

ProcTable *proc_table_free(ProcTable *t) {
        if (!t)
                return NULL;
        for (size_t b = 0; b < t->n_buckets; b++)
                for (ProcTask *task = t->buckets[b], *n; task; task = n) {
                        n = task->next;
                        task_free(task);
                }
        free(t->buckets);
        return mfree(t);
}

static size_t bucket_of(const ProcTable *t, uint32_t tid) {
        return (size_t) ((tid * UINT64_C(0x9E3779B97F4A7C15)) >> 32) & (t->n_buckets - 1);
}

ProcTask *proc_table_get(ProcTable *t, uint32_t tid) {
        for (ProcTask *task = t->buckets[bucket_of(t, tid)]; task; task = task->next)
                if (task->tid == tid)
                        return task;
        return NULL;
}

static void table_grow(ProcTable *t) {
        size_t n = t->n_buckets * 2;
        ProcTask **b;

        if (t->n_tasks < t->n_buckets || n > SIZE_MAX / sizeof(ProcTask *))
                return;
        b = new0(ProcTask *, n);
        if (!b)
                return; /* longer chains, still correct */
        for (size_t i = 0; i < t->n_buckets; i++)
                for (ProcTask *task = t->buckets[i], *next; task; task = next) {
                        size_t k = (size_t) ((task->tid * UINT64_C(0x9E3779B97F4A7C15)) >> 32) & (n - 1);
                        next = task->next;
                        task->next = b[k];
                        b[k] = task;
                }
        free(t->buckets);
        t->buckets = b;
        t->n_buckets = n;
}

/* Finds tid or adds it. A task found exited is a reused tid: start it afresh. */
static void maps_changed(ProcTable *t, ProcTask *task) {
        task->maps_gen = ++t->maps_gen_last;
}

static ProcTask *table_add(ProcTable *t, uint32_t pid, uint32_t tid) {
        ProcTask *task = proc_table_get(t, tid);
        size_t b;

        if (task) {
                if (task->exited || task->pid != pid) {
                        if (task->exited)
                                t->n_exited--;
                        task_clear_maps(task);
                        maps_changed(t, task);
                        task->exited = false;
                        task->exit_ns = 0;
                        task->comm[0] = '\0';
                        task->pid = pid;
                }
                return task;
        }
        if (t->n_tasks >= PROC_TABLE_TASKS_MAX) {
                t->stats.dropped_tasks++;
                return NULL;
        }
        task = new0(ProcTask, 1);
        if (!task)
                return NULL;
        task->tid = tid;
        task->pid = pid;
        maps_changed(t, task);
        table_grow(t);
        b = bucket_of(t, tid);
        task->next = t->buckets[b];
        t->buckets[b] = task;
        t->n_tasks++;
        t->stats.tasks++;
        return task;
}

const char *proc_table_comm(ProcTable *t, uint32_t pid, uint32_t tid) {
        ProcTask *task = proc_table_get(t, tid);
        if (task && task->pid == pid && task->comm[0])
                return task->comm;
        task = proc_table_get(t, pid);
        if (task && task->comm[0])
                return task->comm;
        return NULL;
}

const char *proc_unnamed(uint32_t tid, char buf[static PROC_UNNAMED_BYTES]) {
        snprintf(buf, PROC_UNNAMED_BYTES, ":%" PRId32, (int32_t) tid);
        return buf;
}

const ProcMap *proc_table_find_map(ProcTable *t, uint32_t pid, uint64_t addr) {
        ProcTask *task = proc_table_get(t, pid);
        size_t lo = 0, hi;

        if (!task || task->pid != pid)
                return NULL;
        hi = task->n_maps;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                const ProcMap *m = &task->maps[mid];
                if (addr < m->start)
                        hi = mid;
                else if (addr >= m->end)
                        lo = mid + 1;
                else
                        return m;
        }
        return NULL;
}

uint64_t proc_table_maps_generation(ProcTable *t, uint32_t pid) {
        ProcTask *task = proc_table_get(t, pid);
        return task && task->pid == pid ? task->maps_gen : 0;
}

bool proc_table_has_maps(ProcTable *t, uint32_t pid) {
        ProcTask *task = proc_table_get(t, pid);
        return task && task->pid == pid && task->n_maps > 0;
}

static int map_copy(ProcMap *dst, const ProcMap *src, uint64_t start, uint64_t end) {
        *dst = *src;
        dst->path = strndup(src->path ?: "", PROC_PATH_BYTES_MAX);
        if (!dst->path)
                return -ENOMEM;
        dst->pgoff = src->pgoff + (start - src->start);
        dst->start = start;
        dst->end = end;
        return 0;
}

int proc_table_mmap(ProcTable *t, uint32_t pid, const ProcMap *m) {
        _cleanup_free_ ProcMap *n = NULL;
        ProcTask *task;
        size_t k = 0, need;
        bool placed = false;
        int r;

        if (m->end <= m->start)
                return -EINVAL;
        task = proc_table_get(t, pid);
        if (!task || task->pid != pid || task->exited)
                task = table_add(t, pid, pid);
        if (!task)
                return -ENOMEM;
        if (task->n_maps >= PROC_MAPS_PER_PROCESS_MAX) {
                t->stats.dropped_maps++;
                return 0;
        }

        /* Worst case every old mapping stays, one is split in two, and the new one is added. */
        need = task->n_maps + 2;
        n = new(ProcMap, need);
        if (!n)
                return -ENOMEM;

        for (size_t i = 0; i < task->n_maps; i++) {
                ProcMap *o = &task->maps[i];

                if (!placed && o->start >= m->start) {
                        r = map_copy(&n[k], m, m->start, m->end);
                        if (r < 0)
                                goto fail;
                        k++;
                        placed = true;
                }
                if (o->end <= m->start || o->start >= m->end) {
                        n[k++] = *o;
                        o->path = NULL;
                        continue;
                }
                /* Overlap: keep what sticks out on either side. */
                if (o->start < m->start) {
                        r = map_copy(&n[k], o, o->start, m->start);
                        if (r < 0)
                                goto fail;
                        k++;
                }
                if (o->end > m->end) {
                        if (!placed) {
                                r = map_copy(&n[k], m, m->start, m->end);
                                if (r < 0)
                                        goto fail;
                                k++;
                                placed = true;
                        }
                        r = map_copy(&n[k], o, m->end, o->end);
                        if (r < 0)
                                goto fail;
                        k++;
                }
                proc_map_done(o);
        }
        if (!placed) {
                r = map_copy(&n[k], m, m->start, m->end);
                if (r < 0)
                        goto fail;
                k++;
        }

        free(task->maps);
        task->maps = TAKE_PTR(n);
        task->n_maps = k;
        task->n_maps_allocated = need;
        maps_changed(t, task);
        return 0;

fail:
        /* Allocation failed half way: keep what we moved so nothing leaks, drop the rest. */
        for (size_t i = 0; i < k; i++)
                proc_map_done(&n[i]);
        task_clear_maps(task);
        maps_changed(t, task);
        return r;
}

static void comm_copy(char dst[static PROC_COMM_BYTES + 1], const char *comm) {
        size_t l = strnlen(comm, PROC_COMM_BYTES - 1); /* TASK_COMM_LEN counts the NUL */
        memcpy(dst, comm, l);
        dst[l] = '\0';
}

static void comm_set(ProcTask *task, const char *comm) {
        comm_copy(task->comm, comm);
}

int proc_table_comm_event(ProcTable *t, uint32_t pid, uint32_t tid, const char *comm, bool exec) {
        ProcTask *task = proc_table_get(t, tid);

        if (!task || task->pid != pid || task->exited)
                task = table_add(t, pid, tid);
        if (!task)
                return -ENOMEM;
        comm_set(task, comm);

        if (exec) {
                /* A new image: the old mappings are gone; MMAP2 records for the new ones follow. */
                ProcTask *leader = proc_table_get(t, pid);
                if (leader && leader->pid == pid) {
                        task_clear_maps(leader);
                        maps_changed(t, leader);
                }
                if (pid != tid) {
                        /* exec from a thread: the kernel makes it the leader; name the process too. */
                        leader = table_add(t, pid, pid);
                        if (leader)
                                comm_set(leader, comm);
                }
        }
        return 0;
}

int proc_table_fork(ProcTable *t, uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid) {
        ProcTask *parent = proc_table_get(t, ptid), *child;
        const char *comm = parent && parent->comm[0] ? parent->comm : proc_table_comm(t, ppid, ptid);
        char saved[PROC_COMM_BYTES + 1] = "";

        if (comm)
                comm_copy(saved, comm);

        child = table_add(t, pid, tid);
        if (!child)
                return -ENOMEM;
        /* table_add() keeps an entry that is alive with the same pid; a FORK means it is new. */
        task_clear_maps(child);
        maps_changed(t, child);
        comm_set(child, saved);

        if (pid != ppid && tid == pid) {
                /* A new process: it starts with a copy of its parent's address space. */
                ProcTask *pp = proc_table_get(t, ppid);
                if (pp && pp->pid == ppid && pp->n_maps > 0) {
                        ProcMap *n = new(ProcMap, pp->n_maps);
                        if (!n)
                                return -ENOMEM;
                        for (size_t i = 0; i < pp->n_maps; i++)
                                if (map_copy(&n[i], &pp->maps[i], pp->maps[i].start, pp->maps[i].end) < 0) {
                                        for (size_t j = 0; j < i; j++)
                                                proc_map_done(&n[j]);
                                        free(n);
                                        return -ENOMEM;
                                }
                        free(child->maps);
                        child->maps = n;
                        child->n_maps = child->n_maps_allocated = pp->n_maps;
                        maps_changed(t, child);
                }
        }
        return 0;
}

int proc_table_exit(ProcTable *t, uint32_t pid, uint32_t tid, uint64_t t_ns) {
        ProcTask *task = proc_table_get(t, tid);

        if (!task || task->pid != pid)
                return 0;
        if (!task->exited) {
                t->first_exit_ns = t->n_exited == 0 ? t_ns : MIN(t->first_exit_ns, t_ns);
                t->n_exited++;
        }
        task->exited = true;
        task->exit_ns = t_ns;
        return 0;
}

size_t proc_table_reap(ProcTable *t, uint64_t before_ns) {
        uint64_t first = UINT64_MAX;
        size_t n = 0;

        /* Called after every drain: the walk over every task is only worth it when one is due. */
        if (t->n_exited == 0 || t->first_exit_ns >= before_ns)
                return 0;
        for (size_t b = 0; b < t->n_buckets; b++)
                for (ProcTask **p = &t->buckets[b]; *p;) {
                        ProcTask *task = *p;
                        if (task->exited && task->exit_ns < before_ns) {
                                *p = task->next;
                                task_free(task);
                                t->n_tasks--;
                                t->n_exited--;
                                n++;
                        } else {
                                if (task->exited)
                                        first = MIN(first, task->exit_ns);
                                p = &task->next;
                        }
                }
        t->first_exit_ns = first;
        t->stats.reaped += n;
        return n;
}

size_t proc_table_sweep(ProcTable *t, const char *proc_root, uint64_t now_ns) {
        char path[PATH_MAX];
        size_t n = 0;

        for (size_t b = 0; b < t->n_buckets; b++)
                for (ProcTask *task = t->buckets[b]; task; task = task->next) {
                        if (task->exited)
                                continue;
                        if (task->tid == task->pid)
                                snprintf(path, sizeof(path), "%s/%" PRIu32, proc_root, task->pid);
                        else
                                snprintf(path, sizeof(path), "%s/%" PRIu32 "/task/%" PRIu32, proc_root, task->pid,
                                         task->tid);
                        if (access(path, F_OK) >= 0 || errno != ENOENT)
                                continue;
                        (void) proc_table_exit(t, task->pid, task->tid, now_ns);
                        n++;
                }
        return n;
}

int proc_maps_parse_line(const char *line, ProcMap *ret) {
        unsigned long long start, end, pgoff, ino;
        unsigned maj, min;
        char perms[5];
        int n = 0;
        const char *path;

        if (sscanf(line, "%llx-%llx %4s %llx %x:%x %llu %n", &start, &end, perms, &pgoff, &maj, &min, &ino, &n) < 7)
                return -EBADMSG;
        if (end <= start || strlen(perms) != 4)
                return -EBADMSG;
        if (perms[2] != 'x')
                return 0;
        path = line + n;
        *ret = (ProcMap) {
                .start = start,
                .end = end,
                .pgoff = pgoff,
                .dev = makedev(maj, min),
                .ino = ino,
                .prot = PROT_EXEC | (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0),
        };
        ret->path = strndup(path, strcspn(path, "\n"));
        if (!ret->path)
                return -ENOMEM;
        if (strlen(ret->path) >= PROC_PATH_BYTES_MAX)
                ret->path[PROC_PATH_BYTES_MAX - 1] = '\0';
        return 1;
}

void proc_comm_tidy(char *comm) {
        /* "kworker/<cpu>:<id>[H]" or "kworker/u<pool>:<id>", then the suffix; a rescuer is
         * "kworker/R-<workqueue>", no ':' and no suffix. */
        if (!startswith(comm, "kworker/"))
                return;
        char *colon = strchr(comm, ':');
        if (colon)
                colon[strcspn(colon, "+-")] = '\0';
}

static int read_comm(const char *path, char ret[static PROC_COMM_BYTES + 1]) {
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        if (!f)
                return -errno;
        if (!fgets(ret, PROC_COMM_BYTES + 1, f))
                return -ENODATA;
        ret[strcspn(ret, "\n")] = '\0';
        proc_comm_tidy(ret);
        return 0;
}

int proc_table_kthread_comm(ProcTable *t, const char *proc_root, uint32_t tid) {
        char path[PATH_MAX], comm[PROC_COMM_BYTES + 1];
        int r;

        snprintf(path, sizeof(path), "%s/%" PRIu32 "/comm", proc_root, tid);
        r = read_comm(path, comm);
        if (r < 0)
                return r;
        return proc_table_comm_event(t, tid, tid, comm, /* exec= */ false);
}

static bool parse_pid(const char *s, uint32_t *ret) {
        char *e;
        unsigned long v;

        if (!isdigit((unsigned char) s[0]))
                return false;
        errno = 0;
        v = strtoul(s, &e, 10);
        if (errno != 0 || *e != '\0' || v == 0 || v > UINT32_MAX)
                return false;
        *ret = (uint32_t) v;
        return true;
}

static int scan_pid(ProcTable *t, const char *proc_root, uint32_t pid, bool replace) {
        char path[PATH_MAX], comm[PROC_COMM_BYTES + 1], line[PROC_PATH_BYTES_MAX + 256];
        _cleanup_closedir_ DIR *d = NULL;
        _cleanup_fclose_ FILE *f = NULL;
        ProcTask *leader;
        struct dirent *de;
        int r;

        snprintf(path, sizeof(path), "%s/%" PRIu32 "/comm", proc_root, pid);
        r = read_comm(path, comm);
        if (r < 0)
                return r;
        leader = table_add(t, pid, pid);
        if (!leader)
                return -ENOMEM;
        comm_set(leader, comm);

        /* Threads with a name of their own (worker pools name theirs). */
        snprintf(path, sizeof(path), "%s/%" PRIu32 "/task", proc_root, pid);
        d = opendir(path);
        if (d)
                while ((de = readdir(d))) {
                        char tcomm[PROC_COMM_BYTES + 1], tpath[PATH_MAX];
                        uint32_t tid;
                        ProcTask *task;

                        if (!parse_pid(de->d_name, &tid) || tid == pid)
                                continue;
                        snprintf(tpath, sizeof(tpath), "%s/%" PRIu32 "/task/%" PRIu32 "/comm", proc_root, pid, tid);
                        if (read_comm(tpath, tcomm) < 0)
                                continue;
                        task = table_add(t, pid, tid);
                        if (task)
                                comm_set(task, tcomm);
                }

        snprintf(path, sizeof(path), "%s/%" PRIu32 "/maps", proc_root, pid);
        f = fopen(path, "re");
        if (!f)
                return 0; /* a kernel thread, or gone: named is enough */
        if (replace && leader->n_maps > 0) {
                /* What the file says now, not added to what an earlier read said. */
                task_clear_maps(leader);
                maps_changed(t, leader);
        }
        while (fgets(line, sizeof(line), f)) {
                ProcMap m;

                if (!strchr(line, '\n') && !feof(f)) {
                        /* An over-long line: skip its rest. */
                        int c;
                        while ((c = fgetc(f)) != EOF && c != '\n')
                                ;
                        continue;
                }
                r = proc_maps_parse_line(line, &m);
                if (r <= 0)
                        continue;
                r = proc_table_mmap(t, pid, &m);
                proc_map_done(&m);
                if (r < 0)
                        return r;
        }
        return 0;
}

int proc_table_scan_pid(ProcTable *t, const char *proc_root, uint32_t pid) {
        return scan_pid(t, proc_root, pid, /* replace= */ false);
}

int proc_table_rescan_pid(ProcTable *t, const char *proc_root, uint32_t pid) {
        return scan_pid(t, proc_root, pid, /* replace= */ true);
}

static int scan(ProcTable *t, const char *proc_root, bool replace) {
        _cleanup_closedir_ DIR *d = opendir(proc_root);
        struct dirent *de;

        if (!d)
                return -errno;
        while ((de = readdir(d))) {
                uint32_t pid;
                int r;

                if (!parse_pid(de->d_name, &pid))
                        continue;
                r = scan_pid(t, proc_root, pid, replace);
                if (r == -ENOMEM)
                        return r;
                /* Processes vanish while we scan; that is fine. */
        }
        return 0;
}

int proc_table_scan(ProcTable *t, const char *proc_root) {
        return scan(t, proc_root, /* replace= */ false);
}

int proc_table_rescan(ProcTable *t, const char *proc_root) {
        return scan(t, proc_root, /* replace= */ true);
}

void proc_table_get_stats(const ProcTable *t, ProcTableStats *ret) {
        *ret = t->stats;
        ret->live = t->n_tasks;
}
