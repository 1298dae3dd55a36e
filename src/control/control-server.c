/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The control socket's server side; see control-server.h for what it guarantees.
 */
#include <errno.h>
#include <grp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "basic/alloc-util.h"
#include "basic/cleanup.h"
#include "basic/log.h"
#include "basic/time-util.h"
#include "control/control-server.h"

struct ControlRequest {
        ControlServer *server;
        int fd;
        struct ucred cred;
        bool authorized;
        sd_event_source *io, *timeout;
        ControlRequest *next, *prev;
};

struct ControlServer {
        sd_event *event;
        int fd;
        char *path;
        gid_t group;
        bool have_group;
        int64_t priority;
        sd_event_source *io;
        ControlHandler handler;
        void *userdata;
        ControlRequest *requests;
        unsigned n_requests;
        ControlServerStats stats;
};

static void request_unlink(ControlRequest *req) {
        ControlServer *s = req->server;

        if (req->prev)
                req->prev->next = req->next;
        else if (s->requests == req)
                s->requests = req->next;
        if (req->next)
                req->next->prev = req->prev;
        req->next = req->prev = NULL;
        s->n_requests--;
}

void control_request_free(ControlRequest *req) {
        if (!req)
                return;
        request_unlink(req);
        sd_event_source_disable_unref(req->io);
        sd_event_source_disable_unref(req->timeout);
        safe_close(req->fd);
        free(req);
}

uid_t control_request_uid(const ControlRequest *req) {
        return req->cred.uid;
}

int control_request_reply(ControlRequest *req, const char *reply, size_t n) {
        ssize_t k = send(req->fd, reply, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        int r = k < 0 ? -errno : 0;

        control_request_free(req);
        return r;
}

int control_request_error(ControlRequest *req, const char *text) {
        _cleanup_strbuf_ StrBuf b = STRBUF_NULL;

        if (control_message_append(&b, "ERROR", text) < 0) {
                control_request_free(req);
                return -ENOMEM;
        }
        return control_request_reply(req, b.data, b.len);
}

static bool authorized(const ControlServer *s, int fd, const struct ucred *cred) {
        /* Room for the groups most users have; more (up to NGROUPS_MAX, 65,536) on the heap, not in
         * 256 KiB of a stack that a unit's LimitSTACK= may make smaller. */
        gid_t few[64];
        _cleanup_free_ gid_t *many = NULL;
        gid_t *groups = few;
        socklen_t l = sizeof few;

        if (cred->uid == 0)
                return true;
        if (!s->have_group)
                return false;
        if (cred->gid == s->group)
                return true;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &l) < 0) {
                /* ERANGE: the kernel says how much room they need */
                if (errno != ERANGE || l == 0 || l > NGROUPS_MAX * sizeof(gid_t))
                        return false;
                groups = many = malloc(l);
                if (!many || getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &l) < 0)
                        return false;
        }
        for (size_t i = 0; i < l / sizeof(gid_t); i++)
                if (groups[i] == s->group)
                        return true;
        return false;
}

static int on_request_timeout(sd_event_source *src, uint64_t usec, void *userdata) {
        control_request_free(userdata);
        return 0;
}

static int on_request_io(sd_event_source *src, int fd, uint32_t revents, void *userdata) {
        ControlRequest *req = userdata;
        ControlServer *s = req->server;
        char buf[CONTROL_MESSAGE_BYTES_MAX + 1];
        ControlMessage *msg;
        const char *reason = NULL;
        ssize_t n;

        /* MSG_TRUNC reports the real length of a datagram longer than our buffer. */
        n = recv(fd, buf, sizeof buf, MSG_DONTWAIT | MSG_TRUNC);
        if (n < 0) {
                if (errno == EAGAIN || errno == EINTR)
                        return 0;
                control_request_free(req);
                return 0;
        }
        if (n == 0) {
                control_request_free(req);
                return 0;
        }
        req->timeout = sd_event_source_disable_unref(req->timeout);
        req->io = sd_event_source_disable_unref(req->io);

        if (!req->authorized) {
                s->stats.refused++;
                (void) control_request_error(req, "permission denied: root or group " CONTROL_GROUP " only");
                return 0;
        }
        if ((size_t) n > CONTROL_MESSAGE_BYTES_MAX) {
                s->stats.malformed++;
                (void) control_request_error(req, "request too long");
                return 0;
        }
        msg = malloc(sizeof(ControlMessage));
        if (!msg) {
                (void) control_request_error(req, "out of memory");
                return 0;
        }
        if (control_message_parse(buf, (size_t) n, msg, &reason) < 0) {
                s->stats.malformed++;
                free(msg);
                (void) control_request_error(req, reason);
                return 0;
        }
        s->handler(req, msg, s->userdata);
        free(msg);
        return 0;
}

