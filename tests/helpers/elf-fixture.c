/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A tiny shared library with known functions: the symbolizer's tests of real files load it
 * (tests/symbolizer-test-util.h), take the addresses of these functions and check that the
 * symbolizer names them from the file alone.
 */
#include <stdint.h>

uint64_t fixture_alpha(uint64_t x);
uint64_t fixture_beta(uint64_t x);
/* A C++-mangled name, fixture::gamma(unsigned long), for the demangling test. */
uint64_t fixture_gamma(uint64_t x) __asm__("_ZN7fixture5gammaEm");
/* A function template's, fixture::pick<false>(int (*)()), whose return type fixture::Result
 * c++filt prints first. */
uint64_t fixture_pick(uint64_t x) __asm__("_ZN7fixture4pickILb0EEENS_6ResultEPFivE");
/* Rust's two manglings: fixture::rust::legacy (the hash and an LLVM suffix are left out) and
 * fixture::rust::worker (v0). */
uint64_t fixture_rust_legacy(uint64_t x) __asm__("_ZN7fixture4rust6legacy17h0123456789abcdefE.llvm.123");
uint64_t fixture_rust_v0(uint64_t x) __asm__("_RNvNtCs1234_7fixture4rust6worker");

__attribute__((noinline)) uint64_t fixture_rust_legacy(uint64_t x) {
        return x * 3 + 1;
}

__attribute__((noinline)) uint64_t fixture_rust_v0(uint64_t x) {
        return fixture_rust_legacy(x) * 5 + 2;
}

__attribute__((noinline)) static uint64_t fixture_local(uint64_t x) {
        return x * 2654435761U + 1;
}

__attribute__((noinline)) uint64_t fixture_alpha(uint64_t x) {
        return fixture_local(x) ^ 0x5555;
}

__attribute__((noinline)) uint64_t fixture_beta(uint64_t x) {
        uint64_t r = 0;
        for (uint64_t i = 0; i < x; i++)
                r += fixture_alpha(i);
        return r;
}

__attribute__((noinline)) uint64_t fixture_pick(uint64_t x) {
        return x * 7 + 3;
}

__attribute__((noinline)) uint64_t fixture_gamma(uint64_t x) {
        return fixture_beta(x) + 1;
}

/* Aligned, so that padding no symbol covers lies between fixture::gamma and it. */
uint64_t fixture_delta(uint64_t x);
__attribute__((noinline, aligned(64))) uint64_t fixture_delta(uint64_t x) {
        return fixture_gamma(x) - 1;
}

#ifdef __x86_64__
/* A function with unwind information but no exported symbol, followed by an exported one without
 * unwind information (as hand-written assembly often is): in the stripped copy, the first is known
 * by its start in .eh_frame_hdr alone, which also seems to cover the second, named by .dynsym. */
__asm__(".text\n"
        ".p2align 4\n"
        ".type fixture_cfi_only, @function\n"
        "fixture_cfi_only:\n"
        ".cfi_startproc\n"
        "        leaq 1(%rdi), %rax\n"
        "        ret\n"
        ".cfi_endproc\n"
        ".size fixture_cfi_only, .-fixture_cfi_only\n"
        ".globl fixture_no_cfi\n"
        ".type fixture_no_cfi, @function\n"
        "fixture_no_cfi:\n"
        "        leaq 2(%rdi), %rax\n"
        "        ret\n"
        ".size fixture_no_cfi, .-fixture_no_cfi\n");
#endif

#ifdef __x86_64__
/* A local function and, at its address, an exported function symbol of size 0: a marker, as Go's
 * linker leaves runtime.etext at the first C function of a cgo binary. The function is the name. */
__asm__(".text\n"
        ".p2align 4\n"
        ".globl fixture_zero_size_marker\n"
        ".type fixture_zero_size_marker, @function\n"
        "fixture_zero_size_marker:\n"
        ".type fixture_sized_local, @function\n"
        "fixture_sized_local:\n"
        "        leaq 3(%rdi), %rax\n"
        "        nop; nop; nop; nop; nop; nop; nop; nop\n"
        "        ret\n"
        ".size fixture_sized_local, .-fixture_sized_local\n"
        /* so that in the stripped copy the marker, alone there, covers no code but that function */
        ".globl fixture_after_marker\n"
        ".type fixture_after_marker, @function\n"
        "fixture_after_marker:\n"
        "        leaq 4(%rdi), %rax\n"
        "        ret\n"
        ".size fixture_after_marker, .-fixture_after_marker\n");
#endif

#ifdef __x86_64__
/* Hand-written assembly without .type or .size, as some runtimes' interpreters are: its entry
 * points are labels (STT_NOTYPE), which name the code no function covers; a label inside a
 * function (here at its fifth byte) does not rename it. */
__asm__(".text\n"
        ".p2align 4\n"
        ".globl fixture_untyped_entry\n"
        "fixture_untyped_entry:\n"
        "        leaq 5(%rdi), %rax\n"
        "        nop; nop; nop; nop; nop; nop; nop; nop\n"
        "        ret\n"
        ".p2align 4\n"
        ".globl fixture_typed_with_label\n"
        ".type fixture_typed_with_label, @function\n"
        "fixture_typed_with_label:\n"
        "        nop; nop; nop; nop\n"
        ".globl fixture_inner_label\n"
        "fixture_inner_label:\n"
        "        leaq 6(%rdi), %rax\n"
        "        nop; nop; nop; nop; nop; nop; nop; nop\n"
        "        ret\n"
        ".size fixture_typed_with_label, .-fixture_typed_with_label\n");

/* A function with .type but no .size, as crtstuff's frame_dummy is, and right after it the
 * global entry of code without .type: the entry names its code, not the function before it. A
 * local label after it (a loop's) leaves the function its name. */
__asm__(".text\n"
        ".p2align 4\n"
        ".globl fixture_unsized_typed\n"
        ".type fixture_unsized_typed, @function\n"
        "fixture_unsized_typed:\n"
        "        nop; nop; nop; nop\n"
        "fixture_unsized_local_label:\n"
        "        leaq 7(%rdi), %rax\n"
        "        nop; nop; nop; nop; nop; nop; nop; nop\n"
        "        ret\n"
        ".globl fixture_entry_after_unsized\n"
        "fixture_entry_after_unsized:\n"
        "        leaq 8(%rdi), %rax\n"
        "        nop; nop; nop; nop; nop; nop; nop; nop\n"
        "        ret\n"
        ".p2align 4\n"
        ".globl fixture_after_entry\n"
        ".type fixture_after_entry, @function\n"
        "fixture_after_entry:\n"
        "        ret\n"
        ".size fixture_after_entry, .-fixture_after_entry\n");
#endif
