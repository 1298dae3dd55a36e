/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The chunk writer: interning samples into a chain's tables and encoding them as one chunk's
 * payload (docs/window-format.md, "Chunks"); see store-window.h.
 */
#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "basic/alloc-util.h"
#include "basic/hashmap.h"
#include "basic/macro.h"
#include "basic/time-util.h"
#include "store/compress.h"
#include "store/range-coder.h"
#include "store/store-model.h"
#include "store/store-window-buildid.h"
#include "store/store-window-cgroup.h"
#include "store/store-window.h"

typedef struct PendingSample {
        uint64_t t_ns, period;
        uint32_t cpu, thread, stack, seq;
        uint32_t cgroup; /* 0: none; k: cgroup table entry k - 1 */
} PendingSample;

typedef struct ThreadKey {
        uint32_t pid, tid, comm;
} ThreadKey;

typedef struct LastThread {
        uint64_t tables_tag; /* 0: empty */
        uint32_t pid, tid, thread;
        char comm[32]; /* NUL-terminated; longer names are not kept here */
} LastThread;

typedef struct StackNode {
        uint32_t parent, frame;
} StackNode;

typedef struct FrameKey {
        uint32_t symbol, dso;
        uint64_t addr, offset;
        uint32_t flags, pad;
} FrameKey;

/* How the frames table finds a frame: by its symbol's text, so that a frame seen before costs one
 * lookup and its symbol is interned only when the frame is new. Only the used part of symbol is
 * the key. */
typedef struct FrameTextKey {
        uint32_t dso, flags;
        uint64_t addr, offset;
        char symbol[PROFILE_NAME_BYTES_MAX];
} FrameTextKey;

/* The DSO string of the frame before, within one sample: its frames mostly share a DSO, and while
 * the sample lives one pointer is one string. */
typedef struct DsoMemo {
        const char *dso;
        uint32_t id;
        bool valid;
} DsoMemo;

struct ChunkWriter {
        Compressor *compressor;
        ClockMap clock;
        uint64_t interval_usec; /* expected time between two samples of one CPU, 0 if unknown */
        uint64_t time_resolution_ns; /* sample times are cut to multiples of this */

        Hashmap *strings; /* bytes -> id */
        ByteBuf string_table;
        uint32_t n_strings;

        Hashmap *frames; /* FrameTextKey -> id */
        FrameKey *frame_list;
        size_t n_frames, frame_alloc;
        uint32_t *frame_order, *frame_rank;
        size_t frame_order_alloc, frame_rank_alloc;

        /* Stacks are nodes of a tree of call paths rooted at the outermost caller: a node is its
         * parent and one frame, so stacks that share callers share nodes. Id 0 is the empty stack. */
        Hashmap *nodes; /* StackNode -> id */
        StackNode *node_list; /* [0] is the root */
        size_t n_nodes, node_alloc;

        uint64_t tables_tag; /* names these tables in SampleStackSlot.tag; new with every reset */
        LastThread last_thread[64]; /* per CPU (modulo): the thread of its last sample */

        Hashmap *threads; /* ThreadKey -> id */
        ThreadKey *thread_list;
        size_t n_threads, thread_alloc;

        CgroupTableWriter cgroups;
        BuildIdTableWriter build_ids;

        PendingSample *samples;
        size_t n_samples, samples_alloc;
        uint64_t first_ns, last_ns;

        uint64_t *lost; /* per CPU */
        size_t lost_alloc;
        uint64_t lost_total;

        ByteBuf raw, packed, stream;

        /* The sample stream's model: like the tables, it lives as long as the chain. */
        SampleModel *model;
        ClockMap chain_clock; /* the mapping the chain's previous chunk gave, which this one's is coded against */
        bool model_advanced; /* encoded a chunk that was neither committed nor reset since */

        /* Chains: tables persist across the chunks of a chain; each chunk lists only new entries. */
        unsigned chain_chunks;   /* chunks per chain, 1 = every chunk self-contained */
        unsigned chain_pos;      /* position of the next chunk in its chain, 0 = it starts one */
        uint32_t strings_emitted;
        size_t string_bytes_emitted, frames_emitted, nodes_emitted, threads_emitted;
};

