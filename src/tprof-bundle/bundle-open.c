/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tprof-bundle open ID: hands a bundle's stacks to the viewer named by $TPROF_VIEWER, run through
 * /bin/sh as `$TPROF_VIEWER FILE` (so it may carry arguments). A viewer whose command contains
 * "speedscope" gets the bundle's stacks.perf-script; any other (a browser, an image viewer) gets
 * an SVG flame graph written to a new file under $TMPDIR (or /tmp), which is left in place for
 * the viewer to read after we are gone and whose path is printed.
 */
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <sysexits.h>
#include <unistd.h>

#include "basic/log.h"
#include "tprof-bundle/bundle-output.h"
#include "tprof-bundle/bundle-svg.h"
#include "tprof-bundle/tprof-bundle.h"


static bool arg_diff = false;

static void help(void) {
        printf("Usage: tprof-bundle open [OPTIONS...] [ID]\n"
               "\n"
               "Opens a bundle's stacks (the newest bundle when no ID is given) in $TPROF_VIEWER:\n"
               "speedscope gets stacks.perf-script (or stacks.folded) by a link named for its format,\n"
               "anything else an SVG flame graph in a temporary file.\n"
               "Example: TPROF_VIEWER=firefox tprof-bundle open 3fa9\n"
               "\n"
               "  -h --help     Show this help\n"
               "     --diff     Open the differential flame graph against the baseline\n");
}

static int parse_argv(int argc, char *argv[]) {
        enum { ARG_DIFF = 0x100 };
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "diff", no_argument, NULL, ARG_DIFF },
                {},
        };
        int c;

        opterr = 0;
        while ((c = getopt_long(argc, argv, ":h", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case ARG_DIFF:
                        arg_diff = true;
                        break;
                default:
                        return log_error_errno(SYNTHETIC_ERRNO(EINVAL),
                                               "Unknown option '%s'. See 'tprof-bundle open --help'.",
                                               argv[optind - 1]);
                }
        }
        if (argc - optind > 1)
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "open takes at most one ID.");
        return 1;
}

static int run_viewer(const char *viewer, const char *file) {
        pid_t pid;
        int status;

        fflush(stdout);
        pid = fork();
        if (pid < 0)
                return log_error_errno(errno, "Failed to fork: %m");
        if (pid == 0) {
                execl("/bin/sh", "sh", "-c", "exec $TPROF_VIEWER \"$1\"", "sh", file, (char *) NULL);
                _exit(127);
        }
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return log_error_errno(errno, "Failed to wait for the viewer: %m");
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                _cleanup_free_ char *v = text_for_terminal(viewer, 200);
                log_error("The viewer '%s' failed (%s %d).", v ?: "?", WIFEXITED(status) ? "exit status" : "signal",
                          WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
                return -EIO;
        }
        return 0;
}

/*
 * speedscope tells a file's format by its name before guessing from its text, and its guess takes
 * folded stacks whose first line looks like a perf script event (a frame named "x 1 2.5: y") for
 * one: the bundle's file is handed over by a link named so that speedscope knows,
 * "<id>.linux-perf.txt" for the perf script, "<id>.collapsedstack.txt" for the folded stacks (a
 * large slice has no perf script), in a new directory under $TMPDIR.
 */
static int speedscope_file(const BundleEntry *e, char **ret) {
        const char *tmp = getenv("TMPDIR"), *name = BUNDLE_PERF_SCRIPT, *suffix = "linux-perf.txt";
        _cleanup_free_ char *target = NULL, *dir = NULL, *link = NULL;
        /* The link lives elsewhere: it must name the bundle by an absolute path (-D may be relative). */
        _cleanup_free_ char *bundle = realpath(e->path, NULL);

        if (!bundle)
                return log_error_errno_escaped(errno, "Failed to resolve '%s': %m", e->path);
        if (asprintf(&target, "%s/%s", bundle, name) < 0)
                return log_oom();
        if (access(target, F_OK) < 0) {
                name = BUNDLE_FOLDED;
                suffix = "collapsedstack.txt";
                target = mfree(target);
                if (asprintf(&target, "%s/%s", bundle, name) < 0)
                        return log_oom();
        }
        /* Not a link the viewer cannot follow: said here, with the path, as export says it. */
        if (access(target, R_OK) < 0)
                return log_error_errno_escaped(errno, "Cannot read '%s': %m", target);
        if (asprintf(&dir, "%s/tprof-%s-XXXXXX", isempty(tmp) ? "/tmp" : tmp,
                     e->short_id[0] ? e->short_id : "bundle") < 0)
                return log_oom();
        if (!mkdtemp(dir))
                return log_error_errno(errno, "Failed to create a temporary directory: %m");
        if (asprintf(&link, "%s/%s.%s", dir, e->short_id[0] ? e->short_id : "bundle", suffix) < 0)
                return log_oom();
        if (symlink(target, link) < 0) {
                _cleanup_free_ char *l = text_for_terminal(link, 0), *t = text_for_terminal(target, 0);
                return log_error_errno(errno, "Failed to link '%s' to '%s': %m", l ?: "?", t ?: "?");
        }
        *ret = TAKE_PTR(link);
        return 0;
}

int verb_open(int argc, char *argv[]) {
        _cleanup_(bundle_list_donep) BundleList l = BUNDLE_LIST_NULL;
        _cleanup_free_ char *file = NULL;
        const char *viewer = getenv("TPROF_VIEWER");
        const BundleEntry *e;
        int r;

        r = parse_argv(argc, argv);
        if (r <= 0)
                return r < 0 ? EX_USAGE : EXIT_SUCCESS;
        if (isempty(viewer)) {
                log_error("$TPROF_VIEWER is not set. Set it to a viewer command, for example "
                          "TPROF_VIEWER=speedscope (gets stacks.perf-script) or TPROF_VIEWER=firefox (gets an SVG).");
                return EX_USAGE;
        }
        r = bundles_load(&l);
        if (r < 0)
                return EXIT_FAILURE;
        r = bundles_resolve(&l, optind < argc ? argv[optind] : NULL);
        if (r < 0)
                return EXIT_FAILURE;
        e = &l.entries[r];

        if (strstr(viewer, "speedscope") && !arg_diff) {
                r = speedscope_file(e, &file);
                if (r < 0)
                        return EXIT_FAILURE;
        } else {
                const char *tmp = getenv("TMPDIR");
                _cleanup_fclose_ FILE *f = NULL;
                int fd;

                if (asprintf(&file, "%s/tprof-%s-XXXXXX.svg", isempty(tmp) ? "/tmp" : tmp,
                             e->short_id[0] ? e->short_id : "bundle") < 0)
                        return log_oom(), EXIT_FAILURE;
                fd = mkostemps(file, 4, O_CLOEXEC);
                if (fd < 0)
                        return log_error_errno(errno, "Failed to create a temporary file: %m"), EXIT_FAILURE;
                f = fdopen(fd, "w");
                if (!f) {
                        (void) close(fd);
                        return log_oom(), EXIT_FAILURE;
                }
                r = bundle_write_svg(e, arg_diff, f);
                if (r >= 0 && fflush(f) != 0)
                        r = log_error_errno(errno, "Failed to write '%s': %m", file);
                if (r < 0) {
                        (void) unlink(file);
                        return EXIT_FAILURE;
                }
                printf("Wrote %s\n", file);
        }
        r = run_viewer(viewer, file);
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
