/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ELF symbol tables with libelf. We only ever pread the file (ELF_C_READ, never mmap), so a file
 * truncated under us reads short instead of raising SIGBUS. Symbols kept: defined STT_FUNC and
 * STT_GNU_IFUNC with a non-empty name, and labels (STT_NOTYPE) in code where no function covers
 * them; sorted by address, duplicates at one address collapsed to the first global one. Sizes of 0 (hand-written assembly, _init) extend to the next symbol, but
 * never past the end of their own section: the next symbol can be sections away, and what lies
 * between (the PLT after .init) is not theirs.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "basic/alloc-util.h"
#include "basic/cleanup.h"
#include "basic/macro.h"
#include "basic/string-util.h"
#include "profile/profile-sample.h"
#include "symbolizer/elf-debug-file.h"
#include "symbolizer/elf-plt.h"
#include "symbolizer/elf-util.h"
#include "symbolizer/symbolizer-elf.h"
#include "symbolizer/symbolizer-gopclntab.h"


typedef struct ElfSym {
        uint64_t addr, size; /* size 0: up to the next symbol, however far */
        uint32_t name; /* offset into names */
        bool global;
        bool unsized; /* the file gave no size: size is at most what is left of its section */
        bool label;   /* STT_NOTYPE in code: names only what no function covers (sort_symbols()) */
} ElfSym;

typedef struct ElfSegment {
        uint64_t offset, vaddr, filesz;
        uint64_t code_end; /* an executable segment's: where its last code section ends; 0 unknown */
} ElfSegment;

struct ElfSymbols {
        ElfSym *syms;
        size_t n_syms, n_syms_allocated;
        char *names;
        size_t names_len, names_allocated;
        ElfSegment segments[ELF_SEGMENTS_MAX];
        size_t n_segments;
        uint64_t exec_segments; /* bit i set: segments[i] is executable */
        uint8_t build_id[ELF_BUILD_ID_BYTES_MAX];
        size_t build_id_len;
        char build_id_hex[2 * ELF_BUILD_ID_BYTES_MAX + 1]; /* "" when none */
        ElfSymbolSource source;
        uint64_t *function_starts; /* sorted, unique; only for files without local symbols */
        size_t n_function_starts;
};

_Static_assert(ELF_SEGMENTS_MAX <= 64, "exec_segments has one bit per segment");

static const char *const source_table[_ELF_SYMBOLS_SOURCE_MAX] = {
        [ELF_SYMBOLS_NONE] = "none",
        [ELF_SYMBOLS_SYMTAB] = "symtab",
        [ELF_SYMBOLS_DEBUG_FILE] = "debug-file",
        [ELF_SYMBOLS_DYNSYM] = "dynsym",
        [ELF_SYMBOLS_MINIDEBUG] = "minidebuginfo",
        [ELF_SYMBOLS_GOPCLNTAB] = "gopclntab",
};

const char *elf_symbol_source_to_string(ElfSymbolSource s) {
        return s >= 0 && s < _ELF_SYMBOLS_SOURCE_MAX ? source_table[s] : NULL;
}

static void elf_library_init(void) {
        static bool done = false;
        if (!done) {
                (void) elf_version(EV_CURRENT);
                done = true;
        }
}

ElfSymbols *elf_symbols_new_empty(void) {
        return new0(ElfSymbols, 1);
}

ElfSymbols *elf_symbols_free(ElfSymbols *e) {
        if (!e)
                return NULL;
        free(e->syms);
        free(e->names);
        free(e->function_starts);
        return mfree(e);
}

size_t elf_symbols_bytes(const ElfSymbols *e) {
        return sizeof(*e) + e->n_syms_allocated * sizeof(ElfSym) + e->names_allocated +
                e->n_function_starts * sizeof(uint64_t);
}

size_t elf_symbols_count(const ElfSymbols *e) {
        return e->n_syms;
}

ElfSymbolSource elf_symbols_source(const ElfSymbols *e) {
        return e->source;
}

const uint8_t *elf_symbols_build_id(const ElfSymbols *e, size_t *ret_len) {
        *ret_len = e->build_id_len;
        return e->build_id_len > 0 ? e->build_id : NULL;
}

const char *elf_symbols_build_id_hex(const ElfSymbols *e) {
        return e->build_id_len > 0 ? e->build_id_hex : NULL;
}

/* name: l bytes, cut to what a profile keeps. *name_bytes_left: what the caller's table may still
 * add, charged l + 1 (before the cut); -ENOBUFS when that is more. */
