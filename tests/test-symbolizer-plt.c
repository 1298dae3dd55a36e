/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * AArch64 PLT entries named NAME@plt (src/symbolizer/elf-plt.c) in files written here, so that any
 * host tests them: an AArch64 shared library's .plt as ld.bfd 2.40 (Debian 12's
 * binutils-aarch64-linux-gnu) lays it out, a 32-byte header then 16-byte entries, and the 24-byte
 * entries of binutils' BTI and PAC PLTs (bfd/elfnn-aarch64.c, elfNN_aarch64_small_plt_bti_entry
 * and _pac_entry). The instructions are those objdump shows in such files.
 */
#include "tests.h"
#include "elf-test-util.h"

#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "basic/fileio.h"
#include "symbolizer/symbolizer-elf.h"

#define A64_STP_X16_X30 0xa9bf7bf0U /* stp x16, x30, [sp, #-16]! */
#define A64_BR_X17 0xd61f0220U
#define A64_NOP 0xd503201fU
#define A64_BTI_C 0xd503245fU
#define A64_AUTIA1716 0xd503219fU

#define PLT_VADDR 0x740U
#define GOT_VADDR 0x1ffe8U /* .got.plt: its first three slots are the resolver's */

static char tmpdir[PATH_MAX];

/* adrp x16, the page of target, at pc */
static uint32_t a64_adrp_x16(uint64_t pc, uint64_t target) {
        uint64_t imm = ((target >> 12) - (pc >> 12)) & 0x1fffffU;
        return 0x90000010U | (uint32_t) (imm & 3) << 29 | (uint32_t) (imm >> 2) << 5;
}

/* ldr x17, [x16, #the slot's offset in its page] */
static uint32_t a64_ldr_x17(uint64_t slot) {
        return 0xf9400211U | (uint32_t) ((slot & 0xfff) / 8) << 10;
}

/* add x16, x16, #the slot's offset in its page */
static uint32_t a64_add_x16(uint64_t slot) {
        return 0x91000210U | (uint32_t) (slot & 0xfff) << 10;
}

typedef enum PltKind {
        PLT_PLAIN, /* ld.bfd's default: 16-byte entries */
        PLT_BTI,   /* -z force-bti in an executable: bti c first, 24 bytes */
        PLT_PAC,   /* -z pac-plt: autia1716 before the br, 24 bytes */
} PltKind;

/* Writes n words of .plt for the entries jumping through GOT slots 3.. (one per name), returns
 * the number of words; the entries start at *ret_starts[i] (byte offsets in .plt). */
static size_t plt_words(PltKind kind, uint32_t *w, size_t n, size_t *ret_starts) {
        uint64_t resolver = GOT_VADDR + 16, pc;
        size_t k = 0;

        /* the header: 32 bytes, a bti c first in a BTI PLT */
        if (kind == PLT_BTI)
                w[k++] = A64_BTI_C;
        w[k++] = A64_STP_X16_X30;
        pc = PLT_VADDR + 4 * k;
        w[k++] = a64_adrp_x16(pc, resolver);
        w[k++] = a64_ldr_x17(resolver);
        w[k++] = a64_add_x16(resolver);
        w[k++] = A64_BR_X17;
        while (k < 8)
                w[k++] = A64_NOP;
        for (size_t i = 0; i < n; i++) {
                uint64_t slot = GOT_VADDR + 8 * (3 + i);
                size_t start = k;

                ret_starts[i] = 4 * k;
                if (kind == PLT_BTI)
                        w[k++] = A64_BTI_C;
                w[k] = a64_adrp_x16(PLT_VADDR + 4 * k, slot);
                k++;
                w[k++] = a64_ldr_x17(slot);
                w[k++] = a64_add_x16(slot);
                if (kind == PLT_PAC)
                        w[k++] = A64_AUTIA1716;
                w[k++] = A64_BR_X17;
                while (kind != PLT_PLAIN && k - start < 6)
                        w[k++] = A64_NOP;
        }
        return k;
}

/* An AArch64 shared object with .dynsym, .rela.plt (R_AARCH64_JUMP_SLOT) and .plt, no symbol
 * table: its PLT entries are all that can be named. */
