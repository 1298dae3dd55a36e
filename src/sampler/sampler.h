/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The sampler: one perf event per online CPU sampling stacks at a fixed frequency (hardware
 * cycles where the PMU has them, else the cpu-clock software event), system wide or filtered to
 * one process, read from per-CPU mmap rings, ordered by time across CPUs, symbolized, and handed
 * to a callback one Sample at a time, each with its cgroup's path (sampler-cgroup.h). It also keeps the task table current (COMM/MMAP2/FORK/EXIT
 * records on every CPU's event: a task's records go only to the ring of the CPU it ran on, so
 * there are no duplicates to merge), follows CPUs coming online and going away, counts what the
 * kernel lost or throttled, and measures how the perf clock maps to CLOCK_MONOTONIC.
 *
 * Timestamps use perf's default clock (local_clock(), what printk stamps kmsg records with); we
 * never set use_clockid. Kernel stacks come from PERF_SAMPLE_CALLCHAIN. User stacks too with
 * UNWIND_MODE_FP; with DWARF and AUTO each sample carries the user registers and a copy of the
 * user stack (PERF_SAMPLE_REGS_USER|STACK_USER) instead, which sampler-unwind.c walks with the
 * files' call frame information into the same array of user addresses (frames are then built in
 * one place, sample_frames() in sampler-frames.c). The copy is dropped once walked.
 *
 * Everything runs on the caller's thread. The handler must not call back into the sampler.
 */
#pragma once

#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "basic/clock-map.h"
#include "profile/profile-sample.h"
#include "sampler/sampler-unwind.h"

#define SAMPLER_FREQ_HZ_DEFAULT 97U
/* Each CPU's ring (its data area) in bytes, whatever the page size (4 KiB on x86-64; 4, 16 or
 * 64 KiB on arm64, 64 KiB on RHEL's and Oracle's arm64 kernels): sampler_ring_pages() makes pages
 * of them. With frame pointers 512 KiB up to 97 Hz, doubling with the per-CPU rate up to 16 times
 * that. */
#define SAMPLER_RING_BYTES_DEFAULT (512U * 1024U)
/* With stack copies a record is ~8.7 KiB. A ring holds two seconds of a CPU busy in user code
 * throughout: the timer drains it about every second at 97 Hz, before it is half full, with a
 * second to spare for a busy event loop: 2 MiB up to 120 Hz, 4 MiB to 240 Hz, 8 MiB above; 192 MiB
 * of rings on a 96-CPU host at the default rate. Halved down to SAMPLER_RING_BYTES_DEFAULT when
 * the kernel refuses (perf_event_mlock_kb, RLIMIT_MEMLOCK). */
#define SAMPLER_RING_BYTES_UNWIND (2U * 1024U * 1024U)
#define SAMPLER_RING_BYTES_UNWIND_MAX (8U * 1024U * 1024U)
#define SAMPLER_UNWIND_RING_SECONDS 2U
#define SAMPLER_UNWIND_STACK_BYTES_DEFAULT 8192U
#define SAMPLER_UNWIND_STACK_BYTES_MIN 1024U
#define SAMPLER_UNWIND_STACK_BYTES_MAX 32768U
/* The drain timer's default period; a ring that fills drains sooner (see sampler.c). */
#define SAMPLER_DRAIN_USEC_DEFAULT (1U * 1000000U)
/* Exited tasks are kept this long (perf clock) after their EXIT record, for late samples. */
#define SAMPLER_EXIT_GRACE_NS (2U * 1000000000U)

