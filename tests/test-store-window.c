/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The window format on its own: CRC32C, round trips of random and realistic samples, a truncated
 * last chunk, flipped bits in a payload and in a chunk header (reported with their offset, the
 * rest still read), a damaged file header, and what the chunk header promises (time bounds).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic/alloc-util.h"
#include "store/compress.h"
#include "store/store-codec.h"
#include "store/store-window.h"
#include "store-test-util.h"
#include "tests.h"

typedef struct Written {
        char path[64];
        uint64_t chunk_offset[16];
        size_t n_chunks;
        Collected expected; /* in read order: chunk by chunk, time-sorted within a chunk */
} Written;

/* The writer's order: time, then CPU, then arrival. */
static int cmp_time(const void *a, const void *b) {
        const OwnedSample *x = a, *y = b;
        if (x->s.t_ns != y->s.t_ns)
                return x->s.t_ns < y->s.t_ns ? -1 : 1;
        return x->s.cpu < y->s.cpu ? -1 : x->s.cpu > y->s.cpu;
}

/* When set, samples are drawn from TEMPLATES fixed stacks, each with its slot, as the sampler's
 * stack cache hands them: the writer remembers each stack's id in the slot. */
#define TEMPLATES 16
static SampleStackSlot *slots;
/* When set instead, the templates give only the frames after the leaf, with callers_slots[j]; the
 * leaf is each sample's own, as when a hot function is sampled at another instruction each time. */
static SampleStackSlot *callers_slots;

/*
 * Writes a window of n_chunks chunks of per_chunk samples; shuffled puts each chunk's samples out
 * of order; chain > 1 makes chains of that many chunks share tables (1: all self-contained).
 */
static void write_window_chained(Written *w, size_t n_chunks, size_t per_chunk, bool shuffled, uint64_t seed,
                                 unsigned chain) {
        WindowHeaderInfo info = test_header_info();
        _cleanup_(chunk_writer_freep) ChunkWriter *cw = chunk_writer_new(3);
        ByteBuf b = {};
        uint64_t rng = seed, t = UINT64_C(5000000000000);
        OwnedSample templates[TEMPLATES];
        int fd;

        for (size_t j = 0; (slots || callers_slots) && j < TEMPLATES; j++)
                test_make_sample(&rng, 0, &templates[j]);
        chunk_writer_set_chain(cw, chain);
        memset(w, 0, sizeof *w);
        strcpy(w->path, "/tmp/test-store-window.XXXXXX");
        fd = mkstemp(w->path);
        assert_true(fd >= 0);
        assert_int_equal(window_header_encode(&info, UINT64_C(1795000000000000), 120 * 1000000, &b), 0);
        assert_int_equal(write(fd, b.data, b.len), (ssize_t) b.len);
        for (size_t c = 0; c < n_chunks; c++) {
                size_t first = w->expected.n;
                for (size_t i = 0; i < per_chunk; i++) {
                        OwnedSample o;
                        uint64_t when = shuffled ? t + test_rand(&rng) % 5000000000ULL : t + i * 10309278;
                        test_make_sample(&rng, when, &o);
                        if (slots) {
                                size_t j = test_rand(&rng) % TEMPLATES;
                                memcpy(o.frames, templates[j].frames, sizeof o.frames);
                                o.s.n_frames = templates[j].s.n_frames;
                                o.s.stack_slot = &slots[j];
                        } else if (callers_slots) {
                                size_t j = test_rand(&rng) % TEMPLATES;
                                Frame leaf = o.frames[0];
                                memcpy(o.frames, templates[j].frames, sizeof o.frames);
                                o.frames[0] = leaf; /* all zero when the sample's own stack was empty: a leaf still */
                                o.frames[0].symbol = o.frames[0].symbol ?: "leaf";
                                o.frames[0].dso = o.frames[0].dso ?: "[unknown]";
                                o.s.n_frames = MAX(templates[j].s.n_frames, 1U);
                                o.s.callers_slot = &callers_slots[j];
                        }
                        assert_int_equal(chunk_writer_add_sample(cw, &o.s), 0);
                        collect_handler(&o.s, &w->expected);
                }
                assert_int_equal(chunk_writer_add_lost(cw, (uint32_t) c % 8, 3), 0);
                /* qsort is not stable, but the writer breaks ties of time and CPU by arrival; those are
                 * rare enough with 5e9 ns of spread that the sorted copy matches. */
                qsort(w->expected.v + first, w->expected.n - first, sizeof(OwnedSample), cmp_time);
                for (size_t i = first; i < w->expected.n; i++)
                        w->expected.v[i].s.frames = w->expected.v[i].frames;
                assert_int_equal(chunk_writer_encode(cw, &b), 0);
                w->chunk_offset[w->n_chunks++] = (uint64_t) lseek(fd, 0, SEEK_CUR);
                assert_int_equal(write(fd, b.data, b.len), (ssize_t) b.len);
                assert_int_equal(chunk_writer_commit(cw), 0);
                t += 5000000000ULL;
        }
        close(fd);
        byte_buf_done(&b);
}

static void write_window(Written *w, size_t n_chunks, size_t per_chunk, bool shuffled, uint64_t seed) {
        write_window_chained(w, n_chunks, per_chunk, shuffled, seed, 1);
}

static void written_done(Written *w) {
        unlink(w->path);
        collected_done(&w->expected);
}

static void assert_read_equals(const Collected *got, const Collected *want, size_t from, size_t n) {
        assert_true(got->n >= n);
        for (size_t i = 0; i < n; i++)
                assert_true(sample_equal(&got->v[i].s, &want->v[from + i].s));
}

static void test_crc32c_known_vector(void **state) {
        assert_int_equal(crc32c(0, "123456789", 9), 0xE3069283);
        assert_int_equal(crc32c(0, "", 0), 0);
        /* incremental equals one-shot */
        assert_int_equal(crc32c(crc32c(0, "12345", 5), "6789", 4), 0xE3069283);
}

