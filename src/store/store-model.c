/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The sample model of window chunks; see store-model.h and docs/window-format.md.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "basic/alloc-util.h"
#include "basic/hashmap.h"
#include "basic/macro.h"
#include "store/store-model.h"

/* The stacks one comm's samples had, most counted first. */
typedef struct StackContext {
        uint32_t *node, *count;
        size_t n, node_alloc, count_alloc;
        RcUintModel rank;
} StackContext;

/* What one CPU's samples so far predict of its next one. */
typedef struct CpuState {
        uint64_t next_us;    /* 1 + the time its next tick is expected at, unrounded; 0 before any */
        uint32_t thread;     /* 1 + the thread sampled last on it; 0 before any */
        bool last_on_time;   /* the last sample fell where predicted (or there was none) */
        uint32_t cgroup;     /* 1 + the cgroup reference of its last sample; 0 before any */
} CpuState;

struct SampleModel {
        RcProb same_thread;
        RcUintModel time[2], thread_rank, thread_back, stack_back; /* time: after a miss, after a hit */
        uint64_t first_us, interval_us, resolution_us; /* of the chunk being coded */
        uint32_t recent[SAMPLE_MODEL_RECENT_THREADS]; /* thread ids, most recently sampled first */
        size_t n_recent;
        CpuState *cpus; /* by CPU number */
        size_t cpus_alloc;
        StackContext **contexts; /* by comm string id; NULL until that comm has a sample */
        size_t contexts_alloc;
        Hashmap *where; /* (comm, node) -> position in its context; the writer's index */
        RcProb cgroup_same[2]; /* the prediction came from: [0] the thread, [1] the CPU */
        RcUintModel cgroup_ref;
        uint32_t *thread_cgroup; /* by thread id: 1 + its last sample's cgroup reference; 0 before any */
        size_t thread_cgroup_alloc;
};

static StackContext *context_free(StackContext *c) {
        if (!c)
                return NULL;
        free(c->node);
        free(c->count);
        free(c);
        return NULL;
}

static void clear(SampleModel *m) {
        for (size_t i = 0; i < m->contexts_alloc; i++)
                m->contexts[i] = context_free(m->contexts[i]);
        m->where = hashmap_free(m->where);
        if (m->cpus)
                memset(m->cpus, 0, m->cpus_alloc * sizeof(CpuState));
        m->n_recent = 0;
        if (m->thread_cgroup)
                memset(m->thread_cgroup, 0, m->thread_cgroup_alloc * sizeof(uint32_t));
        m->cgroup_same[0] = m->cgroup_same[1] = RC_PROB_INIT;
        rc_uint_model_init(&m->cgroup_ref);
        m->same_thread = RC_PROB_INIT;
        rc_uint_model_init(&m->time[0]);
        rc_uint_model_init(&m->time[1]);
        rc_uint_model_init(&m->thread_rank);
        rc_uint_model_init(&m->thread_back);
        rc_uint_model_init(&m->stack_back);
}

SampleModel *sample_model_new(void) {
        SampleModel *m = calloc(1, sizeof(SampleModel));

        if (m)
                clear(m);
        return m;
}

SampleModel *sample_model_free(SampleModel *m) {
        if (!m)
                return NULL;
        clear(m);
        free(m->contexts);
        free(m->cpus);
        free(m->thread_cgroup);
        free(m);
        return NULL;
}

int sample_model_reset(SampleModel *m) {
        clear(m);
        return 0;
}

static int cpu_state(SampleModel *m, uint32_t cpu, CpuState **ret) {
        if (!GREEDY_REALLOC0(m->cpus, m->cpus_alloc, (size_t) cpu + 1))
                return -ENOMEM;
        *ret = &m->cpus[cpu];
        return 0;
}

/* ---------------------------------------------------------------- times */

void sample_model_begin_chunk(SampleModel *m, uint64_t first_us, uint64_t interval_us, uint64_t resolution_us) {
        m->first_us = first_us;
        m->interval_us = interval_us;
        m->resolution_us = resolution_us ?: 1;
}

/* The unrounded time the CPU's next sample is expected at: a tick after the last expected one,
 * or the chunk's first time for a CPU without samples yet. */
static uint64_t expected_us(const SampleModel *m, const CpuState *c) {
        return c->next_us != 0 ? c->next_us - 1 : m->first_us;
}

