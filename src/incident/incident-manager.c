/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The incident lifecycle on the event loop; see incident-manager.h.
 *
 * Nothing here blocks on anything but local disk, and the only disk work that grows with data
 * (slicing windows for a bundle) happens at an incident's deadline, bounded by the windows it pinned.
 * That bundle job is incident-job.c; the incidents' state both use is incident-manager-internal.h.
 */
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "basic/alloc-util.h"
#include "basic/cleanup.h"
#include "basic/fileio.h"
#include "basic/log.h"
#include "basic/macro.h"
#include "basic/parse-util.h"
#include "basic/string-util.h"
#include "basic/time-util.h"
#include "bundle/bundle-format.h"
#include "incident/incident-cgroups.h"
#include "incident/incident-threads.h"
#include "incident/incident-job.h"
#include "incident/incident-manager-internal.h"
#include "incident/incident-manager.h"
#include "incident/incident-resume.h"
#include "incident/incident-worker.h"
#include "incident/incident-write.h"

/* After t + after, wait this long so the samples stamped up to t + after have reached the rings. */
#define DEADLINE_SLACK_USEC (100 * USEC_PER_MSEC)
/* Repeats are written into the manifest at most this often: in a storm, a rewrite (two fsyncs) per
 * matching line would slow the daemon down to where the kernel log overruns. */
#define MANIFEST_REWRITE_USEC USEC_PER_SEC

static void open_incident_free(OpenIncident *oi);

static void report_done(OpenIncident *oi, const IncidentResult *res) {
        IncidentDoneFunc done = oi->done;

        if (!done)
                return;
        oi->done = NULL;
        done(res, oi->done_userdata);
}

static void on_removed_unfinished(const char *name, int error, void *userdata) {
        if (error < 0)
                log_warning_errno(error, "Failed to remove unfinished bundle '%s', ignoring: %m", name);
        else
                log_notice("Removed unfinished bundle '%s' left by an earlier run.", name);
}

/* Whether a staged folder can be taken up again: its pending manifest reads back. */
static bool resumable(const char *name, void *userdata) {
        _cleanup_(incident_freep) Incident *i = NULL;
        _cleanup_close_ int fd = openat(*(int *) userdata, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);

        return fd >= 0 && incident_resume_load(fd, &i, NULL) >= 0 && streq(name + strlen(BUNDLE_TMP_PREFIX), i->id);
}

void incident_manager_remove_unfinished(const char *state_dir) {
        _cleanup_free_ char *path = NULL;
        _cleanup_close_ int fd = -EBADF;

        if (asprintf(&path, "%s/incidents", state_dir) < 0)
                return;
        fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return;
        incident_limits_remove_unfinished(fd, resumable, on_removed_unfinished, &fd);
}

static void on_removed_old(const char *name, int error, void *userdata) {
        const IncidentManager *im = userdata;

        if (error < 0)
                log_warning_errno(error, "Failed to remove old bundle '%s', ignoring: %m", name);
        else
                log_notice("Removed bundle %s to stay within %u bundles and %s.", name, im->opts.limits.max_bundles,
                           FORMAT_BYTES(im->opts.limits.max_bundle_bytes));
}

/* A bundle whose hook has not run yet stays: the hook would find it gone. */
static bool bundle_held(const char *name, void *userdata) {
        const IncidentManager *im = userdata;

        return incident_hook_holds(im->hook, name);
}

/* keep: the bundle just published, which stays whatever its name sorts after. */
static void enforce_limits(IncidentManager *im, const char *keep) {
        incident_limits_enforce(im->incidents_fd, &im->opts.limits, keep, bundle_held, on_removed_old, im);
}

static const char *alignment_of(const LogRecord *rec) {
        if (rec->source == LOG_SOURCE_KMSG)
                return "kmsg-timestamp";
        if (rec->kernel_origin)
                return "journal-source-monotonic";
        return "journal-monotonic";
}

