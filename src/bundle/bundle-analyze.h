/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What tprof-bundle show computes from a bundle's files: folded stacks read back with bounds,
 * the top stacks and functions of a slice, the processes and functions whose share of samples
 * rose in the slice against the baseline (ranked by a two-proportion z-score), the one-line answer
 * and what fell (activity.tsv's grid is bundle-activity.h's). Pure computation on what was read:
 * no output, no logging. The answer and the fall are in bundle-answer.c, the rest in
 * bundle-analyze.c.
 */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Bounds on what a folded file may make us hold. Lines beyond them are counted, not kept. */
#define FOLDED_BYTES_MAX (UINT64_C(512) << 20)
#define FOLDED_LINE_MAX (64u * 1024u)
#define FOLDED_STACKS_MAX 2000000u

typedef struct FoldedLine {
        char *stack; /* "comm;root;...;leaf" */
        uint64_t count;
        /* Interrupt work (folded_stack_irq_from()): the bytes of stack from the frame it is under
         * to the end, 0 where it is none. Told once, as the line is read: the rankings key every
         * line several times. A comm renamed in front keeps it. */
        uint32_t irq_tail;
} FoldedLine;

typedef struct Folded {
        FoldedLine *lines;
        size_t n, allocated;
        uint64_t total;     /* sum of counts */
        uint64_t n_skipped; /* malformed, overlong or over-limit lines */
} Folded;

#define FOLDED_NULL ((Folded) {})

/* Reads a folded file; -ENOENT when absent. Counts of repeated stacks are kept separately. */
int folded_load(const char *path, Folded *ret);
int folded_load_file(FILE *f, Folded *ret);
void folded_done(Folded *f);

/* Sorts the lines by count, largest first, ties by stack. */
void folded_sort_by_count(Folded *f);

/* The comm (first frame) and the leaf (last frame) of a stack, as pointers+lengths into it. */
void folded_stack_comm(const char *stack, const char **ret, size_t *ret_len);
void folded_stack_leaf(const char *stack, const char **ret, size_t *ret_len);

/*
 * Whether stack ran interrupt work (profile_irq_step() over its frames from the leaf): the idle
 * task's ("swapper", "swapper/N") an interrupt or softirq frame nearer the leaf than the idle loop,
 * any other task's an interrupt's entry nearer the leaf than its own way back from one, so not a
 * softirq it ran itself at local_bh_enable. The rankings count it as PROFILE_IRQ_KEY, never as
 * idle nor as the process it landed in; the folded files keep the comm perf gave it.
 * folded_stack_irq_from() is the frame of stack that work is under (its first from the root on),
 * NULL where it is none.
 */
bool folded_stack_irq(const char *stack);
const char *folded_stack_irq_from(const char *stack);

/*
 * Per-CPU kernel threads count as one in the rankings: a softirq storm spread over 16 CPUs is
 * 16 ksoftirqd threads each with a sliver, and together a quarter of a CPU. The kernel names them
 * NAME/CPU (kernel/smpboot.c, kernel/softirq.c: "ksoftirqd/3", "migration/0", "cpuhp/1",
 * "rcuc/2", "idle_inject/0", "irq_work/7", "ktimers/1"; kernel/rcu: "rcuop/5") and its workqueue
 * workers kworker/CPU:ID, kworker/CPU:IDH, kworker/uPOOL:ID or kworker/R-WQ (kernel/workqueue.c).
 * The rule: "kworker/" and anything after it, or NAME "/" DIGITS where NAME is a lowercase letter
 * then lowercase letters, digits, '_' or '-', is ranked as NAME, '/' and '*' (the
 * keys "ksoftirqd/" "*", "kworker/" "*"), a key of that form as itself. Not merged: the idle task ("swapper/N" stays
 * swapper/N, idle as ever), names with more after the digits (one thread per IRQ or device:
 * "irq/45-eth0", "jbd2/sda1-8"), and the names user-space threads are given ("GC_Thread#0",
 * "tokio-runtime-w", "Worker/3" with its capital: by name alone; where the manifest says they are
 * threads of one process, bundle_threads_grouped() ranks them as one, "GC_Thread#*"). A
 * user-space thread its program named "pool/3" would be merged too: the kernel's names cannot be
 * told from it by name alone.
 *
 * folded_comm_prefix() returns the length of comm's NAME "/" (8 for "kworker/") when it is
 * merged, else 0; folded_comm_key() its key: comm itself, or NAME "/" "*" written into buf.
 */
