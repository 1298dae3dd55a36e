/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One sample's callchain turned into Frames, leaf first: kernel addresses through kallsyms, user
 * addresses through the mapping the task table finds for them. The module owns only that walk;
 * the table (proc-maps.h) and the symbolizer belong to the sampler, which calls it once per sample,
 * and tests hand it a table and a callchain of their own, with no perf event behind them.
 *
 * The user part ends at the first return address that lies in no executable mapping of a process
 * whose mappings the table knows. The kernel's frame-pointer walk reads garbage once it passes
 * through code built without frame pointers (most distribution binaries): heap pointers, data,
 * text, every word of it different, none of it ever nameable, and everything after the first such
 * word is as much garbage. Kept, it would make nearly every stack distinct. Instead the chain
 * gets one frame "[unknown]" in "[unknown]" at address 0 there, the same for every such chain,
 * and is counted. The interrupted instruction (the first user address) is always kept, mapped or
 * not, and so is every frame of a process the table knows no mapping of: nothing can be judged.
 * Kernel frames are never cut.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "profile/profile-sample.h"
#include "sampler/proc-maps.h"
#include "sampler/sampler-record.h"
#include "symbolizer/symbolizer.h"

typedef struct SampleFramesStats {
        uint64_t callchains_cut; /* at a return address outside every mapping */
        uint64_t frames_dropped; /* user addresses after a cut, not turned into frames */
        /* Chains with a frame the symbolizer may name otherwise later, though neither the process's
         * mappings nor the symbolizer's generation changed: an unresolved frame, or one named from
         * a JIT map (read again once per drain). A caller that caches frames compares the count
         * before and after the call. */
        uint64_t volatile_chains;
        /* The same for the frames after the first (the leaf): what a cache of a chain's callers compares. */
        uint64_t volatile_callers;
} SampleFramesStats;

/*
 * Fills frames (room for PROFILE_STACK_DEPTH_MAX) from rs and returns how many it filled; adds
 * what it cut to *stats. The frames point into the symbolizer's caches: call symbolizer_begin()
 * first, and use them before the next call to it.
 */
uint32_t sample_frames(ProcTable *procs, Symbolizer *z, const RecordSample *rs, Frame *frames,
                       SampleFramesStats *stats);

/*
 * Whether the chain starts with a context marker and the interrupted address (its leaf), so that
 * the leaf's frame can be made apart from the others: the leaf moves from sample to sample inside
 * one function, while the return addresses after it stay the same for as long as the call path
 * does, and a cache of chains keyed on the callers alone hits where a cache of whole chains misses.
 */
bool sample_chain_has_leaf(const RecordSample *rs);

/*
 * The frame sample_frames() makes first for such a chain (its leaf), alone, into *ret. Returns
 * true when that frame is volatile (as SampleFramesStats.volatile_chains counts). *ret_same (when
 * not NULL): the leaf addresses that would make the very same frame while the process's mappings
 * and the symbolizer's generation stay (SymbolizerRange; none when the frame is volatile). Only
 * for a chain sample_chain_has_leaf() accepts; the same rules as sample_frames() for
 * symbolizer_begin().
 */
bool sample_leaf_frame(ProcTable *procs, Symbolizer *z, const RecordSample *rs, Frame *ret, SymbolizerRange *ret_same);
