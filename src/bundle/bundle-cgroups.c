/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A bundle's services and process attribution; see bundle-cgroups.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "basic/alloc-util.h"
#include "basic/hashmap.h"
#include "basic/json-reader.h"
#include "basic/macro.h"
#include "bundle/bundle-cgroups.h"
#include "profile/profile-names.h"

static const char *str(const JsonValue *c, const char *key) {
        return json_string_value(json_object_get(c, key));
}

static uint64_t u64(const JsonValue *c, const char *key) {
        uint64_t v = 0;
        (void) json_u64_value(json_object_get(c, key), &v);
        return v;
}

static bool is_digit(char c) {
        return c >= '0' && c <= '9';
}

const char *bundle_thread_group_key(const char *comm, char buf[static FOLDED_COMM_KEY_MAX]) {
        size_t len = strlen(comm), end = len, start;

        while (end > 0 && !is_digit(comm[end - 1]))
                end--;
        for (start = end; start > 0 && is_digit(comm[start - 1]); start--)
                ;
        if (end == 0 || (start == 0 && end == len) || len - (end - start) + 2 > FOLDED_COMM_KEY_MAX)
                return NULL;
        memcpy(buf, comm, start);
        buf[start] = '*';
        memcpy(buf + start + 1, comm + end, len - end + 1);
        return buf;
}

/* Whether a manifest's raw comm is the one the folded stacks name (tidied: "VM Thread" is
 * "VM_Thread" there), or one of those a rise names as one ("ksoftirqd/3" of "ksoftirqd/" "*",
 * "wrk-3" of the group "wrk-*"). */
static bool comm_is(const char *raw, const char *folded) {
        char buf[FOLDED_COMM_KEY_MAX], k1[FOLDED_COMM_KEY_MAX], k2[FOLDED_COMM_KEY_MAX];
        const char *tidy, *g;

        if (!raw || !folded)
                return false;
        tidy = profile_comm_tidy(raw, buf, sizeof buf);
        if (streq(folded_comm_key(tidy, k1), folded_comm_key(folded, k2)))
                return true;
        return strchr(folded, '*') && (g = bundle_thread_group_key(tidy, k1)) && streq(g, folded);
}

static const JsonValue *cgroups_of(const BundleManifest *m) {
        const JsonValue *a = m ? json_object_get(m->json, "cgroups") : NULL;
        return a && a->type == JSON_TYPE_ARRAY ? a : NULL;
}

const char *bundle_cgroup_name(const JsonValue *c, CgroupBy by, char *buf, size_t l) {
        const char *path = str(c, "path");

        switch (by) {
        case CGROUP_BY_UNIT:
                snprintf(buf, l, "%s", str(c, "unit") ?: path ? "[no-unit]" : "[unknown]");
                break;
        case CGROUP_BY_CONTAINER:
                if (str(c, "container_name"))
                        snprintf(buf, l, "%s", str(c, "container_name"));
                else if (str(c, "container_id"))
                        snprintf(buf, l, "%s-%.12s", str(c, "container_runtime") ?: "", str(c, "container_id"));
                else
                        snprintf(buf, l, "%s", path ? "[no-container]" : "[unknown]");
                break;
        case CGROUP_BY_POD:
                if (str(c, "pod_name"))
                        snprintf(buf, l, "%s/%s", str(c, "pod_namespace") ?: "?", str(c, "pod_name"));
                else if (str(c, "pod_uid"))
                        snprintf(buf, l, "pod-%s", str(c, "pod_uid"));
                else
                        snprintf(buf, l, "%s", path ? "[no-pod]" : "[unknown]");
                break;
        default:
                snprintf(buf, l, "%s", path ?: "[unknown]");
                break;
        }
        return buf;
}

/* The comm with the most slice samples of entry c, and that count. */
static const char *top_comm(const JsonValue *c, uint64_t *ret) {
        const JsonValue *comms = json_object_get(c, "comms");
        const char *best = NULL;

        *ret = 0;
        for (size_t i = 0; i < json_length(comms); i++) {
                uint64_t n = u64(json_array_get(comms, i), "samples");
                if (n > *ret) {
                        *ret = n;
                        best = str(json_array_get(comms, i), "comm");
                }
        }
        return best;
}

