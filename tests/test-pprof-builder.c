/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The pprof builder: strings, mappings, functions, locations and labels are interned once; the
 * encoded Profile decodes with protobuf-c into what go tool pprof expects (string_table[0] "",
 * the two sample types, kernel frames in [kernel.kallsyms], the per-sample labels).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "basic/string-util.h"
#include "pprof/pprof-builder.h"
#include "pprof/profile.pb-c.h"
#include "tests.h"

static const Frame user_leaf = { .symbol = "burn_leaf", .dso = "/usr/bin/burn", .addr = 0x401010 };
static const Frame user_mid = { .symbol = "burn_middle", .dso = "/usr/bin/burn", .addr = 0x401100 };
static const Frame user_unknown = { .symbol = "[unknown]", .dso = "/usr/lib/libfoo.so", .addr = 0x7f0000001000 };
static const Frame kernel_leaf = { .symbol = "native_safe_halt", .dso = "[kernel.kallsyms]", .addr = 0xffffffff81000010,
                                   .kernel = true };
static const Frame kernel_nodso = { .symbol = "do_idle", .dso = NULL, .addr = 0xffffffff81000200, .kernel = true };

static const char *str(const Perftools__Profiles__Profile *p, int64_t i) {
        assert_true(i >= 0 && (size_t) i < p->n_string_table);
        return p->string_table[i];
}

static Perftools__Profiles__Profile *decode(PprofBuilder *b) {
        _cleanup_free_ uint8_t *buf = NULL;
        size_t n;

        assert_int_equal(pprof_builder_encode(b, false, &buf, &n), 0);
        Perftools__Profiles__Profile *p = perftools__profiles__profile__unpack(NULL, n, buf);
        assert_non_null(p);
        return p;
}

static const Perftools__Profiles__Label *label(const Perftools__Profiles__Profile *p,
                                               const Perftools__Profiles__Sample *s, const char *key) {
        for (size_t i = 0; i < s->n_label; i++)
                if (streq(str(p, s->label[i]->key), key))
                        return s->label[i];
        return NULL;
}

static void test_same_frames_are_interned_once(void **state) {
        _cleanup_(pprof_builder_freep) PprofBuilder *b = NULL;
        const Frame a[] = { user_leaf, user_mid }, c[] = { user_unknown, user_mid }, k[] = { kernel_leaf, kernel_nodso };
        PprofBuilderStats st;

        assert_int_equal(pprof_builder_new(10309278, &b), 0);
        for (int i = 0; i < 100; i++) {
                Sample s = { .t_ns = 1000 + i, .cpu = i % 2, .pid = 42, .tid = 43, .comm = "burn", .n_frames = 2,
                             .frames = i % 3 == 0 ? c : i % 3 == 1 ? a : k };
                assert_int_equal(pprof_builder_add_sample(b, &s, 1000 + i, NULL, 0), 0);
        }
        pprof_builder_get_stats(b, &st);
        assert_int_equal(st.samples, 100);
        assert_int_equal(st.locations, 5);  /* every distinct (mapping, address, function) once */
        assert_int_equal(st.functions, 5);
        assert_int_equal(st.mappings, 3);   /* burn, libfoo.so, [kernel.kallsyms] (both kernel frames) */
        /* cpu 0 and 1, pid, tid, comm: shared labels, not one per sample. */
        assert_int_equal(st.labels, 5);
}

