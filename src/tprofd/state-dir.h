/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The daemon's state directory: made with its ring/, incidents/ and state/ for root and group
 * tprof, and locked so that one daemon owns its ring.
 */
#pragma once

/* Creates the directories (mode 0750, group tprof where the host has the group) and takes the
 * lock. Returns the locked directory's descriptor, which holds the lock until it is closed (or
 * the process ends, however it ends), or < 0 after logging why. */
int state_dir_open_locked(const char *path);
