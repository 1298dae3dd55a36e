/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Record decoding: hand-built PERF_RECORD_* in the layout our sample_type gives, and the same
 * records cut short or lying about their contents, which must be refused, not overread.
 */
#include "tests.h"

#include <errno.h>
#include <string.h>

#include "sampler/sampler-record.h"
#include "sampler/sampler-ring.h"
#include "sampler/sampler-unwind.h"

#define ST SAMPLER_SAMPLE_TYPE

typedef struct Buf {
        _Alignas(8) uint8_t b[1024];
        size_t n;
} Buf;

static void put(Buf *b, const void *p, size_t n) {
        memcpy(b->b + b->n, p, n);
        b->n += n;
}
static void put64(Buf *b, uint64_t v) {
        put(b, &v, 8);
}
static void put32x2(Buf *b, uint32_t x, uint32_t y) {
        uint32_t v[2] = { x, y };
        put(b, v, 8);
}
static void put_str(Buf *b, const char *s) {
        size_t l = strlen(s) + 1, padded = (l + 7) & ~(size_t) 7;
        memset(b->b + b->n, 0, padded);
        memcpy(b->b + b->n, s, l);
        b->n += padded;
}
static void put_id(Buf *b, uint32_t pid, uint32_t tid, uint64_t time, uint32_t cpu) {
        put32x2(b, pid, tid);
        put64(b, time);
        put32x2(b, cpu, 0);
}
static const struct perf_event_header *finish(Buf *b, uint32_t type, uint16_t misc) {
        struct perf_event_header *h = (struct perf_event_header *) b->b;
        h->type = type;
        h->misc = misc;
        h->size = (uint16_t) b->n;
        return h;
}
static void start(Buf *b) {
        memset(b, 0, sizeof(*b));
        b->n = sizeof(struct perf_event_header);
}

static void test_sample(void **state) {
        Buf b;
        RecordSample s;

        start(&b);
        put64(&b, 0xffffffff81000010);            /* ip */
        put32x2(&b, 100, 101);                    /* pid, tid */
        put64(&b, 5000000000);                    /* time */
        put32x2(&b, 1, 0);                        /* cpu */
        put64(&b, 10101010);                      /* period */
        put64(&b, 4);                             /* nr */
        put64(&b, (uint64_t) PERF_CONTEXT_KERNEL);
        put64(&b, 0xffffffff81000010);
        put64(&b, (uint64_t) PERF_CONTEXT_USER);
        put64(&b, 0x401000);
        const struct perf_event_header *h = finish(&b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL);

        assert_int_equal(record_parse_sample(h, ST, &s), 0);
        assert_int_equal(s.id.pid, 100);
        assert_int_equal(s.id.tid, 101);
        assert_int_equal(s.id.time, 5000000000);
        assert_int_equal(s.id.cpu, 1);
        assert_int_equal(s.period, 10101010);
        assert_int_equal(s.nr, 4);
        assert_int_equal(s.ips[3], 0x401000);
        assert_true(s.kernel_ip);
        assert_int_equal(record_time(h, ST), 5000000000);

        /* A callchain count larger than the record: refused, though its time still orders it. */
        ((uint64_t *) (b.b + 8))[5] = 1000;
        assert_int_equal(record_parse_sample(h, ST, &s), -EBADMSG);
        assert_int_equal(record_time(h, ST), 5000000000);
        ((uint64_t *) (b.b + 8))[5] = 4;
        /* Cut in the fixed part. */
        ((struct perf_event_header *) b.b)->size = 24;
        assert_int_equal(record_parse_sample(h, ST, &s), -EBADMSG);
        assert_int_equal(record_time(h, ST), 0); /* cut before its time */
        ((struct perf_event_header *) b.b)->size = 32;
        assert_int_equal(record_time(h, ST), 5000000000);
        /* Another sample_type is not ours to decode. */
        ((struct perf_event_header *) b.b)->size = (uint16_t) b.n;
        assert_int_equal(record_parse_sample(h, ST | PERF_SAMPLE_ADDR, &s), -EINVAL);
        assert_int_equal(record_time(h, ST | PERF_SAMPLE_ADDR), 0);
}

