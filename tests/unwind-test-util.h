/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the unwinder's tests on real snapshots share: helpers/unwind-fixture.c, built without frame
 * pointers as a PIE against a shared library, records at the end of a known call path
 * (main -> unwind_outer -> unwind_fixture_lib_middle -> unwind_callback -> unwind_leaf) its
 * registers, a copy of its stack and its mappings, as perf would (take_snapshot()). The copy is
 * walked against the files on disk (walk()) and each address named from the unstripped files'
 * symbols (name_of()). No perf needed: the fixture copies its own stack. An arm64 build of the
 * fixture runs under qemu-user (take_snapshot_with()) and records its link register too. A
 * temporary directory is made by the group's setup and removed by its teardown.
 */
#pragma once

#include <elf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sampler/proc-maps.h"
#include "sampler/sampler-unwind.h"
#include "symbolizer/symbolizer-elf.h"
#include "tests.h"

#define FIXTURE_PID 4000000000U /* no such process: files are opened by path */

#define SNAPSHOT_MAPS_MAX 256U

typedef struct Snapshot {
        uint64_t ip, sp, bp, size;
        uint64_t lr;   /* arm64's x30 */
        bool arm64;    /* an arm64 fixture's ("TPUA") */
        uint8_t *stack;
        ProcTable *procs;
        ProcMap maps[SNAPSHOT_MAPS_MAX]; /* as the fixture listed them, for libdwfl */
        size_t n_maps;
} Snapshot;

static char tmpdir[] = "/tmp/tprof-unwind.XXXXXX";

static inline void snapshot_done(Snapshot *s) {
        free(s->stack);
        proc_table_free(s->procs);
        for (size_t i = 0; i < s->n_maps; i++)
                proc_map_done(&s->maps[i]);
}

/* Runs the fixture at path in snapshot mode, through the program wrapper (with its arguments,
 * NULL-terminated) unless NULL, and reads what it wrote. */
static inline void take_snapshot_with(const char *const *wrapper, const char *path, Snapshot *ret) {
        char out[PATH_MAX], line[4096];
        const char *argv[16];
        size_t argc = 0;
        uint64_t hdr[4];
        char magic[4];
        pid_t pid;
        int status;
        FILE *f;

        snprintf(out, sizeof(out), "%s/snapshot", tmpdir);
        for (size_t i = 0; wrapper && wrapper[i]; i++) {
                assert_true(argc < ELEMENTSOF(argv) - 4);
                argv[argc++] = wrapper[i];
        }
        argv[argc++] = path;
        argv[argc++] = "snapshot";
        argv[argc++] = out;
        argv[argc] = NULL;
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                execv(argv[0], (char *const *) argv);
                _exit(127);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);

        f = fopen(out, "re");
        assert_non_null(f);
        assert_int_equal(fread(magic, 1, 4, f), 4);
        assert_true(memcmp(magic, "TPUW", 4) == 0 || memcmp(magic, "TPUA", 4) == 0);
        assert_int_equal(fread(hdr, sizeof(hdr), 1, f), 1);
        *ret = (Snapshot) { .ip = hdr[0], .sp = hdr[1], .bp = hdr[2], .size = hdr[3], .arm64 = magic[3] == 'A' };
        if (ret->arm64)
                assert_int_equal(fread(&ret->lr, sizeof(ret->lr), 1, f), 1);
        assert_true(ret->size > 0 && ret->size <= 16384);
        ret->stack = malloc(ret->size);
        assert_non_null(ret->stack);
        assert_int_equal(fread(ret->stack, 1, ret->size, f), ret->size);
        ret->procs = proc_table_new();
        assert_non_null(ret->procs);
        assert_int_equal(proc_table_comm_event(ret->procs, FIXTURE_PID, FIXTURE_PID, "unwind-fixture", false), 0);
        while (fgets(line, sizeof(line), f)) {
                ProcMap m;
                if (proc_maps_parse_line(line, &m) == 1) {
                        assert_int_equal(proc_table_mmap(ret->procs, FIXTURE_PID, &m), 0);
                        if (ret->n_maps < SNAPSHOT_MAPS_MAX)
                                ret->maps[ret->n_maps++] = m;
                        else
                                proc_map_done(&m);
                }
        }
        fclose(f);
        (void) unlink(out);
}

static inline void take_snapshot(const char *path, Snapshot *ret) {
        take_snapshot_with(NULL, path, ret);
}

static inline size_t walk(Unwinder *u, const Snapshot *s, size_t stack_size, uint64_t *ips, size_t max) {
        return unwinder_unwind(u, s->procs,
                               &(UnwindInput) {
                                       .pid = FIXTURE_PID,
                                       .ip = s->ip, .sp = s->sp, .bp = s->bp, .lr = s->lr,
                                       .machine = s->arm64 ? EM_AARCH64 : 0,
                                       .stack = s->stack, .stack_size = stack_size,
                               },
                               ips, max);
}

