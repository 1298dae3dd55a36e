/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Test driver for the log sources: runs an sd-event loop with a kmsg source and/or a journal source
 * and prints every delivered record as one tab-separated line, so shell tests can drive the real
 * /dev/kmsg, recorded kmsg files and a private journald and check what arrives:
 *
 *   source kernel_origin seq t_ns facility priority transport unit comm pid uid identifier message
 *
 * (empty fields are "-", the message escaped with escape_text()). On exit the counters go to stderr as
 * "stats <source> records=N lost=N ...". --log-self TEXT sends one journal entry as ourselves (with
 * --own-identifier) to show that it is skipped. It stops on SIGINT/SIGTERM, after --count records whose
 * message contains --grep, at the end of a recorded kmsg file, or after --timeout seconds. With
 * --context-max N, the journal's entries before where reading begins (N of them at --context-priority
 * or more urgent counted) are printed first, each line with "context:" before it.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <systemd/sd-event.h>
#include <systemd/sd-journal.h>

#include "basic/cleanup.h"
#include "basic/clock-map.h"
#include "basic/macro.h"
#include "basic/string-util.h"
#include "basic/time-util.h"
#include "logsrc/logsrc-journal.h"
#include "logsrc/logsrc-kmsg.h"

static const char *arg_kmsg = NULL;
static bool arg_journal = false;
static const char *arg_namespace = NULL;
static const char *arg_journal_dir = NULL;
static const char *arg_state_dir = NULL;
static bool arg_from_start = false;
static bool arg_from_start_on_new_boot = false;
static const char *arg_own = NULL;
static const char *arg_grep = NULL;
static const char *arg_log_self = NULL;
static uint64_t arg_count = 0;
static uint64_t arg_timeout_sec = 30;
static char *arg_matches[64];
static size_t arg_n_matches = 0;

static unsigned arg_context_max = 0;
static int arg_context_priority = -1;

static sd_event *event = NULL;
static uint64_t n_matched = 0;

static void print_field(const char *s) {
        _cleanup_free_ char *e = NULL;

        if (isempty(s)) {
                fputs("-", stdout);
                return;
        }
        e = escape_text(s, strlen(s));
        fputs(e ?: "?", stdout);
}

static void print_record(const LogRecord *rec) {
        _cleanup_free_ char *msg = NULL;

        printf("%s\t%d\t%" PRIu64 "\t%" PRIu64 "\t%d\t%d\t", log_source_to_string(rec->source),
               rec->kernel_origin, rec->seq, rec->t_ns, rec->facility, rec->priority);
        print_field(rec->transport);
        putchar('\t');
        print_field(rec->unit);
        putchar('\t');
        print_field(rec->comm);
        printf("\t%d\t%d\t", (int) rec->pid, rec->uid == (uid_t) -1 ? -1 : (int) rec->uid);
        print_field(rec->identifier);
        putchar('\t');
        msg = escape_text(rec->message, rec->message_len);
        fputs(msg ?: "?", stdout);
        putchar('\n');
        fflush(stdout);
}

/* An entry read back for the log context only (--context-max): "context:" first. */
static int on_context_record(const LogRecord *rec, void *userdata) {
        fputs("context:", stdout);
        print_record(rec);
        return 0;
}

static int on_record(const LogRecord *rec, void *userdata) {
        print_record(rec);
        if (arg_count > 0 &&
            (!arg_grep || memmem(rec->message, rec->message_len, arg_grep, strlen(arg_grep))))
                if (++n_matched >= arg_count)
                        (void) sd_event_exit(event, 0);
        return 0;
}

static void on_kmsg_end(KmsgSource *k, int error, void *userdata) {
        (void) sd_event_exit(event, error < 0 ? 1 : 0);
}

