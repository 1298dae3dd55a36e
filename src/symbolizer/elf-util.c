/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "basic/alloc-util.h"
#include "basic/macro.h"
#include "symbolizer/elf-util.h"

Elf_Scn *elf_section_by_name(Elf *elf, const char *name, bool with_contents) {
        Elf_Scn *scn = NULL;
        size_t shstrndx;

        if (elf_getshdrstrndx(elf, &shstrndx) < 0)
                return NULL;
        while ((scn = elf_nextscn(elf, scn))) {
                GElf_Shdr sh;
                const char *n;

                if (!gelf_getshdr(scn, &sh) || (with_contents && sh.sh_type == SHT_NOBITS))
                        continue;
                n = elf_strptr(elf, shstrndx, sh.sh_name);
                if (n && streq(n, name))
                        return scn;
        }
        return NULL;
}

/* The type of a relocation that adds the load bias to its addend, 0 for a machine not known. */
static unsigned relative_type(const GElf_Ehdr *eh) {
        switch (eh->e_machine) {
        case EM_X86_64:
                return R_X86_64_RELATIVE;
        case EM_AARCH64:
                return R_AARCH64_RELATIVE;
        default:
                return 0;
        }
}

static uint64_t load_le64(const uint8_t *p) {
        uint64_t v = 0;

        for (unsigned i = 0; i < 8; i++)
                v |= (uint64_t) p[i] << (8 * i);
        return v;
}

int elf_relocated_copy(Elf *elf, const uint8_t *data, size_t size, uint64_t vaddr, uint8_t **ret) {
        _cleanup_free_ uint8_t *copy = NULL;
        Elf_Scn *scn = NULL;
        GElf_Ehdr eh;
        unsigned type;

        *ret = NULL;
        if (!gelf_getehdr(elf, &eh) || eh.e_type != ET_DYN || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
            eh.e_ident[EI_DATA] != ELFDATA2LSB || size < 8)
                return 0;
        type = relative_type(&eh);
        if (type == 0)
                return 0;
        while ((scn = elf_nextscn(elf, scn))) {
                GElf_Shdr sh;
                Elf_Data *d;

                /* the loader's (SHF_ALLOC), not ones kept for a later link (--emit-relocs) */
                if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !(sh.sh_flags & SHF_ALLOC) ||
                    sh.sh_entsize == 0)
                        continue;
                d = elf_getdata(scn, NULL);
                if (!d || !d->d_buf)
                        continue;
                for (size_t i = 0; i < d->d_size / sh.sh_entsize && i <= INT_MAX; i++) {
                        GElf_Rela rela;
                        uint64_t at;

                        if (!gelf_getrela(d, (int) i, &rela) || GELF_R_TYPE(rela.r_info) != type ||
                            rela.r_offset < vaddr || rela.r_offset - vaddr > size - 8)
                                continue;
                        at = rela.r_offset - vaddr;
                        if (load_le64((copy ?: data) + at) == (uint64_t) rela.r_addend)
                                continue; /* in place already, as most linkers leave it */
                        if (!copy) {
                                copy = memdup(data, size);
                                if (!copy)
                                        return -ENOMEM;
                        }
                        for (unsigned k = 0; k < 8; k++)
                                copy[at + k] = (uint8_t) ((uint64_t) rela.r_addend >> (8 * k));
                }
        }
        *ret = TAKE_PTR(copy);
        return 0;
}
