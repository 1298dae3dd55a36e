/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The stack cache on a real task table and symbolizer (kernel symbols from a kallsyms file the
 * test writes and rewrites): a chain seen again is not symbolized again; and after an exec, a new
 * mapping over the old range, a reused pid or a module load, the same addresses give the new
 * frames, never the cached ones. Chains with unresolved frames last one drain; resolved kernel
 * chains last across drains; the cache stays within its entries. Chains are keyed on their callers:
 * a new leaf under the same callers is a hit with that one frame made anew.
 */
#include "tests.h"

#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "basic/fileio.h"
#include "sampler/proc-maps.h"
#include "sampler/sampler-stack-cache.h"
#include "symbolizer/symbolizer.h"

#define PID 100U
#define KCTX ((uint64_t) PERF_CONTEXT_KERNEL)
#define UCTX ((uint64_t) PERF_CONTEXT_USER)
#define APP_START 0x400000U
#define IN_APP 0x401234U
#define IN_APP2 0x402000U
#define IN_KERNEL 0xffffffff81001010U /* do_one_thing */
#define IN_MODULE 0xffffffffc0300010U /* nothing until a module is loaded there */

static const char kallsyms_v1[] = "ffffffff81000000 T _stext\n"
                                  "ffffffff81001000 t do_one_thing\n"
                                  "ffffffff81002000 T do_syscall_64\n"
                                  "ffffffff81004000 T _etext\n";
static const char kallsyms_v2[] = "ffffffff81000000 T _stext\n"
                                  "ffffffff81001000 t do_other_thing\n"
                                  "ffffffff81002000 T do_syscall_64\n"
                                  "ffffffff81004000 T _etext\n"
                                  "ffffffffc0300000 t nvme_poll\t[nvme]\n"
                                  "ffffffffc0300800 t nvme_end\t[nvme]\n";

typedef struct Fixture {
        char dir[64], kallsyms[128];
        ProcTable *procs;
        Symbolizer *z;
        StackCache *c;
        SampleFramesStats st;
        Frame scratch[PROFILE_STACK_DEPTH_MAX];
} Fixture;

static ProcMap map(uint64_t start, uint64_t end, uint64_t ino, const char *path) {
        return (ProcMap) { .start = start, .end = end, .ino = ino, .prot = PROT_EXEC, .path = (char *) path };
}

static void fixture_init(Fixture *f, size_t entries) {
        ProcMap m = map(APP_START, 0x410000, 1, "/nonexistent/bin/app");
        SymbolizerOptions o;

        memset(f, 0, sizeof *f);
        strcpy(f->dir, "/tmp/test-sampler-stack-cache.XXXXXX");
        assert_non_null(mkdtemp(f->dir));
        snprintf(f->kallsyms, sizeof f->kallsyms, "%s/kallsyms", f->dir);
        assert_int_equal(write_file_atomic(f->kallsyms, kallsyms_v1, strlen(kallsyms_v1), 0644), 0);
        o = (SymbolizerOptions) { .kallsyms_path = f->kallsyms, .jit_dir = f->dir, .proc_root = f->dir };
        assert_int_equal(symbolizer_new(&o, &f->z), 0);
        symbolizer_next_epoch(f->z);
        assert_non_null(f->procs = proc_table_new());
        assert_int_equal(proc_table_mmap(f->procs, PID, &m), 0);
        assert_int_equal(proc_table_comm_event(f->procs, PID, PID, "app", false), 0);
        assert_non_null(f->c = stack_cache_new(entries));
}

static void fixture_done(Fixture *f) {
        stack_cache_free(f->c);
        proc_table_free(f->procs);
        symbolizer_free(f->z);
        assert_int_equal(rm_rf_at(AT_FDCWD, f->dir, 2), 0);
}

/* One sample of chain (kernel_ip when it starts in the kernel) through the cache, as the sampler does. */
static Sample sample(Fixture *f, uint32_t pid, const uint64_t *chain, size_t nr) {
        RecordSample rs = {
                .id = { .pid = pid, .tid = pid },
                .nr = nr,
                .ips = chain,
                .kernel_ip = chain[0] == KCTX,
        };
        Sample s = { .pid = pid, .tid = pid };

        symbolizer_begin(f->z);
        stack_cache_frames(f->c, f->procs, f->z, &rs, f->scratch, &f->st, &s);
        return s;
}

static StackCacheStats cache_stats(Fixture *f) {
        StackCacheStats cs;
        stack_cache_get_stats(f->c, &cs);
        return cs;
}

