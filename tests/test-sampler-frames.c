/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Callchains to frames: hand-built callchains, as the kernel writes them, for a process whose
 * mappings the table knows (a program, a library, anonymous executable memory named by a JIT map),
 * a process it knows only by name and one it has never seen; user chains that run off the mapped
 * code into garbage are cut there, and counted. Kernel symbols come from the kallsyms fixture; the
 * programs' files do not exist, so their frames are "[unknown]" in a named DSO.
 */
#include "tests.h"

#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "basic/fileio.h"
#include "sampler/proc-maps.h"
#include "sampler/sampler-frames.h"
#include "symbolizer/symbolizer.h"

#define PID_KNOWN 100U   /* mappings below */
#define PID_NAMED 300U   /* a COMM record, no mapping (its maps were unreadable) */
#define PID_UNKNOWN 200U /* never heard of */

#define KCTX ((uint64_t) PERF_CONTEXT_KERNEL)
#define UCTX ((uint64_t) PERF_CONTEXT_USER)

#define APP "/nonexistent/usr/bin/app"
#define LIBC "/nonexistent/usr/lib/libc.so.6"
#define JIT_MAP "/tmp/perf-100.map" /* of PID_KNOWN, as the symbolizer names it */
#define UNKNOWN SYMBOLIZER_UNKNOWN
#define KERNEL "[kernel.kallsyms]"

/* Addresses in the mappings of PID_KNOWN. */
#define APP_START 0x400000U
#define LIBC_START 0x7f0000000000U
#define IN_APP 0x401234U
#define IN_LIBC 0x7f0000012345U
#define IN_JIT 0x7e0000000010U  /* "//anon", as an MMAP2 record names anonymous executable memory */
#define IN_ANON 0x7d0000000010U /* "", as /proc/PID/maps shows it */
/* Stack words a frame-pointer walk reads in code built without frame pointers. */
#define NOWHERE 0x1234U
#define HEAP 0x55aa00001234U
#define TEXT 0xa00073746e000000U

static char tmpdir[] = "/tmp/test-sampler-frames.XXXXXX";
static char kallsyms[1024];

typedef struct Expect {
        const char *symbol, *dso;
        uint64_t addr;
        bool kernel;
} Expect;

#define F(sym, dso, addr) { sym, dso, addr, false }
#define K(sym, addr) { sym, KERNEL, addr, true }
/* A frame in a file carries its address in the file, as perf script prints it. */
#define F_APP(addr) F(UNKNOWN, APP, (addr) - APP_START)
#define F_LIBC(addr) F(UNKNOWN, LIBC, (addr) - LIBC_START)
#define CUT { UNKNOWN, UNKNOWN, 0, false } /* where a chain left every mapping */
#define CHAIN(...) .chain = { __VA_ARGS__ }, .nr = sizeof((uint64_t[]) { __VA_ARGS__ }) / sizeof(uint64_t)
#define FRAMES(...) .frames = { __VA_ARGS__ }, .n = sizeof((Expect[]) { __VA_ARGS__ }) / sizeof(Expect)

typedef struct Case {
        const char *name;
        uint32_t pid;
        bool kernel_ip;
        uint64_t ip; /* only when the chain is empty */
        uint64_t chain[16];
        size_t nr;
        Expect frames[16];
        size_t n;
        uint64_t dropped; /* addresses dropped after the cut (a cut is a CUT frame) */
} Case;

static int setup(void **state) {
        const char *d = getenv("TPROF_TEST_DATA");
        char path[1024];
        const char *jit = "7e0000000000 100 jit_loop\n"
                          "7d0000000000 100 jit_entry\n";

        snprintf(kallsyms, sizeof(kallsyms), "%s/kallsyms", d ?: "tests/data/sampler");
        if (!mkdtemp(tmpdir))
                return -1;
        snprintf(path, sizeof(path), "%s/perf-%u.map", tmpdir, PID_KNOWN);
        return write_file_atomic(path, jit, strlen(jit), 0644) < 0 ? -1 : 0;
}

static int teardown(void **state) {
        return rm_rf_at(AT_FDCWD, tmpdir, 2) < 0 ? -1 : 0;
}

