/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The unwinder's rules from DWARF debug information, on real snapshots of helpers/unwind-fixture.c
 * (tests/unwind-test-util.h): a library with .debug_frame only; the same compressed the older GNU
 * way (.zdebug_frame); split off into a separate debug file, found under the process's root by
 * build id, by its .gnu_debuglink name, beside the library and in its .debug/, and refused where
 * it is another build's; and the views a file's debug file was looked for in.
 */
#include "tests.h"
#include "unwind-test-util.h"

#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic/fileio.h"
#include "elf-test-util.h"
#include "sampler/sampler-unwind-cfi.h"

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

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_unwind_debug_frame),
                cmocka_unit_test_teardown(test_unwind_zdebug_frame, zdebug_teardown),
                cmocka_unit_test_teardown(test_unwind_separate_debug_file, dbgfile_teardown),
                cmocka_unit_test(test_unwind_debug_views),
        };
#if !defined(__x86_64__)
        printf("The unwinder walks x86-64 stacks only.\n");
        return EXIT_TEST_SKIP;
#endif
        if (!getenv("TPROF_UNWIND_FIXTURE"))
                return EXIT_TEST_SKIP;
        return cmocka_run_group_tests(tests, setup, teardown);
}
