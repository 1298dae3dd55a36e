/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Go function tables in stripped Go PIEs (helpers/go-table-fixture.S): found inside .data.rel.ro
 * and relocated by the loader's relocations, whichever linker wrote them; and files of table
 * lookalikes (helpers/go-table-lookalikes.S), none of which is taken, searched in milliseconds.
 * Tables built byte by byte: test-symbolizer-gopclntab.c.
 */
#include "tests.h"
#include "symbolizer-test-util.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "basic/fileio.h"
#include "basic/time-util.h"

/* The first address of the Go table in .data.rel.ro of the fixture at path, as the file holds it
 * (before relocation): its first functab entry, or from Go 1.18 on its textStart; and the entry
 * point. */
static void go_fixture_first_entry(const char *path, uint64_t *ret_in_file, uint64_t *ret_entry) {
        _cleanup_free_ char *file = NULL;
        GElf_Ehdr eh;
        GElf_Shdr sh;
        size_t size;

        test_elf_ehdr(path, &eh);
        *ret_entry = eh.e_entry;
        assert_true(test_elf_section(path, ".data.rel.ro", NULL, &sh));
        assert_int_equal(read_full_file(path, 16 * 1024 * 1024, &file, &size), 0);
        assert_true(sh.sh_offset <= size && sh.sh_size <= size - sh.sh_offset);
        for (size_t off = 8; off + 64 <= sh.sh_size; off += 8) {
                const uint8_t *p = (const uint8_t *) file + sh.sh_offset + off;
                uint32_t m;

                memcpy(&m, p, 4);
                if (m == 0xfffffffbU && off >= 48) { /* nfunc, then the functab (the lookalike before) */
                        memcpy(ret_in_file, p + 16, 8);
                        return;
                }
                if (m == 0xfffffff0U) { /* after nfunc and nfiles */
                        memcpy(ret_in_file, p + 24, 8);
                        return;
                }
                if (m == 0xfffffffaU) { /* the functab at pclnOffset */
                        uint64_t functab;
                        memcpy(&functab, p + 8 + 6 * 8, 8);
                        assert_true(functab < sh.sh_size - off - 8);
                        memcpy(ret_in_file, p + functab, 8);
                        return;
                }
        }
        fail_msg("no Go table in .data.rel.ro of %s", path);
}

/*
 * Stripped Go PIEs (helpers/go-table-fixture.S): the function table is found inside
 * .data.rel.ro, not at its start and past a header that only looks like one, and its addresses
 * are the relocations', whether the linker also wrote them in place (ld.bfd) or left 0 there
 * (lld). Each fixture is checked to be what it stands for first: the table's first address in the
 * file is the entry point, or 0.
 */
static void test_go_tables_in_pies(void **state) {
        static const struct {
                const char *variable;
                bool in_place;
        } fixtures[] = {
                { "TPROF_GO12_FIXTURE", true },
                { "TPROF_GO12_FIXTURE_LLD", false },
                { "TPROF_GO116_FIXTURE_LLD", false },
                { "TPROF_GO118_FIXTURE_LLD", false },
        };
        unsigned tested = 0;

        for (size_t i = 0; i < ELEMENTSOF(fixtures); i++) {
                _cleanup_(elf_symbols_freep) ElfSymbols *e = NULL;
                const char *path = getenv(fixtures[i].variable), *name, *last = NULL;
                uint64_t in_file, entry, off;
                unsigned named = 0;

                if (!path)
                        continue;
                go_fixture_first_entry(path, &in_file, &entry);
                assert_int_equal(in_file, fixtures[i].in_place ? entry : 0);
                assert_false(test_elf_section(path, ".symtab", NULL, NULL));

                assert_int_equal(elf_symbols_load_path(path, NULL, &e), 0);
                assert_int_equal(elf_symbols_source(e), ELF_SYMBOLS_GOPCLNTAB);
                assert_true(elf_symbols_lookup(e, entry, &name, &off, NULL));
                assert_string_equal(name, "_rt0_amd64_linux");
                assert_int_equal(off, 0);
                /* then main.main and main.spin, in that order, and nothing else */
                for (uint64_t a = entry; a < entry + 0x100; a++)
                        if (elf_symbols_lookup(e, a, &name, &off, NULL) && name != last) {
                                assert_string_equal(name, named == 0 ? "_rt0_amd64_linux" :
                                                          named == 1 ? "main.main" : "main.spin");
                                last = name;
                                named++;
                        }
                assert_int_equal(named, 3);
                tested++;
        }
        if (tested == 0)
                skip();
}

