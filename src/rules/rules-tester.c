/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tprofd --test-rules and the rules part of --check-config; see rules-tester.h.
 *
 * Lines are read in large blocks and split with memchr, so the tester measures the engine rather
 * than stdio. A line longer than TESTER_LINE_BYTES_MAX is cut there (the rest is dropped and the
 * cut counted): the daemon's own sources never hand the engine more than LOG_MESSAGE_BYTES_MAX.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "basic/alloc-util.h"
#include "basic/cleanup.h"
#include "basic/macro.h"
#include "basic/string-util.h"
#include "basic/time-util.h"
#include "rules/rules-input.h"
#include "rules/rules-tester.h"
#include "rules/rules.h"

/* A line is cut there: far beyond any message rules see (LOG_MESSAGE_BYTES_MAX), room for a
 * journal JSON entry whose fields are long or bytes written as numbers. */
#define TESTER_LINE_BYTES_MAX (128U * 1024U)
#define TESTER_BUFFER_BYTES (256U * 1024U)

typedef struct LineReader {
        FILE *f;
        char *buf;
        size_t start, end;
        bool eof, discarding;
        bool cut; /* the line handed out last was cut */
        uint64_t truncated;
} LineReader;

/* Hands out a line, cut to TESTER_LINE_BYTES_MAX. */
static int line_reader_emit(LineReader *lr, char *line, size_t len, char **ret, size_t *ret_len) {
        lr->cut = len > TESTER_LINE_BYTES_MAX;
        if (len > TESTER_LINE_BYTES_MAX) {
                len = TESTER_LINE_BYTES_MAX;
                lr->truncated++;
        }
        *ret = line;
        *ret_len = len;
        return 1;
}

/* Returns 1 with the next line (newline stripped) in *ret and *ret_len, 0 at the end, or -errno. */
static int line_reader_next(LineReader *lr, char **ret, size_t *ret_len) {
        for (;;) {
                char *line = lr->buf + lr->start;
                char *nl = memchr(line, '\n', lr->end - lr->start);

                if (nl) {
                        size_t len = (size_t) (nl - line);
                        bool discard = lr->discarding;

                        lr->start += len + 1;
                        lr->discarding = false;
                        if (discard) /* the tail of a line already handed out, cut */
                                continue;
                        return line_reader_emit(lr, line, len, ret, ret_len);
                }
                if (lr->eof) {
                        size_t len = lr->end - lr->start;
                        lr->start = lr->end;
                        if (len == 0 || lr->discarding)
                                return 0;
                        return line_reader_emit(lr, line, len, ret, ret_len);
                }
                if (lr->end - lr->start > TESTER_LINE_BYTES_MAX) {
                        /* No newline in sight: hand out the head now, drop the rest up to the newline. */
                        bool discard = lr->discarding;

                        lr->start = lr->end;
                        lr->discarding = true;
                        if (!discard)
                                return line_reader_emit(lr, line, TESTER_LINE_BYTES_MAX + 1, ret, ret_len);
                }
                /* Make room and read more. A handed-out line is only used until the next call. */
                memmove(lr->buf, lr->buf + lr->start, lr->end - lr->start);
                lr->end -= lr->start;
                lr->start = 0;
                size_t k = fread(lr->buf + lr->end, 1, TESTER_BUFFER_BYTES - lr->end, lr->f);
                if (k == 0) {
                        if (ferror(lr->f))
                                return errno > 0 ? -errno : -EIO;
                        lr->eof = true;
                }
                lr->end += k;
        }
}

/* 0 when every file ("-": stdin) can be opened and is not a directory, else the first's -errno,
 * said on err. */
static int files_readable(char *const *files, size_t n_files, FILE *err) {
        for (size_t i = 0; i < n_files; i++) {
                struct stat st;
                if (streq(files[i], "-"))
                        continue;
                if (stat(files[i], &st) < 0 || access(files[i], R_OK) < 0) {
                        int r = -errno;
                        fprintf(err, "%s: cannot open: %s\n", files[i], strerror(-r));
                        return r;
                }
                if (S_ISDIR(st.st_mode)) {
                        fprintf(err, "%s: cannot read: %s\n", files[i], strerror(EISDIR));
                        return -EISDIR;
                }
        }
        return 0;
}

typedef struct Tester {
        RuleSet *rs;
        FILE *out;
        const char *file_prefix; /* "FILE:" when several files are read, else "" */
        uint64_t line_no;
        const char *raw;
        size_t raw_len;
        StrBuf buf;
        uint64_t formats[_LINE_FORMAT_MAX];
        uint64_t limit_lines;
        uint64_t json_cut; /* journal JSON entries cut at TESTER_LINE_BYTES_MAX, skipped */
} Tester;

