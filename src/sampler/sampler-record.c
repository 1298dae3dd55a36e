/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * PERF_RECORD_* decoding. A cursor walks the record body, every read checked against the end the
 * header declares; strings must be NUL-terminated inside the record. The sample_id_all trailer
 * sits at the end of side-band records and holds, in sample_type order, only TID, TIME, ID,
 * STREAM_ID, CPU and IDENTIFIER: we compute its size from the end.
 */
#include <assert.h>
#include <errno.h>
#include <string.h>

#include "basic/macro.h"
#include "sampler/sampler-record.h"

typedef struct Cursor {
        const uint8_t *p, *end;
} Cursor;

static Cursor cursor_of(const struct perf_event_header *h) {
        return (Cursor) { .p = (const uint8_t *) (h + 1), .end = (const uint8_t *) h + h->size };
}

static bool cursor_u64(Cursor *c, uint64_t *ret) {
        if ((size_t) (c->end - c->p) < sizeof(uint64_t))
                return false;
        memcpy(ret, c->p, sizeof(uint64_t));
        c->p += sizeof(uint64_t);
        return true;
}

static bool cursor_u32_pair(Cursor *c, uint32_t *a, uint32_t *b) {
        uint32_t v[2];
        if ((size_t) (c->end - c->p) < sizeof(v))
                return false;
        memcpy(v, c->p, sizeof(v));
        c->p += sizeof(v);
        *a = v[0];
        *b = v[1];
        return true;
}

static size_t id_trailer_size(uint64_t st) {
        size_t n = 0;
        if (st & PERF_SAMPLE_TID)
                n += 8;
        if (st & PERF_SAMPLE_TIME)
                n += 8;
        if (st & PERF_SAMPLE_ID)
                n += 8;
        if (st & PERF_SAMPLE_STREAM_ID)
                n += 8;
        if (st & PERF_SAMPLE_CPU)
                n += 8;
        if (st & PERF_SAMPLE_IDENTIFIER)
                n += 8;
        return n;
}

int record_parse_id(const struct perf_event_header *h, uint64_t st, RecordId *ret) {
        size_t n = id_trailer_size(st);
        uint64_t skip;
        uint32_t res;
        Cursor c;

        if (h->size < sizeof(*h) + n)
                return -EBADMSG;
        c = (Cursor) { .p = (const uint8_t *) h + h->size - n, .end = (const uint8_t *) h + h->size };
        *ret = (RecordId) { .valid = true };
        if (st & PERF_SAMPLE_IDENTIFIER)
                (void) cursor_u64(&c, &skip);
        if (st & PERF_SAMPLE_TID)
                (void) cursor_u32_pair(&c, &ret->pid, &ret->tid);
        if (st & PERF_SAMPLE_TIME)
                (void) cursor_u64(&c, &ret->time);
        if (st & PERF_SAMPLE_ID)
                (void) cursor_u64(&c, &skip);
        if (st & PERF_SAMPLE_STREAM_ID)
                (void) cursor_u64(&c, &skip);
        if (st & PERF_SAMPLE_CPU)
                (void) cursor_u32_pair(&c, &ret->cpu, &res);
        return 0;
}

/* The body of a side-band record ends where its trailer begins. */
static Cursor body_of(const struct perf_event_header *h, uint64_t st) {
        Cursor c = cursor_of(h);
        size_t n = id_trailer_size(st);
        if ((size_t) (c.end - c.p) >= n)
                c.end -= n;
        else
                c.end = c.p;
        return c;
}

static int cursor_string(Cursor *c, const char **ret) {
        const uint8_t *nul;

        if (c->p >= c->end)
                return -EBADMSG;
        nul = memchr(c->p, 0, (size_t) (c->end - c->p));
        if (!nul)
                return -EBADMSG;
        *ret = (const char *) c->p;
        c->p = nul + 1;
        return 0;
}

