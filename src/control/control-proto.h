/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The control protocol between tprof-bundle and tprofd: one request and one reply per connection on
 * a SOCK_SEQPACKET socket, each one message of "KEY=value\n" lines, like the sd_notify protocol.
 * Keys are 1-32 of [A-Z0-9_], unique within a message; values are at most CONTROL_VALUE_BYTES_MAX
 * bytes of anything but NUL and newline. A message is at most CONTROL_MESSAGE_BYTES_MAX bytes.
 *
 * Requests: OP=capture [BEFORE_USEC=] [AFTER_USEC=] [NOTE=]; OP=status.
 * Replies:  OK=1 and fields, or ERROR=<text>.
 *
 * The parser is the daemon's first contact with bytes another user chose: it never trusts a length,
 * rejects anything outside the grammar with a reason, and allocates nothing.
 */
#pragma once

#include <stddef.h>

#include "basic/string-util.h"

#define CONTROL_MESSAGE_BYTES_MAX 4096U
#define CONTROL_FIELDS_MAX 48U
#define CONTROL_KEY_BYTES_MAX 32U
#define CONTROL_VALUE_BYTES_MAX 1024U

typedef struct ControlField {
        char key[CONTROL_KEY_BYTES_MAX + 1];
        char value[CONTROL_VALUE_BYTES_MAX + 1];
} ControlField;

typedef struct ControlMessage {
        ControlField fields[CONTROL_FIELDS_MAX];
        size_t n_fields;
} ControlMessage;

/* Returns 0, or -EBADMSG with *reterr_reason (a static string) saying what is wrong. */
int control_message_parse(const char *buf, size_t n, ControlMessage *ret, const char **reterr_reason);
const char *control_message_get(const ControlMessage *m, const char *key);

/* Appends "KEY=value\n"; newlines and NULs in value are replaced by spaces, and value is cut to
 * CONTROL_VALUE_BYTES_MAX. Returns -EINVAL for a key outside the grammar. */
int control_message_append(StrBuf *b, const char *key, const char *value);
int control_message_appendf(StrBuf *b, const char *key, const char *fmt, ...) _printf_(3, 4);
