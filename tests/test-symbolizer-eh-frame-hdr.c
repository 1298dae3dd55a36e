/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Function starts from the unwind tables' search table (.eh_frame_hdr) where a file has no
 * .symtab: the fixture library stripped to .dynsym and a program with no symbols at all give the
 * starts and extents their unstripped twins' symbol tables give; the table found through
 * PT_GNU_EH_FRAME alone; no function outside the code; and the parser on tables written here, and
 * on the fixture's table overwritten with random bytes.
 */
#include "tests.h"
#include "symbolizer-test-util.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "basic/fileio.h"

/* For each function, the stripped file's unwind table must give the start its unstripped twin's
 * symbol table gives, from anywhere in the first bytes of the function. */
static void expect_same_starts(const char *path, const char *stripped, const char *const *names,
                               ElfSymbolSource source) {
        _cleanup_(elf_symbols_freep) ElfSymbols *e = NULL;

        assert_int_equal(elf_symbols_load_path(stripped, NULL, &e), 0);
        assert_int_equal(elf_symbols_source(e), source);
        assert_true(elf_symbols_function_starts_count(e) >= 3);
        assert_true(elf_symbols_bytes(e) >= elf_symbols_function_starts_count(e) * sizeof(uint64_t));

        for (const char *const *name = names; *name; name++) {
                uint64_t start = symbol_vaddr(path, *name);

                uint64_t off = UINT64_MAX, extent = 0;

                for (uint64_t d = 0; d < 8; d++) {
                        assert_true(elf_symbols_function_start(e, start + d, &off, NULL));
                        assert_int_equal(off, d);
                }
                /* Its extent: at least the function the symbol table sizes; every byte of it
                 * gives this start, the byte after it another start or none. */
                assert_true(elf_symbols_function_start(e, start + 3, &off, &extent));
                assert_true(extent >= symbol_size(path, *name));
                assert_true(elf_symbols_function_start(e, start + extent - 1, &off, NULL));
                assert_int_equal(off, extent - 1);
                if (elf_symbols_function_start(e, start + extent, &off, NULL))
                        assert_int_not_equal(off, extent);
        }
}

static void test_eh_frame_hdr_stripped_library(void **state) {
        static const char *const names[] = { "fixture_alpha", "fixture_beta", "_ZN7fixture5gammaEm", "fixture_local", NULL };
        _cleanup_(elf_symbols_freep) ElfSymbols *full = NULL;
        uint64_t off;

        if (!fixture_stripped)
                skip();

        /* With a .symtab the unwind table is not read at all: it would add nothing but bytes. */
        assert_int_equal(elf_symbols_load_path(fixture, NULL, &full), 0);
        assert_int_equal(elf_symbols_function_starts_count(full), 0);
        assert_false(elf_symbols_function_start(full, symbol_vaddr(fixture, "fixture_alpha"), &off, NULL));

        /* .dynsym only: the static fixture_local has no symbol, but it has an FDE. */
        expect_same_starts(fixture, fixture_stripped, names, ELF_SYMBOLS_DYNSYM);
}

static void test_eh_frame_hdr_stripped_executable(void **state) {
        static const char *const names[] = { "main", "burn_outer", "burn_middle", "burn_leaf", NULL };
        const char *burn = getenv("TPROF_BURN"), *burn_stripped = getenv("TPROF_BURN_STRIPPED");

        if (!burn || !burn_stripped)
                skip();
        /* Linked with -s: no symbols of any kind, so the unwind table is all there is. */
        expect_same_starts(burn, burn_stripped, names, ELF_SYMBOLS_NONE);
}

static void test_eh_frame_hdr_from_program_header(void **state) {
        _cleanup_(elf_symbols_freep) ElfSymbols *e = NULL, *renamed = NULL;
        _cleanup_free_ char *data = NULL;
        uint64_t start = 0, off;
        size_t size;
        char *name;

        if (!fixture_stripped)
                skip();
        assert_int_equal(read_full_file(fixture_stripped, 16 * 1024 * 1024, &data, &size), 0);
        assert_int_equal(elf_symbols_load_memory(data, size, &e), 0);
        assert_true(elf_symbols_function_starts_count(e) >= 3);

        /* With no section of that name (section headers are optional at run time), PT_GNU_EH_FRAME
         * leads to the same table. */
        name = memmem(data, size, ".eh_frame_hdr", sizeof(".eh_frame_hdr"));
        assert_non_null(name);
        name[1] = 'X';
        assert_int_equal(elf_symbols_load_memory(data, size, &renamed), 0);
        assert_int_equal(elf_symbols_function_starts_count(renamed), elf_symbols_function_starts_count(e));
        for (uint64_t v = 0; v < 0x4000; v++) {
                bool found = elf_symbols_function_start(e, v, &off, NULL);
                uint64_t off2 = UINT64_MAX;

                assert_int_equal(elf_symbols_function_start(renamed, v, &off2, NULL), found);
                if (found) {
                        assert_int_equal(off2, off);
                        start = v - off;
                }
        }
        assert_true(start > 0);
}

