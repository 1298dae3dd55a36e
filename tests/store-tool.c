/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A helper for the store's integration tests and contrib/bench-store.sh that drives the ring
 * writer without the daemon, so the writer's own cost shows apart from sampling and symbolizing:
 *
 *   store-tool import RING [WINDOW_SECS]   perf script text (-F comm,pid,tid,cpu,time,period,event,
 *                                          ip,sym,symoff,dso, optionally --ns) on stdin -> a ring;
 *                                          prints samples, bytes and the CPU time spent in the ring
 *   store-tool synth RING HOURS CPUS HZ [WINDOW_SECS]
 *                                          a synthetic ring ending now, realistic stack mix
 *   store-tool slice RING FROM_EPOCH_SECS SECS
 *                                          cuts a range, prints what it read and skipped
 *   store-tool dump FILE...                every sample of each window file as the store reads it,
 *                                          in tests/helpers/window-reader.py's format, so the
 *                                          tests can hold that second reader against this one
 *
 * Sample times map to wall-clock time so that the newest sample is "now"; windows rotate on
 * those times, as they would in the daemon.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "basic/time-util.h"
#include "store/ring-store.h"
#include "store/store-slice.h"

/* STORE_TOOL_CHAIN and STORE_TOOL_ZSTD_LEVEL override the ring's defaults, for format experiments. */
static RingOptions tool_options(uint64_t window_secs) {
        const char *chain = getenv("STORE_TOOL_CHAIN"), *level = getenv("STORE_TOOL_ZSTD_LEVEL");

        return (RingOptions) {
                .window_usec = window_secs * USEC_PER_SEC,
                .max_age_usec = USEC_INFINITY,
                .chain_chunks = chain ? (unsigned) atoi(chain) : 0,
                .compress_level = level ? atoi(level) : 0,
        };
}

/* STORE_TOOL_RESOLUTION_US writes windows whose sample times keep only that many microseconds, as
 * tprofd's compact detail does (1000 at 97 Hz); 1 by default. */
static uint32_t tool_resolution_usec(void) {
        const char *res = getenv("STORE_TOOL_RESOLUTION_US");

        return res ? (uint32_t) atoi(res) : 1;
}

static uint64_t thread_cpu_ns(void) {
        return now_nsec(CLOCK_THREAD_CPUTIME_ID);
}

typedef struct Importer {
        RingStore *rs;
        ClockMap map;
        bool have_map;
        uint64_t next_flush_ns, chunk_ns;
        uint64_t samples, cpu_ns;
        const char *ring;
        uint64_t window_usec;
        WindowHeaderInfo info;
} Importer;

static int importer_feed(Importer *im, const Sample *s) {
        uint64_t t0;
        int r;

        if (!im->have_map) {
                /* The first sample happened an hour ago: wall-clock names stay plausible, and a range
                 * ending "now" holds everything imported. */
                clock_map_assume(&im->map);
                im->map.perf_minus_mono_ns = (int64_t) s->t_ns - (int64_t) now_nsec(CLOCK_MONOTONIC);
                im->map.realtime_minus_mono_ns -= (int64_t) (3600 * NSEC_PER_SEC);
                im->info.clock = im->map;
                im->info.time_resolution_usec = tool_resolution_usec();
                t0 = thread_cpu_ns();
                RingOptions o = tool_options(im->window_usec / USEC_PER_SEC);
                r = ring_store_open(im->ring, &o, &im->info, &im->rs);
                im->cpu_ns += thread_cpu_ns() - t0;
                if (r < 0)
                        return r;
                im->have_map = true;
                im->next_flush_ns = s->t_ns + im->chunk_ns;
                r = ring_store_rotate(im->rs, clock_map_perf_to_realtime(&im->map, s->t_ns) / NSEC_PER_USEC);
                if (r < 0)
                        return r;
        }
        t0 = thread_cpu_ns();
        if (s->t_ns >= im->next_flush_ns) {
                r = ring_store_flush(im->rs);
                if (r < 0)
                        return r;
                r = ring_store_rotate(im->rs, clock_map_perf_to_realtime(&im->map, s->t_ns) / NSEC_PER_USEC);
                if (r < 0)
                        return r;
                im->next_flush_ns = s->t_ns + im->chunk_ns;
        }
        r = ring_store_add_sample(im->rs, s);
        im->cpu_ns += thread_cpu_ns() - t0;
        im->samples++;
        return r;
}

