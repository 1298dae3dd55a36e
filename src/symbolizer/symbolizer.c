/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The symbolizer's caches and the lookup path. A file is reached, in order, through
 * /proc/PID/map_files/START-END (the very file mapped, even deleted or in another mount
 * namespace), /proc/PID/root/PATH (containers), then PATH; by path we insist the inode (and its
 * generation, where the filesystem tells it) matches the mapping's, so an upgraded binary is not
 * read for an old process's addresses. A file that cannot be read is cached as an empty table, so
 * we try once per identity, not once per sample; one that could not be opened at all, its
 * process gone, is that process's failure only (file-failures.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include <libiberty/demangle.h>

#include "basic/alloc-util.h"
#include "basic/cleanup.h"
#include "basic/fileio.h"
#include "basic/hashmap.h"
#include "basic/macro.h"
#include "basic/string-util.h"
#include "basic/time-util.h"
#include "symbolizer/elf-util.h"
#include "symbolizer/file-failures.h"
#include "symbolizer/kallsyms.h"
#include "symbolizer/symbolizer-elf.h"
#include "symbolizer/symbolizer-jitmap.h"
#include "symbolizer/vdso-images.h"
#include "symbolizer/symbolizer.h"

typedef struct JitEntry {
        JitMap *map; /* NULL: no map file */
        uint64_t epoch;
        uint64_t ino, size;
        struct timespec mtime;
        char path[64];
} JitEntry;

struct Symbolizer {
        char *kallsyms_path;
        char *proc_root;
        char *jit_dir;
        uint64_t cache_bytes_max;
        uint64_t kallsyms_reload_usec;
        uint64_t flush_interval_usec;
        uint64_t flushed_usec; /* CLOCK_MONOTONIC of the last drop of the caches; 0 = none yet */
        bool function_frames;
        char kernel_build_id[2 * ELF_BUILD_ID_BYTES_MAX + 1]; /* "" when unknown */

        uint64_t generation; /* symbolizer_generation() */
        Kallsyms *kallsyms;
        uint64_t kallsyms_loaded_usec;
        bool kallsyms_reload;
        struct {            /* kernel return addresses repeat endlessly: remember the last answers */
                uint64_t addr; /* the looked-up address, 0 = empty */
                const char *name, *dso;
                uint64_t offset, extent;
        } kcache[4096];

        Hashmap *files;     /* identity -> ElfSymbols* (borrowed from owned[]) */
        struct {            /* in front of files: the last few identities, no hashing */
                uint64_t dev, ino, ino_gen;
                ElfSymbols *e;
        } recent[16];
        Hashmap *build_ids; /* build-id bytes -> ElfSymbols* */
        ElfSymbols **owned;
        size_t n_owned, n_owned_allocated;
        /* The processes a file could not be opened through, and the empty table their frames
         * get meanwhile (one for all). */
        FileFailures failures;
        ElfSymbols *gone;

        Hashmap *demangled; /* mangled name pointer -> demangled string (owned in demangled_owned) */
        char **demangled_owned;
        size_t n_demangled_owned, n_demangled_owned_allocated;

        /* Our own vDSO, which names [vdso] frames of 64-bit processes whose vDSO is the same size
         * (the same image: one per architecture and kernel). Loaded once; not part of the bounded
         * cache. */
        ElfSymbols *vdso;
        uint64_t vdso_size;
        bool vdso_tried;
        VdsoImages *vdso32; /* 32-bit processes' vDSO symbols */

        Hashmap *jit; /* pid -> JitEntry* */
        JitEntry **jit_owned;
        size_t n_jit_owned, n_jit_owned_allocated;
        uint64_t epoch;

        SymbolizerStats stats;
};

static void files_flush(Symbolizer *z) {
        /* Demangled names are keyed by pointers into the tables about to go. */
        for (size_t i = 0; i < z->n_demangled_owned; i++)
                free(z->demangled_owned[i]);
        z->n_demangled_owned = 0;
        z->demangled = hashmap_free(z->demangled);

        for (size_t i = 0; i < z->n_owned; i++)
                elf_symbols_free(z->owned[i]);
        z->n_owned = 0;
        memset(z->recent, 0, sizeof(z->recent));
        z->files = hashmap_free(z->files);
        z->build_ids = hashmap_free(z->build_ids);
        z->stats.cache_bytes = 0;
}

