/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The ring reader on synthetic pages: a fake control page and a small data area that a "kernel"
 * in the test writes records into, including records that straddle the end of the area, LOST
 * records, a full ring, and a header with an impossible size.
 */
#include "tests.h"

#include <string.h>

#include "basic/fileio.h"
#include "sampler/sampler-record.h"
#include "sampler/sampler-ring.h"
#include "sampler/sampler.h"

#define PAGE 4096U
#define DATA 1024U

typedef struct FakeRing {
        _Alignas(8) uint8_t mem[PAGE + DATA];
        uint64_t head;
} FakeRing;

static struct perf_event_mmap_page *fake_page(FakeRing *f) {
        return (struct perf_event_mmap_page *) f->mem;
}

/* Writes one record at head, wrapping like the kernel does, then publishes head. */
static void fake_write(FakeRing *f, const void *rec, size_t n) {
        const uint8_t *p = rec;
        for (size_t i = 0; i < n; i++)
                f->mem[PAGE + ((f->head + i) & (DATA - 1))] = p[i];
        f->head += n;
        __atomic_store_n(&fake_page(f)->data_head, f->head, __ATOMIC_RELEASE);
}

static void fake_init(FakeRing *f, uint64_t start) {
        memset(f, 0, sizeof(*f));
        f->head = start;
        fake_page(f)->data_head = start;
        fake_page(f)->data_tail = start;
}

typedef struct TestRecord {
        struct perf_event_header h;
        uint64_t payload[5];
} TestRecord;

static TestRecord make_record(uint32_t type, uint64_t tag, size_t words) {
        TestRecord r = { .h = { .type = type, .size = (uint16_t) (sizeof(struct perf_event_header) + words * 8) } };
        for (size_t i = 0; i < words; i++)
                r.payload[i] = tag + i;
        return r;
}

static void test_reads_records_in_order(void **state) {
        static FakeRing f;
        SamplerRing r;
        const struct perf_event_header *h;
        unsigned n = 0;

        fake_init(&f, 0);
        assert_int_equal(sampler_ring_init(&r, f.mem, PAGE, DATA), 0);
        for (unsigned i = 0; i < 5; i++) {
                TestRecord t = make_record(PERF_RECORD_SAMPLE, i * 100, 3);
                fake_write(&f, &t, t.h.size);
        }
        assert_true(sampler_ring_has_data(&r));
        assert_int_equal(sampler_ring_begin(&r), 5 * 32);
        while ((h = sampler_ring_next(&r))) {
                const uint64_t *p = (const uint64_t *) (h + 1);
                assert_int_equal(h->size, 32);
                assert_int_equal(p[0], n * 100);
                assert_int_equal(p[2], n * 100 + 2);
                n++;
        }
        assert_int_equal(n, 5);
        sampler_ring_end(&r);
        assert_int_equal(fake_page(&f)->data_tail, 5 * 32);
        assert_false(sampler_ring_has_data(&r));
}

static void test_record_straddling_the_end(void **state) {
        static FakeRing f;
        SamplerRing r;
        const struct perf_event_header *h;

        /* Start 16 bytes before the end: a 48-byte record wraps after its header. Head keeps
         * counting past the size, as the kernel's does. */
        fake_init(&f, 3 * DATA - 16);
        assert_int_equal(sampler_ring_init(&r, f.mem, PAGE, DATA), 0);
        TestRecord t = make_record(PERF_RECORD_SAMPLE, 7000, 5);
        fake_write(&f, &t, t.h.size);
        TestRecord u = make_record(PERF_RECORD_COMM, 9000, 1);
        fake_write(&f, &u, u.h.size);

        sampler_ring_begin(&r);
        h = sampler_ring_next(&r);
        assert_non_null(h);
        assert_int_equal(h->type, PERF_RECORD_SAMPLE);
        assert_int_equal(h->size, 48);
        for (unsigned i = 0; i < 5; i++)
                assert_int_equal(((const uint64_t *) (h + 1))[i], 7000 + i);
        h = sampler_ring_next(&r);
        assert_non_null(h);
        assert_int_equal(h->type, PERF_RECORD_COMM);
        assert_int_equal(((const uint64_t *) (h + 1))[0], 9000);
        assert_null(sampler_ring_next(&r));
        sampler_ring_end(&r);
        assert_int_equal(fake_page(&f)->data_tail, 3 * DATA - 16 + 48 + 16);
}

