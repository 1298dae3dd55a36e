/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tprof-bundle show: explains one bundle to someone who has never seen tprof, in the order they
 * need it: what happened, the log around it, what the CPUs were doing, the top stacks, what rose
 * against the baseline (process and function, with a z-score for how sure we are; each process with
 * the unit, container and pod it ran in) and in the event's own seconds against the rest, the
 * services by share of the slice, the starved CPU on its own when the rule captured one (those
 * sections in bundle-show-rises.c), and where the files are and how to open them (bundle-show-files.c).
 * Everything that came from the bundle is escaped before it is printed; --json prints the same
 * content for programs (bundle-show-json.c).
 */
#include <getopt.h>
#include <stdarg.h>
#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include "basic/alloc-util.h"
#include "basic/json-reader.h"
#include "basic/json-writer.h"
#include "basic/log.h"
#include "basic/string-util.h"
#include "basic/time-util.h"
#include "bundle/bundle-analyze.h"
#include "tprof-bundle/bundle-output.h"
#include "tprof-bundle/bundle-show.h"
#include "tprof-bundle/tprof-bundle.h"


static bool arg_utc = false;
static int arg_json = 0;

static void help(void) {
        printf("Usage: tprof-bundle show [OPTIONS...] [ID]\n"
               "\n"
               "Explains one bundle (the newest when no ID is given; ID may be any unique prefix of\n"
               "the id or short id): what happened, the log lines around it, CPU activity, the top\n"
               "stacks and functions, and what rose in the slice against the baseline.\n"
               "\n"
               "  -h --help              Show this help\n"
               "     --utc               Times in UTC\n"
               "     --json=short|pretty Print JSON\n");
}

static int parse_argv(int argc, char *argv[]) {
        enum { ARG_UTC = 0x100, ARG_JSON };
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "utc", no_argument, NULL, ARG_UTC },
                { "json", optional_argument, NULL, ARG_JSON },
                {},
        };
        int c;

        /* Each call starts from the defaults: fuzz-bundle-show runs show many times in one process. */
        arg_utc = false;
        arg_json = 0;
        opterr = 0;
        while ((c = getopt_long(argc, argv, ":h", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        help();
                        return 0;
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
                                               "Unknown option '%s'. See 'tprof-bundle show --help'.",
                                               argv[optind - 1]);
                }
        }
        if (argc - optind > 1)
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "show takes at most one ID.");
        return 1;
}


static void show_done(Show *s) {
        for (size_t i = 0; i < s->n_log; i++) {
                free(s->log[i].source);
                free(s->log[i].message);
                free(s->log[i].who);
        }
        free(s->log);
        activity_done(&s->activity);
        folded_done(&s->slice);
        folded_done(&s->slice_grouped);
        folded_done(&s->baseline);
        folded_done(&s->cpu_slice);
        folded_done(&s->cpu_baseline);
        function_stats_free(s->functions, s->n_functions);
        rises_free(s->proc_rises, s->n_proc_rises);
        rises_free(s->func_rises, s->n_func_rises);
        folded_done(&s->near);
        folded_done(&s->near_rest);
        folded_done(&s->own_slice);
        folded_done(&s->own_baseline);
        folded_done(&s->own_near);
        rises_free(s->near_proc_rises, s->n_near_proc_rises);
        rises_free(s->near_func_rises, s->n_near_func_rises);
        answer_done(&s->answer);
        rises_free(s->cpu_rises, s->n_cpu_rises);
        for (size_t i = 0; i < ELEMENTSOF(s->services); i++)
                rises_free(s->services[i], s->n_services[i]);
        bundle_unreadable_done(&s->unreadable);
}

char *show_bundle_file(const Show *s, const char *name) {
        char *p;
        if (asprintf(&p, "%s/%s", s->entry->path, name) < 0)
                return NULL;
        return p;
}

/* Records name as unreadable where r is an error other than ENOENT: the file is there but could not be
 * read (its permissions, an I/O error), which its section says and the exit status too. Returns r. */
static int show_record(Show *s, const char *name, int r) {
        return bundle_unreadable_add(&s->unreadable, s->entry->path, name, r);
}

bool show_print_unreadable(const Show *s, const char *needs, ...) {
        const BundleUnreadableFile *u = NULL;
        const char *name;
        va_list ap;

        va_start(ap, needs);
        while (!u && (name = va_arg(ap, const char *)))
                u = bundle_unreadable_find(&s->unreadable, s->entry->path, name);
        va_end(ap);
        if (!u)
                return false;
        _cleanup_free_ char *e = text_for_terminal(u->path, 0);
        printf("  (%s%s%scannot be read: %s: %s)\n", needs ? "needs " : "", needs ?: "", needs ? "; " : "", e ?: "?",
               strerror(-u->error));
        return true;
}

/* "unit comm[pid]" of a log.jsonl object, each part when present; NULL if none. */
static char *log_line_who(const JsonValue *v) {
        const char *unit = json_string_value(json_object_get(v, "unit"));
        const char *comm = json_string_value(json_object_get(v, "comm"));
        char pid_s[32] = "";
        int64_t pid = 0;
        char *who = NULL;

        if (!unit && !comm)
                return NULL;
        if (comm && json_i64_value(json_object_get(v, "pid"), &pid) && pid > 0)
                snprintf(pid_s, sizeof pid_s, "[%" PRIi64 "]", pid);
        if (asprintf(&who, "%s%s%s%s", unit ?: "", unit && comm ? " " : "", comm ?: "", pid_s) < 0)
                return NULL;
        return who;
}

