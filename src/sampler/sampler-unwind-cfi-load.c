/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reading one file's CFI for libdw, and what it costs in memory. The file is read with ELF_C_READ
 * and the sections libdw needs are in memory once dwarf_getcfi_elf() returns (or copied out into
 * an image: a .debug_frame, an .eh_frame_hdr laid out after .eh_frame); we then let go of the
 * descriptor (ELF_C_FDDONE), so a cache of many files holds no descriptors. A separate debug
 * file's .debug_frame is added later, on demand.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <endian.h>
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "basic/alloc-util.h"
#include "basic/macro.h"
#include "sampler/sampler-unwind-cfi-internal.h"
#include "sampler/unwind-elf-image.h"
#include "symbolizer/elf-debug-file.h"
#include "symbolizer/elf-util.h"

static void debug_frame_done(UnwindCfiFile *f) {
        if (f->debug_dwarf)
                (void) dwarf_end(f->debug_dwarf); /* and the CFI dwarf_getcfi() made */
        if (f->debug_elf)
                (void) elf_end(f->debug_elf);
        f->debug_image = mfree(f->debug_image);
        f->debug_dwarf = NULL;
        f->debug_elf = NULL;
        f->debug_cfi = NULL;
}

UnwindCfiFile *unwind_cfi_file_free(UnwindCfiFile *f) {
        if (!f)
                return NULL;
        if (f->cfi)
                (void) dwarf_cfi_end(f->cfi);
        if (f->eh_elf)
                (void) elf_end(f->eh_elf);
        free(f->eh_image);
        debug_frame_done(f);
        if (f->elf)
                (void) elf_end(f->elf);
        free(f->debuglink);
        free(f->seen);
        free(f->checked);
        free(f->go_funcs);
        return mfree(f);
}

static void read_segments(UnwindCfiFile *f) {
        size_t phnum;

        if (elf_getphdrnum(f->elf, &phnum) < 0)
                return;
        for (size_t i = 0; i < phnum && f->n_segments < UNWIND_SEGMENTS_MAX; i++) {
                GElf_Phdr ph;
                if (!gelf_getphdr(f->elf, (int) i, &ph) || ph.p_type != PT_LOAD)
                        continue;
                if (ph.p_offset + ph.p_filesz < ph.p_offset)
                        continue;
                f->segments[f->n_segments++] = (UnwindSegment) {
                        .offset = ph.p_offset, .vaddr = ph.p_vaddr, .filesz = ph.p_filesz,
                };
        }
}

/* AArch64 ELF ABI: each PLT starts with a 32-byte header, PLT0, with or without BTI (binutils'
 * elfnn-aarch64.c, lld's AArch64 PLT alike). */
#define UNWIND_ARM64_PLT0_BYTES 32U

/* An arm64 file's PLT stubs, from its section headers (a file stripped of them has none found:
 * its PLT samples are walked as other code without CFI). */
static void read_plt_ranges(UnwindCfiFile *f) {
        size_t shstrndx, n = 0;
        Elf_Scn *scn = NULL;

        if (f->arch.machine != EM_AARCH64 || elf_getshdrstrndx(f->elf, &shstrndx) < 0)
                return;
        while ((scn = elf_nextscn(f->elf, scn)) && n < ELEMENTSOF(f->plt_start)) {
                uint64_t skip;
                const char *name;
                GElf_Shdr sh;

                if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || !(sh.sh_flags & SHF_EXECINSTR) ||
                    !(name = elf_strptr(f->elf, shstrndx, sh.sh_name)))
                        continue;
                if (streq(name, ".plt"))
                        skip = UNWIND_ARM64_PLT0_BYTES;
                else if (streq(name, ".iplt"))
                        skip = 0;
                else
                        continue;
                if (sh.sh_size <= skip || sh.sh_addr + sh.sh_size < sh.sh_addr)
                        continue;
                f->plt_start[n] = sh.sh_addr + skip;
                f->plt_end[n] = sh.sh_addr + sh.sh_size;
                n++;
        }
}

bool unwind_cfi_file_in_plt_stub(const UnwindCfiFile *f, uint64_t vaddr) {
        for (size_t i = 0; i < ELEMENTSOF(f->plt_start); i++)
                if (vaddr >= f->plt_start[i] && vaddr < f->plt_end[i])
                        return true;
        return false;
}

/* The bytes of the sections libdw reads into memory for .eh_frame's CFI (ELF_C_READ copies what it
 * reads), and whether there is a .debug_frame (its copy is counted by load_debug_frame()). */
