/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What stays in incidents/: the count and size limits on published bundles, and the removal of
 * bundles, published (oldest first, beyond the limits) or unfinished (.tmp-* left by a crash).
 * No logging: every removal, done or failed, is reported to the caller's callback.
 */
#pragma once

#include <stdbool.h>

#include <stdint.h>

typedef struct IncidentLimits {
        unsigned max_bundles;
        uint64_t max_bundle_bytes;
} IncidentLimits;

/* name is the bundle's directory name; error is 0 when it was removed, < 0 when that failed. */
typedef void (*IncidentRemovedFunc)(const char *name, int error, void *userdata);

/* Whether the bundle named name must stay for now (its hook has not run yet). */
typedef bool (*IncidentHeldFunc)(const char *name, void *userdata);

/*
 * Removes the oldest complete bundles beyond the limits: by the UTC second their names start
 * with, then within a second by when their folder was made (where the file system keeps birth
 * times; else by name). keep (the bundle just
 * published) always stays, whatever its folder's time says (a clock set back); without keep,
 * the newest stays. Bundles held says must stay are passed over (the limits are then exceeded by
 * them until a later call). cb and held get userdata.
 */
void incident_limits_enforce(int incidents_fd, const IncidentLimits *limits, const char *keep,
                             IncidentHeldFunc held, IncidentRemovedFunc cb, void *userdata);

/* Removes every .tmp-* bundle but those keep (if not NULL) says stay, to be finished: the others
 * can never complete, and they hold pins. keep and cb get userdata. */
void incident_limits_remove_unfinished(int incidents_fd, IncidentHeldFunc keep, IncidentRemovedFunc cb,
                                       void *userdata);

/* Takes a published bundle out of sight with one rename, then removes its files. */
int incident_bundle_remove(int incidents_fd, const char *name);
