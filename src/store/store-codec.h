/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The byte-level codec of the window format: CRC32C (Castagnoli, the checksum of every header and
 * chunk), little-endian fixed-width fields, LEB128 varints with zigzag for signed deltas, a growable
 * output buffer and a bounds-checked input cursor. Nothing here knows what a sample is; see
 * store-window.h for the layout built from these pieces and docs/window-format.md for the spec.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* CRC32C (polynomial 0x1EDC6F41, reflected), initial value 0, as in iSCSI/ext4: crc32c("123456789") = 0xE3069283. */
uint32_t crc32c(uint32_t crc, const void *data, size_t n);

typedef struct ByteBuf {
        uint8_t *data;
        size_t len;
        size_t allocated;
} ByteBuf;

int byte_buf_reserve(ByteBuf *b, size_t extra);
int byte_buf_put(ByteBuf *b, const void *p, size_t n);
int byte_buf_put_varint(ByteBuf *b, uint64_t v);
/* A chain table's additions: the entries already listed (base), how many follow, and the string
 * ids of entries base to n - 1, each a varint. */
int byte_buf_put_id_run(ByteBuf *b, const uint32_t *ids, size_t base, size_t n);
void byte_buf_done(ByteBuf *b);

static inline uint64_t zigzag_encode(int64_t v) {
        return ((uint64_t) v << 1) ^ (uint64_t) (v >> 63);
}
static inline int64_t zigzag_decode(uint64_t v) {
        return (int64_t) (v >> 1) ^ -(int64_t) (v & 1);
}

static inline void put_le16(uint8_t *p, uint16_t v) {
        p[0] = v;
        p[1] = v >> 8;
}
static inline void put_le32(uint8_t *p, uint32_t v) {
        for (int i = 0; i < 4; i++)
                p[i] = v >> (8 * i);
}
static inline void put_le64(uint8_t *p, uint64_t v) {
        for (int i = 0; i < 8; i++)
                p[i] = v >> (8 * i);
}
static inline uint16_t get_le16(const uint8_t *p) {
        return (uint16_t) (p[0] | p[1] << 8);
}
static inline uint32_t get_le32(const uint8_t *p) {
        uint32_t v = 0;
        for (int i = 3; i >= 0; i--)
                v = v << 8 | p[i];
        return v;
}
static inline uint64_t get_le64(const uint8_t *p) {
        uint64_t v = 0;
        for (int i = 7; i >= 0; i--)
                v = v << 8 | p[i];
        return v;
}

/* Reading side: every accessor checks bounds and latches error instead of reading past end. */
typedef struct ByteCursor {
        const uint8_t *p, *end;
        bool error;
} ByteCursor;

static inline uint64_t cursor_varint(ByteCursor *c) {
        uint64_t v = 0;

        for (unsigned shift = 0; shift < 64; shift += 7) {
                if (c->p >= c->end) {
                        c->error = true;
                        return 0;
                }
                uint8_t b = *c->p++;
                /* the tenth byte holds bit 63 alone: more would not fit 64 bits */
                if (shift == 63 && b > 1) {
                        c->error = true;
                        return 0;
                }
                v |= (uint64_t) (b & 0x7f) << shift;
                if (!(b & 0x80))
                        return v;
        }
        c->error = true; /* more than 10 bytes: not a varint we wrote */
        return 0;
}

/* A varint that must be below limit (a count or an index); latches error otherwise. */
static inline uint64_t cursor_varint_max(ByteCursor *c, uint64_t limit) {
        uint64_t v = cursor_varint(c);
        if (v >= limit) {
                c->error = true;
                return 0;
        }
        return v;
}

static inline const uint8_t *cursor_bytes(ByteCursor *c, size_t n) {
        const uint8_t *p = c->p;
        if ((size_t) (c->end - c->p) < n) {
                c->error = true;
                return NULL;
        }
        c->p += n;
        return p;
}
