/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What every cmocka test includes: cmocka needs these four system headers before its own.
 */
#pragma once

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "basic/cleanup.h"
#include "basic/macro.h"

/* Exit code meson treats as "skipped". */
#define EXIT_TEST_SKIP 77

/* A test group's directory: made from its template ("/tmp/NAME-XXXXXX") by the group's setup,
 * removed with all it holds by its teardown. 0, or -1 for cmocka. */
static inline int test_dir_make(char *tmpl) {
        return mkdtemp(tmpl) ? 0 : -1;
}

static inline int test_dir_remove(const char *dir) {
        char cmd[4200];

        if ((size_t) snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir) >= sizeof cmd)
                return -1;
        return system(cmd) == 0 ? 0 : -1;
}