static RcUintModel *time_model(SampleModel *m, const CpuState *c) {
        return &m->time[c->next_us == 0 || c->last_on_time];
}

/*
 * A fixed-frequency timer fires every interval_us on a busy CPU, so a sample is predicted at the
 * expected time rounded down to the resolution, and what is coded is how many resolution steps it
 * fell off that. A hit carries the unrounded expectation on, so that at 1 ms the 0.309 ms that a
 * 97 Hz interval has over 10 ms add up instead of being rounded away; a miss restarts from the
 * sample itself.
 */
static void time_advance(SampleModel *m, CpuState *c, uint64_t expected, uint64_t t_us, bool hit) {
        c->next_us = (hit ? expected : t_us) + m->interval_us + 1;
        c->last_on_time = hit;
}

static int encode_time(SampleModel *m, RcEncoder *e, CpuState *c, uint64_t t_us) {
        uint64_t expected = expected_us(m, c), predicted = expected - expected % m->resolution_us;
        int64_t steps;

        if (t_us % m->resolution_us != 0 || t_us > UINT64_MAX / 2)
                return -EINVAL;
        steps = t_us >= predicted ? (int64_t) ((t_us - predicted) / m->resolution_us)
                                  : -(int64_t) ((predicted - t_us) / m->resolution_us);
        rc_encode_uint64(e, time_model(m, c), zigzag_encode(steps));
        time_advance(m, c, expected, t_us, steps == 0);
        return 0;
}

static int decode_time(SampleModel *m, RcDecoder *d, CpuState *c, uint64_t *ret) {
        uint64_t expected = expected_us(m, c), predicted = expected - expected % m->resolution_us, t_us;
        int64_t steps = zigzag_decode(rc_decode_uint64(d, time_model(m, c)));
        uint64_t off;

        if (d->error)
                return -EBADMSG;
        /* times stay below 2^64 ns */
        off = steps >= 0 ? (uint64_t) steps : -(uint64_t) steps;
        if (off > (UINT64_MAX / 1000) / m->resolution_us)
                return -EBADMSG;
        off *= m->resolution_us;
        if (steps >= 0 ? off > UINT64_MAX / 1000 - predicted : off > predicted)
                return -EBADMSG;
        t_us = steps >= 0 ? predicted + off : predicted - off;
        time_advance(m, c, expected, t_us, steps == 0);
        *ret = t_us;
        return 0;
}

/* ---------------------------------------------------------------- threads */

/* Position of thread in the recency list, or n_recent. */
static size_t recent_find(const SampleModel *m, uint32_t thread) {
        size_t i = 0;

        while (i < m->n_recent && m->recent[i] != thread)
                i++;
        return i;
}

/* Moves the thread at position i (n_recent: not listed) to the front; the least recent falls off. */
static void recent_touch(SampleModel *m, size_t i, uint32_t thread) {
        if (i == m->n_recent) {
                if (m->n_recent < SAMPLE_MODEL_RECENT_THREADS)
                        m->n_recent++;
                i = m->n_recent - 1;
        }
        memmove(m->recent + 1, m->recent, i * sizeof(uint32_t));
        m->recent[0] = thread;
}

static void encode_thread(SampleModel *m, RcEncoder *e, CpuState *c, uint32_t thread, uint32_t n_threads) {
        uint32_t *last = &c->thread;
        size_t i;

        if (*last != 0)
                rc_encode_bit(e, &m->same_thread, *last - 1 != thread);
        if (*last == 0 || *last - 1 != thread) {
                i = recent_find(m, thread);
                if (i < m->n_recent)
                        rc_encode_uint(e, &m->thread_rank, (uint32_t) i + 1);
                else {
                        rc_encode_uint(e, &m->thread_rank, 0);
                        rc_encode_uint(e, &m->thread_back, n_threads - 1 - thread);
                }
        }
        recent_touch(m, recent_find(m, thread), thread);
        *last = thread + 1;
}