static size_t cfi_section_bytes(Elf *elf, bool *ret_debug_frame) {
        size_t shstrndx, bytes = 0;
        Elf_Scn *scn = NULL;

        *ret_debug_frame = false;
        if (elf_getshdrstrndx(elf, &shstrndx) < 0)
                return 0;
        while ((scn = elf_nextscn(elf, scn))) {
                GElf_Shdr sh;
                const char *name;

                if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
                        continue;
                name = elf_strptr(elf, shstrndx, sh.sh_name);
                if (name && (streq(name, ".eh_frame") || streq(name, ".eh_frame_hdr")))
                        bytes += sh.sh_size;
                else if (name && (streq(name, ".debug_frame") || streq(name, ".zdebug_frame")))
                        *ret_debug_frame = true;
                bytes += sizeof(GElf_Shdr);
        }
        return bytes;
}

/* The largest .debug_frame taken (uncompressed); a Go service's is a few hundred KiB. */
#define UNWIND_DEBUG_FRAME_BYTES_MAX (16U * 1024U * 1024U)

/*
 * src's .debug_frame into f->debug_cfi, through an image of header, the section, the section
 * names and three section headers. src is a descriptor of its own for a file (closed by the
 * caller, so the section's bytes are held once, in the image), f->elf for memory (whose
 * compressed sections are left alone: decompressing writes to the memory). The section
 * may be compressed (SHF_COMPRESSED), or be the older GNU .zdebug_frame ("ZLIB", the size as a
 * 64-bit big-endian number, a zlib stream; Go's linker wrote it from Go 1.11 to 1.18, before its
 * move to SHF_COMPRESSED). The size is checked before anything is read or decompressed: a hostile
 * file's small section can claim to expand to gigabytes.
 */
static int load_debug_frame(UnwindCfiFile *f, Elf *src, bool may_decompress, size_t room, size_t capacity) {
        size_t shstrndx, size;
        Elf_Scn *scn = NULL, *found = NULL;
        GElf_Shdr fsh;
        Elf_Data *data;
        GElf_Ehdr eh;
        void *image;
        uint64_t want;
        bool gnu = false;

        if (!gelf_getehdr(src, &eh) || (eh.e_ident[EI_CLASS] != ELFCLASS64 && eh.e_ident[EI_CLASS] != ELFCLASS32) ||
            elf_getshdrstrndx(src, &shstrndx) < 0)
                return -ENODATA;
        /* An image in the other byte order would need every field swapped: not worth it here. */
        if (eh.e_ident[EI_DATA] != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB))
                return -ENODATA;
        while ((scn = elf_nextscn(src, scn))) {
                GElf_Shdr sh;
                const char *name;

                if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS)
                        continue;
                name = elf_strptr(src, shstrndx, sh.sh_name);
                if (name && streq(name, ".debug_frame")) {
                        found = scn;
                        fsh = sh;
                        gnu = false;
                        break; /* preferred to a .zdebug_frame beside it */
                }
                if (name && streq(name, ".zdebug_frame") && !found) {
                        found = scn;
                        fsh = sh;
                        gnu = true;
                }
        }
        if (!found)
                return -ENODATA;
        want = fsh.sh_size;
        if (fsh.sh_flags & SHF_COMPRESSED) {
                GElf_Chdr ch;
                if (fsh.sh_size > UNWIND_DEBUG_FRAME_BYTES_MAX || !gelf_getchdr(found, &ch))
                        return -EFBIG;
                want = ch.ch_size;
        } else if (gnu) {
                uint64_t be;

                if (fsh.sh_size > UNWIND_DEBUG_FRAME_BYTES_MAX)
                        return -EFBIG;
                data = elf_rawdata(found, NULL);
                if (!data || !data->d_buf || data->d_size < 12 || memcmp(data->d_buf, "ZLIB", 4) != 0)
                        return -EBADMSG;
                memcpy(&be, (const uint8_t *) data->d_buf + 4, sizeof(be));
                want = be64toh(be);
        }
        if (want == 0 || want > UNWIND_DEBUG_FRAME_BYTES_MAX)
                return -EFBIG;
        /* What f->bytes grows by, below: more than the tables may ever hold, or than they have room
         * for now. */
        if (want > capacity / (1 + UNWIND_LIBDW_SCAN_FACTOR))
                return -EFBIG;
        if (want > room / (1 + UNWIND_LIBDW_SCAN_FACTOR))
                return -ENOSPC;
        /* libelf writes the inflated size into the section header: not into an image it was lent. */
        if (((fsh.sh_flags & SHF_COMPRESSED) || gnu) && !may_decompress)
                return -ENODATA;
        if ((fsh.sh_flags & SHF_COMPRESSED) && elf_compress(found, 0, 0) < 0)
                return -EBADMSG;
        if (gnu && !(fsh.sh_flags & SHF_COMPRESSED) && elf_compress_gnu(found, 0, 0) < 0)
                return -EBADMSG;
        data = elf_getdata(found, NULL);
        if (!data || !data->d_buf || data->d_size == 0 || data->d_size > UNWIND_DEBUG_FRAME_BYTES_MAX)
                return -ENODATA;

        /* libdw reads a .debug_frame in order (it has no search table): each FDE checked once. */
        if (!unwind_cfi_section_ok(data->d_buf, data->d_size, /* eh_frame= */ false,
                                   eh.e_ident[EI_CLASS] == ELFCLASS64))
                return -EBADMSG;
        image = elf_image_new(&eh, &(ElfImageSection) { .name = ".debug_frame", .align = 8, .data = data->d_buf,
                                                        .size = data->d_size },
                              1, &size);
        if (!image)
                return -ENOMEM;

        f->debug_image = image;
        f->debug_elf = elf_memory(image, size);
        if (f->debug_elf)
                f->debug_dwarf = dwarf_begin_elf(f->debug_elf, DWARF_C_READ, NULL);
        if (f->debug_dwarf)
                f->debug_cfi = dwarf_getcfi(f->debug_dwarf);
        if (!f->debug_cfi) {
                debug_frame_done(f);
                return -ENODATA;
        }
        f->bytes += size + UNWIND_LIBDW_SCAN_FACTOR * data->d_size;
        return 0;
}

