/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tprofd --test-rules: the rule author's tool. Reads log lines from files (or stdin when none are
 * given) in any of the forms people paste (plain text, dmesg "[ 123.456] ..." lines, raw /dev/kmsg
 * records "6,123,456789,-;message", journalctl -o short lines) and prints every match as
 * "<line number>\t<rule name>\t<line>" on out, with a summary on err.
 *
 * Returns 0 when the rules loaded (whether or not anything matched), a negative errno otherwise;
 * *reterr_config is set to true when the failure is the rules' fault (tprofd exits 78 then).
 */
#pragma once

#include <stdbool.h>
#include <stdio.h>

int rules_tester_run(const char *rules_path, char *const *files, size_t n_files, FILE *out, FILE *err,
                     bool *reterr_config);

/* tprofd --check-config: load the rules, report problems on err, print a one-line summary on out.
 * With ret_rules (may be NULL), the rules loaded are handed over, for the caller's own checks. */
typedef struct RuleSet RuleSet;
int rules_tester_check(const char *rules_path, FILE *out, FILE *err, bool *reterr_config, RuleSet **ret_rules);
