/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Frames through the symbolizer, for the fixture library mapped as the sampler would pass it: named
 * with its DSO and build id, demangled (C++, Rust), [vdso] from our own copy, a replaced file
 * unnamed, JIT maps, kernel addresses; files reached through a process's map_files and told apart
 * by their inode generation; frames that name functions (one per function, at its start, also in a
 * stripped file known by its unwind tables) and a leaf's range of addresses that make its frame.
 */
#include "tests.h"
#include "symbolizer-test-util.h"

#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic/fileio.h"

/* Our own [vdso] mapping, as a perf MMAP record would give it. */
static SymbolizerMapping self_vdso_mapping(void) {
        _cleanup_fclose_ FILE *maps = fopen("/proc/self/maps", "re");
        char line[512];
        unsigned long long s = 0, e = 0;

        while (maps && fgets(line, sizeof(line), maps))
                if (strstr(line, "[vdso]"))
                        assert_int_equal(sscanf(line, "%llx-%llx", &s, &e), 2);
        return (SymbolizerMapping) { .start = s, .end = e, .path = "[vdso]" };
}

/* Files reached through processes: a process gone before its file was read does not make the
 * file unreadable for the next process mapping it (a container's short-lived command, then a
 * long-lived one of the same image), and an inode number used again by another file (a rebuild
 * to the same path) is another file when its generation says so. */
static void test_symbolizer_files_through_processes(void **state) {
        _cleanup_(symbolizer_freep) Symbolizer *z = NULL;
        char proc[128], p[256], self[PATH_MAX];
        struct stat st;
        Frame f;

        snprintf(proc, sizeof proc, "%s/proc", tmpdir);
        (void) mkdir(proc, 0755);
        assert_int_equal(symbolizer_new(&(SymbolizerOptions) { .kallsyms_path = "", .jit_dir = tmpdir,
                                                                .proc_root = proc }, &z), 0);
        assert_int_equal(stat(fixture, &st), 0);
        uint64_t off = offset_of(alpha) & ~(uint64_t) 0xfff;
        /* The path is the container's, not the host's: only /proc/PID/map_files reaches the file. */
        SymbolizerMapping m = {
                .start = 0x10000000, .end = 0x10100000, .pgoff = off,
                .dev = st.st_dev, .ino = st.st_ino, .ino_gen = 7, .path = "/nowhere/on/this/host/libfixture.so",
        };
        uint64_t a = 0x10000000 + (offset_of(alpha) - off);
        /* map_files of a process: a link to the file, as the kernel's magic links are */
        for (unsigned pid = 101; pid <= 102; pid++) {
                snprintf(p, sizeof p, "%s/%u", proc, pid);
                assert_int_equal(mkdir(p, 0755), 0);
                snprintf(p, sizeof p, "%s/%u/map_files", proc, pid);
                assert_int_equal(mkdir(p, 0755), 0);
        }
        snprintf(p, sizeof p, "%s/101/map_files/%" PRIx64 "-%" PRIx64, proc, m.start, m.end);
        assert_int_equal(symlink(fixture, p), 0);

        symbolizer_begin(z);
        symbolizer_user(z, 100, &m, a + 8, true, &f); /* gone */
        assert_string_equal(f.symbol, "[unknown]");
        symbolizer_user(z, 101, &m, a + 8, true, &f); /* alive */
        assert_string_equal(f.symbol, "fixture_alpha");

        /* The same device and inode number, another generation: another file (here this test's
         * own program, where fixture_local's address is something else). */
        ssize_t l = readlink("/proc/self/exe", self, sizeof self - 1);
        if (l > 0) {
                self[l] = '\0';
                SymbolizerMapping n = m;
                n.ino_gen = 8;
                snprintf(p, sizeof p, "%s/102/map_files/%" PRIx64 "-%" PRIx64, proc, n.start, n.end);
                assert_int_equal(symlink(self, p), 0);
                uint64_t local = 0x10000000 + (offset_of(alpha) - off) - symbol_vaddr(fixture, "fixture_alpha") +
                                 symbol_vaddr(fixture, "fixture_local");
                symbolizer_user(z, 101, &m, local + 2, true, &f);
                assert_string_equal(f.symbol, "fixture_local");
                symbolizer_user(z, 102, &n, local + 2, true, &f);
                assert_string_not_equal(f.symbol, "fixture_local");
        }

        /* By its path (no process to go through): the file there is taken only if its generation
         * is the mapping's, where the filesystem tells it. */
        _cleanup_close_ int fd = open(fixture, O_RDONLY | O_CLOEXEC);
        int gen;
        if (fd >= 0 && ioctl(fd, FS_IOC_GETVERSION, &gen) == 0) {
                SymbolizerMapping byp = m;
                byp.path = fixture;
                byp.ino_gen = (uint32_t) gen;
                symbolizer_user(z, 0, &byp, a + 8, true, &f);
                assert_string_equal(f.symbol, "fixture_alpha");
                byp.ino_gen = (uint32_t) gen + 1;
                symbolizer_user(z, 0, &byp, a + 8, true, &f);
                assert_string_equal(f.symbol, "[unknown]");
        } else
                print_message("no inode generations on this filesystem: not checked by path\n");
}

