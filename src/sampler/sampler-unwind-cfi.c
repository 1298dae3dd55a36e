/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * CFI of one file into compact rules, and the DWARF expression machine for the rest. libdw states
 * a "CFA = register + offset" rule as one DW_OP_bregx, a saved register as DW_OP_call_frame_cfa
 * followed by DW_OP_plus_uconst (the offset wrapped to 64 bits when negative), "undefined" as no
 * operations with ops == ops_mem and "same value" as no operations with ops == NULL
 * (dwarf_frame_register() in libdw.h). Everything else is an expression.
 *
 * Loading a file's CFI is sampler-unwind-cfi-load.c's.
 */
#include <assert.h>
#include <dwarf.h>
#include <elf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "basic/alloc-util.h"
#include "basic/macro.h"
#include "sampler/sampler-unwind-cfi-internal.h"
#include "sampler/sampler-unwind-cfi.h"

#define UNWIND_EXPR_OPS_MAX 64U
#define UNWIND_EXPR_STACK_MAX 16U

/* The entry point's code often has no FDE (the dynamic loader's _start calls _dl_start straight
 * from the kernel's stack): a return address this close past the entry is the outermost frame. */
#define UNWIND_ENTRY_BYTES 64U

bool unwind_memory_read_word(const UnwindMemory *m, uint64_t addr, unsigned bytes, uint64_t *ret) {
        uint64_t v = 0;

        assert(bytes == 4 || bytes == 8);
        if (addr < m->base || addr - m->base > m->size || m->size - (addr - m->base) < bytes)
                return false;
        /* x86, arm64: the low bytes come first. Sizes the compiler sees, for a load rather than a call. */
        if (bytes == 8)
                memcpy(&v, m->data + (addr - m->base), 8);
        else
                memcpy(&v, m->data + (addr - m->base), 4);
        *ret = v;
        return true;
}

/* Why a read of addr failed: below the copy (the copy starts at the stack pointer, so no size of
 * it would help), or past its end. */
static UnwindStepResult memory_fault(const UnwindMemory *m, uint64_t addr) {
        return addr < m->base ? UNWIND_STEP_BELOW_SP : UNWIND_STEP_MEMORY;
}

bool unwind_memory_read(const UnwindMemory *m, uint64_t addr, uint64_t *ret) {
        return unwind_memory_read_word(m, addr, sizeof(uint64_t), ret);
}

static uint64_t table_at(const UnwindCfiFile *f, size_t i, size_t field) {
        int32_t rel;

        memcpy(&rel, f->table + 8 * i + 4 * field, sizeof(rel));
        return f->table_base + (uint64_t) (int64_t) rel;
}

/* The verdict of unwind_cfi_entry_ok() on the FDE of search-table entry idx: read from f->checked
 * once it was given, else given and kept there. The file's bytes do not change while it is loaded,
 * and neither does the verdict. Without room for the bits, given at each lookup. */
static bool table_entry_ok(UnwindCfiFile *f, size_t idx) {
        unsigned shift = (unsigned) (idx % 4) * 2;
        bool ok;

        if (!f->checked) {
                f->checked = new0(uint8_t, f->table_count / 4 + 1);
                if (f->checked)
                        f->bytes += f->table_count / 4 + 1;
        }
        if (f->checked && (f->checked[idx / 4] >> shift) & 1U)
                return (f->checked[idx / 4] >> shift) & 2U;
        ok = unwind_cfi_entry_ok(f->eh_frame, f->eh_frame_size, /* eh_frame= */ true, f->elf64,
                                 table_at(f, idx, 1) - f->eh_frame_addr);
        if (f->checked)
                f->checked[idx / 4] |= (uint8_t) ((ok ? 3U : 1U) << shift);
        return ok;
}

/* Whether libdw may run the FDE its search table gives for vaddr: found as libdw finds it
 * (elfutils 0.188, fde.c, binary_search_fde(), which takes an unsorted table as it comes), and
 * checked (table_entry_ok()). Without a table every FDE was checked when the file was read. */
static bool eh_frame_fde_ok(UnwindCfiFile *f, uint64_t vaddr) {
        size_t l = 0, u = f->table_count;

        if (!f->table)
                return true;
        while (l < u) {
                size_t idx = l + (u - l) / 2;

                if (vaddr < table_at(f, idx, 0)) {
                        u = idx;
                        continue;
                }
                l = idx + 1;
                if (l < f->table_count && vaddr >= table_at(f, l, 0))
                        continue;
                return table_entry_ok(f, idx);
        }
        return true; /* none: libdw runs nothing */
}

