/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The daemon: one sd-event loop that owns the sampler, the ring writer, the log sources, the rule
 * engine and the incidents. manager_run() returns when the daemon was asked to stop.
 */
#pragma once

#include "tprofd/tprofd-config.h"

/* Builds the settings afresh (file and command line) for a reload; < 0 keeps the running ones. */
typedef int (*ManagerReload)(TprofdConfig *ret);

/* Runs until SIGTERM/SIGINT. c stays owned by the caller; reloads update it in place. */
int manager_run(TprofdConfig *c, ManagerReload reload);