static int add_symbol_n(ElfSymbols *e, uint64_t *name_bytes_left, uint64_t addr, uint64_t size, const char *name,
                        size_t l, bool global) {
        if ((uint64_t) l + 1 > *name_bytes_left)
                return -ENOBUFS;
        *name_bytes_left -= (uint64_t) l + 1;
        l = MIN(l, (size_t) PROFILE_NAME_BYTES_MAX - 1);

        if (e->n_syms >= ELF_SYMBOLS_MAX || e->names_len + l + 1 > UINT32_MAX)
                return -E2BIG;
        if (!GREEDY_REALLOC(e->names, e->names_allocated, e->names_len + l + 1) ||
            !GREEDY_REALLOC(e->syms, e->n_syms_allocated, e->n_syms + 1))
                return -ENOMEM;
        memcpy(e->names + e->names_len, name, l);
        e->names[e->names_len + l] = '\0';
        e->syms[e->n_syms++] = (ElfSym) { .addr = addr, .size = size, .name = (uint32_t) e->names_len, .global = global };
        e->names_len += l + 1;
        return 0;
}

/* The name bytes one symbol table may add, beyond this many times its string table's size: a
 * real table's names are its strings, a few shared (suffixes, local functions of one name); a
 * hostile one's symbols could all name one long string. */
#define SYMBOL_NAME_BYTES_PER_STRTAB_BYTE 4U
#define SYMBOL_NAME_BYTES_SLACK (1024U * 1024U)

/* How far a symbol the file gives no size may stretch (*ret_size): to the end of its own section, so
 * that, taken to the next symbol, it does not take in the sections between (the PLT, which follows
 * .init and its _init). 0 when its section is not known (a special index, a header we cannot read,
 * an address outside it): then as far as the next symbol, as before. False if it is at the very
 * end of its section, where it covers nothing. */
static bool unsized_symbol_size(Elf *elf, const GElf_Sym *sym, uint64_t *ret_size) {
        Elf_Scn *scn;
        GElf_Shdr sh;

        *ret_size = 0;
        if (sym->st_shndx == SHN_UNDEF || sym->st_shndx >= SHN_LORESERVE)
                return true;
        scn = elf_getscn(elf, sym->st_shndx);
        if (!scn || !gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC) || sh.sh_size == 0 ||
            sh.sh_addr + sh.sh_size < sh.sh_addr)
                return true;
        if (sym->st_value < sh.sh_addr || sym->st_value > sh.sh_addr + sh.sh_size)
                return true;
        *ret_size = sh.sh_addr + sh.sh_size - sym->st_value;
        return *ret_size > 0;
}

/* A label (STT_NOTYPE) in an allocated, executable section: where hand-written assembly without
 * .type puts its entry points, which perf names by them too. */
static bool in_code_section(Elf *elf, const GElf_Sym *sym) {
        Elf_Scn *scn;
        GElf_Shdr sh;

        if (sym->st_shndx >= SHN_LORESERVE)
                return false;
        scn = elf_getscn(elf, sym->st_shndx);
        return scn && gelf_getshdr(scn, &sh) && (sh.sh_flags & (SHF_ALLOC | SHF_EXECINSTR)) == (SHF_ALLOC | SHF_EXECINSTR);
}

/* The symbols of the file's section of type sh_type: the first one, as a file has one of each (a
 * hostile file's many headers that name the same bytes would each be read in full). */
static int add_symbols(ElfSymbols *e, Elf *elf, GElf_Word sh_type) {
        Elf_Scn *scn = NULL;
        size_t added = 0;
        bool seen = false;

        while (!seen && (scn = elf_nextscn(elf, scn))) {
                GElf_Shdr shdr, strhdr;
                Elf_Scn *strscn;
                Elf_Data *data;
                uint64_t name_bytes_left;
                size_t n;

                if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != sh_type)
                        continue;
                seen = true;
                if (shdr.sh_entsize == 0 || shdr.sh_type == SHT_NOBITS)
                        continue;
                data = elf_getdata(scn, NULL);
                if (!data || !data->d_buf)
                        continue;
                n = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
                if (n == 0)
                        continue;
                n = data->d_size / n;
                strscn = elf_getscn(elf, shdr.sh_link);
                if (!strscn || !gelf_getshdr(strscn, &strhdr))
                        continue;
                name_bytes_left = MIN(strhdr.sh_size, (uint64_t) UINT32_MAX) * SYMBOL_NAME_BYTES_PER_STRTAB_BYTE;
                name_bytes_left += SYMBOL_NAME_BYTES_SLACK;

                for (size_t i = 0; i < n; i++) {
                        GElf_Sym sym;
                        const char *name;
                        uint64_t size;
                        int r;

                        if (!gelf_getsym(data, (int) MIN(i, (size_t) INT_MAX), &sym) || i > INT_MAX)
                                break;
                        bool label = GELF_ST_TYPE(sym.st_info) == STT_NOTYPE;
                        if ((GELF_ST_TYPE(sym.st_info) != STT_FUNC && GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC &&
                             !label) ||
                            sym.st_shndx == SHN_UNDEF || sym.st_value == 0)
                                continue;
                        if (label && !in_code_section(elf, &sym))
                                continue;
                        name = elf_strptr(elf, shdr.sh_link, sym.st_name);
                        if (!name || !*name)
                                continue;
                        /* ARM's mapping symbols ($x, $d.1) and assemblers' local labels name no function */
                        if (label && (name[0] == '$' || startswith(name, ".L")))
                                continue;
                        size = sym.st_size;
                        if (size == 0 && !unsized_symbol_size(elf, &sym, &size))
                                continue; /* at the very end of its section: it covers nothing */
                        r = add_symbol_n(e, &name_bytes_left, sym.st_value, size, name,
                                         strnlen(name, PROFILE_NAME_BYTES_MAX - 1),
                                         GELF_ST_BIND(sym.st_info) != STB_LOCAL);
                        if (r == -ENOBUFS)
                                break; /* the rest unnamed */
                        if (r < 0)
                                return r;
                        e->syms[e->n_syms - 1].unsized = sym.st_size == 0;
                        e->syms[e->n_syms - 1].label = label;
                        added += !label;
                }
        }
        return added > 0;
}