/* The value of the user register at bit of SAMPLER_REGS_USER_MASK in test_sample_unwind(): sp
 * 0x7ffd0000, ip 0x401000, bp 0x7ffd0010; x86-64's bx 0x1234, ax 0xa0, cx 0xc0, dx 0xd0, si 0x50,
 * di 0xd1, r8-r11 8-11; arm64's link register 0x4010ac. */
static uint64_t reg_value(unsigned bit) {
#if defined(__aarch64__)
        static const uint64_t v[] = { [SAMPLER_REG_X29] = 0x7ffd0010, [SAMPLER_REG_LR] = 0x4010ac,
                                      [SAMPLER_REG_SP] = 0x7ffd0000, [SAMPLER_REG_PC] = 0x401000 };
#else
        static const uint64_t v[] = { 0xa0, 0x1234, 0xc0, 0xd0, 0x50, 0xd1, 0x7ffd0010, 0x7ffd0000, 0x401000,
                                      [16] = 8, 9, 10, 11 };
#endif
        return bit < ELEMENTSOF(v) ? v[bit] : 0;
}

/* The registers of SAMPLER_REGS_USER_MASK in bit order, as the kernel writes them. */
static void put_regs(Buf *b, uint64_t (*value)(unsigned bit)) {
        for (unsigned bit = 0; bit < 64; bit++)
                if (SAMPLER_REGS_USER_MASK & (1ULL << bit))
                        put64(b, value(bit));
}

/* With REGS_USER and STACK_USER: registers in mask order (x86-64: ax, bx, cx, dx, si, di, bp, sp,
 * ip, r8-r11; arm64: x29, lr, sp, pc), then the copy and its filled size; a kernel thread has ABI
 * NONE and no registers; a copy longer than the record or a filled size beyond the copy is refused. */
static void test_sample_unwind(void **state) {
        const uint64_t st = ST | SAMPLER_SAMPLE_TYPE_UNWIND;
        uint8_t stack[64];
        RecordSample s;
        Buf b;

        for (size_t i = 0; i < sizeof(stack); i++)
                stack[i] = (uint8_t) i;
        start(&b);
        put64(&b, 0x401000);
        put32x2(&b, 100, 101);
        put64(&b, 5000);
        put32x2(&b, 1, 0);
        put64(&b, 1000000);
        put64(&b, 0); /* no callchain: exclude_callchain_user and a user-mode sample */
        put64(&b, PERF_SAMPLE_REGS_ABI_64);
        put_regs(&b, reg_value);
        put64(&b, sizeof(stack));
        put(&b, stack, sizeof(stack));
        put64(&b, 48); /* dyn_size */
        assert_int_equal(record_parse_sample(finish(&b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER), st, &s), 0);
        assert_int_equal(s.regs_abi, PERF_SAMPLE_REGS_ABI_64);
        assert_int_equal(s.user_bp, 0x7ffd0010);
        assert_int_equal(s.user_sp, 0x7ffd0000);
        assert_int_equal(s.user_ip, 0x401000);
#if defined(__aarch64__)
        assert_int_equal(s.user_lr, 0x4010ac);
#else
        assert_int_equal(s.user_bx, 0x1234);
        /* the caller-saved ones in their bit order */
        assert_int_equal(s.user_scratch[0], 0xa0);
        assert_int_equal(s.user_scratch[1], 0xc0);
        assert_int_equal(s.user_scratch[2], 0xd0);
        assert_int_equal(s.user_scratch[3], 0x50);
        assert_int_equal(s.user_scratch[4], 0xd1);
        assert_int_equal(s.user_scratch[6], 9);
        assert_int_equal(s.user_scratch[8], 11);
#endif
        assert_int_equal(s.stack_size, sizeof(stack));
        assert_int_equal(s.stack_dyn_size, 48);
        assert_memory_equal(s.stack, stack, sizeof(stack));

        /* dyn_size beyond the copy */
        b.n -= 8;
        put64(&b, sizeof(stack) + 8);
        assert_int_equal(record_parse_sample(finish(&b, PERF_RECORD_SAMPLE, 0), st, &s), -EBADMSG);
        /* the copy longer than the record */
        b.n -= 8 + sizeof(stack) + 8;
        put64(&b, 4096);
        put(&b, stack, sizeof(stack));
        put64(&b, 8);
        assert_int_equal(record_parse_sample(finish(&b, PERF_RECORD_SAMPLE, 0), st, &s), -EBADMSG);

        /* a kernel thread: ABI NONE, no registers; an empty copy has no dyn_size */
        start(&b);
        put64(&b, 0xffffffff81000010);
        put32x2(&b, 0, 0);
        put64(&b, 5000);
        put32x2(&b, 1, 0);
        put64(&b, 1000000);
        put64(&b, 2);
        put64(&b, (uint64_t) PERF_CONTEXT_KERNEL);
        put64(&b, 0xffffffff81000010);
        put64(&b, PERF_SAMPLE_REGS_ABI_NONE);
        put64(&b, 0);
        assert_int_equal(record_parse_sample(finish(&b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL), st, &s), 0);
        assert_int_equal(s.regs_abi, PERF_SAMPLE_REGS_ABI_NONE);
        assert_int_equal(s.nr, 2);
        assert_null(s.stack);
        assert_int_equal(s.stack_size, 0);
        /* other sample_type bits are not ours */
        assert_int_equal(record_parse_sample(finish(&b, PERF_RECORD_SAMPLE, 0), st | PERF_SAMPLE_RAW, &s), -EINVAL);
}

