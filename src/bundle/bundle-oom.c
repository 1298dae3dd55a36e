/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The OOM killer's victim from a bundle's log; see bundle-oom.h for the kernel's lines.
 */
#include <string.h>

#include "basic/macro.h"
#include "basic/string-util.h"
#include "bundle/bundle-oom.h"

enum {
        SCAN_BEFORE, /* the event's line not seen yet */
        SCAN_AFTER,  /* an OOM kill opened by the event's line: looking for its victim */
        SCAN_DONE,
};

/* The prefixes __oom_kill_process() and oom_kill_process() give their lines (their "message"). */
static const char *const scopes[] = {
        "Out of memory (oom_kill_allocating_task): ",
        "Out of memory: ",
        "Memory cgroup out of memory: ",
};

static bool skip_prefix(const char **p, const char *end, const char *prefix) {
        size_t l = strlen(prefix);

        if ((size_t) (end - *p) < l || memcmp(*p, prefix, l) != 0)
                return false;
        *p += l;
        return true;
}

/* A decimal number at *p, which it skips. */
static bool skip_number(const char **p, const char *end, uint64_t *ret) {
        uint64_t v = 0;

        if (*p >= end || **p < '0' || **p > '9')
                return false;
        for (; *p < end && **p >= '0' && **p <= '9'; (*p)++) {
                if (v > (UINT64_MAX - 9) / 10)
                        return false;
                v = v * 10 + (uint64_t) (**p - '0');
        }
        *ret = v;
        return true;
}

/* "<pid> (<comm>)" followed by what a kill line has after it: " total-vm:", "," or the end (the
 * comm may hold blanks and parentheses itself); or RHEL 6's "<pid>, UID <uid>, (<comm>) total-vm:". */
static bool parse_task(const char *p, const char *end, bool killed, uint64_t *ret_pid, const char **ret_comm,
                       size_t *ret_comm_len) {
        uint64_t pid, uid;
        const char *comm;
        bool uid_first = false;

        if (!skip_number(&p, end, &pid))
                return false;
        if (killed && skip_prefix(&p, end, ", UID ")) {
                if (!skip_number(&p, end, &uid) || !skip_prefix(&p, end, ","))
                        return false;
                uid_first = true;
        }
        if (!skip_prefix(&p, end, " ("))
                return false;
        comm = p;
        for (; p < end && (size_t) (p - comm) <= OOM_COMM_MAX; p++) {
                const char *q = p + 1;

                if (*p != ')')
                        continue;
                if (uid_first ? skip_prefix(&q, end, " total-vm:")
                    : killed  ? q == end || *q == ',' || skip_prefix(&q, end, " total-vm:")
                              : skip_prefix(&q, end, " score "))
                        break;
        }
        if (p >= end || (size_t) (p - comm) > OOM_COMM_MAX)
                return false;
        if (ret_pid)
                *ret_pid = pid;
        if (ret_comm)
                *ret_comm = comm;
        if (ret_comm_len)
                *ret_comm_len = (size_t) (p - comm);
        return true;
}

OomLine bundle_oom_line(const char *msg, size_t n, uint64_t *ret_pid, const char **ret_comm, size_t *ret_comm_len) {
        const char *end = msg + n, *p = msg, *inv;
        bool scoped = false;

        /* dump_header(): the comm (at most 15 bytes, any of them) before it. */
        inv = memmem(msg, MIN(n, (size_t) OOM_COMM_MAX + strlen(" invoked oom-killer: ")), " invoked oom-killer: ",
                     strlen(" invoked oom-killer: "));
        if (inv && inv > msg)
                return OOM_LINE_INVOKED;
        for (size_t i = 0; i < ELEMENTSOF(scopes) && !scoped; i++)
                scoped = skip_prefix(&p, end, scopes[i]);
        if (skip_prefix(&p, end, "Killed process "))
                return parse_task(p, end, true, ret_pid, ret_comm, ret_comm_len) ? OOM_LINE_KILLED : OOM_LINE_NONE;
        if (scoped && skip_prefix(&p, end, "Kill process "))
                return parse_task(p, end, false, ret_pid, ret_comm, ret_comm_len) ? OOM_LINE_CHOSEN : OOM_LINE_NONE;
        return OOM_LINE_NONE;
}

void bundle_oom_victim_feed(OomVictim *v, const char *msg, size_t n, bool kernel, bool trigger, uint64_t t_perf_ns) {
        const char *comm;
        size_t comm_len;
        uint64_t pid;
        OomLine l;

        if (v->state == SCAN_DONE || (v->state == SCAN_BEFORE && !trigger) || !kernel || !msg) {
                /* The event's own line decides, whoever logged it: a line of user space is no kill. */
                if (v->state == SCAN_BEFORE && trigger)
                        v->state = SCAN_DONE;
                return;
        }
        l = bundle_oom_line(msg, n, &pid, &comm, &comm_len);
        if (v->state == SCAN_BEFORE) {
                v->state = l == OOM_LINE_NONE ? SCAN_DONE : SCAN_AFTER;
                if (l != OOM_LINE_KILLED)
                        return;
        } else if (l == OOM_LINE_INVOKED) {
                v->state = SCAN_DONE; /* the next kill: this one killed nobody */
                return;
        }
        if (l != OOM_LINE_KILLED)
                return;
        v->found = true;
        v->pid = pid;
        memcpy(v->comm, comm, comm_len);
        v->comm[comm_len] = '\0';
        v->t_perf_ns = t_perf_ns;
        v->state = SCAN_DONE;
}