static void test_profile_decodes_as_pprof_expects(void **state) {
        _cleanup_(pprof_builder_freep) PprofBuilder *b = NULL;
        const Frame k[] = { kernel_leaf, kernel_nodso, user_unknown };
        const PprofLabel common[] = { { .key = "host", .str = "node-7" }, { .key = "rule", .str = "ena-reset" } };
        Sample s = { .t_ns = 5, .cpu = 3, .pid = 100, .tid = 101, .comm = "kworker 1", .n_frames = 3, .frames = k };

        assert_int_equal(pprof_builder_new(1000000, &b), 0);
        assert_int_equal(pprof_builder_set_common_labels(b, common, 2), 0);
        assert_int_equal(pprof_builder_add_comment(b, "incident X, rule ena-reset"), 0);
        pprof_builder_set_time(b, 1700000000000000000, 2000000000);
        const PprofLabel extra[] = { { .key = "service", .str = "nginx.service" } };
        assert_int_equal(pprof_builder_add_sample(b, &s, 1700000000500000000, extra, 1), 0);

        Perftools__Profiles__Profile *p = decode(b);
        assert_string_equal(p->string_table[0], "");
        assert_int_equal(p->n_sample_type, 2);
        assert_string_equal(str(p, p->sample_type[0]->type), "samples");
        assert_string_equal(str(p, p->sample_type[0]->unit), "count");
        assert_string_equal(str(p, p->sample_type[1]->type), "cpu");
        assert_string_equal(str(p, p->sample_type[1]->unit), "nanoseconds");
        assert_int_equal(p->period, 1000000);
        assert_string_equal(str(p, p->period_type->type), "cpu");
        assert_int_equal(p->time_nanos, 1700000000000000000);
        assert_int_equal(p->duration_nanos, 2000000000);
        assert_int_equal(p->n_comment, 1);
        assert_string_equal(str(p, p->comment[0]), "incident X, rule ena-reset");

        assert_int_equal(p->n_sample, 1);
        const Perftools__Profiles__Sample *ps = p->sample[0];
        assert_int_equal(ps->n_value, 2);
        assert_int_equal(ps->value[0], 1);
        assert_int_equal(ps->value[1], 1000000);
        assert_int_equal(ps->n_location_id, 3);
        assert_int_equal(label(p, ps, "cpu")->num, 3);
        assert_int_equal(label(p, ps, "pid")->num, 100);
        assert_int_equal(label(p, ps, "tid")->num, 101);
        assert_string_equal(str(p, label(p, ps, "comm")->str), "kworker_1"); /* as the folded root frame */
        assert_string_equal(str(p, label(p, ps, "host")->str), "node-7");
        assert_string_equal(str(p, label(p, ps, "rule")->str), "ena-reset");
        assert_string_equal(str(p, label(p, ps, "service")->str), "nginx.service");
        assert_int_equal(label(p, ps, "time")->num, 1700000000500000000);
        assert_string_equal(str(p, label(p, ps, "time")->num_unit), "nanoseconds");

        /* Leaf first; both kernel frames in the kernel mapping; the unknown user frame named after its DSO. */
        for (size_t i = 0; i < 3; i++) {
                const Perftools__Profiles__Location *l = NULL;
                for (size_t j = 0; j < p->n_location; j++)
                        if (p->location[j]->id == ps->location_id[i])
                                l = p->location[j];
                assert_non_null(l);
                assert_int_equal(l->n_line, 1);
                const Perftools__Profiles__Mapping *m = p->mapping[l->mapping_id - 1];
                const Perftools__Profiles__Function *f = p->function[l->line[0]->function_id - 1];
                assert_int_equal(m->id, l->mapping_id);
                assert_int_equal(f->id, l->line[0]->function_id);
                assert_true(m->memory_start <= l->address && l->address < m->memory_limit);
                if (i < 2)
                        assert_string_equal(str(p, m->filename), "[kernel.kallsyms]");
                else {
                        assert_string_equal(str(p, m->filename), "/usr/lib/libfoo.so");
                        assert_string_equal(str(p, f->name), "[libfoo.so]");
                }
        }
        perftools__profiles__profile__free_unpacked(p, NULL);
}

/* Every string of the table is UTF-8 without control bytes, whatever the symbol, file or label
 * held: proto3 readers (protobuf's Python and Go parsers) reject the whole profile otherwise. */