static void check_eh_frame_hdr_bounds(const char *path) {
        _cleanup_(elf_symbols_freep) ElfSymbols *e = NULL;
        uint64_t off, hdr_offset, hdr_vaddr, hdr_size;
        GElf_Shdr text;

        assert_int_equal(elf_symbols_load_path(path, NULL, &e), 0);
        section_place(path, ".eh_frame_hdr", &hdr_offset, &hdr_vaddr, &hdr_size);
        assert_true(test_elf_section(path, ".text", NULL, &text));

        /* Below the first function, in read-only data after the code, and far away: no function. */
        assert_false(elf_symbols_function_start(e, 0, &off, NULL));
        assert_false(elf_symbols_function_start(e, hdr_vaddr, &off, NULL));
        assert_false(elf_symbols_function_start(e, hdr_vaddr + hdr_size, &off, NULL)); /* .eh_frame */
        assert_false(elf_symbols_function_start(e, UINT64_MAX, &off, NULL));
        /* the last byte of the code is the last function's */
        assert_true(elf_symbols_function_start(e, text.sh_addr + text.sh_size - 1, &off, NULL));
}

static void test_eh_frame_hdr_bounds(void **state) {
        const char *one_segment = getenv("TPROF_ELF_FIXTURE_ONE_SEGMENT");

        if (!fixture_stripped)
                skip();
        check_eh_frame_hdr_bounds(fixture_stripped);
        /* The read-only data and the unwind tables in the code's own executable segment (arm64's
         * layout): the code still ends with .text. */
        if (one_segment)
                check_eh_frame_hdr_bounds(one_segment);
}

/* A valid table in the layout every linker writes, entries relative to the section at 0x2000. */
static size_t make_hdr(uint8_t *buf, size_t size, const int32_t *rel, uint32_t n, bool big_endian) {
        size_t l = 12 + 8 * (size_t) n;
        uint32_t words[2 + 2 * 64];

        assert_true(n <= 64 && l <= size);
        words[0] = 0x1234;
        words[1] = n;
        for (uint32_t i = 0; i < n; i++) {
                words[2 + 2 * i] = (uint32_t) rel[i];
                words[3 + 2 * i] = (uint32_t) rel[i] + 0x100;
        }
        buf[0] = 1, buf[1] = 0x1b, buf[2] = 0x03, buf[3] = 0x3b;
        for (size_t w = 0; w < 2 + 2 * (size_t) n; w++)
                for (size_t b = 0; b < 4; b++)
                        buf[4 + 4 * w + b] = (uint8_t) (words[w] >> (big_endian ? 24 - 8 * b : 8 * b));
        return l;
}

/* The parser on an exactly sized heap copy, so that a read past the end is caught by the sanitizers. */
static int parse(const uint8_t *buf, size_t l, uint64_t section_vaddr, bool big_endian, uint64_t **ret,
                 size_t *ret_n) {
        _cleanup_free_ uint8_t *copy = malloc(l ?: 1);

        assert_non_null(copy);
        memcpy(copy, buf, l);
        return elf_parse_eh_frame_hdr(copy, l, section_vaddr, big_endian, ret, ret_n);
}

/* Parses a table and expects the three starts 0x1000, 0x1100 and 0x1800 of the tables below. */
static void assert_parses_to_three(const uint8_t *buf, size_t l, bool big_endian) {
        _cleanup_free_ uint64_t *starts = NULL;
        size_t n = 0;

        assert_int_equal(parse(buf, l, 0x2000, big_endian, &starts, &n), 0);
        assert_int_equal(n, 3);
        assert_int_equal(starts[0], 0x1000);
        assert_int_equal(starts[1], 0x1100);
        assert_int_equal(starts[2], 0x1800);
}