/* The frame at vaddr from .eh_frame, else from .debug_frame; NULL if neither has it. */
static Dwarf_Frame *frame_at(UnwindCfiFile *f, uint64_t vaddr, bool *ret_eh_frame) {
        Dwarf_Frame *frame = NULL;

        *ret_eh_frame = true;
        if (f->cfi && eh_frame_fde_ok(f, vaddr) && dwarf_cfi_addrframe(f->cfi, vaddr, &frame) >= 0 && frame)
                return frame;
        *ret_eh_frame = false;
        frame = NULL;
        if (f->debug_cfi && dwarf_cfi_addrframe(f->debug_cfi, vaddr, &frame) >= 0 && frame)
                return frame;
        return NULL;
}

/* "Saved at CFA + off" as libdw writes it; false for anything else. */
static bool ops_cfa_offset(const Dwarf_Op *ops, size_t nops, int32_t *ret_off) {
        int64_t off = 0;

        if (nops < 1 || nops > 2 || ops[0].atom != DW_OP_call_frame_cfa)
                return false;
        if (nops == 2) {
                if (ops[1].atom != DW_OP_plus_uconst)
                        return false;
                off = (int64_t) ops[1].number;
        }
        if (off < INT32_MIN || off > INT32_MAX)
                return false;
        *ret_off = (int32_t) off;
        return true;
}

/* A register of the file's numbering as the rule names it: x86-64's SP or BP, else 0xff. */
static uint8_t rule_reg(const UnwindArch *a, uint64_t reg) {
        return reg == a->sp ? UNWIND_DWARF_REG_SP : reg == a->bp ? UNWIND_DWARF_REG_BP : 0xff;
}

/* How frame gives a callee-saved register's (BP, BX) caller value, as a simple rule says it:
 * unknown, the same, or saved at CFA + *ret_off; false for anything else (an expression). */
static bool saved_reg_rule(Dwarf_Frame *frame, int reg, uint8_t *ret_kind, int32_t *ret_off) {
        Dwarf_Op ops_mem[3], *ops;
        size_t nops;

        if (dwarf_frame_register(frame, reg, ops_mem, &ops, &nops) < 0)
                return false;
        if (nops == 0)
                *ret_kind = ops == ops_mem ? UNWIND_BP_UNDEFINED : UNWIND_BP_SAME;
        else if (ops_cfa_offset(ops, nops, ret_off))
                *ret_kind = UNWIND_BP_AT_CFA;
        else
                return false;
        return true;
}

/* The bits of a user code address on this machine: on arm64, what XPACLRI (a hint, a no-op on a
 * CPU without pointer authentication) leaves of an address with every bit below bit 55 set, which
 * is the kernel's virtual address size (39, 42, 47, 48 or 52 bits) where codes are added, and all of
 * them where none are; elsewhere (an arm64 process's stack read on another machine, the tests')
 * UNWIND_ARM64_ADDR_MASK. */
static uint64_t arm64_addr_mask(void) {
        static uint64_t mask; /* 0: not measured yet; the same value whichever thread writes it */
        uint64_t m = __atomic_load_n(&mask, __ATOMIC_RELAXED);

        if (m != 0)
                return m;
#if defined(__aarch64__)
        __asm__ volatile("mov x30, %1\n\thint #7\n\tmov %0, x30" : "=r"(m) : "r"(UINT64_C(0x007fffffffffffff)) : "x30");
        if (m == 0)
                m = UNWIND_ARM64_ADDR_MASK;
#else
        m = UNWIND_ARM64_ADDR_MASK;
#endif
        __atomic_store_n(&mask, m, __ATOMIC_RELAXED);
        return m;
}

uint64_t unwind_strip_pac(uint16_t machine, uint64_t ra) {
        return machine == EM_AARCH64 ? ra & arm64_addr_mask() : ra;
}

/* regs become the caller's: ip its return address (PAC code taken off), sp the CFA. What a step
 * knows of the link register and the stack pointer starts over: the caller called, so its return
 * address is not in x30 any more, and the CFA is its stack pointer. */
