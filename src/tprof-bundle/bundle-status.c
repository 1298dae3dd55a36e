/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tprof-bundle status: what the daemon is doing, asked over its control socket; when it does not
 * answer, what it left in the state directory (windows, coverage, bundles). Exit status 0 when the
 * daemon runs, 3 when it does not (as systemctl status does), 1 when the state directory (or its ring
 * or incidents folder) cannot be read.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include "basic/cleanup.h"
#include "basic/log.h"
#include "basic/parse-util.h"
#include "basic/time-util.h"
#include "bundle/bundle-format.h"
#include "control/control-client.h"
#include "store/store-slice.h"
#include "tprof-bundle/tprof-bundle.h"

#define STATUS_NOT_RUNNING 3

static const char *field(const ControlMessage *m, const char *key) {
        const char *v = control_message_get(m, key);
        return v ?: "?";
}

static void print_escaped(const char *label, const char *value) {
        _cleanup_free_ char *e = escape_text(value, strlen(value));
        printf("%18s: %s\n", label, e ?: "?");
}

/* A byte count of the daemon's, as 1.5M; "?" when it did not send it (an older tprofd). */
static const char *bytes_field(const ControlMessage *m, const char *key, char *buf, size_t l) {
        uint64_t v;

        if (safe_atou64(field(m, key), &v) < 0)
                return "?";
        return format_bytes(buf, l, v);
}

static void print_daemon(const ControlMessage *m) {
        char b1[FORMAT_BYTES_MAX], b2[FORMAT_BYTES_MAX], b3[FORMAT_BYTES_MAX], b4[FORMAT_BYTES_MAX],
                b5[FORMAT_BYTES_MAX];
        uint64_t u = 0;
        char buf[512];

        (void) safe_atou64(field(m, "UPTIME_USEC"), &u);
        snprintf(buf, sizeof buf, "running, PID %s, version %s, up %s", field(m, "PID"), field(m, "VERSION"),
                 FORMAT_TIMESPAN(u / USEC_PER_SEC * USEC_PER_SEC));
        print_escaped("tprofd", buf);
        snprintf(buf, sizeof buf, "%s at %s Hz on %s CPUs", field(m, "EVENT"), field(m, "FREQ_HZ"), field(m, "CPUS"));
        print_escaped("Sampling", buf);
        snprintf(buf, sizeof buf, "%s kept, %s lost, %s throttled", field(m, "SAMPLES"), field(m, "LOST"),
                 field(m, "THROTTLED"));
        print_escaped("Samples", buf);
        snprintf(buf, sizeof buf, "%s, error %s ns", field(m, "CLOCK_MAP"), field(m, "CLOCK_ERROR_NS"));
        print_escaped("Clock mapping", buf);
        snprintf(buf, sizeof buf, "%s from %s", field(m, "RULES"), field(m, "RULES_PATH"));
        print_escaped("Rules", buf);
        snprintf(buf, sizeof buf, "kmsg %s records (%s lost), journal %s (%s records)", field(m, "KMSG_RECORDS"),
                 field(m, "KMSG_LOST"), field(m, "JOURNAL"), field(m, "JOURNAL_RECORDS"));
        print_escaped("Log sources", buf);
        snprintf(buf, sizeof buf,
                 "%s matches; %s open, %s written, %s failed, %s matches dropped by limits; %s on the bundle writer, %s waiting for it",
                 field(m, "MATCHES"), field(m, "INCIDENTS_OPEN"), field(m, "INCIDENTS_WRITTEN"),
                 field(m, "INCIDENTS_FAILED"), field(m, "MATCHES_DROPPED"), field(m, "INCIDENTS_WRITING"),
                 field(m, "INCIDENTS_QUEUED"));
        print_escaped("Incidents", buf);
        snprintf(buf, sizeof buf, "%s started, %s failed or timed out, %s dropped, %s running", field(m, "HOOKS_STARTED"),
                 field(m, "HOOKS_FAILED"), field(m, "HOOKS_DROPPED"), field(m, "HOOKS_RUNNING"));
        print_escaped("Bundle hooks", buf);
        print_escaped("Open window", field(m, "WINDOW_OPEN"));
        snprintf(buf, sizeof buf,
                 "RSS %s (malloc in use %s); symbol cache %s (%s files loaded), unwind tables %s, stack cache %s; "
                 "%s tasks known",
                 bytes_field(m, "RSS_BYTES", b1, sizeof b1), bytes_field(m, "HEAP_BYTES", b5, sizeof b5),
                 bytes_field(m, "SYMBOL_CACHE_BYTES", b2, sizeof b2),
                 field(m, "SYMBOL_FILES"), bytes_field(m, "UNWIND_CACHE_BYTES", b4, sizeof b4),
                 bytes_field(m, "STACK_CACHE_BYTES", b3, sizeof b3), field(m, "TASKS"));
        print_escaped("Memory", buf);
        /* Caches too small for this host's programs: dropped at most once a minute, and meanwhile
         * some frames unnamed or walked without CFI (docs/design.md). */
        snprintf(buf, sizeof buf,
                 "symbol cache dropped %s times (%s frames unnamed while their file waited), unwind tables "
                 "dropped %s times (%s frames walked without their CFI)",
                 field(m, "SYMBOL_CACHE_DROPS"), field(m, "SYMBOL_LOADS_DEFERRED"), field(m, "UNWIND_CACHE_DROPS"),
                 field(m, "UNWIND_LOADS_DEFERRED"));
        print_escaped("Full caches", buf);
}