ChunkWriter *chunk_writer_new(int compress_level) {
        _cleanup_(chunk_writer_freep) ChunkWriter *w = calloc(1, sizeof(ChunkWriter));

        if (!w)
                return NULL;
        w->compressor = compressor_new(compress_level);
        w->model = sample_model_new();
        if (!w->compressor || !w->model)
                return NULL;
        w->chain_chunks = CHUNK_CHAIN_DEFAULT;
        w->time_resolution_ns = NSEC_PER_USEC;
        clock_map_assume(&w->clock);
        if (chunk_writer_reset(w) < 0)
                return NULL;
        return TAKE_PTR(w);
}

ChunkWriter *chunk_writer_free(ChunkWriter *w) {
        if (!w)
                return NULL;
        compressor_free(w->compressor);
        sample_model_free(w->model);
        hashmap_free(w->strings);
        hashmap_free(w->frames);
        hashmap_free(w->nodes);
        hashmap_free(w->threads);
        free(w->thread_list);
        cgroup_table_writer_done(&w->cgroups);
        build_id_table_writer_done(&w->build_ids);
        byte_buf_done(&w->string_table);
        free(w->frame_list);
        free(w->frame_order);
        free(w->frame_rank);
        free(w->node_list);
        free(w->samples);
        free(w->lost);
        byte_buf_done(&w->raw);
        byte_buf_done(&w->packed);
        byte_buf_done(&w->stream);
        free(w);
        return NULL;
}

/* Empties the tables: the next chunk starts a chain. Pending samples must not refer to them. On
 * -ENOMEM the old tables stay whole. */
static int reset_tables(ChunkWriter *w) {
        Hashmap *strings = hashmap_new(), *frames = hashmap_new(), *nodes = hashmap_new(), *threads = hashmap_new(),
                *cgroups = hashmap_new(), *build_ids = hashmap_new();

        /* The hash tables have no deletion; they are rebuilt, which is cheap next to zstd. All are
         * made before any is replaced. */
        if (!strings || !frames || !nodes || !threads || !cgroups || !build_ids ||
            !GREEDY_REALLOC(w->node_list, w->node_alloc, 1)) {
                hashmap_free(strings);
                hashmap_free(frames);
                hashmap_free(nodes);
                hashmap_free(threads);
                hashmap_free(cgroups);
                hashmap_free(build_ids);
                return -ENOMEM;
        }
        cgroup_table_writer_reset(&w->cgroups, cgroups);
        build_id_table_writer_reset(&w->build_ids, build_ids);
        hashmap_free(w->strings);
        hashmap_free(w->frames);
        hashmap_free(w->nodes);
        hashmap_free(w->threads);
        w->strings = strings;
        w->frames = frames;
        w->nodes = nodes;
        w->threads = threads;
        w->n_threads = w->threads_emitted = 0;
        w->string_table.len = 0;
        w->n_strings = 0;
        w->chain_pos = 0;
        /* Unique in the process: stack slots remembered for the old tables are not for these. */
        w->tables_tag = sample_stack_tag_new();
        w->strings_emitted = 0;
        w->string_bytes_emitted = w->frames_emitted = w->nodes_emitted = 0;
        w->n_frames = 0;
        w->node_list[0] = (StackNode) {};
        w->n_nodes = 1; /* the root, never listed */
        return 0;
}

/* The tables stay, and the next chunk starts a chain that lists them all again. */
static void relist_tables(ChunkWriter *w) {
        w->chain_pos = 0;
        w->strings_emitted = 0;
        w->string_bytes_emitted = w->frames_emitted = w->nodes_emitted = 0;
        w->threads_emitted = 0;
        w->cgroups.emitted = 0;
        w->build_ids.emitted = w->build_ids.ids_emitted = 0;
}

static void clear_samples(ChunkWriter *w) {
        w->model_advanced = false;
        w->n_samples = 0;
        w->first_ns = UINT64_MAX;
        w->last_ns = 0;
        if (w->lost)
                memset(w->lost, 0, w->lost_alloc * sizeof(uint64_t));
        w->lost_total = 0;
}