/* By address; of the symbols at one address the first is the name: one with a size (cgo's
 * zero-size runtime.etext marker shares the address of the first C function after Go's text), a
 * global one, then the string table's order. */
static int sym_cmp(const void *a, const void *b) {
        const ElfSym *x = a, *y = b;
        if (x->addr != y->addr)
                return x->addr < y->addr ? -1 : 1;
        if (x->label != y->label)
                return x->label ? 1 : -1;
        if (x->unsized != y->unsized)
                return x->unsized ? 1 : -1;
        if (x->global != y->global)
                return x->global ? -1 : 1;
        return x->name < y->name ? -1 : x->name > y->name;
}

/* The end of what a kept function covers: its size, or when the file gave none (crtstuff's
 * frame_dummy, hand-written assembly with .type alone) up to the next function (next_fn), never
 * past the end of its section. */
static uint64_t function_end(const ElfSym *s, uint64_t next_fn) {
        uint64_t end = s->size > 0 && s->addr + s->size > s->addr ? s->addr + s->size : UINT64_MAX;
        return s->unsized ? MIN(end, next_fn) : end;
}

/* Extends what the functions kept so far cover by f's code: *covered by a function with a size,
 * *covered_unsized by one without (its end a guess). */
static void cover(const ElfSym *f, uint64_t next_fn, uint64_t *covered, uint64_t *covered_unsized) {
        uint64_t *c = f->unsized ? covered_unsized : covered;
        *c = MAX(*c, function_end(f, next_fn));
}

static void sort_symbols(ElfSymbols *e) {
        _cleanup_free_ uint64_t *next_fn = NULL;
        /* The end of what the functions kept so far cover: those with a size, and those without
         * one, whose end is only a guess (up to the next function). A global label is an entry
         * point that other code calls: it ends a function without a size before it (crtstuff's
         * frame_dummy, which the first object's code follows), as perf ends it there. */
        uint64_t covered = 0, covered_unsized = 0;
        size_t k = 0;

        if (e->n_syms == 0)
                return;
        qsort(e->syms, e->n_syms, sizeof(ElfSym), sym_cmp);
        /* For each symbol, the address of the first function after its own address. */
        next_fn = new(uint64_t, e->n_syms);
        if (next_fn) {
                uint64_t above = UINT64_MAX;
                for (size_t i = e->n_syms; i > 0;) {
                        size_t g = i;
                        bool has_fn = false;
                        while (g > 0 && e->syms[g - 1].addr == e->syms[i - 1].addr)
                                has_fn |= !e->syms[--g].label;
                        for (size_t t = g; t < i; t++)
                                next_fn[t] = above;
                        if (has_fn)
                                above = e->syms[g].addr;
                        i = g;
                }
        } else
                covered = covered_unsized = UINT64_MAX; /* no memory to place them: no labels */

        for (size_t i = 0; i < e->n_syms; i++) {
                const ElfSym *s = &e->syms[i];

                if (k > 0 && e->syms[k - 1].addr == s->addr) {
                        /* The size the file gave wins over the rest of a section; with none given,
                         * the furthest bound (0, none at all, is the furthest). Labels sort last
                         * and add nothing. */
                        ElfSym *kept = &e->syms[k - 1];
                        if (s->label)
                                continue;
                        if (kept->unsized == s->unsized)
                                kept->size = kept->size == 0 || s->size == 0 ? 0 : MAX(kept->size, s->size);
                        if (next_fn)
                                cover(kept, next_fn[i], &covered, &covered_unsized);
                        continue;
                }
                /* A label inside a function (a loop's) is not a function: labels name only code no
                 * function covers, up to the next symbol or their section's end. */
                if (s->label && (s->addr < covered || (s->addr < covered_unsized && !s->global)))
                        continue;
                e->syms[k++] = *s;
                if (!s->label && next_fn)
                        cover(s, next_fn[i], &covered, &covered_unsized);
        }
        e->n_syms = k;
}

