/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tprofd: argument parsing and dispatch only. The daemon itself is manager.c; --test-rules and
 * --once are the rules and sampler modules' own entry points.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include "basic/cleanup.h"
#include "basic/log.h"
#include "basic/parse-util.h"
#include "basic/string-util.h"
#include "basic/time-util.h"
#include "control/control-client.h"
#include "rules/rules-tester.h"
#include "profile/profile-cgroup.h"
#include "sampler/sampler-once.h"
#include "sampler/sampler.h"
#include "tprofd/manager.h"
#include "tprofd/tprofd-config.h"

typedef enum Action {
        ACTION_RUN,
        ACTION_TEST_RULES,
        ACTION_ONCE,
        ACTION_CHECK_CONFIG,
} Action;

static Action arg_action = ACTION_RUN;
static uint64_t arg_once_usec = 0;
static pid_t arg_pid = 0;
static CgroupBy arg_by = CGROUP_BY_PROCESS;
static bool arg_cgroups_from_proc = false;
static TprofdConfig arg_config;

static void help(void) {
        printf("Usage: tprofd [OPTIONS...]\n"
               "       tprofd --test-rules [--rules PATH] [FILE...]\n"
               "       tprofd --once SECONDS [--freq HZ] [--pid PID] [--unwind MODE] [--by unit|container|pod]\n"
               "              [--cgroups-from-proc]\n"
               "       tprofd --check-config [--config FILE] [--rules PATH]\n"
               "\n"
               "Samples every CPU's stacks into a rolling ring of windows, follows the kernel log\n"
               "and the journal, and writes an incident bundle when a rule matches.\n"
               "\n"
               "Options:\n"
               "  -h --help              Show this help and exit\n"
               "     --version           Show the version and exit\n"
               "  -c --config FILE       Configuration file (default: %s, if it exists;\n"
               "                         command-line options override it)\n"
               "  -r --rules PATH        Rules file or rules.d folder\n"
               "                         (default: %s)\n"
               "  -s --state-dir DIR     State directory (default: %s)\n"
               "  -F --freq HZ           Sampling frequency per CPU, 1-%u (default: %u)\n"
               "  -w --window SECONDS    Length of one ring window, %llu-%llu (default: %llu)\n"
               "     --detail MODE       What the ring keeps of each sample: compact (default:\n"
               "                         frames are functions, times to 1 ms at 97 Hz) or exact\n"
               "                         (instruction addresses and microseconds, as perf script)\n"
               "     --unwind MODE       How user stacks are walked: auto (default: call frame\n"
               "                         information, frame pointers where a mapping has none),\n"
               "                         dwarf (call frame information only) or fp (frame pointers);\n"
               "                         auto and dwarf on x86-64 and arm64, fp elsewhere\n"
               "     --unwind-stack SIZE User stack copied per sample for auto/dwarf, a multiple of 8\n"
               "                         from %u to %u bytes (default: %u)\n"
               "     --kmsg PATH         Read kernel log records from PATH instead of /dev/kmsg\n"
               "                         (a recorded file of raw records replays them)\n"
               "     --journal-namespace NS\n"
               "                         Follow journal namespace NS instead of the system journal\n"
               "     --journal-context PRIORITY|off\n"
               "                         Journal entries a bundle's log carries around the event:\n"
               "                         those at PRIORITY (emerg ... debug) or more urgent\n"
               "                         (default: info), or none\n"
               "     --control-socket PATH\n"
               "                         Listen for tprof-bundle capture/status on PATH\n"
               "                         (default: %s; \"\" to not listen)\n"
               "     --max-bundles N     Keep at most N bundles, removing the oldest (default: %u)\n"
               "     --max-bundle-bytes SIZE\n"
               "                         Keep at most SIZE bytes of bundles, e.g. 500M (default: %lluM)\n"
               "     --log-level LEVEL   debug, info, notice, warning, err or another syslog level\n"
               "                         name or number 0-7 (default: info)\n"
               "\n"
               "Modes:\n"
               "     --test-rules        Read log lines from FILEs or stdin, print what the rules match\n"
               "     --once SECONDS      Sample for SECONDS, print folded stacks to stdout and exit\n"
               "     --pid PID           With --once: only this process\n"
               "     --by WHAT           With --once: root the stacks by unit, container or pod\n"
               "                         instead of the process name\n"
               "     --cgroups-from-proc With --once: read cgroups from /proc/PID/cgroup, as on\n"
               "                         kernels without PERF_SAMPLE_CGROUP\n"
               "     --check-config      Validate the configuration file and the rules, then exit\n"
               "\n"
               "Exit status: 0 on success, 1 on a failure (no perf events, another tprofd on the\n"
               "state directory, --pid naming no process), 64 on a usage error, 78 on a\n"
               "configuration error.\n",
               TPROFD_CONFIG_FILE, tprofd_default_rules_path(), TPROF_STATE_DIR, FREQ_HZ_MAX, FREQ_HZ_DEFAULT,
               (unsigned long long) (WINDOW_USEC_MIN / USEC_PER_SEC),
               (unsigned long long) (WINDOW_USEC_MAX / USEC_PER_SEC),
               (unsigned long long) (WINDOW_USEC_DEFAULT / USEC_PER_SEC), SAMPLER_UNWIND_STACK_BYTES_MIN,
               SAMPLER_UNWIND_STACK_BYTES_MAX, SAMPLER_UNWIND_STACK_BYTES_DEFAULT, CONTROL_SOCKET_DEFAULT, MAX_BUNDLES_DEFAULT,
               (unsigned long long) (MAX_BUNDLE_BYTES_DEFAULT >> 20));
}