static int cmp_service(const void *a, const void *b) {
        const Rise *x = a, *y = b;

        if (x->slice != y->slice)
                return x->slice > y->slice ? -1 : 1;
        if (x->baseline != y->baseline)
                return x->baseline > y->baseline ? -1 : 1;
        return strcmp(x->name, y->name);
}

int bundle_services(const BundleManifest *m, CgroupBy by, size_t max_n, Rise **ret, size_t *ret_n) {
        const JsonValue *a = cgroups_of(m);
        Rise *r = NULL;
        uint64_t *top = NULL; /* per service: samples of its top process so far */
        size_t n = 0;
        uint64_t slice = 0, baseline = 0;

        *ret = NULL;
        *ret_n = 0;
        if (!a)
                return -ENODATA;
        r = new0(Rise, json_length(a));
        top = new0(uint64_t, json_length(a));
        if (!r || !top) {
                free(r);
                free(top);
                return -ENOMEM;
        }
        for (size_t i = 0; i < json_length(a); i++) {
                const JsonValue *c = json_array_get(a, i);
                char name[BUNDLE_SERVICE_NAME_BYTES];
                uint64_t cn;
                const char *comm = top_comm(c, &cn);
                size_t k;

                bundle_cgroup_name(c, by, name, sizeof name);
                for (k = 0; k < n && !streq(r[k].name, name); k++)
                        ;
                if (k == n) {
                        r[n].name = strdup(name);
                        if (!r[n].name) {
                                rises_free(r, n);
                                free(top);
                                return -ENOMEM;
                        }
                        n++;
                }
                r[k].slice += u64(c, "samples");
                r[k].baseline += u64(c, "baseline_samples");
                if (comm && cn > top[k]) {
                        top[k] = cn;
                        free(r[k].top_function);
                        r[k].top_function = strdup(comm);
                }
                slice += u64(c, "samples");
                baseline += u64(c, "baseline_samples");
        }
        free(top);
        for (size_t k = 0; k < n; k++) {
                r[k].slice_share = slice > 0 ? (double) r[k].slice / (double) slice : 0;
                r[k].baseline_share = baseline > 0 ? (double) r[k].baseline / (double) baseline : 0;
                r[k].z = proportion_z(r[k].slice, slice, r[k].baseline, baseline);
        }
        qsort(r, n, sizeof(Rise), cmp_service);
        for (; n > max_n; n--) {
                free(r[n - 1].name);
                free(r[n - 1].top_function);
        }
        *ret = r;
        *ret_n = n;
        return 0;
}