static ProcMap map(uint64_t start, uint64_t end, uint64_t ino, const char *path) {
        return (ProcMap) { .start = start, .end = end, .ino = ino, .prot = PROT_EXEC,
                           .path = (char *) path };
}

static ProcTable *table_new(void) {
        const ProcMap maps[] = {
                map(APP_START, 0x410000, 1, APP),
                map(LIBC_START, 0x7f0000200000, 2, LIBC),
                map(0x7e0000000000, 0x7e0000010000, 0, "//anon"),
                map(0x7d0000000000, 0x7d0000010000, 0, ""),
        };
        ProcTable *t = proc_table_new();

        assert_non_null(t);
        for (size_t i = 0; i < ELEMENTSOF(maps); i++)
                assert_int_equal(proc_table_mmap(t, PID_KNOWN, &maps[i]), 0);
        assert_int_equal(proc_table_comm_event(t, PID_KNOWN, PID_KNOWN, "app", false), 0);
        assert_int_equal(proc_table_comm_event(t, PID_NAMED, PID_NAMED, "named", false), 0);
        return t;
}

static Symbolizer *symbolizer(void) {
        const SymbolizerOptions o = { .kallsyms_path = kallsyms, .jit_dir = tmpdir, .proc_root = tmpdir };
        Symbolizer *z = NULL;

        /* proc_root: an empty directory, so nothing is read from the real /proc for our made-up pids. */
        assert_int_equal(symbolizer_new(&o, &z), 0);
        symbolizer_next_epoch(z); /* as each drain does: JIT maps are read */
        return z;
}

static void check_case(ProcTable *t, Symbolizer *z, const Case *c) {
        Frame frames[PROFILE_STACK_DEPTH_MAX];
        SampleFramesStats st = {};
        uint64_t cut = 0;
        RecordSample rs = {
                .ip = c->ip,
                .id = { .pid = c->pid, .tid = c->pid },
                .nr = c->nr,
                .ips = c->chain,
                .kernel_ip = c->kernel_ip,
        };
        uint32_t n;

        symbolizer_begin(z);
        n = sample_frames(t, z, &rs, frames, &st);
        if (n != c->n)
                fail_msg("%s: %" PRIu32 " frames, expected %zu", c->name, n, c->n);
        for (size_t i = 0; i < n; i++) {
                const Frame *f = &frames[i];
                const Expect *e = &c->frames[i];

                if (!streq(f->symbol, e->symbol) || !streq(f->dso, e->dso) || f->addr != e->addr ||
                    f->kernel != e->kernel)
                        fail_msg("%s: frame %zu is %s (%s) %#" PRIx64 "%s, expected %s (%s) %#" PRIx64 "%s",
                                 c->name, i, f->symbol, f->dso, f->addr, f->kernel ? " kernel" : "",
                                 e->symbol, e->dso, e->addr, e->kernel ? " kernel" : "");
                if (streq(e->symbol, UNKNOWN) && streq(e->dso, UNKNOWN) && e->addr == 0) {
                        if (f->offset != 0)
                                fail_msg("%s: frame %zu, the cut, has offset %#" PRIx64, c->name, i, f->offset);
                        cut++;
                }
        }
        if (st.callchains_cut != cut || st.frames_dropped != c->dropped)
                fail_msg("%s: %" PRIu64 " cut, %" PRIu64 " dropped, expected %" PRIu64 ", %" PRIu64, c->name,
                         st.callchains_cut, st.frames_dropped, cut, c->dropped);
}

/* Runs each case on a fresh table and symbolizer. */
static void check_cases(const Case *cases, size_t n) {
        ProcTable *t = table_new();
        _cleanup_(symbolizer_freep) Symbolizer *z = symbolizer();

        for (size_t i = 0; i < n; i++)
                check_case(t, z, &cases[i]);
        proc_table_free(t);
}

static void test_mapped_user_chain(void **state) {
        static const Case cases[] = {
                {
                        "user chain in mapped code",
                        PID_KNOWN, false, 0,
                        CHAIN(UCTX, IN_APP, IN_LIBC + 0x10, IN_APP + 0x20),
                        FRAMES(F_APP(IN_APP), F_LIBC(IN_LIBC + 0x10),
                               F_APP(IN_APP + 0x20)),
                },
                {
                        "no context marker, user mode",
                        PID_KNOWN, false, 0,
                        CHAIN(IN_APP, IN_LIBC),
                        FRAMES(F_APP(IN_APP), F_LIBC(IN_LIBC)),
                },
        };
        check_cases(cases, ELEMENTSOF(cases));
}

