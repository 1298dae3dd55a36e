/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The daemon: one sd-event loop that owns every part and moves data between them. This file is the
 * wiring only; each part lives in its module.
 *
 *   sampler ──Sample──► ring store (windows under <state>/ring)
 *   kmsg, journal ──LogRecord──► log context (recent lines) and rule set ──match──► incident manager
 *   incident manager (src/incident) ──► stages, pins, slices and publishes bundles; calls back here to
 *                                       drain the sampler and flush the ring at each deadline
 *   control socket ──► status (from every part), capture (an incident without a log line)
 *
 * Everything runs on this one thread (docs/design.md). Nothing here blocks on anything but local disk.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>

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
#include "incident/incident-manager.h"
#include "logsrc/log-context.h"
#include "logsrc/logsrc-journal.h"
#include "logsrc/logsrc-kmsg.h"
#include "rules/rules.h"
#include "sampler/sampler.h"
#include "store/ring-store.h"
#include "store/store-vacuum.h"
#include "tprofd/daemon-control.h"
#include "tprofd/manager.h"
#include "tprofd/state-dir.h"

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
 * most one; incidents do not wait for it, their deadline flushes at once. The sampler drains at
 * most this long apart too, sooner where a ring fills faster: a batch of a few seconds pays for
 * cold caches once (a sixth to a quarter less CPU a sample than drains every second, on CPUs
 * busy a third of the time). */
#define FLUSH_USEC (5 * USEC_PER_SEC)
/* The window rotates at its end by the wall clock; a clock stepped back is noticed within this. */
#define ROTATE_USEC (5 * USEC_PER_SEC)
#define VACUUM_USEC (60 * USEC_PER_SEC)
#define CLOCK_USEC (60 * USEC_PER_SEC)
#define STATUS_USEC (10 * USEC_PER_SEC)
/* journald may start after us: try again this often while the journal is unavailable. */
#define JOURNAL_RETRY_USEC (30 * USEC_PER_SEC)
/* Recent log lines kept for bundles; the longest before + after a rule may ask for. */
#define LOG_CONTEXT_LINES_MAX 20000U
#define LOG_CONTEXT_BYTES_MAX (UINT64_C(8) << 20)
#define LOG_CONTEXT_AGE_USEC (15 * USEC_PER_MINUTE)

typedef struct Manager {
        TprofdConfig *config;
        ManagerReload reload;
        sd_event *event;

        char *host, *boot_id, *kernel_release;
        char *ring_dir;
        int state_lock_fd; /* the state directory, flock()ed: one daemon per ring */

        RuleSet *rules;
        Sampler *sampler;
        RingStore *ring;
        KmsgSource *kmsg;
        JournalSource *journal;
        LogContext *log_context;
        IncidentManager *incidents;
        ClockMap clock;

        sd_event_source *flush_timer, *rotate_timer, *vacuum_timer, *clock_timer, *status_timer;
        ControlServer *control;
        sd_event_source *journal_retry;
        uint64_t journal_absent_usec; /* CLOCK_REALTIME of the first attempt that found no journal */
        uint64_t started_usec;

        uint64_t ring_errors;
        uint64_t dropped_reported;
        uint64_t symbol_drops_reported, unwind_drops_reported;
        bool ring_error_reported;
        bool copy_hint_reported;
        bool retention_window_reported; /* said once a run */
} Manager;

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

static void on_lost(uint32_t cpu, uint64_t n, void *userdata) {
        Manager *m = userdata;

        if (m->ring && ring_store_add_lost(m->ring, cpu, n) < 0)
                m->ring_errors++;
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
        case RING_EVENT_UNRECOVERED:
                log_warning("Could not finalize window %s left by an earlier run, leaving it as it is: %s.", e->name,
                            e->reason ?: "unknown error");
                break;
        default:
                break;
        }
}

/* Writes what the rings gave to disk, draining them first unless the last drain is less than
 * max_age_usec old (0: every sample up to now). */
