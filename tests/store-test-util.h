/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Sample generators and comparison shared by the store tests: a deterministic pseudo-random
 * source, a pool of realistic names (kernel idle stacks, libc, unknown frames, odd comms), and a
 * collector that deep-copies what a reader hands back so it can be compared after the read.
 */
#pragma once

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile-sample.h"
#include "store/store-window.h"

typedef struct OwnedSample {
        Sample s;
        Frame frames[PROFILE_STACK_DEPTH_MAX];
        char *strings; /* everything the sample points to, one allocation */
} OwnedSample;

static inline uint64_t test_rand(uint64_t *state) {
        /* xorshift64*: deterministic, good enough for test data */
        *state ^= *state >> 12;
        *state ^= *state << 25;
        *state ^= *state >> 27;
        return *state * UINT64_C(2685821657736338717);
}

static const char *const test_symbols[] = {
        "native_safe_halt", "default_idle", "do_idle", "cpu_startup_entry", "[unknown]", "__libc_start_main",
        "main", "burn_cpu", "std::vector<int>::push_back(int const&)", "memcpy", "tcp_sendmsg",
        "sym;with;semicolons", "ext4_file_write_iter", "net/http.(*Client).Do",
};
static const char *const test_dsos[] = {
        "[kernel.kallsyms]", "/usr/lib/x86_64-linux-gnu/libc.so.6", "/usr/bin/burn", "[unknown]", "[ena]",
        "/tmp/x (deleted)",
};
static const char *const test_comms[] = { "swapper/0", "burn", "python3", "my prog", "x", "", "kworker/u4:1" };

/* Fills o with a pseudo-random sample at time t, cut to the microseconds a window keeps. */
static inline void test_make_sample(uint64_t *rng, uint64_t t, OwnedSample *o) {
        uint32_t depth = (uint32_t) (test_rand(rng) % 24);
        size_t nsym = sizeof test_symbols / sizeof test_symbols[0], ndso = sizeof test_dsos / sizeof test_dsos[0];

        memset(o, 0, sizeof *o);
        o->s = (Sample) {
                .t_ns = t - t % 1000,
                .cpu = (uint32_t) (test_rand(rng) % 8),
                .pid = 1000 + (uint32_t) (test_rand(rng) % 5),
                .comm = test_comms[test_rand(rng) % (sizeof test_comms / sizeof test_comms[0])],
                .period = test_rand(rng) % 4 == 0 ? 10309278 + test_rand(rng) % 1000 : 10309278,
                .n_frames = depth,
                .frames = o->frames,
        };
        o->s.tid = o->s.pid + (uint32_t) (test_rand(rng) % 3);
        for (uint32_t i = 0; i < depth; i++) {
                bool kernel = test_rand(rng) % 2;
                o->frames[i] = (Frame) {
                        .symbol = test_symbols[test_rand(rng) % nsym],
                        .dso = kernel ? "[kernel.kallsyms]" : test_dsos[1 + test_rand(rng) % (ndso - 1)],
                        .addr = (kernel ? UINT64_C(0xffffffff81000000) : UINT64_C(0x7f0000000000)) +
                                test_rand(rng) % 4096,
                        .offset = test_rand(rng) % 256,
                        .kernel = kernel,
                };
        }
}

/* Deep copy, so the sample outlives the reader's chunk. */
static inline void owned_sample_copy(OwnedSample *o, const Sample *s) {
        size_t need = strlen(s->comm) + 1, off = 0;

        for (uint32_t i = 0; i < s->n_frames; i++)
                need += strlen(s->frames[i].symbol) + strlen(s->frames[i].dso) + 2 +
                        (s->frames[i].build_id ? strlen(s->frames[i].build_id) + 1 : 0);
        memset(o, 0, sizeof *o);
        o->strings = malloc(need);
        o->s = *s;
        o->s.frames = o->frames;
#define COPY(dst, src)                                                                                       \
        do {                                                                                                 \
                size_t _l = strlen(src) + 1;                                                                 \
                memcpy(o->strings + off, (src), _l);                                                         \
                (dst) = o->strings + off;                                                                    \
                off += _l;                                                                                   \
        } while (0)
        COPY(o->s.comm, s->comm);
        for (uint32_t i = 0; i < s->n_frames; i++) {
                o->frames[i] = s->frames[i];
                COPY(o->frames[i].symbol, s->frames[i].symbol);
                COPY(o->frames[i].dso, s->frames[i].dso);
                if (s->frames[i].build_id)
                        COPY(o->frames[i].build_id, s->frames[i].build_id);
        }
#undef COPY
}

static inline bool sample_equal(const Sample *a, const Sample *b) {
        if (a->t_ns != b->t_ns || a->cpu != b->cpu || a->pid != b->pid || a->tid != b->tid ||
            a->period != b->period || a->n_frames != b->n_frames || strcmp(a->comm ?: "", b->comm ?: "") != 0)
                return false;
        for (uint32_t i = 0; i < a->n_frames; i++) {
                const Frame *x = &a->frames[i], *y = &b->frames[i];
                if (x->addr != y->addr || x->offset != y->offset || x->kernel != y->kernel ||
                    strcmp(x->symbol ?: "", y->symbol ?: "") != 0 || strcmp(x->dso ?: "", y->dso ?: "") != 0 ||
                    !x->build_id != !y->build_id || (x->build_id && strcmp(x->build_id, y->build_id) != 0))
                        return false;
        }
        return true;
}

typedef struct Collected {
        OwnedSample *v;
        size_t n, allocated;
} Collected;

static inline int collect_handler(const Sample *s, void *ud) {
        Collected *c = ud;
        if (c->n == c->allocated) {
                c->allocated = c->allocated ? c->allocated * 2 : 256;
                c->v = realloc(c->v, c->allocated * sizeof(OwnedSample));
                for (size_t i = 0; i < c->n; i++) /* the frames moved with the array */
                        c->v[i].s.frames = c->v[i].frames;
        }
        owned_sample_copy(&c->v[c->n++], s);
        return 0;
}

static inline void collected_done(Collected *c) {
        for (size_t i = 0; i < c->n; i++)
                free(c->v[i].strings);
        free(c->v);
        *c = (Collected) {};
}

static inline WindowHeaderInfo test_header_info(void) {
        return (WindowHeaderInfo) {
                .host = "testhost",
                .boot_id = "0123456789abcdef0123456789abcdef",
                .kernel_release = "6.1.0-test",
                .event = "cpu-clock",
                .freq_hz = 97,
                .n_cpus = 8,
                .clock = { .method = CLOCK_MAP_PERF_BRACKET, .perf_minus_mono_ns = -12345,
                           .realtime_minus_mono_ns = INT64_C(1795000000000000000), .error_ns = 2000,
                           .measured_mono_ns = 1000 },
        };
}
