/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tprof-bundle's end of the control socket: send one request, wait for the reply.
 */
#pragma once

#include <stdint.h>

#include "control/control-proto.h"

#define CONTROL_SOCKET_DEFAULT TPROF_RUNTIME_DIR "/control.sock"

/* Returns 0 with the parsed reply, -ECONNREFUSED/-ENOENT when no daemon listens, -ETIMEDOUT, -EBADMSG
 * for a reply outside the protocol, or another -errno. */
int control_call(const char *path, const char *request, size_t n, uint64_t timeout_usec, ControlMessage *ret_reply);