static void test_header_straddling_the_end(void **state) {
        static FakeRing f;
        SamplerRing r;
        const struct perf_event_header *h;

        /* The header fills the last 8 bytes of the area and the whole body wraps to the start
         * (records are 8-byte aligned, so a header itself never splits). */
        fake_init(&f, DATA - 8);
        assert_int_equal(sampler_ring_init(&r, f.mem, PAGE, DATA), 0);
        TestRecord t = make_record(PERF_RECORD_EXIT, 1, 4);
        fake_write(&f, &t, t.h.size);
        sampler_ring_begin(&r);
        h = sampler_ring_next(&r);
        assert_non_null(h);
        assert_int_equal(h->type, PERF_RECORD_EXIT);
        assert_int_equal(((const uint64_t *) (h + 1))[3], 4);
        sampler_ring_end(&r);
}

static void test_lost_record(void **state) {
        static FakeRing f;
        SamplerRing r;
        const struct perf_event_header *h;
        struct {
                struct perf_event_header h;
                uint64_t id, lost;
                uint32_t pid, tid;
                uint64_t time;
                uint32_t cpu, res;
        } rec = {
                .h = { .type = PERF_RECORD_LOST, .size = sizeof(rec) },
                .id = 1, .lost = 42, .pid = 5, .tid = 6, .time = 123456789, .cpu = 1,
        };
        RecordLost l;

        fake_init(&f, DATA - 24);
        assert_int_equal(sampler_ring_init(&r, f.mem, PAGE, DATA), 0);
        fake_write(&f, &rec, sizeof(rec));
        sampler_ring_begin(&r);
        h = sampler_ring_next(&r);
        assert_non_null(h);
        assert_int_equal(record_parse_lost(h, SAMPLER_SAMPLE_TYPE, &l), 0);
        assert_int_equal(l.lost, 42);
        assert_int_equal(l.id.time, 123456789);
        assert_int_equal(l.id.cpu, 1);
        assert_int_equal(record_time(h, SAMPLER_SAMPLE_TYPE), 123456789);
        sampler_ring_end(&r);
}

static void test_full_ring_and_partial_reads(void **state) {
        static FakeRing f;
        SamplerRing r;
        unsigned n = 0;

        fake_init(&f, 0);
        assert_int_equal(sampler_ring_init(&r, f.mem, PAGE, DATA), 0);
        for (unsigned i = 0; i < DATA / 32; i++) {
                TestRecord t = make_record(PERF_RECORD_SAMPLE, i, 3);
                fake_write(&f, &t, t.h.size);
        }
        assert_int_equal(sampler_ring_begin(&r), DATA);
        /* Take three, hand them back, and find the rest still there. */
        for (unsigned i = 0; i < 3; i++)
                assert_non_null(sampler_ring_next(&r));
        sampler_ring_end(&r);
        assert_int_equal(fake_page(&f)->data_tail, 96);
        sampler_ring_begin(&r);
        while (sampler_ring_next(&r))
                n++;
        sampler_ring_end(&r);
        assert_int_equal(n, DATA / 32 - 3);
}

