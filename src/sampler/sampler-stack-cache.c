/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include "basic/alloc-util.h"
#include "basic/macro.h"
#include "sampler/sampler-stack-cache.h"

/* What all entries' frames and addresses take of the heap together, malloc's headers included; a
 * chain that would pass it is not kept. */
#define STACK_CACHE_BYTES_MAX (16U * 1024U * 1024U)

struct StackCache {
        StackCacheEntry *entries; /* n_sets sets of two */
        size_t n_sets;
        uint64_t epoch;
        uint64_t clock; /* for last_use */
        size_t bytes;
        StackCacheStats stats;
};

StackCache *stack_cache_new(size_t n_entries) {
        StackCache *c = new0(StackCache, 1);
        size_t n = 2;

        if (!c)
                return NULL;
        if (n_entries == 0)
                n_entries = STACK_CACHE_ENTRIES_DEFAULT;
        while (n < n_entries && n < (SIZE_MAX / sizeof(StackCacheEntry)) / 2)
                n *= 2;
        c->entries = new0(StackCacheEntry, n);
        if (!c->entries)
                return mfree(c);
        c->n_sets = n / 2;
        c->epoch = 1;
        return c;
}

/* An entry's frames and addresses are one allocation: frames, then ips. */
static_assert(sizeof(Frame) % sizeof(uint64_t) == 0, "ips after frames must be aligned");

static void entry_clear(StackCache *c, StackCacheEntry *e) {
        c->bytes -= malloc_footprint(e->frames);
        free(e->frames);
        *e = (StackCacheEntry) {};
}

StackCache *stack_cache_free(StackCache *c) {
        if (!c)
                return NULL;
        for (size_t i = 0; i < c->n_sets * 2; i++)
                entry_clear(c, &c->entries[i]);
        free(c->entries);
        return mfree(c);
}

void stack_cache_next_epoch(StackCache *c) {
        c->epoch++;
}

/* One multiply and rotate per address; the key's other fields go in first. */
static uint64_t key_hash(const StackCacheKey *k) {
        uint64_t h = ((uint64_t) k->pid << 32 | k->flags) ^ (k->maps_gen * UINT64_C(0x9E3779B97F4A7C15)) ^
                     (k->sym_gen << 48) ^ k->n_ips;

        for (size_t i = 0; i < k->n_ips; i++) {
                h ^= k->ips[i];
                h *= UINT64_C(0xFF51AFD7ED558CCD);
                h ^= h >> 29;
        }
        h ^= h >> 32;
        return h ?: 1; /* 0 marks an empty entry */
}

static bool entry_matches(const StackCache *c, const StackCacheEntry *e, uint64_t h, const StackCacheKey *k) {
        return e->hash == h && e->pid == k->pid && e->flags == k->flags && e->maps_gen == k->maps_gen &&
               e->sym_gen == k->sym_gen && e->n_ips == k->n_ips && (e->epoch == 0 || e->epoch == c->epoch) &&
               memcmp(e->ips, k->ips, k->n_ips * sizeof(uint64_t)) == 0;
}

StackCacheEntry *stack_cache_lookup(StackCache *c, const StackCacheKey *k) {
        uint64_t h = key_hash(k);
        StackCacheEntry *set = &c->entries[(h & (c->n_sets - 1)) * 2];

        for (unsigned w = 0; w < 2; w++)
                if (entry_matches(c, &set[w], h, k)) {
                        set[w].last_use = ++c->clock;
                        c->stats.hits++;
                        return &set[w];
                }
        c->stats.misses++;
        return NULL;
}

