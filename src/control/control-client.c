/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One request/reply exchange on the control socket; see control-client.h.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>

#include "basic/cleanup.h"
#include "basic/time-util.h"
#include "control/control-client.h"

int control_call(const char *path, const char *request, size_t n, uint64_t timeout_usec, ControlMessage *ret_reply) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_close_ int fd = -EBADF;
        char buf[CONTROL_MESSAGE_BYTES_MAX + 1];
        uint64_t deadline = now_usec(CLOCK_MONOTONIC) + timeout_usec;
        ssize_t k;

        if (strlen(path) >= sizeof sa.sun_path)
                return -ENAMETOOLONG;
        strcpy(sa.sun_path, path);
        fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (connect(fd, (struct sockaddr *) &sa, sizeof sa) < 0)
                return -errno;
        /* A daemon that refuses us replies and hangs up without reading: the send may then fail,
         * but its ERROR reply is still queued for us to read. */
        if (send(fd, request, n, MSG_NOSIGNAL) < 0 && errno != EPIPE && errno != ECONNRESET)
                return -errno;

        for (;;) {
                uint64_t now = now_usec(CLOCK_MONOTONIC);
                struct pollfd p = { .fd = fd, .events = POLLIN };
                int r;

                if (now >= deadline)
                        return -ETIMEDOUT;
                r = poll(&p, 1, (int) MIN((deadline - now) / USEC_PER_MSEC + 1, (uint64_t) INT32_MAX));
                if (r < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (r > 0)
                        break;
        }
        k = recv(fd, buf, sizeof buf, MSG_TRUNC);
        if (k < 0)
                return -errno;
        if (k == 0)
                return -ECONNRESET;
        if ((size_t) k > CONTROL_MESSAGE_BYTES_MAX)
                return -EBADMSG;
        return control_message_parse(buf, (size_t) k, ret_reply, NULL);
}
