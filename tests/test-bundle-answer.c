/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bundle-analyze's one-line answer: the rise it names, from the slice's lists and the event's
 * seconds' lists, and when it names none (a small baseline, a small rest); what stopped at the
 * event, not what only lost its share to a rise or began after the baseline; shares of the CPUs
 * that were sampled; per-CPU kernel threads as one; and where a rise ran, the caller most of it
 * went through (the rises themselves: test-bundle-analyze.c).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests.h"
#include "folded-test-util.h"

#include "bundle/bundle-analyze.h"

#define RISE(n, s, b, zz) { .name = (char *) (n), .slice_share = (s), .baseline_share = (b), .z = (zz) }

/* The rise the one-line answer names, from the slice's lists and the event's seconds' lists. */
static void test_answer(void **state) {
        AnswerFrom from;

        /* A handful of samples of a process that ran only at the event (z=18, 0.4% on 2 CPUs,
         * under 2% of a CPU) first around the event; kubelet 1.0% -> 3.0% there and 0.8% -> 2.0% over
         * the slice: the answer, from the slice, where it is most certain. */
        Rise few_near[] = { RISE("sh", 0.004, 0, 18.1), RISE("kubelet", 0.030, 0.010, 9.0) };
        Rise few_slice[] = { RISE("kubelet", 0.020, 0.008, 14.3) };
        AnswerInput in = { .slice_proc = few_slice, .n_slice_proc = 1, .near_proc = few_near, .n_near_proc = 2,
                           .n_cpus = 2 };
        assert_ptr_equal(rises_answer(&in, &from), &few_slice[0]);
        assert_int_equal(from, ANSWER_SLICE_PROCESS);

        /* java drifting 20% -> 24% over the slice (z=12, less than twice its share); kubelet
         * 0.8% -> 4.0% (5x) at the event. */
        Rise drift_slice[] = { RISE("java", 0.24, 0.20, 12.0) };
        Rise burst_near[] = { RISE("kubelet", 0.040, 0.008, 14.8) };
        in = (AnswerInput) { .slice_proc = drift_slice, .n_slice_proc = 1, .near_proc = burst_near, .n_near_proc = 1,
                             .n_cpus = 2 };
        assert_ptr_equal(rises_answer(&in, &from), &burst_near[0]);
        assert_int_equal(from, ANSWER_NEAR_PROCESS);

        /* Hogs of a saturated host: bash 36.8% -> 60.3% (z=17.7) beside kubelet 0.8% -> 1.9%. */
        Rise hogs[] = { RISE("bash", 0.603, 0.368, 17.7), RISE("kubelet", 0.019, 0.008, 6.6) };
        in = (AnswerInput) { .slice_proc = hogs, .n_slice_proc = 2, .n_cpus = 2 };
        assert_ptr_equal(rises_answer(&in, &from), &hogs[1]);
        assert_int_equal(from, ANSWER_SLICE_PROCESS);

        /* 32 CPUs: kubelet 0.1% -> 0.3% of all samples is 6% of a CPU gained; 1% of the samples,
         * the floor of a 2-CPU host, would have left it out. */
        Rise wide[] = { RISE("kubelet", 0.003, 0.001, 7.3) };
        in = (AnswerInput) { .near_proc = wide, .n_near_proc = 1, .n_cpus = 32 };
        assert_ptr_equal(rises_answer(&in, &from), &wide[0]);
        in.n_cpus = 0; /* a bundle that does not say: 1% of the samples */
        assert_ptr_equal(rises_answer(&in, &from), &wide[0]); /* the fallback, the same here */

        /* A burst half a minute before the event (cronjob, z=10) and kubelet at the event (z=7):
         * cronjob's share around the event is below its share in the rest, so not the answer. */
        _cleanup_(folded_donep) Folded near = FOLDED_NULL, rest = FOLDED_NULL;
        load_text("java;main 1800\nkubelet;main;read 130\nswapper;idle 70\n", &near);
        load_text("java;main 9000\ncronjob;main;work 1000\nkubelet;main;read 80\nswapper;idle 920\n", &rest);
        Rise decoy_slice[] = { RISE("cronjob", 0.08, 0, 10.3) };
        Rise decoy_near[] = { RISE("kubelet", 0.065, 0.007, 7.0) };
        in = (AnswerInput) { .slice_proc = decoy_slice, .n_slice_proc = 1, .near_proc = decoy_near, .n_near_proc = 1,
                             .near = &near, .rest = &rest, .n_cpus = 2 };
        assert_ptr_equal(rises_answer(&in, &from), &decoy_near[0]);
        assert_int_equal(from, ANSWER_NEAR_PROCESS);
        /* kubelet over the whole slice too: its share around the event is above the rest's. */
        Rise both_slice[] = { RISE("cronjob", 0.08, 0, 10.3), RISE("kubelet", 0.05, 0.007, 12.0) };
        in.slice_proc = both_slice;
        in.n_slice_proc = 2;
        assert_ptr_equal(rises_answer(&in, &from), &both_slice[1]);
        assert_int_equal(from, ANSWER_SLICE_PROCESS);
        assert_true(folded_key_share(&near, RISE_PROCESS, "kubelet") > 0.064);
        assert_true(folded_key_share(&rest, RISE_FUNCTION, "cronjob;work") > 0.09);
        assert_true(folded_key_share(&rest, RISE_FUNCTION, "cronjob;main") == 0);
        assert_true(folded_key_share(&near, RISE_PROCESS, "kube") == 0);

        /* An empty event.folded (the event outside its slice, or its seconds lost) says nothing of
         * where a slice rise happened: kubelet, not the hog whose share drifted. */
        _cleanup_(folded_donep) Folded empty = FOLDED_NULL;
        Rise drift[] = { RISE("hog", 0.60, 0.37, 56.9), RISE("kubelet", 0.065, 0.008, 20.0) };
        in = (AnswerInput) { .slice_proc = drift, .n_slice_proc = 2, .near = &empty, .rest = &rest, .n_cpus = 2 };
        assert_ptr_equal(rises_answer(&in, &from), &drift[1]);

        /* A process that kept its share while its work changed: no process rose, its function
         * did; the answer names the function. */
        Rise fn_near[] = { RISE("worker;inflate", 0.084, 0, 21.5) };
        Rise noise[] = { RISE("gzip", 0.465, 0.409, 4.3) };
        in = (AnswerInput) { .slice_proc = noise, .n_slice_proc = 1, .near_func = fn_near, .n_near_func = 1,
                             .n_cpus = 2 };
        assert_ptr_equal(rises_answer(&in, &from), &fn_near[0]);
        assert_int_equal(from, ANSWER_NEAR_FUNCTION);

        /* Idle rising (the services went quiet with the network) is not the answer, however strong. */
        Rise idle_near[] = { RISE("swapper", 0.60, 0.30, 40.0), RISE("swapper/3", 0.05, 0.01, 30.0),
                             RISE("kubelet", 0.040, 0.008, 14.8) };
        in = (AnswerInput) { .near_proc = idle_near, .n_near_proc = 3, .n_cpus = 2 };
        assert_ptr_equal(rises_answer(&in, &from), &idle_near[2]);
        in.n_cpus = 1000; /* every one passes the floors... */
        idle_near[2].slice_share = 0.009; /* ...but kubelet no more doubled: the fallback */
        assert_ptr_equal(rises_answer(&in, &from), &idle_near[2]);
        in.n_near_proc = 2;
        assert_null(rises_answer(&in, &from));
        Rise swap_like[] = { RISE("swapperd", 0.05, 0.01, 9.0) }; /* a daemon named so is not idle */
        in = (AnswerInput) { .near_proc = swap_like, .n_near_proc = 1, .n_cpus = 2 };
        assert_ptr_equal(rises_answer(&in, &from), &swap_like[0]);

        /* Nothing passes the floors: near's processes first, then the slice's, then functions. */
        Rise small[] = { RISE("a", 0.005, 0.001, 5) };
        Rise tiny[] = { RISE("b", 0.004, 0, 30) };
        Rise tiny_fn[] = { RISE("c;f", 0.004, 0, 30) };
        in = (AnswerInput) { .slice_proc = small, .n_slice_proc = 1, .near_proc = tiny, .n_near_proc = 1,
                             .slice_func = tiny_fn, .n_slice_func = 1, .n_cpus = 2 };
        assert_ptr_equal(rises_answer(&in, &from), &tiny[0]);
        assert_int_equal(from, ANSWER_NEAR_PROCESS);
        in.n_near_proc = 0;
        assert_ptr_equal(rises_answer(&in, &from), &small[0]);
        assert_int_equal(from, ANSWER_SLICE_PROCESS);
        in.n_slice_proc = 0;
        assert_ptr_equal(rises_answer(&in, &from), &tiny_fn[0]);
        assert_int_equal(from, ANSWER_SLICE_FUNCTION);
        in.n_slice_func = 0;
        assert_null(rises_answer(&in, &from));
}

