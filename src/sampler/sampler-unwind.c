/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The user stack walk. Each step finds the mapping of the current address (a return address is
 * looked up one byte back, so a call at the very end of a function is judged by its own FDE), the
 * file's CFI table, and the rule for the address in the file; the rule turns this frame's
 * ip/sp/bp into the caller's. Frame pointers, where allowed, read the saved bp and return address
 * at bp and bp + 8 of the copied stack. Every step must move up the stack (sp grows), so a broken
 * rule cannot loop. Our own vDSO stands in for a process's [vdso] of the same size, as in the
 * symbolizer; a 32-bit process's is its own image, read from its memory (vdso-images.h).
 */
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <time.h>

#include "basic/alloc-util.h"
#include "basic/fileio.h"
#include "basic/hashmap.h"
#include "basic/macro.h"
#include "basic/string-util.h"
#include "basic/time-util.h"
#include "sampler/sampler-unwind-cfi.h"
#include "sampler/sampler-unwind.h"
#include "symbolizer/elf-debug-file.h"
#include "symbolizer/file-failures.h"
#include "symbolizer/symbolizer-gopclntab.h"
#include "symbolizer/symbolizer.h"
#include "symbolizer/vdso-images.h"

/* The clock is read every this many frames against the budget (and around each file load). */
#define UNWIND_CLOCK_FRAMES 16U
/* One stack in this many is timed for UnwindStats.nsec. */
#define UNWIND_TIMED_EVERY 64U

/* A process's view is looked at again after this long (or a flush interval, if shorter): a
 * chroot() or setns() changes it without a new mapping. */
#define UNWIND_VIEW_RECHECK_USEC USEC_PER_SEC

/* Which files a process sees (process_view()), while its mappings stay as they were. */
typedef struct ViewSlot {
        uint32_t pid;
        uint64_t gen, view, checked_usec;
} ViewSlot;

typedef struct RuleSlot {
        const UnwindCfiFile *file;
        uint64_t vaddr;
        UnwindRule rule;
} RuleSlot;

struct Unwinder {
        UnwindMode mode;
        char *proc_root;
        uint64_t budget_nsec;
        bool no_rule_cache;
        uint64_t cache_bytes_max, flush_interval_usec;
        uint64_t flushed_usec; /* CLOCK_MONOTONIC of the last flush; 0 = none yet */

        Hashmap *files;     /* identity -> UnwindCfiFile* (owned in owned[]) */
        Hashmap *build_ids; /* build id -> UnwindCfiFile* */
        UnwindCfiFile **owned;
        size_t n_owned, n_owned_allocated;
        /* The processes a file could not be opened through, and the table without CFI their
         * frames get meanwhile (one for all). */
        FileFailures failures;
        UnwindCfiFile *gone;
        struct {
                uint64_t dev, ino, ino_gen;
                UnwindCfiFile *f;
        } recent[16];

        UnwindCfiFile *vdso;
        uint8_t *vdso_copy;
        uint64_t vdso_size;
        bool vdso_tried;
        VdsoImages *vdso32; /* 32-bit processes' vDSO tables */

        RuleSlot *rules; /* UNWIND_RULE_CACHE_SIZE */
        ViewSlot views[256];

        UnwindStats stats;
};

static const char *const mode_table[_UNWIND_MODE_MAX] = {
        [UNWIND_MODE_FP] = "fp",
        [UNWIND_MODE_DWARF] = "dwarf",
        [UNWIND_MODE_AUTO] = "auto",
};

const char *unwind_mode_to_string(UnwindMode m) {
        return m >= 0 && m < _UNWIND_MODE_MAX ? mode_table[m] : NULL;
}

UnwindMode unwind_mode_from_string(const char *s) {
        for (int i = 0; s && i < _UNWIND_MODE_MAX; i++)
                if (streq(s, mode_table[i]))
                        return (UnwindMode) i;
        return _UNWIND_MODE_INVALID;
}

static const char *const cut_table[_UNWIND_CUT_MAX] = {
        [UNWIND_CUT_UNMAPPED] = "outside every mapping",
        [UNWIND_CUT_NO_CFI] = "no unwind information",
        [UNWIND_CUT_STACK] = "beyond the copied stack",
        [UNWIND_CUT_REGISTER] = "register not sampled",
        [UNWIND_CUT_BAD] = "bad frame",
        [UNWIND_CUT_DEPTH] = "frame limit",
        [UNWIND_CUT_TIME] = "time budget",
        [UNWIND_CUT_FULL] = "unwind tables full",
        [UNWIND_CUT_BELOW_SP] = "below the stack pointer",
        [UNWIND_CUT_GO_STACK_SWITCH] = "Go stack switch",
};

bool unwind_stats_copy_hint(const UnwindStats *st, uint32_t copy_bytes, char *buf, size_t len) {
        uint64_t cut = st->cut[UNWIND_CUT_STACK];

        if (st->stacks < UNWIND_COPY_HINT_STACKS || (double) cut < UNWIND_COPY_HINT_SHARE * (double) st->stacks)
                return false;
        snprintf(buf, len,
                 "%.0f%% of user stacks ran past the %" PRIu32 "-byte copy of the stack and were cut there; "
                 "--unwind-stack (unwind_stack: in the configuration) copies more, at more cost a sample",
                 100.0 * (double) cut / (double) st->stacks, copy_bytes);
        return true;
}

const char *unwind_cut_to_string(UnwindCut c) {
        return c >= 0 && c < _UNWIND_CUT_MAX ? cut_table[c] : NULL;
}

