/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tprofd's end of the control socket (/run/tprof/control.sock): accepts connections on the event
 * loop, admits only root and members of group tprof (SO_PEERCRED and SO_PEERGROUPS, whatever the
 * socket file's mode says), reads one request of at most CONTROL_MESSAGE_BYTES_MAX bytes, parses
 * it, and hands it to the owner. A malformed, oversized or unauthorized request gets an ERROR
 * reply, never reaches the owner. The owner answers at once or later (a capture replies when its
 * bundle is written) with control_request_reply(); a reply to a client that hung up meanwhile is
 * simply dropped.
 *
 * Bounds: at most CONTROL_CONNECTIONS_MAX connections at once (more are closed at accept), and a
 * connection that sends nothing within CONTROL_READ_TIMEOUT_USEC is closed.
 */
#pragma once

#include <sys/types.h>

#include <systemd/sd-event.h>

#include "control/control-proto.h"

#define CONTROL_CONNECTIONS_MAX 64U
#define CONTROL_READ_TIMEOUT_USEC (5U * 1000000U)
#define CONTROL_GROUP "tprof"

typedef struct ControlServer ControlServer;
typedef struct ControlRequest ControlRequest;

/* The request stays valid until control_request_reply() or control_request_free(). */
typedef void (*ControlHandler)(ControlRequest *req, const ControlMessage *msg, void *userdata);

typedef struct ControlServerStats {
        unsigned long long accepted, refused, malformed, too_many;
} ControlServerStats;

int control_server_new(sd_event *e, const char *path, int64_t priority, ControlHandler handler, void *userdata,
                       ControlServer **ret);
ControlServer *control_server_free(ControlServer *s);
void control_server_get_stats(const ControlServer *s, ControlServerStats *ret);

/* Sends the reply and frees the request. */
int control_request_reply(ControlRequest *req, const char *reply, size_t n);
/* Sends "ERROR=<text>" and frees the request. */
int control_request_error(ControlRequest *req, const char *text);
void control_request_free(ControlRequest *req);
uid_t control_request_uid(const ControlRequest *req);
