/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>

#include "store/range-coder.h"

#define RC_TOP (UINT32_C(1) << 24)

void rc_prob_init(RcProb *p, size_t n) {
        for (size_t i = 0; i < n; i++)
                p[i] = RC_PROB_INIT;
}

void rc_uint_model_init(RcUintModel *m) {
        rc_prob_init(m->slot, sizeof m->slot / sizeof(RcProb));
        rc_prob_init(&m->low[0][0], sizeof m->low / sizeof(RcProb));
}

static unsigned bit_length(uint32_t x) {
        return x == 0 ? 0 : 32 - (unsigned) __builtin_clz(x);
}

/* ---------------------------------------------------------------- encoder */

void rc_encoder_init(RcEncoder *e, ByteBuf *out) {
        *e = (RcEncoder) {
                .out = out,
                .range = UINT32_MAX,
                .pending = 1, /* the stream opens with the cache's initial 0 */
        };
}

static void put_byte(RcEncoder *e, uint8_t b) {
        if (e->error == 0)
                e->error = byte_buf_put(e->out, &b, 1);
}

/*
 * Moves the top byte of low out. It is held back while it is 0xff, since a carry out of low could
 * still turn it (and the bytes before it) over; a byte below 0xff absorbs any carry, so once one
 * arrives everything held back is final.
 */
static void shift_low(RcEncoder *e) {
        if ((uint32_t) e->low < UINT32_C(0xff000000) || (e->low >> 32) != 0) {
                uint8_t carry = (uint8_t) (e->low >> 32), b = e->cache;

                do {
                        put_byte(e, (uint8_t) (b + carry));
                        b = 0xff;
                } while (--e->pending != 0);
                e->cache = (uint8_t) (e->low >> 24);
        }
        e->pending++;
        e->low = (e->low & UINT32_C(0x00ffffff)) << 8;
}

void rc_encode_bit(RcEncoder *e, RcProb *p, unsigned bit) {
        uint32_t bound = (e->range >> RC_PROB_BITS) * *p;

        if (bit == 0) {
                e->range = bound;
                *p += (RC_PROB_ONE - *p) >> RC_ADAPT_SHIFT;
        } else {
                e->low += bound;
                e->range -= bound;
                *p -= *p >> RC_ADAPT_SHIFT;
        }
        while (e->range < RC_TOP) {
                e->range <<= 8;
                shift_low(e);
        }
}

static void encode_tree(RcEncoder *e, RcProb *probs, unsigned bits, uint32_t v) {
        uint32_t m = 1;

        for (unsigned i = bits; i-- > 0;) {
                unsigned bit = (v >> i) & 1;
                rc_encode_bit(e, &probs[m], bit);
                m = m << 1 | bit;
        }
}

static void encode_direct(RcEncoder *e, unsigned bits, uint32_t v) {
        for (unsigned i = bits; i-- > 0;) {
                RcProb half = RC_PROB_INIT; /* a fixed 1/2: never adapted */
                rc_encode_bit(e, &half, (v >> i) & 1);
        }
}

void rc_encode_uint(RcEncoder *e, RcUintModel *m, uint32_t v) {
        uint32_t x;
        unsigned slot;

        if (v > RC_UINT_MAX) {
                if (e->error == 0)
                        e->error = -ERANGE;
                return;
        }
        x = v + 1;
        slot = bit_length(x) - 1;
        encode_tree(e, m->slot, RC_UINT_SLOT_BITS, slot);
        if (slot == 0)
                return;
        if (slot <= RC_UINT_LOW_TREE_BITS)
                encode_tree(e, m->low[slot - 1], slot, x - (UINT32_C(1) << slot));
        else
                encode_direct(e, slot, x - (UINT32_C(1) << slot));
}

void rc_encode_uint64(RcEncoder *e, RcUintModel *m, uint64_t v) {
        if (v < RC_UINT_MAX) {
                rc_encode_uint(e, m, (uint32_t) v);
                return;
        }
        rc_encode_uint(e, m, RC_UINT_MAX);
        encode_direct(e, 32, (uint32_t) (v >> 32));
        encode_direct(e, 32, (uint32_t) v);
}

int rc_encoder_finish(RcEncoder *e) {
        for (int i = 0; i < 5; i++)
                shift_low(e);
        return e->error;
}

/* ---------------------------------------------------------------- decoder */

static uint8_t next_byte(RcDecoder *d) {
        if (d->p >= d->end) {
                d->error = true;
                return 0;
        }
        return *d->p++;
}

void rc_decoder_init(RcDecoder *d, const uint8_t *p, size_t n) {
        *d = (RcDecoder) { .p = p, .end = p + n, .range = UINT32_MAX };
        /* An encoder's first byte is always 0: anything else is not our stream. */
        if (n < RC_STREAM_BYTES_MIN || next_byte(d) != 0) {
                d->error = true;
                return;
        }
        for (int i = 0; i < 4; i++)
                d->code = d->code << 8 | next_byte(d);
}

unsigned rc_decode_bit(RcDecoder *d, RcProb *p) {
        uint32_t bound = (d->range >> RC_PROB_BITS) * *p;
        unsigned bit;

        if (d->code < bound) {
                d->range = bound;
                *p += (RC_PROB_ONE - *p) >> RC_ADAPT_SHIFT;
                bit = 0;
        } else {
                d->code -= bound;
                d->range -= bound;
                *p -= *p >> RC_ADAPT_SHIFT;
                bit = 1;
        }
        while (d->range < RC_TOP) {
                d->range <<= 8;
                d->code = d->code << 8 | next_byte(d);
        }
        return bit;
}

static uint32_t decode_tree(RcDecoder *d, RcProb *probs, unsigned bits) {
        uint32_t m = 1;

        for (unsigned i = 0; i < bits; i++)
                m = m << 1 | rc_decode_bit(d, &probs[m]);
        return m - (UINT32_C(1) << bits);
}

static uint32_t decode_direct(RcDecoder *d, unsigned bits) {
        uint32_t v = 0;

        for (unsigned i = 0; i < bits; i++) {
                RcProb half = RC_PROB_INIT;
                v = v << 1 | rc_decode_bit(d, &half);
        }
        return v;
}

uint32_t rc_decode_uint(RcDecoder *d, RcUintModel *m) {
        unsigned slot = decode_tree(d, m->slot, RC_UINT_SLOT_BITS);
        uint32_t low;

        if (slot == 0)
                return 0;
        if (slot <= RC_UINT_LOW_TREE_BITS)
                low = decode_tree(d, m->low[slot - 1], slot);
        else
                low = decode_direct(d, slot);
        return (UINT32_C(1) << slot) + low - 1;
}

uint64_t rc_decode_uint64(RcDecoder *d, RcUintModel *m) {
        uint32_t v = rc_decode_uint(d, m);
        uint64_t high;

        if (v < RC_UINT_MAX)
                return v;
        high = decode_direct(d, 32);
        return high << 32 | decode_direct(d, 32);
}

bool rc_decoder_finished(const RcDecoder *d) {
        return !d->error && d->p == d->end;
}
