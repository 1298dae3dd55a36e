/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The unwind tables of single files, and walks over synthetic stacks (test-sampler-unwind.c walks
 * the fixture's own snapshots): what the tables count of what libdw reads and keeps (a search
 * table dropped, each FDE parsed), .eh_frame found without section headers, CFI that libdw must
 * not be given, i386 rules, a 32-bit process's frame pointers, and the time a lookup in libc's PLT
 * takes (printed, not asserted).
 */
#include "tests.h"
#include "elf-test-util.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "basic/fileio.h"
#include "basic/macro.h"
#include "sampler/proc-maps.h"
#include "sampler/sampler-unwind-cfi.h"
#include "sampler/sampler-unwind.h"

static char tmpdir[] = "/tmp/tprof-unwind-cfi.XXXXXX";

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

/* The memory the process has resident, from /proc/self/statm. */
static uint64_t self_resident_bytes(void) {
        unsigned long long pages = 0, resident = 0;
        FILE *f = fopen("/proc/self/statm", "re");

        assert_non_null(f);
        assert_int_equal(fscanf(f, "%llu %llu", &pages, &resident), 2);
        fclose(f);
        return (uint64_t) resident * (uint64_t) sysconf(_SC_PAGESIZE);
}

/*
 * A file without section headers (removed, as sstrip does, or broken) has its .eh_frame found by
 * its PT_GNU_EH_FRAME segment. libdw (elfutils 0.188, getcfi_gnu_eh_frame()) reads such a file
 * whole to learn its size, and takes .eh_frame as everything up to the end of the file: a file of
 * 128 MiB that any process maps cost as much memory, held with the table and counted nowhere.
 * Its two sections, up to .eh_frame's end, are what is read and counted; its rules are the same.
 */
static void test_unwind_eh_frame_by_program_header(void **state) {
        const char *lib = getenv("TPROF_UNWIND_FIXTURE_HDRLAST_LIB");
        _cleanup_(unwind_cfi_file_freep) UnwindCfiFile *f = NULL;
        char path[PATH_MAX], cmd[2 * PATH_MAX + 16];
        _cleanup_close_ int fd = -EBADF;
        const uint64_t file_bytes = 128U * 1024U * 1024U;
        uint64_t zero64 = 0, before;
        uint16_t zero16 = 0;
        GElf_Shdr eh;
        UnwindRule rule;

        assert_non_null(lib);
        assert_true(test_elf_section(lib, ".eh_frame", NULL, &eh));
        snprintf(path, sizeof(path), "%s/no-section-headers.so", tmpdir);
        snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", lib, path);
        assert_int_equal(system(cmd), 0);
        fd = open(path, O_RDWR | O_CLOEXEC);
        assert_true(fd >= 0);
        /* Elf64_Ehdr: e_shoff at 0x28, e_shnum at 0x3c, e_shstrndx at 0x3e (the ELF gABI). */
        assert_int_equal(pwrite(fd, &zero64, sizeof(zero64), 0x28), sizeof(zero64));
        assert_int_equal(pwrite(fd, &zero16, sizeof(zero16), 0x3c), sizeof(zero16));
        assert_int_equal(pwrite(fd, &zero16, sizeof(zero16), 0x3e), sizeof(zero16));
        assert_int_equal(ftruncate(fd, (off_t) file_bytes), 0); /* sparse: costs no disk */

        before = self_resident_bytes();
        assert_int_equal(unwind_cfi_file_load_fd(fd, &f), 0);
        print_message("  a %" PRIu64 "-MiB file without section headers: %" PRIu64 " KiB resident more, %zu bytes counted\n",
                      file_bytes >> 20, (self_resident_bytes() - MIN(self_resident_bytes(), before)) >> 10,
                      unwind_cfi_file_bytes(f));
        assert_true(self_resident_bytes() < before + file_bytes / 4);
        assert_true(unwind_cfi_file_bytes(f) >= eh.sh_size);
        unwind_cfi_file_rule(f, symbol_vaddr(lib, "unwind_many_1999") + 1, &rule);
        assert_int_equal(rule.kind, UNWIND_RULE_SIMPLE);
        unwind_cfi_file_rule(f, symbol_vaddr(lib, "unwind_fixture_lib_middle") + 1, &rule);
        assert_int_equal(rule.kind, UNWIND_RULE_SIMPLE);
        (void) unlink(path);
}

/*
 * A register number libdw grows its frame to hold: elfutils 0.188 (cfi.c, enough_registers())
 * reallocates and clears the frame up to any register below 2^28 an instruction names, 2 GB for a
 * 3-byte DW_CFA_undefined in any file a process maps. The FDE of unwind_fixture_lib_middle with
 * its first instruction made DW_CFA_undefined of register 2^22 (32 MB of frame) gives no rule,
 * and costs no memory; the FDEs around it are as before.
 */
