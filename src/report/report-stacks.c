/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A report's samples as a call tree and columns; see report-stacks.h for the encoding.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "basic/alloc-util.h"
#include "basic/hashmap.h"
#include "basic/macro.h"
#include "basic/string-util.h"
#include "profile/profile-fold.h"
#include "profile/profile-irq.h"
#include "profile/profile-names.h"
#include "report/report-stacks.h"

typedef struct CpuColumn {
        uint32_t cpu;
        uint64_t *t_us;
        uint32_t *node;
        size_t n, allocated_t, allocated_node;
} CpuColumn;

struct ReportStacks {
        Hashmap *frame_ids; /* name -> id */
        char **frames;
        size_t n_frames, allocated_frames;

        Hashmap *node_ids; /* (parent, frame) -> id */
        uint32_t *parent, *frame;
        uint64_t *samples;  /* slice samples with this node as the leaf */
        uint64_t *baseline; /* baseline samples with this node as the leaf */
        size_t n_nodes, allocated_parent, allocated_frame, allocated_samples, allocated_baseline;

        Hashmap *key_nodes; /* folded key -> leaf node */
        /* hash_bytes() of a folded key cut short -> its leaf | LEAF_CUT: the keys themselves, kilobytes
         * each for deep stacks that are nearly all distinct, would cost what the bound saves */
        Hashmap *cut_keys;
        StrBuf key;
        uint64_t tag; /* ours in SampleStackSlot.tag: slot.stack is then a leaf node */

        Hashmap *cpu_index; /* cpu -> index into cpus */
        CpuColumn *cpus;
        size_t n_cpus, allocated_cpus;

        uint64_t n_samples, first_us, baseline_total;

        /* The bound on the tree: a stack that would grow it past either is cut where it leaves it. */
        size_t nodes_max, frame_bytes_max, frame_bytes;
        uint64_t cut_stacks, cut_samples, cut_baseline;
};

/* A leaf that stands for a stack cut short (in key_nodes' values and the producer's slots). */
#define LEAF_CUT UINT32_C(0x80000000)

ReportStacks *report_stacks_new(void) {
        _cleanup_(report_stacks_freep) ReportStacks *s = calloc(1, sizeof(ReportStacks));

        if (!s)
                return NULL;
        s->frame_ids = hashmap_new();
        s->node_ids = hashmap_new();
        s->key_nodes = hashmap_new();
        s->cut_keys = hashmap_new();
        s->cpu_index = hashmap_new();
        if (!s->frame_ids || !s->node_ids || !s->key_nodes || !s->cut_keys || !s->cpu_index)
                return NULL;
        /* node 0: the root, above the comm frames */
        if (!GREEDY_REALLOC0(s->parent, s->allocated_parent, 1) || !GREEDY_REALLOC0(s->frame, s->allocated_frame, 1) ||
            !GREEDY_REALLOC0(s->samples, s->allocated_samples, 1) ||
            !GREEDY_REALLOC0(s->baseline, s->allocated_baseline, 1))
                return NULL;
        s->n_nodes = 1;
        s->tag = sample_stack_tag_new();
        s->nodes_max = REPORT_NODES_MAX;
        s->frame_bytes_max = REPORT_FRAME_BYTES_MAX;
        return TAKE_PTR(s);
}

ReportStacks *report_stacks_free(ReportStacks *s) {
        if (!s)
                return NULL;
        hashmap_free(s->frame_ids);
        for (size_t i = 0; i < s->n_frames; i++)
                free(s->frames[i]);
        free(s->frames);
        hashmap_free(s->node_ids);
        free(s->parent);
        free(s->frame);
        free(s->samples);
        free(s->baseline);
        hashmap_free(s->key_nodes);
        hashmap_free(s->cut_keys);
        strbuf_done(&s->key);
        hashmap_free(s->cpu_index);
        for (size_t i = 0; i < s->n_cpus; i++) {
                free(s->cpus[i].t_us);
                free(s->cpus[i].node);
        }
        free(s->cpus);
        free(s);
        return NULL;
}

