/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ELF symbolization against a tiny shared library that meson builds (helpers/elf-fixture.c):
 * load it, take its functions' runtime addresses, turn them into file offsets through our own
 * mapping as the sampler would, and ask the symbolizer for names from the file alone. Then the
 * same file stripped (.dynsym only), with MiniDebugInfo added, and a few hundred truncated and
 * corrupted copies, which must load without crashing and answer lookups sanely.
 */
#include "tests.h"
#include "elf-test-util.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic/fileio.h"
#include "basic/string-util.h"
#include "basic/time-util.h"
#include "symbolizer/symbolizer-elf.h"
#include "symbolizer/symbolizer-jitmap.h"
#include "symbolizer/symbolizer.h"

static const char *fixture, *fixture_stripped;
static char tmpdir[] = "/tmp/tprof-elf.XXXXXX";

/* The file offset of a runtime address in our own mappings of path. */
static uint64_t offset_of(const void *addr) {
        _cleanup_fclose_ FILE *f = fopen("/proc/self/maps", "re");
        char line[4096];

        assert_non_null(f);
        while (fgets(line, sizeof(line), f)) {
                unsigned long long s, e, off;
                if (sscanf(line, "%llx-%llx %*s %llx", &s, &e, &off) != 3)
                        continue;
                if ((uintptr_t) addr >= s && (uintptr_t) addr < e)
                        return (uintptr_t) addr - s + off;
        }
        fail_msg("address %p not mapped", addr);
        return 0;
}

/* Our own [vdso] mapping, as a perf MMAP record would give it. */
static SymbolizerMapping self_vdso_mapping(void) {
        _cleanup_fclose_ FILE *maps = fopen("/proc/self/maps", "re");
        char line[512];
        unsigned long long s = 0, e = 0;

        while (maps && fgets(line, sizeof(line), maps))
                if (strstr(line, "[vdso]"))
                        assert_int_equal(sscanf(line, "%llx-%llx", &s, &e), 2);
        return (SymbolizerMapping) { .start = s, .end = e, .path = "[vdso]" };
}

static void expect_name(const ElfSymbols *e, const void *addr, const char *name) {
        uint64_t vaddr, off;
        const char *got = NULL;

        assert_true(elf_symbols_offset_to_vaddr(e, offset_of(addr), &vaddr));
        if (!name) {
                assert_false(elf_symbols_lookup(e, vaddr + 4, &got, &off, NULL));
                return;
        }
        assert_true(elf_symbols_lookup(e, vaddr + 4, &got, &off, NULL));
        assert_string_equal(got, name);
        assert_int_equal(off, 4);
}

/* addr + delta is name + off. */
static void expect_name_at(const ElfSymbols *e, const void *addr, uint64_t delta, const char *name, uint64_t off) {
        uint64_t vaddr, got_off;
        const char *got = NULL;

        assert_true(elf_symbols_offset_to_vaddr(e, offset_of(addr), &vaddr));
        assert_true(elf_symbols_lookup(e, vaddr + delta, &got, &got_off, NULL));
        assert_string_equal(got, name);
        assert_int_equal(got_off, off);
}

static void *handle;
static void *alpha, *beta, *gamma_fn;

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

/* Runs a shell command; its objcopy is the build's (TPROF_OBJCOPY: the fixtures' own binutils,
 * an aarch64 one in a cross build). */
