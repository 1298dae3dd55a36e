/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the verbs of tprof-bundle share: the global options and the verb signature. A verb gets
 * argv starting at its own name and returns the process exit code.
 */
#pragma once

extern const char *arg_state_dir;
extern const char *arg_control_socket; /* NULL: $TPROF_CONTROL_SOCKET, else the default */

/* The control socket to use, and an error message for a failed call (returns the exit code). */
const char *control_socket_path(void);
int control_error_hint(int r, const char *path);

int verb_capture(int argc, char *argv[]);
int verb_status(int argc, char *argv[]);

typedef struct Verb {
        const char *name;
        const char *help;
        int (*run)(int argc, char *argv[]);
} Verb;
