/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a sampler tells about itself: its event and rings, the counts of samples, losses and
 * throttling per CPU, how user stacks were walked, and the debug figures of the caches behind it
 * (the symbolizer, the stack cache, the cgroup map, the unwinder). Read-only views of the Sampler
 * that sampler.c runs.
 */
#include <errno.h>

#include "sampler/proc-maps.h"
#include "sampler/sampler-cgroup.h"
#include "sampler/sampler-internal.h"
#include "sampler/sampler-ring.h"
#include "sampler/sampler-stack-cache.h"
#include "sampler/sampler-unwind.h"
#include "symbolizer/symbolizer.h"

const char *sampler_event_name(const Sampler *s) {
        return s->event_name;
}

void sampler_set_lost_handler(Sampler *s, LostHandler handler) {
        s->lost_handler = handler;
}

unsigned sampler_n_cpus(const Sampler *s) {
        return s->n_open;
}

size_t sampler_ring_bytes(const Sampler *s) {
        return (size_t) s->opts.mmap_pages * s->page_size;
}

void sampler_get_stats(const Sampler *s, SamplerStats *ret_total) {
        SamplerStats t = s->gone;
        for (unsigned i = 0; i < s->n_cpus_max; i++) {
                const SamplerCpu *c = s->cpus[i];
                if (!c)
                        continue;
                t.samples += c->stats.samples;
                t.lost += c->stats.lost;
                t.throttled += c->stats.throttled;
                t.unthrottled += c->stats.unthrottled;
        }
        *ret_total = t;
}

int sampler_get_cpu_stats(const Sampler *s, unsigned cpu, SamplerStats *ret) {
        if (cpu >= s->n_cpus_max || !s->cpus[cpu])
                return -ENXIO;
        *ret = s->cpus[cpu]->stats;
        return 0;
}

void sampler_get_unwind_stats(const Sampler *s, UnwindStats *ret) {
        if (s->unwinder)
                unwinder_get_stats(s->unwinder, ret);
        else
                *ret = (UnwindStats) {};
}

bool sampler_unwind_copy_hint(const Sampler *s, char *buf, size_t len) {
        UnwindStats u;

        if (!s->unwinder)
                return false;
        unwinder_get_stats(s->unwinder, &u);
        return unwind_stats_copy_hint(&u, s->opts.unwind_stack_bytes, buf, len);
}

UnwindMode sampler_unwind_mode(const Sampler *s) {
        return s->opts.unwind;
}

void sampler_get_debug_stats(const Sampler *s, SamplerDebugStats *ret) {
        StackCacheStats cs;
        ProcTableStats ps;
        SymbolizerStats ys;

        *ret = s->debug;
        for (unsigned i = 0; i < s->n_cpus_max; i++)
                if (s->cpus[i])
                        ret->corrupt += s->cpus[i]->ring->corrupt;
        proc_table_get_stats(s->procs, &ps);
        ret->tasks = ps.tasks;
        ret->tasks_reaped = ps.reaped;
        ret->tasks_live = ps.live;
        symbolizer_get_stats(s->symbolizer, &ys);
        ret->files_loaded = ys.files_loaded;
        ret->files_failed = ys.files_failed;
        ret->files_too_big = ys.files_too_big;
        ret->kallsyms_reloads = ys.kallsyms_reloads;
        ret->cache_flushes = ys.cache_flushes;
        ret->loads_deferred = ys.loads_deferred;
        ret->cache_bytes = ys.cache_bytes;
        ret->jit_maps_loaded = ys.jit_maps_loaded;
        /* The frame a cut leaves is handed out, and unknown, without the symbolizer. */
        stack_cache_get_stats(s->stacks, &cs);
        /* Frames the cache handed out count as if they had been made again. */
        ret->frames = ys.frames + s->frame_stats.callchains_cut + cs.hit_frames;
        ret->frames_unknown = ys.frames_unknown + s->frame_stats.callchains_cut + cs.hit_frames_unknown;
        ret->callchains_cut = s->frame_stats.callchains_cut;
        ret->frames_dropped = s->frame_stats.frames_dropped;
        ret->kallsyms_symbols = ys.kallsyms_symbols;
        if (s->cgroups) {
                CgroupMapStats cgs;

                cgroup_map_get_stats(s->cgroups, &cgs);
                ret->cgroups = cgs.paths;
                ret->cgroups_unknown = cgs.unknown;
        }
        ret->stack_cache_hits = cs.hits;
        ret->stack_cache_leaves = cs.leaves;
        ret->stack_cache_leaves_in_function = cs.leaves_in_function;
        ret->stack_cache_misses = cs.misses;
        ret->stack_cache_bytes = stack_cache_bytes(s->stacks);
        if (s->unwinder) {
                UnwindStats us;

                unwinder_get_stats(s->unwinder, &us);
                ret->unwind_cache_bytes = us.cache_bytes;
                ret->unwind_cache_flushes = us.cache_flushes;
                ret->unwind_loads_deferred = us.loads_deferred;
        }
}
