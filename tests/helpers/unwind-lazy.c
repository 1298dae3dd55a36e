/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Two stacks that the unwinder walks only with more than frame pointers and .eh_frame at the
 * sampled address (built without frame pointers, linked for lazy binding):
 *   lazy SECONDS    calls a libc function through the PLT over and over; run with LD_BIND_NOT=1
 *                   the dynamic linker resolves it on every call, in _dl_runtime_resolve, whose
 *                   CFA is kept in rbx (glibc's sysdeps/x86_64/dl-trampoline.h);
 *   signal SECONDS  raises a signal over and over: many samples land in rt_sigreturn, whose user
 *                   address is the one after the syscall instruction, past the end of
 *                   __restore_rt's FDE;
 *   deep SECONDS    spins under a frame of 16 KiB (a buffer on the stack): the caller's return
 *                   address is beyond the default 8 KiB copy of the stack;
 *   cfareg SECONDS  spins in hand-written code that keeps its CFA in r9 while it realigns the
 *                   stack pointer, as OpenSSL's ChaCha20, SHA-512 and AES-GCM code does (in r9,
 *                   rax, r10, r11, rsi): the walk out of it needs that register of the sample;
 *   belowsp SECONDS spins in hand-written code whose CFA rule reads the word below the stack
 *                   pointer (CFA = *(rsp - 8) + 8, as OpenSSL's SHA-512 AVX2 code has it): no copy
 *                   of the stack, which starts at the stack pointer, holds it;
 *   realign SECONDS spins under a function that realigns the stack pointer as Go's vDSO calls do,
 *                   saying nothing of it in its rules, which are in .debug_frame, as Go's are
 *                   (unwind-lazy-realign.S): the walk out of it needs its frame pointer.
 * Call path: main -> unwind_lazy_outer -> unwind_lazy_inner -> (rand | raise | unwind_lazy_deep |
 * unwind_lazy_cfareg | unwind_lazy_belowsp | unwind_lazy_realign -> unwind_lazy_busy).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile sig_atomic_t handled;

static void on_signal(int sig) {
        (void) sig;
        handled++;
}

static double now(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static long unwind_lazy_spin(volatile char *buf) {
        long s = 0;
        for (int i = 0; i < 100000; i++)
                s += buf[i % 16384];
        return s;
}

__attribute__((noinline)) static long unwind_lazy_deep(void) {
        volatile char buf[16384];
        buf[0] = 1;
        buf[16383] = 2;
        return unwind_lazy_spin(buf);
}

#if defined(__x86_64__)
long unwind_lazy_cfareg(void);
__asm__(".text\n"
        ".globl unwind_lazy_cfareg\n"
        ".type unwind_lazy_cfareg, @function\n"
        "unwind_lazy_cfareg:\n"
        ".cfi_startproc\n"
        "        mov %rsp, %r9\n"
        ".cfi_def_cfa_register %r9\n"
        "        sub $256, %rsp\n"
        "        and $-64, %rsp\n"
        "        mov $200000, %ecx\n"
        "1:      mov %rcx, (%rsp)\n"
        "        dec %rcx\n"
        "        jnz 1b\n"
        "        mov (%rsp), %rax\n"
        "        mov %r9, %rsp\n"
        ".cfi_def_cfa_register %rsp\n"
        "        ret\n"
        ".cfi_endproc\n"
        ".size unwind_lazy_cfareg, .-unwind_lazy_cfareg\n");
long unwind_lazy_belowsp(void);
/* DW_CFA_def_cfa_expression, 5 bytes: DW_OP_breg7 (rsp) -8, DW_OP_deref, DW_OP_plus_uconst 8. */
__asm__(".text\n"
        ".globl unwind_lazy_belowsp\n"
        ".type unwind_lazy_belowsp, @function\n"
        "unwind_lazy_belowsp:\n"
        ".cfi_startproc\n"
        "        mov %rsp, -8(%rsp)\n"
        ".cfi_escape 0x0f, 0x05, 0x77, 0x78, 0x06, 0x23, 0x08\n"
        "        mov $200000, %ecx\n"
        "1:      dec %rcx\n"
        "        jnz 1b\n"
        "        xor %eax, %eax\n"
        ".cfi_def_cfa %rsp, 8\n"
        "        ret\n"
        ".cfi_endproc\n"
        ".size unwind_lazy_belowsp, .-unwind_lazy_belowsp\n");
long unwind_lazy_realign(long (*fn)(void));
#else
static long unwind_lazy_realign(long (*fn)(void)) {
        return fn();
}
static long unwind_lazy_cfareg(void) {
        return 0;
}
static long unwind_lazy_belowsp(void) {
        return 0;
}
#endif

__attribute__((noinline)) static long unwind_lazy_busy(void) {
        static volatile long n;
        for (int i = 0; i < 100000; i++)
                n += i;
        return n;
}

__attribute__((noinline)) static long unwind_lazy_inner(int use_signal) {
        long s = 0;
        if (use_signal == 2)
                return unwind_lazy_deep();
        if (use_signal == 5) {
                for (int i = 0; i < 10; i++)
                        s += unwind_lazy_realign(unwind_lazy_busy);
                return s;
        }
        if (use_signal == 3 || use_signal == 4) {
                for (int i = 0; i < 10; i++)
                        s += use_signal == 3 ? unwind_lazy_cfareg() : unwind_lazy_belowsp();
                return s;
        }
        for (int i = 0; i < 1000; i++) {
                if (use_signal)
                        raise(SIGUSR1);
                else
                        s += rand();
        }
        return s;
}

long unwind_lazy_outer(int use_signal);
__attribute__((noinline)) long unwind_lazy_outer(int use_signal) {
        return unwind_lazy_inner(use_signal) + 1;
}

int main(int argc, char *argv[]) {
        volatile long sink = 0;
        double end;
        int use_signal;

        if (argc != 3 || (strcmp(argv[1], "lazy") != 0 && strcmp(argv[1], "signal") != 0 && strcmp(argv[1], "deep") != 0 &&
                          strcmp(argv[1], "cfareg") != 0 && strcmp(argv[1], "belowsp") != 0 &&
                          strcmp(argv[1], "realign") != 0)) {
                fprintf(stderr, "usage: %s lazy|signal|deep|cfareg|belowsp|realign SECONDS\n", argv[0]);
                return 64;
        }
        use_signal = strcmp(argv[1], "signal") == 0 ? 1 : strcmp(argv[1], "deep") == 0 ? 2 :
                     strcmp(argv[1], "cfareg") == 0 ? 3 : strcmp(argv[1], "belowsp") == 0 ? 4 :
                     strcmp(argv[1], "realign") == 0 ? 5 : 0;
        if (use_signal == 1) {
                struct sigaction sa = { .sa_handler = on_signal };
                sigaction(SIGUSR1, &sa, NULL);
        }
        end = now() + atof(argv[2]);
        while (now() < end)
                sink += unwind_lazy_outer(use_signal);
        return 0;
}