static void test_strings_are_utf8(void **state) {
        _cleanup_(pprof_builder_freep) PprofBuilder *b = NULL;
        const Frame f[] = {
                { .symbol = "js bad\xff\xfe\xc3 utf8", .dso = "/tmp/perf-1.map", .addr = 0x1000 },
                { .symbol = "tab\there", .dso = "/opt/caf\xe9/lib.so", .addr = 0x2000 },
                { .symbol = "caf\xc3\xa9", .dso = "/usr/bin/x", .addr = 0x3000 },
        };
        const PprofLabel extra[] = { { .key = "cgroup", .str = "/system.slice/\x80.service" } };
        Sample s = { .t_ns = 5, .cpu = 0, .pid = 1, .tid = 1, .comm = "x", .n_frames = 3, .frames = f };

        assert_int_equal(pprof_builder_new(1000000, &b), 0);
        assert_int_equal(pprof_builder_add_sample(b, &s, 5, extra, 1), 0);
        Perftools__Profiles__Profile *p = decode(b);
        bool seen_escaped = false, seen_utf8 = false;
        for (size_t i = 0; i < p->n_string_table; i++) {
                const char *t = p->string_table[i];
                assert_true(utf8_is_valid_n(t, strlen(t)));
                for (const char *c = t; *c; c++)
                        assert_true((unsigned char) *c >= 0x20 && *c != 0x7f);
                seen_escaped = seen_escaped || streq(t, "js bad\\xff\\xfe\\xc3 utf8");
                seen_utf8 = seen_utf8 || streq(t, "caf\xc3\xa9"); /* valid UTF-8 stays as it is */
        }
        assert_true(seen_escaped);
        assert_true(seen_utf8);
        perftools__profiles__profile__free_unpacked(p, NULL);
}

static void test_gzip_output_inflates_to_the_profile(void **state) {
        _cleanup_(pprof_builder_freep) PprofBuilder *b = NULL;
        _cleanup_free_ uint8_t *plain = NULL, *gz = NULL, *back = NULL;
        const Frame a[] = { user_leaf, user_mid };
        size_t n_plain, n_gz;
        uLongf n_back;

        assert_int_equal(pprof_builder_new(1, &b), 0);
        for (int i = 0; i < 10; i++) {
                Sample s = { .t_ns = i, .pid = 1, .tid = 1, .comm = "x", .n_frames = 2, .frames = a };
                assert_int_equal(pprof_builder_add_sample(b, &s, i, NULL, 0), 0);
        }
        assert_int_equal(pprof_builder_encode(b, false, &plain, &n_plain), 0);
        assert_int_equal(pprof_builder_encode(b, true, &gz, &n_gz), 0);
        assert_true(n_gz > 10 && gz[0] == 0x1f && gz[1] == 0x8b); /* a gzip stream */

        z_stream zs = { .next_in = gz, .avail_in = n_gz };
        back = malloc(n_plain + 16);
        assert_non_null(back);
        assert_int_equal(inflateInit2(&zs, 15 + 16), Z_OK);
        zs.next_out = back;
        zs.avail_out = n_plain + 16;
        assert_int_equal(inflate(&zs, Z_FINISH), Z_STREAM_END);
        n_back = zs.total_out;
        inflateEnd(&zs);
        assert_int_equal(n_back, n_plain);
        assert_memory_equal(back, plain, n_plain);

        /* The streaming writer produces a gzip stream of the same profile. */
        char path[] = "/tmp/test-pprof-XXXXXX";
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        FILE *f = fdopen(fd, "w+");
        assert_int_equal(pprof_builder_write(b, f), 0);
        fclose(f);
        gzFile g = gzopen(path, "rb");
        assert_non_null(g);
        uint8_t *again = malloc(n_plain + 16);
        assert_int_equal(gzread(g, again, n_plain + 16), (int) n_plain);
        assert_memory_equal(again, plain, n_plain);
        free(again);
        gzclose(g);
        unlink(path);
}

