/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Who is who while sampling: per task the command name, and per process the executable mappings,
 * built from a /proc scan at start and kept current from PERF_RECORD_COMM/MMAP2/FORK/EXIT
 * (records are applied in time order by the sampler). A task that exits is kept, marked with its
 * exit time, until proc_table_reap() is told that no sample older than a grace period can still
 * arrive, so a short-lived process is still named and symbolized. Overlapping mappings replace
 * the old ranges as the kernel does (perf's maps__fixup_overlaps()). Everything is bounded: tasks,
 * mappings per process, path lengths; what does not fit is counted, not stored.
 *
 * One table keyed by tid: a process is the entry whose tid equals its pid and owns the mappings;
 * other threads only carry their name.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROC_TABLE_TASKS_MAX 1048576U
#define PROC_MAPS_PER_PROCESS_MAX 65536U
#define PROC_COMM_BYTES 16U /* TASK_COMM_LEN */
#define PROC_PATH_BYTES_MAX 4096U

typedef struct ProcMap {
        uint64_t start, end; /* [start, end) */
        uint64_t pgoff;      /* file offset of start */
        uint64_t dev;        /* makedev(maj, min), 0 if unknown */
        uint64_t ino;
        uint64_t ino_gen;    /* from PERF_RECORD_MMAP2; 0 if unknown (a /proc scan) */
        uint32_t prot;
        char *path;          /* "/usr/bin/x", "//anon", "[vdso]", "" for anonymous */
} ProcMap;

typedef struct ProcTask ProcTask;
struct ProcTask {
        uint32_t tid;
        uint32_t pid;
        char comm[PROC_COMM_BYTES + 1];
        bool exited;
        uint64_t exit_ns;
        ProcMap *maps; /* only where tid == pid, sorted by start, non-overlapping */
        uint64_t maps_gen; /* only where tid == pid: changes with every change of maps, unique in the table */
        size_t n_maps, n_maps_allocated;
        uint64_t rescan_mark, rescan_ns; /* only where tid == pid: the caller's mark and time of its
                                          * last proc_table_rescan_pid() */
        ProcTask *next; /* hash chain */
};

typedef struct ProcTableStats {
        uint64_t tasks, reaped, dropped_tasks, dropped_maps; /* since the start */
        uint64_t live;                                       /* in the table now (exited ones kept a while included) */
} ProcTableStats;

typedef struct ProcTable ProcTable;

ProcTable *proc_table_new(void);
ProcTable *proc_table_free(ProcTable *t);

ProcTask *proc_table_get(ProcTable *t, uint32_t tid);
/* The name of tid (or of its process when the thread is unknown); NULL if neither is known. */
const char *proc_table_comm(ProcTable *t, uint32_t pid, uint32_t tid);
/* The name perf gives a task whose comm it never learnt: ":TID"; ":-1" for a sample of a task the
 * kernel already unhashed, whose pid and tid it reports as -1 (perf_event_pid_type()). */
#define PROC_UNNAMED_BYTES 16U
const char *proc_unnamed(uint32_t tid, char buf[static PROC_UNNAMED_BYTES]);
/* The mapping covering addr in process pid, or NULL. */
const ProcMap *proc_table_find_map(ProcTable *t, uint32_t pid, uint64_t addr);
/* Whether the table holds any executable mapping of process pid: if not, a NULL from
 * proc_table_find_map() says nothing about the address. */
bool proc_table_has_maps(ProcTable *t, uint32_t pid);
/* The generation of process pid's mappings: a value no other state of any process's mappings in
 * this table has had or will have (a new mapping, exec, fork, a reused pid each give a new one),
 * so a cached result computed from the maps may be reused while it is unchanged. 0 for a process
 * the table does not know. */
uint64_t proc_table_maps_generation(ProcTable *t, uint32_t pid);

int proc_table_mmap(ProcTable *t, uint32_t pid, const ProcMap *m);
int proc_table_comm_event(ProcTable *t, uint32_t pid, uint32_t tid, const char *comm, bool exec);
int proc_table_fork(ProcTable *t, uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid);
/*
 * A kernel thread kthreadd (pid 2) made: the kernel names it as it makes it (copy_process()
 * copies the name, no PERF_RECORD_COMM is written), so after its FORK it would bear kthreadd's
 * name. Its name is read from proc_root instead; a thread gone already keeps the parent's.
 */
int proc_table_kthread_comm(ProcTable *t, const char *proc_root, uint32_t tid);
/*
 * A task name as the table keeps it, from /proc/PID/comm: a workqueue worker's there carries the
 * workqueue it last ran ("kworker/u8:3-events_unbound", "+" while running), which the kernel's
 * own name (and every PERF_RECORD_COMM) has not: "kworker/u8:3". In place.
 */
void proc_comm_tidy(char *comm);
int proc_table_exit(ProcTable *t, uint32_t pid, uint32_t tid, uint64_t t_ns);
/* Forgets tasks that exited before before_ns. Returns how many were removed. */
size_t proc_table_reap(ProcTable *t, uint64_t before_ns);
/*
 * Marks exited at now_ns every task the table holds as alive that proc_root no longer has (its
 * EXIT record lost with a ring that overflowed, or the task gone before the events ran), for
 * proc_table_reap() to forget: otherwise each stays, with its process's mappings, until its tid
 * is used again. Returns how many it marked.
 */
size_t proc_table_sweep(ProcTable *t, const char *proc_root, uint64_t now_ns);

/* Scans proc_root ("/proc", or a fixture directory): comm of every task, executable maps per process. */
int proc_table_scan(ProcTable *t, const char *proc_root);
/* Scans again: a process still there gets the mappings its maps file lists now, in place of those
 * the table had (a process gone keeps them). */
int proc_table_rescan(ProcTable *t, const char *proc_root);
/* Reads one process's mappings again, in place of those the table has (after lost records). */
int proc_table_rescan_pid(ProcTable *t, const char *proc_root, uint32_t pid);
/* Reads one process's /proc entry (used when a sample names a pid we never heard of). */
int proc_table_scan_pid(ProcTable *t, const char *proc_root, uint32_t pid);

/*
 * Parses one /proc/PID/maps line. Returns 1 and fills *ret (path allocated) for an executable
 * mapping, 0 for one we skip, -EBADMSG for a malformed line.
 */
int proc_maps_parse_line(const char *line, ProcMap *ret);
void proc_map_done(ProcMap *m);

void proc_table_get_stats(const ProcTable *t, ProcTableStats *ret);

#include "basic/cleanup.h"
DEFINE_TRIVIAL_CLEANUP_FUNC(ProcTable *, proc_table_free);