static bool has_section(Elf *elf, GElf_Word type) {
        Elf_Scn *scn = NULL;
        GElf_Shdr shdr;

        while ((scn = elf_nextscn(elf, scn)))
                if (gelf_getshdr(scn, &shdr) && shdr.sh_type == type && shdr.sh_size > 0)
                        return true;
        return false;
}

static void read_build_id(ElfSymbols *e, Elf *elf) {
        Elf_Scn *scn = NULL;
        GElf_Shdr shdr;

        while ((scn = elf_nextscn(elf, scn))) {
                Elf_Data *data;
                GElf_Nhdr nhdr;
                size_t off = 0, name_off, desc_off;

                if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_NOTE)
                        continue;
                data = elf_getdata(scn, NULL);
                if (!data)
                        continue;
                while ((off = gelf_getnote(data, off, &nhdr, &name_off, &desc_off)) > 0) {
                        if (nhdr.n_type != NT_GNU_BUILD_ID || nhdr.n_namesz != 4 ||
                            memcmp((const char *) data->d_buf + name_off, "GNU", 4) != 0)
                                continue;
                        if (nhdr.n_descsz == 0 || nhdr.n_descsz > ELF_BUILD_ID_BYTES_MAX)
                                continue;
                        memcpy(e->build_id, (const uint8_t *) data->d_buf + desc_off, nhdr.n_descsz);
                        e->build_id_len = nhdr.n_descsz;
                        build_id_to_hex(e->build_id, e->build_id_len, e->build_id_hex);
                        return;
                }
        }
}

static void read_segments(ElfSymbols *e, Elf *elf) {
        size_t phnum;

        if (elf_getphdrnum(elf, &phnum) < 0)
                return;
        for (size_t i = 0; i < phnum && e->n_segments < ELF_SEGMENTS_MAX; i++) {
                GElf_Phdr ph;
                if (!gelf_getphdr(elf, (int) i, &ph) || ph.p_type != PT_LOAD)
                        continue;
                if (ph.p_offset + ph.p_filesz < ph.p_offset)
                        continue;
                if (ph.p_flags & PF_X)
                        e->exec_segments |= UINT64_C(1) << e->n_segments;
                e->segments[e->n_segments++] = (ElfSegment) {
                        .offset = ph.p_offset,
                        .vaddr = ph.p_vaddr,
                        .filesz = ph.p_filesz,
                };
        }
        if (e->exec_segments == 0)
                return;

        /* An executable segment holds more than code where the linker does not keep code apart
         * (-z separate-code, ld.bfd's default on x86 only: on arm64 the read-only data, .eh_frame_hdr
         * and .eh_frame follow .text in it): where section headers say so, the code ends with its
         * last code section. */
        Elf_Scn *scn = NULL;
        while ((scn = elf_nextscn(elf, scn))) {
                GElf_Shdr sh;
                uint64_t end;

                if (!gelf_getshdr(scn, &sh) || (sh.sh_flags & (SHF_ALLOC | SHF_EXECINSTR)) != (SHF_ALLOC | SHF_EXECINSTR) ||
                    sh.sh_type == SHT_NOBITS || sh.sh_addr + sh.sh_size < sh.sh_addr)
                        continue;
                end = sh.sh_addr + sh.sh_size;
                for (size_t i = 0; i < e->n_segments; i++) {
                        ElfSegment *seg = &e->segments[i];

                        if ((e->exec_segments & UINT64_C(1) << i) && sh.sh_addr >= seg->vaddr &&
                            end <= seg->vaddr + seg->filesz && end > seg->code_end)
                                seg->code_end = end;
                }
        }
}

/*
 * .eh_frame_hdr by section name, else through PT_GNU_EH_FRAME (section headers can be stripped,
 * the program headers the loader needs cannot). A missing or unreadable table leaves none; only
 * running out of memory is an error.
 */
static int read_function_starts(ElfSymbols *e, Elf *elf) {
        Elf_Scn *scn = elf_section_by_name(elf, ".eh_frame_hdr", /* with_contents= */ false);
        Elf_Data *data = NULL;
        uint64_t vaddr = 0;
        GElf_Ehdr eh;
        int r;

        if (!gelf_getehdr(elf, &eh))
                return 0;

        if (scn) {
                GElf_Shdr shdr;
                if (gelf_getshdr(scn, &shdr) && shdr.sh_type == SHT_PROGBITS && shdr.sh_size <= EH_FRAME_HDR_BYTES_MAX) {
                        data = elf_getdata(scn, NULL);
                        vaddr = shdr.sh_addr;
                }
        } else {
                size_t phnum;
                if (elf_getphdrnum(elf, &phnum) < 0)
                        return 0;
                for (size_t i = 0; i < phnum; i++) {
                        GElf_Phdr ph;
                        if (!gelf_getphdr(elf, (int) MIN(i, (size_t) INT_MAX), &ph) || ph.p_type != PT_GNU_EH_FRAME)
                                continue;
                        if (ph.p_filesz <= EH_FRAME_HDR_BYTES_MAX)
                                data = elf_getdata_rawchunk(elf, (int64_t) MIN(ph.p_offset, (uint64_t) INT64_MAX),
                                                            ph.p_filesz, ELF_T_BYTE);
                        vaddr = ph.p_vaddr;
                        break;
                }
        }
        if (!data || !data->d_buf)
                return 0;

        r = elf_parse_eh_frame_hdr(data->d_buf, data->d_size, vaddr, eh.e_ident[EI_DATA] == ELFDATA2MSB,
                                   &e->function_starts, &e->n_function_starts);
        return r == -ENOMEM ? r : 0;
}