static int intern_frame(ReportStacks *s, const char *name, size_t len, uint32_t *ret) {
        bool added;
        uint64_t *slot = hashmap_slot(s->frame_ids, name, len, s->n_frames, &added);

        if (!slot)
                return -ENOMEM;
        if (added) {
                if (!GREEDY_REALLOC(s->frames, s->allocated_frames, s->n_frames + 1))
                        return -ENOMEM;
                s->frames[s->n_frames] = strndup(name, len);
                if (!s->frames[s->n_frames])
                        return -ENOMEM;
                s->n_frames++;
                s->frame_bytes += len;
        }
        *ret = (uint32_t) *slot;
        return 0;
}

static int intern_node(ReportStacks *s, uint32_t parent, uint32_t frame, uint32_t *ret) {
        uint32_t key[2] = { parent, frame };
        bool added;
        uint64_t *slot = hashmap_slot(s->node_ids, key, sizeof key, s->n_nodes, &added);

        if (!slot)
                return -ENOMEM;
        if (added) {
                size_t i = s->n_nodes;
                if (!GREEDY_REALLOC0(s->parent, s->allocated_parent, i + 1) ||
                    !GREEDY_REALLOC0(s->frame, s->allocated_frame, i + 1) ||
                    !GREEDY_REALLOC0(s->samples, s->allocated_samples, i + 1) ||
                    !GREEDY_REALLOC0(s->baseline, s->allocated_baseline, i + 1))
                        return -ENOMEM;
                s->parent[i] = parent;
                s->frame[i] = frame;
                s->n_nodes++;
        }
        *ret = (uint32_t) *slot;
        return 0;
}

/* The leaf node of a folded key, walking (and growing) the tree once per distinct key; | LEAF_CUT
 * when the tree is full and the stack leaves it: its leaf is then the last of its frames the tree
 * has (a page of tens of millions of nodes, from deep stacks that are nearly all distinct, would
 * not open; the samples, their times and CPUs, are all kept). */
static int intern_key(ReportStacks *s, const char *key, size_t len, uint32_t *ret) {
        uint64_t v, h = 0;
        uint32_t node = 0, cut = 0;
        int r;

        if (hashmap_get(s->key_nodes, key, len, &v)) {
                *ret = (uint32_t) v;
                return 0;
        }
        /* A stack cut before is known by its key's hash alone (two keys of one hash in the 64 bits:
         * one leaf for both, one stack counted). */
        if (s->cut_stacks > 0) {
                h = hash_bytes(key, len);
                if (hashmap_get(s->cut_keys, &h, sizeof h, &v)) {
                        *ret = (uint32_t) v;
                        return 0;
                }
        }
        for (size_t i = 0; i < len;) {
                const char *semi = memchr(key + i, ';', len - i);
                size_t l = semi ? (size_t) (semi - (key + i)) : len - i;
                bool known = false, named;
                uint64_t id;

                named = hashmap_get(s->frame_ids, key + i, l, &id);
                if (named) {
                        uint32_t pair[2] = { node, (uint32_t) id };
                        known = hashmap_get(s->node_ids, pair, sizeof pair, &v);
                }
                if (known)
                        node = (uint32_t) v;
                /* a name the tree has already costs no bytes more */
                else if (s->n_nodes >= s->nodes_max || (!named && s->frame_bytes + l > s->frame_bytes_max)) {
                        cut = LEAF_CUT;
                        s->cut_stacks++;
                        break;
                } else {
                        uint32_t f;
                        r = intern_frame(s, key + i, l, &f);
                        if (r < 0)
                                return r;
                        r = intern_node(s, node, f, &node);
                        if (r < 0)
                                return r;
                }
                i += l + 1;
        }
        if (cut) {
                h = h ?: hash_bytes(key, len);
                r = hashmap_put(s->cut_keys, &h, sizeof h, node | cut);
        } else
                r = hashmap_put(s->key_nodes, key, len, node);
        if (r < 0)
                return r;
        *ret = node | cut;
        return 0;
}

/* The comm frame a node hangs from: the child of the root on its path. */
static uint32_t comm_node(const ReportStacks *s, uint32_t node) {
        while (node != 0 && s->parent[node] != 0)
                node = s->parent[node];
        return node;
}