static uint64_t hits(Fixture *f) {
        return cache_stats(f).hits;
}

static const uint64_t user_chain[] = { UCTX, IN_APP, IN_APP2 + 1 };
static const uint64_t kernel_chain[] = { KCTX, IN_KERNEL, 0xffffffff81002010U };
static const uint64_t module_chain[] = { KCTX, IN_MODULE, 0xffffffff81002010U };

static void test_seen_chain_is_reused(void **state) {
        Fixture f;
        Sample a, b;

        fixture_init(&f, 0);
        a = sample(&f, PID, user_chain, ELEMENTSOF(user_chain));
        assert_int_equal(a.n_frames, 2);
        assert_string_equal(a.frames[0].dso, "/nonexistent/bin/app");
        assert_non_null(a.stack_slot);
        a.stack_slot->tag = 7; /* what a writer would leave there */
        b = sample(&f, PID, user_chain, ELEMENTSOF(user_chain));
        assert_int_equal(hits(&f), 1);
        assert_ptr_equal(b.stack_slot, a.stack_slot);
        assert_int_equal(b.stack_slot->tag, 7);
        assert_int_equal(b.n_frames, 2);
        assert_int_equal(b.frames[1].addr, IN_APP2 + 1 - APP_START);

        /* another process with the same addresses is another chain */
        b = sample(&f, PID + 1, user_chain, ELEMENTSOF(user_chain));
        assert_int_equal(hits(&f), 1);
        fixture_done(&f);
}

/* The cached entry for user_chain must not be handed out once the mapping changed. */
static void check_user_frames_changed(Fixture *f, uint32_t pid, const char *dso) {
        uint64_t h = hits(f);
        Sample s = sample(f, pid, user_chain, ELEMENTSOF(user_chain));

        assert_int_equal(hits(f), h);
        assert_int_equal(s.n_frames, 2);
        assert_string_equal(s.frames[0].dso, dso);
        assert_true(!s.stack_slot || s.stack_slot->tag == 0);
}

static void test_exec(void **state) {
        ProcMap m = map(APP_START, 0x410000, 2, "/nonexistent/bin/other");
        Fixture f;
        Sample a;

        fixture_init(&f, 0);
        a = sample(&f, PID, user_chain, ELEMENTSOF(user_chain));
        a.stack_slot->tag = 7;
        assert_int_equal(proc_table_comm_event(f.procs, PID, PID, "other", true), 0);
        assert_int_equal(proc_table_mmap(f.procs, PID, &m), 0);
        check_user_frames_changed(&f, PID, "/nonexistent/bin/other");
        fixture_done(&f);
}

static void test_exec_without_new_mapping(void **state) {
        Fixture f;
        Sample a;

        fixture_init(&f, 0);
        a = sample(&f, PID, user_chain, ELEMENTSOF(user_chain));
        a.stack_slot->tag = 7;
        assert_int_equal(proc_table_comm_event(f.procs, PID, PID, "other", true), 0);
        /* no mapping known now: the chain is kept whole, in no DSO */
        check_user_frames_changed(&f, PID, SYMBOLIZER_UNKNOWN);
        fixture_done(&f);
}

static void test_munmap_mmap(void **state) {
        /* munmap is not reported; the next mmap over the range is, and replaces the old one */
        ProcMap m = map(0x401000, 0x403000, 3, "/nonexistent/lib/plugin.so");
        Fixture f;
        Sample a;

        fixture_init(&f, 0);
        a = sample(&f, PID, user_chain, ELEMENTSOF(user_chain));
        a.stack_slot->tag = 7;
        assert_int_equal(proc_table_mmap(f.procs, PID, &m), 0);
        check_user_frames_changed(&f, PID, "/nonexistent/lib/plugin.so");
        fixture_done(&f);
}

static void test_mmap_elsewhere(void **state) {
        /* even a mapping elsewhere in the process is a new generation: nothing stale, a miss */
        ProcMap m = map(0x500000, 0x501000, 4, "/nonexistent/lib/far.so");
        Fixture f;

        fixture_init(&f, 0);
        (void) sample(&f, PID, user_chain, ELEMENTSOF(user_chain));
        assert_int_equal(proc_table_mmap(f.procs, PID, &m), 0);
        check_user_frames_changed(&f, PID, "/nonexistent/bin/app");
        fixture_done(&f);
}