static void test_varint_zigzag(void **state) {
        static const uint64_t values[] = { 0, 1, 127, 128, 300, UINT32_MAX, UINT64_MAX };
        ByteBuf b = {};
        ByteCursor c;

        for (size_t i = 0; i < ELEMENTSOF(values); i++)
                assert_int_equal(byte_buf_put_varint(&b, values[i]), 0);
        c = (ByteCursor) { .p = b.data, .end = b.data + b.len };
        for (size_t i = 0; i < ELEMENTSOF(values); i++)
                assert_true(cursor_varint(&c) == values[i]);
        assert_false(c.error);
        cursor_varint(&c);
        assert_true(c.error);
        for (int64_t v = -300; v <= 300; v++)
                assert_true(zigzag_decode(zigzag_encode(v)) == v);
        assert_true(zigzag_decode(zigzag_encode(INT64_MIN)) == INT64_MIN);
        byte_buf_done(&b);

        /* ten bytes whose last holds more than bit 63: beyond 64 bits, an error, not a wrapped value */
        {
                static const uint8_t over[10] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02 };
                ByteCursor o = { .p = over, .end = over + sizeof over };
                cursor_varint(&o);
                assert_true(o.error);
        }
}

static void test_header_round_trip(void **state) {
        WindowHeaderInfo info = test_header_info();
        WindowHeader h;
        ByteBuf b = {};

        assert_int_equal(window_header_encode(&info, 42, 120000000, &b), 0);
        assert_int_equal(window_header_decode(b.data, b.len, &h), 0);
        assert_string_equal(h.info.host, "testhost");
        assert_string_equal(h.info.boot_id, info.boot_id);
        assert_string_equal(h.info.kernel_release, "6.1.0-test");
        assert_string_equal(h.info.event, "cpu-clock");
        assert_int_equal(h.info.freq_hz, 97);
        assert_int_equal(h.info.n_cpus, 8);
        assert_true(h.info.clock.perf_minus_mono_ns == -12345);
        assert_true(h.info.clock.realtime_minus_mono_ns == info.clock.realtime_minus_mono_ns);
        assert_int_equal(h.start_realtime_usec, 42);
        assert_int_equal(h.span_usec, 120000000);
        assert_int_equal(h.header_bytes, b.len);
        window_header_done(&h);

        b.data[20] ^= 0x10;
        assert_int_equal(window_header_decode(b.data, b.len, &h), -EBADMSG);
        byte_buf_done(&b);
}

/* The detail a window keeps is in its header: the time resolution and the function-frames flag. */
static void test_header_detail(void **state) {
        WindowHeaderInfo info = test_header_info();
        WindowHeader h;
        ByteBuf b = {};

        /* Exact detail, as every test writer uses: microseconds, instruction frames. */
        assert_int_equal(window_header_encode(&info, 42, 120000000, &b), 0);
        assert_int_equal(window_header_decode(b.data, b.len, &h), 0);
        assert_int_equal(h.info.time_resolution_usec, 1);
        assert_false(h.info.function_frames);
        window_header_done(&h);

        info.time_resolution_usec = 1000;
        info.function_frames = true;
        assert_int_equal(window_header_encode(&info, 42, 120000000, &b), 0);
        assert_int_equal(get_le16(b.data + 10), WINDOW_FLAG_FUNCTION_FRAMES);
        assert_int_equal(get_le32(b.data + 44), 1000);
        assert_int_equal(window_header_decode(b.data, b.len, &h), 0);
        assert_int_equal(h.info.time_resolution_usec, 1000);
        assert_true(h.info.function_frames);
        window_header_done(&h);

        /* A flag this reader does not know: a newer writer's file, not read as ours. */
        put_le16(b.data + 10, 0x3);
        put_le32(b.data + b.len - 4, crc32c(0, b.data, b.len - 4));
        assert_int_equal(window_header_decode(b.data, b.len, &h), -EPROTONOSUPPORT);
        /* A resolution coarser than a second is no window of ours. */
        put_le16(b.data + 10, 0x1);
        put_le32(b.data + 44, 1000001);
        put_le32(b.data + b.len - 4, crc32c(0, b.data, b.len - 4));
        assert_int_equal(window_header_decode(b.data, b.len, &h), -EBADMSG);
        byte_buf_done(&b);
}

/* A writer told a coarser resolution rounds every sample time down to a multiple of it; order and
 * the chunk's bounds follow the rounded times, and samples of one instant go by CPU. */
static void test_time_resolution(void **state) {
        WindowHeaderInfo info = test_header_info();
        _cleanup_(chunk_writer_freep) ChunkWriter *cw = chunk_writer_new(1);
        uint64_t t[] = { UINT64_C(5000000000999), UINT64_C(5000010309278), UINT64_C(5000010999999),
                         UINT64_C(5000020618556) };
        Collected got = {};
        char path[] = "/tmp/test-store-window.XXXXXX";
        ByteBuf b = {};
        int fd = mkstemp(path);

        assert_true(fd >= 0);
        info.time_resolution_usec = 1000;
        chunk_writer_set_frequency(cw, 97);
        chunk_writer_set_time_resolution(cw, info.time_resolution_usec);
        assert_int_equal(window_header_encode(&info, 0, 1000000, &b), 0);
        assert_int_equal(write(fd, b.data, b.len), (ssize_t) b.len);
        for (size_t i = 0; i < ELEMENTSOF(t); i++) {
                Sample s = { .t_ns = t[i], .cpu = (uint32_t) (i % 2), .pid = 7, .tid = 7, .comm = "x" };
                assert_int_equal(chunk_writer_add_sample(cw, &s), 0);
        }
        assert_int_equal(chunk_writer_encode(cw, &b), 0);
        assert_int_equal(get_le64(b.data + 8), UINT64_C(5000000000000)); /* first_ns */
        assert_int_equal(get_le64(b.data + 16), UINT64_C(5000020000000)); /* last_ns */
        assert_int_equal(write(fd, b.data, b.len), (ssize_t) b.len);
        close(fd);

        assert_int_equal(window_read(path, collect_handler, &got, NULL), 0);
        /* t[1] (CPU 1) and t[2] (CPU 0) both fall on ...010 ms: CPU 0 comes first. */
        assert_int_equal(got.n, ELEMENTSOF(t));
        for (size_t i = 0; i < got.n; i++) {
                size_t j = i == 1 ? 2 : i == 2 ? 1 : i;
                assert_int_equal(got.v[i].s.t_ns, t[j] - t[j] % 1000000);
                assert_int_equal(got.v[i].s.cpu, j % 2);
        }
        collected_done(&got);
        byte_buf_done(&b);
        unlink(path);
}

