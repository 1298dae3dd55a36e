/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One window file's on-disk format (docs/window-format.md is the normative description):
 * a versioned, checksummed file header, then append-only chunks, each a 48-byte checksummed chunk
 * header followed by one zstd frame holding a columnar payload: the entries it adds to its chain's
 * string, frame, stack-node, thread, cgroup and build id tables, then its samples, whose times, threads,
 * stacks and cgroups are range-coded with the chain's sample model (store-model.h). A chain starts every window file,
 * so a window decodes without any other. This module owns encoding (ChunkWriter: interning, tables
 * and the sample stream for the samples of one flush) and decoding (WindowFile:
 * header, chunk index with corruption and truncation detection, chunk payloads back into Samples).
 * It does not know about directories, rotation or time ranges across files: see ring-store.h and
 * store-slice.h.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "basic/clock-map.h"
#include "profile/profile-sample.h"
#include "store/store-codec.h"

#define WINDOW_MAGIC "TPROFWIN"
#define WINDOW_FORMAT_VERSION 5
#define WINDOW_FORMAT_VERSION_NO_BUILD_IDS 4 /* still read: the same without the build id table */
#define WINDOW_FORMAT_VERSION_NO_CGROUPS 3   /* still read: 4 without the cgroup table and coding */
#define WINDOW_HEADER_FIXED_BYTES 80
#define WINDOW_HEADER_STRING_BYTES_MAX 1024U
#define CHUNK_MAGIC "TPCK"
#define CHUNK_HEADER_BYTES 48
#define CHUNK_FLAG_ZSTD 0x1
/* Limits a reader enforces on what a file claims (untrusted input). */
#define CHUNK_SAMPLES_MAX (UINT32_C(1) << 22)
#define CHUNK_STORED_BYTES_MAX (UINT32_C(256) << 20)
#define WINDOW_CHUNKS_MAX (UINT32_C(1) << 20)
#define CHUNK_CPUS_MAX 65536U
/* Chunks per chain: tables and the sample model are shared within a chain, so a longer chain is
 * smaller on disk but a damaged chunk makes the rest of its chain unreadable, and a chunk in the
 * middle is read by decoding the chunks before it. 24 × 5 s chunks = 120 s, a default window. */
#define CHUNK_CHAIN_DEFAULT 24U
#define CHUNK_CHAIN_MAX 1024U

/* File header flags. */
#define WINDOW_FLAG_FUNCTION_FRAMES 0x1 /* every frame is a function's start, offset 0 */
#define WINDOW_FLAGS_KNOWN WINDOW_FLAG_FUNCTION_FRAMES
/* Sample times are kept to this many microseconds at most coarse (one second). */
#define WINDOW_TIME_RESOLUTION_USEC_MAX 1000000U

typedef struct WindowHeaderInfo {
        const char *host, *boot_id, *kernel_release, *event;
        uint32_t freq_hz, n_cpus;
        /* How much detail the window keeps: sample times are multiples of time_resolution_usec
         * (0 and 1 both mean microseconds), and with function_frames each frame names the function
         * it ran in (its start address, offset 0) rather than the instruction. */
        uint32_t time_resolution_usec;
        bool function_frames;
        ClockMap clock;
} WindowHeaderInfo;

/* A parsed file header; the strings of info point into strings. */
typedef struct WindowHeader {
        WindowHeaderInfo info;
        uint64_t start_realtime_usec; /* the window's nominal start, CLOCK_REALTIME */
        uint64_t span_usec;           /* its nominal length */
        uint32_t header_bytes;        /* where the first chunk starts */
        uint16_t version;             /* WINDOW_FORMAT_VERSION or one of the older ones still read */
        char *strings;
} WindowHeader;

void window_header_done(WindowHeader *h);
/* Serializes a file header into out (replacing its content). */
int window_header_encode(const WindowHeaderInfo *info, uint64_t start_realtime_usec, uint64_t span_usec,
                         ByteBuf *out);
/* Parses a file header from the first bytes of a file. -EBADMSG: not a window or corrupt; -EPROTONOSUPPORT: newer version. */
int window_header_decode(const uint8_t *p, size_t n, WindowHeader *ret);

/* ---- writing: the samples of one chunk, interned, then encoded in one go ---- */

typedef struct ChunkWriter ChunkWriter;

ChunkWriter *chunk_writer_new(int compress_level);
ChunkWriter *chunk_writer_free(ChunkWriter *w);
/* With s->stack_slot, a slot tagged for the current tables gives the stack without looking at the
 * frames; any other slot is filled in once the frames are interned (Sample.stack_slot). Without
 * that, s->callers_slot does the same for the frames after the leaf, and only the leaf is
 * interned. */