int chunk_writer_reset(ChunkWriter *w) {
        int r;

        clear_samples(w);
        r = reset_tables(w);
        if (r < 0)
                /* They stay, and the next chunk starts a chain: the sample model has moved on past
                 * the dropped samples, which the file does not have. */
                relist_tables(w);
        return r;
}

void chunk_writer_set_chain(ChunkWriter *w, unsigned chunks) {
        w->chain_chunks = chunks < 1 ? 1 : chunks > CHUNK_CHAIN_MAX ? CHUNK_CHAIN_MAX : chunks;
}

int chunk_writer_restart_chain(ChunkWriter *w) {
        /* Between chunks the tables can simply start afresh: nothing refers to them. Where samples
         * already refer to them, or they could not be emptied, they stay. */
        if (w->n_samples > 0 || reset_tables(w) < 0)
                relist_tables(w);
        return 0;
}

int chunk_writer_commit(ChunkWriter *w) {
        int r;

        clear_samples(w);
        if (++w->chain_pos >= w->chain_chunks) {
                /* Bounds the tables' memory: the next chunk starts afresh. Where they could not be
                 * emptied, they stay, and the next chunk starts a chain that lists them all: the
                 * chain this chunk ended is full. */
                r = reset_tables(w);
                if (r < 0)
                        relist_tables(w);
                return r;
        }
        w->strings_emitted = w->n_strings;
        w->string_bytes_emitted = w->string_table.len;
        w->frames_emitted = w->n_frames;
        w->nodes_emitted = w->n_nodes - 1;
        w->threads_emitted = w->n_threads;
        w->cgroups.emitted = w->cgroups.n;
        w->build_ids.emitted = w->build_ids.n;
        w->build_ids.ids_emitted = w->build_ids.ids.len;
        return 0;
}

void chunk_writer_set_clock(ChunkWriter *w, const ClockMap *m) {
        w->clock = *m;
}

void chunk_writer_set_frequency(ChunkWriter *w, uint32_t hz) {
        w->interval_usec = hz > 0 ? (USEC_PER_SEC + hz / 2) / hz : 0;
}

void chunk_writer_set_time_resolution(ChunkWriter *w, uint32_t usec) {
        w->time_resolution_ns = (uint64_t) CLAMP(usec, 1U, WINDOW_TIME_RESOLUTION_USEC_MAX) * NSEC_PER_USEC;
}

size_t chunk_writer_n_samples(const ChunkWriter *w) {
        return w->n_samples;
}

bool chunk_writer_is_empty(const ChunkWriter *w) {
        return w->n_samples == 0 && w->lost_total == 0;
}

void chunk_writer_time_range(const ChunkWriter *w, uint64_t *ret_first_ns, uint64_t *ret_last_ns) {
        *ret_first_ns = w->first_ns;
        *ret_last_ns = w->last_ns;
}

static int intern_string(ChunkWriter *w, const char *s, uint32_t *ret) {
        size_t n = s ? strnlen(s, PROFILE_NAME_BYTES_MAX) : 0;
        uint64_t *slot;
        bool added;
        int r;

        /* Room first: a string the map has is in the table (its length varint is 10 bytes at most). */
        r = byte_buf_reserve(&w->string_table, 10 + n);
        if (r < 0)
                return r;
        slot = hashmap_slot(w->strings, s ?: "", n, w->n_strings, &added);
        if (!slot)
                return -ENOMEM;
        if (added) {
                (void) byte_buf_put_varint(&w->string_table, n);
                (void) byte_buf_put(&w->string_table, s, n);
                w->n_strings++;
        }
        *ret = (uint32_t) *slot;
        return 0;
}

/* What the frame map holds for a frame before it is in the list. */
#define FRAME_UNLISTED UINT64_MAX

