/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Logging for the two programs. Feature modules only log at debug level (STYLE.md); tprofd and
 * tprof-bundle decide what to report. Messages go to stderr; when stderr is connected to the
 * journal (JOURNAL_STREAM matches it, as under systemd) each line carries the "<N>" priority
 * prefix journald understands, otherwise a "program: " prefix.
 *
 * The _errno variants format %m from the error passed in and return it negated, so
 * "return log_error_errno(r, "Failed to open '%s': %m", path);" is the idiom.
 */
#pragma once

#include <stdbool.h>
#include <syslog.h>

#include "basic/macro.h"

void log_setup(const char *program_name);
void log_set_max_level(int level);
int log_get_max_level(void);
/* Parses "debug", "info", "notice", "warning", "err"/"error", "crit" or a number 0-7. */
int log_level_from_string(const char *s);

int log_internal(int level, int error, const char *file, int line, const char *format, ...) _printf_(5, 6);

#define log_full_errno(level, error, ...)                                                                    \
        ({                                                                                                   \
                int _level = (level), _e = (error);                                                          \
                _e = _e < 0 ? -_e : _e;                                                                      \
                _level <= log_get_max_level() ? log_internal(_level, _e, __FILE__, __LINE__, __VA_ARGS__)    \
                                              : -_e;                                                         \
        })
#define log_full(level, ...) (void) log_full_errno((level), 0, __VA_ARGS__)

#define log_debug(...) log_full(LOG_DEBUG, __VA_ARGS__)
#define log_info(...) log_full(LOG_INFO, __VA_ARGS__)
#define log_notice(...) log_full(LOG_NOTICE, __VA_ARGS__)
#define log_warning(...) log_full(LOG_WARNING, __VA_ARGS__)
#define log_error(...) log_full(LOG_ERR, __VA_ARGS__)

#define log_debug_errno(e, ...) log_full_errno(LOG_DEBUG, e, __VA_ARGS__)
#define log_info_errno(e, ...) log_full_errno(LOG_INFO, e, __VA_ARGS__)
#define log_notice_errno(e, ...) log_full_errno(LOG_NOTICE, e, __VA_ARGS__)
#define log_warning_errno(e, ...) log_full_errno(LOG_WARNING, e, __VA_ARGS__)
#define log_error_errno(e, ...) log_full_errno(LOG_ERR, e, __VA_ARGS__)

#define log_oom() log_error_errno(SYNTHETIC_ERRNO(ENOMEM), "Out of memory.")
