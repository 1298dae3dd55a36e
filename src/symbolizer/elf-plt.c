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

        if (!gelf_getehdr(elf, &eh) || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
            (eh.e_machine != EM_X86_64 && eh.e_machine != EM_386))
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
                /* 8 or 16 bytes, as the section says, or as it is aligned (lld says nothing) */
                entry = sh.sh_entsize == 8 || sh.sh_entsize == 16 ? sh.sh_entsize : sh.sh_addralign == 8 ? 8 : 16;
                for (size_t off = 0; off + entry <= data->d_size; off += entry) {
                        char name[PROFILE_NAME_BYTES_MAX];
                        const PltSlot *slot;
                        PltSlot key;
                        const char *sym_name;
                        GElf_Sym sym;
                        size_t l;

                        if (!plt_entry_slot((const uint8_t *) data->d_buf + off, entry, sh.sh_addr + off, i386,
                                            got, &key.got))
                                continue;
                        slot = bsearch(&key, slots, n_slots, sizeof(PltSlot), plt_slot_cmp);
                        if (!slot || slot->sym >= n_dynsyms || slot->sym > INT_MAX ||
                            !gelf_getsym(dynsyms, (int) slot->sym, &sym))
                                continue;
                        sym_name = elf_strptr(elf, dynsym_sh.sh_link, sym.st_name);
                        if (!sym_name || !*sym_name)
                                continue;
                        /* A long name loses its end, not its "@plt". */
                        l = strnlen(sym_name, sizeof(name) - 1 - PLT_SUFFIX_LEN);
                        memcpy(name, sym_name, l);
                        memcpy(name + l, "@plt", PLT_SUFFIX_LEN + 1);
                        r = f(sh.sh_addr + off, entry, name, l + PLT_SUFFIX_LEN, userdata);
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
