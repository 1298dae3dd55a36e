/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Where Go's own traceback ends a stack, for the walk of a Go program: the functions whose
 * _func.flag in .gopclntab is TOPFRAME or SPWRITE (symbolizer-gopclntab.h), read once when the
 * file's unwind table is loaded and kept with it, sorted, so that a rule looked up carries its
 * function's flags (and the rule cache keeps them: no cost a sample beyond that lookup).
 *
 * Go's traceback (src/runtime/traceback.go, gentraceback() of Go 1.17-1.20, unwinder.resolveInternal()
 * of 1.21 and 1.22) stops at a TOPFRAME function, the stack whole, and, for a profiling signal, at
 * an SPWRITE function, the stack incomplete ("Stopping at an SPWRITE function is considered to be
 * an incomplete unwinding of the stack", symtab.go): such a function moved the stack pointer to
 * another stack (runtime.mcall and runtime.systemstack to g0's, runtime.gogo to a goroutine's), so
 * its caller's frame is not where its rule says. runtime.cgocallback is no such stop: "it carefully
 * arranges that during the transition BOTH stacks have cgocallback frame valid for unwinding
 * through" (traceback.go), and Go clears its SPWRITE; so is it here.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "basic/alloc-util.h"
#include "basic/macro.h"
#include "sampler/sampler-unwind-cfi-internal.h"
#include "symbolizer/elf-util.h"
#include "symbolizer/symbolizer-elf.h"
#include "symbolizer/symbolizer-gopclntab.h"

typedef struct GoFuncsAdd {
        UnwindGoFunc *funcs;
        size_t n, allocated;
        bool too_many;
} GoFuncsAdd;

static bool name_is(const char *name, size_t len, const char *want) {
        size_t n = strlen(want);

        /* Go's linker may name an assembly function's ABI0 symbol with a ".abi0" suffix. */
        return name && (len == n || (len == n + 5 && memcmp(name + n, ".abi0", 5) == 0)) && memcmp(name, want, n) == 0;
}

static int on_flags(uint64_t entry, uint64_t size, uint8_t flags, const char *name, size_t name_len, void *userdata) {
        GoFuncsAdd *a = userdata;

        if (name_is(name, name_len, "runtime.cgocallback"))
                flags &= (uint8_t) ~GOPCLNTAB_FLAG_SPWRITE;
        flags &= GOPCLNTAB_FLAG_TOPFRAME | GOPCLNTAB_FLAG_SPWRITE;
        if (flags == 0)
                return 0;
        if (a->n >= UNWIND_GO_FUNCS_MAX) {
                a->too_many = true;
                return -E2BIG;
        }
        if (!GREEDY_REALLOC(a->funcs, a->allocated, a->n + 1))
                return -ENOMEM;
        a->funcs[a->n++] = (UnwindGoFunc) { .start = entry, .end = entry + size, .flags = flags };
        return 0;
}

static int take_table(const uint8_t *data, size_t size, uint64_t *budget, void *userdata) {
        GoFuncsAdd *a = userdata;
        size_t before = a->n;
        int r;

        r = gopclntab_parse_flags(data, size, /* big_endian= */ false, budget, on_flags, a);
        if (r == -ENOMEM || a->too_many)
                return r;
        if (r < 0) {
                a->n = before; /* not a table, or a damaged one: the next candidate */
                return 0;
        }
        return 1;
}

void unwind_go_funcs_load(UnwindCfiFile *f, int fd) {
        _cleanup_(elf_endp) Elf *src = NULL;
        GoFuncsAdd a = {};

        if (fd < 0 || f->arch.word == 0)
                return;
        /* Only a Go program is read again: its table, never held but for the flagged functions. */
        if (!elf_section_by_name(f->elf, ".gopclntab", /* with_contents= */ true) &&
            !elf_section_by_name(f->elf, ".data.rel.ro.gopclntab", /* with_contents= */ true) &&
            !elf_section_by_name(f->elf, ".note.go.buildid", /* with_contents= */ false) &&
            !elf_section_by_name(f->elf, ".go.buildinfo", /* with_contents= */ false))
                return;
        src = elf_begin(fd, ELF_C_READ, NULL);
        if (!src)
                return;
        if (elf_go_tables(src, take_table, &a) <= 0 || a.n == 0) {
                free(a.funcs);
                return; /* none, or more than a Go runtime flags: none used */
        }
        /* functab is sorted by entry, and so are these */
        f->go_funcs = a.funcs;
        f->n_go_funcs = a.n;
        f->bytes += a.allocated * sizeof(UnwindGoFunc);
}

uint8_t unwind_go_flags(const UnwindCfiFile *f, uint64_t vaddr) {
        size_t lo = 0, hi = f->n_go_funcs;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (vaddr < f->go_funcs[mid].start)
                        hi = mid;
                else if (vaddr >= f->go_funcs[mid].end)
                        lo = mid + 1;
                else
                        return f->go_funcs[mid].flags;
        }
        return 0;
}
