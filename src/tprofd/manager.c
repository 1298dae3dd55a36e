/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The daemon: one sd-event loop that owns every part and moves data between them.
 *
 *   sampler ──Sample──► ring store (windows under <state>/ring)
 *   kmsg, journal ──LogRecord──► log context (recent lines) and rule set ──match──► trigger
 *   trigger ──new incident──► stage .tmp-<id>, pin windows, arm a deadline at t + after
 *   deadline ──► drain, flush, pin again, slice the pinned windows, publish the bundle
 *
 * Everything runs on this one thread (DESIGN.md). Nothing here blocks on anything but local disk,
 * and the only disk work that grows with data (slicing windows for a bundle) happens at an
 * incident's deadline, bounded by the windows it pinned.
 */
#include <dirent.h>
#include <grp.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>
#include <systemd/sd-journal.h>

#include "basic/alloc-util.h"
#include "basic/cleanup.h"
#include "basic/clock-map.h"
#include "basic/fileio.h"
#include "basic/log.h"
#include "basic/parse-util.h"
#include "basic/string-util.h"
#include "basic/time-util.h"
#include "bundle/bundle-format.h"
#include "control/control-server.h"
#include "incident/incident-trigger.h"
#include "incident/incident-write.h"
#include "incident/incident.h"
#include "logsrc/log-context.h"
#include "logsrc/logsrc-journal.h"
#include "logsrc/logsrc-kmsg.h"
#include "rules/rules.h"
#include "sampler/sampler.h"
#include "store/ring-store.h"
#include "store/store-export.h"
#include "store/store-slice.h"
#include "tprofd/manager.h"

/*
 * sd-event priorities, most urgent first. The sampler's rings overflow if not drained, so they
 * come first; log records next, so matches are seen promptly; incident deadlines before
 * housekeeping, so a bundle is not held up by a vacuum pass; signals last, so a SIGTERM lets the
 * work already queued in this iteration finish before we flush and exit.
 */
enum {
        PRIORITY_SAMPLER = SD_EVENT_PRIORITY_IMPORTANT,
        PRIORITY_LOG = SD_EVENT_PRIORITY_NORMAL - 20,
        PRIORITY_INCIDENT = SD_EVENT_PRIORITY_NORMAL - 10,
        PRIORITY_HOUSEKEEPING = SD_EVENT_PRIORITY_NORMAL,
        PRIORITY_SIGNAL = SD_EVENT_PRIORITY_NORMAL + 10,
};

/* Longer chunks compress better (5 s: 16% fewer bytes per sample than 2 s) and a crash loses at
 * most one; incidents do not wait for it, their deadline flushes at once. */
#define FLUSH_USEC (5 * USEC_PER_SEC)
#define ROTATE_USEC USEC_PER_SEC
#define VACUUM_USEC (60 * USEC_PER_SEC)
#define CLOCK_USEC (60 * USEC_PER_SEC)
#define STATUS_USEC (10 * USEC_PER_SEC)
/* journald may start after us: try again this often while the journal is unavailable. */
#define JOURNAL_RETRY_USEC (30 * USEC_PER_SEC)
/* After t + after, wait this long so the samples stamped up to t + after have reached the rings. */
#define DEADLINE_SLACK_USEC (100 * USEC_PER_MSEC)
/* Recent log lines kept for bundles; the longest before + after a rule may ask for. */
#define LOG_CONTEXT_LINES_MAX 20000U
#define LOG_CONTEXT_BYTES_MAX (UINT64_C(8) << 20)
#define LOG_CONTEXT_AGE_USEC (15 * USEC_PER_MINUTE)
/* Repeats whose lines are marked as triggers in the bundle's log. */
#define REPEAT_MARKS_MAX 64U

/* journalctl MESSAGE_ID=6b0f5e1a8c7d4e2f9a3b1c0d2e4f6a8b finds every bundle tprofd announced. */
#define TPROF_INCIDENT_MESSAGE_ID "6b0f5e1a8c7d4e2f9a3b1c0d2e4f6a8b"

typedef struct Manager Manager;

typedef struct OpenIncident {
        Manager *manager;
        Incident *incident;
        int dir_fd; /* incidents/.tmp-<id> while recording; -EBADF once published */
        bool published;
        IncidentSlice slice;  /* kept after publishing, for manifest rewrites on repeats */
        char **windows;
        size_t n_windows;
        sd_event_source *deadline; /* t + after has been sampled: publish */
        sd_event_source *expire;   /* the cooldown is over: forget */
        sd_event_source *rewrite;  /* repeats joined the published bundle: update its manifest soon */
        uint64_t repeat_ns[REPEAT_MARKS_MAX];
        size_t n_repeat_marks;
        ControlRequest *capture; /* tprof-bundle capture waiting for this bundle, or NULL */
} OpenIncident;

struct Manager {
        TprofdConfig *config;
        ManagerReload reload;
        sd_event *event;

        char *host, *boot_id, *kernel_release;
        char *ring_dir;
        int incidents_fd;

        RuleSet *rules;
        Sampler *sampler;
        RingStore *ring;
        KmsgSource *kmsg;
        JournalSource *journal;
        LogContext *log_context;
        Trigger *trigger;
        ClockMap clock;

        OpenIncident **incidents;
        size_t n_incidents, allocated_incidents;

        sd_event_source *flush_timer, *rotate_timer, *vacuum_timer, *clock_timer, *status_timer;
        ControlServer *control;
        sd_event_source *journal_retry;
        uint64_t started_usec;

        uint64_t incidents_written, incidents_failed, ring_errors;
        uint64_t dropped_reported;
        bool ring_error_reported;
};

static void open_incident_free(OpenIncident *oi);

/* --- helpers ------------------------------------------------------------------------------------- */

static int host_info(Manager *m) {
        char host[256];
        struct utsname u;
        int r;

        if (gethostname(host, sizeof host) < 0)
                snprintf(host, sizeof host, "localhost");
        host[sizeof host - 1] = '\0';
        filename_sanitize(host);
        m->host = strdup(host);
        if (uname(&u) < 0)
                snprintf(u.release, sizeof u.release, "unknown");
        m->kernel_release = strdup(u.release);
        r = read_one_line_file("/proc/sys/kernel/random/boot_id", &m->boot_id);
        if (r < 0)
                m->boot_id = strdup("unknown");
        if (!m->host || !m->kernel_release || !m->boot_id)
                return log_oom();
        return 0;
}

/*
 * Bundles and windows are for root and group tprof (DESIGN.md). Under the shipped unit tprofd runs
 * with Group=tprof and everything it creates has that group; started by hand it runs as root:root,
 * so the state directories get group tprof and the setgid bit, and what is created below them
 * inherits the group either way.
 */
static void set_state_group(const char *path) {
        struct group *g = getgrnam(CONTROL_GROUP);
        struct stat st;

        if (!g || stat(path, &st) < 0)
                return;
        if (st.st_gid != g->gr_gid && chown(path, (uid_t) -1, g->gr_gid) < 0) {
                log_debug_errno(errno, "Failed to give '%s' group " CONTROL_GROUP ", ignoring: %m", path);
                return;
        }
        if ((st.st_mode & 07777) != (BUNDLE_DIR_MODE | S_ISGID))
                (void) chmod(path, BUNDLE_DIR_MODE | S_ISGID);
}