#define FOLDED_COMM_KEY_MAX 256u
size_t folded_comm_prefix(const char *comm, size_t len);
const char *folded_comm_key(const char *comm, char buf[static FOLDED_COMM_KEY_MAX]);

typedef struct FunctionStat {
        char *name;
        uint64_t self;  /* samples with it as the leaf */
        uint64_t total; /* samples with it anywhere in the stack (counted once per stack) */
} FunctionStat;

/* Functions of all stacks, the comm frames left out, sorted by self then total, largest first. */
int folded_functions(const Folded *f, FunctionStat **ret, size_t *ret_n);
void function_stats_free(FunctionStat *s, size_t n);

/* Two-proportion z-score of a/n1 against b/n2 (pooled). 0 when either total is 0. */
double proportion_z(uint64_t a, uint64_t n1, uint64_t b, uint64_t n2);

typedef struct Rise {
        char *name;      /* the process (comm) or "comm;function" for functions */
        uint64_t slice, baseline;
        double slice_share, baseline_share; /* 0..1 */
        double z;
        char *top_function;       /* processes only: its leaf function that rose most, or NULL */
        double function_slice_share, function_baseline_share, function_z;
        char *thread; /* a process rise of a group of threads ("wrk-*"): the one that carried it
                       * (bundle_rises_threads()), or NULL */
} Rise;

typedef enum RiseKind {
        RISE_PROCESS,  /* keyed by the root frame (comm), per-CPU kernel threads as one (folded_comm_key()) */
        RISE_FUNCTION, /* keyed by that and the leaf function */
        _RISE_KIND_MAX,
        _RISE_KIND_INVALID = -EINVAL,
} RiseKind;

/* Minimum z for a rise to be listed, and minimum slice samples (tiny counts say nothing). */
#define RISE_Z_MIN 3.0
#define RISE_SAMPLES_MIN 5u

/*
 * Ranks the keys whose share rose in slice against baseline, largest z first; only rises with
 * z >= RISE_Z_MIN and at least RISE_SAMPLES_MIN slice samples are returned, at most max_n.
 * For processes, each rise names the leaf function of that process that rose most, among those
 * with RISE_SAMPLES_MIN slice samples (none where its rise is spread thinner: a few samples in
 * each of many kernel functions), never a frame that names nothing ("[unknown]", a "[libfoo.so]"
 * without symbols) or a start-up frame (as folded_rise_under() leaves them out), nor a system
 * call's way in or out: the C library's wrapper
 * (the frame right above the kernel's entry in the process's stacks, unless it has more than 4
 * samples as the leaf for each of the kernel's work under it: a function doing its own work, as
 * the vDSO's clock_gettime()), the entry, do_syscall_64() (on arm64 the exception's way in,
 * el0_svc(), do_el0_svc() and el0_svc_common(), not invoke_syscall(), which calls the system call),
 * nor where the softirqs land: handle_softirqs(), __do_softirq() and the other frames of an
 * interrupt's way out, where the samples due while a hard interrupt ran with interrupts disabled
 * are taken (the work is the softirq's handler's).
 */
int folded_rises(const Folded *slice, const Folded *baseline, RiseKind kind, size_t max_n, Rise **ret,
                 size_t *ret_n);
void rises_free(Rise *r, size_t n);

/*
 * The samples of a and b that are not in minus, stack by stack: a + b - minus, where minus holds
 * a subset of a's samples (event.folded of stacks.folded). With folded_rises() it compares the
 * seconds around the event with everything else the bundle has: the rest of the slice and the
 * baseline. A count minus holds beyond a + b's is taken as all of them.
 */
int folded_rest(const Folded *a, const Folded *b, const Folded *minus, Folded *ret);