static int load_log(Show *s) {
        _cleanup_free_ char *path = show_bundle_file(s, BUNDLE_LOG_JSON), *line = NULL;
        _cleanup_fclose_ FILE *in = NULL;
        size_t cap = 0;
        ssize_t n;
        bool found = false;

        if (!path)
                return -ENOMEM;
        in = fopen(path, "re");
        if (!in && errno == ENOENT) {
                /* Without log.jsonl, log.txt still has the lines for people, '>' marking the trigger. */
                free(path);
                path = show_bundle_file(s, BUNDLE_LOG_TEXT);
                if (!path)
                        return -ENOMEM;
                in = fopen(path, "re");
                if (!in)
                        return show_record(s, BUNDLE_LOG_TEXT, -errno);
                s->log_from_text = true;
        }
        if (!in)
                return show_record(s, BUNDLE_LOG_JSON, -errno);
        while (s->log_from_text && (n = getline(&line, &cap, in)) >= 0) {
                LogLine *l;

                if ((size_t) n > LOG_LINE_BYTES_MAX || s->n_log >= LOG_LINES_MAX) {
                        s->log_skipped++;
                        continue;
                }
                while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
                        line[--n] = '\0';
                if (!GREEDY_REALLOC(s->log, s->log_allocated, s->n_log + 1))
                        return -ENOMEM;
                l = &s->log[s->n_log];
                *l = (LogLine) { .priority = -1, .trigger = line[0] == '>' };
                l->message_len = n >= 2 ? (size_t) n - 2 : 0;
                l->message = memdup(n >= 2 ? line + 2 : "", l->message_len + 1);
                if (l->trigger && !found) {
                        s->trigger = s->n_log;
                        found = true;
                }
                s->n_log++;
        }
        while (!s->log_from_text && (n = getline(&line, &cap, in)) >= 0) {
                _cleanup_(json_value_freep) JsonValue *v = NULL;
                const JsonValue *msg;
                LogLine *l;

                if ((size_t) n > LOG_LINE_BYTES_MAX || s->n_log >= LOG_LINES_MAX ||
                    json_parse(line, (size_t) n, 8, &v, NULL) < 0 || v->type != JSON_TYPE_OBJECT) {
                        if (n > 1)
                                s->log_skipped++;
                        continue;
                }
                if (!GREEDY_REALLOC(s->log, s->log_allocated, s->n_log + 1))
                        return -ENOMEM;
                l = &s->log[s->n_log];
                *l = (LogLine) { .priority = -1 };
                l->has_realtime = json_u64_value(json_object_get(v, "t_realtime_usec"), &l->realtime_usec);
                l->has_perf = json_u64_value(json_object_get(v, "t_perf_ns"), &l->perf_ns);
                (void) json_i64_value(json_object_get(v, "priority"), &l->priority);
                (void) json_bool_value(json_object_get(v, "trigger"), &l->trigger);
                (void) json_bool_value(json_object_get(v, "kernel_origin"), &l->kernel);
                msg = json_object_get(v, "message");
                if (json_string_value(json_object_get(v, "source")))
                        l->source = strdup(json_string_value(json_object_get(v, "source")));
                if (json_string_value(msg)) {
                        l->message = memdup(msg->string.s, msg->string.len + 1);
                        l->message_len = msg->string.len;
                }
                l->who = log_line_who(v);
                bundle_oom_victim_feed(&s->victim, l->message, l->message_len, l->kernel, l->trigger,
                                       l->has_perf ? l->perf_ns : 0);
                if (l->trigger && !found) {
                        s->trigger = s->n_log;
                        found = true;
                }
                s->n_log++;
        }
        if (!found)
                s->trigger = s->n_log / 2;
        s->log_first = s->trigger > LOG_CONTEXT_LINES ? s->trigger - LOG_CONTEXT_LINES : 0;
        s->log_end = MIN(s->n_log, s->trigger + LOG_CONTEXT_LINES + 1);
        return 0;
}

/* The slice as it is ranked (Show.slice_grouped). */
static const Folded *ranked_slice(const Show *s) {
        return s->grouped ? &s->slice_grouped : &s->slice;
}

/* event.folded against the rest of the slice and the baseline: a rise in the event's own seconds
 * that the whole slice, many times longer, dilutes below notice. */
static void load_near(Show *s) {
        _cleanup_free_ char *p = show_bundle_file(s, BUNDLE_NEAR_EVENT_FOLDED);
        const BundleManifest *m = s->m;

        s->near_from_ns = s->near_to_ns = BUNDLE_NEAR_EVENT_NS;
        if (m && m->has_slice && m->has_event_perf_ns) {
                uint64_t t = m->event_t_perf_ns, from, to;

                bundle_near_event_range(t, m->slice_from_perf_ns, m->slice_to_perf_ns, &from, &to);
                s->near_from_ns = t > from ? t - from : 0; /* 0 for an event outside its slice */
                s->near_to_ns = to > t ? to - t : 0;
        }
        s->near_error = p ? show_record(s, BUNDLE_NEAR_EVENT_FOLDED, folded_load(p, &s->near)) : -ENOMEM;
        if (s->near_error >= 0 && s->own_error >= 0)
                s->own_error = bundle_threads_own(s->m, &s->near, &s->own_near);
        if (s->near_error >= 0)
                s->near_error = bundle_threads_group(s->m, &s->near);
        if (s->near_error < 0 || s->slice_error < 0 || s->baseline_error < 0)
                return;
        s->near_error = folded_rest(ranked_slice(s), &s->baseline, &s->near, &s->near_rest);
        if (s->near_error < 0)
                return;
        (void) folded_rises(&s->near, &s->near_rest, RISE_PROCESS, SIZE_MAX, &s->near_proc_rises,
                            &s->n_near_proc_rises);
        (void) folded_rises(&s->near, &s->near_rest, RISE_FUNCTION, SIZE_MAX, &s->near_func_rises,
                            &s->n_near_func_rises);
}