static void test_symbolizer_user_frames(void **state) {
        _cleanup_(symbolizer_freep) Symbolizer *z = NULL;
        Frame f;
        char path[256], cmd[1024];
        struct stat st;

        assert_int_equal(symbolizer_new(&(SymbolizerOptions) { .kallsyms_path = "", .jit_dir = tmpdir }, &z), 0);
        assert_int_equal(stat(fixture, &st), 0);

        /* A mapping as the sampler would pass it, for a pid that is not ours (so map_files is not used). */
        uint64_t off = offset_of(alpha) & ~(uint64_t) 0xfff;
        SymbolizerMapping m = {
                .start = 0x10000000, .end = 0x10100000, .pgoff = off,
                .dev = st.st_dev, .ino = st.st_ino, .path = fixture,
        };
        uint64_t a = 0x10000000 + (offset_of(alpha) - off);

        symbolizer_begin(z);
        symbolizer_user(z, 0, &m, a + 8, true, &f);
        assert_string_equal(f.symbol, "fixture_alpha");
        assert_string_equal(f.dso, fixture);
        assert_int_equal(f.offset, 8);
        /* with the file's build id, in hex */
        {
                _cleanup_(elf_symbols_freep) ElfSymbols *e = NULL;
                const uint8_t *bid;
                char hex[2 * ELF_BUILD_ID_BYTES_MAX + 1];
                size_t n;

                assert_int_equal(elf_symbols_load_path(fixture, NULL, &e), 0);
                bid = elf_symbols_build_id(e, &n);
                assert_non_null(bid);
                for (size_t i = 0; i < n; i++)
                        sprintf(hex + 2 * i, "%02x", bid[i]);
                assert_non_null(f.build_id);
                assert_string_equal(f.build_id, hex);
        }

        /* A C++ name comes out demangled, as perf prints it. */
        uint64_t g = 0x10000000 + (offset_of(gamma_fn) - off);
        assert_true(g < 0x10100000);
        symbolizer_user(z, 0, &m, g, false, &f);
        assert_string_equal(f.symbol, "fixture::gamma(unsigned long)");
        /* A function template's without its return type, which perf leaves out too: folded, the
         * frame is "fixture::pick<false>", not "fixture::Result fixture::pick<false>". */
        void *pick = dlsym(handle, "_ZN7fixture4pickILb0EEENS_6ResultEPFivE");
        assert_non_null(pick);
        symbolizer_user(z, 0, &m, 0x10000000 + (offset_of(pick) - off) + 1, false, &f);
        assert_string_equal(f.symbol, "fixture::pick<false>(int (*)())");

        /* Rust's, as perf and rustfilt print them: v0, and legacy without its hash. */
        static const struct {
                const char *mangled, *name;
        } rust[] = {
                { "_ZN7fixture4rust6legacy17h0123456789abcdefE.llvm.123", "fixture::rust::legacy" },
                { "_RNvNtCs1234_7fixture4rust6worker", "fixture::rust::worker" },
        };
        for (size_t i = 0; i < ELEMENTSOF(rust); i++) {
                void *fn = dlsym(handle, rust[i].mangled);
                assert_non_null(fn);
                symbolizer_user(z, 0, &m, 0x10000000 + (offset_of(fn) - off) + 1, false, &f);
                assert_string_equal(f.symbol, rust[i].name);
        }

        /* [vdso] frames are named from our own copy of the vDSO. */
        void *vdso = dlopen("linux-vdso.so.1", RTLD_NOW | RTLD_NOLOAD);
        void *cg = vdso ? dlsym(vdso, "__vdso_clock_gettime") : NULL;
        if (cg) {
                SymbolizerMapping vm = self_vdso_mapping();
                symbolizer_user(z, 0, &vm, (uintptr_t) cg + 2, false, &f);
                assert_string_equal(f.dso, "[vdso]");
                assert_true(streq(f.symbol, "__vdso_clock_gettime") || streq(f.symbol, "clock_gettime"));
                /* A vDSO of another size (a 32-bit process's) is not ours to name, and one of no
                 * process (pid 0) cannot be read from the process. */
                vm.end += 4096;
                symbolizer_user(z, 0, &vm, (uintptr_t) cg + 2, false, &f);
                assert_string_equal(f.symbol, "[unknown]");
                dlclose(vdso);
        }

        /* A wrong inode (the file was replaced): no symbols, DSO still named. */
        SymbolizerMapping wrong = m;
        wrong.ino = st.st_ino + 1;
        symbolizer_user(z, 0, &wrong, a, false, &f);
        assert_string_equal(f.symbol, "[unknown]");
        assert_string_equal(f.dso, fixture);
        assert_null(f.build_id);

        /* No mapping, no JIT map: unknown everything. */
        symbolizer_user(z, 0, NULL, 0x1234, false, &f);
        assert_string_equal(f.symbol, "[unknown]");
        assert_string_equal(f.dso, "[unknown]");

        /* A JIT map for pid 4242 in our jit_dir. */
        snprintf(path, sizeof(path), "%s/perf-4242.map", tmpdir);
        snprintf(cmd, sizeof(cmd), "%x 100 jitted_function\n", 0x20000000);
        assert_int_equal(write_file_atomic(path, cmd, strlen(cmd), 0644), 0);
        symbolizer_next_epoch(z);
        symbolizer_user(z, 4242, NULL, 0x20000010, false, &f);
        assert_string_equal(f.symbol, "jitted_function");
        assert_string_equal(f.dso, "/tmp/perf-4242.map");
        assert_null(f.build_id);

        /* A kernel address with no kallsyms loaded. */
        symbolizer_kernel(z, 0xffffffff81000000, false, &f);
        assert_string_equal(f.symbol, "[unknown]");
        assert_string_equal(f.dso, "[kernel.kallsyms]");
        assert_true(f.kernel);
}