/*
 * Where a process's rise ran: the most specific function (fewest samples of comm in a) under which
 * at least RISE_UNDER_SHARE of comm's samples in a beyond its share in b ran, each function counted
 * once per stack, leaving out those in RISE_UNDER_EVERYWHERE of comm's stacks in a and more (its
 * main loop, the start of every thread: they say nothing), and never a frame that names nothing
 * ("[unknown]", "[libfoo.so]") or one every thread starts from (_start, __libc_start_call_main,
 * start_thread, clone3, ret_from_fork, kthread...: a rise is under them only because some of its
 * stacks were cut short of them), nor an interrupt's way in or out (common_interrupt,
 * handle_softirqs: every interrupt's), the samples where the softirqs land left out (no
 * handler's work). comm is matched by its key: "ksoftirqd/" "*" (or any
 * ksoftirqd/N) is every ksoftirqd's stacks. A rise's top function is its leaf
 * that rose most (vsnprintf, memcpy): this is the caller that explains it (a kubelet reading
 * memory.stat: memcg_stat_show). For a workqueue worker ("kworker/...") the work item, the
 * function process_one_work() called, however much of its stacks it is in (a worker busy with
 * one job: loop_process_work, not the memcpy it spends its time in). *ret NULL when the process
 * did not rise or no function qualifies.
 */
#define RISE_UNDER_SHARE 0.5
#define RISE_UNDER_EVERYWHERE 0.9
int folded_rise_under(const Folded *a, const Folded *b, const char *comm, char **ret);

/* Keeps the first max_n rises of r (the rest freed). */
void rises_truncate(Rise *r, size_t *n, size_t max_n);
/* A deep copy of r into *ret. */
int rise_copy(const Rise *r, Rise *ret);
void rise_done(Rise *r);

/* The share of f's samples whose key (as folded_rises() makes it for kind: the comm, or
 * "comm;leaf") is key; 0 for an empty f. */
double folded_key_share(const Folded *f, RiseKind kind, const char *key);

/* What a rise must have to be the one-line answer: at least RISE_ANSWER_CPUS_MIN of a CPU gained
 * (its samples over the rate and the seconds on each side, AnswerInput.cpus; else its gain in
 * share times the host's CPUs; RISE_ANSWER_GAIN_MIN of the samples where the bundle does not say
 * how many CPUs there were), and at least RISE_ANSWER_RATIO_MIN times its share in
 * what it is compared with. The first keeps out a process that ran a moment only around the
 * event (the one that logged it) and whose z is large on a handful of samples; the second a
 * large process whose share drifts a few points while everything else changes (its z is large
 * only because it is large): the story's kubelet went from under 1% to 6.5% of a CPU. */
#define RISE_ANSWER_CPUS_MIN 0.02
#define RISE_ANSWER_GAIN_MIN 0.01
#define RISE_ANSWER_RATIO_MIN 2.0

/*
 * The CPUs each part of a bundle's samples stands for: its samples over the rate times its
 * seconds (sampled_cpus()). Where every CPU is sampled while it idles that is the host's CPUs, and
 * a share of the samples times n_cpus is the CPU time it was; where idle CPUs take no samples
 * (cycles, some hypervisors' idle states, a vCPU whose clock does not fire in idle) it is fewer,
 * the shares of a mostly idle host are those of its few busy CPUs, and a share times n_cpus
 * overstates the CPU time many times. 0 where not known: n_cpus stands in.
 */
typedef struct SampledCpus {
        double slice, baseline, near, rest;
} SampledCpus;

/* samples / (freq_hz * ns / 1e9); 0 when either is 0. */
double sampled_cpus(uint64_t samples, uint64_t freq_hz, uint64_t ns);

/* What the one-line answer is chosen from: every rise (untruncated) of the slice against the
 * baseline and, when the bundle has event.folded, of the event's own seconds (near) against the
 * rest of the bundle, with near and rest themselves. */
typedef struct AnswerInput {
        const Rise *slice_proc, *slice_func, *near_proc, *near_func;
        size_t n_slice_proc, n_slice_func, n_near_proc, n_near_func;
        const Folded *near, *rest; /* NULL without event.folded */
        unsigned n_cpus;           /* of the host; 0: unknown */
        SampledCpus cpus;          /* a CPU gained is counted in these where known */
} AnswerInput;

typedef enum AnswerFrom {
        ANSWER_SLICE_PROCESS,
        ANSWER_NEAR_PROCESS,
        ANSWER_SLICE_FUNCTION,
        ANSWER_NEAR_FUNCTION,
        _ANSWER_FROM_MAX,
        _ANSWER_FROM_INVALID = -EINVAL,
} AnswerFrom;

