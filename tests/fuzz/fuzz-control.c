/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzz target for control messages: any member of group tprof (and, for the reply, whoever
 * listens on the socket path) chooses these bytes. The input is one SOCK_SEQPACKET message for
 * control_message_parse(). A message that parses is checked against the grammar of
 * control-proto.h, its fields are read as tprofd reads a request (OP, BEFORE_USEC, AFTER_USEC,
 * NOTE), and it must survive a round trip through control_message_append() unchanged.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "basic/cleanup.h"
#include "basic/parse-util.h"
#include "control/control-proto.h"
#include "fuzz-util.h"

static ControlMessage *msg = NULL, *again = NULL;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv) {
        msg = malloc(sizeof(ControlMessage));
        again = malloc(sizeof(ControlMessage));
        if (!msg || !again)
                abort();
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(strbuf_donep) StrBuf b = {};
        const char *reason = NULL, *v;
        uint64_t u;
        int r;

        _cleanup_free_ char *buf = fuzz_copy(data, size);
        if (!buf)
                return 0;

        r = control_message_parse(buf, size, msg, &reason);
        if (r < 0) {
                assert(r == -EBADMSG && reason);
                return 0;
        }

        assert(msg->n_fields <= CONTROL_FIELDS_MAX);
        for (size_t i = 0; i < msg->n_fields; i++) {
                const ControlField *f = &msg->fields[i];
                size_t kl = strlen(f->key);

                assert(kl >= 1 && kl <= CONTROL_KEY_BYTES_MAX);
                assert(strspn(f->key, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == kl);
                assert(strlen(f->value) <= CONTROL_VALUE_BYTES_MAX && !strchr(f->value, '\n'));
                assert(control_message_get(msg, f->key) == f->value);
        }

        /* What tprofd does with a request. */
        v = control_message_get(msg, "OP");
        if (v)
                (void) streq(v, "capture");
        if ((v = control_message_get(msg, "BEFORE_USEC")))
                (void) safe_atou64(v, &u);
        if ((v = control_message_get(msg, "AFTER_USEC")))
                (void) safe_atou64(v, &u);
        if ((v = control_message_get(msg, "NOTE")))
                (void) strlen(v);

        /* Formatting what was parsed gives the same message back. */
        for (size_t i = 0; i < msg->n_fields; i++)
                assert(control_message_append(&b, msg->fields[i].key, msg->fields[i].value) >= 0);
        assert(b.len == size && memcmp(b.data, buf, size) == 0);
        assert(control_message_parse(b.data, b.len, again, &reason) >= 0);
        assert(again->n_fields == msg->n_fields);
        return 0;
}
