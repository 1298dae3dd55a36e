/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Folded stacks for the bundle analysis tests, from text as a bundle's stacks.folded holds it.
 */
#pragma once

#include <stdio.h>
#include <string.h>

#include "bundle/bundle-analyze.h"
#include "tests.h"

static inline void load_text(const char *text, Folded *ret) {
        _cleanup_fclose_ FILE *f = fmemopen((void *) text, strlen(text), "r");
        assert_non_null(f);
        assert_int_equal(folded_load_file(f, ret), 0);
}