static void test_impossible_header_skips_to_head(void **state) {
        static FakeRing f;
        SamplerRing r;
        struct perf_event_header bad = { .type = PERF_RECORD_SAMPLE, .size = 12 }; /* not 8-aligned */
        uint64_t pad = 0;

        fake_init(&f, 0);
        assert_int_equal(sampler_ring_init(&r, f.mem, PAGE, DATA), 0);
        fake_write(&f, &bad, sizeof(bad));
        fake_write(&f, &pad, sizeof(pad));
        sampler_ring_begin(&r);
        assert_null(sampler_ring_next(&r));
        assert_int_equal(r.corrupt, 1);
        sampler_ring_end(&r);
        assert_int_equal(fake_page(&f)->data_tail, 16);

        /* A size larger than what the head covers is lost framing too. */
        struct perf_event_header big = { .type = PERF_RECORD_SAMPLE, .size = 512 };
        fake_write(&f, &big, sizeof(big));
        sampler_ring_begin(&r);
        assert_null(sampler_ring_next(&r));
        assert_int_equal(r.corrupt, 2);
        sampler_ring_end(&r);

        /* A head that ran more than a ring ahead of us. */
        f.head += 4 * DATA;
        fake_page(&f)->data_head = f.head;
        sampler_ring_begin(&r);
        assert_int_equal(r.corrupt, 3);
        assert_null(sampler_ring_next(&r));
}

static void test_init_rejects_bad_sizes(void **state) {
        static FakeRing f;
        SamplerRing r;

        fake_init(&f, 0);
        assert_int_equal(sampler_ring_init(&r, f.mem, PAGE, 1000), -EINVAL);
        assert_int_equal(sampler_ring_init(&r, f.mem, PAGE, 0), -EINVAL);
        fake_page(&f)->data_size = 2048;
        assert_int_equal(sampler_ring_init(&r, f.mem, PAGE, DATA), -EINVAL);
}

static void test_used_follows_head_and_tail(void **state) {
        static FakeRing f;
        SamplerRing r;

        fake_init(&f, 5000);
        assert_int_equal(sampler_ring_init(&r, f.mem, PAGE, DATA), 0);
        assert_int_equal(sampler_ring_used(&r), 0);
        for (unsigned i = 0; i < 4; i++) {
                TestRecord t = make_record(PERF_RECORD_SAMPLE, i, 3);
                fake_write(&f, &t, t.h.size);
        }
        assert_int_equal(sampler_ring_used(&r), 128);
        sampler_ring_begin(&r);
        assert_non_null(sampler_ring_next(&r));
        sampler_ring_end(&r);
        assert_int_equal(sampler_ring_used(&r), 96);
}

/* The drain policy (sampler.c): when the next timed drain comes, and which wakeups drain. */
static void test_drain_policy(void **state) {
        const uint64_t MiB = 1024 * 1024, ring = 2 * MiB, sec = 1000000;

        /* 97 Hz on a busy CPU, 8.7 KiB records: 0.84 MB a second fills half of a 2 MiB ring in
         * 1.25 s. A CPU busy a third of the time: in 3.7 s. */
        assert_int_equal(sampler_ring_usec_to_half(840000, ring, sec), 1248304);
        assert_int_equal(sampler_ring_usec_to_half(280000, ring, sec), 3744914);
        /* 4850 Hz: 42 MB a second, half of an 8 MiB ring in a tenth of a second. */
        assert_int_equal(sampler_ring_usec_to_half(42000000, 8 * MiB, sec), 99864);
        /* Nothing written, or no time to measure a rate in: no deadline. */
        assert_int_equal(sampler_ring_usec_to_half(0, ring, sec), UINT64_MAX);
        assert_int_equal(sampler_ring_usec_to_half(64, ring, 0), UINT64_MAX);
        assert_int_equal(sampler_ring_usec_to_half(1, 8 * MiB * 1024, UINT64_MAX / 2), UINT64_MAX);

        /* Wakeups: from three eighths of the ring on, read at once; below, the next wakeup (after
         * another half) still finds room. */
        assert_true(sampler_ring_wakeup_reads(MiB, ring));
        assert_true(sampler_ring_wakeup_reads(ring / 8 * 3, ring));
        assert_false(sampler_ring_wakeup_reads(ring / 8 * 3 - 1, ring));
        assert_true(ring / 8 * 3 - 1 + ring / 2 < ring);
        assert_false(sampler_ring_wakeup_reads(64, ring));
}

