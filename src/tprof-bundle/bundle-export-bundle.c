/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tprof-bundle export ID: a bundle's slice in the format a viewer wants, on stdout. "folded" and
 * "perf-script" are the bundle's own stacks.folded and stacks.perf-script, copied byte for byte;
 * a bundle whose slice was too large for a perf-script file at write time
 * (BUNDLE_PERF_SCRIPT_SAMPLES_MAX) gets the same text made from its windows/ over the slice.
 * "svg" is a flame graph drawn from stacks.folded, and with --diff a differential one against
 * baseline.folded; "pprof" is cut again from the bundle's windows (bundle-export-pprof.c), with
 * --baseline for the baseline. With --by, --unit or --cgroup the slice is cut again from the
 * bundle's own windows/ (which keep every sample's cgroup) over the manifest's slice bounds, through
 * the view. Cutting other ranges (--from/--to) needs the ring and is not done from a bundle.
 */
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include <errno.h>

#include "basic/alloc-util.h"
#include "basic/fileio.h"
#include "basic/log.h"
#include "basic/macro.h"
#include "basic/string-util.h"
#include "store/store-export.h"
#include "store/store-slice.h"
#include "tprof-bundle/bundle-output.h"
#include "tprof-bundle/bundle-svg.h"
#include "tprof-bundle/tprof-bundle.h"

static const char *arg_format = NULL;
static bool arg_diff = false;
static bool arg_baseline = false;
static const char *arg_output = NULL;
static ExportView arg_view = {};
static bool arg_have_view = false;

static void help(void) {
        printf("Usage: tprof-bundle export ID --format FORMAT [--diff] [--baseline] [-o FILE]\n"
               "                          [--by WHAT] [--unit NAME] [--cgroup PATH]\n"
               "\n"
               "Writes a bundle's slice to stdout. ID may be any unique prefix of the id or short id.\n"
               "\n"
               "  -h --help              Show this help\n"
               "  -f --format=FORMAT     folded (stacks.folded), perf-script (stacks.perf-script)\n"
               "                         svg (a flame graph of stacks.folded) or pprof (a gzipped\n"
               "                         profile.proto Profile for go tool pprof, Pyroscope, Parca)\n"
               "     --diff              With svg: a differential flame graph against baseline.folded\n"
               "                         (red: larger share than in the baseline, blue: smaller)\n"
               "     --baseline          With pprof: export the bundle's baseline instead of its slice,\n"
               "                         for a backend's diff (go tool pprof -normalize -diff_base)\n"
               "  -o --output FILE       With pprof: write to FILE (replaced whole when complete)\n"
               "     --by WHAT           folded, perf-script: root stacks by unit, container or pod\n"
               "     --unit NAME         folded, perf-script: only samples of this systemd unit\n"
               "     --cgroup PATH       folded, perf-script: only samples of this cgroup or below it\n");
}