static void test_symbolizer_function_frames(void **state) {
        _cleanup_(symbolizer_freep) Symbolizer *z = NULL, *exact = NULL;
        uint64_t a, g;
        SymbolizerMapping m = fixture_mapping(alpha, &a);
        char path[256], line[64];
        Frame f;

        assert_int_equal(symbolizer_new(&(SymbolizerOptions) { .kallsyms_path = "", .jit_dir = tmpdir,
                                                                .function_frames = true }, &z), 0);
        assert_int_equal(symbolizer_new(&(SymbolizerOptions) { .kallsyms_path = "", .jit_dir = tmpdir }, &exact), 0);
        symbolizer_begin(z);
        symbolizer_begin(exact);

        /* Anywhere in fixture_alpha, sampled or returned to: one frame, its first byte in the file. */
        for (unsigned is_return = 0; is_return < 2; is_return++)
                for (uint64_t d = 0; d < 12; d += 3) {
                        if (is_return && d == 0)
                                continue; /* a return address at the first byte belongs to the caller */
                        symbolizer_user(z, 0, &m, a + d, is_return, &f);
                        assert_string_equal(f.symbol, "fixture_alpha");
                        assert_string_equal(f.dso, fixture);
                        assert_int_equal(f.addr, offset_of(alpha));
                        assert_int_equal(f.offset, 0);
                        assert_false(f.kernel);

                        /* Exact frames as ever: the instruction's own place in the file. */
                        symbolizer_user(exact, 0, &m, a + d, is_return, &f);
                        assert_string_equal(f.symbol, "fixture_alpha");
                        assert_int_equal(f.addr, offset_of(alpha) + d);
                        assert_int_equal(f.offset, d);
                }

        /* Another function of the same mapping, and a C++ one still demangled. */
        g = a - offset_of(alpha) + offset_of(gamma_fn);
        symbolizer_user(z, 0, &m, g + 5, true, &f);
        assert_string_equal(f.symbol, "fixture::gamma(unsigned long)");
        assert_int_equal(f.addr, offset_of(gamma_fn));
        assert_int_equal(f.offset, 0);

        /* The same file mapped elsewhere (another process, another load address): the same frame. */
        SymbolizerMapping moved = m;
        moved.start += 0x7f0000000000;
        moved.end += 0x7f0000000000;
        symbolizer_user(z, 0, &moved, a + 0x7f0000000000 + 7, false, &f);
        assert_string_equal(f.symbol, "fixture_alpha");
        assert_int_equal(f.addr, offset_of(alpha));
        assert_int_equal(f.offset, 0);

        /* JIT code keeps virtual addresses: the entry's start. */
        snprintf(path, sizeof(path), "%s/perf-4343.map", tmpdir);
        snprintf(line, sizeof(line), "%x 100 jitted_function\n", 0x20000000);
        assert_int_equal(write_file_atomic(path, line, strlen(line), 0644), 0);
        symbolizer_user(z, 4343, NULL, 0x20000011, true, &f);
        assert_string_equal(f.symbol, "jitted_function");
        assert_int_equal(f.addr, 0x20000000);
        assert_int_equal(f.offset, 0);
        symbolizer_user(exact, 4343, NULL, 0x20000011, true, &f);
        assert_int_equal(f.addr, 0x20000011);
        assert_int_equal(f.offset, 0x11);

        /* [vdso] frames: the function's start as an offset in the image. */
        void *vdso = dlopen("linux-vdso.so.1", RTLD_NOW | RTLD_NOLOAD);
        void *cg = vdso ? dlsym(vdso, "__vdso_clock_gettime") : NULL;
        if (cg) {
                SymbolizerMapping vm = self_vdso_mapping();
                symbolizer_user(z, 0, &vm, (uintptr_t) cg + 3, true, &f);
                assert_string_equal(f.dso, "[vdso]");
                assert_int_equal(f.addr, (uintptr_t) cg - vm.start);
                assert_int_equal(f.offset, 0);
                dlclose(vdso);
        }

        /* Unknown frames keep their exact address. */
        symbolizer_user(z, 0, NULL, 0x1234, true, &f);
        assert_string_equal(f.symbol, "[unknown]");
        assert_int_equal(f.addr, 0x1234);
        assert_int_equal(f.offset, 0);
}

