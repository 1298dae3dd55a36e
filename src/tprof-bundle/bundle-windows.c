/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tprof-bundle windows: the windows of the ring (or of any directory of windows, such as a
 * bundle's windows/), one line each with the time span it holds, its samples, lost samples, size
 * and state, then the total coverage and its gaps.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>

#include "basic/parse-util.h"
#include "basic/log.h"
#include "basic/macro.h"
#include "basic/string-util.h"
#include "basic/time-util.h"
#include "store/store-slice.h"
#include "tprof-bundle/bundle-output.h"
#include "tprof-bundle/tprof-bundle.h"

/* A gap shorter than this between two windows is the normal seam between them, not lost coverage. */
#define COVERAGE_GAP_USEC (2 * USEC_PER_SEC)

static void help(void) {
        printf("Usage: tprof-bundle windows [OPTIONS...]\n"
               "\n"
               "Lists the windows of the ring: the time each holds (UTC), samples, lost samples,\n"
               "size and state, then the total coverage.\n"
               "\n"
               "  -h --help            Show this help\n"
               "  -D --state-dir DIR   tprofd's state directory (the ring is DIR/ring)\n"
               "     --ring DIR        List this directory of windows instead (e.g. a bundle's windows/)\n"
               "     --verify          Check every chunk's checksum (reads the whole files)\n");
}

const char *bundle_format_utc_seconds(char *buf, size_t l, uint64_t realtime_usec) {
        time_t t = (time_t) (realtime_usec / USEC_PER_SEC);
        struct tm tm;

        if (!gmtime_r(&t, &tm) || strftime(buf, l, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
                snprintf(buf, l, "@%llu", (unsigned long long) (realtime_usec / USEC_PER_SEC));
        return buf;
}

static int cmp_by_start(const void *a, const void *b) {
        const WindowInfo *x = a, *y = b;
        if (x->start_realtime_usec != y->start_realtime_usec)
                return x->start_realtime_usec < y->start_realtime_usec ? -1 : 1;
        return strcmp(x->name, y->name);
}

int verb_windows(int argc, char *argv[]) {
        enum { ARG_RING = 0x100, ARG_VERIFY };
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "state-dir", required_argument, NULL, 'D' },
                { "ring", required_argument, NULL, ARG_RING },
                { "verify", no_argument, NULL, ARG_VERIFY },
                {},
        };
        _cleanup_free_ char *ring = NULL, *ring_e = NULL;
        const char *arg_ring = NULL;
        bool verify = false;
        WindowInfo *w = NULL;
        size_t n = 0;
        uint64_t samples = 0, lost = 0, bytes = 0, covered = 0, span_start = 0, span_end = 0, cur_start = 0,
                 cur_end = 0;
        unsigned gaps = 0, problems = 0, unreadable = 0;
        bool any_data = false;
        int c, r;

        opterr = 0;
        while ((c = getopt_long(argc, argv, ":hD:", options, NULL)) >= 0)
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
                case ARG_VERIFY:
                        verify = true;
                        break;
                case ':':
                        log_error("Option '%s' needs an argument.", argv[optind - 1]);
                        return EX_USAGE;
                default:
                        log_error("Unknown option '%s'. See 'tprof-bundle windows --help'.", argv[optind - 1]);
                        return EX_USAGE;
                }
        if (optind < argc) {
                log_error("Unexpected argument '%s'. See 'tprof-bundle windows --help'.", argv[optind]);
                return EX_USAGE;
        }
        if (!arg_ring) {
                if (asprintf(&ring, "%s/ring", arg_state_dir) < 0)
                        return log_oom(), EXIT_FAILURE;
                arg_ring = ring;
        }

        ring_e = text_for_terminal(arg_ring, 0);
        r = ring_list_windows(arg_ring, verify, &w, &n);
        if (r == -ENOENT) {
                log_error("No ring at '%s': has tprofd run with this state directory?", ring_e ?: "?");
                return EXIT_FAILURE;
        }
        if (r < 0) {
                log_error_errno(r, "Failed to list windows in '%s': %m", ring_e ?: "?");
                return EXIT_FAILURE;
        }
        if (n == 0) {
                log_info("No windows in '%s'.", ring_e ?: "?");
                return EXIT_FAILURE;
        }
        qsort(w, n, sizeof(WindowInfo), cmp_by_start);

        printf("%-44s %-20s %-20s %9s %7s %8s  %s\n", "WINDOW", "FROM (UTC)", "TO (UTC)", "SAMPLES", "LOST", "SIZE",
               "STATE");
        for (size_t i = 0; i < n; i++) {
                char from[64], to[64], size[32];
                _cleanup_strbuf_ StrBuf state = STRBUF_NULL;
                _cleanup_free_ char *name = escape_text(w[i].name, strlen(w[i].name));

                format_bytes(size, sizeof size, w[i].bytes);
                if (w[i].error < 0) {
                        printf("%-44s %-20s %-20s %9s %7s %8s  unreadable: %s\n", name ?: "?", "-", "-", "-", "-", size,
                               strerror(-w[i].error));
                        unreadable++;
                        continue;
                }
                if (w[i].partial)
                        (void) strbuf_append(&state, "open");
                if (w[i].pinned)
                        (void) strbuf_appendf(&state, "%spinned", state.len ? ", " : "");
                if (w[i].corrupt) {
                        (void) strbuf_appendf(&state, "%scorrupt: %u chunk%s, first at byte %llu", state.len ? ", " : "",
                                              w[i].corrupt_chunks, w[i].corrupt_chunks == 1 ? "" : "s",
                                              (unsigned long long) w[i].first_corrupt_offset);
                        problems++;
                }
                if (w[i].truncated && !w[i].partial)
                        (void) strbuf_appendf(&state, "%struncated", state.len ? ", " : "");
                if (w[i].samples == 0)
                        (void) strbuf_appendf(&state, "%sempty", state.len ? ", " : "");
                printf("%-44s %-20s %-20s %9llu %7llu %8s  %s\n", name ?: "?",
                       bundle_format_utc_seconds(from, sizeof from, w[i].start_realtime_usec),
                       bundle_format_utc_seconds(to, sizeof to, w[i].end_realtime_usec),
                       (unsigned long long) w[i].samples, (unsigned long long) w[i].lost, size,
                       state.len ? state.data : "-");
                samples += w[i].samples;
                lost += w[i].lost;
                bytes += w[i].bytes;
                if (w[i].samples == 0)
                        continue;

                /* Coverage: the union of the windows' sample spans, seams under COVERAGE_GAP_USEC ignored. */
                if (!any_data) {
                        span_start = cur_start = w[i].start_realtime_usec;
                        cur_end = w[i].end_realtime_usec;
                        any_data = true;
                } else if (w[i].start_realtime_usec > cur_end + COVERAGE_GAP_USEC) {
                        covered += cur_end - cur_start;
                        gaps++;
                        cur_start = w[i].start_realtime_usec;
                        cur_end = w[i].end_realtime_usec;
                } else
                        cur_end = MAX(cur_end, w[i].end_realtime_usec);
                span_end = MAX(span_end, w[i].end_realtime_usec);
        }
        if (any_data)
                covered += cur_end - cur_start;

        {
                char from[64], to[64], size[32], dur[FORMAT_TIMESPAN_MAX];

                printf("\n%zu window%s, %llu samples, %llu lost, %s.\n", n, n == 1 ? "" : "s",
                       (unsigned long long) samples, (unsigned long long) lost, format_bytes(size, sizeof size, bytes));
                if (any_data)
                        printf("Coverage: %s to %s, %s sampled, %u gap%s.\n",
                               bundle_format_utc_seconds(from, sizeof from, span_start),
                               bundle_format_utc_seconds(to, sizeof to, span_end),
                               format_timespan(dur, sizeof dur, (covered + USEC_PER_SEC / 2) / USEC_PER_SEC * USEC_PER_SEC), gaps, gaps == 1 ? "" : "s");
                else
                        printf("Coverage: none (no samples yet).\n");
                if (problems > 0)
                        log_warning("%u window%s damaged; their intact chunks are still used.", problems,
                                    problems == 1 ? " is" : "s are");
                /* Nothing of a window that cannot be read is listed or used: the listing is short of
                 * it, and the exit status says so. */
                if (unreadable > 0)
                        log_error("%u window%s in %s cannot be read; the totals and the coverage leave %s out.",
                                  unreadable, unreadable == 1 ? "" : "s", ring_e ?: "?", unreadable == 1 ? "it" : "them");
        }
        window_info_array_free(w, n);
        return unreadable > 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
