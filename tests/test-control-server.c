/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The control socket end to end: a server on an event loop, clients in child processes. A
 * request gets its reply (also when the owner answers later), malformed and oversized requests
 * get an ERROR and never reach the owner, and (as root) a user outside group tprof is refused
 * while a member through one of many groups is answered.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <systemd/sd-event.h>

#include "basic/time-util.h"
#include "control/control-client.h"
#include "control/control-server.h"
#include "tests.h"

static char dir[] = "/tmp/test-control-XXXXXX";
static char sock[256];
static unsigned handled;

static int on_later(sd_event_source *s, uint64_t usec, void *userdata) {
        (void) control_request_reply(userdata, "OK=1\nLATE=1\n", 12);
        sd_event_source_disable_unref(s);
        return 0;
}

static void handler(ControlRequest *req, const ControlMessage *msg, void *userdata) {
        sd_event *e = userdata;
        const char *op = control_message_get(msg, "OP");

        handled++;
        if (op && streq(op, "later")) {
                (void) sd_event_add_time_relative(e, NULL, CLOCK_MONOTONIC, 100 * USEC_PER_MSEC, 0, on_later, req);
                return;
        }
        _cleanup_strbuf_ StrBuf b = STRBUF_NULL;
        (void) control_message_append(&b, "OK", "1");
        (void) control_message_append(&b, "ECHO", op ?: "");
        (void) control_request_reply(req, b.data, b.len);
}

/* Runs fn in a child while the server's loop runs; returns the child's exit status. */
static int run_client(sd_event *e, int (*fn)(void)) {
        pid_t pid = fork();
        int status;

        assert_true(pid >= 0);
        if (pid == 0)
                _exit(fn());
        for (;;) {
                assert_true(sd_event_run(e, 50 * USEC_PER_MSEC) >= 0);
                pid_t w = waitpid(pid, &status, WNOHANG);
                if (w == pid)
                        break;
        }
        return WIFEXITED(status) ? WEXITSTATUS(status) : 255;
}

static int client_echo(void) {
        ControlMessage m;
        if (control_call(sock, "OP=status\n", 10, 5 * USEC_PER_SEC, &m) < 0)
                return 1;
        return control_message_get(&m, "ECHO") && streq(control_message_get(&m, "ECHO"), "status") ? 0 : 2;
}

static char taken_path[300];

static int client_echo_taken(void) {
        ControlMessage m;
        if (control_call(taken_path, "OP=status\n", 10, 5 * USEC_PER_SEC, &m) < 0)
                return 1;
        return control_message_get(&m, "ECHO") ? 0 : 2;
}

static int client_later(void) {
        ControlMessage m;
        if (control_call(sock, "OP=later\n", 9, 5 * USEC_PER_SEC, &m) < 0)
                return 1;
        return control_message_get(&m, "LATE") ? 0 : 2;
}

static int client_malformed(void) {
        ControlMessage m;
        if (control_call(sock, "op=lower\n", 9, 5 * USEC_PER_SEC, &m) < 0)
                return 1;
        const char *e = control_message_get(&m, "ERROR");
        return e && streq(e, "invalid key") ? 0 : 2;
}

static int client_oversized(void) {
        static char big[3 * CONTROL_MESSAGE_BYTES_MAX];
        ControlMessage m;

        memset(big, 'A', sizeof big);
        if (control_call(sock, big, sizeof big, 5 * USEC_PER_SEC, &m) < 0)
                return 1;
        const char *e = control_message_get(&m, "ERROR");
        return e && streq(e, "request too long") ? 0 : 2;
}

static int client_nobody(void) {
        ControlMessage m;

        if (setresgid(65534, 65534, 65534) < 0 || setgroups(0, NULL) < 0 || setresuid(65534, 65534, 65534) < 0)
                return 3;
        /* The test opened the file modes up, so this reaches the daemon's own credential check. */
        int r = control_call(sock, "OP=status\n", 10, 5 * USEC_PER_SEC, &m);
        if (r < 0)
                return 1;
        const char *e = control_message_get(&m, "ERROR");
        return e && startswith(e, "permission denied") ? 0 : 2;
}

static gid_t tprof_gid;

/* A member of group tprof through one of many supplementary groups (a user in 200 groups). */
static int client_member_of_many(void) {
        gid_t groups[200];
        ControlMessage m;

        for (unsigned i = 0; i < ELEMENTSOF(groups); i++)
                groups[i] = 70000 + i;
        groups[ELEMENTSOF(groups) - 1] = tprof_gid;
        if (setgroups(ELEMENTSOF(groups), groups) < 0 || setresgid(65534, 65534, 65534) < 0 ||
            setresuid(65534, 65534, 65534) < 0)
                return 3;
        if (control_call(sock, "OP=status\n", 10, 5 * USEC_PER_SEC, &m) < 0)
                return 1;
        return control_message_get(&m, "ECHO") && streq(control_message_get(&m, "ECHO"), "status") ? 0 : 2;
}

typedef struct LoopArgs {
        sd_event *event;
        int result;
} LoopArgs;

static void *run_member_client(void *p) {
        LoopArgs *a = p;

        a->result = run_client(a->event, client_member_of_many);
        return NULL;
}

