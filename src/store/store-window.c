/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Window file encoding and decoding; see store-window.h and docs/window-format.md.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic/alloc-util.h"
#include "basic/hashmap.h"
#include "basic/macro.h"
#include "basic/time-util.h"
#include "store/compress.h"
#include "store/range-coder.h"
#include "store/store-model.h"
#include "store/store-window-cgroup.h"
#include "store/store-window.h"

/* ---------------------------------------------------------------- file header */

void window_header_done(WindowHeader *h) {
        free(h->strings);
        *h = (WindowHeader) {};
}

static int put_string16(ByteBuf *b, const char *s) {
        size_t n = s ? strnlen(s, WINDOW_HEADER_STRING_BYTES_MAX) : 0;
        uint8_t len[2];
        int r;

        put_le16(len, (uint16_t) n);
        r = byte_buf_put(b, len, 2);
        if (r < 0)
                return r;
        return byte_buf_put(b, s, n);
}

int window_header_encode(const WindowHeaderInfo *info, uint64_t start_realtime_usec, uint64_t span_usec,
                         ByteBuf *out) {
        uint8_t fixed[WINDOW_HEADER_FIXED_BYTES] = {}, crc[4];
        int r;

        out->len = 0;
        memcpy(fixed, WINDOW_MAGIC, 8);
        put_le16(fixed + 8, WINDOW_FORMAT_VERSION);
        put_le16(fixed + 10, info->function_frames ? WINDOW_FLAG_FUNCTION_FRAMES : 0);
        /* header_len at 12 is filled in below */
        put_le64(fixed + 16, start_realtime_usec);
        put_le64(fixed + 24, span_usec);
        put_le32(fixed + 32, info->freq_hz);
        put_le32(fixed + 36, info->n_cpus);
        put_le32(fixed + 40, (uint32_t) info->clock.method);
        put_le32(fixed + 44, MAX(info->time_resolution_usec, 1U));
        put_le64(fixed + 48, (uint64_t) info->clock.perf_minus_mono_ns);
        put_le64(fixed + 56, (uint64_t) info->clock.realtime_minus_mono_ns);
        put_le64(fixed + 64, info->clock.error_ns);
        put_le64(fixed + 72, info->clock.measured_mono_ns);
        r = byte_buf_put(out, fixed, sizeof fixed);
        if (r >= 0)
                r = put_string16(out, info->host);
        if (r >= 0)
                r = put_string16(out, info->boot_id);
        if (r >= 0)
                r = put_string16(out, info->kernel_release);
        if (r >= 0)
                r = put_string16(out, info->event);
        if (r < 0)
                return r;
        put_le32(out->data + 12, (uint32_t) (out->len + 4));
        put_le32(crc, crc32c(0, out->data, out->len));
        return byte_buf_put(out, crc, 4);
}

int window_header_decode(const uint8_t *p, size_t n, WindowHeader *ret) {
        WindowHeader h = {};
        uint32_t len, method, flags, res;
        ByteCursor c;
        size_t pool = 0;
        const char **fields[4];

        if (n < WINDOW_HEADER_FIXED_BYTES + 8 + 4 || memcmp(p, WINDOW_MAGIC, 8) != 0)
                return -EBADMSG;
        if (get_le16(p + 8) != WINDOW_FORMAT_VERSION && get_le16(p + 8) != WINDOW_FORMAT_VERSION_NO_CGROUPS)
                return -EPROTONOSUPPORT;
        len = get_le32(p + 12);
        if (len < WINDOW_HEADER_FIXED_BYTES + 8 + 4 || len > n ||
            len > WINDOW_HEADER_FIXED_BYTES + 4 * (2 + WINDOW_HEADER_STRING_BYTES_MAX) + 4)
                return -EBADMSG;
        if (crc32c(0, p, len - 4) != get_le32(p + len - 4))
                return -EBADMSG;
        flags = get_le16(p + 10);
        if (flags & ~WINDOW_FLAGS_KNOWN)
                return -EPROTONOSUPPORT;
        res = get_le32(p + 44);
        if (res > WINDOW_TIME_RESOLUTION_USEC_MAX)
                return -EBADMSG;

        h.header_bytes = len;
        h.version = get_le16(p + 8);
        h.start_realtime_usec = get_le64(p + 16);
        h.span_usec = get_le64(p + 24);
        h.info.freq_hz = get_le32(p + 32);
        h.info.n_cpus = get_le32(p + 36);
        h.info.time_resolution_usec = MAX(res, 1U);
        h.info.function_frames = flags & WINDOW_FLAG_FUNCTION_FRAMES;
        method = get_le32(p + 40);
        h.info.clock = (ClockMap) {
                .method = method < _CLOCK_MAP_METHOD_MAX ? (ClockMapMethod) method : CLOCK_MAP_RECORDED,
                .perf_minus_mono_ns = (int64_t) get_le64(p + 48),
                .realtime_minus_mono_ns = (int64_t) get_le64(p + 56),
                .error_ns = get_le64(p + 64),
                .measured_mono_ns = get_le64(p + 72),
        };

        h.strings = malloc(len); /* the strings plus their NULs fit in the header's own size */
        if (!h.strings)
                return -ENOMEM;
        fields[0] = &h.info.host;
        fields[1] = &h.info.boot_id;
        fields[2] = &h.info.kernel_release;
        fields[3] = &h.info.event;
        c = (ByteCursor) { .p = p + WINDOW_HEADER_FIXED_BYTES, .end = p + len - 4 };
        for (size_t i = 0; i < 4; i++) {
                const uint8_t *l = cursor_bytes(&c, 2), *s;
                uint16_t sl = l ? get_le16(l) : 0;
                s = cursor_bytes(&c, sl);
                if (c.error || sl > WINDOW_HEADER_STRING_BYTES_MAX || memchr(s, 0, sl)) {
                        free(h.strings);
                        return -EBADMSG;
                }
                memcpy(h.strings + pool, s, sl);
                h.strings[pool + sl] = '\0';
                *fields[i] = h.strings + pool;
                pool += sl + 1;
        }
        *ret = h;
        return 0;
}