static void test_unwind_cfi_register_out_of_bounds(void **state) {
        const char *lib = getenv("TPROF_UNWIND_FIXTURE_HDRLAST_LIB");
        _cleanup_(unwind_cfi_file_freep) UnwindCfiFile *f = NULL;
        char path[PATH_MAX], cmd[2 * PATH_MAX + 16];
        /* DW_CFA_undefined, ULEB128 2^22 (DWARF 5, 6.4.2.3 and 7.6) */
        static const uint8_t undefined[] = { 0x07, 0x80, 0x80, 0x80, 0x02 };
        uint64_t middle = symbol_vaddr(lib, "unwind_fixture_lib_middle"), other, before;
        _cleanup_close_ int fd = -EBADF;
        GElf_Shdr hdr, eh;
        uint8_t *table;
        uint32_t count, length;
        int64_t fde = -1;
        UnwindRule rule;

        assert_non_null(lib);
        other = symbol_vaddr(lib, "unwind_many_1500");
        assert_true(middle != 0 && other != 0);
        assert_true(test_elf_section(lib, ".eh_frame_hdr", NULL, &hdr));
        assert_true(test_elf_section(lib, ".eh_frame", NULL, &eh));
        snprintf(path, sizeof(path), "%s/big-register.so", tmpdir);
        snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", lib, path);
        assert_int_equal(system(cmd), 0);
        fd = open(path, O_RDWR | O_CLOEXEC);
        assert_true(fd >= 0);
        /* .eh_frame_hdr as GNU ld writes it: version, encodings, eh_frame_ptr (sdata4), count
         * (udata4), then (start, FDE) pairs of datarel sdata4. */
        table = malloc(hdr.sh_size);
        assert_non_null(table);
        assert_int_equal(pread(fd, table, hdr.sh_size, (off_t) hdr.sh_offset), (ssize_t) hdr.sh_size);
        assert_int_equal(table[3], 0x3b);
        memcpy(&count, table + 8, sizeof(count));
        for (uint32_t i = 0; i < count; i++) {
                int32_t start, at;
                memcpy(&start, table + 12 + 8 * i, sizeof(start));
                memcpy(&at, table + 16 + 8 * i, sizeof(at));
                if (hdr.sh_addr + (uint64_t) (int64_t) start == middle)
                        fde = (int64_t) (hdr.sh_addr + (uint64_t) (int64_t) at - eh.sh_addr + eh.sh_offset);
        }
        free(table);
        assert_true(fde > 0);
        /* The FDE: length, CIE pointer, start and range (pcrel|sdata4, "zR"), augmentation length 0,
         * then its instructions. */
        assert_int_equal(pread(fd, &length, sizeof(length), (off_t) fde), sizeof(length));
        assert_true(length >= 13 + sizeof(undefined));
        assert_int_equal(pwrite(fd, undefined, sizeof(undefined), (off_t) fde + 17), sizeof(undefined));

        assert_int_equal(unwind_cfi_file_load_fd(fd, &f), 0);
        before = self_resident_bytes();
        unwind_cfi_file_rule(f, middle + 1, &rule);
        print_message("  an FDE naming register 2^22: rule %d, %" PRIu64 " KiB resident more\n", rule.kind,
                      (self_resident_bytes() - MIN(self_resident_bytes(), before)) >> 10);
        assert_int_equal(rule.kind, UNWIND_RULE_NONE);
        assert_true(self_resident_bytes() < before + 16U * 1024U * 1024U);
        unwind_cfi_file_rule(f, other + 1, &rule);
        assert_int_equal(rule.kind, UNWIND_RULE_SIMPLE);
        /* Each entry is checked once: the verdicts hold at the next lookups, each its own. */
        for (int i = 0; i < 3; i++) {
                unwind_cfi_file_rule(f, middle + 2, &rule);
                assert_int_equal(rule.kind, UNWIND_RULE_NONE);
                unwind_cfi_file_rule(f, other + 2, &rule);
                assert_int_equal(rule.kind, UNWIND_RULE_SIMPLE);
        }
        assert_true(self_resident_bytes() < before + 16U * 1024U * 1024U);

        /* Without the search table (an eh_frame_ptr that is not .eh_frame's: libdw drops the
         * table) libdw reads .eh_frame in order, FDE after FDE: the section is checked whole when
         * the file is read, and none of it is used, the good FDEs neither (docs/design.md). */
        unwind_cfi_file_free(TAKE_PTR(f));
        int32_t ptr;
        assert_int_equal(pread(fd, &ptr, sizeof(ptr), (off_t) hdr.sh_offset + 4), sizeof(ptr));
        ptr += 8;
        assert_int_equal(pwrite(fd, &ptr, sizeof(ptr), (off_t) hdr.sh_offset + 4), sizeof(ptr));
        assert_int_equal(unwind_cfi_file_load_fd(fd, &f), -ENODATA); /* no CFI, none from .debug_frame */
        assert_false(unwind_cfi_file_has_cfi(f));
        unwind_cfi_file_rule(f, middle + 1, &rule);
        assert_int_equal(rule.kind, UNWIND_RULE_NONE);
        unwind_cfi_file_rule(f, other + 1, &rule);
        assert_int_equal(rule.kind, UNWIND_RULE_NONE);
        (void) unlink(path);
}

