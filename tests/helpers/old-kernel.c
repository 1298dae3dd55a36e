/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An LD_PRELOAD shim: the system calls tprofd makes that older kernels lack or check otherwise
 * behave as on the kernel TPROF_KERNEL names (3.10, 4.4, 4.14, 4.18, 4.19, 5.4, 5.10, 5.14; unset
 * or unknown: as this one). Everything else goes through.
 *
 * Calls a kernel lacks fail with ENOSYS: openat2() before 5.6, pidfd_open() before 5.3 (both by
 * syscall(), as tprofd and libsystemd make them), getrandom() before 3.17, renameat2() before 3.15
 * (glibc's wrappers; glibc's renameat2() without flags falls back to renameat(), so this does too).
 *
 * perf_event_open() (by syscall()) is checked as that kernel's is: what it refuses fails with its
 * errno; what it accepts goes on to the running kernel with only the fields that kernel knows: a
 * copy of the attributes cut to its sizeof(struct perf_event_attr), the fields it ignores zeroed.
 * From kernel/events/core.c (perf_event_open() and perf_copy_attr()) and
 * include/uapi/linux/perf_event.h at each version:
 * - flags & ~PERF_FLAG_ALL is EINVAL; PERF_FLAG_FD_CLOEXEC joined PERF_FLAG_ALL in 3.14.
 * - attr.size above sizeof(*attr) with a non-zero byte past it is E2BIG, and the kernel writes its
 *   own size into attr.size; sizeof is 96 (PERF_ATTR_SIZE_VER3) in 3.10, 112 (VER5, aux_watermark)
 *   from 4.1 to 5.4, 120 (VER6, aux_sample_size) from 5.5, 128 (VER7, sig_data) from 5.13.
 *   A size below PERF_ATTR_SIZE_VER0 (64) is E2BIG too.
 * - A set bit of __reserved_1 (the flag bits past the last one the kernel has) is EINVAL. The
 *   flag bits in order: exclude_callchain_user is bit 22 (the last in 3.10), mmap2 23 (3.12),
 *   comm_exec 24 (3.16), use_clockid 25 (4.1), context_switch 26 (4.3), write_backward 27 (4.7),
 *   namespaces 28 (4.12), ksymbol 29 and bpf_event 30 (5.1), aux_output 31 (5.4), cgroup 32
 *   (5.7), text_poke 33 (5.9), build_id 34 (5.12), inherit_thread 35, remove_on_exec 36 and
 *   sigtrap 37 (5.13).
 * - sample_type & ~(PERF_SAMPLE_MAX - 1) is EINVAL: PERF_SAMPLE_MAX is 1 << 16 in 3.10 (DATA_SRC
 *   the last), 1 << 19 in 4.4 (REGS_INTR), 1 << 20 from 4.13 (PHYS_ADDR), 1 << 22 from 5.7
 *   (CGROUP), 1 << 25 from 5.12 (WEIGHT_STRUCT).
 * - The 32 bits after aux_watermark were __reserved_2 from 4.1, unchecked: sample_max_stack took
 *   16 of them in 4.8, and is ignored before. Only 5.5 started to refuse a set __reserved_2 (and
 *   __reserved_3), with EINVAL.
 */
#include <dlfcn.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>

long syscall(long n, ...);
ssize_t getrandom(void *buf, size_t len, unsigned flags);
int renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned flags);
int renameat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath);

typedef struct Kernel {
        const char *version;
        uint32_t attr_size;   /* sizeof(struct perf_event_attr) */
        unsigned flag_bits;   /* flag bits before __reserved_1 */
        uint64_t sample_max;  /* PERF_SAMPLE_MAX */
        bool cloexec;         /* PERF_FLAG_FD_CLOEXEC */
        bool max_stack;       /* sample_max_stack */
        bool reserved_2;      /* __reserved_2 and __reserved_3 are checked */
        bool renameat2, getrandom, pidfd_open, openat2;
} Kernel;

static const Kernel kernels[] = {
        { "3.10", 96, 23, 1ULL << 16, false, false, false, false, false, false, false },
        { "4.4", 112, 27, 1ULL << 19, true, false, false, true, true, false, false },
        { "4.14", 112, 29, 1ULL << 20, true, true, false, true, true, false, false },
        { "4.18", 112, 29, 1ULL << 20, true, true, false, true, true, false, false },
        { "4.19", 112, 29, 1ULL << 20, true, true, false, true, true, false, false },
        { "5.4", 112, 32, 1ULL << 20, true, true, false, true, true, true, false },
        { "5.10", 120, 34, 1ULL << 22, true, true, true, true, true, true, true },
        { "5.14", 128, 38, 1ULL << 25, true, true, true, true, true, true, true },
};