static int make_state_dirs(Manager *m) {
        static const char *const subdirs[] = { "ring", "incidents", "state" };
        const char *state = m->config->state_dir;
        int r;

        r = mkdir_p(state, BUNDLE_DIR_MODE);
        if (r < 0)
                return log_error_errno(r, "Failed to create state directory '%s': %m", state);
        set_state_group(state);
        for (size_t i = 0; i < ELEMENTSOF(subdirs); i++) {
                _cleanup_free_ char *p = NULL;
                if (asprintf(&p, "%s/%s", state, subdirs[i]) < 0)
                        return log_oom();
                if (mkdir(p, BUNDLE_DIR_MODE) < 0 && errno != EEXIST)
                        return log_error_errno(errno, "Failed to create '%s': %m", p);
                set_state_group(p);
        }
        if (asprintf(&m->ring_dir, "%s/ring", state) < 0)
                return log_oom();

        _cleanup_free_ char *inc = NULL;
        if (asprintf(&inc, "%s/incidents", state) < 0)
                return log_oom();
        m->incidents_fd = open(inc, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (m->incidents_fd < 0)
                return log_error_errno(errno, "Failed to open '%s': %m", inc);
        return 0;
}

/* A .tmp-* bundle left by a crash can never complete: remove it and release its pins. */
static void remove_stale_bundles(Manager *m) {
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;

        if (opendir_at(m->incidents_fd, ".", 0, &d) < 0)
                return;
        while ((de = readdir(d))) {
                if (!startswith(de->d_name, BUNDLE_TMP_PREFIX))
                        continue;
                int r = rm_rf_at(m->incidents_fd, de->d_name, BUNDLE_DEPTH_MAX);
                if (r < 0)
                        log_warning_errno(r, "Failed to remove unfinished bundle '%s', ignoring: %m", de->d_name);
                else
                        log_notice("Removed unfinished bundle '%s' left by an earlier run.", de->d_name);
        }
}

/* --- samples and the ring ------------------------------------------------------------------------ */

static int on_sample(const Sample *s, void *userdata) {
        Manager *m = userdata;
        int r;

        /* manager_new() measures the perf clock, which drains the rings, before the ring store is
         * open: samples of those first moments have nowhere to go. */
        if (!m->ring)
                return 0;
        r = ring_store_add_sample(m->ring, s);
        if (r < 0)
                m->ring_errors++; /* counted, reported by the status timer: never per sample */
        return 0;
}

static void on_ring_event(const RingEvent *e, void *userdata) {
        switch (e->type) {
        case RING_EVENT_REMOVED:
                log_info("Removed window %s (%s).", e->name, e->reason ?: "retention");
                break;
        case RING_EVENT_RECOVERED:
                log_notice("Finalized window %s left open by an earlier run (%llu bytes of an unfinished chunk cut).",
                           e->name, (unsigned long long) e->bytes);
                break;
        case RING_EVENT_DISCARDED:
                log_warning("Discarded window %s: %s.", e->name, e->reason ?: "no usable header");
                break;
        case RING_EVENT_DROPPED:
                log_warning("Dropped %llu samples: %s.", (unsigned long long) e->bytes, e->reason ?: "disk full");
                break;
        default:
                break;
        }
}

static void flush_ring(Manager *m) {
        int r;

        r = sampler_drain(m->sampler);
        if (r < 0)
                log_debug_errno(r, "Sampler drain failed: %m");
        r = ring_store_flush(m->ring);
        if (r < 0 && !m->ring_error_reported) {
                log_warning_errno(r, "Failed to write to the ring in '%s', will retry: %m", m->ring_dir);
                m->ring_error_reported = true;
        } else if (r >= 0)
                m->ring_error_reported = false;
}

static int on_flush_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;

        flush_ring(m);
        return sd_event_source_set_time_relative(s, FLUSH_USEC);
}

static int on_rotate_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        int r;

        r = ring_store_rotate(m->ring, now_usec(CLOCK_REALTIME));
        if (r < 0)
                log_warning_errno(r, "Failed to rotate the ring window, ignoring: %m");
        else if (r > 0)
                log_debug("Opened window %s.", ring_store_current_name(m->ring));
        return sd_event_source_set_time_relative(s, ROTATE_USEC);
}

static int on_vacuum_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        VacuumResult v = {};
        int r;

        r = ring_store_vacuum(m->ring, now_usec(CLOCK_REALTIME), &v);
        if (r < 0)
                log_warning_errno(r, "Failed to apply retention to '%s', ignoring: %m", m->ring_dir);
        return sd_event_source_set_time_relative(s, VACUUM_USEC);
}

static int on_clock_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        ClockMap c;
        int r;

        r = sampler_measure_clock(m->sampler, &c);
        if (r < 0)
                log_debug_errno(r, "Failed to measure the perf clock, keeping the last mapping: %m");
        else {
                m->clock = c;
                (void) ring_store_update_clock(m->ring, &m->clock);
        }
        return sd_event_source_set_time_relative(s, CLOCK_USEC);
}

static void update_status(Manager *m) {
        SamplerStats st = {};

        sampler_get_stats(m->sampler, &st);
        (void) sd_notifyf(false,
                          "STATUS=Sampling %u CPUs at %u Hz (%s); %llu samples, %llu lost; window %s; "
                          "%llu incidents written, %u open",
                          sampler_n_cpus(m->sampler), m->config->freq_hz, sampler_event_name(m->sampler),
                          (unsigned long long) st.samples, (unsigned long long) st.lost,
                          ring_store_current_name(m->ring) ?: "-", (unsigned long long) m->incidents_written,
                          trigger_n_open(m->trigger));
        if (st.lost > m->dropped_reported) {
                log_warning("The kernel dropped %llu samples so far (tprofd did not read its rings fast enough).",
                            (unsigned long long) st.lost);
                m->dropped_reported = st.lost;
        }
}

static int on_status_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        update_status(userdata);
        return sd_event_source_set_time_relative(s, STATUS_USEC);
}

/* --- incidents ----------------------------------------------------------------------------------- */

static int incident_rule_from(const Rule *rule, IncidentRule *ret) {
        static const char *const levels[] = { "emerg", "alert", "crit", "err", "warning", "notice", "info", "debug" };

        *ret = (IncidentRule) {
                .name = rule->name,
                .description = rule->description,
                .source = (char *) rule_source_to_string(rule->source),
                .origin = rule->source == RULE_SOURCE_KERNEL ? (char *) (rule->origin_any ? "any" : "kernel") : NULL,
                .match = rule->match,
                .severity = rule->severity >= 0 && rule->severity < 8 ? (char *) levels[rule->severity] : NULL,
                .before_usec = rule->before_usec,
                .after_usec = rule->after_usec,
                .cooldown_usec = rule->cooldown_usec,
        };
        return 0;
}

static const char *alignment_of(const LogRecord *rec) {
        if (rec->source == LOG_SOURCE_KMSG)
                return "kmsg-timestamp";
        if (rec->kernel_origin)
                return "journal-source-monotonic";
        return "journal-monotonic";
}

