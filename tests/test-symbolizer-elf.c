/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ELF symbolization against a tiny shared library that meson builds (helpers/elf-fixture.c):
 * load it, take its functions' runtime addresses, turn them into file offsets through our own
 * mapping as the sampler would, and ask the symbolizer for names from the file alone. Then the
 * same file stripped (.dynsym only), and a few hundred truncated and corrupted copies, which must
 * load without crashing and answer lookups sanely. Symbols from elsewhere (MiniDebugInfo, debug
 * files): test-symbolizer-debuginfo.c; unwind tables as function starts:
 * test-symbolizer-eh-frame-hdr.c; Go tables: test-symbolizer-go-pies.c; PLT entries:
 * test-symbolizer-plt-linked.c; frames through the symbolizer: test-symbolizer-frames.c and
 * test-symbolizer-cache.c.
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

/* addr + delta is name + off. */
static void expect_name_at(const ElfSymbols *e, const void *addr, uint64_t delta, const char *name, uint64_t off) {
        uint64_t vaddr, got_off;
        const char *got = NULL;

        assert_true(elf_symbols_offset_to_vaddr(e, offset_of(addr), &vaddr));
        assert_true(elf_symbols_lookup(e, vaddr + delta, &got, &got_off, NULL));
        assert_string_equal(got, name);
        assert_int_equal(got_off, off);
}

static void test_symtab(void **state) {
        _cleanup_(elf_symbols_freep) ElfSymbols *e = NULL;
        size_t bid_len;

        assert_int_equal(elf_symbols_load_path(fixture, NULL, &e), 0);
        assert_int_equal(elf_symbols_source(e), ELF_SYMBOLS_SYMTAB);
        assert_true(elf_symbols_count(e) >= 3);
        assert_non_null(elf_symbols_build_id(e, &bid_len));
        assert_true(bid_len >= 8);
        expect_name(e, alpha, "fixture_alpha");
        expect_name(e, beta, "fixture_beta");
}

/* Two symbols at one address: the one with a size names it, though the other is global. */
static void test_zero_size_marker(void **state) {
        _cleanup_(elf_symbols_freep) ElfSymbols *e = NULL;
        void *marker = dlsym(handle, "fixture_zero_size_marker");

        if (!marker)
                skip(); /* not built on this architecture */
        assert_int_equal(elf_symbols_load_path(fixture, NULL, &e), 0);
        expect_name(e, marker, "fixture_sized_local");
}

/* Labels (STT_NOTYPE) in code name what no function covers, as perf names them; one inside a
 * function leaves it its name. */
static void test_untyped_labels(void **state) {
        _cleanup_(elf_symbols_freep) ElfSymbols *e = NULL;
        void *entry = dlsym(handle, "fixture_untyped_entry"), *inner = dlsym(handle, "fixture_inner_label");

        if (!entry || !inner)
                skip(); /* not built on this architecture */
        assert_int_equal(elf_symbols_load_path(fixture, NULL, &e), 0);
        expect_name(e, entry, "fixture_untyped_entry");
        /* inner is fixture_typed_with_label + 4 */
        expect_name_at(e, inner, 0, "fixture_typed_with_label", 4);
}

/* A global label after a function the file gives no size (crtstuff's frame_dummy is one, and the
 * first object's code follows it) is an entry point of its own, as perf names it; a local label
 * there is the function's. */
static void test_global_label_after_unsized_function(void **state) {
        _cleanup_(elf_symbols_freep) ElfSymbols *e = NULL;
        void *fn = dlsym(handle, "fixture_unsized_typed"), *entry = dlsym(handle, "fixture_entry_after_unsized");

        if (!fn || !entry)
                skip(); /* not built on this architecture */
        assert_int_equal(elf_symbols_load_path(fixture, NULL, &e), 0);
        expect_name(e, fn, "fixture_unsized_typed");
        /* past the local label, 8 bytes in: still the function's */
        expect_name_at(e, fn, 8, "fixture_unsized_typed", 8);
        expect_name(e, entry, "fixture_entry_after_unsized");
}