int record_parse_sample(const struct perf_event_header *h, uint64_t st, RecordSample *ret) {
        Cursor c = cursor_of(h);
        RecordSample s = {};
        uint32_t res;

        if (h->type != PERF_RECORD_SAMPLE ||
            (st & ~(uint64_t) (SAMPLER_SAMPLE_TYPE_UNWIND | PERF_SAMPLE_CGROUP)) != SAMPLER_SAMPLE_TYPE)
                return -EINVAL;

        /* Field order is fixed by the ABI: IDENTIFIER, IP, TID, TIME, ADDR, ID, STREAM_ID, CPU, PERIOD, ... CALLCHAIN */
        if (!cursor_u64(&c, &s.ip) ||
            !cursor_u32_pair(&c, &s.id.pid, &s.id.tid) ||
            !cursor_u64(&c, &s.id.time) ||
            !cursor_u32_pair(&c, &s.id.cpu, &res) ||
            !cursor_u64(&c, &s.period) ||
            !cursor_u64(&c, &s.nr))
                return -EBADMSG;
        if (s.nr > (uint64_t) (c.end - c.p) / sizeof(uint64_t))
                return -EBADMSG;
        s.ips = (const uint64_t *) c.p; /* records are 8-byte aligned in the ring and in our copies */
        c.p += s.nr * sizeof(uint64_t);
        if (st & PERF_SAMPLE_REGS_USER) {
                if (!cursor_u64(&c, &s.regs_abi))
                        return -EBADMSG;
                /* With no user context (a kernel thread) the ABI is NONE and no registers follow.
                 * Else SAMPLER_REGS_USER_MASK's, in bit order. */
                uint64_t *regs[] = {
#if defined(__aarch64__)
                        &s.user_bp, &s.user_lr, &s.user_sp, &s.user_ip,
#else
                        &s.user_scratch[0], &s.user_bx, &s.user_scratch[1], &s.user_scratch[2], &s.user_scratch[3],
                        &s.user_scratch[4], &s.user_bp, &s.user_sp, &s.user_ip, &s.user_scratch[5],
                        &s.user_scratch[6], &s.user_scratch[7], &s.user_scratch[8],
#endif
                };
                static_assert(ELEMENTSOF(regs) == __builtin_popcountll(SAMPLER_REGS_USER_MASK),
                              "one field per register asked for");
                for (size_t i = 0; s.regs_abi != PERF_SAMPLE_REGS_ABI_NONE && i < ELEMENTSOF(regs); i++)
                        if (!cursor_u64(&c, regs[i]))
                                return -EBADMSG;
        }
        if (st & PERF_SAMPLE_STACK_USER) {
                if (!cursor_u64(&c, &s.stack_size))
                        return -EBADMSG;
                if (s.stack_size > 0) {
                        if (s.stack_size > (uint64_t) (c.end - c.p))
                                return -EBADMSG;
                        s.stack = c.p;
                        c.p += s.stack_size;
                        if (!cursor_u64(&c, &s.stack_dyn_size) || s.stack_dyn_size > s.stack_size)
                                return -EBADMSG;
                }
        }
        if ((st & PERF_SAMPLE_CGROUP) && !cursor_u64(&c, &s.cgroup))
                return -EBADMSG;
        s.id.valid = true;
        s.kernel_ip = (h->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
        *ret = s;
        return 0;
}

int record_parse_mmap2(const struct perf_event_header *h, uint64_t st, RecordMmap2 *ret) {
        Cursor c = body_of(h, st);
        RecordMmap2 m = {};
        int r;

        if (h->type != PERF_RECORD_MMAP2)
                return -EINVAL;
        if (!cursor_u32_pair(&c, &m.pid, &m.tid) ||
            !cursor_u64(&c, &m.addr) ||
            !cursor_u64(&c, &m.len) ||
            !cursor_u64(&c, &m.pgoff))
                return -EBADMSG;
        /* With PERF_RECORD_MISC_MMAP_BUILD_ID these 24 bytes hold a build-id instead; we never ask for it. */
        if (!cursor_u32_pair(&c, &m.maj, &m.min) ||
            !cursor_u64(&c, &m.ino) ||
            !cursor_u64(&c, &m.ino_gen) ||
            !cursor_u32_pair(&c, &m.prot, &m.flags))
                return -EBADMSG;
        if (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID)
                m.maj = m.min = 0, m.ino = 0, m.ino_gen = 0;
        r = cursor_string(&c, &m.filename);
        if (r < 0)
                return r;
        if (m.len == 0 || m.addr + m.len < m.addr)
                return -EBADMSG;
        r = record_parse_id(h, st, &m.id);
        if (r < 0)
                return r;
        *ret = m;
        return 0;
}

int record_parse_mmap(const struct perf_event_header *h, uint64_t st, RecordMmap2 *ret) {
        Cursor c = body_of(h, st);
        RecordMmap2 m = {};
        int r;

        if (h->type != PERF_RECORD_MMAP)
                return -EINVAL;
        if (!cursor_u32_pair(&c, &m.pid, &m.tid) ||
            !cursor_u64(&c, &m.addr) ||
            !cursor_u64(&c, &m.len) ||
            !cursor_u64(&c, &m.pgoff))
                return -EBADMSG;
        r = cursor_string(&c, &m.filename);
        if (r < 0)
                return r;
        if (m.len == 0 || m.addr + m.len < m.addr)
                return -EBADMSG;
        m.prot = 0x4; /* PROT_EXEC: without mmap_data the kernel only reports executable mappings */
        r = record_parse_id(h, st, &m.id);
        if (r < 0)
                return r;
        *ret = m;
        return 0;
}

int record_parse_comm(const struct perf_event_header *h, uint64_t st, RecordComm *ret) {
        Cursor c = body_of(h, st);
        RecordComm m = {};
        int r;

        if (h->type != PERF_RECORD_COMM)
                return -EINVAL;
        if (!cursor_u32_pair(&c, &m.pid, &m.tid))
                return -EBADMSG;
        r = cursor_string(&c, &m.comm);
        if (r < 0)
                return r;
        m.exec = h->misc & PERF_RECORD_MISC_COMM_EXEC;
        r = record_parse_id(h, st, &m.id);
        if (r < 0)
                return r;
        *ret = m;
        return 0;
}

int record_parse_task(const struct perf_event_header *h, uint64_t st, RecordTask *ret) {
        Cursor c = body_of(h, st);
        RecordTask t = {};
        int r;

        if (!(h->type == PERF_RECORD_FORK || h->type == PERF_RECORD_EXIT))
                return -EINVAL;
        if (!cursor_u32_pair(&c, &t.pid, &t.ppid) ||
            !cursor_u32_pair(&c, &t.tid, &t.ptid) ||
            !cursor_u64(&c, &t.time))
                return -EBADMSG;
        r = record_parse_id(h, st, &t.id);
        if (r < 0)
                return r;
        *ret = t;
        return 0;
}

int record_parse_cgroup(const struct perf_event_header *h, uint64_t st, RecordCgroup *ret) {
        Cursor c = body_of(h, st);
        RecordCgroup g = {};
        int r;

        if (h->type != PERF_RECORD_CGROUP)
                return -EINVAL;
        if (!cursor_u64(&c, &g.id))
                return -EBADMSG;
        r = cursor_string(&c, &g.path);
        if (r < 0)
                return r;
        r = record_parse_id(h, st, &g.id_trailer);
        if (r < 0)
                return r;
        *ret = g;
        return 0;
}

int record_parse_lost(const struct perf_event_header *h, uint64_t st, RecordLost *ret) {
        Cursor c = body_of(h, st);
        RecordLost l = {};
        int r;

        if (h->type != PERF_RECORD_LOST)
                return -EINVAL;
        if (!cursor_u64(&c, &l.event_id) || !cursor_u64(&c, &l.lost))
                return -EBADMSG;
        r = record_parse_id(h, st, &l.id);
        if (r < 0)
                return r;
        *ret = l;
        return 0;
}

int record_parse_throttle(const struct perf_event_header *h, uint64_t st, RecordThrottle *ret) {
        Cursor c = body_of(h, st);
        RecordThrottle t = {};
        int r;

        if (h->type != PERF_RECORD_THROTTLE && h->type != PERF_RECORD_UNTHROTTLE)
                return -EINVAL;
        if (!cursor_u64(&c, &t.time) || !cursor_u64(&c, &t.event_id) || !cursor_u64(&c, &t.stream_id))
                return -EBADMSG;
        r = record_parse_id(h, st, &t.id);
        if (r < 0)
                return r;
        *ret = t;
        return 0;
}

uint64_t record_time(const struct perf_event_header *h, uint64_t st) {
        RecordId id;

        if (h->type == PERF_RECORD_SAMPLE) {
                /* ip, pid and tid, then the time: read in place, the rest left to the parse that
                 * follows (a sample ends in its stack copy, and a whole parse here read every
                 * sample's fields twice: 2-4% of the daemon's CPU). */
                Cursor c = cursor_of(h);
                uint64_t ip, t;
                uint32_t pid, tid;

                if ((st & ~(uint64_t) (SAMPLER_SAMPLE_TYPE_UNWIND | PERF_SAMPLE_CGROUP)) != SAMPLER_SAMPLE_TYPE)
                        return 0;
                return cursor_u64(&c, &ip) && cursor_u32_pair(&c, &pid, &tid) && cursor_u64(&c, &t) ? t : 0;
        }
        return record_parse_id(h, st, &id) >= 0 ? id.time : 0;
}