/* A process that stops at the event (a service blocked on the disk that went away): named as
 * what fell; one that only wobbles, a small one, and the idle task are not. */
static void test_fall(void **state) {
        _cleanup_(folded_donep) Folded near = FOLDED_NULL, rest = FOLDED_NULL, flat = FOLDED_NULL;
        _cleanup_(answer_done) Answer a = {};
        Rise r;

        /* 2 CPUs at 97 Hz for 10 s near, 60 s in the rest: steady fell from 43% to 8%; java
         * wobbled 30% -> 25%; tiny went from 0.5% to 0 (too small to matter); idle rose. */
        load_text("steady;main;work 160\njava;main 485\nswapper;idle 1295\n", &near);
        load_text("steady;main;work 5000\njava;main 3490\ntiny;main 58\nswapper;idle 3092\n", &rest);
        assert_int_equal(folded_fall(&near, &rest, NULL, NULL, 2, NULL, &r), 0);
        assert_non_null(r.name);
        assert_string_equal(r.name, "steady");
        assert_true(r.z < -RISE_Z_MIN);
        assert_true(r.slice_share < 0.1 && r.baseline_share > 0.4);
        rise_done(&r);

        /* The same seconds as the rest: nothing fell. */
        load_text("steady;main;work 860\njava;main 600\nswapper;idle 480\n", &flat);
        assert_int_equal(folded_fall(&flat, &rest, NULL, NULL, 2, NULL, &r), 0);
        assert_null(r.name);

        /* The answer carries it beside (or without) a rise: the rest all slice, no baseline. */
        _cleanup_(folded_donep) Folded slice = FOLDED_NULL, none = FOLDED_NULL, gone = FOLDED_NULL,
                                       gone_rest = FOLDED_NULL, slice_gone = FOLDED_NULL, base_gone = FOLDED_NULL;
        assert_int_equal(folded_rest(&near, &rest, &none, &slice), 0);
        AnswerInput in = { .near = &near, .rest = &rest, .n_cpus = 2 };
        assert_int_equal(answer_choose(&in, &slice, &none, &a), 0);
        assert_null(a.rise.name);
        assert_non_null(a.fall.name);
        assert_string_equal(a.fall.name, "steady");
        answer_done(&a);

        /* sqlite3 ran in the baseline only and had stopped before the slice began, half a minute
         * before the event: near against the rest (which holds the baseline) sees it fall, the
         * slice's own seconds say it did not stop at the event. steady, which ran in the baseline
         * too and stopped there, is still named. */
        load_text("steady;main;work 5000\njava;main 3490\nswapper;idle 3092\n", &gone);
        assert_int_equal(folded_rest(&near, &gone, &none, &slice_gone), 0);
        load_text("steady;main;work 2000\nsqlite3;main;step 6000\nswapper;idle 300\n", &base_gone);
        assert_int_equal(folded_rest(&gone, &base_gone, &none, &gone_rest), 0);
        assert_int_equal(folded_fall(&near, &gone_rest, NULL, NULL, 2, NULL, &r), 0);
        assert_string_equal(r.name, "sqlite3"); /* against the rest alone it would be named */
        rise_done(&r);
        assert_int_equal(folded_fall(&near, &gone_rest, &slice_gone, NULL, 2, NULL, &r), 0);
        assert_non_null(r.name);
        assert_string_equal(r.name, "steady");
        rise_done(&r);
        in.rest = &gone_rest;
        assert_int_equal(answer_choose(&in, &slice_gone, &base_gone, &a), 0);
        assert_string_equal(a.fall.name, "steady");
        answer_done(&a);
        /* Without steady's fall, nothing fell at the event. */
        folded_done(&gone);
        folded_done(&gone_rest);
        folded_done(&slice_gone);
        load_text("steady;main;work 160\njava;main 3490\nswapper;idle 3092\n", &gone);
        assert_int_equal(folded_rest(&near, &gone, &none, &slice_gone), 0);
        assert_int_equal(folded_rest(&gone, &base_gone, &none, &gone_rest), 0);
        in.rest = &gone_rest;
        assert_int_equal(answer_choose(&in, &slice_gone, &base_gone, &a), 0);
        assert_null(a.fall.name);
        answer_done(&a);
}