int chunk_writer_add_sample(ChunkWriter *w, const Sample *s);
int chunk_writer_add_lost(ChunkWriter *w, uint32_t cpu, uint64_t n);
void chunk_writer_set_clock(ChunkWriter *w, const ClockMap *m);
void chunk_writer_set_frequency(ChunkWriter *w, uint32_t hz);
/* Sample times are cut down to a multiple of this many microseconds (0 or 1: microseconds). */
void chunk_writer_set_time_resolution(ChunkWriter *w, uint32_t usec);
size_t chunk_writer_n_samples(const ChunkWriter *w);
bool chunk_writer_is_empty(const ChunkWriter *w);
/* Smallest and largest sample time buffered (UINT64_MAX/0 when none). */
void chunk_writer_time_range(const ChunkWriter *w, uint64_t *ret_first_ns, uint64_t *ret_last_ns);
/*
 * Encodes the buffered samples as one chunk (header + compressed payload) into out. Then call
 * chunk_writer_commit() once it is safely in the file, or chunk_writer_reset() if it could not be
 * written (the next chunk must not depend on it).
 */
int chunk_writer_encode(ChunkWriter *w, ByteBuf *out);
/* The chunk encoded last was written: forget its samples, continue (or end) its chain. -ENOMEM when
 * the tables of an ended chain could not be emptied: they stay, and the next chunk starts a chain
 * all the same. */
int chunk_writer_commit(ChunkWriter *w);
/* Forgets everything buffered and every table, keeping the clock map; the next chunk starts a chain
 * (with the tables as they were where they could not be emptied: -ENOMEM). */
int chunk_writer_reset(ChunkWriter *w);
/* Makes the next chunk start a chain (list every table entry again), keeping buffered samples:
 * for the first chunk of a new window file. */
int chunk_writer_restart_chain(ChunkWriter *w);
/* Sets the number of chunks per chain (1: every chunk self-contained). */
void chunk_writer_set_chain(ChunkWriter *w, unsigned chunks);

#include "basic/cleanup.h"
DEFINE_TRIVIAL_CLEANUP_FUNC(ChunkWriter *, chunk_writer_free);

/* ---- reading ---- */

typedef struct ChunkInfo {
        uint64_t offset; /* of the chunk header in the file */
        uint64_t first_ns, last_ns;
        uint32_t n_samples, lost, raw_len, stored_len, flags;
        uint32_t chain_pos; /* 0: self-contained; n: needs the n chunks before it */
        bool corrupt; /* the payload failed its checksum or did not decode */
} ChunkInfo;

typedef struct WindowReadStats {
        unsigned chunks;               /* chunks with a valid header */
        unsigned corrupt_chunks;       /* chunks (or damaged stretches) not read as data */
        uint64_t first_corrupt_offset; /* byte offset of the first of them; UINT64_MAX if none */
        bool truncated;                /* the file ends inside a chunk (a crash or a write in progress) */
        uint64_t truncated_offset;     /* where the incomplete chunk starts */
        uint64_t good_end_offset;      /* end of the last intact chunk: where recovery truncates */
        uint64_t samples, lost;        /* from the valid chunk headers */
} WindowReadStats;

typedef struct WindowFile {
        int fd;
        char *path;
        uint64_t size;
        WindowHeader header;
        ChunkInfo *chunks; /* valid headers only, in file order */
        size_t n_chunks;
        WindowReadStats stats;
        /* private: the tables after the last decoded chunk, and the string storage of all decoded
         * chunks (samples handed out point into it, so it lives as long as the file is open) */
        struct TableState *cache;
        size_t cache_after;
        char **pools;
        size_t n_pools;
} WindowFile;

/*
 * Opens a window, parses its header and walks the chunk headers. With verify, every payload's
 * checksum is checked too (reads the whole file, decompresses nothing); without it only headers are
 * read and a bad payload shows up when the chunk is decoded. A damaged chunk header is skipped by
 * searching for the next valid one.
 */
int window_file_open(const char *path, bool verify, WindowFile **ret);
WindowFile *window_file_free(WindowFile *w);
DEFINE_TRIVIAL_CLEANUP_FUNC(WindowFile *, window_file_free);

typedef struct DecodedChunk DecodedChunk;

/* Reads, verifies and decodes chunk i. -EBADMSG (and chunks[i].corrupt set) if it is damaged. */
int window_file_decode_chunk(WindowFile *w, size_t i, DecodedChunk **ret);
DecodedChunk *decoded_chunk_free(DecodedChunk *c);
DEFINE_TRIVIAL_CLEANUP_FUNC(DecodedChunk *, decoded_chunk_free);
size_t decoded_chunk_n_samples(const DecodedChunk *c);
/* Fills *ret with sample i; its strings and frames live as long as the chunk. Samples are in time order. */
void decoded_chunk_sample(const DecodedChunk *c, size_t i, Sample *ret);
uint64_t decoded_chunk_sample_time(const DecodedChunk *c, size_t i);
const ClockMap *decoded_chunk_clock(const DecodedChunk *c);
size_t decoded_chunk_n_lost(const DecodedChunk *c);
void decoded_chunk_lost(const DecodedChunk *c, size_t i, uint32_t *ret_cpu, uint64_t *ret_n);

typedef int (*SliceHandler)(const Sample *s, void *userdata);

/*
 * Reads every sample of one window in file order, chunk by chunk (each chunk in time order), and
 * calls h for each; a handler's negative return stops the read and is returned. Damaged chunks are
 * skipped and counted in ret_stats (with the offset of the first); a truncated last chunk is
 * reported there too. Neither is an error. Returns -EBADMSG only if the file header is unusable.
 */
int window_read(const char *path, SliceHandler h, void *ud, WindowReadStats *ret_stats);
