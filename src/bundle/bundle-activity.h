/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The per-CPU, per-second grid of a bundle's activity.tsv (samples and busy samples), and the
 * CPUs that delivered fewer samples than their rate asks for. Pure computation on what was read.
 */
#include <stddef.h>
#include <stdint.h>

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

/*
 * A CPU that delivered fewer samples than its rate asks for. Where the cpu-clock event fires on
 * idle CPUs too (their samples are the idle task's), a shortfall is time the CPU did not have: a
 * vCPU the hypervisor did not run (steal time), interrupts held off, or samples lost in the rings.
 * Its work is undercounted in every share of the bundle. Where the clock does not fire in idle
 * (cycles; some hypervisors' idle states), missing samples say nothing, and no CPU is judged.
 */
typedef struct CpuShortfall {
        unsigned cpu;
        uint64_t samples, expected;
} CpuShortfall;

#define SHORTFALL_SECONDS_MIN 5U
#define SHORTFALL_FREQ_MAX 1000000U

/* The CPUs of a that delivered under half the samples freq_hz asks for over the whole seconds
 * [from, to) of the grid, fewest delivered first, at most max_n. Each CPU is judged from its first
 * second with samples to its last (hotplug), over the seconds some CPU has samples in (not where
 * the daemon was not running), and only if its idle task was sampled in at least half of them
 * (its clock fires in idle). Fewer than SHORTFALL_SECONDS_MIN such seconds, dropped rows in the
 * grid, or a rate above SHORTFALL_FREQ_MAX judge nothing. Returns how many. */
size_t activity_shortfalls(const Activity *a, uint64_t freq_hz, unsigned from, unsigned to, CpuShortfall *ret,
                           size_t max_n);

#include "basic/cleanup.h"
static inline void activity_donep(Activity *a) {
        activity_done(a);
}