/* A job that began after the baseline and ended in the slice before the event's seconds (a
 * compiler run on a build host, a cron job) fell against the rest and against the slice's own
 * seconds, but it never ran before the slice: it did not stop at the event. A service that ran in
 * the baseline as well and stopped there did. */
static void test_fall_not_before(void **state) {
        _cleanup_(folded_donep) Folded near = FOLDED_NULL, outside = FOLDED_NULL, base = FOLDED_NULL,
                                       small = FOLDED_NULL, slice = FOLDED_NULL, rest = FOLDED_NULL,
                                       rest_small = FOLDED_NULL, none = FOLDED_NULL;
        _cleanup_(answer_done) Answer a = {};
        Rise r;

        /* 2 CPUs at 97 Hz: 10 s near, 15 s of the slice outside it, 7 s of baseline. cc1 had 15% of
         * the slice outside near, none in the baseline nor near; steady 5% in the baseline and in
         * the slice, 0.5% near. */
        load_text("steady;main;work 10\nxz;main 900\nswapper;idle 1030\n", &near);
        load_text("cc1;main;parse 440\nsteady;main;work 145\nxz;main 1300\nswapper;idle 1025\n", &outside);
        load_text("steady;main;work 68\nxz;main 600\nswapper;idle 690\n", &base);
        assert_int_equal(folded_rest(&near, &outside, &none, &slice), 0);
        assert_int_equal(folded_rest(&outside, &base, &none, &rest), 0);

        /* Against the rest and the slice alone, cc1 fell most. */
        assert_int_equal(folded_fall(&near, &rest, &slice, NULL, 2, NULL, &r), 0);
        assert_non_null(r.name);
        assert_string_equal(r.name, "cc1");
        rise_done(&r);
        /* The baseline says it never ran before the slice: steady is what stopped at the event. */
        assert_int_equal(folded_fall(&near, &rest, &slice, &base, 2, NULL, &r), 0);
        assert_non_null(r.name);
        assert_string_equal(r.name, "steady");
        assert_true(r.z <= -RISE_Z_MIN);
        rise_done(&r);
        AnswerInput in = { .near = &near, .rest = &rest, .n_cpus = 2 };
        assert_int_equal(answer_choose(&in, &slice, &base, &a), 0);
        assert_non_null(a.fall.name);
        assert_string_equal(a.fall.name, "steady");
        answer_done(&a);

        /* A baseline too small to compare with says nothing either way: cc1, as before. */
        load_text("steady;main;work 5\nxz;main 60\nswapper;idle 70\n", &small);
        assert_int_equal(folded_rest(&outside, &small, &none, &rest_small), 0);
        in.rest = &rest_small;
        assert_int_equal(answer_choose(&in, &slice, &small, &a), 0);
        assert_non_null(a.fall.name);
        assert_string_equal(a.fall.name, "cc1");
}

