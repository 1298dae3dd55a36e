/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Cooldown, repeats and storm limits of the incident trigger.
 */
#include <stdio.h>

#include "basic/time-util.h"
#include "incident/incident-trigger.h"
#include "tests.h"

#define S(x) ((uint64_t) (x) * NSEC_PER_SEC)

static void test_repeats_inside_cooldown_join(void **state) {
        _cleanup_(trigger_freep) Trigger *t = trigger_new(NULL);
        int incident = 1;
        void *cookie = NULL;

        assert_int_equal(trigger_decide(t, "ena-reset", S(100), S(600), S(1), &cookie), TRIGGER_NEW);
        assert_int_equal(trigger_register(t, "ena-reset", S(100), S(600), S(1), &incident), 0);
        assert_int_equal(trigger_decide(t, "ena-reset", S(101), S(600), S(2), &cookie), TRIGGER_JOINED);
        assert_ptr_equal(cookie, &incident);
        /* Still joins after the bundle is written, as long as the cooldown runs. */
        trigger_closed(t, &incident);
        assert_int_equal(trigger_decide(t, "ena-reset", S(699), S(600), S(3), &cookie), TRIGGER_JOINED);
        /* Past the cooldown: a new incident. */
        assert_int_equal(trigger_decide(t, "ena-reset", S(700), S(600), S(4), &cookie), TRIGGER_NEW);

        TriggerStats st;
        trigger_get_stats(t, &st);
        assert_int_equal(st.matches, 4);
        assert_int_equal(st.joined, 2);
        assert_int_equal(st.incidents, 1);
}

static void test_other_rules_are_independent(void **state) {
        _cleanup_(trigger_freep) Trigger *t = trigger_new(NULL);
        int a = 1;
        void *cookie;

        assert_int_equal(trigger_decide(t, "a", S(10), S(60), S(1), &cookie), TRIGGER_NEW);
        assert_int_equal(trigger_register(t, "a", S(10), S(60), S(1), &a), 0);
        assert_int_equal(trigger_decide(t, "b", S(11), S(60), S(1), &cookie), TRIGGER_NEW);
}

static void test_forget_ends_the_cooldown(void **state) {
        _cleanup_(trigger_freep) Trigger *t = trigger_new(NULL);
        int a = 1;
        void *cookie;

        assert_int_equal(trigger_register(t, "a", S(10), S(60), S(1), &a), 0);
        trigger_forget(t, &a);
        assert_int_equal(trigger_decide(t, "a", S(11), S(60), S(1), &cookie), TRIGGER_NEW);
}

static void test_storm_is_bounded(void **state) {
        TriggerLimits limits = { .max_open = 3, .max_per_hour = 5 };
        _cleanup_(trigger_freep) Trigger *t = trigger_new(&limits);
        int cookies[100];
        unsigned news = 0;
        char name[16];
        void *cookie;

        /* 100 distinct rules firing at once: only max_open incidents start. */
        for (int i = 0; i < 100; i++) {
                snprintf(name, sizeof name, "r%d", i);
                if (trigger_decide(t, name, S(1000), S(1), S(1), &cookie) == TRIGGER_NEW) {
                        assert_int_equal(trigger_register(t, name, S(1000), S(1), S(1), &cookies[i]), 0);
                        news++;
                }
        }
        assert_int_equal(news, 3);
        assert_int_equal(trigger_n_open(t), 3);

        /* As they complete, more may start, but never more than max_per_hour in an hour. */
        for (int round = 0; round < 10; round++) {
                for (int i = 0; i < 100; i++)
                        trigger_closed(t, &cookies[i]);
                for (int i = 0; i < 100; i++) {
                        snprintf(name, sizeof name, "r%d", i);
                        if (trigger_decide(t, name, S(2000 + round * 10), S(1), S(10 + round), &cookie) ==
                            TRIGGER_NEW) {
                                assert_int_equal(trigger_register(t, name, S(2000 + round * 10), S(1),
                                                                  S(10 + round), &cookies[i]),
                                                 0);
                                news++;
                        }
                }
        }
        assert_int_equal(news, 5);

        /* An hour later the budget is back. */
        for (int i = 0; i < 100; i++)
                trigger_closed(t, &cookies[i]);
        assert_int_equal(trigger_decide(t, "late", S(9000), S(1), S(3700), &cookie), TRIGGER_NEW);

        TriggerStats st;
        trigger_get_stats(t, &st);
        assert_true(st.rate_limited > 0);
        assert_true(st.too_many_open > 0);
}

/* One rule with no cooldown, matching over and over: each match is a new incident of the same rule,
 * and they all count against max_open while they record, not just the latest. */
static void test_one_rule_without_cooldown_is_bounded(void **state) {
        _cleanup_(trigger_freep) Trigger *t = trigger_new(NULL);
        int cookies[100];
        unsigned news = 0;
        void *cookie;

        for (int i = 0; i < 100; i++)
                if (trigger_decide(t, "flood", S(1000 + i), 0, S(1), &cookie) == TRIGGER_NEW) {
                        assert_int_equal(trigger_register(t, "flood", S(1000 + i), 0, S(1), &cookies[i]), 0);
                        news++;
                }
        assert_int_equal(news, TRIGGER_MAX_OPEN_DEFAULT);
        assert_int_equal(trigger_n_open(t), TRIGGER_MAX_OPEN_DEFAULT);

        /* The first one is written: one more may start. Forgetting one that is no longer the rule's
         * latest also frees its place. */
        trigger_closed(t, &cookies[0]);
        trigger_closed(t, &cookies[0]); /* twice: still one place */
        assert_int_equal(trigger_n_open(t), TRIGGER_MAX_OPEN_DEFAULT - 1);
        trigger_forget(t, &cookies[1]);
        assert_int_equal(trigger_n_open(t), TRIGGER_MAX_OPEN_DEFAULT - 2);
        assert_int_equal(trigger_decide(t, "flood", S(2000), 0, S(2), &cookie), TRIGGER_NEW);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_repeats_inside_cooldown_join),
                cmocka_unit_test(test_other_rules_are_independent),
                cmocka_unit_test(test_forget_ends_the_cooldown),
                cmocka_unit_test(test_storm_is_bounded),
                cmocka_unit_test(test_one_rule_without_cooldown_is_bounded),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
