/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tprof-bundle export ID --format pprof [--baseline]: a bundle's slice (or its baseline, the rest of
 * its pinned windows) cut again from the bundle's windows/ and written as a gzipped pprof Profile.
 * The slice and the baseline bounds come from the manifest, so the totals equal those of
 * stacks.folded and baseline.folded.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic/log.h"
#include "basic/string-util.h"
#include "bundle/bundle-format.h"
#include "pprof/pprof-export.h"
#include "store/store-slice.h"
#include "tprof-bundle/bundle-output.h"
#include "tprof-bundle/tprof-bundle.h"

#define strna(s) ((s) ?: "n/a")

int export_commit_output(FILE *out, const char *tmp, const char *path) {
        if (fflush(out) != 0 || (tmp && fsync(fileno(out)) < 0))
                return -errno;
        if (tmp && rename(tmp, path) < 0)
                return -errno;
        return 0;
}

int bundle_export_pprof(const BundleEntry *e, bool baseline, const char *output) {
        _cleanup_free_ char **paths = NULL;
        _cleanup_free_ char *tmp = NULL, *c_rule = NULL, *c_event = NULL, *c_host = NULL;
        const BundleManifest *m = e->manifest;
        WindowInfo *w = NULL;
        size_t n_w = 0, n_paths = 0;
        uint64_t from, to;
        _cleanup_free_ char *id = text_for_terminal(e->id, 0);
        ExportStats st = {};
        PprofMeta meta = {};
        FILE *out = stdout;
        int r;

        if (!m || !m->has_slice)
                return log_error_errno(SYNTHETIC_ERRNO(ENODATA), "Bundle %s has no usable manifest: nothing to export.",
                                       id ?: "?");
        if (baseline && !m->has_baseline)
                return log_error_errno(SYNTHETIC_ERRNO(ENODATA), "Bundle %s has no baseline.", id ?: "?");
        if (!output && isatty(STDOUT_FILENO))
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL),
                                       "A pprof profile is binary: use -o FILE, or redirect standard output.");

        meta.host = m->host;
        meta.rule = m->rule_name ?: e->rule;
        meta.incident = e->id;
        meta.kind = baseline ? "baseline" : "incident";
        if (asprintf(&c_host, "tprof %s, host %s, kernel %s", baseline ? "baseline" : "incident slice",
                     strna(m->host), strna(m->kernel_release)) < 0 ||
            asprintf(&c_rule, "incident %s, rule %s, status %s", e->id, strna(meta.rule), strna(m->status)) < 0 ||
            asprintf(&c_event, "trigger at %s: %s", strna(m->event_utc), strna(m->event_message)) < 0)
                return log_oom();
        meta.comments[0] = c_host;
        meta.comments[1] = c_rule;
        meta.comments[2] = c_event;
        if (baseline) {
                from = m->baseline_from_perf_ns;
                to = m->baseline_to_perf_ns;
                meta.exclude_from_ns = m->slice_from_perf_ns;
                meta.exclude_to_ns = m->slice_to_perf_ns;
        } else {
                from = m->slice_from_perf_ns;
                to = m->slice_to_perf_ns;
        }

        r = bundle_readable_windows(e, &w, &n_w, &paths, &n_paths);
        if (r < 0)
                return bundle_windows_error(e, r);
        if (output) {
                out = bundle_open_output(output, &tmp);
                if (!out) {
                        r = log_error_errno(errno, "Failed to create '%s': %m", output);
                        goto finish;
                }
        }
        r = export_pprof(paths, n_paths, from, to, &meta, out, &st);
        if (r >= 0)
                bundle_export_warn_short(e, &st.slice, 0, baseline ? m->baseline_samples : m->slice_samples,
                                         baseline ? "baseline" : "slice");
        if (r >= 0 && out != stdout)
                r = export_commit_output(out, tmp, output);
        else if (r >= 0 && fflush(stdout) != 0)
                r = -errno;
        if (r >= 0 && tmp)
                tmp = mfree(tmp);
        if (r == -ENODATA && n_paths == 0)
                log_error("Bundle %s has no readable windows left to export its %s from (removed or damaged since it "
                          "was written).", id ?: "?", baseline ? "baseline" : "slice");
        else if (r == -ENODATA)
                log_error("Bundle %s has no samples in its %s.", id ?: "?", baseline ? "baseline" : "slice");
        else if (r == -EFBIG)
                log_error("The %s of bundle %s holds more samples than a pprof export takes.",
                          baseline ? "baseline" : "slice", id ?: "?");
        else if (r < 0)
                log_error_errno(r, "Failed to export bundle %s as pprof: %m", id ?: "?");

finish:
        if (out && out != stdout)
                fclose(out);
        if (tmp)
                (void) unlink(tmp);
        export_stats_done(&st);
        window_info_array_free(w, n_w);
        return r;
}