static void test_round_trip_ordered(void **state) {
        Written w;
        Collected got = {};
        WindowReadStats st;

        write_window(&w, 4, 500, false, 1);
        assert_int_equal(window_read(w.path, collect_handler, &got, &st), 0);
        assert_int_equal(got.n, w.expected.n);
        assert_read_equals(&got, &w.expected, 0, w.expected.n);
        assert_int_equal(st.chunks, 4);
        assert_int_equal(st.corrupt_chunks, 0);
        assert_false(st.truncated);
        assert_int_equal(st.samples, 2000);
        assert_int_equal(st.lost, 12);
        collected_done(&got);
        written_done(&w);
}

static void test_round_trip_shuffled(void **state) {
        Written w;
        Collected got = {};

        write_window(&w, 3, 2000, true, 7);
        assert_int_equal(window_read(w.path, collect_handler, &got, NULL), 0);
        assert_read_equals(&got, &w.expected, 0, w.expected.n);
        collected_done(&got);
        written_done(&w);
}

static void test_empty_stack_and_edge_values(void **state) {
        WindowHeaderInfo info = test_header_info();
        _cleanup_(chunk_writer_freep) ChunkWriter *cw = chunk_writer_new(1);
        Frame deep[PROFILE_STACK_DEPTH_MAX + 5];
        Sample s[] = {
                { .t_ns = 1999, .cpu = 0, .pid = 0, .tid = 0, .comm = "swapper/0" },
                { .t_ns = UINT64_MAX / 2, .cpu = 4095, .pid = UINT32_MAX, .tid = 0, .comm = "z",
                  .period = UINT64_MAX, .n_frames = ELEMENTSOF(deep), .frames = deep },
        };
        Collected got = {};
        char path[] = "/tmp/test-store-window.XXXXXX";
        ByteBuf b = {};
        int fd = mkstemp(path);

        for (size_t i = 0; i < ELEMENTSOF(deep); i++)
                deep[i] = (Frame) { .symbol = "f", .dso = "[kernel.kallsyms]", .addr = UINT64_MAX - i, .kernel = true };
        assert_int_equal(window_header_encode(&info, 0, 1000000, &b), 0);
        assert_int_equal(write(fd, b.data, b.len), (ssize_t) b.len);
        for (size_t i = 0; i < ELEMENTSOF(s); i++)
                assert_int_equal(chunk_writer_add_sample(cw, &s[i]), 0);
        assert_int_equal(chunk_writer_encode(cw, &b), 0);
        assert_int_equal(write(fd, b.data, b.len), (ssize_t) b.len);
        close(fd);

        assert_int_equal(window_read(path, collect_handler, &got, NULL), 0);
        assert_int_equal(got.n, 2);
        /* times keep whole microseconds */
        assert_int_equal(got.v[0].s.t_ns, 1000);
        assert_int_equal(got.v[1].s.t_ns, UINT64_MAX / 2 - (UINT64_MAX / 2) % 1000);
        s[0].t_ns = 1000;
        s[1].t_ns = got.v[1].s.t_ns;
        assert_true(sample_equal(&got.v[0].s, &s[0]));
        /* stacks deeper than the limit keep their leaf-side frames */
        s[1].n_frames = PROFILE_STACK_DEPTH_MAX;
        assert_true(sample_equal(&got.v[1].s, &s[1]));
        collected_done(&got);
        byte_buf_done(&b);
        unlink(path);
}

/* Stacks are a tree of call paths: stacks that share callers share their nodes, listed once. */
static void test_stack_tree_shares_callers(void **state) {
        _cleanup_(chunk_writer_freep) ChunkWriter *cw = chunk_writer_new(1);
        Frame f[] = {
                { .symbol = "leaf_a", .dso = "/usr/bin/x", .addr = 0x1010, .offset = 0x10 },
                { .symbol = "leaf_b", .dso = "/usr/bin/x", .addr = 0x2020, .offset = 0x20 },
                { .symbol = "middle", .dso = "/usr/bin/x", .addr = 0x3030, .offset = 0x30 },
                { .symbol = "main", .dso = "/usr/bin/x", .addr = 0x4040, .offset = 0x40 },
        };
        Frame a[] = { f[0], f[2], f[3] }, b[] = { f[1], f[2], f[3] }, m[] = { f[2], f[3] };
        Sample s[] = {
                { .t_ns = 1000, .comm = "x", .n_frames = 3, .frames = a },
                { .t_ns = 2000, .comm = "x", .n_frames = 3, .frames = b },
                { .t_ns = 3000, .comm = "x", .n_frames = 2, .frames = m },
                { .t_ns = 4000, .comm = "x", .n_frames = 0 },
        };
        ByteBuf enc = {}, raw = {};
        ByteCursor c;
        Collected got = {};
        char path[] = "/tmp/test-store-window.XXXXXX";
        WindowHeaderInfo info = test_header_info();
        int fd = mkstemp(path);

        for (size_t i = 0; i < ELEMENTSOF(s); i++)
                assert_int_equal(chunk_writer_add_sample(cw, &s[i]), 0);
        assert_int_equal(chunk_writer_encode(cw, &enc), 0);

        /* main, middle, leaf_a, leaf_b: four nodes for nine frames */
        assert_int_equal(decompress_exact(enc.data + CHUNK_HEADER_BYTES, enc.len - CHUNK_HEADER_BYTES,
                                          get_le32(enc.data + 28), &raw), 0);
        c = (ByteCursor) { .p = raw.data, .end = raw.data + raw.len };
        for (int i = 0; i < 6; i++) /* clock mapping, interval */
                (void) cursor_varint(&c);
        assert_int_equal(cursor_varint(&c), 0);
        for (uint64_t i = 0, n = cursor_varint(&c); i < n; i++)
                (void) cursor_bytes(&c, cursor_varint(&c));
        assert_int_equal(cursor_varint(&c), 0);
        assert_int_equal(cursor_varint(&c), 4); /* frames */
        for (int i = 0; i < 4 * 5; i++)
                (void) cursor_varint(&c);
        assert_int_equal(cursor_varint(&c), 0);
        assert_int_equal(cursor_varint(&c), 4); /* nodes */
        assert_int_equal(cursor_varint(&c), 1); /* main's parent is the root */
        assert_int_equal(cursor_varint(&c), 1); /* middle's is main */
        assert_int_equal(cursor_varint(&c), 1); /* leaf_a's is middle */
        assert_int_equal(cursor_varint(&c), 2); /* leaf_b's is middle too */
        assert_false(c.error);

        assert_int_equal(window_header_encode(&info, 0, 1000000, &raw), 0);
        assert_int_equal(write(fd, raw.data, raw.len), (ssize_t) raw.len);
        assert_int_equal(write(fd, enc.data, enc.len), (ssize_t) enc.len);
        close(fd);
        assert_int_equal(window_read(path, collect_handler, &got, NULL), 0);
        assert_int_equal(got.n, ELEMENTSOF(s));
        for (size_t i = 0; i < ELEMENTSOF(s); i++)
                assert_true(sample_equal(&got.v[i].s, &s[i]));
        collected_done(&got);
        byte_buf_done(&enc);
        byte_buf_done(&raw);
        unlink(path);
}

