/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzz target for rules files: whoever can write /etc/tprof/rules.yaml or a rules.d folder decides
 * these bytes, and a reload (SIGHUP) must reject a bad file without harming the running daemon.
 * The input is one rules file for rule_set_load_string(). A file that loads is then asked for
 * its journal matches and run against a few log lines; a file that does not must come back with a
 * complete error (file, message) that formats.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "basic/cleanup.h"
#include "rules/rules.h"
#include "fuzz-rule-match.h"
#include "fuzz-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void match_lines(RuleSet *rs) {
        static const char *const lines[] = {
                "ena 0000:00:05.0 eth0: Trigger reset is on",
                "nvme nvme0: I/O 7 QID 2 timeout, aborting",
                "INFO: task kworker/3:1:123 blocked for more than 120 seconds.",
                "watchdog: BUG: soft lockup - CPU#3 stuck for 22s! [kworker/3:1:123]",
                "",
        };
        for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
                for (int source = 0; source < 2; source++) {
                        LogRecord rec = LOG_RECORD_NULL;
                        size_t total = 0;

                        rec.source = source ? LOG_SOURCE_JOURNAL : LOG_SOURCE_KMSG;
                        rec.kernel_origin = !source;
                        rec.priority = 3;
                        rec.facility = source ? 3 : 0;
                        rec.message = lines[i];
                        rec.message_len = strlen(lines[i]);
                        rec.unit = "kubelet.service";
                        rec.comm = "kubelet";
                        rec.uid = 0;
                        assert(rule_set_match_full(rs, &rec, source ? RULE_MATCH_IGNORE_TRUSTED_FIELDS : 0,
                                                   fuzz_on_match, &total) >= 0);
                }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(rule_set_freep) RuleSet *rs = NULL;
        RuleError e = RULE_ERROR_NULL;
        int r;

        /* No terminating NUL: the loader is given a length, not a string. */
        _cleanup_free_ char *buf = fuzz_copy(data, size);
        if (!buf)
                return 0;

        r = rule_set_load_string("fuzz.yaml", buf, size, &rs, &e);
        if (r < 0) {
                if (r != -ENOMEM) {
                        _cleanup_free_ char *text = NULL;

                        assert(e.file && e.message);
                        text = rule_error_format(&e);
                        assert(text);
                }
                rule_error_done(&e);
                return 0;
        }
        assert(!e.message);

        assert(rule_set_size(rs) <= RULES_MAX);
        for (size_t i = 0; i < rule_set_size(rs); i++) {
                const Rule *rule = rule_set_get(rs, i);
                assert(rule->name && rule->match);
                assert(rule_set_find(rs, rule->name) == (int) i);
        }
        {
                _cleanup_strv_ char **matches = NULL;
                bool any;

                assert(rule_set_journal_matches(rs, &matches, &any) >= 0);
        }
        match_lines(rs);
        return 0;
}
