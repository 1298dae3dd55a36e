/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <gelf.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "basic/alloc-util.h"
#include "basic/cleanup.h"
#include "basic/macro.h"
#include "profile/profile-sample.h"
#include "symbolizer/elf-plt.h"
#include "symbolizer/elf-util.h"

#define PLT_SUFFIX_LEN (sizeof("@plt") - 1)

typedef struct PltSlot {
        uint64_t got;
        uint32_t sym;
} PltSlot;

static int plt_slot_cmp(const void *a, const void *b) {
        const PltSlot *x = a, *y = b;
        return x->got < y->got ? -1 : x->got > y->got;
}

/* The GOT slots the dynamic relocations against symtab (index symtab_index) fill, sorted. */
static int read_plt_slots(Elf *elf, size_t symtab_index, size_t max, PltSlot **ret, size_t *ret_n) {
        _cleanup_free_ PltSlot *slots = NULL;
        size_t n = 0, allocated = 0;
        Elf_Scn *scn = NULL;

        while ((scn = elf_nextscn(elf, scn))) {
                GElf_Shdr sh;
                Elf_Data *data;
                size_t count, one;

                if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_RELA && sh.sh_type != SHT_REL) ||
                    sh.sh_link != symtab_index || !(sh.sh_flags & SHF_ALLOC))
                        continue;
                data = elf_getdata(scn, NULL);
                one = gelf_fsize(elf, sh.sh_type == SHT_RELA ? ELF_T_RELA : ELF_T_REL, 1, EV_CURRENT);
                if (!data || !data->d_buf || one == 0)
                        continue;
                count = MIN(data->d_size / one, (size_t) INT_MAX);
                for (size_t i = 0; i < count && n < max; i++) {
                        GElf_Rela rela;
                        GElf_Rel rel;
                        uint64_t offset, info;

                        if (sh.sh_type == SHT_RELA) {
                                if (!gelf_getrela(data, (int) i, &rela))
                                        break;
                                offset = rela.r_offset;
                                info = rela.r_info;
                        } else {
                                if (!gelf_getrel(data, (int) i, &rel))
                                        break;
                                offset = rel.r_offset;
                                info = rel.r_info;
                        }
                        /* 0: no symbol (RELATIVE, IRELATIVE), nothing to name the entry by */
                        if (GELF_R_SYM(info) == 0)
                                continue;
                        if (!GREEDY_REALLOC(slots, allocated, n + 1))
                                return -ENOMEM;
                        slots[n++] = (PltSlot) { .got = offset, .sym = (uint32_t) GELF_R_SYM(info) };
                }
        }
        if (n > 0)
                qsort(slots, n, sizeof(PltSlot), plt_slot_cmp);
        *ret = TAKE_PTR(slots);
        *ret_n = n;
        return 0;
}

/* Calls f for the entry at vaddr (size bytes) that jumps through the slot key->got, named for the
 * symbol whose relocation fills that slot; 0 if none does. */
static int plt_name_entry(Elf *elf, const PltSlot *slots, size_t n_slots, const PltSlot *key, Elf_Data *dynsyms,
                          size_t n_dynsyms, size_t strtab_index, uint64_t vaddr, uint64_t size, ElfPltFunc f,
                          void *userdata) {
        char name[PROFILE_NAME_BYTES_MAX];
        const PltSlot *slot;
        const char *sym_name;
        GElf_Sym sym;
        size_t l;

        slot = bsearch(key, slots, n_slots, sizeof(PltSlot), plt_slot_cmp);
        if (!slot || slot->sym >= n_dynsyms || slot->sym > INT_MAX || !gelf_getsym(dynsyms, (int) slot->sym, &sym))
                return 0;
        sym_name = elf_strptr(elf, strtab_index, sym.st_name);
        if (!sym_name || !*sym_name)
                return 0;
        /* A long name loses its end, not its "@plt". */
        l = strnlen(sym_name, sizeof(name) - 1 - PLT_SUFFIX_LEN);
        memcpy(name, sym_name, l);
        memcpy(name + l, "@plt", PLT_SUFFIX_LEN + 1);
        return f(vaddr, size, name, l + PLT_SUFFIX_LEN, userdata);
}

/* The GOT slot the PLT entry at p (size bytes, at vaddr) jumps through. got: where %ebx points on
 * i386 (the start of .got.plt), 0 if not known. */