/* "PATH: why" for a part of the state directory that cannot be read, said where its content goes. */
static int print_unreadable(const char *label, const char *path, int error) {
        char buf[512];

        snprintf(buf, sizeof buf, "cannot be read: %s: %s", path, strerror(-error));
        print_escaped(label, buf);
        return error;
}

/*
 * What the ring and the incidents folder hold, read from disk. Returns < 0 when a part of the
 * state directory cannot be read: that is said, never shown as an empty ring (a user outside
 * group tprof sees no windows, not because there are none).
 */
static int print_state(const char *state_dir) {
        _cleanup_free_ char *ring = NULL, *inc = NULL;
        WindowInfo *w = NULL;
        size_t n = 0, bundles = 0, pending = 0, unreadable = 0, first = SIZE_MAX, last = 0;
        uint64_t bytes = 0, samples = 0, lost = 0, pinned = 0;
        char a[FORMAT_TIMESTAMP_MAX], b[FORMAT_TIMESTAMP_MAX], buf[512];
        int r, ret = 0;

        if (asprintf(&ring, "%s/ring", state_dir) < 0 || asprintf(&inc, "%s/incidents", state_dir) < 0)
                return log_oom();
        if (access(state_dir, F_OK) < 0) {
                /* Said as such, not as an empty ring: a mistyped -D or a daemon never started. */
                snprintf(buf, sizeof buf, "%s (%m)", state_dir);
                print_escaped("State directory", buf);
                return 0;
        }
        if (access(state_dir, X_OK) < 0)
                return print_unreadable("State directory", state_dir, -errno);
        print_escaped("State directory", state_dir);
        r = ring_list_windows(ring, /* verify= */ false, &w, &n);
        if (r < 0 && r != -ENOENT)
                ret = print_unreadable("Ring", ring, r);
        else if (n == 0)
                print_escaped("Ring", "no windows");
        else {
                for (size_t i = 0; i < n; i++) {
                        bytes += w[i].bytes;
                        pinned += w[i].pinned;
                        if (w[i].error < 0) {
                                unreadable++;
                                continue;
                        }
                        samples += w[i].samples;
                        lost += w[i].lost;
                        /* Sorted by start, the unreadable ones (no start known) first. */
                        if (first == SIZE_MAX)
                                first = i;
                        last = i;
                }
                snprintf(buf, sizeof buf, "%zu windows (%llu pinned), %llu MiB, %llu samples, %llu lost", n,
                         (unsigned long long) pinned, (unsigned long long) (bytes >> 20), (unsigned long long) samples,
                         (unsigned long long) lost);
                print_escaped("Ring", buf);
                if (first != SIZE_MAX) {
                        snprintf(buf, sizeof buf, "%s .. %s",
                                 format_timestamp_utc(a, sizeof a, w[first].start_realtime_usec),
                                 format_timestamp_utc(b, sizeof b, w[last].end_realtime_usec));
                        print_escaped("Coverage", buf);
                }
                if (unreadable > 0) {
                        snprintf(buf, sizeof buf, "%zu of the windows in %s cannot be read (the first: %s)", unreadable,
                                 ring, strerror(-w[0].error));
                        /* Said, but no failure: the rest of the ring is read, and status's exit
                         * tells the daemon's state (a window an earlier instance made before the
                         * directory had its group is one a member of it cannot read). */
                        print_escaped("Unreadable", buf);
                }
        }
        window_info_array_free(w, n);

        _cleanup_closedir_ DIR *d = opendir(inc);
        if (!d && errno != ENOENT)
                return print_unreadable("Bundles", inc, -errno);
        struct dirent *de;
        while (d && (de = readdir(d))) {
                if (startswith(de->d_name, BUNDLE_TMP_PREFIX))
                        pending++;
                else if (de->d_name[0] != '.')
                        bundles++;
        }
        snprintf(buf, sizeof buf, "%zu written, %zu being written", bundles, pending);
        print_escaped("Bundles", buf);
        return ret;
}

int verb_status(int argc, char *argv[]) {
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                {},
        };
        const char *path = control_socket_path();
        ControlMessage reply;
        int c, r;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        printf("Usage: tprof-bundle status\n\n"
                               "Shows whether tprofd runs and what it records; from the state directory\n"
                               "when it does not run. Exit status 3 when tprofd does not run, 1 when the\n"
                               "state directory cannot be read.\n");
                        return EXIT_SUCCESS;
                default:
                        log_error("Unknown option '%s'. See 'tprof-bundle status --help'.", argv[optind - 1]);
                        return EX_USAGE;
                }

        r = control_call(path, "OP=status\n", strlen("OP=status\n"), 5 * USEC_PER_SEC, &reply);
        if (r >= 0 && !control_message_get(&reply, "ERROR")) {
                const char *state = control_message_get(&reply, "STATE_DIR");
                print_daemon(&reply);
                return print_state(state ?: arg_state_dir) < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
        }
        /* The socket's path comes from an option or the environment: escaped as every other path. */
        _cleanup_free_ char *p = escape_text(path, strlen(path));
        if (r >= 0) {
                _cleanup_free_ char *e = escape_text(field(&reply, "ERROR"), strlen(field(&reply, "ERROR")));
                printf("%18s: refused: %s\n", "tprofd", e ?: "?");
        } else if (r == -ENOENT || r == -ECONNREFUSED)
                printf("%18s: not running (nothing listens on %s)\n", "tprofd", p ?: "?");
        else
                printf("%18s: unknown (%s: %s)\n", "tprofd", p ?: "?", strerror(-r));
        /* What was recorded cannot be told: a failure, not "not running" with an empty ring. */
        return print_state(arg_state_dir) < 0 ? EXIT_FAILURE : STATUS_NOT_RUNNING;
}