static int load_symtab_from_path(ElfSymbols *e, const char *root, const char *path) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_(elf_endp) Elf *elf = NULL;

        fd = elf_debug_file_open(root, path);
        if (fd < 0)
                return fd;
        elf = elf_begin(fd, ELF_C_READ, NULL);
        if (!elf || elf_kind(elf) != ELF_K_ELF)
                return -ENOEXEC;
        return add_symbols(e, elf, SHT_SYMTAB);
}

/* The .symtab of a separate debug file: by build id, then by .gnu_debuglink, each under every root. */
static bool load_debug_file(ElfSymbols *e, Elf *elf, const char *const *roots, const char *path) {
        const char *link = elf_debuglink_name(elf);
        size_t before = e->n_syms;

        for (ElfDebugWay way = 0; way < _ELF_DEBUG_WAY_MAX; way++) {
                char p[PATH_MAX];

                if (!elf_debug_file_path(way, e->build_id, e->build_id_len, link, path, p, sizeof(p)))
                        continue;
                for (const char *const *root = roots; *root; root++) {
                        if (load_symtab_from_path(e, *root, p) > 0)
                                return true;
                        e->n_syms = before; /* a half-read file contributes nothing */
                }
        }
        return false;
}

/* .gnu_debugdata: an xz stream holding a small ELF whose .symtab has the local functions. */
static bool load_minidebuginfo(ElfSymbols *e, Elf *elf) {
        Elf_Scn *scn = elf_section_by_name(elf, ".gnu_debugdata", /* with_contents= */ false);
        _cleanup_free_ uint8_t *out = NULL;
        _cleanup_(elf_endp) Elf *mini = NULL;
        size_t out_size = 0, in_pos = 0, out_allocated = 0;
        uint64_t memlimit = 128U * 1024U * 1024U;
        Elf_Data *data;
        lzma_stream s = LZMA_STREAM_INIT;
        lzma_ret lr;
        size_t before = e->n_syms;

        if (!scn)
                return false;
        data = elf_getdata(scn, NULL);
        if (!data || !data->d_buf || data->d_size == 0)
                return false;
        if (lzma_stream_decoder(&s, memlimit, 0) != LZMA_OK)
                return false;
        s.next_in = data->d_buf;
        s.avail_in = data->d_size;
        for (;;) {
                if (out_size == out_allocated) {
                        if (out_allocated >= ELF_MINIDEBUG_BYTES_MAX ||
                            !GREEDY_REALLOC(out, out_allocated, MIN(out_allocated + 65536, (size_t) ELF_MINIDEBUG_BYTES_MAX))) {
                                lzma_end(&s);
                                return false;
                        }
                }
                s.next_out = out + out_size;
                s.avail_out = out_allocated - out_size;
                lr = lzma_code(&s, LZMA_FINISH);
                out_size = out_allocated - s.avail_out;
                if (lr == LZMA_STREAM_END)
                        break;
                if (lr != LZMA_OK && lr != LZMA_BUF_ERROR) {
                        lzma_end(&s);
                        return false;
                }
                if (lr == LZMA_BUF_ERROR && s.avail_out != 0) { /* truncated input */
                        lzma_end(&s);
                        return false;
                }
        }
        (void) in_pos;
        lzma_end(&s);

        mini = elf_memory((char *) out, out_size);
        if (!mini || elf_kind(mini) != ELF_K_ELF)
                return false;
        if (add_symbols(e, mini, SHT_SYMTAB) <= 0) {
                e->n_syms = before;
                return false;
        }
        return true;
}

/* Symbols another reader names (a Go table's functions, PLT entries) going into e, and the name
 * bytes they may still add: a real table's names are its own bytes, once each; a hostile one's
 * could all name one long stretch. */
typedef struct NamedAdd {
        ElfSymbols *e;
        uint64_t name_bytes_left;
        bool global;
} NamedAdd;

static int on_named(uint64_t entry, uint64_t size, const char *name, size_t name_len, void *userdata) {
        NamedAdd *a = userdata;

        return add_symbol_n(a->e, &a->name_bytes_left, entry, size, name, name_len, a->global);
}