/* A host at 100%: in the event's own seconds kubelet spins on 1.2 of its 2 CPUs, and the
 * scheduler (CFS shares a runqueue's time by weight, kernel/sched/fair.c) takes that from
 * everything else: java and envoy each keep 40% of their CPU, their shares fall from 40% to 16%
 * without either of them having stopped. Among the samples of what did not rise they hold their
 * share: no fall. postgres, which did stop, is named beside them. */
static void test_fall_stolen(void **state) {
        _cleanup_(folded_donep) Folded near = FOLDED_NULL, rest = FOLDED_NULL, near_pg = FOLDED_NULL,
                                       rest_pg = FOLDED_NULL, slice = FOLDED_NULL, base = FOLDED_NULL,
                                       none = FOLDED_NULL;
        _cleanup_(answer_done) Answer a = {};
        Rise r;

        /* 2 CPUs at 97 Hz: 10 s near, 60 s of the rest; nothing idles. */
        load_text("kubelet;main;spin 1164\njava;main;work 310\nenvoy;main;work 310\nxz;main 156\n", &near);
        load_text("kubelet;main;spin 58\njava;main;work 4656\nenvoy;main;work 4656\nxz;main 2270\n", &rest);
        assert_int_equal(folded_fall(&near, &rest, NULL, NULL, 2, NULL, &r), 0);
        assert_null(r.name);
        /* The same measured as the samples stand for (every CPU sampled: the host's 2). */
        SampledCpus cpus = { .near = 2, .rest = 2, .slice = 2, .baseline = 2 };
        assert_int_equal(folded_fall(&near, &rest, NULL, NULL, 2, &cpus, &r), 0);
        assert_null(r.name);
        assert_int_equal(folded_rest(&near, &rest, &none, &slice), 0);
        AnswerInput in = { .near = &near, .rest = &rest, .n_cpus = 2 };
        assert_int_equal(answer_choose(&in, &slice, &base, &a), 0);
        assert_null(a.fall.name);
        answer_done(&a);

        /* postgres had a fifth of the CPUs and stopped at the event: it fell, with or without the
         * rise beside it; its shares are said as all the samples have them. */
        load_text("kubelet;main;spin 1164\njava;main;work 388\nenvoy;main;work 388\n", &near_pg);
        load_text("kubelet;main;spin 58\njava;main;work 3725\nenvoy;main;work 3725\npostgres;main;scan 2328\nxz;main 1804\n",
                  &rest_pg);
        assert_int_equal(folded_fall(&near_pg, &rest_pg, NULL, NULL, 2, NULL, &r), 0);
        assert_non_null(r.name);
        assert_string_equal(r.name, "postgres");
        assert_true(r.slice_share == 0);
        assert_true(fabs(r.baseline_share - 2328.0 / 11640) < 1e-9);
        assert_true(r.z <= -RISE_Z_MIN);
        rise_done(&r);

        /* Everything in the event's seconds rose: nothing is left to compare with, nothing fell. */
        folded_done(&near);
        load_text("kubelet;main;spin 1940\n", &near);
        assert_int_equal(folded_fall(&near, &rest, NULL, NULL, 2, NULL, &r), 0);
        assert_null(r.name);
}

/* A baseline of 150 samples (a bundle written seconds after tprofd started): show says it is too
 * small to compare with, so a rise against it is no answer, however large its z; against 300
 * samples the same shares are. */
static void test_answer_small_baseline(void **state) {
        _cleanup_(folded_donep) Folded slice = FOLDED_NULL, small = FOLDED_NULL, large = FOLDED_NULL;
        _cleanup_(answer_done) Answer a = {};
        Rise *r = NULL;
        size_t n = 0;

        load_text("java;main 6000\nkubelet;main;read;mem_cgroup_nr_lru_pages 800\nswapper;idle 3500\n", &slice);
        load_text("java;main 90\nswapper;idle 60\n", &small);
        assert_int_equal(folded_rises(&slice, &small, RISE_PROCESS, SIZE_MAX, &r, &n), 0);
        assert_int_equal(n, 1); /* kubelet, 7.8% against none of 150: z = 3.5 */
        assert_string_equal(r[0].name, "kubelet");
        AnswerInput in = { .slice_proc = r, .n_slice_proc = n, .n_cpus = 2 };
        assert_int_equal(answer_choose(&in, &slice, &small, &a), 0);
        assert_null(a.rise.name);
        answer_done(&a);

        load_text("java;main 180\nswapper;idle 120\n", &large);
        assert_int_equal(answer_choose(&in, &slice, &large, &a), 0);
        assert_non_null(a.rise.name);
        assert_string_equal(a.rise.name, "kubelet");
        assert_true(a.clear);
        answer_done(&a);
        rises_free(r, n);

        /* A rise that passed none of the floors (0.4% of 2 CPUs, under 2% of a CPU) is still
         * named, as the strongest there is, and said to be no clear one. */
        Rise tiny[] = { RISE("b", 0.004, 0, 30) };
        in = (AnswerInput) { .near_proc = tiny, .n_near_proc = 1, .n_cpus = 2 };
        assert_int_equal(answer_choose(&in, &slice, &large, &a), 0);
        assert_string_equal(a.rise.name, "b");
        assert_false(a.clear);
}

/* A bundle taken seconds after tprofd started: a 4 s slice that is all the event's seconds, so the
 * rest it is compared with is the baseline, 118 samples. That comparison is as rough as the
 * slice's against the same baseline, which show calls too small to tell anything: neither names a
 * rise, nor a fall. */