static void test_stripped_dynsym(void **state) {
        _cleanup_(elf_symbols_freep) ElfSymbols *e = NULL;
        char path[256], cmd[1024];

        snprintf(path, sizeof(path), "%s/stripped.so", tmpdir);
        snprintf(cmd, sizeof(cmd), "objcopy --strip-all --remove-section=.gnu_debuglink '%s' '%s' 2>/dev/null", fixture, path);
        if (run(cmd) != 0)
                skip();
        assert_int_equal(elf_symbols_load_path(path, NULL, &e), 0);
        assert_int_equal(elf_symbols_source(e), ELF_SYMBOLS_DYNSYM);
        /* Exported functions are still named; the file is the same layout so our addresses apply. */
        expect_name(e, alpha, "fixture_alpha");
        expect_name(e, beta, "fixture_beta");
}

/* A .symtab left with a label and no function is no symbol table: the functions are still named
 * from .dynsym, not all taken for code after the label. */
static void test_symtab_of_labels_only(void **state) {
        _cleanup_(elf_symbols_freep) ElfSymbols *e = NULL;
        char path[256], cmd[1024];

        if (!dlsym(handle, "fixture_untyped_entry"))
                skip(); /* not built on this architecture */
        snprintf(path, sizeof(path), "%s/labels-only.so", tmpdir);
        snprintf(cmd, sizeof(cmd),
                 "objcopy --strip-all --keep-symbol=fixture_untyped_entry --remove-section=.gnu_debuglink '%s' '%s' "
                 "2>/dev/null && readelf -sW '%s' | grep -q 'NOTYPE.*fixture_untyped_entry'",
                 fixture, path, path);
        if (run(cmd) != 0)
                skip();
        assert_int_equal(elf_symbols_load_path(path, NULL, &e), 0);
        assert_int_equal(elf_symbols_source(e), ELF_SYMBOLS_DYNSYM);
        expect_name(e, alpha, "fixture_alpha");
        expect_name(e, beta, "fixture_beta");
}

static void test_not_elf(void **state) {
        _cleanup_(elf_symbols_freep) ElfSymbols *e = NULL;
        uint64_t vaddr;

        assert_int_equal(elf_symbols_load_path("/etc/hostname", NULL, &e), -ENOEXEC);
        assert_non_null(e);
        assert_int_equal(elf_symbols_count(e), 0);
        assert_false(elf_symbols_offset_to_vaddr(e, 0, &vaddr));
        assert_int_equal(elf_symbols_load_path("/nonexistent", NULL, &(ElfSymbols *) { NULL }), -ENOENT);
}

static void load_and_probe(const char *path) {
        _cleanup_(elf_symbols_freep) ElfSymbols *e = NULL;
        const char *name;
        uint64_t vaddr, off;

        (void) elf_symbols_load_path(path, NULL, &e);
        if (!e)
                return;
        for (uint64_t o = 0; o < 0x4000; o += 0x1f3)
                if (elf_symbols_offset_to_vaddr(e, o, &vaddr) && elf_symbols_lookup(e, vaddr, &name, &off, NULL))
                        assert_true(strlen(name) < 1024);
}

/* source cut short and corrupted, each copy loaded and looked in. */
static void truncate_and_corrupt(const char *source) {
        _cleanup_free_ char *data = NULL;
        size_t size;
        char path[256];
        uint32_t x = 0x12345678;

        assert_int_equal(read_full_file(source, 16 * 1024 * 1024, &data, &size), 0);
        snprintf(path, sizeof(path), "%s/fuzz.so", tmpdir);

        /* Every prefix length at a coarse step, and all short ones. */
        for (size_t n = 0; n < size; n += n < 128 ? 1 : 61) {
                assert_int_equal(write_file_atomic(path, data, n, 0644), 0);
                load_and_probe(path);
        }

        /* Random byte flips, concentrated where the headers are. */
        _cleanup_free_ char *copy = malloc(size);
        assert_non_null(copy);
        for (unsigned round = 0; round < 400; round++) {
                memcpy(copy, data, size);
                for (unsigned k = 0; k < 8; k++) {
                        x = x * 1103515245 + 12345;
                        size_t pos = round % 2 ? (x >> 8) % MIN(size, (size_t) 256) : (x >> 8) % size;
                        copy[pos] = (char) (x >> 24);
                }
                /* Section headers live at the end of the file in what gcc writes. */
                x = x * 1103515245 + 12345;
                copy[size - 1 - (x >> 8) % MIN(size, (size_t) 2048)] ^= (char) (x >> 3);
                assert_int_equal(write_file_atomic(path, copy, size, 0644), 0);
                load_and_probe(path);
        }

        /* ELF magic followed by garbage. */
        memset(copy, 0xff, size);
        memcpy(copy, "\177ELF\2\1\1", 7);
        assert_int_equal(write_file_atomic(path, copy, size, 0644), 0);
        load_and_probe(path);
}