static bool plt_entry_slot(const uint8_t *p, size_t size, uint64_t vaddr, bool i386, uint64_t got,
                           uint64_t *ret) {
        static const uint8_t endbr[] = { 0xf3, 0x0f, 0x1e };
        size_t k = 0;
        uint32_t disp;

        if (size >= 4 && memcmp(p, endbr, sizeof(endbr)) == 0 && p[3] == (i386 ? 0xfb : 0xfa))
                k = 4;
        if (k < size && p[k] == 0xf2) /* bnd */
                k++;
        if (size < k + 6 || p[k] != 0xff)
                return false;
        disp = (uint32_t) p[k + 2] | (uint32_t) p[k + 3] << 8 | (uint32_t) p[k + 4] << 16 | (uint32_t) p[k + 5] << 24;
        if (!i386 && p[k + 1] == 0x25) /* jmp *disp(%rip) */
                *ret = vaddr + k + 6 + (uint64_t) (int64_t) (int32_t) disp;
        else if (i386 && p[k + 1] == 0x25) /* jmp *disp */
                *ret = disp;
        else if (i386 && p[k + 1] == 0xa3 && got != 0) /* jmp *disp(%ebx) */
                *ret = (uint32_t) (got + disp);
        else
                return false;
        return true;
}

/* AArch64's PLT entries (binutils 2.40 bfd/elfnn-aarch64.c, lld's Arch/AArch64.cpp): the GOT slot's
 * page into x16, the slot into x17, its address into x16, then br x17; 16 bytes, or 24 with a
 * bti c before (an executable's entries with BTI) or an autia1716 before the br (PAC), padded with
 * nops. The header (stp x16, x30, [sp, #-16]!, then the same four for the resolver's slot, which no
 * relocation names) reads like one and stays unnamed. Instructions are little-endian whatever the
 * data's order. */
#define A64_NOP 0xd503201fU
#define A64_BTI_C 0xd503245fU
#define A64_AUTIA1716 0xd503219fU
#define A64_BR_X17 0xd61f0220U

static uint32_t a64_insn(const uint8_t *p) {
        return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
}

/* At p (size bytes left, at vaddr): an entry's adrp x16 and ldr x17, [x16, #imm]. Sets the slot
 * and the entry's bytes from the adrp on (to its br and the nops after, at most 24 from the
 * start, bti c included: before is 4 with one, else 0). */
static bool plt_entry_slot_a64(const uint8_t *p, size_t size, uint64_t vaddr, size_t before, uint64_t *ret_slot,
                               uint64_t *ret_size) {
        uint32_t adrp, ldr;
        uint64_t page, imm;
        size_t k;

        if (size < 12)
                return false;
        adrp = a64_insn(p);
        ldr = a64_insn(p + 4);
        /* adrp x16: op 1, bits 28-24 10000, Rd 16 */
        if ((adrp & 0x9f00001fU) != 0x90000010U)
                return false;
        /* ldr x17, [x16, #imm12 * 8]: the 64-bit unsigned-offset form, Rn 16, Rt 17 */
        if ((ldr & 0xffc003ffU) != 0xf9400211U)
                return false;
        imm = (uint64_t) ((adrp >> 5) & 0x7ffffU) << 2 | ((adrp >> 29) & 3U);
        if (imm & (UINT64_C(1) << 20)) /* 21 bits, signed */
                imm |= ~((UINT64_C(1) << 21) - 1);
        page = (vaddr & ~UINT64_C(0xfff)) + (imm << 12);
        *ret_slot = page + (uint64_t) ((ldr >> 10) & 0xfffU) * 8;
        /* the br, an add and an autia1716 before it */
        for (k = 8; k + 4 <= size && before + k < 24; k += 4)
                if (a64_insn(p + k) == A64_BR_X17)
                        break;
        if (k + 4 > size || before + k >= 24)
                return false;
        k += 4;
        while (k + 4 <= size && before + k < 24 && a64_insn(p + k) == A64_NOP)
                k += 4;
        *ret_size = before + k;
        return true;
}