/* The one-line answer from every rise there is, then the lists cut to what is shown. */
static void choose_answer(Show *s) {
        bool near = s->near_error >= 0;
        AnswerInput in = {
                .slice_proc = s->proc_rises,
                .n_slice_proc = s->n_proc_rises,
                .slice_func = s->func_rises,
                .n_slice_func = s->n_func_rises,
                .near_proc = s->near_proc_rises,
                .n_near_proc = s->n_near_proc_rises,
                .near_func = s->near_func_rises,
                .n_near_func = s->n_near_func_rises,
                .near = near ? &s->near : NULL,
                .rest = near ? &s->near_rest : NULL,
                .n_cpus = s->m ? (unsigned) MIN(s->m->profile_n_cpus, (uint64_t) UINT32_MAX) : 0,
        };

        /* A CPU gained is counted in the CPUs the samples stand for, fewer than the host's where
         * idle CPUs take no samples. */
        bundle_sampled_cpus(s->m, s->slice_error >= 0 ? s->slice.total : 0,
                            s->baseline_error >= 0 ? s->baseline.total : 0, near ? s->near.total : 0,
                            near ? s->near_rest.total : 0, &in.cpus);
        (void) answer_choose(&in, ranked_slice(s), &s->baseline, &s->answer);
        rises_truncate(s->proc_rises, &s->n_proc_rises, TOP_RISES);
        rises_truncate(s->func_rises, &s->n_func_rises, TOP_RISES);
        rises_truncate(s->near_proc_rises, &s->n_near_proc_rises, TOP_RISES);
        rises_truncate(s->near_func_rises, &s->n_near_func_rises, TOP_RISES);
        /* The answer and the rankings' rows name a group's one thread that carried its rise. */
        if (s->own_error >= 0)
                (void) bundle_threads_name(&s->own_slice, &s->own_baseline, near ? &s->own_near : NULL,
                                           near ? s->near_rest.total : 0, &s->answer, s->proc_rises, s->n_proc_rises,
                                           s->near_proc_rises, s->n_near_proc_rises);
}

static void load_all(Show *s) {
        _cleanup_free_ char *p1 = NULL, *p2 = NULL;
        const BundleManifest *m = s->m;
        int r;

        s->log_error = load_log(s);
        /* Only counted in Files, but windows/ that cannot be listed is said there, not left out. */
        p1 = show_bundle_file(s, BUNDLE_WINDOWS_DIR);
        if (p1 && access(p1, R_OK | X_OK) < 0)
                (void) show_record(s, BUNDLE_WINDOWS_DIR, -errno);
        free(p1);
        p1 = NULL;

        if (m && m->has_slice) {
                uint64_t len = m->slice_to_perf_ns - m->slice_from_perf_ns;
                s->n_seconds = (unsigned) MIN((len + NSEC_PER_SEC - 1) / NSEC_PER_SEC, (uint64_t) ACTIVITY_SECONDS_MAX);
                if (m->has_event_perf_ns && m->event_t_perf_ns >= m->slice_from_perf_ns &&
                    m->event_t_perf_ns <= m->slice_to_perf_ns) {
                        s->event_second = (unsigned) ((m->event_t_perf_ns - m->slice_from_perf_ns) / NSEC_PER_SEC);
                        s->has_event_second = true;
                }
        }
        p1 = show_bundle_file(s, BUNDLE_ACTIVITY);
        s->activity_error = p1 ? show_record(s, BUNDLE_ACTIVITY, activity_load(p1, s->n_seconds, &s->activity)) : -ENOMEM;
        if (s->activity_error >= 0)
                s->n_seconds = s->activity.n_seconds;
        /* CPUs short of samples, judged over the whole seconds the slice's samples cover (the first
         * and last are partial), and only on cpu-clock: cycles stop while a CPU idles. */
        if (s->activity_error >= 0 && m && m->has_slice && m->profile_freq_hz > 0 && m->profile_event &&
            streq(m->profile_event, "cpu-clock") &&
            m->slice_covered_to_perf_ns > m->slice_covered_from_perf_ns &&
            m->slice_covered_from_perf_ns >= m->slice_from_perf_ns) {
                uint64_t a = m->slice_covered_from_perf_ns - m->slice_from_perf_ns,
                         b = m->slice_covered_to_perf_ns - m->slice_from_perf_ns;
                unsigned from = (unsigned) MIN((a + NSEC_PER_SEC - 1) / NSEC_PER_SEC, (uint64_t) ACTIVITY_SECONDS_MAX),
                         to = (unsigned) MIN(b / NSEC_PER_SEC, (uint64_t) ACTIVITY_SECONDS_MAX);
                s->n_shortfalls = activity_shortfalls(&s->activity, m->profile_freq_hz, from, to, s->shortfalls,
                                                      SHOW_SHORTFALLS_MAX);
        }

        free(p1);
        p1 = show_bundle_file(s, BUNDLE_FOLDED);
        p2 = show_bundle_file(s, BUNDLE_BASELINE_FOLDED);
        s->slice_error = p1 ? show_record(s, BUNDLE_FOLDED, folded_load(p1, &s->slice)) : -ENOMEM;
        s->baseline_error = p2 ? show_record(s, BUNDLE_BASELINE_FOLDED, folded_load(p2, &s->baseline)) : -ENOMEM;
        if (s->slice_error >= 0) {
                r = folded_functions(&s->slice, &s->functions, &s->n_functions);
                if (r >= 0)
                        r = bundle_threads_grouped(m, &s->slice, &s->slice_grouped);
                if (r < 0)
                        s->slice_error = r;
                s->grouped = r > 0;
        }
        if (s->slice_error >= 0 && s->baseline_error >= 0) {
                s->own_error = bundle_threads_own(m, &s->slice, &s->own_slice);
                if (s->own_error >= 0)
                        s->own_error = bundle_threads_own(m, &s->baseline, &s->own_baseline);
        } else
                s->own_error = -ENODATA;
        if (s->baseline_error >= 0)
                s->baseline_error = bundle_threads_group(s->m, &s->baseline);
        if (s->slice_error >= 0 && s->baseline_error >= 0) {
                (void) folded_rises(ranked_slice(s), &s->baseline, RISE_PROCESS, SIZE_MAX, &s->proc_rises,
                                    &s->n_proc_rises);
                (void) folded_rises(ranked_slice(s), &s->baseline, RISE_FUNCTION, SIZE_MAX, &s->func_rises,
                                    &s->n_func_rises);
        }
        load_near(s);
        choose_answer(s);
        if (s->slice_error >= 0)
                folded_sort_by_count(&s->slice);

        for (CgroupBy by = CGROUP_BY_UNIT; by <= CGROUP_BY_POD; by++)
                if (bundle_services(m, by, TOP_SERVICES, &s->services[by - 1], &s->n_services[by - 1]) >= 0)
                        s->has_services = true;

        if (bundle_manifest_capture_cpu(m, &s->cpu)) {
                char n1[64], n2[64];
                s->has_cpu = true;
                snprintf(n1, sizeof n1, BUNDLE_CPU_FOLDED_FMT, s->cpu);
                snprintf(n2, sizeof n2, BUNDLE_CPU_BASELINE_FOLDED_FMT, s->cpu);
                free(p1);
                free(p2);
                p1 = show_bundle_file(s, n1);
                p2 = show_bundle_file(s, n2);
                s->cpu_error = p1 && p2 ? show_record(s, n1, folded_load(p1, &s->cpu_slice)) : -ENOMEM;
                if (s->cpu_error >= 0)
                        s->cpu_error = show_record(s, n2, folded_load(p2, &s->cpu_baseline));
                if (s->cpu_error >= 0)
                        s->cpu_error = bundle_threads_group(s->m, &s->cpu_slice);
                if (s->cpu_error >= 0)
                        s->cpu_error = bundle_threads_group(s->m, &s->cpu_baseline);
                if (s->cpu_error >= 0)
                        (void) folded_rises(&s->cpu_slice, &s->cpu_baseline, RISE_PROCESS, TOP_RISES,
                                            &s->cpu_rises, &s->n_cpu_rises);
        }
}