/* The server's check of a member's groups, on a thread whose stack is 128 KiB (as a unit's
 * LimitSTACK= can make the daemon's): it must neither crash nor refuse. */
static void test_member_of_many_groups(void **state) {
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        ControlServer *s = NULL;
        bool made_group = false;
        pthread_attr_t attr;
        pthread_t t;
        LoopArgs a = {};
        struct group *g;

        if (geteuid() != 0)
                skip();
        g = getgrnam("tprof");
        if (!g) {
                if (system("groupadd --system tprof >/dev/null 2>&1") != 0 || !(g = getgrnam("tprof"))) {
                        printf("skipping: no group tprof, and groupadd could not make it\n");
                        skip();
                }
                made_group = true;
        }
        tprof_gid = g->gr_gid;
        assert_int_equal(sd_event_new(&e), 0);
        assert_int_equal(control_server_new(e, sock, 0, handler, e, &s), 0);
        assert_int_equal(chmod(dir, 0755), 0);
        assert_int_equal(chmod(sock, 0666), 0);

        handled = 0;
        a.event = e;
        assert_int_equal(pthread_attr_init(&attr), 0);
        assert_int_equal(pthread_attr_setstacksize(&attr, 128 * 1024), 0);
        assert_int_equal(pthread_create(&t, &attr, run_member_client, &a), 0);
        assert_int_equal(pthread_join(t, NULL), 0);
        (void) pthread_attr_destroy(&attr);
        control_server_free(s);
        if (made_group)
                (void) system("groupdel tprof >/dev/null 2>&1");
        assert_int_equal(a.result, 0);
        assert_int_equal(handled, 1);
}

static void test_round_trips(void **state) {
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        ControlServer *s = NULL;

        assert_int_equal(sd_event_new(&e), 0);
        assert_int_equal(control_server_new(e, sock, 0, handler, e, &s), 0);

        handled = 0;
        assert_int_equal(run_client(e, client_echo), 0);
        assert_int_equal(run_client(e, client_later), 0);
        assert_int_equal(handled, 2);
        assert_int_equal(run_client(e, client_malformed), 0);
        assert_int_equal(run_client(e, client_oversized), 0);
        assert_int_equal(handled, 2); /* malformed requests never reach the owner */

        if (geteuid() == 0) {
                assert_int_equal(chmod(dir, 0755), 0);
                assert_int_equal(chmod(sock, 0666), 0);
                assert_int_equal(run_client(e, client_nobody), 0);
                assert_int_equal(handled, 2);
        }

        ControlServerStats st;
        control_server_get_stats(s, &st);
        assert_int_equal(st.malformed, 2);
        assert_int_equal(st.refused, geteuid() == 0 ? 1 : 0);
        control_server_free(s);
        assert_int_not_equal(access(sock, F_OK), 0);
}

/* What is at the path decides: a live socket is another daemon's, a stale one is replaced, and
 * anything else is left alone. */
static void test_path_taken(void **state) {
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        ControlServer *s = NULL, *second = NULL;
        const char *path = taken_path;
        int fd;

        assert_int_equal(sd_event_new(&e), 0);
        snprintf(taken_path, sizeof taken_path, "%s/taken.sock", dir);
        assert_int_equal(control_server_new(e, path, 0, handler, e, &s), 0);
        assert_int_equal(control_server_new(e, path, 0, handler, e, &second), -EADDRINUSE);
        assert_int_equal(access(path, F_OK), 0); /* still the first one's */
        handled = 0;
        assert_int_equal(run_client(e, client_echo_taken), 0); /* and it still answers */
        assert_int_equal(handled, 1);
        control_server_free(s);

        /* stale: bound, never listening (its daemon gone) */
        fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        assert_true(fd >= 0);
        strcpy(sa.sun_path, path);
        assert_int_equal(bind(fd, (struct sockaddr *) &sa, sizeof sa), 0);
        close(fd);
        assert_int_equal(control_server_new(e, path, 0, handler, e, &s), 0);
        control_server_free(s);

        /* a file of someone else's at the path */
        FILE *f = fopen(path, "we");
        assert_non_null(f);
        fputs("not a socket\n", f);
        fclose(f);
        assert_int_equal(control_server_new(e, path, 0, handler, e, &s), -EEXIST);
        assert_int_equal(access(path, F_OK), 0);
        assert_int_equal(unlink(path), 0);
}

static void test_no_daemon(void **state) {
        ControlMessage m;
        char path[300];

        snprintf(path, sizeof path, "%s/nothing.sock", dir);
        assert_int_equal(control_call(path, "OP=status\n", 10, USEC_PER_SEC, &m), -ENOENT);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_round_trips),
                cmocka_unit_test(test_member_of_many_groups),
                cmocka_unit_test(test_path_taken),
                cmocka_unit_test(test_no_daemon),
        };
        int r;

        if (!mkdtemp(dir))
                return 1;
        snprintf(sock, sizeof sock, "%s/control.sock", dir);
        r = cmocka_run_group_tests(tests, NULL, NULL);
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        (void) system(cmd);
        return r;
}