#define FLAGS_OFFSET 40U      /* the u64 of flag bits after read_format */
#define MAX_STACK_OFFSET 108U /* sample_max_stack (4.8), __reserved_2 before */
#define RESERVED_2_OFFSET 110U
#define RESERVED_3_OFFSET 116U

static const Kernel *kernel(void) {
        const char *v = getenv("TPROF_KERNEL");

        for (size_t i = 0; v && i < sizeof kernels / sizeof kernels[0]; i++)
                if (strcmp(v, kernels[i].version) == 0)
                        return &kernels[i];
        return NULL;
}

static long fail(int e) {
        errno = e;
        return -1;
}

/* What k's perf_event_open() does before anything this kernel checks too; a copy of what it would
 * have read into *copy. 0 to go on. */
static int check(const Kernel *k, struct perf_event_attr *uattr, unsigned long flags, uint8_t *copy) {
        uint64_t all = PERF_FLAG_FD_NO_GROUP | PERF_FLAG_FD_OUTPUT | PERF_FLAG_PID_CGROUP;
        uint32_t size = uattr->size;
        uint64_t bits;
        uint16_t r16;
        uint32_t r32;

        if (k->cloexec)
                all |= PERF_FLAG_FD_CLOEXEC;
        if (flags & ~all)
                return EINVAL;

        if (size == 0)
                size = PERF_ATTR_SIZE_VER0;
        if (size < PERF_ATTR_SIZE_VER0 || size > 4096)
                goto e2big;
        if (size > k->attr_size) {
                for (uint32_t i = k->attr_size; i < size; i++)
                        if (((const uint8_t *) uattr)[i] != 0)
                                goto e2big;
                size = k->attr_size;
        }
        memset(copy, 0, sizeof(struct perf_event_attr));
        memcpy(copy, uattr, size);

        memcpy(&bits, copy + FLAGS_OFFSET, sizeof bits);
        if (bits >> k->flag_bits)
                return EINVAL;
        if (((const struct perf_event_attr *) copy)->sample_type & ~(k->sample_max - 1))
                return EINVAL;
        if (k->reserved_2) {
                memcpy(&r16, copy + RESERVED_2_OFFSET, sizeof r16);
                memcpy(&r32, copy + RESERVED_3_OFFSET, sizeof r32);
                if (r16 != 0 || r32 != 0)
                        return EINVAL;
        }
        if (!k->max_stack && k->attr_size > MAX_STACK_OFFSET)
                memset(copy + MAX_STACK_OFFSET, 0, 4); /* an unchecked __reserved_2 */
        ((struct perf_event_attr *) copy)->size = size;
        return 0;

e2big:
        uattr->size = k->attr_size; /* put_user(sizeof(*attr), &uattr->size) */
        return E2BIG;
}

long syscall(long n, ...) {
        static long (*real)(long, ...);
        const Kernel *k = kernel();
        long a[6];
        va_list ap;

        va_start(ap, n);
        for (int i = 0; i < 6; i++)
                a[i] = va_arg(ap, long);
        va_end(ap);
        if (!real)
                real = (long (*)(long, ...)) dlsym(RTLD_NEXT, "syscall");
        if (k && ((n == SYS_openat2 && !k->openat2) || (n == SYS_pidfd_open && !k->pidfd_open)))
                return fail(ENOSYS);
        if (k && n == SYS_perf_event_open) {
                _Alignas(8) uint8_t copy[sizeof(struct perf_event_attr)];
                int e = check(k, (struct perf_event_attr *) a[0], (unsigned long) a[4], copy);

                if (e != 0)
                        return fail(e);
                return real(n, (long) copy, a[1], a[2], a[3], a[4]);
        }
        return real(n, a[0], a[1], a[2], a[3], a[4], a[5]);
}

ssize_t getrandom(void *buf, size_t len, unsigned flags) {
        static ssize_t (*real)(void *, size_t, unsigned);
        const Kernel *k = kernel();

        if (k && !k->getrandom)
                return fail(ENOSYS);
        if (!real)
                real = (ssize_t (*)(void *, size_t, unsigned)) dlsym(RTLD_NEXT, "getrandom");
        return real(buf, len, flags);
}

int renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned flags) {
        static int (*real)(int, const char *, int, const char *, unsigned);
        const Kernel *k = kernel();

        if (k && !k->renameat2)
                return flags == 0 ? renameat(olddirfd, oldpath, newdirfd, newpath) : (int) fail(ENOSYS);
        if (!real)
                real = (int (*)(int, const char *, int, const char *, unsigned)) dlsym(RTLD_NEXT, "renameat2");
        return real(olddirfd, oldpath, newdirfd, newpath, flags);
}
