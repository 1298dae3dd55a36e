/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Small libelf helpers shared by the symbolizer and the unwinder.
 */
#pragma once

#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>

#include "basic/cleanup.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(Elf *, elf_end);

/* The first section named name in elf, NULL if none. with_contents: only one whose contents are in
 * the file (not SHT_NOBITS, as a separate debug file's copies of the program's sections are). */
Elf_Scn *elf_section_by_name(Elf *elf, const char *name, bool with_contents);

/* data, size bytes of elf at vaddr, with the load bias 0 added by the relocations of a PIE or
 * shared library (R_X86_64_RELATIVE, R_AARCH64_RELATIVE, from the loader's own table: DT_RELA of
 * the dynamic segment) that fall wholly inside: the addresses the file means there. Linkers write
 * most of them in place as well (ld.bfd, gold, Go's own), but RELA lets them leave 0 (lld does):
 * then *ret is a copy with them put in, for the caller to free; NULL when the data holds every one
 * already. Little-endian 64-bit files only (NULL for others). Returns 0, or -ENOMEM. */
int elf_relocated_copy(Elf *elf, const uint8_t *data, size_t size, uint64_t vaddr, uint8_t **ret);

/* n bytes of a build id as lowercase hex into ret, which holds 2n + 1 bytes. */
void build_id_to_hex(const uint8_t *id, size_t n, char *ret);

/*
 * The GNU build id (an NT_GNU_BUILD_ID note named "GNU") in a run of ELF notes as a note section
 * holds them, such as /sys/kernel/notes (the running kernel's .notes section): each note's 12-byte
 * header (name size, descriptor size, type; host byte order), then its name and its descriptor,
 * each padded to 4 bytes. Returns the id's length (at most max) and points *ret at it, or 0.
 */
size_t elf_notes_gnu_build_id(const uint8_t *notes, size_t size, size_t max, const uint8_t **ret);
