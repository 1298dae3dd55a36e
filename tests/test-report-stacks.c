/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * report-stacks: samples and baseline stacks written as report.html's data and decoded back here
 * the way report.js decodes them (base64, LEB128 varints, parent deltas, per-CPU time steps), so
 * every sample comes back with its time, CPU and folded stack; and the page's template gets the
 * title escaped and no '<' inside the data.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests.h"

#include "basic/json-reader.h"
#include "basic/string-util.h"
#include "basic/time-util.h"
#include "profile/profile-fold.h"
#include "report/report-internal.h"
#include "report/report-stacks.h"
#include "store/ring-store.h"
#include "store-test-util.h"

static size_t unbase64(const char *s, uint8_t *out) {
        static const char table[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        size_t n = 0;
        uint32_t v = 0;
        int bits = 0;

        for (; *s && *s != '='; s++) {
                const char *p = strchr(table, *s);
                assert_non_null(p);
                v = (v << 6) | (uint32_t) (p - table);
                bits += 6;
                if (bits >= 8) {
                        bits -= 8;
                        out[n++] = (uint8_t) (v >> bits);
                }
        }
        return n;
}

static uint64_t varint(const uint8_t *a, size_t *p) {
        uint64_t x = 0;
        unsigned shift = 0;
        uint8_t b;
        do {
                b = a[(*p)++];
                x |= (uint64_t) (b & 0x7f) << shift;
                shift += 7;
        } while (b & 0x80);
        return x;
}

typedef struct Decoded {
        JsonValue *doc;
        size_t n_nodes;
        uint64_t *parent, *frame;
        uint64_t *stack_node;
        uint64_t n_samples, t[1024], cpu[1024], node[1024];
} Decoded;

static const char *frame_name(const Decoded *d, uint64_t f) {
        return json_string_value(json_array_get(json_object_get(d->doc, "frames"), f));
}

/* The folded key of a node, rebuilt from the tree. */
static void node_key(const Decoded *d, uint64_t node, char *buf, size_t l) {
        const char *parts[64];
        size_t n = 0;
        buf[0] = '\0';
        for (; node > 0; node = d->parent[node])
                parts[n++] = frame_name(d, d->frame[node]);
        while (n > 0) {
                strncat(buf, parts[--n], l - strlen(buf) - 1);
                if (n > 0)
                        strncat(buf, ";", l - strlen(buf) - 1);
        }
}

static void decode(const char *json, Decoded *d) {
        static uint8_t buf[1 << 16];
        uint64_t t0, q, n_nodes, n_stacks;
        size_t n, p;

        assert_int_equal(json_parse(json, strlen(json), 16, &d->doc, NULL), 0);
        assert_true(json_u64_value(json_object_get(d->doc, "t0_us"), &t0));
        assert_true(json_u64_value(json_object_get(d->doc, "quantum_us"), &q));
        assert_true(json_u64_value(json_object_get(d->doc, "n_nodes"), &n_nodes));
        assert_true(json_u64_value(json_object_get(d->doc, "n_stacks"), &n_stacks));
        d->n_nodes = n_nodes;
        d->parent = calloc(n_nodes, sizeof(uint64_t));
        d->frame = calloc(n_nodes, sizeof(uint64_t));
        d->stack_node = calloc(n_stacks + 1, sizeof(uint64_t));
        n = unbase64(json_string_value(json_object_get(d->doc, "nodes")), buf);
        p = 0;
        for (size_t i = 1; i < n_nodes; i++) {
                d->parent[i] = i - varint(buf, &p);
                d->frame[i] = varint(buf, &p);
                assert_true(d->parent[i] < i);
        }
        assert_int_equal(p, n);
        n = unbase64(json_string_value(json_object_get(d->doc, "stacks")), buf);
        p = 0;
        for (size_t i = 0; i < n_stacks; i++)
                d->stack_node[i] = varint(buf, &p);
        n = unbase64(json_string_value(json_object_get(d->doc, "samples")), buf);
        p = 0;
        while (p < n) {
                uint64_t cpu = varint(buf, &p), k = varint(buf, &p), t = t0;
                for (uint64_t i = 0; i < k; i++) {
                        t += varint(buf, &p) * q;
                        d->t[d->n_samples] = t;
                        d->cpu[d->n_samples] = cpu;
                        d->node[d->n_samples] = d->stack_node[varint(buf, &p)];
                        d->n_samples++;
                }
        }
}

static void decoded_done(Decoded *d) {
        json_value_free(d->doc);
        free(d->parent);
        free(d->frame);
        free(d->stack_node);
}

static void test_roundtrip(void **state) {
        _cleanup_(report_stacks_freep) ReportStacks *s = report_stacks_new();
        Frame f1[] = { { .symbol = "leaf", .dso = "/bin/x" }, { .symbol = "main", .dso = "/bin/x" } };
        Frame f2[] = { { .symbol = "other;fn", .dso = "/bin/x" }, { .symbol = "main", .dso = "/bin/x" } };
        Frame f3[] = { { .symbol = "[unknown]", .dso = "/usr/lib/libc.so.6" } };
        /* The producer's memo of each stack, as a window reader hands them out: the same stack
         * under another comm shares its slot and must still be folded under its own comm. */
        SampleStackSlot slot1 = {}, slot2 = {}, slot3 = {};
        struct {
                uint64_t t_ns;
                uint32_t cpu;
                const char *comm;
                const Frame *frames;
                uint32_t n;
                SampleStackSlot *slot;
                const char *key;
        } in[] = {
                { 5003000000000, 1, "x", f1, 2, &slot1, "x_;main;leaf" },
                { 5003010000000, 0, "x", f1, 2, &slot1, "x_;main;leaf" },
                { 5003020000000, 1, "x", f2, 2, &slot2, "x_;main;other:fn" },
                { 5004020000000, 1, "two words", f3, 1, &slot3, "two_words;[libc.so.6]" },
                { 5004030000000, 0, "x", f1, 2, &slot1, "x_;main;leaf" },
                { 5004040000000, 0, "two words", f1, 2, &slot1, "two_words;main;leaf" },
                { 5004050000000, 0, "x", f1, 2, &slot1, "x_;main;leaf" },
                { 5004060000000, 1, "x", f1, 2, NULL, "x_;main;leaf" },
        };
        JsonWriter w;
        Decoded d = {};
        char key[512];
        int r = 0;

        assert_non_null(s);
        for (size_t i = 0; i < ELEMENTSOF(in); i++) {
                Sample smp = { .t_ns = in[i].t_ns, .cpu = in[i].cpu, .comm = in[i].comm, .n_frames = in[i].n,
                               .frames = in[i].frames, .stack_slot = in[i].slot };
                assert_int_equal(report_stacks_add_sample(s, &smp), 0);
        }
        assert_int_equal(report_stacks_add_baseline(s, "x_;main;leaf", 7), 0);
        assert_int_equal(report_stacks_add_baseline(s, "y;only;in;baseline", 3), 0);
        assert_int_equal(report_stacks_n_samples(s), ELEMENTSOF(in));
        assert_int_equal(report_stacks_first_us(s), 5003000000);

        json_writer_init(&w, false);
        json_begin_object(&w);
        assert_int_equal(report_stacks_write_json(s, &w), 0);
        json_end_object(&w);
        _cleanup_free_ char *json = json_finish(&w, &r);
        assert_non_null(json);
        decode(json, &d);

        uint64_t t0 = 0, q = 0, bt = 0;
        assert_true(json_u64_value(json_object_get(d.doc, "t0_us"), &t0));
        assert_int_equal(t0, 5003000000); /* floor of the first sample's second */
        assert_true(json_u64_value(json_object_get(d.doc, "quantum_us"), &q));
        assert_int_equal(q, 10000); /* every time is a multiple of 10 ms from t0 */
        assert_true(json_u64_value(json_object_get(d.doc, "baseline_total"), &bt));
        assert_int_equal(bt, 10);
        assert_int_equal(d.n_samples, ELEMENTSOF(in));
        /* per CPU, ascending; each in time order */
        for (size_t i = 0, k = 0; i < ELEMENTSOF(in) * 2; i++) {
                size_t j = i % ELEMENTSOF(in);
                if (in[j].cpu != (i < ELEMENTSOF(in) ? 0u : 1u))
                        continue;
                assert_int_equal(d.t[k], in[j].t_ns / 1000);
                assert_int_equal(d.cpu[k], in[j].cpu);
                node_key(&d, d.node[k], key, sizeof key);
                assert_string_equal(key, in[j].key);
                k++;
        }
        /* the baseline-only stack is in the tree, with its count */
        {
                static uint8_t buf[4096];
                size_t n = unbase64(json_string_value(json_object_get(d.doc, "baseline")), buf), p = 0;
                bool found = false;
                while (p < n) {
                        uint64_t node = varint(buf, &p), c = varint(buf, &p);
                        node_key(&d, node, key, sizeof key);
                        if (streq(key, "y;only;in;baseline")) {
                                assert_int_equal(c, 3);
                                found = true;
                        } else {
                                assert_string_equal(key, "x_;main;leaf");
                                assert_int_equal(c, 7);
                        }
                }
                assert_true(found);
        }
        decoded_done(&d);
}

/* The tree's bound: a stack that would grow it past its nodes or its names' bytes is cut at its
 * last frame in the tree (the root, for a new comm), and counted; every sample keeps its time and
 * CPU, and a cut stack remembered in the producer's slot is counted again. */
static void test_cut(void **state) {
        _cleanup_(report_stacks_freep) ReportStacks *s = report_stacks_new();
        Frame l1[] = { { .symbol = "l1", .dso = "/bin/a" }, { .symbol = "main", .dso = "/bin/a" } };
        Frame l2[] = { { .symbol = "l2", .dso = "/bin/a" }, { .symbol = "main", .dso = "/bin/a" } };
        Frame l3[] = { { .symbol = "l3", .dso = "/bin/a" }, { .symbol = "main", .dso = "/bin/a" } };
        SampleStackSlot slot = {};
        struct {
                const char *comm;
                Frame *frames;
                SampleStackSlot *slot;
                const char *key;
        } in[] = {
                { "ab", l1, NULL, "ab;main;l1" }, { "ab", l2, NULL, "ab;main;l2" }, /* 4 nodes and the root */
                { "ab", l3, &slot, "ab;main" }, { "ab", l3, &slot, "ab;main" }, /* cut, twice */
                { "cd", l1, NULL, "" },                                            /* a new comm: at the root */
        };
        uint64_t v, t0;
        JsonWriter w;
        Decoded d = {};
        char key[512];
        int r = 0;

        assert_non_null(s);
        report_stacks_set_limits(s, 5, 1 << 20);
        for (size_t i = 0; i < ELEMENTSOF(in); i++) {
                Sample smp = { .t_ns = 7000000000000 + i * 1000000, .cpu = (uint32_t) i % 2, .comm = in[i].comm, .n_frames = 2,
                               .frames = in[i].frames, .stack_slot = in[i].slot };
                assert_int_equal(report_stacks_add_sample(s, &smp), 0);
        }
        assert_int_equal(report_stacks_add_baseline(s, "ab;main;l4", 5), 0);
        assert_int_equal(report_stacks_add_baseline(s, "ab;main;l1", 2), 0);

        json_writer_init(&w, false);
        json_begin_object(&w);
        assert_int_equal(report_stacks_write_json(s, &w), 0);
        json_end_object(&w);
        _cleanup_free_ char *json = json_finish(&w, &r);
        assert_non_null(json);
        decode(json, &d);
        assert_int_equal(d.n_nodes, 5);
        const JsonValue *cut = json_object_get(d.doc, "cut");
        assert_true(json_u64_value(json_object_get(cut, "nodes_max"), &v));
        assert_int_equal(v, 5);
        assert_true(json_u64_value(json_object_get(cut, "stacks"), &v));
        assert_int_equal(v, 3); /* ab;main;l3, cd;main;l1, ab;main;l4 */
        assert_true(json_u64_value(json_object_get(cut, "samples"), &v));
        assert_int_equal(v, 3);
        assert_true(json_u64_value(json_object_get(cut, "baseline"), &v));
        assert_int_equal(v, 5);
        assert_true(json_u64_value(json_object_get(d.doc, "t0_us"), &t0));
        assert_int_equal(d.n_samples, ELEMENTSOF(in));
        for (size_t k = 0; k < d.n_samples; k++) {
                size_t i = (size_t) (d.t[k] - 7000000000) / 1000;
                assert_true(i < ELEMENTSOF(in));
                assert_int_equal(d.cpu[k], i % 2);
                node_key(&d, d.node[k], key, sizeof key);
                assert_string_equal(key, in[i].key);
        }
        decoded_done(&d);

        /* the names' bytes: "ab", "main", "l1" fit in 8, "l2" does not */
        _cleanup_(report_stacks_freep) ReportStacks *s2 = report_stacks_new();
        assert_non_null(s2);
        report_stacks_set_limits(s2, 100, 8);
        for (size_t i = 0; i < 2; i++) {
                Sample smp = { .t_ns = 7000000000000 + i * 1000000, .comm = "ab", .n_frames = 2, .frames = i ? l2 : l1 };
                assert_int_equal(report_stacks_add_sample(s2, &smp), 0);
        }
        json_writer_init(&w, false);
        json_begin_object(&w);
        assert_int_equal(report_stacks_write_json(s2, &w), 0);
        json_end_object(&w);
        _cleanup_free_ char *json2 = json_finish(&w, &r);
        assert_non_null(json2);
        decode(json2, &d);
        assert_int_equal(d.n_nodes, 4);
        assert_non_null(json_array_get(json_object_get(d.doc, "frames"), 2));
        assert_null(json_array_get(json_object_get(d.doc, "frames"), 3));
        assert_true(json_u64_value(json_object_get(json_object_get(d.doc, "cut"), "samples"), &v));
        assert_int_equal(v, 1);
        decoded_done(&d);

        /* a name the tree has costs no bytes: "ab;l1" grows it by a node, not past its 8 bytes */
        Frame l1_only[] = { { .symbol = "l1", .dso = "/bin/a" } };
        Sample smp = { .t_ns = 7000000002000, .comm = "ab", .n_frames = 1, .frames = l1_only };
        assert_int_equal(report_stacks_add_sample(s2, &smp), 0);
        json_writer_init(&w, false);
        json_begin_object(&w);
        assert_int_equal(report_stacks_write_json(s2, &w), 0);
        json_end_object(&w);
        _cleanup_free_ char *json3 = json_finish(&w, &r);
        assert_non_null(json3);
        decode(json3, &d);
        assert_int_equal(d.n_nodes, 5);
        assert_true(json_u64_value(json_object_get(json_object_get(d.doc, "cut"), "stacks"), &v));
        assert_int_equal(v, 1);
        decoded_done(&d);
}

/* A tree that reaches its bound, read from real windows: the samples of the focus (the seconds the
 * page opens with, around the event) keep their whole stacks though they come late in the slice;
 * those cut are elsewhere, each a prefix of its stack. */
static void test_cut_focus(void **state) {
        static const char *const names[] = { "f0", "f1", "f2", "f3" };
        static char *keys[600];
        static Decoded d;
        const uint64_t t0 = UINT64_C(7000000000000), step = 10000000;
        WindowHeaderInfo info = test_header_info();
        RingOptions o = { .window_usec = 60 * USEC_PER_SEC };
        RingStore *rs = NULL;
        WindowInfo *windows = NULL;
        size_t n_windows = 0, n_cut = 0;
        char tmpdir[] = "/tmp/test-report-stacks.XXXXXX", ring[64], cmd[96], key[512];
        StrBuf kb = STRBUF_NULL;
        JsonWriter w;
        int r = 0;

        assert_non_null(mkdtemp(tmpdir));
        snprintf(ring, sizeof ring, "%s/ring", tmpdir);
        assert_int_equal(ring_store_open(ring, &o, &info, &rs), 0);
        for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
                /* a stack of its own for each sample: the base-4 digits of i, the lowest the leaf */
                Frame f[6];
                for (size_t k = 0; k < ELEMENTSOF(f); k++)
                        f[k] = (Frame) { .symbol = names[(i >> (2 * k)) & 3], .dso = "/bin/app", .addr = 0x401000 };
                Sample smp = { .t_ns = t0 + i * step, .cpu = (uint32_t) i % 2, .pid = 10, .tid = 10, .comm = "app",
                               .period = 1, .n_frames = ELEMENTSOF(f), .frames = f };
                assert_int_equal(ring_store_add_sample(rs, &smp), 0);
                assert_int_equal(profile_fold_key(&smp, &kb), 0);
                keys[i] = strndup(kb.data, kb.len);
                if (i % 100 == 99)
                        assert_int_equal(ring_store_flush(rs), 0);
        }
        ring_store_free(rs);
        strbuf_done(&kb);
        assert_int_equal(ring_list_windows(ring, false, &windows, &n_windows), 0);
        _cleanup_free_ char **paths = calloc(n_windows, sizeof(char *));
        assert_non_null(paths);
        for (size_t i = 0; i < n_windows; i++)
                paths[i] = windows[i].path;

        _cleanup_(report_stacks_freep) ReportStacks *s = report_stacks_new();
        assert_non_null(s);
        report_stacks_set_limits(s, 200, 1 << 20);
        /* the focus: samples 400 to 499 */
        assert_int_equal(report_read_samples(s, paths, n_windows, t0, t0 + 599 * step, t0 + 400 * step, t0 + 499 * step,
                                             NULL, NULL),
                         0);
        json_writer_init(&w, false);
        json_begin_object(&w);
        assert_int_equal(report_stacks_write_json(s, &w), 0);
        json_end_object(&w);
        _cleanup_free_ char *json = json_finish(&w, &r);
        assert_non_null(json);
        decode(json, &d);
        assert_int_equal(d.n_nodes, 200);
        assert_int_equal(d.n_samples, ELEMENTSOF(keys));
        for (size_t k = 0; k < d.n_samples; k++) {
                size_t i = (size_t) ((d.t[k] - t0 / 1000) / (step / 1000));
                assert_true(i < ELEMENTSOF(keys));
                node_key(&d, d.node[k], key, sizeof key);
                if (i >= 400 && i <= 499)
                        assert_string_equal(key, keys[i]);
                else if (!streq(key, keys[i])) {
                        assert_true(startswith(keys[i], key));
                        n_cut++;
                }
        }
        assert_true(n_cut > 0);
        decoded_done(&d);
        for (size_t i = 0; i < ELEMENTSOF(keys); i++)
                free(keys[i]);
        window_info_array_free(windows, n_windows);
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
        assert_int_equal(system(cmd), 0);
}

