/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The last section of tprof-bundle show: where the bundle's files are, and the commands that open
 * them in other viewers, as a person pastes them into a shell. Every path and id from the bundle
 * is escaped for the terminal, and quoted for the shell where it would split or expand it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "basic/alloc-util.h"
#include "basic/string-util.h"
#include "tprof-bundle/bundle-output.h"
#include "tprof-bundle/bundle-show.h"
#include "tprof-bundle/tprof-bundle.h"

/* "dir/name" as one word of a command line to paste into a shell (shell_escape_text()). */
static char *shell_path(const char *dir, const char *name) {
        _cleanup_free_ char *p = NULL;

        if (asprintf(&p, "%s/%s", dir, name) < 0)
                return NULL;
        return shell_escape_text(p);
}

void show_print_files(const Show *s) {
        static const char *const files[] = { BUNDLE_MANIFEST, BUNDLE_LOG_TEXT, BUNDLE_LOG_JSON, BUNDLE_FOLDED,
                                             BUNDLE_PERF_SCRIPT, BUNDLE_BASELINE_FOLDED, BUNDLE_NEAR_EVENT_FOLDED,
                                             BUNDLE_ACTIVITY, BUNDLE_REPORT };
        _cleanup_free_ char *report = show_bundle_file(s, BUNDLE_REPORT);
        _cleanup_free_ char *dir = text_for_terminal(s->entry->path, 0);
        char b[FORMAT_BYTES_MAX];
        const BundleUnreadableFile *windows =
                bundle_unreadable_find(&s->unreadable, s->entry->path, BUNDLE_WINDOWS_DIR);

        show_section(s, "Files");
        printf("  %s/\n", dir ?: "?");
        for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                _cleanup_free_ char *p = show_bundle_file(s, files[i]);
                if (p && access(p, F_OK) >= 0)
                        printf("    %s\n", files[i]);
        }
        if (s->has_cpu) {
                printf("    " BUNDLE_CPU_FOLDED_FMT "\n", s->cpu);
                printf("    " BUNDLE_CPU_BASELINE_FOLDED_FMT "\n", s->cpu);
        }
        if (windows)
                printf("    %s/ (cannot be read: %s)\n", BUNDLE_WINDOWS_DIR, strerror(-windows->error));
        else if (s->entry->n_windows > 0)
                printf("    %s/ (%zu windows pinned, %s, shared with the ring)\n", BUNDLE_WINDOWS_DIR,
                       s->entry->n_windows, format_bytes(b, sizeof b, s->entry->windows_bytes));

        /* Without a manifest the report and the exports cannot be made: nothing to open. */
        if (!s->m)
                return;
        /* The commands run as printed, pasted into a shell: they name the state directory this one
         * was given, and every path and id is one word, quoted when the shell would split or expand
         * it. */
        _cleanup_free_ char *sd = streq(arg_state_dir, TPROF_STATE_DIR) ? NULL : shell_escape_text(arg_state_dir);
        _cleanup_free_ char *cmd = NULL, *qid = shell_escape_text(s->entry->short_id[0] ? s->entry->short_id : s->entry->id);
        _cleanup_free_ char *qreport = shell_path(s->entry->path, BUNDLE_REPORT),
                            *qfolded = shell_path(s->entry->path, BUNDLE_FOLDED),
                            *qscript = shell_path(s->entry->path, BUNDLE_PERF_SCRIPT), *qperf = NULL, *perf = NULL;
        if (asprintf(&cmd, "tprof-bundle%s%s", sd ? " -D " : "", sd ?: "") < 0)
                cmd = NULL;
        if (asprintf(&perf, "%s.perf", s->entry->short_id[0] ? s->entry->short_id : s->entry->id) >= 0)
                qperf = shell_path("flamescope/examples", perf);
        show_section(s, "Open with");
        if (report && access(report, F_OK) >= 0)
                printf("  xdg-open %s      (heatmap, flame graphs, log: one file, works offline)\n", qreport ?: "?");
        else
                printf("  %s report %s -o report.html      (heatmap, flame graphs, log: one file)\n", cmd ?: "?",
                       qid ?: "?");
        printf("  %s export %s --format svg > flame.svg\n", cmd ?: "?", qid ?: "?");
        printf("  %s export %s --format svg --diff > diff.svg      (red: rose against the baseline)\n", cmd ?: "?",
               qid ?: "?");
        printf("  flamegraph.pl %s > flame.svg\n", qfolded ?: "?");
        _cleanup_free_ char *ps = show_bundle_file(s, BUNDLE_PERF_SCRIPT);
        if (ps && access(ps, F_OK) >= 0) {
                printf("  speedscope %s\n", qscript ?: "?");
                printf("  Flamescope: cp %s flamescope/examples/\n", qscript ?: "?");
        } else {
                /* A large slice: the perf script is made from windows/ when asked for. */
                printf("  speedscope %s\n", qfolded ?: "?");
                printf("  Flamescope: %s export %s --format perf-script > %s\n", cmd ?: "?", qid ?: "?",
                       qperf ?: "?");
        }
        printf("  TPROF_VIEWER=firefox %s open %s\n", cmd ?: "?", qid ?: "?");
}
