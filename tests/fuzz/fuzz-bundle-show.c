/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzz target for everything tprof-bundle reads of one bundle: show (text and --json), report and
 * export's differential flame graph, on a bundle made of the input in a state directory of its
 * own. Bundles are copied from other machines, truncated or edited by hand; none of them may
 * crash the reader. The input is a byte of flags (1: the log as log.txt, not log.jsonl; 2: show
 * --utc), a byte of columns (COLUMNS, 0: unset), then the bundle's files in this order, separated
 * by the bytes FF 00 FF (a file not reached is missing from the bundle, an empty one is there and
 * empty):
 *
 *   manifest.json  log.jsonl (or log.txt)  activity.tsv  stacks.folded  baseline.folded
 *   event.folded  cpu3.folded  cpu3-baseline.folded
 *
 * The whole analysis runs from them: the manifest's attribution and groups, the log and its OOM
 * victim, the heat map, the rankings, the one-line answer, the services and the captured CPU's.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "basic/log.h"
#include "bundle/bundle-format.h"
#include "report/report.h"
#include "tprof-bundle/tprof-bundle.h"
#include "fuzz-util.h"

/* tprof-bundle.c's, which holds main() and is not linked here; the state directory is made at
 * start. */
const char *arg_state_dir = NULL;
const char *arg_control_socket = NULL;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define BUNDLE_NAME "20261121T143000Z-ena-reset-3fa9c2d1"
static const char sep[] = { '\xff', '\0', '\xff' };
static char state[256], dir[512];
static FILE *devnull;

static const char *const files[] = {
        BUNDLE_MANIFEST, BUNDLE_LOG_JSON, BUNDLE_LOG_TEXT, BUNDLE_ACTIVITY, BUNDLE_FOLDED, BUNDLE_BASELINE_FOLDED,
        BUNDLE_NEAR_EVENT_FOLDED, "cpu3.folded", "cpu3-baseline.folded",
};

/* Removes the state directory: the bundle holds only the files put() writes. */
static void cleanup(void) {
        char path[600];

        for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
                snprintf(path, sizeof path, "%s/%s", dir, files[i]);
                (void) unlink(path);
        }
        (void) rmdir(dir);
        snprintf(path, sizeof path, "%s/incidents", state);
        (void) rmdir(path);
        (void) rmdir(state);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
        const char *tmp = getenv("TMPDIR");
        char inc[512];

        (void) argc;
        (void) argv;
        snprintf(state, sizeof state, "%s/tprof-fuzz-show.XXXXXX", tmp && *tmp ? tmp : "/tmp");
        assert(mkdtemp(state));
        atexit(cleanup);
        snprintf(inc, sizeof inc, "%s/incidents", state);
        snprintf(dir, sizeof dir, "%s/%s", inc, BUNDLE_NAME);
        assert(mkdir(inc, 0750) >= 0 && mkdir(dir, 0750) >= 0);
        arg_state_dir = state;
        /* What is printed does not matter, only what is done on the way; nor what is logged. */
        assert(freopen("/dev/null", "w", stdout));
        assert((devnull = fopen("/dev/null", "we")));
        log_set_max_level(LOG_EMERG);
        return 0;
}

static void put(const char *name, const uint8_t *p, size_t n, bool there) {
        char path[600];
        int fd;

        snprintf(path, sizeof path, "%s/%s", dir, name);
        if (!there) {
                (void) unlink(path);
                return;
        }
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
        assert(fd >= 0);
        assert(n == 0 || write(fd, p, n) == (ssize_t) n);
        close(fd);
}

static int run(int (*verb)(int, char **), int argc, const char *const *argv) {
        optind = 0;
        return verb(argc, (char **) argv);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static const char *const names[] = {
                BUNDLE_MANIFEST, NULL /* the log */, BUNDLE_ACTIVITY, BUNDLE_FOLDED, BUNDLE_BASELINE_FOLDED,
                BUNDLE_NEAR_EVENT_FOLDED, "cpu3.folded", "cpu3-baseline.folded",
        };
        const uint8_t *p, *end = data + size;
        BundleUnreadable u = {};
        char columns[8];
        bool text_log;

        if (size < 2)
                return 0;
        text_log = data[0] & 1;
        if (data[1] > 0) {
                snprintf(columns, sizeof columns, "%u", data[1]);
                setenv("COLUMNS", columns, 1);
        } else
                unsetenv("COLUMNS");

        p = data + 2;
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
                const uint8_t *s = p ? memmem(p, (size_t) (end - p), sep, sizeof sep) : NULL;
                size_t n = p ? (size_t) ((s ?: end) - p) : 0;

                if (!names[i]) {
                        put(BUNDLE_LOG_JSON, p, n, p && !text_log);
                        put(BUNDLE_LOG_TEXT, p, n, p && text_log);
                } else
                        put(names[i], p, n, p);
                p = s ? s + sizeof sep : NULL;
        }

        (void) run(verb_show, data[0] & 2 ? 2 : 1, (const char *const[]) { "show", data[0] & 2 ? "--utc" : NULL, NULL });
        (void) run(verb_show, 2, (const char *const[]) { "show", "--json=pretty", NULL });
        (void) run(bundle_export_bundle, 5, (const char *const[]) { "export", BUNDLE_NAME, "--format", "svg", "--diff", NULL });
        (void) report_write_bundle(dir, devnull, &u);
        bundle_unreadable_done(&u);
        return 0;
}
