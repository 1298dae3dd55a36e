/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>
#include <string.h>

#include "basic/macro.h"
#include "sampler/unwind-elf-image.h"

#define ALIGN8(x) (((x) + 7) & ~(size_t) 7)

void *elf_image_new(const GElf_Ehdr *eh, const ElfImageSection *sections, size_t n, size_t *ret_size) {
        size_t off = sizeof(Elf64_Ehdr), names_off, names_size = 1 + sizeof(".shstrtab"), shdrs_off, size;
        uint8_t *image;

        for (size_t i = 0; i < n; i++) {
                off = ALIGN8(off) + sections[i].size;
                names_size += strlen(sections[i].name) + 1;
        }
        names_off = off;
        shdrs_off = ALIGN8(names_off + names_size);
        size = shdrs_off + (n + 2) * sizeof(Elf64_Shdr);
        image = calloc(1, size);
        if (!image)
                return NULL;

        Elf64_Ehdr *h = (Elf64_Ehdr *) image;
        memcpy(h->e_ident, eh->e_ident, EI_NIDENT);
        h->e_type = eh->e_type;
        h->e_machine = eh->e_machine;
        h->e_version = EV_CURRENT;
        h->e_ehsize = sizeof(Elf64_Ehdr);
        h->e_shoff = shdrs_off;
        h->e_shentsize = sizeof(Elf64_Shdr);
        h->e_shnum = (Elf64_Half) (n + 2);
        h->e_shstrndx = (Elf64_Half) (n + 1);

        Elf64_Shdr *sh = (Elf64_Shdr *) (image + shdrs_off);
        char *names = (char *) image + names_off;
        size_t name = 1;
        off = sizeof(Elf64_Ehdr);
        for (size_t i = 0; i < n; i++) {
                off = ALIGN8(off);
                memcpy(image + off, sections[i].data, sections[i].size);
                strcpy(names + name, sections[i].name);
                sh[i + 1] = (Elf64_Shdr) {
                        .sh_name = (Elf64_Word) name, .sh_type = SHT_PROGBITS,
                        .sh_flags = sections[i].addr != 0 ? SHF_ALLOC : 0,
                        .sh_addr = sections[i].addr, .sh_offset = off, .sh_size = sections[i].size,
                        .sh_addralign = sections[i].align ?: 1,
                };
                name += strlen(sections[i].name) + 1;
                off += sections[i].size;
        }
        strcpy(names + name, ".shstrtab");
        sh[n + 1] = (Elf64_Shdr) {
                .sh_name = (Elf64_Word) name, .sh_type = SHT_STRTAB, .sh_offset = names_off, .sh_size = names_size,
                .sh_addralign = 1,
        };
        *ret_size = size;
        return image;
}
