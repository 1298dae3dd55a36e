/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * zstd wrappers; see compress.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "store/compress.h"

struct Compressor {
        ZSTD_CCtx *cctx;
        int level;
};

Compressor *compressor_new(int level) {
        Compressor *c = calloc(1, sizeof(Compressor));
        if (!c)
                return NULL;
        c->cctx = ZSTD_createCCtx();
        if (!c->cctx) {
                free(c);
                return NULL;
        }
        c->level = level;
        return c;
}

Compressor *compressor_free(Compressor *c) {
        if (!c)
                return NULL;
        ZSTD_freeCCtx(c->cctx);
        free(c);
        return NULL;
}

int compressor_run(Compressor *c, const void *in, size_t in_len, ByteBuf *out) {
        size_t bound = ZSTD_compressBound(in_len), n;
        int r;

        out->len = 0;
        r = byte_buf_reserve(out, bound);
        if (r < 0)
                return r;
        n = ZSTD_compressCCtx(c->cctx, out->data, bound, in, in_len, c->level);
        if (ZSTD_isError(n))
                return ZSTD_getErrorCode(n) == ZSTD_error_memory_allocation ? -ENOMEM : -EIO;
        out->len = n;
        return 0;
}

int decompress_exact(const void *in, size_t in_len, size_t raw_len, ByteBuf *out) {
        size_t n;
        int r;

        if (raw_len > COMPRESS_RAW_BYTES_MAX)
                return -EBADMSG;
        out->len = 0;
        r = byte_buf_reserve(out, raw_len + 1);
        if (r < 0)
                return r;
        n = ZSTD_decompress(out->data, raw_len, in, in_len);
        if (ZSTD_isError(n))
                return ZSTD_getErrorCode(n) == ZSTD_error_memory_allocation ? -ENOMEM : -EBADMSG;
        if (n != raw_len)
                return -EBADMSG;
        out->len = n;
        return 0;
}