static void flush_ring(Manager *m, uint64_t max_age_usec) {
        int r;

        r = sampler_drain_if_older(m->sampler, max_age_usec);
        if (r < 0)
                log_debug_errno(r, "Sampler drain failed: %m");
        r = ring_store_flush(m->ring);
        if (r < 0 && !m->ring_error_reported) {
                log_warning_errno(r, "Failed to write to the ring in '%s', will retry: %m", m->ring_dir);
                m->ring_error_reported = true;
        } else if (r >= 0)
                m->ring_error_reported = false;
}

static void on_incident_flush(void *userdata) {
        flush_ring(userdata, 0); /* an incident's deadline: everything up to now */
}

static int on_flush_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;

        flush_ring(m, USEC_PER_SEC); /* a drain a moment ago (the sampler's timer, a full ring) will do */
        return sd_event_source_set_time_relative(s, FLUSH_USEC);
}

/* Until the open window ends by the wall clock, at most ROTATE_USEC; a second when none is open
 * (opening the next failed: try again soon). */
static uint64_t rotate_delay(Manager *m) {
        uint64_t end = ring_store_window_end_usec(m->ring), now = now_usec(CLOCK_REALTIME);

        if (end == 0)
                return USEC_PER_SEC;
        return end > now ? MIN(end - now, (uint64_t) ROTATE_USEC) : 0;
}

/* Measures the clock mapping anew (draining the rings first) and hands it to the ring. */
static int measure_clock(Manager *m) {
        ClockMap c;
        int r;

        r = sampler_measure_clock(m->sampler, &c);
        if (r < 0)
                return r;
        m->clock = c;
        return ring_store_update_clock(m->ring, &m->clock);
}

static int on_rotate_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        uint64_t now = now_usec(CLOCK_REALTIME);
        int r;

        /* The samples up to the window's end belong in it, not in the next one: the rings are
         * drained every few seconds, and a short window could otherwise end with none at all.
         * The next window's header keeps the mapping of its opening for all its samples, and the
         * wall clock may just have been stepped (which is why a window ends early): measured
         * now, not up to CLOCK_USEC ago, or the whole window would read hours off. */
        if (ring_store_rotate_due(m->ring, now)) {
                r = measure_clock(m);
                if (r < 0) {
                        log_debug_errno(r, "Failed to measure the perf clock, keeping the last mapping: %m");
                        (void) sampler_drain(m->sampler);
                }
                now = now_usec(CLOCK_REALTIME);
        }
        r = ring_store_rotate(m->ring, now);
        if (r < 0)
                log_warning_errno(r, "Failed to rotate the ring window, ignoring: %m");
        else if (r > 0)
                log_debug("Opened window %s.", ring_store_current_name(m->ring));
        return sd_event_source_set_time_relative(s, rotate_delay(m));
}

static int on_vacuum_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        VacuumResult v = {};
        int r;

        r = ring_store_vacuum(m->ring, now_usec(CLOCK_REALTIME), &v);
        if (r < 0)
                log_warning_errno(r, "Failed to apply retention to '%s', ignoring: %m", m->ring_dir);
        /* Said once, and only once this run finished a window of its own (before that the newest
         * is an earlier run's, maybe larger). */
        bool say = r >= 0 && !m->retention_window_reported && ring_store_windows_finished(m->ring) > 0;
        if (say && v.newest_removed == VACUUM_REASON_SIZE) {
                char what[96] = "it and the open window";

                if (v.pinned_bytes > 0)
                        snprintf(what, sizeof what, "it, the open window and the %s of windows bundles hold",
                                 FORMAT_BYTES(v.pinned_bytes));
                log_warning("Retention removed the newest finished window: retention.max_bytes (%s) holds less than "
                            "%s, so while that lasts each window goes as soon as it is finished and bundles hold "
                            "only the open window's seconds. Raise max_bytes%s.",
                            FORMAT_BYTES(m->config->retention_bytes), what,
                            v.pinned_bytes > 0 ? ", or remove bundles" : "");
                m->retention_window_reported = true;
        } else if (say && v.newest_removed == VACUUM_REASON_FREE_SPACE) {
                log_warning("Retention removed the newest finished window: the file system of '%s' had less than "
                            "retention.keep_free (%s) free, so while that lasts each window goes as soon as it "
                            "is finished and bundles hold only the open window's seconds. Free space there, or "
                            "lower keep_free.",
                            m->ring_dir, FORMAT_BYTES(m->config->keep_free_bytes));
                m->retention_window_reported = true;
        }
        return sd_event_source_set_time_relative(s, VACUUM_USEC);
}