#if defined(__aarch64__)
#define REG_IP SAMPLER_REG_PC
#else
#define REG_IP SAMPLER_REG_IP
#endif

static uint64_t compat32_sp;

static uint64_t compat32_reg_value(unsigned bit) {
        return bit == SAMPLER_REG_SP ? compat32_sp : bit == REG_IP ? 0x8049010 : 0;
}

/* A user-mode sample of a 32-bit task (ABI 32: the same registers, in the same mask order), its
 * stack copy of copy_size bytes with dyn_size filled; copy_size 0 ends the record after the size,
 * as the kernel reserves it (kernel/events/core.c in Linux 6.18: perf_prepare_sample() adds the
 * copy and its dyn_size only when perf_sample_ustack_size() is not 0). */
static const struct perf_event_header *sample_compat32(Buf *b, uint64_t abi, uint64_t sp, uint64_t copy_size,
                                                      uint64_t dyn_size) {
        start(b);
        put64(b, 0x8049010);
        put32x2(b, 100, 100);
        put64(b, 5000);
        put32x2(b, 1, 0);
        put64(b, 1000000);
        put64(b, 0);
        put64(b, abi);
        compat32_sp = sp;
        if (abi != PERF_SAMPLE_REGS_ABI_NONE)
                put_regs(b, compat32_reg_value); /* sp and ip, the others 0 */
        put64(b, copy_size);
        if (copy_size > 0) {
                memset(b->b + b->n, 0, copy_size);
                b->n += copy_size;
                put64(b, dyn_size);
        }
        return finish(b, PERF_RECORD_SAMPLE, abi == PERF_SAMPLE_REGS_ABI_NONE ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER);
}

/* Why a sample has no user stack, from what the kernel wrote (Linux 6.18, kernel/events/core.c):
 * no registers (perf_sample_regs_user(): a kernel thread), a copy sized 0 (perf_sample_ustack_size():
 * perf_ustack_task_size() is 0 for a stack pointer of 0 or at or past TASK_SIZE), or a copy
 * of which nothing was read (perf_output_sample_ustack(): dyn_size = dump_size - what
 * copy_from_user_nmi() could not read). */