static void test_truncated_last_chunk(void **state) {
        static const uint64_t cuts[] = { 1, CHUNK_HEADER_BYTES - 1, CHUNK_HEADER_BYTES, CHUNK_HEADER_BYTES + 10 };
        Written w;

        write_window(&w, 3, 300, false, 3);
        for (size_t i = 0; i < ELEMENTSOF(cuts); i++) {
                Collected got = {};
                WindowReadStats st;

                assert_int_equal(truncate(w.path, (off_t) (w.chunk_offset[2] + cuts[i])), 0);
                assert_int_equal(window_read(w.path, collect_handler, &got, &st), 0);
                assert_int_equal(got.n, 600);
                assert_read_equals(&got, &w.expected, 0, 600);
                assert_true(st.truncated);
                assert_int_equal(st.truncated_offset, w.chunk_offset[2]);
                assert_int_equal(st.good_end_offset, w.chunk_offset[2]);
                assert_int_equal(st.corrupt_chunks, 0);
                collected_done(&got);
        }
        written_done(&w);
}

static void flip_byte(const char *path, uint64_t offset) {
        int fd = open(path, O_RDWR);
        uint8_t c;

        assert_true(fd >= 0);
        assert_int_equal(pread(fd, &c, 1, (off_t) offset), 1);
        c ^= 0x41;
        assert_int_equal(pwrite(fd, &c, 1, (off_t) offset), 1);
        close(fd);
}

static void test_flipped_payload_bit(void **state) {
        Written w;
        Collected got = {};
        WindowReadStats st;
        _cleanup_(window_file_freep) WindowFile *wf = NULL;

        write_window(&w, 4, 300, false, 4);
        flip_byte(w.path, w.chunk_offset[1] + CHUNK_HEADER_BYTES + 100);
        assert_int_equal(window_read(w.path, collect_handler, &got, &st), 0);
        assert_int_equal(st.corrupt_chunks, 1);
        assert_int_equal(st.first_corrupt_offset, w.chunk_offset[1]);
        assert_int_equal(st.samples, 900);
        assert_int_equal(got.n, 900);
        assert_read_equals(&got, &w.expected, 0, 300);
        for (size_t i = 300; i < 900; i++)
                assert_true(sample_equal(&got.v[i].s, &w.expected.v[i + 300].s));
        collected_done(&got);

        /* verify mode finds it without decoding; recovery would keep the chunks after it */
        assert_int_equal(window_file_open(w.path, true, &wf), 0);
        assert_int_equal(wf->stats.corrupt_chunks, 1);
        assert_true(wf->chunks[1].corrupt);
        assert_int_equal(wf->stats.good_end_offset, wf->size);
        written_done(&w);
}

static void test_flipped_chunk_header_bit(void **state) {
        Written w;
        Collected got = {};
        WindowReadStats st;

        write_window(&w, 4, 300, false, 5);
        flip_byte(w.path, w.chunk_offset[2] + 9); /* inside first_ns */
        assert_int_equal(window_read(w.path, collect_handler, &got, &st), 0);
        assert_int_equal(st.corrupt_chunks, 1);
        assert_int_equal(st.first_corrupt_offset, w.chunk_offset[2]);
        assert_false(st.truncated);
        assert_int_equal(got.n, 900);
        assert_read_equals(&got, &w.expected, 0, 600);
        for (size_t i = 600; i < 900; i++)
                assert_true(sample_equal(&got.v[i].s, &w.expected.v[i + 300].s));
        collected_done(&got);
        written_done(&w);
}

static void test_damaged_file_header(void **state) {
        Written w;
        WindowReadStats st;
        Collected got = {};

        write_window(&w, 1, 10, false, 6);
        flip_byte(w.path, 30);
        assert_int_equal(window_read(w.path, collect_handler, &got, &st), -EBADMSG);
        assert_int_equal(truncate(w.path, 5), 0);
        assert_int_equal(window_read(w.path, collect_handler, &got, &st), -EBADMSG);
        assert_int_equal(got.n, 0);
        written_done(&w);
}

static void test_chunk_time_bounds(void **state) {
        _cleanup_(window_file_freep) WindowFile *wf = NULL;
        Written w;

        write_window(&w, 3, 100, true, 8);
        assert_int_equal(window_file_open(w.path, false, &wf), 0);
        assert_int_equal(wf->n_chunks, 3);
        for (size_t c = 0; c < 3; c++) {
                uint64_t lo = UINT64_MAX, hi = 0;
                for (size_t i = c * 100; i < (c + 1) * 100; i++) {
                        lo = MIN(lo, w.expected.v[i].s.t_ns);
                        hi = MAX(hi, w.expected.v[i].s.t_ns);
                }
                assert_true(wf->chunks[c].first_ns == lo);
                assert_true(wf->chunks[c].last_ns == hi);
                assert_int_equal(wf->chunks[c].n_samples, 100);
        }
        written_done(&w);
}

