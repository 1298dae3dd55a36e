/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Folding counts samples per stack, roots at the comm, orders bytewise.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile-fold.h"
#include "tests.h"

static const Frame burn_frames[] = {
        { .symbol = "leaf", .dso = "/t/burn", .addr = 0x401010 },
        { .symbol = "middle", .dso = "/t/burn", .addr = 0x401020 },
        { .symbol = "main", .dso = "/t/burn", .addr = 0x401030 },
};

static const Frame kernel_frames[] = {
        { .symbol = "native_safe_halt", .dso = "[kernel.kallsyms]", .addr = 0xffffffff81000010, .kernel = true },
        { .symbol = "[unknown]", .dso = "[kernel.kallsyms]", .addr = 0xffffffff81000020, .kernel = true },
};

static void test_fold_counts_and_orders(void **state) {
        _cleanup_(folder_freep) Folder *f = folder_new();
        Sample burn = { .comm = "burn", .n_frames = 3, .frames = burn_frames };
        Sample idle = { .comm = "swapper", .n_frames = 2, .frames = kernel_frames };
        Sample empty = { .comm = "x", .n_frames = 0 };
        const FoldedStack *st;
        size_t n;

        assert_non_null(f);
        for (int i = 0; i < 3; i++)
                assert_int_equal(folder_add(f, &burn, 1), 0);
        assert_int_equal(folder_add(f, &idle, 2), 0);
        assert_int_equal(folder_add(f, &empty, 1), 0);
        assert_int_equal(folder_total(f), 6);
        assert_int_equal(folder_sorted(f, &st, &n), 0);
        assert_int_equal(n, 3);
        assert_string_equal(st[0].key, "burn;main;middle;leaf");
        assert_int_equal(st[0].count, 3);
        assert_string_equal(st[1].key, "swapper;[[kernel.kallsyms]];native_safe_halt");
        assert_int_equal(st[1].count, 2);
        assert_string_equal(st[2].key, "x_");
}

/* A producer's slot names the same frames every time: the key is made once per comm. */
static void test_fold_stack_slots(void **state) {
        _cleanup_(folder_freep) Folder *f = folder_new(), *g = folder_new();
        SampleStackSlot slot = {};
        Sample burn = { .comm = "burn", .n_frames = 3, .frames = burn_frames, .stack_slot = &slot };
        Sample other = burn;
        const FoldedStack *st;
        size_t n;

        other.comm = "other";
        assert_int_equal(folder_add(f, &burn, 1), 0);
        assert_true(slot.tag != 0);
        assert_int_equal(folder_add(f, &burn, 1), 0);
        assert_int_equal(folder_add(f, &other, 1), 0); /* same slot, another comm: its own stack */
        assert_int_equal(folder_add(f, &burn, 1), 0);
        assert_int_equal(folder_add(g, &burn, 5), 0); /* another folder's tag: computed afresh */
        assert_int_equal(folder_add(f, &burn, 1), 0);
        assert_int_equal(folder_sorted(f, &st, &n), 0);
        assert_int_equal(n, 2);
        assert_string_equal(st[0].key, "burn;main;middle;leaf");
        assert_int_equal(st[0].count, 4);
        assert_string_equal(st[1].key, "other;main;middle;leaf");
        assert_int_equal(st[1].count, 1);
        assert_int_equal(folder_sorted(g, &st, &n), 0);
        assert_int_equal(n, 1);
        assert_int_equal(st[0].count, 5);
}

static void test_fold_write_format(void **state) {
        _cleanup_(folder_freep) Folder *f = folder_new();
        Sample burn = { .comm = "my prog", .n_frames = 3, .frames = burn_frames };
        char *buf = NULL;
        size_t len = 0;
        FILE *out = open_memstream(&buf, &len);

        assert_int_equal(folder_add(f, &burn, 7), 0);
        assert_int_equal(folder_write(f, out), 0);
        fclose(out);
        assert_string_equal(buf, "my_prog;main;middle;leaf 7\n");
        free(buf);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_fold_counts_and_orders),
                cmocka_unit_test(test_fold_stack_slots),
                cmocka_unit_test(test_fold_write_format),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