static void test_common_labels_are_bounded(void **state) {
        _cleanup_(pprof_builder_freep) PprofBuilder *b = NULL;
        PprofLabel many[PPROF_LABELS_MAX] = {};

        for (size_t i = 0; i < PPROF_LABELS_MAX; i++)
                many[i] = (PprofLabel) { .key = "k", .num = (int64_t) i };
        assert_int_equal(pprof_builder_new(1, &b), 0);
        assert_int_equal(pprof_builder_set_common_labels(b, many, PPROF_LABELS_MAX), -E2BIG);
        assert_int_equal(pprof_builder_set_common_labels(b, many, PPROF_LABELS_MAX - 5), 0);
        /* Per-sample labels count against the same bound. */
        Sample s = { .comm = "x" };
        assert_int_equal(pprof_builder_add_sample(b, &s, 0, many, 1), -E2BIG);
        assert_int_equal(pprof_builder_set_common_labels(b, many, 2), 0);
        assert_int_equal(pprof_builder_add_sample(b, &s, 0, many, 1), 0);
}

/* cpu 0, pid 0 and tid 0 (the idle task) are values: Go's profile package, which go tool pprof,
 * Pyroscope and Parca read profiles with, drops a numeric label of value 0 that has no unit, so
 * every numeric label carries one (its key, as pprof assumes for one without a unit). */
static void test_zero_numeric_labels_survive(void **state) {
        _cleanup_(pprof_builder_freep) PprofBuilder *b = NULL;
        const Frame k[] = { kernel_leaf };
        const PprofLabel extra[] = { { .key = "slot", .num = 0 } };
        Sample s = { .t_ns = 5, .cpu = 0, .pid = 0, .tid = 0, .comm = "swapper/0", .n_frames = 1, .frames = k };

        assert_int_equal(pprof_builder_new(1000000, &b), 0);
        assert_int_equal(pprof_builder_add_sample(b, &s, 5, extra, 1), 0);
        Perftools__Profiles__Profile *p = decode(b);
        const Perftools__Profiles__Sample *ps = p->sample[0];
        static const char *const keys[] = { "cpu", "pid", "tid", "slot" };
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
                const char *key = keys[i];
                const Perftools__Profiles__Label *l = label(p, ps, key);
                assert_non_null(l);
                assert_int_equal(l->str, 0);
                assert_int_equal(l->num, 0);
                assert_int_not_equal(l->num_unit, 0);
                assert_string_equal(str(p, l->num_unit), key);
        }
        assert_string_equal(str(p, label(p, ps, "time")->num_unit), "nanoseconds");
        perftools__profiles__profile__free_unpacked(p, NULL);
}

/* go tool pprof "simplifies" a function whose name equals its system_name as if it were a
 * demangled C++ name, dropping every <...>: two Rust Drop impls would both show as "::drop".
 * system_name is written only when it differs from name; then pprof keeps name as written. */
static void test_system_name_only_when_it_differs(void **state) {
        _cleanup_(pprof_builder_freep) PprofBuilder *b = NULL;
        const Frame fr[] = {
                { .symbol = "<alloc::vec::Vec<T> as core::ops::drop::Drop>::drop", .dso = "/usr/bin/rs", .addr = 0x401000 },
                { .symbol = "<std::fs::File as core::ops::drop::Drop>::drop", .dso = "/usr/bin/rs", .addr = 0x402000 },
                { .symbol = "std::vector<int>::push_back(int const&)", .dso = "/usr/bin/rs", .addr = 0x403000 },
        };
        Sample s = { .t_ns = 1000, .pid = 42, .tid = 42, .comm = "rs", .n_frames = 3, .frames = fr };

        assert_int_equal(pprof_builder_new(10309278, &b), 0);
        assert_int_equal(pprof_builder_add_sample(b, &s, 1000, NULL, 0), 0);
        Perftools__Profiles__Profile *p = decode(b);
        assert_int_equal(p->n_function, 3);
        assert_string_equal(str(p, p->function[0]->name), fr[0].symbol);
        assert_int_equal(p->function[0]->system_name, 0);
        assert_string_equal(str(p, p->function[1]->name), fr[1].symbol);
        assert_int_equal(p->function[1]->system_name, 0);
        /* Tidied as in stacks.folded, the full name kept beside it. */
        assert_string_equal(str(p, p->function[2]->name), "std::vector<int>::push_back");
        assert_string_equal(str(p, p->function[2]->system_name), fr[2].symbol);
        perftools__profiles__profile__free_unpacked(p, NULL);
}

