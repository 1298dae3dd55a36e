/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The window writer when an allocation fails: a sample it could not take (-ENOMEM) leaves its
 * tables as they were for the samples it took and the ones that come after. Every allocation the
 * writer makes while it takes a sample is made to fail in turn, by this program's own malloc(),
 * calloc() and realloc() in front of the C library's (glibc's __libc_malloc() and the others, which
 * it exports for such wrappers); then the same sample and others come in, and the window must read
 * back exactly what was taken, build ids included.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "basic/alloc-util.h"
#include "store/store-codec.h"
#include "store/store-window.h"
#include "store-test-util.h"
#include "tests.h"

#if defined(__SANITIZE_ADDRESS__)
#  define HAVE_ASAN 1
#elif defined(__has_feature)
#  if __has_feature(address_sanitizer)
#    define HAVE_ASAN 1
#  endif
#endif

/* AddressSanitizer has its own allocator and the names: the test skips there. */
#if defined(__GLIBC__) && !defined(HAVE_ASAN)
#  define FAILING_ALLOC 1

void *__libc_malloc(size_t n);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t n);

/* Allocations still to succeed before one fails, and then no other; -1: none fails. */
static long fail_in = -1;

static bool fail_now(void) {
        if (fail_in < 0)
                return false;
        return fail_in-- == 0;
}

void *malloc(size_t n) {
        return fail_now() ? NULL : __libc_malloc(n);
}

void *calloc(size_t n, size_t size) {
        return fail_now() ? NULL : __libc_calloc(n, size);
}

void *realloc(void *p, size_t n) {
        return fail_now() ? NULL : __libc_realloc(p, n);
}
#endif

#define FRAME(s, d, a, b, k) { .symbol = (s), .dso = (d), .addr = (a), .offset = 4, .build_id = (b), .kernel = (k) }

#define BID_LIBC "0f2c5e8d3a1b4c6d7e8f90a1b2c3d4e5f6a7b8c9"
#define BID_PROG "1234"
#define BID_LIB "abcdef0123456789abcdef0123456789"
#define BID_KERNEL "4a5a9b0affb66c437abcd455d2738af879985fa9"

/* A sample without a stack or a cgroup, so that the next one brings the first frames, build ids,
 * stack nodes and cgroups (the tables' first allocations); that one, which also brings a thread;
 * and one more with new frames, which take the next ids. */
static Frame new_frames[] = {
        FRAME("tcp_sendmsg", "[kernel.kallsyms]", 0xffffffff81000000, BID_KERNEL, true),
        FRAME("send", "/usr/lib/libc.so.6", 0x2100, BID_LIBC, false),
        FRAME("lib_work", "/usr/lib/libwork.so", 0x3000, BID_LIB, false),
        FRAME("main", "/usr/bin/prog", 0x1000, BID_PROG, false),
};
static Frame later_frames[] = {
        FRAME("lib_other", "/usr/lib/libwork.so", 0x3100, BID_LIB, false),
        FRAME("worker", "/usr/bin/prog", 0x1100, BID_PROG, false),
};

/* The samples read, and their cgroups (which collect_handler() does not copy). */
typedef struct Read {
        Collected samples;
        char *cgroup[4];
} Read;

static int read_handler(const Sample *s, void *userdata) {
        Read *r = userdata;

        if (r->samples.n < ELEMENTSOF(r->cgroup) && s->cgroup)
                r->cgroup[r->samples.n] = strdup(s->cgroup);
        return collect_handler(s, &r->samples);
}

static void read_done(Read *r) {
        collected_done(&r->samples);
        for (size_t i = 0; i < ELEMENTSOF(r->cgroup); i++)
                free(r->cgroup[i]);
}

static void check_read(const Read *got, const Sample *want, size_t n, long fail_after) {
        assert_int_equal(got->samples.n, n);
        for (size_t i = 0; i < n; i++) {
                if (!sample_equal(&got->samples.v[i].s, &want[i]))
                        fail_msg("sample %zu differs when allocation %ld fails", i, fail_after);
                if (!want[i].cgroup != !got->cgroup[i] || (want[i].cgroup && !streq(want[i].cgroup, got->cgroup[i])))
                        fail_msg("the cgroup of sample %zu differs when allocation %ld fails", i, fail_after);
        }
}

static Sample sample_of(uint64_t t_ns, uint32_t tid, const char *comm, const char *cgroup, Frame *frames, uint32_t n) {
        return (Sample) { .t_ns = t_ns, .cpu = 1, .pid = 100, .tid = tid, .comm = comm, .period = 1000,
                          .n_frames = n, .frames = frames, .cgroup = cgroup };
}

/* Writes a window of the samples taken, with the allocation after the first fail_after ones in
 * taking the second sample failing; returns whether one failed. */
