/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The function starts of .eh_frame_hdr's binary search table (symbolizer-elf.h): where a stripped
 * file's functions begin, from the table the unwinder searches.
 */
#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "basic/alloc-util.h"
#include "basic/cleanup.h"
#include "symbolizer/symbolizer-elf.h"

/* Pointer encodings of .eh_frame_hdr (DW_EH_PE_* in the DWARF and LSB specifications). */
enum {
        EH_PE_UDATA4 = 0x03,
        EH_PE_SDATA4 = 0x0b,
        EH_PE_PCREL = 0x10,
        EH_PE_DATAREL = 0x30,
};

static uint32_t read_u32(const uint8_t *p, bool big_endian) {
        if (big_endian)
                return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16 | (uint32_t) p[2] << 8 | p[3];
        return (uint32_t) p[3] << 24 | (uint32_t) p[2] << 16 | (uint32_t) p[1] << 8 | p[0];
}

static int u64_cmp(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
        return x < y ? -1 : x > y;
}

int elf_parse_eh_frame_hdr(const uint8_t *data, size_t size, uint64_t section_vaddr, bool big_endian,
                           uint64_t **ret, size_t *ret_n) {
        _cleanup_free_ uint64_t *starts = NULL;
        const uint8_t *table;
        uint32_t count;
        size_t n = 0, k = 0;
        bool sorted = true;

        assert(data || size == 0);
        assert(ret);
        assert(ret_n);

        if (size < EH_FRAME_HDR_HEADER_BYTES)
                return -EBADMSG;
        if (data[0] != 1)
                return -EOPNOTSUPP;
        /* eh_frame_ptr: any 4-byte encoding, since we skip it; then a plain count and the table
         * every linker writes (ld, gold, lld, mold: signed 32-bit, relative to the section). */
        if ((data[1] != EH_PE_UDATA4 && data[1] != EH_PE_SDATA4 && data[1] != (EH_PE_PCREL | EH_PE_SDATA4) &&
             data[1] != (EH_PE_DATAREL | EH_PE_SDATA4)) ||
            data[2] != EH_PE_UDATA4 || data[3] != (EH_PE_DATAREL | EH_PE_SDATA4))
                return -EOPNOTSUPP;
        count = read_u32(data + 8, big_endian);
        if (count > (size - EH_FRAME_HDR_HEADER_BYTES) / 8)
                return -EBADMSG;
        if (count > ELF_FUNCTION_STARTS_MAX)
                return -E2BIG;
        if (count == 0) {
                *ret = NULL;
                *ret_n = 0;
                return 0;
        }

        starts = new(uint64_t, count);
        if (!starts)
                return -ENOMEM;
        table = data + EH_FRAME_HDR_HEADER_BYTES;
        for (size_t i = 0; i < count; i++) {
                int64_t rel = (int32_t) read_u32(table + 8 * i, big_endian);
                uint64_t start;

                /* Below 0 or past the top of the address space: not a place code can be. */
                if (rel < 0 ? (uint64_t) -rel > section_vaddr : section_vaddr > UINT64_MAX - (uint64_t) rel)
                        continue;
                start = section_vaddr + (uint64_t) rel;
                if (n > 0 && start < starts[n - 1])
                        sorted = false;
                starts[n++] = start;
        }

        /* The linker sorted the table for the unwinder's binary search; a file that lies about it
         * gets sorted here rather than searched wrongly. */
        if (!sorted)
                qsort(starts, n, sizeof(uint64_t), u64_cmp);
        for (size_t i = 0; i < n; i++)
                if (k == 0 || starts[k - 1] != starts[i])
                        starts[k++] = starts[i];

        if (k == 0) {
                *ret = NULL;
                *ret_n = 0;
                return 0;
        }
        if (k < count) {
                uint64_t *shrunk = reallocarray(starts, k, sizeof(uint64_t));
                if (shrunk)
                        starts = shrunk;
        }
        *ret = TAKE_PTR(starts);
        *ret_n = k;
        return 0;
}