static void test_round_trip_chained(void **state) {
        _cleanup_(window_file_freep) WindowFile *wf = NULL;
        Written w;
        Collected got = {};
        WindowReadStats st;

        write_window_chained(&w, 7, 400, true, 12, 3);
        assert_int_equal(window_read(w.path, collect_handler, &got, &st), 0);
        assert_int_equal(got.n, w.expected.n);
        assert_read_equals(&got, &w.expected, 0, w.expected.n);
        assert_int_equal(st.corrupt_chunks, 0);
        collected_done(&got);

        assert_int_equal(window_file_open(w.path, false, &wf), 0);
        assert_int_equal(wf->n_chunks, 7);
        for (size_t i = 0; i < 7; i++)
                assert_int_equal(wf->chunks[i].chain_pos, i % 3);
        /* out of order: each chunk still decodes, rebuilding its chain's tables */
        for (size_t k = 0; k < 7; k++) {
                size_t i = (k * 5) % 7;
                _cleanup_(decoded_chunk_freep) DecodedChunk *d = NULL;
                assert_int_equal(window_file_decode_chunk(wf, i, &d), 0);
                assert_int_equal(decoded_chunk_n_samples(d), 400);
                for (size_t j = 0; j < 400; j++) {
                        Sample s;
                        decoded_chunk_sample(d, j, &s);
                        assert_true(sample_equal(&s, &w.expected.v[i * 400 + j].s));
                }
        }
        written_done(&w);
}

/* Three windows (chains of 1, 2 and 3 chunks) written with *mode pointing at one slot per
 * template, read back whole; every slot was filled. */
static void round_trip_slots(SampleStackSlot **mode, uint64_t seed) {
        SampleStackSlot s[TEMPLATES] = {};
        Collected got = {};
        WindowReadStats st;
        Written w;

        *mode = s;
        for (unsigned chain = 1; chain <= 3; chain++) {
                write_window_chained(&w, 5, 300, true, seed + chain, chain);
                assert_int_equal(window_read(w.path, collect_handler, &got, &st), 0);
                assert_int_equal(got.n, w.expected.n);
                assert_read_equals(&got, &w.expected, 0, w.expected.n);
                collected_done(&got);
                written_done(&w);
                for (size_t j = 0; j < TEMPLATES; j++)
                        assert_true(s[j].tag != 0);
        }
        *mode = NULL;
}

/* Stack slots: reused while the tables live, never across a reset (every chain here, and a
 * chunk_writer_reset() of a second writer sharing the slots in between). */
static void test_round_trip_stack_slots(void **state) {
        round_trip_slots(&slots, 20);
}

/* Callers slots: each sample's own leaf under a remembered path of callers reads back as written. */
static void test_round_trip_callers_slots(void **state) {
        round_trip_slots(&callers_slots, 40);
}

static void test_chained_corruption_loses_rest_of_chain_only(void **state) {
        Written w;
        Collected got = {};
        WindowReadStats st;

        /* chains: chunks 0-2 and 3-5 */
        write_window_chained(&w, 6, 200, false, 13, 3);
        flip_byte(w.path, w.chunk_offset[1] + CHUNK_HEADER_BYTES + 50);
        assert_int_equal(window_read(w.path, collect_handler, &got, &st), 0);
        assert_int_equal(st.corrupt_chunks, 2); /* the damaged one and the one that needs it */
        assert_int_equal(st.first_corrupt_offset, w.chunk_offset[1]);
        assert_int_equal(got.n, 4 * 200);
        assert_read_equals(&got, &w.expected, 0, 200);
        for (size_t i = 200; i < 800; i++)
                assert_true(sample_equal(&got.v[i].s, &w.expected.v[i + 400].s));
        collected_done(&got);
        written_done(&w);
}

static void test_chained_truncation(void **state) {
        Written w;
        Collected got = {};
        WindowReadStats st;

        write_window_chained(&w, 5, 100, false, 14, 6);
        assert_int_equal(truncate(w.path, (off_t) (w.chunk_offset[4] + 20)), 0);
        assert_int_equal(window_read(w.path, collect_handler, &got, &st), 0);
        assert_true(st.truncated);
        assert_int_equal(st.corrupt_chunks, 0);
        assert_int_equal(got.n, 400);
        assert_read_equals(&got, &w.expected, 0, 400);
        collected_done(&got);
        written_done(&w);
}

/* The whole file, for edits that move bytes. */
static uint8_t *slurp(const char *path, size_t *ret_n) {
        struct stat st;
        uint8_t *p;
        int fd = open(path, O_RDONLY | O_CLOEXEC);

        assert_true(fd >= 0);
        assert_int_equal(fstat(fd, &st), 0);
        p = malloc((size_t) st.st_size);
        assert_non_null(p);
        assert_int_equal(read(fd, p, (size_t) st.st_size), st.st_size);
        close(fd);
        *ret_n = (size_t) st.st_size;
        return p;
}

static void spill(const char *path, const uint8_t *p, size_t n) {
        int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);

        assert_true(fd >= 0);
        assert_int_equal(write(fd, p, n), (ssize_t) n);
        close(fd);
}

/* A chunk continues the chain of the chunk right before it: not across bytes in between, and not
 * with a chain position that does not follow, even when read in order (from the cached tables). */
static void test_chain_needs_adjacent_chunks(void **state) {
        Written w;
        Collected got = {};
        WindowReadStats st;
        _cleanup_free_ uint8_t *p = NULL, *q = NULL;
        size_t n, cut;

        write_window_chained(&w, 3, 200, false, 15, 3);
        p = slurp(w.path, &n);
        /* 64 bytes of junk between chunks 0 and 1 */
        cut = (size_t) w.chunk_offset[1];
        q = malloc(n + 64);
        assert_non_null(q);
        memcpy(q, p, cut);
        memset(q + cut, 0x5a, 64);
        memcpy(q + cut + 64, p + cut, n - cut);
        spill(w.path, q, n + 64);
        assert_int_equal(window_read(w.path, collect_handler, &got, &st), 0);
        assert_int_equal(got.n, 200);
        assert_read_equals(&got, &w.expected, 0, 200);
        assert_true(st.corrupt_chunks >= 3); /* the junk, and the two chunks cut off from their chain */
        collected_done(&got);

        /* chunk 2 claims position 1: it does not follow chunk 1 (position 1) */
        p[w.chunk_offset[2] + 6] = 1;
        put_le32(p + w.chunk_offset[2] + 44, crc32c(0, p + w.chunk_offset[2], 44));
        spill(w.path, p, n);
        assert_int_equal(window_read(w.path, collect_handler, &got, &st), 0);
        assert_int_equal(got.n, 400);
        assert_read_equals(&got, &w.expected, 0, 400);
        assert_int_equal(st.corrupt_chunks, 1);
        assert_int_equal(st.first_corrupt_offset, w.chunk_offset[2]);
        collected_done(&got);
        written_done(&w);
}

