/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A test file's sections and symbols read with libelf directly: what the tests compare the
 * symbolizer and the unwinder against, so none of their own code is used here; and sections
 * written, for files no toolchain here makes.
 */
#pragma once

#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "tests.h"

/* The file at path opened (its descriptor in *ret_fd, for the caller to close after elf_end()) and
 * begun for reading; fails the test if either cannot be. */
static inline Elf *test_elf_open(const char *path, int *ret_fd) {
        Elf *elf;

        *ret_fd = open(path, O_RDONLY | O_CLOEXEC);
        assert_true(*ret_fd >= 0);
        (void) elf_version(EV_CURRENT);
        elf = elf_begin(*ret_fd, ELF_C_READ, NULL);
        assert_non_null(elf);
        return elf;
}

/* The ELF header of the file at path. */
static inline void test_elf_ehdr(const char *path, GElf_Ehdr *ret) {
        _cleanup_close_ int fd = -EBADF;
        Elf *elf = test_elf_open(path, &fd);

        assert_non_null(gelf_getehdr(elf, ret));
        elf_end(elf);
}

/* The first section named name in the file at path (of any type): its index and header, when not
 * NULL. False if there is none. */
static inline bool test_elf_section(const char *path, const char *name, size_t *ret_index, GElf_Shdr *ret) {
        _cleanup_close_ int fd = -EBADF;
        Elf *elf = test_elf_open(path, &fd);
        Elf_Scn *scn = NULL;
        size_t shstrndx;
        bool found = false;

        assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
        while (!found && (scn = elf_nextscn(elf, scn))) {
                GElf_Shdr sh;
                const char *n;

                assert_non_null(gelf_getshdr(scn, &sh));
                n = elf_strptr(elf, shstrndx, sh.sh_name);
                if (n && strcmp(n, name) == 0) {
                        found = true;
                        if (ret_index)
                                *ret_index = elf_ndxscn(scn);
                        if (ret)
                                *ret = sh;
                }
        }
        elf_end(elf);
        return found;
}

/* The first symbol named name in the file's .symtab. False if there is none. */
static inline bool test_elf_symbol(const char *path, const char *name, GElf_Sym *ret) {
        _cleanup_close_ int fd = -EBADF;
        Elf *elf = test_elf_open(path, &fd);
        Elf_Scn *scn = NULL;
        bool found = false;

        while (!found && (scn = elf_nextscn(elf, scn))) {
                GElf_Shdr sh;
                Elf_Data *data;

                if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || sh.sh_entsize == 0 ||
                    !(data = elf_getdata(scn, NULL)))
                        continue;
                for (size_t i = 0; !found && i < sh.sh_size / sh.sh_entsize; i++) {
                        const char *n;

                        if (gelf_getsym(data, (int) i, ret) && (n = elf_strptr(elf, sh.sh_link, ret->st_name)) &&
                            strcmp(n, name) == 0)
                                found = true;
                }
        }
        elf_end(elf);
        return found;
}

/* A new 64-bit little-endian shared object for machine written to fd: its ELF and header, which the
 * caller fills on (e_shstrndx) before elf_update(). */
static inline Elf *test_elf_new_dyn(int fd, Elf64_Half machine, Elf64_Ehdr **ret_eh) {
        Elf *elf;
        Elf64_Ehdr *eh;

        (void) elf_version(EV_CURRENT);
        elf = elf_begin(fd, ELF_C_WRITE, NULL);
        assert_non_null(elf);
        eh = elf64_newehdr(elf);
        assert_non_null(eh);
        eh->e_ident[EI_DATA] = ELFDATA2LSB;
        eh->e_type = ET_DYN;
        eh->e_machine = machine;
        eh->e_version = EV_CURRENT;
        *ret_eh = eh;
        return elf;
}

/* A new section of elf holding size bytes at buf (of type dtype, aligned to align): its header,
 * named at name in the section name table, of type type. */
static inline Elf64_Shdr *test_elf_new_section(Elf *elf, Elf64_Word name, Elf64_Word type, void *buf, size_t size,
                                               Elf_Type dtype, size_t align) {
        Elf_Scn *scn = elf_newscn(elf);
        Elf_Data *d;
        Elf64_Shdr *sh;

        assert_non_null(scn);
        d = elf_newdata(scn);
        assert_non_null(d);
        *d = (Elf_Data) { .d_buf = buf, .d_type = dtype, .d_size = size, .d_align = align, .d_version = EV_CURRENT };
        sh = elf64_getshdr(scn);
        assert_non_null(sh);
        sh->sh_name = name;
        sh->sh_type = type;
        return sh;
}