/* An .eh_frame for tests: entries of the LSB's format (a 4-byte length, then a CIE id of 0 or the
 * distance back to the CIE, then body) appended to buf at *at. */
static size_t eh_frame_put(uint8_t *buf, size_t *at, bool cie, size_t cie_at, const uint8_t *body, size_t n) {
        uint32_t length = (uint32_t) (4 + n), id = cie ? 0 : (uint32_t) (*at + 4 - cie_at);
        size_t start = *at;

        memcpy(buf + *at, &length, 4);
        memcpy(buf + *at + 4, &id, 4);
        memcpy(buf + *at + 8, body, n);
        *at += 8 + n;
        return start;
}

/* A field of /proc/self/status, in bytes. */
static uint64_t self_status_bytes(const char *field) {
        unsigned long long kib = 0;
        char line[256];
        FILE *f = fopen("/proc/self/status", "re");
        bool found = false;

        assert_non_null(f);
        while (!found && fgets(line, sizeof(line), f))
                found = strncmp(line, field, strlen(field)) == 0 && sscanf(line + strlen(field), ": %llu", &kib) == 1;
        fclose(f);
        assert_true(found);
        return (uint64_t) kib * 1024U;
}

/* Starts counting the peak of resident memory anew (proc(5): /proc/PID/clear_refs, 5), and the
 * memory resident now. */
static uint64_t self_peak_reset(void) {
        _cleanup_close_ int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);

        assert_true(fd >= 0);
        assert_int_equal(write(fd, "5", 1), 1);
        return self_status_bytes("VmRSS");
}

#define EH_FRAME_TEST_ADDR 0x1000U
#define EH_FRAME_TEST_CODE 0x2000U

/* The rule at EH_FRAME_TEST_CODE + 0x10 of an x86-64 file whose one section is an .eh_frame of
 * size bytes at EH_FRAME_TEST_ADDR, no search table (libdw reads it in order, elfutils 0.188,
 * fde.c, __libdw_find_fde()), and the most memory the lookup had resident beyond what was. */
static UnwindRuleKind eh_frame_rule(const char *name, const uint8_t *eh_frame, size_t size, uint64_t *ret_resident) {
        static const char shstrtab[] = "\0.eh_frame\0.shstrtab";
        _cleanup_(unwind_cfi_file_freep) UnwindCfiFile *f = NULL;
        _cleanup_close_ int fd = -EBADF;
        char path[PATH_MAX];
        uint64_t before;
        UnwindRule rule;
        Elf64_Shdr *sh;
        Elf64_Ehdr *eh;
        Elf *elf;
        int r;

        snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
        fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        elf = test_elf_new_dyn(fd, EM_X86_64, &eh);
        sh = test_elf_new_section(elf, 1, SHT_PROGBITS, (void *) eh_frame, size, ELF_T_BYTE, 8); /* 1 */
        sh->sh_flags = SHF_ALLOC;
        sh->sh_addr = EH_FRAME_TEST_ADDR;
        (void) test_elf_new_section(elf, 11, SHT_STRTAB, (void *) shstrtab, sizeof(shstrtab), ELF_T_BYTE, 1); /* 2 */
        eh->e_shstrndx = 2;
        assert_true(elf_update(elf, ELF_C_WRITE) > 0);
        elf_end(elf);

        /* -ENODATA: no CFI libdw may be given */
        r = unwind_cfi_file_load_fd(fd, &f);
        assert_true(r == 0 || r == -ENODATA);
        assert_non_null(f);
        before = self_peak_reset();
        unwind_cfi_file_rule(f, EH_FRAME_TEST_CODE + 0x10, &rule);
        *ret_resident = self_status_bytes("VmHWM") - MIN(self_status_bytes("VmHWM"), before);
        print_message("  %s: rule %d, %" PRIu64 " KiB resident more\n", name, rule.kind, *ret_resident >> 10);
        (void) unlink(path);
        return rule.kind;
}

/* A CIE as GCC writes one for x86-64: version 1, "zR", code and data alignment 1 and -8, return
 * address in register 16, FDE addresses pcrel|sdata4; CFA = rsp + 8, return address at CFA - 8. */