static int parse_argv(int argc, char *argv[]) {
        enum { ARG_DIFF = 0x100, ARG_FROM, ARG_TO, ARG_BASELINE, ARG_BY, ARG_UNIT, ARG_CGROUP };
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "format", required_argument, NULL, 'f' },
                { "diff", no_argument, NULL, ARG_DIFF },
                { "baseline", no_argument, NULL, ARG_BASELINE },
                { "output", required_argument, NULL, 'o' },
                { "from", required_argument, NULL, ARG_FROM },
                { "to", required_argument, NULL, ARG_TO },
                { "by", required_argument, NULL, ARG_BY },
                { "unit", required_argument, NULL, ARG_UNIT },
                { "cgroup", required_argument, NULL, ARG_CGROUP },
                {},
        };
        int c;

        opterr = 0;
        while ((c = getopt_long(argc, argv, ":hf:o:", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case 'f':
                        if (!streq(optarg, "folded") && !streq(optarg, "perf-script") && !streq(optarg, "svg") &&
                            !streq(optarg, "pprof"))
                                return log_error_errno(SYNTHETIC_ERRNO(EINVAL),
                                                       "Unknown --format '%s' for a bundle; use folded, perf-script, svg or pprof.",
                                                       optarg);
                        arg_format = optarg;
                        break;
                case ARG_DIFF:
                        arg_diff = true;
                        break;
                case ARG_BASELINE:
                        arg_baseline = true;
                        break;
                case 'o':
                        arg_output = optarg;
                        break;
                case ARG_BY:
                case ARG_UNIT:
                case ARG_CGROUP:
                        if (export_view_parse_option(&arg_view,
                                                     c == ARG_BY ? "--by" : c == ARG_UNIT ? "--unit" : "--cgroup",
                                                     optarg) < 0)
                                return -EINVAL;
                        arg_have_view = true;
                        break;
                case ARG_FROM:
                case ARG_TO:
                        return log_error_errno(SYNTHETIC_ERRNO(EOPNOTSUPP),
                                               "--from/--to do not apply to a bundle: it holds its "
                                               "slice only. Export a range of the ring without an ID instead.");
                case ':':
                        return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "Option '%s' needs an argument.",
                                               argv[optind - 1]);
                default:
                        return log_error_errno(SYNTHETIC_ERRNO(EINVAL),
                                               "Unknown option '%s'. See 'tprof-bundle export --help'.",
                                               argv[optind - 1]);
                }
        }
        if (!arg_format)
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "export needs --format folded|perf-script|svg|pprof.");
        if (arg_have_view && (streq(arg_format, "svg") || streq(arg_format, "pprof")))
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "--by, --unit and --cgroup work with folded and perf-script.");
        if (arg_diff && !streq(arg_format, "svg"))
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "--diff works with --format svg only.");
        if (arg_baseline && !streq(arg_format, "pprof"))
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "--baseline works with --format pprof only.");
        if (arg_output && !streq(arg_format, "pprof"))
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "-o works with --format pprof only; redirect the output.");
        if (argc - optind != 1)
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "export of a bundle takes exactly one ID.");
        return 1;
}

static int copy_file(const char *path) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        char buf[64 * 1024];
        ssize_t n;

        if (fd < 0)
                return -errno;
        fflush(stdout);
        while ((n = read(fd, buf, sizeof buf)) != 0) {
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                int r = loop_write(STDOUT_FILENO, buf, (size_t) n);
                if (r < 0)
                        return r;
        }
        return 0;
}

int bundle_write_svg(const BundleEntry *e, bool diff, FILE *out) {
        _cleanup_(folded_donep) Folded slice = FOLDED_NULL, baseline = FOLDED_NULL;
        _cleanup_free_ char *p1 = NULL, *p2 = NULL, *title = NULL;
        int r;

        if (asprintf(&p1, "%s/%s", e->path, BUNDLE_FOLDED) < 0 ||
            asprintf(&p2, "%s/%s", e->path, BUNDLE_BASELINE_FOLDED) < 0)
                return log_oom();
        r = folded_load(p1, &slice);
        if (r < 0)
                return log_error_errno_escaped(r, "Failed to read '%s': %m", p1);
        if (diff) {
                r = folded_load(p2, &baseline);
                if (r < 0)
                        return log_error_errno_escaped(r, "Failed to read '%s': %m", p2);
        }
        if (asprintf(&title, "%s%s: %s", diff ? "Differential flame graph of " : "Flame graph of ", e->id,
                     e->manifest && e->manifest->event_message ? e->manifest->event_message : "") < 0)
                return log_oom();
        r = flamegraph_write_svg(out, &slice, diff ? &baseline : NULL, title);
        if (r < 0)
                return log_error_errno(r, "Failed to write the flame graph: %m");
        return 0;
}

