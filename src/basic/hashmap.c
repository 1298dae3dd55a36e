/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Open-addressing byte-string hash table; see hashmap.h. Keys longer than 8 bytes live in one arena
 * per table (shorter ones in their entry), so a table of a million small keys is a few large
 * allocations, not a million small ones.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "basic/alloc-util.h"
#include "basic/hashmap.h"

/*
 * 32 bytes, two to a cache line and aligned to them (the table is), so a probe reads one line. A key
 * of up to 8 bytes is held in the entry itself: finding it reads nothing else. The window writer's
 * stack tree nodes are such keys, and their table, grown large over a window and gone cold between
 * drains, was where the daemon's per-sample time went (a cache miss for the entry, another for the
 * key in the arena).
 */
#define KEY_INLINE_MAX 8U
typedef struct Entry {
        uint64_t hash; /* 0: unused (key_hash() never gives it) */
        uint64_t value;
        union {
                uint64_t key_off; /* into arena, for longer keys */
                uint8_t key[KEY_INLINE_MAX];
        };
        uint32_t key_len;
} Entry;
static_assert(sizeof(Entry) == 32, "two entries to a cache line");
#define TABLE_ALIGN 64U

struct Hashmap {
        Entry *entries; /* in table, at its first cache line boundary */
        void *table;
        size_t n_buckets; /* power of two */
        size_t n_used;
        char *arena;
        size_t arena_used, arena_allocated;
};

/* MurmurHash3's final avalanche (fmix64): every bit of h reaches the low bits a table indexes by. */
static uint64_t avalanche(uint64_t h) {
        h ^= h >> 33;
        h *= UINT64_C(0xff51afd7ed558ccd);
        h ^= h >> 33;
        h *= UINT64_C(0xc4ceb9fe1a85ec53);
        h ^= h >> 33;
        return h;
}

/* 64-bit FNV-1a with the final avalanche: fast for short keys. */
uint64_t hash_bytes(const void *p, size_t n) {
        const uint8_t *b = p;
        uint64_t h = UINT64_C(0xcbf29ce484222325);

        for (size_t i = 0; i < n; i++) {
                h ^= b[i];
                h *= UINT64_C(0x100000001b3);
        }
        return avalanche(h);
}

/*
 * The tables' own hash: eight bytes a step (a multiply and a rotate each), the same final
 * avalanche. Interned symbol names and frame keys run to tens of bytes, where hash_bytes() spends
 * a multiply on every byte. Not hash_bytes(): that one's values are kept (colours derived from it).
 */
static uint64_t key_hash(const void *p, size_t n) {
        const uint8_t *b = p;
        uint64_t h = UINT64_C(0xcbf29ce484222325) ^ ((uint64_t) n * UINT64_C(0x9E3779B97F4A7C15)), w;
        size_t i = 0;

        for (; i + 8 <= n; i += 8) {
                memcpy(&w, b + i, 8);
                h ^= w;
                h *= UINT64_C(0xff51afd7ed558ccd);
                h = h << 31 | h >> 33;
        }
        if (i < n) {
                w = 0;
                memcpy(&w, b + i, n - i);
                h ^= w;
                h *= UINT64_C(0xff51afd7ed558ccd);
        }
        h = avalanche(h);
        return h ?: 1; /* 0 marks an unused entry */
}

static const void *entry_key(const Hashmap *h, const Entry *e) {
        return e->key_len <= KEY_INLINE_MAX ? (const void *) e->key : (const void *) (h->arena + e->key_off);
}

/* n zeroed entries from a cache line boundary; *ret_table is what to free. calloc() (not
 * aligned_alloc()), two entries more: the allocations the window writer's tests make fail are
 * malloc(), calloc() and realloc(). */
static Entry *table_new(size_t n, void **ret_table) {
        void *t = calloc(n + TABLE_ALIGN / sizeof(Entry), sizeof(Entry));

        *ret_table = t;
        if (!t)
                return NULL;
        return (Entry *) (((uintptr_t) t + TABLE_ALIGN - 1) & ~(uintptr_t) (TABLE_ALIGN - 1));
}