static int on_accept(sd_event_source *src, int fd, uint32_t revents, void *userdata) {
        ControlServer *s = userdata;
        _cleanup_close_ int cfd = -EBADF;
        ControlRequest *req;
        socklen_t l;
        int r;

        cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (cfd < 0)
                return 0;
        if (s->n_requests >= CONTROL_CONNECTIONS_MAX) {
                s->stats.too_many++;
                return 0;
        }
        req = new0(ControlRequest, 1);
        if (!req)
                return 0;
        req->server = s;
        req->fd = TAKE_FD(cfd);
        req->next = s->requests;
        if (s->requests)
                s->requests->prev = req;
        s->requests = req;
        s->n_requests++;
        s->stats.accepted++;

        /* Refused peers still get their request read before the ERROR reply: closing a socket with
         * unread data resets the connection, and the client would lose the reason. */
        l = sizeof req->cred;
        req->authorized = getsockopt(req->fd, SOL_SOCKET, SO_PEERCRED, &req->cred, &l) >= 0 &&
                          authorized(s, req->fd, &req->cred);

        r = sd_event_add_io(s->event, &req->io, req->fd, EPOLLIN, on_request_io, req);
        if (r >= 0)
                r = sd_event_source_set_priority(req->io, s->priority);
        if (r >= 0)
                r = sd_event_add_time_relative(s->event, &req->timeout, CLOCK_MONOTONIC, CONTROL_READ_TIMEOUT_USEC,
                                               0, on_request_timeout, req);
        if (r < 0)
                control_request_free(req);
        return 0;
}

/* Makes sa's path free to bind: a socket someone answers on is another daemon's (-EADDRINUSE);
 * only a stale socket (its daemon gone: the connection refused) is removed; anything else at the
 * path is not ours to remove (-EEXIST, or the probe's error). */
static int clear_path(const struct sockaddr_un *sa) {
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        struct stat st;

        if (fd < 0)
                return -errno;
        if (connect(fd, (const struct sockaddr *) sa, sizeof *sa) == 0 || errno == EAGAIN)
                return -EADDRINUSE;
        if (errno == ENOENT)
                return 0;
        if (errno != ECONNREFUSED)
                return -errno;
        if (lstat(sa->sun_path, &st) < 0 || !S_ISSOCK(st.st_mode))
                return -EEXIST;
        (void) unlink(sa->sun_path);
        return 0;
}

int control_server_new(sd_event *e, const char *path, int64_t priority, ControlHandler handler, void *userdata,
                       ControlServer **ret) {
        _cleanup_free_ ControlServer *s = NULL;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        struct group *g;
        int r;

        if (strlen(path) >= sizeof sa.sun_path)
                return -ENAMETOOLONG;
        s = new0(ControlServer, 1);
        if (!s)
                return -ENOMEM;
        s->event = e;
        s->priority = priority;
        s->handler = handler;
        s->userdata = userdata;
        g = getgrnam(CONTROL_GROUP);
        if (g) {
                s->group = g->gr_gid;
                s->have_group = true;
        }

        strcpy(sa.sun_path, path);
        r = clear_path(&sa);
        if (r < 0)
                return r;
        s->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (s->fd < 0)
                return -errno;
        if (bind(s->fd, (struct sockaddr *) &sa, sizeof sa) < 0 || listen(s->fd, 16) < 0) {
                r = -errno;
                safe_close(s->fd);
                return r;
        }
        /* The file's mode keeps others out before we even see them; authorized() is the real check. */
        (void) chmod(path, 0660);
        if (s->have_group)
                (void) chown(path, 0, s->group);
        s->path = strdup(path);
        if (!s->path) {
                safe_close(s->fd);
                return -ENOMEM;
        }
        r = sd_event_add_io(e, &s->io, s->fd, EPOLLIN, on_accept, s);
        if (r >= 0)
                r = sd_event_source_set_priority(s->io, priority);
        if (r < 0) {
                safe_close(s->fd);
                free(s->path);
                return r;
        }
        *ret = TAKE_PTR(s);
        return 0;
}

ControlServer *control_server_free(ControlServer *s) {
        if (!s)
                return NULL;
        while (s->requests)
                control_request_free(s->requests);
        sd_event_source_disable_unref(s->io);
        safe_close(s->fd);
        if (s->path)
                (void) unlink(s->path);
        free(s->path);
        free(s);
        return NULL;
}

void control_server_get_stats(const ControlServer *s, ControlServerStats *ret) {
        *ret = s->stats;
}