static void test_reused_pid(void **state) {
        ProcMap m = map(APP_START, 0x410000, 5, "/nonexistent/bin/new");
        Fixture f;

        fixture_init(&f, 0);
        (void) sample(&f, PID, user_chain, ELEMENTSOF(user_chain));
        assert_int_equal(proc_table_exit(f.procs, PID, PID, 1000), 0);
        assert_int_equal(proc_table_reap(f.procs, 2000), 1);
        assert_int_equal(proc_table_fork(f.procs, PID, 1, PID, 1), 0);
        assert_int_equal(proc_table_mmap(f.procs, PID, &m), 0);
        check_user_frames_changed(&f, PID, "/nonexistent/bin/new");
        fixture_done(&f);
}

static void test_module_load(void **state) {
        Fixture f;
        Sample s;

        fixture_init(&f, 0);
        s = sample(&f, PID, module_chain, ELEMENTSOF(module_chain));
        assert_string_equal(s.frames[0].symbol, SYMBOLIZER_UNKNOWN);
        /* the same callers: a hit, with the leaf made anew */
        s = sample(&f, PID, kernel_chain, ELEMENTSOF(kernel_chain));
        assert_string_equal(s.frames[0].symbol, "do_one_thing");
        assert_int_equal(hits(&f), 1);
        s.stack_slot->tag = 7;
        s = sample(&f, PID, kernel_chain, ELEMENTSOF(kernel_chain));
        assert_int_equal(hits(&f), 2);
        assert_int_equal(s.stack_slot->tag, 7);

        /* a module loaded, another code at the old address: kallsyms is read again */
        assert_int_equal(write_file_atomic(f.kallsyms, kallsyms_v2, strlen(kallsyms_v2), 0644), 0);
        assert_int_equal(symbolizer_reload_kallsyms(f.z), 0);
        s = sample(&f, PID, module_chain, ELEMENTSOF(module_chain));
        assert_string_equal(s.frames[0].symbol, "nvme_poll");
        assert_string_equal(s.frames[0].dso, "[nvme]");
        s = sample(&f, PID, kernel_chain, ELEMENTSOF(kernel_chain));
        assert_string_equal(s.frames[0].symbol, "do_other_thing");
        assert_int_equal(s.stack_slot->tag, 0);
        assert_int_equal(hits(&f), 3); /* the callers of the module's chain, made after the reload */
        fixture_done(&f);
}

/* A hot function sampled at one instruction, then another, then the first again: one entry for
 * the callers, the leaf made whenever it differs from the entry's last, the slots kept apart. */
static void test_leaf_moves(void **state) {
        static const uint64_t at_a[] = { KCTX, IN_KERNEL, 0xffffffff81002010U, UCTX, IN_APP, IN_APP2 + 1 };
        static const uint64_t at_b[] = { KCTX, IN_KERNEL + 0x20, 0xffffffff81002010U, UCTX, IN_APP, IN_APP2 + 1 };
        static const uint64_t at_c[] = { KCTX, 0xffffffff81002100U, 0xffffffff81002010U, UCTX, IN_APP, IN_APP2 + 1 };
        SampleStackSlot *whole, *callers;
        Fixture f;
        Sample s;

        fixture_init(&f, 0);
        s = sample(&f, PID, at_a, ELEMENTSOF(at_a));
        assert_int_equal(s.n_frames, 4);
        assert_int_equal(s.frames[0].addr, IN_KERNEL);
        assert_non_null(whole = s.stack_slot);
        assert_non_null(callers = s.callers_slot);
        whole->tag = 7;
        callers->tag = 8;

        s = sample(&f, PID, at_b, ELEMENTSOF(at_b));
        assert_int_equal(hits(&f), 1);
        assert_int_equal(cache_stats(&f).leaves, 1);
        assert_int_equal(cache_stats(&f).stored, 1);
        assert_int_equal(s.n_frames, 4);
        assert_string_equal(s.frames[0].symbol, "do_one_thing");
        assert_int_equal(s.frames[0].addr, IN_KERNEL + 0x20);
        assert_string_equal(s.frames[1].symbol, "do_syscall_64");
        assert_string_equal(s.frames[2].dso, "/nonexistent/bin/app");
        assert_ptr_equal(s.callers_slot, callers);
        assert_int_equal(callers->tag, 8);    /* the callers are the same frames */
        assert_ptr_equal(s.stack_slot, whole);
        assert_int_equal(whole->tag, 0);      /* the whole stack is not */
        whole->tag = 9;

        s = sample(&f, PID, at_b, ELEMENTSOF(at_b));
        assert_int_equal(cache_stats(&f).leaves, 1);
        assert_int_equal(whole->tag, 9);

        s = sample(&f, PID, at_c, ELEMENTSOF(at_c)); /* another function under the same callers */
        assert_string_equal(s.frames[0].symbol, "do_syscall_64");
        assert_int_equal(cache_stats(&f).leaves, 2);
        assert_int_equal(whole->tag, 0);
        assert_int_equal(callers->tag, 8);

        /* the same leaf under other callers is another entry */
        s = sample(&f, PID, user_chain, ELEMENTSOF(user_chain));
        assert_int_equal(cache_stats(&f).stored, 2);
        assert_int_equal(s.n_frames, 2);
        assert_int_not_equal(s.callers_slot, callers);
        fixture_done(&f);
}

