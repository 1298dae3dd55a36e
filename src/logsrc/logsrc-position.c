/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Position files of the log sources; see logsrc-position.h. Small, line-based, strictly parsed.
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "basic/cleanup.h"
#include "basic/fileio.h"
#include "basic/macro.h"
#include "basic/parse-util.h"
#include "basic/string-util.h"
#include "logsrc/logsrc-position.h"

#define POSITION_FILE_BYTES_MAX 4096U

int logsrc_state_path(const char *state_dir, const char *name, char **ret_path) {
        _cleanup_free_ char *dir = NULL, *path = NULL;
        int r;

        assert(state_dir);
        assert(name);
        assert(ret_path);

        if (asprintf(&dir, "%s/state", state_dir) < 0)
                return -ENOMEM;
        r = mkdir_p(dir, 0750);
        if (r < 0)
                return r;
        if (asprintf(&path, "%s/%s", dir, name) < 0)
                return -ENOMEM;
        *ret_path = TAKE_PTR(path);
        return 0;
}

static bool boot_id_is_valid(const char *s) {
        size_t i;

        for (i = 0; s[i]; i++) {
                bool dash = i == 8 || i == 13 || i == 18 || i == 23;

                if (dash ? s[i] != '-' : !((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
                        return false;
        }
        return i == BOOT_ID_STRING_MAX - 1;
}

int logsrc_read_boot_id(char ret[static BOOT_ID_STRING_MAX]) {
        _cleanup_free_ char *line = NULL;
        const char *path;
        int r;

        path = getenv("TPROF_BOOT_ID_PATH") ?: "/proc/sys/kernel/random/boot_id";
        r = read_one_line_file(path, &line);
        if (r < 0)
                return r;
        if (!boot_id_is_valid(line))
                return -EBADMSG;
        memcpy(ret, line, BOOT_ID_STRING_MAX);
        return 0;
}

int kmsg_position_load(const char *path, KmsgPosition *ret) {
        _cleanup_free_ char *data = NULL;
        KmsgPosition p = {};
        bool have_boot = false, have_seq = false;
        char *line, *save = NULL;
        int r;

        assert(path);
        assert(ret);

        r = read_full_file(path, POSITION_FILE_BYTES_MAX, &data, NULL);
        if (r == -EFBIG)
                return -EBADMSG;
        if (r < 0)
                return r;

        for (line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                const char *v;

                if ((v = startswith(line, "boot_id="))) {
                        if (have_boot || !boot_id_is_valid(v))
                                return -EBADMSG;
                        memcpy(p.boot_id, v, BOOT_ID_STRING_MAX);
                        have_boot = true;
                } else if ((v = startswith(line, "seq="))) {
                        if (have_seq || safe_atou64(v, &p.seq) < 0)
                                return -EBADMSG;
                        have_seq = true;
                } else
                        return -EBADMSG;
        }
        if (!have_boot || !have_seq)
                return -EBADMSG;

        *ret = p;
        return 0;
}

int kmsg_position_save(const char *path, const KmsgPosition *p) {
        char buf[128];
        int n;

        assert(path);
        assert(p);

        if (!boot_id_is_valid(p->boot_id))
                return -EINVAL;
        n = snprintf(buf, sizeof buf, "boot_id=%s\nseq=%" PRIu64 "\n", p->boot_id, p->seq);
        assert(n > 0 && (size_t) n < sizeof buf);
        return write_file_atomic(path, buf, (size_t) n, 0640);
}

static bool cursor_is_valid(const char *c, size_t n) {
        if (n == 0 || n > JOURNAL_CURSOR_BYTES_MAX)
                return false;
        for (size_t i = 0; i < n; i++)
                if ((unsigned char) c[i] <= ' ' || (unsigned char) c[i] >= 0x7f)
                        return false;
        return true;
}

int journal_cursor_load(const char *path, char **ret_cursor) {
        _cleanup_free_ char *data = NULL;
        size_t n;
        int r;

        assert(path);
        assert(ret_cursor);

        r = read_full_file(path, POSITION_FILE_BYTES_MAX, &data, &n);
        if (r == -EFBIG)
                return -EBADMSG;
        if (r < 0)
                return r;
        if (n > 0 && data[n - 1] == '\n')
                data[--n] = '\0';
        if (!cursor_is_valid(data, n) || strlen(data) != n)
                return -EBADMSG;
        *ret_cursor = TAKE_PTR(data);
        return 0;
}

int journal_cursor_save(const char *path, const char *cursor) {
        _cleanup_free_ char *buf = NULL;
        int n;

        assert(path);
        assert(cursor);

        if (!cursor_is_valid(cursor, strlen(cursor)))
                return -EINVAL;
        n = asprintf(&buf, "%s\n", cursor);
        if (n < 0)
                return -ENOMEM;
        return write_file_atomic(path, buf, (size_t) n, 0640);
}
