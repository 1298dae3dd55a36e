/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * stderr logging with journald priority prefixes; see log.h for the contract.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic/log.h"

static int max_level = LOG_INFO;
static const char *program = "tprof";
static bool to_journal = false;

/* True when stderr is the stream systemd handed us, so journald parses "<N>" prefixes. */
static bool stderr_is_journal(void) {
        const char *e = getenv("JOURNAL_STREAM");
        unsigned long long dev, ino;
        struct stat st;

        if (!e || sscanf(e, "%llu:%llu", &dev, &ino) != 2)
                return false;
        if (fstat(STDERR_FILENO, &st) < 0)
                return false;
        return (unsigned long long) st.st_dev == dev && (unsigned long long) st.st_ino == ino;
}

void log_setup(const char *program_name) {
        const char *e;

        if (program_name)
                program = program_name;
        to_journal = stderr_is_journal();
        e = getenv("TPROF_LOG_LEVEL");
        if (e) {
                int l = log_level_from_string(e);
                if (l >= 0)
                        max_level = l;
        }
}

void log_set_max_level(int level) {
        max_level = level;
}

int log_get_max_level(void) {
        return max_level;
}

int log_level_from_string(const char *s) {
        static const char *const names[] = {
                [LOG_EMERG] = "emerg", [LOG_ALERT] = "alert",   [LOG_CRIT] = "crit",  [LOG_ERR] = "err",
                [LOG_WARNING] = "warning", [LOG_NOTICE] = "notice", [LOG_INFO] = "info", [LOG_DEBUG] = "debug",
        };

        if (!s)
                return -EINVAL;
        if (streq(s, "error"))
                return LOG_ERR;
        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                if (streq(s, names[i]))
                        return (int) i;
        if (s[0] >= '0' && s[0] <= '7' && s[1] == '\0')
                return s[0] - '0';
        return -EINVAL;
}

int log_internal(int level, int error, const char *file, int line, const char *format, ...) {
        char buf[4096];
        va_list ap;
        int saved = errno;

        /* %m prints the error we were handed, not whatever errno happens to be. */
        errno = error;
        va_start(ap, format);
        (void) vsnprintf(buf, sizeof buf, format, ap);
        va_end(ap);

        if (to_journal)
                fprintf(stderr, "<%d>%s\n", level, buf);
        else if (max_level >= LOG_DEBUG)
                fprintf(stderr, "%s: (%s:%d) %s\n", program, file, line, buf);
        else
                fprintf(stderr, "%s: %s\n", program, buf);

        errno = saved;
        return -error;
}
