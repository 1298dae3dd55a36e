/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * PLT entries, named NAME@plt from the relocation that fills the GOT slot each one jumps through,
 * as perf and objdump name them: no symbol table names them, and without a name of their own a
 * sample there would be taken for the function before them, or for none. x86: .plt (16-byte
 * entries after a 16-byte header, whether bound lazily or at load), .plt.sec (the entries of a PLT
 * built for indirect branch tracking, no header) and .plt.got (8 or 16 bytes each: functions also
 * called through the GOT). AArch64: .plt (16-byte entries after a 32-byte header, 24 with BTI or
 * PAC). An entry's slot is read off its jump (jmp *slot(%rip) on x86-64; jmp *slot or
 * jmp *slot(%ebx), %ebx the GOT, on i386, after an endbr and a bnd prefix; adrp x16 and
 * ldr x17, [x16, #offset] on AArch64), not guessed from the entries' order, so an entry the file
 * lays out otherwise, the header, and the lazy entries of a .plt with a .plt.sec (a push and a
 * jump to the header: nothing to name them by) are left unnamed rather than given another
 * function's name.
 */
#pragma once

#include <gelf.h>
#include <stddef.h>
#include <stdint.h>

/* One named entry: vaddr and size in the file, name ("abort@plt", len bytes, NUL-terminated).
 * < 0 stops the walk and is returned. */
typedef int (*ElfPltFunc)(uint64_t vaddr, uint64_t size, const char *name, size_t len, void *userdata);

/* Calls f for each PLT entry of elf that can be named, reading at most max relocations; 0, or
 * -ENOMEM, or what f returned. Files of other machines than x86-64, i386 and AArch64 have none. */
int elf_plt_entries(Elf *elf, size_t max, ElfPltFunc f, void *userdata);

/* The size of the string table of elf's dynamic symbols (which name the entries); 0 without. */
uint64_t elf_plt_strtab_bytes(Elf *elf);
