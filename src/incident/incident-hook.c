/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The bundle hook runner; see incident-hook.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-journal.h>

#include "basic/alloc-util.h"
#include "basic/cleanup.h"
#include "basic/log.h"
#include "basic/string-util.h"
#include "basic/time-util.h"
#include "incident/incident-hook.h"

extern char **environ;

#define HOOK_ENV_VARS 11U
/* Output past what is logged is drained a pipe's worth at a time, ten times a second. */
#define HOOK_DRAIN_BYTES (64U * 1024U)
#define HOOK_DRAIN_USEC (USEC_PER_SEC / 10)

typedef struct HookRun HookRun;

struct IncidentHook {
        sd_event *event;
        int64_t priority;
        char **argv;
        uint64_t timeout_usec;
        unsigned max_running, max_queued;

        HookRun **running;
        size_t n_running, allocated_running;
        char ***queue; /* each: the TPROF_* environment assignments of one bundle, NULL-terminated */
        size_t n_queued, allocated_queue;

        IncidentHookStats stats;
};

struct HookRun {
        IncidentHook *hook;
        pid_t pid;
        char *id; /* the bundle id, for the log */
        sd_event_source *child, *output, *timer, *drain;
        int output_fd;
        bool term_sent, kill_sent, exited;
        char line[512];
        size_t line_len;
        size_t logged_bytes, dropped_bytes;
};

static void hook_run_free(HookRun *run) {
        if (!run)
                return;
        sd_event_source_disable_unref(run->child);
        sd_event_source_disable_unref(run->output);
        sd_event_source_disable_unref(run->timer);
        sd_event_source_disable_unref(run->drain);
        safe_close(run->output_fd);
        free(run->id);
        free(run);
}

static char **env_free(char **env) {
        return strv_free(env);
}

static void options_apply(IncidentHook *h, const IncidentHookOptions *o) {
        h->timeout_usec = o && o->timeout_usec ? o->timeout_usec : HOOK_TIMEOUT_USEC_DEFAULT;
        h->max_running = o && o->max_running ? o->max_running : HOOK_RUNNING_MAX_DEFAULT;
        h->max_queued = o && o->max_queued ? o->max_queued : HOOK_QUEUED_MAX_DEFAULT;
}

static char **argv_copy(char *const *argv) {
        size_t n = argv ? strv_length(argv) : 0;
        char **c;

        if (n == 0)
                return NULL;
        c = new0(char *, n + 1);
        if (!c)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                c[i] = strdup(argv[i]);
                if (!c[i])
                        return strv_free(c);
        }
        return c;
}

int incident_hook_set_options(IncidentHook *h, const IncidentHookOptions *o) {
        char **argv = NULL;

        if (o && o->argv && o->argv[0]) {
                argv = argv_copy(o->argv);
                if (!argv)
                        return -ENOMEM;
        }
        strv_free(h->argv);
        h->argv = argv;
        options_apply(h, o);
        return 0;
}

int incident_hook_new(sd_event *e, int64_t priority, const IncidentHookOptions *o, IncidentHook **ret) {
        _cleanup_(incident_hook_freep) IncidentHook *h = NULL;
        sigset_t mask;
        int r;

        h = new0(IncidentHook, 1);
        if (!h)
                return -ENOMEM;
        h->event = sd_event_ref(e);
        h->priority = priority;
        r = incident_hook_set_options(h, o);
        if (r < 0)
                return r;
        /* sd-event reaps children through their pidfds only while SIGCHLD is blocked. */
        sigemptyset(&mask);
        sigaddset(&mask, SIGCHLD);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                return -errno;
        *ret = TAKE_PTR(h);
        return 0;
}

bool incident_hook_has_network(void) {
        static const int families[] = { AF_INET, AF_INET6 };

        for (size_t i = 0; i < ELEMENTSOF(families); i++) {
                int fd = socket(families[i], SOCK_DGRAM | SOCK_CLOEXEC, 0);

                if (fd >= 0) {
                        safe_close(fd);
                        return true;
                }
        }
        return false;
}

IncidentHook *incident_hook_free(IncidentHook *h) {
        if (!h)
                return NULL;
        for (size_t i = 0; i < h->n_running; i++) {
                HookRun *run = h->running[i];
                (void) kill(-run->pid, SIGTERM); /* its group, which may outlive it */
                hook_run_free(run);
        }
        free(h->running);
        for (size_t i = 0; i < h->n_queued; i++)
                env_free(h->queue[i]);
        free(h->queue);
        strv_free(h->argv);
        sd_event_unref(h->event);
        free(h);
        return NULL;
}

