/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one-line answer of a bundle (the rise show and the page name, where it ran) and the process
 * that fell most in the event's seconds, chosen from the rankings bundle-analyze.c makes.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "basic/alloc-util.h"
#include "basic/macro.h"
#include "basic/string-util.h"
#include "bundle/bundle-analyze-internal.h"
#include "bundle/bundle-analyze.h"
#include "profile/profile-irq.h"

/* The samples of f whose key (as folded_rises() makes it for kind) is key. */
static uint64_t folded_key_count(const Folded *f, RiseKind kind, const char *key) {
        size_t klen = strlen(key);
        char buf[STACK_KEY_MAX];
        uint64_t n = 0;

        for (size_t i = 0; f && i < f->n; i++) {
                const char *k;
                size_t len;

                stack_key(&f->lines[i], kind, buf, &k, &len);
                if (len == klen && memcmp(k, key, klen) == 0)
                        n += f->lines[i].count;
        }
        return n;
}

double folded_key_share(const Folded *f, RiseKind kind, const char *key) {
        if (!f || f->total == 0)
                return 0;
        return (double) folded_key_count(f, kind, key) / (double) f->total;
}

/* The idle task's samples ("swapper", as perf names pid 0, or "swapper/N"): idle rising is what
 * the CPUs did not do (the services went quiet when the network did), never a cause. Its
 * interrupt work is PROFILE_IRQ_KEY, no idle. */
static bool key_is_idle(const char *key) {
        const char *comm;
        size_t len;

        folded_stack_comm(key, &comm, &len);
        return profile_comm_is_idle(comm, len);
}

double sampled_cpus(uint64_t samples, uint64_t freq_hz, uint64_t ns) {
        double d = (double) freq_hz * (double) ns / 1e9;

        return samples > 0 && d > 0 ? (double) samples / d : 0;
}

/* The CPUs a side's samples stand for: as measured (c), else the host's, else 0 (unknown). */
static double side_cpus(double c, unsigned n_cpus) {
        return c > 0 && isfinite(c) ? c : (double) n_cpus;
}

/* Whether a change of share from less to more is worth naming (RISE_ANSWER_*): a rise from less
 * to more, or a fall from more to less; more_cpus and less_cpus are the CPUs each side's samples
 * stand for (side_cpus()), the CPU time of a share. */
static bool change_is_large(double more, double more_cpus, double less, double less_cpus) {
        if (more_cpus > 0 && less_cpus > 0 ? more * more_cpus - less * less_cpus < RISE_ANSWER_CPUS_MIN
                                           : more - less < RISE_ANSWER_GAIN_MIN)
                return false;
        return more >= RISE_ANSWER_RATIO_MIN * less;
}

/* Whether r names something the answer can say: a function's rise only where its leaf is a function
 * (leaf_names_function(): "[unknown] in app" says nothing of what app did), or a stack of its comm
 * alone, said as the process. */
static bool answer_names(const Rise *r, AnswerFrom from) {
        const char *leaf;
        size_t len;

        if (!answer_from_function(from))
                return true;
        folded_stack_leaf(r->name, &leaf, &len);
        return leaf == r->name || leaf_names_function(leaf, len);
}

static bool answer_qualifies(const AnswerInput *in, const Rise *r, AnswerFrom from) {
        bool near = answer_from_near(from);
        double c1 = side_cpus(near ? in->cpus.near : in->cpus.slice, in->n_cpus),
               c2 = side_cpus(near ? in->cpus.rest : in->cpus.baseline, in->n_cpus);

        if (key_is_idle(r->name) || !answer_names(r, from) || !change_is_large(r->slice_share, c1, r->baseline_share, c2))
                return false;
        /* An empty event.folded (the event outside its slice, its seconds lost) says nothing. */
        if (!near && in->near && in->rest && in->near->total > 0 && in->rest->total > 0) {
                RiseKind kind = answer_from_function(from) ? RISE_FUNCTION : RISE_PROCESS;
                if (folded_key_share(in->near, kind, r->name) < folded_key_share(in->rest, kind, r->name))
                        return false;
        }
        return true;
}

