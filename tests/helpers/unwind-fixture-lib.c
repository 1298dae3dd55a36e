/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The shared-library part of the unwinding fixture's call path (built without frame pointers):
 * the executable calls unwind_fixture_lib_middle(), which calls back into the executable, so a
 * walk must cross from the program into the library and back.
 */
#include <stdint.h>

__attribute__((visibility("default"), noinline)) uint64_t unwind_fixture_lib_middle(uint64_t (*callback)(uint64_t),
                                                                                    uint64_t n);

uint64_t unwind_fixture_lib_middle(uint64_t (*callback)(uint64_t), uint64_t n) {
        volatile uint64_t pad[8]; /* a frame of its own, with a CFA offset of its own */
        for (unsigned i = 0; i < 8; i++)
                pad[i] = n + i;
        return callback(n) + pad[3];
}