/* PLT entries as NAME@plt (elf-plt.c), within the name bytes the dynamic symbols' strings allow. */
static int add_plt_symbols(ElfSymbols *e, Elf *elf) {
        uint64_t strtab_bytes = elf_plt_strtab_bytes(elf);
        NamedAdd a = { e, MIN(strtab_bytes, (uint64_t) UINT32_MAX) * SYMBOL_NAME_BYTES_PER_STRTAB_BYTE + SYMBOL_NAME_BYTES_SLACK,
                       /* global= */ false };
        int r = elf_plt_entries(elf, ELF_SYMBOLS_MAX, on_named, &a);

        return r == -ENOBUFS || r == -E2BIG ? 0 : r; /* the rest unnamed */
}

static const char *const default_roots[] = { "", NULL };

/* A section larger than this is not copied to put its relocations in: a table there that needs
 * them goes unread. */
#define GO_SECTION_COPY_BYTES_MAX (256U * 1024 * 1024)
/* The functab entries a search of one section may look at, beyond one for every 8 bytes: a table
 * holds fewer (16 bytes of functab and a 40-byte _func each), and headers that only look like
 * one, many and overlapping in a hostile file, cost this much in all, not their count squared. */
#define GO_SEARCH_ENTRIES_MIN 65536U

/* The name bytes a table may add beyond its own size (names cut at PROFILE_NAME_BYTES_MAX may
 * each add a NUL). */
#define GO_NAME_BYTES_SLACK 65536U

/* The table at data (size bytes to the end of its section), relocated already: its functions added
 * to e. 1 when it named any; 0, e as it was, when it is no table, a damaged one or the budget ran
 * out; or -ENOMEM. */
static int add_go_table(ElfSymbols *e, const uint8_t *data, size_t size, uint64_t *budget) {
        size_t before = e->n_syms, names_before = e->names_len;
        int r;

        r = gopclntab_parse(data, size, /* big_endian= */ false, budget, on_named,
                            &(NamedAdd) { .e = e, .name_bytes_left = (uint64_t) size + GO_NAME_BYTES_SLACK, .global = true });
        if (r == -ENOMEM)
                return r;
        if (r < 0 || e->n_syms == before) {
                e->n_syms = before;
                e->names_len = names_before;
                return 0;
        }
        return 1;
}

/*
 * A Go program stripped of .symtab still has its runtime's own function table: .gopclntab; a
 * PIE's, which takes relocations, in .data.rel.ro.gopclntab, or merged into .data.rel.ro when a
 * host linker linked it (-linkmode=external, cgo), found there by its 8-byte header at a
 * pointer-size boundary, and only in a Go program (its build id note or build info section), so
 * other stripped programs are not searched. A header found so is taken only if the table behind
 * it parses, every _func record's entry its functab entry's (the Go 1.2-1.15 header holds little
 * else to check). A section's relocations are put in once, at its first header.
 */
int elf_go_tables(Elf *elf, ElfGoTableFunc fn, void *userdata) {
        static const char *const sections[] = { ".gopclntab", ".data.rel.ro.gopclntab", ".data.rel.ro" };
        GElf_Ehdr eh;
        unsigned ptr_size;
        bool go;

        if (!gelf_getehdr(elf, &eh) || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
            (eh.e_ident[EI_CLASS] != ELFCLASS64 && eh.e_ident[EI_CLASS] != ELFCLASS32))
                return 0;
        ptr_size = eh.e_ident[EI_CLASS] == ELFCLASS64 ? 8 : 4; /* a 32-bit program's (GOARCH=386) are 4 */
        go = elf_section_by_name(elf, ".note.go.buildid", /* with_contents= */ false) ||
             elf_section_by_name(elf, ".go.buildinfo", /* with_contents= */ false);

        for (size_t i = 0; i < ELEMENTSOF(sections) - !go; i++) {
                Elf_Scn *scn = elf_section_by_name(elf, sections[i], /* with_contents= */ false);
                _cleanup_free_ uint8_t *copy = NULL;
                const uint8_t *bytes;
                bool relocated = false;
                uint64_t budget;
                Elf_Data *data;
                GElf_Shdr sh;

                if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
                        continue;
                data = elf_getdata(scn, NULL);
                if (!data || !data->d_buf || data->d_size < 16)
                        continue;
                bytes = data->d_buf;
                budget = data->d_size / 8 + GO_SEARCH_ENTRIES_MIN;
                /* A section of its own starts with the header; .data.rel.ro is searched. */
                for (size_t off = 0; off + 16 <= data->d_size && (off == 0 || i == 2) && budget > 0;
                     off += ptr_size) {
                        int r;

                        if (!gopclntab_header_like(bytes + off, ptr_size))
                                continue;
                        if (!relocated) {
                                relocated = true;
                                if (data->d_size <= GO_SECTION_COPY_BYTES_MAX) {
                                        r = elf_relocated_copy(elf, data->d_buf, data->d_size, sh.sh_addr,
                                                               &copy);
                                        if (r < 0)
                                                return r;
                                        if (copy)
                                                bytes = copy;
                                }
                        }
                        r = fn(bytes + off, data->d_size - off, &budget, userdata);
                        if (r != 0)
                                return r;
                }
        }
        return 0;
}