static void remove_incident(IncidentManager *im, OpenIncident *oi) {
        for (size_t i = 0; i < im->n_queue; i++)
                if (im->queue[i] == oi) {
                        memmove(im->queue + i, im->queue + i + 1, (im->n_queue - i - 1) * sizeof(OpenIncident *));
                        im->n_queue--;
                        break;
                }
        for (size_t i = 0; i < im->n_incidents; i++)
                if (im->incidents[i] == oi) {
                        memmove(im->incidents + i, im->incidents + i + 1,
                                (im->n_incidents - i - 1) * sizeof(OpenIncident *));
                        im->n_incidents--;
                        break;
                }
        trigger_forget(im->trigger, oi);
        open_incident_free(oi);
}

/* Whether a staged incident's pending manifest takes its repeats: not while its bundle is being
 * written, and not for an earlier boot's, whose pending manifest names that boot (and host and
 * kernel), which a rewrite by this run would replace with its own. */
static bool pending_rewritable(const OpenIncident *oi) {
        return !oi->published && !oi->writing && !oi->other_boot && oi->dir_fd >= 0;
}

/* The repeats into the manifest of a published bundle, or into the pending manifest of a staged one
 * (for a run that resumes it after a crash). */
static int rewrite_manifest(IncidentManager *im, OpenIncident *oi) {
        _cleanup_free_ char *json = NULL, *path = NULL;
        int r;

        if (!oi->published)
                return pending_rewritable(oi) ? incident_restage(oi->dir_fd, oi->incident, &im->opts.host,
                                                                 &im->opts.profile)
                                              : 0;

        r = incident_manifest_json(oi->incident, &im->opts.host, &im->opts.profile, &oi->slice, oi->windows,
                                   oi->n_windows, false, &json);
        if (r < 0)
                return r;
        if (asprintf(&path, "%s/%s/" BUNDLE_MANIFEST, im->incidents_path, oi->incident->id) < 0)
                return -ENOMEM;
        return write_file_atomic(path, json, strlen(json), BUNDLE_FILE_MODE);
}

static void open_incident_free(OpenIncident *oi) {
        if (!oi)
                return;
        if (oi->rewrite) /* repeats not yet in the manifest */
                (void) rewrite_manifest(oi->manager, oi);
        sd_event_source_disable_unref(oi->rewrite);
        sd_event_source_disable_unref(oi->deadline);
        sd_event_source_disable_unref(oi->expire);
        report_done(oi, &(IncidentResult) { .error = -ECANCELED });
        safe_close(oi->dir_fd);
        for (size_t i = 0; i < oi->n_windows; i++)
                free(oi->windows[i]);
        free(oi->windows);
        for (size_t i = 0; i < oi->n_deferred; i++)
                free(oi->deferred[i].rule);
        free(oi->deferred);
        incident_cgroups_free(oi->cgroups);
        incident_threads_free(oi->threads);
        incident_free(oi->incident);
        free(oi);
}

/* --- completing an incident ---------------------------------------------------------------------- */

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

static void schedule_rewrite(IncidentManager *im, OpenIncident *oi) {
        int r;

        if (oi->rewrite || (!oi->published && !pending_rewritable(oi)))
                return;
        r = sd_event_add_time_relative(im->opts.event, &oi->rewrite, CLOCK_MONOTONIC, MANIFEST_REWRITE_USEC,
                                       MANIFEST_REWRITE_USEC / 10, on_manifest_rewrite, oi);
        if (r >= 0)
                r = sd_event_source_set_priority(oi->rewrite, im->opts.priority_housekeeping);
        if (r < 0) {
                oi->rewrite = sd_event_source_disable_unref(oi->rewrite);
                r = rewrite_manifest(im, oi);
                if (r < 0)
                        log_warning_errno(r, "Failed to update the repeat count of incident %s, ignoring: %m",
                                          oi->incident->short_id);
        }
}

