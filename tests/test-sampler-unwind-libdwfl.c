/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * elfutils' own unwinder (libdwfl's dwfl_getthread_frames(), what perf script uses when built with
 * libdw) as a second opinion on real snapshots of helpers/unwind-fixture.c
 * (tests/unwind-test-util.h): both give the same addresses; and what a walk costs with each (the
 * cost test prints it, checks nothing).
 */
#include "tests.h"
#include "unwind-test-util.h"

#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * elfutils' unwinder on a snapshot, the way perf script drives it: every mapped file reported at
 * its load bias, one thread whose registers are the snapshot's, memory read from the stack copy.
 */
#define DWFL_THREAD_TID 1 /* a pid_t for libdwfl's one thread; nothing is attached */

typedef struct DwflWalk {
        const Snapshot *s;
        uint64_t *ips;
        size_t n, max;
} DwflWalk;

static pid_t dwfl_snapshot_next_thread(Dwfl *dwfl, void *arg, void **thread_argp) {
        if (*thread_argp)
                return 0;
        *thread_argp = arg;
        return DWFL_THREAD_TID;
}

static bool dwfl_snapshot_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg) {
        const Snapshot *s = ((const DwflWalk *) arg)->s;

        if (addr < s->sp || s->size < sizeof(*result) || addr - s->sp > s->size - sizeof(*result))
                return false;
        memcpy(result, s->stack + (addr - s->sp), sizeof(*result));
        return true;
}

static bool dwfl_snapshot_set_initial_registers(Dwfl_Thread *thread, void *arg) {
        const Snapshot *s = ((const DwflWalk *) arg)->s;
        Dwarf_Word bp_sp[2] = { s->bp, s->sp }; /* x86-64 DWARF registers 6 (rbp) and 7 (rsp) */

        if (!dwfl_thread_state_registers(thread, 6, 2, bp_sp))
                return false;
        dwfl_thread_state_register_pc(thread, s->ip);
        return true;
}

static const Dwfl_Thread_Callbacks dwfl_snapshot_callbacks = {
        .next_thread = dwfl_snapshot_next_thread,
        .memory_read = dwfl_snapshot_memory_read,
        .set_initial_registers = dwfl_snapshot_set_initial_registers,
};

static const Dwfl_Callbacks dwfl_offline_callbacks = {
        .find_debuginfo = dwfl_standard_find_debuginfo,
        .section_address = dwfl_offline_section_address,
};

static Dwfl *dwfl_for_snapshot(Snapshot *s, DwflWalk *w) {
        Dwfl *dwfl = dwfl_begin(&dwfl_offline_callbacks);

        assert_non_null(dwfl);
        dwfl_report_begin(dwfl);
        for (size_t i = 0; i < s->n_maps; i++) {
                const ProcMap *m = &s->maps[i];
                bool seen = false;

                if (m->path[0] != '/')
                        continue;
                for (size_t j = 0; j < i; j++)
                        seen |= streq(s->maps[j].path, m->path);
                /* The load bias from the file's first code mapping, as perf script reports it
                 * (the files here keep their code at the same offset in file and memory). */
                if (!seen)
                        assert_non_null(dwfl_report_elf(dwfl, m->path, m->path, -1, m->start - m->pgoff, false));
        }
        assert_int_equal(dwfl_report_end(dwfl, NULL, NULL), 0);
        *w = (DwflWalk) { .s = s };
        assert_true(dwfl_attach_state(dwfl, NULL, DWFL_THREAD_TID, &dwfl_snapshot_callbacks, w));
        return dwfl;
}

static int dwfl_frame_cb(Dwfl_Frame *frame, void *arg) {
        DwflWalk *w = arg;
        Dwarf_Addr pc;

        if (w->n >= w->max || !dwfl_frame_pc(frame, &pc, NULL))
                return DWARF_CB_ABORT;
        w->ips[w->n++] = pc;
        return DWARF_CB_OK;
}

/* libdwfl's walk of the snapshot into ips; returns how many frames it gave. */
static size_t dwfl_walk(Dwfl *dwfl, DwflWalk *w, uint64_t *ips, size_t max) {
        w->ips = ips;
        w->n = 0;
        w->max = max;
        (void) dwfl_getthread_frames(dwfl, DWFL_THREAD_TID, dwfl_frame_cb, w);
        return w->n;
}

/* Both unwinders give the same addresses for the fixture's whole stack to _start, a short one and
 * one through 60 recursive calls. */