/* The index of the section named name in elf, 0 if none (or its contents are not in the file). */
static size_t section_index(Elf *elf, const char *name) {
        Elf_Scn *scn = elf_section_by_name(elf, name, /* with_contents= */ true);

        return scn ? elf_ndxscn(scn) : 0;
}

/* The bytes of a DW_EH_PE_* encoded value of fixed size (the low four bits; absptr is an address
 * of the file's class), 0 for any other. */
static size_t encoded_size(uint8_t enc, bool elf64) {
        switch (enc & 0x0f) {
        case 0x03: /* udata4 */
        case 0x0b: /* sdata4 */
                return 4;
        case 0x00: /* absptr */
                return elf64 ? 8 : 4;
        case 0x04: /* udata8 */
        case 0x0c: /* sdata8 */
                return 8;
        default:
                return 0;
        }
}

/* The address .eh_frame_hdr's eh_frame_ptr (at offset 4 of the section at hdr_addr) gives, by
 * its encoding (absolute, pc-relative or relative to the section); false for another encoding. */
static bool eh_frame_ptr(const uint8_t *d, size_t ptr_size, uint64_t hdr_addr, uint64_t *ret) {
        uint64_t v = 0;

        memcpy(&v, d + 4, ptr_size); /* x86-64, aarch64: the low bytes first */
        if ((d[1] & 0x08) && ptr_size == 4) /* signed */
                v = (uint64_t) (int64_t) (int32_t) (uint32_t) v;
        switch (d[1] & 0x70) {
        case 0x00: /* absolute */
                *ret = v;
                return true;
        case 0x10: /* pc-relative: the field's own address */
                *ret = hdr_addr + 4 + v;
                return true;
        case 0x30: /* relative to the section */
                *ret = hdr_addr + v;
                return true;
        default:
                return false;
        }
}

/* The most of a file's .eh_frame read by its program headers; past it, its FDEs are not read. */
#define UNWIND_EH_FRAME_BYTES_MAX (64U * 1024U * 1024U)

/* The bytes of .eh_frame's entries at d (size bytes of it): up to its zero terminator (as linkers
 * write it), else all. Each entry's length is 32-bit, or 0xffffffff and a 64-bit length after it. */
static size_t eh_frame_length(const uint8_t *d, size_t size) {
        size_t off = 0;

        while (size - off >= 4) {
                uint32_t len32;
                uint64_t len;
                size_t hdr = 4;

                memcpy(&len32, d + off, sizeof(len32));
                if (len32 == 0)
                        return off + 4;
                len = len32;
                if (len32 == UINT32_MAX) {
                        if (size - off < 12)
                                break;
                        memcpy(&len, d + off + 4, sizeof(len));
                        hdr = 12;
                }
                if (len > size - off - hdr)
                        break;
                off += hdr + (size_t) len;
        }
        return size;
}