static int set_string(char **p, const char *v) {
        char *s = strdup(v);
        if (!s)
                return log_oom();
        free(*p);
        *p = s;
        return 0;
}

/* Returns 1 to go on, 0 to exit successfully, or a negative errno (a usage error). */
static int parse_argv(int argc, char *argv[], TprofdConfig *cfg, const char **ret_config_path) {
        enum {
                ARG_VERSION = 0x100,
                ARG_TEST_RULES,
                ARG_ONCE,
                ARG_PID,
                ARG_BY,
                ARG_CGROUPS_FROM_PROC,
                ARG_CHECK_CONFIG,
                ARG_KMSG,
                ARG_CONTROL_SOCKET,
                ARG_JOURNAL_NAMESPACE,
                ARG_MAX_BUNDLES,
                ARG_DETAIL,
                ARG_MAX_BUNDLE_BYTES,
                ARG_LOG_LEVEL,
                ARG_JOURNAL_CONTEXT,
                ARG_CONFIG,
                ARG_UNWIND,
                ARG_UNWIND_STACK,
        };
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                { "rules", required_argument, NULL, 'r' },
                { "state-dir", required_argument, NULL, 's' },
                { "freq", required_argument, NULL, 'F' },
                { "window", required_argument, NULL, 'w' },
                { "detail", required_argument, NULL, ARG_DETAIL },
                { "unwind", required_argument, NULL, ARG_UNWIND },
                { "unwind-stack", required_argument, NULL, ARG_UNWIND_STACK },
                { "kmsg", required_argument, NULL, ARG_KMSG },
                { "control-socket", required_argument, NULL, ARG_CONTROL_SOCKET },
                { "journal-namespace", required_argument, NULL, ARG_JOURNAL_NAMESPACE },
                { "max-bundles", required_argument, NULL, ARG_MAX_BUNDLES },
                { "max-bundle-bytes", required_argument, NULL, ARG_MAX_BUNDLE_BYTES },
                { "log-level", required_argument, NULL, ARG_LOG_LEVEL },
                { "journal-context", required_argument, NULL, ARG_JOURNAL_CONTEXT },
                { "config", required_argument, NULL, 'c' },
                { "test-rules", no_argument, NULL, ARG_TEST_RULES },
                { "once", required_argument, NULL, ARG_ONCE },
                { "pid", required_argument, NULL, ARG_PID },
                { "by", required_argument, NULL, ARG_BY },
                { "cgroups-from-proc", no_argument, NULL, ARG_CGROUPS_FROM_PROC },
                { "check-config", no_argument, NULL, ARG_CHECK_CONFIG },
                {},
        };
        uint64_t u;
        int c, r;

        opterr = 0;
        while ((c = getopt_long(argc, argv, ":hc:r:s:F:w:", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case ARG_VERSION:
                        printf("tprofd %s\n", TPROF_VERSION);
                        return 0;
                case 'c':
                        *ret_config_path = optarg;
                        break;
                case 'r':
                        r = set_string(&cfg->rules_path, optarg);
                        if (r < 0)
                                return r;
                        break;
                case 's':
                        r = set_string(&cfg->state_dir, optarg);
                        if (r < 0)
                                return r;
                        break;
                case ARG_KMSG:
                        r = set_string(&cfg->kmsg_path, optarg);
                        if (r < 0)
                                return r;
                        break;
                case 'F':
                        r = safe_atou32(optarg, &cfg->freq_hz);
                        if (r < 0 || cfg->freq_hz == 0 || cfg->freq_hz > FREQ_HZ_MAX)
                                return log_error_errno(SYNTHETIC_ERRNO(EINVAL),
                                                       "Invalid --freq '%s': expected 1-%u Hz.", optarg,
                                                       FREQ_HZ_MAX);
                        break;
                case 'w':
                        r = parse_duration(optarg, &u);
                        if (r < 0 || u < WINDOW_USEC_MIN || u > WINDOW_USEC_MAX)
                                return log_error_errno(SYNTHETIC_ERRNO(EINVAL),
                                                       "Invalid --window '%s': expected %llu-%llu seconds.",
                                                       optarg,
                                                       (unsigned long long) (WINDOW_USEC_MIN / USEC_PER_SEC),
                                                       (unsigned long long) (WINDOW_USEC_MAX / USEC_PER_SEC));
                        cfg->window_usec = u;
                        break;
                case ARG_DETAIL:
                        if (tprofd_detail_from_string(optarg, &cfg->exact) < 0)
                                return log_error_errno(SYNTHETIC_ERRNO(EINVAL),
                                                       "Invalid --detail '%s': expected compact or exact.", optarg);
                        break;
                case ARG_UNWIND:
                        cfg->unwind = unwind_mode_from_string(optarg);
                        if (cfg->unwind < 0)
                                return log_error_errno(SYNTHETIC_ERRNO(EINVAL),
                                                       "Invalid --unwind '%s': expected fp, dwarf or auto.", optarg);
                        break;
                case ARG_UNWIND_STACK:
                        r = parse_size(optarg, &u);
                        if (r < 0 || tprofd_unwind_stack_valid(u) < 0)
                                return log_error_errno(SYNTHETIC_ERRNO(EINVAL),
                                                       "Invalid --unwind-stack '%s': expected a multiple of 8 from %u to %u bytes.",
                                                       optarg, SAMPLER_UNWIND_STACK_BYTES_MIN,
                                                       SAMPLER_UNWIND_STACK_BYTES_MAX);
                        cfg->unwind_stack_bytes = (uint32_t) u;
                        break;
                case ARG_CONTROL_SOCKET:
                        r = set_string(&cfg->control_socket, optarg);
                        if (r < 0)
                                return r;
                        break;
                case ARG_JOURNAL_NAMESPACE:
                        r = set_string(&cfg->journal_namespace, optarg);
                        if (r < 0)
                                return r;
                        break;
                case ARG_MAX_BUNDLES:
                        r = safe_atou32(optarg, &cfg->max_bundles);
                        if (r < 0 || cfg->max_bundles == 0)
                                return log_error_errno(SYNTHETIC_ERRNO(EINVAL),
                                                       "Invalid --max-bundles '%s': expected a number above 0.", optarg);
                        break;
                case ARG_MAX_BUNDLE_BYTES:
                        r = parse_size(optarg, &cfg->max_bundle_bytes);
                        if (r < 0 || cfg->max_bundle_bytes == 0)
                                return log_error_errno(SYNTHETIC_ERRNO(EINVAL),
                                                       "Invalid --max-bundle-bytes '%s': expected a size like 500M.",
                                                       optarg);
                        break;
                case ARG_JOURNAL_CONTEXT:
                        r = tprofd_journal_context_from_string(optarg);
                        if (r == -EINVAL)
                                return log_error_errno(SYNTHETIC_ERRNO(EINVAL),
                                                       "Invalid --journal-context '%s': expected off or a priority, "
                                                       "emerg ... debug.",
                                                       optarg);
                        cfg->journal_context = r;
                        break;
                case ARG_LOG_LEVEL:
                        r = log_level_from_string(optarg);
                        if (r < 0)
                                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "Invalid --log-level '%s'.",
                                                       optarg);
                        cfg->log_level = r;
                        break;
                case ARG_TEST_RULES:
                        arg_action = ACTION_TEST_RULES;
                        break;
                case ARG_ONCE:
                        r = parse_duration(optarg, &u);
                        if (r < 0 || u == 0)
                                return log_error_errno(SYNTHETIC_ERRNO(EINVAL),
                                                       "Invalid --once '%s': expected a duration in seconds.",
                                                       optarg);
                        arg_once_usec = u;
                        arg_action = ACTION_ONCE;
                        break;
                case ARG_PID: {
                        int p;
                        r = safe_atoi(optarg, &p);
                        if (r < 0 || p <= 0)
                                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "Invalid --pid '%s'.", optarg);
                        arg_pid = p;
                        break;
                }
                case ARG_BY:
                        arg_by = cgroup_by_from_string(optarg);
                        if (arg_by < 0)
                                return log_error_errno(SYNTHETIC_ERRNO(EINVAL),
                                                       "Invalid --by '%s': expected process, unit, container or pod.",
                                                       optarg);
                        break;
                case ARG_CGROUPS_FROM_PROC:
                        arg_cgroups_from_proc = true;
                        break;
                case ARG_CHECK_CONFIG:
                        arg_action = ACTION_CHECK_CONFIG;
                        break;
                case ':':
                        return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "Option '%s' needs an argument.",
                                               argv[optind - 1]);
                case '?':
                default:
                        return log_error_errno(SYNTHETIC_ERRNO(EINVAL),
                                               "Unknown option '%s'. See 'tprofd --help'.", argv[optind - 1]);
                }
        }

        if ((arg_pid != 0 || arg_by != CGROUP_BY_PROCESS || arg_cgroups_from_proc) && arg_action != ACTION_ONCE)
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "--pid, --by and --cgroups-from-proc only apply to --once.");
        if (optind < argc && arg_action != ACTION_TEST_RULES)
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "Unexpected argument '%s'. See 'tprofd --help'.",
                                       argv[optind]);
        return 1;
}