/* With frames that name functions (compact detail), a leaf elsewhere in the same function makes
 * the same frame: the stack the writer interned for it is kept; another function's is not. Once
 * the entry knows where its leaf's function lies, leaves in it are not even symbolized. */
static void test_leaf_moves_in_function(void **state) {
        static const uint64_t at_a[] = { KCTX, IN_KERNEL, 0xffffffff81002010U, UCTX, IN_APP, IN_APP2 + 1 };
        static const uint64_t at_b[] = { KCTX, IN_KERNEL + 0x20, 0xffffffff81002010U, UCTX, IN_APP, IN_APP2 + 1 };
        static const uint64_t at_c[] = { KCTX, 0xffffffff81002000U, 0xffffffff81002010U, UCTX, IN_APP, IN_APP2 + 1 };
        static const uint64_t at_d[] = { KCTX, IN_KERNEL + 0x40, 0xffffffff81002010U, UCTX, IN_APP, IN_APP2 + 1 };
        static const uint64_t at_e[] = { KCTX, 0xffffffff81001fffU, 0xffffffff81002010U, UCTX, IN_APP, IN_APP2 + 1 };
        SampleStackSlot *whole;
        Fixture f;
        Sample s;

        fixture_init(&f, 0);
        symbolizer_free(f.z);
        assert_int_equal(symbolizer_new(&(SymbolizerOptions) { .kallsyms_path = f.kallsyms, .jit_dir = f.dir,
                                                               .proc_root = f.dir, .function_frames = true }, &f.z), 0);
        s = sample(&f, PID, at_a, ELEMENTSOF(at_a));
        assert_non_null(whole = s.stack_slot);
        whole->tag = 7;

        s = sample(&f, PID, at_b, ELEMENTSOF(at_b));
        assert_int_equal(cache_stats(&f).leaves, 1);
        assert_int_equal(cache_stats(&f).leaves_same, 1);
        assert_string_equal(s.frames[0].symbol, "do_one_thing");
        assert_int_equal(s.frames[0].addr, IN_KERNEL - 0x10); /* the function's start */
        assert_ptr_equal(s.stack_slot, whole);
        assert_int_equal(whole->tag, 7);

        /* Now the entry knows the function's addresses: a third leaf in it is not symbolized. */
        SymbolizerStats zs0, zs1;
        symbolizer_get_stats(f.z, &zs0);
        s = sample(&f, PID, at_d, ELEMENTSOF(at_d));
        symbolizer_get_stats(f.z, &zs1);
        assert_int_equal(zs1.frames, zs0.frames);
        assert_int_equal(cache_stats(&f).leaves, 1);
        assert_int_equal(cache_stats(&f).leaves_in_function, 1);
        assert_string_equal(s.frames[0].symbol, "do_one_thing");
        assert_int_equal(s.frames[0].addr, IN_KERNEL - 0x10);
        assert_ptr_equal(s.stack_slot, whole);
        assert_int_equal(whole->tag, 7);
        /* The function's last byte too; its next one is do_syscall_64 (below) */
        s = sample(&f, PID, at_e, ELEMENTSOF(at_e));
        assert_int_equal(cache_stats(&f).leaves_in_function, 2);
        assert_string_equal(s.frames[0].symbol, "do_one_thing");

        s = sample(&f, PID, at_c, ELEMENTSOF(at_c));
        assert_string_equal(s.frames[0].symbol, "do_syscall_64");
        assert_int_equal(cache_stats(&f).leaves, 2);
        assert_int_equal(cache_stats(&f).leaves_same, 1);
        assert_int_equal(cache_stats(&f).leaves_in_function, 2);
        assert_int_equal(whole->tag, 0);
        whole->tag = 9;

        s = sample(&f, PID, at_a, ELEMENTSOF(at_a)); /* back: another function again */
        assert_string_equal(s.frames[0].symbol, "do_one_thing");
        assert_int_equal(whole->tag, 0);
        assert_int_equal(cache_stats(&f).leaves, 3);
        /* its range, this time from the kernel symbol cache's answer */
        s = sample(&f, PID, at_d, ELEMENTSOF(at_d));
        assert_int_equal(cache_stats(&f).leaves, 3);
        assert_int_equal(cache_stats(&f).leaves_in_function, 3);

        /* Exact frames (no function_frames): only the leaf's own address is known to repeat. */
        fixture_done(&f);
        fixture_init(&f, 0);
        s = sample(&f, PID, at_a, ELEMENTSOF(at_a));
        s = sample(&f, PID, at_b, ELEMENTSOF(at_b));
        s = sample(&f, PID, at_d, ELEMENTSOF(at_d));
        assert_int_equal(s.frames[0].addr, IN_KERNEL + 0x40);
        assert_int_equal(cache_stats(&f).leaves, 2);
        assert_int_equal(cache_stats(&f).leaves_in_function, 0);
        s = sample(&f, PID, at_d, ELEMENTSOF(at_d));
        assert_int_equal(cache_stats(&f).leaves, 2);
        assert_int_equal(cache_stats(&f).leaves_in_function, 0);
        fixture_done(&f);
}

