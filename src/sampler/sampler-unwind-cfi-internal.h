/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What sampler-unwind-cfi-load.c (reading a file's CFI) and sampler-unwind-cfi.c (rules from it)
 * share: the table of one file.
 */
#pragma once

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stdint.h>

#include "sampler/sampler-unwind-cfi.h"

#define UNWIND_SEGMENTS_MAX 16U
#define UNWIND_BUILD_ID_BYTES_MAX 64U

/* The DWARF register numbers of one architecture, and its word. */
typedef struct UnwindArch {
        uint8_t sp, bp, ra, bx;
        uint8_t lr; /* a link register that holds the return address (arm64's x30, = ra); 0xff: none */
        uint8_t scratch[UNWIND_SCRATCH_REGS]; /* UnwindRegs.scratch's registers; 0xff: none */
        uint8_t word; /* bytes */
        uint16_t machine; /* EM_X86_64, EM_386, EM_AARCH64; 0: none of these (word 0) */
} UnwindArch;

/* A Go function whose flags end Go's traceback (sampler-unwind-go.c): [start, end), in the
 * addresses the CFI speaks of. A Go runtime flags a few dozen; a table that flags more than
 * UNWIND_GO_FUNCS_MAX is none a Go linker wrote, and none of its flags is used. */
#define UNWIND_GO_FUNCS_MAX 4096U
typedef struct UnwindGoFunc {
        uint64_t start, end;
        uint8_t flags; /* GOPCLNTAB_FLAG_TOPFRAME, GOPCLNTAB_FLAG_SPWRITE */
} UnwindGoFunc;

typedef struct UnwindSegment {
        uint64_t offset, vaddr, filesz;
} UnwindSegment;

struct UnwindCfiFile {
        Elf *elf;
        Dwarf_CFI *cfi; /* from .eh_frame; NULL: none */
        /* .eh_frame_hdr and .eh_frame copied out in the order libdw wants (eh_frame_cfi()), or NULL:
         * cfi is read from elf itself. */
        void *eh_image;
        Elf *eh_elf;
        /* From .debug_frame, asked where .eh_frame has no entry (Go programs have no .eh_frame; C
         * built with -g -fno-asynchronous-unwind-tables gets one only for its start files). libdw
         * reads a .debug_frame through a Dwarf only, and dwarf_begin_elf() loads and decompresses
         * every debug section of the file it is given: it is given an ELF image in memory that
         * holds that one section, so a large program's DWARF is never held for its unwind tables. */
        Dwarf_CFI *debug_cfi; /* owned by debug_dwarf */
        void *debug_image;
        Elf *debug_elf;
        Dwarf *debug_dwarf;
        UnwindSegment segments[UNWIND_SEGMENTS_MAX];
        size_t n_segments;
        uint8_t build_id[UNWIND_BUILD_ID_BYTES_MAX];
        size_t build_id_len;
        UnwindArch arch; /* word 0: none of x86-64, i386, arm64 */
        uint64_t entry;  /* e_entry, 0 if none */
        size_t bytes;   /* what it holds in memory, estimated: the CFI sections libdw read */
        /* .eh_frame_hdr's search table (in the image or the file's own copy of the section):
         * count entries of 8 bytes, function start and FDE, each relative to table_base. libdw
         * keeps each FDE it has parsed for as long as the CFI: seen[] has a bit for each entry
         * looked up so far, each counted as UNWIND_LIBDW_FDE_BYTES. Without a table libdw reads
         * the FDEs in order, and the whole section is counted from the start. */
        const uint8_t *table;
        uint32_t table_count;
        uint64_t table_base;
        /* .eh_frame's bytes where libdw reads them, and its address: the FDE the search table gives
         * is checked before libdw executes it (unwind_cfi_entry_ok()), once an entry: checked[] has
         * two bits for each, whether it was checked and whether it passed (counted in bytes). */
        const uint8_t *eh_frame;
        size_t eh_frame_size;
        uint64_t eh_frame_addr;
        bool elf64;
        uint8_t *seen;
        uint8_t *checked;
        char *debuglink; /* the name in .gnu_debuglink, NULL if none */
        bool debug_file_never; /* no separate debug file to look for: a copy in memory, or one taken */
        bool debug_host_tried; /* view 0, the host's, looked in */
        /* The last other views a debug file was looked for in: n_debug_views counts them all,
         * each at [its number % UNWIND_DEBUG_VIEWS_MAX]. */
        uint64_t debug_views[UNWIND_DEBUG_VIEWS_MAX];
        uint32_t n_debug_views;
        uint64_t debug_file_retry_usec; /* one was too large for the room left: not before then */
        UnwindGoFunc *go_funcs; /* a Go program's, sorted; NULL: none */
        size_t n_go_funcs;
        /* An arm64 file's PLT stubs, [start, end) in the CFI's addresses: .plt past its header
         * (PLT0, the lazy resolver's entry, which pushes onto the stack) and .iplt. 0, 0: none. */
        uint64_t plt_start[2], plt_end[2];
};

/* What libdw keeps of each FDE it parses (elfutils' fde.c): a 40-byte FDE and a 24-byte search
 * tree node, with malloc's headers; 82 to 84 bytes an FDE measured with Debian 12's elfutils 0.188
 * over the FDEs of gcc's cc1, libc and python3. */
#define UNWIND_LIBDW_FDE_BYTES 80U
/* libdw, having no search table for a section (.debug_frame, an .eh_frame without .eh_frame_hdr as
 * static programs have), parses its FDEs in order up to the one it looks for and keeps each:
 * counted in full from the start, as this many bytes per byte of the section (about 80 an FDE
 * read so, measured with libLLVM-14; an FDE takes 24 bytes of the section or more). */
#define UNWIND_LIBDW_SCAN_FACTOR 3U

/* Marks the search table's entry for the FDE at vaddr as read by libdw; true if it was not yet
 * (the caller counts UNWIND_LIBDW_FDE_BYTES). */
bool unwind_cfi_file_fde_seen(UnwindCfiFile *f, uint64_t vaddr);

/* Whether libdw may execute the CFI entry at offset off of a section (d, size bytes; .eh_frame's
 * format or .debug_frame's), with its CIE: no register or nesting of states that would make it
 * allocate without bound, no instruction unknown (sampler-unwind-cfi-check.c). An entry that
 * cannot be read is fine: libdw reads none of it either. */
bool unwind_cfi_entry_ok(const uint8_t *d, size_t size, bool eh_frame, bool elf64, uint64_t off);
/* Each FDE of a section as libdw reads one without a search table: in order from the start. */
bool unwind_cfi_section_ok(const uint8_t *d, size_t size, bool eh_frame, bool elf64);

/* Reads the flags of a Go program's functions from its .gopclntab into f (fd: the file, -1 for an
 * image in memory, which is no Go program's); nothing for other files. */
void unwind_go_funcs_load(UnwindCfiFile *f, int fd);
/* The flags of the Go function at vaddr (GOPCLNTAB_FLAG_*), 0 if none or not a Go program. */
uint8_t unwind_go_flags(const UnwindCfiFile *f, uint64_t vaddr);