/* A JIT frame of a java process is named without the class name's 'L', as stacks.folded names
 * it; the same symbol in another process keeps it. */
static void test_java_frames_named_as_folded(void **state) {
        _cleanup_(pprof_builder_freep) PprofBuilder *b = NULL;
        const Frame fr[] = { { .symbol = "Lcom/foo/Bar;::baz", .dso = "/tmp/perf-42.map", .addr = 0x401000 } };
        Sample s = { .t_ns = 1000, .pid = 42, .tid = 42, .comm = "java", .n_frames = 1, .frames = fr };

        assert_int_equal(pprof_builder_new(10309278, &b), 0);
        assert_int_equal(pprof_builder_add_sample(b, &s, 1000, NULL, 0), 0);
        s.comm = "other";
        assert_int_equal(pprof_builder_add_sample(b, &s, 1000, NULL, 0), 0);
        Perftools__Profiles__Profile *p = decode(b);
        assert_int_equal(p->n_function, 2);
        assert_string_equal(str(p, p->function[0]->name), "com/foo/Bar:::baz");
        assert_string_equal(str(p, p->function[1]->name), "Lcom/foo/Bar:::baz");
        perftools__profiles__profile__free_unpacked(p, NULL);
}

/* A Function's filename is its source file: go tool pprof -list prints that file as the function's
 * source (Go 1.19, cmd/vendor/github.com/google/pprof/internal/report/source.go), and tprof knows
 * none, so it is "". The DSO is the location's mapping's. A function is its names: the same
 * symbol in two files is one function, as pprof would merge them anyway. */
static void test_functions_name_no_source_file(void **state) {
        _cleanup_(pprof_builder_freep) PprofBuilder *b = NULL;
        const Frame fr[] = {
                { .symbol = "main", .dso = "/usr/bin/a", .addr = 0x1100 },
                { .symbol = "main", .dso = "/usr/bin/b", .addr = 0x1200 },
        };

        assert_int_equal(pprof_builder_new(10309278, &b), 0);
        for (size_t i = 0; i < 2; i++) {
                Sample s = { .t_ns = 1000, .pid = 42, .tid = 42, .comm = "x", .n_frames = 1, .frames = fr + i };
                assert_int_equal(pprof_builder_add_sample(b, &s, 1000, NULL, 0), 0);
        }
        Perftools__Profiles__Profile *p = decode(b);
        assert_int_equal(p->n_mapping, 2);
        assert_int_equal(p->n_location, 2);
        assert_int_equal(p->n_function, 1);
        assert_string_equal(str(p, p->function[0]->name), "main");
        assert_int_equal(p->function[0]->filename, 0);
        assert_int_equal(p->function[0]->system_name, 0);
        perftools__profiles__profile__free_unpacked(p, NULL);
}

/* A user frame's address is where it sits in its file (the symbolizer's in-file offset), so its
 * mapping maps that address to itself: file_offset, "offset in the binary that corresponds to the
 * first mapped address" (profile.proto), equals memory_start. pprof's symbolizer finds the file
 * offset of an address as address - memory_start + file_offset (google/pprof
 * v0.0.0-20220729232143-a41b82acbcb1, the one Go 1.19 vendors: internal/elfexec/elfexec.go,
 * GetBase for ET_DYN and ET_EXEC). */
