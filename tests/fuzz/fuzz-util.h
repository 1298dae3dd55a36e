/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the fuzz targets share. */
#pragma once

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* An exact-size heap copy of the input, without a terminating NUL, so that AddressSanitizer catches
 * any read past its end (libFuzzer's own buffer may have slack). NULL if out of memory. */
static inline char *fuzz_copy(const uint8_t *data, size_t size) {
        char *buf = malloc(size ?: 1);

        if (buf && size > 0)
                memcpy(buf, data, size);
        return buf;
}