static void print_stats(const char *name, const LogSourceStats *s) {
        fprintf(stderr,
                "stats %s records=%" PRIu64 " lost=%" PRIu64 " overruns=%" PRIu64 " malformed=%" PRIu64
                " truncated=%" PRIu64 " skipped_own=%" PRIu64 " skipped_old=%" PRIu64
                " skipped_kernel=%" PRIu64 " handler_errors=%" PRIu64 " position_errors=%" PRIu64 "\n",
                name, s->records, s->lost, s->overruns, s->malformed, s->truncated, s->skipped_own,
                s->skipped_old, s->skipped_kernel, s->handler_errors, s->position_errors);
}

static int parse_argv(int argc, char *argv[]) {
        enum {
                ARG_KMSG = 0x100,
                ARG_JOURNAL,
                ARG_NAMESPACE,
                ARG_JOURNAL_DIR,
                ARG_STATE_DIR,
                ARG_FROM_START,
                ARG_NEW_BOOT,
                ARG_MATCH,
                ARG_OWN,
                ARG_GREP,
                ARG_COUNT,
                ARG_TIMEOUT,
                ARG_LOG_SELF,
                ARG_CONTEXT_MAX,
                ARG_CONTEXT_PRIORITY,
        };
        static const struct option options[] = {
                { "kmsg", required_argument, NULL, ARG_KMSG },
                { "journal", no_argument, NULL, ARG_JOURNAL },
                { "namespace", required_argument, NULL, ARG_NAMESPACE },
                { "journal-dir", required_argument, NULL, ARG_JOURNAL_DIR },
                { "state-dir", required_argument, NULL, ARG_STATE_DIR },
                { "from-start", no_argument, NULL, ARG_FROM_START },
                { "from-start-on-new-boot", no_argument, NULL, ARG_NEW_BOOT },
                { "match", required_argument, NULL, ARG_MATCH },
                { "own-identifier", required_argument, NULL, ARG_OWN },
                { "grep", required_argument, NULL, ARG_GREP },
                { "count", required_argument, NULL, ARG_COUNT },
                { "timeout", required_argument, NULL, ARG_TIMEOUT },
                { "log-self", required_argument, NULL, ARG_LOG_SELF },
                { "context-max", required_argument, NULL, ARG_CONTEXT_MAX },
                { "context-priority", required_argument, NULL, ARG_CONTEXT_PRIORITY },
                {},
        };
        int c;

        while ((c = getopt_long(argc, argv, "", options, NULL)) >= 0)
                switch (c) {
                case ARG_KMSG:
                        arg_kmsg = optarg;
                        break;
                case ARG_JOURNAL:
                        arg_journal = true;
                        break;
                case ARG_NAMESPACE:
                        arg_namespace = optarg;
                        break;
                case ARG_JOURNAL_DIR:
                        arg_journal_dir = optarg;
                        break;
                case ARG_STATE_DIR:
                        arg_state_dir = optarg;
                        break;
                case ARG_FROM_START:
                        arg_from_start = true;
                        break;
                case ARG_NEW_BOOT:
                        arg_from_start_on_new_boot = true;
                        break;
                case ARG_MATCH:
                        if (arg_n_matches >= ELEMENTSOF(arg_matches) - 1)
                                return -E2BIG;
                        arg_matches[arg_n_matches++] = optarg;
                        break;
                case ARG_OWN:
                        arg_own = optarg;
                        break;
                case ARG_GREP:
                        arg_grep = optarg;
                        break;
                case ARG_COUNT:
                        arg_count = strtoull(optarg, NULL, 10);
                        break;
                case ARG_LOG_SELF:
                        arg_log_self = optarg;
                        break;
                case ARG_TIMEOUT:
                        arg_timeout_sec = strtoull(optarg, NULL, 10);
                        break;
                case ARG_CONTEXT_MAX:
                        arg_context_max = (unsigned) strtoul(optarg, NULL, 10);
                        break;
                case ARG_CONTEXT_PRIORITY:
                        arg_context_priority = atoi(optarg);
                        break;
                default:
                        return -EINVAL;
                }
        if (!arg_kmsg && !arg_journal)
                return -EINVAL;
        return 0;
}