StackCacheEntry *stack_cache_store(StackCache *c, const StackCacheKey *k, const Frame *frames, uint32_t n_frames,
                                   bool is_volatile) {
        uint64_t h = key_hash(k);
        StackCacheEntry *set = &c->entries[(h & (c->n_sets - 1)) * 2], *e;
        size_t need = (size_t) n_frames * sizeof(Frame) + MAX(k->n_ips, (size_t) 1) * sizeof(uint64_t);
        Frame *fr;

        /* An empty way first, else the one used longer ago (a stale one is never used again). */
        e = set[0].hash == 0 ? &set[0] : set[1].hash == 0 ? &set[1] : set[0].last_use <= set[1].last_use ? &set[0] : &set[1];
        if (e->hash != 0) {
                c->stats.replaced++;
                entry_clear(c, e);
        }
        /* No addresses is a key too: a chain of a marker and its leaf, keyed on its (no) callers. */
        if (n_frames == 0 || k->n_ips > STACK_CACHE_IPS_MAX || n_frames > PROFILE_STACK_DEPTH_MAX ||
            c->bytes + need + sizeof(size_t) > STACK_CACHE_BYTES_MAX)
                goto refuse;
        fr = malloc(need);
        if (!fr)
                goto refuse;
        uint64_t *ips = (uint64_t *) (fr + n_frames);
        memcpy(ips, k->ips, k->n_ips * sizeof(uint64_t));
        memcpy(fr, frames, n_frames * sizeof(Frame));
        *e = (StackCacheEntry) {
                .hash = h,
                .pid = k->pid,
                .flags = k->flags,
                .maps_gen = k->maps_gen,
                .sym_gen = k->sym_gen,
                .epoch = is_volatile ? c->epoch : 0,
                .last_use = ++c->clock,
                .n_ips = (uint32_t) k->n_ips,
                .n_frames = n_frames,
                .ips = ips,
                .frames = fr,
        };
        c->bytes += malloc_footprint(fr);
        c->stats.stored++;
        return e;

refuse:
        c->stats.uncacheable++;
        return NULL;
}

static uint32_t count_unknown(const Frame *frames, uint32_t n) {
        uint32_t u = 0;

        for (uint32_t i = 0; i < n; i++)
                u += streq(frames[i].symbol, SYMBOLIZER_UNKNOWN);
        return u;
}

/* The very same frame: the same strings (not only equal ones), address and offset. */
static bool frame_same(const Frame *a, const Frame *b) {
        return a->symbol == b->symbol && a->dso == b->dso && a->addr == b->addr && a->offset == b->offset &&
               a->build_id == b->build_id && a->kernel == b->kernel;
}

/* A hit on an entry keyed on the callers: its frames[0] made for this sample's leaf, unless that
 * leaf makes the very frame it holds already (the same address, or elsewhere in its function). */
static void entry_take_leaf(StackCache *c, StackCacheEntry *e, ProcTable *procs, Symbolizer *z, const RecordSample *rs,
                            SampleFramesStats *stats) {
        uint64_t ip = rs->ips[1];
        SymbolizerRange same;
        bool leaf_volatile;

        if (e->leaf_epoch == 0 || e->leaf_epoch == c->epoch) {
                bool at_last = e->leaf_ip == ip;

                if (at_last || (ip >= e->leaf_same_start && ip < e->leaf_same_end)) {
                        c->stats.leaves_in_function += !at_last;
                        stats->volatile_chains += e->epoch != 0 || e->leaf_epoch != 0;
                        c->stats.hit_frames += 1;
                        c->stats.hit_frames_unknown += e->leaf_unknown;
                        return;
                }
        }
        Frame old = e->frames[0];
        leaf_volatile = sample_leaf_frame(procs, z, rs, &e->frames[0], &same); /* the symbolizer counts this frame */
        e->leaf_ip = ip;
        /* A volatile frame may be named otherwise by the next drain: its address alone, for this one. */
        e->leaf_same_start = leaf_volatile ? 0 : same.start;
        e->leaf_same_end = leaf_volatile ? 0 : same.end;
        e->leaf_epoch = leaf_volatile ? c->epoch : 0;
        e->leaf_unknown = streq(e->frames[0].symbol, SYMBOLIZER_UNKNOWN);
        /* Another instruction of the same function makes the same frame when frames name functions
         * (the window writer's compact detail): the stack the writer interned for it still holds.
         * Otherwise the whole stack is another one now. */
        if (!frame_same(&old, &e->frames[0]))
                e->slot = (SampleStackSlot) {};
        else
                c->stats.leaves_same++;
        stats->volatile_chains += e->epoch != 0 || leaf_volatile;
        c->stats.leaves++;
}

