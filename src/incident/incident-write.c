/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Bundle staging, sample accumulation and publication; see incident-write.h for the protocol.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "basic/alloc-util.h"
#include "basic/fileio.h"
#include "basic/hashmap.h"
#include "basic/log.h"
#include "basic/json-writer.h"
#include "basic/parse-util.h"
#include "basic/string-util.h"
#include "basic/time-util.h"
#include "incident/incident-cgroups.h"
#include "incident/incident-threads.h"
#include "incident/incident-write.h"
#include "profile/profile-fold.h"
#include "profile/profile-irq.h"
#include "report/report.h"

/* Seconds of activity kept per CPU: a slice longer than this is cut (rules cap before+after). */
#define ACTIVITY_SECONDS_MAX 7200U

struct IncidentSink {
        uint64_t from_ns, to_ns;
        uint64_t near_from_ns, near_to_ns; /* around the event, within the slice */
        Folder *slice, *baseline, *near, *cpu_slice, *cpu_baseline;
        int64_t cpu; /* captured CPU, or -1 */
        uint64_t resumed_ns; /* Incident.resumed_ns */
        Hashmap *activity; /* (offset_s, cpu) -> samples << 32 | busy */
        IncidentCgroups *cgroups;
        IncidentThreads *threads;
        IncidentSlice stats;
};

