/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a writer wrote, read back: the tests of the manifest's parts check their JSON as a reader
 * would see it.
 */
#pragma once

#include <stdlib.h>
#include <string.h>

#include "basic/json-reader.h"
#include "basic/json-writer.h"
#include "tests.h"

/* Finishes w (begun with json_writer_init()) and parses what it wrote; fails the test if either
 * fails. The caller frees the value. */
static inline JsonValue *test_json_finish_parse(JsonWriter *w) {
        JsonValue *v = NULL;
        char *text;
        int r;

        text = json_finish(w, &r);
        assert_non_null(text);
        assert_int_equal(json_parse(text, strlen(text), 8, &v, NULL), 0);
        free(text);
        return v;
}