/* "comm... pid/tid [cpu] sec.frac: period event:" */
static bool parse_event_line(char *line, Sample *s, char *comm, size_t comm_l) {
        for (char *b = strchr(line, '['); b; b = strchr(b + 1, '[')) {
                unsigned cpu;
                unsigned long long sec, period;
                char frac[16];
                int used = 0;
                char *q, *slash;

                if (sscanf(b, "[%u] %llu.%15[0-9]: %llu %*[^:]:%n", &cpu, &sec, frac, &period, &used) < 4 || used == 0)
                        continue;
                /* before '[': "comm pid/tid " */
                q = b;
                while (q > line && q[-1] == ' ')
                        q--;
                *q = '\0';
                slash = strrchr(line, ' ');
                if (!slash || !strchr(slash, '/'))
                        return false;
                if (sscanf(slash + 1, "%u/%u", &s->pid, &s->tid) != 2)
                        return false;
                while (slash > line && slash[-1] == ' ')
                        slash--;
                *slash = '\0';
                q = line;
                while (*q == ' ')
                        q++;
                snprintf(comm, comm_l, "%s", q);
                s->cpu = cpu;
                s->period = period;
                s->t_ns = sec * NSEC_PER_SEC;
                {
                        uint64_t f = strtoull(frac, NULL, 10);
                        for (size_t k = strlen(frac); k < 9; k++)
                                f *= 10;
                        s->t_ns += f;
                }
                return true;
        }
        return false;
}

/* "\t addr sym+0xoff (dso)" */
static bool parse_frame_line(char *line, Frame *f, char *sym, size_t sym_l, char *dso, size_t dso_l) {
        char *p = line, *end, *open;
        size_t len;

        *f = (Frame) {}; /* what perf script does not say (the build id, ...) is unknown */
        while (isspace((unsigned char) *p))
                p++;
        f->addr = strtoull(p, &end, 16);
        if (end == p || *end != ' ')
                return false;
        p = end + 1;
        len = strlen(p);
        while (len > 0 && isspace((unsigned char) p[len - 1]))
                p[--len] = '\0';
        if (len == 0 || p[len - 1] != ')')
                return false;
        /* the DSO is the last parenthesized group */
        open = NULL;
        for (int depth = 0, i = (int) len - 1; i >= 0; i--) {
                if (p[i] == ')')
                        depth++;
                else if (p[i] == '(' && --depth == 0) {
                        open = p + i;
                        break;
                }
        }
        if (!open)
                return false;
        p[len - 1] = '\0';
        snprintf(dso, dso_l, "%s", open + 1);
        while (open > p && open[-1] == ' ')
                open--;
        *open = '\0';
        f->offset = 0;
        {
                char *plus = strstr(p, "+0x");
                char *last = NULL;
                while (plus) {
                        last = plus;
                        plus = strstr(plus + 1, "+0x");
                }
                if (last && last[3] && strspn(last + 3, "0123456789abcdef") == strlen(last + 3)) {
                        f->offset = strtoull(last + 3, NULL, 16);
                        *last = '\0';
                }
        }
        snprintf(sym, sym_l, "%s", *p ? p : "[unknown]");
        f->kernel = strncmp(dso, "[kernel", 7) == 0 || f->addr >= UINT64_C(0xffff800000000000);
        return true;
}