/* The sample's leaf node. A stack whose producer remembers our node for it (its slot says so) costs
 * a walk up to its comm frame, to check the comm; others are folded into their key once. */
static int leaf_of(ReportStacks *s, const Sample *sample, uint32_t *ret) {
        SampleStackSlot *slot = sample->stack_slot;
        char comm[64];
        int r;

        if (slot && slot->tag == s->tag && (slot->stack & ~LEAF_CUT) < s->n_nodes) {
                uint32_t top = comm_node(s, slot->stack & ~LEAF_CUT);
                profile_comm_tidy(sample->comm, comm, sizeof comm);
                if (top != 0 && streq(s->frames[s->frame[top]], comm)) {
                        *ret = slot->stack;
                        return 0;
                }
        }
        r = profile_fold_key(sample, &s->key);
        if (r < 0)
                return r;
        r = intern_key(s, s->key.data, s->key.len, ret);
        if (r < 0)
                return r;
        if (slot)
                *slot = (SampleStackSlot) { .tag = s->tag, .stack = *ret };
        return 0;
}

int report_stacks_add_sample(ReportStacks *s, const Sample *sample) {
        uint64_t idx, t_us = sample->t_ns / 1000;
        uint32_t node;
        bool added;
        CpuColumn *c;
        int r;

        r = leaf_of(s, sample, &node);
        if (r < 0)
                return r;
        if (node & LEAF_CUT) {
                s->cut_samples++;
                node &= ~LEAF_CUT;
        }

        uint64_t *slot = hashmap_slot(s->cpu_index, &sample->cpu, sizeof sample->cpu, s->n_cpus, &added);
        if (!slot)
                return -ENOMEM;
        idx = *slot;
        if (added) {
                if (!GREEDY_REALLOC0(s->cpus, s->allocated_cpus, s->n_cpus + 1))
                        return -ENOMEM;
                s->cpus[s->n_cpus++].cpu = sample->cpu;
        }
        c = &s->cpus[idx];
        if (!GREEDY_REALLOC(c->t_us, c->allocated_t, c->n + 1) || !GREEDY_REALLOC(c->node, c->allocated_node, c->n + 1))
                return -ENOMEM;
        c->t_us[c->n] = t_us;
        c->node[c->n] = node;
        c->n++;
        s->samples[node]++;
        if (s->n_samples == 0 || t_us < s->first_us)
                s->first_us = t_us;
        s->n_samples++;
        return 0;
}

int report_stacks_add_baseline(ReportStacks *s, const char *key, uint64_t count) {
        uint32_t node;
        int r;

        r = intern_key(s, key, strlen(key), &node);
        if (r < 0)
                return r;
        if (node & LEAF_CUT) {
                s->cut_baseline += count;
                node &= ~LEAF_CUT;
        }
        s->baseline[node] += count;
        s->baseline_total += count;
        return 0;
}

void report_stacks_set_limits(ReportStacks *s, size_t nodes_max, size_t frame_bytes_max) {
        s->nodes_max = nodes_max;
        s->frame_bytes_max = frame_bytes_max;
}

int report_stacks_reset(ReportStacks *s) {
        ReportStacks *fresh = report_stacks_new(), tmp;

        if (!fresh)
                return -ENOMEM;
        fresh->nodes_max = s->nodes_max;
        fresh->frame_bytes_max = s->frame_bytes_max;
        tmp = *s;
        *s = *fresh;
        *fresh = tmp;
        report_stacks_free(fresh);
        return 0;
}

uint64_t report_stacks_cut_stacks(const ReportStacks *s) {
        return s->cut_stacks;
}

uint64_t report_stacks_n_samples(const ReportStacks *s) {
        return s->n_samples;
}

uint64_t report_stacks_first_us(const ReportStacks *s) {
        return s->first_us;
}

/* ---- encoding ---- */

typedef struct Bytes {
        uint8_t *data;
        size_t n, allocated;
} Bytes;