static int on_clock_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        int r;

        r = measure_clock(m);
        if (r < 0)
                log_debug_errno(r, "Failed to measure the perf clock, keeping the last mapping: %m");
        return sd_event_source_set_time_relative(s, CLOCK_USEC);
}

static void report_cache_drop(const char *what, uint64_t drops, uint64_t waited, const char *meanwhile,
                              uint64_t *reported) {
        if (drops <= *reported)
                return;
        log_notice("%s full: dropped %llu times so far; files not loaded yet wait for the next drop, at most "
                   "one a minute (%llu frames %s so far).",
                   what, (unsigned long long) drops, (unsigned long long) waited, meanwhile);
        *reported = drops;
}

/* A cache dropped for being full: the host's programs' tables do not fit together, and until the
 * next drop (at most once a minute) files not loaded yet are not named or not walked by CFI. */
static void report_cache_drops(Manager *m) {
        SamplerDebugStats ds;

        sampler_get_debug_stats(m->sampler, &ds); /* the unwinder's counts are 0 with --unwind fp */
        report_cache_drop("Symbol cache", ds.cache_flushes, ds.loads_deferred, "left unnamed", &m->symbol_drops_reported);
        report_cache_drop("Unwind tables", ds.unwind_cache_flushes, ds.unwind_loads_deferred, "walked without their CFI",
                          &m->unwind_drops_reported);
}

static void update_status(Manager *m) {
        SamplerStats st = {};
        IncidentManagerStats is = {};

        sampler_get_stats(m->sampler, &st);
        if (m->incidents)
                incident_manager_get_stats(m->incidents, &is);
        (void) sd_notifyf(false,
                          "STATUS=Sampling %u CPUs at %u Hz (%s); %llu samples, %llu lost; window %s; "
                          "%llu incidents written, %u open",
                          sampler_n_cpus(m->sampler), m->config->freq_hz, sampler_event_name(m->sampler),
                          (unsigned long long) st.samples, (unsigned long long) st.lost,
                          ring_store_current_name(m->ring) ?: "-", (unsigned long long) is.written, is.open);
        if (st.lost > m->dropped_reported) {
                log_warning("The kernel dropped %llu samples so far (tprofd did not read its rings fast enough).",
                            (unsigned long long) st.lost);
                m->dropped_reported = st.lost;
        }
        report_cache_drops(m);
        if (!m->copy_hint_reported) {
                char hint[256];
                if (sampler_unwind_copy_hint(m->sampler, hint, sizeof hint)) {
                        log_notice("%s.", hint);
                        m->copy_hint_reported = true;
                }
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
                .group = rule->group,
                .severity = rule->severity >= 0 && rule->severity < 8 ? (char *) levels[rule->severity] : NULL,
                .before_usec = rule->before_usec,
                .after_usec = rule->after_usec,
                .cooldown_usec = rule->cooldown_usec,
        };
        return 0;
}

static void manager_incident_limits(const Manager *m, IncidentLimits *ret) {
        *ret = (IncidentLimits) { m->config->max_bundles, m->config->max_bundle_bytes };
}