const JsonValue *bundle_process_cgroup(const BundleManifest *m, const char *comm, int direction, bool near, char *buf,
                                       size_t l) {
        const JsonValue *a = cgroups_of(m), *best = NULL;
        uint64_t best_n = 0;
        double best_gain = 0;
        char unit[BUNDLE_SERVICE_NAME_BYTES], ctr[BUNDLE_SERVICE_NAME_BYTES], pod[BUNDLE_SERVICE_NAME_BYTES];
        size_t p = 0;
        /* A gain in share is known only with samples on both sides: the slice against the baseline,
         * or the event's own seconds against the rest (which needs no baseline). */
        bool by_slice = direction != 0 && m && m->slice_samples > 0 && m->baseline_samples > 0;
        uint64_t n_near = direction != 0 && near && m ? m->slice_near_samples : 0;
        uint64_t n_rest = m && n_near < m->slice_samples ? m->slice_samples - n_near + m->baseline_samples : 0;
        bool by_near = n_near > 0 && n_rest > 0, by_gain = by_slice || by_near;

        if (l > 0)
                buf[0] = '\0';
        for (size_t i = 0; comm && i < json_length(a); i++) {
                const JsonValue *c = json_array_get(a, i), *comms = json_object_get(c, "comms");
                /* The process's samples in this cgroup: every entry of its key ("ksoftirqd/0",
                 * "ksoftirqd/1" ... of "ksoftirqd/" "*") summed. */
                uint64_t s = 0, en = 0, eb = 0;
                bool found = false, has_near = true, has_baseline = true;
                double gain = 0;

                for (size_t k = 0; k < json_length(comms); k++) {
                        const JsonValue *e = json_array_get(comms, k);

                        if (!comm_is(str(e, "comm"), comm))
                                continue;
                        found = true;
                        s += u64(e, "samples");
                        en += u64(e, "near_samples");
                        eb += u64(e, "baseline_samples");
                        has_near = has_near && json_object_get(e, "near_samples");
                        has_baseline = has_baseline && json_object_get(e, "baseline_samples");
                }
                if (!found)
                        continue;
                /* The process's own change in this cgroup, where the manifest has it; else the
                 * whole cgroup's, in the slice against the baseline. */
                if (by_near && has_near && en <= s)
                        gain = (double) en / (double) n_near - (double) (s - en + eb) / (double) n_rest;
                else if (by_slice && has_baseline)
                        gain = (double) s / (double) m->slice_samples - (double) eb / (double) m->baseline_samples;
                else if (by_slice)
                        gain = (double) u64(c, "samples") / (double) m->slice_samples -
                               (double) u64(c, "baseline_samples") / (double) m->baseline_samples;
                if (direction < 0)
                        gain = -gain;
                if (best && (by_gain ? gain < best_gain || (gain == best_gain && s <= best_n) : s <= best_n))
                        continue;
                best_n = s;
                best_gain = gain;
                best = c;
        }
        if (!best || l == 0)
                return best;
        if (str(best, "unit"))
                p += (size_t) snprintf(buf + p, l - p, "unit %s", bundle_cgroup_name(best, CGROUP_BY_UNIT, unit, sizeof unit));
        if (p < l && str(best, "container_id"))
                p += (size_t) snprintf(buf + p, l - p, "%scontainer %s (%s)", p ? ", " : "",
                                       bundle_cgroup_name(best, CGROUP_BY_CONTAINER, ctr, sizeof ctr),
                                       str(best, "container_runtime") ?: "?");
        if (p < l && str(best, "pod_uid"))
                (void) snprintf(buf + p, l - p, "%spod %s", p ? ", " : "",
                                bundle_cgroup_name(best, CGROUP_BY_POD, pod, sizeof pod));
        return best;
}

const char *bundle_thread_process(const BundleManifest *m, const char *comm, char *buf, size_t l) {
        const JsonValue *a = m ? json_object_get(m->json, "threads") : NULL;

        for (size_t i = 0; comm && a && a->type == JSON_TYPE_ARRAY && i < json_length(a); i++) {
                const JsonValue *e = json_array_get(a, i);
                const char *process = str(e, "process");
                if (!process || !comm_is(str(e, "comm"), comm))
                        continue;
                profile_comm_tidy(process, buf, l);
                /* A kernel thread is its own process, "ksoftirqd/3" of "ksoftirqd/" "*" too. */
                if (comm_is(buf, comm))
                        continue;
                return buf;
        }
        return NULL;
}

uint64_t bundle_comm_processes(const BundleManifest *m, const char *comm) {
        const JsonValue *a = m ? json_object_get(m->json, "processes") : NULL;
        char buf[FOLDED_COMM_KEY_MAX];
        uint64_t n = 0;

        /* A key of many names ("kworker/" "*", a group of threads "wrk-*") is no one comm's. */
        if (!comm || strchr(comm, '*') || !a || a->type != JSON_TYPE_ARRAY)
                return 0;
        for (size_t i = 0; i < json_length(a); i++) {
                const JsonValue *e = json_array_get(a, i);

                /* two raw names that tidy alike ("a b", "a_b") rank as one */
                if (str(e, "comm") && streq(profile_comm_tidy(str(e, "comm"), buf, sizeof buf), comm))
                        n += u64(e, "processes");
        }
        return n >= 2 ? n : 0;
}

