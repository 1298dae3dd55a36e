/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tprof-bundle ls: one row per bundle, oldest first, like coredumpctl list. Filters are rule names
 * or FIELD=VALUE pairs on the manifest (bundle_entry_matches()) and a --since/--until time range.
 * The message column is cut to the width of the terminal, or to $COLUMNS; when stdout is not a
 * terminal and COLUMNS is unset it is printed whole (escaped), so grep sees all of it. Nothing
 * listed is exit status 1 with "No bundles found." on stderr.
 */
#include <getopt.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>

#include "basic/json-writer.h"
#include "basic/log.h"
#include "basic/time-parse.h"
#include "basic/time-util.h"
#include "tprof-bundle/bundle-output.h"
#include "tprof-bundle/tprof-bundle.h"

static uint64_t arg_since = 0, arg_until = UINT64_MAX;
static bool arg_newest_only = false, arg_reverse = false, arg_no_legend = false, arg_utc = false;
static int arg_json = 0; /* 0 off, 1 short, 2 pretty */

static void help(void) {
        printf("Usage: tprof-bundle ls [OPTIONS...] [MATCH...]\n"
               "\n"
               "Lists incident bundles, oldest first. MATCH is a rule name or FIELD=VALUE on the\n"
               "manifest (rule=, status=, host=, cpu=3 for a capture, event.priority=3, ...).\n"
               "\n"
               "  -h --help              Show this help\n"
               "  -S --since=TIME        Only bundles of events at or after TIME\n"
               "  -U --until=TIME        Only bundles of events at or before TIME\n"
               "  -1                     Show only the newest bundle\n"
               "  -r --reverse           Newest first\n"
               "     --no-legend         No header and footer\n"
               "     --utc               Times in UTC\n"
               "     --json=short|pretty Print JSON\n"
               "\n"
               "TIME is \"now\", \"today\", \"yesterday\", \"-1h\", \"2026-11-21 14:30\", \"...Z\", \"@EPOCH\".\n");
}

static int parse_argv(int argc, char *argv[]) {
        enum { ARG_NO_LEGEND = 0x100, ARG_UTC, ARG_JSON };
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "since", required_argument, NULL, 'S' },
                { "until", required_argument, NULL, 'U' },
                { "reverse", no_argument, NULL, 'r' },
                { "no-legend", no_argument, NULL, ARG_NO_LEGEND },
                { "utc", no_argument, NULL, ARG_UTC },
                { "json", optional_argument, NULL, ARG_JSON },
                {},
        };
        uint64_t now = now_usec(CLOCK_REALTIME);
        int c, r;

        opterr = 0;
        while ((c = getopt_long(argc, argv, ":hS:U:1r", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case 'S':
                case 'U':
                        r = parse_timestamp(optarg, now, c == 'S' ? &arg_since : &arg_until);
                        if (r < 0)
                                return log_error_errno(r, "Invalid time '%s': %m", optarg);
                        break;
                case '1':
                        arg_newest_only = true;
                        break;
                case 'r':
                        arg_reverse = true;
                        break;
                case ARG_NO_LEGEND:
                        arg_no_legend = true;
                        break;
                case ARG_UTC:
                        arg_utc = true;
                        break;
                case ARG_JSON:
                        arg_json = parse_json_mode(optarg);
                        if (arg_json < 0)
                                return log_error_errno(arg_json, "Invalid --json '%s', expected short or pretty.",
                                                       optarg);
                        break;
                case ':':
                        return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "Option '%s' needs an argument.",
                                               argv[optind - 1]);
                default:
                        return log_error_errno(SYNTHETIC_ERRNO(EINVAL),
                                               "Unknown option '%s'. See 'tprof-bundle ls --help'.",
                                               argv[optind - 1]);
                }
        }
        return 1;
}

static const char *format_row_time(char *buf, size_t l, uint64_t usec) {
        time_t t = (time_t) (usec / USEC_PER_SEC);
        struct tm tm;

        if (usec == 0 || !(arg_utc ? gmtime_r(&t, &tm) : localtime_r(&t, &tm)))
                return "-";
        strftime(buf, l, arg_utc ? "%Y-%m-%d %H:%M:%S UTC" : "%Y-%m-%d %H:%M:%S %Z", &tm);
        return buf;
}

static const char *row_id(const BundleEntry *e) {
        return e->short_id[0] ? e->short_id : e->id;
}

