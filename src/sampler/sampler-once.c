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

#include "basic/log.h"
#include "basic/time-util.h"
#include "profile/profile-fold.h"
#include "sampler/sampler-once.h"
#include "sampler/sampler.h"

#define ONCE_DRAIN_USEC (100U * USEC_PER_MSEC)

typedef struct OnceContext {
        Folder *folder;
        uint64_t samples;
        uint64_t first_ns, last_ns;
} OnceContext;

static int on_sample(const Sample *s, void *userdata) {
        OnceContext *c = userdata;

        c->samples++;
        if (c->first_ns == 0 || s->t_ns < c->first_ns)
                c->first_ns = s->t_ns;
        if (s->t_ns > c->last_ns)
                c->last_ns = s->t_ns;
        return folder_add(c->folder, s, 1);
}

static volatile sig_atomic_t interrupted = 0;

static void on_signal(int sig) {
        interrupted = 1;
}

int sampler_once_run(const OnceOptions *o, FILE *out, FILE *err) {
        _cleanup_(folder_freep) Folder *folder = NULL;
        _cleanup_(sampler_freep) Sampler *s = NULL;
        OnceContext c = {};
        SamplerStats st;
        SamplerDebugStats dbg;
        ClockMap cm = {};
        uint64_t start, end, now;
        struct sigaction sa = { .sa_handler = on_signal }, old_int, old_term;
        int r, clock_r;

        folder = folder_new();
        if (!folder)
                return log_oom();
        c.folder = folder;

        r = sampler_new(&(SamplerOptions) { .freq_hz = o->freq_hz, .pid = o->pid }, on_sample, &c, &s);
        if (r == -ERANGE)
                return log_error_errno(r, "Sampling at %" PRIu32 " Hz is above kernel.perf_event_max_sample_rate.",
                                       o->freq_hz);
        if (r < 0)
                return log_error_errno(r, "Failed to open perf events (root or kernel.perf_event_paranoid): %m");

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
                (void) sampler_update_cpus(s);
                r = sampler_drain(s);
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

        r = folder_write(folder, out);
        if (r < 0)
                return log_error_errno(r, "Failed to write folded stacks: %m");
        if (fflush(out) != 0)
                return log_error_errno(errno, "Failed to write folded stacks: %m");

        sampler_get_stats(s, &st);
        sampler_get_debug_stats(s, &dbg);
        double secs = (double) (now - start) / USEC_PER_SEC;
        fprintf(err,
                "tprofd --once: %.2f s, event %s at %" PRIu32 " Hz on %u CPUs\n"
                "  samples: %" PRIu64 " folded%s (%" PRIu64 " read, expected about %.0f), %zu distinct stacks\n"
                "  lost: %" PRIu64 ", throttled: %" PRIu64 ", unthrottled: %" PRIu64 "\n",
                secs, sampler_event_name(s), o->freq_hz ?: SAMPLER_FREQ_HZ_DEFAULT, sampler_n_cpus(s),
                c.samples, o->pid > 0 ? " for the process" : "", st.samples,
                secs * (o->freq_hz ?: SAMPLER_FREQ_HZ_DEFAULT) * sampler_n_cpus(s), folder_n_stacks(folder),
                st.lost, st.throttled, st.unthrottled);
        fprintf(err,
                "  frames: %" PRIu64 " (%" PRIu64 " unknown), files read: %" PRIu64 " (%" PRIu64 " unreadable), "
                "kernel symbols: %" PRIu64 ", JIT maps: %" PRIu64 "\n",
                dbg.frames, dbg.frames_unknown, dbg.files_loaded, dbg.files_failed, dbg.kallsyms_symbols,
                dbg.jit_maps_loaded);
        if (clock_r >= 0)
                fprintf(err, "  clock: perf - monotonic = %+" PRIi64 " ns (error %" PRIu64 " ns)\n",
                        cm.perf_minus_mono_ns, cm.error_ns);
        else
                fprintf(err, "  clock: not measured (%s)\n", strerror(-clock_r));
        return 0;
}
