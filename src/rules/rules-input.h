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
        LINE_FORMAT_JOURNAL, /* journalctl and syslog */
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
