/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the verbs of tprof-bundle share: the global options and the verb signature. A verb gets
 * argv starting at its own name and returns the process exit code.
 */
#pragma once

extern const char *arg_state_dir;

typedef struct Verb {
        const char *name;
        const char *help;
        int (*run)(int argc, char *argv[]);
} Verb;
