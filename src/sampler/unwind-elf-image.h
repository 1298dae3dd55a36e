/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An ELF image in memory that holds a few sections copied out of a file, for libdw to read CFI
 * from: only what it needs is held (a large program's other DWARF is never loaded with its
 * .debug_frame), and in the order it looks for them (.eh_frame_hdr before .eh_frame).
 */
#pragma once

#include <gelf.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ElfImageSection {
        const char *name;
        uint64_t addr;  /* sh_addr: where the file maps it (pc-relative CFI is stated against it) */
        uint64_t align; /* sh_addralign */
        const void *data;
        size_t size;
} ElfImageSection;

/*
 * An image of eh's class (64- or 32-bit), byte order, type and machine (which must be the host's
 * byte order), holding the n sections as SHT_PROGBITS in the order given, then their names: for
 * elf_memory(). NULL on ENOMEM; *ret_size its bytes. Free with free() once its Elf is ended.
 */
void *elf_image_new(const GElf_Ehdr *eh, const ElfImageSection *sections, size_t n, size_t *ret_size);
