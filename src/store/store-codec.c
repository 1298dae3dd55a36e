/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * CRC32C and the growable byte buffer of store-codec.h. The CRC is the plain table-driven
 * slicing-by-8 form: chunks are a few kilobytes to a few hundred, so it stays far below the cost
 * of zstd and needs no CPU feature detection.
 */
#include <errno.h>
#include <stdlib.h>

#include "store/store-codec.h"

static uint32_t crc_table[8][256];
static bool crc_table_ready;

static void crc_table_init(void) {
        for (uint32_t i = 0; i < 256; i++) {
                uint32_t c = i;
                for (int k = 0; k < 8; k++)
                        c = c & 1 ? (c >> 1) ^ 0x82F63B78U : c >> 1;
                crc_table[0][i] = c;
        }
        for (uint32_t i = 0; i < 256; i++)
                for (int t = 1; t < 8; t++)
                        crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xff];
        __atomic_store_n(&crc_table_ready, true, __ATOMIC_RELEASE);
}

uint32_t crc32c(uint32_t crc, const void *data, size_t n) {
        const uint8_t *p = data;

        /* Racing initializers compute identical tables, so no lock is needed. */
        if (!__atomic_load_n(&crc_table_ready, __ATOMIC_ACQUIRE))
                crc_table_init();

        crc = ~crc;
        while (n >= 8) {
                uint32_t lo = crc ^ get_le32(p), hi = get_le32(p + 4);
                crc = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^ crc_table[5][(lo >> 16) & 0xff] ^
                      crc_table[4][lo >> 24] ^ crc_table[3][hi & 0xff] ^ crc_table[2][(hi >> 8) & 0xff] ^
                      crc_table[1][(hi >> 16) & 0xff] ^ crc_table[0][hi >> 24];
                p += 8;
                n -= 8;
        }
        while (n-- > 0)
                crc = crc_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
        return ~crc;
}

int byte_buf_reserve(ByteBuf *b, size_t extra) {
        size_t need, n;
        uint8_t *q;

        if (extra > SIZE_MAX - b->len)
                return -ENOMEM;
        need = b->len + extra;
        if (need <= b->allocated)
                return 0;
        n = need < 4096 ? 4096 : need;
        if (n <= SIZE_MAX / 2)
                n *= 2;
        q = realloc(b->data, n);
        if (!q)
                return -ENOMEM;
        b->data = q;
        b->allocated = n;
        return 0;
}

int byte_buf_put(ByteBuf *b, const void *p, size_t n) {
        int r = byte_buf_reserve(b, n);
        if (r < 0)
                return r;
        if (n > 0)
                memcpy(b->data + b->len, p, n);
        b->len += n;
        return 0;
}

int byte_buf_put_varint(ByteBuf *b, uint64_t v) {
        int r = byte_buf_reserve(b, 10);
        if (r < 0)
                return r;
        while (v >= 0x80) {
                b->data[b->len++] = (uint8_t) (v | 0x80);
                v >>= 7;
        }
        b->data[b->len++] = (uint8_t) v;
        return 0;
}

int byte_buf_put_id_run(ByteBuf *b, const uint32_t *ids, size_t base, size_t n) {
        int r;

        r = byte_buf_put_varint(b, base);
        if (r >= 0)
                r = byte_buf_put_varint(b, n - base);
        for (size_t i = base; r >= 0 && i < n; i++)
                r = byte_buf_put_varint(b, ids[i]);
        return r;
}

void byte_buf_done(ByteBuf *b) {
        free(b->data);
        *b = (ByteBuf) {};
}