/* What a chunk header says of its payload must hold: its time bounds are those of its samples. */
static void test_chunk_header_must_match_samples(void **state) {
        Written w;
        Collected got = {};
        WindowReadStats st;
        _cleanup_free_ uint8_t *p = NULL;
        size_t n;

        write_window(&w, 2, 100, false, 16);
        p = slurp(w.path, &n);
        put_le64(p + w.chunk_offset[1] + 8, get_le64(p + w.chunk_offset[1] + 8) - 1000);
        put_le32(p + w.chunk_offset[1] + 44, crc32c(0, p + w.chunk_offset[1], 44));
        spill(w.path, p, n);
        assert_int_equal(window_read(w.path, collect_handler, &got, &st), 0);
        assert_int_equal(got.n, 100);
        assert_int_equal(st.corrupt_chunks, 1);
        assert_int_equal(st.first_corrupt_offset, w.chunk_offset[1]);
        collected_done(&got);
        written_done(&w);
}

/* Each chunk's clock mapping is coded against the chain's previous one: changes, steps back and
 * extremes all come back, read in order or chunk by chunk from the middle of the chain. */
static void test_clock_mapping_per_chunk(void **state) {
        static const ClockMap maps[] = {
                { .method = CLOCK_MAP_PERF_BRACKET, .perf_minus_mono_ns = 777, .realtime_minus_mono_ns = INT64_C(1790000000000000000),
                  .error_ns = 5000, .measured_mono_ns = 123456789 },
                { .method = CLOCK_MAP_PERF_BRACKET, .perf_minus_mono_ns = 777, .realtime_minus_mono_ns = INT64_C(1790000000000000000),
                  .error_ns = 5000, .measured_mono_ns = 123456789 },
                { .method = CLOCK_MAP_PERF_BRACKET, .perf_minus_mono_ns = -12, .realtime_minus_mono_ns = INT64_C(1790000000000000100),
                  .error_ns = 400, .measured_mono_ns = 999999999999 },
                { .method = CLOCK_MAP_RECORDED, .perf_minus_mono_ns = INT64_MIN, .realtime_minus_mono_ns = INT64_MAX,
                  .error_ns = UINT64_MAX, .measured_mono_ns = 0 },
        };
        WindowHeaderInfo info = test_header_info();
        _cleanup_(chunk_writer_freep) ChunkWriter *cw = chunk_writer_new(1);
        _cleanup_(window_file_freep) WindowFile *wf = NULL;
        char path[] = "/tmp/test-store-window.XXXXXX";
        ByteBuf b = {};
        uint64_t rng = 5;
        int fd = mkstemp(path);

        assert_true(fd >= 0);
        chunk_writer_set_chain(cw, 3); /* chunks 0-2 and 3 */
        assert_int_equal(window_header_encode(&info, 0, 1000000, &b), 0);
        assert_int_equal(write(fd, b.data, b.len), (ssize_t) b.len);
        for (size_t c = 0; c < ELEMENTSOF(maps); c++) {
                OwnedSample o;
                test_make_sample(&rng, UINT64_C(7000000000000) + c * 5000000000ULL, &o);
                chunk_writer_set_clock(cw, &maps[c]);
                assert_int_equal(chunk_writer_add_sample(cw, &o.s), 0);
                assert_int_equal(chunk_writer_encode(cw, &b), 0);
                assert_int_equal(write(fd, b.data, b.len), (ssize_t) b.len);
                assert_int_equal(chunk_writer_commit(cw), 0);
        }
        close(fd);

        assert_int_equal(window_file_open(path, false, &wf), 0);
        assert_int_equal(wf->n_chunks, ELEMENTSOF(maps));
        for (size_t k = 0; k < 2 * ELEMENTSOF(maps); k++) {
                size_t i = k < ELEMENTSOF(maps) ? k : (2 * ELEMENTSOF(maps) - 1 - k); /* in order, then backwards */
                _cleanup_(decoded_chunk_freep) DecodedChunk *d = NULL;
                assert_int_equal(window_file_decode_chunk(wf, i, &d), 0);
                assert_memory_equal(decoded_chunk_clock(d), &maps[i], sizeof(ClockMap));
        }
        byte_buf_done(&b);
        unlink(path);
}

/*
 * A chunk encoded but never committed has moved the writer's sample model past what the
 * file holds; encoding it again (a caller's retry) must start a chain, and the file stays readable.
 */
