/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One ELF file's call frame information (.eh_frame through libdw's CFI reader, the binary search
 * table of .eh_frame_hdr included) turned into compact per-address rules for an x86 or arm64
 * unwinder (an x86-64 file's, an i386 file's for a 32-bit process: 4-byte words, its own register
 * numbers; an arm64 file's, whose return address is in the link register x30 until the function
 * saves it, and may be signed by pointer authentication):
 * where the canonical frame address (CFA) is (a register plus an offset), where the caller's
 * return address and frame pointer were saved (an offset from the CFA, or, arm64's, still in the
 * link register), or that the address is the
 * outermost frame (the return address column is undefined, as at _start and thread starts, or
 * the address is just past the ELF entry point and has no FDE, as the dynamic loader's). Rules
 * that do not fit that shape (PLT stubs, realigned stacks: CFA given by a DWARF expression) are
 * evaluated on the spot by a small DWARF expression machine, which reads memory only from the
 * stack copy the caller hands it. Also the PT_LOAD segments, which turn a mapping's file offset
 * into the address space the CFI is stated in, and the build id, by which the caller shares one
 * table among identical files.
 *
 * Files are untrusted: libelf and libdw bound every read of the file; we bound what we evaluate
 * (expression length and stack depth) and never dereference anything but the stack copy.
 * The module does no caching of rules: the caller (sampler-unwind.c) keeps a rule cache.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* DWARF register numbers of x86-64 (System V psABI, figure 3.36); a rule names the CFA's register
 * by these whatever the file's architecture. i386's (its psABI, table 2.14): esp 4, ebp 5, the
 * return address column 8. arm64's (DWARF for the Arm 64-bit Architecture, 4.1): sp 31, the frame
 * pointer x29, the link register x30, which is the return address column. */
#define UNWIND_DWARF_REG_BP 6U
#define UNWIND_DWARF_REG_SP 7U
#define UNWIND_DWARF_REG_RA 16U

typedef enum UnwindRuleKind {
        UNWIND_RULE_NONE,   /* no FDE covers the address */
        UNWIND_RULE_END,    /* the outermost frame: the return address is undefined */
        UNWIND_RULE_SIMPLE, /* CFA = reg + cfa_off, RA at CFA + ra_off, BP per bp_kind */
        UNWIND_RULE_EXPR,   /* anything else: evaluate with unwind_cfi_file_step() */
        _UNWIND_RULE_KIND_MAX,
        _UNWIND_RULE_KIND_INVALID = -22,
} UnwindRuleKind;

typedef enum UnwindBpKind {
        UNWIND_BP_SAME,      /* the caller's BP is this frame's */
        UNWIND_BP_UNDEFINED, /* unknown from here on */
        UNWIND_BP_AT_CFA,    /* saved at CFA + bp_off */
} UnwindBpKind;

typedef struct UnwindRule {
        uint8_t kind;    /* UnwindRuleKind */
        uint8_t cfa_reg; /* UNWIND_DWARF_REG_SP or _BP (x86-64's numbers, for any architecture) */
        uint8_t bp_kind; /* UnwindBpKind */
        bool signal;     /* a signal frame: the return address is exact, not after a call */
        int32_t cfa_off, ra_off, bp_off;
        uint8_t bx_kind; /* UnwindBpKind, for rbx/ebx (ld.so's _dl_runtime_resolve keeps its CFA in it) */
        bool debug_frame; /* from .debug_frame (Go's, which the Go toolchain writes instead of .eh_frame) */
        uint8_t go_flags; /* a Go function's where Go's traceback stops (GOPCLNTAB_FLAG_*), any kind */
        int32_t bx_off;
        bool ra_in_lr; /* SIMPLE: the return address is still in the link register (arm64: a leaf, a
                        * prologue before it saves x30); ra_off unused */
} UnwindRule;

/* The caller-saved registers a sample carries besides ip, sp, bp and bx: ax, cx, dx, si, di, r8,
 * r9, r10, r11 in this order (eax ... edi of a 32-bit process). Hand-written code may keep its CFA
 * in one of them (OpenSSL's ChaCha20, SHA-512, AES-GCM: r9, rax, r10, r11, rsi) while it realigns
 * the stack pointer. Known in the interrupted frame, and in the frame a signal interrupted (its
 * signal frame saved them); in the caller of a call they are lost. */
#define UNWIND_SCRATCH_REGS 9U

/* The registers a step needs and gives: ip, sp, bp; bp_valid false once BP is unknown; bit i of
 * scratch_valid set while scratch[i] is known. lr: arm64's link register (x30), known in the
 * interrupted frame only: a step leaves it unknown, since a caller that called cannot have its
 * return address there still. sp_unknown: a frame-pointer step on arm64 left the caller's stack
 * pointer unknown (its frame record need not sit at the top of its frame): a rule that needs it
 * cannot be used. */
typedef struct UnwindRegs {
        uint64_t ip, sp, bp, bx, lr;
        bool bp_valid, bx_valid, lr_valid, sp_unknown;
        uint64_t scratch[UNWIND_SCRATCH_REGS];
        uint16_t scratch_valid;
} UnwindRegs;

/* arm64 return addresses with a pointer authentication code in their top bits (code built with
 * -mbranch-protection=pac-ret or standard signs the return address it saves): the code is taken
 * off by keeping the bits of an address, as the CPU's XPACLRI instruction keeps them on an arm64
 * machine (the kernel's virtual address size), elsewhere (an arm64 process's copy walked on
 * another machine) the low 48 bits: the user address space of a kernel with 48-bit virtual
 * addresses, Linux's default on arm64. Bit 55, which the code spares, is 0 in user space. A kernel
 * with 52-bit virtual addresses puts codes from bit 52 up, and gives a process addresses above
 * 2^48 only when it asks (an mmap() hint). */
#define UNWIND_ARM64_ADDR_MASK ((UINT64_C(1) << 48) - 1)
uint64_t unwind_strip_pac(uint16_t machine, uint64_t ra);

/* The copy of the user stack: size bytes that were at address base. */
typedef struct UnwindMemory {
        uint64_t base;
        const uint8_t *data;
        size_t size;
} UnwindMemory;

/* Reads 8 bytes at addr from the copy; false outside it. */
bool unwind_memory_read(const UnwindMemory *m, uint64_t addr, uint64_t *ret);
/* Reads a word of 4 (a 32-bit process's) or 8 bytes at addr from the copy into *ret; false outside it. */
bool unwind_memory_read_word(const UnwindMemory *m, uint64_t addr, unsigned bytes, uint64_t *ret);

typedef struct UnwindCfiFile UnwindCfiFile;

/* Reads fd (kept only as long as the call: the file is read into memory by libelf). A file that
 * is not ELF, or has no CFI, gives a table whose rules are all UNWIND_RULE_NONE and -ENOEXEC
 * / -ENODATA with *ret still set. */
int unwind_cfi_file_load_fd(int fd, UnwindCfiFile **ret);
/* An ELF image in memory (the vDSO); data must outlive the table. */
int unwind_cfi_file_load_memory(const void *data, size_t size, UnwindCfiFile **ret);
UnwindCfiFile *unwind_cfi_file_free(UnwindCfiFile *f);

bool unwind_cfi_file_has_cfi(const UnwindCfiFile *f);
/* The word size of the file's code: 8 (x86-64, arm64), 4 (i386), 0 for any other machine (no rules). */
unsigned unwind_cfi_file_word(const UnwindCfiFile *f);
/* The file's ELF machine, EM_X86_64 (x32's files too), EM_386 or EM_AARCH64; 0 for any other. */
uint16_t unwind_cfi_file_machine(const UnwindCfiFile *f);

/*
 * A separate debug file's .debug_frame, for a file whose own CFI misses addresses (built without
 * unwind tables, its .debug_frame split off with the rest of its DWARF). Wanted while the file has
 * a build id and no .debug_frame: the caller finds candidates in the files one process sees, its
 * view (symbolizer/elf-debug-file.h),
 * and hands each to unwind_cfi_file_add_debug_fd() until one is taken (0; -EXDEV: another build's,
 * -ENODATA: no .debug_frame, -EFBIG: larger than capacity, the bytes the caller may ever hold, or
 * tables too large to read; -ENOSPC: larger than room, the bytes it can still hold), then calls
 * unwind_cfi_file_debug_file_tried() for the view if none was and none waits for room (then it
 * may set a time to look again). A view is the caller's number for the files a process sees (the
 * host's, 0, a container's): the same file (shared by build id) may be mapped in many containers.
 * The host's is remembered apart; of the others the last UNWIND_DEBUG_VIEWS_MAX tried, a new one
 * in place of the oldest.
 * The table grows by what libdw will keep.
 */
#define UNWIND_DEBUG_VIEWS_MAX 8U
bool unwind_cfi_file_wants_debug_file(const UnwindCfiFile *f);
/* The name in the file's .gnu_debuglink, NULL if none. */
const char *unwind_cfi_file_debuglink(const UnwindCfiFile *f);
int unwind_cfi_file_add_debug_fd(UnwindCfiFile *f, int fd, size_t room, size_t capacity);
bool unwind_cfi_file_debug_file_tried_in(const UnwindCfiFile *f, uint64_t view);
bool unwind_cfi_file_debug_views_full(const UnwindCfiFile *f);
void unwind_cfi_file_debug_file_tried(UnwindCfiFile *f, uint64_t view);
/* CLOCK_MONOTONIC usec before which no debug file is looked for; 0: none set. */
uint64_t unwind_cfi_file_debug_file_retry_usec(const UnwindCfiFile *f);
void unwind_cfi_file_set_debug_file_retry_usec(UnwindCfiFile *f, uint64_t usec);
/* About how many bytes of memory the table holds (for the unwinder's cache bound): the sections
 * libdw read, and what it keeps of each FDE it has parsed, so it grows as rules are looked up. */
size_t unwind_cfi_file_bytes(const UnwindCfiFile *f);
const uint8_t *unwind_cfi_file_build_id(const UnwindCfiFile *f, size_t *ret_len);
/* File offset -> the ELF virtual address the CFI speaks of; false if no PT_LOAD segment holds it. */
bool unwind_cfi_file_offset_to_vaddr(const UnwindCfiFile *f, uint64_t offset, uint64_t *ret_vaddr);

/* Whether vaddr is in one of an arm64 file's PLT stubs (.plt past its 32-byte header, .iplt): code
 * that moves neither sp nor x30, and for which the linker writes no CFI. False for other files. */
bool unwind_cfi_file_in_plt_stub(const UnwindCfiFile *f, uint64_t vaddr);

/* The rule at vaddr; never fails (a broken or missing FDE is UNWIND_RULE_NONE). In a Go program
 * its go_flags are those of the function at vaddr, whatever its kind (-ldflags=-w leaves no CFI). */
void unwind_cfi_file_rule(UnwindCfiFile *f, uint64_t vaddr, UnwindRule *ret);

typedef enum UnwindStepResult {
        UNWIND_STEP_OK,
        UNWIND_STEP_END,      /* outermost frame */
        UNWIND_STEP_NO_CFI,   /* no rule for this address */
        UNWIND_STEP_MEMORY,   /* needed memory past the end of the stack copy */
        UNWIND_STEP_BELOW_SP, /* needed memory below the stack pointer, which no copy holds */
        UNWIND_STEP_REGISTER, /* needed a register we do not have */
        UNWIND_STEP_BAD,      /* a rule or expression we cannot use */
} UnwindStepResult;

/*
 * Applies a rule: regs (of the frame at vaddr in the file, where regs->ip is) become the caller's.
 * SIMPLE rules are applied directly; EXPR rules go back to the file's CFI (f must be the file the
 * rule came from).
 */
UnwindStepResult unwind_cfi_apply(UnwindCfiFile *f, uint64_t vaddr, const UnwindRule *rule, UnwindRegs *regs,
                                  const UnwindMemory *mem);

#include "basic/cleanup.h"
DEFINE_TRIVIAL_CLEANUP_FUNC(UnwindCfiFile *, unwind_cfi_file_free);