static inline bool answer_from_near(AnswerFrom f) {
        return f == ANSWER_NEAR_PROCESS || f == ANSWER_NEAR_FUNCTION;
}
static inline bool answer_from_function(AnswerFrom f) {
        return f == ANSWER_SLICE_FUNCTION || f == ANSWER_NEAR_FUNCTION;
}

/*
 * The rise the one-line answer names. A process, else a function (a process that kept its share
 * while its work changed), that passes the floors above, the most certain first (largest z);
 * when the bundle has the event's own seconds, a rise of the whole slice counts only if its share
 * around the event was at least its share in the rest (a burst half a minute before the event,
 * gone by then, is no answer to it). Without any, the first of near's processes, the slice's,
 * near's functions, the slice's: the strongest there is, said as it is. A function's rise only
 * where its leaf names a function (not "[unknown]", a file without symbols, a start-up frame or a
 * system call's way in or out): the next that does, else none. The idle task
 * ("swapper") is never the answer: idle rising is work that was not done. *ret_from says which
 * list; NULL when all are empty.
 */
const Rise *rises_answer(const AnswerInput *in, AnswerFrom *ret_from);

/* The answer as show and the page give it: a copy of the rise, the list it came from, and for a
 * process where its rise ran (folded_rise_under(), in near against rest or slice against
 * baseline, as the rise was found). rise.name NULL: nothing to name. */
typedef struct Answer {
        Rise rise;
        AnswerFrom from;
        char *under;
        bool clear; /* the rise passed the floors above; false: the fallback, the strongest there is */
        char *thread; /* of a group's rise, the one thread that carried it (bundle_answer_thread()), or NULL */
        Rise fall;  /* folded_fall() of near against rest; name NULL: none */
} Answer;

/*
 * The process whose share fell most in near (the event's seconds) against rest: one that stopped
 * at the event (a service blocked on the disk or the network that went away) tells as much as
 * one that spun. Its share must at least halve (RISE_ANSWER_RATIO_MIN) and lose
 * RISE_ANSWER_CPUS_MIN of a CPU (RISE_ANSWER_GAIN_MIN of the samples without n_cpus), with z at
 * most -RISE_Z_MIN and at least RISE_SAMPLES_MIN samples in rest; the idle task is none. Shares
 * are judged among the samples of the processes that did not rise in near (as folded_rises()
 * finds a rise; the idle task counts among them): on a busy host what rose took its CPU from
 * every other process, whose shares all fell with it, and none of them stopped. With the
 * slice (near a part of it), the fall must hold by the same floors against the slice's seconds
 * outside near too: a process that ran in the baseline and stopped before the slice began did
 * not stop at the event. With the baseline, of ANSWER_BASELINE_SAMPLES_MIN samples or more, it
 * must hold against the baseline too: a job that began after the baseline and ended in the slice
 * before near (a compiler, a cron job) did not stop at the event either. The largest fall by z;
 * ret->slice_* are near's, ret->baseline_* rest's, ret->z negative, all of all the samples on each
 * side. ret->name NULL when none. A
 * CPU lost is counted in cpus where known (near, rest, baseline, and slice for the slice's seconds
 * outside near; NULL: none known).
 */
int folded_fall(const Folded *near, const Folded *rest, const Folded *slice, const Folded *baseline, unsigned n_cpus,
                const SampledCpus *cpus, Rise *ret);

/* Fewer baseline samples than this cannot show a rise of a few percent at z >= 3 at all, and a
 * rise against them is noise: the slice's rises against such a baseline are no answer, nor the
 * event's seconds' against a rest as small. */
#define ANSWER_BASELINE_SAMPLES_MIN 200u

/* The answer from in (rises_answer(), the slice's rises left out when baseline has fewer than
 * ANSWER_BASELINE_SAMPLES_MIN samples, near's rises and the fall when rest has), where it ran,
 * and what fell. */
int answer_choose(const AnswerInput *in, const Folded *slice, const Folded *baseline, Answer *ret);
void answer_done(Answer *a);

#include "basic/cleanup.h"
static inline void folded_donep(Folded *f) {
        folded_done(f);
}