/* The repeats that came while the worker read the incident join it now. */
static void apply_deferred_repeats(IncidentManager *im, OpenIncident *oi) {
        bool any = oi->n_deferred > 0 || oi->deferred_unnamed > 0;

        oi->writing = false;
        for (size_t k = 0; k < oi->n_deferred; k++) {
                (void) incident_add_repeat(oi->incident, oi->deferred[k].rule, oi->deferred[k].t_ns);
                oi->deferred[k].rule = mfree(oi->deferred[k].rule);
        }
        oi->n_deferred = 0;
        for (; oi->deferred_unnamed > 0; oi->deferred_unnamed--)
                (void) incident_add_repeat(oi->incident, NULL, oi->deferred_unnamed_ns);
        if (any)
                schedule_rewrite(im, oi);
}

/* Back on the event loop: the bundle is published (or failed); tell everyone who waits for it. */
static int job_finish(IncidentManager *im, BundleJob *job) {
        _cleanup_free_ char *bundle_path = NULL;
        OpenIncident *oi = job->oi;
        Incident *i = oi->incident;
        int r = job->error;

        if (r < 0) {
                im->failed++;
                log_error_errno(r, "Failed to write the bundle of incident %s (rule %s), discarding it: %m",
                                i->short_id, i->rule.name);
                oi->writing = false;
                oi->dir_fd = safe_close(oi->dir_fd);
                (void) incident_discard(im->incidents_fd, i);
                report_done(oi, &(IncidentResult) { .error = r });
                incident_job_free(job);
                return r;
        }

        incident_sink_get_slice(job->sink, &oi->slice);
        oi->cgroups = incident_sink_take_cgroups(job->sink);
        oi->slice.cgroups = oi->cgroups;
        oi->threads = incident_sink_take_threads(job->sink);
        oi->slice.threads = oi->threads;
        oi->windows = TAKE_PTR(job->names);
        oi->n_windows = job->files.n;
        oi->dir_fd = safe_close(oi->dir_fd);
        oi->published = true;
        im->written++;
        trigger_closed(im->trigger, oi);
        apply_deferred_repeats(im, oi);
        BundleStatus status = incident_status(i, &oi->slice);
        if (asprintf(&bundle_path, "%s/%s", im->incidents_path, i->id) < 0)
                bundle_path = NULL;
        IncidentHookBundle hb = {
                .path = bundle_path ?: i->id,
                .id = i->id,
                .short_id = i->short_id,
                .rule = i->rule.name,
                .host = im->opts.host.host,
                .status = bundle_status_to_string(status),
                .state_dir = im->state_dir,
                .message = i->message ?: i->note,
                .trigger_realtime_usec = i->t_realtime_usec,
                .trigger_perf_ns = i->t_ns,
        };
        incident_announce(&hb);
        log_debug("Incident %s written in %llu ms.", i->short_id,
                  (unsigned long long) ((now_usec(CLOCK_MONOTONIC) - job->started_usec) / USEC_PER_MSEC));
        incident_job_free(job);
        /* Limits first, so a capture's client sees the bundle folder as it will stay. */
        enforce_limits(im, i->id);
        (void) incident_hook_submit(im->hook, &hb); /* a full queue is logged and counted there */
        report_done(oi, &(IncidentResult) { .id = i->id, .path = hb.path, .status = status });
        return 0;
}

static int prepare_failed(IncidentManager *im, OpenIncident *oi, int r) {
        BundleJob *job = new0(BundleJob, 1);

        if (!job) { /* out of memory: the same steps without the job */
                im->failed++;
                oi->dir_fd = safe_close(oi->dir_fd);
                (void) incident_discard(im->incidents_fd, oi->incident);
                report_done(oi, &(IncidentResult) { .error = r });
                return r;
        }
        *job = (BundleJob) { .oi = oi, .log = { .oi = oi }, .error = r };
        return job_finish(im, job);
}