static bool frame_equal(const Frame *a, const Frame *b) {
        return streq(a->symbol, b->symbol) && streq(a->dso, b->dso) && a->addr == b->addr && a->offset == b->offset &&
               a->kernel == b->kernel;
}

/* A leaf's range (symbolizer_user_leaf()) is the addresses that make its very frame: with frames
 * that name functions, every byte of the function as the symbol table sizes it, and no byte on
 * either side; within the mapping; the address alone for exact frames; none for frames not named
 * from a file. */
static void test_symbolizer_leaf_range(void **state) {
        _cleanup_(symbolizer_freep) Symbolizer *z = NULL, *exact = NULL;
        uint64_t a, size = symbol_size(fixture, "fixture_alpha");
        SymbolizerMapping m = fixture_mapping(alpha, &a);
        SymbolizerRange r;
        char path[256], line[64];
        Frame f, g;

        assert_int_equal(symbolizer_new(&(SymbolizerOptions) { .kallsyms_path = "", .jit_dir = tmpdir,
                                                                .function_frames = true }, &z), 0);
        assert_int_equal(symbolizer_new(&(SymbolizerOptions) { .kallsyms_path = "", .jit_dir = tmpdir }, &exact), 0);
        symbolizer_begin(z);
        symbolizer_begin(exact);

        assert_true(symbolizer_user_leaf(z, 0, &m, a + 5, &f, &r));
        assert_string_equal(f.symbol, "fixture_alpha");
        assert_int_equal(r.start, a);
        assert_int_equal(r.end, a + size);
        for (uint64_t x = r.start; x < r.end; x++) {
                symbolizer_user_leaf(z, 0, &m, x, &g, NULL);
                assert_true(frame_equal(&f, &g));
        }
        symbolizer_user_leaf(z, 0, &m, r.start - 1, &g, NULL);
        assert_false(frame_equal(&f, &g));
        symbolizer_user_leaf(z, 0, &m, r.end, &g, NULL);
        assert_false(frame_equal(&f, &g));
        /* the range agrees with symbolizer_user() on the same leaf */
        symbolizer_user(z, 0, &m, a + 5, false, &g);
        assert_true(frame_equal(&f, &g));

        /* A function followed by padding that no symbol covers: its size ends the range. */
        uint64_t gm = a - offset_of(alpha) + offset_of(gamma_fn), gsize = symbol_size(fixture, "_ZN7fixture5gammaEm");
        assert_true(symbolizer_user_leaf(z, 0, &m, gm + 2, &f, &r));
        assert_string_equal(f.symbol, "fixture::gamma(unsigned long)");
        assert_int_equal(r.start, gm);
        assert_int_equal(r.end, gm + gsize);
        symbolizer_user_leaf(z, 0, &m, r.end, &g, NULL);
        assert_string_equal(g.symbol, "[unknown]");

        /* The mapping starts inside the function (at its third byte), or ends inside it: the range
         * holds only what is this mapping's. */
        SymbolizerMapping inside = m;
        inside.start = 0x20000000;
        inside.end = 0x20100000;
        inside.pgoff = offset_of(alpha) + 2;
        assert_true(symbolizer_user_leaf(z, 0, &inside, inside.start + 1, &f, &r));
        assert_string_equal(f.symbol, "fixture_alpha");
        assert_int_equal(r.start, inside.start);
        assert_int_equal(r.end, inside.start + size - 2);

        SymbolizerMapping cut = m;
        cut.end = a + 3;
        assert_true(symbolizer_user_leaf(z, 0, &cut, a + 1, &f, &r));
        assert_string_equal(f.symbol, "fixture_alpha");
        assert_int_equal(r.start, a);
        assert_int_equal(r.end, a + 3);

        /* Exact frames: the address alone. */
        assert_true(symbolizer_user_leaf(exact, 0, &m, a + 5, &f, &r));
        assert_int_equal(r.start, a + 5);
        assert_int_equal(r.end, a + 6);

        /* A JIT map's frame and an unknown one: no range. */
        snprintf(path, sizeof(path), "%s/perf-4444.map", tmpdir);
        snprintf(line, sizeof(line), "%x 100 jitted_function\n", 0x20000000);
        assert_int_equal(write_file_atomic(path, line, strlen(line), 0644), 0);
        symbolizer_next_epoch(z);
        symbolizer_begin(z);
        assert_false(symbolizer_user_leaf(z, 4444, NULL, 0x20000011, &f, &r));
        assert_string_equal(f.symbol, "jitted_function");
        assert_int_equal(r.end - r.start, 0);
        assert_false(symbolizer_user_leaf(z, 0, NULL, 0x1234, &f, &r));
        assert_int_equal(r.end - r.start, 0);
}

