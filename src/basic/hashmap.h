/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One hash table for every module: string interning, stack deduplication, symbol caches. Keys are
 * byte strings copied into the map (so callers may pass stack buffers); values are a uint64_t the
 * caller interprets (an index, a count, or a pointer cast with HASHMAP_PTR). Open addressing with
 * linear probing and a load factor under 0.7; no deletion, because every user of it builds a table,
 * uses it, and frees it whole (per chunk, per window, per export).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct Hashmap Hashmap;

uint64_t hash_bytes(const void *p, size_t n);

Hashmap *hashmap_new(void);
Hashmap *hashmap_free(Hashmap *h);
size_t hashmap_size(const Hashmap *h);

/* Returns true and sets *ret_value if present. */
bool hashmap_get(const Hashmap *h, const void *key, size_t key_len, uint64_t *ret_value);
/* Inserts or replaces. Returns 1 if newly added, 0 if replaced, -ENOMEM. */
int hashmap_put(Hashmap *h, const void *key, size_t key_len, uint64_t value);
/* Returns a pointer to the stored value, inserting initial if absent (for counters). NULL on OOM. */
uint64_t *hashmap_slot(Hashmap *h, const void *key, size_t key_len, uint64_t initial, bool *ret_added);

/* Iteration in unspecified order: for (size_t i = 0; hashmap_iterate(h, &i, &k, &kl, &v); ) */
bool hashmap_iterate(const Hashmap *h, size_t *state, const void **ret_key, size_t *ret_key_len,
                     uint64_t *ret_value);

#define HASHMAP_PTR(v) ((void *) (uintptr_t) (v))
#define PTR_HASHMAP(p) ((uint64_t) (uintptr_t) (p))

#include "basic/cleanup.h"
DEFINE_TRIVIAL_CLEANUP_FUNC(Hashmap *, hashmap_free);
