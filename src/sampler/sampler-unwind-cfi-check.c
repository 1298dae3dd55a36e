/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What libdw must not be handed: CFI whose instructions make it allocate without bound. libdw
 * (elfutils 0.188, cfi.c, execute_cfi()) grows the frame it computes to hold the highest register
 * an instruction names, up to 2^28 registers (enough_registers(): a 2 GB realloc() and memset()
 * for a 3-byte DW_CFA_undefined), and copies the whole frame for each DW_CFA_remember_state not
 * yet restored, so that a run of them costs the frame's size times their number. Before a rule is
 * asked of libdw, the CIE and FDE it will execute are read here (their headers by dwarf_next_cfi())
 * and their instructions decoded (DWARF 5, section 6.4.2, and the LSB's .eh_frame extensions):
 * at most UNWIND_CFI_INSTRUCTIONS_MAX bytes of them, every register below UNWIND_CFI_REGS_MAX,
 * nesting of remembered states below UNWIND_CFI_STATES_MAX and at most UNWIND_CFI_REMEMBERED_MAX
 * of them, no opcode unknown here. A toolchain's CFI for x86 names registers below
 * 130 (the x86-64 psABI's numbering, its highest the bound registers) and nests one state deep.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <string.h>

#include "sampler/sampler-unwind-cfi-internal.h"

#define UNWIND_CFI_REGS_MAX 256U
#define UNWIND_CFI_STATES_MAX 64U
/* The most bytes of instructions in a CIE or FDE: libdw runs them all at a lookup that reaches
 * their end (at each sample for a rule it evaluates, UNWIND_RULE_EXPR, and at each rule-cache miss
 * otherwise); this check reads them once an FDE (its verdict is kept, sampler-unwind-cfi.c). Toolchains
 * write far fewer: the largest entry of Debian 12's libLLVM-14 is 2,388 bytes, of libstdc++ 756, of
 * libc 192. */
#define UNWIND_CFI_INSTRUCTIONS_MAX (64U * 1024U)
/* The most DW_CFA_remember_state in a CIE or FDE, nested or not: libdw copies its frame (up to
 * UNWIND_CFI_REGS_MAX registers, 2 KiB) for each. Toolchains write a few, one per early return:
 * 16 at most in Debian 12's python3, 10 in bash, 8 in libc and libstdc++. */
#define UNWIND_CFI_REMEMBERED_MAX 1024U

/* Skips a LEB128 number, signed or not, as libdw reads one (elfutils 0.188, memory-access.h,
 * __libdw_get_uleb128() and __libdw_get_sleb128()): ten bytes at most, the tenth taken as the last
 * whatever its continuation bit (the value then too large for anything). Reading on to the byte
 * that ends the number would skip bytes that libdw executes as instructions. */
#define LEB128_BYTES_MAX 10U
static bool skip_uleb(const uint8_t **p, const uint8_t *end, uint64_t *ret) {
        uint64_t v = 0;

        for (unsigned i = 0; i < LEB128_BYTES_MAX && *p < end; i++) {
                uint8_t b = *(*p)++;
                v |= (uint64_t) (b & 0x7f) << (7 * i);
                if (!(b & 0x80)) {
                        if (ret)
                                *ret = v;
                        return true;
                }
                if (i == LEB128_BYTES_MAX - 1) {
                        if (ret)
                                *ret = UINT64_MAX;
                        return true;
                }
        }
        return false;
}

static bool skip_bytes(const uint8_t **p, const uint8_t *end, uint64_t n) {
        if (n > (uint64_t) (end - *p))
                return false;
        *p += n;
        return true;
}

/* Skips a DW_EH_PE_* encoded value (its low four bits give the form); false for a form libdw
 * does not read either (DW_EH_PE_omit, aligned). */
static bool skip_encoded(const uint8_t **p, const uint8_t *end, uint8_t enc, unsigned address_size) {
        if (enc == DW_EH_PE_omit || (enc & 0x70) == DW_EH_PE_aligned)
                return false;
        switch (enc & 0x0f) {
        case DW_EH_PE_absptr:
                return skip_bytes(p, end, address_size);
        case DW_EH_PE_uleb128:
        case DW_EH_PE_sleb128:
                return skip_uleb(p, end, NULL);
        case DW_EH_PE_udata2:
        case DW_EH_PE_sdata2:
                return skip_bytes(p, end, 2);
        case DW_EH_PE_udata4:
        case DW_EH_PE_sdata4:
                return skip_bytes(p, end, 4);
        case DW_EH_PE_udata8:
        case DW_EH_PE_sdata8:
                return skip_bytes(p, end, 8);
        default:
                return false;
        }
}

static bool reg_ok(const uint8_t **p, const uint8_t *end) {
        uint64_t reg;

        return skip_uleb(p, end, &reg) && reg < UNWIND_CFI_REGS_MAX;
}

/* The instructions [p, end): false if more than UNWIND_CFI_INSTRUCTIONS_MAX bytes, or if one names
 * a register, nests or remembers states past the bounds, or is not known. */
static bool instructions_ok(const uint8_t *p, const uint8_t *end, uint8_t fde_encoding, unsigned address_size) {
        unsigned states = 0, remembered = 0;
        uint64_t len;

        if (end - p > (ptrdiff_t) UNWIND_CFI_INSTRUCTIONS_MAX)
                return false;
        while (p < end) {
                uint8_t op = *p++;

                switch (op & 0xc0) {
                case DW_CFA_advance_loc:
                        continue;
                case DW_CFA_offset:
                        if (!skip_uleb(&p, end, NULL))
                                return false;
                        continue;
                case DW_CFA_restore:
                        continue;
                default:
                        break;
                }
                switch (op) {
                case DW_CFA_nop:
                case DW_CFA_GNU_window_save:
                        break;
                case DW_CFA_remember_state:
                        if (++states >= UNWIND_CFI_STATES_MAX || ++remembered > UNWIND_CFI_REMEMBERED_MAX)
                                return false;
                        break;
                case DW_CFA_restore_state:
                        if (states > 0)
                                states--;
                        break;
                case DW_CFA_set_loc:
                        if (!skip_encoded(&p, end, fde_encoding, address_size))
                                return false;
                        break;
                case DW_CFA_advance_loc1:
                        if (!skip_bytes(&p, end, 1))
                                return false;
                        break;
                case DW_CFA_advance_loc2:
                        if (!skip_bytes(&p, end, 2))
                                return false;
                        break;
                case DW_CFA_advance_loc4:
                        if (!skip_bytes(&p, end, 4))
                                return false;
                        break;
                case DW_CFA_restore_extended:
                case DW_CFA_undefined:
                case DW_CFA_same_value:
                case DW_CFA_def_cfa_register:
                        if (!reg_ok(&p, end))
                                return false;
                        break;
                case DW_CFA_offset_extended:
                case DW_CFA_def_cfa:
                case DW_CFA_offset_extended_sf:
                case DW_CFA_def_cfa_sf:
                case DW_CFA_val_offset:
                case DW_CFA_val_offset_sf:
                case DW_CFA_GNU_negative_offset_extended:
                        if (!reg_ok(&p, end) || !skip_uleb(&p, end, NULL))
                                return false;
                        break;
                case DW_CFA_register:
                        if (!reg_ok(&p, end) || !reg_ok(&p, end))
                                return false;
                        break;
                case DW_CFA_def_cfa_offset:
                case DW_CFA_def_cfa_offset_sf:
                case DW_CFA_GNU_args_size:
                        if (!skip_uleb(&p, end, NULL))
                                return false;
                        break;
                case DW_CFA_def_cfa_expression:
                        if (!skip_uleb(&p, end, &len) || !skip_bytes(&p, end, len))
                                return false;
                        break;
                case DW_CFA_expression:
                case DW_CFA_val_expression:
                        if (!reg_ok(&p, end) || !skip_uleb(&p, end, &len) || !skip_bytes(&p, end, len))
                                return false;
                        break;
                default:
                        return false;
                }
        }
        return true;
}

/* The FDE encoding a CIE's augmentation gives, DW_EH_PE_absptr if none, and whether its FDEs have
 * augmentation data of a size given; false if the augmentation cannot be read as libdw reads it
 * (elfutils 0.188, cie.c, intern_new_cie()): from its first letter, 'z' wherever it is, a letter
 * unknown passed over once 'z' was seen (else the end), 'L', 'R' and 'P' read from the
 * augmentation data whether or not it was sized ('L', 'R' or 'P' before 'z' finds none and is
 * refused, as is a personality whose size libdw takes otherwise than the encoding says:
 * encoded_value_size() reads ULEB128 and SLEB128 to the first byte with the high bit set). */
static bool cie_fde_encoding(const Dwarf_CIE *cie, unsigned address_size, uint8_t *ret, bool *ret_sized) {
        const uint8_t *p = cie->augmentation_data, *end = p + cie->augmentation_data_size;

        *ret = DW_EH_PE_absptr;
        *ret_sized = false;
        for (const char *a = cie->augmentation; *a; a++)
                switch (*a) {
                case 'z':
                        *ret_sized = true;
                        break;
                case 'S':
                        break;
                case 'L':
                        /* its size is added to each FDE's where not sized: refused, as no 'z' */
                        if (!*ret_sized || !skip_bytes(&p, end, 1))
                                return false;
                        break;
                case 'R':
                        if (p >= end)
                                return false;
                        *ret = *p++;
                        break;
                case 'P': {
                        uint8_t enc;
                        uint64_t n;
                        if (p >= end)
                                return false;
                        enc = *p++;
                        /* encoded_value_size(): the low three bits, an omitted value none */
                        switch (enc == DW_EH_PE_omit ? 0xff : enc & 0x07) {
                        case 0xff:
                                n = 0;
                                break;
                        case DW_EH_PE_absptr:
                                n = address_size;
                                break;
                        case DW_EH_PE_udata2:
                                n = 2;
                                break;
                        case DW_EH_PE_udata4:
                                n = 4;
                                break;
                        case DW_EH_PE_udata8:
                                n = 8;
                                break;
                        case DW_EH_PE_uleb128:
                                return false;
                        default:
                                n = 0;
                                break;
                        }
                        if (!skip_bytes(&p, end, n))
                                return false;
                        break;
                }
                default:
                        if (!*ret_sized)
                                return true; /* libdw stops here */
                        break;
                }
        return true;
}

/* The entry at off: its CIE's initial instructions, and its own if an FDE. */
bool unwind_cfi_entry_ok(const uint8_t *d, size_t size, bool eh_frame, bool elf64, uint64_t off) {
        unsigned char e_ident[EI_NIDENT] = { [EI_CLASS] = elf64 ? ELFCLASS64 : ELFCLASS32,
                                             [EI_DATA] = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB };
        unsigned address_size = elf64 ? 8 : 4;
        Elf_Data data = { .d_buf = (void *) d, .d_size = size, .d_type = ELF_T_BYTE };
        Dwarf_CFI_Entry entry, cie;
        Dwarf_Off next;
        const uint8_t *p, *end;
        uint8_t enc;
        bool sized;

        if (off >= size || dwarf_next_cfi(e_ident, &data, eh_frame, off, &next, &entry) != 0)
                return true; /* nothing libdw reads either */
        if (dwarf_cfi_cie_p(&entry))
                return instructions_ok(entry.cie.initial_instructions, entry.cie.initial_instructions_end,
                                       DW_EH_PE_absptr, address_size);
        if (entry.fde.CIE_pointer >= size ||
            dwarf_next_cfi(e_ident, &data, eh_frame, entry.fde.CIE_pointer, &next, &cie) != 0 ||
            !dwarf_cfi_cie_p(&cie))
                return true; /* libdw takes no FDE without its CIE */
        if (!cie_fde_encoding(&cie.cie, address_size, &enc, &sized) ||
            !instructions_ok(cie.cie.initial_instructions, cie.cie.initial_instructions_end, enc, address_size))
                return false;
        /* The FDE: initial location, address range, augmentation data, instructions. */
        p = entry.fde.start;
        end = entry.fde.end;
        if (!skip_encoded(&p, end, enc, address_size) || !skip_encoded(&p, end, enc & 0x0f, address_size))
                return false;
        if (sized) {
                uint64_t len;
                if (!skip_uleb(&p, end, &len) || !skip_bytes(&p, end, len))
                        return false;
        }
        return instructions_ok(p, end, enc, address_size);
}

bool unwind_cfi_section_ok(const uint8_t *d, size_t size, bool eh_frame, bool elf64) {
        unsigned char e_ident[EI_NIDENT] = { [EI_CLASS] = elf64 ? ELFCLASS64 : ELFCLASS32,
                                             [EI_DATA] = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB };
        Elf_Data data = { .d_buf = (void *) d, .d_size = size, .d_type = ELF_T_BYTE };
        Dwarf_Off off = 0, next;
        Dwarf_CFI_Entry entry;

        /* In order, as libdw reads a section without a search table (elfutils 0.188, fde.c,
         * __libdw_find_fde()): to the end or the terminator, past an entry it cannot read but whose
         * length it could, to the first whose length it cannot. */
        while (off < size) {
                int r;

                next = off;
                r = dwarf_next_cfi(e_ident, &data, eh_frame, off, &next, &entry);
                if (r > 0)
                        break;
                if (r == 0 && !dwarf_cfi_cie_p(&entry) && !unwind_cfi_entry_ok(d, size, eh_frame, elf64, off))
                        return false;
                if (next == (Dwarf_Off) -1 || next <= off)
                        break;
                off = next;
        }
        return true;
}