static void test_unmapped_leaf_kept(void **state) {
        /* The interrupted instruction is real even outside every mapping (JIT code the table has
         * not seen yet), so it keeps its address. */
        static const Case cases[] = {
                {
                        "unmapped leaf",
                        PID_KNOWN, false, 0,
                        CHAIN(UCTX, NOWHERE, IN_APP, IN_LIBC),
                        FRAMES(F(UNKNOWN, UNKNOWN, NOWHERE), F_APP(IN_APP),
                               F_LIBC(IN_LIBC)),
                },
                {
                        "no callchain, only the sampled address",
                        PID_KNOWN, false, NOWHERE,
                        .nr = 0,
                        FRAMES(F(UNKNOWN, UNKNOWN, NOWHERE)),
                },
        };
        check_cases(cases, ELEMENTSOF(cases));
}

static void test_anonymous_executable_memory_kept(void **state) {
        /* "//anon" from MMAP2 and "" from /proc/PID/maps are mappings like any other. */
        static const Case cases[] = {
                {
                        "JIT frames in anonymous memory",
                        PID_KNOWN, false, 0,
                        CHAIN(UCTX, IN_JIT, IN_ANON + 0x10, IN_JIT + 0x20, IN_APP),
                        FRAMES(F("jit_loop", JIT_MAP, IN_JIT), F("jit_entry", JIT_MAP, IN_ANON + 0x10),
                               F("jit_loop", JIT_MAP, IN_JIT + 0x20), F_APP(IN_APP)),
                },
        };
        check_cases(cases, ELEMENTSOF(cases));
}

static void test_process_without_known_mappings_keeps_every_frame(void **state) {
        static const Case cases[] = {
                {
                        "process known by name only",
                        PID_NAMED, false, 0,
                        CHAIN(UCTX, IN_APP, HEAP, TEXT),
                        FRAMES(F(UNKNOWN, UNKNOWN, IN_APP), F(UNKNOWN, UNKNOWN, HEAP),
                               F(UNKNOWN, UNKNOWN, TEXT)),
                },
                {
                        "process never heard of",
                        PID_UNKNOWN, false, 0,
                        CHAIN(UCTX, IN_APP, HEAP, TEXT, NOWHERE),
                        FRAMES(F(UNKNOWN, UNKNOWN, IN_APP), F(UNKNOWN, UNKNOWN, HEAP),
                               F(UNKNOWN, UNKNOWN, TEXT), F(UNKNOWN, UNKNOWN, NOWHERE)),
                },
        };
        check_cases(cases, ELEMENTSOF(cases));
}

static void test_cut_at_first_return_address_outside_every_mapping(void **state) {
        static const Case cases[] = {
                {
                        "garbage after two mapped frames",
                        PID_KNOWN, false, 0,
                        CHAIN(UCTX, IN_APP, IN_LIBC, IN_APP + 0x10, HEAP, TEXT, NOWHERE),
                        FRAMES(F_APP(IN_APP), F_LIBC(IN_LIBC),
                               F_APP(IN_APP + 0x10), CUT),
                        .dropped = 2,
                },
                {
                        /* After the cut even a word that happens to point into code is garbage. */
                        "mapped words after the cut",
                        PID_KNOWN, false, 0,
                        CHAIN(UCTX, IN_JIT, TEXT, IN_LIBC, IN_APP, IN_ANON),
                        FRAMES(F("jit_loop", JIT_MAP, IN_JIT), CUT),
                        .dropped = 3,
                },
                {
                        "unmapped leaf, then garbage",
                        PID_KNOWN, false, 0,
                        CHAIN(UCTX, NOWHERE, HEAP, IN_APP),
                        FRAMES(F(UNKNOWN, UNKNOWN, NOWHERE), CUT),
                        .dropped = 1,
                },
                {
                        "cut last",
                        PID_KNOWN, false, 0,
                        CHAIN(UCTX, IN_APP, TEXT),
                        FRAMES(F_APP(IN_APP), CUT),
                },
                {
                        /* A return address at the very start of a mapping belongs to a call at the
                         * end of whatever lies before it: here nothing. */
                        "return address at the start of a mapping",
                        PID_KNOWN, false, 0,
                        CHAIN(UCTX, IN_APP, 0x400000, IN_LIBC),
                        FRAMES(F_APP(IN_APP), CUT),
                        .dropped = 1,
                },
        };
        check_cases(cases, ELEMENTSOF(cases));
}