static void test_encode_again_restarts_chain(void **state) {
        WindowHeaderInfo info = test_header_info();
        _cleanup_(chunk_writer_freep) ChunkWriter *cw = chunk_writer_new(1);
        _cleanup_(window_file_freep) WindowFile *wf = NULL;
        Collected want = {}, got = {};
        char path[] = "/tmp/test-store-window.XXXXXX";
        ByteBuf b = {};
        uint64_t rng = 77, t = UINT64_C(9000000000000);
        int fd = mkstemp(path);

        assert_true(fd >= 0);
        chunk_writer_set_chain(cw, 8);
        assert_int_equal(window_header_encode(&info, 0, 1000000, &b), 0);
        assert_int_equal(write(fd, b.data, b.len), (ssize_t) b.len);
        for (size_t c = 0; c < 3; c++) {
                size_t first = want.n;
                for (size_t i = 0; i < 300; i++) {
                        OwnedSample o;
                        test_make_sample(&rng, t + i * 10309278, &o);
                        assert_int_equal(chunk_writer_add_sample(cw, &o.s), 0);
                        collect_handler(&o.s, &want);
                }
                qsort(want.v + first, want.n - first, sizeof(OwnedSample), cmp_time);
                for (size_t i = first; i < want.n; i++)
                        want.v[i].s.frames = want.v[i].frames;
                assert_int_equal(chunk_writer_encode(cw, &b), 0);
                if (c == 1) /* the first try of chunk 1 never reaches the file */
                        assert_int_equal(chunk_writer_encode(cw, &b), 0);
                assert_int_equal(write(fd, b.data, b.len), (ssize_t) b.len);
                assert_int_equal(chunk_writer_commit(cw), 0);
                t += 5000000000ULL;
        }
        close(fd);

        assert_int_equal(window_file_open(path, false, &wf), 0);
        assert_int_equal(wf->n_chunks, 3);
        assert_int_equal(wf->chunks[0].chain_pos, 0);
        assert_int_equal(wf->chunks[1].chain_pos, 0);
        assert_int_equal(wf->chunks[2].chain_pos, 1);
        assert_int_equal(window_read(path, collect_handler, &got, NULL), 0);
        assert_int_equal(got.n, want.n);
        assert_read_equals(&got, &want, 0, want.n);
        collected_done(&got);
        collected_done(&want);
        byte_buf_done(&b);
        unlink(path);
}

/* Payloads with valid checksums but mutated content: rejected or read, never a crash or overread. */
static void test_mutated_payloads_with_valid_checksums(void **state) {
        WindowHeaderInfo info = test_header_info();
        _cleanup_(chunk_writer_freep) ChunkWriter *cw = chunk_writer_new(1);
        ByteBuf enc = {}, raw = {}, hdr = {};
        uint64_t rng = 77, t = 1000;
        char path[] = "/tmp/test-store-window.XXXXXX";
        int fd = mkstemp(path);
        unsigned rejected = 0;

        for (int i = 0; i < 50; i++) {
                OwnedSample o;
                test_make_sample(&rng, t += 1000, &o);
                assert_int_equal(chunk_writer_add_sample(cw, &o.s), 0);
        }
        assert_int_equal(chunk_writer_encode(cw, &enc), 0);
        assert_int_equal(decompress_exact(enc.data + CHUNK_HEADER_BYTES, enc.len - CHUNK_HEADER_BYTES,
                                          get_le32(enc.data + 28), &raw), 0);
        assert_int_equal(window_header_encode(&info, 0, 1000000, &hdr), 0);

        for (int iter = 0; iter < 3000; iter++) {
                _cleanup_free_ uint8_t *p = memdup(raw.data, raw.len);
                size_t len = raw.len;
                uint8_t h[CHUNK_HEADER_BYTES];
                Collected got = {};
                WindowReadStats st;

                if (iter % 7 == 0)
                        len = test_rand(&rng) % (raw.len + 1); /* cut short */
                for (int k = 0, m = 1 + (int) (test_rand(&rng) % 4); k < m && len > 0; k++)
                        p[test_rand(&rng) % len] = (uint8_t) test_rand(&rng);
                memcpy(h, enc.data, CHUNK_HEADER_BYTES);
                put_le16(h + 4, 0); /* stored raw, so mutations reach the parser */
                put_le32(h + 28, (uint32_t) len);
                put_le32(h + 32, (uint32_t) len);
                put_le32(h + 36, crc32c(0, p, len));
                put_le32(h + 44, crc32c(0, h, 44));
                assert_int_equal(ftruncate(fd, 0), 0);
                assert_int_equal(pwrite(fd, hdr.data, hdr.len, 0), (ssize_t) hdr.len);
                assert_int_equal(pwrite(fd, h, sizeof h, (off_t) hdr.len), (ssize_t) sizeof h);
                assert_int_equal(pwrite(fd, p, len, (off_t) (hdr.len + sizeof h)), (ssize_t) len);
                assert_int_equal(window_read(path, collect_handler, &got, &st), 0);
                if (st.corrupt_chunks > 0) {
                        rejected++;
                        assert_int_equal(got.n, 0);
                } else
                        assert_int_equal(got.n, 50);
                collected_done(&got);
        }
        assert_true(rejected > 1000);
        close(fd);
        unlink(path);
        byte_buf_done(&enc);
        byte_buf_done(&raw);
        byte_buf_done(&hdr);
}

/* A frame for the build id tests: DSO, address and build id (NULL: unknown). */
static Frame bid_frame(const char *dso, uint64_t addr, const char *build_id, bool kernel) {
        return (Frame) { .symbol = "f", .dso = dso, .addr = addr, .offset = 1, .build_id = build_id, .kernel = kernel };
}

static const char *build_id_of(const Sample *s, const char *dso) {
        for (uint32_t i = 0; i < s->n_frames; i++)
                if (streq(s->frames[i].dso, dso))
                        return s->frames[i].build_id;
        return "(no such frame)";
}

#define BID_LIBC "0f2c5e8d3a1b4c6d7e8f90a1b2c3d4e5f6a7b8c9"
#define BID_LIBC_OTHER "ffffffffffffffffffffffffffffffffffffffff"
#define BID_PROG "1234"
#define BID_PROG_LATER "abcdef0123456789abcdef0123456789"
#define BID_KERNEL "4a5a9b0affb66c437abcd455d2738af879985fa9"

/* Build ids go round a window once per DSO and chain: a DSO whose first frames came without one
 * gets it from the chunk that brings it on (earlier chunks read without it, as written), the first
 * build id of a DSO stays for its chain, and a new chain starts afresh. */