static void test_sample_no_user_cause(void **state) {
        const uint64_t st = ST | SAMPLER_SAMPLE_TYPE_UNWIND;
        RecordSample s;
        Buf b;

        assert_int_equal(record_parse_sample(sample_compat32(&b, PERF_SAMPLE_REGS_ABI_NONE, 0, 0, 0), st, &s), 0);
        assert_int_equal(unwind_no_user_cause(s.regs_abi, s.user_sp, s.stack_size, s.stack_dyn_size), UNWIND_NO_USER_REGS);

        assert_int_equal(record_parse_sample(sample_compat32(&b, PERF_SAMPLE_REGS_ABI_32, 0xffcea000, 0, 0), st, &s), 0);
        assert_int_equal(s.user_sp, 0xffcea000);
        assert_int_equal(unwind_no_user_cause(s.regs_abi, s.user_sp, s.stack_size, s.stack_dyn_size), UNWIND_NO_USER_NO_COPY);

        assert_int_equal(record_parse_sample(sample_compat32(&b, PERF_SAMPLE_REGS_ABI_32, 0xffcea000, 64, 0), st, &s), 0);
        assert_int_equal(s.stack_size, 64);
        assert_int_equal(unwind_no_user_cause(s.regs_abi, s.user_sp, s.stack_size, s.stack_dyn_size), UNWIND_NO_USER_EMPTY);

        assert_int_equal(record_parse_sample(sample_compat32(&b, PERF_SAMPLE_REGS_ABI_32, 0xffcea000, 64, 48), st, &s), 0);
        assert_int_equal(s.stack_dyn_size, 48);
        assert_int_equal(unwind_no_user_cause(s.regs_abi, s.user_sp, s.stack_size, s.stack_dyn_size), -1);
}

static void test_mmap2(void **state) {
        Buf b;
        RecordMmap2 m;

        start(&b);
        put32x2(&b, 200, 200);
        put64(&b, 0x7f0000001000);
        put64(&b, 0x2000);
        put64(&b, 0x1000);
        put32x2(&b, 8, 1);      /* maj, min */
        put64(&b, 424242);      /* ino */
        put64(&b, 0);           /* ino_generation */
        put32x2(&b, 5, 2);      /* prot r-x, flags MAP_PRIVATE */
        put_str(&b, "/usr/lib/libfoo.so");
        put_id(&b, 200, 200, 777, 0);
        const struct perf_event_header *h = finish(&b, PERF_RECORD_MMAP2, 0);

        assert_int_equal(record_parse_mmap2(h, ST, &m), 0);
        assert_int_equal(m.pid, 200);
        assert_int_equal(m.addr, 0x7f0000001000);
        assert_int_equal(m.len, 0x2000);
        assert_int_equal(m.pgoff, 0x1000);
        assert_int_equal(m.maj, 8);
        assert_int_equal(m.min, 1);
        assert_int_equal(m.ino, 424242);
        assert_int_equal(m.prot, 5);
        assert_string_equal(m.filename, "/usr/lib/libfoo.so");
        assert_int_equal(m.id.time, 777);
        assert_int_equal(record_time(h, ST), 777);

        /* The file name not terminated inside the record body. */
        memset(b.b + b.n - 24 - 24, 'x', 24);
        assert_int_equal(record_parse_mmap2(h, ST, &m), -EBADMSG);
        /* Too short for the fixed fields. */
        ((struct perf_event_header *) b.b)->size = 40;
        assert_int_equal(record_parse_mmap2(h, ST, &m), -EBADMSG);
}

static void test_comm_exec(void **state) {
        Buf b;
        RecordComm c;

        start(&b);
        put32x2(&b, 300, 301);
        put_str(&b, "worker");
        put_id(&b, 300, 301, 999, 1);
        const struct perf_event_header *h = finish(&b, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);

        assert_int_equal(record_parse_comm(h, ST, &c), 0);
        assert_int_equal(c.pid, 300);
        assert_int_equal(c.tid, 301);
        assert_string_equal(c.comm, "worker");
        assert_true(c.exec);
        assert_int_equal(c.id.time, 999);
        assert_int_equal(c.id.cpu, 1);
        assert_int_equal(record_parse_mmap2(h, ST, &(RecordMmap2) {}), -EINVAL);
}

