/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The analysis behind tprof-bundle show (bundle-analyze.h): folded files read back, the top
 * functions and the rankings of what rose; the one-line answer and the fall are bundle-answer.c's.
 * Memory grows with the distinct stacks of the files, which folding already bounds; every line is
 * checked and malformed ones are counted rather than trusted.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "basic/alloc-util.h"
#include "basic/hashmap.h"
#include "basic/macro.h"
#include "basic/string-util.h"
#include "bundle/bundle-analyze-internal.h"
#include "bundle/bundle-analyze.h"
#include "profile/profile-irq.h"

void folded_done(Folded *f) {
        for (size_t i = 0; i < f->n; i++)
                free(f->lines[i].stack);
        free(f->lines);
        *f = FOLDED_NULL;
}

static uint32_t folded_stack_irq_tail(const char *stack) {
        const char *from = folded_stack_irq_from(stack);

        return from ? (uint32_t) strlen(from) : 0;
}

/* "stack COUNT": the count is the digits after the last blank. Returns false if malformed. */
static bool parse_folded_line(char *line, size_t len, uint64_t *ret_count) {
        size_t i;
        uint64_t v = 0;

        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
                line[--len] = '\0';
        if (len == 0)
                return false;
        i = len;
        while (i > 0 && line[i - 1] >= '0' && line[i - 1] <= '9')
                i--;
        if (i == len || i == 0 || line[i - 1] != ' ' || len - i > 19)
                return false;
        for (size_t k = i; k < len; k++)
                v = v * 10 + (uint64_t) (line[k] - '0');
        line[i - 1] = '\0';
        if (i - 1 == 0 || memchr(line, '\0', i - 1))
                return false;
        *ret_count = v;
        return true;
}

int folded_load_file(FILE *in, Folded *ret) {
        _cleanup_(folded_donep) Folded f = FOLDED_NULL;
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;
        uint64_t bytes = 0;
        ssize_t n;

        while ((n = getline(&line, &cap, in)) >= 0) {
                uint64_t count;

                bytes += (uint64_t) n;
                if (bytes > FOLDED_BYTES_MAX)
                        return -EFBIG;
                if (line[0] == '\n' || (line[0] == '\r' && line[1] == '\n'))
                        continue; /* blank lines are allowed */
                if ((size_t) n > FOLDED_LINE_MAX || f.n >= FOLDED_STACKS_MAX ||
                    !parse_folded_line(line, (size_t) n, &count)) {
                        f.n_skipped++;
                        continue;
                }
                if (count == 0)
                        continue;
                if (count > UINT64_MAX - f.total) {
                        f.n_skipped++;
                        continue;
                }
                if (!GREEDY_REALLOC(f.lines, f.allocated, f.n + 1))
                        return -ENOMEM;
                f.lines[f.n].stack = strdup(line);
                if (!f.lines[f.n].stack)
                        return -ENOMEM;
                f.lines[f.n].irq_tail = folded_stack_irq_tail(line);
                f.lines[f.n++].count = count;
                f.total += count;
        }
        if (ferror(in))
                return -EIO;
        *ret = f;
        f = FOLDED_NULL;
        return 0;
}

int folded_load(const char *path, Folded *ret) {
        _cleanup_fclose_ FILE *in = fopen(path, "re");
        if (!in)
                return -errno;
        return folded_load_file(in, ret);
}

static int line_compare(const void *a, const void *b) {
        const FoldedLine *x = a, *y = b;
        if (x->count != y->count)
                return x->count > y->count ? -1 : 1;
        return strcmp(x->stack, y->stack);
}

void folded_sort_by_count(Folded *f) {
        if (f->n > 1)
                qsort(f->lines, f->n, sizeof(FoldedLine), line_compare);
}

void folded_stack_comm(const char *stack, const char **ret, size_t *ret_len) {
        const char *semi = strchr(stack, ';');
        *ret = stack;
        *ret_len = semi ? (size_t) (semi - stack) : strlen(stack);
}

void folded_stack_leaf(const char *stack, const char **ret, size_t *ret_len) {
        const char *semi = strrchr(stack, ';');
        *ret = semi ? semi + 1 : stack;
        *ret_len = strlen(*ret);
}

