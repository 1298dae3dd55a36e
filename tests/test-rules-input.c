/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rules-input.c: each text form becomes the LogRecord the daemon's own sources would build, and
 * lines that only look alike stay plain text.
 */
#include <string.h>

#include "rules/rules-input.h"
#include "tests.h"

typedef struct FormCase {
        const char *line;
        LineFormat format;
        LogSource source;
        bool kernel_origin;
        int priority, facility;
        const char *message;
        const char *identifier;
        size_t message_len; /* when the message holds a NUL */
} FormCase;

/* Parses c->line and checks what every form shares; false for a skipped line (nothing more to see). */
static bool parse_expect(const FormCase *c, LogRecord *rec) {
        static char buf[512];
        size_t len = strlen(c->line);

        assert_true(len < sizeof buf);
        memcpy(buf, c->line, len + 1);
        LineFormat f = rules_input_parse_line(buf, len, rec);
        if (f != c->format)
                fail_msg("'%s': format %s, expected %s", c->line, line_format_to_string(f),
                         line_format_to_string(c->format));
        if (f == LINE_FORMAT_SKIP)
                return false;
        assert_int_equal(rec->source, c->source);
        assert_int_equal(rec->kernel_origin, c->kernel_origin);
        assert_int_equal(rec->priority, c->priority);
        assert_int_equal(rec->facility, c->facility);
        size_t n = c->message_len ?: strlen(c->message);
        assert_int_equal(rec->message_len, n);
        assert_memory_equal(rec->message, c->message, n);
        return true;
}