static const uint8_t gcc_cie[] = { 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x1b, 0x0c, 7, 8, 0x90, 1 };

/* An FDE of gcc_cie over [EH_FRAME_TEST_CODE, +0x100) at *at, with instructions. */
static void gcc_fde_put(uint8_t *buf, size_t *at, size_t cie_at, const uint8_t *instr, size_t n) {
        uint8_t body[64];
        int32_t start = (int32_t) (EH_FRAME_TEST_CODE - (EH_FRAME_TEST_ADDR + *at + 8)), range = 0x100;

        assert_true(9 + n <= sizeof(body));
        memcpy(body, &start, 4);
        memcpy(body + 4, &range, 4);
        body[8] = 0; /* augmentation data: none */
        memcpy(body + 9, instr, n);
        (void) eh_frame_put(buf, at, /* cie= */ false, cie_at, body, 9 + n);
}

/* The .eh_frame of at bytes in buf, ended by a zero terminator there, gives no rule and costs no
 * memory to look up in (none of the 32 MB a register of 2^22 would). */
static void assert_refused(const char *name, uint8_t *buf, size_t at) {
        uint64_t resident;

        memset(buf + at, 0, 4);
        assert_int_equal(eh_frame_rule(name, buf, at + 4, &resident), UNWIND_RULE_NONE);
        assert_true(resident < 16U * 1024U * 1024U);
}

/*
 * CFI that libdw reads otherwise than a decoder by the letter of DWARF would, hiding from such a
 * decoder the DW_CFA_undefined of register 2^22 (32 MB of frame) that libdw executes; elfutils
 * 0.188 is the version every case is read from. Each gives no rule, and costs no memory; the same
 * files with the register named plainly cost as much (the first case).
 */
static void test_unwind_cfi_hidden_register(void **state) {
        /* DW_CFA_undefined, ULEB128 2^22 (DWARF 5, 6.4.2.3 and 7.6) */
        static const uint8_t plain[] = { 0x07, 0x80, 0x80, 0x80, 0x02 };
        /* libdw reads a LEB128 number of ten bytes at most (memory-access.h, __libdw_get_uleb128()):
         * DW_CFA_def_cfa_offset, ten bytes each saying more follow, then the plain instruction, which
         * a decoder reading the number to its end takes as the number's last byte and a
         * DW_CFA_offset of register 0. */
        static const uint8_t long_leb[] = { 0x0e, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
                                            0x07, 0x80, 0x80, 0x80, 0x02 };
        /* A CIE "zXR": libdw (cie.c, intern_new_cie()) passes over the unknown 'X' in a sized
         * augmentation and takes 'R', FDE addresses as udata2; read as stopping at 'X' they would be
         * absptr, 8 bytes each, and the plain instruction part of them. */
        static const uint8_t cie_zxr[] = { 1, 'z', 'X', 'R', 0, 1, 0x78, 16, 1, 0x02, 0x0c, 7, 8 };
        static const uint8_t fde_udata2[] = { 0x00, 0x20, 0x00, 0x01, 0x00, 0x07, 0x80, 0x80, 0x80, 0x02,
                                              0, 0, 0, 0, 0, 0, 0, 0, 0 };
        /* A CIE "zPR" whose personality is ULEB128 (0x01): libdw (encoded-value.h,
         * encoded_value_size()) takes its value to run to the first byte with the high bit set, here
         * 05 1b 82, and 'R' to be the 02 after (udata2), not the 1b (pcrel|sdata4) after 05. Read
         * with 4-byte addresses, the FDE's augmentation data (5 bytes) would cover the plain
         * instruction that libdw runs after its DW_CFA_offset_extended. */
        static const uint8_t cie_zpr[] = { 1, 'z', 'P', 'R', 0, 1, 0x78, 16, 5, 0x01, 0x05, 0x1b, 0x82, 0x02,
                                           0x0c, 7, 8 };
        static const uint8_t fde_zpr[] = { 0x00, 0x20, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x05, 0x01, 0x01,
                                           0x07, 0x80, 0x80, 0x80, 0x02 };
        /* A CIE libdw cannot read (version 2) before the CIE and FDE: libdw (fde.c,
         * __libdw_find_fde()) passes over an entry it cannot read when its length is whole. */
        static const uint8_t cie_v2[] = { 2, 0, 1, 0x78, 16, 0x0c, 7, 8 };
        uint8_t buf[256] = {};
        uint64_t resident;
        size_t at, cie;

        at = 0;
        cie = eh_frame_put(buf, &at, /* cie= */ true, 0, gcc_cie, sizeof(gcc_cie));
        gcc_fde_put(buf, &at, cie, (const uint8_t[]) { 0x0e, 16 }, 2);
        memset(buf + at, 0, 4);
        assert_int_equal(eh_frame_rule("good", buf, at + 4, &resident), UNWIND_RULE_SIMPLE);

        at = 0;
        cie = eh_frame_put(buf, &at, /* cie= */ true, 0, gcc_cie, sizeof(gcc_cie));
        gcc_fde_put(buf, &at, cie, plain, sizeof(plain));
        assert_refused("plain", buf, at);

        at = 0;
        cie = eh_frame_put(buf, &at, /* cie= */ true, 0, gcc_cie, sizeof(gcc_cie));
        gcc_fde_put(buf, &at, cie, long_leb, sizeof(long_leb));
        assert_refused("long-leb128", buf, at);

        at = 0;
        cie = eh_frame_put(buf, &at, /* cie= */ true, 0, cie_zxr, sizeof(cie_zxr));
        (void) eh_frame_put(buf, &at, /* cie= */ false, cie, fde_udata2, sizeof(fde_udata2));
        assert_refused("augmentation-unknown", buf, at);

        at = 0;
        cie = eh_frame_put(buf, &at, /* cie= */ true, 0, cie_zpr, sizeof(cie_zpr));
        (void) eh_frame_put(buf, &at, /* cie= */ false, cie, fde_zpr, sizeof(fde_zpr));
        assert_refused("personality-uleb128", buf, at);

        at = 0;
        (void) eh_frame_put(buf, &at, /* cie= */ true, 0, cie_v2, sizeof(cie_v2));
        cie = eh_frame_put(buf, &at, /* cie= */ true, 0, gcc_cie, sizeof(gcc_cie));
        gcc_fde_put(buf, &at, cie, plain, sizeof(plain));
        assert_refused("after-unreadable", buf, at);
}