static void test_build_ids(void **state) {
        WindowHeaderInfo info = test_header_info();
        _cleanup_(chunk_writer_freep) ChunkWriter *cw = chunk_writer_new(3);
        _cleanup_(window_file_freep) WindowFile *wf = NULL;
        char path[] = "/tmp/test-store-window.XXXXXX";
        Frame frames[4][4] = {
                { bid_frame("/usr/lib/libc.so.6", 0x1000, BID_LIBC, false),
                  bid_frame("/usr/bin/prog", 0x2000, NULL, false), /* its file not read yet */
                  bid_frame("[kernel.kallsyms]", 0xffffffff81000000, BID_KERNEL, true),
                  bid_frame("[unknown]", 0x10, NULL, false) },
                { bid_frame("/usr/lib/libc.so.6", 0x1100, BID_LIBC_OTHER, false), /* not the chain's first */
                  bid_frame("/usr/bin/prog", 0x2100, BID_PROG, false),
                  bid_frame("/usr/bin/prog", 0x2000, NULL, false) },
                { bid_frame("/usr/bin/prog", 0x2000, NULL, false) },
                { bid_frame("/usr/bin/prog", 0x2000, BID_PROG_LATER, false) }, /* a new chain */
        };
        uint32_t n_frames[4] = { 4, 3, 1, 1 };
        ByteBuf b = {};
        int fd;

        chunk_writer_set_chain(cw, 3);
        fd = mkstemp(path);
        assert_true(fd >= 0);
        assert_int_equal(window_header_encode(&info, UINT64_C(1795000000000000), 120 * 1000000, &b), 0);
        assert_int_equal(write(fd, b.data, b.len), (ssize_t) b.len);
        for (size_t c = 0; c < 4; c++) {
                Sample s = { .t_ns = UINT64_C(5000000000000) + c * 1000000, .pid = 7, .tid = 7, .comm = "prog",
                             .n_frames = n_frames[c], .frames = frames[c] };
                assert_int_equal(chunk_writer_add_sample(cw, &s), 0);
                assert_int_equal(chunk_writer_encode(cw, &b), 0);
                assert_int_equal(write(fd, b.data, b.len), (ssize_t) b.len);
                assert_int_equal(chunk_writer_commit(cw), 0);
        }
        close(fd);
        byte_buf_done(&b);

        assert_int_equal(window_file_open(path, false, &wf), 0);
        assert_int_equal(wf->header.version, WINDOW_FORMAT_VERSION);
        assert_int_equal(wf->n_chunks, 4);
        assert_int_equal(wf->chunks[3].chain_pos, 0);
        /* the last chunk first: its chain has nothing before it; then the first chain, out of order */
        for (size_t k = 0; k < 4; k++) {
                size_t c = (k + 3) % 4;
                _cleanup_(decoded_chunk_freep) DecodedChunk *d = NULL;
                Sample s;

                assert_int_equal(window_file_decode_chunk(wf, c, &d), 0);
                assert_int_equal(decoded_chunk_n_samples(d), 1);
                decoded_chunk_sample(d, 0, &s);
                assert_int_equal(s.n_frames, n_frames[c]);
                switch (c) {
                case 0:
                        assert_string_equal(build_id_of(&s, "/usr/lib/libc.so.6"), BID_LIBC);
                        assert_null(build_id_of(&s, "/usr/bin/prog"));
                        assert_string_equal(build_id_of(&s, "[kernel.kallsyms]"), BID_KERNEL);
                        assert_null(build_id_of(&s, "[unknown]"));
                        break;
                case 1:
                        assert_string_equal(s.frames[0].build_id, BID_LIBC);
                        assert_string_equal(s.frames[1].build_id, BID_PROG);
                        assert_string_equal(s.frames[2].build_id, BID_PROG); /* the frame of chunk 0 */
                        break;
                case 2:
                        assert_string_equal(s.frames[0].build_id, BID_PROG);
                        break;
                case 3:
                        assert_string_equal(s.frames[0].build_id, BID_PROG_LATER);
                        break;
                }
        }
        unlink(path);
}

/* A window of format 4 (no build ids), written by the store before format 5
 * (tests/data/store/format-4.tpw, from tests/data/store/odd-names.perf-script): still read whole,
 * every frame without a build id. */
static void test_format_4_still_read(void **state) {
        const char *root = getenv("TPROF_SOURCE_ROOT");
        _cleanup_(window_file_freep) WindowFile *wf = NULL;
        _cleanup_free_ char *path = NULL;
        Collected got = {};
        WindowReadStats st;
        size_t frames = 0;

        if (!root)
                skip();
        assert_true(asprintf(&path, "%s/tests/data/store/format-4.tpw", root) > 0);
        assert_int_equal(window_file_open(path, true, &wf), 0);
        assert_int_equal(wf->header.version, WINDOW_FORMAT_VERSION_NO_BUILD_IDS);
        assert_int_equal(window_read(path, collect_handler, &got, &st), 0);
        assert_int_equal(st.corrupt_chunks, 0);
        assert_int_equal(got.n, 7);
        assert_string_equal(got.v[0].s.frames[0].dso, "/usr/bin/my_prog");
        for (size_t i = 0; i < got.n; i++)
                for (uint32_t k = 0; k < got.v[i].s.n_frames; k++, frames++)
                        assert_null(got.v[i].s.frames[k].build_id);
        assert_true(frames > 7);
        collected_done(&got);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_crc32c_known_vector),
                cmocka_unit_test(test_varint_zigzag),
                cmocka_unit_test(test_header_round_trip),
                cmocka_unit_test(test_header_detail),
                cmocka_unit_test(test_time_resolution),
                cmocka_unit_test(test_round_trip_ordered),
                cmocka_unit_test(test_round_trip_shuffled),
                cmocka_unit_test(test_empty_stack_and_edge_values),
                cmocka_unit_test(test_stack_tree_shares_callers),
                cmocka_unit_test(test_truncated_last_chunk),
                cmocka_unit_test(test_flipped_payload_bit),
                cmocka_unit_test(test_flipped_chunk_header_bit),
                cmocka_unit_test(test_damaged_file_header),
                cmocka_unit_test(test_chunk_time_bounds),
                cmocka_unit_test(test_round_trip_chained),
                cmocka_unit_test(test_round_trip_stack_slots),
                cmocka_unit_test(test_round_trip_callers_slots),
                cmocka_unit_test(test_chained_corruption_loses_rest_of_chain_only),
                cmocka_unit_test(test_chained_truncation),
                cmocka_unit_test(test_chain_needs_adjacent_chunks),
                cmocka_unit_test(test_chunk_header_must_match_samples),
                cmocka_unit_test(test_clock_mapping_per_chunk),
                cmocka_unit_test(test_encode_again_restarts_chain),
                cmocka_unit_test(test_mutated_payloads_with_valid_checksums),
                cmocka_unit_test(test_build_ids),
                cmocka_unit_test(test_format_4_still_read),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