static void test_symbolizer_function_frames_stripped(void **state) {
        _cleanup_(symbolizer_freep) Symbolizer *z = NULL, *exact = NULL;
        uint64_t local, hdr_offset, hdr_vaddr, hdr_size;
        struct stat st;
        Frame f;

        if (!fixture_stripped)
                skip();
        assert_int_equal(symbolizer_new(&(SymbolizerOptions) { .kallsyms_path = "", .jit_dir = tmpdir,
                                                                .function_frames = true }, &z), 0);
        assert_int_equal(symbolizer_new(&(SymbolizerOptions) { .kallsyms_path = "", .jit_dir = tmpdir }, &exact), 0);
        symbolizer_begin(z);
        symbolizer_begin(exact);

        /* The static fixture_local's place in the file, from the unstripped twin: code is one segment,
         * so it is as far from fixture_alpha in the file as in memory. */
        local = offset_of(alpha) - symbol_vaddr(fixture, "fixture_alpha") + symbol_vaddr(fixture, "fixture_local");
        section_place(fixture_stripped, ".eh_frame_hdr", &hdr_offset, &hdr_vaddr, &hdr_size);
        assert_int_equal(stat(fixture_stripped, &st), 0);
        SymbolizerMapping m = {
                .start = 0x10000000, .end = 0x10100000, .pgoff = 0,
                .dev = st.st_dev, .ino = st.st_ino, .path = fixture_stripped,
        };

        /* No name, but one frame for the whole function, at its start. */
        for (unsigned is_return = 0; is_return < 2; is_return++) {
                symbolizer_user(z, 0, &m, m.start + local + 6, is_return, &f);
                assert_string_equal(f.symbol, "[unknown]");
                assert_string_equal(f.dso, fixture_stripped);
                assert_int_equal(f.addr, local);
                assert_int_equal(f.offset, 0);

                symbolizer_user(exact, 0, &m, m.start + local + 6, is_return, &f);
                assert_string_equal(f.symbol, "[unknown]");
                assert_int_equal(f.addr, local + 6);
                assert_int_equal(f.offset, 0);
        }

        /* As a leaf: every byte of the function makes that frame, and the range says so. */
        SymbolizerRange r;
        Frame g;
        assert_true(symbolizer_user_leaf(z, 0, &m, m.start + local + 6, &f, &r));
        assert_int_equal(r.start, m.start + local);
        assert_true(r.end - r.start >= symbol_size(fixture, "fixture_local"));
        for (uint64_t x = r.start; x < r.end; x++) {
                symbolizer_user_leaf(z, 0, &m, x, &g, NULL);
                assert_true(frame_equal(&f, &g));
        }
        symbolizer_user_leaf(z, 0, &m, r.end, &g, NULL);
        assert_false(frame_equal(&f, &g));

#ifdef __x86_64__
        /* A function known by its unwind information alone, then one .dynsym names that has none:
         * the first one's range stops where the named one starts. */
        uint64_t cfi_only = local - symbol_vaddr(fixture, "fixture_local") + symbol_vaddr(fixture, "fixture_cfi_only");
        uint64_t no_cfi = local - symbol_vaddr(fixture, "fixture_local") + symbol_vaddr(fixture, "fixture_no_cfi");
        assert_true(symbolizer_user_leaf(z, 0, &m, m.start + cfi_only + 1, &f, &r));
        assert_string_equal(f.symbol, "[unknown]");
        assert_int_equal(r.start, m.start + cfi_only);
        assert_true(r.end <= m.start + no_cfi);
        for (uint64_t x = r.start; x < r.end; x++) {
                symbolizer_user_leaf(z, 0, &m, x, &g, NULL);
                assert_true(frame_equal(&f, &g));
        }
        symbolizer_user_leaf(z, 0, &m, m.start + no_cfi, &g, NULL);
        assert_string_equal(g.symbol, "fixture_no_cfi");
#endif

        /* The file's code, though unnamed, is final: a JIT map of the process (perf's convention is
         * for anonymous memory) does not rename it, and it is not looked up (no stat, no /proc read). */
        char path[256], line[128];
        snprintf(path, sizeof(path), "%s/perf-4343.map", tmpdir);
        snprintf(line, sizeof(line), "%" PRIx64 " 100 jit_over_file\n%x 100 jit_anon\n", m.start + local, 0x30000000);
        assert_int_equal(write_file_atomic(path, line, strlen(line), 0644), 0);
        symbolizer_next_epoch(z);
        assert_true(symbolizer_user(z, 4343, &m, m.start + local + 6, false, &f));
        assert_string_equal(f.symbol, "[unknown]");
        assert_string_equal(f.dso, fixture_stripped);
        assert_int_equal(f.addr, local);
        /* Code no file backs is the JIT map's, and may change with it. */
        assert_false(symbolizer_user(z, 4343, NULL, 0x30000010, false, &f));
        assert_string_equal(f.symbol, "jit_anon");
        assert_int_equal(unlink(path), 0);

        /* Exported functions are still named from .dynsym. */
        assert_true(symbolizer_user(z, 0, &m, m.start + offset_of(alpha) + 4, true, &f));
        assert_string_equal(f.symbol, "fixture_alpha");
        assert_int_equal(f.addr, offset_of(alpha));
        assert_int_equal(f.offset, 0);

        /* Read-only data after the code is in no function: the exact address. */
        symbolizer_user(z, 0, &m, m.start + hdr_offset + 4, false, &f);
        assert_string_equal(f.symbol, "[unknown]");
        assert_int_equal(f.addr, hdr_offset + 4);
        assert_int_equal(f.offset, 0);
}