static int intern_frame(ChunkWriter *w, const Frame *f, DsoMemo *memo, uint32_t *ret) {
        const char *sym = f->symbol ?: "";
        size_t n = strnlen(sym, PROFILE_NAME_BYTES_MAX);
        FrameTextKey k;
        uint64_t *slot;
        int r;

        if (!memo->valid || memo->dso != f->dso) {
                r = intern_string(w, f->dso, &memo->id);
                if (r < 0)
                        return r;
                memo->dso = f->dso;
                memo->valid = true;
        }
        k.dso = memo->id;
        k.flags = f->kernel ? 1 : 0;
        k.addr = f->addr;
        k.offset = f->offset;
        memcpy(k.symbol, sym, n);
        slot = hashmap_slot(w->frames, &k, offsetof(FrameTextKey, symbol) + n, FRAME_UNLISTED, NULL);
        if (!slot)
                return -ENOMEM;
        /* New, or left unlisted by a call that ran out of memory half way: listed now. The slot
         * stays where it is meanwhile, as nothing else is added to this map. */
        if (*slot == FRAME_UNLISTED) {
                FrameKey fk = { .dso = k.dso, .addr = k.addr, .offset = k.offset, .flags = k.flags };

                r = intern_string(w, f->symbol, &fk.symbol);
                if (r >= 0 && f->build_id)
                        /* once per DSO and chain: the first frame of it that knows the file's */
                        r = build_id_table_writer_add(&w->build_ids, k.dso, f->build_id);
                if (r < 0)
                        return r;
                if (!GREEDY_REALLOC(w->frame_list, w->frame_alloc, w->n_frames + 1))
                        return -ENOMEM;
                w->frame_list[w->n_frames] = fk;
                *slot = w->n_frames++;
        }
        *ret = (uint32_t) *slot;
        return 0;
}

static int intern_thread(ChunkWriter *w, const ThreadKey *k, uint32_t *ret) {
        uint64_t *slot;
        bool added;

        /* Room first: a thread the map has is in the list. */
        if (!GREEDY_REALLOC(w->thread_list, w->thread_alloc, w->n_threads + 1))
                return -ENOMEM;
        slot = hashmap_slot(w->threads, k, sizeof *k, w->n_threads, &added);
        if (!slot)
                return -ENOMEM;
        if (added)
                w->thread_list[w->n_threads++] = *k;
        *ret = (uint32_t) *slot;
        return 0;
}

/* The node for frame under parent (0: the root), added when it is not there yet. */
static int intern_node(ChunkWriter *w, uint32_t parent, uint32_t frame, uint32_t *ret) {
        StackNode k = { .parent = parent, .frame = frame };
        uint64_t *slot;
        bool added;

        /* Room first: a node the map has is in the list. */
        if (!GREEDY_REALLOC(w->node_list, w->node_alloc, w->n_nodes + 1))
                return -ENOMEM;
        slot = hashmap_slot(w->nodes, &k, sizeof k, w->n_nodes, &added);
        if (!slot)
                return -ENOMEM;
        if (added)
                w->node_list[w->n_nodes++] = k;
        *ret = (uint32_t) *slot;
        return 0;
}

/* Interns frames[0..depth) and walks the tree from the outermost caller to frames[0], adding the
 * nodes it lacks; returns frames[0]'s. */
static int intern_stack(ChunkWriter *w, const Frame *frames, uint32_t depth, DsoMemo *memo, uint32_t *ret) {
        uint32_t ids[PROFILE_STACK_DEPTH_MAX], node = 0;
        int r;

        assert(depth <= PROFILE_STACK_DEPTH_MAX);
        for (uint32_t i = 0; i < depth; i++) {
                r = intern_frame(w, &frames[i], memo, &ids[i]);
                if (r < 0)
                        return r;
        }
        for (uint32_t i = depth; i > 0; i--) {
                r = intern_node(w, node, ids[i - 1], &node);
                if (r < 0)
                        return r;
        }
        *ret = node;
        return 0;
}

