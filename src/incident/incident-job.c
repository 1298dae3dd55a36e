/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Writing one incident's bundle; see incident-job.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "basic/alloc-util.h"
#include "basic/cleanup.h"
#include "basic/log.h"
#include "basic/macro.h"
#include "basic/string-util.h"
#include "basic/time-util.h"
#include "bundle/bundle-format.h"
#include "incident/incident-job.h"
#include "incident/incident-manager-internal.h"
#include "incident/incident-resume.h"
#include "incident/incident-write.h"
#include "store/store-export.h"
#include "store/store-slice.h"

/* How long a sample may take from its time stamp to its CPU's buffer (an interrupt's path). */
#define READ_SLACK_NSEC (10 * NSEC_PER_MSEC)

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

/* The trigger line of a resumed incident, unless this run read it again: the earlier run took it
 * away with its log context. In its place by time. */
static int add_trigger_line(CollectLog *c) {
        const Incident *i = c->oi->incident;
        LogRecord rec;
        size_t at = c->n;
        int r;

        if (i->source < 0)
                return 0; /* a capture: no line */
        for (size_t k = 0; k < c->n; k++)
                if (c->lines[k].trigger && c->lines[k].rec->t_ns == i->t_ns)
                        return 0;
        incident_trigger_record(i, &rec);
        r = on_collect_log(&rec, c);
        if (r < 0)
                return r;
        while (at > 0 && c->lines[at - 1].rec->t_ns > i->t_ns)
                at--;
        IncidentLogLine line = c->lines[c->n - 1];
        LogRecord *copy = c->copies[c->n - 1];
        memmove(c->lines + at + 1, c->lines + at, (c->n - 1 - at) * sizeof(IncidentLogLine));
        memmove(c->copies + at + 1, c->copies + at, (c->n - 1 - at) * sizeof(LogRecord *));
        c->lines[at] = line;
        c->copies[at] = copy;
        return 0;
}

static void collect_log_done(CollectLog *c) {
        for (size_t i = 0; i < c->n; i++)
                log_record_free(c->copies[i]);
        free(c->copies);
        free(c->lines);
}

/* Writes the slice as perf script, and counts the samples the kernel lost inside the slice. */
static int write_perf_script(FILE *out, void *userdata) {
        const SliceFiles *f = userdata;
        ExportStats st = {};
        int r;

        if (!out) { /* no text: only the samples lost inside the slice, from the chunk headers */
                uint64_t lost = 0;
                r = slice_lost(f->paths, f->n, f->from_ns, f->to_ns, &lost);
                incident_sink_add_lost(f->sink, lost);
                return r;
        }
        r = export_perf_script(f->paths, f->n, f->from_ns, f->to_ns, /* event= */ NULL, out, &st);
        incident_sink_add_lost(f->sink, st.slice.lost);
        export_stats_done(&st);
        return r == -ENODATA ? 0 : r; /* no samples: an empty file, the manifest says no-coverage */
}

static int on_slice_sample(const Sample *s, void *userdata) {
        return incident_sink_add(userdata, s);
}

static void flush(IncidentManager *im) {
        if (im->opts.flush)
                im->opts.flush(im->opts.userdata);
}

BundleJob *incident_job_free(BundleJob *job) {
        if (!job)
                return NULL;
        strv_free(job->names);
        strv_free(job->files.paths);
        collect_log_done(&job->log);
        incident_sink_free(job->sink);
        free(job);
        return NULL;
}

int incident_job_prepare(IncidentManager *im, OpenIncident *oi, BundleJob **ret) {
        BundleJob *job;
        _cleanup_close_ int windows_fd = -EBADF;
        Incident *i = oi->incident;
        int r;

        job = new0(BundleJob, 1);
        if (!job)
                return -ENOMEM;
        *job = (BundleJob) {
                .oi = oi,
                .incidents_fd = im->incidents_fd,
                .host = im->opts.host,
                .profile = im->opts.profile,
                .log = { .oi = oi },
                .files = { .from_ns = i->from_ns, .to_ns = i->to_ns },
                .started_usec = now_usec(CLOCK_MONOTONIC),
                .test_gate = im->test_gate,
        };

        /* Everything up to t + after is in the rings now: get it onto disk, then pin what appeared
         * since the match (a rotation may have opened a window in between). The newest window keeps
         * growing while the worker reads it, and a drain reads the CPUs one after another, so a chunk
         * appended meanwhile can hold one CPU's samples older than another's already read: the
         * bundle takes the samples up to this flush, all on disk once it returns, so that a later
         * read of its windows over the manifest's bounds (export --baseline) finds the same ones. A
         * sample stamped just before the flush may reach its CPU's buffer just after it: the cut is
         * READ_SLACK_NSEC earlier. */
        job->read_to_ns = clock_map_mono_to_perf(im->opts.clock, now_nsec(CLOCK_MONOTONIC));
        job->read_to_ns = MAX(i->to_ns, job->read_to_ns > READ_SLACK_NSEC ? job->read_to_ns - READ_SLACK_NSEC : 0);
        if (oi->other_boot) /* its windows ended with that boot: all of them */
                job->read_to_ns = UINT64_MAX;
        flush(im);
        windows_fd = openat(oi->dir_fd, BUNDLE_WINDOWS_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (windows_fd < 0) {
                r = -errno;
                goto fail;
        }
        r = oi->other_boot ? 0 : ring_store_pin(im->opts.ring, i->from_ns, i->to_ns, windows_fd, NULL);
        if (r < 0)
                log_warning_errno(r, "Failed to pin windows for incident %s, the bundle may lack samples: %m",
                                  i->short_id);

        r = incident_list_windows(oi->dir_fd, i->id, im->incidents_path, &job->names, &job->files.paths, &job->files.n);
        if (r < 0)
                goto fail;
        r = incident_sink_new(i, &job->sink);
        if (r < 0)
                goto fail;
        job->files.sink = job->sink;
        /* This boot's log says nothing of another's slice. */
        r = oi->other_boot ? 0 : log_context_range(im->opts.log_context, i->from_ns, i->to_ns, on_collect_log, &job->log);
        if (r >= 0 && i->resumed_realtime_usec > 0)
                r = add_trigger_line(&job->log);
        if (r < 0)
                goto fail;
        *ret = job;
        return 0;
fail:
        incident_job_free(job);
        return r;
}

/* On the worker (or, when the daemon stops, on the event loop): the part that grows with the slice. */
void incident_job_run(void *p) {
        BundleJob *job = p;
        OpenIncident *oi = job->oi;
        const Incident *i = oi->incident;
        int r;

        /* For tests only: hold the bundle on the worker until the named file exists (at most a
         * minute), so a test can look at the daemon while a bundle is being written. */
        for (unsigned k = 0; job->test_gate && k < 6000 && access(job->test_gate, F_OK) < 0; k++)
                (void) usleep(10 * USEC_PER_MSEC);

        r = slice_read(job->files.paths, job->files.n, 0, job->read_to_ns, on_slice_sample, job->sink, NULL);
        if (r < 0)
                log_warning_errno(r, "Failed to read some pinned windows of incident %s, ignoring: %m", i->short_id);
        job->error = incident_publish(job->incidents_fd, oi->dir_fd, i, job->sink, &job->host, &job->profile,
                                      job->names, job->files.n, job->log.lines, job->log.n, write_perf_script,
                                      &job->files);
}
