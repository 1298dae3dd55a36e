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

#define DYNAMIC_BYTES_MAX 65536U

/* The loader's table of relocations with addends: DT_RELA and DT_RELASZ of the PT_DYNAMIC segment,
 * read as one chunk of the file through the PT_LOAD that holds it. Section headers play no part
 * (a file may have none, or many that name the same bytes). NULL if there is none. */
static Elf_Data *dynamic_rela(Elf *elf) {
        uint64_t rela = 0, relasz = 0;
        bool have_rela = false;
        GElf_Phdr dyn_ph = {};
        Elf_Data *dyn;
        size_t phnum;

        if (elf_getphdrnum(elf, &phnum) < 0)
                return NULL;
        for (size_t i = 0; i < phnum && dyn_ph.p_type != PT_DYNAMIC; i++)
                if (!gelf_getphdr(elf, (int) i, &dyn_ph))
                        dyn_ph.p_type = PT_NULL;
        if (dyn_ph.p_type != PT_DYNAMIC || dyn_ph.p_filesz == 0)
                return NULL;
        /* a real one is well under 1 KiB; this much holds the tags wanted */
        dyn = elf_getdata_rawchunk(elf, (int64_t) dyn_ph.p_offset,
                                   MIN(dyn_ph.p_filesz, (uint64_t) DYNAMIC_BYTES_MAX), ELF_T_DYN);
        if (!dyn)
                return NULL;
        for (int i = 0;; i++) {
                GElf_Dyn d;

                if (!gelf_getdyn(dyn, i, &d) || d.d_tag == DT_NULL)
                        break;
                if (d.d_tag == DT_RELA)
                        rela = d.d_un.d_ptr, have_rela = true;
                else if (d.d_tag == DT_RELASZ)
                        relasz = d.d_un.d_val;
        }
        if (!have_rela || relasz == 0)
                return NULL;
        for (size_t i = 0; i < phnum; i++) {
                GElf_Phdr ph;

                if (!gelf_getphdr(elf, (int) i, &ph) || ph.p_type != PT_LOAD || rela < ph.p_vaddr ||
                    rela - ph.p_vaddr >= ph.p_filesz || relasz > ph.p_filesz - (rela - ph.p_vaddr))
                        continue;
                /* elf_getdata_rawchunk() refuses a chunk past the file's end (its size as fstat()
                 * gave it; where that failed, the read itself does) */
                return elf_getdata_rawchunk(elf, (int64_t) (ph.p_offset + (rela - ph.p_vaddr)), relasz,
                                            ELF_T_RELA);
        }
        return NULL;
}

int elf_relocated_copy(Elf *elf, const uint8_t *data, size_t size, uint64_t vaddr, uint8_t **ret) {
        _cleanup_free_ uint8_t *copy = NULL;
        size_t entsize;
        Elf_Data *d;
        GElf_Ehdr eh;
        unsigned type;

        *ret = NULL;
        if (!gelf_getehdr(elf, &eh) || eh.e_type != ET_DYN || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
            eh.e_ident[EI_DATA] != ELFDATA2LSB || size < 8)
                return 0;
        type = relative_type(&eh);
        entsize = gelf_fsize(elf, ELF_T_RELA, 1, EV_CURRENT);
        if (type == 0 || entsize == 0)
                return 0;
        d = dynamic_rela(elf);
        if (!d || !d->d_buf)
                return 0;
        for (size_t i = 0; i < d->d_size / entsize && i <= INT_MAX; i++) {
                GElf_Rela rela;
                uint64_t at;

                if (!gelf_getrela(d, (int) i, &rela))
                        break;
                if (GELF_R_TYPE(rela.r_info) != type || rela.r_offset < vaddr ||
                    rela.r_offset - vaddr > size - 8)
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
        *ret = TAKE_PTR(copy);
        return 0;
}

void build_id_to_hex(const uint8_t *id, size_t n, char *ret) {
        static const char digits[] = "0123456789abcdef";

        for (size_t i = 0; i < n; i++) {
                ret[2 * i] = digits[id[i] >> 4];
                ret[2 * i + 1] = digits[id[i] & 15];
        }
        ret[2 * n] = '\0';
}

size_t elf_notes_gnu_build_id(const uint8_t *notes, size_t size, size_t max, const uint8_t **ret) {
        size_t off = 0;

        while (size - off >= 12) {
                uint32_t namesz, descsz, type;
                size_t name_len, desc_len;

                memcpy(&namesz, notes + off, 4);
                memcpy(&descsz, notes + off + 4, 4);
                memcpy(&type, notes + off + 8, 4);
                off += 12;
                name_len = ((size_t) namesz + 3) & ~(size_t) 3;
                desc_len = ((size_t) descsz + 3) & ~(size_t) 3;
                if (name_len > size - off || desc_len > size - off - name_len)
                        return 0;
                if (type == NT_GNU_BUILD_ID && namesz == 4 && memcmp(notes + off, "GNU", 4) == 0 && descsz > 0 &&
                    descsz <= max) {
                        *ret = notes + off + name_len;
                        return descsz;
                }
                off += name_len + desc_len;
        }
        return 0;
}