static int on_match(const RuleMatch *m, const LogRecord *rec, void *userdata) {
        Tester *t = userdata;
        int r;

        strbuf_reset(&t->buf);
        r = strbuf_appendf(&t->buf, "%s%llu\t%s\t", t->file_prefix, (unsigned long long) t->line_no, m->rule->name);
        if (r < 0)
                return r;
        r = strbuf_append_escaped(&t->buf, t->raw, t->raw_len);
        if (r < 0)
                return r;
        r = strbuf_putc(&t->buf, '\n');
        if (r < 0)
                return r;
        if (fwrite(t->buf.data, 1, t->buf.len, t->out) != t->buf.len)
                return -EIO;
        return 0;
}

static int tester_feed(Tester *t, FILE *f, const char *name, FILE *err) {
        _cleanup_free_ char *buf = malloc(TESTER_BUFFER_BYTES);
        _cleanup_free_ char *scratch = malloc(TESTER_LINE_BYTES_MAX + 1);
        LineReader lr = { .f = f, .buf = buf };
        char *line;
        size_t len;
        int r;

        if (!buf || !scratch)
                return -ENOMEM;
        t->line_no = 0;
        t->json_cut = 0;
        while ((r = line_reader_next(&lr, &line, &len)) > 0) {
                RuleStats before;
                LogRecord rec;
                LineFormat fmt;

                t->line_no++;
                if (len > 0 && line[len - 1] == '\r')
                        len--;
                /* A cut JSON entry is no JSON any more, and would be read as the kernel's text. */
                if (lr.cut && len > 0 && (line[0] == '{' || line[0] == '\x1e' || startswith(line, "data: {"))) {
                        t->formats[LINE_FORMAT_SKIP]++;
                        t->json_cut++;
                        continue;
                }
                /* Parsing rewrites the line (kmsg escapes); keep the original for the output. */
                memcpy(scratch, line, len);
                scratch[len] = '\0';
                t->raw = line;
                t->raw_len = len;

                fmt = rules_input_parse_line(scratch, len, &rec);
                t->formats[fmt]++;
                if (fmt == LINE_FORMAT_SKIP)
                        continue;
                if (rec.message_len > LOG_MESSAGE_BYTES_MAX)
                        rec.message_len = LOG_MESSAGE_BYTES_MAX;

                rule_set_get_stats(t->rs, &before);
                /* Only journalctl's JSON carries the trusted fields a journal rule filters on. */
                r = rule_set_match_full(t->rs, &rec,
                                        fmt == LINE_FORMAT_JOURNAL_JSON ? 0 : RULE_MATCH_IGNORE_TRUSTED_FIELDS,
                                        on_match, t);
                if (r < 0) {
                        fprintf(err, "%s:%llu: matching failed: %s\n", name, (unsigned long long) t->line_no,
                                strerror(-r));
                        return r;
                }
                RuleStats after;
                rule_set_get_stats(t->rs, &after);
                if (_unlikely_(after.limit_hits != before.limit_hits))
                        t->limit_lines++;
        }
        if (r < 0) {
                fprintf(err, "%s: read error: %s\n", name, strerror(-r));
                return r;
        }
        if (lr.truncated > 0)
                fprintf(err, "%s: %llu lines longer than %u bytes were cut short%s\n", name,
                        (unsigned long long) lr.truncated, TESTER_LINE_BYTES_MAX,
                        t->json_cut > 0 ? " (the journal JSON entries among them skipped)" : "");
        return 0;
}

static bool has_filtered_journal_rules(const RuleSet *rs) {
        for (size_t i = 0; i < rule_set_size(rs); i++) {
                const Rule *r = rule_set_get(rs, i);
                if (r->enabled && r->source == RULE_SOURCE_JOURNAL &&
                    (r->unit || r->comm || r->exe || r->transport || r->uid != (uid_t) -1))
                        return true;
        }
        return false;
}

static int load_rules(const char *rules_path, RuleSet **ret, FILE *err, bool *reterr_config) {
        _cleanup_(rule_error_done) RuleError e = RULE_ERROR_NULL;
        int r;

        r = rule_set_load(rules_path, ret, &e);
        if (r < 0) {
                _cleanup_free_ char *s = e.message ? rule_error_format(&e) : NULL;
                if (s)
                        fprintf(err, "%s\n", s);
                else
                        fprintf(err, "%s: failed to load rules: %s\n", rules_path, strerror(-r));
                if (reterr_config)
                        *reterr_config = true;
        }
        return r;
}