static int put_varint(Bytes *b, uint64_t v) {
        if (!GREEDY_REALLOC(b->data, b->allocated, b->n + 10))
                return -ENOMEM;
        do {
                uint8_t byte = v & 0x7f;
                v >>= 7;
                b->data[b->n++] = byte | (v ? 0x80 : 0);
        } while (v);
        return 0;
}

static void json_base64(JsonWriter *w, const char *key, const Bytes *b) {
        static const char table[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        _cleanup_free_ char *out = malloc((b->n + 2) / 3 * 4 + 1);
        size_t o = 0;

        json_key(w, key);
        if (!out) {
                w->error = w->error ?: -ENOMEM;
                json_null(w);
                return;
        }
        for (size_t i = 0; i < b->n; i += 3) {
                uint32_t v = (uint32_t) b->data[i] << 16;
                if (i + 1 < b->n)
                        v |= (uint32_t) b->data[i + 1] << 8;
                if (i + 2 < b->n)
                        v |= b->data[i + 2];
                out[o++] = table[(v >> 18) & 63];
                out[o++] = table[(v >> 12) & 63];
                out[o++] = i + 1 < b->n ? table[(v >> 6) & 63] : '=';
                out[o++] = i + 2 < b->n ? table[v & 63] : '=';
        }
        out[o] = '\0';
        json_string(w, out);
}

static uint64_t gcd64(uint64_t a, uint64_t b) {
        while (b) {
                uint64_t t = a % b;
                a = b;
                b = t;
        }
        return a;
}

static int cmp_leaf_by_samples(const void *a, const void *b, void *userdata) {
        const ReportStacks *s = userdata;
        uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;

        if (s->samples[x] != s->samples[y])
                return s->samples[x] > s->samples[y] ? -1 : 1;
        return x < y ? -1 : x > y;
}

static int cmp_column(const void *a, const void *b) {
        const CpuColumn *x = a, *y = b;
        return x->cpu < y->cpu ? -1 : x->cpu > y->cpu;
}

static int cmp_u64_pair(const void *a, const void *b) {
        const uint64_t *x = a, *y = b;

        if (x[0] != y[0])
                return x[0] < y[0] ? -1 : 1;
        return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* Puts a column in time order (the ring hands samples in time order; this is a safety net). */
static int column_sort(CpuColumn *c) {
        bool sorted = true;

        for (size_t i = 1; i < c->n && sorted; i++)
                sorted = c->t_us[i - 1] <= c->t_us[i];
        if (sorted)
                return 0;
        _cleanup_free_ uint64_t (*pairs)[2] = malloc(c->n * sizeof *pairs);
        if (!pairs)
                return -ENOMEM;
        for (size_t i = 0; i < c->n; i++) {
                pairs[i][0] = c->t_us[i];
                pairs[i][1] = c->node[i];
        }
        qsort(pairs, c->n, sizeof *pairs, cmp_u64_pair);
        for (size_t i = 0; i < c->n; i++) {
                c->t_us[i] = pairs[i][0];
                c->node[i] = (uint32_t) pairs[i][1];
        }
        return 0;
}

int report_stacks_write_json(ReportStacks *s, JsonWriter *w) {
        _cleanup_free_ uint32_t *leaves = NULL, *stack_of = NULL;
        Bytes nodes = {}, stacks = {}, samples = {}, baseline = {};
        uint64_t t0_us = s->first_us / 1000000 * 1000000, quantum = 0;
        size_t n_leaves = 0;
        int r = 0;

        /* Stacks: the leaves that have slice samples, most sampled first (small indexes). */
        leaves = malloc(s->n_nodes * sizeof(uint32_t));
        stack_of = calloc(s->n_nodes, sizeof(uint32_t));
        if (!leaves || !stack_of)
                return -ENOMEM;
        for (size_t i = 0; i < s->n_nodes; i++)
                if (s->samples[i] > 0)
                        leaves[n_leaves++] = (uint32_t) i;
        if (n_leaves > 0) /* qsort's arrays must not be NULL, even empty ones */
                qsort_r(leaves, n_leaves, sizeof(uint32_t), cmp_leaf_by_samples, s);
        for (size_t i = 0; i < n_leaves; i++)
                stack_of[leaves[i]] = (uint32_t) i;

        if (s->n_cpus > 0)
                qsort(s->cpus, s->n_cpus, sizeof(CpuColumn), cmp_column);
        for (size_t c = 0; c < s->n_cpus; c++) {
                r = column_sort(&s->cpus[c]);
                if (r < 0)
                        goto finish;
                for (size_t i = 0; i < s->cpus[c].n; i++)
                        quantum = gcd64(quantum, s->cpus[c].t_us[i] - t0_us);
        }
        quantum = quantum ?: 1;

        for (size_t i = 1; i < s->n_nodes && r >= 0; i++) {
                r = put_varint(&nodes, i - s->parent[i]);
                if (r >= 0)
                        r = put_varint(&nodes, s->frame[i]);
        }
        for (size_t i = 0; i < n_leaves && r >= 0; i++)
                r = put_varint(&stacks, leaves[i]);
        for (size_t c = 0; c < s->n_cpus && r >= 0; c++) {
                const CpuColumn *col = &s->cpus[c];
                uint64_t prev = t0_us;
                r = put_varint(&samples, col->cpu);
                if (r >= 0)
                        r = put_varint(&samples, col->n);
                for (size_t i = 0; i < col->n && r >= 0; i++) {
                        r = put_varint(&samples, (col->t_us[i] - prev) / quantum);
                        if (r >= 0)
                                r = put_varint(&samples, stack_of[col->node[i]]);
                        prev = col->t_us[i];
                }
        }
        for (size_t i = 0; i < s->n_nodes && r >= 0; i++)
                if (s->baseline[i] > 0) {
                        r = put_varint(&baseline, i);
                        if (r >= 0)
                                r = put_varint(&baseline, s->baseline[i]);
                }
        if (r < 0)
                goto finish;

        json_kv_u64(w, "t0_us", t0_us);
        json_kv_u64(w, "quantum_us", quantum);
        json_kv_u64(w, "n_samples", s->n_samples);
        json_kv_u64(w, "baseline_total", s->baseline_total);
        json_key(w, "cut");
        json_begin_object(w);
        json_kv_u64(w, "nodes_max", s->nodes_max);
        json_kv_u64(w, "frame_bytes_max", s->frame_bytes_max);
        json_kv_u64(w, "stacks", s->cut_stacks);
        json_kv_u64(w, "samples", s->cut_samples);
        json_kv_u64(w, "baseline", s->cut_baseline);
        json_end_object(w);
        json_key(w, "frames");
        json_begin_array(w);
        for (size_t i = 0; i < s->n_frames; i++)
                json_string(w, s->frames[i]);
        json_end_array(w);
        /* The frames that tell interrupt work (profile-irq.h), by kind and index: the page keys
         * interrupt work as the rankings do. */
        static const struct {
                ProfileKernelFrame kind;
                const char *key;
        } kinds[] = {
                { PROFILE_KERNEL_FRAME_IRQ_ENTRY, "irq_frames" },
                { PROFILE_KERNEL_FRAME_SOFTIRQ, "softirq_frames" },
                { PROFILE_KERNEL_FRAME_IRQ_RETURN, "irq_return_frames" },
                { PROFILE_KERNEL_FRAME_IDLE, "idle_frames" },
        };
        for (size_t k = 0; k < ELEMENTSOF(kinds); k++) {
                json_key(w, kinds[k].key);
                json_begin_array(w);
                for (size_t i = 0; i < s->n_frames; i++)
                        if (profile_kernel_frame(s->frames[i], strlen(s->frames[i])) == kinds[k].kind)
                                json_u64(w, i);
                json_end_array(w);
        }
        json_kv_u64(w, "n_nodes", s->n_nodes);
        json_base64(w, "nodes", &nodes);
        json_kv_u64(w, "n_stacks", n_leaves);
        json_base64(w, "stacks", &stacks);
        json_base64(w, "samples", &samples);
        json_base64(w, "baseline", &baseline);
        r = w->error;

finish:
        free(nodes.data);
        free(stacks.data);
        free(samples.data);
        free(baseline.data);
        return r;
}