static void jit_flush(Symbolizer *z) {
        for (size_t i = 0; i < z->n_jit_owned; i++) {
                if (z->jit_owned[i]->map)
                        z->stats.cache_bytes -= MIN(z->stats.cache_bytes, jit_map_bytes(z->jit_owned[i]->map));
                jit_map_free(z->jit_owned[i]->map);
                free(z->jit_owned[i]);
        }
        z->n_jit_owned = 0;
        z->jit = hashmap_free(z->jit);
}

Symbolizer *symbolizer_free(Symbolizer *z) {
        if (!z)
                return NULL;
        files_flush(z);
        jit_flush(z);
        free(z->owned);
        free(z->demangled_owned);
        free(z->jit_owned);
        kallsyms_free(z->kallsyms);
        elf_symbols_free(z->vdso);
        elf_symbols_free(z->gone);
        file_failures_done(&z->failures);
        vdso_images_free(z->vdso32);
        free(z->kallsyms_path);
        free(z->proc_root);
        free(z->jit_dir);
        return mfree(z);
}

int symbolizer_reload_kallsyms(Symbolizer *z) {
        Kallsyms *k = NULL;
        int r;

        if (isempty(z->kallsyms_path))
                return 0;
        r = kallsyms_load(z->kallsyms_path, &k);
        if (r < 0)
                return r;
        kallsyms_free(z->kallsyms);
        z->kallsyms = k;
        z->generation++;
        z->kallsyms_loaded_usec = now_usec(CLOCK_MONOTONIC);
        memset(z->kcache, 0, sizeof(z->kcache));
        z->stats.kallsyms_symbols = kallsyms_size(k);
        return 0;
}

/* The running kernel's build id, from its notes (/sys/kernel/notes: the .notes section of vmlinux,
 * whose NT_GNU_BUILD_ID the kernel's link adds; Linux kernel/ksysfs.c, v6.1). Read once: it is the
 * same until the next boot. */
static void read_kernel_build_id(Symbolizer *z, const char *path) {
        _cleanup_free_ char *data = NULL;
        const uint8_t *id;
        size_t size, n;

        if (isempty(path) || read_full_file(path, 64 * 1024, &data, &size) < 0)
                return;
        n = elf_notes_gnu_build_id((const uint8_t *) data, size, ELF_BUILD_ID_BYTES_MAX, &id);
        if (n > 0)
                build_id_to_hex(id, n, z->kernel_build_id);
}

int symbolizer_new(const SymbolizerOptions *o, Symbolizer **ret) {
        _cleanup_(symbolizer_freep) Symbolizer *z = NULL;
        int r;

        z = new0(Symbolizer, 1);
        if (!z)
                return -ENOMEM;
        z->kallsyms_path = strdup(o && o->kallsyms_path ? o->kallsyms_path : "/proc/kallsyms");
        z->proc_root = strdup(o && o->proc_root ? o->proc_root : "/proc");
        z->jit_dir = strdup(o && o->jit_dir ? o->jit_dir : "/tmp");
        if (!z->kallsyms_path || !z->proc_root || !z->jit_dir)
                return -ENOMEM;
        z->cache_bytes_max = o && o->cache_bytes_max > 0 ? o->cache_bytes_max : SYMBOLIZER_CACHE_BYTES_DEFAULT;
        z->kallsyms_reload_usec = o && o->kallsyms_reload_usec > 0 ? o->kallsyms_reload_usec
                                                                  : SYMBOLIZER_KALLSYMS_RELOAD_USEC;
        z->flush_interval_usec = o && o->flush_interval_usec > 0 ? o->flush_interval_usec
                                                                : SYMBOLIZER_FLUSH_INTERVAL_USEC;
        z->function_frames = o && o->function_frames;
        z->epoch = 1;
        read_kernel_build_id(z, o && o->kernel_notes_path ? o->kernel_notes_path : "/sys/kernel/notes");

        /* Without kernel symbols we still name user frames; the caller can tell from the stats. */
        r = symbolizer_reload_kallsyms(z);
        if (r < 0 && r != -ENOENT && r != -EACCES)
                return r;

        *ret = TAKE_PTR(z);
        return 0;
}

/* Over a limit: dropped at the next symbolizer_begin() that is an interval after the last drop. */
static bool cache_full(const Symbolizer *z) {
        return z->stats.cache_bytes > z->cache_bytes_max || z->n_owned > SYMBOLIZER_CACHE_FILES_MAX ||
               z->n_jit_owned > SYMBOLIZER_JIT_PIDS_MAX;
}

