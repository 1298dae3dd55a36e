/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tprofd --once: a Sampler without the daemon. Enable, drain a few times a second until the time
 * is up (so the rings never fill at high frequencies), disable, drain what is left, then print the
 * folded stacks and a one-screen summary. No sd-event loop: nothing else needs to run.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#include "basic/hashmap.h"
#include "basic/log.h"
#include "basic/string-util.h"
#include "basic/time-util.h"
#include "profile/profile-fold.h"
#include "sampler/sampler-once.h"
#include "sampler/sampler.h"

#define ONCE_DRAIN_USEC (100U * USEC_PER_MSEC)

typedef struct OnceContext {
        CgroupBy by;
        Hashmap *stacks; /* raw stack key (see stack_key()) -> samples */
        StrBuf key;
        uint64_t samples;
} OnceContext;

/*
 * Samples are counted per raw stack, "comm\0sym\0dso\0sym\0dso\0..." (with --by the cgroup path
 * instead of the comm, named when folded), and folded once per distinct
 * stack at the end: name tidying then costs per stack, not per sample. The key holds every byte
 * the Folder looks at, so the result is the same as folding each sample.
 */
static int stack_key(StrBuf *b, const Sample *s, CgroupBy by) {
        const char *root = by == CGROUP_BY_PROCESS ? s->comm ?: "" : s->cgroup ?: "";
        int r;

        strbuf_reset(b);
        r = strbuf_append_n(b, root, strlen(root) + 1);
        for (uint32_t i = 0; r >= 0 && i < s->n_frames; i++) {
                r = strbuf_append_n(b, s->frames[i].symbol, strlen(s->frames[i].symbol) + 1);
                if (r >= 0)
                        r = strbuf_append_n(b, s->frames[i].dso, strlen(s->frames[i].dso) + 1);
        }
        return r;
}

static int on_sample(const Sample *s, void *userdata) {
        OnceContext *c = userdata;
        uint64_t *slot;
        int r;

        c->samples++;
        r = stack_key(&c->key, s, c->by);
        if (r < 0)
                return r;
        slot = hashmap_slot(c->stacks, c->key.data, c->key.len, 0, NULL);
        if (!slot)
                return -ENOMEM;
        (*slot)++;
        return 0;
}

static void once_context_done(OnceContext *c) {
        c->stacks = hashmap_free(c->stacks);
        strbuf_done(&c->key);
}

/* Not inlined: its frames array (6.5 KiB) would sit in sampler_once_run()'s frame while it samples,
 * and put the drain more than the 8 KiB stack copy below main, so that nearly every sample of
 * tprofd itself was cut short. */
