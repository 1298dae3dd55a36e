/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tprof-bundle capture: ask the running daemon for a bundle around now, wait until it is written,
 * print its id. The daemon does the work (same lifecycle as a rule match, rule name "manual").
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#include "basic/cleanup.h"
#include "basic/log.h"
#include "basic/time-util.h"
#include "control/control-client.h"
#include "tprof-bundle/bundle-output.h"
#include "tprof-bundle/tprof-bundle.h"

/* How long to wait beyond --after for the daemon to write the bundle. */
#define CAPTURE_GRACE_USEC (60 * USEC_PER_SEC)

const char *control_socket_path(void) {
        const char *e = getenv("TPROF_CONTROL_SOCKET");
        return arg_control_socket ?: (e && *e ? e : CONTROL_SOCKET_DEFAULT);
}

int control_error_hint(int r, const char *p) {
        /* From --control-socket or $TPROF_CONTROL_SOCKET: escaped as every other path. */
        _cleanup_free_ char *path = text_for_terminal(p, 0);

        if (!path)
                return log_oom(), EXIT_FAILURE;
        if (r == -ENOENT || r == -ECONNREFUSED)
                log_error("tprofd is not running (nothing listens on %s).", path);
        else if (r == -EACCES)
                log_error("Permission denied on %s: root or members of group tprof only.", path);
        else
                log_error_errno(r, "Failed to talk to tprofd on %s: %m", path);
        return EXIT_FAILURE;
}

int verb_capture(int argc, char *argv[]) {
        enum { ARG_BEFORE = 0x100, ARG_AFTER, ARG_NOTE };
        static const struct option options[] = {
                { "before", required_argument, NULL, ARG_BEFORE },
                { "after", required_argument, NULL, ARG_AFTER },
                { "note", required_argument, NULL, ARG_NOTE },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        _cleanup_strbuf_ StrBuf req = STRBUF_NULL;
        uint64_t before = 60 * USEC_PER_SEC, after = 10 * USEC_PER_SEC;
        const char *note = NULL, *path = control_socket_path(), *err;
        ControlMessage reply;
        int c, r;

        while ((c = getopt_long(argc, argv, ":h", options, NULL)) >= 0)
                switch (c) {
                case ARG_BEFORE:
                case ARG_AFTER:
                        if (parse_duration(optarg, c == ARG_BEFORE ? &before : &after) < 0) {
                                log_error("Invalid --%s '%s': expected a duration like 60s or 2m.",
                                          c == ARG_BEFORE ? "before" : "after", optarg);
                                return EX_USAGE;
                        }
                        break;
                case ARG_NOTE:
                        note = optarg;
                        break;
                case 'h':
                        printf("Usage: tprof-bundle capture [--before 60s] [--after 10s] [--note TEXT]\n\n"
                               "Asks tprofd for a bundle of the seconds around now (rule 'manual'), waits until\n"
                               "it is written (about --after plus a second), and prints its id. tprofd takes\n"
                               "--before up to 15min and --after up to 5min.\n");
                        return EXIT_SUCCESS;
                case ':':
                        log_error("Option '%s' needs an argument.", argv[optind - 1]);
                        return EX_USAGE;
                default:
                        log_error("Unknown option '%s'. See 'tprof-bundle capture --help'.", argv[optind - 1]);
                        return EX_USAGE;
                }
        if (optind < argc) {
                log_error("Unexpected argument '%s'.", argv[optind]);
                return EX_USAGE;
        }

        r = control_message_append(&req, "OP", "capture");
        if (r >= 0)
                r = control_message_appendf(&req, "BEFORE_USEC", "%llu", (unsigned long long) before);
        if (r >= 0)
                r = control_message_appendf(&req, "AFTER_USEC", "%llu", (unsigned long long) after);
        if (r >= 0 && note)
                r = control_message_append(&req, "NOTE", note);
        if (r < 0)
                return log_oom(), EXIT_FAILURE;

        r = control_call(path, req.data, req.len, after + CAPTURE_GRACE_USEC, &reply);
        if (r < 0)
                return control_error_hint(r, path);
        err = control_message_get(&reply, "ERROR");
        if (err) {
                log_error_escaped("tprofd refused the capture: %s", err);
                return EXIT_FAILURE;
        }
        const char *id = control_message_get(&reply, "ID");
        if (!id) {
                log_error("tprofd's reply has no bundle id.");
                return EXIT_FAILURE;
        }
        _cleanup_free_ char *esc = escape_text(id, strlen(id));
        printf("%s\n", esc ?: "");
        return EXIT_SUCCESS;
}