static void print_summary(Tester *t, FILE *err, double secs) {
        RuleStats s;
        size_t width = 4;

        rule_set_get_stats(t->rs, &s);
        uint64_t lines = 0;
        for (int f = 0; f < _LINE_FORMAT_MAX; f++)
                lines += t->formats[f];
        fprintf(err, "%llu lines read in %.3fs (%.0f lines/s):", (unsigned long long) lines, secs,
                secs > 0 ? (double) lines / secs : 0.0);
        for (int f = 0; f < _LINE_FORMAT_MAX; f++)
                fprintf(err, "%s %llu %s", f > 0 ? "," : "", (unsigned long long) t->formats[f], line_format_to_string(f));
        fputc('\n', err);
        fprintf(err, "%llu matches, %llu lines hit a match limit, %llu regex runs\n", (unsigned long long) s.matches,
                (unsigned long long) t->limit_lines, (unsigned long long) s.regex_runs);

        for (size_t i = 0; i < rule_set_size(t->rs); i++)
                width = MAX(width, strlen(rule_set_get(t->rs, i)->name));
        fprintf(err, "  %-*s %10s %10s %10s\n", (int) width, "rule", "matches", "limit-hits", "regex-runs");
        for (size_t i = 0; i < rule_set_size(t->rs); i++) {
                const Rule *r = rule_set_get(t->rs, i);
                RuleStats rsx;
                rule_set_get_rule_stats(t->rs, i, &rsx);
                fprintf(err, "  %-*s %10llu %10llu %10llu%s\n", (int) width, r->name, (unsigned long long) rsx.matches,
                        (unsigned long long) rsx.limit_hits, (unsigned long long) rsx.regex_runs,
                        r->enabled ? "" : "  (disabled)");
        }
        if (t->formats[LINE_FORMAT_JOURNAL] > 0 && has_filtered_journal_rules(t->rs))
                fprintf(err, "note: text lines carry no trusted journal fields, so the unit, comm, exe, transport and "
                             "uid filters of journal rules were not checked on them; those rules were tried on their "
                             "pattern alone (journalctl -o json keeps the fields).\n");
}

int rules_tester_run(const char *rules_path, char *const *files, size_t n_files, FILE *out, FILE *err,
                     bool *reterr_config) {
        _cleanup_(rule_set_freep) RuleSet *rs = NULL;
        Tester t = { .out = out, .file_prefix = "" };
        uint64_t start;
        int r;

        r = load_rules(rules_path, &rs, err, reterr_config);
        if (r < 0)
                return r;
        t.rs = rs;

        /* A knob for benchmarks and for checking the prefilter changes nothing but speed. */
        const char *e = getenv("TPROF_RULES_PREFILTER");
        if (e && streq(e, "0"))
                rule_set_set_prefilter(rs, false);

        start = now_usec(CLOCK_MONOTONIC);
        /* Every file is checked before any is read: a typo in the last one does not come after the
         * matches of the first. (With none given, stdin is read.) */
        r = files_readable(files, n_files, err);
        if (n_files == 0)
                r = tester_feed(&t, stdin, "-", err);
        else
                for (size_t i = 0; i < n_files && r >= 0; i++) {
                        _cleanup_fclose_ FILE *f = NULL;
                        _cleanup_free_ char *prefix = NULL;

                        if (streq(files[i], "-"))
                                f = NULL;
                        else {
                                f = fopen(files[i], "re");
                                if (!f) {
                                        r = -errno;
                                        fprintf(err, "%s: cannot open: %s\n", files[i], strerror(errno));
                                        break;
                                }
                        }
                        if (n_files > 1) {
                                if (asprintf(&prefix, "%s:", files[i]) < 0) {
                                        r = -ENOMEM;
                                        break;
                                }
                                t.file_prefix = prefix;
                        }
                        r = tester_feed(&t, f ?: stdin, files[i], err);
                        t.file_prefix = "";
                }
        double secs = (double) (now_usec(CLOCK_MONOTONIC) - start) / (double) USEC_PER_SEC;
        strbuf_done(&t.buf);
        if (fflush(out) != 0 && r >= 0)
                r = -errno;
        if (r < 0)
                return r;

        print_summary(&t, err, secs);
        return 0;
}

int rules_tester_check(const char *rules_path, FILE *out, FILE *err, bool *reterr_config, RuleSet **ret_rules) {
        _cleanup_(rule_set_freep) RuleSet *rs = NULL;
        size_t disabled = 0;
        int r;

        r = load_rules(rules_path, &rs, err, reterr_config);
        if (r < 0)
                return r;
        for (size_t i = 0; i < rule_set_size(rs); i++)
                if (!rule_set_get(rs, i)->enabled)
                        disabled++;
        fprintf(out, "rules: %zu loaded from %s", rule_set_size(rs), rules_path);
        if (disabled > 0)
                fprintf(out, " (%zu disabled)", disabled);
        fputc('\n', out);
        if (ret_rules)
                *ret_rules = TAKE_PTR(rs);
        return 0;
}
