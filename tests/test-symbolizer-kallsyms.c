/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kallsyms parsing and lookup on a fixture: kernel and module text, data symbols ignored, broken
 * lines skipped and counted, addresses between, at and past symbols.
 */
#include "tests.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "basic/fileio.h"
#include "symbolizer/kallsyms.h"
#include "symbolizer/symbolizer.h"

static char fixture[512];

static const struct {
        uint64_t addr;
        const char *name; /* NULL: unresolved */
        const char *dso;
        uint64_t offset;
} cases[] = {
        { 0xffffffff80ffffff, NULL },
        /* Two names at one address: perf's choice, fewer leading underscores. */
        { 0xffffffff81000000, "startup_64", "[kernel.kallsyms]", 0 },
        { 0xffffffff81000010, "startup_64", "[kernel.kallsyms]", 0x10 },
        { 0xffffffff81001fff, "do_one_thing", "[kernel.kallsyms]", 0xfff },
        { 0xffffffff81002010, "do_syscall_64", "[kernel.kallsyms]", 0x10 },
        /* A system call's entries: the global ones, and of those the native 64-bit one. */
        { 0xffffffff81002210, "__x64_sys_getppid", "[kernel.kallsyms]", 0x10 },
        { 0xffffffff81002400, "weak_handler", "[kernel.kallsyms]", 0 },
        /* Data symbols are not functions: the text before them extends over them. */
        { 0xffffffff81003000, "weak_handler", "[kernel.kallsyms]", 0xc00 },
        { 0xffffffff81004000, "_etext", "[kernel.kallsyms]", 0 },
        { 0xffffffffc0100004, "ext4_fill_super", "[ext4]", 4 },
        { 0xffffffffc0100900, "ext4_mount", "[ext4]", 0x100 },
        { 0xffffffffc0200010, "ena_io_poll", "[ena]", 0x10 },
        /* Far past the last symbol: not blamed on it. */
        { 0xffffffffc0400000, NULL },
};

static void test_lookup_table(void **state) {
        _cleanup_(kallsyms_freep) Kallsyms *k = NULL;

        assert_int_equal(kallsyms_load(fixture, &k), 0);
        /* startup_64 (over _stext), do_one_thing, do_syscall_64, __x64_sys_getppid, weak_handler,
         * _etext, 2 x ext4, ena_io_poll */
        assert_int_equal(kallsyms_size(k), 9);
        assert_true(kallsyms_skipped(k) >= 4);

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const char *name = NULL, *dso = NULL;
                uint64_t off = 0;
                bool found = kallsyms_lookup(k, cases[i].addr, &name, &dso, &off, NULL);

                if (!cases[i].name) {
                        assert_false(found);
                        continue;
                }
                assert_true(found);
                assert_string_equal(name, cases[i].name);
                assert_string_equal(dso, cases[i].dso);
                assert_int_equal(off, cases[i].offset);
        }
}

/* A symbol's extent is where lookups give it: from its start up to the next symbol (the owner's
 * tail past its last one), and not one byte further. */
static void test_lookup_extent(void **state) {
        _cleanup_(kallsyms_freep) Kallsyms *k = NULL;

        assert_int_equal(kallsyms_load(fixture, &k), 0);
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const char *name, *dso, *n2 = NULL, *d2;
                uint64_t off, extent, start, off2;

                if (!cases[i].name)
                        continue;
                assert_true(kallsyms_lookup(k, cases[i].addr, &name, &dso, &off, &extent));
                start = cases[i].addr - off;
                assert_true(extent > off);
                assert_true(kallsyms_lookup(k, start + extent - 1, &n2, &d2, &off2, NULL));
                assert_ptr_equal(n2, name);
                assert_int_equal(off2, extent - 1);
                n2 = NULL;
                if (kallsyms_lookup(k, start + extent, &n2, &d2, &off2, NULL))
                        assert_ptr_not_equal(n2, name);
        }
}

static void test_missing_and_empty(void **state) {
        _cleanup_(kallsyms_freep) Kallsyms *k = NULL;
        const char *name, *dso;
        uint64_t off;

        assert_int_equal(kallsyms_load("/nonexistent/kallsyms", &k), -ENOENT);
        assert_int_equal(kallsyms_load("/dev/null", &k), 0);
        assert_int_equal(kallsyms_size(k), 0);
        assert_false(kallsyms_lookup(k, 0xffffffff81000000, &name, &dso, &off, NULL));
        assert_false(kallsyms_lookup(NULL, 0xffffffff81000000, &name, &dso, &off, NULL));
}