bool incident_hook_enabled(const IncidentHook *h) {
        return h && h->argv && h->argv[0];
}

void incident_hook_get_stats(const IncidentHook *h, IncidentHookStats *ret) {
        *ret = h->stats;
        ret->running = h->n_running;
        ret->queued = h->n_queued;
}

/* --- output ------------------------------------------------------------------------------------- */

static void output_line(HookRun *run, const char *line, size_t n) {
        _cleanup_free_ char *esc = NULL;

        if (run->logged_bytes >= HOOK_OUTPUT_BYTES_MAX) {
                run->dropped_bytes += n + 1;
                return;
        }
        run->logged_bytes += n + 1;
        esc = escape_text(line, n);
        log_info("Bundle hook for %s (PID %d): %s", run->id, (int) run->pid, esc ?: "");
}

static void output_flush(HookRun *run) {
        if (run->line_len == 0)
                return;
        output_line(run, run->line, run->line_len);
        run->line_len = 0;
}

/* Reads what is there, at most budget bytes; returns 0 at EOF or error (the fd is closed then), 1 if
 * more may come, 2 if the budget ran out first. */
static int output_read(HookRun *run, size_t budget) {
        char buf[4096];

        for (size_t total = 0;; total += sizeof buf) {
                if (total >= budget)
                        return 2;
                ssize_t n = read(run->output_fd, buf, sizeof buf);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EAGAIN)
                        return 1;
                if (n <= 0) {
                        output_flush(run);
                        run->output = sd_event_source_disable_unref(run->output);
                        run->output_fd = safe_close(run->output_fd);
                        return 0;
                }
                for (ssize_t i = 0; i < n; i++) {
                        if (buf[i] == '\n') {
                                output_flush(run);
                                continue;
                        }
                        if (run->line_len == sizeof run->line) /* a long line is logged in pieces */
                                output_flush(run);
                        run->line[run->line_len++] = buf[i];
                }
        }
}

static int on_hook_drain(sd_event_source *s, uint64_t usec, void *userdata) {
        HookRun *run = userdata;

        return run->output ? sd_event_source_set_enabled(run->output, SD_EVENT_ON) : 0;
}

static int on_hook_output(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        HookRun *run = userdata;
        int r;

        /* A pipe's worth per call. Past the log's limit the output is thrown away: reading all a
         * hook writes without end (a loop that prints, yes) would cost the daemon a CPU until the
         * timeout. A pipe's worth ten times a second lets a chatty hook go on at 640 KiB/s and
         * costs nothing. */
        if (output_read(run, HOOK_DRAIN_BYTES) != 2 || run->logged_bytes < HOOK_OUTPUT_BYTES_MAX)
                return 0;
        r = sd_event_source_set_enabled(s, SD_EVENT_OFF);
        if (r >= 0 && run->drain)
                r = sd_event_source_set_time_relative(run->drain, HOOK_DRAIN_USEC);
        else if (r >= 0)
                r = sd_event_add_time_relative(run->hook->event, &run->drain, CLOCK_MONOTONIC, HOOK_DRAIN_USEC, 0,
                                               on_hook_drain, run);
        if (r >= 0)
                r = sd_event_source_set_enabled(run->drain, SD_EVENT_ONESHOT);
        if (r < 0) /* without the timer, read on as before */
                (void) sd_event_source_set_enabled(s, SD_EVENT_ON);
        return 0;
}

/* --- running ------------------------------------------------------------------------------------ */

static int start_next(IncidentHook *h);

static void run_finished(HookRun *run) {
        IncidentHook *h = run->hook;

        for (size_t i = 0; i < h->n_running; i++)
                if (h->running[i] == run) {
                        memmove(h->running + i, h->running + i + 1, (h->n_running - i - 1) * sizeof(HookRun *));
                        h->n_running--;
                        break;
                }
        hook_run_free(run);
        (void) start_next(h);
}

