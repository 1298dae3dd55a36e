/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tprof-bundle rm: removes bundle directories. Removing a bundle unlinks its windows/ hard links,
 * which is what releases the ring windows it pinned. Every ID is resolved before anything is
 * removed, so one ambiguous or unknown ID removes nothing; pending (.tmp-*) bundles, which tprofd
 * is still writing, need --force.
 */
#include <dirent.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sysexits.h>
#include <unistd.h>

#include "basic/fileio.h"
#include "basic/string-util.h"
#include "basic/log.h"
#include "tprof-bundle/bundle-output.h"
#include "tprof-bundle/tprof-bundle.h"

static bool arg_force = false;

static void help(void) {
        printf("Usage: tprof-bundle rm [OPTIONS...] ID...\n"
               "\n"
               "Removes bundles and releases the ring windows they pinned. ID may be any unique\n"
               "prefix of the id or short id.\n"
               "\n"
               "  -h --help     Show this help\n"
               "  -f --force    Also remove pending bundles tprofd is still recording\n");
}

static int parse_argv(int argc, char *argv[]) {
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "force", no_argument, NULL, 'f' },
                {},
        };
        int c;

        opterr = 0;
        while ((c = getopt_long(argc, argv, ":hf", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case 'f':
                        arg_force = true;
                        break;
                default:
                        return log_error_errno(SYNTHETIC_ERRNO(EINVAL),
                                               "Unknown option '%s'. See 'tprof-bundle rm --help'.",
                                               argv[optind - 1]);
                }
        }
        if (optind >= argc)
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "rm needs at least one ID.");
        return 1;
}

/* Takes the bundle out of sight with one rename before removing its files, as tprofd does: an rm
 * cut short leaves a .tmp-* folder (which tprofd removes at its next start), never a visible bundle
 * that lists files it no longer has. */
static int remove_bundle(const BundleEntry *e) {
        _cleanup_free_ char *dir = strdup(e->path), *hidden = NULL;
        char *slash = dir ? strrchr(dir, '/') : NULL;

        if (!slash)
                return -ENOMEM;
        if (startswith(slash + 1, BUNDLE_TMP_PREFIX)) /* pending already, with --force */
                return rm_rf_at(AT_FDCWD, e->path, BUNDLE_DEPTH_MAX);
        *slash = '\0';
        if (asprintf(&hidden, "%s/" BUNDLE_TMP_PREFIX "%s", dir, slash + 1) < 0)
                return -ENOMEM;
        if (rename(e->path, hidden) < 0)
                return -errno;
        return rm_rf_at(AT_FDCWD, hidden, BUNDLE_DEPTH_MAX);
}

int verb_rm(int argc, char *argv[]) {
        _cleanup_(bundle_list_donep) BundleList l = BUNDLE_LIST_NULL;
        _cleanup_free_ size_t *idx = NULL;
        size_t n = 0;
        int r, ret = EXIT_SUCCESS;

        r = parse_argv(argc, argv);
        if (r <= 0)
                return r < 0 ? EX_USAGE : EXIT_SUCCESS;
        r = bundles_load(&l);
        if (r < 0)
                return EXIT_FAILURE;
        if (l.n == 0) {
                log_error("No bundles found.");
                return EXIT_FAILURE;
        }
        idx = calloc((size_t) argc, sizeof(size_t));
        if (!idx)
                return log_oom(), EXIT_FAILURE;
        for (int a = optind; a < argc; a++) {
                r = bundles_resolve(&l, argv[a]);
                if (r < 0)
                        return EXIT_FAILURE;
                if (l.entries[r].state == BUNDLE_ENTRY_PENDING && !arg_force) {
                        log_error_escaped("Bundle '%s' is still being recorded; use --force to remove it anyway.",
                                          l.entries[r].dirname);
                        return EXIT_FAILURE;
                }
                bool dup = false;
                for (size_t i = 0; i < n; i++)
                        dup = dup || idx[i] == (size_t) r;
                if (!dup)
                        idx[n++] = (size_t) r;
        }
        for (size_t i = 0; i < n; i++) {
                const BundleEntry *e = &l.entries[idx[i]];
                _cleanup_free_ char *path = text_for_terminal(e->path, 0);
                char b[FORMAT_BYTES_MAX];

                r = remove_bundle(e);
                if (r < 0) {
                        log_error_errno(r, "Failed to remove '%s': %m", path ?: "?");
                        ret = EXIT_FAILURE;
                        continue;
                }
                printf("Removed %s", path ?: "?");
                if (e->n_windows > 0)
                        printf(" (released %zu pinned window%s, %s)", e->n_windows, e->n_windows == 1 ? "" : "s",
                               format_bytes(b, sizeof b, e->windows_bytes));
                printf("\n");
        }
        return ret;
}
