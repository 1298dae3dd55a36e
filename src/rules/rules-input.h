/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The text forms of log lines tprofd --test-rules reads, turned into LogRecords:
 *
 *   raw /dev/kmsg records   "6,1234,5678901,-;message" (also with ",caller=T1" after the flags):
 *                           source kmsg, facility = PRI >> 3, kernel_origin = facility 0, \xNN
 *                           escapes decoded; continuation lines (" KEY=value") are skipped.
 *   dmesg output            "[  123.456789] message": the time stamp is dropped; kernel-originated.
 *   journalctl -o short     "Nov 21 14:30:00 host ident[pid]: message" (also short-iso and
 *                           short-precise): identifier "kernel" is a kernel record; any other is a
 *                           journal record that carries only the client-written identifier and pid,
 *                           none of the trusted fields (_SYSTEMD_UNIT, _UID...).
 *   anything else           plain text, treated as a line the kernel logged.
 *
 * Journal rules therefore cannot have their trusted-field filters checked from text; the tester
 * says so in its summary.
 */
#pragma once

#include <stddef.h>

#include "logsrc/log-record.h"

typedef enum LineFormat {
        LINE_FORMAT_PLAIN,
        LINE_FORMAT_DMESG,
        LINE_FORMAT_KMSG,
        LINE_FORMAT_JOURNAL,
        LINE_FORMAT_SKIP, /* a kmsg continuation line or journalctl's "-- Boot ... --" marker */
        _LINE_FORMAT_MAX,
        _LINE_FORMAT_INVALID = -22,
} LineFormat;

const char *line_format_to_string(LineFormat f);

/*
 * Parses one line (without its newline) into *ret. May rewrite line in place (kmsg escapes get
 * shorter when decoded); ret->message and the identifier point into line. Returns the format.
 */
LineFormat rules_input_parse_line(char *line, size_t len, LogRecord *ret);