static int on_hook_exit(sd_event_source *s, const siginfo_t *si, void *userdata) {
        HookRun *run = userdata;
        IncidentHook *h = run->hook;

        run->exited = true;
        /* What the hook wrote before it exited is in the pipe: log it now. A grandchild that kept
         * the pipe open is not waited for. */
        if (run->output_fd >= 0)
                (void) output_read(run, HOOK_DRAIN_BYTES);
        output_flush(run);
        if (run->dropped_bytes > 0)
                log_info("Bundle hook for %s (PID %d): %zu more bytes of output not logged.", run->id, (int) run->pid,
                         run->dropped_bytes);
        if (run->term_sent) {
                h->stats.timed_out++;
                log_warning("Bundle hook for %s (PID %d) ran longer than %s and was %s.", run->id, (int) run->pid,
                            FORMAT_TIMESPAN(h->timeout_usec), run->kill_sent ? "killed" : "terminated");
        } else if (si->si_code == CLD_EXITED && si->si_status == 0) {
                h->stats.succeeded++;
                log_info("Bundle hook for %s (PID %d) succeeded.", run->id, (int) run->pid);
        } else if (si->si_code == CLD_EXITED) {
                h->stats.failed++;
                log_warning("Bundle hook for %s (PID %d) failed with exit status %d.", run->id, (int) run->pid,
                            si->si_status);
        } else {
                h->stats.failed++;
                log_warning("Bundle hook for %s (PID %d) was killed by signal %s.", run->id, (int) run->pid,
                            strsignal(si->si_status));
        }
        /* Terminated at its limit, the hook may leave processes of its group that ignore SIGTERM:
         * they get the SIGKILL when the timer fires, which then ends the run. */
        if (run->term_sent && !run->kill_sent && run->timer && kill(-run->pid, 0) >= 0)
                return 0;
        run_finished(run);
        return 0;
}

static int on_hook_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        HookRun *run = userdata;

        if (!run->term_sent) {
                run->term_sent = true;
                (void) kill(-run->pid, SIGTERM);
                /* A timer is one-shot: arm it again for the SIGKILL. */
                int r = sd_event_source_set_time_relative(s, HOOK_KILL_USEC);
                if (r >= 0)
                        r = sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
                return r;
        }
        run->kill_sent = true;
        (void) kill(-run->pid, SIGKILL);
        if (run->exited) { /* only the rest of its group was left */
                run_finished(run);
                return 0;
        }
        return sd_event_source_set_enabled(s, SD_EVENT_OFF);
}

static int spawn(IncidentHook *h, char **env_tprof, pid_t *ret_pid, int *ret_output_fd) {
        _cleanup_close_ int devnull = -EBADF;
        _cleanup_free_ char **envp = NULL;
        posix_spawn_file_actions_t fa;
        posix_spawnattr_t attr;
        int pipefd[2], r;
        size_t n_env = 0, n_tprof = strv_length(env_tprof), k = 0;
        sigset_t none, all;
        pid_t pid;

        for (char **e = environ; e && *e; e++)
                n_env++;
        envp = new0(char *, n_env + n_tprof + 1);
        if (!envp)
                return -ENOMEM;
        /* The daemon's own values of the variables that describe the bundle go, the bundle's
         * replace them; every other variable stays, TPROF_* settings of the hooks included
         * (TPROF_SHIP_WINDOWS=0 in tprofd's environment, contrib/hooks/). */
        for (char **e = environ; e && *e; e++) {
                const char *eq = strchr(*e, '=');
                size_t l = eq ? (size_t) (eq - *e) : strlen(*e);
                bool ours = false;

                for (size_t i = 0; i < n_tprof && !ours; i++)
                        ours = strncmp(env_tprof[i], *e, l) == 0 && env_tprof[i][l] == '=';
                if (!ours)
                        envp[k++] = *e;
        }
        for (size_t i = 0; i < n_tprof; i++)
                envp[k++] = env_tprof[i];

        devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (devnull < 0)
                return -errno;
        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return -errno;

        sigemptyset(&none);
        sigfillset(&all);
        posix_spawn_file_actions_init(&fa);
        posix_spawnattr_init(&attr);
        r = posix_spawn_file_actions_adddup2(&fa, devnull, STDIN_FILENO);
        if (r == 0)
                r = posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDOUT_FILENO);
        if (r == 0)
                r = posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDERR_FILENO);
        /* Its own session and process group, so a timeout reaches what it started too; no blocked
         * signals and default handlers, whatever the daemon uses. */
        if (r == 0)
                r = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
        if (r == 0)
                r = posix_spawnattr_setsigmask(&attr, &none);
        if (r == 0)
                r = posix_spawnattr_setsigdefault(&attr, &all);
        if (r == 0)
                r = posix_spawn(&pid, h->argv[0], &fa, &attr, h->argv, envp);
        posix_spawn_file_actions_destroy(&fa);
        posix_spawnattr_destroy(&attr);
        close(pipefd[1]);
        if (r != 0) {
                close(pipefd[0]);
                return -r;
        }
        (void) fcntl(pipefd[0], F_SETFL, O_NONBLOCK);
        *ret_pid = pid;
        *ret_output_fd = pipefd[0];
        return 0;
}

static const char *env_get(char **env, const char *key) {
        size_t l = strlen(key);

        for (char **e = env; e && *e; e++)
                if (strncmp(*e, key, l) == 0 && (*e)[l] == '=')
                        return *e + l + 1;
        return NULL;
}

