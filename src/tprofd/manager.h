/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The daemon: one sd-event loop that owns the sampler, the ring writer, the log sources, the rule
 * engine and the incidents. manager_run() returns when the daemon was asked to stop.
 */
#pragma once

#include "tprofd/tprofd-config.h"

int manager_run(const TprofdConfig *c);