/* An .eh_frame of gcc_cie and an FDE over [EH_FRAME_TEST_CODE, +0x100) whose CFA is an expression
 * (a rule evaluated at each sample), then instructions: n bytes of DW_CFA_nop, or with pairs,
 * DW_CFA_undefined of register 255 and then DW_CFA_remember_state, DW_CFA_restore_state pairs. */
static size_t expr_fde_build(uint8_t *buf, uint8_t *body, size_t n, bool pairs) {
        static const uint8_t expr[] = { 0x0f, 3, 0x77, 8, 0x06 }; /* DW_CFA_def_cfa_expression: *(rsp + 8) */
        int32_t start, range = 0x100;
        size_t at = 0, cie, h = 9 + sizeof(expr);

        cie = eh_frame_put(buf, &at, /* cie= */ true, 0, gcc_cie, sizeof(gcc_cie));
        start = (int32_t) (EH_FRAME_TEST_CODE - (EH_FRAME_TEST_ADDR + at + 8));
        memcpy(body, &start, 4);
        memcpy(body + 4, &range, 4);
        body[8] = 0;
        memcpy(body + 9, expr, sizeof(expr));
        memset(body + h, 0, n); /* DW_CFA_nop */
        if (pairs) {
                memcpy(body + h, (const uint8_t[]) { 0x07, 0xff, 0x01 }, 3);
                for (size_t j = 3; j + 2 <= n; j += 2)
                        memcpy(body + h + j, (const uint8_t[]) { 0x0a, 0x0b }, 2);
        }
        (void) eh_frame_put(buf, &at, /* cie= */ false, cie, body, h + n);
        memset(buf + at, 0, 4);
        return at + 4;
}

/*
 * Entries that libdw (elfutils 0.188, cfi.c, execute_cfi()) takes long over at each lookup of an
 * address past their advances, with the CFA an expression (a rule evaluated at each sample): a
 * million DW_CFA_nop (0.56 ms at each sample), or 32,000 DW_CFA_remember_state each undone at
 * once, each a copy of a frame of 256 registers (1.2 ms). Any file a process maps could cost
 * tprofd that much at each of its samples. They give no rule; a few of either give one.
 */
static void test_unwind_cfi_long_instructions(void **state) {
        const size_t n_max = 1024U * 1024U;
        _cleanup_free_ uint8_t *buf = malloc(n_max + 256), *body = malloc(n_max + 64);
        uint64_t resident;
        size_t size;

        assert_non_null(buf);
        assert_non_null(body);
        size = expr_fde_build(buf, body, 8, /* pairs= */ false);
        assert_int_equal(eh_frame_rule("few-instructions", buf, size, &resident), UNWIND_RULE_EXPR);
        size = expr_fde_build(buf, body, n_max, /* pairs= */ false);
        assert_int_equal(eh_frame_rule("million-instructions", buf, size, &resident), UNWIND_RULE_NONE);
        size = expr_fde_build(buf, body, 3 + 2 * 16, /* pairs= */ true);
        assert_int_equal(eh_frame_rule("few-states", buf, size, &resident), UNWIND_RULE_EXPR);
        size = expr_fde_build(buf, body, 3 + 2 * 32000, /* pairs= */ true);
        assert_int_equal(eh_frame_rule("many-states", buf, size, &resident), UNWIND_RULE_NONE);
}

