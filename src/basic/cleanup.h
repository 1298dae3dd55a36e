/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Scope-bound cleanup, systemd style: _cleanup_free_, _cleanup_close_, _cleanup_fclose_ and the
 * TAKE_PTR()/TAKE_FD() pair that hands ownership out of a scope. Library-specific wrappers
 * (pcre2, libelf, zstd, libyaml) live next to the code that includes those libraries, defined
 * with DEFINE_TRIVIAL_CLEANUP_FUNC, so this header pulls in nothing but libc.
 */
#pragma once

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((__cleanup__(f)))

#define DEFINE_TRIVIAL_CLEANUP_FUNC(type, func)                                                              \
        static inline void func##p(type *p) {                                                                \
                if (*p)                                                                                      \
                        func(*p);                                                                            \
        }

#define DEFINE_TRIVIAL_CLEANUP_FUNC_FULL(type, func, empty)                                                  \
        static inline void func##p(type *p) {                                                                \
                if (*p != (empty)) {                                                                         \
                        func(*p);                                                                            \
                        *p = (empty);                                                                        \
                }                                                                                            \
        }

static inline void freep(void *p) {
        free(*(void **) p);
}
#define _cleanup_free_ _cleanup_(freep)

/* Closes an fd, keeping errno as it was: cleanup runs on error paths that still report errno. */
static inline int safe_close(int fd) {
        if (fd >= 0) {
                int saved = errno;
                (void) close(fd);
                errno = saved;
        }
        return -EBADF;
}

static inline void closep(int *fd) {
        *fd = safe_close(*fd);
}
#define _cleanup_close_ _cleanup_(closep)

static inline FILE *safe_fclose(FILE *f) {
        if (f) {
                int saved = errno;
                (void) fclose(f);
                errno = saved;
        }
        return NULL;
}
static inline void fclosep(FILE **f) {
        *f = safe_fclose(*f);
}
#define _cleanup_fclose_ _cleanup_(fclosep)

static inline void closedirp(DIR **d) {
        if (*d)
                (void) closedir(*d);
}
#define _cleanup_closedir_ _cleanup_(closedirp)

#define TAKE_GENERIC(var, type, nullvalue)                                                                   \
        ({                                                                                                   \
                type *_pvar_ = &(var);                                                                       \
                type _var_ = *_pvar_;                                                                        \
                type _nullvalue_ = nullvalue;                                                                \
                *_pvar_ = _nullvalue_;                                                                       \
                _var_;                                                                                       \
        })
#define TAKE_PTR(ptr) TAKE_GENERIC(ptr, __typeof__(ptr), NULL)
#define TAKE_FD(fd) TAKE_GENERIC(fd, int, -EBADF)

/* free() that returns NULL, for "p = mfree(p);". */
static inline void *mfree(void *p) {
        free(p);
        return NULL;
}