static IncidentHost manager_host(const Manager *m) {
        return (IncidentHost) { m->host, m->boot_id, m->kernel_release };
}

static IncidentProfile manager_profile(const Manager *m) {
        return (IncidentProfile) { sampler_event_name(m->sampler), m->config->freq_hz, sampler_n_cpus(m->sampler) };
}

static void manager_remove_incident(Manager *m, OpenIncident *oi) {
        for (size_t i = 0; i < m->n_incidents; i++)
                if (m->incidents[i] == oi) {
                        memmove(m->incidents + i, m->incidents + i + 1, (m->n_incidents - i - 1) * sizeof(OpenIncident *));
                        m->n_incidents--;
                        break;
                }
        trigger_forget(m->trigger, oi);
        open_incident_free(oi);
}

static int rewrite_manifest(Manager *m, OpenIncident *oi);

static void open_incident_free(OpenIncident *oi) {
        if (!oi)
                return;
        if (oi->rewrite) /* repeats not yet in the manifest */
                (void) rewrite_manifest(oi->manager, oi);
        sd_event_source_disable_unref(oi->rewrite);
        sd_event_source_disable_unref(oi->deadline);
        sd_event_source_disable_unref(oi->expire);
        if (oi->capture)
                (void) control_request_error(oi->capture, "the capture was abandoned");
        safe_close(oi->dir_fd);
        for (size_t i = 0; i < oi->n_windows; i++)
                free(oi->windows[i]);
        free(oi->windows);
        incident_free(oi->incident);
        free(oi);
}

typedef struct CollectLog {
        IncidentLogLine *lines;
        LogRecord **copies;
        size_t n, allocated, allocated_copies;
        const OpenIncident *oi;
} CollectLog;

static bool is_trigger_line(const OpenIncident *oi, const LogRecord *rec) {
        if (rec->t_ns == oi->incident->t_ns)
                return true;
        for (size_t i = 0; i < oi->n_repeat_marks; i++)
                if (rec->t_ns == oi->repeat_ns[i])
                        return true;
        return false;
}

static int on_collect_log(const LogRecord *rec, void *userdata) {
        CollectLog *c = userdata;
        LogRecord *copy;

        if (!GREEDY_REALLOC(c->lines, c->allocated, c->n + 1) ||
            !GREEDY_REALLOC(c->copies, c->allocated_copies, c->n + 1))
                return -ENOMEM;
        copy = log_record_dup(rec);
        if (!copy)
                return -ENOMEM;
        c->copies[c->n] = copy;
        c->lines[c->n] = (IncidentLogLine) { .rec = copy, .trigger = is_trigger_line(c->oi, rec) };
        c->n++;
        return 0;
}

static void collect_log_done(CollectLog *c) {
        for (size_t i = 0; i < c->n; i++)
                log_record_free(c->copies[i]);
        free(c->copies);
        free(c->lines);
}

typedef struct SliceFiles {
        char **paths;
        size_t n;
        uint64_t from_ns, to_ns;
        IncidentSink *sink;
} SliceFiles;

static int on_no_sample(const Sample *s, void *userdata) {
        return 0;
}

/* Writes the slice as perf script, and counts the samples the kernel lost inside the slice. */
static int write_perf_script(FILE *out, void *userdata) {
        const SliceFiles *f = userdata;
        ExportStats st = {};
        int r;

        if (!out) { /* no text: only the samples lost inside the slice */
                r = slice_read(f->paths, f->n, f->from_ns, f->to_ns, on_no_sample, NULL, &st.slice);
                incident_sink_add_lost(f->sink, st.slice.lost);
                export_stats_done(&st);
                return r == -ENODATA ? 0 : r;
        }
        r = export_perf_script(f->paths, f->n, f->from_ns, f->to_ns, /* event= */ NULL, out, &st);
        incident_sink_add_lost(f->sink, st.slice.lost);
        export_stats_done(&st);
        return r == -ENODATA ? 0 : r; /* no samples: an empty file, the manifest says no-coverage */
}

static int on_slice_sample(const Sample *s, void *userdata) {
        return incident_sink_add(userdata, s);
}

/* Lists windows/ of a staged bundle: the names for the manifest and the paths to read, sorted (window
 * names start with their UTC start time), as NULL-terminated vectors. */
