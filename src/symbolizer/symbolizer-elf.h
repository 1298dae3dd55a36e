/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One ELF file's function symbols, read with libelf into a compact sorted table: .symtab, else the
 * separate debug file found by build-id (/usr/lib/debug/.build-id/xx/yyyy.debug) or .gnu_debuglink,
 * else .dynsym plus MiniDebugInfo (.gnu_debugdata, an xz-compressed ELF with the local symbols).
 * Also the PT_LOAD segments, which turn a file offset (what a mapping gives us) into the ELF
 * virtual address symbols are stated in; that covers executables, PIE and shared libraries alike.
 * For a file with no better symbols than .dynsym (most distribution binaries), the start of every
 * function compiled with unwind tables, from the binary search table of .eh_frame_hdr: it cannot
 * name a static function, but it can tell which function an address is in, which is all a
 * function-level frame needs.
 *
 * Files are untrusted: libelf does the bounds checks on headers and sections, we bound what we
 * keep (symbols, name bytes, decompressed size) and check every count and offset ourselves before
 * use. A file that is not ELF, or is broken, gives a table with no symbols, never a crash.
 */
#pragma once

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ELF_SYMBOLS_MAX 2097152U
#define ELF_BUILD_ID_BYTES_MAX 64U
#define ELF_MINIDEBUG_BYTES_MAX (64U * 1024U * 1024U)
#define ELF_SEGMENTS_MAX 64U /* at most 64: one bit each in a mask */
/* .eh_frame_hdr table entries we accept (8 bytes each kept), and the longest function we believe in. */
#define ELF_FUNCTION_STARTS_MAX 4194304U
#define ELF_FUNCTION_BYTES_MAX (1024U * 1024U)

typedef enum ElfSymbolSource {
        ELF_SYMBOLS_NONE,
        ELF_SYMBOLS_SYMTAB,
        ELF_SYMBOLS_DEBUG_FILE,
        ELF_SYMBOLS_DYNSYM,
        ELF_SYMBOLS_MINIDEBUG, /* .dynsym merged with .gnu_debugdata */
        ELF_SYMBOLS_GOPCLNTAB, /* a Go program's own function table (symbolizer-gopclntab.h) */
        _ELF_SYMBOLS_SOURCE_MAX,
        _ELF_SYMBOLS_SOURCE_INVALID = -22,
} ElfSymbolSource;

typedef struct ElfSymbols ElfSymbols;

/*
 * Reads fd (any position; we use pread). debug_roots: NULL-terminated list of directories under
 * which /usr/lib/debug is looked up (e.g. "/proc/PID/root", ""), or NULL for just "".
 * path is the file's name as mapped, for .gnu_debuglink lookups; may be NULL.
 * Returns -ENOEXEC for a file that is not ELF (the table is still usable: no symbols, no segments).
 */
int elf_symbols_load_fd(int fd, const char *path, const char *const *debug_roots, ElfSymbols **ret);
int elf_symbols_load_path(const char *path, const char *const *debug_roots, ElfSymbols **ret);
/* An ELF image in memory (the vDSO); data is copied. No debug files are looked up. */
int elf_symbols_load_memory(const void *data, size_t size, ElfSymbols **ret);
ElfSymbols *elf_symbols_new_empty(void);
ElfSymbols *elf_symbols_free(ElfSymbols *e);

/* Bytes the table holds, for cache accounting. */
size_t elf_symbols_bytes(const ElfSymbols *e);
size_t elf_symbols_count(const ElfSymbols *e);
ElfSymbolSource elf_symbols_source(const ElfSymbols *e);
const char *elf_symbol_source_to_string(ElfSymbolSource s);
/* Build-id bytes, or NULL with *ret_len 0. */
const uint8_t *elf_symbols_build_id(const ElfSymbols *e, size_t *ret_len);
/* The same in lowercase hex (as Frame.build_id carries it), or NULL. */
const char *elf_symbols_build_id_hex(const ElfSymbols *e);