/* Table lookalikes (helpers/go-table-lookalikes.S), 131072 overlapping ones and 131072 with a
 * relocation each: none is taken, and the search costs milliseconds, not the minutes a search
 * without a shared budget, or one that put the relocations in for each lookalike anew, takes (the
 * test's timeout is the bound; the time is printed). */
static void test_go_table_lookalikes(void **state) {
        static const char *const variables[] = { "TPROF_GO_LOOKALIKES", "TPROF_GO_LOOKALIKES_RELOCS" };
        unsigned tested = 0;

        for (size_t i = 0; i < ELEMENTSOF(variables); i++) {
                _cleanup_(elf_symbols_freep) ElfSymbols *e = NULL;
                const char *path = getenv(variables[i]);
                uint64_t t;

                if (!path)
                        continue;
                t = now_usec(CLOCK_MONOTONIC);
                assert_int_equal(elf_symbols_load_path(path, NULL, &e), 0);
                print_message("  %s searched in %.3f s\n", variables[i], (double) (now_usec(CLOCK_MONOTONIC) - t) / 1e6);
                assert_int_not_equal(elf_symbols_source(e), ELF_SYMBOLS_GOPCLNTAB);
                tested++;
        }
        if (tested == 0)
                skip();
}

/* The relocations are the loader's (DT_RELA of the dynamic segment), not whatever section headers
 * say: with .rela.dyn's header made another type (a file may have no section headers for them,
 * or many naming the same bytes), the lld stand-in's table is still relocated and named. */
static void test_go_table_relocations_by_segment(void **state) {
        _cleanup_(elf_symbols_freep) ElfSymbols *e = NULL;
        const char *fixture_lld = getenv("TPROF_GO12_FIXTURE_LLD"), *name;
        char path[PATH_MAX], cmd[2 * PATH_MAX + 16];
        _cleanup_close_ int fd = -EBADF;
        uint64_t in_file, entry, off;
        uint32_t type = SHT_PROGBITS;
        size_t index;
        GElf_Ehdr eh;
        GElf_Shdr sh;

        if (!fixture_lld)
                skip();
        snprintf(path, sizeof(path), "%s/go-relocs-by-segment", tmpdir);
        snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", fixture_lld, path);
        assert_int_equal(system(cmd), 0);
        assert_true(test_elf_section(path, ".rela.dyn", &index, NULL));
        test_elf_ehdr(path, &eh);
        fd = open(path, O_WRONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        /* sh_type, after sh_name */
        assert_int_equal(pwrite(fd, &type, sizeof(type), (off_t) (eh.e_shoff + index * eh.e_shentsize + 4)), sizeof(type));
        fd = safe_close(fd);
        assert_true(test_elf_section(path, ".rela.dyn", NULL, &sh));
        assert_int_equal(sh.sh_type, SHT_PROGBITS);
        go_fixture_first_entry(path, &in_file, &entry);
        assert_int_equal(in_file, 0);

        assert_int_equal(elf_symbols_load_path(path, NULL, &e), 0);
        assert_int_equal(elf_symbols_source(e), ELF_SYMBOLS_GOPCLNTAB);
        assert_true(elf_symbols_lookup(e, entry, &name, &off, NULL));
        assert_string_equal(name, "_rt0_amd64_linux");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_go_tables_in_pies),
                cmocka_unit_test(test_go_table_lookalikes),
                cmocka_unit_test(test_go_table_relocations_by_segment),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