void symbolizer_begin(Symbolizer *z) {
        if (z->kallsyms_reload) {
                z->kallsyms_reload = false;
                z->kallsyms_loaded_usec = now_usec(CLOCK_MONOTONIC); /* even if it fails: not again for a minute */
                if (symbolizer_reload_kallsyms(z) >= 0)
                        z->stats.kallsyms_reloads++;
        }
        /* Full and dropped too recently: nothing new is loaded until the interval has passed. */
        if (cache_full(z) && monotonic_interval_passed(&z->flushed_usec, z->flush_interval_usec)) {
                files_flush(z);
                jit_flush(z);
                z->stats.cache_flushes++;
                z->generation++;
        }
}

void symbolizer_next_epoch(Symbolizer *z) {
        z->epoch++;
}

static void frame_unknown(Frame *f, uint64_t addr, const char *dso, bool kernel) {
        *f = (Frame) {
                .symbol = SYMBOLIZER_UNKNOWN,
                .dso = isempty(dso) ? SYMBOLIZER_UNKNOWN : dso,
                .addr = addr,
                .kernel = kernel,
        };
}

/*
 * A resolved frame. a is the address looked up (addr - is_return), off its distance from the start of
 * the function, where the frame's address in the space the frame reports (the in-file offset for
 * files and the vDSO, the address otherwise). Exact frames keep where and the offset of addr itself;
 * function frames move to the function's first byte, where - is_return - off in that space.
 */
static void frame_resolved(Symbolizer *z, Frame *f, const char *name, const char *dso, uint64_t where,
                           uint64_t off, bool is_return, bool kernel) {
        *f = (Frame) {
                .symbol = name,
                .dso = dso,
                .addr = z->function_frames ? where - is_return - off : where,
                .offset = z->function_frames ? 0 : off + is_return,
                .kernel = kernel,
        };
}

/* The addresses whose frame is the very one made for addr, when that frame is the function's:
 * from below bytes under addr to above bytes over it. Frames that name instructions have only
 * their own address. */
static void same_frame_range(const Symbolizer *z, uint64_t addr, uint64_t below, uint64_t above,
                             SymbolizerRange *ret) {
        if (!ret)
                return;
        if (!z->function_frames) {
                *ret = (SymbolizerRange) { addr, addr + 1 };
                return;
        }
        *ret = (SymbolizerRange) {
                .start = below > addr ? 0 : addr - below,
                .end = above > UINT64_MAX - addr ? UINT64_MAX : addr + above,
        };
}

/* The kernel proper's frames carry its build id; a module's, which perf finds in its .ko, none. */
static void kernel_build_id(const Symbolizer *z, Frame *f) {
        if (z->kernel_build_id[0] && streq(f->dso, KALLSYMS_DSO_KERNEL))
                f->build_id = z->kernel_build_id;
}

static void kernel_frame(Symbolizer *z, uint64_t addr, bool is_return, Frame *ret, SymbolizerRange *ret_same) {
        const char *name, *dso;
        uint64_t off, extent;

        uint64_t a = is_return ? addr - 1 : addr;
        size_t slot = (size_t) ((a ^ (a >> 12)) % ELEMENTSOF(z->kcache));

        z->stats.frames++;
        if (z->kcache[slot].addr == a) {
                frame_resolved(z, ret, z->kcache[slot].name, z->kcache[slot].dso, addr, z->kcache[slot].offset,
                               is_return, /* kernel= */ true);
                kernel_build_id(z, ret);
                same_frame_range(z, addr, z->kcache[slot].offset, z->kcache[slot].extent - z->kcache[slot].offset, ret_same);
                return;
        }
        if (kallsyms_lookup(z->kallsyms, a, &name, &dso, &off, &extent)) {
                z->kcache[slot].addr = a;
                z->kcache[slot].name = name;
                z->kcache[slot].dso = dso;
                z->kcache[slot].offset = off;
                z->kcache[slot].extent = extent;
                frame_resolved(z, ret, name, dso, addr, off, is_return, /* kernel= */ true);
                kernel_build_id(z, ret);
                same_frame_range(z, addr, off, extent - off, ret_same);
                return;
        }
        /* A module or BPF program loaded after we read kallsyms: read it again before the next sample
         * (not now: this sample's other frames point into the current table), at most once a minute,
         * since it costs tens of milliseconds. */
        if (!isempty(z->kallsyms_path) &&
            now_usec(CLOCK_MONOTONIC) - z->kallsyms_loaded_usec > z->kallsyms_reload_usec)
                z->kallsyms_reload = true;
        z->stats.frames_unknown++;
        frame_unknown(ret, addr, KALLSYMS_DSO_KERNEL, true);
        kernel_build_id(z, ret);
        if (ret_same)
                *ret_same = (SymbolizerRange) {};
}