static void write_a64_plt(const char *path, PltKind kind, size_t *ret_starts, size_t *ret_plt_bytes) {
        static const char shstrtab[] = "\0.dynstr\0.dynsym\0.rela.plt\0.plt\0.shstrtab";
        static const char dynstr[] = "\0clock_gettime\0_ZN7fixture5gammaEm\0abort";
        Elf64_Sym syms[] = {
                {},
                { .st_name = 1, .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC) },
                { .st_name = 15, .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC) },
                { .st_name = 35, .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC) },
        };
        Elf64_Rela rela[3];
        uint32_t words[8 + 3 * 6];
        _cleanup_close_ int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        Elf64_Shdr *sh;
        Elf64_Ehdr *eh;
        size_t n_words;
        Elf *elf;

        assert_true(fd >= 0);
        for (size_t i = 0; i < 3; i++)
                rela[i] = (Elf64_Rela) { .r_offset = GOT_VADDR + 8 * (3 + i),
                                         .r_info = ELF64_R_INFO(i + 1, R_AARCH64_JUMP_SLOT) };
        n_words = plt_words(kind, words, 3, ret_starts);
        *ret_plt_bytes = 4 * n_words;

        elf = test_elf_new_dyn(fd, EM_AARCH64, &eh);

        sh = test_elf_new_section(elf, 1, SHT_STRTAB, (void *) dynstr, sizeof(dynstr), ELF_T_BYTE, 1); /* 1 */
        sh->sh_flags = SHF_ALLOC;
        sh = test_elf_new_section(elf, 9, SHT_DYNSYM, syms, sizeof(syms), ELF_T_SYM, 8); /* 2 */
        sh->sh_flags = SHF_ALLOC;
        sh->sh_link = 1;
        sh->sh_info = 1;
        sh->sh_entsize = sizeof(Elf64_Sym);
        sh = test_elf_new_section(elf, 17, SHT_RELA, rela, sizeof(rela), ELF_T_RELA, 8); /* 3 */
        sh->sh_flags = SHF_ALLOC | SHF_INFO_LINK;
        sh->sh_link = 2;
        sh->sh_info = 4;
        sh->sh_entsize = sizeof(Elf64_Rela);
        /* ld.bfd's .plt says no entry size (objdump -h: "AX", ES 00) */
        sh = test_elf_new_section(elf, 27, SHT_PROGBITS, words, *ret_plt_bytes, ELF_T_BYTE, 16); /* 4 */
        sh->sh_flags = SHF_ALLOC | SHF_EXECINSTR;
        sh->sh_addr = PLT_VADDR;
        (void) test_elf_new_section(elf, 32, SHT_STRTAB, (void *) shstrtab, sizeof(shstrtab), ELF_T_BYTE, 1); /* 5 */
        eh->e_shstrndx = 5;
        assert_true(elf_update(elf, ELF_C_WRITE) > 0);
        elf_end(elf);
}

static void check_a64_plt(PltKind kind, uint64_t entry_bytes) {
        static const char *const names[] = { "clock_gettime@plt", "_ZN7fixture5gammaEm@plt", "abort@plt" };
        _cleanup_(elf_symbols_freep) ElfSymbols *e = NULL;
        char path[PATH_MAX + 32];
        size_t starts[3], plt_bytes;
        const char *got;
        uint64_t off, extent;

        snprintf(path, sizeof(path), "%s/a64-plt-%d.so", tmpdir, (int) kind);
        write_a64_plt(path, kind, starts, &plt_bytes);
        assert_int_equal(elf_symbols_load_path(path, NULL, &e), 0);

        /* the header, which jumps through the resolver's slot: no name */
        for (uint64_t a = PLT_VADDR; a < PLT_VADDR + 32; a++)
                assert_false(elf_symbols_lookup(e, a, &got, &off, NULL));
        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                uint64_t start = PLT_VADDR + starts[i];

                assert_int_equal(i + 1 < ELEMENTSOF(names) ? starts[i + 1] - starts[i] : plt_bytes - starts[i],
                                 entry_bytes);
                for (uint64_t a = start; a < start + entry_bytes; a++) {
                        assert_true(elf_symbols_lookup(e, a, &got, &off, &extent));
                        assert_string_equal(got, names[i]);
                        assert_int_equal(off, a - start);
                        assert_int_equal(extent, entry_bytes);
                }
        }
        assert_false(elf_symbols_lookup(e, PLT_VADDR + plt_bytes, &got, &off, NULL));
}

static void test_a64_plt(void **state) {
        check_a64_plt(PLT_PLAIN, 16);
}

static void test_a64_plt_bti(void **state) {
        check_a64_plt(PLT_BTI, 24);
}

static void test_a64_plt_pac(void **state) {
        check_a64_plt(PLT_PAC, 24);
}

static int setup(void **state) {
        snprintf(tmpdir, sizeof(tmpdir), "/tmp/tprof-test-plt-XXXXXX");
        return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state) {
        char cmd[PATH_MAX + 16];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
        return system(cmd) == 0 ? 0 : -1;
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_a64_plt),
                cmocka_unit_test(test_a64_plt_bti),
                cmocka_unit_test(test_a64_plt_pac),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