/* A slot tagged for these tables gives its node; else the node is made from frames and remembered there. */
static int intern_stack_slot(ChunkWriter *w, SampleStackSlot *slot, const Frame *frames, uint32_t depth,
                             DsoMemo *memo, uint32_t *ret) {
        int r;

        if (slot && slot->tag == w->tables_tag) {
                *ret = slot->stack; /* these frames were interned into these tables */
                return 0;
        }
        r = intern_stack(w, frames, depth, memo, ret);
        if (r < 0)
                return r;
        if (slot)
                *slot = (SampleStackSlot) { .tag = w->tables_tag, .stack = *ret };
        return 0;
}

/* The sample's stack: whole from its stack slot, or its callers from theirs and the leaf added. */
static int intern_sample_stack(ChunkWriter *w, const Sample *s, uint32_t *ret) {
        /* Deeper stacks lose their outermost frames, as perf does at kernel.perf_event_max_stack. */
        uint32_t depth = MIN(s->n_frames, PROFILE_STACK_DEPTH_MAX), callers, leaf;
        DsoMemo memo = {};
        int r;

        if ((s->stack_slot && s->stack_slot->tag == w->tables_tag) || !s->callers_slot || depth == 0)
                return intern_stack_slot(w, s->stack_slot, s->frames, depth, &memo, ret);
        r = intern_stack_slot(w, s->callers_slot, s->frames + 1, depth - 1, &memo, &callers);
        if (r >= 0)
                r = intern_frame(w, &s->frames[0], &memo, &leaf);
        if (r >= 0)
                r = intern_node(w, callers, leaf, ret);
        if (r < 0)
                return r;
        if (s->stack_slot)
                *s->stack_slot = (SampleStackSlot) { .tag = w->tables_tag, .stack = *ret };
        return 0;
}

/* A CPU mostly runs the thread it ran for its last sample: that one is checked first, no hashing. */
static int intern_sample_thread(ChunkWriter *w, const Sample *s, uint32_t *ret) {
        LastThread *l = &w->last_thread[s->cpu % ELEMENTSOF(w->last_thread)];
        const char *comm_s = s->comm ?: "";
        uint32_t comm;
        int r;

        if (l->tables_tag == w->tables_tag && l->pid == s->pid && l->tid == s->tid &&
            strncmp(l->comm, comm_s, sizeof l->comm) == 0 && strnlen(comm_s, sizeof l->comm) < sizeof l->comm) {
                *ret = l->thread;
                return 0;
        }
        r = intern_string(w, s->comm, &comm);
        if (r < 0)
                return r;
        r = intern_thread(w, &(ThreadKey) { .pid = s->pid, .tid = s->tid, .comm = comm }, ret);
        if (r < 0)
                return r;
        *l = (LastThread) { .tables_tag = w->tables_tag, .pid = s->pid, .tid = s->tid, .thread = *ret };
        strncpy(l->comm, comm_s, sizeof l->comm - 1);
        return 0;
}

int chunk_writer_add_sample(ChunkWriter *w, const Sample *s) {
        uint32_t thread, stack, cgroup = 0, path;
        uint64_t t_ns = s->t_ns - s->t_ns % w->time_resolution_ns; /* the window's resolution, rounded down */
        int r;

        if (w->n_samples >= CHUNK_SAMPLES_MAX)
                return -ENOBUFS;
        if (s->cpu >= CHUNK_CPUS_MAX)
                return -EINVAL;
        r = intern_sample_stack(w, s, &stack);
        if (r < 0)
                return r;
        r = intern_sample_thread(w, s, &thread);
        if (r < 0)
                return r;
        if (s->cgroup) {
                r = intern_string(w, s->cgroup, &path);
                if (r >= 0)
                        r = cgroup_table_writer_ref(&w->cgroups, path, &cgroup);
                if (r < 0)
                        return r;
        }
        if (!GREEDY_REALLOC(w->samples, w->samples_alloc, w->n_samples + 1))
                return -ENOMEM;
        w->samples[w->n_samples] = (PendingSample) {
                .t_ns = t_ns,
                .period = s->period,
                .cpu = s->cpu,
                .thread = thread,
                .stack = stack,
                .seq = (uint32_t) w->n_samples,
                .cgroup = cgroup,
        };
        w->n_samples++;
        w->first_ns = MIN(w->first_ns, t_ns);
        w->last_ns = MAX(w->last_ns, t_ns);
        return 0;
}