static void files_flush(Unwinder *u) {
        for (size_t i = 0; i < u->n_owned; i++)
                unwind_cfi_file_free(u->owned[i]);
        u->n_owned = 0;
        u->stats.cache_bytes = 0;
        u->files = hashmap_free(u->files);
        u->build_ids = hashmap_free(u->build_ids);
        memset(u->recent, 0, sizeof(u->recent));
        if (u->rules)
                memset(u->rules, 0, sizeof(RuleSlot) * UNWIND_RULE_CACHE_SIZE);
}

Unwinder *unwinder_free(Unwinder *u) {
        if (!u)
                return NULL;
        vdso_images_free(u->vdso32); /* first: its tables' rules are forgotten in rules[] */
        files_flush(u);
        unwind_cfi_file_free(u->gone);
        file_failures_done(&u->failures);
        free(u->owned);
        free(u->rules);
        unwind_cfi_file_free(u->vdso);
        free(u->vdso_copy);
        free(u->proc_root);
        return mfree(u);
}

int unwinder_new(const UnwinderOptions *o, Unwinder **ret) {
        _cleanup_(unwinder_freep) Unwinder *u = NULL;

        u = new0(Unwinder, 1);
        if (!u)
                return -ENOMEM;
        u->mode = o && o->mode == UNWIND_MODE_DWARF ? UNWIND_MODE_DWARF : UNWIND_MODE_AUTO;
        u->proc_root = strdup(o && o->proc_root ? o->proc_root : "/proc");
        u->rules = new0(RuleSlot, UNWIND_RULE_CACHE_SIZE);
        if (!u->proc_root || !u->rules)
                return -ENOMEM;
        /* Every slot written now (not left to calloc's lazy zero pages), so the daemon's memory
         * does not creep up as slots are first used. An empty slot names no file. */
        for (size_t i = 0; i < UNWIND_RULE_CACHE_SIZE; i++)
                u->rules[i] = (RuleSlot) { .vaddr = UINT64_MAX };
        u->budget_nsec = (o && o->budget_usec > 0 ? o->budget_usec : UNWIND_BUDGET_USEC_DEFAULT) * NSEC_PER_USEC;
        u->no_rule_cache = o && o->no_rule_cache;
        u->cache_bytes_max = o && o->cache_bytes_max > 0 ? o->cache_bytes_max : UNWIND_CACHE_BYTES_MAX;
        u->flush_interval_usec = o && o->flush_interval_usec > 0 ? o->flush_interval_usec : UNWIND_FLUSH_INTERVAL_USEC;
        *ret = TAKE_PTR(u);
        return 0;
}

void unwinder_get_stats(const Unwinder *u, UnwindStats *ret) {
        *ret = u->stats;
}

void unwind_stats_format(const UnwindStats *st, char *buf, size_t len) {
        size_t n;
        bool first = true;

        n = (size_t) snprintf(buf, len,
                              "%" PRIu64 " walked, %" PRIu64 " whole by CFI, %" PRIu64
                              " whole with frame pointers for some frames, %" PRIu64 " cut",
                              st->stacks, st->stacks_cfi, st->stacks_fp, st->stacks_cut);
        for (int i = 0; i < _UNWIND_CUT_MAX && n < len; i++) {
                if (st->cut[i] == 0)
                        continue;
                n += (size_t) snprintf(buf + n, len - n, "%s%s: %" PRIu64, first ? " (" : ", ",
                                       unwind_cut_to_string(i), st->cut[i]);
                first = false;
        }
        if (n < len)
                n += (size_t) snprintf(buf + n, len - n, "%s; %" PRIu64 " samples without user stack",
                                       first ? "" : ")", st->no_user);
        first = true;
        for (int i = 0; i < _UNWIND_NO_USER_MAX && n < len; i++) {
                static const char *const what[_UNWIND_NO_USER_MAX] = {
                        [UNWIND_NO_USER_REGS] = "without user registers",
                        [UNWIND_NO_USER_NO_COPY] = "given no copy",
                        [UNWIND_NO_USER_EMPTY] = "whose copy was empty",
                };

                if (st->no_user_by[i] == 0)
                        continue;
                n += (size_t) snprintf(buf + n, len - n, "%s%" PRIu64 " %s", first ? " (" : ", ",
                                       st->no_user_by[i], what[i]);
                first = false;
        }
        if (!first && n < len)
                (void) snprintf(buf + n, len - n, ")");
}

int unwind_no_user_cause(uint64_t regs_abi, uint64_t sp, uint64_t stack_size, uint64_t dyn_size) {
        if (regs_abi == PERF_SAMPLE_REGS_ABI_NONE)
                return UNWIND_NO_USER_REGS;
        /* perf_sample_ustack_size() sizes the copy 0 for a stack pointer of 0: no dyn_size follows. */
        if (sp == 0 || stack_size == 0)
                return UNWIND_NO_USER_NO_COPY;
        if (dyn_size == 0)
                return UNWIND_NO_USER_EMPTY;
        return -1;
}

void unwinder_count_no_user(Unwinder *u, UnwindNoUser why) {
        u->stats.no_user++;
        u->stats.no_user_by[why]++;
}

/* A 32-bit vDSO's table, and its bytes when loaded: rule_read() counts what it grows by. */
typedef struct Vdso32Table {
        UnwindCfiFile *f;
        size_t loaded_bytes;
        uint64_t flushes; /* UnwindStats.cache_flushes then: a flush since zeroed what was counted */
} Vdso32Table;