static void manager_incident_hook(const Manager *m, IncidentHookOptions *ret) {
        char **argv = m->config->on_bundle;
        int r = tprofd_config_hook_check(m->config);

        /* It may be installed later; until then every bundle's hook fails: say so now. */
        if (r < 0)
                log_warning_errno(r, "The bundle hook '%s' cannot be run (%m): each bundle's hook will fail until it can.",
                                  argv[0]);
        else if (argv && argv[0] && !incident_hook_has_network())
                log_notice("The bundle hook '%s' runs in tprofd's sandbox, which has no IP sockets "
                           "(RestrictAddressFamilies= of the service): a hook that uploads will fail. "
                           "See \"The bundle hook\" in the README for the drop-in that allows them.",
                           argv[0]);
        *ret = (IncidentHookOptions) { .argv = argv, .timeout_usec = m->config->on_bundle_timeout_usec };
}

static void on_control_request(ControlRequest *req, const ControlMessage *msg, void *userdata) {
        Manager *m = userdata;
        DaemonParts p = {
                .config = m->config,
                .rules = m->rules,
                .sampler = m->sampler,
                .ring = m->ring,
                .incidents = m->incidents,
                .kmsg = m->kmsg,
                .journal = m->journal,
                .clock = &m->clock,
                .started_usec = m->started_usec,
        };

        daemon_control_request(&p, req, msg);
}

/* --- log records and rules ----------------------------------------------------------------------- */

static int on_rule_match(const RuleMatch *match, const LogRecord *rec, void *userdata) {
        Manager *m = userdata;
        IncidentMatchCapture captures[INCIDENT_CAPTURES_MAX];
        size_t n = MIN(match->n_captures, (size_t) INCIDENT_CAPTURES_MAX);
        IncidentRule rule;

        incident_rule_from(match->rule, &rule);
        for (size_t k = 0; k < n; k++)
                captures[k] = (IncidentMatchCapture) { match->captures[k].name, match->captures[k].value,
                                                       match->captures[k].value_len };
        return incident_manager_match(m->incidents, &rule, rec, captures, n);
}

/* Keeps the line for the bundles' logs if the log context takes lines like it; whether it does. */
static bool keep_for_context(Manager *m, const LogRecord *rec) {
        int r;

        if (!log_context_admits(m->log_context, rec))
                return false;
        r = log_context_add(m->log_context, rec);
        if (r < 0)
                log_debug_errno(r, "Failed to keep a log line for context: %m");
        return true;
}

static int on_log_record(const LogRecord *rec, void *userdata) {
        Manager *m = userdata;
        bool kept = keep_for_context(m, rec);
        int r;

        r = rule_set_match(m->rules, rec, on_rule_match, m);
        if (r > 0 && !kept) /* a matched line is the event: its bundle shows it, whatever the setting */
                (void) log_context_add(m->log_context, rec);
        return r < 0 ? r : 0;
}

/* A log line read at the start that the rules do not see (an earlier run handled it, or it came
 * before a first start): kept for the bundles of the minutes that follow. */
static int on_log_context_record(const LogRecord *rec, void *userdata) {
        (void) keep_for_context(userdata, rec);
        return 0;
}

/* --- signals and reload -------------------------------------------------------------------------- */