static void enter_caller(const UnwindArch *a, UnwindRegs *regs, uint64_t ra, uint64_t cfa) {
        regs->ip = unwind_strip_pac(a->machine, ra);
        regs->sp = cfa;
        regs->sp_unknown = false;
        regs->lr_valid = false;
}

static void rule_from_frame(const UnwindArch *a, Dwarf_Frame *frame, UnwindRule *ret) {
        Dwarf_Op ops_mem[3], *ops;
        size_t nops;
        bool signal = false;
        int ra_reg;

        *ret = (UnwindRule) { .kind = UNWIND_RULE_EXPR };
        ra_reg = dwarf_frame_info(frame, NULL, NULL, &signal);
        ret->signal = signal;
        if (ra_reg != (int) a->ra)
                return;

        if (dwarf_frame_register(frame, ra_reg, ops_mem, &ops, &nops) < 0)
                return;
        if (nops == 0 && ops == ops_mem) {
                ret->kind = UNWIND_RULE_END;
                return;
        }
        /* "Same value" of a return address column that is a real register: still there (arm64's
         * x30 in a leaf; libdw's default for it, elfutils' aarch64_abi_cfi()). */
        if (nops == 0 && a->lr != 0xff)
                ret->ra_in_lr = true;
        else if (!ops_cfa_offset(ops, nops, &ret->ra_off))
                return;

        if (dwarf_frame_cfa(frame, &ops, &nops) < 0 || nops != 1 || ops[0].atom != DW_OP_bregx ||
            rule_reg(a, ops[0].number) == 0xff || (int64_t) ops[0].number2 < INT32_MIN ||
            (int64_t) ops[0].number2 > INT32_MAX)
                return;
        ret->cfa_reg = rule_reg(a, ops[0].number);
        ret->cfa_off = (int32_t) (int64_t) ops[0].number2;

        if (!saved_reg_rule(frame, a->bp, &ret->bp_kind, &ret->bp_off) ||
            !saved_reg_rule(frame, a->bx, &ret->bx_kind, &ret->bx_off))
                return;
        ret->kind = UNWIND_RULE_SIMPLE;
}

void unwind_cfi_file_rule(UnwindCfiFile *f, uint64_t vaddr, UnwindRule *ret) {
        Dwarf_Frame *frame;
        uint8_t go_flags;
        bool eh_frame;

        *ret = (UnwindRule) { .kind = UNWIND_RULE_NONE };
        if (f->arch.word == 0)
                return;
        go_flags = unwind_go_flags(f, vaddr);
        frame = frame_at(f, vaddr, &eh_frame);
        if (!frame) {
                if (f->entry != 0 && vaddr >= f->entry && vaddr - f->entry < UNWIND_ENTRY_BYTES)
                        ret->kind = UNWIND_RULE_END;
                ret->go_flags = go_flags;
                return;
        }
        if (eh_frame && unwind_cfi_file_fde_seen(f, vaddr))
                f->bytes += UNWIND_LIBDW_FDE_BYTES;
        rule_from_frame(&f->arch, frame, ret);
        ret->debug_frame = !eh_frame;
        ret->go_flags = go_flags;
        free(frame);
}

static bool reg_value(const UnwindArch *a, const UnwindRegs *regs, uint64_t reg, uint64_t *ret) {
        if (reg == a->sp) {
                *ret = regs->sp;
                return !regs->sp_unknown;
        }
        if (reg == a->lr) {
                *ret = regs->lr;
                return regs->lr_valid;
        }
        if (reg == a->bp) {
                *ret = regs->bp;
                return regs->bp_valid;
        }
        if (reg == a->ra) {
                *ret = regs->ip;
                return true;
        }
        if (reg == a->bx) {
                *ret = regs->bx;
                return regs->bx_valid;
        }
        for (unsigned i = 0; i < UNWIND_SCRATCH_REGS; i++)
                if (reg == a->scratch[i]) {
                        *ret = regs->scratch[i];
                        return regs->scratch_valid & (1U << i);
                }
        return false;
}

/* A value of the file's width: arithmetic of a 32-bit program wraps at 4 GiB. */
static uint64_t arch_addr(const UnwindArch *a, uint64_t v) {
        return a->word == 4 ? (uint32_t) v : v;
}

static int64_t arch_signed(const UnwindArch *a, uint64_t v) {
        return a->word == 4 ? (int64_t) (int32_t) (uint32_t) v : (int64_t) v;
}