/* The key of the manifest's thread entry e (as the stacks name it: comm and process tidied) and its
 * process, as one string into buf (key, NUL, process); its length, or 0 when it has none. Its comm,
 * tidied, into comm; whether it is the process's main thread (comm and process alike) into
 * *ret_main. */
static size_t thread_key(const JsonValue *e, char buf[static 2 * FOLDED_COMM_KEY_MAX],
                         char comm[static FOLDED_COMM_KEY_MAX], bool *ret_main) {
        char key[FOLDED_COMM_KEY_MAX], process[FOLDED_COMM_KEY_MAX];
        size_t kl, pl;

        if (!str(e, "comm") || !str(e, "process"))
                return 0;
        profile_comm_tidy(str(e, "comm"), comm, FOLDED_COMM_KEY_MAX);
        profile_comm_tidy(str(e, "process"), process, sizeof process);
        if (!bundle_thread_group_key(comm, key))
                return 0;
        *ret_main = streq(comm, process);
        kl = strlen(key);
        pl = strlen(process);
        memcpy(buf, key, kl + 1);
        memcpy(buf + kl + 1, process, pl);
        return kl + 1 + pl;
}

/* The manifest's groups: each comm that ranks under another name, a grouped thread's or a former
 * name's, to its key (an index into keys; those from n_renames on are a thread group's, "wrk-*").
 * Where the manifest's threads list is full, each group's key ("wrk-*") to its first index there
 * (THREAD_KEY_SHARED where groups of two processes have it), and every comm either list names:
 * a comm of a group's key that neither names is a thread it had no room for. */
#define THREAD_KEY_SHARED UINT64_MAX
typedef struct ThreadGroups {
        Hashmap *groups, *by_key, *listed;
        char **keys; /* up to the first NULL: a key allocated whose hashmap_put() then failed is not
                      * counted in n_keys (keys has one more slot than entries); a thread group's
                      * key is followed by a NUL and its process */
        size_t n_keys, n_renames;
} ThreadGroups;

static void thread_groups_done(ThreadGroups *t) {
        for (size_t i = 0; t->keys && t->keys[i]; i++)
                free(t->keys[i]);
        free(t->keys);
        hashmap_free(t->groups);
        hashmap_free(t->by_key);
        hashmap_free(t->listed);
        *t = (ThreadGroups) {};
}

/* The index of comm's key in t (a former name's, or a grouped thread's, listed or of a group's key
 * where the list is full). */
static bool thread_groups_get(const ThreadGroups *t, const char *comm, size_t clen, uint64_t *ret) {
        char c[FOLDED_COMM_KEY_MAX], key[FOLDED_COMM_KEY_MAX];
        uint64_t k;

        if (hashmap_get(t->groups, comm, clen, ret))
                return true;
        if (!t->by_key || clen >= sizeof c || hashmap_get(t->listed, comm, clen, NULL))
                return false;
        memcpy(c, comm, clen);
        c[clen] = '\0';
        if (!bundle_thread_group_key(c, key) || !hashmap_get(t->by_key, key, strlen(key), &k) ||
            k == THREAD_KEY_SHARED)
                return false;
        *ret = k;
        return true;
}

