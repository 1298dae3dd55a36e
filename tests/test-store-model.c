/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The range coder and the sample model of window chunks: round trips of bits and
 * integers across every slot, a stream that must be read to its exact end (truncated, extended or
 * foreign streams are errors), the model's round trip over many chunks of a chain, its answers to
 * ids out of range, and that it learns: a thread that keeps its CPU and stack costs bits, not bytes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "basic/alloc-util.h"
#include "store/range-coder.h"
#include "store/store-codec.h"
#include "store/store-model.h"
#include "tests.h"

static uint64_t rng_next(uint64_t *s) {
        /* xorshift64*: deterministic across runs */
        *s ^= *s >> 12;
        *s ^= *s << 25;
        *s ^= *s >> 27;
        return *s * UINT64_C(2685821657736338717);
}

static void test_bits_round_trip(void **state) {
        enum { N = 200000 };
        _cleanup_free_ uint8_t *bits = malloc(N);
        ByteBuf b = {};
        RcEncoder e;
        RcDecoder d;
        RcProb pe[4], pd[4];
        uint64_t rng = 7;

        assert_non_null(bits);
        /* four contexts: nearly always 0, nearly always 1, a coin, and runs */
        for (size_t i = 0; i < N; i++) {
                uint64_t x = rng_next(&rng) % 1000;
                switch (i % 4) {
                case 0: bits[i] = x < 3; break;
                case 1: bits[i] = x >= 3; break;
                case 2: bits[i] = x & 1; break;
                default: bits[i] = (i / 4000) & 1; break;
                }
        }
        rc_prob_init(pe, 4);
        rc_encoder_init(&e, &b);
        for (size_t i = 0; i < N; i++)
                rc_encode_bit(&e, &pe[i % 4], bits[i]);
        assert_int_equal(rc_encoder_finish(&e), 0);
        assert_int_equal(b.data[0], 0);
        /* a coin costs a bit; the three predictable contexts far less */
        assert_true(b.len < N / 4 / 8 + N / 4 / 8);
        assert_true(b.len > N / 4 / 8);

        rc_prob_init(pd, 4);
        rc_decoder_init(&d, b.data, b.len);
        for (size_t i = 0; i < N; i++)
                assert_int_equal(rc_decode_bit(&d, &pd[i % 4]), bits[i]);
        assert_true(rc_decoder_finished(&d));
        assert_memory_equal(pe, pd, sizeof pe);
        byte_buf_done(&b);
}

static void test_uint_every_slot(void **state) {
        _cleanup_free_ uint32_t *v = NULL;
        size_t n = 0;
        ByteBuf b = {};
        RcUintModel me, md;
        RcEncoder e;
        RcDecoder d;
        uint64_t rng = 99;

        v = new(uint32_t, 4096);
        assert_non_null(v);
        /* both ends of every slot, and random values below */
        for (unsigned k = 0; k < 32; k++) {
                uint64_t lo = (UINT64_C(1) << k) - 1, hi = (UINT64_C(1) << (k + 1)) - 2;
                v[n++] = (uint32_t) lo;
                v[n++] = (uint32_t) hi;
                v[n++] = (uint32_t) (lo + rng_next(&rng) % (hi - lo + 1));
        }
        v[n++] = RC_UINT_MAX;
        while (n < 4096)
                v[n++] = (uint32_t) (rng_next(&rng) % 40);

        rc_uint_model_init(&me);
        rc_encoder_init(&e, &b);
        for (size_t i = 0; i < n; i++)
                rc_encode_uint(&e, &me, v[i]);
        assert_int_equal(rc_encoder_finish(&e), 0);

        rc_uint_model_init(&md);
        rc_decoder_init(&d, b.data, b.len);
        for (size_t i = 0; i < n; i++)
                assert_int_equal(rc_decode_uint(&d, &md), v[i]);
        assert_true(rc_decoder_finished(&d));
        byte_buf_done(&b);

        /* beyond the largest: refused, and the error sticks */
        rc_uint_model_init(&me);
        rc_encoder_init(&e, &b);
        rc_encode_uint(&e, &me, UINT32_MAX);
        assert_int_equal(rc_encoder_finish(&e), -ERANGE);
        byte_buf_done(&b);
}

/* A stream of n random values, for the tests of its ends. */
static void encode_values(ByteBuf *b, size_t n, uint64_t seed) {
        RcUintModel m;
        RcEncoder e;
        uint64_t rng = seed;

        rc_uint_model_init(&m);
        rc_encoder_init(&e, b);
        for (size_t i = 0; i < n; i++)
                rc_encode_uint(&e, &m, (uint32_t) (rng_next(&rng) % 5000));
        assert_int_equal(rc_encoder_finish(&e), 0);
}

