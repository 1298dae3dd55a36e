/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Stack identity decided once per distinct call chain. A bounded cache from what a sample's frames
 * are computed from — the final array of kernel and user addresses (the perf callchain today, the
 * unwound user frames once there is an unwinder), the process, the generation of its mappings and
 * the symbolizer's generation — to the symbolized frames and a SampleStackSlot in which the
 * window writer remembers the interned stack. A chain seen before costs one hash of its addresses
 * and one comparison; nothing is symbolized or interned again.
 *
 * Correctness rests on the key: any change that could make the same addresses give other frames
 * changes it. The process's mapping generation (proc_table_maps_generation()) changes with every
 * MMAP2 (an munmap is only ever followed by samples in code that a new mapping covers), exec, fork
 * and reused pid; the symbolizer's (symbolizer_generation()) with a kallsyms reload (module load),
 * a cache drop and a JIT map read. Chains whose frames depend on what the symbolizer may learn
 * later without either generation changing (an unresolved frame, code no file backs) are
 * "volatile": they are reused only within the drain (epoch) they were made in, as the JIT maps
 * are read once per drain.
 *
 * The leaf (the interrupted address) moves from sample to sample while the return addresses after
 * it stay: entries are keyed on the callers and remember the last leaf, and the addresses that
 * make the same frame (its function's, when frames name functions), so that a leaf elsewhere in
 * that function costs nothing more (see stack_cache_frames()).
 *
 * Bounded: a fixed number of two-way sets; a new chain replaces the less recently used entry of
 * its set. Each entry owns its copy of the addresses and the frames (whose strings belong to the
 * symbolizer and the task table, valid while the key's generations are unchanged).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/profile-sample.h"
#include "sampler/proc-maps.h"
#include "sampler/sampler-frames.h"
#include "sampler/sampler-record.h"
#include "symbolizer/symbolizer.h"

#define STACK_CACHE_ENTRIES_DEFAULT 8192U
/* Longest address array a key holds (a callchain with its context markers). */
#define STACK_CACHE_IPS_MAX 512U

typedef struct StackCacheKey {
        uint32_t pid;
        uint32_t flags;    /* whatever else the frames were computed from (e.g. the sample hit kernel mode) */
        uint64_t maps_gen; /* proc_table_maps_generation() */
        uint64_t sym_gen;  /* symbolizer_generation() */
        size_t n_ips;
        const uint64_t *ips;
} StackCacheKey;

typedef struct StackCacheEntry {
        uint64_t hash;
        uint32_t pid, flags;
        uint64_t maps_gen, sym_gen;
        uint64_t epoch; /* 0 = valid in every epoch; else only in this one */
        uint64_t last_use;
        uint32_t n_ips, n_frames;
        uint64_t *ips;
        Frame *frames;
        uint32_t cut, dropped, unknown; /* what sample_frames() counted when it made the frames; unknown frames */
        SampleStackSlot slot;
        /* An entry keyed on a chain's callers (STACK_CACHE_LEAF_* in flags): frames[0] is the leaf
         * of the last sample that used it, made from leaf_ip, and slot is for the frames with that
         * leaf; callers_slot is for frames[1..n_frames), whatever the leaf. unknown counts those. */
        uint64_t leaf_ip;
        uint64_t leaf_same_start, leaf_same_end; /* leaves that make frames[0] too (SymbolizerRange) */
        uint64_t leaf_epoch; /* 0 = frames[0] is valid in every epoch; else only in this one */
        bool leaf_unknown;
        SampleStackSlot callers_slot;
} StackCacheEntry;

/* StackCacheKey.flags: the key holds the chain without its first marker and leaf (sample_chain_has_leaf()). */
#define STACK_CACHE_LEAF_KERNEL 2U
#define STACK_CACHE_LEAF_USER 4U

typedef struct StackCacheStats {
        uint64_t hits, misses, stored, replaced, uncacheable;
        uint64_t leaves; /* hits whose leaf was another than the entry's last: that one frame made anew */
        uint64_t leaves_same; /* of those, leaves that made the same frame (the same function): nothing interned */
        uint64_t leaves_in_function; /* hits whose leaf was another, in the function of the entry's last
                                      * (compact detail): not symbolized, nothing interned */
        uint64_t hit_frames, hit_frames_unknown; /* frames handed out by stack_cache_frames() from entries */
} StackCacheStats;

typedef struct StackCache StackCache;

/* n_entries: rounded up to a power of two, at least 2; 0 = STACK_CACHE_ENTRIES_DEFAULT. */
StackCache *stack_cache_new(size_t n_entries);
StackCache *stack_cache_free(StackCache *c);

/* The next drain: volatile entries of earlier drains are no longer reused. */
void stack_cache_next_epoch(StackCache *c);

/* The entry for k, or NULL. The entry stays valid until the next stack_cache_store(). */
StackCacheEntry *stack_cache_lookup(StackCache *c, const StackCacheKey *k);

/*
 * Keeps frames for k (copying both), replacing an entry of its set; the new entry's slot is empty.
 * Returns the entry, or NULL when k cannot be kept (too many addresses, no memory): the caller
 * then goes on without a slot.
 */
StackCacheEntry *stack_cache_store(StackCache *c, const StackCacheKey *k, const Frame *frames, uint32_t n_frames,
                                   bool is_volatile);

/*
 * The sampler's use of the cache: fills sample->frames, n_frames, stack_slot and callers_slot for
 * rs, from the cache when the chain is there with the same generations, else through
 * sample_frames() (frames written to scratch, room for PROFILE_STACK_DEPTH_MAX), keeping the
 * result. A chain with a leaf (sample_chain_has_leaf(), nearly all) is keyed on its callers: a
 * sample that stopped elsewhere in the same call path finds the entry, and only its leaf is
 * symbolized (sample_leaf_frame()); a sample with the entry's last leaf too costs nothing more.
 * stats gets what sample_frames() would have counted either way. Call symbolizer_begin() first,
 * and look up the process (which may read its maps) before: the key takes the generations as
 * they are now.
 */
void stack_cache_frames(StackCache *c, ProcTable *procs, Symbolizer *z, const RecordSample *rs, Frame *scratch,
                        SampleFramesStats *stats, Sample *sample);

void stack_cache_get_stats(const StackCache *c, StackCacheStats *ret);
/* Bytes the entries hold (addresses and frames), for the status and benchmarks. */
size_t stack_cache_bytes(const StackCache *c);

#include "basic/cleanup.h"
DEFINE_TRIVIAL_CLEANUP_FUNC(StackCache *, stack_cache_free);