typedef struct SamplerOptions {
        uint32_t freq_hz;    /* 0 = SAMPLER_FREQ_HZ_DEFAULT */
        pid_t pid;           /* 0 = system wide; else only samples of this process reach the handler */
        uint32_t mmap_pages; /* per CPU ring data pages, a power of two, 0 = default */
        bool function_frames; /* frames name functions (their start, offset 0), not instructions */
        UnwindMode unwind;    /* how user stacks are walked; 0 = UNWIND_MODE_FP */
        uint32_t unwind_stack_bytes; /* user stack copied per sample (DWARF, AUTO); 0 = default;
                                      * a multiple of 8 in [SAMPLER_UNWIND_STACK_BYTES_MIN, _MAX] */
        bool cgroups_from_proc; /* name cgroups from /proc/PID/cgroup even where perf has PERF_SAMPLE_CGROUP */
        bool no_cgroups;        /* samples carry no cgroup */
        uint64_t symbol_cache_bytes; /* the symbolizer's limit; 0 = SYMBOLIZER_CACHE_BYTES_DEFAULT */
        uint64_t unwind_cache_bytes; /* the unwinder's CFI limit; 0 = UNWIND_CACHE_BYTES_MAX */
        uint64_t drain_usec; /* the longest between two drains on the event loop (sampler_attach_event());
                              * 0 = SAMPLER_DRAIN_USEC_DEFAULT; at most 1 s with cgroups from /proc */
} SamplerOptions;

typedef struct Sampler Sampler;

/* s is symbolized; its pointers are valid only during the call. A negative return is passed on by
 * sampler_drain() (after the drain finished, so no record is lost). */
typedef int (*SampleHandler)(const Sample *s, void *userdata);

/* n samples of this CPU the kernel dropped (PERF_RECORD_LOST: its ring was full), told in time
 * order with the samples. The kernel writes the record once the ring has room again, with that
 * moment's time: a loss is recorded where the reader caught up, not where it began. */
typedef void (*LostHandler)(uint32_t cpu, uint64_t n, void *userdata);

/*
 * Opens one event per online CPU (disabled; see sampler_enable()), maps the rings, scans /proc and
 * loads kallsyms. -ENOENT/-EOPNOTSUPP/-EACCES when perf events cannot be opened at all, -ERANGE
 * when freq_hz is above kernel.perf_event_max_sample_rate.
 */
int sampler_new(const SamplerOptions *o, SampleHandler handler, void *userdata, Sampler **ret);
Sampler *sampler_free(Sampler *s);
/* Optional; gets sampler_new()'s userdata. */
void sampler_set_lost_handler(Sampler *s, LostHandler handler);

/*
 * Adds the ring fds (EPOLLIN, woken each time another half ring has been written; they drain only
 * when a ring is three eighths full) and a timer that drains every ring: drain_usec after the
 * last drain, or sooner, before the ring that fills fastest is half full again at its rate.
 * Sources are removed by sampler_free().
 */
int sampler_attach_event(Sampler *s, sd_event *e, int64_t priority);

/* Reads every ring now, orders the records by time, symbolizes and calls the handler per sample;
 * then looks for CPUs that came online or went away (at most once a second) and sets the timer. */
int sampler_drain(Sampler *s);
/* sampler_drain() unless the last drain is less than usec old: for callers that want recent
 * samples but not a small batch at a large one's price (cold caches). */
int sampler_drain_if_older(Sampler *s, uint64_t usec);

/* Starts the events; the first time, then scans /proc again (what changed since sampler_new()). */
int sampler_enable(Sampler *s);
int sampler_disable(Sampler *s);

/* Opens events on CPUs that came online, closes those that went offline. Returns 1 if anything changed. */
int sampler_update_cpus(Sampler *s);

const char *sampler_event_name(const Sampler *s); /* "cpu-clock" or "cycles" */

/* Why sampler_new() may have failed with error (negative errno), for the message that says so:
 * "needs root or CAP_PERFMON, or kernel.perf_event_paranoid 0 or lower (1 for --once --pid)" for EACCES, ... */
const char *sampler_open_error_hint(int error);
/* Where samples' cgroups come from: "perf" (PERF_SAMPLE_CGROUP), "proc" (/proc/PID/cgroup), "none". */
const char *sampler_cgroup_source(const Sampler *s);
/* Why samples carry no cgroup where that is a mistake to fix, as a sentence; NULL if not so. */
const char *sampler_cgroup_problem(const Sampler *s);
/* The i-th part of the perf ABI the kernel lacks, as a sentence saying what goes without it; NULL
 * past the last (none on 5.7 and later). */
