/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reading window files: the chunk index, resynchronising past damage, and decoding a chunk (and
 * the chain before it) into samples; see store-window.h.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic/alloc-util.h"
#include "basic/macro.h"
#include "basic/time-util.h"
#include "store/compress.h"
#include "store/range-coder.h"
#include "store/store-model.h"
#include "store/store-window-buildid.h"
#include "store/store-window-cgroup.h"
#include "store/store-window.h"

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
        uint32_t *frame_dso; /* each frame's DSO string id, for its build id */
        size_t frame_dso_alloc;
        uint32_t *node_parent, *node_frame; /* [0] is the root: the empty stack */
        uint8_t *node_depth;
        size_t n_nodes, node_parent_alloc, node_frame_alloc, node_depth_alloc;
        uint32_t *thread_pid, *thread_tid, *thread_comm;
        size_t n_threads, thread_pid_alloc, thread_tid_alloc, thread_comm_alloc;
        CgroupTableReader cgroups;
        BuildIdTableReader build_ids;
        ClockMap clock; /* the mapping the chain's last chunk gave; zeros before its first */
        SampleModel *model; /* the sample model, after the chain's samples so far */
};

static TableState *table_state_free(TableState *t) {
        if (!t)
                return NULL;
        free(t->strings);
        free(t->frames);
        free(t->frame_dso);
        free(t->node_parent);
        free(t->node_frame);
        free(t->node_depth);
        free(t->thread_pid);
        free(t->thread_tid);
        free(t->thread_comm);
        cgroup_table_reader_done(&t->cgroups);
        build_id_table_reader_done(&t->build_ids);
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

/* Hands the window file an allocation that strings of its samples point into (freed on failure). */
static int pool_add(WindowFile *w, char *p) {
        char **pools = reallocarray(w->pools, w->n_pools + 1, sizeof(char *));

        if (!pools) {
                free(p);
                return -ENOMEM;
        }
        w->pools = pools;
        w->pools[w->n_pools++] = p;
        return 0;
}

/* Appends one chunk's table additions to t. -EBADMSG if they do not continue t or are malformed. */
static int parse_tables(WindowFile *w, ByteCursor *c, size_t n, TableState *t) {
        _cleanup_free_ uint32_t *ids = NULL;
        ByteCursor probe;
        size_t add, bytes = 0, pool = 0, base;
        uint64_t prev;
        char *p;
        int r;

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
        r = pool_add(w, p);
        if (r < 0)
                return r;
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
        if (!GREEDY_REALLOC(t->frames, t->frames_alloc, base + add) ||
            !GREEDY_REALLOC(t->frame_dso, t->frame_dso_alloc, base + add))
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
                t->frames[base + i].dso = t->strings[t->frame_dso[base + i] = ids[2 * i + 1] =
                                                             (uint32_t) cursor_varint_max(c, t->n_strings)];
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

        if (w->header.version >= WINDOW_FORMAT_VERSION_NO_BUILD_IDS) {
                r = cgroup_table_reader_parse(&t->cgroups, c, t->n_strings, n);
                if (r < 0)
                        return r;
        }
        if (w->header.version >= WINDOW_FORMAT_VERSION) {
                char *build_id_pool;
                r = build_id_table_reader_parse(&t->build_ids, c, t->n_strings, n, &build_id_pool);
                if (r < 0)
                        return r;
                if (build_id_pool)
                        return pool_add(w, build_id_pool);
        }
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
                        for (uint32_t node = (uint32_t) i; node != 0; node = t->node_parent[node], f++) {
                                uint32_t fid = t->node_frame[node];

                                *f = t->frames[fid];
                                f->build_id = build_id_table_reader_get(&t->build_ids, t->frame_dso[fid]);
                        }
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
        r = parse_samples(&w->chunks[i], interval, resolution_ns(w), w->header.version >= WINDOW_FORMAT_VERSION_NO_BUILD_IDS,
                          &c,
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