static int vdso32_load(void *userdata, const void *data, size_t size, void **ret) {
        _cleanup_(unwind_cfi_file_freep) UnwindCfiFile *f = NULL;
        const Unwinder *u = userdata;
        Vdso32Table *t;
        int r = unwind_cfi_file_load_memory(data, size, &f);

        if (r < 0)
                return r;
        if (unwind_cfi_file_word(f) != 4) /* an i386 image, or nothing */
                return -EXDEV;
        t = new(Vdso32Table, 1);
        if (!t)
                return -ENOMEM;
        t->loaded_bytes = unwind_cfi_file_bytes(f);
        t->flushes = u->stats.cache_flushes;
        t->f = TAKE_PTR(f);
        *ret = t;
        return 0;
}

/* A table going: the rules cached from it go too (another table may come at its address), and
 * what rule_read() counted of it. */
static void vdso32_free(void *userdata, void *object) {
        Vdso32Table *t = object;
        Unwinder *u = userdata;
        size_t grown = unwind_cfi_file_bytes(t->f) - MIN(unwind_cfi_file_bytes(t->f), t->loaded_bytes);

        for (size_t i = 0; u->rules && i < UNWIND_RULE_CACHE_SIZE; i++)
                if (u->rules[i].file == t->f)
                        u->rules[i].file = NULL;
        if (t->flushes == u->stats.cache_flushes)
                u->stats.cache_bytes -= MIN(u->stats.cache_bytes, grown);
        unwind_cfi_file_free(t->f);
        free(t);
}

/* The 32-bit vDSO mapped at m in a 32-bit process pid: not ours, the process's own image (which
 * only it and processes with the very same bytes use: vdso-images.h). */
static UnwindCfiFile *vdso32_file(Unwinder *u, ProcTable *procs, uint32_t pid, const ProcMap *m) {
        if (!u->vdso32) {
                u->vdso32 = vdso_images_new(u->proc_root, vdso32_load, vdso32_free, u);
                if (!u->vdso32)
                        return NULL;
        }
        Vdso32Table *t = vdso_images_get(u->vdso32, pid, proc_table_maps_generation(procs, pid), m->start,
                                         m->end - m->start);
        return t ? t->f : NULL;
}

static UnwindCfiFile *vdso_file(Unwinder *u, ProcTable *procs, uint32_t pid, const ProcMap *m, bool compat32) {
        if (compat32)
                return vdso32_file(u, procs, pid, m);
        if (!u->vdso_tried) {
                const void *start;
                size_t size;

                u->vdso_tried = true;
                if (self_vdso_range(1024 * 1024, &start, &size) >= 0) {
                        u->vdso_copy = memdup(start, size);
                        if (u->vdso_copy && unwind_cfi_file_load_memory(u->vdso_copy, size, &u->vdso) >= 0)
                                u->vdso_size = size;
                }
        }
        return u->vdso && m->end - m->start == u->vdso_size ? u->vdso : NULL;
}

/* The CFI table of the file behind m, loaded on first use; NULL when it cannot be had. */
static UnwindCfiFile *file_load(Unwinder *u, uint32_t pid, const ProcMap *m, const void *key, size_t key_len);

/* The file's unwind table; a load's time is added to *load_nsec (it is not part of the budget).
 * NULL with *deferred set: not loaded, the tables being full and flushed too recently. */
static UnwindCfiFile *file_for(Unwinder *u, ProcTable *procs, uint32_t pid, const ProcMap *m, bool compat32,
                               uint64_t *load_nsec, bool *deferred) {
        struct { uint64_t dev, ino, ino_gen; } id = { m->dev, m->ino, m->ino_gen };
        const void *key = &id;
        size_t key_len = sizeof(id);
        UnwindCfiFile *f;
        uint64_t v, t;

        /* The common case first, before any string is looked at: a file seen a moment ago. */
        size_t slot = (size_t) ((m->ino ^ m->dev ^ (m->ino >> 7)) % ELEMENTSOF(u->recent));
        if (m->ino != 0 && u->recent[slot].f && u->recent[slot].ino == m->ino && u->recent[slot].dev == m->dev &&
            u->recent[slot].ino_gen == m->ino_gen)
                return u->recent[slot].f;

        if (m->path[0] == '[' && streq(m->path, "[vdso]"))
                return vdso_file(u, procs, pid, m, compat32);
        if (m->path[0] != '/' || startswith(m->path, "//anon"))
                return NULL;
        if (m->ino == 0) {
                key = m->path;
                key_len = strlen(m->path);
        }
        if (hashmap_get(u->files, key, key_len, &v)) {
                if (m->ino != 0)
                        u->recent[slot].dev = m->dev, u->recent[slot].ino = m->ino, u->recent[slot].ino_gen = m->ino_gen,
                        u->recent[slot].f = HASHMAP_PTR(v);
                return HASHMAP_PTR(v);
        }
        if (m->ino != 0 && u->gone &&
            file_failures_recent(&u->failures, &(FileFailureKey) { m->dev, m->ino, m->ino_gen, pid },
                                 now_usec(CLOCK_MONOTONIC)))
                return u->gone;
        /* A file to load. The tables already loaded stay as long as they fit; when they do not, they
         * are dropped at most once per interval, so that programs whose tables do not fit together
         * cost one reload of the tables an interval, not one per sample that alternates between them. */
        if (u->n_owned >= UNWIND_FILES_MAX || u->stats.cache_bytes > u->cache_bytes_max) {
                if (!monotonic_interval_passed(&u->flushed_usec, u->flush_interval_usec)) {
                        u->stats.loads_deferred++;
                        *deferred = true;
                        return NULL;
                }
                files_flush(u);
                u->stats.cache_flushes++;
        }
        if (!u->files) {
                u->files = hashmap_new();
                u->build_ids = hashmap_new();
                if (!u->files || !u->build_ids)
                        return NULL;
        }
        t = now_nsec(CLOCK_MONOTONIC);
        f = file_load(u, pid, m, key, key_len);
        t = now_nsec(CLOCK_MONOTONIC) - t;
        *load_nsec += t;
        u->stats.load_nsec += t;
        return f;
}