static int fill_defaults(TprofdConfig *c) {
        if (!c->rules_path && set_string(&c->rules_path, tprofd_default_rules_path()) < 0)
                return -ENOMEM;
        if (!c->state_dir && set_string(&c->state_dir, TPROF_STATE_DIR) < 0)
                return -ENOMEM;
        if (!c->control_socket && set_string(&c->control_socket, CONTROL_SOCKET_DEFAULT) < 0)
                return -ENOMEM;
        if (!c->kmsg_path && set_string(&c->kmsg_path, "/dev/kmsg") < 0)
                return -ENOMEM;
        return 0;
}

static int saved_argc;
static char **saved_argv;

/*
 * Settings in order of precedence: the command line, then the configuration file (--config, else
 * /etc/tprof/tprofd.yaml when it exists), then the defaults. Returns 1 to go on, 0 to exit
 * successfully (--help), -EINVAL for a usage error, -EBADMSG for a configuration error.
 */
static int assemble_config(TprofdConfig *ret) {
        _cleanup_(conf_error_done) ConfError e = CONF_ERROR_NULL;
        TprofdConfig c;
        const char *path = NULL;
        int r;

        /* First pass: --help, --version and usage errors must not depend on the file. */
        tprofd_config_init(&c);
        optind = 0;
        r = parse_argv(saved_argc, saved_argv, &c, &path);
        tprofd_config_done(&c);
        if (r <= 0)
                return r;

        tprofd_config_init(&c);
        r = tprofd_config_load(&c, path ?: TPROFD_CONFIG_FILE, &e);
        if (r == -ENOENT && path) {
                tprofd_config_done(&c);
                return log_error_errno(SYNTHETIC_ERRNO(EBADMSG), "Configuration file '%s' does not exist.", path);
        }
        if (r < 0 && r != -ENOENT) {
                _cleanup_free_ char *msg = conf_error_format(&e);
                tprofd_config_done(&c);
                return log_error_errno(r, "%s", msg ?: "out of memory");
        }

        optind = 0;
        r = parse_argv(saved_argc, saved_argv, &c, &path);
        if (r > 0 && fill_defaults(&c) < 0)
                r = log_oom();
        if (r <= 0) {
                tprofd_config_done(&c);
                return r;
        }
        *ret = c;
        return 1;
}

