/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An LD_PRELOAD shim: syscall(SYS_openat2, ...) fails with ENOSYS, as on kernels before 5.6 (and
 * under valgrind, or a seccomp filter that refuses it); every other syscall() goes through.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <sys/syscall.h>

long syscall(long n, ...);

long syscall(long n, ...) {
        static long (*real)(long, ...);
        long a[6];
        va_list ap;

        va_start(ap, n);
        for (int i = 0; i < 6; i++)
                a[i] = va_arg(ap, long);
        va_end(ap);
        if (n == SYS_openat2) {
                errno = ENOSYS;
                return -1;
        }
        if (!real)
                real = (long (*)(long, ...)) dlsym(RTLD_NEXT, "syscall");
        return real(n, a[0], a[1], a[2], a[3], a[4], a[5]);
}
