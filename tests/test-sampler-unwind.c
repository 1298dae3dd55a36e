/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The unwinder on real register and stack snapshots of helpers/unwind-fixture.c
 * (tests/unwind-test-util.h): the whole path walked through the PIE and its library; the same
 * program stripped to .eh_frame; with a library built without unwind tables but with frame
 * pointers (auto walks it with frame pointers, dwarf cuts it); a frame-pointer chain's end; a
 * library whose .eh_frame_hdr comes after .eh_frame; tables that do not fit; copies cut short,
 * garbage and the time budget (cut, counted). Unwind rules from debug information:
 * test-sampler-unwind-debuginfo.c; elfutils' unwinder on the same copies:
 * test-sampler-unwind-libdwfl.c. Single files' tables and synthetic stacks are
 * test-sampler-unwind-cfi.c's.
 */
#include "tests.h"
#include "unwind-test-util.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic/fileio.h"
#include "basic/time-util.h"
#include "elf-test-util.h"
#include "sampler/sampler-unwind-cfi.h"

static void test_unwind_pie_and_library(void **state) {
        expect_whole_path(getenv("TPROF_UNWIND_FIXTURE"), getenv("TPROF_UNWIND_FIXTURE"), UNWIND_MODE_DWARF, false);
}

static void test_unwind_stripped(void **state) {
        expect_whole_path(getenv("TPROF_UNWIND_FIXTURE_STRIPPED"), getenv("TPROF_UNWIND_FIXTURE"), UNWIND_MODE_DWARF,
                          false);
}

static void test_unwind_auto_falls_back_to_frame_pointers(void **state) {
        expect_whole_path(getenv("TPROF_UNWIND_FIXTURE_NOCFI"), getenv("TPROF_UNWIND_FIXTURE_NOCFI"), UNWIND_MODE_AUTO,
                          true);
}

/* A frame-pointer chain ends where the saved bp is 0 (the psABI's outermost frame; Go's goroutine
 * entry, runtime.goexit, ends so too): a whole stack, not a cut one. A synthetic copy of one frame
 * in the library without CFI, its saved bp 0 and its return address back into that library. */
/* Walks a synthetic stack of one frame at SYNTH_SP: { saved bp, return address }. */
#define SYNTH_SP UINT64_C(0x7ff000000000)
static size_t walk_frame(Unwinder *u, const Snapshot *s, uint64_t ip, uint64_t bp, const uint64_t frame[2],
                         uint64_t *ips, size_t max) {
        return unwinder_unwind(u, s->procs,
                               &(UnwindInput) { .pid = FIXTURE_PID, .ip = ip, .sp = SYNTH_SP, .bp = bp,
                                                .stack = (const uint8_t *) frame, .stack_size = 2 * sizeof(uint64_t) },
                               ips, max);
}

/* The no-CFI fixture's snapshot in *s and an AUTO unwinder in *u; returns a return address in
 * unwind_fixture_lib_middle, built without unwind tables and walked by its frame pointer. */
static uint64_t nocfi_middle_ip(Unwinder **u, Snapshot *s) {
        uint64_t ips[128];

        take_snapshot(getenv("TPROF_UNWIND_FIXTURE_NOCFI"), s);
        assert_int_equal(unwinder_new(&(UnwinderOptions) { .mode = UNWIND_MODE_AUTO }, u), 0);
        assert_true(walk(*u, s, s->size, ips, ELEMENTSOF(ips)) > 3);
        return ips[2];
}

static void test_unwind_fp_chain_ends_at_zero_bp(void **state) {
        _cleanup_(unwinder_freep) Unwinder *u = NULL;
        _cleanup_(snapshot_done) Snapshot s = {};
        uint64_t ips[128], frame[2], lib_ip;
        UnwindStats st;
        size_t n;

        lib_ip = nocfi_middle_ip(&u, &s);
        assert_non_null(strstr(proc_table_find_map(s.procs, FIXTURE_PID, lib_ip - 1)->path, "nocfi"));

        frame[0] = 0;      /* the caller's bp: none */
        frame[1] = lib_ip; /* the return address */
        n = walk_frame(u, &s, lib_ip, SYNTH_SP, frame, ips, ELEMENTSOF(ips));
        assert_int_equal(n, 2);
        assert_int_equal(ips[0], lib_ip);
        assert_int_equal(ips[1], lib_ip);
        unwinder_get_stats(u, &st);
        assert_int_equal(st.stacks, 2);
        assert_int_equal(st.stacks_cut, 0);

        /* The interrupted frame's own bp of 0 is a register like any other: a cut. */
        n = walk_frame(u, &s, lib_ip - 1, 0, frame, ips, ELEMENTSOF(ips));
        assert_int_equal(n, 2);
        assert_int_equal(ips[1], 0);
        unwinder_get_stats(u, &st);
        assert_int_equal(st.stacks_cut, 1);

        /* A saved bp that points outside the copy is a cut, as before. */
        frame[0] = SYNTH_SP + 0x100000;
        n = walk_frame(u, &s, lib_ip, SYNTH_SP, frame, ips, ELEMENTSOF(ips));
        assert_int_equal(n, 3);
        assert_int_equal(ips[2], 0);
        unwinder_get_stats(u, &st);
        assert_int_equal(st.stacks_cut, 2);
}

