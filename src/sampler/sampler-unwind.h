/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * User stacks from the registers and the copy of the user stack perf gives with each sample
 * (PERF_SAMPLE_REGS_USER, PERF_SAMPLE_STACK_USER), walked with the call frame information of the
 * mapped files (sampler-unwind-cfi.h) and, in `auto` mode, with frame pointers where a mapping has
 * no CFI (JIT code, anonymous memory). The result is a plain array of user addresses, leaf first,
 * the first one the interrupted instruction and the others return addresses, exactly what a
 * frame-pointer call chain gives: the frames path (sampler-frames.c) takes it as it is. A stack
 * that cannot be walked to its outermost frame ends in one address 0, which that path turns into
 * the one "[unknown]" frame of a cut chain; why it was cut is counted here. A 32-bit process on
 * the 64-bit kernel is walked by its files' i386 CFI (4-byte words, i386's register numbers) and,
 * in `auto` mode, its 4-byte frame pointers where there is none (as the kernel's own walk does for
 * perf -g).
 *
 * Caches: one CFI table per file identity (device + inode of the mapping; tables of identical
 * build ids are shared), and a direct-mapped cache of compact rules per (file, address), so a
 * frame seen before costs a hash and an array read, not a CFI search. Both are bounded and
 * dropped whole when full, at most once per flush interval: a host whose programs' tables do not
 * fit would otherwise drop and load them again all the time, so until the interval has passed a
 * file not loaded yet is walked as one without CFI (each such frame counted). Work per sample is
 * bounded by a frame limit and a time budget.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sampler/proc-maps.h"

typedef enum UnwindMode {
        UNWIND_MODE_FP,    /* frame pointers, walked by the kernel (PERF_SAMPLE_CALLCHAIN) */
        UNWIND_MODE_DWARF, /* call frame information only */
        UNWIND_MODE_AUTO,  /* call frame information, frame pointers where a mapping has none */
        _UNWIND_MODE_MAX,
        _UNWIND_MODE_INVALID = -22,
} UnwindMode;

const char *unwind_mode_to_string(UnwindMode m);
UnwindMode unwind_mode_from_string(const char *s);

typedef enum UnwindCut {
        UNWIND_CUT_UNMAPPED, /* an address outside every executable mapping */
        UNWIND_CUT_NO_CFI,   /* no CFI for the address, and frame pointers not allowed or not usable */
        UNWIND_CUT_STACK,    /* the walk needed memory beyond the copied stack */
        UNWIND_CUT_REGISTER, /* a rule needed a register the sample does not carry */
        UNWIND_CUT_BAD,      /* a rule we cannot use, or a step that did not move up the stack */
        UNWIND_CUT_DEPTH,    /* the frame limit */
        UNWIND_CUT_TIME,     /* the time budget */
        UNWIND_CUT_FULL,     /* the file's CFI not loaded: the tables were full (see above) */
        UNWIND_CUT_BELOW_SP, /* a rule read below the stack pointer, which no copy of the stack holds */
        UNWIND_CUT_GO_STACK_SWITCH, /* a Go function that moved the stack pointer (SPWRITE): Go's traceback stops there */
        _UNWIND_CUT_MAX,
        _UNWIND_CUT_INVALID = -22,
} UnwindCut;

const char *unwind_cut_to_string(UnwindCut c);

/* Why a sample had no user stack to walk, as the kernel's record says it (kernel/events/core.c:
 * perf_sample_regs_user(), perf_sample_ustack_size(), perf_output_sample_ustack()). */
typedef enum UnwindNoUser {
        UNWIND_NO_USER_REGS,   /* PERF_SAMPLE_REGS_ABI_NONE: no user context (a kernel thread) */
        UNWIND_NO_USER_NO_COPY, /* registers, but a copy of size 0: a stack pointer of 0 or at or past
                                 * TASK_SIZE (perf_ustack_task_size()), or an exiting task without
                                 * mm on kernels that check for it (6.19 does, 6.14 did not) */
        UNWIND_NO_USER_EMPTY,  /* a copy asked for of which nothing was copied (dyn_size 0): the read
                                * at the stack pointer failed (copy_from_user_nmi(): a page not
                                * present, or the CPU's loaded mm not the task's) */
        _UNWIND_NO_USER_MAX,
        _UNWIND_NO_USER_INVALID = -22,
} UnwindNoUser;

#define UNWIND_FILES_MAX 2048U
#define UNWIND_CACHE_BYTES_MAX (64U * 1024U * 1024U) /* the files' CFI in memory; past it: flushed */
#define UNWIND_FLUSH_INTERVAL_USEC (60U * 1000000U)  /* the least time between two flushes */
#define UNWIND_RULE_CACHE_SIZE 16384U /* a power of two; 640 KiB, touched once at start */
#define UNWIND_BUDGET_USEC_DEFAULT 1000U