/* Writes the bundle now, on the event loop: for a daemon that is stopping. */
static int complete_now(IncidentManager *im, OpenIncident *oi) {
        BundleJob *job;
        int r;

        r = incident_job_prepare(im, oi, &job);
        if (r < 0)
                return prepare_failed(im, oi, r);
        incident_job_run(job);
        return job_finish(im, job);
}

static int on_incident_expire(sd_event_source *s, uint64_t usec, void *userdata) {
        OpenIncident *oi = userdata;
        remove_incident(oi->manager, oi);
        return 0;
}

/* After the bundle: keep the incident until the cooldown ends, so repeats join it rather than start
 * another; a failed one goes now. */
static void after_complete(IncidentManager *im, OpenIncident *oi, int r) {
        uint64_t expire_mono_usec;

        if (r < 0) {
                remove_incident(im, oi);
                return;
        }
        expire_mono_usec = clock_map_perf_to_mono(im->opts.clock, oi->event_ns) / NSEC_PER_USEC +
                           oi->incident->rule.cooldown_usec;
        r = sd_event_add_time(im->opts.event, &oi->expire, CLOCK_MONOTONIC, expire_mono_usec, USEC_PER_SEC,
                              on_incident_expire, oi);
        if (r < 0)
                remove_incident(im, oi);
}

/* Starts the next queued bundle on the worker, unless one is being written. */
static void start_next(IncidentManager *im) {
        while (!im->stopping && im->n_queue > 0 && !incident_worker_busy(im->worker)) {
                OpenIncident *oi = im->queue[0];
                BundleJob *job;
                int r;

                memmove(im->queue, im->queue + 1, (im->n_queue - 1) * sizeof(OpenIncident *));
                im->n_queue--;
                r = incident_job_prepare(im, oi, &job);
                if (r < 0) {
                        after_complete(im, oi, prepare_failed(im, oi, r));
                        continue;
                }
                oi->writing = true;
                r = incident_worker_start(im->worker, incident_job_run, job);
                if (r < 0) {
                        log_warning_errno(r, "Failed to start a thread for the bundle of incident %s, writing it on the event loop: %m",
                                          oi->incident->short_id);
                        incident_job_run(job);
                        after_complete(im, oi, job_finish(im, job));
                }
        }
}

static void on_job_done(void *p, void *userdata) {
        IncidentManager *im = userdata;
        BundleJob *job = p;
        OpenIncident *oi = job->oi;

        after_complete(im, oi, job_finish(im, job));
        start_next(im);
}

/*
 * When t + after has been sampled, on CLOCK_MONOTONIC. The mapping the owner keeps moves under a
 * waiting incident (it is measured every minute, and a host paused for minutes comes back with its
 * perf clock moved against CLOCK_MONOTONIC): one measured since the match is the one to go by. An
 * older one is not trusted past `after` from the match: the event was logged before it was read, so
 * by then t + after has been sampled, wherever that mapping puts it.
 */
static uint64_t incident_deadline(const IncidentManager *im, const OpenIncident *oi) {
        const Incident *i = oi->incident;
        uint64_t by_map = clock_map_perf_to_mono(im->opts.clock, i->to_ns) / NSEC_PER_USEC;

        if (oi->other_boot) /* its slice ended with its boot: now */
                return 0;
        if (im->opts.clock->measured_mono_ns / NSEC_PER_USEC <= oi->armed_mono_usec)
                by_map = MIN(by_map, oi->armed_mono_usec + (i->to_ns - i->t_ns) / NSEC_PER_USEC);
        return by_map + DEADLINE_SLACK_USEC;
}

static int on_incident_deadline(sd_event_source *s, uint64_t usec, void *userdata) {
        OpenIncident *oi = userdata;
        IncidentManager *im = oi->manager;
        uint64_t deadline_usec = incident_deadline(im, oi);

        /* A mapping measured since the timer was set puts t + after later: wait for it. */
        if (deadline_usec > now_usec(CLOCK_MONOTONIC) && sd_event_source_set_time(s, deadline_usec) >= 0 &&
            sd_event_source_set_enabled(s, SD_EVENT_ONESHOT) >= 0)
                return 0;

        if (!GREEDY_REALLOC(im->queue, im->allocated_queue, im->n_queue + 1)) {
                after_complete(im, oi, complete_now(im, oi));
                return 0;
        }
        im->queue[im->n_queue++] = oi;
        start_next(im);
        return 0;
}