static int run(const char *cmd) {
        _cleanup_free_ char *c = NULL;
        int r;

        if (asprintf(&c, "objcopy() { command \"${TPROF_OBJCOPY:-objcopy}\" \"$@\"; }; %s", cmd) < 0)
                return -1;
        r = system(c);
        return WIFEXITED(r) ? WEXITSTATUS(r) : -1;
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

static void test_minidebuginfo(void **state) {
        _cleanup_(elf_symbols_freep) ElfSymbols *e = NULL;
        char cmd[2048];

        /* The recipe distributions use: keep the functions' symbols in a small ELF, xz it, add it. */
        snprintf(cmd, sizeof(cmd),
                 "set -e; cd '%1$s'; "
                 "objcopy --strip-all --remove-section=.gnu_debuglink '%2$s' mini.so; "
                 "objcopy --only-keep-debug '%2$s' debug.so; "
                 "objcopy -S --remove-section .gdb_index --remove-section .comment --keep-symbol=fixture_alpha "
                 "--keep-symbol=fixture_beta --keep-symbol=fixture_local debug.so mini.debug; "
                 "xz -f mini.debug; objcopy --add-section .gnu_debugdata=mini.debug.xz mini.so",
                 tmpdir, fixture);
        if (run("command -v xz >/dev/null") != 0 || run(cmd) != 0)
                skip();
        char path[256];
        snprintf(path, sizeof(path), "%s/mini.so", tmpdir);
        assert_int_equal(elf_symbols_load_path(path, NULL, &e), 0);
        assert_int_equal(elf_symbols_source(e), ELF_SYMBOLS_MINIDEBUG);
        expect_name(e, alpha, "fixture_alpha");
}

static void test_debug_file_by_build_id(void **state) {
        _cleanup_(elf_symbols_freep) ElfSymbols *orig = NULL, *e = NULL;
        char root[256], dir[512], cmd[2048], hex[2 * ELF_BUILD_ID_BYTES_MAX + 1];
        const uint8_t *bid;
        size_t n;

        assert_int_equal(elf_symbols_load_path(fixture, NULL, &orig), 0);
        bid = elf_symbols_build_id(orig, &n);
        if (!bid)
                skip();
        for (size_t i = 0; i < n; i++)
                sprintf(hex + 2 * i, "%02x", bid[i]);

        /* A debug root laid out as /usr/lib/debug/.build-id/xx/rest.debug, and a stripped binary. */
        snprintf(root, sizeof(root), "%s/buildid-root", tmpdir);
        snprintf(dir, sizeof(dir), "%s/usr/lib/debug/.build-id/%.2s", root, hex);
        assert_int_equal(mkdir_p(dir, 0755), 0);
        snprintf(cmd, sizeof(cmd),
                 "objcopy --only-keep-debug '%s' '%s/%s.debug' && "
                 "objcopy --strip-all --remove-section=.gnu_debuglink '%s' '%s/stripped-bid.so'",
                 fixture, dir, hex + 2, fixture, tmpdir);
        if (run(cmd) != 0)
                skip();

        const char *const roots[] = { root, NULL };
        char path[512];
        snprintf(path, sizeof(path), "%s/stripped-bid.so", tmpdir);
        assert_int_equal(elf_symbols_load_path(path, roots, &e), 0);
        assert_int_equal(elf_symbols_source(e), ELF_SYMBOLS_DEBUG_FILE);
        expect_name(e, alpha, "fixture_alpha");
        expect_name(e, beta, "fixture_beta");
}

static void test_debug_file_by_debuglink(void **state) {
        _cleanup_(elf_symbols_freep) ElfSymbols *e = NULL;
        _cleanup_close_ int fd = -EBADF;
        char root[256], cmd[2048], path[512];

        /* /usr/lib/debug/<dir of the binary>/<debuglink name>, with no build-id file around. */
        snprintf(root, sizeof(root), "%s/link-root", tmpdir);
        snprintf(path, sizeof(path), "%s/usr/lib/debug/opt/app", root);
        assert_int_equal(mkdir_p(path, 0755), 0);
        snprintf(cmd, sizeof(cmd),
                 "cd '%1$s' && objcopy --only-keep-debug '%2$s' fixture.debug && "
                 "objcopy --strip-all --remove-section=.gnu_debuglink '%2$s' stripped-link.so && "
                 "objcopy --add-gnu-debuglink=fixture.debug stripped-link.so && mv fixture.debug '%3$s/'",
                 tmpdir, fixture, path);
        if (run(cmd) != 0)
                skip();

        snprintf(path, sizeof(path), "%s/stripped-link.so", tmpdir);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        const char *const roots[] = { root, NULL };
        /* As mapped inside its container: /opt/app/stripped-link.so. */
        assert_int_equal(elf_symbols_load_fd(fd, "/opt/app/stripped-link.so", roots, &e), 0);
        assert_int_equal(elf_symbols_source(e), ELF_SYMBOLS_DEBUG_FILE);
        expect_name(e, alpha, "fixture_alpha");
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

/* Where a function starts, from a file's symbol table: the address at which lookups give offset 0. */
static uint64_t symbol_vaddr(const char *path, const char *name) {
        _cleanup_(elf_symbols_freep) ElfSymbols *e = NULL;
        struct stat st;

        assert_int_equal(elf_symbols_load_path(path, NULL, &e), 0);
        assert_int_equal(stat(path, &st), 0);
        for (uint64_t o = 0; o < (uint64_t) st.st_size; o++) {
                const char *got;
                uint64_t vaddr, off;

                if (elf_symbols_offset_to_vaddr(e, o, &vaddr) && elf_symbols_lookup(e, vaddr, &got, &off, NULL) &&
                    off == 0 && streq(got, name))
                        return vaddr;
        }
        fail_msg("no symbol %s in %s", name, path);
        return 0;
}

/* A function's size from the file's symbol table, through libelf directly. */
static uint64_t symbol_size(const char *path, const char *name) {
        GElf_Sym sym;

        assert_true(test_elf_symbol(path, name, &sym));
        assert_true(sym.st_size > 0);
        return sym.st_size;
}

/* A section's place in the file and in memory, through libelf directly. */
static void section_place(const char *path, const char *name, uint64_t *ret_offset, uint64_t *ret_vaddr,
                          uint64_t *ret_size) {
        GElf_Shdr sh = {};

        if (!test_elf_section(path, name, NULL, &sh))
                fail_msg("no section %s in %s", name, path);
        *ret_offset = sh.sh_offset;
        *ret_vaddr = sh.sh_addr;
        *ret_size = sh.sh_size;
}

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

/* Files reached through processes: a process gone before its file was read does not make the
 * file unreadable for the next process mapping it (a container's short-lived command, then a
 * long-lived one of the same image), and an inode number used again by another file (a rebuild
 * to the same path) is another file when its generation says so. */
static void test_symbolizer_files_through_processes(void **state) {
        _cleanup_(symbolizer_freep) Symbolizer *z = NULL;
        char proc[128], p[256], self[PATH_MAX];
        struct stat st;
        Frame f;

        snprintf(proc, sizeof proc, "%s/proc", tmpdir);
        (void) mkdir(proc, 0755);
        assert_int_equal(symbolizer_new(&(SymbolizerOptions) { .kallsyms_path = "", .jit_dir = tmpdir,
                                                                .proc_root = proc }, &z), 0);
        assert_int_equal(stat(fixture, &st), 0);
        uint64_t off = offset_of(alpha) & ~(uint64_t) 0xfff;
        /* The path is the container's, not the host's: only /proc/PID/map_files reaches the file. */
        SymbolizerMapping m = {
                .start = 0x10000000, .end = 0x10100000, .pgoff = off,
                .dev = st.st_dev, .ino = st.st_ino, .ino_gen = 7, .path = "/nowhere/on/this/host/libfixture.so",
        };
        uint64_t a = 0x10000000 + (offset_of(alpha) - off);
        /* map_files of a process: a link to the file, as the kernel's magic links are */
        for (unsigned pid = 101; pid <= 102; pid++) {
                snprintf(p, sizeof p, "%s/%u", proc, pid);
                assert_int_equal(mkdir(p, 0755), 0);
                snprintf(p, sizeof p, "%s/%u/map_files", proc, pid);
                assert_int_equal(mkdir(p, 0755), 0);
        }
        snprintf(p, sizeof p, "%s/101/map_files/%" PRIx64 "-%" PRIx64, proc, m.start, m.end);
        assert_int_equal(symlink(fixture, p), 0);

        symbolizer_begin(z);
        symbolizer_user(z, 100, &m, a + 8, true, &f); /* gone */
        assert_string_equal(f.symbol, "[unknown]");
        symbolizer_user(z, 101, &m, a + 8, true, &f); /* alive */
        assert_string_equal(f.symbol, "fixture_alpha");

        /* The same device and inode number, another generation: another file (here this test's
         * own program, where fixture_local's address is something else). */
        ssize_t l = readlink("/proc/self/exe", self, sizeof self - 1);
        if (l > 0) {
                self[l] = '\0';
                SymbolizerMapping n = m;
                n.ino_gen = 8;
                snprintf(p, sizeof p, "%s/102/map_files/%" PRIx64 "-%" PRIx64, proc, n.start, n.end);
                assert_int_equal(symlink(self, p), 0);
                uint64_t local = 0x10000000 + (offset_of(alpha) - off) - symbol_vaddr(fixture, "fixture_alpha") +
                                 symbol_vaddr(fixture, "fixture_local");
                symbolizer_user(z, 101, &m, local + 2, true, &f);
                assert_string_equal(f.symbol, "fixture_local");
                symbolizer_user(z, 102, &n, local + 2, true, &f);
                assert_string_not_equal(f.symbol, "fixture_local");
        }

        /* By its path (no process to go through): the file there is taken only if its generation
         * is the mapping's, where the filesystem tells it. */
        _cleanup_close_ int fd = open(fixture, O_RDONLY | O_CLOEXEC);
        int gen;
        if (fd >= 0 && ioctl(fd, FS_IOC_GETVERSION, &gen) == 0) {
                SymbolizerMapping byp = m;
                byp.path = fixture;
                byp.ino_gen = (uint32_t) gen;
                symbolizer_user(z, 0, &byp, a + 8, true, &f);
                assert_string_equal(f.symbol, "fixture_alpha");
                byp.ino_gen = (uint32_t) gen + 1;
                symbolizer_user(z, 0, &byp, a + 8, true, &f);
                assert_string_equal(f.symbol, "[unknown]");
        } else
                print_message("no inode generations on this filesystem: not checked by path\n");
}

static void test_symbolizer_user_frames(void **state) {
        _cleanup_(symbolizer_freep) Symbolizer *z = NULL;
        Frame f;
        char path[256], cmd[1024];
        struct stat st;

        assert_int_equal(symbolizer_new(&(SymbolizerOptions) { .kallsyms_path = "", .jit_dir = tmpdir }, &z), 0);
        assert_int_equal(stat(fixture, &st), 0);

        /* A mapping as the sampler would pass it, for a pid that is not ours (so map_files is not used). */
        uint64_t off = offset_of(alpha) & ~(uint64_t) 0xfff;
        SymbolizerMapping m = {
                .start = 0x10000000, .end = 0x10100000, .pgoff = off,
                .dev = st.st_dev, .ino = st.st_ino, .path = fixture,
        };
        uint64_t a = 0x10000000 + (offset_of(alpha) - off);

        symbolizer_begin(z);
        symbolizer_user(z, 0, &m, a + 8, true, &f);
        assert_string_equal(f.symbol, "fixture_alpha");
        assert_string_equal(f.dso, fixture);
        assert_int_equal(f.offset, 8);
        /* with the file's build id, in hex */
        {
                _cleanup_(elf_symbols_freep) ElfSymbols *e = NULL;
                const uint8_t *bid;
                char hex[2 * ELF_BUILD_ID_BYTES_MAX + 1];
                size_t n;

                assert_int_equal(elf_symbols_load_path(fixture, NULL, &e), 0);
                bid = elf_symbols_build_id(e, &n);
                assert_non_null(bid);
                for (size_t i = 0; i < n; i++)
                        sprintf(hex + 2 * i, "%02x", bid[i]);
                assert_non_null(f.build_id);
                assert_string_equal(f.build_id, hex);
        }

        /* A C++ name comes out demangled, as perf prints it. */
        uint64_t g = 0x10000000 + (offset_of(gamma_fn) - off);
        assert_true(g < 0x10100000);
        symbolizer_user(z, 0, &m, g, false, &f);
        assert_string_equal(f.symbol, "fixture::gamma(unsigned long)");
        /* A function template's without its return type, which perf leaves out too: folded, the
         * frame is "fixture::pick<false>", not "fixture::Result fixture::pick<false>". */
        void *pick = dlsym(handle, "_ZN7fixture4pickILb0EEENS_6ResultEPFivE");
        assert_non_null(pick);
        symbolizer_user(z, 0, &m, 0x10000000 + (offset_of(pick) - off) + 1, false, &f);
        assert_string_equal(f.symbol, "fixture::pick<false>(int (*)())");

        /* Rust's, as perf and rustfilt print them: v0, and legacy without its hash. */
        static const struct {
                const char *mangled, *name;
        } rust[] = {
                { "_ZN7fixture4rust6legacy17h0123456789abcdefE.llvm.123", "fixture::rust::legacy" },
                { "_RNvNtCs1234_7fixture4rust6worker", "fixture::rust::worker" },
        };
        for (size_t i = 0; i < ELEMENTSOF(rust); i++) {
                void *fn = dlsym(handle, rust[i].mangled);
                assert_non_null(fn);
                symbolizer_user(z, 0, &m, 0x10000000 + (offset_of(fn) - off) + 1, false, &f);
                assert_string_equal(f.symbol, rust[i].name);
        }

        /* [vdso] frames are named from our own copy of the vDSO. */
        void *vdso = dlopen("linux-vdso.so.1", RTLD_NOW | RTLD_NOLOAD);
        void *cg = vdso ? dlsym(vdso, "__vdso_clock_gettime") : NULL;
        if (cg) {
                SymbolizerMapping vm = self_vdso_mapping();
                symbolizer_user(z, 0, &vm, (uintptr_t) cg + 2, false, &f);
                assert_string_equal(f.dso, "[vdso]");
                assert_true(streq(f.symbol, "__vdso_clock_gettime") || streq(f.symbol, "clock_gettime"));
                /* A vDSO of another size (a 32-bit process's) is not ours to name, and one of no
                 * process (pid 0) cannot be read from the process. */
                vm.end += 4096;
                symbolizer_user(z, 0, &vm, (uintptr_t) cg + 2, false, &f);
                assert_string_equal(f.symbol, "[unknown]");
                dlclose(vdso);
        }

        /* A wrong inode (the file was replaced): no symbols, DSO still named. */
        SymbolizerMapping wrong = m;
        wrong.ino = st.st_ino + 1;
        symbolizer_user(z, 0, &wrong, a, false, &f);
        assert_string_equal(f.symbol, "[unknown]");
        assert_string_equal(f.dso, fixture);
        assert_null(f.build_id);

        /* No mapping, no JIT map: unknown everything. */
        symbolizer_user(z, 0, NULL, 0x1234, false, &f);
        assert_string_equal(f.symbol, "[unknown]");
        assert_string_equal(f.dso, "[unknown]");

        /* A JIT map for pid 4242 in our jit_dir. */
        snprintf(path, sizeof(path), "%s/perf-4242.map", tmpdir);
        snprintf(cmd, sizeof(cmd), "%x 100 jitted_function\n", 0x20000000);
        assert_int_equal(write_file_atomic(path, cmd, strlen(cmd), 0644), 0);
        symbolizer_next_epoch(z);
        symbolizer_user(z, 4242, NULL, 0x20000010, false, &f);
        assert_string_equal(f.symbol, "jitted_function");
        assert_string_equal(f.dso, "/tmp/perf-4242.map");
        assert_null(f.build_id);

        /* A kernel address with no kallsyms loaded. */
        symbolizer_kernel(z, 0xffffffff81000000, false, &f);
        assert_string_equal(f.symbol, "[unknown]");
        assert_string_equal(f.dso, "[kernel.kallsyms]");
        assert_true(f.kernel);
}

/* A user mapping of the fixture as the sampler would pass it, and where fn runs in it. */
static SymbolizerMapping fixture_mapping(const void *fn, uint64_t *ret_addr) {
        struct stat st;
        uint64_t off = offset_of(fn) & ~(uint64_t) 0xfff;

        assert_int_equal(stat(fixture, &st), 0);
        *ret_addr = 0x10000000 + (offset_of(fn) - off);
        return (SymbolizerMapping) {
                .start = 0x10000000, .end = 0x10100000, .pgoff = off,
                .dev = st.st_dev, .ino = st.st_ino, .path = fixture,
        };
}

static void test_symbolizer_function_frames(void **state) {
        _cleanup_(symbolizer_freep) Symbolizer *z = NULL, *exact = NULL;
        uint64_t a, g;
        SymbolizerMapping m = fixture_mapping(alpha, &a);
        char path[256], line[64];
        Frame f;

        assert_int_equal(symbolizer_new(&(SymbolizerOptions) { .kallsyms_path = "", .jit_dir = tmpdir,
                                                                .function_frames = true }, &z), 0);
        assert_int_equal(symbolizer_new(&(SymbolizerOptions) { .kallsyms_path = "", .jit_dir = tmpdir }, &exact), 0);
        symbolizer_begin(z);
        symbolizer_begin(exact);

        /* Anywhere in fixture_alpha, sampled or returned to: one frame, its first byte in the file. */
        for (unsigned is_return = 0; is_return < 2; is_return++)
                for (uint64_t d = 0; d < 12; d += 3) {
                        if (is_return && d == 0)
                                continue; /* a return address at the first byte belongs to the caller */
                        symbolizer_user(z, 0, &m, a + d, is_return, &f);
                        assert_string_equal(f.symbol, "fixture_alpha");
                        assert_string_equal(f.dso, fixture);
                        assert_int_equal(f.addr, offset_of(alpha));
                        assert_int_equal(f.offset, 0);
                        assert_false(f.kernel);

                        /* Exact frames as ever: the instruction's own place in the file. */
                        symbolizer_user(exact, 0, &m, a + d, is_return, &f);
                        assert_string_equal(f.symbol, "fixture_alpha");
                        assert_int_equal(f.addr, offset_of(alpha) + d);
                        assert_int_equal(f.offset, d);
                }

        /* Another function of the same mapping, and a C++ one still demangled. */
        g = a - offset_of(alpha) + offset_of(gamma_fn);
        symbolizer_user(z, 0, &m, g + 5, true, &f);
        assert_string_equal(f.symbol, "fixture::gamma(unsigned long)");
        assert_int_equal(f.addr, offset_of(gamma_fn));
        assert_int_equal(f.offset, 0);

        /* The same file mapped elsewhere (another process, another load address): the same frame. */
        SymbolizerMapping moved = m;
        moved.start += 0x7f0000000000;
        moved.end += 0x7f0000000000;
        symbolizer_user(z, 0, &moved, a + 0x7f0000000000 + 7, false, &f);
        assert_string_equal(f.symbol, "fixture_alpha");
        assert_int_equal(f.addr, offset_of(alpha));
        assert_int_equal(f.offset, 0);

        /* JIT code keeps virtual addresses: the entry's start. */
        snprintf(path, sizeof(path), "%s/perf-4343.map", tmpdir);
        snprintf(line, sizeof(line), "%x 100 jitted_function\n", 0x20000000);
        assert_int_equal(write_file_atomic(path, line, strlen(line), 0644), 0);
        symbolizer_user(z, 4343, NULL, 0x20000011, true, &f);
        assert_string_equal(f.symbol, "jitted_function");
        assert_int_equal(f.addr, 0x20000000);
        assert_int_equal(f.offset, 0);
        symbolizer_user(exact, 4343, NULL, 0x20000011, true, &f);
        assert_int_equal(f.addr, 0x20000011);
        assert_int_equal(f.offset, 0x11);

        /* [vdso] frames: the function's start as an offset in the image. */
        void *vdso = dlopen("linux-vdso.so.1", RTLD_NOW | RTLD_NOLOAD);
        void *cg = vdso ? dlsym(vdso, "__vdso_clock_gettime") : NULL;
        if (cg) {
                SymbolizerMapping vm = self_vdso_mapping();
                symbolizer_user(z, 0, &vm, (uintptr_t) cg + 3, true, &f);
                assert_string_equal(f.dso, "[vdso]");
                assert_int_equal(f.addr, (uintptr_t) cg - vm.start);
                assert_int_equal(f.offset, 0);
                dlclose(vdso);
        }

        /* Unknown frames keep their exact address. */
        symbolizer_user(z, 0, NULL, 0x1234, true, &f);
        assert_string_equal(f.symbol, "[unknown]");
        assert_int_equal(f.addr, 0x1234);
        assert_int_equal(f.offset, 0);
}

static bool frame_equal(const Frame *a, const Frame *b) {
        return streq(a->symbol, b->symbol) && streq(a->dso, b->dso) && a->addr == b->addr && a->offset == b->offset &&
               a->kernel == b->kernel;
}

/* A leaf's range (symbolizer_user_leaf()) is the addresses that make its very frame: with frames
 * that name functions, every byte of the function as the symbol table sizes it, and no byte on
 * either side; within the mapping; the address alone for exact frames; none for frames not named
 * from a file. */
static void test_symbolizer_leaf_range(void **state) {
        _cleanup_(symbolizer_freep) Symbolizer *z = NULL, *exact = NULL;
        uint64_t a, size = symbol_size(fixture, "fixture_alpha");
        SymbolizerMapping m = fixture_mapping(alpha, &a);
        SymbolizerRange r;
        char path[256], line[64];
        Frame f, g;

        assert_int_equal(symbolizer_new(&(SymbolizerOptions) { .kallsyms_path = "", .jit_dir = tmpdir,
                                                                .function_frames = true }, &z), 0);
        assert_int_equal(symbolizer_new(&(SymbolizerOptions) { .kallsyms_path = "", .jit_dir = tmpdir }, &exact), 0);
        symbolizer_begin(z);
        symbolizer_begin(exact);

        assert_true(symbolizer_user_leaf(z, 0, &m, a + 5, &f, &r));
        assert_string_equal(f.symbol, "fixture_alpha");
        assert_int_equal(r.start, a);
        assert_int_equal(r.end, a + size);
        for (uint64_t x = r.start; x < r.end; x++) {
                symbolizer_user_leaf(z, 0, &m, x, &g, NULL);
                assert_true(frame_equal(&f, &g));
        }
        symbolizer_user_leaf(z, 0, &m, r.start - 1, &g, NULL);
        assert_false(frame_equal(&f, &g));
        symbolizer_user_leaf(z, 0, &m, r.end, &g, NULL);
        assert_false(frame_equal(&f, &g));
        /* the range agrees with symbolizer_user() on the same leaf */
        symbolizer_user(z, 0, &m, a + 5, false, &g);
        assert_true(frame_equal(&f, &g));

        /* A function followed by padding that no symbol covers: its size ends the range. */
        uint64_t gm = a - offset_of(alpha) + offset_of(gamma_fn), gsize = symbol_size(fixture, "_ZN7fixture5gammaEm");
        assert_true(symbolizer_user_leaf(z, 0, &m, gm + 2, &f, &r));
        assert_string_equal(f.symbol, "fixture::gamma(unsigned long)");
        assert_int_equal(r.start, gm);
        assert_int_equal(r.end, gm + gsize);
        symbolizer_user_leaf(z, 0, &m, r.end, &g, NULL);
        assert_string_equal(g.symbol, "[unknown]");

        /* The mapping starts inside the function (at its third byte), or ends inside it: the range
         * holds only what is this mapping's. */
        SymbolizerMapping inside = m;
        inside.start = 0x20000000;
        inside.end = 0x20100000;
        inside.pgoff = offset_of(alpha) + 2;
        assert_true(symbolizer_user_leaf(z, 0, &inside, inside.start + 1, &f, &r));
        assert_string_equal(f.symbol, "fixture_alpha");
        assert_int_equal(r.start, inside.start);
        assert_int_equal(r.end, inside.start + size - 2);

        SymbolizerMapping cut = m;
        cut.end = a + 3;
        assert_true(symbolizer_user_leaf(z, 0, &cut, a + 1, &f, &r));
        assert_string_equal(f.symbol, "fixture_alpha");
        assert_int_equal(r.start, a);
        assert_int_equal(r.end, a + 3);

        /* Exact frames: the address alone. */
        assert_true(symbolizer_user_leaf(exact, 0, &m, a + 5, &f, &r));
        assert_int_equal(r.start, a + 5);
        assert_int_equal(r.end, a + 6);

        /* A JIT map's frame and an unknown one: no range. */
        snprintf(path, sizeof(path), "%s/perf-4444.map", tmpdir);
        snprintf(line, sizeof(line), "%x 100 jitted_function\n", 0x20000000);
        assert_int_equal(write_file_atomic(path, line, strlen(line), 0644), 0);
        symbolizer_next_epoch(z);
        symbolizer_begin(z);
        assert_false(symbolizer_user_leaf(z, 4444, NULL, 0x20000011, &f, &r));
        assert_string_equal(f.symbol, "jitted_function");
        assert_int_equal(r.end - r.start, 0);
        assert_false(symbolizer_user_leaf(z, 0, NULL, 0x1234, &f, &r));
        assert_int_equal(r.end - r.start, 0);
}

static void test_symbolizer_function_frames_stripped(void **state) {
        _cleanup_(symbolizer_freep) Symbolizer *z = NULL, *exact = NULL;
        uint64_t local, hdr_offset, hdr_vaddr, hdr_size;
        struct stat st;
        Frame f;

        if (!fixture_stripped)
                skip();
        assert_int_equal(symbolizer_new(&(SymbolizerOptions) { .kallsyms_path = "", .jit_dir = tmpdir,
                                                                .function_frames = true }, &z), 0);
        assert_int_equal(symbolizer_new(&(SymbolizerOptions) { .kallsyms_path = "", .jit_dir = tmpdir }, &exact), 0);
        symbolizer_begin(z);
        symbolizer_begin(exact);

        /* The static fixture_local's place in the file, from the unstripped twin: code is one segment,
         * so it is as far from fixture_alpha in the file as in memory. */
        local = offset_of(alpha) - symbol_vaddr(fixture, "fixture_alpha") + symbol_vaddr(fixture, "fixture_local");
        section_place(fixture_stripped, ".eh_frame_hdr", &hdr_offset, &hdr_vaddr, &hdr_size);
        assert_int_equal(stat(fixture_stripped, &st), 0);
        SymbolizerMapping m = {
                .start = 0x10000000, .end = 0x10100000, .pgoff = 0,
                .dev = st.st_dev, .ino = st.st_ino, .path = fixture_stripped,
        };

        /* No name, but one frame for the whole function, at its start. */
        for (unsigned is_return = 0; is_return < 2; is_return++) {
                symbolizer_user(z, 0, &m, m.start + local + 6, is_return, &f);
                assert_string_equal(f.symbol, "[unknown]");
                assert_string_equal(f.dso, fixture_stripped);
                assert_int_equal(f.addr, local);
                assert_int_equal(f.offset, 0);

                symbolizer_user(exact, 0, &m, m.start + local + 6, is_return, &f);
                assert_string_equal(f.symbol, "[unknown]");
                assert_int_equal(f.addr, local + 6);
                assert_int_equal(f.offset, 0);
        }

        /* As a leaf: every byte of the function makes that frame, and the range says so. */
        SymbolizerRange r;
        Frame g;
        assert_true(symbolizer_user_leaf(z, 0, &m, m.start + local + 6, &f, &r));
        assert_int_equal(r.start, m.start + local);
        assert_true(r.end - r.start >= symbol_size(fixture, "fixture_local"));
        for (uint64_t x = r.start; x < r.end; x++) {
                symbolizer_user_leaf(z, 0, &m, x, &g, NULL);
                assert_true(frame_equal(&f, &g));
        }
        symbolizer_user_leaf(z, 0, &m, r.end, &g, NULL);
        assert_false(frame_equal(&f, &g));

#ifdef __x86_64__
        /* A function known by its unwind information alone, then one .dynsym names that has none:
         * the first one's range stops where the named one starts. */
        uint64_t cfi_only = local - symbol_vaddr(fixture, "fixture_local") + symbol_vaddr(fixture, "fixture_cfi_only");
        uint64_t no_cfi = local - symbol_vaddr(fixture, "fixture_local") + symbol_vaddr(fixture, "fixture_no_cfi");
        assert_true(symbolizer_user_leaf(z, 0, &m, m.start + cfi_only + 1, &f, &r));
        assert_string_equal(f.symbol, "[unknown]");
        assert_int_equal(r.start, m.start + cfi_only);
        assert_true(r.end <= m.start + no_cfi);
        for (uint64_t x = r.start; x < r.end; x++) {
                symbolizer_user_leaf(z, 0, &m, x, &g, NULL);
                assert_true(frame_equal(&f, &g));
        }
        symbolizer_user_leaf(z, 0, &m, m.start + no_cfi, &g, NULL);
        assert_string_equal(g.symbol, "fixture_no_cfi");
#endif

        /* The file's code, though unnamed, is final: a JIT map of the process (perf's convention is
         * for anonymous memory) does not rename it, and it is not looked up (no stat, no /proc read). */
        char path[256], line[128];
        snprintf(path, sizeof(path), "%s/perf-4343.map", tmpdir);
        snprintf(line, sizeof(line), "%" PRIx64 " 100 jit_over_file\n%x 100 jit_anon\n", m.start + local, 0x30000000);
        assert_int_equal(write_file_atomic(path, line, strlen(line), 0644), 0);
        symbolizer_next_epoch(z);
        assert_true(symbolizer_user(z, 4343, &m, m.start + local + 6, false, &f));
        assert_string_equal(f.symbol, "[unknown]");
        assert_string_equal(f.dso, fixture_stripped);
        assert_int_equal(f.addr, local);
        /* Code no file backs is the JIT map's, and may change with it. */
        assert_false(symbolizer_user(z, 4343, NULL, 0x30000010, false, &f));
        assert_string_equal(f.symbol, "jit_anon");
        assert_int_equal(unlink(path), 0);

        /* Exported functions are still named from .dynsym. */
        assert_true(symbolizer_user(z, 0, &m, m.start + offset_of(alpha) + 4, true, &f));
        assert_string_equal(f.symbol, "fixture_alpha");
        assert_int_equal(f.addr, offset_of(alpha));
        assert_int_equal(f.offset, 0);

        /* Read-only data after the code is in no function: the exact address. */
        symbolizer_user(z, 0, &m, m.start + hdr_offset + 4, false, &f);
        assert_string_equal(f.symbol, "[unknown]");
        assert_int_equal(f.addr, hdr_offset + 4);
        assert_int_equal(f.offset, 0);
}

static void test_symbolizer_cache_limit(void **state) {
        _cleanup_(elf_symbols_freep) ElfSymbols *e = NULL;
        SymbolizerStats st;
        struct stat sb;
        Frame f;

        assert_int_equal(elf_symbols_load_path(fixture, NULL, &e), 0);
        assert_int_equal(stat(fixture, &sb), 0);
        uint64_t off = offset_of(beta) & ~(uint64_t) 0xfff;
        SymbolizerMapping m = { .start = 0x10000000, .end = 0x10100000, .pgoff = off,
                                .dev = sb.st_dev, .ino = sb.st_ino, .path = fixture };
        uint64_t a = 0x10000000 + (offset_of(beta) - off);

        /* Room for the table many times over: loaded once, kept. */
        {
                _cleanup_(symbolizer_freep) Symbolizer *z = NULL;
                assert_int_equal(symbolizer_new(&(SymbolizerOptions) { .kallsyms_path = "",
                                                                       .cache_bytes_max = 64 * elf_symbols_bytes(e) },
                                                &z), 0);
                for (unsigned i = 0; i < 10; i++) {
                        symbolizer_begin(z);
                        symbolizer_user(z, 0, &m, a, false, &f);
                        assert_string_equal(f.symbol, "fixture_beta");
                }
                symbolizer_get_stats(z, &st);
                assert_int_equal(st.files_loaded, 1);
                assert_int_equal(st.cache_flushes, 0);
        }

        /* A limit below one table: the file is not kept (DSO only, counted); the cache, over its
         * limit with the empty table that stands for it, is dropped once, and then not again
         * within the flush interval: the empty table loaded after the drop serves the rest. */
        {
                _cleanup_(symbolizer_freep) Symbolizer *z = NULL;
                assert_int_equal(symbolizer_new(&(SymbolizerOptions) { .kallsyms_path = "", .cache_bytes_max = 1 }, &z), 0);
                for (unsigned i = 0; i < 10; i++) {
                        symbolizer_begin(z);
                        symbolizer_user(z, 0, &m, a, false, &f);
                        assert_string_equal(f.symbol, "[unknown]");
                        assert_string_equal(f.dso, fixture);
                }
                symbolizer_get_stats(z, &st);
                assert_int_equal(st.files_too_big, 2);
                assert_int_equal(st.cache_flushes, 1);
                assert_int_equal(st.loads_deferred, 0);
        }
}

/* Writes perf-PID.map in tmpdir: 128 functions "pidPID_fN" at 0x40000000 + N * 0x100. */
static void write_jit_map(uint32_t pid) {
        char path[256], line[64];
        _cleanup_free_ char *text = NULL;
        size_t n = 0;

        text = malloc(128 * sizeof(line));
        assert_non_null(text);
        for (unsigned i = 0; i < 128; i++)
                n += (size_t) snprintf(text + n, sizeof(line), "%x 100 pid%u_f%u\n", 0x40000000 + i * 0x100, pid, i);
        snprintf(path, sizeof(path), "%s/perf-%u.map", tmpdir, pid);
        assert_int_equal(write_file_atomic(path, text, n, 0644), 0);
}

static void remove_jit_map(uint32_t pid) {
        char path[256];

        snprintf(path, sizeof(path), "%s/perf-%u.map", tmpdir, pid);
        (void) unlink(path);
}

/* pid's function 1, or "[unknown]". */
static const char *jit_name(Symbolizer *z, uint32_t pid, Frame *f) {
        symbolizer_begin(z);
        (void) symbolizer_user(z, pid, NULL, 0x40000100 + 8, false, f);
        return f->symbol;
}

/*
 * Tables that do not fit together (here the JIT maps of four processes, in a cache that holds
 * three) must not be dropped and read again before every sample that alternates between them:
 * the cache is dropped at most once per flush interval, and until then what is loaded stays
 * and what is not (another process's map, a program's symbols) is put off.
 */
static void test_symbolizer_cache_throttle(void **state) {
        _cleanup_(jit_map_freep) JitMap *one = NULL;
        _cleanup_(elf_symbols_freep) ElfSymbols *e = NULL;
        char path[256], want[32];
        SymbolizerStats st;
        uint64_t a;
        SymbolizerMapping m = fixture_mapping(beta, &a);
        Frame f;

        assert_int_equal(elf_symbols_load_path(fixture, NULL, &e), 0);
        for (uint32_t pid = 9001; pid <= 9004; pid++)
                write_jit_map(pid);
        snprintf(path, sizeof(path), "%s/perf-9001.map", tmpdir);
        assert_int_equal(jit_map_load(path, &one), 0);
        uint64_t max = 3 * jit_map_bytes(one) - 1; /* three maps exceed it, two do not */
        assert_true(elf_symbols_bytes(e) <= max / 4); /* not too big to keep */

        {
                _cleanup_(symbolizer_freep) Symbolizer *z = NULL;
                assert_int_equal(symbolizer_new(&(SymbolizerOptions) { .kallsyms_path = "", .jit_dir = tmpdir,
                                                                       .cache_bytes_max = max }, &z), 0);
                for (uint32_t pid = 9001; pid <= 9003; pid++) {
                        snprintf(want, sizeof(want), "pid%u_f1", pid);
                        assert_string_equal(jit_name(z, pid, &f), want);
                }
                /* Full: the first drop comes at once, and the maps are read again as needed. */
                assert_string_equal(jit_name(z, 9001, &f), "pid9001_f1");
                assert_string_equal(jit_name(z, 9002, &f), "pid9002_f1");
                assert_string_equal(jit_name(z, 9003, &f), "pid9003_f1");
                symbolizer_get_stats(z, &st);
                assert_int_equal(st.cache_flushes, 1);
                assert_int_equal(st.jit_maps_loaded, 6);
                /* Full again, a moment after the drop: what is loaded stays and is used, a new
                 * map waits, however often it is asked for. */
                for (unsigned i = 0; i < 20; i++) {
                        snprintf(want, sizeof(want), "pid%u_f1", 9001 + i % 3);
                        assert_string_equal(jit_name(z, 9001 + i % 3, &f), want);
                        assert_string_equal(jit_name(z, 9004, &f), "[unknown]");
                }
                /* A program's symbols wait too: its frame unnamed, in its file, not final. */
                symbolizer_begin(z);
                assert_false(symbolizer_user(z, 0, &m, a, false, &f));
                assert_string_equal(f.symbol, "[unknown]");
                assert_string_equal(f.dso, fixture);
                symbolizer_get_stats(z, &st);
                assert_int_equal(st.cache_flushes, 1);
                assert_int_equal(st.jit_maps_loaded, 6);
                assert_int_equal(st.files_loaded, 0);
                assert_int_equal(st.loads_deferred, 1);
        }

        /* Once the interval has passed, the next sample drops the cache, and the map waiting is read. */
        {
                _cleanup_(symbolizer_freep) Symbolizer *z = NULL;
                assert_int_equal(symbolizer_new(&(SymbolizerOptions) { .kallsyms_path = "", .jit_dir = tmpdir,
                                                                       .cache_bytes_max = max,
                                                                       .flush_interval_usec = 1000 }, &z), 0);
                for (uint32_t pid = 9001; pid <= 9003; pid++)
                        (void) jit_name(z, pid, &f);
                (void) jit_name(z, 9001, &f); /* the first drop */
                (void) jit_name(z, 9002, &f);
                (void) jit_name(z, 9003, &f);
                usleep(2000);
                assert_string_equal(jit_name(z, 9004, &f), "pid9004_f1");
                symbolizer_begin(z);
                assert_true(symbolizer_user(z, 0, &m, a, false, &f));
                assert_string_equal(f.symbol, "fixture_beta");
                symbolizer_get_stats(z, &st);
                assert_int_equal(st.cache_flushes, 2);
        }
        for (uint32_t pid = 9001; pid <= 9004; pid++)
                remove_jit_map(pid);
}

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

static int setup(void **state) {
        fixture = getenv("TPROF_ELF_FIXTURE");
        if (!fixture)
                return -1;
        fixture_stripped = getenv("TPROF_ELF_FIXTURE_STRIPPED");
        handle = dlopen(fixture, RTLD_NOW);
        if (!handle)
                return -1;
        alpha = dlsym(handle, "fixture_alpha");
        beta = dlsym(handle, "fixture_beta");
        gamma_fn = dlsym(handle, "_ZN7fixture5gammaEm");
        if (!alpha || !beta || !gamma_fn || !mkdtemp(tmpdir))
                return -1;
        return 0;
}

static int teardown(void **state) {
        char cmd[256];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
        (void) run(cmd);
        return 0;
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_symtab),
                cmocka_unit_test(test_zero_size_marker),
                cmocka_unit_test(test_untyped_labels),
                cmocka_unit_test(test_global_label_after_unsized_function),
                cmocka_unit_test(test_plt_entries),
                cmocka_unit_test(test_plt_unnamed_stubs),
                cmocka_unit_test(test_symbolizer_plt_frame),
                cmocka_unit_test(test_stripped_dynsym),
                cmocka_unit_test(test_symtab_of_labels_only),
                cmocka_unit_test(test_minidebuginfo),
                cmocka_unit_test(test_debug_file_by_build_id),
                cmocka_unit_test(test_debug_file_by_debuglink),
                cmocka_unit_test(test_not_elf),
                cmocka_unit_test(test_go_tables_in_pies),
                cmocka_unit_test(test_go_table_lookalikes),
                cmocka_unit_test(test_go_table_relocations_by_segment),
                cmocka_unit_test(test_eh_frame_hdr_stripped_library),
                cmocka_unit_test(test_eh_frame_hdr_stripped_executable),
                cmocka_unit_test(test_eh_frame_hdr_from_program_header),
                cmocka_unit_test(test_eh_frame_hdr_bounds),
                cmocka_unit_test(test_eh_frame_hdr_parse),
                cmocka_unit_test(test_eh_frame_hdr_garbage),
                cmocka_unit_test(test_truncated_and_corrupted),
                cmocka_unit_test(test_symbol_names_bounded),
                cmocka_unit_test(test_symbolizer_user_frames),
                cmocka_unit_test(test_symbolizer_files_through_processes),
                cmocka_unit_test(test_symbolizer_function_frames),
                cmocka_unit_test(test_symbolizer_function_frames_stripped),
                cmocka_unit_test(test_symbolizer_leaf_range),
                cmocka_unit_test(test_symbolizer_cache_limit),
                cmocka_unit_test(test_symbolizer_cache_throttle),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
