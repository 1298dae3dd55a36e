/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Go's own function table, .gopclntab: what names the functions of a Go program stripped with
 * `-ldflags="-s -w"` (no .symtab, no DWARF), as Kubernetes, containerd and many vendors ship them.
 * The runtime needs the table for its own tracebacks, so it survives every strip. Formats read
 * (src/runtime/symtab.go, pcHeader and _func, of the Go releases named):
 *
 *   Go 1.2-1.15   magic 0xfffffffb: nfunc, then functab entries { entry pc, func offset } of
 *                 pointer size; func offsets and names from the table's start
 *   Go 1.16-1.17  magic 0xfffffffa: functab entries { entry pc, func offset } of pointer size
 *   Go 1.18-1.19  magic 0xfffffff0: entries { uint32 entry - textStart, uint32 func offset }
 *   Go 1.20 on    magic 0xfffffff1: as 1.18
 *
 * and in each, a function's name at funcnametab + _func.nameOff (the table's start before 1.16),
 * and from Go 1.17 on its _func.flag (src/runtime/runtime2.go's _func of 1.17, 1.18 and 1.20, which
 * adds startLine; 1.21 and 1.22 as 1.20), which tells Go's own traceback where a stack ends.
 * Go 1.0-1.1's table, another format, is not read. Every offset is checked against the section: the file is untrusted.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Longer names are cut there (tprof keeps 1023 bytes of a name). */
#define GOPCLNTAB_NAME_BYTES_MAX 1024U

/* One function: its entry address (link-time, like an ELF symbol's value), its size (to the next
 * entry) and its name: name_len bytes (1 to GOPCLNTAB_NAME_BYTES_MAX, no NUL among them) inside
 * the table, not NUL-terminated when cut. Returns < 0 to stop. */
typedef int (*GoFuncCallback)(uint64_t entry, uint64_t size, const char *name, size_t name_len, void *userdata);

/* Whether p (16 bytes at least) starts like a table of a release read here, with pointers of
 * ptr_size bytes: its magic, two zero pads, the instruction size quantum (1, 2 or 4) and the
 * pointer size (header fields take no relocations). A start only: gopclntab_parse() decides. */
bool gopclntab_header_like(const uint8_t *p, unsigned ptr_size);

/*
 * Calls cb for each function of the table in data (its bytes, size long, with the relocations of a
 * PIE applied: see elf_relocated_copy()). big_endian: the file's byte order. budget, unless NULL:
 * how many functab entries may still be looked at, counted down (a search through many tables
 * that only start like one shares one). Returns the number of functions, -EPROTONOSUPPORT for a
 * table of another Go release, -EBADMSG for a damaged one (a _func record whose entry is not its
 * functab entry among the damage), -ETIME when the budget ran out, or cb's error.
 */
int gopclntab_parse(const uint8_t *data, size_t size, bool big_endian, uint64_t *budget, GoFuncCallback cb,
                    void *userdata);

/* _func.flag's bits (src/runtime/symtab.go of Go 1.17-1.20, internal/abi/symtab.go of 1.21 on):
 * TOPFRAME, the outermost function of its stack (runtime.goexit, runtime.mstart, runtime.rt0_go),
 * where Go's traceback ends whole; SPWRITE, a function that writes the stack pointer other than by
 * a constant (runtime.mcall, runtime.systemstack, runtime.gogo, runtime.morestack), past which the
 * traceback cannot find the caller's frame: it stops there, the unwinding incomplete. */
#define GOPCLNTAB_FLAG_TOPFRAME 0x01U
#define GOPCLNTAB_FLAG_SPWRITE 0x02U

/* One function's flags (0 in tables of Go before 1.17, which have none), its entry and size as in
 * GoFuncCallback, and its name (name_len 0: none, name may be NULL). Returns < 0 to stop. */
typedef int (*GoFlagsCallback)(uint64_t entry, uint64_t size, uint8_t flags, const char *name, size_t name_len,
                               void *userdata);

/* As gopclntab_parse(), with each function's flags: every function with a non-empty range,
 * named or not. */
int gopclntab_parse_flags(const uint8_t *data, size_t size, bool big_endian, uint64_t *budget, GoFlagsCallback cb,
                          void *userdata);
