/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Placeholder until the rules engine lands. */
#include <errno.h>

#include "basic/log.h"
#include "rules/rules-tester.h"

int rules_tester_run(const char *rules_path, char *const *files, size_t n_files, FILE *out, FILE *err,
                     bool *reterr_config) {
        return log_error_errno(SYNTHETIC_ERRNO(EOPNOTSUPP), "--test-rules is not implemented yet.");
}

int rules_tester_check(const char *rules_path, FILE *out, FILE *err, bool *reterr_config) {
        return log_error_errno(SYNTHETIC_ERRNO(EOPNOTSUPP), "--check-config is not implemented yet.");
}