/*
 * Evaluates a CFI expression with cfa pushed first when push_cfa. *ret_is_value says whether the
 * result is the value (DW_OP_stack_value, or always for a CFA expression) or its location.
 */
static UnwindStepResult eval_expr(const UnwindArch *arch, const Dwarf_Op *ops, size_t nops, const UnwindRegs *regs,
                                  const UnwindMemory *mem, uint64_t cfa, uint64_t *ret, bool *ret_is_value) {
        uint64_t st[UNWIND_EXPR_STACK_MAX];
        size_t sp = 0;

        *ret_is_value = false;
        if (nops == 0 || nops > UNWIND_EXPR_OPS_MAX)
                return UNWIND_STEP_BAD;

#define PUSH(v)                                               \
        do {                                                  \
                if (sp >= UNWIND_EXPR_STACK_MAX)              \
                        return UNWIND_STEP_BAD;               \
                st[sp++] = arch_addr(arch, (v));              \
        } while (0)
#define NEED(n)                                               \
        do {                                                  \
                if (sp < (n))                                 \
                        return UNWIND_STEP_BAD;               \
        } while (0)

        for (size_t i = 0; i < nops; i++) {
                const Dwarf_Op *o = &ops[i];
                uint64_t v, a, b;

                if (o->atom >= DW_OP_lit0 && o->atom <= DW_OP_lit31) {
                        PUSH((uint64_t) (o->atom - DW_OP_lit0));
                        continue;
                }
                if (o->atom >= DW_OP_breg0 && o->atom <= DW_OP_breg31) {
                        if (!reg_value(arch, regs, (uint64_t) (o->atom - DW_OP_breg0), &v))
                                return UNWIND_STEP_REGISTER;
                        PUSH(v + o->number);
                        continue;
                }
                switch (o->atom) {
                case DW_OP_bregx:
                        if (!reg_value(arch, regs, o->number, &v))
                                return UNWIND_STEP_REGISTER;
                        PUSH(v + o->number2);
                        break;
                case DW_OP_call_frame_cfa:
                        PUSH(cfa);
                        break;
                case DW_OP_const1u: case DW_OP_const1s: case DW_OP_const2u: case DW_OP_const2s:
                case DW_OP_const4u: case DW_OP_const4s: case DW_OP_const8u: case DW_OP_const8s:
                case DW_OP_constu: case DW_OP_consts:
                        PUSH(o->number);
                        break;
                case DW_OP_dup:
                        NEED(1);
                        v = st[sp - 1];
                        PUSH(v);
                        break;
                case DW_OP_drop:
                        NEED(1);
                        sp--;
                        break;
                case DW_OP_deref:
                        NEED(1);
                        if (!unwind_memory_read_word(mem, arch_addr(arch, st[sp - 1]), arch->word, &st[sp - 1]))
                                return memory_fault(mem, arch_addr(arch, st[sp - 1]));
                        break;
                case DW_OP_plus_uconst:
                        NEED(1);
                        st[sp - 1] = arch_addr(arch, st[sp - 1] + o->number);
                        break;
                case DW_OP_plus: case DW_OP_minus: case DW_OP_and: case DW_OP_or: case DW_OP_xor:
                case DW_OP_shl: case DW_OP_shr: case DW_OP_mul:
                case DW_OP_ge: case DW_OP_gt: case DW_OP_le: case DW_OP_lt: case DW_OP_eq: case DW_OP_ne:
                        NEED(2);
                        sp--;
                        b = st[sp];
                        a = st[sp - 1];
                        switch (o->atom) {
                        case DW_OP_plus:  v = a + b; break;
                        case DW_OP_minus: v = a - b; break;
                        case DW_OP_and:   v = a & b; break;
                        case DW_OP_or:    v = a | b; break;
                        case DW_OP_xor:   v = a ^ b; break;
                        case DW_OP_mul:   v = a * b; break;
                        case DW_OP_shl:   v = b >= 64 ? 0 : a << b; break;
                        case DW_OP_shr:   v = b >= 64 ? 0 : a >> b; break;
                        /* Comparisons are signed (DWARF 5, 2.5.1.4), in the file's width. */
                        case DW_OP_ge:    v = arch_signed(arch, a) >= arch_signed(arch, b); break;
                        case DW_OP_gt:    v = arch_signed(arch, a) > arch_signed(arch, b); break;
                        case DW_OP_le:    v = arch_signed(arch, a) <= arch_signed(arch, b); break;
                        case DW_OP_lt:    v = arch_signed(arch, a) < arch_signed(arch, b); break;
                        case DW_OP_eq:    v = a == b; break;
                        default:          v = a != b; break;
                        }
                        st[sp - 1] = arch_addr(arch, v);
                        break;
                case DW_OP_stack_value:
                        if (i + 1 != nops)
                                return UNWIND_STEP_BAD;
                        *ret_is_value = true;
                        break;
                default:
                        return UNWIND_STEP_BAD;
                }
        }
        NEED(1);
#undef PUSH
#undef NEED
        *ret = arch_addr(arch, st[sp - 1]);
        return UNWIND_STEP_OK;
}

