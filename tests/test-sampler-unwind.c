/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The unwinder on real register and stack snapshots: helpers/unwind-fixture.c, built without frame
 * pointers as a PIE against a shared library, records at the end of a known call path
 * (main -> unwind_outer -> unwind_fixture_lib_middle -> unwind_callback -> unwind_leaf) its
 * registers, a copy of its stack and its mappings, as perf would. We walk the copy against the
 * files on disk and name each address from the unstripped files' symbols. The same program
 * stripped to .eh_frame; with a library built without unwind tables but with frame pointers
 * (auto walks it with frame pointers, dwarf cuts it); with the copy cut short (cut, counted).
 * No perf needed: the fixture copies its own stack. elfutils' own unwinder (libdwfl's
 * dwfl_getthread_frames(), what perf script uses when built with libdw) walks the same copies as a
 * second opinion, and the cost test prints what each walk costs. Single files' tables and synthetic
 * stacks are test-sampler-unwind-cfi.c's.
 */
#include "tests.h"
#include "elf-test-util.h"

#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "basic/fileio.h"
#include "basic/time-util.h"
#include "sampler/proc-maps.h"
#include "sampler/sampler-unwind-cfi.h"
#include "sampler/sampler-unwind.h"
#include "symbolizer/symbolizer-elf.h"

#define FIXTURE_PID 4000000000U /* no such process: files are opened by path */

#define SNAPSHOT_MAPS_MAX 256U

typedef struct Snapshot {
        uint64_t ip, sp, bp, size;
        uint8_t *stack;
        ProcTable *procs;
        ProcMap maps[SNAPSHOT_MAPS_MAX]; /* as the fixture listed them, for libdwfl */
        size_t n_maps;
} Snapshot;

static char tmpdir[] = "/tmp/tprof-unwind.XXXXXX";

static void snapshot_done(Snapshot *s) {
        free(s->stack);
        proc_table_free(s->procs);
        for (size_t i = 0; i < s->n_maps; i++)
                proc_map_done(&s->maps[i]);
}

/* Runs the fixture at path in snapshot mode and reads what it wrote. */
static void take_snapshot(const char *path, Snapshot *ret) {
        char out[PATH_MAX], line[4096];
        uint64_t hdr[4];
        char magic[4];
        pid_t pid;
        int status;
        FILE *f;

        snprintf(out, sizeof(out), "%s/snapshot", tmpdir);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                execl(path, path, "snapshot", out, (char *) NULL);
                _exit(127);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);

        f = fopen(out, "re");
        assert_non_null(f);
        assert_int_equal(fread(magic, 1, 4, f), 4);
        assert_memory_equal(magic, "TPUW", 4);
        assert_int_equal(fread(hdr, sizeof(hdr), 1, f), 1);
        *ret = (Snapshot) { .ip = hdr[0], .sp = hdr[1], .bp = hdr[2], .size = hdr[3] };
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

static size_t walk(Unwinder *u, const Snapshot *s, size_t stack_size, uint64_t *ips, size_t max) {
        return unwinder_unwind(u, s->procs,
                               &(UnwindInput) {
                                       .pid = FIXTURE_PID,
                                       .ip = s->ip, .sp = s->sp, .bp = s->bp,
                                       .stack = s->stack, .stack_size = stack_size,
                               },
                               ips, max);
}

