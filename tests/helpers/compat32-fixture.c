/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A 32-bit x86 program (built -m32, with frame pointers, freestanding: no 32-bit libc needed) that
 * spins in a known call path until killed, or for 60 s at most (alarm):
 *   _start -> compat32_main -> compat32_outer -> compat32_middle -> compat32_leaf
 * Its _start clears ebp before its first call, as every libc's does, so a frame-pointer walk ends
 * there whole.
 */
#include <stdint.h>

__attribute__((noinline)) static uint32_t compat32_leaf(uint32_t x) {
        for (volatile uint32_t i = 0; i < 100000; i++)
                x += i;
        return x;
}

__attribute__((noinline)) static uint32_t compat32_middle(uint32_t x) {
        return compat32_leaf(x) + 1;
}

__attribute__((noinline)) static uint32_t compat32_outer(uint32_t x) {
        return compat32_middle(x) + 2;
}

__attribute__((noreturn, used)) void compat32_main(void) {
        uint32_t x = 0, seconds = 60, ret;

        /* alarm(60): i386 system call 27; the default SIGALRM ends the process */
        __asm__ volatile("int $0x80" : "=a"(ret) : "a"(27), "b"(seconds) : "memory");
        (void) ret;
        for (;;)
                x = compat32_outer(x);
}

__asm__(".globl _start\n"
        ".type _start, @function\n"
        "_start:\n"
        "\txorl %ebp, %ebp\n"
        "\tcall compat32_main\n"
        "\thlt\n"
        ".size _start, . - _start\n");
