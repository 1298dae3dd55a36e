/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What tprof-bundle show computes from a bundle's files: folded stacks read back with bounds,
 * the top stacks and functions of a slice, the processes and functions whose share of samples
 * rose in the slice against the baseline (ranked by a two-proportion z-score), and the per-second
 * per-CPU activity grid of activity.tsv. Pure computation on what was read: no output, no logging.
 */
#pragma once

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
        char *top_function;       /* processes only: its leaf function that rose most */
        double function_slice_share, function_baseline_share, function_z;
} Rise;

typedef enum RiseKind {
        RISE_PROCESS,  /* keyed by the root frame (comm) */
        RISE_FUNCTION, /* keyed by comm and leaf function */
        _RISE_KIND_MAX,
        _RISE_KIND_INVALID = -EINVAL,
} RiseKind;

/* Minimum z for a rise to be listed, and minimum slice samples (tiny counts say nothing). */
#define RISE_Z_MIN 3.0
#define RISE_SAMPLES_MIN 5u

/*
 * Ranks the keys whose share rose in slice against baseline, largest z first; only rises with
 * z >= RISE_Z_MIN and at least RISE_SAMPLES_MIN slice samples are returned, at most max_n.
 * For processes, each rise names the leaf function of that process that rose most.
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

/* Share of the samples a rise must have gained to be the one-line answer: a CPU's worth on a
 * 100-CPU host, two on a 2-CPU one. */
#define RISE_ANSWER_GAIN_MIN 0.01

/*
 * The process rise the one-line answer names, from the slice's (against the baseline) and the
 * event's own seconds' (near, against the rest) lists: among those that gained at least
 * RISE_ANSWER_GAIN_MIN of the samples, the most certain (largest z); without any, the slice's
 * first, else near's. A gain floor rather than z alone: a process that ran only around the event
 * (the one that logged it, a core dump) has a large z with a handful of samples; and z rather
 * than the gain alone: a large process that drifts a few points over the slice is no answer
 * beside a small one that took five times its share at the event. *ret_near says which list;
 * NULL when both are empty.
 */
const Rise *rises_answer(const Rise *slice, size_t n_slice, const Rise *near, size_t n_near, bool *ret_near);

typedef struct Activity {
        unsigned n_cpus;    /* highest CPU seen + 1 */
        unsigned n_seconds; /* highest offset seen + 1, or the slice length if larger */
        uint32_t *samples;  /* [cpu * n_seconds + second] */
        uint32_t *busy;
        uint64_t n_skipped;
} Activity;

#define ACTIVITY_CPUS_MAX 4096u
#define ACTIVITY_SECONDS_MAX 86400u

/* Reads activity.tsv; n_seconds_hint makes the grid at least that wide (the slice length). */
int activity_load(const char *path, unsigned n_seconds_hint, Activity *ret);
void activity_done(Activity *a);

#include "basic/cleanup.h"
static inline void folded_donep(Folded *f) {
        folded_done(f);
}
static inline void activity_donep(Activity *a) {
        activity_done(a);
}
