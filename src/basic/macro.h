/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Small macros every module uses: array sizes, min/max that evaluate once, branch hints and the
 * errno helpers that keep the "negative errno" convention of STYLE.md in one place.
 */
#pragma once

#include <errno.h>
#include <stddef.h>

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))
#define _unused_ __attribute__((__unused__))
#define _printf_(a, b) __attribute__((__format__(printf, a, b)))
#define _noreturn_ __attribute__((__noreturn__))
#define _likely_(x) (__builtin_expect(!!(x), 1))
#define _unlikely_(x) (__builtin_expect(!!(x), 0))
#define _pure_ __attribute__((__pure__))
#define _noinline_ __attribute__((__noinline__))

#define MIN(a, b)                                                                                            \
        ({                                                                                                   \
                __typeof__(a) _a = (a);                                                                      \
                __typeof__(b) _b = (b);                                                                      \
                _a < _b ? _a : _b;                                                                           \
        })
#define MAX(a, b)                                                                                            \
        ({                                                                                                   \
                __typeof__(a) _a = (a);                                                                      \
                __typeof__(b) _b = (b);                                                                      \
                _a > _b ? _a : _b;                                                                           \
        })
#define CLAMP(x, lo, hi)                                                                                     \
        ({                                                                                                   \
                __typeof__(x) _x = (x);                                                                      \
                __typeof__(lo) _lo = (lo);                                                                   \
                __typeof__(hi) _hi = (hi);                                                                   \
                _x < _lo ? _lo : _x > _hi ? _hi : _x;                                                        \
        })

#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)

/* An error we make up ourselves rather than one a call returned; see log.h. */
#define SYNTHETIC_ERRNO(e) (e)

/* errno as a negative return value, never 0 even if a broken libc left errno unset. */
static inline int negative_errno(void) {
        return errno > 0 ? -errno : -EIO;
}

#define RET_NERRNO(expr)                                                                                     \
        ({                                                                                                   \
                int _r = (expr);                                                                             \
                _r < 0 ? negative_errno() : _r;                                                              \
        })

#define streq(a, b) (strcmp((a), (b)) == 0)
#define strneq(a, b, n) (strncmp((a), (b), (n)) == 0)
#define isempty(s) (!(s) || (s)[0] == '\0')
