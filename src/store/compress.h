/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * zstd framing for chunk payloads: one zstd frame per chunk, compressed in one call with a reused
 * context, decompressed into a buffer whose size the chunk header states (and which we bound, so a
 * forged header cannot make a reader allocate without limit). zstd errors become -EIO/-ENOMEM here.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "store/store-codec.h"

/* Level 19 against 9: 2.6% smaller compact windows for 0.09 against 0.05 CPU-s per 2 minutes of
 * 2-CPU samples (a mixed load, tprof 0.1 compact detail); chunks are small, so zstd sizes its tables
 * to the input. The writer alone costs about 0.1% of one CPU (0.13% importing a 2-minute exact
 * recording of that load). */
#define COMPRESS_LEVEL_DEFAULT 19
/* Largest decompressed chunk payload a reader accepts. */
#define COMPRESS_RAW_BYTES_MAX (UINT32_C(256) << 20)

typedef struct Compressor Compressor;

Compressor *compressor_new(int level);
Compressor *compressor_free(Compressor *c);
/* Replaces out's content with the compressed form of in. */
int compressor_run(Compressor *c, const void *in, size_t in_len, ByteBuf *out);

/* Decompresses exactly raw_len bytes into out (replacing its content); -EBADMSG if the frame is bad. */
int decompress_exact(const void *in, size_t in_len, size_t raw_len, ByteBuf *out);

#include "basic/cleanup.h"
DEFINE_TRIVIAL_CLEANUP_FUNC(Compressor *, compressor_free);