/* Reads the call frame information of a file not seen before (or its twin by build id). */
static UnwindCfiFile *file_load(Unwinder *u, uint32_t pid, const ProcMap *m, const void *key, size_t key_len) {
        _cleanup_(unwind_cfi_file_freep) UnwindCfiFile *f = NULL;
        const uint8_t *bid;
        size_t bid_len;
        char root[4096];
        uint64_t v;
        int fd, r;

        fd = symbolizer_open_file(u->proc_root, pid, &(SymbolizerMapping) {
                        .start = m->start, .end = m->end, .pgoff = m->pgoff,
                        .dev = m->dev, .ino = m->ino, .ino_gen = m->ino_gen, .path = m->path,
                }, root, sizeof(root));
        if (fd >= 0) {
                r = unwind_cfi_file_load_fd(fd, &f);
                safe_close(fd);
        } else
                r = fd;
        if (!f) {
                /* Unreadable (no permission, not an ELF file): kept as a table without CFI, so it
                 * costs one attempt per identity, not one per sample. Not opened at all: this
                 * process's failure alone (file-failures.h). */
                u->stats.files_failed++;
                if (fd < 0 && m->ino != 0) {
                        if (!u->gone && unwind_cfi_file_load_memory(NULL, 0, &u->gone) < 0 && !u->gone)
                                return NULL;
                        (void) file_failures_add(&u->failures, &(FileFailureKey) { m->dev, m->ino, m->ino_gen, pid },
                                                 now_usec(CLOCK_MONOTONIC));
                        return u->gone;
                }
                r = unwind_cfi_file_load_memory(NULL, 0, &f);
                if (!f)
                        return NULL;
        } else if (r < 0)
                u->stats.files_without_cfi++;
        else
                u->stats.files_loaded++;

        bid = unwind_cfi_file_build_id(f, &bid_len);
        if (bid && hashmap_get(u->build_ids, bid, bid_len, &v)) {
                (void) hashmap_put(u->files, key, key_len, v);
                return HASHMAP_PTR(v);
        }
        if (!GREEDY_REALLOC(u->owned, u->n_owned_allocated, u->n_owned + 1))
                return NULL;
        UnwindCfiFile *k = TAKE_PTR(f);
        u->owned[u->n_owned++] = k;
        u->stats.cache_bytes += unwind_cfi_file_bytes(k);
        (void) hashmap_put(u->files, key, key_len, PTR_HASHMAP(k));
        if (bid)
                (void) hashmap_put(u->build_ids, bid, bid_len, PTR_HASHMAP(k));
        return k;
}

/* The rule from f's CFI, and the bytes libdw kept of an FDE it had not parsed before counted. */
static void rule_read(Unwinder *u, UnwindCfiFile *f, uint64_t vaddr, UnwindRule *ret) {
        size_t before = unwind_cfi_file_bytes(f);

        unwind_cfi_file_rule(f, vaddr, ret);
        u->stats.cache_bytes += unwind_cfi_file_bytes(f) - before;
}

/* The rule cache's slot for vaddr in f. */
static RuleSlot *rule_slot(Unwinder *u, const UnwindCfiFile *f, uint64_t vaddr) {
        uint64_t h = vaddr * UINT64_C(0x9E3779B97F4A7C15) ^ (uint64_t) (uintptr_t) f;

        return &u->rules[(h >> 20) & (UNWIND_RULE_CACHE_SIZE - 1)];
}

static const UnwindRule *rule_for(Unwinder *u, UnwindCfiFile *f, uint64_t vaddr, UnwindRule *buf) {
        RuleSlot *slot;

        if (u->no_rule_cache) {
                rule_read(u, f, vaddr, buf);
                return buf;
        }
        slot = rule_slot(u, f, vaddr);
        if (slot->file == f && slot->vaddr == vaddr) {
                u->stats.rule_hits++;
                return &slot->rule;
        }
        u->stats.rule_misses++;
        rule_read(u, f, vaddr, &slot->rule);
        slot->file = f;
        slot->vaddr = vaddr;
        return &slot->rule;
}

/* Forgets the cached rule at vaddr in f, so that the next rule_for() reads the CFI again. */
static void rule_forget(Unwinder *u, const UnwindCfiFile *f, uint64_t vaddr) {
        if (!u->no_rule_cache)
                rule_slot(u, f, vaddr)->file = NULL;
}

/* Whether process pid, whose root is root_st, sees the files tprofd does: the same root in the
 * same mount namespace (a container may share the host's root directory and mount over parts). */
static bool same_view(Unwinder *u, uint32_t pid, const struct stat *root_st) {
        struct stat host_st, ns_st, self_ns_st;
        char p[PATH_MAX];

        if (stat("/", &host_st) < 0 || host_st.st_dev != root_st->st_dev || host_st.st_ino != root_st->st_ino)
                return false;
        snprintf(p, sizeof(p), "%s/%" PRIu32 "/ns/mnt", u->proc_root, pid);
        if (stat(p, &ns_st) < 0 || stat("/proc/self/ns/mnt", &self_ns_st) < 0)
                return false;
        return ns_st.st_dev == self_ns_st.st_dev && ns_st.st_ino == self_ns_st.st_ino;
}

