/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* For the fuzz targets that run rules over what they parsed. */
#pragma once

#include <assert.h>
#include <string.h>

#include "rules/rules.h"

/* A rule match handler that touches every capture: each must lie inside the matched message.
 * userdata: a size_t the capture lengths are added to. */
static inline int fuzz_on_match(const RuleMatch *m, const LogRecord *rec, void *userdata) {
        size_t *total = userdata;

        for (size_t i = 0; i < m->n_captures; i++) {
                const RuleCapture *c = &m->captures[i];
                assert(c->value >= rec->message && c->value + c->value_len <= rec->message + rec->message_len);
                *total += strlen(c->name) + c->value_len;
        }
        return 0;
}