const char *sampler_kernel_lack(const Sampler *s, unsigned i);
unsigned sampler_n_cpus(const Sampler *s);        /* CPUs with an open event */
size_t sampler_ring_bytes(const Sampler *s);      /* each CPU's ring data area, as mapped */
/* The data pages of each CPU's ring by default, a power of two, for pages of page_size bytes at
 * freq_hz per CPU, with stack copies of unwind_stack_bytes (0: frame pointers, no copies): the
 * same bytes whatever the page size, at least one page. */
uint32_t sampler_ring_pages(size_t page_size, uint32_t freq_hz, uint32_t unwind_stack_bytes);

typedef struct SamplerStats {
        uint64_t samples, lost, throttled, unthrottled;
} SamplerStats;

/* Totals since sampler_new(), CPUs that went away included. */
void sampler_get_stats(const Sampler *s, SamplerStats *ret_total);
/* Per CPU; -ENXIO if that CPU has no event. lost counts PERF_RECORD_LOST. */
int sampler_get_cpu_stats(const Sampler *s, unsigned cpu, SamplerStats *ret);

typedef struct SamplerDebugStats {
        uint64_t records, corrupt, decode_errors, batch_full;
        uint64_t drains, ring_wakeups, ring_wakeups_left; /* ring wakeups left to the drain timer */
        uint64_t maps_rescans; /* processes whose maps were read again after lost records */
        uint64_t samples_filtered; /* not of SamplerOptions.pid */
        uint64_t tasks, tasks_reaped, tasks_live;
        uint64_t files_loaded, files_failed, files_too_big, cache_flushes, cache_bytes, jit_maps_loaded;
        uint64_t loads_deferred; /* frames whose symbols waited: the cache full (symbolizer.h) */
        uint64_t frames, frames_unknown, kallsyms_symbols, kallsyms_reloads;
        uint64_t callchains_cut, frames_dropped; /* user chains cut where they left every mapping */
        uint64_t cgroups, cgroups_unknown; /* cgroup paths known; samples whose cgroup could not be told */
        uint64_t stack_cache_hits, stack_cache_leaves, stack_cache_leaves_in_function, stack_cache_misses,
                stack_cache_bytes; /* sampler-stack-cache.h */
        uint64_t unwind_cache_bytes; /* the unwinder's CFI of the files it loaded (sampler-unwind.h) */
        uint64_t unwind_cache_flushes, unwind_loads_deferred; /* its drops when full, frames walked meanwhile */
} SamplerDebugStats;

/* Internals for logs and benchmarks. */
void sampler_get_debug_stats(const Sampler *s, SamplerDebugStats *ret);
/* How user stacks were walked; all zero with UNWIND_MODE_FP. */
void sampler_get_unwind_stats(const Sampler *s, UnwindStats *ret);
/* Advice when many user stacks ran past the stack copy (unwind_stats_copy_hint()); false if none. */
bool sampler_unwind_copy_hint(const Sampler *s, char *buf, size_t len);
UnwindMode sampler_unwind_mode(const Sampler *s);

/*
 * Measures perf clock vs CLOCK_MONOTONIC (docs/design.md, "Time"): renames our own thread with
 * prctl(PR_SET_NAME) between two clock_gettime(CLOCK_MONOTONIC) calls, which makes the kernel write a
 * PERF_RECORD_COMM stamped with the perf clock into the ring of the CPU we run on; drains to find
 * it (samples read meanwhile go to the handler as usual) and restores the name. The best of a few
 * tries is kept: error_ns is half the tightest bracket. Needs the sampler enabled (-ESRCH if not);
 * -ETIMEDOUT if no record came back. Call it periodically: the clocks drift apart.
 */
int sampler_measure_clock(Sampler *s, ClockMap *ret);

#include "basic/cleanup.h"
DEFINE_TRIVIAL_CLEANUP_FUNC(Sampler *, sampler_free);