static void test_user_mappings_map_file_offsets(void **state) {
        _cleanup_(pprof_builder_freep) PprofBuilder *b = NULL;
        const Frame a[] = { user_mid, user_leaf, kernel_leaf, kernel_nodso };

        assert_int_equal(pprof_builder_new(10309278, &b), 0);
        for (size_t i = 0; i < 2; i++) {
                Sample s = { .t_ns = 1000, .pid = 42, .tid = 42, .comm = "burn", .n_frames = 2 - i, .frames = a + i };
                assert_int_equal(pprof_builder_add_sample(b, &s, 1000, NULL, 0), 0);
                s.frames = a + 2 + i;
                assert_int_equal(pprof_builder_add_sample(b, &s, 1000, NULL, 0), 0);
        }
        Perftools__Profiles__Profile *p = decode(b);
        assert_int_equal(p->n_mapping, 2);
        for (size_t i = 0; i < p->n_mapping; i++) {
                const Perftools__Profiles__Mapping *m = p->mapping[i];
                if (streq(str(p, m->filename), "/usr/bin/burn")) {
                        /* Grown down to the leaf's address after the first sample: the offset follows. */
                        assert_int_equal(m->memory_start, user_leaf.addr);
                        assert_int_equal(m->memory_limit, user_mid.addr + 1);
                        assert_int_equal(m->file_offset, user_leaf.addr);
                } else {
                        assert_string_equal(str(p, m->filename), "[kernel.kallsyms]");
                        assert_int_equal(m->memory_start, kernel_leaf.addr);
                        assert_int_equal(m->file_offset, 0);
                }
        }
        perftools__profiles__profile__free_unpacked(p, NULL);
}

/* The mapping a location names: by its id, which must be its place in the list plus one. */
static const Perftools__Profiles__Mapping *mapping_of(const Perftools__Profiles__Profile *p, uint64_t location_id) {
        const Perftools__Profiles__Location *l;

        assert_true(location_id >= 1 && location_id <= p->n_location);
        l = p->location[location_id - 1];
        assert_int_equal(l->id, location_id);
        assert_true(l->mapping_id >= 1 && l->mapping_id <= p->n_mapping);
        assert_int_equal(p->mapping[l->mapping_id - 1]->id, l->mapping_id);
        return p->mapping[l->mapping_id - 1];
}

/* Each mapping carries its file's build id, "" when unknown; two builds of one path are two
 * mappings; frames whose build id is unknown go to the path's first mapping, which takes the first
 * build id that turns up for the path if it has none (libfoo.so's below, from the last sample). */
static void test_mappings_carry_build_ids(void **state) {
        _cleanup_(pprof_builder_freep) PprofBuilder *b = NULL;
        Frame burn = user_leaf, burn_new = user_mid, kernel = kernel_leaf, foo = user_unknown;
        /* per sample of the two kinds: its first two frames' files and build ids */
        const char *files[2][2] = { { "/usr/bin/burn", "/usr/lib/libfoo.so" }, { "/usr/bin/burn", "[kernel.kallsyms]" } };
        const char *ids[2][2] = {
                { "a5b2c3d4e5f60718293a4b5c6d7e8f9001122334", "0123456789abcdef0123456789abcdef" },
                { "ffeeddccbbaa99887766554433221100ffeeddcc", "4a5a9b0affb66c437abcd455d2738af879985fa9" },
        };

        burn.build_id = ids[0][0];
        burn_new.build_id = ids[1][0];
        kernel.build_id = ids[1][1];
        foo.build_id = ids[0][1];
        foo.addr += 0x100;
        const Frame a[] = { burn, user_unknown }, c[] = { burn_new, kernel, kernel_nodso };

        assert_int_equal(pprof_builder_new(10309278, &b), 0);
        for (size_t i = 0; i < 4; i++) {
                Sample s = { .t_ns = 1000, .pid = 42, .tid = 42, .comm = "burn", .n_frames = i % 2 ? 3 : 2,
                             .frames = i % 2 ? c : a };
                assert_int_equal(pprof_builder_add_sample(b, &s, 1000, NULL, 0), 0);
        }
        Sample last = { .t_ns = 1000, .pid = 42, .tid = 42, .comm = "burn", .n_frames = 1, .frames = &foo };
        assert_int_equal(pprof_builder_add_sample(b, &last, 1000, NULL, 0), 0);
        Perftools__Profiles__Profile *p = decode(b);
        assert_int_equal(p->n_mapping, 4);
        assert_int_equal(p->n_sample, 5);
        assert_ptr_equal(mapping_of(p, p->sample[4]->location_id[0]), mapping_of(p, p->sample[0]->location_id[1]));
        for (size_t i = 0; i < 2; i++) {
                const Perftools__Profiles__Sample *sm = p->sample[i];

                assert_int_equal(sm->n_location_id, 2 + i);
                for (size_t k = 0; k < 2; k++) {
                        const Perftools__Profiles__Mapping *m = mapping_of(p, sm->location_id[k]);
                        assert_string_equal(str(p, m->filename), files[i][k]);
                        assert_string_equal(str(p, m->build_id), ids[i][k]);
                }
                if (i == 1) /* the kernel frame without a DSO is in the kernel's mapping */
                        assert_ptr_equal(mapping_of(p, sm->location_id[2]), mapping_of(p, sm->location_id[1]));
        }
        perftools__profiles__profile__free_unpacked(p, NULL);
}

