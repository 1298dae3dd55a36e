/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * For unwind-lazy's realign mode: a function shaped as Go 1.19's runtime.nanotime1 is on the g0
 * stack (runtime/sys_linux_amd64.s, with the frame pointer the Go assembler adds), its rules in
 * .debug_frame alone, as the Go toolchain writes them:
 *
 *   long unwind_lazy_realign(long (*fn)(void))
 *
 * sets its frame pointer, saves two zero words below it (Go's m.vdsoPC and m.vdsoSP of a call
 * that does not nest), keeps the stack pointer in r12, realigns the stack pointer (less 16, to 16
 * bytes) and calls fn. Its rule states the CFA as its frame's throughout, as Go's does: at the
 * return from fn it names one of the zero words as the return address.
 */
#if defined(__x86_64__)
        .cfi_sections .debug_frame
        .text
        .globl unwind_lazy_realign
        .type unwind_lazy_realign, @function
unwind_lazy_realign:
        .cfi_startproc
        sub $0x28, %rsp
        .cfi_adjust_cfa_offset 0x28
        mov %rbp, 0x20(%rsp)
        lea 0x20(%rsp), %rbp
        movq $0, 0x18(%rsp)
        movq $0, 0x10(%rsp)
        mov %r12, 0x8(%rsp)
        mov %rsp, %r12
        sub $0x10, %rsp
        and $-16, %rsp
        call *%rdi
        mov %r12, %rsp
        mov 0x8(%rsp), %r12
        mov 0x20(%rsp), %rbp
        add $0x28, %rsp
        .cfi_adjust_cfa_offset -0x28
        ret
        .cfi_endproc
        .size unwind_lazy_realign, .-unwind_lazy_realign
#endif
        .section .note.GNU-stack, "", @progbits