static void test_restricted_addresses(void **state) {
        /* kptr_restrict makes every address 0: nothing usable, nothing crashes. */
        char path[] = "/tmp/tprof-kallsyms.XXXXXX";
        int fd = mkstemp(path);
        const char *text = "0000000000000000 T _stext\n0000000000000000 t foo\t[ext4]\n";
        _cleanup_(kallsyms_freep) Kallsyms *k = NULL;
        const char *name, *dso;
        uint64_t off;

        assert_true(fd >= 0);
        assert_int_equal(write(fd, text, strlen(text)), (ssize_t) strlen(text));
        close(fd);
        assert_int_equal(kallsyms_load(path, &k), 0);
        assert_int_equal(kallsyms_size(k), 0);
        assert_false(kallsyms_lookup(k, 0x10, &name, &dso, &off, NULL));
        unlink(path);
}

static void test_reload_for_late_symbols(void **state) {
        char path[] = "/tmp/tprof-kallsyms.XXXXXX";
        int fd = mkstemp(path);
        const char *v1 = "ffffffff81000000 T _stext\nffffffff81001000 T _etext\n";
        const char *v2 = "ffffffff81000000 T _stext\nffffffff81001000 T _etext\n"
                         "ffffffffc0000000 t late_fn\t[late]\n";
        _cleanup_(symbolizer_freep) Symbolizer *z = NULL;
        SymbolizerStats st;
        Frame f;

        assert_true(fd >= 0);
        assert_int_equal(write(fd, v1, strlen(v1)), (ssize_t) strlen(v1));
        close(fd);
        assert_int_equal(symbolizer_new(&(SymbolizerOptions) { .kallsyms_path = path, .kallsyms_reload_usec = 1 }, &z), 0);

        symbolizer_begin(z);
        symbolizer_kernel(z, 0xffffffff81000010, false, &f);
        assert_string_equal(f.symbol, "_stext");
        usleep(10);
        symbolizer_kernel(z, 0xffffffffc0000010, false, &f);
        assert_string_equal(f.symbol, "[unknown]");
        assert_string_equal(f.dso, "[kernel.kallsyms]");

        /* The module appears; the next sample reads kallsyms again and names it. */
        assert_int_equal(write_file_atomic(path, v2, strlen(v2), 0644), 0);
        symbolizer_begin(z);
        symbolizer_kernel(z, 0xffffffffc0000010, false, &f);
        assert_string_equal(f.symbol, "late_fn");
        assert_string_equal(f.dso, "[late]");
        symbolizer_get_stats(z, &st);
        assert_int_equal(st.kallsyms_reloads, 1);
        unlink(path);
}

/* Resolves ip and checks the frame's symbol, address and offset. */
static void expect_kernel_frame(Symbolizer *z, uint64_t ip, bool is_return, const char *symbol, uint64_t addr,
                                uint64_t offset, Frame *ret) {
        symbolizer_kernel(z, ip, is_return, ret);
        assert_string_equal(ret->symbol, symbol);
        assert_int_equal(ret->addr, addr);
        assert_int_equal(ret->offset, offset);
}

static void test_function_frames(void **state) {
        _cleanup_(symbolizer_freep) Symbolizer *z = NULL, *exact = NULL;
        Frame f;

        assert_int_equal(symbolizer_new(&(SymbolizerOptions) { .kallsyms_path = fixture, .function_frames = true },
                                        &z), 0);
        assert_int_equal(symbolizer_new(&(SymbolizerOptions) { .kallsyms_path = fixture }, &exact), 0);
        symbolizer_begin(z);
        symbolizer_begin(exact);

        /* Twice each: the first answer comes from kallsyms, the second from the cache in front of it. */
        for (unsigned i = 0; i < 2; i++) {
                expect_kernel_frame(z, 0xffffffff81002010, false, "do_syscall_64", 0xffffffff81002000, 0, &f);
                assert_true(f.kernel);

                /* A return address is looked up one byte back... */
                expect_kernel_frame(z, 0xffffffffc0100901, true, "ext4_mount", 0xffffffffc0100800, 0, &f);
                assert_string_equal(f.dso, "[ext4]");

                /* ...so a return to a function's first byte is the previous function's frame. */
                expect_kernel_frame(z, 0xffffffff81002000, true, "do_one_thing", 0xffffffff81001000, 0, &f);

                expect_kernel_frame(exact, 0xffffffffc0100901, true, "ext4_mount", 0xffffffffc0100901, 0x101, &f);
        }

        /* Unresolved: the exact address. */
        expect_kernel_frame(z, 0xffffffffc0400000, true, "[unknown]", 0xffffffffc0400000, 0, &f);
}