/* go tool pprof prints the first mapping's file as "File:" and takes mapping 1 for the main binary:
 * it is the program most samples ran (their outermost frame in a file that is not a shared
 * library), whatever came first. The builder goes on with its own ids: a later encoding may put
 * another file first. */
static void test_main_mapping_first(void **state) {
        _cleanup_(pprof_builder_freep) PprofBuilder *b = NULL;
        const Frame idle[] = { kernel_leaf }, foo[] = { user_unknown, user_mid },
                    burn[] = { kernel_leaf, user_unknown, user_leaf, user_unknown };
        const struct {
                const Frame *frames;
                uint32_t n;
                unsigned times;
        } steps[] = {
                { idle, 1, 5 }, /* the kernel is seen first and most, but is no file */
                { foo, 1, 2 },  /* in a library only: no program's */
                { foo, 2, 2 },  /* in a library, called from burn: burn's */
                { idle, 1, 5 },
                { burn, 4, 1 }, /* in the kernel, called from a library, called from burn: burn's */
        };
        const char *first[] = { "[kernel.kallsyms]", "[kernel.kallsyms]", "/usr/bin/burn", "/usr/bin/burn",
                                "/usr/bin/burn" };

        assert_int_equal(pprof_builder_new(10309278, &b), 0);
        for (size_t k = 0; k < ELEMENTSOF(steps); k++) {
                for (unsigned i = 0; i < steps[k].times; i++) {
                        Sample s = { .t_ns = 1000, .pid = 42, .tid = 42, .comm = "burn", .n_frames = steps[k].n,
                                     .frames = steps[k].frames };
                        assert_int_equal(pprof_builder_add_sample(b, &s, 1000, NULL, 0), 0);
                }
                Perftools__Profiles__Profile *p = decode(b);
                assert_int_equal(p->mapping[0]->id, 1);
                assert_string_equal(str(p, p->mapping[0]->filename), first[k]);
                assert_string_equal(str(p, p->mapping[0]->build_id), ""); /* none known */
                for (size_t i = 0; i < p->n_sample; i++) /* every location still in its own file */
                        for (size_t j = 0; j < p->sample[i]->n_location_id; j++) {
                                const Perftools__Profiles__Location *l = p->location[p->sample[i]->location_id[j] - 1];
                                uint64_t a = l->address;
                                const char *file = str(p, mapping_of(p, l->id)->filename);
                                assert_string_equal(file, a == kernel_leaf.addr ? "[kernel.kallsyms]" :
                                                          a == user_leaf.addr || a == user_mid.addr ? "/usr/bin/burn" :
                                                                                  "/usr/lib/libfoo.so");
                        }
                perftools__profiles__profile__free_unpacked(p, NULL);
        }
}

/* The first mapping's id is one byte in the encoding and the 200th's two: swapping them changes the
 * encoded size, as every location of those two mappings changes its id too. */