static int manager_load_rules(Manager *m, RuleSet **ret) {
        RuleError e = RULE_ERROR_NULL;
        int r;

        r = rule_set_load(m->config->rules_path, ret, &e);
        if (r < 0) {
                _cleanup_free_ char *msg = rule_error_format(&e);
                rule_error_done(&e);
                log_error_errno(r, "Failed to load rules: %s", msg ?: "out of memory");
                /* A missing or unreadable rules path is the configuration's error too (exit 78),
                 * as --check-config and --test-rules say it. */
                return r == -ENOMEM ? r : -EBADMSG;
        }
        log_info("Loaded %zu rules from %s.", rule_set_size(*ret), m->config->rules_path);
        tprofd_config_warn_retention(m->config, *ret);
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
        IncidentLimits lim;
        manager_incident_limits(m, &lim);
        incident_manager_set_limits(m->incidents, &lim);
        strv_free(m->config->on_bundle);
        m->config->on_bundle = TAKE_PTR(fresh.on_bundle);
        m->config->on_bundle_timeout_usec = fresh.on_bundle_timeout_usec;
        IncidentHookOptions hook;
        manager_incident_hook(m, &hook);
        if (incident_manager_set_hook(m->incidents, &hook) < 0)
                log_warning("Failed to update the bundle hook, keeping the one that was running.");
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
        incident_manager_free(m->incidents);
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
        rule_set_free(m->rules);
        sd_event_unref(m->event);
        free(m->host);
        free(m->boot_id);
        free(m->kernel_release);
        free(m->ring_dir);
        safe_close(m->state_lock_fd);
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
        /* For context every entry is read (the log context admits by priority); without context, only
         * what the journal rules can match. */
        if (m->config->journal_context >= 0)
                any = true;
        if (!any && (!matches || !matches[0])) {
                if (!quiet)
                        log_info("No journal rules and journal context off: not following the journal.");
                return 0;
        }
        JournalSourceOptions o = {
                .namespace = m->config->journal_namespace,
                .state_dir = m->config->state_dir,
                .clock = &m->clock,
                .own_identifier = "tprofd",
                .matches = any ? NULL : (const char *const *) matches,
                /* journald started after us: what it logged since then is new, not just what comes next */
                .since_realtime_usec = m->journal_absent_usec,
                /* what came before the start, for the bundles of the minutes after it */
                .context_handler = m->config->journal_context >= 0 ? on_log_context_record : NULL,
                .context_age_usec = LOG_CONTEXT_AGE_USEC,
                .context_entries_max = LOG_CONTEXT_LINES_MAX,
                .context_priority_max = m->config->journal_context,
        };
        r = journal_source_new(m->event, &o, on_log_record, m, &m->journal);
        if (r == -ENODATA) {
                if (m->journal_absent_usec == 0)
                        m->journal_absent_usec = now_usec(CLOCK_REALTIME);
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
        log_info("Following the journal%s%s with %zu match(es), context: %s.",
                 m->config->journal_namespace ? " namespace " : "", m->config->journal_namespace ?: "",
                 any ? (size_t) 0 : strv_length(matches), tprofd_journal_context_to_string(m->config->journal_context));
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
        m->state_lock_fd = -EBADF;
        m->reload = reload;
        m->started_usec = now_usec(CLOCK_MONOTONIC);
        clock_map_assume(&m->clock);

        r = manager_load_rules(m, &m->rules);
        if (r < 0)
                return r;
        r = host_info(m);
        if (r < 0)
                return r;
        m->state_lock_fd = state_dir_open_locked(c->state_dir);
        if (m->state_lock_fd < 0)
                return m->state_lock_fd;
        if (asprintf(&m->ring_dir, "%s/ring", c->state_dir) < 0)
                return log_oom();
        incident_manager_remove_unfinished(c->state_dir);

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

        SamplerOptions so = { .freq_hz = c->freq_hz, .function_frames = !c->exact, .unwind = c->unwind,
                              .unwind_stack_bytes = c->unwind_stack_bytes,
                              .symbol_cache_bytes = c->symbol_cache_bytes, .unwind_cache_bytes = c->unwind_cache_bytes,
                              .drain_usec = FLUSH_USEC };
        r = sampler_new(&so, on_sample, m, &m->sampler);
        if (r < 0)
                return log_error_errno(r, "Failed to open perf events for sampling (%s): %m", sampler_open_error_hint(r));
        sampler_set_lost_handler(m->sampler, on_lost);
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
        log_info("Sampling %u CPUs at %u Hz with %s, user stacks by %s, rings of %zu KiB per CPU; "
                 "perf clock mapped by %s (error %llu ns).",
                 sampler_n_cpus(m->sampler), c->freq_hz, sampler_event_name(m->sampler),
                 unwind_mode_to_string(sampler_unwind_mode(m->sampler)), sampler_ring_bytes(m->sampler) / 1024,
                 clock_map_method_to_string(m->clock.method), (unsigned long long) m->clock.error_ns);
        if (sampler_cgroup_problem(m->sampler))
                log_warning("Attribution: %s.", sampler_cgroup_problem(m->sampler));
        for (unsigned i = 0; sampler_kernel_lack(m->sampler, i); i++)
                log_notice("Perf events: %s.", sampler_kernel_lack(m->sampler, i));

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
        log_context_set_journal_priority_max(m->log_context, c->journal_context);

        IncidentManagerOptions io = {
                .event = m->event,
                .priority_incident = PRIORITY_INCIDENT,
                .priority_housekeeping = PRIORITY_HOUSEKEEPING,
                .state_dir = c->state_dir,
                .ring = m->ring,
                .log_context = m->log_context,
                .clock = &m->clock,
                .host = { m->host, m->boot_id, m->kernel_release },
                .profile = { sampler_event_name(m->sampler), c->freq_hz, sampler_n_cpus(m->sampler) },
                .flush = on_incident_flush,
                .userdata = m,
                .started_mono_usec = m->started_usec,
        };
        manager_incident_limits(m, &io.limits);
        manager_incident_hook(m, &io.hook);
        r = incident_manager_new(&io, &m->incidents);
        if (r < 0)
                return log_error_errno(r, "Failed to set up incidents in '%s/incidents': %m", c->state_dir);
        /* Before the log sources: a trigger line read again (its batch repeated) is known as the resumed
         * incident's, and a later match of its rule joins it within its cooldown. */
        incident_manager_resume(m->incidents);

        KmsgSourceOptions ko = {
                .path = c->kmsg_path,
                .state_dir = c->state_dir,
                .from_start = c->kmsg_from_start,
                .clock = &m->clock,
                .own_identifier = "tprofd",
                .context_handler = on_log_context_record,
        };
        r = kmsg_source_new(m->event, &ko, on_log_record, m, &m->kmsg);
        if (r < 0)
                return log_error_errno(r, "Failed to follow the kernel log '%s': %m", c->kmsg_path);
        if (c->journal) {
                r = manager_start_journal(m);
                if (r < 0)
                        return r;
        } else {
                _cleanup_strv_ char **matches = NULL;
                bool any = false;
                /* Rules that can only fire on journal entries are dead: say so once. */
                if (rule_set_journal_matches(m->rules, &matches, &any) >= 0 && (any || (matches && matches[0])))
                        log_warning("The journal is not followed (sources.journal: false): rules with "
                                    "'source: journal' in %s will never match.", c->rules_path);
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
        (void) sd_event_source_set_time_relative(m->rotate_timer, rotate_delay(m)); /* a window shorter than it */

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

        incident_manager_finish(m->incidents);
        flush_ring(m, 0);
        (void) kmsg_source_save_position(m->kmsg);
        if (m->journal)
                (void) journal_source_save_position(m->journal);
        if (m->sampler && sampler_unwind_mode(m->sampler) != UNWIND_MODE_FP) {
                UnwindStats us;
                char line[512];

                sampler_get_unwind_stats(m->sampler, &us);
                unwind_stats_format(&us, line, sizeof(line));
                log_info("User stacks: %s.", line);
        }
        if (m->sampler) {
                SamplerDebugStats ds;

                sampler_get_debug_stats(m->sampler, &ds);
                log_info("Rings drained %llu times; %llu of %llu ring wakeups left to the drain timer.",
                         (unsigned long long) ds.drains, (unsigned long long) ds.ring_wakeups_left,
                         (unsigned long long) ds.ring_wakeups);
        }
        IncidentManagerStats is = {};
        incident_manager_get_stats(m->incidents, &is);
        log_info("Stopped: %llu incidents written.", (unsigned long long) is.written);
        return r;
}
