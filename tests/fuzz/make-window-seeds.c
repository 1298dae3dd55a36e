/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Writes the seed corpus of fuzz-window into a directory: small window files made by the store's
 * own writer (window_header_encode, ChunkWriter), so the seeds follow the format as it is, with no
 * committed blobs. Besides files as tprofd writes them (zstd chunks), some carry their payloads
 * stored raw (flags 0, which the reader accepts), so that mutations reach the payload decoder
 * instead of stopping at zstd.
 *
 *   make-window-seeds DIR
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "basic/cleanup.h"
#include "basic/string-util.h"
#include "store/compress.h"
#include "store/store-codec.h"
#include "store/store-window.h"
#include "tests/store-test-util.h"

/* Rewrites an encoded chunk (header + zstd frame) into out with its payload stored raw. */
static int chunk_to_raw(const ByteBuf *enc, ByteBuf *out) {
        _cleanup_(byte_buf_done) ByteBuf raw = {};
        uint8_t h[CHUNK_HEADER_BYTES];
        int r;

        r = decompress_exact(enc->data + CHUNK_HEADER_BYTES, enc->len - CHUNK_HEADER_BYTES,
                             get_le32(enc->data + 28), &raw);
        if (r < 0)
                return r;
        memcpy(h, enc->data, CHUNK_HEADER_BYTES);
        put_le16(h + 4, 0);
        put_le32(h + 28, (uint32_t) raw.len);
        put_le32(h + 32, (uint32_t) raw.len);
        put_le32(h + 36, crc32c(0, raw.data, raw.len));
        put_le32(h + 44, crc32c(0, h, 44));
        r = byte_buf_put(out, h, sizeof h);
        if (r >= 0)
                r = byte_buf_put(out, raw.data, raw.len);
        return r;
}

/* One window of n_chunks chunks of n_samples samples each, chained by chain. */
static int write_seed(const char *dir, const char *name, unsigned n_chunks, unsigned n_samples, unsigned chain,
                      bool raw) {
        WindowHeaderInfo info = test_header_info();
        _cleanup_(chunk_writer_freep) ChunkWriter *cw = chunk_writer_new(1);
        _cleanup_(byte_buf_done) ByteBuf file = {}, enc = {};
        _cleanup_free_ char *path = NULL;
        _cleanup_close_ int fd = -EBADF;
        uint64_t rng = 4242, t = UINT64_C(5000000000);
        int r;

        if (!cw)
                return -ENOMEM;
        chunk_writer_set_clock(cw, &info.clock);
        chunk_writer_set_chain(cw, chain);
        r = window_header_encode(&info, UINT64_C(1700000000000000), 120 * UINT64_C(1000000), &file);
        if (r < 0)
                return r;
        for (unsigned c = 0; c < n_chunks; c++) {
                for (unsigned i = 0; i < n_samples; i++) {
                        OwnedSample o;

                        test_make_sample(&rng, t += 10309278, &o);
                        /* Short stacks keep the seeds small. */
                        o.s.n_frames = o.s.n_frames % 4;
                        /* Build ids for two files and the kernel, so the seeds carry a build id table. */
                        for (size_t k = 0; k < o.s.n_frames; k++)
                                o.frames[k].build_id = o.frames[k].kernel ? "b1d0"
                                        : streq(o.frames[k].dso, "/usr/bin/burn") ? "0123456789abcdef0123456789abcdef01234567"
                                        : startswith(o.frames[k].dso, "/usr/lib/") ? "fe" : NULL;
                        r = chunk_writer_add_sample(cw, &o.s);
                        if (r < 0)
                                return r;
                }
                if (c == 0) {
                        r = chunk_writer_add_lost(cw, 1, 3);
                        if (r < 0)
                                return r;
                }
                r = chunk_writer_encode(cw, &enc);
                if (r < 0)
                        return r;
                r = raw ? chunk_to_raw(&enc, &file) : byte_buf_put(&file, enc.data, enc.len);
                if (r < 0)
                        return r;
                r = chunk_writer_commit(cw);
                if (r < 0)
                        return r;
        }

        if (asprintf(&path, "%s/%s", dir, name) < 0)
                return -ENOMEM;
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
                return -errno;
        if (write(fd, file.data, file.len) != (ssize_t) file.len)
                return -EIO;
        return 0;
}

int main(int argc, char *argv[]) {
        static const struct {
                const char *name;
                unsigned chunks, samples, chain;
                bool raw;
        } seeds[] = {
                { "header-only.tpw", 0, 0, 1, false },
                { "raw-one.tpw", 1, 6, 1, true },
                { "raw-chain.tpw", 3, 4, 3, true },
                { "raw-two-chains.tpw", 4, 3, 2, true },
                { "zstd-chain.tpw", 2, 6, 12, false },
        };
        int r;

        if (argc != 2) {
                fprintf(stderr, "usage: %s DIR\n", argv[0]);
                return 64;
        }
        for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
                r = write_seed(argv[1], seeds[i].name, seeds[i].chunks, seeds[i].samples, seeds[i].chain,
                               seeds[i].raw);
                if (r < 0) {
                        fprintf(stderr, "%s: %s\n", seeds[i].name, strerror(-r));
                        return 1;
                }
        }
        return 0;
}