static void test_main_mapping_first_among_many(void **state) {
        _cleanup_(pprof_builder_freep) PprofBuilder *b = NULL;
        char dso[200][32];

        assert_int_equal(pprof_builder_new(10309278, &b), 0);
        for (size_t i = 0; i < ELEMENTSOF(dso); i++) {
                snprintf(dso[i], sizeof dso[i], "/usr/lib/lib%zu.so", i);
                Frame f = { .symbol = "[unknown]", .dso = dso[i], .addr = 0x7f0000001000 + 0x1000 * i };
                for (int k = 0; k < 3; k++) { /* many locations under id 1, before the program is seen */
                        Sample s = { .t_ns = 1000, .pid = 42, .tid = 42, .comm = "burn", .n_frames = 1, .frames = &f };
                        f.addr += 8;
                        assert_int_equal(pprof_builder_add_sample(b, &s, 1000, NULL, 0), 0);
                }
        }
        const Frame burn[] = { user_leaf };
        Sample s = { .t_ns = 1000, .pid = 42, .tid = 42, .comm = "burn", .n_frames = 1, .frames = burn };
        assert_int_equal(pprof_builder_add_sample(b, &s, 1000, NULL, 0), 0);

        Perftools__Profiles__Profile *p = decode(b);
        assert_int_equal(p->n_mapping, 201);
        assert_string_equal(str(p, p->mapping[0]->filename), "/usr/bin/burn");
        for (size_t i = 0; i < p->n_location; i++)
                assert_string_equal(str(p, mapping_of(p, p->location[i]->id)->filename),
                                    p->location[i]->address == user_leaf.addr ? "/usr/bin/burn" : dso[(p->location[i]->address - 0x7f0000001000) / 0x1000]);
        perftools__profiles__profile__free_unpacked(p, NULL);
}

/* A JIT map names the code a runtime compiled (perf's /tmp/perf-PID.map, as the symbolizer gives
 * it for their frames' DSO): no program. A JVM's threads start in libjvm.so and run their compiled
 * methods above it (OpenJDK's thread_native_entry(), os_linux.cpp), so the outermost frame of a file
 * of theirs that is no shared library is the map's; the program is the one whose own code ran. */
static void test_main_mapping_not_a_jit_map(void **state) {
        _cleanup_(pprof_builder_freep) PprofBuilder *b = NULL;
        const Frame jit = { .symbol = "Interpreter", .dso = "/tmp/perf-4242.map", .addr = 0x7f1000002000 },
                    jvm = { .symbol = "thread_native_entry", .dso = "/usr/lib/jvm/lib/server/libjvm.so",
                            .addr = 0x7f2000003000 };
        const Frame java[] = { jit, jvm }, burn[] = { user_leaf };

        assert_int_equal(pprof_builder_new(10309278, &b), 0);
        for (size_t i = 0; i < 3; i++) {
                Sample s = { .t_ns = 1000, .pid = 4242, .tid = 4243, .comm = "java", .n_frames = 2, .frames = java };
                assert_int_equal(pprof_builder_add_sample(b, &s, 1000, NULL, 0), 0);
        }
        Sample s = { .t_ns = 1000, .pid = 42, .tid = 42, .comm = "burn", .n_frames = 1, .frames = burn };
        assert_int_equal(pprof_builder_add_sample(b, &s, 1000, NULL, 0), 0);

        Perftools__Profiles__Profile *p = decode(b);
        assert_int_equal(p->n_mapping, 3);
        assert_string_equal(str(p, p->mapping[0]->filename), "/usr/bin/burn");
        perftools__profiles__profile__free_unpacked(p, NULL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_same_frames_are_interned_once),
                cmocka_unit_test(test_profile_decodes_as_pprof_expects),
                cmocka_unit_test(test_strings_are_utf8),
                cmocka_unit_test(test_gzip_output_inflates_to_the_profile),
                cmocka_unit_test(test_common_labels_are_bounded),
                cmocka_unit_test(test_zero_numeric_labels_survive),
                cmocka_unit_test(test_system_name_only_when_it_differs),
                cmocka_unit_test(test_java_frames_named_as_folded),
                cmocka_unit_test(test_functions_name_no_source_file),
                cmocka_unit_test(test_user_mappings_map_file_offsets),
                cmocka_unit_test(test_mappings_carry_build_ids),
                cmocka_unit_test(test_main_mapping_first),
                cmocka_unit_test(test_main_mapping_first_among_many),
                cmocka_unit_test(test_main_mapping_not_a_jit_map),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