static void test_fork_exit(void **state) {
        Buf b;
        RecordTask t;

        start(&b);
        put32x2(&b, 400, 399);  /* pid, ppid */
        put32x2(&b, 400, 399);  /* tid, ptid */
        put64(&b, 1234);
        put_id(&b, 400, 400, 1234, 0);
        const struct perf_event_header *h = finish(&b, PERF_RECORD_FORK, 0);
        assert_int_equal(record_parse_task(h, ST, &t), 0);
        assert_int_equal(t.pid, 400);
        assert_int_equal(t.ppid, 399);
        assert_int_equal(t.tid, 400);
        assert_int_equal(t.ptid, 399);
        assert_int_equal(t.time, 1234);

        ((struct perf_event_header *) b.b)->type = PERF_RECORD_EXIT;
        assert_int_equal(record_parse_task(h, ST, &t), 0);

        /* Only the trailer: the body is missing. */
        ((struct perf_event_header *) b.b)->size = 8 + 24;
        assert_int_equal(record_parse_task(h, ST, &t), -EBADMSG);
        /* Not even the trailer. */
        ((struct perf_event_header *) b.b)->size = 8 + 8;
        assert_int_equal(record_parse_task(h, ST, &t), -EBADMSG);
        assert_int_equal(record_time(h, ST), 0);
}

static void test_throttle(void **state) {
        Buf b;
        RecordThrottle t;

        start(&b);
        put64(&b, 55);
        put64(&b, 1);
        put64(&b, 2);
        put_id(&b, 0, 0, 55, 1);
        const struct perf_event_header *h = finish(&b, PERF_RECORD_THROTTLE, 0);
        assert_int_equal(record_parse_throttle(h, ST, &t), 0);
        assert_int_equal(t.time, 55);
        ((struct perf_event_header *) b.b)->type = PERF_RECORD_UNTHROTTLE;
        assert_int_equal(record_parse_throttle(h, ST, &t), 0);
}

/* Random bytes through the ring reader and every decoder: refused or decoded, never overread
 * (the sanitizer build checks the latter). */
static void test_garbage_ring(void **state) {
        static _Alignas(8) uint8_t mem[4096 + 2048];
        struct perf_event_mmap_page *pc = (struct perf_event_mmap_page *) mem;
        uint32_t x = 0xdecafbad;

        for (unsigned round = 0; round < 200; round++) {
                const struct perf_event_header *h;
                SamplerRing r;

                memset(mem, 0, 4096);
                for (size_t i = 4096; i < sizeof(mem); i++) {
                        x = x * 1103515245 + 12345;
                        mem[i] = (uint8_t) (x >> 16);
                }
                /* Make some headers plausible so the decoders get to run. */
                for (size_t off = 4096; off + 8 <= sizeof(mem); off += 64) {
                        struct perf_event_header *ph = (struct perf_event_header *) (mem + off);
                        x = x * 1103515245 + 12345;
                        ph->type = 1 + (x >> 16) % 15;
                        ph->size = (uint16_t) (8 * (1 + (x >> 8) % 16));
                }
                pc->data_head = 2048 * (1 + round % 3) + 8 * (round % 7);
                pc->data_tail = pc->data_head - 2048 + 8 * (round % 5);
                assert_int_equal(sampler_ring_init(&r, mem, 4096, 2048), 0);
                sampler_ring_begin(&r);
                while ((h = sampler_ring_next(&r))) {
                        RecordSample s;
                        RecordMmap2 m;
                        RecordComm c;
                        RecordTask t;
                        RecordLost l;
                        RecordThrottle th;

                        (void) record_time(h, ST);
                        if (record_parse_sample(h, ST, &s) >= 0)
                                for (uint64_t i = 0; i < s.nr; i++)
                                        x ^= (uint32_t) s.ips[i];
                        if (record_parse_mmap2(h, ST, &m) >= 0)
                                x ^= (uint32_t) strlen(m.filename);
                        if (record_parse_mmap(h, ST, &m) >= 0)
                                x ^= (uint32_t) strlen(m.filename);
                        if (record_parse_comm(h, ST, &c) >= 0)
                                x ^= (uint32_t) strlen(c.comm);
                        (void) record_parse_task(h, ST, &t);
                        (void) record_parse_lost(h, ST, &l);
                        (void) record_parse_throttle(h, ST, &th);
                }
                sampler_ring_end(&r);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_sample),
                cmocka_unit_test(test_sample_unwind),
                cmocka_unit_test(test_sample_no_user_cause),
                cmocka_unit_test(test_mmap2),
                cmocka_unit_test(test_comm_exec),
                cmocka_unit_test(test_fork_exit),
                cmocka_unit_test(test_throttle),
                cmocka_unit_test(test_garbage_ring),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
