/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the symbolizer's tests of real files share: a tiny shared library that meson builds
 * (helpers/elf-fixture.c, TPROF_ELF_FIXTURE; TPROF_ELF_FIXTURE_STRIPPED is the same file stripped
 * to .dynsym), loaded by the group's setup, which takes its functions' runtime addresses; their file
 * offsets through our own mapping, as the sampler would see them; a temporary directory, removed by
 * the group's teardown; and the fixture's symbols and sections as the tests look them up.
 */
#pragma once

#include <dlfcn.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "basic/string-util.h"
#include "symbolizer/symbolizer-elf.h"
#include "symbolizer/symbolizer.h"
#include "tests.h"
#include "elf-test-util.h"

static const char *fixture, *fixture_stripped;
static char tmpdir[] = "/tmp/tprof-elf.XXXXXX";
static void *handle;
static void *alpha, *beta, *gamma_fn;

/* The file offset of a runtime address in our own mappings of path. */
static inline uint64_t offset_of(const void *addr) {
        _cleanup_fclose_ FILE *f = fopen("/proc/self/maps", "re");
        char line[4096];

        assert_non_null(f);
        while (fgets(line, sizeof(line), f)) {
                unsigned long long s, e, off;
                if (sscanf(line, "%llx-%llx %*s %llx", &s, &e, &off) != 3)
                        continue;
                if ((uintptr_t) addr >= s && (uintptr_t) addr < e)
                        return (uintptr_t) addr - s + off;
        }
        fail_msg("address %p not mapped", addr);
        return 0;
}

static inline void expect_name(const ElfSymbols *e, const void *addr, const char *name) {
        uint64_t vaddr, off;
        const char *got = NULL;

        assert_true(elf_symbols_offset_to_vaddr(e, offset_of(addr), &vaddr));
        if (!name) {
                assert_false(elf_symbols_lookup(e, vaddr + 4, &got, &off, NULL));
                return;
        }
        assert_true(elf_symbols_lookup(e, vaddr + 4, &got, &off, NULL));
        assert_string_equal(got, name);
        assert_int_equal(off, 4);
}

/* Runs a shell command; its objcopy is the build's (TPROF_OBJCOPY: the fixtures' own binutils,
 * an aarch64 one in a cross build). */
static inline int run(const char *cmd) {
        _cleanup_free_ char *c = NULL;
        int r;

        if (asprintf(&c, "objcopy() { command \"${TPROF_OBJCOPY:-objcopy}\" \"$@\"; }; %s", cmd) < 0)
                return -1;
        r = system(c);
        return WIFEXITED(r) ? WEXITSTATUS(r) : -1;
}

/* Where a function starts, from a file's symbol table: the address at which lookups give offset 0. */
static inline uint64_t symbol_vaddr(const char *path, const char *name) {
        _cleanup_(elf_symbols_freep) ElfSymbols *e = NULL;
        struct stat st;

        assert_int_equal(elf_symbols_load_path(path, NULL, &e), 0);
        assert_int_equal(stat(path, &st), 0);
        for (uint64_t o = 0; o < (uint64_t) st.st_size; o++) {
                const char *got;
                uint64_t vaddr, off;

                if (elf_symbols_offset_to_vaddr(e, o, &vaddr) && elf_symbols_lookup(e, vaddr, &got, &off, NULL) &&
                    off == 0 && streq(got, name))
                        return vaddr;
        }
        fail_msg("no symbol %s in %s", name, path);
        return 0;
}

/* A function's size from the file's symbol table, through libelf directly. */
static inline uint64_t symbol_size(const char *path, const char *name) {
        GElf_Sym sym;

        assert_true(test_elf_symbol(path, name, &sym));
        assert_true(sym.st_size > 0);
        return sym.st_size;
}

/* A section's place in the file and in memory, through libelf directly. */
static inline void section_place(const char *path, const char *name, uint64_t *ret_offset,
                                 uint64_t *ret_vaddr, uint64_t *ret_size) {
        GElf_Shdr sh = {};

        if (!test_elf_section(path, name, NULL, &sh))
                fail_msg("no section %s in %s", name, path);
        *ret_offset = sh.sh_offset;
        *ret_vaddr = sh.sh_addr;
        *ret_size = sh.sh_size;
}

/* A user mapping of the fixture as the sampler would pass it, and where fn runs in it. */
static inline SymbolizerMapping fixture_mapping(const void *fn, uint64_t *ret_addr) {
        struct stat st;
        uint64_t off = offset_of(fn) & ~(uint64_t) 0xfff;

        assert_int_equal(stat(fixture, &st), 0);
        *ret_addr = 0x10000000 + (offset_of(fn) - off);
        return (SymbolizerMapping) {
                .start = 0x10000000, .end = 0x10100000, .pgoff = off,
                .dev = st.st_dev, .ino = st.st_ino, .path = fixture,
        };
}

static inline int setup(void **state) {
        fixture = getenv("TPROF_ELF_FIXTURE");
        if (!fixture)
                return -1;
        fixture_stripped = getenv("TPROF_ELF_FIXTURE_STRIPPED");
        handle = dlopen(fixture, RTLD_NOW);
        if (!handle)
                return -1;
        alpha = dlsym(handle, "fixture_alpha");
        beta = dlsym(handle, "fixture_beta");
        gamma_fn = dlsym(handle, "_ZN7fixture5gammaEm");
        if (!alpha || !beta || !gamma_fn || !mkdtemp(tmpdir))
                return -1;
        return 0;
}

static inline int teardown(void **state) {
        char cmd[256];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
        (void) run(cmd);
        return 0;
}