/* Names the entries of one AArch64 PLT section (data at vaddr). */
static int plt_section_a64(Elf *elf, const uint8_t *data, size_t size, uint64_t vaddr, const PltSlot *slots,
                           size_t n_slots, Elf_Data *dynsyms, size_t n_dynsyms, size_t strtab_index, ElfPltFunc f,
                           void *userdata) {
        for (size_t off = 0; off + 12 <= size; off += 4) {
                size_t before = off >= 4 && a64_insn(data + off - 4) == A64_BTI_C ? 4 : 0;
                uint64_t entry_size;
                PltSlot key;
                int r;

                if (!plt_entry_slot_a64(data + off, size - off, vaddr + off, before, &key.got, &entry_size))
                        continue;
                r = plt_name_entry(elf, slots, n_slots, &key, dynsyms, n_dynsyms, strtab_index, vaddr + off - before,
                                   entry_size, f, userdata);
                if (r < 0)
                        return r;
                off += entry_size - before - 4;
        }
        return 0;
}

int elf_plt_entries(Elf *elf, size_t max, ElfPltFunc f, void *userdata) {
        static const char *const sections[] = { ".plt", ".plt.sec", ".plt.got" };
        _cleanup_free_ PltSlot *slots = NULL;
        size_t n_slots = 0, dynsym_index = 0, n_dynsyms;
        Elf_Data *dynsyms = NULL;
        uint64_t got = 0;
        GElf_Shdr dynsym_sh;
        Elf_Scn *scn = NULL;
        GElf_Ehdr eh;
        bool i386;
        int r;

        if (!gelf_getehdr(elf, &eh) ||
            !(eh.e_machine == EM_AARCH64 ||
              (eh.e_ident[EI_DATA] == ELFDATA2LSB && (eh.e_machine == EM_X86_64 || eh.e_machine == EM_386))))
                return 0;
        i386 = eh.e_machine == EM_386;

        while ((scn = elf_nextscn(elf, scn)))
                if (gelf_getshdr(scn, &dynsym_sh) && dynsym_sh.sh_type == SHT_DYNSYM) {
                        dynsyms = elf_getdata(scn, NULL);
                        dynsym_index = elf_ndxscn(scn);
                        break;
                }
        if (!dynsyms || !dynsyms->d_buf || gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT) == 0)
                return 0;
        n_dynsyms = dynsyms->d_size / gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);

        r = read_plt_slots(elf, dynsym_index, max, &slots, &n_slots);
        if (r < 0 || n_slots == 0)
                return r;
        if (i386) {
                GElf_Shdr sh;
                scn = elf_section_by_name(elf, ".got.plt", /* with_contents= */ false);
                if (!scn)
                        scn = elf_section_by_name(elf, ".got", /* with_contents= */ false);
                if (scn && gelf_getshdr(scn, &sh))
                        got = sh.sh_addr;
        }

        for (size_t i = 0; i < ELEMENTSOF(sections); i++) {
                Elf_Data *data;
                GElf_Shdr sh;
                uint64_t entry;

                scn = elf_section_by_name(elf, sections[i], /* with_contents= */ true);
                if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || !(sh.sh_flags & SHF_EXECINSTR))
                        continue;
                data = elf_getdata(scn, NULL);
                if (!data || !data->d_buf)
                        continue;
                if (eh.e_machine == EM_AARCH64) {
                        r = plt_section_a64(elf, data->d_buf, data->d_size, sh.sh_addr, slots, n_slots, dynsyms,
                                            n_dynsyms, dynsym_sh.sh_link, f, userdata);
                        if (r < 0)
                                return r;
                        continue;
                }
                /* 8 or 16 bytes, as the section says, or as it is aligned (lld says nothing) */
                entry = sh.sh_entsize == 8 || sh.sh_entsize == 16 ? sh.sh_entsize : sh.sh_addralign == 8 ? 8 : 16;
                for (size_t off = 0; off + entry <= data->d_size; off += entry) {
                        PltSlot key;

                        if (!plt_entry_slot((const uint8_t *) data->d_buf + off, entry, sh.sh_addr + off, i386,
                                            got, &key.got))
                                continue;
                        r = plt_name_entry(elf, slots, n_slots, &key, dynsyms, n_dynsyms, dynsym_sh.sh_link,
                                           sh.sh_addr + off, entry, f, userdata);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

uint64_t elf_plt_strtab_bytes(Elf *elf) {
        Elf_Scn *scn = NULL;
        GElf_Shdr sh;

        while ((scn = elf_nextscn(elf, scn)))
                if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_DYNSYM) {
                        scn = elf_getscn(elf, sh.sh_link);
                        return scn && gelf_getshdr(scn, &sh) ? sh.sh_size : 0;
                }
        return 0;
}