const char *folded_stack_irq_from(const char *stack) {
        const char *comm, *end, *from = NULL;
        size_t clen;

        folded_stack_comm(stack, &comm, &clen);
        bool idle = profile_comm_is_idle(comm, clen);
        /* From the leaf towards the root, until a frame says whether it is interrupt work. */
        for (end = stack + strlen(stack); end > comm + clen;) {
                const char *f = end;

                while (f[-1] != ';')
                        f--;
                ProfileKernelFrame kind = profile_kernel_frame(f, (size_t) (end - f));
                int r = profile_irq_step(idle, kind);

                /* The idle task's interrupt work is under its first interrupt frame after the idle
                 * loop, another task's under the interrupt's entry ("asm_common_interrupt;
                 * common_interrupt"), whatever the task ran below it. */
                if (r < 0 || (from && !idle && kind != PROFILE_KERNEL_FRAME_IRQ_ENTRY))
                        return from;
                if (r > 0)
                        from = f;
                end = f - 1;
        }
        return from;
}

bool folded_stack_irq(const char *stack) {
        return folded_stack_irq_from(stack) != NULL;
}

static bool is_lower_or_digit(char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

size_t folded_comm_prefix(const char *comm, size_t len) {
        size_t slash;

        if (len > 8 && strneq(comm, "kworker/", 8))
                return 8;
        if (len < 3 || !(comm[0] >= 'a' && comm[0] <= 'z'))
                return 0;
        for (slash = 1; slash < len && comm[slash] != '/'; slash++)
                if (!is_lower_or_digit(comm[slash]) && comm[slash] != '_' && comm[slash] != '-')
                        return 0;
        if (slash + 1 >= len || (slash == 7 && strneq(comm, "swapper", 7)))
                return 0;
        if (len == slash + 2 && comm[slash + 1] == '*') /* a key already */
                return slash + 1;
        for (size_t i = slash + 1; i < len; i++)
                if (comm[i] < '0' || comm[i] > '9')
                        return 0;
        return slash + 1;
}

const char *folded_comm_key(const char *comm, char buf[static FOLDED_COMM_KEY_MAX]) {
        size_t p = folded_comm_prefix(comm, strlen(comm));

        if (p == 0 || p + 2 > FOLDED_COMM_KEY_MAX)
                return comm;
        memcpy(buf, comm, p);
        buf[p] = '*';
        buf[p + 1] = '\0';
        return buf;
}

void function_stats_free(FunctionStat *s, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(s[i].name);
        free(s);
}

static int function_compare(const void *a, const void *b) {
        const FunctionStat *x = a, *y = b;
        if (x->self != y->self)
                return x->self > y->self ? -1 : 1;
        if (x->total != y->total)
                return x->total > y->total ? -1 : 1;
        return strcmp(x->name, y->name);
}

int folded_functions(const Folded *f, FunctionStat **ret, size_t *ret_n) {
        _cleanup_(hashmap_freep) Hashmap *h = hashmap_new();
        FunctionStat *stats = NULL;
        size_t *seen_in = NULL; /* line index + 1 that last counted the function, for "once per stack" */
        size_t n = 0, allocated = 0, seen_allocated = 0;
        int r = -ENOMEM;

        if (!h)
                return -ENOMEM;
        for (size_t i = 0; i < f->n; i++) {
                const char *s = f->lines[i].stack;
                const char *p = strchr(s, ';');

                if (!p)
                        continue; /* a comm alone: no function */
                p++;
                for (;;) {
                        const char *e = strchr(p, ';');
                        size_t len = e ? (size_t) (e - p) : strlen(p);
                        bool added;
                        uint64_t *slot = hashmap_slot(h, p, len, n, &added);

                        if (!slot)
                                goto fail;
                        if (added) {
                                if (!GREEDY_REALLOC(stats, allocated, n + 1) ||
                                    !GREEDY_REALLOC(seen_in, seen_allocated, n + 1))
                                        goto fail;
                                stats[n] = (FunctionStat) { .name = strndup(p, len) };
                                seen_in[n] = 0;
                                if (!stats[n].name)
                                        goto fail;
                                n++;
                        }
                        FunctionStat *st = &stats[*slot];
                        if (seen_in[*slot] != i + 1) {
                                seen_in[*slot] = i + 1;
                                st->total += f->lines[i].count;
                        }
                        if (!e) {
                                st->self += f->lines[i].count;
                                break;
                        }
                        p = e + 1;
                }
        }
        if (n > 1)
                qsort(stats, n, sizeof(FunctionStat), function_compare);
        free(seen_in);
        *ret = stats;
        *ret_n = n;
        return 0;
fail:
        free(seen_in);
        function_stats_free(stats, n);
        return r;
}

double proportion_z(uint64_t a, uint64_t n1, uint64_t b, uint64_t n2) {
        double p1, p2, p, se, z;

        if (n1 == 0 || n2 == 0)
                return 0;
        /* In double throughout: counts near UINT64_MAX would wrap as sums of integers. */
        p1 = (double) a / (double) n1;
        p2 = (double) b / (double) n2;
        p = ((double) a + (double) b) / ((double) n1 + (double) n2);
        se = sqrt(p * (1 - p) * (1.0 / (double) n1 + 1.0 / (double) n2));
        if (!(se > 0) || !isfinite(se))
                return 0;
        z = (p1 - p2) / se;
        return isfinite(z) ? z : 0;
}


bool counts_rose(const Counts *c, uint64_t slice_total, uint64_t baseline_total) {
        return c->slice >= RISE_SAMPLES_MIN &&
               (double) c->slice / (double) slice_total > (double) c->baseline / (double) baseline_total &&
               proportion_z(c->slice, slice_total, c->baseline, baseline_total) >= RISE_Z_MIN;
}


void count_table_done(CountTable *t) {
        hashmap_free(t->h);
        for (size_t i = 0; i < t->n; i++)
                free(t->c[i].key);
        free(t->c);
}

/* The index of key's counts in t, added as zero if new; -ENOMEM. */
static int64_t count_index(CountTable *t, const char *key, size_t len) {
        bool added;
        uint64_t *slot = hashmap_slot(t->h, key, len, t->n, &added);

        if (!slot)
                return -ENOMEM;
        if (added) {
                if (!GREEDY_REALLOC(t->c, t->allocated, t->n + 1))
                        return -ENOMEM;
                t->c[t->n] = (Counts) { .key = strndup(key, len) };
                if (!t->c[t->n].key)
                        return -ENOMEM;
                t->n++;
        }
        return (int64_t) *slot;
}

static int count_add(CountTable *t, const char *key, size_t len, uint64_t count, bool baseline) {
        int64_t i = count_index(t, key, len);

        if (i < 0)
                return (int) i;
        if (baseline)
                t->c[i].baseline += count;
        else
                t->c[i].slice += count;
        return 0;
}

void stack_key(const FoldedLine *l, RiseKind kind, char buf[static STACK_KEY_MAX], const char **ret,
               size_t *ret_len) {
        const char *stack = l->stack, *comm, *leaf;
        size_t clen, llen, p;

        folded_stack_comm(stack, &comm, &clen);
        folded_stack_leaf(stack, &leaf, &llen);
        bool alone = leaf == comm;
        p = folded_comm_prefix(comm, clen);
        if (!alone && l->irq_tail > 0) {
                comm = PROFILE_IRQ_KEY;
                clen = strlen(PROFILE_IRQ_KEY);
        } else if (p > 0) { /* NAME "/" "*", never longer than the comm it stands for */
                memcpy(buf, comm, p);
                buf[p] = '*';
                comm = buf;
                clen = p + 1;
        }
        if (kind == RISE_PROCESS || alone) {
                *ret = comm;
                *ret_len = clen;
                return;
        }
        if (comm != buf)
                memcpy(buf, comm, clen);
        buf[clen] = ';';
        memcpy(buf + clen + 1, leaf, llen);
        *ret = buf;
        *ret_len = clen + 1 + llen;
}

static int count_folded(CountTable *t, const Folded *f, RiseKind kind, bool baseline) {
        char buf[STACK_KEY_MAX];

        for (size_t i = 0; i < f->n; i++) {
                const char *k;
                size_t len;
                int r;

                stack_key(&f->lines[i], kind, buf, &k, &len);
                r = count_add(t, k, len, f->lines[i].count, baseline);
                if (r < 0)
                        return r;
        }
        return 0;
}

void rises_free(Rise *r, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(r[i].name);
                free(r[i].top_function);
                free(r[i].thread);
        }
        free(r);
}