static void json_entry(JsonWriter *w, const BundleEntry *e) {
        const BundleManifest *m = e->manifest;
        char tbuf[FORMAT_TIMESTAMP_MAX];

        json_begin_object(w);
        json_kv_string(w, "id", e->id);
        json_kv_string(w, "short_id", e->short_id[0] ? e->short_id : NULL);
        json_kv_string(w, "path", e->path);
        json_kv_string(w, "status", bundle_entry_state_to_string(e->state));
        json_kv_string(w, "rule", e->rule);
        json_key(w, "realtime_usec");
        if (e->realtime_usec)
                json_u64(w, e->realtime_usec);
        else
                json_null(w);
        json_kv_string(w, "utc", e->realtime_usec ? format_timestamp_utc(tbuf, sizeof tbuf, e->realtime_usec) : NULL);
        json_kv_string(w, "host", m ? m->host : NULL);
        json_kv_string(w, "message", m ? m->event_message : NULL);
        json_key(w, "samples");
        if (m && m->has_slice)
                json_u64(w, m->slice_samples);
        else
                json_null(w);
        json_key(w, "lost");
        if (m && m->has_slice)
                json_u64(w, m->slice_lost);
        else
                json_null(w);
        json_kv_u64(w, "repeats", m ? m->repeats : 0);
        json_kv_u64(w, "bytes", e->bytes);
        json_kv_u64(w, "windows_bytes", e->windows_bytes);
        json_kv_u64(w, "n_windows", e->n_windows);
        if (e->state == BUNDLE_ENTRY_CORRUPT) {
                json_key(w, "error");
                json_string(w, strerror(-e->manifest_error));
        }
        json_end_object(w);
}

static int print_json(const BundleList *l, const size_t *idx, size_t n) {
        _cleanup_free_ char *text = NULL;
        JsonWriter w;
        int r;

        json_writer_init(&w, arg_json == 2);
        json_begin_array(&w);
        for (size_t i = 0; i < n; i++)
                json_entry(&w, &l->entries[idx[i]]);
        json_end_array(&w);
        text = json_finish(&w, &r);
        json_writer_done(&w);
        if (!text)
                return log_error_errno(r, "Failed to format JSON: %m");
        json_text_print(text);
        return 0;
}

typedef struct Row {
        char time[64], samples[24], size[FORMAT_BYTES_MAX];
        char *id, *rule, *message;
        const char *status;
} Row;

static int print_table(const BundleList *l, const size_t *idx, size_t n) {
        _cleanup_free_ Row *rows = calloc(n ?: 1, sizeof(Row));
        size_t w_time = 4, w_id = 2, w_rule = 4, w_samples = 7, w_size = 4, w_status = 6;
        unsigned columns = output_columns();
        bool color = output_colors();
        uint64_t total_bytes = 0, total_windows = 0;
        int r = 0;

        if (!rows)
                return log_oom();
        for (size_t i = 0; i < n; i++) {
                const BundleEntry *e = &l->entries[idx[i]];
                Row *row = &rows[i];

                format_row_time(row->time, sizeof row->time, e->realtime_usec);
                if (e->manifest && e->manifest->has_slice)
                        snprintf(row->samples, sizeof row->samples, "%llu",
                                 (unsigned long long) e->manifest->slice_samples);
                else
                        strcpy(row->samples, "-");
                format_bytes(row->size, sizeof row->size, e->bytes);
                row->id = text_for_terminal(row_id(e), 40);
                row->rule = text_for_terminal(e->rule, 24);
                row->status = bundle_entry_state_to_string(e->state);
                if (!row->id || !row->rule) {
                        r = log_oom();
                        goto finish;
                }
                total_bytes += e->bytes;
                total_windows += e->windows_bytes;
                w_time = MAX(w_time, strlen(row->time));
                w_id = MAX(w_id, utf8_width(row->id));
                w_rule = MAX(w_rule, utf8_width(row->rule));
                w_samples = MAX(w_samples, strlen(row->samples));
                w_size = MAX(w_size, strlen(row->size));
                w_status = MAX(w_status, strlen(row->status));
        }

        size_t used = w_time + w_id + w_rule + w_samples + w_size + w_status + 6 * 2;
        size_t w_msg = columns == 0 ? 0 : (columns > used + 10 ? columns - used : 10);

        if (!arg_no_legend)
                printf("%s%-*s  %-*s  %-*s  %*s  %*s  %-*s  %s%s\n", color ? ANSI_BOLD : "", (int) w_time, "TIME",
                       (int) w_id, "ID", (int) w_rule, "RULE", (int) w_samples, "SAMPLES", (int) w_size, "SIZE",
                       (int) w_status, "STATUS", "MESSAGE", color ? ANSI_NORMAL : "");
        for (size_t i = 0; i < n; i++) {
                const BundleEntry *e = &l->entries[idx[i]];
                Row *row = &rows[i];
                const char *msg = e->manifest ? e->manifest->event_message : NULL;
                bool bad = e->state == BUNDLE_ENTRY_CORRUPT || e->state == BUNDLE_ENTRY_NO_COVERAGE;

                row->message = e->state == BUNDLE_ENTRY_CORRUPT && !msg
                                       ? strdup("(manifest unreadable)")
                                       : text_for_terminal(msg, w_msg);
                if (!row->message) {
                        r = log_oom();
                        goto finish;
                }
                /* printf pads by bytes; pad UTF-8 cells by characters ourselves. */
                printf("%-*s  %s%*s  %s%*s  %*s  %*s  %s%-*s%s  %s\n", (int) w_time, row->time, row->id,
                       (int) (w_id - utf8_width(row->id)), "", row->rule, (int) (w_rule - utf8_width(row->rule)), "",
                       (int) w_samples, row->samples, (int) w_size, row->size, color && bad ? ANSI_YELLOW : "",
                       (int) w_status, row->status, color && bad ? ANSI_NORMAL : "", row->message);
        }
        if (!arg_no_legend) {
                char b1[FORMAT_BYTES_MAX], b2[FORMAT_BYTES_MAX];
                printf("\n%zu bundle%s, %s", n, n == 1 ? "" : "s", format_bytes(b1, sizeof b1, total_bytes));
                if (total_windows > 0)
                        printf(" (windows/ hard links to the ring, not counted: %s)",
                               format_bytes(b2, sizeof b2, total_windows));
                printf(".\n");
        }
finish:
        for (size_t i = 0; i < n; i++) {
                free(rows[i].id);
                free(rows[i].rule);
                free(rows[i].message);
        }
        return r;
}

