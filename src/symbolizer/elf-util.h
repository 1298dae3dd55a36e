/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Small libelf helpers shared by the symbolizer and the unwinder.
 */
#pragma once

#include <gelf.h>
#include <stdbool.h>

#include "basic/cleanup.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(Elf *, elf_end);

/* The first section named name in elf, NULL if none. with_contents: only one whose contents are in
 * the file (not SHT_NOBITS, as a separate debug file's copies of the program's sections are). */
Elf_Scn *elf_section_by_name(Elf *elf, const char *name, bool with_contents);
