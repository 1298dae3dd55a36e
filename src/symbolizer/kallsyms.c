/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * /proc/kallsyms parsing: "ADDR TYPE NAME [MODULE]" lines. Only text symbols (t, T, w, W with a
 * text address) are kept; names and module names go into one string pool, so the table is two
 * allocations whatever its size. A symbol's extent is up to the next symbol's address; the last
 * symbol of each owner (kernel or a module) ends at that owner's last symbol, so an address past
 * every known symbol stays unresolved rather than being blamed on the last function.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "basic/alloc-util.h"
#include "basic/macro.h"
#include "basic/string-util.h"
#include "symbolizer/kallsyms.h"

/* How far past the last symbol of its owner an address is still taken for that symbol. */
#define KALLSYMS_OWNER_TAIL_BYTES (4096U * 16U)

typedef struct KSym {
        uint64_t addr;
        uint32_t name; /* offsets into pool */
        uint32_t dso;
        char type;
} KSym;

struct Kallsyms {
        KSym *syms;
        size_t n, allocated;
        char *pool;
        size_t pool_len, pool_allocated;
        size_t skipped;
};

Kallsyms *kallsyms_free(Kallsyms *k) {
        if (!k)
                return NULL;
        free(k->syms);
        free(k->pool);
        return mfree(k);
}

size_t kallsyms_size(const Kallsyms *k) {
        return k ? k->n : 0;
}

size_t kallsyms_skipped(const Kallsyms *k) {
        return k ? k->skipped : 0;
}

static int pool_add(Kallsyms *k, const char *s, size_t l, uint32_t *ret) {
        if (k->pool_len + l + 1 > UINT32_MAX)
                return -E2BIG;
        if (!GREEDY_REALLOC(k->pool, k->pool_allocated, k->pool_len + l + 1))
                return -ENOMEM;
        memcpy(k->pool + k->pool_len, s, l);
        k->pool[k->pool_len + l] = '\0';
        *ret = (uint32_t) k->pool_len;
        k->pool_len += l + 1;
        return 0;
}

static int ksym_cmp(const void *a, const void *b) {
        const KSym *x = a, *y = b;
        if (x->addr != y->addr)
                return x->addr < y->addr ? -1 : 1;
        return x->name < y->name ? -1 : x->name > y->name;
}

static unsigned type_rank(char t) {
        return t == 'T' ? 0 : t == 't' ? 1 : 2; /* global, local, weak */
}

/* x86-64 gives each system call an entry per table at one address (__x64_sys_getppid,
 * __ia32_sys_getppid): the native one is what 64-bit processes, nearly all of them, called. */
static bool ksym_syscall_native(const char *name) {
        return startswith(name, "__x64_sys_");
}

/* Of several names at one address, the one a person recognizes, by perf's rules (choose_best_symbol()):
 * not weak, global, fewer leading underscores, then the longer name; a system call's native entry
 * before its compat one. Returns true if b beats a. */
static bool ksym_better(const Kallsyms *k, const KSym *a, const KSym *b) {
        const char *na = k->pool + a->name, *nb = k->pool + b->name;
        size_t ua = strspn(na, "_"), ub = strspn(nb, "_");

        if (type_rank(a->type) != type_rank(b->type))
                return type_rank(b->type) < type_rank(a->type);
        if (ua != ub)
                return ub < ua;
        if (ksym_syscall_native(na) != ksym_syscall_native(nb))
                return ksym_syscall_native(nb);
        return strlen(nb) > strlen(na);
}

static void ksym_dedup(Kallsyms *k) {
        size_t n = 0;

        for (size_t i = 0; i < k->n; i++) {
                if (n > 0 && k->syms[n - 1].addr == k->syms[i].addr && k->syms[n - 1].dso == k->syms[i].dso) {
                        if (ksym_better(k, &k->syms[n - 1], &k->syms[i]))
                                k->syms[n - 1] = k->syms[i];
                        continue;
                }
                k->syms[n++] = k->syms[i];
        }
        k->n = n;
}