static int rise_compare(const void *a, const void *b) {
        const Rise *x = a, *y = b;
        if (x->z != y->z)
                return x->z > y->z ? -1 : 1;
        return strcmp(x->name, y->name);
}

int count_both(CountTable *t, const Folded *a, const Folded *b, RiseKind kind) {
        int r;

        t->h = hashmap_new();
        if (!t->h)
                return -ENOMEM;
        r = count_folded(t, a, kind, false);
        return r < 0 ? r : count_folded(t, b, kind, true);
}

/* Frames no rise is said to be under, nor to have risen in: those that name nothing ("[unknown]" of
 * a cut chain, "[libfoo.so]" of a file without symbols, "[nw-1f2e]" of a stripped program) and those
 * every thread of a program starts from, which a rise is under only because some of the process's
 * stacks were cut short of them, and which are the leaf only of a stack cut at them. */
static bool frame_says_nothing(const char *f, size_t len) {
        static const char *const start[] = {
                "_start", "__libc_start_main", "__libc_start_main_impl", "__libc_start_main_alias_2",
                "__libc_start_call_main", "libc_start_main_stage2", "_dl_start", "_dl_start_user",
                "start_thread", "thread_start", "clone", "__clone", "clone3", "__clone3",
                "__clone_internal", "ret_from_fork", "ret_from_fork_asm", "kthread", "runtime.goexit",
                "runtime.goexit.abi0", "common_startup_64", "secondary_startup_64",
                "secondary_startup_64_no_verify",
        };
        const char *at = memchr(f, '@', len);

        if (len >= 2 && f[0] == '[' && f[len - 1] == ']')
                return true;
        if (at) /* "__libc_start_main@@GLIBC_2.34": the symbol's version says nothing more */
                len = (size_t) (at - f);
        for (size_t i = 0; i < ELEMENTSOF(start); i++)
                if (strlen(start[i]) == len && strneq(f, start[i], len))
                        return true;
        return false;
}