bool incident_hook_holds(const IncidentHook *h, const char *id) {
        if (!h || !id)
                return false;
        for (size_t i = 0; i < h->n_running; i++)
                if (h->running[i]->id && streq(h->running[i]->id, id))
                        return true;
        for (size_t i = 0; i < h->n_queued; i++) {
                const char *v = env_get(h->queue[i], "TPROF_BUNDLE_ID");
                if (v && streq(v, id))
                        return true;
        }
        return false;
}

static int run_start(IncidentHook *h, char **env) {
        _cleanup_free_ HookRun *run = NULL;
        int pidfd, r;

        if (!GREEDY_REALLOC(h->running, h->allocated_running, h->n_running + 1))
                return -ENOMEM;
        run = new0(HookRun, 1);
        if (!run)
                return -ENOMEM;
        run->hook = h;
        run->output_fd = -EBADF;
        run->id = strdup(env_get(env, "TPROF_BUNDLE_ID") ?: "?");
        if (!run->id)
                return -ENOMEM;
        r = spawn(h, env, &run->pid, &run->output_fd);
        if (r < 0) {
                free(run->id);
                return r;
        }
        h->stats.started++;

        pidfd = (int) syscall(SYS_pidfd_open, run->pid, 0);
        if (pidfd >= 0) {
                r = sd_event_add_child_pidfd(h->event, &run->child, pidfd, WEXITED, on_hook_exit, run);
                if (r >= 0)
                        (void) sd_event_source_set_child_pidfd_own(run->child, true);
                else
                        close(pidfd);
        } else
                r = sd_event_add_child(h->event, &run->child, run->pid, WEXITED, on_hook_exit, run);
        if (r >= 0)
                r = sd_event_source_set_priority(run->child, h->priority);
        if (r >= 0)
                r = sd_event_add_io(h->event, &run->output, run->output_fd, EPOLLIN, on_hook_output, run);
        if (r >= 0)
                r = sd_event_source_set_priority(run->output, h->priority);
        if (r >= 0)
                r = sd_event_add_time_relative(h->event, &run->timer, CLOCK_MONOTONIC, h->timeout_usec,
                                               USEC_PER_SEC / 10, on_hook_timer, run);
        if (r < 0) {
                /* Without its event sources nobody would reap or limit it. */
                (void) kill(-run->pid, SIGKILL);
                (void) waitpid(run->pid, NULL, 0);
                hook_run_free(TAKE_PTR(run));
                return r;
        }
        log_debug("Started bundle hook for %s as PID %d.", run->id, (int) run->pid);
        h->running[h->n_running++] = TAKE_PTR(run);
        return 0;
}

static int start_next(IncidentHook *h) {
        while (h->n_queued > 0 && h->n_running < h->max_running) {
                char **env = h->queue[0];
                int r;

                memmove(h->queue, h->queue + 1, (h->n_queued - 1) * sizeof(char **));
                h->n_queued--;
                r = run_start(h, env);
                if (r < 0) {
                        h->stats.failed++;
                        log_warning_errno(r, "Failed to start the bundle hook '%s' for %s: %m", h->argv[0],
                                          env_get(env, "TPROF_BUNDLE_ID") ?: "?");
                }
                env_free(env);
        }
        return 0;
}

static int env_add(char **env, size_t *n, const char *key, const char *value) {
        if (asprintf(&env[*n], "%s=%s", key, value ?: "") < 0) {
                env[*n] = NULL;
                return -ENOMEM;
        }
        (*n)++;
        return 0;
}