/* The value of register reg in the caller, from its rule; *ret_defined false when undefined. */
static UnwindStepResult caller_reg(const UnwindArch *a, Dwarf_Frame *frame, int reg, const UnwindRegs *regs,
                                   const UnwindMemory *mem, uint64_t cfa, uint64_t same, uint64_t *ret,
                                   bool *ret_defined, bool *ret_same) {
        Dwarf_Op ops_mem[3], *ops;
        size_t nops;
        UnwindStepResult r;
        bool is_value;
        uint64_t v;

        *ret_defined = false;
        *ret_same = false;
        if (dwarf_frame_register(frame, reg, ops_mem, &ops, &nops) < 0)
                return UNWIND_STEP_BAD;
        if (nops == 0) {
                if (ops == ops_mem)
                        return UNWIND_STEP_OK;
                *ret = same;
                *ret_defined = true;
                *ret_same = true;
                return UNWIND_STEP_OK;
        }
        r = eval_expr(a, ops, nops, regs, mem, cfa, &v, &is_value);
        if (r != UNWIND_STEP_OK)
                return r;
        if (!is_value && !unwind_memory_read_word(mem, v, a->word, &v))
                return memory_fault(mem, v);
        *ret = v;
        *ret_defined = true;
        return UNWIND_STEP_OK;
}

static UnwindStepResult step_expr(UnwindCfiFile *f, uint64_t vaddr, UnwindRegs *regs, const UnwindMemory *mem) {
        Dwarf_Frame *frame = NULL;
        Dwarf_Op *ops;
        size_t nops;
        uint64_t cfa, ra, bp, bx, scratch[UNWIND_SCRATCH_REGS];
        bool is_value, ra_defined, bp_defined, bx_defined, same, bx_same, eh_frame, scratch_valid[UNWIND_SCRATCH_REGS];
        UnwindStepResult r;

        frame = frame_at(f, vaddr, &eh_frame);
        if (!frame)
                return UNWIND_STEP_NO_CFI;
        if (dwarf_frame_info(frame, NULL, NULL, NULL) != (int) f->arch.ra) {
                r = UNWIND_STEP_BAD;
                goto finish;
        }
        if (dwarf_frame_cfa(frame, &ops, &nops) < 0 || nops == 0) {
                r = UNWIND_STEP_BAD;
                goto finish;
        }
        r = eval_expr(&f->arch, ops, nops, regs, mem, 0, &cfa, &is_value);
        if (r != UNWIND_STEP_OK)
                goto finish;
        r = caller_reg(&f->arch, frame, f->arch.ra, regs, mem, cfa, f->arch.lr != 0xff ? regs->lr : regs->ip, &ra,
                       &ra_defined, &same);
        if (r != UNWIND_STEP_OK)
                goto finish;
        if (!ra_defined) {
                r = UNWIND_STEP_END;
                goto finish;
        }
        if (same && f->arch.lr != 0xff && !regs->lr_valid) {
                r = UNWIND_STEP_REGISTER;
                goto finish;
        }
        r = caller_reg(&f->arch, frame, f->arch.bp, regs, mem, cfa, regs->bp, &bp, &bp_defined, &same);
        if (r == UNWIND_STEP_REGISTER || r == UNWIND_STEP_MEMORY || r == UNWIND_STEP_BELOW_SP) /* BP is lost, the walk goes on */
                bp_defined = false;
        else if (r != UNWIND_STEP_OK)
                goto finish;
        r = caller_reg(&f->arch, frame, f->arch.bx, regs, mem, cfa, regs->bx, &bx, &bx_defined, &bx_same);
        if (r != UNWIND_STEP_OK)
                bx_defined = false, bx_same = false;
        /* The caller-saved registers only where the CFI says where they were saved (a signal
         * frame): a rule of "same value" (libdw's default for registers the CFI leaves out) cannot
         * hold for them across a call. All are read before any changes: their rules read this
         * frame's registers. */
        for (unsigned i = 0; i < UNWIND_SCRATCH_REGS; i++) {
                bool defined, scratch_same;

                scratch_valid[i] = f->arch.scratch[i] != 0xff &&
                                   caller_reg(&f->arch, frame, f->arch.scratch[i], regs, mem, cfa, 0, &scratch[i],
                                              &defined, &scratch_same) == UNWIND_STEP_OK &&
                                   defined && !scratch_same;
        }
        regs->scratch_valid = 0;
        for (unsigned i = 0; i < UNWIND_SCRATCH_REGS; i++)
                if (scratch_valid[i]) {
                        regs->scratch[i] = scratch[i];
                        regs->scratch_valid |= (uint16_t) (1U << i);
                }
        if (!same) {
                regs->bp_valid = bp_defined;
                regs->bp = bp_defined ? bp : 0;
        }
        if (!bx_same) {
                regs->bx_valid = bx_defined;
                regs->bx = bx_defined ? bx : 0;
        }
        enter_caller(&f->arch, regs, ra, cfa);
        r = UNWIND_STEP_OK;
finish:
        free(frame);
        return r;
}