static int cmd_import(const char *ring, uint64_t window_secs, uint64_t chunk_secs) {
        static char syms[PROFILE_STACK_DEPTH_MAX][PROFILE_NAME_BYTES_MAX], dsos[PROFILE_STACK_DEPTH_MAX][PROFILE_NAME_BYTES_MAX];
        Frame frames[PROFILE_STACK_DEPTH_MAX];
        char comm[64], *line = NULL;
        size_t cap = 0;
        Sample s = {};
        bool in_sample = false;
        Importer im = {
                .ring = ring,
                .window_usec = window_secs * USEC_PER_SEC,
                .chunk_ns = chunk_secs * NSEC_PER_SEC,
                .info = { .host = "bench", .boot_id = "00000000000000000000000000000000", .kernel_release = "imported",
                          .event = "cpu-clock", .freq_hz = 97, .n_cpus = 0 },
        };
        uint64_t first = 0, last = 0, t0;
        int r;

        while (getline(&line, &cap, stdin) > 0) {
                line[strcspn(line, "\n")] = '\0';
                if (line[0] == '#')
                        continue;
                if (line[0] == '\0') {
                        if (in_sample) {
                                r = importer_feed(&im, &s);
                                if (r < 0) {
                                        fprintf(stderr, "import: %s\n", strerror(-r));
                                        return 1;
                                }
                                if (first == 0)
                                        first = s.t_ns;
                                last = s.t_ns;
                        }
                        in_sample = false;
                        continue;
                }
                if (!in_sample) {
                        memset(&s, 0, sizeof s);
                        if (!parse_event_line(line, &s, comm, sizeof comm))
                                continue;
                        s.comm = comm;
                        s.frames = frames;
                        in_sample = true;
                        continue;
                }
                if (s.n_frames < PROFILE_STACK_DEPTH_MAX &&
                    parse_frame_line(line, &frames[s.n_frames], syms[s.n_frames], sizeof syms[0], dsos[s.n_frames],
                                     sizeof dsos[0])) {
                        frames[s.n_frames].symbol = syms[s.n_frames];
                        frames[s.n_frames].dso = dsos[s.n_frames];
                        s.n_frames++;
                }
        }
        if (in_sample && importer_feed(&im, &s) >= 0)
                last = s.t_ns;
        free(line);
        t0 = thread_cpu_ns();
        ring_store_free(im.rs);
        im.cpu_ns += thread_cpu_ns() - t0;
        printf("samples %llu\nspan_s %.3f\nring_cpu_s %.6f\n", (unsigned long long) im.samples,
               (double) (last - first) / 1e9, (double) im.cpu_ns / 1e9);
        return 0;
}

