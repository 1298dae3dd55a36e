/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The symbolizer's cache of symbol tables and JIT maps within its limit: a table that fits is
 * loaded once and kept; one that cannot fit is not kept; tables that do not fit together are not
 * dropped and read again before every sample, but at most once per flush interval, what is not
 * loaded until then put off.
 */
#include "tests.h"
#include "symbolizer-test-util.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic/fileio.h"
#include "symbolizer/symbolizer-jitmap.h"

static void test_symbolizer_cache_limit(void **state) {
        _cleanup_(elf_symbols_freep) ElfSymbols *e = NULL;
        SymbolizerStats st;
        struct stat sb;
        Frame f;

        assert_int_equal(elf_symbols_load_path(fixture, NULL, &e), 0);
        assert_int_equal(stat(fixture, &sb), 0);
        uint64_t off = offset_of(beta) & ~(uint64_t) 0xfff;
        SymbolizerMapping m = { .start = 0x10000000, .end = 0x10100000, .pgoff = off,
                                .dev = sb.st_dev, .ino = sb.st_ino, .path = fixture };
        uint64_t a = 0x10000000 + (offset_of(beta) - off);

        /* Room for the table many times over: loaded once, kept. */
        {
                _cleanup_(symbolizer_freep) Symbolizer *z = NULL;
                assert_int_equal(symbolizer_new(&(SymbolizerOptions) { .kallsyms_path = "",
                                                                       .cache_bytes_max = 64 * elf_symbols_bytes(e) },
                                                &z), 0);
                for (unsigned i = 0; i < 10; i++) {
                        symbolizer_begin(z);
                        symbolizer_user(z, 0, &m, a, false, &f);
                        assert_string_equal(f.symbol, "fixture_beta");
                }
                symbolizer_get_stats(z, &st);
                assert_int_equal(st.files_loaded, 1);
                assert_int_equal(st.cache_flushes, 0);
        }

        /* A limit below one table: the file is not kept (DSO only, counted); the cache, over its
         * limit with the empty table that stands for it, is dropped once, and then not again
         * within the flush interval: the empty table loaded after the drop serves the rest. */
        {
                _cleanup_(symbolizer_freep) Symbolizer *z = NULL;
                assert_int_equal(symbolizer_new(&(SymbolizerOptions) { .kallsyms_path = "", .cache_bytes_max = 1 }, &z), 0);
                for (unsigned i = 0; i < 10; i++) {
                        symbolizer_begin(z);
                        symbolizer_user(z, 0, &m, a, false, &f);
                        assert_string_equal(f.symbol, "[unknown]");
                        assert_string_equal(f.dso, fixture);
                }
                symbolizer_get_stats(z, &st);
                assert_int_equal(st.files_too_big, 2);
                assert_int_equal(st.cache_flushes, 1);
                assert_int_equal(st.loads_deferred, 0);
        }
}

/* Writes perf-PID.map in tmpdir: 128 functions "pidPID_fN" at 0x40000000 + N * 0x100. */
static void write_jit_map(uint32_t pid) {
        char path[256], line[64];
        _cleanup_free_ char *text = NULL;
        size_t n = 0;

        text = malloc(128 * sizeof(line));
        assert_non_null(text);
        for (unsigned i = 0; i < 128; i++)
                n += (size_t) snprintf(text + n, sizeof(line), "%x 100 pid%u_f%u\n", 0x40000000 + i * 0x100, pid, i);
        snprintf(path, sizeof(path), "%s/perf-%u.map", tmpdir, pid);
        assert_int_equal(write_file_atomic(path, text, n, 0644), 0);
}

static void remove_jit_map(uint32_t pid) {
        char path[256];

        snprintf(path, sizeof(path), "%s/perf-%u.map", tmpdir, pid);
        (void) unlink(path);
}

/* pid's function 1, or "[unknown]". */
static const char *jit_name(Symbolizer *z, uint32_t pid, Frame *f) {
        symbolizer_begin(z);
        (void) symbolizer_user(z, pid, NULL, 0x40000100 + 8, false, f);
        return f->symbol;
}

/*
 * Tables that do not fit together (here the JIT maps of four processes, in a cache that holds
 * three) must not be dropped and read again before every sample that alternates between them:
 * the cache is dropped at most once per flush interval, and until then what is loaded stays
 * and what is not (another process's map, a program's symbols) is put off.
 */