/*
 * The CFI of a file read from a descriptor that has no .eh_frame section (its section headers
 * stripped or broken), by its PT_GNU_EH_FRAME segment: .eh_frame_hdr, whose eh_frame_ptr gives
 * where .eh_frame starts. libdw finds it so too (elfutils 0.188, dwarf_getcfi_elf.c,
 * getcfi_gnu_eh_frame()), but takes elf_rawfile() to learn the file's size, which reads the whole
 * file into memory, and then .eh_frame as everything from its start to the end of the file: any
 * file a process maps, of any size, read whole and held with the table, uncounted (and with the
 * section data read before, leaked by elf_end()). Here .eh_frame_hdr and .eh_frame, up to its
 * terminator within the PT_LOAD segment that holds it and at most UNWIND_EH_FRAME_BYTES_MAX, are
 * copied from src into an image (counted in f->bytes), as eh_frame_cfi() does for lld's order.
 */
static Dwarf_CFI *eh_frame_cfi_phdrs(UnwindCfiFile *f, Elf *src) {
        GElf_Phdr hdr_ph = {}, load_ph;
        Elf_Data *hdr_data, *eh_data;
        GElf_Ehdr ehdr;
        size_t phnum, ptr_size, size;
        uint64_t eh_addr;
        bool found = false;
        const uint8_t *d;

        if (!gelf_getehdr(src, &ehdr) ||
            (ehdr.e_ident[EI_CLASS] != ELFCLASS64 && ehdr.e_ident[EI_CLASS] != ELFCLASS32) ||
            ehdr.e_ident[EI_DATA] != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB) ||
            elf_getphdrnum(src, &phnum) < 0)
                return NULL;
        for (size_t i = 0; i < phnum && !found; i++)
                found = gelf_getphdr(src, (int) i, &hdr_ph) && hdr_ph.p_type == PT_GNU_EH_FRAME;
        if (!found || hdr_ph.p_filesz < 8 || hdr_ph.p_filesz > UNWIND_EH_FRAME_BYTES_MAX ||
            hdr_ph.p_offset > INT64_MAX)
                return NULL;
        hdr_data = elf_getdata_rawchunk(src, (int64_t) hdr_ph.p_offset, hdr_ph.p_filesz, ELF_T_BYTE);
        if (!hdr_data || !hdr_data->d_buf || hdr_data->d_size != hdr_ph.p_filesz)
                return NULL;
        d = hdr_data->d_buf;
        ptr_size = encoded_size(d[1], ehdr.e_ident[EI_CLASS] == ELFCLASS64);
        if (d[0] != 1 || ptr_size == 0 || hdr_data->d_size < 4 + ptr_size ||
            !eh_frame_ptr(d, ptr_size, hdr_ph.p_vaddr, &eh_addr))
                return NULL;
        /* The PT_LOAD segment that holds .eh_frame bounds it. */
        found = false;
        for (size_t i = 0; i < phnum && !found; i++)
                found = gelf_getphdr(src, (int) i, &load_ph) && load_ph.p_type == PT_LOAD &&
                        eh_addr >= load_ph.p_vaddr && eh_addr - load_ph.p_vaddr < load_ph.p_filesz;
        if (!found)
                return NULL;
        size = (size_t) MIN(load_ph.p_filesz - (eh_addr - load_ph.p_vaddr), (uint64_t) UNWIND_EH_FRAME_BYTES_MAX);
        if (load_ph.p_offset + (eh_addr - load_ph.p_vaddr) < load_ph.p_offset ||
            load_ph.p_offset + (eh_addr - load_ph.p_vaddr) > INT64_MAX)
                return NULL;
        eh_data = elf_getdata_rawchunk(src, (int64_t) (load_ph.p_offset + (eh_addr - load_ph.p_vaddr)), size,
                                       ELF_T_BYTE);
        if (!eh_data || !eh_data->d_buf || eh_data->d_size != size)
                return NULL;
        f->eh_image = elf_image_new(&ehdr,
                                    (const ElfImageSection[]) {
                                            { ".eh_frame_hdr", hdr_ph.p_vaddr, 4, hdr_data->d_buf, hdr_data->d_size },
                                            { ".eh_frame", eh_addr, 8, eh_data->d_buf,
                                              eh_frame_length(eh_data->d_buf, eh_data->d_size) },
                                    },
                                    2, &size);
        if (f->eh_image)
                f->eh_elf = elf_memory(f->eh_image, size);
        if (!f->eh_elf) {
                f->eh_image = mfree(f->eh_image);
                return NULL;
        }
        f->bytes += size;
        return dwarf_getcfi_elf(f->eh_elf);
}

