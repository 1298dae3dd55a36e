/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * PLT entries named NAME@plt, as perf and objdump name them, in the programs this build links
 * (helpers/plt-fixture.c: ld.bfd's lazy .plt and .plt.got, its IBT PLT's .plt.sec, lld's .plt; an
 * i386 shared object's, helpers/plt-fixture-32.c), held against objdump; the stubs nothing names;
 * and a PLT frame through the symbolizer. AArch64 PLTs in files written here:
 * test-symbolizer-plt.c.
 */
#include "tests.h"
#include "symbolizer-test-util.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

/* The PLT entries objdump names in the file at path ("NAME@plt" at an address), each looked up a
 * few bytes in: the name is objdump's, never the function before the PLT (_init). Returns how
 * many there were; *ret_seen tells whether one was named want. */
static size_t check_plt_against_objdump(const char *path, const char *want, bool *ret_seen) {
        _cleanup_(elf_symbols_freep) ElfSymbols *e = NULL;
        const char *objdump = getenv("TPROF_OBJDUMP");
        char cmd[1024], line[4096];
        size_t n = 0;
        FILE *f;

        *ret_seen = false;
        assert_int_equal(elf_symbols_load_path(path, NULL, &e), 0);
        assert_non_null(objdump);
        snprintf(cmd, sizeof(cmd), "'%s' -d --no-show-raw-insn '%s'", objdump, path);
        f = popen(cmd, "r");
        assert_non_null(f);
        while (fgets(line, sizeof(line), f)) {
                unsigned long long addr;
                char name[1024];
                const char *got;
                uint64_t off, extent;

                /* "0000000000001030 <clock_gettime@plt>:", not the header's "<x@plt-0x10>:" */
                if (sscanf(line, "%llx <%1023[^>]>:", &addr, name) != 2 || !endswith(name, "@plt"))
                        continue;
                assert_true(elf_symbols_lookup(e, addr + 4, &got, &off, &extent));
                if (!streq(got, name))
                        fail_msg("%s: %#llx is %s, objdump says %s", path, addr + 4, got, name);
                assert_int_equal(off, 4);
                assert_true(extent == 8 || extent == 16);
                if (streq(name, want))
                        *ret_seen = true;
                n++;
        }
        assert_int_equal(pclose(f), 0);
        return n;
}

/* No address in the PLT sections of the file at path is named for the function before them (_init,
 * of no size, in .init): each is an entry's NAME@plt or has no name. */
static void check_plt_not_init(const char *path) {
        _cleanup_(elf_symbols_freep) ElfSymbols *e = NULL;
        static const char *const sections[] = { ".plt", ".plt.sec", ".plt.got" };
        bool any = false;

        assert_int_equal(elf_symbols_load_path(path, NULL, &e), 0);
        for (size_t i = 0; i < ELEMENTSOF(sections); i++) {
                GElf_Shdr sh;

                if (!test_elf_section(path, sections[i], NULL, &sh))
                        continue;
                any = true;
                for (uint64_t a = sh.sh_addr; a < sh.sh_addr + sh.sh_size; a++) {
                        const char *got;
                        uint64_t off;

                        if (elf_symbols_lookup(e, a, &got, &off, NULL) && !endswith(got, "@plt"))
                                fail_msg("%s: %#llx in %s is %s", path, (unsigned long long) a, sections[i], got);
                }
        }
        assert_true(any);
}

/* A sample in a PLT entry is the entry's NAME@plt, as perf and objdump name it: ld.bfd's lazy .plt
 * (a header, then an entry per function) and .plt.got, its IBT PLT bound at load (.plt.sec), lld's
 * .plt, an i386 shared object's jmp *slot(%ebx). */
static void test_plt_entries(void **state) {
        static const struct {
                const char *variable, *want;
        } fixtures[] = {
                { "TPROF_PLT_FIXTURE", "clock_gettime@plt" },
                { "TPROF_PLT_FIXTURE_IBT", "clock_gettime@plt" },
                { "TPROF_PLT_FIXTURE_LLD", "clock_gettime@plt" },
                { "TPROF_PLT_FIXTURE_32", "plt32_second@plt" },
        };
        size_t tested = 0;

        if (!getenv("TPROF_OBJDUMP"))
                skip();
        for (size_t i = 0; i < ELEMENTSOF(fixtures); i++) {
                const char *path = getenv(fixtures[i].variable);
                bool seen;

                if (!path)
                        continue; /* not built with this toolchain */
                assert_true(check_plt_against_objdump(path, fixtures[i].want, &seen) >= 2);
                if (!seen)
                        fail_msg("%s: no %s", path, fixtures[i].want);
                check_plt_not_init(path);
                tested++;
        }
#if defined(__x86_64__)
        assert_true(tested >= 2);
#else
        assert_true(tested >= 1); /* no IBT but on x86; lld where the compiler has it */
#endif
}

/* The entries of .plt.sec are 16 bytes with no header, and their .plt holds only the lazy
 * resolver's stubs: a push and a jump, nothing to name them by. Those have no name, and neither
 * does the .plt's header anywhere. */
static void test_plt_unnamed_stubs(void **state) {
        _cleanup_(elf_symbols_freep) ElfSymbols *e = NULL;
        const char *paths[] = { getenv("TPROF_PLT_FIXTURE"), getenv("TPROF_PLT_FIXTURE_IBT") };
        const char *got;
        uint64_t off;
        GElf_Shdr sh;

        for (size_t i = 0; i < ELEMENTSOF(paths); i++) {
#if !defined(__x86_64__)
                if (i == 1)
                        break; /* IBT is x86's */
#endif
                assert_non_null(paths[i]);
                e = elf_symbols_free(e);
                assert_int_equal(elf_symbols_load_path(paths[i], NULL, &e), 0);
                assert_true(test_elf_section(paths[i], ".plt", NULL, &sh));
                assert_false(elf_symbols_lookup(e, sh.sh_addr + 4, &got, &off, NULL));
                if (i == 1) {
                        assert_true(test_elf_section(paths[i], ".plt.sec", NULL, NULL));
                        for (uint64_t a = sh.sh_addr; a < sh.sh_addr + sh.sh_size; a++)
                                assert_false(elf_symbols_lookup(e, a, &got, &off, NULL));
                }
        }
}

/* A PLT frame through the symbolizer: a C++ function's entry is named demangled, without the
 * parameters, whose '(' would cut the "@plt" off its folded name. */
static void test_symbolizer_plt_frame(void **state) {
        _cleanup_(symbolizer_freep) Symbolizer *z = NULL;
        _cleanup_(elf_symbols_freep) ElfSymbols *e = NULL;
        const char *path = getenv("TPROF_PLT_FIXTURE");
        bool found = false;
        struct stat st;
        GElf_Shdr sh;
        Frame f;

        assert_non_null(path);
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(elf_symbols_load_path(path, NULL, &e), 0);
        assert_true(test_elf_section(path, ".plt", NULL, &sh));
        assert_int_equal(symbolizer_new(&(SymbolizerOptions) { .kallsyms_path = "", .jit_dir = tmpdir }, &z), 0);
        SymbolizerMapping m = {
                .start = 0x10000000, .end = 0x10100000,
                .dev = st.st_dev, .ino = st.st_ino, .path = path,
        };
        symbolizer_begin(z);
        for (uint64_t a = sh.sh_addr; a < sh.sh_addr + sh.sh_size; a += 16) {
                const char *name;
                uint64_t off;

                if (!elf_symbols_lookup(e, a, &name, &off, NULL) || !streq(name, "_ZN7fixture5gammaEm@plt"))
                        continue;
                symbolizer_user(z, 0, &m, m.start + sh.sh_offset + (a - sh.sh_addr) + 2, false, &f);
                assert_string_equal(f.symbol, "fixture::gamma@plt");
                assert_int_equal(f.offset, 2);
                found = true;
        }
        assert_true(found);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_plt_entries),
                cmocka_unit_test(test_plt_unnamed_stubs),
                cmocka_unit_test(test_symbolizer_plt_frame),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