void symbolizer_kernel(Symbolizer *z, uint64_t addr, bool is_return, Frame *ret) {
        kernel_frame(z, addr, is_return, ret, NULL);
}

void symbolizer_kernel_leaf(Symbolizer *z, uint64_t addr, Frame *ret, SymbolizerRange *ret_same) {
        kernel_frame(z, addr, /* is_return= */ false, ret, ret_same);
}

static int cache_own(Symbolizer *z, ElfSymbols *e) {
        if (!GREEDY_REALLOC(z->owned, z->n_owned_allocated, z->n_owned + 1))
                return -ENOMEM;
        z->owned[z->n_owned++] = e;
        z->stats.cache_bytes += elf_symbols_bytes(e);
        return 0;
}

/*
 * Whether the file at the mapping's path is the one mapped, as far as its inode's generation says
 * (ext4, XFS and btrfs tell it; a deleted file's inode number is soon another file's). True where
 * the filesystem does not tell, or the mapping's generation is unknown.
 */
static bool same_generation(int fd, const SymbolizerMapping *m) {
        int gen;

        if (m->ino_gen == 0 || ioctl(fd, FS_IOC_GETVERSION, &gen) < 0)
                return true;
        return (uint32_t) gen == (uint32_t) m->ino_gen;
}

int symbolizer_open_file(const char *proc_root, uint32_t pid, const SymbolizerMapping *m, char *ret_root,
                         size_t root_len) {
        char p[PATH_MAX];
        _cleanup_free_ char *path = NULL;
        const char *suffix;
        struct stat st;
        int fd;

        ret_root[0] = '\0';
        if (pid > 0) {
                snprintf(p, sizeof(p), "%s/%" PRIu32 "/map_files/%" PRIx64 "-%" PRIx64, proc_root, pid, m->start,
                         m->end);
                fd = open(p, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
                if (fd >= 0) {
                        snprintf(ret_root, root_len, "%s/%" PRIu32 "/root", proc_root, pid);
                        return fd;
                }
        }

        path = strdup(m->path);
        if (!path)
                return -ENOMEM;
        suffix = endswith(path, " (deleted)");
        if (suffix)
                path[suffix - path] = '\0';

        for (int attempt = 0; attempt < 2; attempt++) {
                if (attempt == 0) {
                        if (pid == 0)
                                continue;
                        if ((size_t) snprintf(p, sizeof(p), "%s/%" PRIu32 "/root%s", proc_root, pid, path) >= sizeof(p))
                                continue;
                } else if ((size_t) snprintf(p, sizeof(p), "%s", path) >= sizeof(p))
                        continue;

                fd = open(p, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
                if (fd < 0)
                        continue;
                if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (m->ino != 0 && st.st_ino != m->ino) ||
                    !same_generation(fd, m)) {
                        safe_close(fd);
                        continue;
                }
                if (attempt == 0)
                        snprintf(ret_root, root_len, "%s/%" PRIu32 "/root", proc_root, pid);
                return fd;
        }
        return -ENOENT;
}

/* The file's table, loaded on first use; NULL with *deferred set when the cache is full (see symbolizer.h). */
static ElfSymbols *file_symbols(Symbolizer *z, uint32_t pid, const SymbolizerMapping *m, bool *deferred) {
        struct { uint64_t dev, ino, ino_gen; } id = { m->dev, m->ino, m->ino_gen };
        FileFailureKey failed = { m->dev, m->ino, m->ino_gen, pid };
        const void *key = &id;
        size_t key_len = sizeof(id);
        _cleanup_(elf_symbols_freep) ElfSymbols *e = NULL;
        _cleanup_close_ int fd = -EBADF;
        char root[PATH_MAX];
        uint64_t v;
        const uint8_t *bid;
        size_t bid_len;
        int r;

        size_t slot = (size_t) ((m->ino ^ m->dev ^ (m->ino >> 7)) % ELEMENTSOF(z->recent));
        if (m->ino != 0 && z->recent[slot].e && z->recent[slot].ino == m->ino && z->recent[slot].dev == m->dev &&
            z->recent[slot].ino_gen == m->ino_gen)
                return z->recent[slot].e;

        if (m->ino == 0) { /* no identity from the kernel: the path is the best we have */
                key = m->path;
                key_len = strlen(m->path);
        }
        if (!z->files) {
                z->files = hashmap_new();
                z->build_ids = hashmap_new();
                if (!z->files || !z->build_ids)
                        return NULL;
        }
        if (hashmap_get(z->files, key, key_len, &v)) {
                if (m->ino != 0)
                        z->recent[slot].dev = m->dev, z->recent[slot].ino = m->ino, z->recent[slot].ino_gen = m->ino_gen,
                        z->recent[slot].e = HASHMAP_PTR(v);
                return HASHMAP_PTR(v);
        }
        if (m->ino != 0 && z->gone && file_failures_recent(&z->failures, &failed, now_usec(CLOCK_MONOTONIC)))
                return z->gone;
        if (cache_full(z)) {
                z->stats.loads_deferred++;
                *deferred = true;
                return NULL;
        }

        fd = symbolizer_open_file(z->proc_root, pid, m, root, sizeof(root));
        if (fd >= 0) {
                const char *const roots[] = { root, "", NULL };
                r = elf_symbols_load_fd(fd, m->path, root[0] ? roots : roots + 1, &e);
        } else
                r = fd;
        if (r < 0 && !e) {
                z->stats.files_failed++;
                e = elf_symbols_new_empty();
                if (!e)
                        return NULL;
                /* Not opened at all: this process's failure alone (file-failures.h). */
                if (fd < 0 && m->ino != 0) {
                        if (!z->gone)
                                z->gone = TAKE_PTR(e);
                        (void) file_failures_add(&z->failures, &failed, now_usec(CLOCK_MONOTONIC));
                        return z->gone;
                }
        } else if (elf_symbols_bytes(e) > z->cache_bytes_max / 4) {
                /* One table that big would flush the cache over and over: keep the DSO name only. */
                z->stats.files_too_big++;
                elf_symbols_free(e);
                e = elf_symbols_new_empty();
                if (!e)
                        return NULL;
        } else
                z->stats.files_loaded++;

        bid = elf_symbols_build_id(e, &bid_len);
        if (bid && hashmap_get(z->build_ids, bid, bid_len, &v)) {
                /* Same contents under another identity (a copy, a bind mount): share the table. */
                if (hashmap_put(z->files, key, key_len, v) < 0)
                        return NULL;
                return HASHMAP_PTR(v);
        }
        if (cache_own(z, e) < 0)
                return NULL;
        ElfSymbols *k = TAKE_PTR(e);
        (void) hashmap_put(z->files, key, key_len, PTR_HASHMAP(k));
        if (bid)
                (void) hashmap_put(z->build_ids, bid, bid_len, PTR_HASHMAP(k));
        return k;
}

/* The innermost pid of NSpid in /proc/PID/status: a containerized JIT writes perf-<that>.map. */
static uint32_t read_nspid(Symbolizer *z, uint32_t pid) {
        _cleanup_fclose_ FILE *f = NULL;
        char p[PATH_MAX], line[256];
        uint32_t ns = 0;

        snprintf(p, sizeof(p), "%s/%" PRIu32 "/status", z->proc_root, pid);
        f = fopen(p, "re");
        if (!f)
                return 0;
        while (fgets(line, sizeof(line), f)) {
                const char *v = startswith(line, "NSpid:");
                char *e;
                if (!v)
                        continue;
                for (;;) {
                        unsigned long n;
                        errno = 0;
                        n = strtoul(v, &e, 10);
                        if (e == v || errno != 0 || n > UINT32_MAX)
                                break;
                        ns = (uint32_t) n;
                        v = e;
                }
                break;
        }
        return ns;
}

static JitMap *jit_map_for(Symbolizer *z, uint32_t pid, const char **ret_path) {
        JitEntry *j;
        struct stat st;
        uint64_t v;

        if (!z->jit) {
                z->jit = hashmap_new();
                if (!z->jit)
                        return NULL;
        }
        if (hashmap_get(z->jit, &pid, sizeof(pid), &v))
                j = HASHMAP_PTR(v);
        else if (cache_full(z))
                return NULL; /* looked for after the drop (most processes have no map: not counted) */
        else {
                j = new0(JitEntry, 1);
                if (!j)
                        return NULL;
                if (!GREEDY_REALLOC(z->jit_owned, z->n_jit_owned_allocated, z->n_jit_owned + 1) ||
                    hashmap_put(z->jit, &pid, sizeof(pid), PTR_HASHMAP(j)) < 0) {
                        free(j);
                        return NULL;
                }
                z->jit_owned[z->n_jit_owned++] = j;
                snprintf(j->path, sizeof(j->path), "/tmp/perf-%" PRIu32 ".map", pid);
        }
        *ret_path = j->path;
        if (j->epoch == z->epoch)
                return j->map;
        j->epoch = z->epoch;

        char p[PATH_MAX];
        snprintf(p, sizeof(p), "%s/perf-%" PRIu32 ".map", z->jit_dir, pid);
        if (stat(p, &st) < 0 || !S_ISREG(st.st_mode)) {
                /* In its own pid namespace the process wrote /tmp/perf-<its pid>.map in its own root.
                 * That pid is read at each look: the pid may be another process's by now, in
                 * another namespace or in none. */
                uint32_t nspid = read_nspid(z, pid);
                if (nspid != 0 && nspid != pid)
                        snprintf(p, sizeof(p), "%s/%" PRIu32 "/root/tmp/perf-%" PRIu32 ".map", z->proc_root, pid,
                                 nspid);
        }
        if (stat(p, &st) < 0 || !S_ISREG(st.st_mode)) {
                if (j->map) {
                        z->stats.cache_bytes -= MIN(z->stats.cache_bytes, jit_map_bytes(j->map));
                        z->generation++;
                }
                j->map = jit_map_free(j->map);
                return NULL;
        }
        if (j->map && st.st_ino == j->ino && (uint64_t) st.st_size == j->size &&
            st.st_mtim.tv_sec == j->mtime.tv_sec && st.st_mtim.tv_nsec == j->mtime.tv_nsec)
                return j->map;

        /* New or changed (appended): read it again. Frames from the old table are no longer in use here. */
        JitMap *n = NULL;
        if (cache_full(z)) {
                z->stats.loads_deferred++;
                return j->map; /* the old table, if any, until the cache is dropped */
        }
        if (jit_map_load(p, &n) < 0)
                return j->map;
        if (j->map)
                z->stats.cache_bytes -= MIN(z->stats.cache_bytes, jit_map_bytes(j->map));
        jit_map_free(j->map);
        j->map = n;
        z->generation++;
        j->ino = st.st_ino;
        j->size = (uint64_t) st.st_size;
        j->mtime = st.st_mtim;
        z->stats.cache_bytes += jit_map_bytes(n);
        z->stats.jit_maps_loaded++;
        return n;
}

/*
 * "_ZN3foo3barEv" -> "foo::bar()", as perf prints C++ frames: C++ and Rust names, by libiberty's
 * demangler (the one binutils, gdb and the C++ runtime's __cxa_demangle use: the same text for
 * C++ names, 44,082 of libstdc++'s, libLLVM's and cc1plus's compared). A function template's
 * return type is left out (DMGL_RET_DROP): "v8::internal::JsonStringifier::Serialize_<false>(...)"
 * rather than c++filt's "v8::internal::JsonStringifier::Result v8::internal::...", as perf and
 * gdb's backtraces name the frame; folded stacks cut a name at its '(' and would otherwise start
 * the frame with the return type. The return types of function types among the parameters stay.
 * Rust's v0 names ("_R...") and legacy ones (C++-like "_ZN...E" whose last component is the
 * "h<16 hex digits>" hash, left out as perf and rustfilt print them; LLVM's ".llvm.<n>" suffixes
 * too) are tried as Rust first: a C++ name is no Rust name to that demangler.
 */
static char *demangle_with(const char *name, int params) {
        char *d = NULL;

        if (name[1] == 'R' || name[2] == 'N')
                d = cplus_demangle(name, params | DMGL_RUST);
        if (!d && name[1] == 'Z')
                d = cplus_demangle(name, params | DMGL_ANSI);
        return d;
}

static char *demangle_name(const char *name) {
        const char *plt = endswith(name, "@plt");
        _cleanup_free_ char *stem = NULL, *d = NULL;
        char *r;

        if (!plt)
                return demangle_with(name, DMGL_PARAMS | DMGL_RET_DROP);
        /* A PLT entry's NAME@plt (symbolizer-elf.c): NAME demangled without its parameters, as perf
         * prints it, so that folded stacks, which cut a name at its '(', keep the "@plt". */
        stem = strndup(name, (size_t) (plt - name));
        if (!stem)
                return NULL;
        d = demangle_with(stem, 0);
        if (!d || asprintf(&r, "%s@plt", d) < 0)
                return NULL;
        return r;
}

/* Results are cached per symbol until the file cache is dropped. */
static const char *demangle(Symbolizer *z, const char *name) {
        char *d;
        uint64_t v;

        if (name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
                return name;
        if (!z->demangled) {
                z->demangled = hashmap_new();
                if (!z->demangled)
                        return name;
        }
        if (hashmap_get(z->demangled, &name, sizeof(name), &v))
                return v ? HASHMAP_PTR(v) : name;

        d = demangle_name(name);
        if (!d || !GREEDY_REALLOC(z->demangled_owned, z->n_demangled_owned_allocated, z->n_demangled_owned + 1)) {
                free(d);
                (void) hashmap_put(z->demangled, &name, sizeof(name), 0);
                return name;
        }
        if (strlen(d) >= PROFILE_NAME_BYTES_MAX)
                d[PROFILE_NAME_BYTES_MAX - 1] = '\0';
        z->demangled_owned[z->n_demangled_owned++] = d;
        z->stats.cache_bytes += strlen(d) + 1;
        (void) hashmap_put(z->demangled, &name, sizeof(name), PTR_HASHMAP(d));
        return d;
}

static int vdso32_load(void *userdata, const void *data, size_t size, void **ret) {
        const uint8_t *h = data;
        ElfSymbols *e = NULL;
        uint16_t machine;
        int r;

        /* An i386 image (ELFCLASS32, EM_386: x32's is ELFCLASS32 too), or nothing. */
        if (size < 20 || memcmp(h, ELFMAG, SELFMAG) != 0 || h[EI_CLASS] != ELFCLASS32 || h[EI_DATA] != ELFDATA2LSB)
                return -ENOEXEC;
        memcpy(&machine, h + 18, sizeof(machine));
        if (machine != EM_386)
                return -ENOEXEC;
        r = elf_symbols_load_memory(data, size, &e);
        if (r < 0) {
                elf_symbols_free(e);
                return r;
        }
        *ret = e;
        return 0;
}

/* Symbols going: frames handed out with their names are no longer valid. */
static void vdso32_free(void *userdata, void *e) {
        Symbolizer *z = userdata;

        z->generation++;
        elf_symbols_free(e);
}

/*
 * The symbols of the [vdso] at m in process pid. A 64-bit process's is ours (the same size, the
 * same kernel); a 32-bit process's is mapped below 4 GiB, is the size of ours as often as not, and
 * is named from its own image (vdso-images.h), kept per process for a second.
 */
static ElfSymbols *vdso_symbols(Symbolizer *z, uint32_t pid, const SymbolizerMapping *m) {
        uint64_t size = m->end - m->start;

        if (m->end > UINT64_C(1) << 32) {
                if (!z->vdso_tried) {
                        const void *start;
                        size_t n;

                        z->vdso_tried = true;
                        if (self_vdso_range(1024 * 1024, &start, &n) >= 0 &&
                            elf_symbols_load_memory(start, n, &z->vdso) >= 0)
                                z->vdso_size = n;
                }
                return z->vdso && size == z->vdso_size ? z->vdso : NULL;
        }
        if (pid == 0 || m->end <= m->start)
                return NULL;
        if (!z->vdso32) {
                z->vdso32 = vdso_images_new(z->proc_root, vdso32_load, vdso32_free, z);
                if (!z->vdso32)
                        return NULL;
        }
        return vdso_images_get(z->vdso32, pid, now_usec(CLOCK_MONOTONIC) / USEC_PER_SEC + 1, m->start, size);
}

/* same_frame_range() for a frame of mapping m placed by e: below and above are the bytes around
 * vaddr (where e puts a, the address looked up for addr) that make the same frame, kept within the
 * segment that maps a and within m. */
static void file_same_range(const Symbolizer *z, const ElfSymbols *e, const SymbolizerMapping *m, uint64_t addr,
                            uint64_t a, uint64_t below, uint64_t above, SymbolizerRange *ret) {
        uint64_t a_off = a - m->start + m->pgoff, seg_start, seg_end;

        if (!ret)
                return;
        if (z->function_frames) {
                if (!elf_symbols_offset_span(e, a_off, &seg_start, &seg_end)) {
                        *ret = (SymbolizerRange) {};
                        return;
                }
                below = MIN(below, a_off - seg_start);
                below = MIN(below, a - m->start);
                above = MIN(above, seg_end - a_off);
                above = MIN(above, m->end - a);
        }
        same_frame_range(z, addr, below, above, ret);
}

static bool user_frame(Symbolizer *z, uint32_t pid, const SymbolizerMapping *m, uint64_t addr, bool is_return,
                       Frame *ret, SymbolizerRange *ret_same) {
        uint64_t a = is_return ? addr - 1 : addr, vaddr, off, extent, where, unknown_where;
        bool file = m && m->path && m->path[0] == '/' && !startswith(m->path, "//anon");
        bool vdso = m && m->path && streq(m->path, "[vdso]");
        const char *name, *jit_path;
        ElfSymbols *e;
        JitMap *jm;

        z->stats.frames++;
        if (ret_same) /* known only for a function named from its file */
                *ret_same = (SymbolizerRange) {};

        /* A frame in a file (or the vDSO) carries where the instruction sits in it, as perf script
         * prints it: the same in every process, whatever the load address. Others keep the address. */
        where = file || vdso ? addr - m->start + m->pgoff : addr;
        unknown_where = where;

        /* A file-backed mapping: its ELF symbols. */
        if (file) {
                bool deferred = false;

                e = file_symbols(z, pid, m, &deferred);
                if (deferred) { /* named once the cache has been dropped: not final */
                        z->stats.frames_unknown++;
                        frame_unknown(ret, unknown_where, m->path, false);
                        return false;
                }
                if (e && elf_symbols_offset_to_vaddr(e, a - m->start + m->pgoff, &vaddr)) {
                        if (elf_symbols_lookup(e, vaddr, &name, &off, &extent)) {
                                frame_resolved(z, ret, demangle(z, name), m->path, where, off, is_return,
                                               /* kernel= */ false);
                                ret->build_id = elf_symbols_build_id_hex(e);
                                file_same_range(z, e, m, addr, a, off, extent - off, ret_same);
                                return true;
                        }
                        /* No symbol covers it (a stripped file: a static function, or no .dynsym at
                         * all). The unwind table still knows where its function starts, so the frame,
                         * though unnamed, is one per function like the others. It is the file's code:
                         * no JIT map names it (perf reads those for anonymous memory only), and
                         * nothing learned later will, so the frame is final. Looking, once per
                         * process and drain, cost a /proc read and two stats for every stripped
                         * program (find, gzip) and made its stacks be symbolized again every second. */
                        if (z->function_frames && elf_symbols_function_start(e, vaddr, &off, &extent)) {
                                uint64_t gap_start, gap_end;

                                unknown_where = where - is_return - off;
                                /* The function as far as no symbol (a .dynsym one without unwind
                                 * information) covers it: those are named. */
                                if (elf_symbols_uncovered(e, vaddr, &gap_start, &gap_end))
                                        file_same_range(z, e, m, addr, a, MIN(off, vaddr - gap_start),
                                                        MIN(extent - off, gap_end - vaddr), ret_same);
                        }
                        z->stats.frames_unknown++;
                        frame_unknown(ret, unknown_where, m->path, false);
                        ret->build_id = elf_symbols_build_id_hex(e);
                        return true;
                }
                /* A file that is not ELF may still be described by a JIT map (some runtimes map code files). */
        }

        if (vdso) {
                e = vdso_symbols(z, pid, m);
                if (e && elf_symbols_offset_to_vaddr(e, a - m->start, &vaddr) && elf_symbols_lookup(e, vaddr, &name, &off, NULL)) {
                        frame_resolved(z, ret, name, m->path, where, off, is_return, /* kernel= */ false);
                        return true;
                }
        }

        /* Code no file backs (or a file we could not read): the process's JIT map. */
        jm = pid > 0 ? jit_map_for(z, pid, &jit_path) : NULL;
        if (jm && jit_map_lookup(jm, a, &name, &off)) {
                frame_resolved(z, ret, name, jit_path, addr, off, is_return, /* kernel= */ false);
                return false;
        }

        z->stats.frames_unknown++;
        frame_unknown(ret, unknown_where, m && m->path && m->path[0] && !startswith(m->path, "//anon") ? m->path : NULL,
                      false);
        return false;
}

bool symbolizer_user(Symbolizer *z, uint32_t pid, const SymbolizerMapping *m, uint64_t addr, bool is_return,
                     Frame *ret) {
        return user_frame(z, pid, m, addr, is_return, ret, NULL);
}

bool symbolizer_user_leaf(Symbolizer *z, uint32_t pid, const SymbolizerMapping *m, uint64_t addr, Frame *ret,
                          SymbolizerRange *ret_same) {
        return user_frame(z, pid, m, addr, /* is_return= */ false, ret, ret_same);
}

uint64_t symbolizer_generation(const Symbolizer *z) {
        return z->generation;
}

void symbolizer_get_stats(const Symbolizer *z, SymbolizerStats *ret) {
        *ret = z->stats;
}