static void test_answer_small_rest(void **state) {
        _cleanup_(folded_donep) Folded slice = FOLDED_NULL, base = FOLDED_NULL, rest = FOLDED_NULL,
                                       big = FOLDED_NULL, bigrest = FOLDED_NULL;
        _cleanup_(answer_done) Answer a = {};
        Rise *np = NULL, *nf = NULL;
        size_t n_np = 0, n_nf = 0;

        load_text("shortp;main;steady_work 290\nswapper;do_idle;halt 300\nbash;main;read 26\n", &slice);
        load_text("shortp;main;steady_work 10\nswapper;do_idle;halt 60\nbash;main;read 48\n", &base);
        /* event.folded is the whole slice: its rest is the baseline */
        assert_int_equal(folded_rest(&slice, &base, &slice, &rest), 0);
        assert_int_equal(rest.total, 118);
        assert_int_equal(folded_rises(&slice, &rest, RISE_PROCESS, SIZE_MAX, &np, &n_np), 0);
        assert_int_equal(folded_rises(&slice, &rest, RISE_FUNCTION, SIZE_MAX, &nf, &n_nf), 0);
        assert_true(n_np >= 1);
        assert_string_equal(np[0].name, "shortp"); /* z = 7.8, on 118 samples */
        AnswerInput in = { .near_proc = np, .n_near_proc = n_np, .near_func = nf, .n_near_func = n_nf,
                           .near = &slice, .rest = &rest, .n_cpus = 2 };
        assert_int_equal(answer_choose(&in, &slice, &base, &a), 0);
        assert_null(a.rise.name);
        assert_null(a.fall.name); /* nor bash, 26 of 616 against 48 of 118 */
        answer_done(&a);

        /* The same near against a rest of 200 samples and more is compared. */
        load_text("shortp;main;steady_work 17\nswapper;do_idle;halt 102\nbash;main;read 81\n", &big);
        assert_int_equal(folded_rest(&slice, &big, &slice, &bigrest), 0);
        assert_int_equal(bigrest.total, 200);
        rises_free(np, n_np);
        rises_free(nf, n_nf);
        assert_int_equal(folded_rises(&slice, &bigrest, RISE_PROCESS, SIZE_MAX, &np, &n_np), 0);
        assert_int_equal(folded_rises(&slice, &bigrest, RISE_FUNCTION, SIZE_MAX, &nf, &n_nf), 0);
        in = (AnswerInput) { .near_proc = np, .n_near_proc = n_np, .near_func = nf, .n_near_func = n_nf,
                             .near = &slice, .rest = &bigrest, .n_cpus = 2 };
        assert_int_equal(answer_choose(&in, &slice, &big, &a), 0);
        assert_non_null(a.rise.name);
        assert_string_equal(a.rise.name, "shortp");
        assert_true(answer_from_near(a.from));
        assert_true(a.clear);
        rises_free(np, n_np);
        rises_free(nf, n_nf);
}

/* A host idle but for one process, whose idle CPUs take no samples (cycles; a vCPU whose clock does
 * not fire in idle): the samples are those of its one busy CPU, and a process with 1% of a CPU has
 * 1% of them. Counted as a share times the host's 64 CPUs that is 0.64 of a CPU, far over the 2%
 * floor; counted in the CPUs the samples stand for (one) it is 1%, under it. */
static void test_answer_sampled_cpus(void **state) {
        _cleanup_(answer_done) Answer a = {};
        Rise tiny[] = { RISE("tinyp", 0.010, 0.0, 13.5) }, real[] = { RISE("realp", 0.030, 0.0, 20) };
        AnswerInput in = { .near_proc = tiny, .n_near_proc = 1, .n_cpus = 64 };

        assert_int_equal(answer_choose(&in, NULL, NULL, &a), 0);
        assert_true(a.clear); /* share times the host's CPUs: 0.64 of a CPU */
        answer_done(&a);
        in.cpus = (SampledCpus) { .slice = 1.0, .baseline = 1.0, .near = 1.0, .rest = 1.0 };
        assert_int_equal(answer_choose(&in, NULL, NULL, &a), 0);
        assert_string_equal(a.rise.name, "tinyp"); /* still the strongest there is, */
        assert_false(a.clear);                      /* said as no clear rise */
        answer_done(&a);
        /* 3% of the one CPU sampled is 3% of a CPU: a rise. */
        in.near_proc = real;
        assert_int_equal(answer_choose(&in, NULL, NULL, &a), 0);
        assert_true(a.clear);
        answer_done(&a);

        /* Each side in its own CPUs: 3% of the 0.5 CPUs the event's seconds sampled is 1.5% of a
         * CPU, and against 0.2% of the 4 the rest sampled (0.8%) no gain to speak of. */
        Rise half[] = { RISE("halfp", 0.030, 0.002, 9) };
        in = (AnswerInput) { .near_proc = half, .n_near_proc = 1, .n_cpus = 4,
                             .cpus = { .near = 0.5, .rest = 4 } };
        assert_int_equal(answer_choose(&in, NULL, NULL, &a), 0);
        assert_false(a.clear);
        answer_done(&a);

        /* A fall the same way: postgres had 20% of the rest's samples, which stood for 0.12 of a
         * CPU (2.4% of a CPU), and none around the event: a fall. With the rest's samples standing
         * for a twentieth of a CPU it is 1% of a CPU: none. */
        _cleanup_(folded_donep) Folded near = FOLDED_NULL, rest = FOLDED_NULL;
        Rise f = {};
        load_text("app;main;work 50\nswapper;idle 50\n", &near);
        load_text("app;main;work 300\npostgres;main;scan 100\nswapper;idle 100\n", &rest);
        SampledCpus c = { .near = 0.1, .rest = 0.12 };
        assert_int_equal(folded_fall(&near, &rest, NULL, NULL, 64, &c, &f), 0);
        assert_non_null(f.name);
        assert_string_equal(f.name, "postgres");
        rise_done(&f);
        c.rest = 0.05;
        assert_int_equal(folded_fall(&near, &rest, NULL, NULL, 64, &c, &f), 0);
        assert_null(f.name);
        /* Unknown (0): the host's CPUs, as before. */
        c = (SampledCpus) {};
        assert_int_equal(folded_fall(&near, &rest, NULL, NULL, 64, &c, &f), 0);
        assert_non_null(f.name);
        rise_done(&f);
}

