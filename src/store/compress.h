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

/* Level 9. The chunks of a 40 s mixed load at 997 Hz (find|gzip and python on 2 CPUs) recompressed
 * at each level: 2.39 bytes a sample at 9 against 2.33 at 19 (+2.8%), for 0.10 against 0.77 CPU us
 * a sample; on burners at the 100-CPU rate 0.41 against 0.39 bytes, 0.014 against 0.47 us. At
 * fleet rates level 19 was a third of the daemon's CPU (zstd's search and its table clearing); the
 * ring stays 10-80 times smaller than perf's files either way. */
#define COMPRESS_LEVEL_DEFAULT 9
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