static bool decodes(const uint8_t *p, size_t len, size_t n, uint64_t seed) {
        RcUintModel m;
        RcDecoder d;
        uint64_t rng = seed;
        bool same = true;

        rc_uint_model_init(&m);
        rc_decoder_init(&d, p, len);
        for (size_t i = 0; i < n; i++)
                same &= rc_decode_uint(&d, &m) == (uint32_t) (rng_next(&rng) % 5000);
        return same && rc_decoder_finished(&d);
}

static void test_stream_ends(void **state) {
        ByteBuf b = {};

        encode_values(&b, 1000, 5);
        assert_true(decodes(b.data, b.len, 1000, 5));
        /* cut short: the decoder runs out and says so; never reads past the end (ASan watches) */
        for (size_t cut = 0; cut < b.len; cut += 1 + cut / 7) {
                uint8_t *copy = malloc(cut ?: 1);
                assert_non_null(copy);
                memcpy(copy, b.data, cut);
                assert_false(decodes(copy, cut, 1000, 5));
                free(copy);
        }
        /* a byte too many: not read to its end */
        assert_int_equal(byte_buf_put(&b, "\0", 1), 0);
        assert_false(decodes(b.data, b.len, 1000, 5));
        b.len--;
        /* another coder's stream: the first byte is not 0 */
        b.data[0] = 1;
        assert_false(decodes(b.data, b.len, 1000, 5));
        byte_buf_done(&b);

        /* an empty stream is five bytes, and reads as nothing */
        encode_values(&b, 0, 5);
        assert_int_equal(b.len, RC_STREAM_BYTES_MIN);
        assert_true(decodes(b.data, b.len, 0, 5));
        byte_buf_done(&b);
}

typedef struct ModelSample {
        uint64_t t_us;
        uint32_t cpu, thread, node;
} ModelSample;

/*
 * A chain of chunks of random samples whose tables grow from chunk to chunk: times on each CPU's
 * 97 Hz ticks with jitter, skipped ticks and now and then a leap (backwards too, and for exact
 * times more than 2^32 steps away); threads of a few comms (so stack contexts fill and their ranks
 * move), more threads than the recency list holds; stacks mostly popular and sometimes new.
 */
static size_t model_round_trip(uint64_t resolution_us) {
        enum { CHUNKS = 12, PER_CHUNK = 3000, THREADS_PER_CHUNK = 20, NODES_PER_CHUNK = 150, COMMS = 7, CPUS = 300 };
        _cleanup_(sample_model_freep) SampleModel *enc = sample_model_new(), *dec = sample_model_new();
        _cleanup_free_ uint32_t *thread_comm = new(uint32_t, CHUNKS * THREADS_PER_CHUNK);
        _cleanup_free_ ModelSample *s = new(ModelSample, PER_CHUNK);
        _cleanup_free_ uint64_t *tick = new0(uint64_t, CPUS);
        uint64_t rng = 1234, chunk_us = UINT64_C(5000000000);
        size_t total_bytes = 0;

        assert_non_null(enc);
        assert_non_null(dec);
        assert_non_null(thread_comm);
        assert_non_null(s);
        assert_non_null(tick);
        for (size_t i = 0; i < CHUNKS * THREADS_PER_CHUNK; i++)
                thread_comm[i] = (uint32_t) (rng_next(&rng) % COMMS);
        for (size_t i = 0; i < CPUS; i++)
                tick[i] = chunk_us + rng_next(&rng) % 10000;

        for (size_t c = 0; c < CHUNKS; c++) {
                uint32_t n_threads = (uint32_t) ((c + 1) * THREADS_PER_CHUNK), n_nodes = (uint32_t) (1 + (c + 1) * NODES_PER_CHUNK);
                ByteBuf b = {};
                RcEncoder e;
                RcDecoder d;

                for (size_t i = 0; i < PER_CHUNK; i++) {
                        uint64_t x = rng_next(&rng), t;
                        s[i].cpu = (uint32_t) (i % 4 == 3 ? x % CPUS : i % 3);
                        s[i].thread = x % 5 == 0 ? (uint32_t) (x >> 8) % n_threads : (uint32_t) ((x >> 8) % 6);
                        s[i].node = x % 11 == 0 ? (uint32_t) (x >> 20) % n_nodes : (uint32_t) ((x >> 20) % 9);
                        tick[s[i].cpu] += 10309 * (1 + (x >> 30) % 8 / 7); /* one tick in eight skipped */
                        t = tick[s[i].cpu] + (x >> 40) % 30;                /* jitter */
                        if ((x >> 50) % 97 == 0)
                                t = (x >> 52) % 2 ? t + UINT64_C(5000000000) : t - 3000000;
                        s[i].t_us = t - t % resolution_us;
                }
                sample_model_begin_chunk(enc, chunk_us, 10309, resolution_us);
                rc_encoder_init(&e, &b);
                for (size_t i = 0; i < PER_CHUNK; i++)
                        assert_int_equal(sample_model_encode(enc, &e, s[i].cpu, s[i].t_us, s[i].thread,
                                                             thread_comm[s[i].thread], s[i].node, n_threads, n_nodes),
                                         0);
                assert_int_equal(rc_encoder_finish(&e), 0);
                total_bytes += b.len;

                sample_model_begin_chunk(dec, chunk_us, 10309, resolution_us);
                rc_decoder_init(&d, b.data, b.len);
                for (size_t i = 0; i < PER_CHUNK; i++) {
                        uint32_t th, node;
                        uint64_t t_us;
                        assert_int_equal(sample_model_decode(dec, &d, s[i].cpu, thread_comm, n_threads, n_nodes, &t_us,
                                                             &th, &node),
                                         0);
                        assert_true(t_us == s[i].t_us);
                        assert_int_equal(th, s[i].thread);
                        assert_int_equal(node, s[i].node);
                }
                assert_true(rc_decoder_finished(&d));
                byte_buf_done(&b);
                chunk_us += 5000000;
        }
        return total_bytes;
}