/* ---- text ---- */

static const char *priority_name(int64_t p) {
        static const char *const names[] = { "emerg", "alert", "crit", "err", "warning", "notice", "info", "debug" };
        return p >= 0 && p < (int64_t) ELEMENTSOF(names) ? names[p] : "-";
}

static const char *format_time(char *buf, size_t l, uint64_t usec, bool utc, bool with_date) {
        time_t t = (time_t) (usec / USEC_PER_SEC);
        struct tm tm;
        char tmp[48], zone[64];

        if (!(utc ? gmtime_r(&t, &tm) : localtime_r(&t, &tm)))
                return "-";
        strftime(tmp, sizeof tmp, with_date ? "%Y-%m-%d %H:%M:%S" : "%H:%M:%S", &tm);
        if (with_date) {
                strftime(zone, sizeof zone, utc ? "UTC" : "%Z", &tm);
                snprintf(buf, l, "%.40s.%06llu %.15s", tmp, (unsigned long long) (usec % USEC_PER_SEC), zone);
        } else
                snprintf(buf, l, "%s.%03llu", tmp, (unsigned long long) (usec % USEC_PER_SEC / 1000));
        return buf;
}

const char *show_format_offset(char *buf, size_t l, int64_t ns) {
        char span[FORMAT_TIMESPAN_MAX];
        uint64_t a = ns < 0 ? (uint64_t) -ns : (uint64_t) ns;
        snprintf(buf, l, "%c%s", ns < 0 ? '-' : '+', format_timespan(span, sizeof span, a / NSEC_PER_USEC));
        return buf;
}

void show_section(const Show *s, const char *title) {
        printf("\n%s%s%s\n", s->color ? ANSI_BOLD : "", title, s->color ? ANSI_NORMAL : "");
}

/* Prints "  label: " then the escaped value (cut to the width) and a newline. */
static void field(const Show *s, const char *label, const char *value) {
        _cleanup_free_ char *v = text_for_terminal(value, s->columns > 14 ? s->columns - 13 : 0);
        printf("%11s: %s\n", label, v ?: "?");
}

/* A share as a percentage with one decimal; a share too small for that is "<0.1%", not "0.0%". */
const char *show_share(char *buf, size_t l, double share) {
        if (share > 0 && share < 0.0005)
                snprintf(buf, l, "<0.1%%");
        else
                snprintf(buf, l, "%.1f%%", 100 * share);
        return buf;
}

char *show_process_name(const Show *s, const char *comm, size_t cut) {
        _cleanup_free_ char *name = text_for_terminal(comm, cut);
        uint64_t n = bundle_comm_processes(s->m, comm);
        char *ret;

        if (!name || n == 0)
                return TAKE_PTR(name);
        if (asprintf(&ret, "%s (%" PRIu64 " processes)", name, n) < 0)
                return NULL;
        return ret;
}

/* The seconds event.folded covers, as the summary says them. */
static double near_seconds(const Show *s) {
        return (double) (s->near_from_ns + s->near_to_ns) / 1e9;
}

/* The process's name for the summary, in color, " of PROCESS" for a thread with a name of its
 * own, and " (unit ..., container ...)" where it rose (direction > 0) or fell (< 0), in the event's
 * own seconds (near) or in the slice, escaped for the terminal. Where one thread carried a group's
 * rise, that thread is named, the group after it: "pool-2 of mt (one of its threads pool-*; unit
 * ...)". */