static int list_pinned(int dir_fd, const char *id, const char *incidents_path, char ***ret_names, char ***ret_paths,
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

static void strv_free_n(char **l, size_t n) {
        for (size_t i = 0; l && i < n; i++)
                free(l[i]);
        free(l);
}

/* Removes the oldest complete bundles beyond the count and size limits. */
static void enforce_incident_limits(Manager *m);

static void announce(const Manager *m, const Incident *i, BundleStatus status) {
        log_notice("Incident %s: rule %s, %s, bundle %s/incidents/%s", i->short_id, i->rule.name,
                   bundle_status_to_string(status), m->config->state_dir, i->id);
        (void) sd_journal_send("MESSAGE=tprof incident %s: rule %s matched, bundle %s/incidents/%s", i->short_id,
                               i->rule.name, m->config->state_dir, i->id,
                               "MESSAGE_ID=" TPROF_INCIDENT_MESSAGE_ID, "PRIORITY=%i", LOG_NOTICE,
                               "TPROF_BUNDLE=%s/incidents/%s", m->config->state_dir, i->id, "TPROF_RULE=%s",
                               i->rule.name, "TPROF_STATUS=%s", bundle_status_to_string(status), NULL);
}

static int incident_complete(Manager *m, OpenIncident *oi) {
        _cleanup_(incident_sink_freep) IncidentSink *sink = NULL;
        _cleanup_free_ char *incidents_path = NULL;
        _cleanup_close_ int windows_fd = -EBADF;
        CollectLog log = { .oi = oi };
        SliceFiles files = {};
        char **names = NULL;
        Incident *i = oi->incident;
        IncidentHost host = manager_host(m);
        IncidentProfile profile = manager_profile(m);
        uint64_t t0 = now_usec(CLOCK_MONOTONIC);
        int r;

        /* Everything up to t + after is in the rings now: get it onto disk, then pin what appeared
         * since the match (a rotation may have opened a window in between). */
        flush_ring(m);
        windows_fd = openat(oi->dir_fd, BUNDLE_WINDOWS_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (windows_fd < 0) {
                r = -errno;
                goto fail;
        }
        r = ring_store_pin(m->ring, i->from_ns, i->to_ns, windows_fd, NULL);
        if (r < 0)
                log_warning_errno(r, "Failed to pin windows for incident %s, the bundle may lack samples: %m",
                                  i->short_id);

        if (asprintf(&incidents_path, "%s/incidents", m->config->state_dir) < 0) {
                r = -ENOMEM;
                goto fail;
        }
        r = list_pinned(oi->dir_fd, i->id, incidents_path, &names, &files.paths, &files.n);
        if (r < 0)
                goto fail;
        files.from_ns = i->from_ns;
        files.to_ns = i->to_ns;

        r = incident_sink_new(i, &sink);
        if (r < 0)
                goto fail;
        files.sink = sink;
        r = slice_read(files.paths, files.n, 0, UINT64_MAX, on_slice_sample, sink, NULL);
        if (r < 0)
                log_warning_errno(r, "Failed to read some pinned windows of incident %s, ignoring: %m", i->short_id);

        r = log_context_range(m->log_context, i->from_ns, i->to_ns, on_collect_log, &log);
        if (r < 0)
                goto fail;

        r = incident_publish(m->incidents_fd, oi->dir_fd, i, sink, &host, &profile, names, files.n, log.lines,
                             log.n, write_perf_script, &files);
        if (r < 0)
                goto fail;

        incident_sink_get_slice(sink, &oi->slice);
        oi->windows = names;
        oi->n_windows = files.n;
        names = NULL;
        oi->dir_fd = safe_close(oi->dir_fd);
        oi->published = true;
        m->incidents_written++;
        trigger_closed(m->trigger, oi);
        announce(m, i, incident_status(i, &oi->slice));
        log_debug("Incident %s written in %llu ms.", i->short_id,
                  (unsigned long long) ((now_usec(CLOCK_MONOTONIC) - t0) / USEC_PER_MSEC));
        strv_free(files.paths);
        collect_log_done(&log);
        /* Limits first, so a capture's client sees the bundle folder as it will stay. */
        enforce_incident_limits(m);
        if (oi->capture) {
                _cleanup_strbuf_ StrBuf b = STRBUF_NULL;
                (void) control_message_append(&b, "OK", "1");
                (void) control_message_append(&b, "ID", i->id);
                (void) control_message_appendf(&b, "PATH", "%s/%s", incidents_path, i->id);
                (void) control_message_append(&b, "STATUS", bundle_status_to_string(incident_status(i, &oi->slice)));
                (void) control_request_reply(TAKE_PTR(oi->capture), b.data ?: "", b.len);
        }
        return 0;

fail:
        m->incidents_failed++;
        log_error_errno(r, "Failed to write the bundle of incident %s (rule %s), discarding it: %m", i->short_id,
                        i->rule.name);
        strv_free(names);
        strv_free(files.paths);
        collect_log_done(&log);
        oi->dir_fd = safe_close(oi->dir_fd);
        (void) incident_discard(m->incidents_fd, i);
        if (oi->capture) {
                char text[256];
                snprintf(text, sizeof text, "failed to write the bundle: %s", strerror(-r));
                (void) control_request_error(TAKE_PTR(oi->capture), text);
        }
        return r;
}

static int on_incident_expire(sd_event_source *s, uint64_t usec, void *userdata) {
        OpenIncident *oi = userdata;
        manager_remove_incident(oi->manager, oi);
        return 0;
}

static int on_incident_deadline(sd_event_source *s, uint64_t usec, void *userdata) {
        OpenIncident *oi = userdata;
        Manager *m = oi->manager;
        uint64_t expire_mono_usec;
        int r;

        r = incident_complete(m, oi);
        if (r < 0) {
                manager_remove_incident(m, oi);
                return 0;
        }

        /* Keep it until the cooldown ends, so repeats join it rather than start another. */
        expire_mono_usec = clock_map_perf_to_mono(&m->clock, oi->incident->t_ns) / NSEC_PER_USEC +
                           oi->incident->rule.cooldown_usec;
        r = sd_event_add_time(m->event, &oi->expire, CLOCK_MONOTONIC, expire_mono_usec, USEC_PER_SEC,
                              on_incident_expire, oi);
        if (r < 0)
                manager_remove_incident(m, oi);
        return 0;
}

static int rewrite_manifest(Manager *m, OpenIncident *oi) {
        _cleanup_free_ char *json = NULL, *path = NULL;
        IncidentHost host = manager_host(m);
        IncidentProfile profile = manager_profile(m);
        int r;

        r = incident_manifest_json(oi->incident, &host, &profile, &oi->slice, oi->windows, oi->n_windows, false,
                                   &json);
        if (r < 0)
                return r;
        if (asprintf(&path, "%s/incidents/%s/" BUNDLE_MANIFEST, m->config->state_dir, oi->incident->id) < 0)
                return -ENOMEM;
        return write_file_atomic(path, json, strlen(json), BUNDLE_FILE_MODE);
}

/* Repeats are written into the manifest at most this often: in a storm, a rewrite (two fsyncs) per
 * matching line would slow the daemon down to where the kernel log overruns. */
#define MANIFEST_REWRITE_USEC USEC_PER_SEC

static int on_manifest_rewrite(sd_event_source *s, uint64_t usec, void *userdata) {
        OpenIncident *oi = userdata;
        int r;

        oi->rewrite = sd_event_source_disable_unref(oi->rewrite);
        r = rewrite_manifest(oi->manager, oi);
        if (r < 0)
                log_warning_errno(r, "Failed to update the repeat count of incident %s, ignoring: %m",
                                  oi->incident->short_id);
        return 0;
}

static void incident_repeat(Manager *m, OpenIncident *oi, const LogRecord *rec) {
        Incident *i = oi->incident;

        i->repeats++;
        if (rec->t_ns > i->last_repeat_ns)
                i->last_repeat_ns = rec->t_ns;
        if (oi->n_repeat_marks < REPEAT_MARKS_MAX)
                oi->repeat_ns[oi->n_repeat_marks++] = rec->t_ns;
        if (oi->published && !oi->rewrite) {
                int r = sd_event_add_time_relative(m->event, &oi->rewrite, CLOCK_MONOTONIC, MANIFEST_REWRITE_USEC,
                                                   MANIFEST_REWRITE_USEC / 10, on_manifest_rewrite, oi);
                if (r >= 0)
                        r = sd_event_source_set_priority(oi->rewrite, PRIORITY_HOUSEKEEPING);
                if (r < 0) {
                        oi->rewrite = sd_event_source_disable_unref(oi->rewrite);
                        r = rewrite_manifest(m, oi);
                        if (r < 0)
                                log_warning_errno(r, "Failed to update the repeat count of incident %s, ignoring: %m",
                                                  i->short_id);
                }
        }
}

static int incident_arm(Manager *m, Incident *i, OpenIncident **ret);

static int incident_start(Manager *m, const RuleMatch *match, const LogRecord *rec, uint64_t event_ns) {
        _cleanup_(incident_freep) Incident *i = NULL;
        IncidentRule rule;
        OpenIncident *oi;
        int r;

        incident_rule_from(match->rule, &rule);
        r = incident_new(&rule, event_ns, &m->clock, &i);
        if (r < 0)
                return log_error_errno(r, "Failed to create an incident for rule %s: %m", rule.name);
        r = incident_set_trigger(i, rec, alignment_of(rec), rec->t_error_ns ?: m->clock.error_ns);
        if (r < 0)
                return log_oom();
        for (size_t k = 0; k < match->n_captures; k++) {
                r = incident_add_capture(i, match->captures[k].name, match->captures[k].value,
                                         match->captures[k].value_len);
                if (r < 0)
                        break; /* more captures than we keep: the rest are in the message */
        }
        r = incident_arm(m, i, &oi);
        if (r < 0)
                return log_error_errno(r, "Failed to stage the bundle of incident %s: %m", i->short_id);
        TAKE_PTR(i);
        return 0;
}

/* Stages a prepared incident, pins what exists of its slice, arms its deadline, registers it. */
static int incident_arm(Manager *m, Incident *i, OpenIncident **ret) {
        _cleanup_close_ int windows_fd = -EBADF;
        IncidentHost host = manager_host(m);
        IncidentProfile profile = manager_profile(m);
        OpenIncident *oi;
        uint64_t deadline_usec;
        int r;

        if (!GREEDY_REALLOC(m->incidents, m->allocated_incidents, m->n_incidents + 1))
                return -ENOMEM;
        oi = new0(OpenIncident, 1);
        if (!oi)
                return -ENOMEM;
        oi->manager = m;
        oi->dir_fd = -EBADF;
        r = incident_stage(m->incidents_fd, i, &host, &profile, &oi->dir_fd);
        if (r < 0) {
                free(oi);
                return r;
        }
        oi->incident = i;

        /* Pin now what exists of [t - before, now], so retention cannot take it while we wait. */
        windows_fd = openat(oi->dir_fd, BUNDLE_WINDOWS_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (windows_fd >= 0)
                (void) ring_store_pin(m->ring, i->from_ns, i->to_ns, windows_fd, NULL);

        deadline_usec = clock_map_perf_to_mono(&m->clock, i->to_ns) / NSEC_PER_USEC + DEADLINE_SLACK_USEC;
        r = sd_event_add_time(m->event, &oi->deadline, CLOCK_MONOTONIC, deadline_usec, 10 * USEC_PER_MSEC,
                              on_incident_deadline, oi);
        if (r >= 0)
                r = sd_event_source_set_priority(oi->deadline, PRIORITY_INCIDENT);
        if (r < 0) {
                (void) incident_discard(m->incidents_fd, i);
                oi->incident = NULL; /* the caller still owns it */
                open_incident_free(oi);
                return r;
        }
        r = trigger_register(m->trigger, i->rule.name, i->t_ns, i->rule.cooldown_usec * NSEC_PER_USEC,
                             now_nsec(CLOCK_MONOTONIC), oi);
        if (r < 0)
                log_warning_errno(r, "Failed to register incident %s for cooldown, ignoring: %m", i->short_id);
        m->incidents[m->n_incidents++] = oi;
        *ret = oi;
        return 0;
}

#define CAPTURE_BEFORE_USEC_DEFAULT (60 * USEC_PER_SEC)
#define CAPTURE_AFTER_USEC_DEFAULT (10 * USEC_PER_SEC)
#define CAPTURE_BEFORE_USEC_MAX (15 * USEC_PER_MINUTE)
#define CAPTURE_AFTER_USEC_MAX (5 * USEC_PER_MINUTE)

static int parse_usec_field(const ControlMessage *msg, const char *key, uint64_t def, uint64_t max, uint64_t *ret) {
        const char *v = control_message_get(msg, key);

        if (!v) {
                *ret = def;
                return 0;
        }
        if (safe_atou64(v, ret) < 0 || *ret > max)
                return -EINVAL;
        return 0;
}

static void control_capture(Manager *m, ControlRequest *req, const ControlMessage *msg) {
        _cleanup_(incident_freep) Incident *i = NULL;
        IncidentRule rule = { .name = (char *) "manual", .source = (char *) "manual",
                              .description = (char *) "manual capture (tprof-bundle capture)" };
        const char *note = control_message_get(msg, "NOTE");
        OpenIncident *oi;
        uint64_t t;
        int r;

        if (parse_usec_field(msg, "BEFORE_USEC", CAPTURE_BEFORE_USEC_DEFAULT, CAPTURE_BEFORE_USEC_MAX,
                             &rule.before_usec) < 0 ||
            parse_usec_field(msg, "AFTER_USEC", CAPTURE_AFTER_USEC_DEFAULT, CAPTURE_AFTER_USEC_MAX, &rule.after_usec) < 0) {
                (void) control_request_error(req, "BEFORE_USEC must be at most 15 min, AFTER_USEC at most 5 min");
                return;
        }
        if (trigger_n_open(m->trigger) >= TRIGGER_MAX_OPEN_DEFAULT) {
                (void) control_request_error(req, "too many incidents are being recorded, try again later");
                return;
        }
        t = clock_map_mono_to_perf(&m->clock, now_nsec(CLOCK_MONOTONIC));
        r = incident_new(&rule, t, &m->clock, &i);
        if (r >= 0 && note) {
                i->note = strdup(note);
                if (!i->note)
                        r = -ENOMEM;
        }
        if (r < 0) {
                (void) control_request_error(req, "out of memory");
                return;
        }
        i->alignment = "capture-request";
        r = incident_arm(m, i, &oi);
        if (r < 0) {
                log_error_errno(r, "Failed to start a manual capture: %m");
                (void) control_request_error(req, "failed to stage the bundle");
                return;
        }
        TAKE_PTR(i);
        oi->capture = req;
        log_info("Manual capture %s requested by UID %u: %s before, %s after.", oi->incident->short_id,
                 (unsigned) control_request_uid(req), FORMAT_TIMESPAN(rule.before_usec), FORMAT_TIMESPAN(rule.after_usec));
}

static void control_status(Manager *m, ControlRequest *req) {
        _cleanup_strbuf_ StrBuf b = STRBUF_NULL;
        SamplerStats st = {};
        TriggerStats ts = {};
        LogSourceStats ks = {}, js = {};

        sampler_get_stats(m->sampler, &st);
        trigger_get_stats(m->trigger, &ts);
        kmsg_source_get_stats(m->kmsg, &ks);
        if (m->journal)
                journal_source_get_stats(m->journal, &js);
        (void) control_message_append(&b, "OK", "1");
        (void) control_message_append(&b, "VERSION", TPROF_VERSION);
        (void) control_message_appendf(&b, "PID", "%d", (int) getpid());
        (void) control_message_appendf(&b, "UPTIME_USEC", "%llu", (unsigned long long) (now_usec(CLOCK_MONOTONIC) - m->started_usec));
        (void) control_message_append(&b, "STATE_DIR", m->config->state_dir);
        (void) control_message_append(&b, "RULES_PATH", m->config->rules_path);
        (void) control_message_appendf(&b, "RULES", "%zu", rule_set_size(m->rules));
        (void) control_message_append(&b, "EVENT", sampler_event_name(m->sampler));
        (void) control_message_appendf(&b, "FREQ_HZ", "%u", m->config->freq_hz);
        (void) control_message_appendf(&b, "CPUS", "%u", sampler_n_cpus(m->sampler));
        (void) control_message_appendf(&b, "SAMPLES", "%llu", (unsigned long long) st.samples);
        (void) control_message_appendf(&b, "LOST", "%llu", (unsigned long long) st.lost);
        (void) control_message_appendf(&b, "THROTTLED", "%llu", (unsigned long long) st.throttled);
        (void) control_message_appendf(&b, "WINDOW_USEC", "%llu", (unsigned long long) m->config->window_usec);
        (void) control_message_append(&b, "WINDOW_OPEN", ring_store_current_name(m->ring) ?: "");
        (void) control_message_append(&b, "CLOCK_MAP", clock_map_method_to_string(m->clock.method));
        (void) control_message_appendf(&b, "CLOCK_ERROR_NS", "%llu", (unsigned long long) m->clock.error_ns);
        (void) control_message_appendf(&b, "KMSG_RECORDS", "%llu", (unsigned long long) ks.records);
        (void) control_message_appendf(&b, "KMSG_LOST", "%llu", (unsigned long long) ks.lost);
        (void) control_message_append(&b, "JOURNAL", m->journal ? "yes" : "no");
        (void) control_message_appendf(&b, "JOURNAL_RECORDS", "%llu", (unsigned long long) js.records);
        (void) control_message_appendf(&b, "MATCHES", "%llu", (unsigned long long) ts.matches);
        (void) control_message_appendf(&b, "INCIDENTS_OPEN", "%u", trigger_n_open(m->trigger));
        (void) control_message_appendf(&b, "INCIDENTS_WRITTEN", "%llu", (unsigned long long) m->incidents_written);
        (void) control_message_appendf(&b, "INCIDENTS_FAILED", "%llu", (unsigned long long) m->incidents_failed);
        (void) control_message_appendf(&b, "MATCHES_DROPPED", "%llu",
                                       (unsigned long long) (ts.rate_limited + ts.too_many_open));
        (void) control_request_reply(req, b.data ?: "", b.len);
}

static void on_control_request(ControlRequest *req, const ControlMessage *msg, void *userdata) {
        Manager *m = userdata;
        const char *op = control_message_get(msg, "OP");

        if (!op)
                (void) control_request_error(req, "missing OP");
        else if (streq(op, "status"))
                control_status(m, req);
        else if (streq(op, "capture"))
                control_capture(m, req, msg);
        else
                (void) control_request_error(req, "unknown OP");
}

/* Publishes every incident still recording, with what was sampled so far (SIGTERM). */
static void manager_finish_incidents(Manager *m) {
        for (size_t i = 0; i < m->n_incidents; i++) {
                OpenIncident *oi = m->incidents[i];
                if (oi->published)
                        continue;
                log_notice("Writing incident %s early, before t + after was reached, because tprofd is stopping.",
                           oi->incident->short_id);
                (void) incident_complete(m, oi); /* a failure discards the staged bundle and its pins */
        }
}

/* --- log records and rules ----------------------------------------------------------------------- */

static int on_rule_match(const RuleMatch *match, const LogRecord *rec, void *userdata) {
        Manager *m = userdata;
        _cleanup_free_ char *esc = escape_text(rec->message ?: "", MIN(rec->message_len, (size_t) 512));
        uint64_t event_ns = rec->t_ns;
        void *cookie = NULL;
        TriggerVerdict v;

        if (event_ns == 0) /* an entry of another boot: it cannot be placed on our clock */
                event_ns = clock_map_realtime_to_perf(&m->clock, rec->realtime_usec * NSEC_PER_USEC);

        v = trigger_decide(m->trigger, match->rule->name, event_ns, match->rule->cooldown_usec * NSEC_PER_USEC,
                           now_nsec(CLOCK_MONOTONIC), &cookie);
        switch (v) {
        case TRIGGER_NEW:
                log_info("rule %s matched %s%s%s: %s", match->rule->name, log_source_to_string(rec->source),
                         rec->unit ? " " : "", rec->unit ?: "", esc ?: "");
                (void) incident_start(m, match, rec, event_ns); /* failures are logged there */
                return 0;
        case TRIGGER_JOINED:
                log_debug("rule %s matched again inside its cooldown: %s", match->rule->name, esc ?: "");
                incident_repeat(m, cookie, rec);
                return 0;
        case TRIGGER_RATE_LIMITED:
        case TRIGGER_TOO_MANY_OPEN:
        default:
                /* Counted by the trigger; the status timer reports the totals. */
                log_debug("rule %s matched, dropped (%s)", match->rule->name, trigger_verdict_to_string(v));
                return 0;
        }
}

static int on_log_record(const LogRecord *rec, void *userdata) {
        Manager *m = userdata;
        int r;

        r = log_context_add(m->log_context, rec);
        if (r < 0)
                log_debug_errno(r, "Failed to keep a log line for context: %m");
        r = rule_set_match(m->rules, rec, on_rule_match, m);
        return r < 0 ? r : 0;
}

/* --- signals and reload -------------------------------------------------------------------------- */

static int manager_load_rules(Manager *m, RuleSet **ret) {
        RuleError e = RULE_ERROR_NULL;
        int r;

        r = rule_set_load(m->config->rules_path, ret, &e);
        if (r < 0) {
                _cleanup_free_ char *msg = rule_error_format(&e);
                rule_error_done(&e);
                return log_error_errno(r, "Failed to load rules: %s", msg ?: "out of memory");
        }
        log_info("Loaded %zu rules from %s.", rule_set_size(*ret), m->config->rules_path);
        return 0;
}

/*
 * SIGHUP: settings and rules are read again. A bad configuration file or rules file is reported and
 * everything keeps running as it was. What can change in a running daemon changes (rules, log
 * level, bundle limits); the rest is reported as needing a restart.
 */
static void manager_reload(Manager *m) {
        _cleanup_free_ char *restart = NULL;
        TprofdConfig fresh;
        RuleSet *rules = NULL;
        char *swap;

        if (!m->reload || m->reload(&fresh) < 0) {
                log_warning("Keeping the settings and rules that were running.");
                return;
        }
        swap = m->config->rules_path;
        m->config->rules_path = fresh.rules_path;
        if (manager_load_rules(m, &rules) < 0) {
                m->config->rules_path = swap;
                tprofd_config_done(&fresh);
                log_warning("Keeping the settings and rules that were running.");
                return;
        }
        fresh.rules_path = swap; /* freed with fresh */
        /* Incidents hold copies of their rules, so the old set can go now. */
        rule_set_free(m->rules);
        m->rules = rules;

        if (tprofd_config_diff_static(m->config, &fresh, &restart) >= 0 && restart)
                log_warning("Changed settings that take effect only after a restart of tprofd: %s.", restart);
        m->config->log_level = fresh.log_level;
        log_set_max_level(fresh.log_level >= 0 ? fresh.log_level : LOG_INFO);
        m->config->max_bundles = fresh.max_bundles;
        m->config->max_bundle_bytes = fresh.max_bundle_bytes;
        tprofd_config_done(&fresh);
        log_info("Reloaded the configuration%s%s.", m->config->config_path ? " from " : "",
                 m->config->config_path ?: "");
}

static int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Manager *m = userdata;

        (void) sd_notify(false, "RELOADING=1");
        manager_reload(m);
        (void) sd_notify(false, "READY=1");
        return 0;
}

static int on_exit_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Manager *m = userdata;

        log_info("Received %s, stopping.", strsignal((int) si->ssi_signo));
        (void) sd_notify(false, "STOPPING=1");
        return sd_event_exit(m->event, 0);
}

/* --- setup and teardown -------------------------------------------------------------------------- */

static int add_timer(Manager *m, sd_event_source **ret, uint64_t interval, sd_event_time_handler_t cb) {
        int r;

        r = sd_event_add_time_relative(m->event, ret, CLOCK_MONOTONIC, interval, interval / 20, cb, m);
        if (r < 0)
                return r;
        r = sd_event_source_set_priority(*ret, PRIORITY_HOUSEKEEPING);
        if (r < 0)
                return r;
        return sd_event_source_set_enabled(*ret, SD_EVENT_ON);
}

static Manager *manager_free(Manager *m) {
        if (!m)
                return NULL;
        for (size_t i = 0; i < m->n_incidents; i++)
                open_incident_free(m->incidents[i]);
        free(m->incidents);
        sd_event_source_disable_unref(m->flush_timer);
        sd_event_source_disable_unref(m->rotate_timer);
        sd_event_source_disable_unref(m->vacuum_timer);
        sd_event_source_disable_unref(m->clock_timer);
        sd_event_source_disable_unref(m->status_timer);
        sd_event_source_disable_unref(m->journal_retry);
        control_server_free(m->control);
        kmsg_source_free(m->kmsg);
        journal_source_free(m->journal);
        sampler_free(m->sampler);
        ring_store_free(m->ring);
        log_context_free(m->log_context);
        trigger_free(m->trigger);
        rule_set_free(m->rules);
        safe_close(m->incidents_fd);
        sd_event_unref(m->event);
        free(m->host);
        free(m->boot_id);
        free(m->kernel_release);
        free(m->ring_dir);
        free(m);
        return NULL;
}
DEFINE_TRIVIAL_CLEANUP_FUNC(Manager *, manager_free);

static int on_journal_retry(sd_event_source *s, uint64_t usec, void *userdata);

/* Returns 0 when following (or nothing to follow), -ENODATA while the journal is unavailable. */
static int manager_open_journal(Manager *m, bool quiet) {
        _cleanup_strv_ char **matches = NULL;
        bool any = false;
        int r;

        r = rule_set_journal_matches(m->rules, &matches, &any);
        if (r < 0)
                return log_error_errno(r, "Failed to build journal matches: %m");
        if (!any && (!matches || !matches[0])) {
                if (!quiet)
                        log_info("No journal rules: not following the journal.");
                return 0;
        }
        JournalSourceOptions o = {
                .namespace = m->config->journal_namespace,
                .state_dir = m->config->state_dir,
                .clock = &m->clock,
                .own_identifier = "tprofd",
                .matches = any ? NULL : (const char *const *) matches,
        };
        r = journal_source_new(m->event, &o, on_log_record, m, &m->journal);
        if (r == -ENODATA) {
                if (!quiet)
                        log_warning("The journal is not available (journald not running, or its files unreadable); "
                                    "following the kernel log only, and trying again every %s.",
                                    FORMAT_TIMESPAN(JOURNAL_RETRY_USEC));
                return r;
        }
        if (r < 0) {
                log_warning_errno(r, "Failed to follow the journal, following the kernel log only: %m");
                return 0;
        }
        log_info("Following the journal%s%s with %zu match(es).", m->config->journal_namespace ? " namespace " : "",
                 m->config->journal_namespace ?: "", any ? (size_t) 0 : strv_length(matches));
        return 0;
}

static int on_journal_retry(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;

        if (manager_open_journal(m, /* quiet= */ true) == -ENODATA)
                return sd_event_source_set_time_relative(s, JOURNAL_RETRY_USEC);
        m->journal_retry = sd_event_source_disable_unref(m->journal_retry);
        return 0;
}

static int manager_start_journal(Manager *m) {
        int r;

        r = manager_open_journal(m, /* quiet= */ false);
        if (r != -ENODATA)
                return r < 0 ? r : 0;
        r = sd_event_add_time_relative(m->event, &m->journal_retry, CLOCK_MONOTONIC, JOURNAL_RETRY_USEC,
                                       USEC_PER_SEC, on_journal_retry, m);
        if (r >= 0)
                r = sd_event_source_set_priority(m->journal_retry, PRIORITY_HOUSEKEEPING);
        if (r < 0)
                log_warning_errno(r, "Failed to schedule journal retries, ignoring: %m");
        return 0;
}

static int manager_new(TprofdConfig *c, ManagerReload reload, Manager **ret) {
        _cleanup_(manager_freep) Manager *m = NULL;
        int r;

        m = new0(Manager, 1);
        if (!m)
                return log_oom();
        m->config = c;
        m->reload = reload;
        m->incidents_fd = -EBADF;
        m->started_usec = now_usec(CLOCK_MONOTONIC);
        clock_map_assume(&m->clock);

        r = manager_load_rules(m, &m->rules);
        if (r < 0)
                return r;
        r = host_info(m);
        if (r < 0)
                return r;
        r = make_state_dirs(m);
        if (r < 0)
                return r;
        remove_stale_bundles(m);

        r = sd_event_default(&m->event);
        if (r < 0)
                return log_error_errno(r, "Failed to allocate the event loop: %m");
        (void) sd_event_set_watchdog(m->event, true);

        sigset_t mask;
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGHUP);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                return log_error_errno(errno, "Failed to block signals: %m");
        sd_event_source *src;
        r = sd_event_add_signal(m->event, &src, SIGTERM, on_exit_signal, m);
        if (r >= 0)
                r = sd_event_source_set_priority(src, PRIORITY_SIGNAL);
        if (r >= 0)
                r = sd_event_add_signal(m->event, &src, SIGINT, on_exit_signal, m);
        if (r >= 0)
                r = sd_event_source_set_priority(src, PRIORITY_SIGNAL);
        if (r >= 0)
                r = sd_event_add_signal(m->event, &src, SIGHUP, on_sighup, m);
        if (r < 0)
                return log_error_errno(r, "Failed to watch signals: %m");

        SamplerOptions so = { .freq_hz = c->freq_hz, .function_frames = !c->exact };
        r = sampler_new(&so, on_sample, m, &m->sampler);
        if (r < 0)
                return log_error_errno(r, "Failed to open perf events for sampling (needs root or CAP_PERFMON): %m");
        r = sampler_attach_event(m->sampler, m->event, PRIORITY_SAMPLER);
        if (r < 0)
                return log_error_errno(r, "Failed to attach the sampler to the event loop: %m");
        r = sampler_enable(m->sampler);
        if (r < 0)
                return log_error_errno(r, "Failed to start sampling: %m");
        r = sampler_measure_clock(m->sampler, &m->clock);
        if (r < 0) {
                log_warning_errno(r, "Failed to measure the perf clock, assuming it is CLOCK_MONOTONIC: %m");
                clock_map_assume(&m->clock);
        }
        log_info("Sampling %u CPUs at %u Hz with %s; perf clock mapped by %s (error %llu ns).",
                 sampler_n_cpus(m->sampler), c->freq_hz, sampler_event_name(m->sampler),
                 clock_map_method_to_string(m->clock.method), (unsigned long long) m->clock.error_ns);

        WindowHeaderInfo h = {
                .host = m->host,
                .boot_id = m->boot_id,
                .kernel_release = m->kernel_release,
                .event = sampler_event_name(m->sampler),
                .freq_hz = c->freq_hz,
                .n_cpus = sampler_n_cpus(m->sampler),
                .time_resolution_usec = tprofd_time_resolution_usec(c),
                .function_frames = !c->exact,
                .clock = m->clock,
        };
        RingOptions ro = {
                .window_usec = c->window_usec,
                .chunk_usec = FLUSH_USEC,
                .max_age_usec = c->retention_age_usec,
                .max_bytes = c->retention_bytes,
                .keep_free_bytes = c->keep_free_bytes,
                .on_event = on_ring_event,
                .userdata = m,
        };
        r = ring_store_open(m->ring_dir, &ro, &h, &m->ring);
        if (r < 0)
                return log_error_errno(r, "Failed to open the ring in '%s': %m", m->ring_dir);

        LogContextLimits lim = {
                .lines_max = LOG_CONTEXT_LINES_MAX,
                .bytes_max = LOG_CONTEXT_BYTES_MAX,
                .age_ns_max = LOG_CONTEXT_AGE_USEC * NSEC_PER_USEC,
        };
        r = log_context_new(&lim, &m->log_context);
        if (r < 0)
                return log_oom();
        m->trigger = trigger_new(NULL);
        if (!m->trigger)
                return log_oom();

        KmsgSourceOptions ko = {
                .path = c->kmsg_path,
                .state_dir = c->state_dir,
                .from_start = c->kmsg_from_start,
                .clock = &m->clock,
                .own_identifier = "tprofd",
        };
        r = kmsg_source_new(m->event, &ko, on_log_record, m, &m->kmsg);
        if (r < 0)
                return log_error_errno(r, "Failed to follow the kernel log '%s': %m", c->kmsg_path);
        if (c->journal) {
                r = manager_start_journal(m);
                if (r < 0)
                        return r;
        }

        if (!isempty(c->control_socket)) {
                _cleanup_free_ char *dir = strdup(c->control_socket);
                char *slash = dir ? strrchr(dir, '/') : NULL;
                if (slash && slash != dir) {
                        *slash = '\0';
                        (void) mkdir_p(dir, BUNDLE_DIR_MODE);
                }
                r = control_server_new(m->event, c->control_socket, PRIORITY_HOUSEKEEPING, on_control_request, m,
                                       &m->control);
                if (r < 0)
                        log_warning_errno(r, "Failed to listen on '%s', tprof-bundle capture and status will not "
                                          "reach this daemon: %m", c->control_socket);
        }

        if (add_timer(m, &m->flush_timer, FLUSH_USEC, on_flush_timer) < 0 ||
            add_timer(m, &m->rotate_timer, ROTATE_USEC, on_rotate_timer) < 0 ||
            add_timer(m, &m->vacuum_timer, VACUUM_USEC, on_vacuum_timer) < 0 ||
            add_timer(m, &m->clock_timer, CLOCK_USEC, on_clock_timer) < 0 ||
            add_timer(m, &m->status_timer, STATUS_USEC, on_status_timer) < 0)
                return log_error_errno(SYNTHETIC_ERRNO(ENOMEM), "Failed to set up timers.");

        *ret = TAKE_PTR(m);
        return 0;
}

