/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Placeholder until the sampler lands. */
#include <errno.h>

#include "basic/log.h"
#include "sampler/sampler-once.h"

int sampler_once_run(const OnceOptions *o, FILE *out, FILE *err) {
        return log_error_errno(SYNTHETIC_ERRNO(EOPNOTSUPP), "--once is not implemented yet.");
}
