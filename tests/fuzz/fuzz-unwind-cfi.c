/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzz target for the unwind table builder (sampler/sampler-unwind-cfi-load.c and
 * sampler-unwind-cfi.c): every file a sampled process maps has its .eh_frame, .eh_frame_hdr and
 * .debug_frame read, whoever wrote them. The input is the file's bytes, loaded from a memfd as a
 * mapped file is (unwind_cfi_file_load_fd(): segments, build id, .eh_frame with its search table,
 * .debug_frame compressed or not, a Go program's function flags) and from memory as the vDSO is
 * (unwind_cfi_file_load_memory()). Then rules are looked up: at each function start of the search
 * table, a little past it, and across the segments; each rule is applied to registers and a small
 * stack copy of its own allocation, so that AddressSanitizer catches any read outside it (DWARF
 * expressions included). Results are checked against sampler-unwind-cfi.h: a rule's kind and
 * register, the table's bytes growing only as rules are read, a step's result, and a step that
 * succeeded giving the caller registers of the file's width.
 */
#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "basic/macro.h"
#include "fuzz-util.h"
#include "sampler/sampler-unwind-cfi-internal.h"
#include "sampler/sampler-unwind-cfi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The stack copy a step may read: 512 bytes at this address, filled from the input's last bytes. */
#define FUZZ_STACK_BASE UINT64_C(0x7ffc00001000)
#define FUZZ_STACK_BYTES 512U
#define FUZZ_LOOKUPS_MAX 256U

static int memfd = -1;

static void check_rule(UnwindCfiFile *f, uint64_t vaddr, const uint8_t *stack) {
        size_t before = unwind_cfi_file_bytes(f);
        unsigned word = unwind_cfi_file_word(f);
        UnwindRule rule;

        unwind_cfi_file_rule(f, vaddr, &rule);
        assert(unwind_cfi_file_bytes(f) >= before);
        assert(rule.kind < _UNWIND_RULE_KIND_MAX);
        if (word == 0)
                assert(rule.kind == UNWIND_RULE_NONE);
        if (rule.kind == UNWIND_RULE_SIMPLE) {
                assert(rule.cfa_reg == UNWIND_DWARF_REG_SP || rule.cfa_reg == UNWIND_DWARF_REG_BP);
                assert(rule.bp_kind <= UNWIND_BP_AT_CFA && rule.bx_kind <= UNWIND_BP_AT_CFA);
        }
        if (word == 0)
                return;

        /* The registers point into the copy (the stack pointer at its start, the frame pointer in
         * its middle), the scratch ones anywhere. */
        uint64_t mask = word == 4 ? UINT32_MAX : UINT64_MAX, base = FUZZ_STACK_BASE & mask;
        UnwindMemory mem = { .base = base, .data = stack, .size = FUZZ_STACK_BYTES };
        UnwindRegs regs = { .ip = vaddr, .sp = base, .bp = base + FUZZ_STACK_BYTES / 2, .bp_valid = true,
                            .bx = base + 64, .bx_valid = true,
                            .scratch_valid = (uint16_t) ((1U << UNWIND_SCRATCH_REGS) - 1) };
        UnwindStepResult r;

        for (unsigned i = 0; i < UNWIND_SCRATCH_REGS; i++)
                regs.scratch[i] = base + 8 * i;
        r = unwind_cfi_apply(f, vaddr, &rule, &regs, &mem);
        assert(r <= UNWIND_STEP_BAD);
        assert((r == UNWIND_STEP_NO_CFI) == (rule.kind == UNWIND_RULE_NONE));
        if (rule.kind == UNWIND_RULE_END)
                assert(r == UNWIND_STEP_END);
        if (r == UNWIND_STEP_OK && word == 4)
                assert(regs.ip <= UINT32_MAX && regs.sp <= UINT32_MAX);
        if (r == UNWIND_STEP_OK && regs.bp_valid && word == 4)
                assert(regs.bp <= UINT32_MAX);
}

static void lookups(UnwindCfiFile *f, const uint8_t *stack) {
        unsigned n = 0;

        /* The search table's function starts, and a little into each function. */
        for (uint32_t i = 0; f->table && i < f->table_count && n < FUZZ_LOOKUPS_MAX; i += 1 + f->table_count / 64) {
                int32_t rel;
                uint64_t start;

                memcpy(&rel, f->table + 8 * (size_t) i, sizeof(rel));
                start = f->table_base + (uint64_t) (int64_t) rel;
                check_rule(f, start, stack);
                check_rule(f, start + 5, stack);
                n += 2;
        }
        /* Across the segments, the file offsets a mapping would show. */
        for (uint64_t o = 0; o < 0x20000 && n < FUZZ_LOOKUPS_MAX; o += 0x7f3) {
                uint64_t vaddr;

                if (!unwind_cfi_file_offset_to_vaddr(f, o, &vaddr))
                        continue;
                check_rule(f, vaddr, stack);
                n++;
        }
        /* The entry point and just past it (the outermost frame without an FDE). */
        check_rule(f, f->entry, stack);
        check_rule(f, f->entry + 1, stack);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        uint8_t stack[FUZZ_STACK_BYTES] = {};
        char *copy;
        int r;

        if (memfd < 0) {
                memfd = memfd_create("fuzz-unwind-cfi", MFD_CLOEXEC);
                assert(memfd >= 0);
        }
        /* The stack copy: the input's last bytes, so that saved values point where they may. */
        memcpy(stack + FUZZ_STACK_BYTES - MIN(size, (size_t) FUZZ_STACK_BYTES),
               data + size - MIN(size, (size_t) FUZZ_STACK_BYTES), MIN(size, (size_t) FUZZ_STACK_BYTES));
        /* A heap copy of exactly the copy's size: a read past it is caught. */
        uint8_t *heap_stack = (uint8_t *) fuzz_copy(stack, sizeof(stack));
        if (!heap_stack)
                return 0;

        assert(ftruncate(memfd, 0) == 0);
        assert(size == 0 || pwrite(memfd, data, size, 0) == (ssize_t) size);
        {
                UnwindCfiFile *f = NULL;

                r = unwind_cfi_file_load_fd(memfd, &f);
                assert(r == 0 || r == -ENOEXEC || r == -ENODATA || r == -ENOMEM);
                assert(f || r == -ENOMEM);
                if (f) {
                        assert(unwind_cfi_file_has_cfi(f) == (r == 0));
                        lookups(f, heap_stack);
                        unwind_cfi_file_free(f);
                }
        }
        /* As an image in memory, as the vDSO is read: an exact-size copy that must outlive the table. */
        copy = fuzz_copy(data, size);
        if (copy) {
                UnwindCfiFile *f = NULL;

                r = unwind_cfi_file_load_memory(copy, size, &f);
                assert(r == 0 || r == -ENOEXEC || r == -ENODATA || r == -ENOMEM);
                if (f) {
                        lookups(f, heap_stack);
                        unwind_cfi_file_free(f);
                }
                free(copy);
        }
        free(heap_stack);
        return 0;
}