/*
 * The files process pid sees, as one number: UNWIND_VIEW_HOST for tprofd's own (same_view()),
 * UNWIND_VIEW_UNKNOWN for a process gone, else its root's device and inode with its mount
 * namespace's, hashed. Kept per process while its mappings are unchanged (an exec may bring
 * another root) for UNWIND_VIEW_RECHECK_USEC at most (a chroot() or setns() brings another without
 * a mapping), so a frame that asks again costs no system call.
 */
#define UNWIND_VIEW_HOST 0U
#define UNWIND_VIEW_UNKNOWN UINT64_MAX
static uint64_t process_view(Unwinder *u, ProcTable *procs, uint32_t pid) {
        uint64_t gen = proc_table_maps_generation(procs, pid), view, now = now_usec(CLOCK_MONOTONIC);
        ViewSlot *slot = &u->views[pid % ELEMENTSOF(u->views)];
        struct stat root_st, ns_st;
        char p[PATH_MAX];

        if (gen != 0 && slot->pid == pid && slot->gen == gen &&
            now - slot->checked_usec < MIN((uint64_t) UNWIND_VIEW_RECHECK_USEC, u->flush_interval_usec))
                return slot->view;
        snprintf(p, sizeof(p), "%s/%" PRIu32 "/root", u->proc_root, pid);
        if (pid == 0 || stat(p, &root_st) < 0)
                view = UNWIND_VIEW_UNKNOWN; /* kept too: a pid reused is another generation */
        else if (same_view(u, pid, &root_st))
                view = UNWIND_VIEW_HOST;
        else {
                snprintf(p, sizeof(p), "%s/%" PRIu32 "/ns/mnt", u->proc_root, pid);
                if (stat(p, &ns_st) < 0)
                        ns_st.st_ino = 0;
                view = (root_st.st_dev * UINT64_C(0x9E3779B97F4A7C15) ^ root_st.st_ino) * UINT64_C(0xBF58476D1CE4E5B9) ^
                       (uint64_t) ns_st.st_ino;
                if (view == UNWIND_VIEW_HOST || view == UNWIND_VIEW_UNKNOWN)
                        view = 1;
        }
        *slot = (ViewSlot) { .pid = pid, .gen = gen, .view = view, .checked_usec = now };
        return view;
}

/* A root a debug file is looked for under ("" for the host's /), and the view it shows. */
typedef struct DebugRoot {
        const char *path;
        uint64_t view;
} DebugRoot;

/*
 * The .debug_frame of f's separate debug file, looked for the first time f's own CFI has no rule
 * for an address (most files' .eh_frame covers all their code, so most never look): where the
 * symbolizer finds debug files, under the process's root first (a container's own), then the
 * host's, unless the two are one. Taken only with f's build id, and only if it fits in what the
 * tables may still hold (if not, it is looked for again a flush interval later). Looked for once
 * per view while its table is held: files are shared by build id, so a container whose debug
 * files a process elsewhere missed them in first is looked in when its own process needs them
 * (the last UNWIND_DEBUG_VIEWS_MAX views are remembered, a new one past them is looked in once a
 * flush interval; the host's once); a process gone before its samples were walked, whose root is
 * then unknown, has the host's looked in only. True if one was added.
 */
static bool debug_file_load(Unwinder *u, ProcTable *procs, uint32_t pid, const ProcMap *m, UnwindCfiFile *f,
                            uint64_t *load_nsec) {
        size_t before = unwind_cfi_file_bytes(f), bid_len, n_roots = 0;
        size_t room = u->cache_bytes_max > u->stats.cache_bytes ? u->cache_bytes_max - u->stats.cache_bytes : 0;
        const uint8_t *bid = unwind_cfi_file_build_id(f, &bid_len);
        char proc_root[PATH_MAX], p[PATH_MAX];
        DebugRoot roots[2];
        bool added = false, full = false;
        uint64_t t, view;

        if (unwind_cfi_file_debug_file_retry_usec(f) != 0 &&
            now_usec(CLOCK_MONOTONIC) < unwind_cfi_file_debug_file_retry_usec(f))
                return false; /* its debug file did not fit: not looked for a while */
        /* A process that sees the files tprofd sees is searched as the host is, by plain paths;
         * any other within its root as well. */
        view = process_view(u, procs, pid);
        if (view != UNWIND_VIEW_HOST && view != UNWIND_VIEW_UNKNOWN && !unwind_cfi_file_debug_file_tried_in(f, view)) {
                snprintf(proc_root, sizeof(proc_root), "%s/%" PRIu32 "/root", u->proc_root, pid);
                roots[n_roots++] = (DebugRoot) { .path = proc_root, .view = view };
                /* Views past UNWIND_DEBUG_VIEWS_MAX take the oldest's place, one an interval (a
                 * user can make new ones at will, and must not make the tables look forever). */
                if (unwind_cfi_file_debug_views_full(f))
                        unwind_cfi_file_set_debug_file_retry_usec(f, now_usec(CLOCK_MONOTONIC) + u->flush_interval_usec);
        }
        if (!unwind_cfi_file_debug_file_tried_in(f, UNWIND_VIEW_HOST))
                roots[n_roots++] = (DebugRoot) { .path = "", .view = UNWIND_VIEW_HOST };
        if (n_roots == 0)
                return false;

        t = now_nsec(CLOCK_MONOTONIC);
        for (ElfDebugWay way = 0; way < _ELF_DEBUG_WAY_MAX && !added; way++) {
                if (!elf_debug_file_path(way, bid, bid_len, unwind_cfi_file_debuglink(f), m->path, p, sizeof(p)))
                        continue;
                for (size_t i = 0; i < n_roots && !added; i++) {
                        int fd = elf_debug_file_open(roots[i].path, p), r;

                        if (fd < 0)
                                continue;
                        r = unwind_cfi_file_add_debug_fd(f, fd, room, u->cache_bytes_max);
                        safe_close(fd);
                        added = r >= 0;
                        full = full || r == -ENOSPC;
                }
        }
        if (added) {
                u->stats.debug_files++;
                u->stats.cache_bytes += unwind_cfi_file_bytes(f) - before;
        } else if (full) {
                /* Looked for again a flush interval later (the tables may have been dropped, or
                 * other files' tables come and gone), not at every sample meanwhile. */
                u->stats.loads_deferred++;
                unwind_cfi_file_set_debug_file_retry_usec(f, now_usec(CLOCK_MONOTONIC) + u->flush_interval_usec);
        } else
                /* A view whose lookup raced renames twice counts as tried too: a container that
                 * keeps renaming its own paths neither makes every frame look nor holds back the
                 * other views' lookups of a file they share. */
                for (size_t i = 0; i < n_roots; i++)
                        unwind_cfi_file_debug_file_tried(f, roots[i].view);
        t = now_nsec(CLOCK_MONOTONIC) - t;
        *load_nsec += t;
        u->stats.load_nsec += t;
        return added;
}