static int cmd_synth(const char *ring, double hours, unsigned cpus, unsigned hz, uint64_t window_secs) {
        static const char *const user_syms[] = { "main", "run_loop", "handle_request", "parse_json", "hash_lookup",
                                                 "compress_block", "memcpy", "malloc", "free", "write_log" };
        static const char *const kernel_syms[] = { "native_safe_halt", "default_idle", "do_idle", "cpu_startup_entry",
                                                   "secondary_startup_64", "tcp_sendmsg", "ext4_file_write_iter",
                                                   "copy_user_generic", "__x64_sys_write", "do_syscall_64",
                                                   "entry_SYSCALL_64_after_hwframe" };
        static const char *const comms[] = { "swapper/0", "nginx", "postgres", "java", "kworker/0:1", "python3" };
        static const char *const cgroups[] = {
                "/system.slice/nginx.service",
                "/system.slice/postgresql@15-main.service",
                "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod8f3c2a10_5b7e_4d2a_9c11_0e6f4b3a2d19.slice/"
                "cri-containerd-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope",
                "/",
                "/user.slice/user-1000.slice/session-3.scope",
                "/system.slice/docker-fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210.scope",
        };
        uint64_t now = now_usec(CLOCK_REALTIME), span_ns = (uint64_t) (hours * 3600 * 1e9), interval = NSEC_PER_SEC / hz;
        uint64_t t_start = UINT64_C(100000000000), rng = 88172645463325252ULL, next_flush, n = 0, t0 = thread_cpu_ns();
        WindowHeaderInfo info = { .host = "synth", .boot_id = "11111111111111111111111111111111",
                                  .kernel_release = "6.1.0", .event = "cpu-clock", .freq_hz = hz, .n_cpus = cpus };
        RingStore *rs = NULL;
        Frame frames[32];
        int r;

        clock_map_assume(&info.clock);
        info.time_resolution_usec = tool_resolution_usec();
        info.clock.perf_minus_mono_ns = 0;
        /* perf time t_start + span_ns is "now" */
        info.clock.realtime_minus_mono_ns = (int64_t) (now * NSEC_PER_USEC) - (int64_t) (t_start + span_ns);
        RingOptions o = tool_options(window_secs);
        r = ring_store_open(ring, &o, &info, &rs);
        if (r < 0) {
                fprintf(stderr, "synth: %s\n", strerror(-r));
                return 1;
        }
        /* the first window should start at the synthetic start, not now */
        (void) ring_store_rotate(rs, clock_map_perf_to_realtime(&info.clock, t_start) / NSEC_PER_USEC);
        next_flush = t_start + 5 * NSEC_PER_SEC;
        for (uint64_t t = t_start; t < t_start + span_ns; t += interval) {
                for (unsigned cpu = 0; cpu < cpus; cpu++) {
                        uint64_t x;
                        unsigned depth;
                        Sample s;

                        rng ^= rng << 13;
                        rng ^= rng >> 7;
                        rng ^= rng << 17;
                        x = rng;
                        if (x % 3 == 0) { /* idle */
                                depth = 5;
                                for (unsigned i = 0; i < depth; i++)
                                        frames[i] = (Frame) { .symbol = kernel_syms[i], .dso = "[kernel.kallsyms]",
                                                              .addr = 0xffffffff81000000 + i * 0x1000 + (x >> 8) % 4,
                                                              .offset = i, .kernel = true,
                                                              .build_id = "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567" };
                                s = (Sample) { .comm = "swapper/0", .pid = 0, .tid = 0, .cgroup = "/" };
                        } else {
                                unsigned k = 0, u = 3 + (x >> 4) % 6;
                                if ((x >> 10) % 4 == 0)
                                        for (unsigned i = 5; i < 11; i++)
                                                frames[k++] = (Frame) { .symbol = kernel_syms[i], .dso = "[kernel.kallsyms]",
                                                                        .addr = 0xffffffff81100000 + i * 0x800 + (x >> 20) % 16,
                                                                        .offset = (x >> 20) % 16, .kernel = true };
                                for (unsigned i = 0; i < u; i++) {
                                        unsigned idx = (unsigned) ((x >> (12 + 3 * i)) % 10);
                                        frames[k++] = (Frame) { .symbol = user_syms[idx], .dso = "/usr/bin/app",
                                                                .addr = 0x401000 + idx * 0x100 + (x >> (30 + i)) % 32,
                                                                .offset = (x >> (30 + i)) % 32 };
                                        /* the file's build id, unless its frame came before the file was read */
                                        if ((x >> (30 + i)) % 8 != 0)
                                                frames[k - 1].build_id = "5f0c2b8e9a7d4c3b2a1f0e9d8c7b6a5948372615";
                                }
                                depth = k;
                                s = (Sample) { .comm = comms[1 + (x >> 40) % 5], .pid = 1000 + (uint32_t) ((x >> 40) % 5) };
                                s.tid = s.pid + (uint32_t) ((x >> 44) % 4);
                                /* each process in its cgroup; now and then one elsewhere or unknown */
                                s.cgroup = cgroups[(x >> 40) % 5 + ((x >> 54) % 32 == 0)];
                                if ((x >> 59) % 32 == 0)
                                        s.cgroup = NULL;
                        }
                        s.t_ns = t + cpu * 1000 + (x >> 50) % 1000;
                        s.cpu = cpu;
                        s.period = interval;
                        s.n_frames = depth;
                        s.frames = frames;
                        r = ring_store_add_sample(rs, &s);
                        if (r < 0) {
                                fprintf(stderr, "synth: %s\n", strerror(-r));
                                return 1;
                        }
                        n++;
                }
                if (t >= next_flush) {
                        r = ring_store_flush(rs);
                        if (r >= 0)
                                r = ring_store_rotate(rs, clock_map_perf_to_realtime(&info.clock, t) / NSEC_PER_USEC);
                        if (r < 0) {
                                fprintf(stderr, "synth: %s\n", strerror(-r));
                                return 1;
                        }
                        next_flush = t + 5 * NSEC_PER_SEC;
                }
        }
        ring_store_free(rs);
        printf("samples %llu\nring_cpu_s %.3f\n", (unsigned long long) n, (double) (thread_cpu_ns() - t0) / 1e9);
        return 0;
}

static int count_handler(const Sample *s, void *ud) {
        (*(uint64_t *) ud)++;
        return 0;
}