/* ---------------------------------------------------------------- chunk writer */

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

struct ChunkWriter {
        Compressor *compressor;
        ClockMap clock;
        uint64_t interval_usec; /* expected time between two samples of one CPU, 0 if unknown */
        uint64_t time_resolution_ns; /* sample times are cut to multiples of this */

        Hashmap *strings; /* bytes -> id */
        ByteBuf string_table;
        uint32_t n_strings;

        Hashmap *frames; /* FrameKey -> id */
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
        Hashmap *strings = hashmap_new(), *frames = hashmap_new(), *nodes = hashmap_new(), *threads = hashmap_new();

        /* The hash tables have no deletion; they are rebuilt, which is cheap next to zstd. */
        if (!strings || !frames || !nodes || !threads || !GREEDY_REALLOC(w->node_list, w->node_alloc, 1) ||
            cgroup_table_writer_reset(&w->cgroups) < 0) {
                hashmap_free(strings);
                hashmap_free(frames);
                hashmap_free(nodes);
                hashmap_free(threads);
                return -ENOMEM;
        }
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
        clear_samples(w);
        return reset_tables(w);
}

void chunk_writer_set_chain(ChunkWriter *w, unsigned chunks) {
        w->chain_chunks = chunks < 1 ? 1 : chunks > CHUNK_CHAIN_MAX ? CHUNK_CHAIN_MAX : chunks;
}

int chunk_writer_restart_chain(ChunkWriter *w) {
        /* Between chunks the tables can simply start afresh: nothing refers to them. */
        if (w->n_samples == 0)
                return reset_tables(w);
        /* Samples already refer to the tables: they stay, and the next chunk lists them all again. */
        w->chain_pos = 0;
        w->strings_emitted = 0;
        w->string_bytes_emitted = w->frames_emitted = w->nodes_emitted = 0;
        w->threads_emitted = 0;
        w->cgroups.emitted = 0;
        return 0;
}

int chunk_writer_commit(ChunkWriter *w) {
        clear_samples(w);
        if (++w->chain_pos >= w->chain_chunks)
                return reset_tables(w); /* bounds the tables' memory: the next chunk starts afresh */
        w->strings_emitted = w->n_strings;
        w->string_bytes_emitted = w->string_table.len;
        w->frames_emitted = w->n_frames;
        w->nodes_emitted = w->n_nodes - 1;
        w->threads_emitted = w->n_threads;
        w->cgroups.emitted = w->cgroups.n;
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

        slot = hashmap_slot(w->strings, s ?: "", n, w->n_strings, &added);
        if (!slot)
                return -ENOMEM;
        if (added) {
                r = byte_buf_put_varint(&w->string_table, n);
                if (r >= 0)
                        r = byte_buf_put(&w->string_table, s, n);
                if (r < 0)
                        return r;
                w->n_strings++;
        }
        *ret = (uint32_t) *slot;
        return 0;
}

static int intern_frame(ChunkWriter *w, const Frame *f, uint32_t *ret) {
        FrameKey k = { .addr = f->addr, .offset = f->offset, .flags = f->kernel ? 1 : 0 };
        uint64_t *slot;
        bool added;
        int r;

        r = intern_string(w, f->symbol, &k.symbol);
        if (r >= 0)
                r = intern_string(w, f->dso, &k.dso);
        if (r < 0)
                return r;
        slot = hashmap_slot(w->frames, &k, sizeof k, w->n_frames, &added);
        if (!slot)
                return -ENOMEM;
        if (added) {
                if (!GREEDY_REALLOC(w->frame_list, w->frame_alloc, w->n_frames + 1))
                        return -ENOMEM;
                w->frame_list[w->n_frames++] = k;
        }
        *ret = (uint32_t) *slot;
        return 0;
}

static int intern_thread(ChunkWriter *w, const ThreadKey *k, uint32_t *ret) {
        uint64_t *slot;
        bool added;

        slot = hashmap_slot(w->threads, k, sizeof *k, w->n_threads, &added);
        if (!slot)
                return -ENOMEM;
        if (added) {
                if (!GREEDY_REALLOC(w->thread_list, w->thread_alloc, w->n_threads + 1))
                        return -ENOMEM;
                w->thread_list[w->n_threads++] = *k;
        }
        *ret = (uint32_t) *slot;
        return 0;
}