/* File offset -> ELF virtual address through the PT_LOAD segments; false if no segment holds it. */
bool elf_symbols_offset_to_vaddr(const ElfSymbols *e, uint64_t offset, uint64_t *ret_vaddr);
/* The file offsets [*ret_start, *ret_end) around offset that elf_symbols_offset_to_vaddr() turns
 * into addresses as it turns offset: by the same segment, with the same difference. */
bool elf_symbols_offset_span(const ElfSymbols *e, uint64_t offset, uint64_t *ret_start, uint64_t *ret_end);
/* Function covering vaddr. The name lives as long as e. *ret_extent (when not NULL): how many bytes
 * from the function's start (vaddr - *ret_offset) give this very symbol too, at most UINT64_MAX -
 * its start. */
bool elf_symbols_lookup(const ElfSymbols *e, uint64_t vaddr, const char **ret_name, uint64_t *ret_offset,
                        uint64_t *ret_extent);
/* Whether no symbol covers vaddr (elf_symbols_lookup() finds none), and then the addresses around
 * it that none covers either: [*ret_start, *ret_end). */
bool elf_symbols_uncovered(const ElfSymbols *e, uint64_t vaddr, uint64_t *ret_start, uint64_t *ret_end);

/*
 * Start of the function vaddr is in, from .eh_frame_hdr (read only when the source is
 * ELF_SYMBOLS_DYNSYM or ELF_SYMBOLS_NONE): *ret_offset is vaddr minus the greatest function start
 * at or below it. False if there is none, if vaddr is ELF_FUNCTION_BYTES_MAX or more past it, or
 * if the two are not in one executable PT_LOAD segment. A function without unwind information is
 * taken for the end of the one before it. *ret_extent (when not NULL): how many bytes from that
 * start give it too.
 */
bool elf_symbols_function_start(const ElfSymbols *e, uint64_t vaddr, uint64_t *ret_offset, uint64_t *ret_extent);
size_t elf_symbols_function_starts_count(const ElfSymbols *e);

/*
 * The .eh_frame_hdr parser, on its own for the tests: data/size is the section's contents, which
 * the file maps at section_vaddr. Returns the function start addresses (initial locations of the
 * FDEs) sorted and without duplicates in *ret (NULL when there are none), their number in *ret_n.
 * Only the encodings toolchains emit are understood: version 1, a 4-byte eh_frame_ptr, a udata4
 * count and a datarel|sdata4 table. Returns -EOPNOTSUPP for anything else, -EBADMSG if the table
 * does not fit in size, -E2BIG beyond ELF_FUNCTION_STARTS_MAX entries.
 */
int elf_parse_eh_frame_hdr(const uint8_t *data, size_t size, uint64_t section_vaddr, bool big_endian,
                           uint64_t **ret, size_t *ret_n);
#define EH_FRAME_HDR_HEADER_BYTES 12U /* version, 3 encodings, eh_frame_ptr, fde_count */
#define EH_FRAME_HDR_BYTES_MAX (EH_FRAME_HDR_HEADER_BYTES + 8ULL * ELF_FUNCTION_STARTS_MAX)

/*
 * Calls fn with each Go function table elf holds (symbolizer-gopclntab.h), found as the symbolizer
 * finds it in stripped programs and PIEs: data the table's bytes to its section's end, its
 * relocations put in, and a budget of functab entries for gopclntab_parse(), shared by the tables
 * of a section searched. fn returns 0 to go on to the next candidate (not a table), anything else
 * to stop, which elf_go_tables() returns; 0 when none was taken, or < 0 on an error of its own.
 */
typedef int (*ElfGoTableFunc)(const uint8_t *data, size_t size, uint64_t *budget, void *userdata);
int elf_go_tables(Elf *elf, ElfGoTableFunc fn, void *userdata);

#include "basic/cleanup.h"
DEFINE_TRIVIAL_CLEANUP_FUNC(ElfSymbols *, elf_symbols_free);