static char *summary_process(const Show *s, const char *comm, const char *thread, int direction, bool near,
                             const char *color) {
        char where[3 * BUNDLE_SERVICE_NAME_BYTES], pbuf[256];
        const char *process = bundle_thread_process(s->m, comm, pbuf, sizeof pbuf);
        _cleanup_free_ char *name = thread ? text_for_terminal(thread, 40) : show_process_name(s, comm, 40), *w = NULL,
                            *p = process ? text_for_terminal(process, 40) : NULL,
                            *g = thread ? text_for_terminal(comm, 40) : NULL, *group = NULL;
        char *ret = NULL;

        (void) bundle_process_cgroup(s->m, comm, direction, near, where, sizeof where);
        w = where[0] ? text_for_terminal(where, 160) : NULL;
        if (thread && asprintf(&group, "one of %s threads %s%s", process ? "its" : "the", g ?: "?",
                               where[0] ? "; " : "") < 0)
                return NULL;
        if (asprintf(&ret, "%s%s%s%s%s%s%s%s%s", s->color ? color : "", name ?: "?", s->color ? ANSI_NORMAL : "",
                     process ? " of " : "", process ? p ?: "?" : "", where[0] || group ? " (" : "", group ?: "",
                     where[0] ? w ?: "?" : "", where[0] || group ? ")" : "") < 0)
                return NULL;
        return ret;
}

/* The answer first: which process and function rose, in one or two lines. */
static void print_summary(const Show *s) {
        const char *indent = "           ";

        if (!s->m)
                return;
        printf("%s%11s:%s ", s->color ? ANSI_BOLD : "", "In short", s->color ? ANSI_NORMAL : "");
        if (s->entry->state == BUNDLE_ENTRY_NO_COVERAGE || (s->slice_error >= 0 && s->slice.total == 0)) {
                printf("no samples in the slice (tprofd was not sampling then); the log below is what there is.\n");
                return;
        }
        /* From the whole slice against the baseline, or the event's own seconds against the rest;
         * a process, or a function of one. */
        if (s->answer.rise.name) {
                const Rise *ans = &s->answer.rise;
                bool near = answer_from_near(s->answer.from), fn = answer_from_function(s->answer.from);
                const char *comm, *leaf;
                size_t clen, llen;
                folded_stack_comm(ans->name, &comm, &clen);
                folded_stack_leaf(ans->name, &leaf, &llen);
                _cleanup_free_ char *cs = strndup(comm, clen);
                _cleanup_free_ char *who = summary_process(s, cs ?: "", s->answer.thread, +1, near, ANSI_RED),
                                    *func = text_for_terminal(leaf, 80), *top = text_for_terminal(ans->top_function, 80);
                char b1[16], b2[16], when[64] = "";
                if (near)
                        snprintf(when, sizeof when, " in the %gs around the event", near_seconds(s));
                /* The fallback: no rise passed the floors, and the strongest one is said as such. */
                if (!s->answer.clear)
                        printf("no clear rise; the strongest: ");
                if (fn && leaf != comm)
                        printf("%s%s%s in ", s->color ? ANSI_RED : "", func ?: "?", s->color ? ANSI_NORMAL : "");
                printf("%s rose to %s of the samples%s (%s %s, z=%.1f)", who ?: "?",
                       show_share(b1, sizeof b1, ans->slice_share), when, near ? "the rest of the bundle" : "baseline",
                       show_share(b2, sizeof b2, ans->baseline_share), ans->z);
                if (!fn && ans->top_function)
                        printf("; its function that rose most: %s", top ?: "?");
                /* The caller most of the rise ran under, where the leaf alone does not say it. */
                if (s->answer.under && (!ans->top_function || !streq(s->answer.under, ans->top_function))) {
                        _cleanup_free_ char *u = text_for_terminal(s->answer.under, 80);
                        printf("%s most of the rise under %s", ans->top_function ? "," : ";", u ?: "?");
                }
                printf(".\n");
        } else if (s->slice_error < 0 || s->baseline_error < 0)
                printf("no comparison with the baseline possible (%s).\n",
                       s->slice_error != -ENOENT && s->baseline_error != -ENOENT ? "the stacks cannot be read"
                                                                             : "missing stacks");
        else if (s->baseline.total < SHOW_BASELINE_SAMPLES_MIN &&
                 (s->near_error < 0 || s->near_rest.total < SHOW_BASELINE_SAMPLES_MIN))
                /* Not "nothing rose": nothing could be compared (a bundle taken as tprofd started). */
                printf("no comparison possible: the baseline has %" PRIu64 " samples, too few to compare "
                       "with; see the top stacks.\n",
                       s->baseline.total);
        else if (s->baseline.total < SHOW_BASELINE_SAMPLES_MIN)
                /* Only the event's seconds were compared, with the rest: not the slice with the baseline. */
                printf("nothing rose significantly in the %gs around the event against the rest of the bundle (the "
                       "baseline has %" PRIu64 " samples, too few to compare the slice with); see the top stacks.\n",
                       near_seconds(s), s->baseline.total);
        else
                printf("nothing rose significantly against the baseline; see the top stacks.\n");
        /* What stopped at the event: as telling as what spun. */
        if (s->answer.fall.name) {
                const Rise *f = &s->answer.fall;
                _cleanup_free_ char *who = summary_process(s, f->name, NULL, -1, /* near= */ true, ANSI_GREEN);
                char b1[16], b2[16];
                printf("%s  %s fell to %s of the samples in the %gs around the event (the rest of the bundle %s, "
                       "z=%.1f).\n",
                       indent, who ?: "?", show_share(b1, sizeof b1, f->slice_share), near_seconds(s),
                       show_share(b2, sizeof b2, f->baseline_share), f->z);
        }
        if (s->has_cpu && s->n_cpu_rises > 0) {
                const Rise *r = &s->cpu_rises[0];
                _cleanup_free_ char *name = text_for_terminal(r->name, 40), *fn = text_for_terminal(r->top_function, 80);
                char b1[16], b2[16];
                printf("%s  On CPU %u, which the rule named: %s %s (baseline %s)%s%s.\n", indent, s->cpu, name ?: "?",
                       show_share(b1, sizeof b1, r->slice_share), show_share(b2, sizeof b2, r->baseline_share),
                       r->top_function ? ", rising most in " : "",
                       r->top_function ? fn ?: "?" : "");
        }
}