/* The rings' default sizes are bytes, whatever the page size: x86-64's 4 KiB, and arm64's 4, 16
 * or 64 KiB (CONFIG_ARM64_4K_PAGES, _16K_PAGES, _64K_PAGES in arch/arm64/Kconfig at 6.6; RHEL's
 * and Oracle's arm64 kernels use 64 KiB). 64 KiB pages must not make the rings 16 times larger. */
static void test_ring_pages_by_bytes(void **state) {
        const uint64_t KiB = 1024, MiB = 1024 * KiB;
        static const size_t page_sizes[] = { 4096, 16384, 65536 };

        for (size_t i = 0; i < ELEMENTSOF(page_sizes); i++) {
                size_t page = page_sizes[i];

                /* frame pointers: 512 KiB up to 97 Hz, doubling with the rate up to 8 MiB */
                assert_int_equal(sampler_ring_pages(page, 0, 0) * page, 512 * KiB);
                assert_int_equal(sampler_ring_pages(page, 97, 0) * page, 512 * KiB);
                assert_int_equal(sampler_ring_pages(page, 98, 0) * page, 1 * MiB);
                assert_int_equal(sampler_ring_pages(page, 776, 0) * page, 4 * MiB);
                assert_int_equal(sampler_ring_pages(page, 777, 0) * page, 8 * MiB);
                assert_int_equal(sampler_ring_pages(page, 1552, 0) * page, 8 * MiB);
                assert_int_equal(sampler_ring_pages(page, 20000, 0) * page, 8 * MiB);
                /* stack copies of 8192 bytes: 2 MiB to 120 Hz, 4 MiB to 240 Hz, 8 MiB above */
                assert_int_equal(sampler_ring_pages(page, 97, 8192) * page, 2 * MiB);
                assert_int_equal(sampler_ring_pages(page, 121, 8192) * page, 4 * MiB);
                assert_int_equal(sampler_ring_pages(page, 97, 16384) * page, 4 * MiB);
                assert_int_equal(sampler_ring_pages(page, 250, 8192) * page, 8 * MiB);
                assert_int_equal(sampler_ring_pages(page, 4999, 32768) * page, 8 * MiB);
        }
        /* a page larger than the ring: one */
        assert_int_equal(sampler_ring_pages(1024 * KiB, 97, 0), 1);
}

/* README gives the rate from which the frame-pointer rings are 8 MiB: that rate's, and not the
 * one below it. */
static void test_ring_pages_as_readme_says(void **state) {
        const char *root = getenv("TPROF_SOURCE_ROOT");
        _cleanup_free_ char *path = NULL, *text = NULL;
        const char *p;
        unsigned hz = 0;

        if (!root)
                skip();
        assert_true(asprintf(&path, "%s/README.md", root) > 0);
        assert_int_equal(read_full_file(path, 4 * 1024 * 1024, &text, NULL), 0);
        p = strstr(text, "doubling up to 8 MiB from ");
        assert_non_null(p);
        assert_int_equal(sscanf(p, "doubling up to 8 MiB from %u Hz", &hz), 1);
        assert_int_equal(sampler_ring_pages(4096, hz, 0) * 4096ULL, 8 * 1024 * 1024);
        assert_int_equal(sampler_ring_pages(4096, hz - 1, 0) * 4096ULL, 4 * 1024 * 1024);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_reads_records_in_order),
                cmocka_unit_test(test_record_straddling_the_end),
                cmocka_unit_test(test_header_straddling_the_end),
                cmocka_unit_test(test_lost_record),
                cmocka_unit_test(test_full_ring_and_partial_reads),
                cmocka_unit_test(test_impossible_header_skips_to_head),
                cmocka_unit_test(test_init_rejects_bad_sizes),
                cmocka_unit_test(test_used_follows_head_and_tail),
                cmocka_unit_test(test_drain_policy),
                cmocka_unit_test(test_ring_pages_by_bytes),
                cmocka_unit_test(test_ring_pages_as_readme_says),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