static void test_model_round_trip(void **state) {
        /* Plain varints take at least three bytes a sample (time, thread, stack); the model takes
         * 1.4 (times to 1 ms) and 2.2 (times to 1 us, with their jitter) on these samples, though a
         * fifth of the threads and a tenth of the stacks are random. */
        assert_true(model_round_trip(1000) < 2 * 12 * 3000);
        assert_true(model_round_trip(1) < 3 * 12 * 3000);
}

static void test_model_reset(void **state) {
        _cleanup_(sample_model_freep) SampleModel *enc = sample_model_new(), *dec = sample_model_new();
        const uint32_t thread_comm[10] = {};

        /* a model that has coded samples and is reset codes like a new one, on both sides */
        for (int round = 0; round < 2; round++) {
                ByteBuf b = {};
                RcEncoder e;
                RcDecoder d;
                uint32_t th, node;
                uint64_t t_us;

                assert_int_equal(sample_model_reset(enc), 0);
                assert_int_equal(sample_model_reset(dec), 0);
                sample_model_begin_chunk(enc, 1000, 10309, 1);
                sample_model_begin_chunk(dec, 1000, 10309, 1);
                rc_encoder_init(&e, &b);
                assert_int_equal(sample_model_encode(enc, &e, 0, 1234, 3, thread_comm[3], 5, 10, 10), 0);
                assert_int_equal(rc_encoder_finish(&e), 0);
                rc_decoder_init(&d, b.data, b.len);
                assert_int_equal(sample_model_decode(dec, &d, 0, thread_comm, 10, 10, &t_us, &th, &node), 0);
                assert_int_equal(t_us, 1234);
                assert_int_equal(th, 3);
                assert_int_equal(node, 5);
                assert_true(rc_decoder_finished(&d));
                byte_buf_done(&b);
        }
}

static void test_model_learns(void **state) {
        _cleanup_(sample_model_freep) SampleModel *m = sample_model_new();
        const uint32_t thread_comm[2] = { 0, 1 };
        ByteBuf b = {};
        RcEncoder e;

        /* two busy threads, each on its CPU, each in one loop, ticking at 97 Hz kept to the
         * millisecond: a tick costs a few hundredths of a byte */
        sample_model_begin_chunk(m, 0, 10309, 1000);
        rc_encoder_init(&e, &b);
        for (size_t i = 0; i < 10000; i++) {
                uint64_t t = 777 * (i % 2) + 10309 * (i / 2);
                assert_int_equal(sample_model_encode(m, &e, i % 2, t - t % 1000, i % 2, thread_comm[i % 2], 40 + i % 2,
                                                     2, 100),
                                 0);
        }
        assert_int_equal(rc_encoder_finish(&e), 0);
        assert_true(b.len < 10000 / 20);
        byte_buf_done(&b);
}

/* Codes one sample with tables of 8 threads and 10 nodes, decodes it with smaller ones. */
static void assert_refused_by_smaller_tables(uint32_t thread, uint32_t node, uint32_t n_threads, uint32_t n_nodes) {
        _cleanup_(sample_model_freep) SampleModel *enc = sample_model_new(), *dec = sample_model_new();
        const uint32_t thread_comm[8] = {};
        ByteBuf b = {};
        RcEncoder e;
        RcDecoder d;
        uint32_t th, nd;
        uint64_t t_us;

        sample_model_begin_chunk(enc, 0, 0, 1);
        sample_model_begin_chunk(dec, 0, 0, 1);
        rc_encoder_init(&e, &b);
        assert_int_equal(sample_model_encode(enc, &e, 0, 0, thread, 0, node, 8, 10), 0);
        assert_int_equal(rc_encoder_finish(&e), 0);
        rc_decoder_init(&d, b.data, b.len);
        assert_int_equal(sample_model_decode(dec, &d, 0, thread_comm, n_threads, n_nodes, &t_us, &th, &nd), -EBADMSG);
        byte_buf_done(&b);
}