static void test_kernel_frames_untouched(void **state) {
        static const Case cases[] = {
                {
                        "kernel frames, named or not, then the user part",
                        PID_KNOWN, true, 0,
                        CHAIN(KCTX, 0xffffffff81001010, 0xffffffff81002020, 0xffffffffc0300000,
                              UCTX, IN_APP, IN_LIBC),
                        FRAMES(K("do_one_thing", 0xffffffff81001010), K("do_syscall_64", 0xffffffff81002020),
                               K(UNKNOWN, 0xffffffffc0300000), F_APP(IN_APP),
                               F_LIBC(IN_LIBC)),
                },
                {
                        "kernel frames, then a user part cut",
                        PID_KNOWN, true, 0,
                        CHAIN(KCTX, 0xffffffff81001010, 0xffffffff81002020, UCTX, IN_APP, HEAP, TEXT),
                        FRAMES(K("do_one_thing", 0xffffffff81001010), K("do_syscall_64", 0xffffffff81002020),
                               F_APP(IN_APP), CUT),
                        .dropped = 1,
                },
                {
                        "kernel only",
                        PID_KNOWN, true, 0,
                        CHAIN(KCTX, 0xffffffff81001010, 0xffffffffc0300000, 0xffffffff81002020),
                        FRAMES(K("do_one_thing", 0xffffffff81001010), K(UNKNOWN, 0xffffffffc0300000),
                               K("do_syscall_64", 0xffffffff81002020)),
                },
        };
        check_cases(cases, ELEMENTSOF(cases));
}

static void test_cut_counters(void **state) {
        static const uint64_t chains[][6] = {
                { UCTX, IN_APP, HEAP, TEXT, NOWHERE, IN_LIBC },     /* cut, 3 dropped */
                { UCTX, IN_APP, IN_LIBC, HEAP, TEXT, TEXT },        /* cut, 2 dropped */
                { UCTX, NOWHERE, IN_APP, IN_LIBC, IN_APP, HEAP },   /* cut last */
                { UCTX, IN_APP, IN_LIBC, IN_APP, IN_LIBC, IN_APP }, /* whole */
        };
        /* Only the first has known mappings: the others add nothing. */
        static const uint32_t pids[] = { PID_KNOWN, PID_NAMED, PID_UNKNOWN };
        ProcTable *t = table_new();
        _cleanup_(symbolizer_freep) Symbolizer *z = symbolizer();
        Frame frames[PROFILE_STACK_DEPTH_MAX];
        SampleFramesStats st = {};

        /* The counters add up across samples. */
        for (size_t p = 0; p < ELEMENTSOF(pids); p++)
                for (size_t i = 0; i < ELEMENTSOF(chains); i++) {
                        RecordSample rs = {
                                .id = { .pid = pids[p], .tid = pids[p] },
                                .nr = ELEMENTSOF(chains[i]),
                                .ips = chains[i],
                        };

                        symbolizer_begin(z);
                        (void) sample_frames(t, z, &rs, frames, &st);
                }
        assert_int_equal(st.callchains_cut, 3);
        assert_int_equal(st.frames_dropped, 5);
        proc_table_free(t);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_mapped_user_chain),
                cmocka_unit_test(test_unmapped_leaf_kept),
                cmocka_unit_test(test_anonymous_executable_memory_kept),
                cmocka_unit_test(test_process_without_known_mappings_keeps_every_frame),
                cmocka_unit_test(test_cut_at_first_return_address_outside_every_mapping),
                cmocka_unit_test(test_kernel_frames_untouched),
                cmocka_unit_test(test_cut_counters),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