static void test_symbolizer_cache_throttle(void **state) {
        _cleanup_(jit_map_freep) JitMap *one = NULL;
        _cleanup_(elf_symbols_freep) ElfSymbols *e = NULL;
        char path[256], want[32];
        SymbolizerStats st;
        uint64_t a;
        SymbolizerMapping m = fixture_mapping(beta, &a);
        Frame f;

        assert_int_equal(elf_symbols_load_path(fixture, NULL, &e), 0);
        for (uint32_t pid = 9001; pid <= 9004; pid++)
                write_jit_map(pid);
        snprintf(path, sizeof(path), "%s/perf-9001.map", tmpdir);
        assert_int_equal(jit_map_load(path, &one), 0);
        uint64_t max = 3 * jit_map_bytes(one) - 1; /* three maps exceed it, two do not */
        assert_true(elf_symbols_bytes(e) <= max / 4); /* not too big to keep */

        {
                _cleanup_(symbolizer_freep) Symbolizer *z = NULL;
                assert_int_equal(symbolizer_new(&(SymbolizerOptions) { .kallsyms_path = "", .jit_dir = tmpdir,
                                                                       .cache_bytes_max = max }, &z), 0);
                for (uint32_t pid = 9001; pid <= 9003; pid++) {
                        snprintf(want, sizeof(want), "pid%u_f1", pid);
                        assert_string_equal(jit_name(z, pid, &f), want);
                }
                /* Full: the first drop comes at once, and the maps are read again as needed. */
                assert_string_equal(jit_name(z, 9001, &f), "pid9001_f1");
                assert_string_equal(jit_name(z, 9002, &f), "pid9002_f1");
                assert_string_equal(jit_name(z, 9003, &f), "pid9003_f1");
                symbolizer_get_stats(z, &st);
                assert_int_equal(st.cache_flushes, 1);
                assert_int_equal(st.jit_maps_loaded, 6);
                /* Full again, a moment after the drop: what is loaded stays and is used, a new
                 * map waits, however often it is asked for. */
                for (unsigned i = 0; i < 20; i++) {
                        snprintf(want, sizeof(want), "pid%u_f1", 9001 + i % 3);
                        assert_string_equal(jit_name(z, 9001 + i % 3, &f), want);
                        assert_string_equal(jit_name(z, 9004, &f), "[unknown]");
                }
                /* A program's symbols wait too: its frame unnamed, in its file, not final. */
                symbolizer_begin(z);
                assert_false(symbolizer_user(z, 0, &m, a, false, &f));
                assert_string_equal(f.symbol, "[unknown]");
                assert_string_equal(f.dso, fixture);
                symbolizer_get_stats(z, &st);
                assert_int_equal(st.cache_flushes, 1);
                assert_int_equal(st.jit_maps_loaded, 6);
                assert_int_equal(st.files_loaded, 0);
                assert_int_equal(st.loads_deferred, 1);
        }

        /* Once the interval has passed, the next sample drops the cache, and the map waiting is read. */
        {
                _cleanup_(symbolizer_freep) Symbolizer *z = NULL;
                assert_int_equal(symbolizer_new(&(SymbolizerOptions) { .kallsyms_path = "", .jit_dir = tmpdir,
                                                                       .cache_bytes_max = max,
                                                                       .flush_interval_usec = 1000 }, &z), 0);
                for (uint32_t pid = 9001; pid <= 9003; pid++)
                        (void) jit_name(z, pid, &f);
                (void) jit_name(z, 9001, &f); /* the first drop */
                (void) jit_name(z, 9002, &f);
                (void) jit_name(z, 9003, &f);
                usleep(2000);
                assert_string_equal(jit_name(z, 9004, &f), "pid9004_f1");
                symbolizer_begin(z);
                assert_true(symbolizer_user(z, 0, &m, a, false, &f));
                assert_string_equal(f.symbol, "fixture_beta");
                symbolizer_get_stats(z, &st);
                assert_int_equal(st.cache_flushes, 2);
        }
        for (uint32_t pid = 9001; pid <= 9004; pid++)
                remove_jit_map(pid);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_symbolizer_cache_limit),
                cmocka_unit_test(test_symbolizer_cache_throttle),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