/* An ELF file whose .symtab has n functions that all name one string of len bytes. */
static void write_one_name_symtab(const char *path, size_t n, size_t len) {
        static const char shstrtab[] = "\0.strtab\0.symtab\0.shstrtab";
        _cleanup_free_ char *strtab = malloc(len + 2);
        _cleanup_free_ Elf64_Sym *syms = calloc(n, sizeof(Elf64_Sym));
        _cleanup_close_ int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        Elf64_Shdr *sh;
        Elf64_Ehdr *eh;
        Elf *elf;

        assert_non_null(strtab);
        assert_non_null(syms);
        assert_true(fd >= 0);
        strtab[0] = '\0';
        memset(strtab + 1, 'x', len);
        strtab[len + 1] = '\0';
        for (size_t i = 0; i < n; i++)
                syms[i] = (Elf64_Sym) { .st_name = 1, .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
                                        .st_shndx = 1, .st_value = 0x1000 + 16 * i, .st_size = 16 };
        elf = test_elf_new_dyn(fd, EM_X86_64, &eh);

        (void) test_elf_new_section(elf, 1, SHT_STRTAB, strtab, len + 2, ELF_T_BYTE, 1); /* 1: .strtab */
        sh = test_elf_new_section(elf, 9, SHT_SYMTAB, syms, n * sizeof(Elf64_Sym), ELF_T_SYM, 8);
        sh->sh_link = 1;
        sh->sh_entsize = sizeof(Elf64_Sym);
        (void) test_elf_new_section(elf, 17, SHT_STRTAB, (void *) shstrtab, sizeof(shstrtab), ELF_T_BYTE, 1); /* 3 */
        eh->e_shstrndx = 3;
        assert_true(elf_update(elf, ELF_C_WRITE) > 0);
        elf_end(elf);
}

/* A symbol table whose 200000 functions all name one 1000-byte string (200 MB of names if each
 * were kept): names past 4 times the string table's size and 1 MiB are not taken. (A real table
 * keeps all of its own: test_symtab.) */
static void test_symbol_names_bounded(void **state) {
        _cleanup_(elf_symbols_freep) ElfSymbols *e = NULL;
        char path[PATH_MAX];

        snprintf(path, sizeof(path), "%s/one-name.so", tmpdir);
        write_one_name_symtab(path, 200000, 1000);
        assert_int_equal(elf_symbols_load_path(path, NULL, &e), 0);
        print_message("  200000 symbols of one 1000-byte name: %zu taken, %zu bytes\n", elf_symbols_count(e),
                      elf_symbols_bytes(e));
        assert_true(elf_symbols_count(e) > 1000);
        assert_true(elf_symbols_count(e) < 1100);
        assert_true(elf_symbols_bytes(e) < 16 * 1024 * 1024);
}

/* The library, and the stand-ins for Go PIEs (their tables searched for and relocated). */
static void test_truncated_and_corrupted(void **state) {
        static const char *const go_fixtures[] = { "TPROF_GO12_FIXTURE_LLD", "TPROF_GO116_FIXTURE_LLD" };

        truncate_and_corrupt(fixture);
        for (size_t i = 0; i < ELEMENTSOF(go_fixtures); i++)
                if (getenv(go_fixtures[i]))
                        truncate_and_corrupt(getenv(go_fixtures[i]));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_symtab),
                cmocka_unit_test(test_zero_size_marker),
                cmocka_unit_test(test_untyped_labels),
                cmocka_unit_test(test_global_label_after_unsized_function),
                cmocka_unit_test(test_stripped_dynsym),
                cmocka_unit_test(test_symtab_of_labels_only),
                cmocka_unit_test(test_not_elf),
                cmocka_unit_test(test_truncated_and_corrupted),
                cmocka_unit_test(test_symbol_names_bounded),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