int chunk_writer_add_lost(ChunkWriter *w, uint32_t cpu, uint64_t n) {
        if (cpu >= 65536)
                return -EINVAL;
        if (!GREEDY_REALLOC0(w->lost, w->lost_alloc, (size_t) cpu + 1))
                return -ENOMEM;
        w->lost[cpu] += n;
        w->lost_total += n;
        return 0;
}

/* Time order; samples of one instant (common at a coarse resolution, where every CPU's timer
 * lands on the same millisecond) go by CPU, so the CPU and thread columns repeat from one instant
 * to the next instead of following the order the CPUs' buffers were drained in. */
static int cmp_pending(const void *a, const void *b) {
        const PendingSample *x = a, *y = b;
        if (x->t_ns != y->t_ns)
                return x->t_ns < y->t_ns ? -1 : 1;
        if (x->cpu != y->cpu)
                return x->cpu < y->cpu ? -1 : 1;
        return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static const FrameKey *sort_base;

static int cmp_frame_order(const void *a, const void *b) {
        const FrameKey *x = &sort_base[*(const uint32_t *) a], *y = &sort_base[*(const uint32_t *) b];
        if (x->dso != y->dso)
                return x->dso < y->dso ? -1 : 1;
        if (x->addr != y->addr)
                return x->addr < y->addr ? -1 : 1;
        if (x->symbol != y->symbol)
                return x->symbol < y->symbol ? -1 : 1;
        if (x->offset != y->offset)
                return x->offset < y->offset ? -1 : 1;
        return x->flags < y->flags ? -1 : x->flags > y->flags;
}

/*
 * Orders the frames this chunk lists (those from frames_emitted on): frame_order maps output
 * position to frame id, frame_rank a frame id to its id in the file. Earlier frames of the chain
 * keep the ranks they were given.
 */
static int sort_frames(ChunkWriter *w) {
        size_t base = w->frames_emitted;

        if (!GREEDY_REALLOC(w->frame_order, w->frame_order_alloc, w->n_frames) ||
            !GREEDY_REALLOC(w->frame_rank, w->frame_rank_alloc, w->n_frames))
                return -ENOMEM;
        for (size_t i = base; i < w->n_frames; i++)
                w->frame_order[i] = (uint32_t) i;
        sort_base = w->frame_list; /* one writer thread; qsort has no context argument */
        if (w->n_frames > base) /* without frames the arrays may still be NULL, which qsort may not get */
                qsort(w->frame_order + base, w->n_frames - base, sizeof(uint32_t), cmp_frame_order);
        for (size_t i = base; i < w->n_frames; i++)
                w->frame_rank[w->frame_order[i]] = (uint32_t) i;
        return 0;
}

/*
 * Each sample's time, thread and stack, range-coded with the chain's model (store-model.h): a
 * sample on a busy CPU mostly costs a fraction of a bit for its time, a bit or two for its thread
 * and a handful for its stack, where plain ids and time deltas cost bytes.
 */
static int put_sample_stream(ChunkWriter *w, ByteBuf *b) {
        RcEncoder e;
        int r;

        sample_model_begin_chunk(w->model, w->n_samples > 0 ? w->first_ns / NSEC_PER_USEC : 0, w->interval_usec,
                                 w->time_resolution_ns / NSEC_PER_USEC);
        w->stream.len = 0;
        rc_encoder_init(&e, &w->stream);
        for (size_t i = 0; i < w->n_samples; i++) {
                const PendingSample *p = &w->samples[i];

                r = sample_model_encode(w->model, &e, p->cpu, p->t_ns / NSEC_PER_USEC, p->thread,
                                        w->thread_list[p->thread].comm, p->stack, (uint32_t) w->n_threads,
                                        (uint32_t) w->n_nodes);
                if (r >= 0)
                        r = sample_model_encode_cgroup(w->model, &e, p->cpu, p->thread, p->cgroup,
                                                       cgroup_table_writer_n_refs(&w->cgroups));
                if (r < 0)
                        return r;
        }
        r = rc_encoder_finish(&e);
        if (r < 0)
                return r;
        r = byte_buf_put_varint(b, w->stream.len);
        if (r < 0)
                return r;
        return byte_buf_put(b, w->stream.data, w->stream.len);
}

static int encode_payload(ChunkWriter *w, ByteBuf *b) {
        const ClockMap *m = &w->clock, *base = &w->chain_clock;
        uint64_t prev, n_lost = 0;
        int r = 0;

#define PUT(v)                                                                                               \
        do {                                                                                                 \
                r = byte_buf_put_varint(b, (v));                                                             \
                if (r < 0)                                                                                   \
                        return r;                                                                            \
        } while (0)

        /* What a chunk is coded against starts afresh with every chain, as the tables do: the previous
         * chunk's clock mapping and the sample model. */
        if (w->chain_pos == 0) {
                w->chain_clock = (ClockMap) {};
                r = sample_model_reset(w->model);
                if (r < 0)
                        return r;
        }

        /* The clock mapping, against the one the chain's previous chunk gave (zeros for a chain's
         * first): it changes only when re-measured, so a chunk mostly spends a byte a field on it. */
        b->len = 0;
        PUT((uint64_t) m->method);
        PUT(zigzag_encode((int64_t) ((uint64_t) m->perf_minus_mono_ns - (uint64_t) base->perf_minus_mono_ns)));
        PUT(zigzag_encode((int64_t) ((uint64_t) m->realtime_minus_mono_ns - (uint64_t) base->realtime_minus_mono_ns)));
        PUT(zigzag_encode((int64_t) (m->error_ns - base->error_ns)));
        PUT(zigzag_encode((int64_t) (m->measured_mono_ns - base->measured_mono_ns)));
        PUT(w->interval_usec);
        w->chain_clock = *m;

        /* Each table: the count the chain defined before this chunk, the count added, the additions. */
        PUT(w->strings_emitted);
        PUT(w->n_strings - w->strings_emitted);
        r = byte_buf_put(b, w->string_table.data + w->string_bytes_emitted,
                         w->string_table.len - w->string_bytes_emitted);
        if (r < 0)
                return r;

        /* Frames go out sorted by DSO and address, so the address deltas are small; ids are remapped. */
        r = sort_frames(w);
        if (r < 0)
                return r;
        PUT(w->frames_emitted);
        PUT(w->n_frames - w->frames_emitted);
        for (size_t i = w->frames_emitted; i < w->n_frames; i++)
                PUT(w->frame_list[w->frame_order[i]].symbol);
        for (size_t i = w->frames_emitted; i < w->n_frames; i++)
                PUT(w->frame_list[w->frame_order[i]].dso);
        prev = 0;
        for (size_t i = w->frames_emitted; i < w->n_frames; i++) {
                PUT(zigzag_encode((int64_t) (w->frame_list[w->frame_order[i]].addr - prev)));
                prev = w->frame_list[w->frame_order[i]].addr;
        }
        /* An entry in the same symbol as the one before it is that far from it: its offset is predicted.
         * Not from an offset of 0, which is what unresolved frames (all of one "symbol") carry. */
        for (size_t i = w->frames_emitted; i < w->n_frames; i++) {
                const FrameKey *f = &w->frame_list[w->frame_order[i]];
                const FrameKey *p = i > w->frames_emitted ? &w->frame_list[w->frame_order[i - 1]] : NULL;
                bool same = p && p->symbol == f->symbol && p->dso == f->dso && p->offset != 0;
                uint64_t guess = same ? p->offset + (f->addr - p->addr) : 0;

                PUT(zigzag_encode((int64_t) (f->offset - guess)));
        }
        for (size_t i = w->frames_emitted; i < w->n_frames; i++)
                PUT(w->frame_list[w->frame_order[i]].flags);

        /* stack nodes: how far back the parent is (a path extends the node made just before it, mostly),
         * then the frames */
        PUT(w->nodes_emitted);
        PUT(w->n_nodes - 1 - w->nodes_emitted);
        for (size_t i = w->nodes_emitted + 1; i < w->n_nodes; i++)
                PUT(i - w->node_list[i].parent);
        for (size_t i = w->nodes_emitted + 1; i < w->n_nodes; i++)
                PUT(w->frame_rank[w->node_list[i].frame]);

        /* threads: (pid, tid, comm) triples, so a sample names its thread with one small number */
        PUT(w->threads_emitted);
        PUT(w->n_threads - w->threads_emitted);
        for (size_t i = w->threads_emitted; i < w->n_threads; i++)
                PUT(w->thread_list[i].pid);
        for (size_t i = w->threads_emitted; i < w->n_threads; i++)
                PUT(zigzag_encode((int64_t) w->thread_list[i].tid - (int64_t) w->thread_list[i].pid));
        for (size_t i = w->threads_emitted; i < w->n_threads; i++)
                PUT(w->thread_list[i].comm);

        /* cgroups: the paths the chunk's samples ran in, so a sample names its cgroup with a bit */
        r = cgroup_table_writer_put(&w->cgroups, b);
        if (r < 0)
                return r;

        /* build ids: one per DSO and chain, for whoever looks a file's symbols up by it */
        r = build_id_table_writer_put(&w->build_ids, b);
        if (r < 0)
                return r;

        /* Samples go out in time order: per-CPU buffers drain out of order, readers want order. */
        qsort(w->samples, w->n_samples, sizeof(PendingSample), cmp_pending);
        for (size_t i = 0; i < w->n_samples; i++)
                PUT(w->samples[i].cpu);
        prev = 0;
        for (size_t i = 0; i < w->n_samples; i++) {
                PUT(zigzag_encode((int64_t) (w->samples[i].period - prev)));
                prev = w->samples[i].period;
        }
        r = put_sample_stream(w, b);
        if (r < 0)
                return r;

        for (size_t i = 0; i < w->lost_alloc; i++)
                n_lost += w->lost[i] > 0;
        PUT(n_lost);
        for (size_t i = 0; i < w->lost_alloc; i++)
                if (w->lost[i] > 0) {
                        PUT(i);
                        PUT(w->lost[i]);
                }
#undef PUT
        return 0;
}

int chunk_writer_encode(ChunkWriter *w, ByteBuf *out) {
        uint8_t h[CHUNK_HEADER_BYTES] = {};
        int r;

        /* Encoding again what was encoded but never committed: the model has moved on past the chain
         * as the file has it, so this chunk starts a chain of its own. */
        if (w->model_advanced && w->chain_pos > 0) {
                r = chunk_writer_restart_chain(w);
                if (r < 0)
                        return r;
        }
        w->model_advanced = true;
        r = encode_payload(w, &w->raw);
        if (r < 0)
                return r;
        if (w->raw.len > COMPRESS_RAW_BYTES_MAX)
                return -E2BIG;
        r = compressor_run(w->compressor, w->raw.data, w->raw.len, &w->packed);
        if (r < 0)
                return r;

        memcpy(h, CHUNK_MAGIC, 4);
        put_le16(h + 4, CHUNK_FLAG_ZSTD);
        put_le16(h + 6, (uint16_t) w->chain_pos);
        put_le64(h + 8, w->n_samples > 0 ? w->first_ns : 0);
        put_le64(h + 16, w->n_samples > 0 ? w->last_ns : 0);
        put_le32(h + 24, (uint32_t) w->n_samples);
        put_le32(h + 28, (uint32_t) w->raw.len);
        put_le32(h + 32, (uint32_t) w->packed.len);
        put_le32(h + 36, crc32c(0, w->packed.data, w->packed.len));
        put_le32(h + 40, (uint32_t) MIN(w->lost_total, (uint64_t) UINT32_MAX));
        put_le32(h + 44, crc32c(0, h, 44));

        out->len = 0;
        r = byte_buf_put(out, h, sizeof h);
        if (r >= 0)
                r = byte_buf_put(out, w->packed.data, w->packed.len);
        return r;
}