static int add_go_table_of(const uint8_t *data, size_t size, uint64_t *budget, void *userdata) {
        return add_go_table(userdata, data, size, budget);
}

static int add_go_symbols(ElfSymbols *e, Elf *elf) {
        return elf_go_tables(elf, add_go_table_of, e);
}

int elf_symbols_load_fd(int fd, const char *path, const char *const *debug_roots, ElfSymbols **ret) {
        _cleanup_(elf_symbols_freep) ElfSymbols *e = NULL;
        _cleanup_(elf_endp) Elf *elf = NULL;
        int r;

        elf_library_init();
        e = elf_symbols_new_empty();
        if (!e)
                return -ENOMEM;
        if (!debug_roots)
                debug_roots = default_roots;

        elf = elf_begin(fd, ELF_C_READ, NULL);
        if (!elf || elf_kind(elf) != ELF_K_ELF) {
                *ret = TAKE_PTR(e);
                return -ENOEXEC;
        }

        read_segments(e, elf);
        read_build_id(e, elf);

        if (has_section(elf, SHT_SYMTAB)) {
                r = add_symbols(e, elf, SHT_SYMTAB);
                if (r == -ENOMEM)
                        return r;
                /* Labels alone are no symbol table: a file stripped but for a label or two still
                 * takes its functions' names from the debug file or .dynsym. */
                if (r > 0 || (r < 0 && e->n_syms > 0))
                        e->source = ELF_SYMBOLS_SYMTAB;
                else
                        e->n_syms = 0;
        }
        if (e->source == ELF_SYMBOLS_NONE &&
            load_debug_file(e, elf, debug_roots, path))
                e->source = ELF_SYMBOLS_DEBUG_FILE;
        if (e->source == ELF_SYMBOLS_NONE) {
                e->n_syms = 0;
                r = add_symbols(e, elf, SHT_DYNSYM);
                if (r == -ENOMEM)
                        return r;
                if (e->n_syms > 0)
                        e->source = ELF_SYMBOLS_DYNSYM;
                if (load_minidebuginfo(e, elf))
                        e->source = ELF_SYMBOLS_MINIDEBUG;
        }
        if (e->source == ELF_SYMBOLS_NONE || e->source == ELF_SYMBOLS_DYNSYM) {
                r = add_go_symbols(e, elf);
                if (r < 0)
                        return r;
                if (r > 0)
                        e->source = ELF_SYMBOLS_GOPCLNTAB;
        }
        if (e->source == ELF_SYMBOLS_NONE || e->source == ELF_SYMBOLS_DYNSYM) {
                /* Always from this file, the one mapped: a debug file's copy would be NOBITS. */
                r = read_function_starts(e, elf);
                if (r < 0)
                        return r;
        }
        /* Whatever named the rest: from this file too, for the same reason. */
        r = add_plt_symbols(e, elf);
        if (r < 0)
                return r;
        sort_symbols(e);
        *ret = TAKE_PTR(e);
        return 0;
}

int elf_symbols_load_path(const char *path, const char *const *debug_roots, ElfSymbols **ret) {
        _cleanup_close_ int fd = -EBADF;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return -errno;
        return elf_symbols_load_fd(fd, path, debug_roots, ret);
}

int elf_symbols_load_memory(const void *data, size_t size, ElfSymbols **ret) {
        _cleanup_(elf_symbols_freep) ElfSymbols *e = NULL;
        _cleanup_(elf_endp) Elf *elf = NULL;
        _cleanup_free_ char *copy = NULL;
        int r;

        elf_library_init();
        e = elf_symbols_new_empty();
        copy = memdup(data, size);
        if (!e || !copy)
                return -ENOMEM;
        elf = elf_memory(copy, size);
        if (!elf || elf_kind(elf) != ELF_K_ELF) {
                *ret = TAKE_PTR(e);
                return -ENOEXEC;
        }
        read_segments(e, elf);
        read_build_id(e, elf);
        r = add_symbols(e, elf, has_section(elf, SHT_SYMTAB) ? SHT_SYMTAB : SHT_DYNSYM);
        if (r == -ENOMEM)
                return r;
        e->source = has_section(elf, SHT_SYMTAB) ? ELF_SYMBOLS_SYMTAB : ELF_SYMBOLS_DYNSYM;
        if (e->source == ELF_SYMBOLS_DYNSYM) {
                r = read_function_starts(e, elf);
                if (r < 0)
                        return r;
        }
        sort_symbols(e);
        elf_end(TAKE_PTR(elf)); /* before the copy it reads from goes */
        *ret = TAKE_PTR(e);
        return 0;
}

