/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tprof-bundle: argument parsing and the verb table. Each verb lives in its own file
 * (bundle-list.c, bundle-show.c, ...) and reads the state directory directly, no daemon needed.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#include "basic/log.h"
#include "basic/macro.h"
#include "control/control-client.h"
#include "tprof-bundle/tprof-bundle.h"

const char *arg_state_dir = TPROF_STATE_DIR;
const char *arg_control_socket = NULL;

/* "export ID ..." cuts from a bundle, "export --from --to ..." straight from the ring. */
static int verb_export_dispatch(int argc, char *argv[]) {
        return export_names_bundle(argc, argv) ? bundle_export_bundle(argc, argv) : verb_export(argc, argv);
}

static const Verb verbs[] = {
        { "ls", "List incident bundles", verb_list },
        { "show", "Explain one bundle: what happened, the log, CPU activity, unusual stacks", verb_show },
        { "export", "Write a bundle's slice or a range of the ring: folded stacks, perf script, pprof, SVG",
          verb_export_dispatch },
        { "report", "Write report.html: heatmap, flame graphs and log of a bundle or a range, one file",
          verb_report },
        { "rm", "Remove a bundle and release its pinned windows", verb_rm },
        { "open", "Hand a bundle's stacks to $TPROF_VIEWER", verb_open },
        { "capture", "Ask the running daemon for a bundle around now", verb_capture },
        { "windows", "List the windows in the ring and the coverage they give", verb_windows },
        { "status", "Show whether tprofd runs and what it has recorded", verb_status },
};

static void help(void) {
        printf("Usage: tprof-bundle [OPTIONS...] COMMAND [ARGS...]\n"
               "\n"
               "Lists and explains the incident bundles tprofd writes.\n"
               "\n"
               "Commands:\n");
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                printf("  %-10s %s\n", verbs[i].name, verbs[i].help);
        printf("\n"
               "Options:\n"
               "  -h --help            Show this help and exit\n"
               "     --version         Show the version and exit\n"
               "  -D --state-dir DIR   tprofd's state directory (default: %s)\n"
               "     --control-socket PATH\n"
               "                       tprofd's control socket (default: $TPROF_CONTROL_SOCKET,\n"
               "                       else %s)\n"
               "\n"
               "Exit status: 0 on success, 1 when nothing matched or on failure, 3 from status when tprofd\n"
               "does not run, 64 on a usage error.\n",
               TPROF_STATE_DIR, CONTROL_SOCKET_DEFAULT);
}

/* Returns 1 to go on, 0 to exit successfully, or a negative errno (a usage error). */
static int parse_argv(int argc, char *argv[]) {
        enum { ARG_VERSION = 0x100, ARG_CONTROL_SOCKET };
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                { "state-dir", required_argument, NULL, 'D' },
                { "control-socket", required_argument, NULL, ARG_CONTROL_SOCKET },
                {},
        };
        int c;

        opterr = 0;
        /* "+" stops at the verb: options after it belong to the verb. */
        while ((c = getopt_long(argc, argv, "+:hD:", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case ARG_VERSION:
                        printf("tprof-bundle %s\n", TPROF_VERSION);
                        return 0;
                case 'D':
                        arg_state_dir = optarg;
                        break;
                case ARG_CONTROL_SOCKET:
                        arg_control_socket = optarg;
                        break;
                case ':':
                        return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "Option '%s' needs an argument.",
                                               argv[optind - 1]);
                default:
                        return log_error_errno(SYNTHETIC_ERRNO(EINVAL),
                                               "Unknown option '%s'. See 'tprof-bundle --help'.",
                                               argv[optind - 1]);
                }
        }
        return 1;
}

int main(int argc, char *argv[]) {
        int r;

        log_setup("tprof-bundle");
        r = parse_argv(argc, argv);
        if (r <= 0)
                return r < 0 ? EX_USAGE : EXIT_SUCCESS;
        if (optind >= argc) {
                log_error("No command given. See 'tprof-bundle --help'.");
                return EX_USAGE;
        }
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                if (streq(argv[optind], verbs[i].name)) {
                        int verb_argc = argc - optind;
                        char **verb_argv = argv + optind;
                        optind = 0; /* reset getopt for the verb's own options */
                        return verbs[i].run(verb_argc, verb_argv);
                }
        log_error("Unknown command '%s'. See 'tprof-bundle --help'.", argv[optind]);
        return EX_USAGE;
}