static void test_eh_frame_hdr_parse(void **state) {
        static const int32_t sorted[] = { -0x1000, -0xf00, -0x800 };
        static const int32_t messy[] = { -0x800, -0x1000, -0xf00, -0x1000, -0x800 };
        static const int32_t wild[] = { -0x3000, -0x1000, INT32_MAX };
        uint8_t buf[12 + 8 * 64];
        uint64_t *starts = NULL;
        size_t n = 0, l;

        for (unsigned big_endian = 0; big_endian < 2; big_endian++) {
                l = make_hdr(buf, sizeof(buf), sorted, ELEMENTSOF(sorted), big_endian);
                assert_parses_to_three(buf, l, big_endian);
        }

        /* Out of order and repeated: sorted and collapsed. */
        l = make_hdr(buf, sizeof(buf), messy, ELEMENTSOF(messy), false);
        assert_parses_to_three(buf, l, false);

        /* Entries below address 0 are dropped; the others stay. */
        l = make_hdr(buf, sizeof(buf), wild, ELEMENTSOF(wild), false);
        assert_int_equal(parse(buf, l, 0x2000, false, &starts, &n), 0);
        assert_int_equal(n, 2);
        assert_int_equal(starts[0], 0x1000);
        assert_int_equal(starts[1], 0x2000 + (uint64_t) INT32_MAX);
        starts = mfree(starts);

        /* No entries. */
        l = make_hdr(buf, sizeof(buf), NULL, 0, false);
        starts = (uint64_t *) buf;
        assert_int_equal(parse(buf, l, 0x2000, false, &starts, &n), 0);
        assert_null(starts);
        assert_int_equal(n, 0);

        /* Encodings we do not read, and a count the section cannot hold. */
        static const struct {
                size_t at;
                uint8_t value;
                int r;
        } broken[] = {
                { 0, 2, -EOPNOTSUPP },    /* version */
                { 1, 0xff, -EOPNOTSUPP }, /* eh_frame_ptr omitted */
                { 1, 0x04, -EOPNOTSUPP }, /* eh_frame_ptr udata8 */
                { 2, 0x0b, -EOPNOTSUPP }, /* fde_count sdata4 */
                { 2, 0xff, -EOPNOTSUPP }, /* no count */
                { 3, 0x1b, -EOPNOTSUPP }, /* pcrel table */
                { 3, 0x3c, -EOPNOTSUPP }, /* datarel sdata8 table */
                { 8, 4, -EBADMSG },       /* count 4, room for 3 */
                { 11, 0x80, -EBADMSG },   /* count 2^31 + 3 */
        };
        for (size_t i = 0; i < ELEMENTSOF(broken); i++) {
                l = make_hdr(buf, sizeof(buf), sorted, ELEMENTSOF(sorted), false);
                buf[broken[i].at] = broken[i].value;
                assert_int_equal(parse(buf, l, 0x2000, false, &starts, &n), broken[i].r);
        }

        /* Every other encoding of eh_frame_ptr that is 4 bytes long is fine: we skip it. */
        static const uint8_t ptr_encodings[] = { 0x03, 0x0b, 0x1b, 0x3b };
        for (size_t i = 0; i < ELEMENTSOF(ptr_encodings); i++) {
                l = make_hdr(buf, sizeof(buf), sorted, ELEMENTSOF(sorted), false);
                buf[1] = ptr_encodings[i];
                assert_int_equal(parse(buf, l, 0x2000, false, &starts, &n), 0);
                assert_int_equal(n, 3);
                starts = mfree(starts);
        }

        /* Every truncation: an error, never a read past the end. */
        l = make_hdr(buf, sizeof(buf), sorted, ELEMENTSOF(sorted), false);
        for (size_t k = 0; k < l; k++)
                assert_int_equal(parse(buf, k, 0x2000, false, &starts, &n), -EBADMSG);
}

static void test_eh_frame_hdr_garbage(void **state) {
        _cleanup_free_ char *data = NULL, *copy = NULL;
        uint64_t hdr_offset, hdr_vaddr, hdr_size;
        size_t size;
        uint32_t x = 0x9e3779b9;

        if (!fixture_stripped)
                skip();
        assert_int_equal(read_full_file(fixture_stripped, 16 * 1024 * 1024, &data, &size), 0);
        section_place(fixture_stripped, ".eh_frame_hdr", &hdr_offset, &hdr_vaddr, &hdr_size);
        assert_true(hdr_offset + hdr_size <= size && hdr_size >= 12);
        copy = malloc(size);
        assert_non_null(copy);

        /* Random bytes over the header and the table, then over the count alone (huge counts). */
        for (unsigned round = 0; round < 600; round++) {
                _cleanup_(elf_symbols_freep) ElfSymbols *e = NULL;
                uint64_t off;

                memcpy(copy, data, size);
                for (unsigned k = 0; k < 1 + round % 8; k++) {
                        x = x * 1103515245 + 12345;
                        size_t pos = round < 300 ? (x >> 8) % hdr_size : 8 + (x >> 8) % 4;
                        copy[hdr_offset + pos] = (char) (x >> 24);
                }
                /* Keep the encodings valid half of the time, so the table itself gets read. */
                if (round % 2)
                        memcpy(copy + hdr_offset, ";", 4);
                assert_int_equal(elf_symbols_load_memory(copy, size, &e), 0);
                assert_true(elf_symbols_function_starts_count(e) <= (hdr_size - 12) / 8);
                for (uint64_t v = 0; v < 0x4000; v += 7)
                        if (elf_symbols_function_start(e, v, &off, NULL))
                                assert_true(off < ELF_FUNCTION_BYTES_MAX);
        }

        /* A count as large as the field holds, with the encodings intact. */
        memcpy(copy, data, size);
        memcpy(copy + hdr_offset + 8, "ÿÿÿ", 4);
        {
                _cleanup_(elf_symbols_freep) ElfSymbols *e = NULL;
                assert_int_equal(elf_symbols_load_memory(copy, size, &e), 0);
                assert_int_equal(elf_symbols_function_starts_count(e), 0);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_eh_frame_hdr_stripped_library),
                cmocka_unit_test(test_eh_frame_hdr_stripped_executable),
                cmocka_unit_test(test_eh_frame_hdr_from_program_header),
                cmocka_unit_test(test_eh_frame_hdr_bounds),
                cmocka_unit_test(test_eh_frame_hdr_parse),
                cmocka_unit_test(test_eh_frame_hdr_garbage),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