/* Walks the tree from the outermost caller to the leaf, adding the nodes it lacks; returns the leaf's. */
static int intern_stack(ChunkWriter *w, const uint32_t *ids, uint32_t depth, uint32_t *ret) {
        uint32_t node = 0;

        for (uint32_t i = depth; i > 0; i--) {
                StackNode k = { .parent = node, .frame = ids[i - 1] };
                uint64_t *slot;
                bool added;

                slot = hashmap_slot(w->nodes, &k, sizeof k, w->n_nodes, &added);
                if (!slot)
                        return -ENOMEM;
                if (added) {
                        if (!GREEDY_REALLOC(w->node_list, w->node_alloc, w->n_nodes + 1))
                                return -ENOMEM;
                        w->node_list[w->n_nodes++] = k;
                }
                node = (uint32_t) *slot;
        }
        *ret = node;
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
        uint32_t ids[PROFILE_STACK_DEPTH_MAX], depth = MIN(s->n_frames, PROFILE_STACK_DEPTH_MAX), thread, stack;
        uint32_t cgroup = 0, path;
        uint64_t t_ns = s->t_ns - s->t_ns % w->time_resolution_ns; /* the window's resolution, rounded down */
        int r;

        if (w->n_samples >= CHUNK_SAMPLES_MAX)
                return -ENOBUFS;
        if (s->cpu >= CHUNK_CPUS_MAX)
                return -EINVAL;
        if (s->stack_slot && s->stack_slot->tag == w->tables_tag)
                stack = s->stack_slot->stack; /* this chain's frames were interned into these tables */
        else {
                /* Deeper stacks lose their outermost frames, as perf does at kernel.perf_event_max_stack. */
                for (uint32_t i = 0; i < depth; i++) {
                        r = intern_frame(w, &s->frames[i], &ids[i]);
                        if (r < 0)
                                return r;
                }
                r = intern_stack(w, ids, depth, &stack);
                if (r < 0)
                        return r;
                if (s->stack_slot)
                        *s->stack_slot = (SampleStackSlot) { .tag = w->tables_tag, .stack = stack };
        }
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

/* ---------------------------------------------------------------- reading */

static bool chunk_header_parse(const uint8_t *h, ChunkInfo *ret) {
        ChunkInfo c;

        if (memcmp(h, CHUNK_MAGIC, 4) != 0 || crc32c(0, h, 44) != get_le32(h + 44))
                return false;
        c = (ChunkInfo) {
                .flags = get_le16(h + 4),
                .first_ns = get_le64(h + 8),
                .last_ns = get_le64(h + 16),
                .n_samples = get_le32(h + 24),
                .raw_len = get_le32(h + 28),
                .stored_len = get_le32(h + 32),
                .lost = get_le32(h + 40),
                .chain_pos = get_le16(h + 6),
        };
        if (c.n_samples > CHUNK_SAMPLES_MAX || c.stored_len > CHUNK_STORED_BYTES_MAX ||
            c.raw_len > COMPRESS_RAW_BYTES_MAX || c.first_ns > c.last_ns || (c.flags & ~CHUNK_FLAG_ZSTD))
                return false;
        /* a stored payload is its own raw form; a chunk without samples has no time */
        if ((!(c.flags & CHUNK_FLAG_ZSTD) && c.raw_len != c.stored_len) || (c.n_samples == 0 && c.last_ns != 0))
                return false;
        *ret = c;
        return true;
}

typedef struct TableState TableState;
static TableState *table_state_free(TableState *t);

WindowFile *window_file_free(WindowFile *w) {
        if (!w)
                return NULL;
        safe_close(w->fd);
        free(w->path);
        window_header_done(&w->header);
        free(w->chunks);
        table_state_free(w->cache);
        for (size_t i = 0; i < w->n_pools; i++)
                free(w->pools[i]);
        free(w->pools);
        free(w);
        return NULL;
}

static int read_exact_at(int fd, void *buf, size_t n, uint64_t off) {
        size_t done = 0;

        while (done < n) {
                ssize_t k = pread(fd, (uint8_t *) buf + done, n - done, (off_t) (off + done));
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        return -ENODATA;
                done += (size_t) k;
        }
        return 0;
}

/* Looks for the next valid chunk header after a damaged one. Returns 1 and its offset, or 0. */
static int resync(WindowFile *w, uint64_t from, uint64_t *ret_offset) {
        const size_t block = 1 << 20;
        _cleanup_free_ uint8_t *buf = malloc(block + CHUNK_HEADER_BYTES);
        int r;

        if (!buf)
                return -ENOMEM;
        for (uint64_t base = from; base + CHUNK_HEADER_BYTES <= w->size; base += block) {
                size_t n = (size_t) MIN((uint64_t) block + CHUNK_HEADER_BYTES, w->size - base);
                r = read_exact_at(w->fd, buf, n, base);
                if (r < 0)
                        return r;
                for (size_t i = 0; i + CHUNK_HEADER_BYTES <= n && i < block; i++) {
                        ChunkInfo c;
                        if (buf[i] != 'T' || !chunk_header_parse(buf + i, &c))
                                continue;
                        *ret_offset = base + i;
                        return 1;
                }
        }
        return 0;
}

static int verify_payload(WindowFile *w, const ChunkInfo *c, ByteBuf *scratch) {
        uint8_t h[CHUNK_HEADER_BYTES];
        int r;

        scratch->len = 0;
        r = byte_buf_reserve(scratch, c->stored_len);
        if (r < 0)
                return r;
        r = read_exact_at(w->fd, scratch->data, c->stored_len, c->offset + CHUNK_HEADER_BYTES);
        if (r < 0)
                return r;
        r = read_exact_at(w->fd, h, sizeof h, c->offset);
        if (r < 0)
                return r;
        scratch->len = c->stored_len;
        return crc32c(0, scratch->data, c->stored_len) == get_le32(h + 36) ? 0 : -EBADMSG;
}

static void note_corrupt(WindowReadStats *st, uint64_t offset) {
        st->corrupt_chunks++;
        st->first_corrupt_offset = MIN(st->first_corrupt_offset, offset);
}

int window_file_open(const char *path, bool verify, WindowFile **ret) {
        _cleanup_(window_file_freep) WindowFile *w = NULL;
        _cleanup_(byte_buf_done) ByteBuf scratch = {};
        uint8_t fixed[WINDOW_HEADER_FIXED_BYTES + 4 * (2 + WINDOW_HEADER_STRING_BYTES_MAX) + 4];
        struct stat st;
        uint64_t pos;
        ssize_t n;
        int r;

        w = calloc(1, sizeof(WindowFile));
        if (!w)
                return -ENOMEM;
        w->fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (w->fd < 0)
                return -errno;
        w->path = strdup(path);
        if (!w->path)
                return -ENOMEM;
        if (fstat(w->fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EBADMSG;
        w->size = (uint64_t) st.st_size;

        n = pread(w->fd, fixed, sizeof fixed, 0);
        if (n < 0)
                return -errno;
        r = window_header_decode(fixed, (size_t) n, &w->header);
        if (r < 0)
                return r;

        w->stats = (WindowReadStats) {
                .first_corrupt_offset = UINT64_MAX,
                .good_end_offset = w->header.header_bytes,
        };
        pos = w->header.header_bytes;
        while (pos < w->size) {
                uint8_t h[CHUNK_HEADER_BYTES];
                ChunkInfo c;
                uint64_t next;

                if (w->size - pos < CHUNK_HEADER_BYTES) {
                        w->stats.truncated = true;
                        w->stats.truncated_offset = pos;
                        break;
                }
                r = read_exact_at(w->fd, h, sizeof h, pos);
                if (r < 0)
                        return r;
                if (!chunk_header_parse(h, &c)) {
                        r = resync(w, pos + 1, &next);
                        if (r < 0)
                                return r;
                        if (r == 0) {
                                /* Nothing valid follows: an unfinished tail, not damage in the middle. */
                                w->stats.truncated = true;
                                w->stats.truncated_offset = pos;
                                break;
                        }
                        note_corrupt(&w->stats, pos);
                        pos = next;
                        continue;
                }
                c.offset = pos;
                if (c.stored_len > w->size - pos - CHUNK_HEADER_BYTES) {
                        w->stats.truncated = true;
                        w->stats.truncated_offset = pos;
                        break;
                }
                if (w->n_chunks >= WINDOW_CHUNKS_MAX)
                        return -E2BIG;
                if (verify) {
                        r = verify_payload(w, &c, &scratch);
                        if (r == -EBADMSG) {
                                c.corrupt = true;
                                note_corrupt(&w->stats, pos);
                        } else if (r < 0)
                                return r;
                }
                w->chunks = reallocarray(w->chunks, w->n_chunks + 1, sizeof(ChunkInfo));
                if (!w->chunks)
                        return -ENOMEM;
                w->chunks[w->n_chunks++] = c;
                w->stats.chunks++;
                if (!c.corrupt) {
                        w->stats.samples += c.n_samples;
                        w->stats.lost += c.lost;
                        w->stats.good_end_offset = pos + CHUNK_HEADER_BYTES + c.stored_len;
                }
                pos += CHUNK_HEADER_BYTES + c.stored_len;
        }

        *ret = TAKE_PTR(w);
        return 0;
}

/*
 * The tables of a chain as decoded so far. Strings point into pools the WindowFile owns, so they
 * outlive both the state and the DecodedChunks made from it.
 */
struct TableState {
        const char **strings;
        size_t n_strings, strings_alloc;
        Frame *frames;
        size_t n_frames, frames_alloc;
        uint32_t *node_parent, *node_frame; /* [0] is the root: the empty stack */
        uint8_t *node_depth;
        size_t n_nodes, node_parent_alloc, node_frame_alloc, node_depth_alloc;
        uint32_t *thread_pid, *thread_tid, *thread_comm;
        size_t n_threads, thread_pid_alloc, thread_tid_alloc, thread_comm_alloc;
        CgroupTableReader cgroups;
        ClockMap clock; /* the mapping the chain's last chunk gave; zeros before its first */
        SampleModel *model; /* the sample model, after the chain's samples so far */
};

static TableState *table_state_free(TableState *t) {
        if (!t)
                return NULL;
        free(t->strings);
        free(t->frames);
        free(t->node_parent);
        free(t->node_frame);
        free(t->node_depth);
        free(t->thread_pid);
        free(t->thread_tid);
        free(t->thread_comm);
        cgroup_table_reader_done(&t->cgroups);
        sample_model_free(t->model);
        free(t);
        return NULL;
}
DEFINE_TRIVIAL_CLEANUP_FUNC(TableState *, table_state_free);

struct DecodedChunk {
        ClockMap clock;
        const char **strings; /* the chain's strings up to this chunk (pointers into the file's pools) */
        size_t n_strings;
        Frame *frames;                  /* the stacks this chunk's samples use, materialized, leaf first */
        uint32_t *stack_off, *stack_depth;
        SampleStackSlot *stack_slots; /* one per stack, handed with its samples, for consumers to memoize */
        size_t n_stacks;
        size_t n;
        uint64_t *t, *period;
        uint32_t *cpu, *pid, *tid, *comm, *stack; /* stack: index into stack_off/stack_depth */
        uint32_t *cgroup; /* the path's string id, UINT32_MAX for none */
        size_t n_lost;
        uint32_t *lost_cpu;
        uint64_t *lost_n;
};

DecodedChunk *decoded_chunk_free(DecodedChunk *c) {
        if (!c)
                return NULL;
        free(c->strings);
        free(c->frames);
        free(c->stack_off);
        free(c->stack_depth);
        free(c->stack_slots);
        free(c->t);
        free(c->period);
        free(c->cpu);
        free(c->pid);
        free(c->tid);
        free(c->comm);
        free(c->stack);
        free(c->cgroup);
        free(c->lost_cpu);
        free(c->lost_n);
        free(c);
        return NULL;
}

static int table_state_init(TableState *t) {
        t->model = sample_model_new();
        if (!t->model)
                return -ENOMEM;
        /* the root node: a stack of depth 0 */
        if (!GREEDY_REALLOC(t->node_parent, t->node_parent_alloc, 1) ||
            !GREEDY_REALLOC(t->node_frame, t->node_frame_alloc, 1) ||
            !GREEDY_REALLOC(t->node_depth, t->node_depth_alloc, 1))
                return -ENOMEM;
        t->node_parent[0] = t->node_frame[0] = 0;
        t->node_depth[0] = 0;
        t->n_nodes = 1;
        return 0;
}

/* The chunk's preamble: the clock mapping (against the chain's previous one, in t), and the
 * sampling interval times are predicted with. */
static void parse_preamble(ByteCursor *c, TableState *t, ClockMap *ret, uint64_t *ret_interval_usec) {
        const ClockMap *base = &t->clock;
        uint64_t method = cursor_varint(c);

        *ret = (ClockMap) {
                .method = method < _CLOCK_MAP_METHOD_MAX ? (ClockMapMethod) method : CLOCK_MAP_RECORDED,
                .perf_minus_mono_ns = (int64_t) ((uint64_t) base->perf_minus_mono_ns + (uint64_t) zigzag_decode(cursor_varint(c))),
                .realtime_minus_mono_ns =
                        (int64_t) ((uint64_t) base->realtime_minus_mono_ns + (uint64_t) zigzag_decode(cursor_varint(c))),
                .error_ns = base->error_ns + (uint64_t) zigzag_decode(cursor_varint(c)),
                .measured_mono_ns = base->measured_mono_ns + (uint64_t) zigzag_decode(cursor_varint(c)),
        };
        *ret_interval_usec = cursor_varint_max(c, USEC_PER_SEC * 3600);
        t->clock = *ret;
}

/* Appends one chunk's table additions to t. -EBADMSG if they do not continue t or are malformed. */
static int parse_tables(WindowFile *w, ByteCursor *c, size_t n, TableState *t) {
        _cleanup_free_ uint32_t *ids = NULL;
        ByteCursor probe;
        size_t add, bytes = 0, pool = 0, base;
        uint64_t prev;
        char *p;

        /* strings: measure first, so the pool is exactly as large as the strings */
        if (cursor_varint(c) != t->n_strings)
                return -EBADMSG;
        add = cursor_varint_max(c, n + 1);
        if (c->error)
                return -EBADMSG;
        probe = *c;
        for (size_t i = 0; i < add; i++) {
                size_t l = cursor_varint_max(&probe, PROFILE_NAME_BYTES_MAX + 1);
                const uint8_t *b = cursor_bytes(&probe, l);
                if (probe.error || memchr(b, 0, l))
                        return -EBADMSG;
                bytes += l + 1;
        }
        p = malloc(bytes ?: 1);
        if (!p)
                return -ENOMEM;
        w->pools = reallocarray(w->pools, w->n_pools + 1, sizeof(char *));
        if (!w->pools) {
                free(p);
                return -ENOMEM;
        }
        w->pools[w->n_pools++] = p;
        if (!GREEDY_REALLOC(t->strings, t->strings_alloc, t->n_strings + add))
                return -ENOMEM;
        for (size_t i = 0; i < add; i++) {
                size_t l = cursor_varint(c);
                memcpy(p + pool, cursor_bytes(c, l), l);
                p[pool + l] = '\0';
                t->strings[t->n_strings++] = p + pool;
                pool += l + 1;
        }

        if (cursor_varint(c) != t->n_frames)
                return -EBADMSG;
        add = cursor_varint_max(c, n + 1);
        if (c->error)
                return -EBADMSG;
        base = t->n_frames;
        if (!GREEDY_REALLOC(t->frames, t->frames_alloc, base + add))
                return -ENOMEM;
        /* Frames name strings: with none in the chain, there is no index to look up. */
        if (add > 0 && t->n_strings == 0)
                return -EBADMSG;
        if (add > 0)
                memset(t->frames + base, 0, add * sizeof(Frame));
        ids = new(uint32_t, 2 * add + 1); /* symbol and DSO string ids, for the offset prediction */
        if (!ids)
                return -ENOMEM;
        for (size_t i = 0; i < add; i++)
                t->frames[base + i].symbol = t->strings[ids[2 * i] = (uint32_t) cursor_varint_max(c, t->n_strings)];
        for (size_t i = 0; i < add; i++)
                t->frames[base + i].dso = t->strings[ids[2 * i + 1] = (uint32_t) cursor_varint_max(c, t->n_strings)];
        prev = 0;
        for (size_t i = 0; i < add; i++)
                prev = t->frames[base + i].addr = prev + (uint64_t) zigzag_decode(cursor_varint(c));
        for (size_t i = 0; i < add; i++) {
                Frame *f = &t->frames[base + i];
                bool same = i > 0 && ids[2 * i] == ids[2 * i - 2] && ids[2 * i + 1] == ids[2 * i - 1] &&
                            f[-1].offset != 0;
                uint64_t guess = same ? f[-1].offset + (f->addr - f[-1].addr) : 0;

                f->offset = guess + (uint64_t) zigzag_decode(cursor_varint(c));
        }
        for (size_t i = 0; i < add; i++)
                t->frames[base + i].kernel = cursor_varint(c) & 1;
        if (c->error)
                return -EBADMSG;
        t->n_frames += add;

        /* stack nodes, ids from 1 (the root is 0): parent as a distance back, then the frame */
        if (cursor_varint(c) != t->n_nodes - 1)
                return -EBADMSG;
        add = cursor_varint_max(c, n + 1);
        if (c->error)
                return -EBADMSG;
        base = t->n_nodes;
        if (!GREEDY_REALLOC(t->node_parent, t->node_parent_alloc, base + add) ||
            !GREEDY_REALLOC(t->node_frame, t->node_frame_alloc, base + add) ||
            !GREEDY_REALLOC(t->node_depth, t->node_depth_alloc, base + add))
                return -ENOMEM;
        for (size_t i = 0; i < add; i++) {
                uint64_t back = cursor_varint(c);
                size_t id = base + i, parent;

                if (c->error || back < 1 || back > id)
                        return -EBADMSG;
                parent = id - back;
                if (t->node_depth[parent] >= PROFILE_STACK_DEPTH_MAX)
                        return -EBADMSG;
                t->node_parent[id] = (uint32_t) parent;
                t->node_depth[id] = (uint8_t) (t->node_depth[parent] + 1);
        }
        for (size_t i = 0; i < add; i++)
                t->node_frame[base + i] = (uint32_t) cursor_varint_max(c, t->n_frames);
        if (c->error)
                return -EBADMSG;
        t->n_nodes += add;

        if (cursor_varint(c) != t->n_threads)
                return -EBADMSG;
        add = cursor_varint_max(c, n + 1);
        if (c->error)
                return -EBADMSG;
        base = t->n_threads;
        if (!GREEDY_REALLOC(t->thread_pid, t->thread_pid_alloc, base + add) ||
            !GREEDY_REALLOC(t->thread_tid, t->thread_tid_alloc, base + add) ||
            !GREEDY_REALLOC(t->thread_comm, t->thread_comm_alloc, base + add))
                return -ENOMEM;
        for (size_t i = 0; i < add; i++)
                t->thread_pid[base + i] = (uint32_t) cursor_varint_max(c, (uint64_t) UINT32_MAX + 1);
        for (size_t i = 0; i < add; i++)
                t->thread_tid[base + i] = (uint32_t) ((int64_t) t->thread_pid[base + i] + zigzag_decode(cursor_varint(c)));
        for (size_t i = 0; i < add; i++)
                t->thread_comm[base + i] = (uint32_t) cursor_varint_max(c, t->n_strings);
        if (c->error)
                return -EBADMSG;
        t->n_threads += add;

        if (w->header.version >= WINDOW_FORMAT_VERSION)
                return cgroup_table_reader_parse(&t->cgroups, c, t->n_strings, n);
        return 0;
}

/* Decodes the samples into d; with materialize false (replaying a chain) it stops once they are
 * checked, without building the stacks and string list only a caller of the chunk needs. */
static int parse_samples(const ChunkInfo *info, uint64_t interval_usec, uint64_t resolution_ns, bool cgroups,
                         ByteCursor *c, size_t n, TableState *t, bool materialize, DecodedChunk *d) {
        _cleanup_free_ uint32_t *local = NULL;
        size_t total_depth = 0, stream_len;
        const uint8_t *stream;
        RcDecoder rd;
        uint64_t prev;

        d->n = info->n_samples;
        if (d->n > n) /* each sample takes at least 7 bytes */
                return -EBADMSG;
        d->t = new(uint64_t, d->n ?: 1);
        d->period = new(uint64_t, d->n ?: 1);
        d->cpu = new(uint32_t, d->n ?: 1);
        d->pid = new(uint32_t, d->n ?: 1);
        d->tid = new(uint32_t, d->n ?: 1);
        d->comm = new(uint32_t, d->n ?: 1);
        d->stack = new(uint32_t, d->n ?: 1);
        d->cgroup = new(uint32_t, d->n ?: 1);
        if (!d->t || !d->period || !d->cpu || !d->pid || !d->tid || !d->comm || !d->stack || !d->cgroup)
                return -ENOMEM;
        for (size_t i = 0; i < d->n; i++)
                d->cpu[i] = (uint32_t) cursor_varint_max(c, CHUNK_CPUS_MAX);
        prev = 0;
        for (size_t i = 0; i < d->n; i++)
                prev = d->period[i] = prev + (uint64_t) zigzag_decode(cursor_varint(c));
        if (c->error)
                return -EBADMSG;
        stream_len = cursor_varint_max(c, n + 1);
        stream = cursor_bytes(c, stream_len);
        if (c->error)
                return -EBADMSG;
        rc_decoder_init(&rd, stream, stream_len);
        sample_model_begin_chunk(t->model, info->first_ns / NSEC_PER_USEC, interval_usec, resolution_ns / NSEC_PER_USEC);
        for (size_t i = 0; i < d->n; i++) {
                uint32_t th, node, ref = 0;
                uint64_t us;
                int r;

                r = sample_model_decode(t->model, &rd, d->cpu[i], t->thread_comm, (uint32_t) t->n_threads,
                                        (uint32_t) t->n_nodes, &us, &th, &node);
                if (r >= 0 && cgroups)
                        r = sample_model_decode_cgroup(t->model, &rd, d->cpu[i], th, (uint32_t) t->cgroups.n + 1,
                                                       &ref);
                if (r < 0)
                        return r;
                d->cgroup[i] = ref == 0 ? UINT32_MAX : t->cgroups.path[ref - 1];
                d->t[i] = us * NSEC_PER_USEC;
                /* time order within the chunk is part of the format, as is the header's resolution */
                if ((i > 0 && d->t[i] < d->t[i - 1]) || d->t[i] % resolution_ns != 0)
                        return -EBADMSG;
                d->pid[i] = t->thread_pid[th];
                d->tid[i] = t->thread_tid[th];
                d->comm[i] = t->thread_comm[th];
                d->stack[i] = node;
        }
        if (!rc_decoder_finished(&rd))
                return -EBADMSG;

        d->n_lost = cursor_varint_max(c, 65536 + 1);
        if (c->error)
                return -EBADMSG;
        d->lost_cpu = new(uint32_t, d->n_lost ?: 1);
        d->lost_n = new(uint64_t, d->n_lost ?: 1);
        if (!d->lost_cpu || !d->lost_n)
                return -ENOMEM;
        for (size_t i = 0; i < d->n_lost; i++) {
                d->lost_cpu[i] = (uint32_t) cursor_varint_max(c, 65536);
                d->lost_n[i] = cursor_varint(c);
        }
        if (c->error || c->p != c->end)
                return -EBADMSG;
        if (d->n > 0 && (d->t[0] != info->first_ns || d->t[d->n - 1] != info->last_ns))
                return -EBADMSG;
        if (!materialize)
                return 0;

        /* Materialize only the stacks this chunk uses: a chain's tables can be much larger. */
        local = new(uint32_t, t->n_nodes);
        d->stack_off = new(uint32_t, MIN(d->n, t->n_nodes) ?: 1);
        d->stack_depth = new(uint32_t, MIN(d->n, t->n_nodes) ?: 1);
        if (!local || !d->stack_off || !d->stack_depth)
                return -ENOMEM;
        memset(local, 0xff, t->n_nodes * sizeof(uint32_t));
        for (size_t i = 0; i < d->n; i++) {
                uint32_t sid = d->stack[i];
                if (local[sid] == UINT32_MAX) {
                        local[sid] = (uint32_t) d->n_stacks;
                        d->stack_off[d->n_stacks] = (uint32_t) total_depth;
                        d->stack_depth[d->n_stacks++] = t->node_depth[sid];
                        total_depth += t->node_depth[sid];
                }
                d->stack[i] = local[sid];
        }
        d->frames = new(Frame, total_depth ?: 1);
        d->stack_slots = new0(SampleStackSlot, d->n_stacks);
        if (!d->frames || !d->stack_slots)
                return -ENOMEM;
        /* a node is the leaf of its stack; its parents are the callers, outward */
        for (size_t i = 0; i < t->n_nodes; i++)
                if (local[i] != UINT32_MAX) {
                        Frame *f = d->frames + d->stack_off[local[i]];
                        for (uint32_t node = (uint32_t) i; node != 0; node = t->node_parent[node])
                                *f++ = t->frames[t->node_frame[node]];
                }
        d->strings = new(const char *, t->n_strings ?: 1);
        if (!d->strings)
                return -ENOMEM;
        if (t->n_strings > 0)
                memcpy(d->strings, t->strings, t->n_strings * sizeof(const char *));
        d->n_strings = t->n_strings;
        return 0;
}

static uint64_t resolution_ns(const WindowFile *w) {
        return (uint64_t) MAX(w->header.info.time_resolution_usec, 1U) * NSEC_PER_USEC;
}

/* Reads, checks and decompresses chunk i's payload into raw. */
static int load_payload(WindowFile *w, size_t i, ByteBuf *stored, ByteBuf *raw, const uint8_t **ret_p,
                        size_t *ret_n) {
        const ChunkInfo *c = &w->chunks[i];
        int r;

        /* Every payload holds at least the clock and the table counts: an empty one is damage (and
         * no buffer gets allocated for it). */
        if (c->stored_len == 0)
                return -EBADMSG;
        r = verify_payload(w, c, stored);
        if (r < 0)
                return r;
        if (!(c->flags & CHUNK_FLAG_ZSTD)) {
                *ret_p = stored->data;
                *ret_n = stored->len;
                return 0;
        }
        r = decompress_exact(stored->data, stored->len, c->raw_len, raw);
        if (r < 0)
                return r;
        *ret_p = raw->data;
        *ret_n = raw->len;
        return 0;
}

/*
 * Decodes chunk i onto its chain's state t (the tables, clock and model as they stand before it,
 * which it moves on past itself). -EBADMSG if the chunk is damaged; ret may be NULL when only t is
 * wanted (replaying a chain).
 */
static int decode_payload(WindowFile *w, size_t i, TableState *t, DecodedChunk **ret) {
        _cleanup_(byte_buf_done) ByteBuf stored = {}, raw = {};
        _cleanup_(decoded_chunk_freep) DecodedChunk *d = NULL;
        const uint8_t *p;
        size_t n;
        ByteCursor c;
        uint64_t interval;
        int r;

        r = load_payload(w, i, &stored, &raw, &p, &n);
        if (r < 0)
                return r;
        d = calloc(1, sizeof(DecodedChunk));
        if (!d)
                return -ENOMEM;
        c = (ByteCursor) { .p = p, .end = p + n };
        parse_preamble(&c, t, &d->clock, &interval);
        r = parse_tables(w, &c, n, t);
        if (r < 0)
                return r;
        r = parse_samples(&w->chunks[i], interval, resolution_ns(w), w->header.version >= WINDOW_FORMAT_VERSION, &c,
                          n, t, /* materialize= */ ret != NULL, d);
        if (r < 0)
                return r;
        if (ret)
                *ret = TAKE_PTR(d);
        return 0;
}

static void mark_corrupt(WindowFile *w, size_t i) {
        /* Counted once, whether the scan or a decode found it. */
        if (!w->chunks[i].corrupt) {
                w->chunks[i].corrupt = true;
                note_corrupt(&w->stats, w->chunks[i].offset);
        }
}

/* Returns the tables and model of chunk i's chain as they stand before chunk i, rebuilding them if needed. */
static int chain_state(WindowFile *w, size_t i, TableState **ret) {
        _cleanup_(table_state_freep) TableState *t = NULL;
        uint32_t pos = w->chunks[i].chain_pos;
        int r;

        /* A chunk continues the chain of the chunk right before it in the file, with nothing between. */
        if (pos > 0 && (i == 0 || w->chunks[i - 1].chain_pos != pos - 1 ||
                        w->chunks[i - 1].offset + CHUNK_HEADER_BYTES + w->chunks[i - 1].stored_len != w->chunks[i].offset))
                return -EBADMSG;
        if (pos > 0 && w->cache && w->cache_after == i - 1) {
                *ret = TAKE_PTR(w->cache);
                return 0;
        }
        t = calloc(1, sizeof(TableState));
        if (!t || table_state_init(t) < 0)
                return -ENOMEM;
        if (pos == 0) {
                *ret = TAKE_PTR(t);
                return 0;
        }
        /* The chain must be whole: the pos chunks before, adjacent in the file, each intact. */
        if (pos > i)
                return -EBADMSG;
        for (size_t k = i - pos; k < i; k++) {
                const ChunkInfo *c = &w->chunks[k];
                if (c->corrupt || c->chain_pos != k - (i - pos) ||
                    c->offset + CHUNK_HEADER_BYTES + c->stored_len != w->chunks[k + 1].offset)
                        return -EBADMSG;
        }
        /* the samples too: the model that codes this chunk's times, threads and stacks learned from them */
        for (size_t k = i - pos; k < i; k++) {
                r = decode_payload(w, k, t, NULL);
                if (r == -EBADMSG)
                        mark_corrupt(w, k);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(t);
        return 0;
}

int window_file_decode_chunk(WindowFile *w, size_t i, DecodedChunk **ret) {
        _cleanup_(decoded_chunk_freep) DecodedChunk *d = NULL;
        _cleanup_(table_state_freep) TableState *t = NULL;
        int r;

        assert(i < w->n_chunks);
        if (w->chunks[i].corrupt)
                return -EBADMSG;
        r = chain_state(w, i, &t);
        if (r == -EBADMSG)
                goto corrupt; /* its chain is broken: this chunk cannot be read either */
        if (r < 0)
                return r;
        r = decode_payload(w, i, t, &d);
        if (r == -EBADMSG)
                goto corrupt;
        if (r < 0)
                return r;
        table_state_free(w->cache);
        w->cache = TAKE_PTR(t);
        w->cache_after = i;
        *ret = TAKE_PTR(d);
        return 0;

corrupt:
        mark_corrupt(w, i);
        return -EBADMSG;
}

size_t decoded_chunk_n_samples(const DecodedChunk *c) {
        return c->n;
}

uint64_t decoded_chunk_sample_time(const DecodedChunk *c, size_t i) {
        return c->t[i];
}

void decoded_chunk_sample(const DecodedChunk *c, size_t i, Sample *ret) {
        *ret = (Sample) {
                .t_ns = c->t[i],
                .cpu = c->cpu[i],
                .pid = c->pid[i],
                .tid = c->tid[i],
                .comm = c->strings[c->comm[i]],
                .period = c->period[i],
                .n_frames = c->stack_depth[c->stack[i]],
                .frames = c->frames + c->stack_off[c->stack[i]],
                .cgroup = c->cgroup[i] == UINT32_MAX ? NULL : c->strings[c->cgroup[i]],
                .stack_slot = c->stack_slots ? &c->stack_slots[c->stack[i]] : NULL,
        };
}

const ClockMap *decoded_chunk_clock(const DecodedChunk *c) {
        return &c->clock;
}

size_t decoded_chunk_n_lost(const DecodedChunk *c) {
        return c->n_lost;
}

void decoded_chunk_lost(const DecodedChunk *c, size_t i, uint32_t *ret_cpu, uint64_t *ret_n) {
        *ret_cpu = c->lost_cpu[i];
        *ret_n = c->lost_n[i];
}

int window_read(const char *path, SliceHandler h, void *ud, WindowReadStats *ret_stats) {
        _cleanup_(window_file_freep) WindowFile *w = NULL;
        int r;

        r = window_file_open(path, /* verify= */ false, &w);
        if (r < 0)
                return r;
        for (size_t i = 0; i < w->n_chunks; i++) {
                _cleanup_(decoded_chunk_freep) DecodedChunk *d = NULL;

                r = window_file_decode_chunk(w, i, &d);
                if (r == -EBADMSG)
                        continue;
                if (r < 0)
                        return r;
                for (size_t k = 0; k < d->n; k++) {
                        Sample s;
                        decoded_chunk_sample(d, k, &s);
                        r = h(&s, ud);
                        if (r < 0)
                                return r;
                }
        }
        if (ret_stats) {
                /* Header-derived totals count only chunks that turned out intact. */
                w->stats.samples = w->stats.lost = 0;
                for (size_t i = 0; i < w->n_chunks; i++)
                        if (!w->chunks[i].corrupt) {
                                w->stats.samples += w->chunks[i].n_samples;
                                w->stats.lost += w->chunks[i].lost;
                        }
                *ret_stats = w->stats;
        }
        return 0;
}