/* The segment elf_symbols_offset_to_vaddr() takes for offset: the first that holds it. */
static const ElfSegment *segment_for(const ElfSymbols *e, uint64_t offset) {
        for (size_t i = 0; i < e->n_segments; i++) {
                const ElfSegment *s = &e->segments[i];
                if (offset >= s->offset && offset - s->offset < s->filesz)
                        return s;
        }
        return NULL;
}

bool elf_symbols_offset_to_vaddr(const ElfSymbols *e, uint64_t offset, uint64_t *ret_vaddr) {
        const ElfSegment *s = segment_for(e, offset);

        if (!s)
                return false;
        *ret_vaddr = offset - s->offset + s->vaddr;
        return true;
}

bool elf_symbols_offset_span(const ElfSymbols *e, uint64_t offset, uint64_t *ret_start, uint64_t *ret_end) {
        const ElfSegment *s = segment_for(e, offset);
        uint64_t start, end;

        if (!s)
                return false;
        start = s->offset;
        end = s->offset + s->filesz;
        /* A segment before s that overlaps it would be taken first where it does. */
        for (const ElfSegment *o = e->segments; o < s; o++) {
                if (o->offset + o->filesz <= offset)
                        start = MAX(start, o->offset + o->filesz);
                else
                        end = MIN(end, o->offset); /* it does not hold offset: it starts after it */
        }
        *ret_start = start;
        *ret_end = end;
        return true;
}

/* The index of the first symbol that starts after vaddr (e->n_syms if none): the one before it,
 * if any, is the last that starts at or below vaddr. */
static size_t symbols_after(const ElfSymbols *e, uint64_t vaddr) {
        size_t lo = 0, hi = e->n_syms;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (e->syms[mid].addr <= vaddr)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

bool elf_symbols_lookup(const ElfSymbols *e, uint64_t vaddr, const char **ret_name, uint64_t *ret_offset,
                        uint64_t *ret_extent) {
        size_t lo = symbols_after(e, vaddr);
        const ElfSym *s;

        if (lo == 0)
                return false;
        s = &e->syms[lo - 1];
        if (s->size > 0 && vaddr - s->addr >= s->size)
                return false;
        *ret_name = e->names + s->name;
        *ret_offset = vaddr - s->addr;
        if (ret_extent) {
                /* Every address from its start up to the next symbol's finds it (the last of
                 * several at one address, as vaddr did), and within its size when it has one. */
                uint64_t extent = lo < e->n_syms ? e->syms[lo].addr - s->addr : UINT64_MAX - s->addr;
                *ret_extent = s->size > 0 ? MIN(extent, s->size) : extent;
        }
        return true;
}

bool elf_symbols_uncovered(const ElfSymbols *e, uint64_t vaddr, uint64_t *ret_start, uint64_t *ret_end) {
        size_t lo = symbols_after(e, vaddr);
        const ElfSym *s = lo > 0 ? &e->syms[lo - 1] : NULL;

        if (s && (s->size == 0 || vaddr - s->addr < s->size))
                return false;
        *ret_start = s ? s->addr + s->size : 0;
        *ret_end = lo < e->n_syms ? e->syms[lo].addr : UINT64_MAX;
        return true;
}

size_t elf_symbols_function_starts_count(const ElfSymbols *e) {
        return e->n_function_starts;
}

bool elf_symbols_function_start(const ElfSymbols *e, uint64_t vaddr, uint64_t *ret_offset, uint64_t *ret_extent) {
        size_t lo = 0, hi = e->n_function_starts;
        uint64_t start, extent = 0;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (e->function_starts[mid] <= vaddr)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        if (lo == 0)
                return false;
        start = e->function_starts[lo - 1];
        if (vaddr - start >= ELF_FUNCTION_BYTES_MAX)
                return false;

        /* Past the end of the code that precedes it (in data, or in a segment without unwind
         * information) an address is in no function we know of. */
        for (size_t i = 0; i < e->n_segments; i++) {
                const ElfSegment *s = &e->segments[i];
                uint64_t end = s->code_end != 0 ? s->code_end : s->vaddr + s->filesz;

                if ((e->exec_segments & UINT64_C(1) << i) && start >= s->vaddr && start < end && end - start > extent)
                        extent = end - start;
        }
        if (vaddr - start >= extent)
                return false;
        *ret_offset = vaddr - start;
        if (ret_extent) {
                if (extent > ELF_FUNCTION_BYTES_MAX)
                        extent = ELF_FUNCTION_BYTES_MAX;
                if (lo < e->n_function_starts && e->function_starts[lo] - start < extent)
                        extent = e->function_starts[lo] - start;
                *ret_extent = extent;
        }
        return true;
}
