/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An adaptive binary range coder, the entropy coder of the window format's sample
 * stream (store-model.h says what is coded with it). Each bit is coded with a probability that
 * learns from the bits coded with it before; integers are coded as a bit-length slot plus the bits
 * below the leading one. The arithmetic is the classic one of LZMA (32-bit range, 11-bit
 * probabilities, adaptation by 1/32, carry propagation through a cached byte), spelled out in
 * docs/window-format.md so that a second reader can decode what this one writes.
 *
 * The decoder never reads past its input: a stream that runs out latches an error, and a caller
 * checks with rc_decoder_finished() that the stream was consumed exactly.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/store-codec.h"

#define RC_PROB_BITS 11
#define RC_PROB_ONE (1U << RC_PROB_BITS)
#define RC_PROB_INIT (RC_PROB_ONE / 2)
#define RC_ADAPT_SHIFT 5
/* An encoded stream is at least this long: the leading zero byte and the four-byte flush. */
#define RC_STREAM_BYTES_MIN 5

/* The probability that the next bit is 0, in units of 1/2048. */
typedef uint16_t RcProb;

/* Integers 0 .. RC_UINT_MAX: v + 1 has a bit length of 1 to 32 (the slot, coded with a 5-bit
 * tree); the bits below its leading one follow, adaptively for slots up to RC_UINT_LOW_TREE_BITS,
 * at a fixed 1/2 above. */
#define RC_UINT_MAX (UINT32_MAX - 1)
#define RC_UINT_SLOT_BITS 5
#define RC_UINT_LOW_TREE_BITS 4

typedef struct RcUintModel {
        RcProb slot[1U << RC_UINT_SLOT_BITS];
        RcProb low[RC_UINT_LOW_TREE_BITS][1U << RC_UINT_LOW_TREE_BITS];
} RcUintModel;

void rc_prob_init(RcProb *p, size_t n);
void rc_uint_model_init(RcUintModel *m);

typedef struct RcEncoder {
        ByteBuf *out;
        uint64_t low;
        uint32_t range;
        uint8_t cache;     /* the last byte decided but held back: a carry may still change it */
        uint64_t pending;  /* cache plus the 0xff bytes held back behind it */
        int error;         /* the first failure to append to out */
} RcEncoder;

/* Appends the stream to out (whose content stays in front of it). */
void rc_encoder_init(RcEncoder *e, ByteBuf *out);
void rc_encode_bit(RcEncoder *e, RcProb *p, unsigned bit);
void rc_encode_uint(RcEncoder *e, RcUintModel *m, uint32_t v);
/* Any 64-bit value: below RC_UINT_MAX as rc_encode_uint(); else RC_UINT_MAX, then the value's 64
 * bits at 1/2, most significant first. */
void rc_encode_uint64(RcEncoder *e, RcUintModel *m, uint64_t v);
/* Flushes the last bytes; returns the first error met while encoding, or 0. */
int rc_encoder_finish(RcEncoder *e);

typedef struct RcDecoder {
        const uint8_t *p, *end;
        uint32_t range, code;
        bool error;
} RcDecoder;

void rc_decoder_init(RcDecoder *d, const uint8_t *p, size_t n);
unsigned rc_decode_bit(RcDecoder *d, RcProb *p);
uint32_t rc_decode_uint(RcDecoder *d, RcUintModel *m);
uint64_t rc_decode_uint64(RcDecoder *d, RcUintModel *m);
/* True if no error was met and every byte of the stream was read. */
bool rc_decoder_finished(const RcDecoder *d);