/*
 * The CFI of .eh_frame, with its search table. libdw takes the binary search table of
 * .eh_frame_hdr only from a section that comes before .eh_frame (elfutils' getcfi_shdr()), as GNU
 * ld places it; lld, which links LLVM, Chromium and Rust programs, places it after. Without the
 * table libdw reads .eh_frame from its start up to each address it is asked for and keeps every
 * FDE it passes: the first lookups in Debian's libLLVM-14 take 11 ms and 4.7 MB, 7.6 MB in all.
 * Such a file's two sections are copied into an image that has them in libdw's order, from src
 * (a descriptor of its own, so the bytes are held once, in the image; src is f->elf for an image in
 * memory).
 */
static Dwarf_CFI *eh_frame_cfi(UnwindCfiFile *f, Elf *src) {
        size_t eh = section_index(f->elf, ".eh_frame"), hdr = section_index(f->elf, ".eh_frame_hdr"), size;
        GElf_Shdr eh_sh, hdr_sh;
        Elf_Data *eh_data, *hdr_data;
        Elf_Scn *eh_scn, *hdr_scn;
        GElf_Ehdr ehdr;

        /* No .eh_frame section in a file: libdw would read the file whole (eh_frame_cfi_phdrs()). */
        if (eh == 0 && src != f->elf)
                return src ? eh_frame_cfi_phdrs(f, src) : NULL;
        if (eh == 0 || hdr == 0 || hdr < eh || !src || !gelf_getehdr(src, &ehdr) ||
            (ehdr.e_ident[EI_CLASS] != ELFCLASS64 && ehdr.e_ident[EI_CLASS] != ELFCLASS32) ||
            ehdr.e_ident[EI_DATA] != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB))
                return dwarf_getcfi_elf(f->elf);
        eh_scn = elf_getscn(src, eh);
        hdr_scn = elf_getscn(src, hdr);
        if (!eh_scn || !hdr_scn || !gelf_getshdr(eh_scn, &eh_sh) || !gelf_getshdr(hdr_scn, &hdr_sh) ||
            !(eh_data = elf_rawdata(eh_scn, NULL)) || !(hdr_data = elf_rawdata(hdr_scn, NULL)) || !eh_data->d_buf ||
            !hdr_data->d_buf)
                return dwarf_getcfi_elf(f->elf);
        f->eh_image = elf_image_new(&ehdr,
                                    (const ElfImageSection[]) {
                                            { ".eh_frame_hdr", hdr_sh.sh_addr, hdr_sh.sh_addralign, hdr_data->d_buf,
                                              hdr_data->d_size },
                                            { ".eh_frame", eh_sh.sh_addr, eh_sh.sh_addralign, eh_data->d_buf,
                                              eh_data->d_size },
                                    },
                                    2, &size);
        if (f->eh_image)
                f->eh_elf = elf_memory(f->eh_image, size);
        if (!f->eh_elf) {
                f->eh_image = mfree(f->eh_image);
                return dwarf_getcfi_elf(f->elf);
        }
        return dwarf_getcfi_elf(f->eh_elf);
}

static uint64_t table_start(const UnwindCfiFile *f, size_t i) {
        int32_t rel;

        memcpy(&rel, f->table + 8 * i, sizeof(rel));
        return f->table_base + (uint64_t) (int64_t) rel;
}

bool unwind_cfi_file_fde_seen(UnwindCfiFile *f, uint64_t vaddr) {
        size_t lo = 0, hi = f->table_count;

        if (!f->table)
                return false;
        if (!f->seen) {
                f->seen = new0(uint8_t, f->table_count / 8 + 1);
                if (!f->seen)
                        return false; /* uncounted; libdw's own allocations likely failed too */
                f->bytes += f->table_count / 8 + 1;
        }
        /* The last entry whose function starts at or below vaddr. */
        if (table_start(f, 0) > vaddr)
                return false;
        while (hi - lo > 1) {
                size_t mid = lo + (hi - lo) / 2;
                if (table_start(f, mid) <= vaddr)
                        lo = mid;
                else
                        hi = mid;
        }
        if (f->seen[lo / 8] & (1U << (lo % 8)))
                return false;
        f->seen[lo / 8] |= (uint8_t) (1U << (lo % 8));
        return true;
}

/* No CFI from .eh_frame: libdw could not be given it safely. */
static void drop_cfi(UnwindCfiFile *f) {
        if (f->cfi)
                (void) dwarf_cfi_end(f->cfi);
        f->cfi = NULL;
        f->eh_frame = NULL;
}