const Rise *rises_answer(const AnswerInput *in, AnswerFrom *ret_from) {
        const struct {
                const Rise *r;
                size_t n;
                AnswerFrom from;
        } lists[] = {
                { in->slice_proc, in->n_slice_proc, ANSWER_SLICE_PROCESS },
                { in->near_proc, in->n_near_proc, ANSWER_NEAR_PROCESS },
                { in->slice_func, in->n_slice_func, ANSWER_SLICE_FUNCTION },
                { in->near_func, in->n_near_func, ANSWER_NEAR_FUNCTION },
        };
        /* The fallbacks, in order: near's processes, the slice's, near's functions, the slice's. */
        static const size_t fallback[] = { 1, 0, 3, 2 };
        const Rise *best = NULL;

        /* Processes first (lists 0 and 1), then functions (2 and 3), if no process qualified. */
        for (size_t pass = 0; pass < 2 && !best; pass++)
                for (size_t k = 2 * pass; k < 2 * pass + 2; k++)
                        for (size_t i = 0; i < lists[k].n; i++) {
                                const Rise *r = &lists[k].r[i];

                                if ((best && r->z <= best->z) || !answer_qualifies(in, r, lists[k].from))
                                        continue;
                                best = r;
                                *ret_from = lists[k].from;
                        }
        if (best)
                return best;
        for (size_t k = 0; k < ELEMENTSOF(fallback); k++)
                for (size_t i = 0; i < lists[fallback[k]].n; i++)
                        if (!key_is_idle(lists[fallback[k]].r[i].name) &&
                            answer_names(&lists[fallback[k]].r[i], lists[fallback[k]].from)) {
                                *ret_from = lists[fallback[k]].from;
                                return &lists[fallback[k]].r[i];
                        }
        *ret_from = _ANSWER_FROM_INVALID;
        return NULL;
}

/* Whether key's share in the slice's samples outside near (near a part of slice) is as far above its
 * share in near as a fall must be: it ran in the slice's own seconds before it fell. */
static bool fall_in_slice(const Folded *near, uint64_t near_others, double near_cpus, const Folded *slice,
                          const char *key, unsigned n_cpus, const SampledCpus *cpus) {
        uint64_t in_slice = folded_key_count(slice, RISE_PROCESS, key), in_near = folded_key_count(near, RISE_PROCESS, key);
        double outside = 0;

        if (slice->total <= near->total || in_slice <= in_near)
                return false;
        /* The slice's seconds outside near: the slice's CPU time less near's, over their samples. */
        if (cpus && cpus->slice > 0 && cpus->near > 0) {
                double t_slice = (double) slice->total / cpus->slice, t_near = (double) near->total / cpus->near;
                if (t_slice > t_near)
                        outside = (double) (slice->total - near->total) / (t_slice - t_near);
        }
        return change_is_large((double) (in_slice - in_near) / (double) (slice->total - near->total),
                               side_cpus(outside, n_cpus), (double) in_near / (double) near_others, near_cpus);
}

/* Whether key's share in the baseline is as far above its share in near as a fall must be: it ran
 * before the slice too. A baseline of too few samples to compare with says nothing either way. */
static bool fall_in_baseline(const Folded *near, uint64_t near_others, double near_cpus, const Folded *baseline,
                             const char *key, unsigned n_cpus, const SampledCpus *cpus) {
        if (baseline->total < ANSWER_BASELINE_SAMPLES_MIN)
                return true;
        return change_is_large((double) folded_key_count(baseline, RISE_PROCESS, key) / (double) baseline->total,
                               side_cpus(cpus ? cpus->baseline : 0, n_cpus),
                               (double) folded_key_count(near, RISE_PROCESS, key) / (double) near_others, near_cpus);
}