/* t->n_keys 0 where the manifest groups nothing (or predates the lists). */
static int thread_groups_make(const BundleManifest *m, ThreadGroups *t) {
        const JsonValue *a = m ? json_object_get(m->json, "threads") : NULL,
                        *ren = m ? json_object_get(m->json, "renames") : NULL;
        _cleanup_(hashmap_freep) Hashmap *pairs = NULL, *former = NULL;
        char pair[2 * FOLDED_COMM_KEY_MAX], comm[FOLDED_COMM_KEY_MAX];
        bool main_thread;

        *t = (ThreadGroups) {};
        if (a && a->type != JSON_TYPE_ARRAY)
                a = NULL;
        if (ren && ren->type != JSON_TYPE_ARRAY)
                ren = NULL;
        if (!a && !ren)
                return 0;
        /* How many threads of each process have each key, main threads included: one pass, as the
         * list of a manifest read from elsewhere may be as long as the file allows. */
        pairs = hashmap_new();
        former = hashmap_new();
        t->groups = hashmap_new();
        t->keys = new0(char *, json_length(a) + json_length(ren) + 1);
        if (!pairs || !former || !t->groups || !t->keys)
                return -ENOMEM;
        /* The folded files carry no pid: a name is mapped by name, one step. A rename to a name that
         * is itself a former name (a->b with b->c, or a->b with b->a) would move a's stacks under a
         * name that is not its process's now, so such a rename is not followed. */
        for (size_t i = 0; i < json_length(ren); i++) {
                const JsonValue *e = json_array_get(ren, i);

                if (!str(e, "comm"))
                        continue;
                profile_comm_tidy(str(e, "comm"), comm, sizeof comm);
                if (!hashmap_slot(former, comm, strlen(comm), 0, NULL))
                        return -ENOMEM;
        }
        /* A process that renamed itself in the slice: its former name's stacks are its own. */
        for (size_t i = 0; i < json_length(ren); i++) {
                const JsonValue *e = json_array_get(ren, i);
                char process[FOLDED_COMM_KEY_MAX];

                if (!str(e, "comm") || !str(e, "process"))
                        continue;
                profile_comm_tidy(str(e, "comm"), comm, sizeof comm);
                profile_comm_tidy(str(e, "process"), process, sizeof process);
                if (streq(comm, process) || hashmap_get(t->groups, comm, strlen(comm), NULL) ||
                    hashmap_get(former, process, strlen(process), NULL))
                        continue;
                t->keys[t->n_keys] = strdup(process);
                if (!t->keys[t->n_keys] || hashmap_put(t->groups, comm, strlen(comm), t->n_keys) < 0)
                        return -ENOMEM;
                t->n_keys++;
        }
        t->n_renames = t->n_keys;
        for (size_t i = 0; i < json_length(a); i++) {
                size_t l = thread_key(json_array_get(a, i), pair, comm, &main_thread);
                uint64_t *n;

                if (l == 0)
                        continue;
                n = hashmap_slot(pairs, pair, l, 0, NULL);
                if (!n)
                        return -ENOMEM;
                (*n)++;
        }
        /* A full list left out the threads with fewer samples: a pool that makes a thread for each
         * request ("rq-1", "rq-2", ... each of a sample or two) has most of its work there. */
        if (json_length(a) >= BUNDLE_THREADS_LISTED_MAX) {
                t->by_key = hashmap_new();
                t->listed = hashmap_new();
                if (!t->by_key || !t->listed)
                        return -ENOMEM;
        }
        /* Each thread's comm whose key two or more threads of its process share, to that key. */
        for (size_t i = 0; i < json_length(a); i++) {
                size_t l = thread_key(json_array_get(a, i), pair, comm, &main_thread), kl;
                uint64_t n, *k;
                bool added;

                if (l == 0 || main_thread || !hashmap_get(pairs, pair, l, &n) || n < 2 ||
                    hashmap_get(t->groups, comm, strlen(comm), NULL))
                        continue;
                /* The key, up to its NUL, and its process after it. */
                t->keys[t->n_keys] = new(char, l + 1);
                if (!t->keys[t->n_keys])
                        return -ENOMEM;
                memcpy(t->keys[t->n_keys], pair, l);
                t->keys[t->n_keys][l] = '\0';
                if (hashmap_put(t->groups, comm, strlen(comm), t->n_keys) < 0)
                        return -ENOMEM;
                t->n_keys++;
                if (!t->by_key)
                        continue;
                /* The key to its first group; shared where a second process has a group of it. */
                kl = strlen(pair);
                k = hashmap_slot(t->by_key, pair, kl, t->n_keys - 1, &added);
                if (!k)
                        return -ENOMEM;
                if (!added && *k != THREAD_KEY_SHARED &&
                    !streq(t->keys[*k] + kl + 1, t->keys[t->n_keys - 1] + kl + 1))
                        *k = THREAD_KEY_SHARED;
        }
        if (!t->by_key)
                return 0;
        for (size_t i = 0; i < json_length(a) + json_length(ren); i++) {
                const JsonValue *e =
                        i < json_length(a) ? json_array_get(a, i) : json_array_get(ren, i - json_length(a));

                if (!str(e, "comm"))
                        continue;
                profile_comm_tidy(str(e, "comm"), comm, sizeof comm);
                if (!hashmap_slot(t->listed, comm, strlen(comm), 0, NULL))
                        return -ENOMEM;
        }
        return 0;
}