static int cmd_slice(const char *ring, double from_epoch, double secs) {
        WindowInfo *w = NULL;
        size_t n;
        char **paths;
        SliceStats st;
        uint64_t count = 0, t0, w0, from_ns, to_ns;
        const ClockMap *m;
        int r;

        w0 = now_nsec(CLOCK_MONOTONIC);
        t0 = now_nsec(CLOCK_PROCESS_CPUTIME_ID);
        r = ring_list_windows(ring, false, &w, &n);
        if (r < 0 || n == 0) {
                fprintf(stderr, "slice: no windows\n");
                return 1;
        }
        paths = calloc(n, sizeof(char *));
        for (size_t i = 0; i < n; i++)
                paths[i] = w[i].path;
        m = &w[n - 1].header.info.clock;
        from_ns = clock_map_realtime_to_perf(m, (uint64_t) (from_epoch * 1e9));
        to_ns = from_ns + (uint64_t) (secs * 1e9);
        r = slice_read(paths, n, from_ns, to_ns, count_handler, &count, &st);
        printf("windows_total %zu\nwindows_touched %u\nchunks_read %u\nchunks_skipped %u\nsamples %llu\n"
               "wall_s %.4f\ncpu_s %.4f\n", n, st.windows, st.chunks_read, st.chunks_skipped,
               (unsigned long long) count, (double) (now_nsec(CLOCK_MONOTONIC) - w0) / 1e9,
               (double) (now_nsec(CLOCK_PROCESS_CPUTIME_ID) - t0) / 1e9);
        slice_stats_done(&st);
        free(paths);
        window_info_array_free(w, n);
        return r < 0;
}

/* Escapes as window-reader.py does: bytes outside printable ASCII, '\\' and the field's specials
 * become \xHH. */
static void dump_escaped(const char *s, const char *specials, FILE *f) {
        for (const unsigned char *p = (const unsigned char *) s; *p; p++)
                if (*p >= 0x20 && *p <= 0x7e && *p != '\\' && !strchr(specials, *p))
                        fputc(*p, f);
                else
                        fprintf(f, "\\x%02x", *p);
}

static int dump_handler(const Sample *s, void *ud) {
        FILE *f = ud;

        fprintf(f, "%llu %u %u %u %llu ", (unsigned long long) s->t_ns, s->cpu, s->pid, s->tid,
                (unsigned long long) s->period);
        dump_escaped(s->comm, ";\t", f);
        fputc('\t', f);
        for (uint32_t i = 0; i < s->n_frames; i++) {
                const Frame *fr = &s->frames[i];

                fprintf(f, "%s%llx:", i ? ";" : "", (unsigned long long) fr->addr);
                dump_escaped(fr->symbol, ";", f);
                fprintf(f, "+0x%llx:", (unsigned long long) fr->offset);
                dump_escaped(fr->dso, ";:", f);
        }
        fputc('\t', f);
        if (s->cgroup)
                dump_escaped(s->cgroup, ";\t", f);
        /* the build ids, when a frame has one */
        for (uint32_t i = 0; i < s->n_frames; i++)
                if (s->frames[i].build_id) {
                        for (uint32_t k = 0; k < s->n_frames; k++)
                                fprintf(f, "%c%s", k ? ';' : '\t', s->frames[k].build_id ?: "");
                        break;
                }
        fputc('\n', f);
        return 0;
}

/* One file at a time and the whole time range: the samples of each file in the reader's order. */
static int cmd_dump(char **files, int n) {
        int ret = 0;

        for (int i = 0; i < n; i++) {
                SliceStats st;
                int r = slice_read(&files[i], 1, 0, UINT64_MAX, dump_handler, stdout, &st);

                if (r < 0) {
                        fprintf(stderr, "dump: %s: %s\n", files[i], strerror(-r));
                        ret = 1;
                }
                slice_stats_done(&st);
        }
        return ret;
}

int main(int argc, char *argv[]) {
        if (argc >= 3 && strcmp(argv[1], "import") == 0)
                return cmd_import(argv[2], argc > 3 ? strtoull(argv[3], NULL, 10) : 120, argc > 4 ? strtoull(argv[4], NULL, 10) : 5);
        if (argc >= 6 && strcmp(argv[1], "synth") == 0)
                return cmd_synth(argv[2], atof(argv[3]), (unsigned) atoi(argv[4]), (unsigned) atoi(argv[5]),
                                 argc > 6 ? strtoull(argv[6], NULL, 10) : 120);
        if (argc == 5 && strcmp(argv[1], "slice") == 0)
                return cmd_slice(argv[2], atof(argv[3]), atof(argv[4]));
        if (argc >= 3 && strcmp(argv[1], "dump") == 0)
                return cmd_dump(argv + 2, argc - 2);
        fprintf(stderr, "usage: store-tool import RING [WINDOW_SECS] < perf-script.txt\n"
                        "       store-tool synth RING HOURS CPUS HZ [WINDOW_SECS]\n"
                        "       store-tool slice RING FROM_EPOCH_SECS SECS\n"
                        "       store-tool dump FILE...\n");
        return 64;
}