static int decode_thread(SampleModel *m, RcDecoder *d, CpuState *c, uint32_t n_threads, uint32_t *ret) {
        uint32_t *last = &c->thread, thread;

        if (*last != 0 && rc_decode_bit(d, &m->same_thread) == 0)
                thread = *last - 1;
        else {
                uint32_t rank = rc_decode_uint(d, &m->thread_rank);

                if (rank > m->n_recent)
                        return -EBADMSG;
                if (rank > 0)
                        thread = m->recent[rank - 1];
                else {
                        uint32_t back = rc_decode_uint(d, &m->thread_back);
                        if (back >= n_threads)
                                return -EBADMSG;
                        thread = n_threads - 1 - back;
                }
        }
        if (d->error || thread >= n_threads)
                return -EBADMSG;
        recent_touch(m, recent_find(m, thread), thread);
        *last = thread + 1;
        *ret = thread;
        return 0;
}

/* ---------------------------------------------------------------- stacks */

static int context_get(SampleModel *m, uint32_t comm, StackContext **ret) {
        if (!GREEDY_REALLOC0(m->contexts, m->contexts_alloc, (size_t) comm + 1))
                return -ENOMEM;
        if (!m->contexts[comm]) {
                StackContext *c = calloc(1, sizeof(StackContext));
                if (!c)
                        return -ENOMEM;
                rc_uint_model_init(&c->rank);
                m->contexts[comm] = c;
        }
        *ret = m->contexts[comm];
        return 0;
}

static int context_append(StackContext *c, uint32_t node) {
        if (!GREEDY_REALLOC(c->node, c->node_alloc, c->n + 1) || !GREEDY_REALLOC(c->count, c->count_alloc, c->n + 1))
                return -ENOMEM;
        c->node[c->n] = node;
        c->count[c->n] = 0;
        c->n++;
        return 0;
}

/*
 * Counts one more sample of the entry at pos. The list stays sorted by count, most first, because
 * the entry trades places with the first entry of its count (found by bisection), which then ends
 * that run of equal counts. Returns the entry's new position.
 */
static size_t context_bump(StackContext *c, size_t pos) {
        uint32_t k = c->count[pos], node = c->node[pos];
        size_t lo = 0, hi = pos;

        if (k == UINT32_MAX)
                return pos;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (c->count[mid] <= k)
                        hi = mid;
                else
                        lo = mid + 1;
        }
        c->node[pos] = c->node[lo];
        c->node[lo] = node;
        c->count[lo] = k + 1;
        return lo;
}

static uint64_t where_key(uint32_t comm, uint32_t node) {
        return (uint64_t) comm << 32 | node;
}