static _noinline_ int fold_stacks(OnceContext *c, Folder *folder) {
        Frame frames[PROFILE_STACK_DEPTH_MAX];
        char name[CGROUP_UNIT_BYTES + 64];
        const void *k;
        size_t kl;
        uint64_t count;

        for (size_t i = 0; hashmap_iterate(c->stacks, &i, &k, &kl, &count);) {
                const char *p = k, *end = p + kl;
                Sample s = { .frames = frames };
                int r;

                s.comm = c->by == CGROUP_BY_PROCESS ? p : cgroup_group_name(p, c->by, name, sizeof name);
                p += strlen(p) + 1;
                while (p < end && s.n_frames < PROFILE_STACK_DEPTH_MAX) {
                        const char *symbol = p;
                        p += strlen(p) + 1;
                        frames[s.n_frames++] = (Frame) { .symbol = symbol, .dso = p };
                        p += strlen(p) + 1;
                }
                r = folder_add(folder, &s, count);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* How user stacks were walked, and why those that were cut were cut. */
static _noinline_ void print_unwind(const Sampler *s, FILE *err) {
        UnwindStats u;
        char line[512];

        if (sampler_unwind_mode(s) == UNWIND_MODE_FP) {
                fprintf(err, "  user stacks: by frame pointers (the kernel's walk)\n");
                return;
        }
        sampler_get_unwind_stats(s, &u);
        unwind_stats_format(&u, line, sizeof(line));
        fprintf(err, "  user stacks (%s): %s\n", unwind_mode_to_string(sampler_unwind_mode(s)), line);
        if (sampler_unwind_copy_hint(s, line, sizeof(line)))
                fprintf(err, "  (%s)\n", line);
        fprintf(err,
                "  unwinding: %" PRIu64 " frames by CFI, %" PRIu64 " by frame pointers, %.1f us per stack "
                "(and %.1f ms loading tables), "
                "rules cached %" PRIu64 "/%" PRIu64 ", files %" PRIu64 " with CFI, %" PRIu64 " without, %" PRIu64
                " unreadable, %" PRIu64 " given .debug_frame by a debug file; tables dropped %" PRIu64
                " times when full, %" PRIu64 " frames walked while theirs waited\n",
                u.frames_cfi, u.frames_fp, u.stacks_timed ? (double) u.nsec / 1000.0 / (double) u.stacks_timed : 0.0,
                (double) u.load_nsec / 1e6, u.rule_hits, u.rule_hits + u.rule_misses, u.files_loaded, u.files_without_cfi,
                u.files_failed, u.debug_files, u.cache_flushes, u.loads_deferred);
}

static volatile sig_atomic_t interrupted = 0;

static void on_signal(int sig) {
        interrupted = 1;
}

int sampler_once_run(const OnceOptions *o, FILE *out, FILE *err) {
        _cleanup_(folder_freep) Folder *folder = NULL;
        _cleanup_(sampler_freep) Sampler *s = NULL;
        _cleanup_(once_context_done) OnceContext c = { .by = o->by };
        SamplerStats st;
        SamplerDebugStats dbg;
        ClockMap cm = {};
        uint64_t start, end, now;
        struct sigaction sa = { .sa_handler = on_signal }, old_int, old_term;
        int r, clock_r;

        folder = folder_new();
        c.stacks = hashmap_new();
        if (!folder || !c.stacks)
                return log_oom();

        /* Frames that name functions: the key above holds names only, so the output is the same,
         * and the stack cache reuses a leaf's frame anywhere in its function, as in the daemon. */
        r = sampler_new(&(SamplerOptions) { .freq_hz = o->freq_hz, .pid = o->pid, .unwind = o->unwind,
                                            .function_frames = true,
                                            .symbol_cache_bytes = o->symbol_cache_bytes,
                                            .unwind_cache_bytes = o->unwind_cache_bytes,
                                            .unwind_stack_bytes = o->unwind_stack_bytes,
                                            .cgroups_from_proc = o->cgroups_from_proc },
                        on_sample, &c, &s);
        if (r == -ERANGE)
                return log_error_errno(r, "Sampling at %" PRIu32 " Hz is above kernel.perf_event_max_sample_rate.",
                                       o->freq_hz);
        if (r < 0)
                return log_error_errno(r, "Failed to open perf events (%s): %m", sampler_open_error_hint(r));

        (void) sigaction(SIGINT, &sa, &old_int);
        (void) sigaction(SIGTERM, &sa, &old_term);

        r = sampler_enable(s);
        if (r < 0)
                return log_error_errno(r, "Failed to enable perf events: %m");

        start = now_usec(CLOCK_MONOTONIC);
        end = start + o->duration_usec;
        clock_r = sampler_measure_clock(s, &cm);
        while (!interrupted && (now = now_usec(CLOCK_MONOTONIC)) < end) {
                uint64_t d = MIN(end - now, (uint64_t) ONCE_DRAIN_USEC);
                struct timespec ts = { .tv_sec = (time_t) (d / USEC_PER_SEC),
                                       .tv_nsec = (long) (d % USEC_PER_SEC * NSEC_PER_USEC) };

                (void) nanosleep(&ts, NULL);
                r = sampler_drain(s); /* which looks for CPUs that came or went, once a second */
                if (r < 0)
                        return log_error_errno(r, "Failed to fold samples: %m");
        }
        (void) sampler_disable(s);
        now = now_usec(CLOCK_MONOTONIC);
        r = sampler_drain(s);
        if (r < 0)
                return log_error_errno(r, "Failed to fold samples: %m");

        (void) sigaction(SIGINT, &old_int, NULL);
        (void) sigaction(SIGTERM, &old_term, NULL);

        r = fold_stacks(&c, folder);
        if (r < 0)
                return log_error_errno(r, "Failed to fold samples: %m");
        r = folder_write(folder, out);
        if (r < 0)
                return log_error_errno(r, "Failed to write folded stacks: %m");
        if (fflush(out) != 0)
                return log_error_errno(errno, "Failed to write folded stacks: %m");

        sampler_get_stats(s, &st);
        sampler_get_debug_stats(s, &dbg);
        double secs = (double) (now - start) / USEC_PER_SEC;
        fprintf(err,
                "tprofd --once: %.2f s, event %s at %" PRIu32 " Hz on %u CPUs, rings of %zu KiB per CPU\n"
                "  samples: %" PRIu64 " folded%s (%" PRIu64 " read; about %.0f if every CPU had been busy throughout), %zu distinct stacks\n"
                "  lost: %" PRIu64 ", throttled: %" PRIu64 ", unthrottled: %" PRIu64 "\n",
                secs, sampler_event_name(s), o->freq_hz ?: SAMPLER_FREQ_HZ_DEFAULT, sampler_n_cpus(s),
                sampler_ring_bytes(s) / 1024, c.samples, o->pid > 0 ? " for the process" : "", st.samples,
                secs * (o->freq_hz ?: SAMPLER_FREQ_HZ_DEFAULT) * sampler_n_cpus(s), folder_n_stacks(folder),
                st.lost, st.throttled, st.unthrottled);
        fprintf(err,
                "  frames: %" PRIu64 " (%" PRIu64 " unknown), call chains cut at a frame outside every mapping: "
                "%" PRIu64 " (%" PRIu64 " frames dropped)\n"
                "  files read: %" PRIu64 " (%" PRIu64 " unreadable), kernel symbols: %" PRIu64
                ", JIT maps: %" PRIu64 "; symbol cache dropped %" PRIu64 " times when full, %" PRIu64
                " frames unnamed while their file waited\n"
                "  tasks: %" PRIu64 " tracked, %" PRIu64 " reaped after exit\n"
                "  cgroups: from %s, %" PRIu64 " paths known, %" PRIu64 " samples without one\n"
                "  call chains: %" PRIu64 " from the stack cache (%" PRIu64 " with a leaf symbolized anew, %" PRIu64
                " with a leaf in the last one's function), %" PRIu64
                " symbolized (%" PRIu64 " KiB cached)\n",
                dbg.frames, dbg.frames_unknown, dbg.callchains_cut, dbg.frames_dropped, dbg.files_loaded,
                dbg.files_failed, dbg.kallsyms_symbols, dbg.jit_maps_loaded, dbg.cache_flushes, dbg.loads_deferred, dbg.tasks, dbg.tasks_reaped,
                sampler_cgroup_source(s), dbg.cgroups, dbg.cgroups_unknown,
                dbg.stack_cache_hits, dbg.stack_cache_leaves, dbg.stack_cache_leaves_in_function, dbg.stack_cache_misses, dbg.stack_cache_bytes / 1024);
        if (sampler_cgroup_problem(s))
                fprintf(err, "  cgroups: %s\n", sampler_cgroup_problem(s));
        for (unsigned i = 0; sampler_kernel_lack(s, i); i++)
                fprintf(err, "  kernel: %s\n", sampler_kernel_lack(s, i));
        if (dbg.corrupt > 0 || dbg.decode_errors > 0)
                fprintf(err, "  ring records skipped: %" PRIu64 " corrupt, %" PRIu64 " undecodable\n", dbg.corrupt,
                        dbg.decode_errors);
        print_unwind(s, err);
        if (clock_r >= 0)
                fprintf(err, "  clock: perf - monotonic = %+" PRIi64 " ns (error %" PRIu64 " ns)\n",
                        cm.perf_minus_mono_ns, cm.error_ns);
        else
                fprintf(err, "  clock: not measured (%s)\n", strerror(-clock_r));
        return 0;
}