static size_t table_bytes_of(const char *path) {
        _cleanup_(unwind_cfi_file_freep) UnwindCfiFile *f = NULL;
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);

        assert_true(fd >= 0);
        assert_int_equal(unwind_cfi_file_load_fd(fd, &f), 0);
        return unwind_cfi_file_bytes(f);
}

/* A search table whose eh_frame_ptr does not give .eh_frame's address is one libdw drops: it then
 * reads .eh_frame in order and keeps every FDE, and the table is counted so from the start. */
static void test_unwind_search_table_dropped(void **state) {
        const char *lib = getenv("TPROF_UNWIND_FIXTURE_HDRLAST_LIB");
        char bad[PATH_MAX], cmd[2 * PATH_MAX + 16];
        _cleanup_close_ int fd = -EBADF;
        GElf_Shdr hdr, eh;
        int32_t ptr;

        assert_non_null(lib);
        assert_true(test_elf_section(lib, ".eh_frame_hdr", NULL, &hdr));
        assert_true(test_elf_section(lib, ".eh_frame", NULL, &eh));
        snprintf(bad, sizeof(bad), "%s/bad-table.so", tmpdir);
        snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", lib, bad);
        assert_int_equal(system(cmd), 0);
        fd = open(bad, O_RDWR | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(pread(fd, &ptr, sizeof(ptr), (off_t) hdr.sh_offset + 4), sizeof(ptr));
        ptr += 8;
        assert_int_equal(pwrite(fd, &ptr, sizeof(ptr), (off_t) hdr.sh_offset + 4), sizeof(ptr));
        print_message("  tables: %zu bytes, %zu with the table dropped (.eh_frame: %zu)\n", table_bytes_of(lib),
                      table_bytes_of(bad), (size_t) eh.sh_size);
        assert_true(table_bytes_of(bad) >= table_bytes_of(lib) + 2 * eh.sh_size);
        (void) unlink(bad);
}

/* What libdw keeps of the FDEs it has read is counted once an FDE: every address of a function
 * with rows of its own for its prologue and epilogue counts one FDE, another function one more.
 * The table's bits are counted at the first lookup: one for each entry whose FDE libdw has read,
 * and two for each entry's check, whether made and whether passed. */
static void test_unwind_fde_bytes(void **state) {
        const char *lib = getenv("TPROF_UNWIND_FIXTURE_HDRLAST_LIB");
        _cleanup_(unwind_cfi_file_freep) UnwindCfiFile *f = NULL;
        _cleanup_close_ int fd = -EBADF;
        uint64_t middle, other;
        size_t before, one;
        uint32_t count;
        UnwindRule rule;
        GElf_Shdr hdr;

        assert_non_null(lib);
        middle = symbol_vaddr(lib, "unwind_fixture_lib_middle");
        other = symbol_vaddr(lib, "unwind_many_1500");
        assert_true(middle != 0 && other != 0);
        assert_true(test_elf_section(lib, ".eh_frame_hdr", NULL, &hdr));
        fd = open(lib, O_RDONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        /* .eh_frame_hdr as GNU ld writes it: version, encodings, eh_frame_ptr (sdata4), count */
        assert_int_equal(pread(fd, &count, sizeof(count), (off_t) hdr.sh_offset + 8), sizeof(count));
        assert_true(count > 100);
        assert_int_equal(unwind_cfi_file_load_fd(fd, &f), 0);
        before = unwind_cfi_file_bytes(f);
        unwind_cfi_file_rule(f, middle, &rule);
        one = unwind_cfi_file_bytes(f) - before; /* one FDE, and the table's bits */
        assert_true(one >= 80 + count / 8 + count / 4);
        for (uint64_t a = middle; a < middle + 24; a++)
                unwind_cfi_file_rule(f, a, &rule);
        assert_int_equal(unwind_cfi_file_bytes(f) - before, one);
        unwind_cfi_file_rule(f, other, &rule);
        assert_int_equal(unwind_cfi_file_bytes(f) - before, one + 80);
}

/* The thread's CPU time, in nanoseconds: a shared machine's other work is not counted. */
static uint64_t thread_nsec(void) {
        struct timespec ts;

        assert_int_equal(clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts), 0);
        return (uint64_t) ts.tv_sec * 1000000000U + (uint64_t) ts.tv_nsec;
}

static int libc_path_of(struct dl_phdr_info *info, size_t size, void *userdata) {
        const char *slash = strrchr(info->dlpi_name, '/');

        if (!slash || strncmp(slash + 1, "libc.so.", 8) != 0)
                return 0;
        snprintf(userdata, PATH_MAX, "%s", info->dlpi_name);
        return 1;
}

#define LOOKUP_TIME_ROUNDS 5U
#define LOOKUP_TIME_N 100000U

/*
 * What a lookup in an FDE whose CFA is an expression costs: the PLT entries of the libc this test
 * runs with (GNU ld writes their FDE with DW_CFA_def_cfa_expression), a rule evaluated at each
 * sample (unwind_cfi_apply()) and looked up at each rule-cache miss (unwind_cfi_file_rule()). The
 * figures are printed, the least of a few rounds in the thread's CPU time; a shared machine makes
 * them too noisy to be asserted on.
 */
static void test_unwind_plt_lookup_time(void **state) {
        _cleanup_(unwind_cfi_file_freep) UnwindCfiFile *f = NULL;
        _cleanup_close_ int fd = -EBADF;
        char path[PATH_MAX] = "";
        uint64_t stack[32] = {}, best_rule = UINT64_MAX, best_apply = UINT64_MAX, vaddr;
        UnwindMemory mem = { .base = 0x7ffe0000U, .data = (const uint8_t *) stack, .size = sizeof(stack) };
        UnwindRule rule;
        GElf_Shdr plt;

        assert_int_equal(dl_iterate_phdr(libc_path_of, path), 1);
        if (!test_elf_section(path, ".plt", NULL, &plt) || plt.sh_size < 0x20) {
                print_message("  %s: no .plt, nothing to time\n", path);
                return;
        }
        vaddr = plt.sh_addr + 0x10 + 4; /* in the first entry after the PLT's header */
        fd = open(path, O_RDONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(unwind_cfi_file_load_fd(fd, &f), 0);
        unwind_cfi_file_rule(f, vaddr, &rule);
        assert_int_equal(rule.kind, UNWIND_RULE_EXPR);
        stack[1] = 0x401234; /* the return address at rsp (regs.sp below), the CFA rsp + 8 */

        for (unsigned round = 0; round < LOOKUP_TIME_ROUNDS; round++) {
                uint64_t start = thread_nsec();

                for (unsigned i = 0; i < LOOKUP_TIME_N; i++)
                        unwind_cfi_file_rule(f, vaddr, &rule);
                best_rule = MIN(best_rule, thread_nsec() - start);

                start = thread_nsec();
                for (unsigned i = 0; i < LOOKUP_TIME_N; i++) {
                        UnwindRegs regs = { .ip = vaddr, .sp = mem.base + 8 };

                        assert_int_equal(unwind_cfi_apply(f, vaddr, &rule, &regs, &mem), UNWIND_STEP_OK);
                        assert_int_equal(regs.ip, 0x401234);
                }
                best_apply = MIN(best_apply, thread_nsec() - start);
        }
        print_message("  %s PLT at 0x%" PRIx64 ": %" PRIu64 " ns a rule lookup, %" PRIu64 " ns a step\n", path,
                      vaddr, best_rule / LOOKUP_TIME_N, best_apply / LOOKUP_TIME_N);
}

/* The rule in the middle of fixture's compat32_leaf (past its prologue, before its epilogue). */
static void i386_leaf_rule(const char *fixture, UnwindRule *ret) {
        _cleanup_(unwind_cfi_file_freep) UnwindCfiFile *f = NULL;
        GElf_Sym sym;
        int fd;

        assert_true(test_elf_symbol(fixture, "compat32_leaf", &sym));
        fd = open(fixture, O_RDONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(unwind_cfi_file_load_fd(fd, &f), 0);
        close(fd);
        assert_int_equal(unwind_cfi_file_word(f), 4);
        unwind_cfi_file_rule(f, sym.st_value + sym.st_size / 2, ret);
}

/* An i386 file's CFI is read in i386's terms, from .eh_frame or .debug_frame: esp is DWARF
 * register 4, ebp 5, the return address column 8, words of 4 bytes. With frame pointers the leaf's CFA is ebp + 8, the return address at
 * CFA - 4 and the caller's ebp at CFA - 8; without, the CFA is esp plus what the leaf pushed. */
static void test_unwind_i386_rules(void **state) {
        const char *fp = getenv("TPROF_COMPAT32_FIXTURE"), *nofp = getenv("TPROF_COMPAT32_FIXTURE_NOFP");
        const char *debugframe = getenv("TPROF_COMPAT32_FIXTURE_DEBUGFRAME");
        UnwindRule rule;

        if (!fp || !nofp || !debugframe)
                skip();
        assert_true(section_index_of(debugframe, ".debug_frame") != 0);
        assert_true(section_index_of(debugframe, ".eh_frame") == 0);
        i386_leaf_rule(debugframe, &rule); /* from .debug_frame, through a 32-bit image */
        assert_int_equal(rule.kind, UNWIND_RULE_SIMPLE);
        assert_int_equal(rule.cfa_reg, UNWIND_DWARF_REG_SP);
        assert_int_equal(rule.ra_off, -4);

        i386_leaf_rule(fp, &rule);
        assert_int_equal(rule.kind, UNWIND_RULE_SIMPLE);
        assert_int_equal(rule.cfa_reg, UNWIND_DWARF_REG_BP);
        assert_int_equal(rule.cfa_off, 8);
        assert_int_equal(rule.ra_off, -4);
        assert_int_equal(rule.bp_kind, UNWIND_BP_AT_CFA);
        assert_int_equal(rule.bp_off, -8);

        i386_leaf_rule(nofp, &rule);
        assert_int_equal(rule.kind, UNWIND_RULE_SIMPLE);
        assert_int_equal(rule.cfa_reg, UNWIND_DWARF_REG_SP);
        assert_true(rule.cfa_off >= 4 && rule.cfa_off % 4 == 0);
        assert_int_equal(rule.ra_off, -4);
        assert_int_equal(rule.bp_kind, UNWIND_BP_SAME);
}

/* A 32-bit process: its frame pointers and return addresses are 4 bytes. A synthetic stack of
 * two frames in a 32-bit program's text (a file that cannot be read: no CFI) ends whole at the
 * saved bp of 0 in `auto`, and is cut after the interrupted address with CFI only. */
static void test_unwind_compat32(void **state) {
        _cleanup_(unwinder_freep) Unwinder *u = NULL;
        _cleanup_(unwinder_freep) Unwinder *d = NULL;
        _cleanup_(proc_table_freep) ProcTable *t = proc_table_new();
        const uint64_t sp = 0xffffd000, text = 0x8049000;
        uint32_t stack[6] = {
                0xdeadbeef, 0xdeadbeef,                      /* the leaf's locals */
                (uint32_t) sp + 16, (uint32_t) text + 0x100, /* its frame: saved bp, return address */
                0, (uint32_t) text + 0x200,                  /* the caller's: bp 0, the outermost */
        };
        UnwindInput in = { .pid = 4242, .ip = text + 0x50, .sp = sp, .bp = sp + 8,
                           .stack = (const uint8_t *) stack, .stack_size = sizeof(stack), .compat32 = true };
        uint64_t ips[16];
        UnwindStats st;
        size_t n;

        assert_non_null(t);
        assert_int_equal(proc_table_mmap(t, 4242, &(ProcMap) { .start = text, .end = text + 0x1000,
                                                               .prot = 5, .ino = 7, .path = (char *) "/p32" }), 0);
        assert_int_equal(unwinder_new(&(UnwinderOptions) { .mode = UNWIND_MODE_AUTO }, &u), 0);
        n = unwinder_unwind(u, t, &in, ips, ELEMENTSOF(ips));
        assert_int_equal(n, 3);
        assert_int_equal(ips[0], text + 0x50);
        assert_int_equal(ips[1], text + 0x100);
        assert_int_equal(ips[2], text + 0x200);
        unwinder_get_stats(u, &st);
        assert_int_equal(st.stacks_cut, 0);
        assert_int_equal(st.frames_fp, 2);

        assert_int_equal(unwinder_new(&(UnwinderOptions) { .mode = UNWIND_MODE_DWARF }, &d), 0);
        n = unwinder_unwind(d, t, &in, ips, ELEMENTSOF(ips));
        assert_int_equal(n, 2);
        assert_int_equal(ips[1], 0);
        unwinder_get_stats(d, &st);
        assert_int_equal(st.cut[UNWIND_CUT_NO_CFI], 1);
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
                cmocka_unit_test(test_unwind_fde_bytes),
                cmocka_unit_test(test_unwind_search_table_dropped),
                cmocka_unit_test(test_unwind_eh_frame_by_program_header),
                cmocka_unit_test(test_unwind_cfi_register_out_of_bounds),
                cmocka_unit_test(test_unwind_cfi_hidden_register),
                cmocka_unit_test(test_unwind_cfi_long_instructions),
                cmocka_unit_test(test_unwind_compat32),
                cmocka_unit_test(test_unwind_i386_rules),
                cmocka_unit_test(test_unwind_plt_lookup_time),
        };
#if !defined(__x86_64__)
        printf("The unwinder walks x86-64 stacks only.\n");
        return EXIT_TEST_SKIP;
#endif
        if (!getenv("TPROF_UNWIND_FIXTURE_HDRLAST_LIB"))
                return EXIT_TEST_SKIP;
        return cmocka_run_group_tests(tests, setup, teardown);
}