static bool frame_is_one_of(const char *f, size_t len, const char *const *names, size_t n) {
        const char *dot = memchr(f, '.', len);

        if (dot && dot > f) /* "el0_svc_common.constprop.0": the function's clone */
                len = (size_t) (dot - f);
        for (size_t i = 0; i < n; i++)
                if (strlen(names[i]) == len && memcmp(f, names[i], len) == 0)
                        return true;
        return false;
}

/* arm64's way into the kernel from user space for every synchronous exception, a system call or a
 * page fault alike: the vector's code and the handler it calls (arch/arm64/kernel/entry.S and
 * entry-common.c: el0t_64_sync, el0t_32_sync and their _handler in 5.15 to 6.19; el0_sync,
 * el0_sync_compat and their _handler in 5.10; el0_sync and el0_sync_compat alone in 5.4, which
 * branch to the labels el0_svc and el0_svc_compat). */
static bool frame_is_arm64_sync_entry(const char *f, size_t len) {
        static const char *const names[] = {
                "el0t_64_sync",     "el0t_32_sync",         "el0t_64_sync_handler",    "el0t_32_sync_handler",
                "el0_sync",         "el0_sync_compat",      "el0_sync_handler",        "el0_sync_compat_handler",
        };

        return frame_is_one_of(f, len, names, ELEMENTSOF(names));
}

/* The kernel's system call entry as a frame of a stack: the first kernel frame under the C library's
 * wrapper that made the call (arch/x86/entry/entry_64.S, entry_64_compat.S and entry_32.S, Linux
 * 6.18), or on arm64 the first past the exception's way in that says it is a system call: el0_svc
 * and el0_svc_compat, C functions of entry-common.c in 5.10 to 6.19, labels in 5.4's entry.S. */
static bool frame_is_syscall_entry(const char *f, size_t len) {
        static const char *const names[] = {
                "entry_SYSCALL_64",      "entry_SYSCALL_64_after_hwframe",
                "entry_SYSCALL_compat",  "entry_SYSCALL_compat_after_hwframe",
                "entry_SYSENTER_compat", "entry_SYSENTER_compat_after_hwframe",
                "entry_INT80_compat",    "entry_SYSENTER_32",
                "entry_INT80_32",        "el0_svc",
                "el0_svc_compat",
        };

        return frame_is_one_of(f, len, names, ELEMENTSOF(names));
}

/* A leaf on a system call's way in or out: its entry, or the function the entry calls, which
 * enables interrupts once in and disables them again for the way out (do_syscall_64(),
 * arch/x86/entry/syscall_64.c; the 32-bit ones of syscall_32.c, Linux 6.18; on arm64 el0_svc(),
 * which unmasks them with local_daif_restore() and returns through exit_to_user_mode(),
 * entry-common.c, and the functions under it to the system call, do_el0_svc() and
 * el0_svc_common() of syscall.c, Linux 6.12, el0_svc_handler() in 5.4; and arm64's way in, which
 * every exception from user space takes). */
static bool leaf_is_syscall_path(const char *f, size_t len) {
        static const char *const names[] = {
                "do_syscall_64",      "do_int80_syscall_32", "do_int80_emulation", "do_fast_syscall_32",
                "__do_fast_syscall_32", "do_SYSENTER_32",    "do_el0_svc",         "do_el0_svc_compat",
                "el0_svc_common",     "el0_svc_handler",     "el0_svc_compat_handler",
        };

        return frame_is_syscall_entry(f, len) || frame_is_arm64_sync_entry(f, len) ||
               frame_is_one_of(f, len, names, ELEMENTSOF(names));
}