int incident_sink_new(const Incident *i, IncidentSink **ret) {
        _cleanup_(incident_sink_freep) IncidentSink *k = calloc(1, sizeof(IncidentSink));
        const char *cpu;
        uint32_t c;

        if (!k)
                return -ENOMEM;
        k->from_ns = i->from_ns;
        k->to_ns = i->to_ns;
        k->resumed_ns = i->resumed_ns;
        bundle_near_event_range(i->t_ns, i->from_ns, i->to_ns, &k->near_from_ns, &k->near_to_ns);
        k->cpu = -1;
        cpu = incident_capture(i, "cpu");
        if (cpu && safe_atou32(cpu, &c) >= 0 && c < 65536)
                k->cpu = c;
        k->slice = folder_new();
        k->baseline = folder_new();
        k->near = folder_new();
        k->activity = hashmap_new();
        k->cgroups = incident_cgroups_new();
        k->threads = incident_threads_new();
        if (!k->slice || !k->baseline || !k->near || !k->activity || !k->cgroups || !k->threads)
                return -ENOMEM;
        if (k->cpu >= 0) {
                k->cpu_slice = folder_new();
                k->cpu_baseline = folder_new();
                if (!k->cpu_slice || !k->cpu_baseline)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(k);
        return 0;
}

IncidentSink *incident_sink_free(IncidentSink *k) {
        if (!k)
                return NULL;
        folder_free(k->slice);
        folder_free(k->baseline);
        folder_free(k->near);
        folder_free(k->cpu_slice);
        folder_free(k->cpu_baseline);
        hashmap_free(k->activity);
        incident_cgroups_free(k->cgroups);
        incident_threads_free(k->threads);
        free(k);
        return NULL;
}

/* Whether s did work: any task but the idle task (pid 0 on every CPU), and the idle task where it
 * ran an interrupt's handler or softirqs: a kernel frame of one nearer the leaf than the idle loop
 * (profile_irq_step(); as bundle-analyze's folded_stack_irq() tells it from the folded line). A
 * busy process's interrupt work is busy as it is. */
static bool sample_is_busy(const Sample *s) {
        if (s->pid != 0)
                return true;
        for (uint32_t f = 0; f < s->n_frames && s->frames[f].kernel; f++) {
                const char *name = s->frames[f].symbol ?: "";
                int r = profile_irq_step(true, profile_kernel_frame(name, strlen(name)));

                if (r != 0)
                        return r > 0;
        }
        return false;
}

int incident_sink_add(IncidentSink *k, const Sample *s) {
        bool in_slice = s->t_ns >= k->from_ns && s->t_ns <= k->to_ns;
        bool in_near = in_slice && s->t_ns >= k->near_from_ns && s->t_ns <= k->near_to_ns; /* event.folded's */
        bool on_cpu = k->cpu >= 0 && s->cpu == (uint64_t) k->cpu;
        /* The producer's stack slots remember one folder's entry: the slice's and the baseline's,
         * which see every sample. The others fold without them rather than overwrite them. */
        Sample part = *s;
        int r;

        part.stack_slot = part.callers_slot = NULL;

        if (k->cgroups) {
                r = incident_cgroups_add(k->cgroups, s, in_slice, in_near);
                if (r < 0)
                        return r;
        }
        if (k->threads) {
                r = incident_threads_add(k->threads, s, in_slice);
                if (r < 0)
                        return r;
        }

        if (!in_slice) {
                if (k->stats.baseline_samples == 0 || s->t_ns < k->stats.baseline_from_ns)
                        k->stats.baseline_from_ns = s->t_ns;
                if (s->t_ns > k->stats.baseline_to_ns)
                        k->stats.baseline_to_ns = s->t_ns;
                k->stats.baseline_samples++;
                r = folder_add(k->baseline, s, 1);
                if (r >= 0 && on_cpu)
                        r = folder_add(k->cpu_baseline, &part, 1);
                return r;
        }

        if (k->stats.samples == 0 || s->t_ns < k->stats.covered_from_ns)
                k->stats.covered_from_ns = s->t_ns;
        if (s->t_ns > k->stats.covered_to_ns)
                k->stats.covered_to_ns = s->t_ns;
        k->stats.samples++;
        if (k->resumed_ns > 0 && s->t_ns < k->resumed_ns && s->t_ns > k->stats.resume_gap_from_ns)
                k->stats.resume_gap_from_ns = s->t_ns;
        if (k->resumed_ns > 0 && s->t_ns >= k->resumed_ns &&
            (k->stats.resume_gap_to_ns == 0 || s->t_ns < k->stats.resume_gap_to_ns))
                k->stats.resume_gap_to_ns = s->t_ns;
        r = folder_add(k->slice, s, 1);
        if (r >= 0 && on_cpu)
                r = folder_add(k->cpu_slice, &part, 1);
        if (r >= 0 && in_near) {
                k->stats.near_samples++;
                r = folder_add(k->near, &part, 1);
        }
        if (r < 0)
                return r;

        uint64_t offset_s = (s->t_ns - k->from_ns) / NSEC_PER_SEC;
        if (offset_s >= ACTIVITY_SECONDS_MAX)
                return 0;
        uint64_t key[2] = { offset_s, s->cpu };
        uint64_t *v = hashmap_slot(k->activity, key, sizeof key, 0, NULL);
        if (!v)
                return -ENOMEM;
        *v += UINT64_C(1) << 32;
        if (sample_is_busy(s))
                *v += 1;
        return 0;
}

void incident_sink_add_lost(IncidentSink *k, uint64_t n) {
        k->stats.lost += n;
}

IncidentCgroups *incident_sink_take_cgroups(IncidentSink *k) {
        return TAKE_PTR(k->cgroups);
}

IncidentThreads *incident_sink_take_threads(IncidentSink *k) {
        return TAKE_PTR(k->threads);
}

void incident_sink_get_slice(const IncidentSink *k, IncidentSlice *ret) {
        *ret = k->stats;
        ret->cgroups = k->cgroups;
        ret->threads = k->threads;
}

/* Writes data to dir/name with the bundle mode and fsyncs it. */
static int write_file_at(int dir_fd, const char *name, const void *data, size_t size) {
        _cleanup_close_ int fd = openat(dir_fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
                                        BUNDLE_FILE_MODE);
        int r;

        if (fd < 0)
                return -errno;
        r = loop_write(fd, data, size);
        if (r < 0)
                return r;
        if (fchmod(fd, BUNDLE_FILE_MODE) < 0 || fsync(fd) < 0)
                return -errno;
        return 0;
}

static int write_stream_at(int dir_fd, const char *name, int (*fill)(FILE *f, void *ud), void *ud) {
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        int r;

        if (!f)
                return -ENOMEM;
        r = fill(f, ud);
        if (fclose(f) != 0 && r >= 0)
                r = -ENOMEM;
        if (r < 0)
                return r;
        return write_file_at(dir_fd, name, buf ?: "", len);
}

static int fill_folded(FILE *f, void *ud) {
        return folder_write(ud, f);
}

/* Orders activity rows by (second, cpu). */
static int cmp_activity_row(const void *a, const void *b) {
        const uint64_t *x = a, *y = b;

        if (x[0] != y[0])
                return x[0] < y[0] ? -1 : 1;
        return x[1] < y[1] ? -1 : x[1] > y[1];
}

static int fill_activity(FILE *f, void *ud) {
        IncidentSink *k = ud;
        const void *key;
        size_t kl, n = hashmap_size(k->activity), i = 0;
        uint64_t v;
        _cleanup_free_ uint64_t (*rows)[3] = calloc(n ?: 1, sizeof *rows);

        if (!rows)
                return -ENOMEM;
        for (size_t it = 0; hashmap_iterate(k->activity, &it, &key, &kl, &v);) {
                const uint64_t *p = key;
                rows[i][0] = p[0];
                rows[i][1] = p[1];
                rows[i][2] = v;
                i++;
        }
        qsort(rows, n, sizeof *rows, cmp_activity_row);
        fprintf(f, "# offset_s\tcpu\tsamples\tbusy\n");
        for (i = 0; i < n; i++)
                fprintf(f, "%llu\t%llu\t%llu\t%llu\n", (unsigned long long) rows[i][0],
                        (unsigned long long) rows[i][1], (unsigned long long) (rows[i][2] >> 32),
                        (unsigned long long) (rows[i][2] & UINT32_MAX));
        return ferror(f) ? -EIO : 0;
}

static const char *priority_name(int p) {
        static const char *const names[] = { "emerg", "alert", "crit", "err", "warning", "notice", "info", "debug" };
        return p >= 0 && p < 8 ? names[p] : "-";
}

int incident_log_text_line(const IncidentLogLine *l, const ClockMap *m, char **ret) {
        _cleanup_strbuf_ StrBuf b = STRBUF_NULL;
        char ts[FORMAT_TIMESTAMP_MAX];
        uint64_t real = l->rec->realtime_usec ?: clock_map_perf_to_realtime(m, l->rec->t_ns) / NSEC_PER_USEC;
        int r;

        r = strbuf_appendf(&b, "%c %s %-8s %-7s ", l->trigger ? '>' : ' ', format_timestamp_utc(ts, sizeof ts, real),
                           log_source_to_string(l->rec->source) ?: "-", priority_name(l->rec->priority));
        /* Who logged it (journal entries): "unit comm[pid]: ", each part when known. */
        if (r >= 0 && l->rec->unit)
                r = strbuf_append_escaped(&b, l->rec->unit, strlen(l->rec->unit));
        if (r >= 0 && l->rec->source == LOG_SOURCE_JOURNAL && l->rec->comm) {
                if (l->rec->unit)
                        r = strbuf_append(&b, " ");
                if (r >= 0)
                        r = strbuf_append_escaped(&b, l->rec->comm, strlen(l->rec->comm));
                if (r >= 0 && l->rec->pid > 0)
                        r = strbuf_appendf(&b, "[%d]", (int) l->rec->pid);
        }
        if (r >= 0 && (l->rec->unit || (l->rec->source == LOG_SOURCE_JOURNAL && l->rec->comm)))
                r = strbuf_append(&b, ": ");
        if (r >= 0)
                r = strbuf_append_escaped(&b, l->rec->message ?: "", l->rec->message_len);
        if (r < 0)
                return r;
        *ret = strbuf_steal(&b);
        return 0;
}

int incident_log_json_line(const IncidentLogLine *l, const ClockMap *m, char **ret) {
        char ts[FORMAT_TIMESTAMP_MAX];
        uint64_t real = l->rec->realtime_usec ?: clock_map_perf_to_realtime(m, l->rec->t_ns) / NSEC_PER_USEC;
        JsonWriter w;
        char *s;
        int r = 0;

        json_writer_init(&w, false);
        json_begin_object(&w);
        json_kv_u64(&w, "t_perf_ns", l->rec->t_ns);
        json_kv_u64(&w, "t_realtime_usec", real);
        json_kv_string(&w, "utc", format_timestamp_utc(ts, sizeof ts, real));
        json_kv_string(&w, "source", log_source_to_string(l->rec->source));
        json_kv_bool(&w, "kernel_origin", l->rec->kernel_origin);
        json_kv_i64(&w, "priority", l->rec->priority);
        json_kv_i64(&w, "facility", l->rec->facility);
        json_kv_u64(&w, "seq", l->rec->seq);
        json_kv_string(&w, "unit", l->rec->unit);
        json_kv_string(&w, "comm", l->rec->comm);
        json_kv_i64(&w, "pid", l->rec->pid);
        json_key(&w, "message");
        json_string_n(&w, l->rec->message ?: "", l->rec->message_len);
        json_kv_bool(&w, "trigger", l->trigger);
        json_end_object(&w);
        s = json_finish(&w, &r);
        if (!s)
                return r;
        *ret = s;
        return 0;
}

typedef struct LogFill {
        const IncidentLogLine *lines;
        size_t n;
        const ClockMap *clock;
        bool json;
} LogFill;

static int fill_log(FILE *f, void *ud) {
        const LogFill *lf = ud;

        for (size_t i = 0; i < lf->n; i++) {
                _cleanup_free_ char *s = NULL;
                int r = lf->json ? incident_log_json_line(&lf->lines[i], lf->clock, &s)
                                 : incident_log_text_line(&lf->lines[i], lf->clock, &s);
                if (r < 0)
                        return r;
                fputs(s, f);
                fputc('\n', f);
        }
        return ferror(f) ? -EIO : 0;
}

static int write_manifest(int dir_fd, const char *name, const Incident *i, const IncidentHost *h,
                          const IncidentProfile *p, const IncidentSlice *s, char *const *windows,
                          size_t n_windows, bool pending) {
        _cleanup_free_ char *json = NULL;
        int r;

        r = incident_manifest_json(i, h, p, s, windows, n_windows, pending, &json);
        if (r < 0)
                return r;
        return write_file_at(dir_fd, name, json, strlen(json));
}

/* Fills a freshly made staging folder: windows/ and the pending manifest, synced. */
static int stage_contents(int incidents_fd, const char *tmp, const Incident *i, const IncidentHost *h,
                          const IncidentProfile *p, int *ret_dir_fd) {
        _cleanup_close_ int fd = -EBADF;
        IncidentSlice none = {};
        int r;

        fd = openat(incidents_fd, tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return -errno;
        if (mkdirat(fd, BUNDLE_WINDOWS_DIR, BUNDLE_DIR_MODE) < 0)
                return -errno;
        r = write_manifest(fd, BUNDLE_PENDING, i, h, p, &none, NULL, 0, true);
        if (r < 0)
                return r;
        if (fsync(fd) < 0 || fsync(incidents_fd) < 0)
                return -errno;
        *ret_dir_fd = TAKE_FD(fd);
        return 0;
}

/* A window copy (ring-store.h: the bundles on another file system) that a run which died in the
 * middle of it left in windows/: no reader takes it, but it would count in the bundle's size. */
static void remove_torn_copies(int dir_fd) {
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;

        if (opendir_at(dir_fd, BUNDLE_WINDOWS_DIR, O_NOFOLLOW, &d) < 0)
                return;
        while ((de = readdir(d)))
                if (de->d_name[0] == '.' && endswith(de->d_name, COPY_FILE_TMP_SUFFIX))
                        (void) unlinkat(dirfd(d), de->d_name, 0);
}

/* Where incident_restage() writes before its rename; one a crash left is removed at publication. */
#define PENDING_TMP "." BUNDLE_PENDING ".tmp"

int incident_restage(int dir_fd, const Incident *i, const IncidentHost *h, const IncidentProfile *p) {
        IncidentSlice none = {};
        int r;

        r = write_manifest(dir_fd, PENDING_TMP, i, h, p, &none, NULL, 0, true);
        if (r >= 0 && renameat(dir_fd, PENDING_TMP, dir_fd, BUNDLE_PENDING) < 0)
                r = -errno;
        if (r < 0)
                (void) unlinkat(dir_fd, PENDING_TMP, 0);
        return r;
}

int incident_stage(int incidents_fd, const Incident *i, const IncidentHost *h, const IncidentProfile *p,
                   int *ret_dir_fd) {
        _cleanup_free_ char *tmp = NULL;
        int r;

        if (asprintf(&tmp, BUNDLE_TMP_PREFIX "%s", i->id) < 0)
                return -ENOMEM;
        if (mkdirat(incidents_fd, tmp, BUNDLE_DIR_MODE) < 0)
                return -errno;
        r = stage_contents(incidents_fd, tmp, i, h, p, ret_dir_fd);
        if (r < 0)
                /* A full disk fails here after the mkdir: nobody would ever finish or remove the
                 * folder (the caller has no fd to discard), so take it away now. */
                (void) rm_rf_at(incidents_fd, tmp, BUNDLE_DEPTH_MAX);
        return r;
}

typedef struct PerfScriptFill {
        IncidentPerfScriptWriter writer;
        void *userdata;
} PerfScriptFill;

static int fill_perf_script(FILE *f, void *ud) {
        const PerfScriptFill *p = ud;
        return p->writer(f, p->userdata);
}

static int write_report(int incidents_fd, const char *tmp) {
        _cleanup_free_ char *dir = NULL;

        /* The staged folder by a path through our descriptor of incidents/, wherever that is. */
        if (asprintf(&dir, "/proc/self/fd/%i/%s", incidents_fd, tmp) < 0)
                return -ENOMEM;
        return report_write_bundle_file(dir, BUNDLE_REPORT);
}

int incident_publish(int incidents_fd, int dir_fd, const Incident *i, IncidentSink *k, const IncidentHost *h,
                     const IncidentProfile *p, char *const *windows, size_t n_windows,
                     const IncidentLogLine *lines, size_t n_lines, IncidentPerfScriptWriter perf_script,
                     void *userdata) {
        _cleanup_free_ char *tmp = NULL;
        IncidentSlice s;
        char name[64];
        int r;

        if (asprintf(&tmp, BUNDLE_TMP_PREFIX "%s", i->id) < 0)
                return -ENOMEM;

        LogFill text = { lines, n_lines, &i->clock, false }, json = { lines, n_lines, &i->clock, true };
        r = write_stream_at(dir_fd, BUNDLE_LOG_TEXT, fill_log, &text);
        if (r >= 0)
                r = write_stream_at(dir_fd, BUNDLE_LOG_JSON, fill_log, &json);
        if (r >= 0)
                r = write_stream_at(dir_fd, BUNDLE_FOLDED, fill_folded, k->slice);
        if (r >= 0)
                r = write_stream_at(dir_fd, BUNDLE_BASELINE_FOLDED, fill_folded, k->baseline);
        if (r >= 0)
                r = write_stream_at(dir_fd, BUNDLE_NEAR_EVENT_FOLDED, fill_folded, k->near);
        if (r >= 0)
                r = write_stream_at(dir_fd, BUNDLE_ACTIVITY, fill_activity, k);
        if (r >= 0 && k->cpu >= 0) {
                snprintf(name, sizeof name, BUNDLE_CPU_FOLDED_FMT, (unsigned) k->cpu);
                r = write_stream_at(dir_fd, name, fill_folded, k->cpu_slice);
                if (r >= 0) {
                        snprintf(name, sizeof name, BUNDLE_CPU_BASELINE_FOLDED_FMT, (unsigned) k->cpu);
                        r = write_stream_at(dir_fd, name, fill_folded, k->cpu_baseline);
                }
        }
        incident_sink_get_slice(k, &s);
        if (r >= 0 && perf_script && s.samples > BUNDLE_PERF_SCRIPT_SAMPLES_MAX)
                /* Seconds of text and hundreds of megabytes at fleet rates, written by the daemon's
                 * one thread: made on demand from windows/ instead. */
                r = perf_script(NULL, userdata);
        else if (r >= 0 && perf_script) {
                PerfScriptFill fill = { perf_script, userdata };
                r = write_stream_at(dir_fd, BUNDLE_PERF_SCRIPT, fill_perf_script, &fill);
        }
        /* Last, so it can count what writing the other files learned (lost samples of the slice). */
        if (k->threads) {
                /* CLOCK_BOOTTIME minus the perf clock: /proc's start times are on the first */
                int64_t boot_minus_mono = (int64_t) (now_nsec(CLOCK_BOOTTIME) - now_nsec(CLOCK_MONOTONIC));
                incident_threads_resolve(k->threads, "/", boot_minus_mono - i->clock.perf_minus_mono_ns);
        }
        incident_sink_get_slice(k, &s);
        if (r >= 0)
                r = write_manifest(dir_fd, BUNDLE_MANIFEST, i, h, p, &s, windows, n_windows, false);
        if (r < 0)
                return r;
        /* The report is a view of the files just written, read back through the bundle's readers.
         * It is not essential: a bundle without it is still complete (`tprof-bundle report`
         * makes it again), so a failure is only noted. */
        r = write_report(incidents_fd, tmp);
        if (r < 0)
                log_debug_errno(r, "Failed to write %s of incident %s, continuing without it: %m", BUNDLE_REPORT,
                                i->short_id);

        /* Complete: drop the pending marker, make it durable, then make it visible in one step. */
        if (unlinkat(dir_fd, BUNDLE_PENDING, 0) < 0 && errno != ENOENT)
                return -errno;
        (void) unlinkat(dir_fd, PENDING_TMP, 0);
        remove_torn_copies(dir_fd);
        if (fsync(dir_fd) < 0)
                return -errno;
        if (renameat(incidents_fd, tmp, incidents_fd, i->id) < 0)
                return -errno;
        if (fsync(incidents_fd) < 0)
                return -errno;
        return 0;
}

/* Lists windows/ of a staged bundle: the names for the manifest and the paths to read, sorted (window
 * names start with their UTC start time), as NULL-terminated vectors. */
int incident_list_windows(int dir_fd, const char *id, const char *incidents_path, char ***ret_names, char ***ret_paths,
                          size_t *ret_n) {
        _cleanup_strv_ char **names = NULL, **paths = NULL;
        _cleanup_closedir_ DIR *d = NULL;
        size_t n = 0, allocated = 0, allocated_p = 0;
        struct dirent *de;
        int r;

        r = opendir_at(dir_fd, BUNDLE_WINDOWS_DIR, 0, &d);
        if (r < 0)
                return r;
        if (!GREEDY_REALLOC(names, allocated, 1) || !GREEDY_REALLOC(paths, allocated_p, 1))
                return -ENOMEM;
        names[0] = paths[0] = NULL;
        while ((de = readdir(d))) {
                if (de->d_name[0] == '.')
                        continue;
                if (!GREEDY_REALLOC(names, allocated, n + 2) || !GREEDY_REALLOC(paths, allocated_p, n + 2))
                        return -ENOMEM;
                names[n + 1] = paths[n + 1] = NULL;
                names[n] = strdup(de->d_name);
                if (asprintf(&paths[n], "%s/" BUNDLE_TMP_PREFIX "%s/" BUNDLE_WINDOWS_DIR "/%s", incidents_path, id,
                             de->d_name) < 0)
                        paths[n] = NULL;
                if (!names[n] || !paths[n]) {
                        n++; /* free what was allocated */
                        return -ENOMEM;
                }
                n++;
        }
        qsort(names, n, sizeof(char *), cmp_string_ptr);
        qsort(paths, n, sizeof(char *), cmp_string_ptr);
        *ret_names = TAKE_PTR(names);
        *ret_paths = TAKE_PTR(paths);
        *ret_n = n;
        return 0;
}

int incident_discard(int incidents_fd, const Incident *i) {
        _cleanup_free_ char *tmp = NULL;

        if (asprintf(&tmp, BUNDLE_TMP_PREFIX "%s", i->id) < 0)
                return -ENOMEM;
        return rm_rf_at(incidents_fd, tmp, BUNDLE_DEPTH_MAX);
}