/* An unresolved leaf lasts one drain; its resolved callers last across drains. */
static void test_volatile_leaf(void **state) {
        Fixture f;
        Sample s;

        fixture_init(&f, 0);
        s = sample(&f, PID, module_chain, ELEMENTSOF(module_chain));
        assert_string_equal(s.frames[0].symbol, SYMBOLIZER_UNKNOWN);
        s = sample(&f, PID, module_chain, ELEMENTSOF(module_chain));
        assert_int_equal(hits(&f), 1);
        assert_int_equal(cache_stats(&f).leaves, 0);
        stack_cache_next_epoch(f.c);
        s = sample(&f, PID, module_chain, ELEMENTSOF(module_chain));
        assert_int_equal(hits(&f), 2);
        assert_int_equal(cache_stats(&f).leaves, 1); /* made again in the new drain */
        assert_string_equal(s.frames[1].symbol, "do_syscall_64");
        fixture_done(&f);
}

static void test_epochs(void **state) {
        Fixture f;

        fixture_init(&f, 0);
        (void) sample(&f, PID, kernel_chain, ELEMENTSOF(kernel_chain));
        (void) sample(&f, PID, user_chain, ELEMENTSOF(user_chain)); /* unresolved frames: volatile */
        stack_cache_next_epoch(f.c);
        (void) sample(&f, PID, kernel_chain, ELEMENTSOF(kernel_chain));
        assert_int_equal(hits(&f), 1);
        (void) sample(&f, PID, user_chain, ELEMENTSOF(user_chain));
        assert_int_equal(hits(&f), 1);
        (void) sample(&f, PID, user_chain, ELEMENTSOF(user_chain));
        assert_int_equal(hits(&f), 2);
        fixture_done(&f);
}

static void test_bounded(void **state) {
        StackCacheStats cs;
        Fixture f;

        fixture_init(&f, 4);
        for (uint64_t i = 0; i < 1000; i++) {
                uint64_t chain[] = { KCTX, IN_KERNEL + i, 0xffffffff81002010U + i }; /* callers differ */
                Sample s = sample(&f, PID, chain, ELEMENTSOF(chain));
                assert_string_equal(s.frames[0].symbol, "do_one_thing");
        }
        stack_cache_get_stats(f.c, &cs);
        assert_int_equal(cs.stored, 1000);
        assert_int_equal(cs.replaced, 996);
        assert_true(stack_cache_bytes(f.c) <= 4 * (3 * sizeof(uint64_t) + 2 * sizeof(Frame)));
        fixture_done(&f);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_seen_chain_is_reused),
                cmocka_unit_test(test_exec),
                cmocka_unit_test(test_exec_without_new_mapping),
                cmocka_unit_test(test_munmap_mmap),
                cmocka_unit_test(test_mmap_elsewhere),
                cmocka_unit_test(test_reused_pid),
                cmocka_unit_test(test_module_load),
                cmocka_unit_test(test_epochs),
                cmocka_unit_test(test_leaf_moves),
                cmocka_unit_test(test_leaf_moves_in_function),
                cmocka_unit_test(test_volatile_leaf),
                cmocka_unit_test(test_bounded),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