/* The function an address is in, from the symbols of the unstripped twin of its file. */
static inline const char *name_of(const Snapshot *s, uint64_t ip, bool is_return, const char *exe_twin,
                                  char *buf, size_t len) {
        const ProcMap *m = proc_table_find_map(s->procs, FIXTURE_PID, is_return ? ip - 1 : ip);
        _cleanup_(elf_symbols_freep) ElfSymbols *e = NULL;
        const char *path, *name;
        uint64_t vaddr, off;

        if (!m)
                return "(unmapped)";
        path = strstr(m->path, "unwind-fixture") && !strstr(m->path, ".so") ? exe_twin : m->path;
        if (elf_symbols_load_path(path, NULL, &e) < 0 && !e)
                return "(unreadable)";
        if (!elf_symbols_offset_to_vaddr(e, (is_return ? ip - 1 : ip) - m->start + m->pgoff, &vaddr) ||
            !elf_symbols_lookup(e, vaddr, &name, &off, NULL))
                return "(unnamed)";
        snprintf(buf, len, "%s", name);
        return buf;
}

/* Prints a walk's n frames, each named from twin's symbols, after label (may be ""). */
static inline void print_walk(const Snapshot *s, const uint64_t *ips, size_t n, const char *twin, const char *label) {
        char buf[256];

        for (size_t i = 0; i < n; i++)
                print_message("  %s#%zu %#" PRIx64 " %s\n", label, i, ips[i], name_of(s, ips[i], i > 0, twin, buf, sizeof(buf)));
}

/* Walks the whole copy of s with a new unwinder of mode, prints the walk (print_walk()) and gives
 * the unwinder's figures in *ret_st. Returns the number of entries. */
static inline size_t walk_printed(const Snapshot *s, UnwindMode mode, const char *twin, const char *label,
                                  uint64_t *ips, size_t max, UnwindStats *ret_st) {
        _cleanup_(unwinder_freep) Unwinder *u = NULL;
        size_t n;

        assert_int_equal(unwinder_new(&(UnwinderOptions) { .mode = mode }, &u), 0);
        n = walk(u, s, s->size, ips, max);
        print_walk(s, ips, n, twin, label);
        unwinder_get_stats(u, ret_st);
        return n;
}

/* Walks a snapshot of fixture with an unwinder of options o; the path must be whole, named from
 * twin's symbols. The unwinder's figures in *ret_st. */
static inline void expect_whole_path_with(const char *fixture, const char *twin, const UnwinderOptions *o,
                                          bool expect_fp, UnwindStats *ret_st) {
        _cleanup_(unwinder_freep) Unwinder *u = NULL;
        _cleanup_(snapshot_done) Snapshot s = {};
        static const char *const path[] = {
                "unwind_leaf", "unwind_callback", "unwind_fixture_lib_middle", "unwind_outer", "main",
        };
        uint64_t ips[128];
        char buf[256];
        UnwindStats st;
        size_t n;

        take_snapshot(fixture, &s);
        assert_int_equal(unwinder_new(o, &u), 0);
        n = walk(u, &s, s.size, ips, ELEMENTSOF(ips));
        print_walk(&s, ips, n, twin, "");
        assert_true(n > ELEMENTSOF(path));
        for (size_t i = 0; i < ELEMENTSOF(path); i++)
                assert_string_equal(name_of(&s, ips[i], i > 0, twin, buf, sizeof(buf)), path[i]);
        /* Whole: through libc's start code to _start, which ends the walk; no cut marker. */
        assert_int_not_equal(ips[n - 1], 0);
        assert_string_equal(name_of(&s, ips[n - 1], true, twin, buf, sizeof(buf)), "_start");

        unwinder_get_stats(u, &st);
        assert_int_equal(st.stacks, 1);
        assert_int_equal(st.stacks_cut, 0);
        assert_int_equal(st.stacks_fp, expect_fp ? 1 : 0);
        assert_int_equal(st.stacks_cfi, expect_fp ? 0 : 1);
        assert_true(expect_fp ? st.frames_fp > 0 : st.frames_fp == 0);
        if (ret_st)
                *ret_st = st;
}

static inline void expect_whole_path(const char *fixture, const char *twin, UnwindMode mode, bool expect_fp) {
        expect_whole_path_with(fixture, twin, &(UnwinderOptions) { .mode = mode }, expect_fp, NULL);
}

static inline int setup(void **state) {
        return mkdtemp(tmpdir) ? 0 : -1;
}

static inline int teardown(void **state) {
        (void) rmdir(tmpdir);
        return 0;
}
