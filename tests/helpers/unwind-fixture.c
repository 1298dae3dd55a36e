/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A program built without frame pointers (-fomit-frame-pointer) with a known call path:
 *   main -> unwind_outer -> unwind_fixture_lib_middle (shared library) -> unwind_callback -> unwind_leaf
 *
 *   unwind-fixture snapshot FILE   unwind_leaf records its registers (ip, sp, bp), a copy of its
 *                                  stack and /proc/self/maps into FILE, as perf's
 *                                  REGS_USER/STACK_USER would, and the program exits; on arm64
 *                                  it records them in unwind_capture, a leaf called by
 *                                  unwind_leaf whose return address is still in the link register
 *                                  (x30), which is recorded too
 *   unwind-fixture spin SECONDS    unwind_leaf burns the CPU for SECONDS (for sampling)
 *   unwind-fixture dlclose SECONDS loads and unloads a library over and over while spinning
 *   unwind-fixture exec SECONDS    spins half the time, then execs $UNWIND_FIXTURE_EXEC (or
 *                                  itself) to spin the rest
 *
 * With UNWIND_FIXTURE_DEPTH=N, unwind_callback reaches unwind_leaf through N frames of unwind_deep.
 *
 * Snapshot file: "TPUW", then u64 ip, sp, bp, stack size, the stack bytes, then the maps text; on
 * arm64 "TPUA", then u64 ip (pc), sp, bp (x29), stack size, lr (x30), the stack bytes, the maps.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

uint64_t unwind_fixture_lib_middle(uint64_t (*callback)(uint64_t), uint64_t n);

#define SNAPSHOT_STACK_MAX 16384U

static const char *arg_mode, *arg_value, *arg_self;

static double now(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* The end of the mapping holding addr: we may copy the stack up to it, not beyond. */
static uint64_t mapping_end(uint64_t addr) {
        FILE *f = fopen("/proc/self/maps", "re");
        char line[4096];
        uint64_t end = addr;

        while (f && fgets(line, sizeof(line), f)) {
                unsigned long long s, e;
                if (sscanf(line, "%llx-%llx", &s, &e) == 2 && addr >= s && addr < e) {
                        end = e;
                        break;
                }
        }
        if (f)
                fclose(f);
        return end;
}

static __attribute__((noinline)) void write_snapshot(const char *path, uint64_t ip, uint64_t sp, uint64_t bp,
                                                     const uint64_t *lr) {
        uint64_t size = mapping_end(sp) - sp, hdr[4];
        FILE *out, *maps;
        char buf[4096];
        size_t n;

        if (size > SNAPSHOT_STACK_MAX)
                size = SNAPSHOT_STACK_MAX;
        out = fopen(path, "we");
        if (!out)
                exit(2);
        hdr[0] = ip, hdr[1] = sp, hdr[2] = bp, hdr[3] = size;
        fwrite(lr ? "TPUA" : "TPUW", 1, 4, out);
        fwrite(hdr, sizeof(hdr), 1, out);
        if (lr)
                fwrite(lr, sizeof(*lr), 1, out);
        fwrite((const void *) (uintptr_t) sp, 1, size, out);
        maps = fopen("/proc/self/maps", "re");
        while (maps && (n = fread(buf, 1, sizeof(buf), maps)) > 0)
                fwrite(buf, 1, n, out);
        if (maps)
                fclose(maps);
        if (fclose(out) != 0)
                exit(2);
}

static volatile uint64_t sink;

#if defined(__aarch64__)
/* Stores pc, sp, x29 and x30 as they are at its first instruction into regs[0..3]: a leaf that
 * touches neither the stack nor x30, its return address in x30 as any leaf's, and call frame
 * information that says so (the CIE's "x30 same value"). Built with -mbranch-protection, it
 * starts with a landing pad, as the compiler's functions do. */
void unwind_capture(uint64_t regs[4]);
__asm__(".text\n"
        ".globl unwind_capture\n"
        ".type unwind_capture, %function\n"
        ".p2align 2\n"
        "unwind_capture:\n"
        ".cfi_startproc\n"
        "        hint 34\n" /* bti c: a nop without BTI */
        "        adr x9, unwind_capture\n"
        "        mov x10, sp\n"
        "        stp x9, x10, [x0]\n"
        "        stp x29, x30, [x0, #16]\n"
        "        ret\n"
        ".cfi_endproc\n"
        ".size unwind_capture, .-unwind_capture\n");
#endif

static __attribute__((noinline)) uint64_t unwind_leaf(uint64_t n) {
        volatile uint64_t pad[5];

        for (unsigned i = 0; i < 5; i++)
                pad[i] = n * i;
        if (strcmp(arg_mode, "snapshot") == 0) {
#if defined(__x86_64__)
                uint64_t ip, sp, bp;
                __asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
                                 : "=r"(ip), "=r"(sp), "=r"(bp));
                write_snapshot(arg_value, ip, sp, bp, NULL);
#elif defined(__aarch64__)
                uint64_t regs[4];
                unwind_capture(regs);
                write_snapshot(arg_value, regs[0], regs[1], regs[2], &regs[3]);
#else
                /* the unwinder, and so its test, is x86-64's and arm64's only */
                fprintf(stderr, "snapshot: x86-64 and arm64 only\n");
                exit(EXIT_FAILURE);
#endif
                return pad[1];
        }
        double end = now() + atof(arg_value);
        if (strcmp(arg_mode, "exec") == 0)
                end -= atof(arg_value) / 2;
        while (now() < end) {
                for (uint64_t i = 0; i < 100000; i++)
                        sink += i * pad[2];
                if (strcmp(arg_mode, "dlclose") == 0) {
                        void *h = dlopen(getenv("UNWIND_FIXTURE_DLOPEN") ?: "libz.so.1", RTLD_NOW | RTLD_LOCAL);
                        if (h)
                                dlclose(h);
                }
        }
        if (strcmp(arg_mode, "exec") == 0) {
                char half[32];
                snprintf(half, sizeof(half), "%f", atof(arg_value) / 2);
                execl(arg_self, arg_self, "spin", half, (char *) NULL);
                exit(3);
        }
        return pad[1];
}

static __attribute__((noinline)) uint64_t unwind_deep(uint64_t n, unsigned depth) {
        volatile uint64_t pad[2] = { n, depth };
        if (depth == 0)
                return unwind_leaf(n);
        return unwind_deep(pad[0] + 1, depth - 1) + pad[1]; /* not a tail call: one frame per level */
}

static __attribute__((noinline)) uint64_t unwind_callback(uint64_t n) {
        volatile uint64_t pad[3] = { n, n + 1, n + 2 };
        const char *depth = getenv("UNWIND_FIXTURE_DEPTH");
        if (depth)
                return unwind_deep(pad[1], (unsigned) atoi(depth)) + pad[0];
        return unwind_leaf(pad[1]) + pad[0];
}

static __attribute__((noinline)) uint64_t unwind_outer(uint64_t n) {
        volatile uint64_t pad[11];
        for (unsigned i = 0; i < 11; i++)
                pad[i] = n ^ i;
        return unwind_fixture_lib_middle(unwind_callback, pad[7]) + pad[2];
}

int main(int argc, char *argv[]) {
        if (argc != 3) {
                fprintf(stderr, "usage: %s snapshot FILE | spin|dlclose|exec SECONDS\n", argv[0]);
                return 1;
        }
        arg_self = getenv("UNWIND_FIXTURE_EXEC") ?: "/proc/self/exe";
        arg_mode = argv[1];
        arg_value = argv[2];
        sink = unwind_outer((uint64_t) argc);
        return 0;
}