typedef struct UnwinderOptions {
        UnwindMode mode;      /* DWARF or AUTO; FP never reaches the unwinder */
        const char *proc_root; /* NULL: /proc */
        uint64_t budget_usec; /* per stack; 0 = UNWIND_BUDGET_USEC_DEFAULT */
        bool no_rule_cache;   /* look every rule up in the CFI (for comparisons) */
        uint64_t cache_bytes_max;     /* 0 = UNWIND_CACHE_BYTES_MAX */
        uint64_t flush_interval_usec; /* 0 = UNWIND_FLUSH_INTERVAL_USEC */
} UnwinderOptions;

typedef struct UnwindStats {
        uint64_t stacks;        /* stacks walked */
        uint64_t stacks_cfi;    /* walked to the outermost frame by CFI alone */
        uint64_t stacks_fp;     /* walked to the end with frame pointers for some frames */
        uint64_t stacks_cut;    /* ended in [unknown]: sum of cut[] */
        uint64_t cut[_UNWIND_CUT_MAX];
        uint64_t no_user;       /* samples without user registers or stack: sum of no_user_by[] */
        uint64_t no_user_by[_UNWIND_NO_USER_MAX];
        uint64_t frames_cfi, frames_fp;
        uint64_t files_loaded, files_without_cfi, files_failed, cache_flushes;
        uint64_t debug_files;   /* files whose .debug_frame came from a separate debug file */
        uint64_t loads_deferred; /* frames walked without their file's CFI, which waited: the tables
                                  * full, flushed too recently */
        uint64_t cache_bytes;   /* held now by the loaded files, estimated */
        uint64_t rule_hits, rule_misses;
        uint64_t nsec;          /* time spent walking the timed stacks, file loads not included */
        uint64_t load_nsec;     /* time spent loading files' unwind tables, all stacks */
        uint64_t stacks_timed;  /* one stack in 64 */
} UnwindStats;

typedef struct UnwindInput {
        uint32_t pid;
        uint64_t ip, sp, bp, bx;  /* user registers of the sample (arm64: pc, sp, x29; bx unused) */
        uint64_t lr;              /* arm64: the link register, x30 */
        uint16_t machine;         /* the process's code: EM_X86_64, EM_AARCH64; 0: the host's (and
                                   * its 32-bit one with compat32) */
        const uint64_t *scratch;  /* and its caller-saved ones (UNWIND_SCRATCH_REGS of them), or NULL */
        bool kernel_mode;         /* sampled in the kernel: ip may follow a syscall instruction */
        const uint8_t *stack; /* the copy from sp on */
        size_t stack_size;    /* bytes of it that were filled */
        bool compat32;        /* a 32-bit process (PERF_SAMPLE_REGS_ABI_32): on x86-64 4-byte words,
                               * i386 CFI; on arm64 A32/T32 code, which is not walked */
} UnwindInput;

typedef struct Unwinder Unwinder;

int unwinder_new(const UnwinderOptions *o, Unwinder **ret);
Unwinder *unwinder_free(Unwinder *u);

/*
 * Walks the stack of in (mappings from procs) into ips, at most max entries, leaf first; the last
 * entry is 0 when the walk was cut (counted by reason). Returns the number of entries.
 */
size_t unwinder_unwind(Unwinder *u, ProcTable *procs, const UnwindInput *in, uint64_t *ips, size_t max);

/* Why a sample with these user registers' ABI (PERF_SAMPLE_REGS_ABI_*), stack pointer, copy size
 * and filled size has no user stack to walk: an UnwindNoUser, or -1 when it has one. */
int unwind_no_user_cause(uint64_t regs_abi, uint64_t sp, uint64_t stack_size, uint64_t dyn_size);

/* Counts a sample that had no user registers or stack to walk. */
void unwinder_count_no_user(Unwinder *u, UnwindNoUser why);

void unwinder_get_stats(const Unwinder *u, UnwindStats *ret);

/* One line for people: "N walked, N whole by CFI, N whole with frame pointers for some frames,
 * N cut (REASON: N, ...); N samples without user stack (N without user registers, N given no
 * copy, N whose copy was empty)", the parenthesis naming only the causes that occurred. */
void unwind_stats_format(const UnwindStats *st, char *buf, size_t len);

/* Whether enough stacks ran past the copy of copy_bytes to say so: at least
 * UNWIND_COPY_HINT_STACKS walked and UNWIND_COPY_HINT_SHARE of them cut there (programs with large
 * frames: an 8 KiB buffer on the stack, sqlite3's shell). Writes the advice into buf. */
#define UNWIND_COPY_HINT_STACKS 1000U
#define UNWIND_COPY_HINT_SHARE 0.05
bool unwind_stats_copy_hint(const UnwindStats *st, uint32_t copy_bytes, char *buf, size_t len);

#include "basic/cleanup.h"
DEFINE_TRIVIAL_CLEANUP_FUNC(Unwinder *, unwinder_free);
