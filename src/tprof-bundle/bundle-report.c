/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tprof-bundle report: report.html (src/report/report.h) of a bundle, made again from its files,
 * or of any range of the ring (--from/--to), written to -o FILE or standard output.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include "basic/log.h"
#include "basic/time-util.h"
#include "report/report.h"
#include "tprof-bundle/bundle-output.h"
#include "tprof-bundle/tprof-bundle.h"

static void help(void) {
        printf("Usage: tprof-bundle report [ID] [-o FILE]\n"
               "       tprof-bundle report --from TIME --to TIME [--ring DIR] [-o FILE]\n"
               "\n"
               "Writes report.html: one self-contained page (no network access, nothing to install) with\n"
               "the Flamescope heatmap of the slice, one lane per CPU, the log lines on the time axis, the\n"
               "flame graph of any selection (search, zoom, differential against the baseline) and the\n"
               "unusual ranking of show. Every bundle already holds one; this makes it again, or makes one\n"
               "for a range of the ring. ID (default: the newest bundle) may be any unique prefix of the id\n"
               "or short id.\n"
               "\n"
               "  -h --help                    Show this help\n"
               "  -o --output FILE             Write to FILE (replaced whole when complete) instead of\n"
               "                               standard output\n"
               "  -D --state-dir DIR           tprofd's state directory\n"
               "     --from TIME --to TIME     A range of the ring instead of a bundle (as export takes them)\n"
               "     --ring DIR                With --from/--to: this directory of windows instead of DIR/ring\n");
}

static int finish_output(FILE *out, const char *tmp, const char *path, int r) {
        if (out == stdout) {
                if (r >= 0 && fflush(stdout) != 0)
                        r = log_error_errno(SYNTHETIC_ERRNO(EIO), "Failed to write output.");
                return r;
        }
        if (r >= 0 && (fflush(out) != 0 || (tmp && fsync(fileno(out)) < 0)))
                r = log_error_errno(errno, "Failed to write '%s': %m", path);
        fclose(out);
        if (r >= 0 && tmp && rename(tmp, path) < 0)
                r = log_error_errno(errno, "Failed to rename into '%s': %m", path);
        if (r < 0 && tmp)
                (void) unlink(tmp);
        return r;
}

int verb_report(int argc, char *argv[]) {
        enum { ARG_RING = 0x100, ARG_FROM, ARG_TO };
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "state-dir", required_argument, NULL, 'D' },
                { "output", required_argument, NULL, 'o' },
                { "ring", required_argument, NULL, ARG_RING },
                { "from", required_argument, NULL, ARG_FROM },
                { "to", required_argument, NULL, ARG_TO },
                {},
        };
        _cleanup_(bundle_list_donep) BundleList l = BUNDLE_LIST_NULL;
        _cleanup_free_ char *tmp = NULL, *ring = NULL;
        _cleanup_free_ char **paths = NULL;
        const char *arg_output = NULL, *arg_ring = NULL, *arg_from = NULL, *arg_to = NULL;
        WindowInfo *w = NULL;
        size_t n = 0, n_paths = 0;
        uint64_t now = now_usec(CLOCK_REALTIME), from_usec, to_usec, from_ns = 0, to_ns = 0;
        const BundleEntry *e = NULL;
        FILE *out = stdout;
        bool unreadable = false;
        int c, r;

        opterr = 0;
        while ((c = getopt_long(argc, argv, ":hD:o:", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help();
                        return EXIT_SUCCESS;
                case 'D':
                        arg_state_dir = optarg;
                        break;
                case 'o':
                        arg_output = optarg;
                        break;
                case ARG_RING:
                        arg_ring = optarg;
                        break;
                case ARG_FROM:
                        arg_from = optarg;
                        break;
                case ARG_TO:
                        arg_to = optarg;
                        break;
                case ':':
                        log_error("Option '%s' needs an argument.", argv[optind - 1]);
                        return EX_USAGE;
                default:
                        log_error("Unknown option '%s'. See 'tprof-bundle report --help'.", argv[optind - 1]);
                        return EX_USAGE;
                }
        if (argc - optind > 1) {
                log_error("report takes at most one ID.");
                return EX_USAGE;
        }
        if ((arg_from || arg_to) && optind < argc) {
                log_error("Give either a bundle ID or --from/--to, not both.");
                return EX_USAGE;
        }
        if (!!arg_from != !!arg_to) {
                log_error("A range needs both --from and --to.");
                return EX_USAGE;
        }
        if (arg_ring && !arg_from) {
                log_error("--ring goes with --from/--to.");
                return EX_USAGE;
        }
        if (!arg_output && isatty(STDOUT_FILENO)) {
                log_error("Not writing HTML to a terminal: use -o FILE or redirect the output.");
                return EX_USAGE;
        }

        if (arg_from) {
                if (bundle_parse_time(arg_from, now, &from_usec) < 0 || bundle_parse_time(arg_to, now, &to_usec) < 0) {
                        log_error("Invalid --from/--to: expected 2026-11-21T14:30:00Z, '2026-11-21 14:30:00', @EPOCH, "
                                  "now or -5m.");
                        return EX_USAGE;
                }
                if (from_usec > to_usec) {
                        log_error("--from '%s' is after --to '%s'.", arg_from, arg_to);
                        return EX_USAGE;
                }
                if (!arg_ring) {
                        if (asprintf(&ring, "%s/ring", arg_state_dir) < 0)
                                return log_oom(), EXIT_FAILURE;
                        arg_ring = ring;
                }
                r = bundle_ring_range(arg_ring, from_usec, to_usec, &w, &n, &paths, &n_paths, &from_ns, &to_ns,
                                      /* ret_newest= */ NULL);
                if (r < 0)
                        return EXIT_FAILURE;
        } else {
                r = bundles_load(&l);
                if (r < 0)
                        return EXIT_FAILURE;
                r = bundles_resolve(&l, optind < argc ? argv[optind] : NULL);
                if (r < 0)
                        return EXIT_FAILURE;
                e = &l.entries[r];
        }

        if (arg_output) {
                out = bundle_open_output(arg_output, &tmp);
                if (!out) {
                        log_error_errno(errno, "Failed to create '%s': %m", arg_output);
                        r = -errno;
                        goto finish;
                }
        }
        if (e) {
                _cleanup_(bundle_unreadable_done) BundleUnreadable u = {};
                r = report_write_bundle(e->path, out, &u);
                if (r < 0)
                        log_error_errno_escaped(r, "Failed to make the report of '%s': %m", e->path);
                /* The report is written with what could be read; the exit status says it is short. */
                for (size_t i = 0; r >= 0 && i < u.n; i++)
                        log_error_errno_escaped(u.files[i].error, "Cannot read '%s': %m; the report leaves it out.",
                                                u.files[i].path);
                if (r >= 0 && u.n > 0)
                        unreadable = true;
        } else {
                r = report_write_range(paths, n_paths, from_ns, to_ns, out);
                if (r == -ENODATA)
                        log_error("No samples between %s and %s in '%s'.", arg_from, arg_to, arg_ring);
                else if (r < 0)
                        log_error_errno(r, "Failed to make the report of %s..%s: %m", arg_from, arg_to);
        }
        r = finish_output(out, tmp, arg_output, r);
        if (r >= 0 && unreadable)
                r = -EIO;

finish:
        window_info_array_free(w, n);
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
