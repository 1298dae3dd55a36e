/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tprof-bundle export: cuts [--from, --to] out of the ring (or any directory of windows) and
 * writes it as folded stacks, perf-script text or a gzipped pprof Profile. Times are wall-clock, as a person types them;
 * they are converted to the perf clock through the clock mapping recorded in the windows, so only
 * windows of one boot take part (the newest boot the range touches).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include "basic/log.h"
#include "basic/macro.h"
#include "basic/string-util.h"
#include "basic/time-util.h"
#include "pprof/pprof-export.h"
#include "store/store-export.h"
#include "store/store-slice.h"
#include "tprof-bundle/bundle-output.h"
#include "tprof-bundle/tprof-bundle.h"

static void help(void) {
        printf("Usage: tprof-bundle export --from TIME --to TIME [OPTIONS...]\n"
               "       tprof-bundle export ID --format FORMAT [OPTIONS...]   (a bundle's slice: svg,\n"
               "                               --diff, --baseline too; see 'tprof-bundle export ID --help')\n"
               "\n"
               "Cuts a time range out of the ring and writes it as folded stacks (one line per\n"
               "stack, counting samples) or as perf script text (Flamescope, speedscope,\n"
               "stackcollapse-perf.pl), or as a gzipped pprof profile (go tool pprof, Pyroscope).\n"
               "\n"
               "  -h --help                    Show this help\n"
               "  -D --state-dir DIR           tprofd's state directory (the ring is DIR/ring)\n"
               "     --ring DIR                Read this directory of windows instead (e.g. a bundle's windows/)\n"
               "     --from TIME --to TIME     The range, inclusive\n"
               "  -f --format FORMAT           folded (default), perf-script or pprof\n"
               "     --by WHAT                 Root stacks by unit, container or pod instead of the process\n"
               "     --unit NAME               Only samples of this systemd unit (kubelet.service)\n"
               "     --cgroup PATH             Only samples of this cgroup or below it (/system.slice)\n"
               "  -o --output FILE             Write to FILE instead of standard output: a regular file is\n"
               "                               replaced whole when complete, a device or FIFO written into\n"
               "\n"
               "TIME is UTC \"2026-11-21T14:30:00Z\" (fractions allowed), local time\n"
               "\"2026-11-21 14:30:00\", \"@EPOCH-SECONDS\", \"now\", or relative to now: \"-5m\", \"-1h30m\".\n"
               "Exit status 1 when the range holds no sample.\n");
}

int export_view_parse_option(ExportView *v, const char *option, const char *value) {
        if (streq(option, "--by")) {
                v->by = cgroup_by_from_string(value);
                if (v->by < 0)
                        return log_error_errno(SYNTHETIC_ERRNO(EINVAL),
                                               "Invalid --by '%s': expected process, unit, container or pod.", value);
        } else if (streq(option, "--unit")) {
                if (isempty(value))
                        return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "--unit needs a unit name.");
                v->unit = value;
        } else {
                if (value[0] != '/')
                        return log_error_errno(SYNTHETIC_ERRNO(EINVAL),
                                               "Invalid --cgroup '%s': expected a path from the cgroup root, like /system.slice.",
                                               value);
                v->cgroup = value;
        }
        return 0;
}

/* Parses TIME as documented in help() into CLOCK_REALTIME microseconds. */
int bundle_parse_time(const char *s, uint64_t now_realtime_usec, uint64_t *ret_realtime_usec) {
        struct tm tm = {};
        uint64_t usec = 0, frac = 0, digits = 0;
        const char *p;
        bool utc = false;
        time_t t;
        int r;

        if (isempty(s))
                return -EINVAL;
        if (streq(s, "now")) {
                *ret_realtime_usec = now_realtime_usec;
                return 0;
        }
        if (s[0] == '-') {
                r = parse_duration(s + 1, &usec);
                if (r < 0)
                        return r;
                if (usec > now_realtime_usec)
                        return -ERANGE;
                *ret_realtime_usec = now_realtime_usec - usec;
                return 0;
        }
        if (s[0] == '@') {
                char *end;
                double v;
                errno = 0;
                v = strtod(s + 1, &end);
                if (errno != 0 || *end != '\0' || end == s + 1 || v < 0)
                        return -EINVAL;
                *ret_realtime_usec = (uint64_t) (v * USEC_PER_SEC);
                return 0;
        }

        p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
        if (!p)
                p = strptime(s, "%Y-%m-%d %H:%M:%S", &tm);
        if (!p) {
                memset(&tm, 0, sizeof tm);
                p = strptime(s, "%Y-%m-%d %H:%M", &tm);
        }
        if (!p)
                return -EINVAL;
        if (*p == '.') {
                for (p++; *p >= '0' && *p <= '9'; p++)
                        if (digits < 6) {
                                frac = frac * 10 + (uint64_t) (*p - '0');
                                digits++;
                        }
                if (digits == 0)
                        return -EINVAL;
                while (digits++ < 6)
                        frac *= 10;
        }
        if (*p == 'Z') {
                utc = true;
                p++;
        }
        if (*p != '\0')
                return -EINVAL;
        tm.tm_isdst = -1;
        t = utc ? timegm(&tm) : mktime(&tm);
        if (t == (time_t) -1 || t < 0)
                return -ERANGE;
        *ret_realtime_usec = (uint64_t) t * USEC_PER_SEC + frac;
        return 0;
}

