/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Placeholder until the parts the daemon wires together exist. */
#include <errno.h>

#include "basic/log.h"
#include "tprofd/manager.h"

int manager_run(const TprofdConfig *c) {
        return log_error_errno(SYNTHETIC_ERRNO(EOPNOTSUPP), "The daemon mode is not implemented yet.");
}