static int encode_stack(SampleModel *m, RcEncoder *e, uint32_t comm, uint32_t node, uint32_t n_nodes) {
        StackContext *c;
        uint64_t key = where_key(comm, node), *slot, pos;
        bool added;
        size_t to;
        int r;

        r = context_get(m, comm, &c);
        if (r < 0)
                return r;
        if (!m->where) {
                m->where = hashmap_new();
                if (!m->where)
                        return -ENOMEM;
        }
        slot = hashmap_slot(m->where, &key, sizeof key, c->n, &added);
        if (!slot)
                return -ENOMEM;
        if (added) {
                r = context_append(c, node);
                if (r < 0)
                        return r;
                rc_encode_uint(e, &c->rank, 0);
                rc_encode_uint(e, &m->stack_back, n_nodes - 1 - node);
        } else
                rc_encode_uint(e, &c->rank, (uint32_t) *slot + 1);
        pos = *slot;
        to = context_bump(c, (size_t) pos);
        if (to != pos) {
                /* the entry it traded places with */
                uint64_t other = where_key(comm, c->node[pos]);
                r = hashmap_put(m->where, &other, sizeof other, pos);
                if (r < 0)
                        return r;
                r = hashmap_put(m->where, &key, sizeof key, to);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int decode_stack(SampleModel *m, RcDecoder *d, uint32_t comm, uint32_t n_nodes, uint32_t *ret) {
        StackContext *c;
        uint32_t rank, node;
        size_t pos;
        int r;

        r = context_get(m, comm, &c);
        if (r < 0)
                return r;
        rank = rc_decode_uint(d, &c->rank);
        if (rank == 0) {
                uint32_t back = rc_decode_uint(d, &m->stack_back);
                if (d->error || back >= n_nodes)
                        return -EBADMSG;
                node = n_nodes - 1 - back;
                r = context_append(c, node);
                if (r < 0)
                        return r;
                pos = c->n - 1;
        } else {
                if (d->error || rank > c->n)
                        return -EBADMSG;
                pos = rank - 1;
                node = c->node[pos];
        }
        (void) context_bump(c, pos);
        *ret = node;
        return 0;
}

/* ---------------------------------------------------------------- samples */

int sample_model_encode(SampleModel *m, RcEncoder *e, uint32_t cpu, uint64_t t_us, uint32_t thread, uint32_t comm,
                        uint32_t node, uint32_t n_threads, uint32_t n_nodes) {
        CpuState *c;
        int r;

        if (thread >= n_threads || node >= n_nodes)
                return -EINVAL;
        r = cpu_state(m, cpu, &c);
        if (r < 0)
                return r;
        r = encode_time(m, e, c, t_us);
        if (r < 0)
                return r;
        encode_thread(m, e, c, thread, n_threads);
        return encode_stack(m, e, comm, node, n_nodes);
}

int sample_model_decode(SampleModel *m, RcDecoder *d, uint32_t cpu, const uint32_t *thread_comm, uint32_t n_threads,
                        uint32_t n_nodes, uint64_t *ret_t_us, uint32_t *ret_thread, uint32_t *ret_node) {
        uint32_t thread, node;
        uint64_t t_us;
        CpuState *c;
        int r;

        r = cpu_state(m, cpu, &c);
        if (r < 0)
                return r;
        r = decode_time(m, d, c, &t_us);
        if (r < 0)
                return r;
        r = decode_thread(m, d, c, n_threads, &thread);
        if (r < 0)
                return r;
        r = decode_stack(m, d, thread_comm[thread], n_nodes, &node);
        if (r < 0)
                return r;
        *ret_t_us = t_us;
        *ret_thread = thread;
        *ret_node = node;
        return 0;
}

/* ---------------------------------------------------------------- cgroups */

/*
 * A thread almost always stays in its cgroup, so a sample's cgroup is predicted to be its thread's
 * last, or for a thread's first sample in the chain the last one its CPU had (a new process mostly
 * starts where its parent ran). One bit confirms the prediction; a miss codes the reference.
 */
static int cgroup_prediction(SampleModel *m, uint32_t cpu, uint32_t thread, CpuState **ret_c, uint32_t **ret_t,
                             uint32_t *ret_pred, unsigned *ret_ctx) {
        int r;

        r = cpu_state(m, cpu, ret_c);
        if (r < 0)
                return r;
        if (!GREEDY_REALLOC0(m->thread_cgroup, m->thread_cgroup_alloc, (size_t) thread + 1))
                return -ENOMEM;
        *ret_t = &m->thread_cgroup[thread];
        *ret_ctx = **ret_t == 0;
        *ret_pred = **ret_t != 0 ? **ret_t : (*ret_c)->cgroup;
        return 0;
}

int sample_model_encode_cgroup(SampleModel *m, RcEncoder *e, uint32_t cpu, uint32_t thread, uint32_t ref,
                               uint32_t n_refs) {
        uint32_t pred, *t;
        unsigned ctx;
        CpuState *c;
        int r;

        if (ref >= n_refs)
                return -EINVAL;
        r = cgroup_prediction(m, cpu, thread, &c, &t, &pred, &ctx);
        if (r < 0)
                return r;
        if (pred != 0)
                rc_encode_bit(e, &m->cgroup_same[ctx], pred - 1 != ref);
        if (pred == 0 || pred - 1 != ref)
                rc_encode_uint(e, &m->cgroup_ref, ref);
        *t = c->cgroup = ref + 1;
        return 0;
}

int sample_model_decode_cgroup(SampleModel *m, RcDecoder *d, uint32_t cpu, uint32_t thread, uint32_t n_refs,
                               uint32_t *ret) {
        uint32_t pred, *t, ref;
        unsigned ctx;
        CpuState *c;
        int r;

        r = cgroup_prediction(m, cpu, thread, &c, &t, &pred, &ctx);
        if (r < 0)
                return r;
        if (pred != 0 && rc_decode_bit(d, &m->cgroup_same[ctx]) == 0)
                ref = pred - 1;
        else
                ref = rc_decode_uint(d, &m->cgroup_ref);
        if (d->error || ref >= n_refs)
                return -EBADMSG;
        *t = c->cgroup = ref + 1;
        *ret = ref;
        return 0;
}