typedef enum ExportFormat {
        EXPORT_FOLDED,
        EXPORT_PERF_SCRIPT,
        EXPORT_PPROF,
} ExportFormat;

/* Opens a temporary file next to path; the caller renames it into place once complete. */
static FILE *open_temporary(const char *path, char **ret_tmp) {
        _cleanup_free_ char *tmp = NULL;
        int fd;
        FILE *f;

        if (asprintf(&tmp, "%s.tmp-XXXXXX", path) < 0)
                return NULL;
        fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                return NULL;
        (void) fchmod(fd, 0640); /* stack traces are sensitive (docs/design.md) */
        f = fdopen(fd, "w");
        if (!f) {
                (void) unlink(tmp);
                close(fd);
                return NULL;
        }
        *ret_tmp = TAKE_PTR(tmp);
        return f;
}

/*
 * Where -o writes. A new or regular file is replaced whole, through a temporary file, so a reader
 * never sees half an export. Anything else that exists (/dev/null, a FIFO, /dev/stdout) is written
 * in place: renaming onto it would replace the device or FIFO with a regular file. *ret_tmp is
 * NULL then.
 */
FILE *bundle_open_output(const char *path, char **ret_tmp) {
        struct stat st;

        if (stat(path, &st) >= 0 && !S_ISREG(st.st_mode)) {
                *ret_tmp = NULL;
                return fopen(path, "we");
        }
        return open_temporary(path, ret_tmp);
}

int bundle_ring_range(const char *arg_ring, uint64_t from_usec, uint64_t to_usec, WindowInfo **ret_w, size_t *ret_nw,
                      char ***ret_paths, size_t *ret_n_paths, uint64_t *ret_from_ns, uint64_t *ret_to_ns,
                      const WindowInfo **ret_newest) {
        _cleanup_free_ char **paths = NULL;
        WindowInfo *w = NULL;
        const WindowInfo *newest = NULL;
        size_t n = 0, n_paths = 0;
        unsigned other_boot = 0;
        uint64_t from_ns, to_ns;
        int r;

        _cleanup_free_ char *ring = text_for_terminal(arg_ring, 0);

        r = ring_list_windows(arg_ring, /* verify= */ false, &w, &n);
        if (r < 0)
                return log_error_errno(r, "Failed to list windows in '%s': %m", ring ?: "?");
        paths = calloc(n ?: 1, sizeof(char *));
        if (!paths) {
                r = log_oom();
                goto fail;
        }

        /* The newest window the range touches decides the boot and the clock mapping. */
        for (size_t i = 0; i < n; i++) {
                if (w[i].error < 0) {
                        log_warning_errno_escaped(w[i].error, "Skipping unreadable window '%s': %m", w[i].path);
                        continue;
                }
                if (w[i].samples == 0 || w[i].start_realtime_usec > to_usec || w[i].end_realtime_usec < from_usec)
                        continue;
                if (!newest || w[i].end_realtime_usec > newest->end_realtime_usec)
                        newest = &w[i];
        }
        if (!newest) {
                char a[64], b[64];
                log_error("No window in '%s' holds samples between %s and %s.", ring ?: "?",
                          bundle_format_utc_seconds(a, sizeof a, from_usec), bundle_format_utc_seconds(b, sizeof b, to_usec));
                goto fail;
        }
        for (size_t i = 0; i < n; i++) {
                if (w[i].error < 0 || w[i].samples == 0)
                        continue;
                if (!streq(w[i].header.info.boot_id, newest->header.info.boot_id)) {
                        if (w[i].start_realtime_usec <= to_usec && w[i].end_realtime_usec >= from_usec)
                                other_boot++;
                        continue;
                }
                paths[n_paths++] = w[i].path;
        }
        if (other_boot > 0)
                log_warning("Leaving out %u window%s of an earlier boot: perf clock times of two boots cannot be "
                            "merged. Narrow the range to export them.", other_boot, other_boot == 1 ? "" : "s");
        from_ns = clock_map_realtime_to_perf(&newest->header.info.clock, from_usec * NSEC_PER_USEC);
        to_ns = clock_map_realtime_to_perf(&newest->header.info.clock,
                                           to_usec > UINT64_MAX / NSEC_PER_USEC - 1 ? UINT64_MAX : to_usec * NSEC_PER_USEC + 999);

        *ret_from_ns = from_ns;
        *ret_to_ns = to_ns;
        *ret_w = w;
        *ret_nw = n;
        *ret_paths = TAKE_PTR(paths);
        *ret_n_paths = n_paths;
        if (ret_newest)
                *ret_newest = newest;
        return 0;
fail:
        window_info_array_free(w, n);
        return r < 0 ? r : -ENODATA;
}