Hashmap *hashmap_new(void) {
        Hashmap *h = calloc(1, sizeof(Hashmap));
        if (!h)
                return NULL;
        h->n_buckets = 64;
        h->entries = table_new(h->n_buckets, &h->table);
        if (!h->entries)
                return mfree(h);
        return h;
}

Hashmap *hashmap_free(Hashmap *h) {
        if (!h)
                return NULL;
        free(h->table);
        free(h->arena);
        free(h);
        return NULL;
}

size_t hashmap_size(const Hashmap *h) {
        return h ? h->n_used : 0;
}

static Entry *find(const Hashmap *h, const void *key, size_t key_len, uint64_t hash) {
        size_t mask = h->n_buckets - 1;

        for (size_t i = hash & mask;; i = (i + 1) & mask) {
                Entry *e = &h->entries[i];
                if (e->hash == 0)
                        return e;
                /* A key of 8 bytes or fewer (the empty one too) is compared in the entry. */
                if (e->hash == hash && e->key_len == key_len &&
                    (key_len == 0 || memcmp(entry_key(h, e), key, key_len) == 0))
                        return e;
        }
}

static int grow(Hashmap *h) {
        size_t n = h->n_buckets * 2;
        void *table;
        Entry *old = h->entries, *fresh = table_new(n, &table);

        if (!fresh)
                return -ENOMEM;
        for (size_t i = 0; i < h->n_buckets; i++) {
                if (old[i].hash == 0)
                        continue;
                for (size_t j = old[i].hash & (n - 1);; j = (j + 1) & (n - 1))
                        if (fresh[j].hash == 0) {
                                fresh[j] = old[i];
                                break;
                        }
        }
        free(h->table);
        h->table = table;
        h->entries = fresh;
        h->n_buckets = n;
        return 0;
}

bool hashmap_get(const Hashmap *h, const void *key, size_t key_len, uint64_t *ret_value) {
        Entry *e;

        if (!h)
                return false;
        e = find(h, key, key_len, key_hash(key, key_len));
        if (e->hash == 0)
                return false;
        if (ret_value)
                *ret_value = e->value;
        return true;
}

uint64_t *hashmap_slot(Hashmap *h, const void *key, size_t key_len, uint64_t initial, bool *ret_added) {
        uint64_t hash = key_hash(key, key_len);
        Entry *e = find(h, key, key_len, hash);

        if (e->hash != 0) {
                if (ret_added)
                        *ret_added = false;
                return &e->value;
        }
        if (key_len > UINT32_MAX)
                return NULL;
        if ((h->n_used + 1) * 10 > h->n_buckets * 7) {
                if (grow(h) < 0)
                        return NULL;
                e = find(h, key, key_len, hash);
        }
        if (key_len <= KEY_INLINE_MAX) {
                *e = (Entry) {
                        .hash = hash,
                        .value = initial,
                        .key_len = (uint32_t) key_len,
                };
                if (key_len > 0)
                        memcpy(e->key, key, key_len);
        } else {
                if (!GREEDY_REALLOC(h->arena, h->arena_allocated, h->arena_used + key_len))
                        return NULL;
                memcpy(h->arena + h->arena_used, key, key_len);
                *e = (Entry) {
                        .hash = hash,
                        .value = initial,
                        .key_off = h->arena_used,
                        .key_len = (uint32_t) key_len,
                };
                h->arena_used += key_len;
        }
        h->n_used++;
        if (ret_added)
                *ret_added = true;
        return &e->value;
}

int hashmap_put(Hashmap *h, const void *key, size_t key_len, uint64_t value) {
        bool added;
        uint64_t *v = hashmap_slot(h, key, key_len, value, &added);

        if (!v)
                return -ENOMEM;
        *v = value;
        return added;
}

bool hashmap_iterate(const Hashmap *h, size_t *state, const void **ret_key, size_t *ret_key_len,
                     uint64_t *ret_value) {
        if (!h)
                return false;
        for (; *state < h->n_buckets; (*state)++) {
                const Entry *e = &h->entries[*state];
                if (e->hash == 0)
                        continue;
                if (ret_key)
                        *ret_key = entry_key(h, e);
                if (ret_key_len)
                        *ret_key_len = e->key_len;
                if (ret_value)
                        *ret_value = e->value;
                (*state)++;
                return true;
        }
        return false;
}