void bundle_export_warn_short(const BundleEntry *e, const SliceStats *st, uint64_t skipped_other_event, uint64_t want,
                              const char *what) {
        _cleanup_free_ char *dir = NULL, *q = NULL;

        export_warn_skipped(st, skipped_other_event);
        if (skipped_other_event > 0 || st->samples >= want)
                return;
        /* The command as one to paste: the path quoted for the shell, escaped for the terminal. */
        if (asprintf(&dir, "%s/%s", e->path, BUNDLE_WINDOWS_DIR) >= 0)
                q = shell_escape_text(dir);
        log_warning("The export holds %llu of the %llu samples the manifest counts in the %s: windows of "
                    "the bundle are missing or damaged (tprof-bundle windows --ring %s --verify).",
                    (unsigned long long) st->samples, (unsigned long long) want, what, q ?: "?");
}

int bundle_readable_windows(const BundleEntry *e, WindowInfo **ret_w, size_t *ret_n, char ***ret_paths,
                            size_t *ret_n_paths) {
        _cleanup_free_ char *dir = NULL;
        WindowInfo *w = NULL;
        char **paths;
        size_t n = 0, k = 0;
        int r;

        if (asprintf(&dir, "%s/%s", e->path, BUNDLE_WINDOWS_DIR) < 0)
                return -ENOMEM;
        r = ring_list_windows(dir, /* verify= */ false, &w, &n);
        if (r < 0)
                return r;
        paths = calloc(n + 1, sizeof(char *));
        if (!paths) {
                window_info_array_free(w, n);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++) {
                if (w[i].error < 0) {
                        log_warning_errno_escaped(w[i].error, "Skipping unreadable window '%s': %m", w[i].path);
                        continue;
                }
                paths[k++] = w[i].path;
        }
        *ret_w = w;
        *ret_n = n;
        *ret_paths = paths;
        *ret_n_paths = k;
        return 0;
}

int bundle_windows_error(const BundleEntry *e, int r) {
        _cleanup_free_ char *dir = NULL, *d = NULL;

        if (asprintf(&dir, "%s/%s", e->path, BUNDLE_WINDOWS_DIR) >= 0)
                d = text_for_terminal(dir, 0);
        return log_error_errno(r, "Failed to list the windows of the bundle in '%s': %m", d ?: "?");
}

/* The bundle's slice, cut again from its windows/ through the view. */
static int export_bundle_view(const BundleEntry *e) {
        _cleanup_free_ char **paths = NULL;
        _cleanup_free_ char *id = text_for_terminal(e->id, 0);
        WindowInfo *w = NULL;
        ExportStats st = {};
        size_t n = 0, n_paths = 0;
        int r;

        if (!e->manifest || !e->manifest->has_slice)
                return log_error_errno(SYNTHETIC_ERRNO(ENODATA), "Bundle %s has no slice to cut.", id ?: "?");
        r = bundle_readable_windows(e, &w, &n, &paths, &n_paths);
        if (r < 0)
                return bundle_windows_error(e, r);
        if (streq(arg_format, "folded"))
                r = export_folded_view(paths, n_paths, e->manifest->slice_from_perf_ns, e->manifest->slice_to_perf_ns,
                                       &arg_view, stdout, &st);
        else
                r = export_perf_script_view(paths, n_paths, e->manifest->slice_from_perf_ns,
                                            e->manifest->slice_to_perf_ns, e->manifest->profile_event, &arg_view,
                                            stdout, &st);
        /* A filter leaves samples out by design: the count is judged without one only. */
        if (r >= 0 || r == -ENODATA)
                bundle_export_warn_short(e, &st.slice, st.skipped_other_event,
                                         arg_view.unit || arg_view.cgroup ? 0 : e->manifest->slice_samples, "slice");
        export_stats_done(&st);
        window_info_array_free(w, n);
        if (r == -ENODATA && n_paths == 0)
                return log_error_errno(r, "Bundle %s has no readable windows left to cut its slice from (removed or "
                                       "damaged since it was written).", id ?: "?");
        if (r == -ENODATA)
                return log_error_errno(r, "No sample of bundle %s passes the filter.", id ?: "?");
        if (r < 0)
                return log_error_errno(r, "Failed to export bundle %s: %m", id ?: "?");
        return 0;
}

