/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A 32-bit x86 program (built -m32, freestanding: no 32-bit libc needed; once with frame pointers,
 * once without, where only its .eh_frame walks it) that spins in a known call path until killed,
 * or for 60 s at most (alarm):
 *   _start -> compat32_main -> compat32_outer -> compat32_middle -> compat32_leaf
 * or, given the argument "vsyscall", in system calls made through the 32-bit vDSO's entry (the
 * kernel's own code in the process, mapped as [vdso], as a 32-bit libc makes them):
 *   _start -> compat32_main -> compat32_outer -> compat32_middle -> compat32_syscall
 *   -> __kernel_vsyscall
 * or, given "unmapped-sp" or "zero-sp", in a loop that touches no memory with its stack pointer
 * moved to an unmapped page or to 0, so that the kernel's copy of the user stack reads nothing or
 * is not made at all (tests how tprofd names those cases).
 * Its _start clears ebp before its first call, as every libc's does, so a frame-pointer walk ends
 * there whole; it has no FDE, and a CFI walk ends at the return address just past the entry.
 */
#include <stdint.h>

#define AT_SYSINFO 32U /* the address of __kernel_vsyscall */

static uint32_t vsyscall; /* 0: the loop instead */

__attribute__((noinline)) static uint32_t compat32_leaf(uint32_t x) {
        for (volatile uint32_t i = 0; i < 100000; i++)
                x += i;
        return x;
}

/* getppid() (i386 system call 64) through __kernel_vsyscall, which keeps every register but eax. */
__attribute__((noinline)) static uint32_t compat32_syscall(uint32_t x) {
        uint32_t ret;

        __asm__ volatile("call *%1" : "=a"(ret) : "m"(vsyscall), "0"(64U) : "memory");
        return x + ret;
}

__attribute__((noinline)) static uint32_t compat32_middle(uint32_t x) {
        return (vsyscall ? compat32_syscall(x) : compat32_leaf(x)) + 1;
}

__attribute__((noinline)) static uint32_t compat32_outer(uint32_t x) {
        return compat32_middle(x) + 2;
}

/* sp: the stack the kernel started the process with: argc, argv[], NULL, envp[], NULL, auxv. */
__attribute__((noreturn, used)) void compat32_main(const uint32_t *sp) {
        uint32_t x = 0, seconds = 60, ret, argc = sp[0];
        const char *arg = argc > 1 ? (const char *) (uintptr_t) sp[2] : "";
        const uint32_t *p = sp + 1 + argc + 1;

        while (*p) /* the environment */
                p++;
        for (p++; arg[0] == 'v' && p[0] != 0; p += 2)
                if (p[0] == AT_SYSINFO)
                        vsyscall = p[1];
        /* alarm(60): i386 system call 27; the default SIGALRM ends the process */
        __asm__ volatile("int $0x80" : "=a"(ret) : "a"(27), "b"(seconds) : "memory");
        (void) ret;
        /* 0x1000: below the program, which the kernel maps from 0x08048000; nothing else is mapped
         * there. The loop reads no memory, so it runs on with no stack. */
        if (arg[0] == 'u')
                __asm__ volatile("movl $0x1000, %esp\n1:\tjmp 1b");
        if (arg[0] == 'z')
                __asm__ volatile("xorl %esp, %esp\n1:\tjmp 1b");
        for (;;)
                x = compat32_outer(x);
}

__asm__(".globl _start\n"
        ".type _start, @function\n"
        "_start:\n"
        "\txorl %ebp, %ebp\n"
        "\tmovl %esp, %eax\n"
        "\tpushl %eax\n"
        "\tcall compat32_main\n"
        "\thlt\n"
        ".size _start, . - _start\n");