int manager_run(TprofdConfig *c, ManagerReload reload) {
        _cleanup_(manager_freep) Manager *m = NULL;
        int r;

        r = manager_new(c, reload, &m);
        if (r < 0)
                return r;

        log_info("tprofd %s running: state in %s, windows of %llus, %s detail (%s, %u us).", TPROF_VERSION,
                 c->state_dir, (unsigned long long) (c->window_usec / USEC_PER_SEC), c->exact ? "exact" : "compact",
                 c->exact ? "instructions" : "functions", tprofd_time_resolution_usec(c));
        (void) sd_notify(false, "READY=1");
        update_status(m);

        r = sd_event_loop(m->event);
        if (r < 0)
                log_error_errno(r, "Event loop failed: %m");

        manager_finish_incidents(m);
        flush_ring(m);
        (void) kmsg_source_save_position(m->kmsg);
        if (m->journal)
                (void) journal_source_save_position(m->journal);
        log_info("Stopped: %llu incidents written.", (unsigned long long) m->incidents_written);
        return r;
}

/* --- bundle limits ------------------------------------------------------------------------------- */

static uint64_t dir_bytes_at(int dir_fd, const char *name, unsigned depth) {
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        uint64_t total = 0;

        if (depth > 4)
                return 0;
        if (opendir_at(dir_fd, name, O_NOFOLLOW, &d) < 0)
                return 0;
        while ((de = readdir(d))) {
                struct stat st;
                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                if (S_ISDIR(st.st_mode))
                        total += dir_bytes_at(dirfd(d), de->d_name, depth + 1);
                else
                        total += (uint64_t) st.st_blocks * 512;
        }
        return total;
}