/* The function an address is in, from the symbols of the unstripped twin of its file. */
static const char *name_of(const Snapshot *s, uint64_t ip, bool is_return, const char *exe_twin, char *buf,
                           size_t len) {
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

/* Walks a snapshot of fixture with an unwinder of options o; the path must be whole, named from
 * twin's symbols. The unwinder's figures in *ret_st. */
static void expect_whole_path_with(const char *fixture, const char *twin, const UnwinderOptions *o, bool expect_fp,
                                   UnwindStats *ret_st) {
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
        for (size_t i = 0; i < n; i++)
                print_message("  #%zu %#" PRIx64 " %s\n", i, ips[i], name_of(&s, ips[i], i > 0, twin, buf, sizeof(buf)));
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

static void expect_whole_path(const char *fixture, const char *twin, UnwindMode mode, bool expect_fp) {
        expect_whole_path_with(fixture, twin, &(UnwinderOptions) { .mode = mode }, expect_fp, NULL);
}

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

/* A library with .debug_frame only (-g, no unwind tables, no frame pointers: its .eh_frame holds
 * the start files' terminator alone) is walked by its .debug_frame, in both modes. */
static void test_unwind_debug_frame(void **state) {
        const char *fixture = getenv("TPROF_UNWIND_FIXTURE_DEBUGFRAME");

        expect_whole_path(fixture, fixture, UNWIND_MODE_AUTO, false);
        expect_whole_path(fixture, fixture, UNWIND_MODE_DWARF, false);
}

/* The .debug_frame-only fixture with its library's .debug_frame compressed the older GNU way
 * (.zdebug_frame, as Go's linker wrote it from Go 1.11 to 1.18): both copied into a directory of
 * their own, where the program's $ORIGIN run path finds the recompressed library (with the
 * test's LD_LIBRARY_PATH, which comes first, put aside until the teardown). */
static char zdebug_dir[PATH_MAX];

static bool has_section(const char *path, const char *want) {
        return test_elf_section(path, want, NULL, NULL);
}

/* The test's LD_LIBRARY_PATH (it comes before a program's $ORIGIN run path), put aside while a
 * test runs a copy of a fixture next to a library of its own, and back for the next test. */
static char *saved_library_path;

static void library_path_put_aside(void) {
        if (getenv("LD_LIBRARY_PATH")) {
                saved_library_path = strdup(getenv("LD_LIBRARY_PATH"));
                assert_non_null(saved_library_path);
                assert_int_equal(unsetenv("LD_LIBRARY_PATH"), 0);
        }
}

static void library_path_restore(void) {
        if (saved_library_path) {
                (void) setenv("LD_LIBRARY_PATH", saved_library_path, 1);
                saved_library_path = mfree(saved_library_path);
        }
}

static int zdebug_teardown(void **state) {
        char p[PATH_MAX + 64];

        library_path_restore();
        snprintf(p, sizeof(p), "%s/unwind-fixture-debugframe", zdebug_dir);
        (void) unlink(p);
        snprintf(p, sizeof(p), "%s/libtprof-unwind-fixture-debugframe.so", zdebug_dir);
        (void) unlink(p);
        (void) rmdir(zdebug_dir);
        return 0;
}

static void test_unwind_zdebug_frame(void **state) {
        const char *fixture = getenv("TPROF_UNWIND_FIXTURE_DEBUGFRAME"), *objcopy = getenv("TPROF_OBJCOPY");
        _cleanup_free_ char *dir = strdup(fixture);
        char exe[PATH_MAX + 64], lib[PATH_MAX + 64], cmd[4 * PATH_MAX];
        _cleanup_(snapshot_done) Snapshot s = {};
        bool loaded = false;

        if (!objcopy)
                skip(); /* the build found no objcopy */
        assert_non_null(dir);
        snprintf(zdebug_dir, sizeof(zdebug_dir), "%s/zdebug", tmpdir);
        snprintf(exe, sizeof(exe), "%s/unwind-fixture-debugframe", zdebug_dir);
        snprintf(lib, sizeof(lib), "%s/libtprof-unwind-fixture-debugframe.so", zdebug_dir);
        assert_int_equal(mkdir(zdebug_dir, 0755), 0);
        snprintf(cmd, sizeof(cmd),
                 "cp '%s' '%s' && '%s' --compress-debug-sections=zlib-gnu '%s/libtprof-unwind-fixture-debugframe.so' '%s'",
                 fixture, exe, objcopy, dirname(dir), lib);
        assert_int_equal(system(cmd), 0);
        assert_true(has_section(lib, ".zdebug_frame"));
        assert_false(has_section(lib, ".debug_frame"));

        library_path_put_aside();
        take_snapshot(exe, &s);
        for (size_t i = 0; i < s.n_maps; i++)
                loaded = loaded || streq(s.maps[i].path, lib);
        assert_true(loaded); /* the recompressed library, not the build's */
        expect_whole_path(exe, fixture, UNWIND_MODE_DWARF, false);
}

/*
 * The .debug_frame-only library with its DWARF split off into a separate debug file, as
 * distributions ship them (objcopy --only-keep-debug, then --strip-debug --add-gnu-debuglink): the
 * library itself has no rules for its code, its debug file does. The program and the stripped
 * library are copied into a directory D of their own; the unwinder is given a /proc of the test's,
 * whose process root holds D (a link to it) and a /usr/lib/debug: the debug file is found there by
 * build id, then by the .gnu_debuglink name; a debug file of another build (its build id changed
 * by one bit) at the build-id path is refused, and the walk is cut for want of CFI.
 */
static char dbgfile_dir[PATH_MAX];

static int dbgfile_teardown(void **state) {
        char cmd[2 * PATH_MAX];

        library_path_restore();
        snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s/proc' '%s/dbgfile-store'", dbgfile_dir, tmpdir, tmpdir);
        (void) system(cmd);
        return 0;
}

/* Changes the last byte of the build id of the file at path. */
static void flip_build_id(const char *path) {
        _cleanup_close_ int fd = open(path, O_RDWR | O_CLOEXEC);
        Elf_Scn *scn = NULL;
        off_t at = -1;
        Elf *elf;

        assert_true(fd >= 0);
        elf_version(EV_CURRENT);
        elf = elf_begin(fd, ELF_C_READ, NULL);
        assert_non_null(elf);
        while (at < 0 && (scn = elf_nextscn(elf, scn))) {
                GElf_Shdr sh;
                GElf_Nhdr nh;
                size_t off = 0, name_off, desc_off;
                Elf_Data *data;

                if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE || !(data = elf_getdata(scn, NULL)))
                        continue;
                while (at < 0 && (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0)
                        if (nh.n_type == NT_GNU_BUILD_ID && nh.n_descsz > 0)
                                at = (off_t) (sh.sh_offset + desc_off + nh.n_descsz - 1);
        }
        elf_end(elf);
        assert_true(at > 0);
        uint8_t b;
        assert_int_equal(pread(fd, &b, 1, at), 1);
        b ^= 1;
        assert_int_equal(pwrite(fd, &b, 1, at), 1);
}

/* The build id of the file at path, as lowercase hex. */
static void build_id_hex(const char *path, char *buf, size_t len) {
        _cleanup_(elf_symbols_freep) ElfSymbols *e = NULL;
        const uint8_t *bid;
        size_t n;

        assert_true(elf_symbols_load_path(path, NULL, &e) >= 0);
        bid = elf_symbols_build_id(e, &n);
        assert_non_null(bid);
        assert_true(2 * n < len);
        for (size_t i = 0; i < n; i++)
                snprintf(buf + 2 * i, len - 2 * i, "%02x", bid[i]);
}

static void test_unwind_separate_debug_file(void **state) {
        const char *fixture = getenv("TPROF_UNWIND_FIXTURE_DEBUGFRAME"), *objcopy = getenv("TPROF_OBJCOPY");
        _cleanup_free_ char *dir = strdup(fixture);
        char exe[PATH_MAX + 64], lib[PATH_MAX + 64], debug[PATH_MAX + 64], proc[PATH_MAX], root[PATH_MAX + 64],
                hex[160], cmd[8 * PATH_MAX];
        _cleanup_(unwinder_freep) Unwinder *u = NULL;
        _cleanup_(snapshot_done) Snapshot s = {};
        uint64_t ips[128], plain_bytes;
        UnwindStats st;

        if (!objcopy)
                skip(); /* the build found no objcopy */
        assert_non_null(dir);
        snprintf(dbgfile_dir, sizeof(dbgfile_dir), "%s/dbgfile", tmpdir);
        snprintf(exe, sizeof(exe), "%s/unwind-fixture-debugframe", dbgfile_dir);
        snprintf(lib, sizeof(lib), "%s/libtprof-unwind-fixture-debugframe.so", dbgfile_dir);
        snprintf(debug, sizeof(debug), "%s/dbgfile-store/lib.debug", tmpdir); /* not beside the library */
        snprintf(proc, sizeof(proc), "%s/proc", tmpdir);
        snprintf(root, sizeof(root), "%s/%u/root", proc, FIXTURE_PID);
        assert_true((size_t) snprintf(cmd, sizeof(cmd),
                                      "mkdir -p '%1$s' '%6$s%1$s' \"$(dirname '%7$s')\" && rmdir '%6$s%1$s' && "
                                      "ln -s '%1$s' '%6$s%1$s' && "
                                      "cp '%2$s' '%3$s' && "
                                      "'%4$s' --only-keep-debug '%5$s/libtprof-unwind-fixture-debugframe.so' '%7$s' && "
                                      "'%4$s' --strip-debug --add-gnu-debuglink='%7$s' "
                                      "'%5$s/libtprof-unwind-fixture-debugframe.so' '%8$s'",
                                      dbgfile_dir, fixture, exe, objcopy, dirname(dir), root, debug, lib) < sizeof(cmd));
        assert_int_equal(system(cmd), 0);
        assert_false(has_section(lib, ".debug_frame"));
        assert_true(has_section(lib, ".gnu_debuglink"));
        assert_true(has_section(debug, ".debug_frame"));

        library_path_put_aside();

        /* No debug file anywhere: the library's code has no rules, the walk is cut there. */
        take_snapshot(exe, &s);
        assert_int_equal(unwinder_new(&(UnwinderOptions) { .mode = UNWIND_MODE_DWARF, .proc_root = proc }, &u), 0);
        (void) walk(u, &s, s.size, ips, ELEMENTSOF(ips));
        unwinder_get_stats(u, &st);
        assert_int_equal(st.stacks_cut, 1);
        assert_int_equal(st.cut[UNWIND_CUT_NO_CFI], 1);
        assert_int_equal(st.debug_files, 0);
        plain_bytes = st.cache_bytes; /* the program's and the library's tables */

        /* A link at the build-id path that leads outside the process's root, to a good debug file
         * on the host: resolved within the root, it leads nowhere. */
        build_id_hex(lib, hex, sizeof(hex));
        snprintf(cmd, sizeof(cmd), "mkdir -p '%1$s/usr/lib/debug/.build-id/%2$.2s' && ln -s '%3$s' '%1$s/usr/lib/debug/.build-id/%2$.2s/%4$s.debug'",
                 root, hex, debug, hex + 2);
        assert_int_equal(system(cmd), 0);
        u = unwinder_free(u);
        assert_int_equal(unwinder_new(&(UnwinderOptions) { .mode = UNWIND_MODE_DWARF, .proc_root = proc }, &u), 0);
        (void) walk(u, &s, s.size, ips, ELEMENTSOF(ips));
        unwinder_get_stats(u, &st);
        assert_int_equal(st.cut[UNWIND_CUT_NO_CFI], 1);
        assert_int_equal(st.debug_files, 0);

        /* By build id, under the process's root. */
        snprintf(cmd, sizeof(cmd), "%s/usr/lib/debug/.build-id/%.2s/%s.debug", root, hex, hex + 2);
        assert_int_equal(unlink(cmd), 0);
        snprintf(cmd, sizeof(cmd), "cp '%1$s' '%2$s/usr/lib/debug/.build-id/%3$.2s/%4$s.debug'", debug, root, hex, hex + 2);
        assert_int_equal(system(cmd), 0);
        expect_whole_path_with(exe, fixture, &(UnwinderOptions) { .mode = UNWIND_MODE_DWARF, .proc_root = proc }, false,
                               &st);
        assert_int_equal(st.debug_files, 1);

        /* Another build's at that path: refused. */
        snprintf(cmd, sizeof(cmd), "%s/usr/lib/debug/.build-id/%.2s/%s.debug", root, hex, hex + 2);
        flip_build_id(cmd);
        u = unwinder_free(u);
        assert_int_equal(unwinder_new(&(UnwinderOptions) { .mode = UNWIND_MODE_DWARF, .proc_root = proc }, &u), 0);
        (void) walk(u, &s, s.size, ips, ELEMENTSOF(ips));
        unwinder_get_stats(u, &st);
        assert_int_equal(st.cut[UNWIND_CUT_NO_CFI], 1);
        assert_int_equal(st.debug_files, 0);

        /* By the .gnu_debuglink name, in /usr/lib/debug + the library's directory (the refused
         * file left where it is: the next way is tried). Looked for once per file: the unwinder
         * that looked already does not look again; a new one finds it. */
        snprintf(cmd, sizeof(cmd), "mkdir -p '%1$s/usr/lib/debug%2$s' && cp '%3$s' '%1$s/usr/lib/debug%2$s/lib.debug'",
                 root, dbgfile_dir, debug);
        assert_int_equal(system(cmd), 0);
        (void) walk(u, &s, s.size, ips, ELEMENTSOF(ips));
        unwinder_get_stats(u, &st);
        assert_int_equal(st.cut[UNWIND_CUT_NO_CFI], 2);
        assert_int_equal(st.debug_files, 0);
        expect_whole_path_with(exe, fixture, &(UnwinderOptions) { .mode = UNWIND_MODE_DWARF, .proc_root = proc }, false,
                               &st);
        assert_int_equal(st.debug_files, 1);

        /* Files are shared by build id, and a debug file is looked for once per view, not once
         * per file: a process of another root that has no debug file looks first (its root and
         * the host's tried, the walk cut); the first process, whose root has one, then looks in
         * its own and is whole. */
        snprintf(cmd, sizeof(cmd), "mkdir -p '%1$s/%2$u/root%3$s' && rmdir '%1$s/%2$u/root%3$s' && "
                 "ln -s '%3$s' '%1$s/%2$u/root%3$s'", proc, FIXTURE_PID + 1, dbgfile_dir);
        assert_int_equal(system(cmd), 0);
        assert_int_equal(proc_table_comm_event(s.procs, FIXTURE_PID + 1, FIXTURE_PID + 1, "unwind-fixture", false), 0);
        for (size_t i = 0; i < s.n_maps; i++)
                assert_int_equal(proc_table_mmap(s.procs, FIXTURE_PID + 1, &s.maps[i]), 0);
        u = unwinder_free(u);
        assert_int_equal(unwinder_new(&(UnwinderOptions) { .mode = UNWIND_MODE_DWARF, .proc_root = proc }, &u), 0);
        (void) unwinder_unwind(u, s.procs,
                               &(UnwindInput) { .pid = FIXTURE_PID + 1, .ip = s.ip, .sp = s.sp, .bp = s.bp,
                                                .stack = s.stack, .stack_size = s.size },
                               ips, ELEMENTSOF(ips));
        unwinder_get_stats(u, &st);
        assert_int_equal(st.cut[UNWIND_CUT_NO_CFI], 1);
        assert_int_equal(st.debug_files, 0);
        (void) walk(u, &s, s.size, ips, ELEMENTSOF(ips));
        unwinder_get_stats(u, &st);
        assert_int_equal(st.cut[UNWIND_CUT_NO_CFI], 1);
        assert_int_equal(st.stacks_cfi, 1);
        assert_int_equal(st.debug_files, 1);

        /* A process that changes its root without a new mapping (chroot(), setns()): the second
         * process, cut in its own root, now in the first's (its /proc root a link there), is
         * looked in there once its view is looked at again, a flush interval on (1 ms here). */
        u = unwinder_free(u);
        assert_int_equal(unwinder_new(&(UnwinderOptions) { .mode = UNWIND_MODE_DWARF, .proc_root = proc,
                                                           .flush_interval_usec = 1000 }, &u), 0);
        {
                UnwindInput second = { .pid = FIXTURE_PID + 1, .ip = s.ip, .sp = s.sp, .bp = s.bp,
                                       .stack = s.stack, .stack_size = s.size };

                (void) unwinder_unwind(u, s.procs, &second, ips, ELEMENTSOF(ips));
                unwinder_get_stats(u, &st);
                assert_int_equal(st.cut[UNWIND_CUT_NO_CFI], 1);
                snprintf(cmd, sizeof(cmd), "mv '%1$s/%2$u/root' '%1$s/%2$u/old-root' && ln -s '%3$s' '%1$s/%2$u/root'",
                         proc, FIXTURE_PID + 1, root);
                assert_int_equal(system(cmd), 0);
                usleep(2000);
                (void) unwinder_unwind(u, s.procs, &second, ips, ELEMENTSOF(ips));
                unwinder_get_stats(u, &st);
                assert_int_equal(st.cut[UNWIND_CUT_NO_CFI], 1);
                assert_int_equal(st.stacks_cfi, 1);
                assert_int_equal(st.debug_files, 1);
        }

        /* Room for the two files' own tables and one byte more: the debug file's .debug_frame is
         * not taken (and counted as a wait for room). */
        u = unwinder_free(u);
        assert_int_equal(unwinder_new(&(UnwinderOptions) { .mode = UNWIND_MODE_DWARF, .proc_root = proc,
                                                           .cache_bytes_max = plain_bytes + 1 }, &u), 0);
        (void) walk(u, &s, s.size, ips, ELEMENTSOF(ips));
        unwinder_get_stats(u, &st);
        assert_int_equal(st.cut[UNWIND_CUT_NO_CFI], 1);
        assert_int_equal(st.loads_deferred, 1);
        assert_int_equal(st.debug_files, 0);
        assert_true(st.cache_bytes <= plain_bytes + 1);

        /* Beside the library, then in its directory's .debug/ (a vendor's build that leaves the
         * debug file next to the program, where gdb and elfutils look too), with no /usr/lib/debug. */
        snprintf(cmd, sizeof(cmd), "rm -rf '%1$s/usr/lib/debug' && cp '%2$s' '%3$s/lib.debug'", root, debug, dbgfile_dir);
        assert_int_equal(system(cmd), 0);
        expect_whole_path_with(exe, fixture, &(UnwinderOptions) { .mode = UNWIND_MODE_DWARF, .proc_root = proc }, false,
                               &st);
        assert_int_equal(st.debug_files, 1);
        snprintf(cmd, sizeof(cmd), "mkdir '%1$s/.debug' && mv '%1$s/lib.debug' '%1$s/.debug/'", dbgfile_dir);
        assert_int_equal(system(cmd), 0);
        expect_whole_path_with(exe, fixture, &(UnwinderOptions) { .mode = UNWIND_MODE_DWARF, .proc_root = proc }, false,
                               &st);
        assert_int_equal(st.debug_files, 1);
}

/* The views a file's debug file was looked for in: the last UNWIND_DEBUG_VIEWS_MAX, a new one in
 * place of the oldest (a user who makes namespaces at will must not stop the looking). */
static void test_unwind_debug_views(void **state) {
        _cleanup_(unwind_cfi_file_freep) UnwindCfiFile *f = NULL;
        int fd = open(getenv("TPROF_UNWIND_FIXTURE"), O_RDONLY | O_CLOEXEC);

        assert_true(fd >= 0);
        assert_int_equal(unwind_cfi_file_load_fd(fd, &f), 0);
        close(fd);
        assert_true(unwind_cfi_file_wants_debug_file(f)); /* a build id, no .debug_frame */
        assert_false(unwind_cfi_file_debug_file_tried_in(f, 0));
        unwind_cfi_file_debug_file_tried(f, 0); /* the host's: apart, never pushed out */
        for (uint64_t v = 1; v <= UNWIND_DEBUG_VIEWS_MAX; v++) {
                assert_false(unwind_cfi_file_debug_views_full(f));
                unwind_cfi_file_debug_file_tried(f, v);
                unwind_cfi_file_debug_file_tried(f, v); /* again: no second place */
        }
        assert_true(unwind_cfi_file_debug_views_full(f));
        for (uint64_t v = 1; v <= UNWIND_DEBUG_VIEWS_MAX; v++)
                assert_true(unwind_cfi_file_debug_file_tried_in(f, v));
        unwind_cfi_file_debug_file_tried(f, 100);
        assert_true(unwind_cfi_file_debug_file_tried_in(f, 100));
        assert_false(unwind_cfi_file_debug_file_tried_in(f, 1));
        assert_true(unwind_cfi_file_debug_file_tried_in(f, 2));
        assert_true(unwind_cfi_file_debug_file_tried_in(f, 0));
        assert_true(unwind_cfi_file_wants_debug_file(f));
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
                for (size_t i = 0; i < n; i++)
                        print_message("  #%zu %#" PRIx64 " %s\n", i, ips[i],
                                      name_of(&s, ips[i], i > 0, getenv("TPROF_UNWIND_FIXTURE"), buf, sizeof(buf)));
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

static int setup(void **state) {
        return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state) {
        (void) rmdir(tmpdir);
        return 0;
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_unwind_pie_and_library),
                cmocka_unit_test(test_unwind_stripped),
                cmocka_unit_test(test_unwind_auto_falls_back_to_frame_pointers),
                cmocka_unit_test(test_unwind_fp_chain_ends_at_zero_bp),
        cmocka_unit_test(test_unwind_zero_bp_in_jit_code_is_cut),
                cmocka_unit_test(test_unwind_debug_frame),
                cmocka_unit_test_teardown(test_unwind_zdebug_frame, zdebug_teardown),
                cmocka_unit_test_teardown(test_unwind_separate_debug_file, dbgfile_teardown),
                cmocka_unit_test(test_unwind_debug_views),
                cmocka_unit_test(test_unwind_eh_frame_hdr_last),
                cmocka_unit_test(test_unwind_dwarf_cuts_without_cfi),
                cmocka_unit_test(test_unwind_tables_full),
                cmocka_unit_test(test_unwind_short_copy_is_cut),
                cmocka_unit_test(test_unwind_no_user_causes),
                cmocka_unit_test(test_unwind_garbage_stack_ends),
                cmocka_unit_test(test_unwind_time_budget),
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
