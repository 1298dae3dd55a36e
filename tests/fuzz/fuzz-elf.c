/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzz target for the ELF symbolizer (symbolizer/symbolizer-elf): every file a sampled process maps
 * is read, whoever wrote it. The input is the file's bytes, loaded from a memfd the way a mapped
 * file is (elf_symbols_load_fd(): segments, build id, .symtab or .dynsym, MiniDebugInfo, a Go
 * program's function table with its relocations, .eh_frame_hdr's function starts), with no debug
 * file roots; then addresses are looked up. Results are checked against symbolizer-elf.h: names
 * NUL-terminated and shorter than PROFILE_NAME_BYTES_MAX, an address inside the symbol found (its
 * offset below the extent), a function start at most ELF_FUNCTION_BYTES_MAX before the address.
 */
#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "profile/profile-sample.h"
#include "symbolizer/symbolizer-elf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int memfd = -1;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static const char *const no_roots[] = { NULL };
        ElfSymbols *e = NULL;
        int r;

        if (memfd < 0) {
                memfd = memfd_create("fuzz-elf", MFD_CLOEXEC);
                assert(memfd >= 0);
        }
        assert(ftruncate(memfd, 0) == 0);
        assert(size == 0 || pwrite(memfd, data, size, 0) == (ssize_t) size);

        r = elf_symbols_load_fd(memfd, "/fuzz/input", no_roots, &e);
        assert(r == 0 || r == -ENOEXEC || r == -ENOMEM);
        /* every input, even one that is no ELF, leaves a table to look in */
        assert(e || r == -ENOMEM);
        if (!e)
                return 0;
        assert(elf_symbols_source(e) >= 0 && elf_symbols_source(e) < _ELF_SYMBOLS_SOURCE_MAX);
        for (uint64_t o = 0; o < 0x10000; o += 0x3f1) {
                const char *name;
                uint64_t vaddr, off, extent;

                if (!elf_symbols_offset_to_vaddr(e, o, &vaddr))
                        continue;
                if (elf_symbols_lookup(e, vaddr, &name, &off, &extent)) {
                        assert(strlen(name) < PROFILE_NAME_BYTES_MAX);
                        assert(off <= vaddr && extent > off);
                }
                if (elf_symbols_function_start(e, vaddr, &off, &extent))
                        assert(off <= vaddr && off < ELF_FUNCTION_BYTES_MAX);
        }
        elf_symbols_free(e);
        return 0;
}