/* A leaf where the kernel's softirq handling lands, not its work: a hard interrupt's handler runs
 * with interrupts disabled (do_IRQ, arch/x86/kernel/irq.c, 4.14; common_interrupt and the sysvec_*
 * handlers, 5.10 to 6.12, enable none), and so do irq_exit() and __irq_exit_rcu(), which disable
 * them first, and invoke_softirq() (kernel/softirq.c, 4.14, 5.10, 6.1, 6.12); __do_softirq() (its
 * body handle_softirqs() from 6.8, which run_ksoftirqd() calls after ksoftirqd_run_begin() disabled
 * them) enables them before the first softirq's handler and disables them after the last, do_softirq()
 * around its own with local_irq_save(). cpu-clock's timer due while the interrupt ran is taken
 * where they are enabled again, so a storm of interrupts gathers in these frames samples of the
 * hard interrupts' handlers, more than any softirq handler has, and their own work is a loop
 * over the pending bits. The softirq frames of profile-irq.c, an interrupt's way out. */
static bool frame_is_softirq_landing(const char *f, size_t len) {
        return profile_kernel_frame(f, len) == PROFILE_KERNEL_FRAME_SOFTIRQ;
}

bool leaf_names_function(const char *f, size_t len) {
        return !frame_says_nothing(f, len) && !leaf_is_syscall_path(f, len) && !frame_is_softirq_landing(f, len);
}

/* A function that made system calls is their wrapper where it has at most this many samples as the
 * leaf (the way back of its calls) per sample of the kernel's work under it: the C library's sendto()
 * had 0.2 in a loop of datagrams and syscall() 0.6 in a loop of getppid() (tprofd, Linux 6.18); the
 * vDSO's clock_gettime(), which reads most clocks itself, has more where it does so most of the time. */
#define SYSCALL_WRAPPER_LEAF_PER_KERNEL_SAMPLE 4u