/* Where a rise ran: the caller most of it went through, not the leaf or the process's main loop. */
static void test_rise_under(void **state) {
        _cleanup_(folded_donep) Folded near = FOLDED_NULL, rest = FOLDED_NULL, fresh = FOLDED_NULL;
        _cleanup_free_ char *u = NULL;

        /* kubelet: 40 samples around the event (20 of its loop, 20 reading memory.stat) against
         * 200 of its loop in 10x the samples: 20 beyond its share, 18 under memcg_stat_show. */
        load_text("java;main 920\n"
                  "kubelet;main;loop 20\n"
                  "kubelet;main;read;seq_read_iter;memcg_stat_show;vsnprintf 9\n"
                  "kubelet;main;read;seq_read_iter;memcg_stat_show;memcg_page_state 9\n"
                  "kubelet;main;read;seq_read_iter;seq_printf 2\n"
                  "swapper;idle 40\n",
                  &near);
        load_text("java;main 9300\nkubelet;main;loop 200\nswapper;idle 500\n", &rest);
        assert_int_equal(folded_rise_under(&near, &rest, "kubelet", &u), 0);
        assert_non_null(u);
        assert_string_equal(u, "memcg_stat_show");
        u = mfree(u);

        /* Without memcg_stat_show's 18, read and seq_read_iter (always together) hold the rise:
         * the deeper of the two. */
        folded_done(&near);
        load_text("java;main 920\nkubelet;main;loop 22\nkubelet;main;read;seq_read_iter;a 9\n"
                  "kubelet;main;read;seq_read_iter;b 9\nswapper;idle 40\n",
                  &near);
        assert_int_equal(folded_rise_under(&near, &rest, "kubelet", &u), 0);
        assert_string_equal(u, "seq_read_iter");
        u = mfree(u);

        /* A process that fell, or one whose every stack is the same path (a new process: its
         * frames are everywhere in it), has none. */
        assert_int_equal(folded_rise_under(&rest, &near, "kubelet", &u), 0);
        assert_null(u);
        load_text("java;main 900\ncollector;_start;main;work 100\n", &fresh);
        assert_int_equal(folded_rise_under(&fresh, &rest, "collector", &u), 0);
        assert_null(u);
        assert_int_equal(folded_rise_under(&near, &rest, "kube", &u), 0);
        assert_null(u);

        /* A workqueue worker busy with one job, the loop device's: its work item is named, though
         * it is in every stack, not the copy it spends its time in nor the worker's own frames. */
        _cleanup_(folded_donep) Folded wn = FOLDED_NULL, wr = FOLDED_NULL;
        load_text("java;main 600\n"
                  "kworker/u8:3;ret_from_fork;kthread;worker_thread;process_one_work;loop_process_work;lo_rw_aio;"
                  "ext4_buffered_write_iter;copy_folio_from_iter_atomic;memcpy 300\n"
                  "kworker/u8:3;ret_from_fork;kthread;worker_thread;process_one_work;loop_process_work;lo_rw_aio;"
                  "ext4_buffered_write_iter;ext4_da_write_end 30\n",
                  &wn);
        load_text("java;main 9000\nkworker/u8:3;ret_from_fork;kthread;worker_thread;process_one_work;vmstat_update 30\n",
                  &wr);
        assert_int_equal(folded_rise_under(&wn, &wr, "kworker/u8:3", &u), 0);
        assert_non_null(u);
        assert_string_equal(u, "loop_process_work");
        u = mfree(u);

        /* An empty frame (";;" in an edited file) is no function to name. */
        folded_done(&near);
        load_text("java;main 920\nkubelet;main;loop 22\nkubelet;main;read;;x 9\nkubelet;main;read;;y 9\n"
                  "swapper;idle 40\n",
                  &near);
        assert_int_equal(folded_rise_under(&near, &rest, "kubelet", &u), 0);
        assert_string_equal(u, "read");
        u = mfree(u);
}

/* A softirq storm of an ENA NIC reset on 16 CPUs: each ksoftirqd/N 1.6% of a CPU around the event
 * (under the answer's 2%), all of them 26%: the answer, as one, where its rise ran and in its
 * function that rose most. */