void export_warn_skipped(const SliceStats *st, uint64_t skipped_other_event) {
        if (st->corrupt_chunks > 0)
                log_warning("Skipped %u damaged chunk%s; the first is in '%s' at byte offset %llu.", st->corrupt_chunks,
                            st->corrupt_chunks == 1 ? "" : "s", st->corrupt_path ?: "?",
                            (unsigned long long) st->corrupt_offset);
        if (skipped_other_event > 0)
                log_warning("Left out up to %llu samples recorded with another event (one event per file).",
                            (unsigned long long) skipped_other_event);
}

int verb_export(int argc, char *argv[]) {
        enum { ARG_RING = 0x100, ARG_FROM, ARG_TO, ARG_BY, ARG_UNIT, ARG_CGROUP };
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "state-dir", required_argument, NULL, 'D' },
                { "ring", required_argument, NULL, ARG_RING },
                { "from", required_argument, NULL, ARG_FROM },
                { "to", required_argument, NULL, ARG_TO },
                { "format", required_argument, NULL, 'f' },
                { "output", required_argument, NULL, 'o' },
                { "by", required_argument, NULL, ARG_BY },
                { "unit", required_argument, NULL, ARG_UNIT },
                { "cgroup", required_argument, NULL, ARG_CGROUP },
                {},
        };
        ExportView view = {};
        _cleanup_free_ char *ring = NULL, *tmp = NULL;
        _cleanup_free_ char **paths = NULL;
        const char *arg_ring = NULL, *arg_from = NULL, *arg_to = NULL, *arg_output = NULL;
        ExportFormat format = EXPORT_FOLDED;
        uint64_t now = now_usec(CLOCK_REALTIME), from_usec, to_usec, from_ns, to_ns;
        WindowInfo *w = NULL;
        const WindowInfo *newest = NULL;
        size_t n = 0, n_paths = 0;
        ExportStats st = {};
        FILE *out = stdout;
        int c, r, ret = EXIT_FAILURE;

        opterr = 0;
        while ((c = getopt_long(argc, argv, ":hD:f:o:", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help();
                        return EXIT_SUCCESS;
                case 'D':
                        arg_state_dir = optarg;
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
                case 'f':
                        if (streq(optarg, "folded"))
                                format = EXPORT_FOLDED;
                        else if (streq(optarg, "perf-script"))
                                format = EXPORT_PERF_SCRIPT;
                        else if (streq(optarg, "pprof"))
                                format = EXPORT_PPROF;
                        else {
                                log_error("Invalid --format '%s': expected folded, perf-script or pprof.", optarg);
                                return EX_USAGE;
                        }
                        break;
                case 'o':
                        arg_output = optarg;
                        break;
                case ARG_BY:
                case ARG_UNIT:
                case ARG_CGROUP:
                        r = export_view_parse_option(&view, c == ARG_BY ? "--by" : c == ARG_UNIT ? "--unit" : "--cgroup",
                                                     optarg);
                        if (r < 0)
                                return EX_USAGE;
                        break;
                case ':':
                        log_error("Option '%s' needs an argument.", argv[optind - 1]);
                        return EX_USAGE;
                default:
                        log_error("Unknown option '%s'. See 'tprof-bundle export --help'.", argv[optind - 1]);
                        return EX_USAGE;
                }
        if (optind < argc) {
                log_error("Unexpected argument '%s'. See 'tprof-bundle export --help'.", argv[optind]);
                return EX_USAGE;
        }
        if (format == EXPORT_PPROF && (view.by != CGROUP_BY_PROCESS || view.unit || view.cgroup)) {
                log_error("--by, --unit and --cgroup work with folded and perf-script.");
                return EX_USAGE;
        }
        if (!arg_from || !arg_to) {
                log_error("Both --from and --to are needed. See 'tprof-bundle export --help'.");
                return EX_USAGE;
        }
        if (bundle_parse_time(arg_from, now, &from_usec) < 0) {
                log_error("Invalid --from '%s': expected 2026-11-21T14:30:00Z, '2026-11-21 14:30:00', @EPOCH, now or -5m.",
                          arg_from);
                return EX_USAGE;
        }
        if (bundle_parse_time(arg_to, now, &to_usec) < 0) {
                log_error("Invalid --to '%s': expected 2026-11-21T14:30:00Z, '2026-11-21 14:30:00', @EPOCH, now or -5m.",
                          arg_to);
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

        r = bundle_ring_range(arg_ring, from_usec, to_usec, &w, &n, &paths, &n_paths, &from_ns, &to_ns, &newest);
        if (r < 0)
                goto finish;

        if (format == EXPORT_PPROF && !arg_output && isatty(STDOUT_FILENO)) {
                log_error("A pprof profile is binary: use -o FILE, or redirect standard output.");
                goto finish;
        }
        if (arg_output) {
                out = bundle_open_output(arg_output, &tmp);
                if (!out) {
                        log_error_errno(errno, "Failed to create '%s': %m", arg_output);
                        goto finish;
                }
        }
        if (format == EXPORT_FOLDED)
                r = export_folded_view(paths, n_paths, from_ns, to_ns, &view, out, &st);
        else if (format == EXPORT_PERF_SCRIPT)
                r = export_perf_script_view(paths, n_paths, from_ns, to_ns, NULL, &view, out, &st);
        else {
                char a[64], b[64];
                _cleanup_free_ char *comment = NULL;
                PprofMeta meta = { .host = newest->header.info.host, .kind = "range" };
                if (asprintf(&comment, "tprof ring range %s .. %s, host %s, kernel %s",
                             bundle_format_utc_seconds(a, sizeof a, from_usec), bundle_format_utc_seconds(b, sizeof b, to_usec),
                             newest->header.info.host ?: "n/a", newest->header.info.kernel_release ?: "n/a") < 0) {
                        log_oom();
                        goto finish;
                }
                meta.comments[0] = comment;
                r = export_pprof(paths, n_paths, from_ns, to_ns, &meta, out, &st);
                if (r == -EFBIG)
                        log_error("More samples in range than a pprof export takes; narrow the range.");
        }
        if (r >= 0 && out != stdout) {
                r = export_commit_output(out, tmp, arg_output);
                if (r >= 0)
                        tmp = mfree(tmp);
        }
        export_warn_skipped(&st.slice, st.skipped_other_event);
        if (r == -ENODATA) {
                log_error("No samples between %s and %s in '%s'.", arg_from, arg_to, arg_ring);
                goto finish;
        }
        if (r < 0) {
                log_error_errno(r, "Failed to export %s..%s from '%s': %m", arg_from, arg_to, arg_ring);
                goto finish;
        }
        if (format == EXPORT_PERF_SCRIPT && st.slice.samples < 2)
                log_warning("Only one sample in range: Flamescope needs at least two.");
        if (st.slice.lost > 0)
                log_notice("The kernel dropped %llu samples in the chunks of this range.",
                           (unsigned long long) st.slice.lost);
        ret = EXIT_SUCCESS;

finish:
        if (out && out != stdout)
                fclose(out);
        if (tmp)
                (void) unlink(tmp);
        export_stats_done(&st);
        window_info_array_free(w, n);
        return ret;
}