/* A callee-saved register as the caller had it, by saved_reg_rule()'s kind and offset. GCC's
 * epilogues leave the saved-register rules in place after the pops: a slot below the stack pointer
 * sp was popped already, so the register holds the caller's value. A slot we cannot read costs
 * the register, not the walk: most frames do not need it. */
static void restore_saved_reg(const UnwindArch *a, uint8_t kind, int32_t off, uint64_t cfa, uint64_t sp,
                              const UnwindMemory *mem, uint64_t *reg, bool *valid) {
        if (kind == UNWIND_BP_AT_CFA) {
                uint64_t at = arch_addr(a, cfa + (uint64_t) (int64_t) off);
                if (at >= sp)
                        *valid = unwind_memory_read_word(mem, at, a->word, reg);
        } else if (kind == UNWIND_BP_UNDEFINED)
                *valid = false;
}

UnwindStepResult unwind_cfi_apply(UnwindCfiFile *f, uint64_t vaddr, const UnwindRule *rule, UnwindRegs *regs,
                                  const UnwindMemory *mem) {
        const UnwindArch *a = &f->arch;
        uint64_t cfa, ra;

        switch (rule->kind) {
        case UNWIND_RULE_NONE:
                return UNWIND_STEP_NO_CFI;
        case UNWIND_RULE_END:
                return UNWIND_STEP_END;
        case UNWIND_RULE_EXPR:
                return step_expr(f, vaddr, regs, mem);
        default:
                break;
        }

        if (rule->cfa_reg == UNWIND_DWARF_REG_BP) {
                if (!regs->bp_valid)
                        return UNWIND_STEP_REGISTER;
                cfa = arch_addr(a, regs->bp + (uint64_t) (int64_t) rule->cfa_off);
        } else {
                if (regs->sp_unknown)
                        return UNWIND_STEP_REGISTER;
                cfa = arch_addr(a, regs->sp + (uint64_t) (int64_t) rule->cfa_off);
        }
        if (rule->ra_in_lr) {
                if (!regs->lr_valid)
                        return UNWIND_STEP_REGISTER;
                ra = regs->lr;
        } else if (!unwind_memory_read_word(mem, arch_addr(a, cfa + (uint64_t) (int64_t) rule->ra_off), a->word, &ra))
                return memory_fault(mem, arch_addr(a, cfa + (uint64_t) (int64_t) rule->ra_off));
        restore_saved_reg(a, rule->bp_kind, rule->bp_off, cfa, regs->sp, mem, &regs->bp, &regs->bp_valid);
        restore_saved_reg(a, rule->bx_kind, rule->bx_off, cfa, regs->sp, mem, &regs->bx, &regs->bx_valid);
        regs->scratch_valid = 0; /* caller-saved: lost in the caller */
        enter_caller(a, regs, ra, cfa);
        return UNWIND_STEP_OK;
}