/*
 * Finds .eh_frame_hdr's search table in elf (the image, or the file's own Elf, whose copy of the
 * section libdw read already) where libdw takes it too: in a section before .eh_frame, whose
 * eh_frame_ptr is .eh_frame's address (getcfi_scn_eh_frame() drops it otherwise), with the
 * encodings toolchains write (version 1, a 4-byte count, a table of datarel|sdata4 pairs) and
 * within the section. Else counts the whole .eh_frame, which libdw then reads in order, and checks
 * each of its FDEs (unwind_cfi_section_ok()); with the table, each is checked as it is looked up.
 */
static void find_search_table(UnwindCfiFile *f, Elf *elf) {
        size_t hdr = section_index(elf, ".eh_frame_hdr"), eh = section_index(elf, ".eh_frame"), ptr_size;
        Elf_Scn *hdr_scn = hdr != 0 ? elf_getscn(elf, hdr) : NULL, *eh_scn = eh != 0 ? elf_getscn(elf, eh) : NULL;
        GElf_Shdr hdr_sh, eh_sh;
        Elf_Data *data = NULL, *eh_data;
        GElf_Ehdr ehdr;
        uint64_t points_at;
        uint32_t count;
        const uint8_t *d;

        /* .eh_frame as libdw reads it (getcfi_scn_eh_frame(): elf_rawdata()), else none to run. */
        if (!eh_scn || !gelf_getshdr(eh_scn, &eh_sh) || !gelf_getehdr(elf, &ehdr) ||
            !(eh_data = elf_rawdata(eh_scn, NULL)) || !eh_data->d_buf) {
                drop_cfi(f);
                return;
        }
        f->eh_frame = eh_data->d_buf;
        f->eh_frame_size = eh_data->d_size;
        f->eh_frame_addr = eh_sh.sh_addr;
        f->elf64 = ehdr.e_ident[EI_CLASS] == ELFCLASS64;
        if (hdr_scn && hdr < eh && gelf_getshdr(hdr_scn, &hdr_sh))
                data = elf_rawdata(hdr_scn, NULL);
        d = data ? data->d_buf : NULL;
        ptr_size = d && data->d_size >= 4 ? encoded_size(d[1], ehdr.e_ident[EI_CLASS] == ELFCLASS64) : 0;
        if (d && d[0] == 1 && ptr_size > 0 && d[2] == 0x03 /* udata4 */ && d[3] == 0x3b /* datarel|sdata4 */ &&
            data->d_size >= 4 + ptr_size + 4 && eh_frame_ptr(d, ptr_size, hdr_sh.sh_addr, &points_at) &&
            points_at == eh_sh.sh_addr) {
                memcpy(&count, d + 4 + ptr_size, sizeof(count));
                if (count > 0 && (data->d_size - 8 - ptr_size) / 8 >= count) {
                        f->table = d + 4 + ptr_size + 4;
                        f->table_count = count;
                        f->table_base = hdr_sh.sh_addr;
                        return;
                }
        }
        /* A table in another encoding, which libdw may search but we do not: the FDEs it leads to
         * cannot be checked before libdw runs them. Toolchains write none. */
        if (d && data->d_size >= 4 && d[0] == 1 && d[1] != DW_EH_PE_omit && d[2] != DW_EH_PE_omit &&
            d[3] != DW_EH_PE_omit && !(d[2] == 0x03 && d[3] == 0x3b)) {
                drop_cfi(f);
                return;
        }
        /* No table: libdw reads the FDEs in order, and so they are checked, once. */
        if (!unwind_cfi_section_ok(f->eh_frame, f->eh_frame_size, /* eh_frame= */ true, f->elf64)) {
                drop_cfi(f);
                return;
        }
        f->bytes += UNWIND_LIBDW_SCAN_FACTOR * eh_sh.sh_size;
}