static bool write_and_check(long fail_after) {
        WindowHeaderInfo info = test_header_info();
        _cleanup_(chunk_writer_freep) ChunkWriter *cw = chunk_writer_new(3);
        char path[] = "/tmp/test-store-window-nomem.XXXXXX";
        Sample want[3], s;
        size_t n_want = 0;
        Read got = {};
        WindowReadStats st;
        ByteBuf b = {};
        bool failed;
        int fd, r;

        assert_non_null(cw);
        s = sample_of(UINT64_C(5000000000000), 100, "prog", NULL, NULL, 0);
        assert_int_equal(chunk_writer_add_sample(cw, &s), 0);
        want[n_want++] = s;

        s = sample_of(UINT64_C(5000001000000), 101, "prog-worker", "/system.slice/other.service", new_frames,
                      ELEMENTSOF(new_frames));
#ifdef FAILING_ALLOC
        fail_in = fail_after;
#endif
        r = chunk_writer_add_sample(cw, &s);
#ifdef FAILING_ALLOC
        failed = fail_in < 0;
        fail_in = -1;
#else
        failed = false;
#endif
        if (r < 0) {
                assert_true(failed);
                assert_int_equal(r, -ENOMEM);
                /* taken this time */
                assert_int_equal(chunk_writer_add_sample(cw, &s), 0);
        }
        want[n_want++] = s;
        s = sample_of(UINT64_C(5000002000000), 101, "prog-worker", "/system.slice/other.service", later_frames,
                      ELEMENTSOF(later_frames));
        assert_int_equal(chunk_writer_add_sample(cw, &s), 0);
        want[n_want++] = s;

        fd = mkstemp(path);
        assert_true(fd >= 0);
        assert_int_equal(window_header_encode(&info, UINT64_C(1795000000000000), 120 * 1000000, &b), 0);
        assert_int_equal(write(fd, b.data, b.len), (ssize_t) b.len);
        assert_int_equal(chunk_writer_encode(cw, &b), 0);
        assert_int_equal(write(fd, b.data, b.len), (ssize_t) b.len);
        assert_int_equal(chunk_writer_commit(cw), 0);
        close(fd);
        byte_buf_done(&b);

        assert_int_equal(window_read(path, read_handler, &got, &st), 0);
        unlink(path);
        assert_int_equal(st.corrupt_chunks, 0);
        check_read(&got, want, n_want, fail_after);
        read_done(&got);
        return failed;
}

static void test_failed_allocation_leaves_tables_whole(void **state) {
        long n;

#ifndef FAILING_ALLOC
        skip();
#endif
        /* every allocation in turn, until the sample needs no more than were let through */
        for (n = 0; write_and_check(n); n++)
                assert_true(n < 1000);
        printf("# %ld allocations to take the sample\n", n);
        assert_true(n > 0);
}

/* Writes a window of three chunks in chains of two, the allocation after the first fail_after ones
 * in the commit of the second (which empties the tables for the next chain) failing; returns
 * whether one failed. */
static bool write_chains_and_check(long fail_after) {
        WindowHeaderInfo info = test_header_info();
        _cleanup_(chunk_writer_freep) ChunkWriter *cw = chunk_writer_new(3);
        char path[] = "/tmp/test-store-window-nomem.XXXXXX";
        Frame *frames[] = { new_frames, later_frames, new_frames };
        uint32_t n_frames[] = { ELEMENTSOF(new_frames), ELEMENTSOF(later_frames), ELEMENTSOF(new_frames) };
        const char *cgroups[] = { "/system.slice/a.service", "/system.slice/b.service", "/system.slice/c.service" };
        Sample want[3];
        Read got = {};
        WindowReadStats st;
        ByteBuf b = {};
        bool failed = false;
        int fd, r;

        assert_non_null(cw);
        chunk_writer_set_chain(cw, 2);
        fd = mkstemp(path);
        assert_true(fd >= 0);
        assert_int_equal(window_header_encode(&info, UINT64_C(1795000000000000), 120 * 1000000, &b), 0);
        assert_int_equal(write(fd, b.data, b.len), (ssize_t) b.len);
        for (size_t c = 0; c < 3; c++) {
                want[c] = sample_of(UINT64_C(5000000000000) + c * 1000000, 100 + c, "prog", cgroups[c], frames[c],
                                    n_frames[c]);
                assert_int_equal(chunk_writer_add_sample(cw, &want[c]), 0);
                assert_int_equal(chunk_writer_encode(cw, &b), 0);
                assert_int_equal(write(fd, b.data, b.len), (ssize_t) b.len);
#ifdef FAILING_ALLOC
                if (c == 1)
                        fail_in = fail_after;
#endif
                r = chunk_writer_commit(cw);
#ifdef FAILING_ALLOC
                if (c == 1) {
                        failed = fail_in < 0;
                        fail_in = -1;
                }
#endif
                assert_true(r == 0 || (failed && r == -ENOMEM));
        }
        close(fd);
        byte_buf_done(&b);

        assert_int_equal(window_read(path, read_handler, &got, &st), 0);
        unlink(path);
        if (st.corrupt_chunks > 0)
                fail_msg("%u chunks unreadable when allocation %ld fails", st.corrupt_chunks, fail_after);
        check_read(&got, want, 3, fail_after);
        read_done(&got);
        return failed;
}

/* A commit that could not empty the tables for the next chain leaves them as they were, and the
 * next chunk, which goes on with them, is read back like the others. */
static void test_failed_reset_leaves_chain_readable(void **state) {
        long n;

#ifndef FAILING_ALLOC
        skip();
#endif
        for (n = 0; write_chains_and_check(n); n++)
                assert_true(n < 1000);
        printf("# %ld allocations to empty the tables\n", n);
        assert_true(n > 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_failed_allocation_leaves_tables_whole),
                cmocka_unit_test(test_failed_reset_leaves_chain_readable),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