/* The environment assignments for one bundle (README, "The bundle hook"). */
static char **make_env(const IncidentHookBundle *b) {
        char **env = new0(char *, HOOK_ENV_VARS + 1);
        char utc[64] = "", usec[32], ns[32];
        _cleanup_free_ char *msg = NULL;
        size_t n = 0;
        struct tm tm;
        time_t t = (time_t) (b->trigger_realtime_usec / USEC_PER_SEC);

        if (!env)
                return NULL;
        if (b->trigger_realtime_usec > 0 && gmtime_r(&t, &tm)) {
                size_t l = strftime(utc, sizeof utc, "%Y-%m-%dT%H:%M:%S", &tm);
                snprintf(utc + l, sizeof utc - l, ".%06lluZ", (unsigned long long) (b->trigger_realtime_usec % USEC_PER_SEC));
        }
        snprintf(usec, sizeof usec, "%llu", (unsigned long long) b->trigger_realtime_usec);
        snprintf(ns, sizeof ns, "%llu", (unsigned long long) b->trigger_perf_ns);
        /* One line, printable: the message comes from a log someone else wrote. */
        msg = escape_text(b->message ?: "", utf8_prefix_length(b->message ?: "", strlen(b->message ?: ""), 2048));
        if (env_add(env, &n, "TPROF_BUNDLE_PATH", b->path) < 0 || env_add(env, &n, "TPROF_BUNDLE_ID", b->id) < 0 ||
            env_add(env, &n, "TPROF_SHORT_ID", b->short_id) < 0 || env_add(env, &n, "TPROF_RULE", b->rule) < 0 ||
            env_add(env, &n, "TPROF_HOST", b->host) < 0 || env_add(env, &n, "TPROF_STATUS", b->status) < 0 ||
            env_add(env, &n, "TPROF_STATE_DIR", b->state_dir) < 0 ||
            env_add(env, &n, "TPROF_TRIGGER_TIME", utc) < 0 ||
            env_add(env, &n, "TPROF_TRIGGER_REALTIME_USEC", usec) < 0 ||
            env_add(env, &n, "TPROF_TRIGGER_PERF_NS", ns) < 0 ||
            env_add(env, &n, "TPROF_TRIGGER_MESSAGE", msg ?: "") < 0)
                return strv_free(env);
        return env;
}

int incident_hook_submit(IncidentHook *h, const IncidentHookBundle *b) {
        char **env;

        if (!incident_hook_enabled(h))
                return 0;
        if (h->n_running >= h->max_running && h->n_queued >= h->max_queued) {
                h->stats.dropped++;
                log_warning("Bundle hook busy (%u running, %u queued): not running it for %s (%llu dropped so far).",
                            h->max_running, h->max_queued, b->id, (unsigned long long) h->stats.dropped);
                return -ENOBUFS;
        }
        env = make_env(b);
        if (!env || !GREEDY_REALLOC(h->queue, h->allocated_queue, h->n_queued + 1)) {
                env_free(env);
                h->stats.dropped++;
                log_oom();
                return -ENOMEM;
        }
        h->queue[h->n_queued++] = env;
        return start_next(h);
}

/* journalctl MESSAGE_ID=6b0f5e1a8c7d4e2f9a3b1c0d2e4f6a8b finds every bundle tprofd announced. */
#define TPROF_INCIDENT_MESSAGE_ID "6b0f5e1a8c7d4e2f9a3b1c0d2e4f6a8b"

/*
 * The journal entry a log pipeline finds every bundle by (MESSAGE_ID), with the same facts the
 * bundle hook gets: where the bundle is, which rule, host and status, and the trigger line.
 */
void incident_announce(const IncidentHookBundle *b) {
        _cleanup_free_ char *msg = escape_text(b->message ?: "", utf8_prefix_length(b->message ?: "", strlen(b->message ?: ""), 2048));
        char utc[64] = "";
        struct tm tm;
        time_t t = (time_t) (b->trigger_realtime_usec / USEC_PER_SEC);

        if (b->trigger_realtime_usec > 0 && gmtime_r(&t, &tm)) {
                size_t l = strftime(utc, sizeof utc, "%Y-%m-%dT%H:%M:%S", &tm);
                snprintf(utc + l, sizeof utc - l, ".%06lluZ", (unsigned long long) (b->trigger_realtime_usec % USEC_PER_SEC));
        }
        log_notice("Incident %s: rule %s, %s, bundle %s", b->short_id, b->rule, b->status, b->path);
        (void) sd_journal_send("MESSAGE=tprof incident %s: rule %s matched, bundle %s", b->short_id, b->rule, b->path,
                               "MESSAGE_ID=" TPROF_INCIDENT_MESSAGE_ID, "PRIORITY=%i", LOG_NOTICE,
                               "TPROF_BUNDLE=%s", b->path,
                               "TPROF_BUNDLE_PATH=%s", b->path,
                               "TPROF_BUNDLE_ID=%s", b->id,
                               "TPROF_SHORT_ID=%s", b->short_id,
                               "TPROF_RULE=%s", b->rule,
                               "TPROF_HOST=%s", b->host,
                               "TPROF_STATUS=%s", b->status,
                               "TPROF_TRIGGER_TIME=%s", utc,
                               "TPROF_TRIGGER_REALTIME_USEC=%llu", (unsigned long long) b->trigger_realtime_usec,
                               "TPROF_TRIGGER_PERF_NS=%llu", (unsigned long long) b->trigger_perf_ns,
                               "TPROF_TRIGGER_MESSAGE=%s", msg ?: "",
                               NULL);
}