/* Appends one ELF note (Elf64_Nhdr: name size, descriptor size, type; then the name and the
 * descriptor, each padded to 4 bytes; the System V gABI and Linux v6.1 include/uapi/linux/elf.h). */
static size_t put_note(uint8_t *p, const char *name, uint32_t type, const uint8_t *desc, uint32_t descsz) {
        uint32_t namesz = (uint32_t) strlen(name) + 1, h[3] = { namesz, descsz, type };
        size_t n = sizeof h;

        memcpy(p, h, sizeof h);
        memset(p + n, 0, ((namesz + 3) & ~3U) + ((descsz + 3) & ~3U));
        memcpy(p + n, name, namesz);
        n += (namesz + 3) & ~3U;
        memcpy(p + n, desc, descsz);
        return n + ((descsz + 3) & ~3U);
}

/* The running kernel's build id comes from /sys/kernel/notes, the kernel's .notes section as Linux
 * v6.1 kernel/ksysfs.c (notes_read) exposes it: notes of other names and types (Xen's, the kernel
 * version, of odd sizes) before the GNU build id are skipped. Frames of the kernel proper carry
 * it, named or not; a module's frames do not. */
static void test_kernel_build_id(void **state) {
        static const uint8_t id[20] = { 0x4a, 0x5a, 0x9b, 0x0a, 0xff, 0xb6, 0x6c, 0x43, 0x7a, 0xbc,
                                        0xd4, 0x55, 0xd2, 0x73, 0x8a, 0xf8, 0x79, 0x98, 0x5f, 0xa9 };
        static const char version[] = "6.1.0-test";
        char path[] = "/tmp/tprof-notes.XXXXXX";
        uint8_t notes[256];
        size_t n = 0;
        int fd;

        n += put_note(notes + n, "Xen", 18, (const uint8_t *) "\0\0\0\0\0\0\0\x80", 8);
        n += put_note(notes + n, "Linux", 0x100, (const uint8_t *) version, sizeof version - 1);
        n += put_note(notes + n, "GNU", 3, id, sizeof id);
        fd = mkstemp(path);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, notes, n), (ssize_t) n);
        close(fd);

        for (unsigned cut = 0; cut < 2; cut++) {
                _cleanup_(symbolizer_freep) Symbolizer *z = NULL;
                Frame f;

                /* cut: the file ends inside the build id's note */
                if (cut)
                        assert_int_equal(truncate(path, (off_t) n - 4), 0);
                assert_int_equal(symbolizer_new(&(SymbolizerOptions) { .kallsyms_path = fixture,
                                                                       .kernel_notes_path = path }, &z), 0);
                symbolizer_begin(z);
                for (unsigned i = 0; i < 2; i++) { /* from kallsyms, then from the cache */
                        symbolizer_kernel(z, 0xffffffff81002010, false, &f);
                        assert_string_equal(f.symbol, "do_syscall_64");
                        if (cut)
                                assert_null(f.build_id);
                        else
                                assert_string_equal(f.build_id, "4a5a9b0affb66c437abcd455d2738af879985fa9");
                }
                symbolizer_kernel(z, 0xffffffffc0100004, false, &f);
                assert_string_equal(f.dso, "[ext4]");
                assert_null(f.build_id);
                symbolizer_kernel(z, 0xffffffff80ffffff, false, &f);
                assert_string_equal(f.dso, "[kernel.kallsyms]");
                assert_true(cut ? f.build_id == NULL : streq(f.build_id, "4a5a9b0affb66c437abcd455d2738af879985fa9"));
        }
        unlink(path);
}

int main(void) {
        const char *d = getenv("TPROF_TEST_DATA");
        snprintf(fixture, sizeof(fixture), "%s/kallsyms", d ?: "tests/data/sampler");

        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_lookup_table),
                cmocka_unit_test(test_lookup_extent),
                cmocka_unit_test(test_missing_and_empty),
                cmocka_unit_test(test_restricted_addresses),
                cmocka_unit_test(test_reload_for_late_symbols),
                cmocka_unit_test(test_function_frames),
                cmocka_unit_test(test_kernel_build_id),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