/* --- starting incidents and repeats -------------------------------------------------------------- */

static void incident_repeat(IncidentManager *im, OpenIncident *oi, const IncidentRule *rule, const LogRecord *rec) {
        if (oi->n_repeat_marks < REPEAT_MARKS_MAX)
                oi->repeat_ns[oi->n_repeat_marks++] = rec->t_ns;
        if (oi->writing) {
                char *name = oi->n_deferred < DEFERRED_REPEATS_MAX ? strdup(rule->name) : NULL;
                if (name && GREEDY_REALLOC(oi->deferred, oi->allocated_deferred, oi->n_deferred + 1)) {
                        oi->deferred[oi->n_deferred].rule = name;
                        oi->deferred[oi->n_deferred++].t_ns = rec->t_ns;
                } else {
                        free(name);
                        oi->deferred_unnamed++;
                        oi->deferred_unnamed_ns = MAX(oi->deferred_unnamed_ns, rec->t_ns);
                }
                return;
        }
        (void) incident_add_repeat(oi->incident, rule->name, rec->t_ns); /* past the named ones: counted only */
        schedule_rewrite(im, oi);
}

/* Pins what exists of a staged incident's slice, arms its deadline, registers it. On failure the
 * caller still owns the incident and its staged folder is gone. */
static int incident_open(IncidentManager *im, OpenIncident *oi, Incident *i) {
        _cleanup_close_ int windows_fd = -EBADF;
        uint64_t deadline_usec;
        int r;

        oi->manager = im;
        oi->incident = i;

        /* Pin now what exists of [t - before, now], so retention cannot take it while we wait. */
        windows_fd = openat(oi->dir_fd, BUNDLE_WINDOWS_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (windows_fd >= 0 && !oi->other_boot)
                (void) ring_store_pin(im->opts.ring, i->from_ns, i->to_ns, windows_fd, NULL);

        oi->armed_mono_usec = now_usec(CLOCK_MONOTONIC);
        deadline_usec = incident_deadline(im, oi);
        r = sd_event_add_time(im->opts.event, &oi->deadline, CLOCK_MONOTONIC, deadline_usec, 10 * USEC_PER_MSEC,
                              on_incident_deadline, oi);
        if (r >= 0)
                r = sd_event_source_set_priority(oi->deadline, im->opts.priority_incident);
        if (r < 0) {
                (void) incident_discard(im->incidents_fd, i);
                oi->incident = NULL; /* the caller still owns it */
                open_incident_free(oi);
                return r;
        }
        r = trigger_register(im->trigger, incident_rule_cooldown_key(&i->rule), oi->event_ns,
                             i->rule.cooldown_usec * NSEC_PER_USEC, now_nsec(CLOCK_MONOTONIC), oi);
        if (r < 0)
                log_warning_errno(r, "Failed to register incident %s for cooldown, ignoring: %m", i->short_id);
        im->incidents[im->n_incidents++] = oi;
        return 0;
}

/* A new OpenIncident, with room kept for it in im->incidents (incident_open() adds it); NULL when
 * memory runs out. */
static OpenIncident *open_incident_alloc(IncidentManager *im) {
        OpenIncident *oi;

        if (!GREEDY_REALLOC(im->incidents, im->allocated_incidents, im->n_incidents + 1))
                return NULL;
        oi = new0(OpenIncident, 1);
        if (oi)
                oi->dir_fd = -EBADF;
        return oi;
}

/* Stages a prepared incident and opens it. */
static int incident_arm(IncidentManager *im, Incident *i, OpenIncident **ret) {
        OpenIncident *oi = open_incident_alloc(im);
        int r;

        if (!oi)
                return -ENOMEM;
        r = incident_stage(im->incidents_fd, i, &im->opts.host, &im->opts.profile, &oi->dir_fd);
        if (r < 0) {
                free(oi);
                return r;
        }
        oi->event_ns = i->t_ns;
        r = incident_open(im, oi, i);
        if (r < 0)
                return r;
        *ret = oi;
        return 0;
}

/* Takes up the incident staged in incidents/<name> by an earlier run (incident-resume.h). */
static int incident_resume(IncidentManager *im, const char *name) {
        _cleanup_(incident_freep) Incident *i = NULL;
        _cleanup_free_ char *boot_id = NULL;
        OpenIncident *oi = open_incident_alloc(im);
        int r;

        if (!oi)
                return -ENOMEM;
        oi->dir_fd = openat(im->incidents_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        r = oi->dir_fd < 0 ? -errno : incident_resume_load(oi->dir_fd, &i, &boot_id);
        if (r >= 0 && !streq(name + strlen(BUNDLE_TMP_PREFIX), i->id))
                r = -EBADMSG;
        if (r < 0) {
                safe_close(oi->dir_fd);
                free(oi);
                return r;
        }
        /* Of another boot, or of this one but not to be placed on its clock (a host without boot
         * ids): its windows and its times are of that boot, and all it had is in windows/. */
        oi->other_boot = !boot_id || !im->opts.host.boot_id || !streq(boot_id, im->opts.host.boot_id);
        i->resumed_realtime_usec = now_usec(CLOCK_REALTIME);
        /* Every sample of the earlier run is older than this run's start, every one of this run newer. */
        i->resumed_ns = oi->other_boot ? 0 : clock_map_mono_to_perf(im->opts.clock,
                                                                    (im->opts.started_mono_usec ?: now_usec(CLOCK_MONOTONIC)) * NSEC_PER_USEC);
        /* Its cooldown on this boot's clock: by its wall-clock time, as a journal entry of another
         * boot is placed (0, this boot's start, for an event before it). */
        oi->event_ns = oi->other_boot ? clock_map_realtime_to_perf(im->opts.clock, i->t_realtime_usec * NSEC_PER_USEC)
                                      : i->t_ns;
        r = incident_open(im, oi, i);
        if (r < 0)
                return r;
        log_notice("Resuming incident %s (rule %s) left unfinished by an earlier run%s.", i->short_id, i->rule.name,
                   oi->other_boot ? ", of an earlier boot" : "");
        TAKE_PTR(i);
        return 0;
}

void incident_manager_resume(IncidentManager *im) {
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;

        if (opendir_at(im->incidents_fd, ".", 0, &d) < 0)
                return;
        while ((de = readdir(d))) {
                if (!startswith(de->d_name, BUNDLE_TMP_PREFIX))
                        continue;
                int r = incident_resume(im, de->d_name);
                if (r < 0) {
                        log_warning_errno(r, "Failed to resume the unfinished bundle '%s': %m", de->d_name);
                        r = rm_rf_at(im->incidents_fd, de->d_name, BUNDLE_DEPTH_MAX);
                        on_removed_unfinished(de->d_name, r == -ENOENT ? 0 : r, NULL); /* or gone already */
                }
        }
}

static int incident_start(IncidentManager *im, const IncidentRule *rule, const LogRecord *rec, uint64_t event_ns,
                          const IncidentMatchCapture *captures, size_t n_captures) {
        _cleanup_(incident_freep) Incident *i = NULL;
        OpenIncident *oi;
        int r;

        /* An entry of another boot (no perf time) is dated by its own realtime. */
        r = incident_new(rule, event_ns, rec->t_ns == 0 ? rec->realtime_usec : 0, im->opts.clock, &i);
        if (r < 0)
                return log_error_errno(r, "Failed to create an incident for rule %s: %m", rule->name);
        r = incident_set_trigger(i, rec, alignment_of(rec), rec->t_error_ns ?: im->opts.clock->error_ns);
        if (r < 0)
                return log_oom();
        for (size_t k = 0; k < n_captures; k++) {
                r = incident_add_capture(i, captures[k].name, captures[k].value, captures[k].value_len);
                if (r < 0)
                        break; /* more captures than we keep: the rest are in the message */
        }
        r = incident_arm(im, i, &oi);
        if (r < 0)
                return log_error_errno(r, "Failed to stage the bundle of incident %s: %m", i->short_id);
        TAKE_PTR(i);
        return 0;
}

int incident_manager_match(IncidentManager *im, const IncidentRule *rule, const LogRecord *rec,
                           const IncidentMatchCapture *captures, size_t n_captures) {
        _cleanup_free_ char *esc = escape_text(rec->message ?: "", MIN(rec->message_len, (size_t) 512));
        uint64_t event_ns = rec->t_ns;
        void *cookie = NULL;
        TriggerVerdict v;

        for (size_t k = 0; k < im->n_incidents; k++)
                if (incident_resumed_trigger(im->incidents[k]->incident, rule, rec)) {
                        log_debug("rule %s matched the trigger line of resumed incident %s again, skipped: %s",
                                  rule->name, im->incidents[k]->incident->short_id, esc ?: "");
                        return 0;
                }
        if (event_ns == 0) /* an entry of another boot: it cannot be placed on our clock */
                event_ns = clock_map_realtime_to_perf(im->opts.clock, rec->realtime_usec * NSEC_PER_USEC);

        v = trigger_decide(im->trigger, incident_rule_cooldown_key(rule), event_ns, rule->cooldown_usec * NSEC_PER_USEC,
                           now_nsec(CLOCK_MONOTONIC), &cookie);
        switch (v) {
        case TRIGGER_NEW:
                log_info("rule %s matched %s%s%s: %s", rule->name, log_source_to_string(rec->source),
                         rec->unit ? " " : "", rec->unit ?: "", esc ?: "");
                (void) incident_start(im, rule, rec, event_ns, captures, n_captures); /* failures are logged there */
                return 0;
        case TRIGGER_JOINED:
                log_debug("rule %s matched again inside the cooldown of %s: %s", rule->name,
                          incident_rule_cooldown_key(rule), esc ?: "");
                incident_repeat(im, cookie, rule, rec);
                return 0;
        case TRIGGER_RATE_LIMITED:
        case TRIGGER_TOO_MANY_OPEN:
        default:
                /* Counted by the trigger; the owner's status reports the totals. The line is named
                 * here, so that a debug log accounts for every line a rule matched. */
                log_debug("rule %s matched %s%s%s, dropped (%s): %s", rule->name, log_source_to_string(rec->source),
                          rec->unit ? " " : "", rec->unit ?: "", trigger_verdict_to_string(v), esc ?: "");
                return 0;
        }
}

int incident_manager_capture(IncidentManager *im, uint64_t before_usec, uint64_t after_usec, const char *note,
                             IncidentDoneFunc done, void *userdata, const char **ret_short_id) {
        _cleanup_(incident_freep) Incident *i = NULL;
        IncidentRule rule = { .name = (char *) "manual", .source = (char *) "manual",
                              .description = (char *) "manual capture (tprof-bundle capture)",
                              .before_usec = before_usec, .after_usec = after_usec };
        OpenIncident *oi;
        uint64_t t;
        int r;

        if (trigger_n_open(im->trigger) >= TRIGGER_MAX_OPEN_DEFAULT)
                return -EBUSY;
        t = clock_map_mono_to_perf(im->opts.clock, now_nsec(CLOCK_MONOTONIC));
        r = incident_new(&rule, t, 0, im->opts.clock, &i);
        if (r < 0)
                return r;
        if (note) {
                i->note = strdup(note);
                if (!i->note)
                        return -ENOMEM;
        }
        i->alignment = "capture-request";
        r = incident_arm(im, i, &oi);
        if (r < 0)
                return r;
        TAKE_PTR(i);
        oi->done = done;
        oi->done_userdata = userdata;
        if (ret_short_id)
                *ret_short_id = oi->incident->short_id;
        return 0;
}

void incident_manager_finish(IncidentManager *im) {
        /* The bundle on the worker first, then the queued ones and those still recording, here. */
        im->stopping = true;
        incident_worker_wait(im->worker);
        im->n_queue = 0;
        for (size_t i = 0; i < im->n_incidents; i++) {
                OpenIncident *oi = im->incidents[i];
                if (oi->published)
                        continue;
                if (sd_event_source_get_enabled(oi->deadline, NULL) > 0)
                        log_notice("Writing incident %s early, before t + after was reached, because tprofd is stopping.",
                                   oi->incident->short_id);
                (void) complete_now(im, oi); /* a failure discards the staged bundle and its pins */
        }
}

/* --- setup and teardown -------------------------------------------------------------------------- */

int incident_manager_new(const IncidentManagerOptions *o, IncidentManager **ret) {
        _cleanup_(incident_manager_freep) IncidentManager *im = NULL;
        int r;

        assert(o && o->event && o->ring && o->log_context && o->clock && o->state_dir);
        im = new0(IncidentManager, 1);
        if (!im)
                return -ENOMEM;
        im->opts = *o;
        im->incidents_fd = -EBADF;
        if (asprintf(&im->incidents_path, "%s/incidents", o->state_dir) < 0) {
                im->incidents_path = NULL;
                return -ENOMEM;
        }
        im->state_dir = strdup(o->state_dir);
        if (!im->state_dir)
                return -ENOMEM;
        if (secure_getenv("TPROF_TEST_BUNDLE_GATE")) {
                im->test_gate = strdup(secure_getenv("TPROF_TEST_BUNDLE_GATE"));
                if (!im->test_gate)
                        return -ENOMEM;
        }
        im->opts.state_dir = im->state_dir;
        im->opts.hook = (IncidentHookOptions) {}; /* the hook runner keeps its own copy */
        im->incidents_fd = open(im->incidents_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (im->incidents_fd < 0)
                return -errno;
        im->trigger = trigger_new(NULL);
        if (!im->trigger)
                return -ENOMEM;
        r = incident_hook_new(o->event, o->priority_housekeeping, &o->hook, &im->hook);
        if (r < 0)
                return r;
        r = incident_worker_new(o->event, o->priority_incident, on_job_done, im, &im->worker);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(im);
        return 0;
}

IncidentManager *incident_manager_free(IncidentManager *im) {
        if (!im)
                return NULL;
        /* A bundle being written is finished: its files are on disk already, or nearly. */
        im->stopping = true;
        incident_worker_wait(im->worker);
        im->worker = incident_worker_free(im->worker);
        for (size_t i = 0; i < im->n_incidents; i++)
                open_incident_free(im->incidents[i]);
        free(im->incidents);
        free(im->queue);
        trigger_free(im->trigger);
        incident_hook_free(im->hook);
        free(im->state_dir);
        free(im->test_gate);
        safe_close(im->incidents_fd);
        free(im->incidents_path);
        free(im);
        return NULL;
}

void incident_manager_set_limits(IncidentManager *im, const IncidentLimits *limits) {
        im->opts.limits = *limits;
}

int incident_manager_set_hook(IncidentManager *im, const IncidentHookOptions *hook) {
        return incident_hook_set_options(im->hook, hook);
}

void incident_manager_get_stats(const IncidentManager *im, IncidentManagerStats *ret) {
        *ret = (IncidentManagerStats) {
                .written = im->written,
                .failed = im->failed,
                .open = trigger_n_open(im->trigger),
                .writing = im->worker && incident_worker_busy(im->worker),
                .queued = (unsigned) im->n_queue,
        };
        trigger_get_stats(im->trigger, &ret->trigger);
        incident_hook_get_stats(im->hook, &ret->hook);
}