/* fd: the file's descriptor, -1 for an image in memory. */
static int load_elf(UnwindCfiFile *f, int fd) {
        const void *bid;
        bool debug_frame;
        ssize_t n;

        GElf_Ehdr eh;

        if (elf_kind(f->elf) != ELF_K_ELF)
                return -ENOEXEC;
        if (gelf_getehdr(f->elf, &eh)) {
                f->entry = eh.e_entry;
                /* x32's programs too (ELFCLASS32, EM_X86_64): 64-bit registers and return slots. */
                if (eh.e_machine == EM_X86_64)
                        f->arch = (UnwindArch) { .sp = UNWIND_DWARF_REG_SP, .bp = UNWIND_DWARF_REG_BP, .bx = 3,
                                                 .ra = UNWIND_DWARF_REG_RA, .lr = 0xff, .word = 8,
                                                 .machine = EM_X86_64,
                                                 /* rax rcx rdx rsi rdi r8 r9 r10 r11 */
                                                 .scratch = { 0, 2, 1, 4, 5, 8, 9, 10, 11 } };
                else if (eh.e_ident[EI_CLASS] == ELFCLASS32 && eh.e_machine == EM_386)
                        f->arch = (UnwindArch) { .sp = 4, .bp = 5, .ra = 8, .bx = 3, .lr = 0xff, .word = 4,
                                                 .machine = EM_386,
                                                 /* eax ecx edx esi edi, and no r8-r11 */
                                                 .scratch = { 0, 1, 2, 6, 7, 0xff, 0xff, 0xff, 0xff } };
                else if (eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_machine == EM_AARCH64)
                        /* sp, x29, x30 (the link register and return address column); x19 in
                         * bx's place, a callee-saved register no rule needs; no scratch ones:
                         * the sample carries none (sampler-record.h). */
                        f->arch = (UnwindArch) { .sp = 31, .bp = 29, .ra = 30, .lr = 30, .bx = 19, .word = 8,
                                                 .machine = EM_AARCH64,
                                                 .scratch = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff } };
        }
        read_segments(f);
        read_plt_ranges(f);
        n = dwelf_elf_gnu_build_id(f->elf, &bid);
        if (n > 0 && (size_t) n <= sizeof(f->build_id)) {
                memcpy(f->build_id, bid, (size_t) n);
                f->build_id_len = (size_t) n;
        }
        f->bytes = sizeof(*f) + cfi_section_bytes(f->elf, &debug_frame);
        if (fd >= 0) {
                Elf *src = elf_begin(fd, ELF_C_READ, NULL);
                f->cfi = eh_frame_cfi(f, src);
                if (src)
                        (void) elf_end(src);
        } else
                f->cfi = eh_frame_cfi(f, f->elf);
        if (f->cfi)
                find_search_table(f, f->eh_elf ?: f->elf);
        f->debug_file_never = fd < 0;
        if (fd >= 0) {
                const char *link = elf_debuglink_name(f->elf);
                if (link)
                        f->debuglink = strdup(link); /* none on ENOMEM: the build id still finds it */
        }
        unwind_go_funcs_load(f, fd);
        if (debug_frame && fd < 0)
                (void) load_debug_frame(f, f->elf, /* may_decompress= */ false, SIZE_MAX, SIZE_MAX);
        else if (debug_frame) {
                /* A descriptor of its own, ended here: f->elf would keep the section's bytes. */
                Elf *src = elf_begin(fd, ELF_C_READ, NULL);
                if (src) {
                        (void) load_debug_frame(f, src, /* may_decompress= */ true, SIZE_MAX, SIZE_MAX);
                        (void) elf_end(src);
                }
        }
        return f->cfi || f->debug_cfi ? 0 : -ENODATA;
}

/* A table of elf (NULL: not ELF, a table without CFI), read from fd (-1 for memory). */
static int load_new(Elf *elf, int fd, UnwindCfiFile **ret) {
        _cleanup_(unwind_cfi_file_freep) UnwindCfiFile *f = new0(UnwindCfiFile, 1);
        int r = -ENOEXEC;

        if (!f) {
                if (elf)
                        (void) elf_end(elf);
                return -ENOMEM;
        }
        f->elf = elf;
        if (f->elf) {
                r = load_elf(f, fd);
                /* What libdw needs is read now; from here on the table must not touch fd. */
                if (fd >= 0)
                        (void) elf_cntl(f->elf, ELF_C_FDDONE);
        }
        *ret = TAKE_PTR(f);
        return r;
}

int unwind_cfi_file_load_fd(int fd, UnwindCfiFile **ret) {
        (void) elf_version(EV_CURRENT);
        return load_new(elf_begin(fd, ELF_C_READ, NULL), fd, ret);
}

int unwind_cfi_file_load_memory(const void *data, size_t size, UnwindCfiFile **ret) {
        (void) elf_version(EV_CURRENT);
        return load_new(elf_memory((char *) data, size), -1, ret);
}

size_t unwind_cfi_file_bytes(const UnwindCfiFile *f) {
        return f->bytes ?: sizeof(*f);
}

bool unwind_cfi_file_has_cfi(const UnwindCfiFile *f) {
        return f->cfi || f->debug_cfi;
}

unsigned unwind_cfi_file_word(const UnwindCfiFile *f) {
        return f->arch.word;
}

uint16_t unwind_cfi_file_machine(const UnwindCfiFile *f) {
        return f->arch.machine;
}

