/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Taking up an incident an earlier run left unfinished: tprofd was killed or crashed between the
 * match and the bundle's publication, after the log positions had moved past the trigger line, so
 * that line is not read again. Its staged folder (incidents/.tmp-<id>/, incident-write.h) holds
 * what is needed to finish it: the pending manifest, as written at the match, and windows/, the
 * hard links into the ring of the windows of its slice (the open one included, which grew on
 * until the process died). incident_resume_parse() rebuilds the incident from that manifest; the
 * incident manager registers it again and publishes it at t + after (at once when that time has
 * passed, or when it is of another boot). A manifest that is missing, damaged or of a newer format
 * is refused, and the folder is removed as before.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "incident/incident.h"
#include "logsrc/log-record.h"

/*
 * Rebuilds the incident from the text of a pending manifest: rule (name, group, before, after,
 * cooldown, ...), trigger record and its times, clock mapping, captures, repeats, note, id and
 * creation time. *ret_boot_id (optional) gets the boot it was staged in, or NULL when the manifest
 * does not say. Returns -EBADMSG (not JSON, not pending, a field missing or of the wrong type),
 * -EPROTO (a newer format) or -ENOMEM.
 */
int incident_resume_parse(const char *text, size_t size, Incident **ret, char **ret_boot_id);

/* The same from the `pending` file in dir_fd, a staged folder; -ENOENT when there is none. */
int incident_resume_load(int dir_fd, Incident **ret, char **ret_boot_id);

/*
 * Whether rec, matched by rule, is the trigger line of the resumed incident i read again: the
 * earlier run died after staging the incident but before saving the position past its batch, and
 * this run repeats the batch. Kernel records are told by their sequence number; journal entries by
 * their message and time (placed on the perf clock again, within the mapping's error).
 */
bool incident_resumed_trigger(const Incident *i, const IncidentRule *rule, const LogRecord *rec);

/* The trigger line as a log record (its strings borrowed from i), for a bundle whose log lost it
 * with the earlier run: the log context of this run never read it. */
void incident_trigger_record(const Incident *i, LogRecord *ret);
