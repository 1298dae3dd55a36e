/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Who the OOM killer killed, from the kernel's lines in a bundle's log. The line that opens an OOM
 * kill, "<comm> invoked oom-killer: gfp_mask=...", names the task that asked for memory; the task
 * killed is named a few lines later (mm/oom_kill.c, __oom_kill_process()), after the memory and
 * task dumps:
 *
 *   "Killed process %d (%s) total-vm:%lukB, ..."                               4.14, 4.19 (3.10,
 *                                                                             4.9: oom_kill_process())
 *   "Killed process %d (%s), UID %d, total-vm:%lukB, ..."                      RHEL 7's 3.10.0
 *   "Killed process %d, UID %d, (%s) total-vm:%lukB, ..."                      RHEL 6's 2.6.32
 *                                                                             (oom_kill_task())
 *   "%s: Killed process %d (%s) total-vm:%lukB, ..., UID:%u pgtables:%lukB
 *    oom_score_adj:%hd"                                                        5.4, 5.10, 6.1, 6.12
 *
 * with %s "Out of memory", "Out of memory (oom_kill_allocating_task)" (out_of_memory()) or
 * "Memory cgroup out of memory" (a memory cgroup's limit). Up to 4.19 oom_kill_process() first
 * prints "%s: Kill process %d (%s) score %u or sacrifice child" for the task it chose, then may kill
 * one of that task's children instead: only "Killed process" names the victim. With a cgroup's
 * memory.oom.group set, the victim's line comes first, then one for each other task of the group.
 * dump_header() is rate limited (DEFAULT_RATELIMIT_BURST a DEFAULT_RATELIMIT_INTERVAL): a kill
 * line may come without the line that opens it, and then it is the event's own line.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum OomLine {
        OOM_LINE_NONE,
        OOM_LINE_INVOKED, /* "<comm> invoked oom-killer: " */
        OOM_LINE_CHOSEN,  /* "<scope>: Kill process <pid> (<comm>) score ..." (up to 4.19) */
        OOM_LINE_KILLED,  /* "[<scope>: ]Killed process <pid> (<comm>)..." */
} OomLine;

/* What a kernel log message is to the OOM killer; for CHOSEN and KILLED the task's pid and comm
 * (*ret_comm points into msg, *ret_comm_len bytes; any pointer may be NULL). */
OomLine bundle_oom_line(const char *msg, size_t n, uint64_t *ret_pid, const char **ret_comm, size_t *ret_comm_len);

#define OOM_COMM_MAX 64U

/*
 * Fed a bundle's log lines in order, finds the task killed by the OOM kill the event's line
 * (the first with trigger set) opened: the first "Killed process" line from that line on, among
 * the kernel's lines only, and before the next kill is opened ("invoked oom-killer"). Nothing for
 * an event that is no OOM kill's line, or a kill that killed nobody (the task chosen was already
 * exiting, "Out of memory and no killable processes").
 */
typedef struct OomVictim {
        int state; /* private */
        bool found;
        uint64_t pid;
        char comm[OOM_COMM_MAX + 1];
        uint64_t t_perf_ns; /* the kill line's time; 0 if the log did not say */
} OomVictim;

void bundle_oom_victim_feed(OomVictim *v, const char *msg, size_t n, bool kernel, bool trigger, uint64_t t_perf_ns);