static void test_answer_percpu_kthreads(void **state) {
        _cleanup_(folded_donep) Folded near = FOLDED_NULL, rest = FOLDED_NULL;
        _cleanup_(answer_done) Answer a = {};
        _cleanup_free_ char *nt = NULL, *rt = NULL;
        Rise *np = NULL, *nf = NULL;
        size_t n_np = 0, n_nf = 0, len = 0;
        const char *path = "ret_from_fork_asm;ret_from_fork;kthread;smpboot_thread_fn;run_ksoftirqd;handle_softirqs";
        FILE *f;

        /* 16 CPUs at 97 Hz: 10 s around the event, 60 s in the rest. */
        f = open_memstream(&nt, &len);
        assert_non_null(f);
        fprintf(f, "java;main 9000\nswapper;do_idle %u\n", 15520u - 9000u - 16u * 16u);
        for (unsigned cpu = 0; cpu < 16; cpu++)
                fprintf(f, "ksoftirqd/%u;%s;net_rx_action;__napi_poll;ena_io_poll 13\nksoftirqd/%u;%s;rcu_core 3\n",
                        cpu, path, cpu, path);
        assert_int_equal(fclose(f), 0);
        f = open_memstream(&rt, &len);
        assert_non_null(f);
        fprintf(f, "java;main 54000\nswapper;do_idle %u\n", 93120u - 54000u - 16u * 2u);
        for (unsigned cpu = 0; cpu < 16; cpu++)
                fprintf(f, "ksoftirqd/%u;%s;rcu_core 2\n", cpu, path);
        assert_int_equal(fclose(f), 0);
        load_text(nt, &near);
        load_text(rt, &rest);

        assert_int_equal(folded_rises(&near, &rest, RISE_PROCESS, SIZE_MAX, &np, &n_np), 0);
        assert_int_equal(folded_rises(&near, &rest, RISE_FUNCTION, SIZE_MAX, &nf, &n_nf), 0);
        assert_true(n_np >= 1);
        assert_string_equal(np[0].name, "ksoftirqd/*");
        assert_int_equal(np[0].slice, 256);
        assert_string_equal(np[0].top_function, "ena_io_poll");
        assert_true(n_nf >= 1);
        assert_string_equal(nf[0].name, "ksoftirqd/*;ena_io_poll");

        AnswerInput in = { .near_proc = np, .n_near_proc = n_np, .near_func = nf, .n_near_func = n_nf,
                           .near = &near, .rest = &rest, .n_cpus = 16 };
        assert_int_equal(answer_choose(&in, &near, NULL, &a), 0);
        assert_non_null(a.rise.name);
        assert_string_equal(a.rise.name, "ksoftirqd/*");
        assert_true(a.clear);
        assert_int_equal(a.from, ANSWER_NEAR_PROCESS);
        assert_non_null(a.under);
        assert_string_equal(a.under, "ena_io_poll");
        assert_true(folded_key_share(&near, RISE_PROCESS, "ksoftirqd/*") > 0.016);
        assert_true(folded_key_share(&near, RISE_FUNCTION, "ksoftirqd/*;ena_io_poll") > 0.013);
        assert_true(folded_key_share(&near, RISE_PROCESS, "ksoftirqd/3") == 0); /* no key of its own */
        rises_free(np, n_np);
        rises_free(nf, n_nf);

        /* Workers of two CPUs' pools are one too, under their work item. */
        _cleanup_(folded_donep) Folded wn = FOLDED_NULL, wr = FOLDED_NULL;
        _cleanup_free_ char *u = NULL;
        load_text("java;main 600\n"
                  "kworker/0:1;ret_from_fork;kthread;worker_thread;process_one_work;loop_process_work;memcpy 150\n"
                  "kworker/1:2H;ret_from_fork;kthread;worker_thread;process_one_work;loop_process_work;memcpy 150\n"
                  "kworker/1:2H;ret_from_fork;kthread;worker_thread;process_one_work;vmstat_update 10\n",
                  &wn);
        load_text("java;main 9000\nkworker/0:1;ret_from_fork;kthread;worker_thread;process_one_work;vmstat_update 30\n",
                  &wr);
        assert_int_equal(folded_rise_under(&wn, &wr, "kworker/*", &u), 0);
        assert_non_null(u);
        assert_string_equal(u, "loop_process_work");
}

/* Where a rise ran is never a frame that names nothing or one every thread starts from: a rise
 * spread over three callers, with some stacks cut short of the program's start, is under none. */
