/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the fuzz targets that read windows share. */
#pragma once

#include <stdint.h>
#include <string.h>

#include "store/store-codec.h"
#include "store/store-window.h"

/* Recomputes the file header's checksum and those of every chunk found by walking the chunk
 * lengths, clamping a stored length that runs past the end: the fuzzer's mutations then reach the
 * decoders rather than stopping at a checksum. */
static inline void fuzz_window_fix_checksums(uint8_t *p, size_t n) {
        uint32_t len;
        uint64_t pos;

        if (n < WINDOW_HEADER_FIXED_BYTES + 8 + 4)
                return;
        len = get_le32(p + 12);
        if (len < WINDOW_HEADER_FIXED_BYTES + 8 + 4 || len > n)
                return;
        put_le32(p + len - 4, crc32c(0, p, len - 4));
        for (pos = len; n - pos >= CHUNK_HEADER_BYTES;) {
                uint8_t *h = p + pos;
                uint32_t stored;

                if (memcmp(h, CHUNK_MAGIC, 4) != 0)
                        break;
                stored = get_le32(h + 32);
                if (stored > n - pos - CHUNK_HEADER_BYTES) {
                        stored = (uint32_t) (n - pos - CHUNK_HEADER_BYTES);
                        put_le32(h + 32, stored);
                }
                put_le32(h + 36, crc32c(0, h + CHUNK_HEADER_BYTES, stored));
                put_le32(h + 44, crc32c(0, h, 44));
                pos += CHUNK_HEADER_BYTES + stored;
        }
}
