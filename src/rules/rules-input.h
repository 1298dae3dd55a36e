/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The text forms of log lines tprofd --test-rules reads, turned into LogRecords:
 *
 *   raw /dev/kmsg records   "6,1234,5678901,-;message" (also with ",caller=T1" after the flags):
 *                           source kmsg, facility = PRI >> 3, kernel_origin = facility 0, \xNN
 *                           escapes decoded; continuation lines (" KEY=value") are skipped.
 *   dmesg output            util-linux dmesg in any time format ("[  123.456789]", -T, --reltime,
 *                           -d, --time-format delta|iso), a "[  T123]" caller id after it; the
 *                           time stamp is dropped and the line counts as the kernel's, unless -x
 *                           ("user  :warn  : ") or -r / syslog(2) ("<12>") give its facility.
 *   journalctl, syslog      "Nov 21 14:30:00 host ident[pid]: message": journalctl's short modes
 *                           (short, -precise, -iso, -iso-precise, -full, -unix; -monotonic and
 *                           -delta for the kernel's lines: a program's line there looks like the
 *                           kernel's report on a process whose name has a space), syslog files (the kernel's "[  123.456789] " after "kernel: "
 *                           is dropped), RFC 3164 with "<PRI>", RFC 5424. Identifier "kernel"
 *                           without a pid is a kernel record; any other (also "kernel[pid]") is a
 *                           journal record that carries only the client-written identifier and
 *                           pid, none of the trusted fields (_SYSTEMD_UNIT, _UID...).
 *   journalctl JSON         one entry a line, as -o json, json-seq (RS first) and json-sse
 *                           ("data: " first) print it: MESSAGE (a string, or bytes as an array
 *                           of numbers), PRIORITY, SYSLOG_FACILITY, SYSLOG_IDENTIFIER and the
 *                           trusted fields (_TRANSPORT, _SYSTEMD_UNIT, _COMM, _EXE, _UID, _PID).
 *                           _TRANSPORT=kernel with facility 0 is the kernel's record; any other
 *                           entry is a journal record with the trusted fields it carries. An
 *                           entry whose MESSAGE journalctl printed as null (longer than 4096
 *                           bytes, without --all), or that has none, is skipped. (-o json-pretty
 *                           spans lines: no.)
 *   anything else           plain text, treated as a line the kernel logged.
 *
 * Journal rules therefore cannot have their trusted-field filters checked from the short text
 * forms (the tester says so in its summary); from JSON they can.
 */
#pragma once

#include <stddef.h>

#include "logsrc/log-record.h"

typedef enum LineFormat {
        LINE_FORMAT_PLAIN,
        LINE_FORMAT_DMESG,
        LINE_FORMAT_KMSG,
        LINE_FORMAT_JOURNAL, /* journalctl and syslog */
        LINE_FORMAT_JOURNAL_JSON, /* journalctl -o json: with the trusted fields */
        LINE_FORMAT_SKIP, /* a kmsg continuation line, journalctl's "-- Boot ... --" marker, a JSON
                           * entry without a message, an empty line */
        _LINE_FORMAT_MAX,
        _LINE_FORMAT_INVALID = -22,
} LineFormat;

const char *line_format_to_string(LineFormat f);

/*
 * Parses one line (without its newline; line[len] is a NUL) into *ret. May rewrite line in place
 * (kmsg escapes and JSON values get shorter when decoded); ret->message and the other strings
 * point into line. Returns the format.
 */
LineFormat rules_input_parse_line(char *line, size_t len, LogRecord *ret);

/*
 * The journalctl JSON form alone (rules-input-json.c): 1 and *ret when line is an entry, 0 when
 * it is not an entry (some other form), -EBADMSG for an entry without a message to match (none,
 * null, a number).
 */
int rules_input_parse_journal_json(char *line, size_t len, LogRecord *ret);