static int reload_config(TprofdConfig *ret) {
        int r = assemble_config(ret);
        return r < 0 ? r : 0;
}

static int run(int argc, char *argv[]) {
        bool config_error = false;
        int r;

        log_setup("tprofd");
        tprofd_config_init(&arg_config);
        saved_argc = argc;
        saved_argv = argv;

        tprofd_config_done(&arg_config);
        r = assemble_config(&arg_config);
        if (r == -EBADMSG)
                return EX_CONFIG;
        if (r <= 0)
                return r < 0 ? EX_USAGE : EXIT_SUCCESS;
        if (arg_config.log_level >= 0)
                log_set_max_level(arg_config.log_level);

        switch (arg_action) {
        case ACTION_TEST_RULES:
                r = rules_tester_run(arg_config.rules_path, argv + optind, (size_t) (argc - optind), stdout,
                                     stderr, &config_error);
                break;
        case ACTION_CHECK_CONFIG:
                /* The configuration already loaded, or we would not be here. */
                printf("configuration: %s\n", arg_config.config_path ?: "defaults (no " TPROFD_CONFIG_FILE ")");
                RuleSet *rs = NULL;
                r = rules_tester_check(arg_config.rules_path, stdout, stderr, &config_error, &rs);
                if (r >= 0)
                        tprofd_config_warn_retention(&arg_config, rs);
                rule_set_free(rs);
                /* A hook that is not there fails every bundle, and so does one nobody may execute
                 * (root is refused only that); one this user may not run (a check run without root)
                 * may well run for the daemon. */
                int k = tprofd_config_hook_check(&arg_config);
                if (k == -ENOENT || k == -ENOTDIR || (k == -EACCES && geteuid() == 0)) {
                        config_error = true;
                        r = log_error_errno(k, "%s: incidents.on_bundle: '%s' cannot be run: %m",
                                            arg_config.config_path ?: "configuration", arg_config.on_bundle[0]);
                } else if (k < 0)
                        log_warning_errno(k, "%s: incidents.on_bundle: '%s' cannot be run by this user: %m",
                                          arg_config.config_path ?: "configuration", arg_config.on_bundle[0]);
                break;
        case ACTION_ONCE: {
                OnceOptions o = {
                        .duration_usec = arg_once_usec,
                        .freq_hz = arg_config.freq_hz,
                        .pid = arg_pid,
                        .unwind = arg_config.unwind,
                        .unwind_stack_bytes = arg_config.unwind_stack_bytes,
                        .by = arg_by,
                        .cgroups_from_proc = arg_cgroups_from_proc,
                        .symbol_cache_bytes = arg_config.symbol_cache_bytes,
                        .unwind_cache_bytes = arg_config.unwind_cache_bytes,
                };
                /* A process that is not there would be sampled for nothing, and said to have no stacks. */
                if (arg_pid > 0 && kill(arg_pid, 0) < 0 && errno == ESRCH) {
                        r = log_error_errno(SYNTHETIC_ERRNO(ESRCH), "--pid %d: no such process.", arg_pid);
                        break;
                }
                r = sampler_once_run(&o, stdout, stderr);
                break;
        }
        case ACTION_RUN:
        default:
                r = manager_run(&arg_config, reload_config);
                break;
        }
        if (r < 0)
                return config_error || r == -EBADMSG ? EX_CONFIG : EXIT_FAILURE;
        return EXIT_SUCCESS;
}

int main(int argc, char *argv[]) {
        int code = run(argc, argv);
        tprofd_config_done(&arg_config);
        return code;
}
