/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Parser of one /dev/kmsg record (kernel Documentation/ABI/testing/dev-kmsg):
 * "PRI,SEQ,USEC,FLAGS[,MORE...];MESSAGE\n" followed by zero or more dictionary lines " KEY=VALUE\n".
 * The kernel escapes every byte below 0x20, 0x7f and above, and the backslash itself, as \xNN; we keep
 * the text as the kernel gave it (for display) and decode it (for matching). Everything is bounded:
 * a record the parser cannot take exactly as written is rejected with a static reason string, never
 * truncated or guessed at. No allocation, no logging; the caller owns the KmsgRecord (it is large,
 * about 13 KiB, so followers keep one on the heap).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "basic/clock-map.h"
#include "logsrc/log-record.h"

/* Longest record (header, message and dictionary) we accept; also the read() buffer size. The kernel
 * needs at least its CONSOLE_EXT_LOG_MAX (8 KiB) per read. */
#define KMSG_RECORD_BYTES_MAX 16384U
/* Longest dictionary (all " KEY=VALUE" lines together) we keep. */
#define KMSG_DICTIONARY_BYTES_MAX 2048U
/* Largest PRI we accept: the kernel stores facility and level in 8 + 3 bits. */
#define KMSG_PRI_MAX 2047U

typedef struct KmsgRecord {
        int facility; /* PRI >> 3; 0 only for records the kernel logged itself */
        int level;    /* PRI & 7 */
        uint64_t seq;
        uint64_t usec; /* perf clock (local_clock) in microseconds */
        char flag;     /* '-' normal, 'c' continuation fragment, '+' continued (older kernels) */

        /* The message as the kernel escaped it; points into the parsed buffer, not NUL-terminated. */
        const char *message_escaped;
        size_t message_escaped_len;

        /* The message decoded (\xNN -> byte), NUL-terminated; may contain NUL bytes before message_len. */
        char message[LOG_MESSAGE_BYTES_MAX + 1];
        size_t message_len;

        /* Dictionary lines without their leading space, each ending in '\n', escapes kept; "" if none. */
        char dictionary[KMSG_DICTIONARY_BYTES_MAX + 1];
        size_t dictionary_len;
} KmsgRecord;

/*
 * Parses exactly one record of n bytes (what one read() of /dev/kmsg returns; the trailing newline
 * is required). Returns 0 on success, -EBADMSG for a malformed record and -EMSGSIZE for one longer than
 * our bounds; on failure *reterr_reason (if non-NULL) is set to a static string saying why, and ret
 * is left in an unspecified state.
 */
int kmsg_record_parse(const char *buf, size_t n, KmsgRecord *ret, const char **reterr_reason);

/*
 * Fills a LogRecord from a parsed record: strings borrowed from k, t_ns = usec * 1000 (the kmsg
 * stamp is the perf clock itself, so t_error_ns = 0), realtime_usec through clock (0 if clock is NULL),
 * kernel_origin = (facility == 0).
 */
void kmsg_record_to_log_record(const KmsgRecord *k, const ClockMap *clock, LogRecord *ret);