static void put(const char *dir, const char *name, const char *text) {
        char path[PATH_MAX];

        assert_int_equal(mkdir_p(dir, 0755), 0);
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        assert_int_equal(write_file_atomic(path, text, strlen(text), 0644), 0);
}

/* A process in a pid namespace of its own writes /tmp/perf-<its pid there>.map in its own root,
 * found through NSpid in /proc/PID/status and /proc/PID/root (a /proc of the test's own here). A
 * pid used again, by a process of another namespace or of the host's, is looked up by that
 * process's pid, not by the first one's. */
static void test_symbolizer_jit_in_pid_namespace(void **state) {
        _cleanup_(symbolizer_freep) Symbolizer *z = NULL;
        char proc[256], jit[256], pdir[320], root_tmp[320], path[400];
        Frame f;

        snprintf(proc, sizeof(proc), "%s/proc", tmpdir);
        snprintf(jit, sizeof(jit), "%s/jit-host", tmpdir);
        snprintf(pdir, sizeof(pdir), "%s/9100", proc);
        snprintf(root_tmp, sizeof(root_tmp), "%s/9100/root/tmp", proc);
        assert_int_equal(mkdir_p(jit, 0755), 0);
        put(pdir, "status", "Name:\tnode\nNSpid:\t9100\t7\n");
        put(root_tmp, "perf-7.map", "20000000 100 first_process_function\n");
        assert_int_equal(symbolizer_new(&(SymbolizerOptions) { .kallsyms_path = "", .jit_dir = jit, .proc_root = proc },
                                        &z), 0);
        symbolizer_begin(z);
        symbolizer_user(z, 9100, NULL, 0x20000010, false, &f);
        assert_string_equal(f.symbol, "first_process_function");

        /* The pid is another process's now, pid 12 of another namespace. */
        put(pdir, "status", "Name:\tjava\nNSpid:\t9100\t12\n");
        snprintf(path, sizeof(path), "%s/perf-7.map", root_tmp);
        assert_int_equal(unlink(path), 0);
        put(root_tmp, "perf-12.map", "20000000 100 second_process_function\n");
        symbolizer_next_epoch(z);
        symbolizer_begin(z);
        symbolizer_user(z, 9100, NULL, 0x20000010, false, &f);
        assert_string_equal(f.symbol, "second_process_function");

        /* And a process of the host's namespace, with its map where the host keeps them. */
        put(pdir, "status", "Name:\tnode\nNSpid:\t9100\n");
        put(jit, "perf-9100.map", "20000000 100 host_process_function\n");
        symbolizer_next_epoch(z);
        symbolizer_begin(z);
        symbolizer_user(z, 9100, NULL, 0x20000010, false, &f);
        assert_string_equal(f.symbol, "host_process_function");
        assert_string_equal(f.dso, "/tmp/perf-9100.map");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_symbolizer_user_frames),
                cmocka_unit_test(test_symbolizer_files_through_processes),
                cmocka_unit_test(test_symbolizer_function_frames),
                cmocka_unit_test(test_symbolizer_function_frames_stripped),
                cmocka_unit_test(test_symbolizer_leaf_range),
                cmocka_unit_test(test_symbolizer_jit_in_pid_namespace),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