static void test_unwind_same_as_libdwfl(void **state) {
        for (int deep = 0; deep < 2; deep++) {
                _cleanup_(unwinder_freep) Unwinder *u = NULL;
                _cleanup_(snapshot_done) Snapshot s = {};
                uint64_t ips[128], dw_ips[128];
                DwflWalk w;
                Dwfl *dwfl;
                size_t n, dn;

                if (deep)
                        assert_int_equal(setenv("UNWIND_FIXTURE_DEPTH", "60", 1), 0);
                take_snapshot(getenv("TPROF_UNWIND_FIXTURE_STRIPPED"), &s);
                assert_int_equal(unsetenv("UNWIND_FIXTURE_DEPTH"), 0);
                assert_int_equal(unwinder_new(&(UnwinderOptions) { .mode = UNWIND_MODE_DWARF }, &u), 0);
                n = walk(u, &s, s.size, ips, ELEMENTSOF(ips));
                dwfl = dwfl_for_snapshot(&s, &w);
                dn = dwfl_walk(dwfl, &w, dw_ips, ELEMENTSOF(dw_ips));
                print_message("  tprof: %zu frames, libdwfl: %zu frames\n", n, dn);
                assert_true(deep ? n > 60 : n > 5);
                assert_int_not_equal(ips[n - 1], 0); /* whole, not cut */
                /* libdwfl may add the address 0 after _start, where both walks stop */
                assert_true(dn == n || (dn == n + 1 && dw_ips[n] == 0));
                assert_memory_equal(ips, dw_ips, n * sizeof(uint64_t));
                dwfl_end(dwfl);
        }
}

/* Not a check: prints what a walk costs with the compact rule cache, with a CFI search per frame,
 * and with libdwfl's unwinder (which keeps its own CFI caches between walks). */
static void test_unwind_cost(void **state) {
        _cleanup_(snapshot_done) Snapshot s = {};
        uint64_t ips[128];

        take_snapshot(getenv("TPROF_UNWIND_FIXTURE_STRIPPED"), &s);
        for (int round = 0; round < 4; round++) {
                int nocache = round % 2;
                _cleanup_(unwinder_freep) Unwinder *u = NULL;
                struct timespec a, b;
                const unsigned rounds = 2000;

                assert_int_equal(unwinder_new(&(UnwinderOptions) { .mode = UNWIND_MODE_AUTO, .no_rule_cache = nocache },
                                              &u), 0);
                (void) walk(u, &s, s.size, ips, ELEMENTSOF(ips)); /* files loaded */
                clock_gettime(CLOCK_MONOTONIC, &a);
                for (unsigned i = 0; i < rounds; i++)
                        (void) walk(u, &s, s.size, ips, ELEMENTSOF(ips));
                clock_gettime(CLOCK_MONOTONIC, &b);
                print_message("  %s: %.2f us per stack of %zu frames\n",
                              nocache ? "CFI search per frame (libdw dwarf_cfi_addrframe)" : "compact rule cache",
                              ((double) (b.tv_sec - a.tv_sec) * 1e6 + (double) (b.tv_nsec - a.tv_nsec) / 1e3) / rounds,
                              walk(u, &s, s.size, ips, ELEMENTSOF(ips)));
        }
        for (int round = 0; round < 2; round++) {
                Dwfl *dwfl;
                DwflWalk w;
                struct timespec a, b;
                const unsigned rounds = 2000;

                dwfl = dwfl_for_snapshot(&s, &w);
                (void) dwfl_walk(dwfl, &w, ips, ELEMENTSOF(ips)); /* files opened, CFI read */
                clock_gettime(CLOCK_MONOTONIC, &a);
                for (unsigned i = 0; i < rounds; i++)
                        (void) dwfl_walk(dwfl, &w, ips, ELEMENTSOF(ips));
                clock_gettime(CLOCK_MONOTONIC, &b);
                print_message("  libdwfl dwfl_getthread_frames: %.2f us per stack of %zu frames\n",
                              ((double) (b.tv_sec - a.tv_sec) * 1e6 + (double) (b.tv_nsec - a.tv_nsec) / 1e3) / rounds,
                              dwfl_walk(dwfl, &w, ips, ELEMENTSOF(ips)));
                dwfl_end(dwfl);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_unwind_same_as_libdwfl),
                cmocka_unit_test(test_unwind_cost),
        };
#if !defined(__x86_64__)
        printf("The unwinder walks x86-64 stacks only.\n");
        return EXIT_TEST_SKIP;
#endif
        if (!getenv("TPROF_UNWIND_FIXTURE"))
                return EXIT_TEST_SKIP;
        return cmocka_run_group_tests(tests, setup, teardown);
}