/* JIT code that keeps no frame pointer, reached with a bp of 0 (PHP's tracing JIT, in a shared
 * memory mapping that shows as "/dev/zero (deleted)"; any code in anonymous memory), is not the
 * outermost frame: no thread starts there. The walk is cut there, no unwind information, where a
 * file's code with that bp ends it whole (test_unwind_fp_chain_ends_at_zero_bp). */
static void test_unwind_zero_bp_in_jit_code_is_cut(void **state) {
        _cleanup_(unwinder_freep) Unwinder *u = NULL;
        _cleanup_(snapshot_done) Snapshot s = {};
        uint64_t ips[128], frame[2], lib_ip;
        char data[] = "/tmp/tprof-unwind-jit-XXXXXX";
        struct stat st;
        UnwindStats before, after;
        size_t n;
        int fd;

        lib_ip = nocfi_middle_ip(&u, &s);

        /* Anonymous code, and a mapping of a file that is no ELF file. */
        fd = mkstemp(data);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, "not an ELF file, JIT code", 25), 25);
        assert_int_equal(fstat(fd, &st), 0);
        assert_int_equal(proc_table_mmap(s.procs, FIXTURE_PID,
                                         &(ProcMap) { .start = UINT64_C(0x7e0000000000), .end = UINT64_C(0x7e0000010000),
                                                      .prot = PROT_READ | PROT_EXEC, .path = (char *) "" }),
                         0);
        assert_int_equal(proc_table_mmap(s.procs, FIXTURE_PID,
                                         &(ProcMap) { .start = UINT64_C(0x7e0000100000), .end = UINT64_C(0x7e0000110000),
                                                      .prot = PROT_READ | PROT_EXEC, .dev = st.st_dev, .ino = st.st_ino,
                                                      .path = data }),
                         0);
        for (unsigned i = 0; i < 2; i++) {
                uint64_t jit_ip = (i == 0 ? UINT64_C(0x7e0000000000) : UINT64_C(0x7e0000100000)) + 0x123;

                /* The library's frame returns into the JIT code, whose bp is then 0. */
                frame[0] = 0;
                frame[1] = jit_ip;
                unwinder_get_stats(u, &before);
                n = walk_frame(u, &s, lib_ip, SYNTH_SP, frame, ips, ELEMENTSOF(ips));
                unwinder_get_stats(u, &after);
                assert_int_equal(n, 3);
                assert_int_equal(ips[0], lib_ip);
                assert_int_equal(ips[1], jit_ip);
                assert_int_equal(ips[2], 0);
                assert_int_equal(after.stacks_cut, before.stacks_cut + 1);
                assert_int_equal(after.cut[UNWIND_CUT_NO_CFI], before.cut[UNWIND_CUT_NO_CFI] + 1);
        }
        safe_close(fd);
        (void) unlink(data);
}

/* The index of section name in the file at path, 0 if none. */
static size_t section_index_of(const char *path, const char *want) {
        size_t i = 0;

        return test_elf_section(path, want, &i, NULL) ? i : 0;
}

/* The address of the symbol name in the file at path (its .symtab), 0 if none. */
static uint64_t symbol_vaddr(const char *path, const char *want) {
        GElf_Sym sym;

        return test_elf_symbol(path, want, &sym) ? sym.st_value : 0;
}

/*
 * A file whose .eh_frame_hdr comes after .eh_frame (as lld lays out LLVM's libraries), which libdw
 * does not take its search table from: a rule for its last function reads one FDE, not the
 * thousand before it (libdw keeps about 48 bytes of each it reads), and its program is walked
 * whole through it.
 */
