/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzz target for the name tidying in profile/profile-names: process names, DSO paths and symbol
 * names come from other processes (comm is any 15 bytes, symbols are whatever an ELF file or a
 * JIT map says), and the exports must stay parseable by the viewers whatever they are. The input
 * is one byte choosing the output buffer size, then comm, DSO and symbol separated by NUL bytes.
 * Results are checked against the contract in profile-names.h: NUL-terminated within the
 * buffer, never empty, no ';' (the folded-stack separator) or control bytes.
 */
#include <assert.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "basic/cleanup.h"
#include "profile/profile-names.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const char *buf, size_t l, bool no_semicolon) {
        size_t n = strlen(buf);

        assert(n < l);
        if (l > sizeof "[unknown]")
                assert(n > 0);
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char) buf[i];
                assert(c >= 0x20 && c != 0x7f);
                if (no_semicolon)
                        assert(c != ';');
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *in = NULL, *comm = NULL, *dso = NULL, *sym = NULL, *frame = NULL;
        const char *parts[3] = { "", "", "" };
        size_t l, k = 0;

        if (size < 1)
                return 0;
        l = 1 + data[0]; /* 1..256 */
        in = malloc(size);
        comm = malloc(l);
        dso = malloc(l);
        sym = malloc(l);
        frame = malloc(l);
        if (!in || !comm || !dso || !sym || !frame)
                return 0;
        memcpy(in, data + 1, size - 1);
        in[size - 1] = '\0';
        for (char *p = in; k < 3 && p < in + size; k++) {
                parts[k] = p;
                p += strlen(p) + 1;
        }

        profile_comm_tidy(parts[0], comm, l);
        check(comm, l, true);
        /* The viewers' event-line regexes need two characters: a one-byte comm gets a '_' (a byte
         * that is not UTF-8 is already four, "\xNN", and a backslash two). */
        if (strlen(parts[0]) == 1 && l > 6)
                assert(strlen(comm) >= 2 && strlen(comm) <= 5);
        profile_dso_tidy(parts[1], dso, l);
        check(dso, l, false);
        assert(!strpbrk(dso, " ()"));
        profile_symbol_tidy(parts[2], sym, l);
        check(sym, l, true);
        if (sym[0] != '\0') {
                size_t n = strlen(sym);
                assert(sym[0] != '(' && sym[0] != ' ' && sym[n - 1] != ' ');
        }
        profile_folded_frame(comm, sym, dso, frame, l);
        check(frame, l, true);
        return 0;
}
