/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "basic/macro.h"
#include "sampler/unwind-elf-image.h"

#define ALIGN8(x) (((x) + 7) & ~(size_t) 7)

/* Section header i of the image, in the class's layout. */
static void put_shdr(uint8_t *shdrs, size_t i, bool is32, const Elf64_Shdr *sh) {
        if (is32)
                ((Elf32_Shdr *) shdrs)[i] = (Elf32_Shdr) {
                        .sh_name = sh->sh_name, .sh_type = sh->sh_type, .sh_flags = (Elf32_Word) sh->sh_flags,
                        .sh_addr = (Elf32_Addr) sh->sh_addr, .sh_offset = (Elf32_Off) sh->sh_offset,
                        .sh_size = (Elf32_Word) sh->sh_size, .sh_addralign = (Elf32_Word) sh->sh_addralign,
                };
        else
                ((Elf64_Shdr *) shdrs)[i] = *sh;
}

void *elf_image_new(const GElf_Ehdr *eh, const ElfImageSection *sections, size_t n, size_t *ret_size) {
        bool is32 = eh->e_ident[EI_CLASS] == ELFCLASS32;
        size_t ehdr_size = is32 ? sizeof(Elf32_Ehdr) : sizeof(Elf64_Ehdr);
        size_t shdr_size = is32 ? sizeof(Elf32_Shdr) : sizeof(Elf64_Shdr);
        size_t off = ehdr_size, names_off, names_size = 1 + sizeof(".shstrtab"), shdrs_off, size;
        uint8_t *image;

        for (size_t i = 0; i < n; i++) {
                off = ALIGN8(off) + sections[i].size;
                names_size += strlen(sections[i].name) + 1;
        }
        names_off = off;
        shdrs_off = ALIGN8(names_off + names_size);
        size = shdrs_off + (n + 2) * shdr_size;
        /* A 32-bit image's offsets, addresses and sizes are 32-bit fields. */
        if (is32 && size > UINT32_MAX)
                return NULL;
        image = calloc(1, size);
        if (!image)
                return NULL;

        if (is32) {
                Elf32_Ehdr *h = (Elf32_Ehdr *) image;
                *h = (Elf32_Ehdr) { .e_type = eh->e_type, .e_machine = eh->e_machine, .e_version = EV_CURRENT,
                                    .e_ehsize = sizeof(Elf32_Ehdr), .e_shoff = (Elf32_Off) shdrs_off,
                                    .e_shentsize = sizeof(Elf32_Shdr), .e_shnum = (Elf32_Half) (n + 2),
                                    .e_shstrndx = (Elf32_Half) (n + 1) };
                memcpy(h->e_ident, eh->e_ident, EI_NIDENT);
        } else {
                Elf64_Ehdr *h = (Elf64_Ehdr *) image;
                *h = (Elf64_Ehdr) { .e_type = eh->e_type, .e_machine = eh->e_machine, .e_version = EV_CURRENT,
                                    .e_ehsize = sizeof(Elf64_Ehdr), .e_shoff = shdrs_off,
                                    .e_shentsize = sizeof(Elf64_Shdr), .e_shnum = (Elf64_Half) (n + 2),
                                    .e_shstrndx = (Elf64_Half) (n + 1) };
                memcpy(h->e_ident, eh->e_ident, EI_NIDENT);
        }

        char *names = (char *) image + names_off;
        size_t name = 1;
        off = ehdr_size;
        for (size_t i = 0; i < n; i++) {
                off = ALIGN8(off);
                memcpy(image + off, sections[i].data, sections[i].size);
                strcpy(names + name, sections[i].name);
                put_shdr(image + shdrs_off, i + 1, is32,
                         &(Elf64_Shdr) {
                                 .sh_name = (Elf64_Word) name, .sh_type = SHT_PROGBITS,
                                 .sh_flags = sections[i].addr != 0 ? SHF_ALLOC : 0,
                                 .sh_addr = sections[i].addr, .sh_offset = off, .sh_size = sections[i].size,
                                 .sh_addralign = sections[i].align ?: 1,
                         });
                name += strlen(sections[i].name) + 1;
                off += sections[i].size;
        }
        strcpy(names + name, ".shstrtab");
        put_shdr(image + shdrs_off, n + 1, is32,
                 &(Elf64_Shdr) {
                         .sh_name = (Elf64_Word) name, .sh_type = SHT_STRTAB, .sh_offset = names_off,
                         .sh_size = names_size, .sh_addralign = 1,
                 });
        *ret_size = size;
        return image;
}