int folded_fall(const Folded *near, const Folded *rest, const Folded *slice, const Folded *baseline, unsigned n_cpus,
                const SampledCpus *cpus, Rise *ret) {
        CountTable t = {};
        const Counts *best = NULL;
        double best_z = 0;
        double c_near = side_cpus(cpus ? cpus->near : 0, n_cpus), c_rest = side_cpus(cpus ? cpus->rest : 0, n_cpus);
        uint64_t near_others, rest_others;
        int r;

        *ret = (Rise) {};
        if (near->total == 0 || rest->total == 0)
                return 0;
        r = count_both(&t, near, rest, RISE_PROCESS);
        if (r < 0)
                goto finish;
        /* The samples of the processes that did not rise: on a busy host what rose took its CPU
         * from all the others (the scheduler shares it out), and each one's share fell with it
         * without any of them having stopped. A fall is a share that fell among these. The idle
         * task is one of them: idle rising is the work that stopped. */
        near_others = near->total;
        rest_others = rest->total;
        for (size_t i = 0; i < t.n; i++) {
                const Counts *c = &t.c[i];

                if (key_is_idle(c->key) || !counts_rose(c, near->total, rest->total))
                        continue;
                near_others -= c->slice;
                rest_others -= c->baseline;
        }
        if (near_others == 0 || rest_others == 0)
                goto finish;
        /* Their CPUs: a share of them times these is the same CPU time as before. */
        c_near *= (double) near_others / (double) near->total;
        c_rest *= (double) rest_others / (double) rest->total;
        for (size_t i = 0; i < t.n; i++) {
                const Counts *c = &t.c[i];
                double s1 = (double) c->slice / (double) near_others, s2 = (double) c->baseline / (double) rest_others;
                double z = proportion_z(c->slice, near_others, c->baseline, rest_others);

                if (z > -RISE_Z_MIN || c->baseline < RISE_SAMPLES_MIN || !change_is_large(s2, c_rest, s1, c_near) ||
                    key_is_idle(c->key) || (best && z >= best_z) ||
                    (slice && !fall_in_slice(near, near_others, c_near, slice, c->key, n_cpus, cpus)) ||
                    (baseline && !fall_in_baseline(near, near_others, c_near, baseline, c->key, n_cpus, cpus)))
                        continue;
                best = c;
                best_z = z;
        }
        if (best) {
                /* Said as the samples have it: its share of all of them, on each side. */
                *ret = (Rise) {
                        .name = strdup(best->key),
                        .slice = best->slice,
                        .baseline = best->baseline,
                        .slice_share = (double) best->slice / (double) near->total,
                        .baseline_share = (double) best->baseline / (double) rest->total,
                        .z = proportion_z(best->slice, near->total, best->baseline, rest->total),
                };
                if (!ret->name)
                        r = -ENOMEM;
        }
finish:
        count_table_done(&t);
        return r < 0 ? r : 0;
}

int answer_choose(const AnswerInput *in, const Folded *slice, const Folded *baseline, Answer *ret) {
        Answer a = {};
        AnswerInput used = *in;
        int k;

        /* Against a baseline too small to compare with (show says so in its place), the slice's
         * rises are noise however large their z: only the event's seconds against the rest count. */
        if (!baseline || baseline->total < ANSWER_BASELINE_SAMPLES_MIN) {
                used.n_slice_proc = used.n_slice_func = 0;
                in = &used;
        }
        /* The same holds for the event's seconds against a rest as small: a bundle taken seconds
         * after tprofd started has a short slice that is all near, and its rest is the baseline. */
        if (in->rest && in->rest->total < ANSWER_BASELINE_SAMPLES_MIN) {
                used.n_near_proc = used.n_near_func = 0;
                used.near = used.rest = NULL;
                in = &used;
        }
        const Rise *r = rises_answer(in, &a.from);

        *ret = (Answer) {};
        /* What stopped at the event, beside (or without) what rose. */
        if (in->near && in->rest) {
                k = folded_fall(in->near, in->rest, slice, baseline, in->n_cpus, &in->cpus, &a.fall);
                if (k < 0)
                        return k;
        }
        if (!r) {
                *ret = a;
                return 0;
        }
        k = rise_copy(r, &a.rise);
        if (k < 0) {
                answer_done(&a);
                return k;
        }
        a.clear = answer_qualifies(in, r, a.from);
        bool near = answer_from_near(a.from);
        const Folded *x = near ? in->near : slice, *y = near ? in->rest : baseline;
        if (!answer_from_function(a.from) && x && y) {
                k = folded_rise_under(x, y, a.rise.name, &a.under);
                if (k < 0) {
                        answer_done(&a);
                        return k;
                }
        }
        *ret = a;
        return 0;
}

void answer_done(Answer *a) {
        rise_done(&a->rise);
        rise_done(&a->fall);
        a->under = mfree(a->under);
        a->thread = mfree(a->thread);
}