bool export_names_bundle(int argc, char *argv[]) {
        /* Options of either export that take a separate value, which must not be taken for an ID. */
        static const char *const with_value[] = { "--format", "-f", "--from", "--to", "--output", "-o",
                                                  "--since", "--until", "--pid", "--cpu", "--host", "--ring",
                                                  "--state-dir", "-D", "--by", "--unit", "--cgroup" };

        for (int i = 1; i < argc; i++) {
                if (streq(argv[i], "--"))
                        return i + 1 < argc;
                if (argv[i][0] != '-')
                        return true;
                for (size_t k = 0; k < ELEMENTSOF(with_value); k++)
                        if (streq(argv[i], with_value[k])) {
                                i++;
                                break;
                        }
        }
        return false;
}

/* The slice as perf script from the bundle's own windows/ (hard links that outlive the ring's). */
static int perf_script_from_windows(const BundleEntry *e) {
        _cleanup_free_ char **paths = NULL;
        WindowInfo *w = NULL;
        ExportStats st = {};
        size_t n = 0, n_paths = 0;
        int r;

        if (!e->manifest || !e->manifest->has_slice)
                return log_error_errno(SYNTHETIC_ERRNO(ENODATA), "The bundle has no perf script and its manifest no slice.");
        r = bundle_readable_windows(e, &w, &n, &paths, &n_paths);
        if (r < 0)
                return log_error_errno(r, "The bundle has no perf script, and no windows to make one from: %m");
        if (n_paths == 0) {
                window_info_array_free(w, n);
                return log_error_errno(SYNTHETIC_ERRNO(ENODATA), "The bundle has no perf script and no readable windows.");
        }
        r = export_perf_script(paths, n_paths, e->manifest->slice_from_perf_ns, e->manifest->slice_to_perf_ns, NULL,
                               stdout, &st);
        if (r >= 0 || r == -ENODATA)
                bundle_export_warn_short(e, &st.slice, st.skipped_other_event, e->manifest->slice_samples, "slice");
        if (r == -ENODATA)
                r = 0;
        if (r < 0)
                log_error_errno(r, "Failed to make the perf script from the bundle's windows: %m");
        export_stats_done(&st);
        window_info_array_free(w, n);
        return r;
}

int bundle_export_bundle(int argc, char *argv[]) {
        _cleanup_(bundle_list_donep) BundleList l = BUNDLE_LIST_NULL;
        _cleanup_free_ char *path = NULL;
        const BundleEntry *e;
        int r;

        r = parse_argv(argc, argv);
        if (r <= 0)
                return r < 0 ? EX_USAGE : EXIT_SUCCESS;
        r = bundles_load(&l);
        if (r < 0)
                return EXIT_FAILURE;
        r = bundles_resolve(&l, argv[optind]);
        if (r < 0)
                return EXIT_FAILURE;
        e = &l.entries[r];

        if (streq(arg_format, "pprof"))
                return bundle_export_pprof(e, arg_baseline, arg_output) < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
        if (streq(arg_format, "svg")) {
                r = bundle_write_svg(e, arg_diff, stdout);
                if (r >= 0 && fflush(stdout) != 0)
                        r = log_error_errno(SYNTHETIC_ERRNO(EIO), "Failed to write output.");
                return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
        }
        if (arg_have_view)
                return export_bundle_view(e) < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
        if (asprintf(&path, "%s/%s", e->path, streq(arg_format, "folded") ? BUNDLE_FOLDED : BUNDLE_PERF_SCRIPT) < 0)
                return log_oom(), EXIT_FAILURE;
        r = copy_file(path);
        if (r == -ENOENT && streq(arg_format, "perf-script")) {
                r = perf_script_from_windows(e);
                if (r >= 0 && fflush(stdout) != 0)
                        r = log_error_errno(SYNTHETIC_ERRNO(EIO), "Failed to write output.");
                return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
        }
        if (r < 0) {
                log_error_errno_escaped(r, "Failed to copy '%s': %m", path);
                return EXIT_FAILURE;
        }
        return EXIT_SUCCESS;
}