static void print_header(const Show *s) {
        const BundleEntry *e = s->entry;
        const BundleManifest *m = s->m;
        char b1[FORMAT_TIMESTAMP_MAX], b2[FORMAT_TIMESTAMP_MAX], o1[32], o2[32], span[FORMAT_TIMESPAN_MAX];
        _cleanup_free_ char *id = text_for_terminal(e->id, 0), *path = text_for_terminal(e->path, 0);
        _cleanup_strbuf_ StrBuf b = STRBUF_NULL;

        printf("%sBundle %s%s (%s)\n", s->color ? ANSI_BOLD : "", id ?: "?", s->color ? ANSI_NORMAL : "",
               bundle_entry_state_to_string(e->state));
        printf("%11s: %s\n", "Path", path ?: "?");
        print_summary(s);
        if (!m) {
                printf("\nThe manifest cannot be read (%s); showing what the other files hold.\n",
                       e->manifest_error == -EPROTO    ? "a newer format, or an unknown status"
                       : e->manifest_error == -EUCLEAN ? "no status, or a field of the wrong type"
                                                       : strerror(-e->manifest_error));
                return;
        }
        show_section(s, "What happened");
        /* Who was killed, first: the event's line names the task that asked for memory. */
        if (s->victim.found) {
                (void) strbuf_appendf(&b, "%s (pid %" PRIu64 "), by the OOM killer", s->victim.comm, s->victim.pid);
                field(s, "Killed", b.data);
                strbuf_reset(&b);
        }
        if (m->rule_description)
                (void) strbuf_appendf(&b, "%s - %s", m->rule_name ?: "-", m->rule_description);
        else
                (void) strbuf_append(&b, m->rule_name ?: "-");
        if (m->rule_group)
                (void) strbuf_appendf(&b, " (cooldown group %s)", m->rule_group);
        field(s, "Rule", b.data);
        if (m->has_event_realtime) {
                printf("%11s: %s (%s)\n", "Time", format_time(b1, sizeof b1, m->event_realtime_usec, arg_utc, true),
                       format_timestamp_utc(b2, sizeof b2, m->event_realtime_usec));
        }
        strbuf_reset(&b);
        (void) strbuf_appendf(&b, "%s, kernel %s", m->host ?: "-", m->kernel_release ?: "-");
        field(s, "Host", b.data);
        field(s, "Line", m->event_message);
        strbuf_reset(&b);
        (void) strbuf_appendf(&b, "%s", m->event_source ?: "-");
        if (m->event_priority >= 0)
                (void) strbuf_appendf(&b, ", priority %s", priority_name(m->event_priority));
        if (m->event_unit)
                (void) strbuf_appendf(&b, ", unit %s", m->event_unit);
        if (m->event_comm)
                (void) strbuf_appendf(&b, ", process %s", m->event_comm);
        field(s, "Source", b.data);
        if (json_length(m->event_captures) > 0) {
                strbuf_reset(&b);
                for (size_t i = 0; i < m->event_captures->container.n; i++) {
                        const JsonValue *v = m->event_captures->container.items[i];
                        char num[32];
                        const char *val = json_string_value(v);
                        int64_t iv;
                        if (!val && json_i64_value(v, &iv)) {
                                snprintf(num, sizeof num, "%" PRIi64, iv);
                                val = num;
                        }
                        (void) strbuf_appendf(&b, "%s%s=%s", i ? " " : "", m->event_captures->container.keys[i],
                                              val ?: "?");
                }
                field(s, "Captures", b.data);
        }
        if (m->repeats > 1) {
                printf("%11s: %" PRIu64 " times within the %s cooldown (the first included)", "Repeats", m->repeats,
                       m->rule_group ? "group's" : "rule's");
                for (size_t i = 0; i < json_length(m->joined_rules); i++) {
                        int64_t n = 0;
                        (void) json_i64_value(m->joined_rules->container.items[i], &n);
                        printf("%s%s %" PRIi64 "x", i ? ", " : "; of them rule ", m->joined_rules->container.keys[i], n);
                }
                putchar('\n');
        } else
                printf("%11s: once\n", "Repeats");
        if (m->has_slice) {
                int64_t from = m->has_event_perf_ns ? (int64_t) (m->slice_from_perf_ns - m->event_t_perf_ns) : 0;
                int64_t to = m->has_event_perf_ns ? (int64_t) (m->slice_to_perf_ns - m->event_t_perf_ns) : 0;
                printf("%11s: %s .. %s around the event, %" PRIu64 " samples, %" PRIu64 " lost", "Slice",
                       show_format_offset(o1, sizeof o1, from), show_format_offset(o2, sizeof o2, to), m->slice_samples,
                       m->slice_lost);
                if (m->profile_freq_hz)
                        printf(" (%" PRIu64 " Hz %s", m->profile_freq_hz, m->profile_event ?: "");
                if (m->profile_n_cpus)
                        printf(", %" PRIu64 " CPUs", m->profile_n_cpus);
                if (m->profile_freq_hz)
                        printf(")");
                printf("\n");
        }
        if (m->has_baseline) {
                printf("%11s: %" PRIu64 " samples from the pinned windows outside the slice", "Baseline",
                       m->baseline_samples);
                /* Its length depends on where the windows' edges fell: a short one compares roughly.
                 * In double: a manifest's rate times CPUs may not fit 64 bits. */
                double secs = m->profile_freq_hz > 0 && m->profile_n_cpus > 0
                                      ? (double) m->baseline_samples / ((double) m->profile_freq_hz * (double) m->profile_n_cpus)
                                      : INFINITY;
                if (secs < SHOW_BASELINE_SHORT_S)
                        printf(" (about %.1fs of sampling: a short baseline, the comparisons with it are rough)", secs);
                printf("\n");
        }
        if (m->alignment_method) {
                strbuf_reset(&b);
                (void) strbuf_append(&b, m->alignment_method);
                if (m->has_alignment_error)
                        (void) strbuf_appendf(&b, ", event time within %s%s", s->utf8 ? "±" : "+/-",
                                              m->alignment_error_ns < 1000
                                                      ? "1us"
                                                      : format_timespan(span, sizeof span, m->alignment_error_ns / 1000));
                field(s, "Alignment", b.data);
        }
        switch (e->state) {
        case BUNDLE_ENTRY_COMPLETE:
                printf("%11s: complete (samples cover the whole slice)\n", "Status");
                break;
        case BUNDLE_ENTRY_PARTIAL:
                printf("%11s: %spartial%s (part of the slice was never sampled, or lost)\n", "Status",
                       s->color ? ANSI_YELLOW : "", s->color ? ANSI_NORMAL : "");
                break;
        case BUNDLE_ENTRY_NO_COVERAGE:
                printf("%11s: %sno-coverage%s (tprofd was not sampling then; only the log is kept)\n", "Status",
                       s->color ? ANSI_YELLOW : "", s->color ? ANSI_NORMAL : "");
                break;
        case BUNDLE_ENTRY_PENDING:
                printf("%11s: pending (the slice is still being recorded)\n", "Status");
                break;
        default:
                printf("%11s: %s\n", "Status", bundle_entry_state_to_string(e->state));
        }
        if (m->interrupted) {
                _cleanup_free_ char *v = NULL;
                if (asprintf(&v, "tprofd stopped while recording the slice; its next start%s%s finished the bundle",
                             m->interrupted_resumed_utc ? ", at " : "", m->interrupted_resumed_utc ?: "") < 0)
                        v = NULL;
                field(s, "Interrupted", v ?: "yes");
        }
        if (m->note)
                field(s, "Note", m->note);
}