static void test_rise_under_says_nothing(void **state) {
        static const char *const near_texts[] = {
                /* cut chains: "[unknown]" in their root */
                "java;main 900\napp;[unknown];a;x 20\napp;[unknown];b;y 20\napp;[unknown];c;z 20\n"
                "app;main;loop 8\n",
                /* a program without symbols: its own frames by its file's name */
                "java;main 900\napp;_start;__libc_start_main@@GLIBC_2.34;__libc_start_call_main;[app];a;x 20\n"
                "app;_start;__libc_start_main@@GLIBC_2.34;__libc_start_call_main;[app];b;y 20\n"
                "app;_start;__libc_start_main@@GLIBC_2.34;__libc_start_call_main;[app];c;z 20\n"
                "app;[unknown];loop 8\n",
                /* main's frame lost (frame pointers), some stacks cut */
                "java;main 900\napp;_start;__libc_start_main_impl;__libc_start_call_main;a;x 20\n"
                "app;_start;__libc_start_main_impl;__libc_start_call_main;b;y 20\n"
                "app;_start;__libc_start_main_impl;__libc_start_call_main;c;z 20\napp;[unknown];loop 8\n",
                /* threads */
                "java;main 900\napp;__clone3;start_thread;a;x 20\napp;__clone3;start_thread;b;y 20\n"
                "app;__clone3;start_thread;c;z 20\napp;[unknown];loop 8\n",
        };

        for (size_t i = 0; i < ELEMENTSOF(near_texts); i++) {
                _cleanup_(folded_donep) Folded near = FOLDED_NULL, rest = FOLDED_NULL;
                _cleanup_free_ char *u = NULL;

                load_text(near_texts[i], &near);
                load_text("java;main 9300\napp;main;loop 100\n", &rest);
                assert_int_equal(folded_rise_under(&near, &rest, "app", &u), 0);
                if (u)
                        fail_msg("case %zu: under %s", i, u);
        }

        /* With a caller that holds the rise, that caller, as before. */
        _cleanup_(folded_donep) Folded near = FOLDED_NULL, rest = FOLDED_NULL;
        _cleanup_free_ char *u = NULL;
        load_text("java;main 900\napp;[unknown];handle;a;x 20\napp;[unknown];handle;b;y 20\n"
                  "app;[unknown];c;z 20\napp;[unknown];loop 8\n",
                  &near);
        load_text("java;main 9300\napp;[unknown];loop 100\n", &rest);
        assert_int_equal(folded_rise_under(&near, &rest, "app", &u), 0);
        assert_non_null(u);
        assert_string_equal(u, "handle");
}

/* A function that rose is one that says something: never a frame that names nothing (perf's
 * "[unknown]" of a cut chain, a stripped program's own code by its file's name, "[nw-1f2e]") or a
 * start-up frame, as the leaf of a process's rise in the rankings or as the function the answer
 * names; the best leaf that names one instead, or none. */
static void test_function_names_one(void **state) {
        _cleanup_(folded_donep) Folded near = FOLDED_NULL, rest = FOLDED_NULL;
        Rise *np = NULL, *nf = NULL;
        size_t n_np = 0, n_nf = 0;

        /* A stripped program whose rise is mostly its own code: its named leaf that rose, memcpy. */
        load_text("java;main 900\nnw;[nw-1f2e] 60\nnw;_start;[nw-1f2e];[unknown] 30\n"
                  "nw;_start;__libc_start_main;[nw-1f2e];memcpy 12\nnw;_start 8\n",
                  &near);
        load_text("java;main 9300\nnw;[nw-1f2e] 100\n", &rest);
        assert_int_equal(folded_rises(&near, &rest, RISE_PROCESS, SIZE_MAX, &np, &n_np), 0);
        assert_true(n_np >= 1);
        assert_string_equal(np[0].name, "nw");
        assert_non_null(np[0].top_function);
        assert_string_equal(np[0].top_function, "memcpy");
        rises_free(np, n_np);

        /* None of its leaves names a function: none. */
        folded_done(&near);
        load_text("java;main 900\nnw;[nw-1f2e] 60\nnw;_start;[nw-1f2e];[unknown] 30\nnw;_start 8\n", &near);
        assert_int_equal(folded_rises(&near, &rest, RISE_PROCESS, SIZE_MAX, &np, &n_np), 0);
        assert_true(n_np >= 1);
        assert_string_equal(np[0].name, "nw");
        assert_null(np[0].top_function);
        rises_free(np, n_np);

        /* app kept its share (10%) while its work moved to code perf could not name and to hash():
         * the answer is a function of it, hash, not "[unknown] in app". */
        _cleanup_(answer_done) Answer a = {};
        folded_done(&near);
        folded_done(&rest);
        load_text("java;main 900\napp;main;work 40\napp;main;[unknown] 40\napp;main;hash 20\n", &near);
        load_text("java;main 9000\napp;main;work 1000\n", &rest);
        assert_int_equal(folded_rises(&near, &rest, RISE_PROCESS, SIZE_MAX, &np, &n_np), 0);
        assert_int_equal(folded_rises(&near, &rest, RISE_FUNCTION, SIZE_MAX, &nf, &n_nf), 0);
        assert_int_equal(n_np, 0);
        assert_int_equal(n_nf, 2);
        assert_string_equal(nf[0].name, "app;[unknown]");
        AnswerInput in = { .near_func = nf, .n_near_func = n_nf, .near = &near, .rest = &rest, .n_cpus = 2 };
        assert_int_equal(answer_choose(&in, &near, NULL, &a), 0);
        assert_non_null(a.rise.name);
        assert_string_equal(a.rise.name, "app;hash");
        assert_true(a.clear);
        answer_done(&a);

        /* Only "[unknown] in app" rose: nothing to name, not even as the strongest there is. */
        in.near_func = nf;
        in.n_near_func = 1;
        assert_int_equal(answer_choose(&in, &near, NULL, &a), 0);
        assert_null(a.rise.name);
        rises_free(nf, n_nf);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_answer),
                cmocka_unit_test(test_fall),
                cmocka_unit_test(test_fall_not_before),
                cmocka_unit_test(test_fall_stolen),
                cmocka_unit_test(test_answer_small_baseline),
                cmocka_unit_test(test_answer_small_rest),
                cmocka_unit_test(test_answer_sampled_cpus),
                cmocka_unit_test(test_rise_under),
                cmocka_unit_test(test_answer_percpu_kthreads),
                cmocka_unit_test(test_rise_under_says_nothing),
                cmocka_unit_test(test_function_names_one),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