int bundle_threads_grouped(const BundleManifest *m, const Folded *f, Folded *ret) {
        _cleanup_(thread_groups_done) ThreadGroups t = {};
        _cleanup_(hashmap_freep) Hashmap *stacks = NULL;
        _cleanup_(folded_donep) Folded g = FOLDED_NULL;
        bool any = false;
        int r;

        *ret = FOLDED_NULL;
        r = thread_groups_make(m, &t);
        if (r < 0 || t.n_keys == 0)
                return r;
        stacks = hashmap_new();
        if (!stacks)
                return -ENOMEM;
        for (size_t i = 0; i < f->n; i++) {
                const char *stack = f->lines[i].stack, *c;
                _cleanup_free_ char *renamed = NULL;
                size_t clen;
                uint64_t k, *slot;
                bool added;

                folded_stack_comm(stack, &c, &clen);
                if (thread_groups_get(&t, c, clen, &k)) {
                        if (asprintf(&renamed, "%s%s", t.keys[k], c + clen) < 0)
                                return -ENOMEM;
                        stack = renamed;
                        any = true;
                }
                slot = hashmap_slot(stacks, stack, strlen(stack), g.n, &added);
                if (!slot || (added && !GREEDY_REALLOC(g.lines, g.allocated, g.n + 1)))
                        return -ENOMEM;
                if (added) {
                        g.lines[g.n] = (FoldedLine) { .stack = renamed ? TAKE_PTR(renamed) : strdup(stack),
                                                      .irq_tail = f->lines[i].irq_tail };
                        if (!g.lines[g.n++].stack)
                                return -ENOMEM;
                }
                /* The sum of counts of one file fits (folded_load_file() checks). */
                g.lines[*slot].count += f->lines[i].count;
        }
        if (!any)
                return 0;
        g.total = f->total;
        g.n_skipped = f->n_skipped;
        *ret = g;
        g = FOLDED_NULL;
        return 1;
}

int bundle_threads_group(const BundleManifest *m, Folded *f) {
        Folded g;
        int r = bundle_threads_grouped(m, f, &g);

        if (r <= 0)
                return r;
        folded_done(f);
        *f = g;
        return 0;
}

int bundle_threads_own(const BundleManifest *m, const Folded *f, Folded *ret) {
        _cleanup_(thread_groups_done) ThreadGroups t = {};
        _cleanup_(hashmap_freep) Hashmap *stacks = NULL;
        _cleanup_(folded_donep) Folded g = FOLDED_NULL;
        int r;

        *ret = FOLDED_NULL;
        r = thread_groups_make(m, &t);
        if (r < 0)
                return r;
        stacks = hashmap_new();
        if (!stacks)
                return -ENOMEM;
        for (size_t i = 0; i < f->n; i++) {
                const char *comm, *leaf;
                _cleanup_free_ char *key = NULL;
                size_t clen, llen;
                uint64_t k, *slot;
                bool added;

                folded_stack_comm(f->lines[i].stack, &comm, &clen);
                folded_stack_leaf(f->lines[i].stack, &leaf, &llen);
                /* A group's threads only (not a former name), and not their interrupt work, which
                 * ranks as PROFILE_IRQ_KEY. */
                if (!thread_groups_get(&t, comm, clen, &k) || k < t.n_renames ||
                    (leaf != comm && f->lines[i].irq_tail > 0))
                        continue;
                if (leaf == comm ? asprintf(&key, "%.*s", (int) clen, comm) < 0
                                 : asprintf(&key, "%.*s;%.*s", (int) clen, comm, (int) llen, leaf) < 0)
                        return -ENOMEM;
                slot = hashmap_slot(stacks, key, strlen(key), g.n, &added);
                if (!slot || (added && !GREEDY_REALLOC(g.lines, g.allocated, g.n + 1)))
                        return -ENOMEM;
                if (added)
                        g.lines[g.n++] = (FoldedLine) { .stack = TAKE_PTR(key) };
                g.lines[*slot].count += f->lines[i].count;
        }
        g.total = f->total;
        *ret = g;
        g = FOLDED_NULL;
        return 0;
}