static void print_log(const Show *s) {
        _cleanup_free_ char *logtxt = show_bundle_file(s, BUNDLE_LOG_TEXT);
        _cleanup_free_ char *logtxt_e = text_for_terminal(logtxt, 0);
        const BundleManifest *m = s->m;

        show_section(s, "Log around the event");
        if (s->log_error < 0) {
                if (!show_print_unreadable(s, NULL, BUNDLE_LOG_JSON, BUNDLE_LOG_TEXT, NULL))
                        printf("  (no %s or %s: %s)\n", BUNDLE_LOG_JSON, BUNDLE_LOG_TEXT, strerror(-s->log_error));
                return;
        }
        if (s->n_log == 0) {
                printf("  (no log lines in the slice)\n");
                return;
        }
        if (s->log_first > 0)
                printf("  ... %zu earlier line%s in %s\n", s->log_first, s->log_first == 1 ? "" : "s", logtxt_e ?: "?");
        for (size_t i = s->log_first; i < s->log_end; i++) {
                const LogLine *l = &s->log[i];
                char tb[64], ob[32] = "";
                size_t prefix = 2 + 12 + 2 + 9 + 2 + 8 + 1 + 7 + 1;
                _cleanup_free_ char *msg = text_for_terminal_n(
                        l->message, l->message_len,
                        s->columns > prefix + 10 ? s->columns - prefix : (s->columns ? 10 : 1000));
                _cleanup_free_ char *src = text_for_terminal(l->source, 8);

                if (s->log_from_text) {
                        _cleanup_free_ char *t = text_for_terminal_n(l->message, l->message_len,
                                                                     s->columns > 12 ? s->columns - 2 : (s->columns ? 10 : 1000));
                        printf("%c %s\n", l->trigger ? '>' : ' ', t ?: "?");
                        continue;
                }
                if (l->has_perf && m && m->has_event_perf_ns) {
                        int64_t d = (int64_t) (l->perf_ns - m->event_t_perf_ns);
                        snprintf(ob, sizeof ob, "%+.3fs", (double) d / 1e9);
                }
                _cleanup_free_ char *who = l->who ? text_for_terminal(l->who, 64) : NULL;
                printf("%s%c %-12s  %9s  %-8s %-7s %s%s%s%s\n", l->trigger && s->color ? ANSI_BOLD : "",
                       l->trigger ? '>' : ' ',
                       l->has_realtime ? format_time(tb, sizeof tb, l->realtime_usec, arg_utc, false) : "-", ob,
                       src ?: "-", priority_name(l->priority), who ?: "", who ? ": " : "", msg ?: "?",
                       l->trigger && s->color ? ANSI_NORMAL : "");
        }
        if (s->log_end < s->n_log)
                printf("  ... %zu more line%s in %s\n", s->n_log - s->log_end, s->n_log - s->log_end == 1 ? "" : "s",
                       logtxt_e ?: "?");
        if (s->log_skipped > 0)
                printf("  (%zu malformed line%s in %s skipped)\n", s->log_skipped, s->log_skipped == 1 ? "" : "s",
                       BUNDLE_LOG_JSON);
}

