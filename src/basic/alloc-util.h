/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Allocation helpers: overflow-checked array allocation and GREEDY_REALLOC, which grows an array
 * geometrically so appending n items costs O(n) in total. Nothing here aborts on failure; callers
 * get NULL/false and return -ENOMEM.
 */
#pragma once

#include <malloc.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define new(t, n) ((t *) reallocarray(NULL, (n), sizeof(t)))
#define new0(t, n) ((t *) calloc((n) ?: 1, sizeof(t)))

/* Ensures *p has room for at least need elements of size sz; *allocated counts elements. */
static inline bool greedy_realloc(void **p, size_t *allocated, size_t need, size_t sz) {
        size_t n;
        void *q;

        if (need <= *allocated)
                return true;
        n = need < 8 ? 8 : need;
        if (n <= SIZE_MAX / 2)
                n = n * 2;
        if (n > SIZE_MAX / sz)
                return false;
        q = realloc(*p, n * sz);
        if (!q)
                return false;
        *p = q;
        *allocated = n;
        return true;
}

#define GREEDY_REALLOC(array, allocated, need)                                                               \
        greedy_realloc((void **) &(array), &(allocated), (need), sizeof((array)[0]))

/* The same, with the elements it adds zeroed: for arrays indexed by an id (a CPU, a string id). */
static inline bool greedy_realloc0(void **p, size_t *allocated, size_t need, size_t sz) {
        size_t old = *allocated;

        if (!greedy_realloc(p, allocated, need, sz))
                return false;
        if (*allocated > old)
                memset((uint8_t *) *p + old * sz, 0, (*allocated - old) * sz);
        return true;
}

#define GREEDY_REALLOC0(array, allocated, need)                                                              \
        greedy_realloc0((void **) &(array), &(allocated), (need), sizeof((array)[0]))

/* What an allocation takes of the heap: its usable size and malloc's header (glibc's chunk). For
 * caches whose bound is in bytes: a small allocation's header is a fifth of it or more. */
static inline size_t malloc_footprint(void *p) {
        return p ? malloc_usable_size(p) + sizeof(size_t) : 0;
}

static inline void *memdup(const void *p, size_t l) {
        void *r = malloc(l ?: 1);
        if (r && l > 0)
                memcpy(r, p, l);
        return r;
}
