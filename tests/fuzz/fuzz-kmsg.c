/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzz target for kernel log records, the bytes any process that can write /dev/kmsg (or a recorded
 * file given to --kmsg) controls. The input is one read() of /dev/kmsg: it goes through
 * kmsg_record_parse(), and a record that parses is checked against the parser's contract, turned
 * into a LogRecord and matched against the shipped rules, as tprofd does. The same bytes, up to the
 * first newline, also go through rules_input_parse_line(), the text forms tprofd --test-rules reads
 * (journalctl's JSON among them).
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "basic/cleanup.h"
#include "basic/macro.h"
#include "logsrc/logsrc-kmsg-parse.h"
#include "rules/rules-input.h"
#include "rules/rules.h"
#include "fuzz-rule-match.h"
#include "fuzz-util.h"

static RuleSet *rules = NULL;
static KmsgRecord *record = NULL;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv) {
        RuleError e = RULE_ERROR_NULL;

        /* The shipped rules of this source tree: they are what a hostile record meets in practice. */
        if (rule_set_load(TPROF_SOURCE_RULES_DIR "/default.yaml", &rules, &e) < 0)
                abort();
        rule_error_done(&e);
        record = malloc(sizeof(KmsgRecord));
        if (!record)
                abort();
        return 0;
}

static void check_record(const uint8_t *data, size_t size, const KmsgRecord *k) {
        const char *buf = (const char *) data;

        assert(k->facility >= 0 && k->facility <= (int) (KMSG_PRI_MAX >> 3));
        assert(k->level >= 0 && k->level <= 7);
        assert(k->flag == '-' || k->flag == 'c' || k->flag == '+');
        assert(k->message_escaped >= buf && k->message_escaped + k->message_escaped_len <= buf + size);
        assert(k->message_len <= k->message_escaped_len && k->message_len <= LOG_MESSAGE_BYTES_MAX);
        assert(k->message[k->message_len] == '\0');
        assert(k->dictionary_len <= KMSG_DICTIONARY_BYTES_MAX);
        assert(strlen(k->dictionary) == k->dictionary_len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const char *reason = NULL;
        int r;

        _cleanup_free_ char *buf = fuzz_copy(data, size);
        if (!buf)
                return 0;

        r = kmsg_record_parse(buf, size, record, &reason);
        if (r < 0)
                assert(reason && (r == -EBADMSG || r == -EMSGSIZE));
        else {
                ClockMap clock;
                LogRecord rec;
                size_t total = 0;

                check_record((const uint8_t *) buf, size, record);
                clock_map_assume(&clock);
                kmsg_record_to_log_record(record, &clock, &rec);
                r = rule_set_match(rules, &rec, fuzz_on_match, &total);
                assert(r >= 0);
        }

        /* The --test-rules text form: one line, NUL-terminated, rewritten in place. */
        {
                const char *nl = size > 0 ? memchr(buf, '\n', size) : NULL;
                size_t len = nl ? (size_t) (nl - buf) : size;
                _cleanup_free_ char *line = malloc(len + 1);
                LogRecord rec;
                LineFormat f;

                if (!line)
                        return 0;
                memcpy(line, buf, len);
                line[len] = '\0';
                f = rules_input_parse_line(line, len, &rec);
                assert(f >= 0 && f < _LINE_FORMAT_MAX);
                if (f != LINE_FORMAT_SKIP) {
                        assert(rec.message >= line && rec.message + rec.message_len <= line + len);
                        /* The other strings (journalctl JSON's fields) end inside the line too. */
                        const char *fields[] = { rec.unit, rec.comm, rec.exe, rec.transport, rec.identifier, rec.cursor };
                        for (size_t i = 0; i < ELEMENTSOF(fields); i++)
                                assert(!fields[i] || (fields[i] >= line && fields[i] + strlen(fields[i]) <= line + len));
                        if (rec.message_len <= LOG_MESSAGE_BYTES_MAX) {
                                size_t total = 0;
                                r = rule_set_match_full(rules, &rec,
                                                        f == LINE_FORMAT_JOURNAL_JSON ? 0 : RULE_MATCH_IGNORE_TRUSTED_FIELDS,
                                                        fuzz_on_match, &total);
                                assert(r >= 0);
                        }
                }
        }
        return 0;
}
