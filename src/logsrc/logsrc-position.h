/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Where the log sources stopped, kept across restarts under <state_dir>/state/ so that a restart
 * resumes right after the last record processed: nothing skipped, nothing delivered twice.
 *
 *   state/kmsg-position    "boot_id=<uuid>\nseq=<n>\n": the boot and the last kmsg sequence number
 *                          processed (sequence numbers restart at 0 on every boot)
 *   state/journal-cursor   the sd-journal cursor of the last journal entry processed, one line
 *
 * Both are replaced atomically (write_file_atomic: temporary file, fsync, rename, fsync of the
 * directory), so a crash leaves the old or the new position, never a torn one. A file that does not
 * parse is reported as -EBADMSG; the sources then treat it like a first start.
 */
#pragma once

#include <stdint.h>

#define KMSG_POSITION_FILE "kmsg-position"
#define JOURNAL_CURSOR_FILE "journal-cursor"
/* A boot id as the kernel prints it: 36 characters of lower-case hex and dashes. */
#define BOOT_ID_STRING_MAX 37
/* Longest journal cursor we store or accept (systemd's are about 140 bytes). */
#define JOURNAL_CURSOR_BYTES_MAX 1024U

typedef struct KmsgPosition {
        char boot_id[BOOT_ID_STRING_MAX];
        uint64_t seq; /* last sequence number processed */
} KmsgPosition;

/* Builds "<state_dir>/state/<name>" and creates "<state_dir>/state" (0750) if needed. */
int logsrc_state_path(const char *state_dir, const char *name, char **ret_path);

/* Reads /proc/sys/kernel/random/boot_id (or, for tests, $TPROF_BOOT_ID_PATH). */
int logsrc_read_boot_id(char ret[static BOOT_ID_STRING_MAX]);

/* -ENOENT if no position was saved yet, -EBADMSG if the file is malformed. */
int kmsg_position_load(const char *path, KmsgPosition *ret);
int kmsg_position_save(const char *path, const KmsgPosition *p);

/* -ENOENT if no cursor was saved yet, -EBADMSG if the file is malformed. */
int journal_cursor_load(const char *path, char **ret_cursor);
int journal_cursor_save(const char *path, const char *cursor);
