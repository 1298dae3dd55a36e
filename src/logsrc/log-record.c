/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * String table of LogSource; see log-record.h.
 */
#include "basic/macro.h"
#include "logsrc/log-record.h"

const char *log_source_to_string(LogSource s) {
        static const char *const table[_LOG_SOURCE_MAX] = {
                [LOG_SOURCE_KMSG] = "kmsg",
                [LOG_SOURCE_JOURNAL] = "journal",
                [LOG_SOURCE_TEXT] = "text",
        };
        if (s < 0 || s >= _LOG_SOURCE_MAX)
                return NULL;
        return table[s];
}
