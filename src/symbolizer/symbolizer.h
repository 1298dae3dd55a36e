/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Address -> Frame for the sampler: kernel addresses through kallsyms, user addresses through the
 * mapping that covers them (the caller's process table finds it) and that file's ELF symbols, or
 * the process's perf JIT map for code no file backs. Unresolved frames are "[unknown]" with the
 * DSO when it is known, as perf prints them. With function_frames, an unnamed frame in a stripped
 * file still moves to its function's start when the file's .eh_frame_hdr says where that is.
 *
 * Caches: ELF tables keyed by file identity (device + inode from the mapping; two identities with
 * the same build-id share one table) and JIT maps keyed by pid, both bounded: when the bytes or
 * entries exceed the limit the whole cache is dropped at the next symbolizer_begin() and rebuilt
 * on demand (counted in the stats), at most once per flush interval. Until the interval has
 * passed, a file or JIT map not loaded yet is not loaded (its frames "[unknown]" in that DSO, to
 * be named after the next drop; counted): a host whose programs' tables do not
 * fit together would otherwise drop and rebuild them all the time, each rebuild costing more CPU
 * than all the samples. A single file whose table would take more than a quarter of the limit is
 * not kept at all (its frames are "[unknown]" in that DSO, counted). Cost therefore
 * follows distinct files and addresses, not samples: a frame is two binary searches once its file
 * is loaded, and recent files and kernel addresses skip even those. kallsyms is read again (at most
 * once a minute) when a kernel address does not resolve, for modules and BPF programs loaded later.
 *
 * Frames of a file carry its build id (Frame.build_id) when the file has one; frames of the kernel
 * proper ([kernel.kallsyms], not a module) carry the running kernel's, from /sys/kernel/notes.
 *
 * Strings in returned Frames stay valid until the next symbolizer_begin() or symbolizer_free().
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "profile/profile-sample.h"

#define SYMBOLIZER_CACHE_BYTES_DEFAULT (256U * 1024U * 1024U)
#define SYMBOLIZER_CACHE_FILES_MAX 8192U
#define SYMBOLIZER_JIT_PIDS_MAX 16384U
#define SYMBOLIZER_UNKNOWN "[unknown]"
#define SYMBOLIZER_KALLSYMS_RELOAD_USEC (60U * 1000000U)
#define SYMBOLIZER_FLUSH_INTERVAL_USEC (60U * 1000000U)

typedef struct SymbolizerOptions {
        const char *kallsyms_path; /* NULL: /proc/kallsyms; "": no kernel symbols */
        const char *kernel_notes_path; /* the kernel's build id: NULL: /sys/kernel/notes; "": none */
        const char *proc_root;     /* NULL: /proc */
        const char *jit_dir;       /* NULL: /tmp */
        uint64_t cache_bytes_max;  /* 0: SYMBOLIZER_CACHE_BYTES_DEFAULT */
        uint64_t kallsyms_reload_usec; /* 0: SYMBOLIZER_KALLSYMS_RELOAD_USEC */
        uint64_t flush_interval_usec;  /* 0: SYMBOLIZER_FLUSH_INTERVAL_USEC */
        /* Frames name the function, not the instruction: a frame whose function is known gets the
         * function's first byte as addr (in the same address space addr uses otherwise) and offset
         * 0, so all samples in one function make one frame. */
        bool function_frames;
} SymbolizerOptions;

typedef struct SymbolizerMapping {
        uint64_t start, end, pgoff;
        uint64_t dev, ino; /* 0 when unknown */
        uint64_t ino_gen;  /* the inode's generation, 0 when unknown: with dev and ino, the file's
                            * identity (a deleted file's inode number is soon another file's) */
        const char *path;  /* as the kernel reported it: "/usr/bin/x", "/x (deleted)", "//anon", "[vdso]" */
} SymbolizerMapping;

typedef struct SymbolizerStats {
        uint64_t files_loaded, files_failed, files_too_big, cache_flushes, cache_bytes;
        uint64_t loads_deferred; /* frames left unnamed as their file or changed JIT map waited: the cache
                                  * full, dropped too recently */
        uint64_t jit_maps_loaded;
        uint64_t frames, frames_unknown;
        uint64_t kallsyms_symbols, kallsyms_reloads;
} SymbolizerStats;

typedef struct Symbolizer Symbolizer;

int symbolizer_new(const SymbolizerOptions *o, Symbolizer **ret);
Symbolizer *symbolizer_free(Symbolizer *z);

/* Re-reads kallsyms (after a module load); keeps the old table if that fails. */
int symbolizer_reload_kallsyms(Symbolizer *z);

/* Call before symbolizing each sample: enforces the cache limits. Frames handed out earlier become invalid. */
void symbolizer_begin(Symbolizer *z);
/* Call once per drain: JIT maps are checked for changes again. */
void symbolizer_next_epoch(Symbolizer *z);

/* is_return: addr is a return address (every frame but the first of its context); we look up addr - 1.
 * With function_frames, addr and offset of a resolved frame are the function's start and 0. */
void symbolizer_kernel(Symbolizer *z, uint64_t addr, bool is_return, Frame *ret);
/* m: the mapping covering addr in pid, or NULL when none is known. Returns true when the frame is
 * final: named from the mapping's file or the vDSO, or unnamed in an ELF file that covers the
 * address (a stripped program); false when it depends on what may be learned later (a JIT map, a
 * file that could not be read). */
bool symbolizer_user(Symbolizer *z, uint32_t pid, const SymbolizerMapping *m, uint64_t addr, bool is_return,
                     Frame *ret);

/* The addresses [start, end) that give the very same frame as one did, as long as the mapping and
 * symbolizer_generation() stay: the function's, when frames name functions (function_frames) and
 * kallsyms or the mapping's file placed it in one (named, or unnamed in a stripped file); the
 * address alone when frames name instructions; none (start == end) otherwise. */
typedef struct SymbolizerRange {
        uint64_t start, end;
} SymbolizerRange;

/* symbolizer_kernel() and symbolizer_user() for an interrupted address (a leaf, not a return
 * address), with the addresses whose frame would be the same. */
void symbolizer_kernel_leaf(Symbolizer *z, uint64_t addr, Frame *ret, SymbolizerRange *ret_same);
bool symbolizer_user_leaf(Symbolizer *z, uint32_t pid, const SymbolizerMapping *m, uint64_t addr, Frame *ret,
                          SymbolizerRange *ret_same);

void symbolizer_get_stats(const Symbolizer *z, SymbolizerStats *ret);

/*
 * Changes whenever frames handed out before may no longer be valid or no longer be what the same
 * address would give now: kallsyms read again, the caches dropped, a JIT map read or dropped.
 * A caller that keeps Frames across samples keeps them only while it is unchanged.
 */
uint64_t symbolizer_generation(const Symbolizer *z);

/*
 * Opens the file behind mapping m of pid (the unwinder reads the same files): through
 * PROC_ROOT/PID/map_files/START-END, then PROC_ROOT/PID/root/PATH, then PATH, by path only when the
 * inode matches. ret_root gets the root directory debug files are looked up under ("" for /).
 * Returns the descriptor, or -errno.
 */
int symbolizer_open_file(const char *proc_root, uint32_t pid, const SymbolizerMapping *m, char *ret_root,
                         size_t root_len);

#include "basic/cleanup.h"
DEFINE_TRIVIAL_CLEANUP_FUNC(Symbolizer *, symbolizer_free);