static void test_line_forms_table(void **state) {
        static const FormCase cases[] = {
                { "ena 0000:00:05.0 eth0: Trigger reset is on", LINE_FORMAT_PLAIN, LOG_SOURCE_TEXT, true, -1, -1,
                  "ena 0000:00:05.0 eth0: Trigger reset is on", NULL },
                { "[  123.456789] INFO: task x:1 blocked", LINE_FORMAT_DMESG, LOG_SOURCE_TEXT, true, -1, -1,
                  "INFO: task x:1 blocked", NULL },
                { "[123.4]no space", LINE_FORMAT_DMESG, LOG_SOURCE_TEXT, true, -1, -1, "no space", NULL },
                { "[not a stamp] text", LINE_FORMAT_PLAIN, LOG_SOURCE_TEXT, true, -1, -1, "[not a stamp] text", NULL },
                { "3,1234,5678901,-;nvme nvme0: I/O 1 QID 2 timeout, aborting", LINE_FORMAT_KMSG, LOG_SOURCE_KMSG,
                  true, 3, 0, "nvme nvme0: I/O 1 QID 2 timeout, aborting", NULL },
                { "14,55,66,-;user wrote this", LINE_FORMAT_KMSG, LOG_SOURCE_KMSG, false, 6, 1, "user wrote this",
                  NULL },
                { "6,339,5140900,-,caller=T1;with caller", LINE_FORMAT_KMSG, LOG_SOURCE_KMSG, true, 6, 0,
                  "with caller", NULL },
                { "4,7,8,c;tab\\x09and\\x5cslash", LINE_FORMAT_KMSG, LOG_SOURCE_KMSG, true, 4, 0,
                  "tab\tand\\slash", NULL },
                /* The kernel never writes a bad escape: tprofd's kmsg parser refuses such a record, so
                 * the tester does not read it as one either. */
                { "4,7,8,c;bad \\xZZ escape", LINE_FORMAT_PLAIN, LOG_SOURCE_TEXT, true, -1, -1,
                  "4,7,8,c;bad \\xZZ escape", NULL },
                { " SUBSYSTEM=pci", LINE_FORMAT_SKIP, 0, false, 0, 0, NULL, NULL },
                { "-- Boot 0123456789abcdef --", LINE_FORMAT_SKIP, 0, false, 0, 0, NULL, NULL },
                { "12 apples, 3 pears", LINE_FORMAT_PLAIN, LOG_SOURCE_TEXT, true, -1, -1, "12 apples, 3 pears", NULL },
                { "Nov 21 14:30:00 host kernel: Out of memory: Killed process 1 (x)", LINE_FORMAT_JOURNAL,
                  LOG_SOURCE_TEXT, true, -1, 0, "Out of memory: Killed process 1 (x)", "kernel" },
                { "Nov  1 04:05:06 host myapp[4242]: Out of memory", LINE_FORMAT_JOURNAL, LOG_SOURCE_JOURNAL, false,
                  -1, -1, "Out of memory", "myapp" },
                { "Nov 21 14:30:00.123456 h kubelet[7]: PLEG is not healthy", LINE_FORMAT_JOURNAL,
                  LOG_SOURCE_JOURNAL, false, -1, -1, "PLEG is not healthy", "kubelet" },
                { "2026-11-21T14:30:00+0000 h systemd[1]: Started x.", LINE_FORMAT_JOURNAL, LOG_SOURCE_JOURNAL,
                  false, -1, -1, "Started x.", "systemd" },
                { "Nov 21 is a date, not a log line", LINE_FORMAT_PLAIN, LOG_SOURCE_TEXT, true, -1, -1,
                  "Nov 21 is a date, not a log line", NULL },

                /* util-linux dmesg 2.38's time formats, as it printed them (the day of -T padded
                 * with a space by strftime's %e). */
                { "[Thu Nov 26 11:39:55 2026] m", LINE_FORMAT_DMESG, LOG_SOURCE_TEXT, true, -1, -1, "m", NULL },
                { "[Fri Nov  6 01:02:03 2026] m", LINE_FORMAT_DMESG, LOG_SOURCE_TEXT, true, -1, -1, "m", NULL },
                { "[Nov26 11:39] m", LINE_FORMAT_DMESG, LOG_SOURCE_TEXT, true, -1, -1, "m", NULL },
                { "[  +1.001986] m", LINE_FORMAT_DMESG, LOG_SOURCE_TEXT, true, -1, -1, "m", NULL },
                { "[< 1118.575697>] m", LINE_FORMAT_DMESG, LOG_SOURCE_TEXT, true, -1, -1, "m", NULL },
                { "[44543.345569 < 1118.575697>] m", LINE_FORMAT_DMESG, LOG_SOURCE_TEXT, true, -1, -1, "m", NULL },
                { "[Thu Nov 26 11:39:55 2026 < 1118.575697>] m", LINE_FORMAT_DMESG, LOG_SOURCE_TEXT, true, -1, -1, "m",
                  NULL },
                { "2026-11-26T11:39:55,345569+00:00 m", LINE_FORMAT_DMESG, LOG_SOURCE_TEXT, true, -1, -1, "m", NULL },
                /* -x: the facility tells the kernel's lines from those user space wrote */
                { "kern  :err   : [44543.345569] nvme nvme0: x", LINE_FORMAT_DMESG, LOG_SOURCE_TEXT, true, 3, 0,
                  "nvme nvme0: x", NULL },
                { "user  :warn  : [44543.345569] m", LINE_FORMAT_DMESG, LOG_SOURCE_TEXT, false, 4, 1, "m", NULL },
                { "authpriv:notice: m", LINE_FORMAT_DMESG, LOG_SOURCE_TEXT, false, 5, 10, "m", NULL },
                { "kern  :info  : 2026-11-26T11:39:55,345569+00:00 m", LINE_FORMAT_DMESG, LOG_SOURCE_TEXT, true, 6, 0,
                  "m", NULL },
                /* -r, /proc/kmsg, dmesg -S -r: the kernel's "<(facility << 3) | level>" */
                { "<3>[ 1234.567890] m", LINE_FORMAT_DMESG, LOG_SOURCE_TEXT, true, 3, 0, "m", NULL },
                { "<12>[44543.345569] m", LINE_FORMAT_DMESG, LOG_SOURCE_TEXT, false, 4, 1, "m", NULL },
                { "<6>m", LINE_FORMAT_DMESG, LOG_SOURCE_TEXT, true, 6, 0, "m", NULL },
                /* CONFIG_PRINTK_CALLER: the console's "[%6s]" right after the time, dmesg's after a space */
                { "[ 1234.567890][  T123] m", LINE_FORMAT_DMESG, LOG_SOURCE_TEXT, true, -1, -1, "m", NULL },
                { "[    0.000000] [    C0] m", LINE_FORMAT_DMESG, LOG_SOURCE_TEXT, true, -1, -1, "m", NULL },
                /* brackets that are part of the message */
                { "[drm] Initialized", LINE_FORMAT_PLAIN, LOG_SOURCE_TEXT, true, -1, -1, "[drm] Initialized", NULL },
                { "[Firmware Bug]: TSC", LINE_FORMAT_PLAIN, LOG_SOURCE_TEXT, true, -1, -1, "[Firmware Bug]: TSC", NULL },
                { "[12:30] x", LINE_FORMAT_PLAIN, LOG_SOURCE_TEXT, true, -1, -1, "[12:30] x", NULL },
                /* dmesg lines shaped like "host ident: ": still the kernel's */
                { "[ 1.5] nvme nvme0: I/O 1 QID 2 timeout, aborting", LINE_FORMAT_DMESG, LOG_SOURCE_TEXT, true, -1, -1,
                  "nvme nvme0: I/O 1 QID 2 timeout, aborting", NULL },
                { "[ 1.5] systemd[1]: Started x.", LINE_FORMAT_DMESG, LOG_SOURCE_TEXT, true, -1, -1,
                  "systemd[1]: Started x.", NULL },

                /* journalctl 252's short modes, as it printed them */
                { "Thu 2026-11-26 11:40:09 UTC vm kernel: m", LINE_FORMAT_JOURNAL, LOG_SOURCE_TEXT, true, -1, 0, "m",
                  "kernel" },
                { "2026-11-26T11:40:09.649404+0000 vm kernel: m", LINE_FORMAT_JOURNAL, LOG_SOURCE_TEXT, true, -1, 0, "m",
                  "kernel" },
                { "[44557.439935] vm kernel: m", LINE_FORMAT_JOURNAL, LOG_SOURCE_TEXT, true, -1, 0, "m", "kernel" },
                { "[44557.439935 <    1.537409 >] vm kernel: m", LINE_FORMAT_JOURNAL, LOG_SOURCE_TEXT, true, -1, 0,
                  "m", "kernel" },
                /* a program's line there has the shape of the kernel's report on a process whose name
                 * holds a space: the kernel's reading wins */
                { "[ 1234.5] Web Content[4321]: segfault at 0", LINE_FORMAT_DMESG, LOG_SOURCE_TEXT, true, -1, -1,
                  "Web Content[4321]: segfault at 0", NULL },
                { "[44557.439935] vm app[7]: m", LINE_FORMAT_DMESG, LOG_SOURCE_TEXT, true, -1, -1, "vm app[7]: m", NULL },
                { "1795693209.649404 vm app[7]: m", LINE_FORMAT_JOURNAL, LOG_SOURCE_JOURNAL, false, -1, -1, "m", "app" },
                /* a program that calls itself "kernel" has a pid; the kernel's records have none */
                { "Nov 26 11:40:09 vm kernel[14660]: nvme nvme0: x", LINE_FORMAT_JOURNAL, LOG_SOURCE_JOURNAL, false, -1,
                  -1, "nvme nvme0: x", "kernel" },
                /* syslog daemons' files: the kernel's own time stamp kept in the text (rsyslog's imklog) */
                { "Nov 26 11:40:09 vm kernel: [44557.439935] nvme nvme0: x", LINE_FORMAT_JOURNAL, LOG_SOURCE_TEXT, true,
                  -1, 0, "nvme nvme0: x", "kernel" },
                { "2026-11-26T11:40:09.649404+00:00 vm kernel: [  12.5][  T99] m", LINE_FORMAT_JOURNAL,
                  LOG_SOURCE_TEXT, true, -1, 0, "m", "kernel" },
                /* busybox's and OpenWrt's logread: ctime with the year, FACILITY.LEVEL in the host's place */
                { "Tue Aug 12 16:40:43 2025 kern.crit kernel: [  901.234567] m", LINE_FORMAT_JOURNAL, LOG_SOURCE_TEXT,
                  true, 2, 0, "m", "kernel" },
                { "Sat Nov  1 04:05:06 2025 kern.warn kernel: m", LINE_FORMAT_JOURNAL, LOG_SOURCE_TEXT, true, 4, 0, "m",
                  "kernel" },
                { "Tue Aug 12 16:40:43 2025 daemon.err app[12]: m", LINE_FORMAT_JOURNAL, LOG_SOURCE_JOURNAL, false, 3, 3,
                  "m", "app" },
                { "Tue Aug 12 16:40:43 2025 user.err kernel: m", LINE_FORMAT_JOURNAL, LOG_SOURCE_JOURNAL, false, 3, 1,
                  "m", "kernel" },
                /* busybox's syslogd writes FACILITY.LEVEL after the host, as OpenWrt's logread -h does */
                { "Aug 12 16:40:43 router kern.crit kernel: m", LINE_FORMAT_JOURNAL, LOG_SOURCE_TEXT, true, 2, 0, "m",
                  "kernel" },
                { "Aug 12 16:40:43 router daemon.err app[12]: m", LINE_FORMAT_JOURNAL, LOG_SOURCE_JOURNAL, false, 3, 3,
                  "m", "app" },
                { "Tue Aug 12 16:40:43 2025 router user.err kernel: m", LINE_FORMAT_JOURNAL, LOG_SOURCE_JOURNAL, false,
                  3, 1, "m", "kernel" },
                /* elsewhere that word is the host, whatever it looks like */
                { "Nov 26 11:40:09 news.info kernel: m", LINE_FORMAT_JOURNAL, LOG_SOURCE_TEXT, true, -1, 0, "m",
                  "kernel" },
                { "2026-11-26T11:40:09.649404+00:00 mail.info kernel: m", LINE_FORMAT_JOURNAL, LOG_SOURCE_TEXT, true,
                  -1, 0, "m", "kernel" },
                /* a syslog template's: the year first, the severity in capitals after the host */
                { "2025 Jul  2 06:57:28.475818 sonic CRIT kernel: [ 1.5] m", LINE_FORMAT_JOURNAL, LOG_SOURCE_TEXT,
                  true, 2, 0, "m", "kernel" },
                { "2025 Jul  2 06:57:28.475818 sonic NOTICE app[12]: m", LINE_FORMAT_JOURNAL, LOG_SOURCE_JOURNAL,
                  false, 5, -1, "m", "app" },
                { "Nov 26 11:40:09 vm WARNING kernel: m", LINE_FORMAT_JOURNAL, LOG_SOURCE_TEXT, true, 4, 0, "m",
                  "kernel" },
                /* the date, a space and the time (log shippers, many programs' own logs) */
                { "2026-11-26 11:40:09 vm kernel: m", LINE_FORMAT_JOURNAL, LOG_SOURCE_TEXT, true, -1, 0, "m", "kernel" },
                { "2026-11-26 11:40:09,123 vm app[7]: m", LINE_FORMAT_JOURNAL, LOG_SOURCE_JOURNAL, false, -1, -1, "m",
                  "app" },
                { "2026-11-26 is a date", LINE_FORMAT_PLAIN, LOG_SOURCE_TEXT, true, -1, -1, "2026-11-26 is a date",
                  NULL },
                /* a time stamp and the kernel's bracket with no host: a console server's log */
                { "2016-12-03 19:08:52    [ 1234.5] m", LINE_FORMAT_DMESG, LOG_SOURCE_TEXT, true, -1, -1, "m", NULL },
                { "Dec  3 19:08:52 [ 1234.5] m", LINE_FORMAT_DMESG, LOG_SOURCE_TEXT, true, -1, -1, "m", NULL },
                /* a syslog line pasted without its time: the host, then the kernel's */
                { "vmhost kernel: e1000e 0000:00:1f.6 eth0: Reset adapter unexpectedly", LINE_FORMAT_JOURNAL,
                  LOG_SOURCE_TEXT, true, -1, 0, "e1000e 0000:00:1f.6 eth0: Reset adapter unexpectedly", "kernel" },
                { "vmhost app[12]: m", LINE_FORMAT_PLAIN, LOG_SOURCE_TEXT, true, -1, -1, "vmhost app[12]: m", NULL },
                /* socklog (Void Linux): FACILITY.LEVEL and a colon */
                { "kern.err: [ 1234.5] m", LINE_FORMAT_DMESG, LOG_SOURCE_TEXT, true, 3, 0, "m", NULL },
                { "kern.warn: m", LINE_FORMAT_DMESG, LOG_SOURCE_TEXT, true, 4, 0, "m", NULL },
                { "user.notice: m", LINE_FORMAT_DMESG, LOG_SOURCE_TEXT, false, 5, 1, "m", NULL },
                /* more than one time format, a bracket each (dmesg -x -d -T), then the caller id */
                { "kern  :err   : [  +0.001354] [Tue Jan 13 10:00:00 2026] [T88977] m", LINE_FORMAT_DMESG,
                  LOG_SOURCE_TEXT, true, 3, 0, "m", NULL },
                { "[ 1234.5] [Tue Jan 13 10:00:00 2026] m", LINE_FORMAT_DMESG, LOG_SOURCE_TEXT, true, -1, -1, "m",
                  NULL },
                { "[ 1234.5] [drm] m", LINE_FORMAT_DMESG, LOG_SOURCE_TEXT, true, -1, -1, "[drm] m", NULL },
                /* talosctl dmesg, alone and after the node it asked */
                { "kern: warning: [2024-10-29T13:44:17.655294812Z]: nvme nvme2: queue 0: x", LINE_FORMAT_DMESG,
                  LOG_SOURCE_TEXT, true, 4, 0, "nvme nvme2: queue 0: x", NULL },
                { "10.5.0.3: kern:    info: [2022-07-28T11:49:42.504764063Z]: cni0: m", LINE_FORMAT_DMESG,
                  LOG_SOURCE_TEXT, true, 6, 0, "cni0: m", NULL },
                { "k8s-3: kern:     err: [2026-05-05T21:49:51.885321319Z]: m", LINE_FORMAT_DMESG, LOG_SOURCE_TEXT,
                  true, 3, 0, "m", NULL },
                { "k8s-3: user: warning: [2026-05-05T21:49:51.885321319Z]: m", LINE_FORMAT_DMESG, LOG_SOURCE_TEXT,
                  false, 4, 1, "m", NULL },
                { "kern: warning: no time", LINE_FORMAT_PLAIN, LOG_SOURCE_TEXT, true, -1, -1,
                  "kern: warning: no time", NULL },
                /* journalctl --no-hostname, and logs pasted with the host taken out */
                { "May 17 18:48:11 kernel: [ 6141.921740] INFO: task x:5 blocked", LINE_FORMAT_JOURNAL, LOG_SOURCE_TEXT,
                  true, -1, 0, "INFO: task x:5 blocked", "kernel" },
                { "Feb 23 03:28:16  kernel: EDAC MC1: 1 CE x", LINE_FORMAT_JOURNAL, LOG_SOURCE_TEXT, true, -1, 0,
                  "EDAC MC1: 1 CE x", "kernel" },
                { "[  245.528573] kernel: INFO: task x:1 blocked", LINE_FORMAT_JOURNAL, LOG_SOURCE_TEXT, true, -1, 0,
                  "INFO: task x:1 blocked", "kernel" },
                { "Sep 16 19:51:15 mcelog[987]: m", LINE_FORMAT_JOURNAL, LOG_SOURCE_JOURNAL, false, -1, -1, "m",
                  "mcelog" },
                { "2026-11-26T11:40:09.649404+00:00 earlyoom: m", LINE_FORMAT_JOURNAL, LOG_SOURCE_JOURNAL, false, -1,
                  -1, "m", "earlyoom" },
                { "[ 1.5] nvme0n1: p1 p2", LINE_FORMAT_DMESG, LOG_SOURCE_TEXT, true, -1, -1, "nvme0n1: p1 p2", NULL },
                { "Nov 26 11:40:09 fe80::1 kernel: m", LINE_FORMAT_PLAIN, LOG_SOURCE_TEXT, true, -1, -1,
                  "Nov 26 11:40:09 fe80::1 kernel: m", NULL },
                /* a syslog line pasted without its time and host */
                { "kernel: [  901.234567] INFO: task x:1 blocked", LINE_FORMAT_JOURNAL, LOG_SOURCE_TEXT, true, -1, 0,
                  "INFO: task x:1 blocked", "kernel" },
                { "kernel: m", LINE_FORMAT_JOURNAL, LOG_SOURCE_TEXT, true, -1, 0, "m", "kernel" },
                { "kernel:m", LINE_FORMAT_PLAIN, LOG_SOURCE_TEXT, true, -1, -1, "kernel:m", NULL },
                /* RFC 5424, and RFC 3164 with its PRI */
                { "<4>1 2026-11-26T11:40:09.649404+00:00 vm kernel - - - m", LINE_FORMAT_JOURNAL, LOG_SOURCE_TEXT, true,
                  4, 0, "m", "kernel" },
                { "<4>1 2026-11-26T11:40:09Z vm kernel - - - [ 1234.567890] m", LINE_FORMAT_JOURNAL, LOG_SOURCE_TEXT,
                  true, 4, 0, "m", "kernel" },
                { "<165>1 2003-10-11T22:14:15.003Z host app 42 ID47 [a@32473 x=\"a\\]b\"][b@1 y=\"2\"] m",
                  LINE_FORMAT_JOURNAL, LOG_SOURCE_JOURNAL, false, 5, 20, "m", "app" },
                { "<12>1 2026-11-26T11:40:09Z vm kernel 1 - - m", LINE_FORMAT_JOURNAL, LOG_SOURCE_JOURNAL, false, 4, 1, "m",
                  "kernel" },
                { "<4>Nov 26 11:40:09 vm kernel: m", LINE_FORMAT_JOURNAL, LOG_SOURCE_TEXT, true, 4, 0, "m", "kernel" },
                { "<13>Nov 26 11:40:09 vm kernel: m", LINE_FORMAT_JOURNAL, LOG_SOURCE_JOURNAL, false, 5, 1, "m", "kernel" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                LogRecord rec;

                if (!parse_expect(&cases[i], &rec))
                        continue;
                if (cases[i].identifier)
                        assert_string_equal(rec.identifier, cases[i].identifier);
                else
                        assert_null(rec.identifier);
                /* The text forms never invent trusted journal fields. */
                assert_null(rec.unit);
                assert_null(rec.comm);
                assert_int_equal(rec.uid, (uid_t) -1);
        }
}

static void test_kmsg_fields(void **state) {
        char buf[] = "6,1234,5678901,-;hello";
        LogRecord rec;

        assert_int_equal(rules_input_parse_line(buf, strlen(buf), &rec), LINE_FORMAT_KMSG);
        assert_int_equal(rec.seq, 1234);
        assert_int_equal(rec.source_usec, 5678901);
}

/* journalctl -o json (systemd 252's output, field names and value forms), and what is not one. */
static void test_journal_json(void **state) {
        static const FormCase cases[] = {
                { "{\"__CURSOR\":\"s=1;i=2\",\"__REALTIME_TIMESTAMP\":\"1764176400000000\",\"PRIORITY\":\"3\","
                  "\"SYSLOG_FACILITY\":\"0\",\"_TRANSPORT\":\"kernel\",\"SYSLOG_IDENTIFIER\":\"kernel\","
                  "\"MESSAGE\":\"ena 0000:00:05.0 eth0: Trigger reset is on\"}",
                  LINE_FORMAT_JOURNAL_JSON, LOG_SOURCE_TEXT, true, 3, 0, "ena 0000:00:05.0 eth0: Trigger reset is on" },
                /* A line user space wrote to /dev/kmsg, as journald keeps it: not the kernel's. */
                { "{\"PRIORITY\":\"6\",\"SYSLOG_FACILITY\":\"3\",\"_TRANSPORT\":\"kernel\",\"MESSAGE\":\"x\"}",
                  LINE_FORMAT_JOURNAL_JSON, LOG_SOURCE_TEXT, false, 6, 3, "x" },
                { "\x1e{\"_TRANSPORT\":\"journal\",\"MESSAGE\":\"seq\"}", LINE_FORMAT_JOURNAL_JSON,
                  LOG_SOURCE_JOURNAL, false, -1, -1, "seq" },
                { "data: {\"_TRANSPORT\":\"stdout\",\"MESSAGE\":\"sse\"}", LINE_FORMAT_JOURNAL_JSON,
                  LOG_SOURCE_JOURNAL, false, -1, -1, "sse" },
                /* Escapes decoded; bytes that are not UTF-8 come as an array of numbers. */
                { "{\"MESSAGE\":\"t\\tq\\\"\\u00fc\"}", LINE_FORMAT_JOURNAL_JSON, LOG_SOURCE_JOURNAL, false, -1, -1,
                  "t\tq\"\xc3\xbc" },
                { "{\"MESSAGE\":[104,105,0,255]}", LINE_FORMAT_JOURNAL_JSON, LOG_SOURCE_JOURNAL, false, -1, -1,
                  "hi\0\xff", NULL, 4 },
                /* A field the entry has twice: the first value. */
                { "{\"MESSAGE\":[\"first\",\"second\"]}", LINE_FORMAT_JOURNAL_JSON, LOG_SOURCE_JOURNAL, false,
                  -1, -1, "first" },
                { "{\"MESSAGE\":[[104,105],\"x\"]}", LINE_FORMAT_JOURNAL_JSON, LOG_SOURCE_JOURNAL, false, -1, -1,
                  "hi" },
                /* Longer than 4096 bytes without --all: nothing to match. */
                { "{\"MESSAGE\":null}", LINE_FORMAT_SKIP, 0, false, 0, 0, NULL },
                { "{\"MESSAGE\":[300]}", LINE_FORMAT_SKIP, 0, false, 0, 0, NULL },
                /* An entry with no message at all; the empty line json-sse writes after each. */
                { "{\"__CURSOR\":\"s=1\",\"_TRANSPORT\":\"journal\",\"PRIORITY\":\"6\"}", LINE_FORMAT_SKIP, 0, false, 0, 0,
                  NULL },
                { "", LINE_FORMAT_SKIP, 0, false, 0, 0, NULL },
                /* Not an entry: somebody's text. */
                { "{\"message\":\"lower case\"}", LINE_FORMAT_PLAIN, LOG_SOURCE_TEXT, true, -1, -1,
                  "{\"message\":\"lower case\"}" },
                { "{\"MESSAGE\":\"cut", LINE_FORMAT_PLAIN, LOG_SOURCE_TEXT, true, -1, -1, "{\"MESSAGE\":\"cut" },
                { "data: not json", LINE_FORMAT_PLAIN, LOG_SOURCE_TEXT, true, -1, -1, "data: not json" },
                { "{} trailing", LINE_FORMAT_PLAIN, LOG_SOURCE_TEXT, true, -1, -1, "{} trailing" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                LogRecord rec;

                (void) parse_expect(&cases[i], &rec);
        }
}

/* The trusted fields a journal rule filters on come through, and only when they are text. */
static void test_journal_json_fields(void **state) {
        char buf[] = "{\"__CURSOR\":\"s=abc;i=1f\",\"_TRANSPORT\":\"journal\",\"_SYSTEMD_UNIT\":\"kubelet.service\","
                     "\"_COMM\":\"kubelet\",\"_EXE\":\"/usr/bin/kubelet\",\"_UID\":\"0\",\"_PID\":\"4242\","
                     "\"SYSLOG_IDENTIFIER\":\"kubelet\",\"__REALTIME_TIMESTAMP\":\"1764176400123456\","
                     "\"MESSAGE\":\"PLEG is not healthy\",\"PRIORITY\":\"4\"}";
        LogRecord rec;

        assert_int_equal(rules_input_parse_line(buf, strlen(buf), &rec), LINE_FORMAT_JOURNAL_JSON);
        assert_string_equal(rec.transport, "journal");
        assert_string_equal(rec.unit, "kubelet.service");
        assert_string_equal(rec.comm, "kubelet");
        assert_string_equal(rec.exe, "/usr/bin/kubelet");
        assert_string_equal(rec.identifier, "kubelet");
        assert_string_equal(rec.cursor, "s=abc;i=1f");
        assert_int_equal(rec.uid, 0);
        assert_int_equal(rec.pid, 4242);
        assert_int_equal(rec.priority, 4);
        assert_int_equal(rec.realtime_usec, 1764176400123456ULL);
        assert_int_equal(rec.message_len, strlen("PLEG is not healthy"));
        assert_memory_equal(rec.message, "PLEG is not healthy", rec.message_len);

        /* A unit name with a NUL in it could not be compared: absent. A uid out of range: unknown. */
        char odd[] = "{\"_SYSTEMD_UNIT\":[97,0,98],\"_UID\":\"4294967295\",\"MESSAGE\":\"m\"}";
        assert_int_equal(rules_input_parse_line(odd, strlen(odd), &rec), LINE_FORMAT_JOURNAL_JSON);
        assert_null(rec.unit);
        assert_int_equal(rec.uid, (uid_t) -1);
        assert_null(rec.transport);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_line_forms_table),
                cmocka_unit_test(test_kmsg_fields),
                cmocka_unit_test(test_journal_json),
                cmocka_unit_test(test_journal_json_fields),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