/* The field a filter is about: a bare word is a rule name, like "rule=WORD". */
static bool same_field(const char *a, const char *b) {
        size_t ka = strchr(a, '=') ? strcspn(a, "=") : 0, kb = strchr(b, '=') ? strcspn(b, "=") : 0;
        const char *fa = ka ? a : "rule", *fb = kb ? b : "rule";
        ka = ka ?: 4;
        kb = kb ?: 4;
        return ka == kb && strneq(fa, fb, ka);
}

int verb_list(int argc, char *argv[]) {
        _cleanup_(bundle_list_donep) BundleList l = BUNDLE_LIST_NULL;
        _cleanup_free_ size_t *idx = NULL;
        size_t n = 0;
        int r;

        (void) setlocale(LC_CTYPE, "");
        r = parse_argv(argc, argv);
        if (r <= 0)
                return r < 0 ? EX_USAGE : EXIT_SUCCESS;
        r = bundles_load(&l);
        if (r < 0)
                return EXIT_FAILURE;

        idx = calloc(l.n ?: 1, sizeof(size_t));
        if (!idx)
                return log_oom(), EXIT_FAILURE;
        for (size_t i = 0; i < l.n; i++) {
                const BundleEntry *e = &l.entries[i];
                bool ok = true;

                if (e->realtime_usec < arg_since || e->realtime_usec > arg_until)
                        continue;
                /* Filters on different fields must all hold; several on one field are alternatives. */
                for (int a = optind; a < argc && ok; a++) {
                        bool any = false, seen_before = false;

                        for (int b = optind; b < a; b++)
                                seen_before = seen_before || same_field(argv[a], argv[b]);
                        if (seen_before)
                                continue;
                        for (int b = a; b < argc && !any; b++)
                                if (same_field(argv[a], argv[b]))
                                        any = bundle_entry_matches(e, argv[b]);
                        ok = any;
                }
                if (ok)
                        idx[n++] = i;
        }
        if (n == 0) {
                log_error("No bundles found.");
                /* A mistyped field matches nothing, silently: say which no bundle has at all. */
                for (int a = optind; a < argc; a++) {
                        const char *eq = strchr(argv[a], '=');
                        bool known = !eq || eq == argv[a];
                        _cleanup_free_ char *f = eq ? strndup(argv[a], (size_t) (eq - argv[a])) : NULL;
                        for (size_t i = 0; f && !known && i < l.n; i++)
                                known = bundle_entry_has_field(&l.entries[i], f);
                        if (f && !known && l.n > 0) {
                                _cleanup_free_ char *q = text_for_terminal(f, 80);
                                log_notice("No bundle has a field '%s' (status, rule, unit, container, pod, cgroup, "
                                           "or a manifest field such as cpu or event.priority).", q ?: "?");
                        }
                }
                /* A script's `| jq` gets an empty list, and the exit status says the rest. */
                if (arg_json)
                        (void) print_json(&l, idx, 0);
                return EXIT_FAILURE;
        }
        if (arg_newest_only) {
                idx[0] = idx[n - 1];
                n = 1;
        }
        for (size_t i = 0; i < n; i++)
                bundle_entry_warn_corrupt(&l.entries[idx[i]]);
        if (arg_reverse)
                for (size_t i = 0; i < n / 2; i++) {
                        size_t t = idx[i];
                        idx[i] = idx[n - 1 - i];
                        idx[n - 1 - i] = t;
                }
        r = arg_json ? print_json(&l, idx, n) : print_table(&l, idx, n);
        if (fflush(stdout) != 0 && r >= 0)
                r = log_error_errno(SYNTHETIC_ERRNO(EIO), "Failed to write output.");
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