static void test_unwind_eh_frame_hdr_last(void **state) {
        const char *exe = getenv("TPROF_UNWIND_FIXTURE_HDRLAST"), *lib = getenv("TPROF_UNWIND_FIXTURE_HDRLAST_LIB");
        _cleanup_(unwind_cfi_file_freep) UnwindCfiFile *f = NULL;
        _cleanup_close_ int fd = -EBADF;
        uint64_t vaddr;
        size_t before;
        UnwindRule rule;

        assert_non_null(exe);
        assert_non_null(lib);
        assert_true(section_index_of(lib, ".eh_frame") < section_index_of(lib, ".eh_frame_hdr"));
        vaddr = symbol_vaddr(lib, "unwind_many_1999");
        assert_true(vaddr != 0);
        fd = open(lib, O_RDONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(unwind_cfi_file_load_fd(fd, &f), 0);
        before = self_heap_bytes();
        unwind_cfi_file_rule(f, vaddr + 1, &rule);
        print_message("  a rule at the end of a library of 1000 FDEs: %zd bytes kept\n", (ssize_t) (self_heap_bytes() - before));
        assert_int_equal(rule.kind, UNWIND_RULE_SIMPLE);
#ifndef __SANITIZE_ADDRESS__ /* malloc's counts do not see AddressSanitizer's allocations */
        assert_true(self_heap_bytes() - before < 8192);
#endif

        expect_whole_path(exe, exe, UNWIND_MODE_DWARF, false);
}

static void test_unwind_dwarf_cuts_without_cfi(void **state) {
        _cleanup_(unwinder_freep) Unwinder *u = NULL;
        _cleanup_(snapshot_done) Snapshot s = {};
        uint64_t ips[128];
        UnwindStats st;
        size_t n;

        take_snapshot(getenv("TPROF_UNWIND_FIXTURE_NOCFI"), &s);
        assert_int_equal(unwinder_new(&(UnwinderOptions) { .mode = UNWIND_MODE_DWARF }, &u), 0);
        n = walk(u, &s, s.size, ips, ELEMENTSOF(ips));
        /* leaf, callback, the library frame, then the cut */
        assert_int_equal(n, 4);
        assert_int_equal(ips[n - 1], 0);
        unwinder_get_stats(u, &st);
        assert_int_equal(st.stacks_cut, 1);
        assert_int_equal(st.cut[UNWIND_CUT_NO_CFI], 1);
}

/*
 * Tables that do not fit together (here a limit below any one file's: the program's and its
 * library's tables alternate along the stack) must not be dropped and loaded again at every frame
 * that changes file: the tables are dropped at most once per flush interval, and a file not loaded
 * until then is walked as one without CFI, the cut counted as "unwind tables full".
 */
static void test_unwind_tables_full(void **state) {
        _cleanup_(snapshot_done) Snapshot s = {};
        uint64_t ips[128];
        char buf[256];
        UnwindStats st;
        size_t n;

        take_snapshot(getenv("TPROF_UNWIND_FIXTURE"), &s);
        {
                _cleanup_(unwinder_freep) Unwinder *u = NULL;
                assert_int_equal(unwinder_new(&(UnwinderOptions) { .mode = UNWIND_MODE_DWARF, .cache_bytes_max = 1 }, &u),
                                 0);
                /* The program's table, then (full: the first drop comes at once) the library's;
                 * the program's frame after the library's waits, and the walk is cut there. */
                n = walk(u, &s, s.size, ips, ELEMENTSOF(ips));
                print_walk(&s, ips, n, getenv("TPROF_UNWIND_FIXTURE"), "");
                assert_true(n >= 4);
                assert_string_equal(name_of(&s, ips[2], true, getenv("TPROF_UNWIND_FIXTURE"), buf, sizeof(buf)),
                                    "unwind_fixture_lib_middle");
                assert_string_equal(name_of(&s, ips[n - 2], true, getenv("TPROF_UNWIND_FIXTURE"), buf, sizeof(buf)),
                                    "unwind_outer");
                assert_int_equal(ips[n - 1], 0);
                /* From now on the program's table waits: cut at the leaf, however often. */
                for (unsigned i = 0; i < 20; i++)
                        assert_int_equal(walk(u, &s, s.size, ips, ELEMENTSOF(ips)), 2);
                unwinder_get_stats(u, &st);
                assert_int_equal(st.cache_flushes, 1);
                assert_int_equal(st.files_loaded, 2);
                assert_int_equal(st.stacks_cut, 21);
                assert_int_equal(st.cut[UNWIND_CUT_FULL], 21);
                assert_int_equal(st.loads_deferred, 21);
                char line[512];
                unwind_stats_format(&st, line, sizeof(line));
                assert_non_null(strstr(line, "unwind tables full: 21"));
        }
        /* Once the interval has passed, the next load drops the tables again. */
        {
                _cleanup_(unwinder_freep) Unwinder *u = NULL;
                assert_int_equal(unwinder_new(&(UnwinderOptions) { .mode = UNWIND_MODE_DWARF, .cache_bytes_max = 1,
                                                                   .flush_interval_usec = 1000 }, &u), 0);
                (void) walk(u, &s, s.size, ips, ELEMENTSOF(ips));
                unwinder_get_stats(u, &st);
                uint64_t before = st.cache_flushes; /* 1, or more if the walk took over 1 ms */
                usleep(2000);
                (void) walk(u, &s, s.size, ips, ELEMENTSOF(ips));
                unwinder_get_stats(u, &st);
                assert_true(st.cache_flushes > before);
        }
        /* A limit the tables fit in: loaded once, never dropped, the stack whole. */
        {
                _cleanup_(unwinder_freep) Unwinder *u = NULL;
                assert_int_equal(unwinder_new(&(UnwinderOptions) { .mode = UNWIND_MODE_DWARF }, &u), 0);
                for (unsigned i = 0; i < 5; i++) {
                        n = walk(u, &s, s.size, ips, ELEMENTSOF(ips));
                        assert_int_not_equal(ips[n - 1], 0);
                }
                unwinder_get_stats(u, &st);
                assert_int_equal(st.cache_flushes, 0);
                assert_int_equal(st.loads_deferred, 0);
        }
}

static void test_unwind_short_copy_is_cut(void **state) {
        _cleanup_(unwinder_freep) Unwinder *u = NULL;
        _cleanup_(snapshot_done) Snapshot s = {};
        uint64_t ips[128];
        UnwindStats st;
        size_t n;

        take_snapshot(getenv("TPROF_UNWIND_FIXTURE"), &s);
        assert_int_equal(unwinder_new(&(UnwinderOptions) { .mode = UNWIND_MODE_AUTO }, &u), 0);
        n = walk(u, &s, 16, ips, ELEMENTSOF(ips));
        assert_true(n >= 2 && n < 5);
        assert_int_equal(ips[n - 1], 0);
        unwinder_get_stats(u, &st);
        assert_int_equal(st.cut[UNWIND_CUT_STACK], 1);

        /* The frame limit: max entries, the last one the cut. */
        n = walk(u, &s, s.size, ips, 3);
        assert_int_equal(n, 3);
        assert_int_equal(ips[2], 0);
        unwinder_get_stats(u, &st);
        assert_int_equal(st.cut[UNWIND_CUT_DEPTH], 1);
}

/* Samples without a user stack are counted by cause, and the summary names the causes that
 * occurred: a run whose copies all came back empty says so, not just "without user stack". */
static void test_unwind_no_user_causes(void **state) {
        _cleanup_(unwinder_freep) Unwinder *u = NULL;
        UnwindStats st;
        char line[512];

        assert_int_equal(unwinder_new(&(UnwinderOptions) { .mode = UNWIND_MODE_DWARF }, &u), 0);
        unwinder_get_stats(u, &st);
        unwind_stats_format(&st, line, sizeof(line));
        assert_string_equal(line, "0 walked, 0 whole by CFI, 0 whole with frame pointers for some frames, 0 cut; "
                                  "0 samples without user stack");

        unwinder_count_no_user(u, UNWIND_NO_USER_REGS);
        for (unsigned i = 0; i < 3; i++)
                unwinder_count_no_user(u, UNWIND_NO_USER_EMPTY);
        unwinder_get_stats(u, &st);
        assert_int_equal(st.no_user, 4);
        assert_int_equal(st.no_user_by[UNWIND_NO_USER_REGS], 1);
        assert_int_equal(st.no_user_by[UNWIND_NO_USER_NO_COPY], 0);
        assert_int_equal(st.no_user_by[UNWIND_NO_USER_EMPTY], 3);
        unwind_stats_format(&st, line, sizeof(line));
        assert_non_null(strstr(line, "; 4 samples without user stack (1 without user registers, 3 whose copy was empty)"));

        unwinder_count_no_user(u, UNWIND_NO_USER_NO_COPY);
        unwinder_get_stats(u, &st);
        unwind_stats_format(&st, line, sizeof(line));
        assert_non_null(strstr(line, "; 5 samples without user stack (1 without user registers, 1 given no copy, "
                                     "3 whose copy was empty)"));
}

static void test_unwind_garbage_stack_ends(void **state) {
        _cleanup_(unwinder_freep) Unwinder *u = NULL;
        _cleanup_(snapshot_done) Snapshot s = {};
        uint64_t ips[128];
        size_t n;

        take_snapshot(getenv("TPROF_UNWIND_FIXTURE"), &s);
        assert_int_equal(unwinder_new(&(UnwinderOptions) { .mode = UNWIND_MODE_AUTO }, &u), 0);
        srand(7);
        for (unsigned round = 0; round < 200; round++) {
                for (uint64_t i = 0; i < s.size; i++)
                        if (rand() % 8 == 0)
                                s.stack[i] = (uint8_t) rand();
                n = walk(u, &s, s.size, ips, ELEMENTSOF(ips));
                assert_true(n >= 1 && n <= ELEMENTSOF(ips));
        }
}

/* The time budget: a stack of 200 frames is walked whole within a budget of 10 s (not the default
 * 1 ms: a first walk looks every rule up in the CFI, which a sanitizer build or a busy machine makes
 * slow) and cut, and counted, with a budget of 1 us (176 frames between the first and the last
 * clock check take several microseconds on any machine; a busy one only takes longer). Timing
 * statistics come from the timed stacks, one in 64, the first included. */
static void test_unwind_time_budget(void **state) {
        _cleanup_(snapshot_done) Snapshot s = {};
        uint64_t ips[512];
        UnwindStats st;
        size_t n;

        assert_int_equal(setenv("UNWIND_FIXTURE_DEPTH", "200", 1), 0);
        take_snapshot(getenv("TPROF_UNWIND_FIXTURE"), &s);
        assert_int_equal(unsetenv("UNWIND_FIXTURE_DEPTH"), 0);

        {
                _cleanup_(unwinder_freep) Unwinder *u = NULL;
                assert_int_equal(unwinder_new(&(UnwinderOptions) { .mode = UNWIND_MODE_AUTO,
                                                                   .budget_usec = 10 * USEC_PER_SEC }, &u), 0);
                n = walk(u, &s, s.size, ips, ELEMENTSOF(ips));
                unwinder_get_stats(u, &st);
                print_message("  whole walk: %zu frames of a %" PRIu64 "-byte copy, cut %" PRIu64 " (time %" PRIu64
                              ", copy %" PRIu64 ")\n", n, s.size, st.stacks_cut, st.cut[UNWIND_CUT_TIME],
                              st.cut[UNWIND_CUT_STACK]);
                assert_true(n > 200);
                assert_int_not_equal(ips[n - 1], 0);
                assert_int_equal(st.stacks_cut, 0);
                assert_int_equal(st.stacks_timed, 1);
                assert_true(st.nsec > 0);
                for (int i = 0; i < 63; i++)
                        (void) walk(u, &s, s.size, ips, ELEMENTSOF(ips));
                unwinder_get_stats(u, &st);
                assert_int_equal(st.stacks, 64);
                assert_int_equal(st.stacks_timed, 1);
        }
        {
                _cleanup_(unwinder_freep) Unwinder *u = NULL;
                assert_int_equal(unwinder_new(&(UnwinderOptions) { .mode = UNWIND_MODE_AUTO, .budget_usec = 1 }, &u), 0);
                (void) walk(u, &s, s.size, ips, ELEMENTSOF(ips)); /* loads the files, outside the budget */
                n = walk(u, &s, s.size, ips, ELEMENTSOF(ips));
                unwinder_get_stats(u, &st);
                print_message("  cut by time after %zu frames\n", n);
                assert_true(n < 200);
                assert_int_equal(ips[n - 1], 0);
                assert_true(st.cut[UNWIND_CUT_TIME] >= 1);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_unwind_pie_and_library),
                cmocka_unit_test(test_unwind_stripped),
                cmocka_unit_test(test_unwind_auto_falls_back_to_frame_pointers),
                cmocka_unit_test(test_unwind_fp_chain_ends_at_zero_bp),
                cmocka_unit_test(test_unwind_zero_bp_in_jit_code_is_cut),
                cmocka_unit_test(test_unwind_eh_frame_hdr_last),
                cmocka_unit_test(test_unwind_dwarf_cuts_without_cfi),
                cmocka_unit_test(test_unwind_tables_full),
                cmocka_unit_test(test_unwind_short_copy_is_cut),
                cmocka_unit_test(test_unwind_no_user_causes),
                cmocka_unit_test(test_unwind_garbage_stack_ends),
                cmocka_unit_test(test_unwind_time_budget),
        };
#if !defined(__x86_64__)
        printf("The unwinder walks x86-64 stacks only.\n");
        return EXIT_TEST_SKIP;
#endif
        if (!getenv("TPROF_UNWIND_FIXTURE"))
                return EXIT_TEST_SKIP;
        return cmocka_run_group_tests(tests, setup, teardown);
}