/* Adds the samples of the lines of f (own stacks, bundle_threads_own()) that count toward key as
 * kind ranks it, thread by thread, to counts[thread * 2 + side]. */
static int thread_counts_add(const Folded *f, const char *key, RiseKind kind, Hashmap *threads, uint64_t **counts,
                             size_t *allocated, size_t *n, unsigned side) {
        const char *semi = strchr(key, ';');
        size_t kclen = semi ? (size_t) (semi - key) : strlen(key);

        for (size_t i = 0; f && i < f->n; i++) {
                const char *stack = f->lines[i].stack, *leaf = strchr(stack, ';');
                size_t clen = leaf ? (size_t) (leaf - stack) : strlen(stack);
                char comm[FOLDED_COMM_KEY_MAX], gkey[FOLDED_COMM_KEY_MAX];
                uint64_t *slot;
                bool added;

                if (clen >= sizeof comm)
                        continue;
                memcpy(comm, stack, clen);
                comm[clen] = '\0';
                if (!bundle_thread_group_key(comm, gkey) || strlen(gkey) != kclen || memcmp(gkey, key, kclen) != 0)
                        continue;
                /* A function's rise: the thread's stacks with that leaf (or, for a key of a comm
                 * alone, its stacks without a frame). */
                if (kind == RISE_FUNCTION && (!leaf != !semi || (leaf && !streq(leaf, semi))))
                        continue;
                slot = hashmap_slot(threads, comm, clen, *n, &added);
                if (!slot)
                        return -ENOMEM;
                if (added) {
                        if (!GREEDY_REALLOC0(*counts, *allocated, 2 * (*n + 1)))
                                return -ENOMEM;
                        (*n)++;
                }
                (*counts)[*slot * 2 + side] += f->lines[i].count;
        }
        return 0;
}

int bundle_thread_carrying(const Folded *x, const Folded *y, const char *key, RiseKind kind, char **ret) {
        _cleanup_(hashmap_freep) Hashmap *threads = hashmap_new();
        _cleanup_free_ uint64_t *counts = NULL;
        size_t allocated = 0, n = 0, best = SIZE_MAX;
        double gained = 0, best_gain = 0;
        const void *name;
        size_t name_len;
        uint64_t v;
        int r;

        *ret = NULL;
        if (!threads)
                return -ENOMEM;
        r = thread_counts_add(x, key, kind, threads, &counts, &allocated, &n, 0);
        if (r >= 0)
                r = thread_counts_add(y, key, kind, threads, &counts, &allocated, &n, 1);
        if (r < 0)
                return r;
        /* Each thread's gain: its samples in x beyond its share of y's, scaled to x's total. */
        for (size_t i = 0; i < n; i++) {
                double expected = y && y->total > 0 ? (double) counts[2 * i + 1] * (double) x->total / (double) y->total
                                                    : 0,
                       g = (double) counts[2 * i] - expected;
                if (g <= 0)
                        continue;
                gained += g;
                if (g > best_gain) {
                        best_gain = g;
                        best = i;
                }
        }
        if (best == SIZE_MAX || best_gain < BUNDLE_THREAD_CARRIES * gained)
                return 0;
        for (size_t i = 0; hashmap_iterate(threads, &i, &name, &name_len, &v);)
                if (v == best) {
                        *ret = strndup(name, name_len);
                        return *ret ? 1 : -ENOMEM;
                }
        return 0;
}