static void test_model_out_of_range(void **state) {
        _cleanup_(sample_model_freep) SampleModel *enc = sample_model_new();
        ByteBuf b = {};
        RcEncoder e;

        /* the writer refuses ids beyond its tables, and times off the resolution */
        sample_model_begin_chunk(enc, 0, 10309, 1000);
        rc_encoder_init(&e, &b);
        assert_int_equal(sample_model_encode(enc, &e, 0, 0, 8, 0, 1, 8, 10), -EINVAL);
        assert_int_equal(sample_model_encode(enc, &e, 0, 0, 1, 0, 10, 8, 10), -EINVAL);
        assert_int_equal(sample_model_encode(enc, &e, 0, 1500, 1, 0, 1, 8, 10), -EINVAL);
        byte_buf_done(&b);

        /* a reader with smaller tables than the writer had: the stream names what does not exist */
        assert_refused_by_smaller_tables(0, 9, 4, 10);  /* thread 0 is 7 back from the newest */
        assert_refused_by_smaller_tables(7, 0, 8, 5);   /* node 0 is 9 back */
}


/* Cgroups that follow their threads cost a fraction of a bit per sample; a thread that moves, a
 * new thread on a CPU and references out of range are coded or refused as the format says. */
static void test_model_cgroups(void **state) {
        enum { N = 20000, THREADS = 40, REFS = 6 };
        _cleanup_(sample_model_freep) SampleModel *me = sample_model_new(), *md = sample_model_new();
        _cleanup_free_ uint32_t *ref = malloc(N * sizeof(uint32_t)), *cpu = malloc(N * sizeof(uint32_t)),
                                *th = malloc(N * sizeof(uint32_t));
        uint32_t home[THREADS];
        ByteBuf b = {};
        RcEncoder e;
        RcDecoder d;
        uint64_t rng = 11;

        assert_non_null(me);
        assert_non_null(md);
        for (uint32_t t = 0; t < THREADS; t++)
                home[t] = t % REFS;
        for (size_t i = 0; i < N; i++) {
                uint64_t x = rng_next(&rng);
                th[i] = (uint32_t) (x % THREADS);
                cpu[i] = (uint32_t) ((x >> 8) % 4);
                if ((x >> 16) % 1000 == 0) /* a process moves */
                        home[th[i]] = (uint32_t) ((x >> 24) % REFS);
                ref[i] = home[th[i]];
        }
        rc_encoder_init(&e, &b);
        for (size_t i = 0; i < N; i++)
                assert_int_equal(sample_model_encode_cgroup(me, &e, cpu[i], th[i], ref[i], REFS), 0);
        assert_int_equal(sample_model_encode_cgroup(me, &e, 0, 0, REFS, REFS), -EINVAL);
        assert_int_equal(rc_encoder_finish(&e), 0);
        /* well under a tenth of a byte per sample */
        assert_true(b.len < N / 10);

        rc_decoder_init(&d, b.data, b.len);
        for (size_t i = 0; i < N; i++) {
                uint32_t g;
                assert_int_equal(sample_model_decode_cgroup(md, &d, cpu[i], th[i], REFS, &g), 0);
                assert_int_equal(g, ref[i]);
        }
        assert_true(rc_decoder_finished(&d));
        byte_buf_done(&b);

        /* a reference beyond the table: the stream names it, the decoder refuses it */
        assert_int_equal(sample_model_reset(me), 0);
        assert_int_equal(sample_model_reset(md), 0);
        rc_encoder_init(&e, &b);
        assert_int_equal(sample_model_encode_cgroup(me, &e, 0, 0, 5, 6), 0);
        assert_int_equal(rc_encoder_finish(&e), 0);
        rc_decoder_init(&d, b.data, b.len);
        {
                uint32_t g;
                assert_int_equal(sample_model_decode_cgroup(md, &d, 0, 0, 5, &g), -EBADMSG);
        }
        byte_buf_done(&b);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_bits_round_trip),
                cmocka_unit_test(test_uint_every_slot),
                cmocka_unit_test(test_stream_ends),
                cmocka_unit_test(test_model_round_trip),
                cmocka_unit_test(test_model_reset),
                cmocka_unit_test(test_model_learns),
                cmocka_unit_test(test_model_out_of_range),
                cmocka_unit_test(test_model_cgroups),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