static uint64_t add_saturating(uint64_t a, uint64_t b) {
        return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Adds to wrappers the keys "comm;function" (as folded_rises() keys functions) of the functions
 * that made system calls in f's stacks of the processes in byname, the frame right above the
 * kernel's entry, with the samples of those stacks. */
static int add_syscall_wrappers(Hashmap *wrappers, const Hashmap *byname, const Folded *f) {
        char buf[STACK_KEY_MAX];

        for (size_t i = 0; i < f->n; i++) {
                const char *stack = f->lines[i].stack, *prev = NULL, *k, *p, *e;
                size_t plen = 0, klen;

                if (f->lines[i].irq_tail > 0)
                        continue;
                stack_key(&f->lines[i], RISE_PROCESS, buf, &k, &klen);
                if (!hashmap_get(byname, k, klen, NULL))
                        continue;
                p = strchr(stack, ';'); /* past the comm */
                for (; p; p = e) {
                        p++;
                        e = strchr(p, ';');
                        size_t len = e ? (size_t) (e - p) : strlen(p);
                        if (frame_is_syscall_entry(p, len))
                                break;
                        if (frame_is_arm64_sync_entry(p, len))
                                continue; /* a system call only if el0_svc follows */
                        prev = p;
                        plen = len;
                }
                if (!p || !prev || klen + 1 + plen >= STACK_KEY_MAX)
                        continue;
                if (k != buf)
                        memcpy(buf, k, klen);
                buf[klen] = ';';
                memcpy(buf + klen + 1, prev, plen);
                uint64_t *slot = hashmap_slot(wrappers, buf, klen + 1 + plen, 0, NULL);
                if (!slot)
                        return -ENOMEM;
                *slot = add_saturating(*slot, f->lines[i].count);
        }
        return 0;
}

/* Whether a function's leaf samples (slice and baseline) are those of the way back of system calls
 * it made, whose work in the kernel had in_kernel samples (0: it made none). */
static bool leaf_is_syscall_return(uint64_t leaf, uint64_t in_kernel) {
        return in_kernel > 0 && (in_kernel >= UINT64_MAX / SYSCALL_WRAPPER_LEAF_PER_KERNEL_SAMPLE ||
                                 leaf <= in_kernel * SYSCALL_WRAPPER_LEAF_PER_KERNEL_SAMPLE);
}

int folded_rises(const Folded *slice, const Folded *baseline, RiseKind kind, size_t max_n, Rise **ret,
                 size_t *ret_n) {
        CountTable t = {}, ft = {};
        _cleanup_(hashmap_freep) Hashmap *byname = NULL, *wrappers = NULL;
        _cleanup_free_ const Counts **best = NULL;
        _cleanup_free_ double *best_z = NULL;
        Rise *rises = NULL;
        size_t n = 0, allocated = 0;
        int r;

        *ret = NULL;
        *ret_n = 0;
        if (slice->total == 0 || baseline->total == 0)
                return 0;
        r = count_both(&t, slice, baseline, kind);
        if (r >= 0 && kind == RISE_PROCESS)
                r = count_both(&ft, slice, baseline, RISE_FUNCTION);
        if (r < 0)
                goto finish;

        for (size_t i = 0; i < t.n; i++) {
                Counts *c = &t.c[i];
                double s1 = (double) c->slice / (double) slice->total;
                double s2 = (double) c->baseline / (double) baseline->total;
                double z = proportion_z(c->slice, slice->total, c->baseline, baseline->total);

                if (!counts_rose(c, slice->total, baseline->total))
                        continue;
                if (!GREEDY_REALLOC(rises, allocated, n + 1)) {
                        r = -ENOMEM;
                        goto finish;
                }
                rises[n] = (Rise) {
                        .name = strdup(c->key),
                        .slice = c->slice,
                        .baseline = c->baseline,
                        .slice_share = s1,
                        .baseline_share = s2,
                        .z = z,
                };
                if (!rises[n].name) {
                        r = -ENOMEM;
                        goto finish;
                }
                n++;
        }
        if (n > 1)
                qsort(rises, n, sizeof(Rise), rise_compare);
        if (n > max_n) {
                for (size_t i = max_n; i < n; i++)
                        free(rises[i].name);
                n = max_n;
        }

        /* For each process, the function of it whose share rose most (largest z, rises only): one
         * pass over the functions, each found its process by name (every rise may be asked for).
         * Only a leaf with RISE_SAMPLES_MIN samples, as any rise: a rise in the kernel spreads over
         * many leaves (a read of memory.stat: vsnprintf, format_decode, the flush of the memory
         * controller's counters, the lookups of the open before it), each with a sample or two,
         * and the first of those ties in the file is no function that rose. The caller the rise
         * ran under (folded_rise_under()) says it then. Nor a leaf that names nothing
         * ("[unknown]", "[libfoo.so]") or a start-up frame: the best function that names one, or
         * none. Nor is the C library's wrapper of a
         * system call (sendto, read: the frame right above the kernel's entry in the process's
         * stacks) where it is the leaf, unless it has more samples there than the way back of its
         * calls could (SYSCALL_WRAPPER_LEAF_PER_KERNEL_SAMPLE: a function that does its own work,
         * as the vDSO's clock_gettime()), nor the kernel's entry and do_syscall_64(): the kernel
         * enters a system call and returns to user space with interrupts disabled
         * (syscall_enter_from_user_mode(), syscall_exit_to_user_mode(),
         * include/linux/entry-common.h, Linux 6.18), so a timer sample due on the way in lands
         * where do_syscall_64() enables them, one due on the way back on the instruction after
         * the call, and a busy loop of system calls gathers there samples of the kernel's work,
         * more than any one of the many kernel functions that work spreads over has. */
        if (kind == RISE_PROCESS && n > 0) {
                best = new0(const Counts *, n);
                best_z = new0(double, n);
                byname = hashmap_new();
                wrappers = hashmap_new();
                if (!best || !best_z || !byname || !wrappers) {
                        r = -ENOMEM;
                        goto finish;
                }
                for (size_t i = 0; i < n; i++)
                        if (hashmap_put(byname, rises[i].name, strlen(rises[i].name), i) < 0) {
                                r = -ENOMEM;
                                goto finish;
                        }
                r = add_syscall_wrappers(wrappers, byname, slice);
                if (r >= 0)
                        r = add_syscall_wrappers(wrappers, byname, baseline);
                if (r < 0)
                        goto finish;
                for (size_t j = 0; j < ft.n; j++) {
                        const Counts *c = &ft.c[j];
                        const char *semi = strchr(c->key, ';');
                        uint64_t i, in_kernel = 0;
                        double z;

                        /* "comm;leaf" with a leaf: a comm-only key names no function */
                        if (!semi || semi[1] == '\0' || c->slice < RISE_SAMPLES_MIN ||
                            !hashmap_get(byname, c->key, (size_t) (semi - c->key), &i) ||
                            (hashmap_get(wrappers, c->key, strlen(c->key), &in_kernel) &&
                             leaf_is_syscall_return(add_saturating(c->slice, c->baseline), in_kernel)) ||
                            !leaf_names_function(semi + 1, strlen(semi + 1)))
                                continue;
                        z = proportion_z(c->slice, slice->total, c->baseline, baseline->total);
                        if (z <= 0 || (best[i] && z <= best_z[i]))
                                continue;
                        best[i] = c;
                        best_z[i] = z;
                }
                for (size_t i = 0; i < n; i++) {
                        const Counts *bc = best[i];
                        if (!bc)
                                continue;
                        rises[i].top_function = strdup(strchr(bc->key, ';') + 1);
                        if (!rises[i].top_function) {
                                r = -ENOMEM;
                                goto finish;
                        }
                        rises[i].function_slice_share = (double) bc->slice / (double) slice->total;
                        rises[i].function_baseline_share = (double) bc->baseline / (double) baseline->total;
                        rises[i].function_z = best_z[i];
                }
        }
        *ret = TAKE_PTR(rises);
        *ret_n = n;
        r = 0;
finish:
        if (rises)
                rises_free(rises, n);
        count_table_done(&t);
        count_table_done(&ft);
        return r;
}

/* An interrupt's way in or out (profile-irq.c's entry and softirq frames: common_interrupt,
 * irq_exit_rcu, handle_softirqs...): every interrupt's, no handler a rise ran under. */
static bool frame_is_interrupt_path(const char *f, size_t len) {
        ProfileKernelFrame kind = profile_kernel_frame(f, len);

        return kind == PROFILE_KERNEL_FRAME_IRQ_ENTRY || kind == PROFILE_KERNEL_FRAME_SOFTIRQ;
}

/* The frames of one stack looked at for folded_rise_under(); deeper ones are left out. */
#define RISE_UNDER_FRAMES_MAX 256u

int folded_rise_under(const Folded *a, const Folded *b, const char *comm, char **ret) {
        const Folded *files[] = { a, b };
        char kbuf[FOLDED_COMM_KEY_MAX], sbuf[STACK_KEY_MAX];
        /* Matched by key: "ksoftirqd/" "*" is every ksoftirqd's stacks. */
        const char *key = folded_comm_key(comm, kbuf);
        size_t klen = strlen(key);
        uint64_t total[2] = {}; /* the process's samples in a and b */
        /* A workqueue worker runs whatever work is queued: its rise is under a work item, the
         * function process_one_work() called, and frames above that are every worker's. */
        bool worker = startswith(key, "kworker/");
        /* Interrupt work is under the interrupt: the idle loop below it is every idle CPU's (and the
         * boot CPU's differs from the others', so neither is everywhere), a busy process's frames
         * are whichever process it landed in. */
        bool irq = streq(key, PROFILE_IRQ_KEY);
        const Counts *best = NULL;
        CountTable t = {};
        double scale, excess;
        int r = 0;

        *ret = NULL;
        if (a->total == 0 || b->total == 0)
                return 0;
        t.h = hashmap_new();
        if (!t.h)
                return -ENOMEM;
        for (size_t k = 0; k < ELEMENTSOF(files); k++)
                for (size_t i = 0; i < files[k]->n; i++) {
                        const FoldedLine *l = &files[k]->lines[i];
                        uint64_t stamp = (uint64_t) k * a->n + i + 1;
                        size_t n_seen = 0;

                        const char *ck;
                        size_t cklen, clen;

                        stack_key(l, RISE_PROCESS, sbuf, &ck, &cklen);
                        if (cklen != klen || !strneq(ck, key, klen))
                                continue;
                        /* Samples where the softirqs enabled interrupts again are the hard
                         * interrupts' that ran before: no handler's work (frame_is_softirq_landing()). */
                        const char *leaf;
                        size_t llen;
                        folded_stack_leaf(l->stack, &leaf, &llen);
                        if (frame_is_softirq_landing(leaf, llen))
                                continue;
                        clen = strcspn(l->stack, ";"); /* its frames follow its own comm */
                        total[k] += l->count;
                        /* Each function once per stack: a recursive one is not counted twice. */
                        bool after_work = false;
                        const char *irq_from = l->stack + strlen(l->stack) - l->irq_tail;
                        for (const char *f = l->stack + clen; *f == ';' && n_seen < RISE_UNDER_FRAMES_MAX;) {
                                const char *e = strchrnul(++f, ';');
                                int64_t x;
                                bool dup = false, item = after_work;

                                if (e == f) /* an empty frame (";;" in a hand-edited file) names nothing */
                                        continue;
                                after_work = (size_t) (e - f) == strlen("process_one_work") &&
                                             strneq(f, "process_one_work", (size_t) (e - f));
                                if ((worker && !item) || (irq && f < irq_from) || frame_says_nothing(f, (size_t) (e - f)) ||
                                    frame_is_interrupt_path(f, (size_t) (e - f))) {
                                        f = e;
                                        continue;
                                }
                                x = count_index(&t, f, (size_t) (e - f));
                                if (x < 0) {
                                        r = (int) x;
                                        goto finish;
                                }
                                dup = t.c[x].stamp == stamp;
                                n_seen++;
                                if (!dup) {
                                        t.c[x].stamp = stamp;
                                        t.c[x].depth = MAX(t.c[x].depth, n_seen);
                                        if (k == 0)
                                                t.c[x].slice += l->count;
                                        else
                                                t.c[x].baseline += l->count;
                                }
                                f = e;
                        }
                }

        /* The process's samples in a beyond its share in b, and each function's. */
        scale = (double) a->total / (double) b->total;
        excess = (double) total[0] - (double) total[1] * scale;
        if (excess <= 0)
                goto finish;
        for (size_t i = 0; i < t.n; i++) {
                const Counts *c = &t.c[i];
                double ex = (double) c->slice - (double) c->baseline * scale;

                if (ex < RISE_UNDER_SHARE * excess || c->slice < RISE_SAMPLES_MIN ||
                    (!worker && (double) c->slice >= RISE_UNDER_EVERYWHERE * (double) total[0]))
                        continue;
                /* Alike counts: the callee, deeper in the stacks (read -> seq_read_iter, always together). */
                if (best && (c->slice > best->slice ||
                             (c->slice == best->slice &&
                              (c->depth < best->depth || (c->depth == best->depth && strcmp(c->key, best->key) >= 0)))))
                        continue;
                best = c;
        }
        if (best) {
                *ret = strdup(best->key);
                if (!*ret)
                        r = -ENOMEM;
        }
finish:
        count_table_done(&t);
        return r;
}

int folded_rest(const Folded *a, const Folded *b, const Folded *minus, Folded *ret) {
        _cleanup_(hashmap_freep) Hashmap *h = hashmap_new();
        _cleanup_(folded_donep) Folded f = FOLDED_NULL;
        const Folded *add[] = { a, b };
        size_t kept = 0;

        if (!h)
                return -ENOMEM;
        for (size_t k = 0; k < ELEMENTSOF(add); k++)
                for (size_t i = 0; i < add[k]->n; i++) {
                        const FoldedLine *l = &add[k]->lines[i];
                        bool added;
                        uint64_t *slot = hashmap_slot(h, l->stack, strlen(l->stack), f.n, &added);

                        if (!slot)
                                return -ENOMEM;
                        if (added) {
                                if (!GREEDY_REALLOC(f.lines, f.allocated, f.n + 1))
                                        return -ENOMEM;
                                f.lines[f.n].stack = strdup(l->stack);
                                if (!f.lines[f.n].stack)
                                        return -ENOMEM;
                                f.lines[f.n].irq_tail = l->irq_tail;
                                f.lines[f.n++].count = 0;
                        }
                        /* Each file's total fits (folded_load_file() checks): their sum may not. */
                        f.lines[*slot].count = l->count > UINT64_MAX - f.lines[*slot].count ? UINT64_MAX
                                                                                              : f.lines[*slot].count + l->count;
                }
        for (size_t i = 0; i < minus->n; i++) {
                uint64_t v;

                if (hashmap_get(h, minus->lines[i].stack, strlen(minus->lines[i].stack), &v))
                        f.lines[v].count -= MIN(f.lines[v].count, minus->lines[i].count);
        }
        for (size_t i = 0; i < f.n; i++) {
                if (f.lines[i].count == 0) {
                        free(f.lines[i].stack);
                        continue;
                }
                if (f.lines[i].count > UINT64_MAX - f.total)
                        f.lines[i].count = UINT64_MAX - f.total;
                f.total += f.lines[i].count;
                f.lines[kept++] = f.lines[i];
        }
        f.n = kept;
        f.n_skipped = a->n_skipped + b->n_skipped;
        *ret = f;
        f = FOLDED_NULL;
        return 0;
}

void rise_done(Rise *r) {
        free(r->name);
        free(r->top_function);
        free(r->thread);
        *r = (Rise) {};
}

int rise_copy(const Rise *r, Rise *ret) {
        Rise c = *r;

        c.name = strdup(r->name);
        c.top_function = r->top_function ? strdup(r->top_function) : NULL;
        c.thread = r->thread ? strdup(r->thread) : NULL;
        if (!c.name || (r->top_function && !c.top_function) || (r->thread && !c.thread)) {
                rise_done(&c);
                return -ENOMEM;
        }
        *ret = c;
        return 0;
}

void rises_truncate(Rise *r, size_t *n, size_t max_n) {
        for (size_t i = max_n; i < *n; i++)
                rise_done(&r[i]);
        *n = MIN(*n, max_n);
}