int bundle_rises_threads(const Folded *x, const Folded *y, Rise *r, size_t n) {
        for (size_t i = 0; i < n; i++) {
                int k;

                r[i].thread = mfree(r[i].thread);
                if (!strchr(r[i].name, '*') || strchr(r[i].name, ';'))
                        continue;
                k = bundle_thread_carrying(x, y, r[i].name, RISE_PROCESS, &r[i].thread);
                if (k < 0)
                        return k;
        }
        return 0;
}

int bundle_answer_thread(const Folded *slice, const Folded *baseline, const Folded *near, const Folded *rest,
                         Answer *a) {
        const char *name = a->rise.name;
        RiseKind kind = answer_from_function(a->from) ? RISE_FUNCTION : RISE_PROCESS;

        a->thread = mfree(a->thread);
        /* A group's key has its '*' in the comm. */
        if (!name || !memchr(name, '*', strcspn(name, ";")) || !slice || !baseline)
                return 0;
        if (!answer_from_near(a->from))
                return bundle_thread_carrying(slice, baseline, name, kind, &a->thread);
        if (!near || !rest)
                return 0;
        return bundle_thread_carrying(near, rest, name, kind, &a->thread);
}

int bundle_threads_name(const Folded *own_slice, const Folded *own_baseline, const Folded *own_near, uint64_t rest_total,
                        Answer *a, Rise *proc, size_t n_proc, Rise *near_proc, size_t n_near_proc) {
        _cleanup_(folded_donep) Folded own_rest = FOLDED_NULL;
        bool near = false;
        int r = 0, k;

        if (own_near) {
                r = folded_rest(own_slice, own_baseline, own_near, &own_rest);
                own_rest.total = rest_total;
                near = r >= 0;
        }
        k = bundle_answer_thread(own_slice, own_baseline, near ? own_near : NULL, near ? &own_rest : NULL, a);
        if (k < 0 && r >= 0)
                r = k;
        k = bundle_rises_threads(own_slice, own_baseline, proc, n_proc);
        if (k < 0 && r >= 0)
                r = k;
        if (near) {
                k = bundle_rises_threads(own_near, &own_rest, near_proc, n_near_proc);
                if (k < 0 && r >= 0)
                        r = k;
        }
        return MIN(r, 0);
}

bool bundle_cgroups_field(const char *field) {
        return streq(field, "unit") || streq(field, "container") || streq(field, "pod") || streq(field, "cgroup");
}

bool bundle_cgroups_match(const BundleManifest *m, const char *field, const char *value) {
        const JsonValue *a = cgroups_of(m);
        char name[BUNDLE_SERVICE_NAME_BYTES];

        for (size_t i = 0; i < json_length(a); i++) {
                const JsonValue *c = json_array_get(a, i);
                const char *v;

                if (u64(c, "samples") == 0)
                        continue;
                if (streq(field, "unit") && (v = str(c, "unit")) && streq(v, value))
                        return true;
                if (streq(field, "cgroup") && (v = str(c, "path")) && streq(v, value))
                        return true;
                /* by the runtime's and the kubelet's names, and by those exports and --once give
                 * from the path alone ("<runtime>-<id12>", "pod-<uid>") */
                if (streq(field, "container") && (v = str(c, "container_id")) &&
                    (streq(bundle_cgroup_name(c, CGROUP_BY_CONTAINER, name, sizeof name), value) ||
                     streq(cgroup_group_name(str(c, "path"), CGROUP_BY_CONTAINER, name, sizeof name), value) ||
                     (strlen(value) >= 4 && strneq(v, value, strlen(value)))))
                        return true;
                if (streq(field, "pod") && (v = str(c, "pod_uid")) &&
                    (streq(bundle_cgroup_name(c, CGROUP_BY_POD, name, sizeof name), value) ||
                     streq(cgroup_group_name(str(c, "path"), CGROUP_BY_POD, name, sizeof name), value) ||
                     streq(v, value) || ((v = str(c, "pod_name")) && streq(v, value))))
                        return true;
        }
        return false;
}