void stack_cache_frames(StackCache *c, ProcTable *procs, Symbolizer *z, const RecordSample *rs, Frame *scratch,
                        SampleFramesStats *stats, Sample *sample) {
        /* The key is the address array the frames are computed from: the callchain with its
         * context markers (less its first marker and leaf, which the flags stand for, when it has
         * one), or the sampled address alone when there is no chain. */
        bool leaf = sample_chain_has_leaf(rs);
        StackCacheKey k = {
                .pid = rs->id.pid,
                .flags = (uint32_t) rs->kernel_ip | (!leaf                                           ? 0U :
                                                     rs->ips[0] == (uint64_t) PERF_CONTEXT_KERNEL ? STACK_CACHE_LEAF_KERNEL :
                                                                                                    STACK_CACHE_LEAF_USER),
                .maps_gen = proc_table_maps_generation(procs, rs->id.pid),
                .sym_gen = symbolizer_generation(z),
                .n_ips = leaf ? (size_t) rs->nr - 2 : rs->nr > 0 ? (size_t) rs->nr : 1,
                .ips = leaf ? rs->ips + 2 : rs->nr > 0 ? rs->ips : &rs->ip,
        };
        SampleFramesStats before = *stats;
        StackCacheEntry *e;

        e = stack_cache_lookup(c, &k);
        if (e) {
                stats->callchains_cut += e->cut;
                stats->frames_dropped += e->dropped;
                /* the cut frames are counted as cuts; a leaf is never one */
                c->stats.hit_frames += e->n_frames - leaf - e->cut;
                c->stats.hit_frames_unknown += e->unknown - e->cut;
                if (leaf)
                        entry_take_leaf(c, e, procs, z, rs, stats);
                else
                        stats->volatile_chains += e->epoch != 0;
                sample->frames = e->frames;
                sample->n_frames = e->n_frames;
                sample->stack_slot = &e->slot;
                sample->callers_slot = leaf ? &e->callers_slot : NULL;
                return;
        }
        sample->frames = scratch;
        sample->n_frames = sample_frames(procs, z, rs, scratch, stats);
        sample->stack_slot = NULL;
        sample->callers_slot = NULL;
        /* Of a chain with a leaf, only the callers decide whether the entry lasts past this drain. */
        e = stack_cache_store(c, &k, scratch, sample->n_frames,
                              leaf ? stats->volatile_callers != before.volatile_callers :
                                     stats->volatile_chains != before.volatile_chains);
        if (!e)
                return;
        e->cut = (uint32_t) (stats->callchains_cut - before.callchains_cut);
        e->dropped = (uint32_t) (stats->frames_dropped - before.frames_dropped);
        if (leaf) { /* stored entries hold at least one frame */
                e->leaf_ip = rs->ips[1];
                /* sample_frames() does not say which addresses make its leaf's frame: the first
                 * other leaf to come finds out (entry_take_leaf()) */
                e->leaf_same_start = e->leaf_same_end = 0;
                /* sample_frames() does not say which frame was volatile: the leaf may have been */
                e->leaf_epoch = stats->volatile_chains != before.volatile_chains ? c->epoch : 0;
                e->leaf_unknown = streq(e->frames[0].symbol, SYMBOLIZER_UNKNOWN);
                e->unknown = count_unknown(e->frames + 1, e->n_frames - 1);
                sample->callers_slot = &e->callers_slot;
        } else
                e->unknown = count_unknown(e->frames, e->n_frames);
        sample->stack_slot = &e->slot;
}

void stack_cache_get_stats(const StackCache *c, StackCacheStats *ret) {
        *ret = c->stats;
}

size_t stack_cache_bytes(const StackCache *c) {
        return c->bytes;
}