static UnwindCut step_result_to_cut(UnwindStepResult r) {
        switch (r) {
        case UNWIND_STEP_NO_CFI:
                return UNWIND_CUT_NO_CFI;
        case UNWIND_STEP_MEMORY:
                return UNWIND_CUT_STACK;
        case UNWIND_STEP_BELOW_SP:
                return UNWIND_CUT_BELOW_SP;
        case UNWIND_STEP_REGISTER:
                return UNWIND_CUT_REGISTER;
        default:
                return UNWIND_CUT_BAD;
        }
}

/* One frame-pointer step: [bp] is the caller's bp, [bp + word] the return address (word: 8, or 4
 * in a 32-bit process), on arm64 too (a frame record, x29 and x30, at x29; the return address
 * maybe signed). On x86 the caller's stack pointer is just above the two words; on arm64 a frame
 * record may sit anywhere in its frame (GCC puts it at the bottom), so the caller's stack pointer
 * is unknown after the step, and so are the rules that need it: the walk goes on by frame
 * pointers, or by rules stated from x29. A zero bp that an earlier frame saved ends the chain (the x86-64 psABI:
 * the outermost frame's rbp is 0, as _start and Go's goroutine entry leave it; in a file's code
 * only, see unwinder_unwind()); the interrupted
 * frame's live rbp may be 0 as any register (code without frame pointers), which ends nothing. A
 * caller without frame pointers that zeroed rbp ends a walk early too: frame-pointer walking
 * cannot tell. */
static UnwindStepResult step_fp(UnwindRegs *regs, const UnwindMemory *mem, bool first, unsigned word,
                                uint16_t machine) {
        uint64_t nbp, ra;

        if (!regs->bp_valid)
                return UNWIND_STEP_REGISTER;
        if (regs->bp == 0)
                return first ? UNWIND_STEP_MEMORY : UNWIND_STEP_END;
        if (!unwind_memory_read_word(mem, regs->bp, word, &nbp) ||
            !unwind_memory_read_word(mem, regs->bp + word, word, &ra))
                return UNWIND_STEP_MEMORY;
        regs->sp = regs->bp + 2 * word;
        regs->sp_unknown = machine == EM_AARCH64;
        regs->bp = nbp;
        regs->ip = unwind_strip_pac(machine, ra);
        regs->bx_valid = false; /* a frame walked without its CFI may have used rbx: unknown now */
        regs->lr_valid = false;
        regs->scratch_valid = 0;
        return UNWIND_STEP_OK;
}

/*
 * Go's assembly that moves the stack pointer by more than a constant says nothing of it in the
 * .debug_frame the Go toolchain writes: runtime.nanotime1, runtime.walltime and time.now (Go 1.19's
 * runtime/sys_linux_amd64.s and time_linux_amd64.s) keep the stack pointer in r12, switch to the
 * g0 stack if not on it, and realign it before they call the vDSO, while their rule goes on
 * stating the CFA as their own frame's. On the g0 stack (the scheduler's calls) that rule reads,
 * as the return address, one of the two words the function saved below its frame (the m's
 * vdsoPC and vdsoSP, zero unless such calls nest), and the walk ended there as at an outermost
 * frame. Go keeps a frame pointer in every function with a frame, and these set theirs before
 * the switch: a zero return address by a .debug_frame rule, in a frame whose bp lies above its
 * stack pointer, is taken from the frame pointer instead (regs, before the step, into *ret) when
 * that gives one. Called on the goroutine's stack, the frame pointer is on that stack, not in
 * the copy of the g0 stack: no step, and the walk ends as before. x86-64 only: on i386 Go keeps
 * no frame pointer, and ebp is any register.
 */
static bool step_fp_for_realigned(const UnwindRegs *regs, const UnwindMemory *mem, UnwindRegs *ret) {
        UnwindRegs r = *regs;

        if (!r.bp_valid || r.bp < r.sp ||
            step_fp(&r, mem, /* first= */ false, sizeof(uint64_t), EM_X86_64) != UNWIND_STEP_OK ||
            r.ip == 0)
                return false;
        *ret = r;
        return true;
}

/* The machine whose code the process runs: in->machine, else the host's, or its 32-bit one. */
static uint16_t input_machine(const UnwindInput *in) {
        if (in->machine != 0)
                return in->machine;
#if defined(__x86_64__)
        return in->compat32 ? EM_386 : EM_X86_64;
#elif defined(__aarch64__)
        return in->compat32 ? EM_ARM : EM_AARCH64;
#else
        return EM_NONE;
#endif
}