bool unwind_cfi_file_wants_debug_file(const UnwindCfiFile *f) {
        return !f->debug_file_never && !f->debug_cfi && f->build_id_len > 0;
}

const char *unwind_cfi_file_debuglink(const UnwindCfiFile *f) {
        return f->debuglink;
}

bool unwind_cfi_file_debug_file_tried_in(const UnwindCfiFile *f, uint64_t view) {
        if (view == 0)
                return f->debug_host_tried;
        for (size_t i = 0; i < MIN(f->n_debug_views, UNWIND_DEBUG_VIEWS_MAX); i++)
                if (f->debug_views[i] == view)
                        return true;
        return false;
}

bool unwind_cfi_file_debug_views_full(const UnwindCfiFile *f) {
        return f->n_debug_views >= UNWIND_DEBUG_VIEWS_MAX;
}

void unwind_cfi_file_debug_file_tried(UnwindCfiFile *f, uint64_t view) {
        if (view == 0) {
                f->debug_host_tried = true;
                return;
        }
        if (unwind_cfi_file_debug_file_tried_in(f, view))
                return;
        /* Full: in place of the oldest. */
        f->debug_views[f->n_debug_views % UNWIND_DEBUG_VIEWS_MAX] = view;
        f->n_debug_views++;
}

uint64_t unwind_cfi_file_debug_file_retry_usec(const UnwindCfiFile *f) {
        return f->debug_file_retry_usec;
}

void unwind_cfi_file_set_debug_file_retry_usec(UnwindCfiFile *f, uint64_t usec) {
        f->debug_file_retry_usec = usec;
}

/* The largest note and section name table a debug file may have: libelf reads either whole, and a
 * planted file's sizes are bounded by nothing but its (sparse) size. */
#define UNWIND_DEBUG_FILE_TABLE_BYTES_MAX (1024U * 1024U)

static bool debug_file_tables_fit(Elf *src) {
        size_t n, shstrndx;
        Elf_Scn *scn = NULL;
        GElf_Shdr sh;

        if (elf_getphdrnum(src, &n) < 0)
                return false;
        for (size_t i = 0; i < n; i++) {
                GElf_Phdr ph;
                if (gelf_getphdr(src, (int) i, &ph) && ph.p_type == PT_NOTE && ph.p_filesz > UNWIND_DEBUG_FILE_TABLE_BYTES_MAX)
                        return false;
        }
        while ((scn = elf_nextscn(src, scn)))
                if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_NOTE && sh.sh_size > UNWIND_DEBUG_FILE_TABLE_BYTES_MAX)
                        return false;
        if (elf_getshdrstrndx(src, &shstrndx) < 0)
                return false;
        scn = elf_getscn(src, shstrndx);
        return scn && gelf_getshdr(scn, &sh) && sh.sh_size <= UNWIND_DEBUG_FILE_TABLE_BYTES_MAX;
}

int unwind_cfi_file_add_debug_fd(UnwindCfiFile *f, int fd, size_t room, size_t capacity) {
        _cleanup_(elf_endp) Elf *src = NULL;
        const void *bid;
        ssize_t n;
        int r;

        if (!unwind_cfi_file_wants_debug_file(f))
                return -EALREADY;
        src = elf_begin(fd, ELF_C_READ, NULL);
        if (!src || elf_kind(src) != ELF_K_ELF)
                return -ENOEXEC;
        if (!debug_file_tables_fit(src))
                return -EFBIG;
        /* The build id, which a debug file keeps, is what ties it to this very file: rules from
         * another build would walk the stack wrong. A file without one takes no debug file. */
        n = dwelf_elf_gnu_build_id(src, &bid);
        if (n <= 0 || (size_t) n != f->build_id_len || memcmp(bid, f->build_id, f->build_id_len) != 0)
                return -EXDEV;
        r = load_debug_frame(f, src, /* may_decompress= */ true, room, capacity);
        if (r < 0)
                return r;
        f->debug_file_never = true;
        return 0;
}

const uint8_t *unwind_cfi_file_build_id(const UnwindCfiFile *f, size_t *ret_len) {
        *ret_len = f->build_id_len;
        return f->build_id_len > 0 ? f->build_id : NULL;
}

bool unwind_cfi_file_offset_to_vaddr(const UnwindCfiFile *f, uint64_t offset, uint64_t *ret_vaddr) {
        for (size_t i = 0; i < f->n_segments; i++) {
                const UnwindSegment *s = &f->segments[i];
                if (offset >= s->offset && offset - s->offset < s->filesz) {
                        *ret_vaddr = offset - s->offset + s->vaddr;
                        return true;
                }
        }
        return false;
}