int kallsyms_load(const char *path, Kallsyms **ret) {
        _cleanup_fclose_ FILE *f = NULL;
        Kallsyms *k;
        char line[1024];
        uint32_t kernel_dso;
        bool sorted = true;
        int r;

        f = fopen(path, "re");
        if (!f)
                return -errno;
        /* /proc/kallsyms is ~10 MB of text on a distribution kernel: fewer, larger reads. */
        (void) setvbuf(f, NULL, _IOFBF, 256 * 1024);
        k = new0(Kallsyms, 1);
        if (!k)
                return -ENOMEM;
        r = pool_add(k, KALLSYMS_DSO_KERNEL, strlen(KALLSYMS_DSO_KERNEL), &kernel_dso);
        if (r < 0)
                goto fail;

        /* Modules come in runs: remember the last module's pool entry to avoid storing it per symbol. */
        char last_mod[128] = "";
        uint32_t last_mod_off = 0;

        while (fgets(line, sizeof(line), f)) {
                char *p = line, *e, *name, *mod;
                unsigned long long addr;
                char type;
                uint32_t name_off, dso_off;
                size_t l;

                if (!strchr(line, '\n') && !feof(f)) {
                        int c;
                        while ((c = fgetc(f)) != EOF && c != '\n')
                                ;
                        k->skipped++;
                        continue;
                }
                line[strcspn(line, "\n")] = '\0';

                errno = 0;
                addr = strtoull(p, &e, 16);
                if (errno != 0 || e == p || *e != ' ' || !e[1] || e[2] != ' ') {
                        k->skipped++;
                        continue;
                }
                type = e[1];
                name = e + 3;
                if (!strchr("tTwW", type) || addr == 0 || !*name) {
                        if (!strchr("tTwWaAbBdDrRuUvV", type) || !*name)
                                k->skipped++;
                        continue;
                }
                mod = strchr(name, '\t');
                if (mod) {
                        *mod++ = '\0';
                        /* "[ext4]" */
                        l = strlen(mod);
                        if (l < 3 || mod[0] != '[' || mod[l - 1] != ']' || l >= sizeof(last_mod)) {
                                k->skipped++;
                                continue;
                        }
                        if (!streq(mod, last_mod)) {
                                r = pool_add(k, mod, l, &last_mod_off);
                                if (r < 0)
                                        goto fail;
                                memcpy(last_mod, mod, l + 1);
                        }
                        dso_off = last_mod_off;
                } else
                        dso_off = kernel_dso;

                if (k->n >= KALLSYMS_SYMBOLS_MAX) {
                        k->skipped++;
                        continue;
                }
                r = pool_add(k, name, strnlen(name, 512), &name_off);
                if (r < 0)
                        goto fail;
                if (!GREEDY_REALLOC(k->syms, k->allocated, k->n + 1)) {
                        r = -ENOMEM;
                        goto fail;
                }
                if (k->n > 0 && addr < k->syms[k->n - 1].addr)
                        sorted = false;
                k->syms[k->n++] = (KSym) { .addr = addr, .name = name_off, .dso = dso_off, .type = type };
        }

        if (k->n > 0) {
                /* The kernel lists its own symbols in address order; modules may break it. */
                if (!sorted)
                        qsort(k->syms, k->n, sizeof(KSym), ksym_cmp);
                ksym_dedup(k);
        }
        *ret = k;
        return 0;

fail:
        kallsyms_free(k);
        return r;
}

bool kallsyms_lookup(const Kallsyms *k, uint64_t addr, const char **ret_name, const char **ret_dso,
                     uint64_t *ret_offset, uint64_t *ret_extent) {
        size_t lo = 0, hi;
        const KSym *s;
        uint64_t extent;

        if (!k || k->n == 0)
                return false;
        hi = k->n;
        /* Last symbol with s->addr <= addr. */
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (k->syms[mid].addr <= addr)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        if (lo == 0)
                return false;
        s = &k->syms[lo - 1];
        extent = lo < k->n ? k->syms[lo].addr - s->addr : UINT64_MAX - s->addr;
        /* Past the last symbol of its owner (the kernel's _etext, a module's end): not ours to name. */
        if (lo == k->n || k->syms[lo].dso != s->dso) {
                if (addr != s->addr && addr - s->addr > KALLSYMS_OWNER_TAIL_BYTES)
                        return false;
                extent = MIN(extent, KALLSYMS_OWNER_TAIL_BYTES + 1);
        }
        *ret_name = k->pool + s->name;
        *ret_dso = k->pool + s->dso;
        *ret_offset = addr - s->addr;
        if (ret_extent)
                *ret_extent = extent;
        return true;
}