int main(int argc, char *argv[]) {
        _cleanup_(kmsg_source_freep) KmsgSource *kmsg = NULL;
        _cleanup_(journal_source_freep) JournalSource *journal = NULL;
        ClockMap clock;
        LogSourceStats stats;
        sigset_t mask;
        int r;

        if (parse_argv(argc, argv) < 0) {
                fprintf(stderr,
                        "usage: %s [--kmsg PATH] [--journal [--namespace NS|--journal-dir DIR]] "
                        "[--state-dir DIR] [--from-start] [--from-start-on-new-boot] [--match "
                        "FIELD=VALUE]... "
                        "[--own-identifier ID [--log-self TEXT]] [--grep TEXT] [--count N] [--timeout "
                        "SEC] [--context-max N [--context-priority P]]\n",
                        argv[0]);
                return 2;
        }

        clock_map_assume(&clock);
        sigemptyset(&mask);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        sigprocmask(SIG_BLOCK, &mask, NULL);

        r = sd_event_default(&event);
        if (r < 0)
                goto fail;
        (void) sd_event_add_signal(event, NULL, SIGINT, NULL, NULL);
        (void) sd_event_add_signal(event, NULL, SIGTERM, NULL, NULL);
        if (arg_timeout_sec > 0)
                (void) sd_event_add_time_relative(event, NULL, CLOCK_MONOTONIC,
                                                  arg_timeout_sec * USEC_PER_SEC, 0, NULL,
                                                  (void *) (intptr_t) 124);

        if (arg_kmsg) {
                KmsgSourceOptions o = {
                        .path = arg_kmsg,
                        .state_dir = arg_state_dir,
                        .from_start = arg_from_start,
                        .from_start_on_new_boot = arg_from_start_on_new_boot,
                        .clock = &clock,
                        .own_identifier = arg_own,
                        .on_end = on_kmsg_end,
                };
                r = kmsg_source_new(event, &o, on_record, NULL, &kmsg);
                if (r < 0) {
                        fprintf(stderr, "kmsg source: %s\n", strerror(-r));
                        goto fail;
                }
        }

        if (arg_journal) {
                JournalSourceOptions o = {
                        .namespace = arg_namespace,
                        .directory = arg_journal_dir,
                        .state_dir = arg_state_dir,
                        .from_start = arg_from_start,
                        .clock = &clock,
                        .own_identifier = arg_own,
                        .matches = arg_n_matches > 0 ? (const char *const *) arg_matches : NULL,
                        /* the entries before where reading begins, printed with "context:" first */
                        .context_handler = arg_context_max > 0 ? on_context_record : NULL,
                        .context_age_usec = 15 * USEC_PER_MINUTE,
                        .context_entries_max = arg_context_max,
                        .context_priority_max = arg_context_priority,
                };
                r = journal_source_new(event, &o, on_record, NULL, &journal);
                if (r < 0) {
                        fprintf(stderr, "journal source: %s\n", strerror(-r));
                        goto fail;
                }
        }

        /* An entry of our own, to show the journal source skips it (--own-identifier). */
        if (arg_log_self && arg_own)
                (void) sd_journal_send("MESSAGE=%s", arg_log_self, "SYSLOG_IDENTIFIER=%s", arg_own, NULL);

        fprintf(stderr, "ready\n");
        r = sd_event_loop(event);

        if (kmsg) {
                kmsg_source_get_stats(kmsg, &stats);
                kmsg = kmsg_source_free(kmsg); /* saves the position */
                print_stats("kmsg", &stats);
        }
        if (journal) {
                journal_source_get_stats(journal, &stats);
                journal = journal_source_free(journal);
                print_stats("journal", &stats);
        }
        event = sd_event_unref(event);
        return r < 0 ? 1 : r;

fail:
        event = sd_event_unref(event);
        return r == -ENOENT || r == -EACCES || r == -EPERM || r == -ENODATA ? 77 : 1;
}