/*
 * "comm;…;f1;f2;leaf": the comm and the last frames, as many as fit in width (at most
 * STACK_FRAMES_SHOWN); if even the leaf alone does not fit, the leaf is cut from the left, so the
 * comm and the end of the leaf's name stay visible.
 */
static char *compact_stack(const Show *s, const char *stack, size_t width) {
        const char *ell = s->utf8 ? "…" : "...";
        const char *comm;
        size_t clen, nframes = 0;

        folded_stack_comm(stack, &comm, &clen);
        for (const char *p = stack; (p = strchr(p, ';')); p++)
                nframes++;
        for (size_t shown = MIN(nframes, (size_t) STACK_FRAMES_SHOWN);; shown--) {
                _cleanup_strbuf_ StrBuf b = STRBUF_NULL;
                const char *p = comm + clen;
                _cleanup_free_ char *e = NULL;

                (void) strbuf_append_n(&b, comm, clen);
                if (nframes > shown) {
                        for (size_t skip = nframes - shown; skip > 0; skip--)
                                p = strchr(p + 1, ';');
                        (void) strbuf_appendf(&b, ";%s", ell);
                }
                if (shown > 0)
                        (void) strbuf_append(&b, p);
                if (!b.data)
                        return NULL;
                e = text_for_terminal(b.data, 0);
                if (!e)
                        return NULL;
                if (width == 0 || utf8_width(e) <= width)
                        return TAKE_PTR(e);
                if (shown <= 1) {
                        /* Keep the comm, cut the leaf from its left. */
                        _cleanup_free_ char *c = text_for_terminal_n(comm, clen, width / 3);
                        _cleanup_free_ char *leaf = text_for_terminal(p + (*p == ';'), 0);
                        char *r;
                        if (!c || !leaf)
                                return NULL;
                        size_t used = utf8_width(c) + 2 + utf8_width(ell), lw = utf8_width(leaf);
                        const char *t = leaf;
                        for (size_t w = lw; w + used > width && *t; t++)
                                if (((unsigned char) t[1] & 0xc0) != 0x80)
                                        w--;
                        if (asprintf(&r, "%s;%s%s", c, ell, t) < 0)
                                return NULL;
                        return r;
                }
        }
}

static void print_stacks(const Show *s) {
        const Folded *f = &s->slice;
        size_t width = s->columns > 20 ? s->columns - 18 : 0;

        show_section(s, "Top stacks in the slice");
        if (s->slice_error < 0) {
                if (!show_print_unreadable(s, NULL, BUNDLE_FOLDED, NULL))
                        printf("  (no %s: %s)\n", BUNDLE_FOLDED, strerror(-s->slice_error));
                return;
        }
        if (f->total == 0) {
                printf("  (no samples)\n");
                return;
        }
        for (size_t i = 0; i < MIN(f->n, (size_t) TOP_STACKS); i++) {
                _cleanup_free_ char *st = compact_stack(s, f->lines[i].stack, width);
                printf("  %5.1f%% %8" PRIu64 "  %s\n", 100.0 * (double) f->lines[i].count / (double) f->total,
                       f->lines[i].count, st ?: "?");
        }

        show_section(s, "Top functions in the slice (self: as the leaf, total: anywhere in the stack)");
        printf("  %6s %6s  %s\n", "SELF", "TOTAL", "FUNCTION");
        for (size_t i = 0; i < MIN(s->n_functions, (size_t) TOP_FUNCTIONS); i++) {
                _cleanup_free_ char *name = text_for_terminal(s->functions[i].name, s->columns > 20 ? s->columns - 18 : 0);
                printf("  %5.1f%% %5.1f%%  %s\n", 100.0 * (double) s->functions[i].self / (double) f->total,
                       100.0 * (double) s->functions[i].total / (double) f->total, name ?: "?");
        }
}

int verb_show(int argc, char *argv[]) {
        _cleanup_(bundle_list_donep) BundleList l = BUNDLE_LIST_NULL;
        Show s = {};
        int r;

        (void) setlocale(LC_CTYPE, "");
        r = parse_argv(argc, argv);
        if (r <= 0)
                return r < 0 ? EX_USAGE : EXIT_SUCCESS;
        r = bundles_load(&l);
        if (r < 0)
                return EXIT_FAILURE;
        r = bundles_resolve(&l, optind < argc ? argv[optind] : NULL);
        if (r < 0)
                return EXIT_FAILURE;

        s.entry = &l.entries[r];
        s.m = s.entry->manifest;
        s.color = output_colors();
        s.utf8 = output_utf8();
        s.columns = output_columns();
        load_all(&s);

        if (arg_json) {
                r = show_print_json(&s, arg_json == 2);
                /* The text says an unreadable file in its section; JSON leaves the section out. */
                for (size_t i = 0; i < s.unreadable.n; i++)
                        log_error_errno_escaped(s.unreadable.files[i].error, "Cannot read '%s': %m",
                                                s.unreadable.files[i].path);
        }
        else {
                print_header(&s);
                print_log(&s);
                show_print_activity(&s);
                print_stacks(&s);
                show_print_unusual(&s);
                show_print_services(&s);
                show_print_cpu(&s);
                show_print_files(&s);
                r = 0;
        }
        if (fflush(stdout) != 0 && r >= 0)
                r = log_error_errno(SYNTHETIC_ERRNO(EIO), "Failed to write output.");
        /* What can be read is shown, but a script must not take a bundle ls calls corrupt (the
         * warning names why: no manifest to read, no status, a newer writer's) for a good one. */
        if (r >= 0 && s.entry->manifest_error < 0)
                r = -EBADMSG;
        /* Nor one with a file that is there but could not be read: a part of it is not shown. */
        if (r >= 0 && s.unreadable.n > 0)
                r = -EIO;
        show_done(&s);
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