size_t unwinder_unwind(Unwinder *u, ProcTable *procs, const UnwindInput *in, uint64_t *ips, size_t max) {
        const uint16_t machine = input_machine(in);
        const bool compat32 = machine == EM_386;
        /* A 32-bit process's registers, as the kernel's own walk takes them (compat_ptr). */
        const uint64_t mask = compat32 ? UINT32_MAX : UINT64_MAX;
        const unsigned word = compat32 ? 4 : 8;
        UnwindMemory mem = { .base = in->sp & mask, .data = in->stack, .size = in->stack_size };
        UnwindRegs regs = { .ip = in->ip & mask, .sp = in->sp & mask, .bp = in->bp & mask, .bp_valid = true,
                              /* arm64's sample has no x19, which bx stands for there */
                              .bx = in->bx & mask, .bx_valid = machine != EM_AARCH64,
                              .lr = unwind_strip_pac(machine, in->lr), .lr_valid = machine == EM_AARCH64 };
        /* Reading the clock costs about as much as walking a frame, so a stack of fewer than
         * UNWIND_CLOCK_FRAMES frames never reads it: the budget starts at the first check. One
         * stack in UNWIND_TIMED_EVERY is timed whole for the statistics. */
        bool timed = u->stats.stacks % UNWIND_TIMED_EVERY == 0;
        uint64_t t0 = timed ? now_nsec(CLOCK_MONOTONIC) : 0;
        bool used_fp = false, exact = true; /* the first address is the interrupted instruction */
        bool in_vdso = false, after_vdso; /* this frame's mapping is the vDSO; the one before's was */
        UnwindCut cut = _UNWIND_CUT_INVALID;
        uint64_t load_nsec = 0;
        size_t n = 0;

        if (max < 2)
                return 0;
        for (unsigned i = 0; in->scratch && i < UNWIND_SCRATCH_REGS; i++)
                regs.scratch[i] = in->scratch[i] & mask;
        regs.scratch_valid = in->scratch ? (uint16_t) ((1U << UNWIND_SCRATCH_REGS) - 1) : 0;
        u->stats.stacks++;
        if (machine != EM_X86_64 && machine != EM_386 && machine != EM_AARCH64) {
                /* A 32-bit Arm process on arm64: no unwinder for its code (the frame records of
                 * A32 and T32 code are their own), the interrupted address alone, cut. */
                ips[n++] = regs.ip;
                cut = UNWIND_CUT_NO_CFI;
                goto walked;
        }
        for (;;) {
                const ProcMap *m;
                UnwindCfiFile *f = NULL;
                UnwindStepResult r = UNWIND_STEP_NO_CFI;
                bool deferred = false;
                UnwindRule buf;
                uint64_t lookup = exact ? regs.ip : regs.ip - 1, vaddr = 0, old_sp = regs.sp;
                /* A step that takes the return address from the link register may leave the stack
                 * pointer where it was (a leaf with no frame): the only step that can, since it
                 * leaves the register unknown. */
                bool had_lr = regs.lr_valid, old_sp_unknown = regs.sp_unknown;

                if (n >= max - 1) {
                        cut = UNWIND_CUT_DEPTH;
                        break;
                }
                ips[n++] = regs.ip;

                after_vdso = in_vdso;
                m = proc_table_find_map(procs, in->pid, lookup);
                if (!m) {
                        cut = UNWIND_CUT_UNMAPPED;
                        break;
                }
                in_vdso = m->path[0] == '[' && streq(m->path, "[vdso]");
                f = file_for(u, procs, in->pid, m, compat32, &load_nsec, &deferred);
                /* Code no ELF file holds: anonymous memory, or a mapping of something else
                 * (PHP's JIT buffer in shared memory shows as "/dev/zero (deleted)"). */
                bool jit = f ? f != u->gone && unwind_cfi_file_word(f) == 0 : !deferred;
                if (f && unwind_cfi_file_machine(f) != machine)
                        f = NULL; /* i386 CFI in a 64-bit process, or the other way round */
                if (f && unwind_cfi_file_offset_to_vaddr(f, lookup - m->start + m->pgoff, &vaddr)) {
                        const UnwindRule *rule = rule_for(u, f, vaddr, &buf);
                        if (rule->kind == UNWIND_RULE_NONE && unwind_cfi_file_wants_debug_file(f) &&
                            debug_file_load(u, procs, in->pid, m, f, &load_nsec)) {
                                rule_forget(u, f, vaddr);
                                rule = rule_for(u, f, vaddr, &buf);
                        }
                        uint8_t go_flags = rule->go_flags;
                        /* The interrupted address of a process in a system call is the one after
                         * the syscall instruction: past the end of a function that ends with it
                         * (glibc's __restore_rt, whose FDE ends at the rt_sigreturn syscall). Only
                         * a signal frame's rule is taken so: after a page fault or an interrupt the
                         * address is exact, and the function before may be another's. */
                        if (rule->kind == UNWIND_RULE_NONE && n == 1 && in->kernel_mode && vaddr > 0) {
                                /* The two addresses may share a cache slot (or buf): the lookup of the
                                 * byte before can overwrite the rule just read, which was "none". */
                                static const UnwindRule none = { .kind = UNWIND_RULE_NONE };
                                const UnwindRule *before = rule_for(u, f, vaddr - 1, &buf);
                                if (before->kind != UNWIND_RULE_NONE && before->signal) {
                                        rule = before;
                                        vaddr--;
                                } else
                                        rule = &none;
                        }
                        /* Where Go's own traceback ends (sampler-unwind-go.c): at a TOPFRAME
                         * function, whole; at an SPWRITE one that called another, cut: it moved
                         * the stack pointer, to g0's stack (runtime.mcall, runtime.systemstack) or
                         * another goroutine's, and its rule reads whatever word lies where its
                         * frame would be (an old return address at g0.sched.sp: a false frame).
                         * One that called the vDSO (runtime.nanotime1, time.now) is no stop: Go's
                         * profiler walks such a stack from the m's vdsoPC and vdsoSP, its caller's
                         * (src/runtime/proc.go, sigprof(), Go 1.17-1.22), as step_fp_for_realigned()
                         * does here. The interrupted function is walked by its rule still (Go's
                         * profiler stops there too): most of its samples come before its switch,
                         * where the rule holds (runtime.mcall and runtime.systemstack entered on a
                         * goroutine's stack, runtime.nanotime1's own code: 22 of 25 such samples
                         * of go-burn -sched whole, 3 through a false frame), and the copy does
                         * not tell after from before. */
                        if (go_flags & GOPCLNTAB_FLAG_TOPFRAME) {
                                cut = _UNWIND_CUT_INVALID;
                                break;
                        }
                        if ((go_flags & GOPCLNTAB_FLAG_SPWRITE) && n > 1 && !after_vdso) {
                                cut = UNWIND_CUT_GO_STACK_SWITCH;
                                break;
                        }
                        /* The rule is for the address looked up; a signal frame's return address is exact. */
                        UnwindRegs before = regs;
                        r = unwind_cfi_apply(f, vaddr, rule, &regs, &mem);
                        if (r == UNWIND_STEP_OK && regs.ip == 0 && rule->debug_frame && u->mode == UNWIND_MODE_AUTO &&
                            machine == EM_X86_64 && step_fp_for_realigned(&before, &mem, &regs)) {
                                u->stats.frames_fp++;
                                used_fp = true;
                                exact = false;
                        } else if (r == UNWIND_STEP_OK) {
                                u->stats.frames_cfi++;
                                exact = rule->signal; /* the caller of a signal frame was interrupted, not calling */
                        }
                }
                /* arm64: a PLT entry has no CFI (ld writes none for them on arm64, as it does on
                 * x86-64). Interrupted there, a stub has its return address still in the link
                 * register and the stack pointer as its caller left it (it touches neither): its
                 * caller is found from x30, and walked by its own rule from the same stack pointer.
                 * Only there: hand-written code without CFI may have pushed a frame (OpenSSL's
                 * arm64 assembly), and is walked by its frame pointer as any other. Counted with
                 * the frame-pointer steps. */
                if (r == UNWIND_STEP_NO_CFI && u->mode == UNWIND_MODE_AUTO && machine == EM_AARCH64 && n == 1 &&
                    regs.lr_valid && f && unwind_cfi_file_in_plt_stub(f, vaddr)) {
                        regs.ip = regs.lr;
                        regs.lr_valid = false;
                        regs.scratch_valid = 0;
                        r = UNWIND_STEP_OK;
                        u->stats.frames_fp++;
                        used_fp = true;
                        exact = false;
                }
                /* On arm64 a frame walked by its frame pointer leaves the stack pointer unknown:
                 * the next frame whose rule needs it is walked by its frame pointer too. */
                if ((r == UNWIND_STEP_NO_CFI || (r == UNWIND_STEP_REGISTER && old_sp_unknown)) &&
                    u->mode == UNWIND_MODE_AUTO) {
                        r = step_fp(&regs, &mem, /* first= */ n == 1, word, machine);
                        /* No thread starts in JIT code: a zero bp there is code that keeps no frame
                         * pointer (PHP's JIT: 97% of a script's stacks ended at a trace and were
                         * counted whole), not the outermost frame. */
                        if (r == UNWIND_STEP_END && jit)
                                r = UNWIND_STEP_NO_CFI;
                        if (r == UNWIND_STEP_OK) {
                                u->stats.frames_fp++;
                                used_fp = true;
                                exact = false;
                        } else if (r != UNWIND_STEP_END)
                                r = UNWIND_STEP_NO_CFI;
                }
                if (r == UNWIND_STEP_END) {
                        cut = _UNWIND_CUT_INVALID;
                        break;
                }
                if (r != UNWIND_STEP_OK) {
                        cut = deferred && r == UNWIND_STEP_NO_CFI ? UNWIND_CUT_FULL : step_result_to_cut(r);
                        break;
                }
                if (regs.ip == 0) /* some outermost frames end in a zero return address instead */
                        break;
                if (regs.sp < old_sp || (regs.sp == old_sp && !had_lr)) {
                        cut = UNWIND_CUT_BAD;
                        break;
                }
                if (n % UNWIND_CLOCK_FRAMES == 0) {
                        uint64_t now = now_nsec(CLOCK_MONOTONIC);
                        if (t0 == 0) {
                                t0 = now;
                                load_nsec = 0;
                        } else if (now - t0 - load_nsec > u->budget_nsec) {
                                cut = UNWIND_CUT_TIME;
                                break;
                        }
                }
        }

walked:
        if (cut >= 0) {
                ips[n++] = 0;
                u->stats.cut[cut]++;
                u->stats.stacks_cut++;
        } else if (used_fp)
                u->stats.stacks_fp++;
        else
                u->stats.stacks_cfi++;
        if (timed) {
                u->stats.nsec += now_nsec(CLOCK_MONOTONIC) - t0 - load_nsec;
                u->stats.stacks_timed++;
        }
        return n;
}