/* The heap in use, as glibc counts it; 0 where another allocator (ASan's) serves malloc. */
static size_t heap_in_use(void) {
        struct mallinfo2 mi = mallinfo2();
        return mi.uordblks + mi.hblkhd;
}

/* The bound holds the writer's memory too: a deep stack cut short costs about what its sample
 * does, not its folded key (a JVM's 100 frames of long names, kilobytes each, in a slice of
 * hundreds of thousands of distinct stacks). Cut stacks stay counted once each. */
static void test_cut_memory(void **state) {
        static char names[100][48], leaf[48];
        Frame f[ELEMENTSOF(names) + 1];
        const size_t n = 4000;
        size_t before;
        bool measured;
        JsonWriter w;
        uint64_t v;
        int r = 0;

        _cleanup_free_ char *probe = malloc(8 << 20);
        assert_non_null(probe);
        memset(probe, 1, 8 << 20);
        before = heap_in_use();
        probe = mfree(probe);
        measured = before - heap_in_use() >= (8 << 20); /* not where malloc is not glibc's */
        for (size_t k = 0; k < ELEMENTSOF(names); k++) {
                snprintf(names[k], sizeof names[k], "org.example.service.Handler.frame%03zu", k);
                f[k + 1] = (Frame) { .symbol = names[k], .dso = "/bin/app" };
        }
        f[0] = (Frame) { .symbol = leaf, .dso = "/bin/app" };

        _cleanup_(report_stacks_freep) ReportStacks *s = report_stacks_new();
        assert_non_null(s);
        report_stacks_set_limits(s, ELEMENTSOF(f) + 2, 1 << 20); /* the root, the comm, the first stack */
        before = heap_in_use();
        for (size_t i = 0; i < n; i++) {
                snprintf(leaf, sizeof leaf, "leaf%06zu", i);
                Sample smp = { .t_ns = 7000000000000 + i * 1000000, .comm = "app", .n_frames = ELEMENTSOF(f), .frames = f };
                assert_int_equal(report_stacks_add_sample(s, &smp), 0);
        }
        /* 4 KiB a key: 16 MiB were the keys kept */
        assert_true(!measured || heap_in_use() - before < 2u << 20);
        assert_int_equal(report_stacks_add_baseline(s, "app;leaf000007", 1), 0);
        snprintf(leaf, sizeof leaf, "leaf%06u", 7);
        Sample again = { .t_ns = 7000000000000 + n * 1000000, .comm = "app", .n_frames = ELEMENTSOF(f), .frames = f };
        assert_int_equal(report_stacks_add_sample(s, &again), 0);

        json_writer_init(&w, false);
        json_begin_object(&w);
        assert_int_equal(report_stacks_write_json(s, &w), 0);
        json_end_object(&w);
        _cleanup_free_ char *json = json_finish(&w, &r);
        assert_non_null(json);
        _cleanup_(json_value_freep) JsonValue *doc = NULL;
        assert_int_equal(json_parse(json, strlen(json), 16, &doc, NULL), 0);
        const JsonValue *cut = json_object_get(doc, "cut");
        assert_true(json_u64_value(json_object_get(cut, "stacks"), &v));
        assert_int_equal(v, n); /* all but the first, and one in the baseline; the repeat not again */
        assert_true(json_u64_value(json_object_get(cut, "samples"), &v));
        assert_int_equal(v, n);
}

static void test_html(void **state) {
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);

        assert_non_null(f);
        assert_int_equal(report_html_write(f, "a <b> & \"c\"", "{\"s\":\"</script><script>x\"}"), 0);
        fclose(f);
        assert_non_null(strstr(buf, "<title>a &lt;b&gt; &amp; &quot;c&quot;</title>"));
        assert_non_null(strstr(buf, "{\"s\":\"\\u003c/script>\\u003cscript>x\"}"));
        assert_null(strstr(buf, "</script><script>x"));
        assert_null(strstr(buf, "@DATA@"));
        assert_null(strstr(buf, "/*@JS@*/"));
        assert_non_null(strstr(buf, "default-src 'none'"));
        assert_null(strstr(buf, "http://"));
        assert_null(strstr(buf, "https://"));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_roundtrip),
                cmocka_unit_test(test_cut),
                cmocka_unit_test(test_cut_focus),
                cmocka_unit_test(test_cut_memory),
                cmocka_unit_test(test_html),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
