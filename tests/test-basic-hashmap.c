/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The shared hash table: insert, replace, growth, iteration, keys with NUL bytes, keys held in their
 * entry (8 bytes and fewer) beside keys held in the arena.
 */
#include <stdio.h>
#include <string.h>

#include "basic/hashmap.h"
#include "tests.h"

static void test_put_get_replace(void **state) {
        _cleanup_(hashmap_freep) Hashmap *h = hashmap_new();
        uint64_t v;

        assert_non_null(h);
        assert_int_equal(hashmap_put(h, "a", 1, 1), 1);
        assert_int_equal(hashmap_put(h, "a", 1, 2), 0);
        assert_true(hashmap_get(h, "a", 1, &v));
        assert_int_equal(v, 2);
        assert_false(hashmap_get(h, "b", 1, &v));
        assert_int_equal(hashmap_size(h), 1);
}

static void test_grows_and_keeps_everything(void **state) {
        _cleanup_(hashmap_freep) Hashmap *h = hashmap_new();
        char key[32];

        for (uint64_t i = 0; i < 100000; i++) {
                int n = snprintf(key, sizeof key, "key-%llu", (unsigned long long) i);
                assert_int_equal(hashmap_put(h, key, (size_t) n, i * 3), 1);
        }
        assert_int_equal(hashmap_size(h), 100000);
        for (uint64_t i = 0; i < 100000; i++) {
                uint64_t v;
                int n = snprintf(key, sizeof key, "key-%llu", (unsigned long long) i);
                assert_true(hashmap_get(h, key, (size_t) n, &v));
                assert_int_equal(v, i * 3);
        }
}

static void test_binary_keys_and_iteration(void **state) {
        _cleanup_(hashmap_freep) Hashmap *h = hashmap_new();
        const char k1[] = { 'x', 0, 'y' }, k2[] = { 'x', 0, 'z' };
        uint64_t sum = 0, n = 0, v;

        assert_int_equal(hashmap_put(h, k1, sizeof k1, 10), 1);
        assert_int_equal(hashmap_put(h, k2, sizeof k2, 20), 1);
        assert_int_equal(hashmap_put(h, "", 0, 5), 1);
        for (size_t it = 0; hashmap_iterate(h, &it, NULL, NULL, &v);) {
                sum += v;
                n++;
        }
        assert_int_equal(n, 3);
        assert_int_equal(sum, 35);
}

/* The empty key alone: the arena is still empty, and finding it must not touch the arena. */
static void test_empty_key_in_empty_table(void **state) {
        _cleanup_(hashmap_freep) Hashmap *h = hashmap_new();
        uint64_t v;

        assert_int_equal(hashmap_put(h, "", 0, 7), 1);
        assert_true(hashmap_get(h, "", 0, &v));
        assert_int_equal(v, 7);
        assert_int_equal(hashmap_put(h, "", 0, 8), 0);
        assert_false(hashmap_get(h, "a", 1, &v));
        assert_true(hashmap_get(h, "", 0, &v));
        assert_int_equal(v, 8);
}

static void test_slot_counts(void **state) {
        _cleanup_(hashmap_freep) Hashmap *h = hashmap_new();
        bool added;

        for (int i = 0; i < 5; i++) {
                uint64_t *c = hashmap_slot(h, "stack", 5, 0, &added);
                assert_non_null(c);
                assert_int_equal(added, i == 0);
                (*c)++;
        }
        uint64_t v;
        assert_true(hashmap_get(h, "stack", 5, &v));
        assert_int_equal(v, 5);
}

/* Keys of 8 bytes and fewer live in their entry, zero-padded: keys of zero bytes of every length
 * from 0 to 16 are all different keys, on both sides of that limit, before and after the table
 * grows, and iteration hands each back whole. */
static void test_short_keys_in_entries(void **state) {
        _cleanup_(hashmap_freep) Hashmap *h = hashmap_new();
        const uint8_t zeros[16] = {};
        uint64_t v, seen = 0;
        const void *k;
        size_t kl;

        assert_non_null(h);
        for (size_t n = 0; n <= 16; n++)
                assert_int_equal(hashmap_put(h, zeros, n, 100000 + n), 1);
        assert_int_equal(hashmap_put(h, "abcdefgh", 8, 1), 1);
        assert_int_equal(hashmap_put(h, "abcdefghi", 9, 2), 1);
        assert_int_equal(hashmap_put(h, "abcdefg", 7, 3), 1);
        for (uint64_t i = 1; i <= 20000; i++) /* the stack tree's keys: two uint32_t (0: the zeros above) */
                assert_int_equal(hashmap_put(h, &i, sizeof i, i), 1);
        assert_int_equal(hashmap_size(h), 17 + 3 + 20000);
        for (size_t n = 0; n <= 16; n++) {
                assert_true(hashmap_get(h, zeros, n, &v));
                assert_int_equal(v, 100000 + n);
        }
        assert_true(hashmap_get(h, "abcdefgh", 8, &v));
        assert_int_equal(v, 1);
        assert_true(hashmap_get(h, "abcdefghi", 9, &v));
        assert_int_equal(v, 2);
        assert_true(hashmap_get(h, "abcdefg", 7, &v));
        assert_int_equal(v, 3);
        assert_false(hashmap_get(h, "abcdefgx", 8, &v));
        for (uint64_t i = 1; i <= 20000; i++) {
                assert_true(hashmap_get(h, &i, sizeof i, &v));
                assert_int_equal(v, i);
        }
        for (size_t it = 0; hashmap_iterate(h, &it, &k, &kl, &v);) {
                if (v < 100000 || v > 100016)
                        continue;
                assert_int_equal(kl, v - 100000);
                assert_true(kl == 0 || memcmp(k, zeros, kl) == 0);
                seen |= UINT64_C(1) << (v - 100000);
        }
        assert_int_equal(seen, (UINT64_C(1) << 17) - 1);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_put_get_replace),
                cmocka_unit_test(test_grows_and_keeps_everything),
                cmocka_unit_test(test_binary_keys_and_iteration),
                cmocka_unit_test(test_empty_key_in_empty_table),
                cmocka_unit_test(test_slot_counts),
                cmocka_unit_test(test_short_keys_in_entries),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