/* Takes the bundle out of sight with one rename before removing its files: a crash halfway leaves a
 * .tmp-* folder, which readers treat as unfinished and the next start removes, never a bundle
 * that lists windows or files it no longer has. */
static int remove_bundle(int incidents_fd, const char *name) {
        _cleanup_free_ char *tmp = NULL;

        if (asprintf(&tmp, BUNDLE_TMP_PREFIX "%s", name) < 0)
                return -ENOMEM;
        if (renameat(incidents_fd, name, incidents_fd, tmp) < 0)
                return -errno;
        return rm_rf_at(incidents_fd, tmp, BUNDLE_DEPTH_MAX);
}

static void enforce_incident_limits(Manager *m) {
        _cleanup_closedir_ DIR *d = NULL;
        char **names = NULL;
        size_t n = 0, allocated = 0;
        uint64_t *bytes = NULL, total = 0;
        struct dirent *de;

        if (opendir_at(m->incidents_fd, ".", 0, &d) < 0)
                return;
        while ((de = readdir(d))) {
                if (de->d_name[0] == '.')
                        continue;
                if (!GREEDY_REALLOC(names, allocated, n + 1))
                        goto out;
                names[n] = strdup(de->d_name);
                if (!names[n])
                        goto out;
                n++;
        }
        if (n == 0)
                goto out;
        /* Bundle names start with their UTC time: name order is age order. */
        qsort(names, n, sizeof(char *), cmp_string_ptr);
        bytes = new0(uint64_t, n ?: 1);
        if (!bytes)
                goto out;
        for (size_t i = 0; i < n; i++) {
                bytes[i] = dir_bytes_at(m->incidents_fd, names[i], 0);
                total += bytes[i];
        }
        /* The newest bundle always stays, even when it alone is over the size limit. */
        for (size_t i = 0; i + 1 < n && (n - i > m->config->max_bundles || total > m->config->max_bundle_bytes); i++) {
                int r = remove_bundle(m->incidents_fd, names[i]);
                if (r < 0) {
                        log_warning_errno(r, "Failed to remove old bundle '%s', ignoring: %m", names[i]);
                        continue;
                }
                log_notice("Removed bundle %s to stay within %u bundles and %s.", names[i], m->config->max_bundles,
                           FORMAT_BYTES(m->config->max_bundle_bytes));
                total -= bytes[i];
        }
out:
        free(bytes);
        strv_free_n(names, n);
}
