/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The helpers of bundle-output.h. The rule they keep: nothing that came from a bundle reaches the
 * terminal unescaped, and nothing we print on our own moves the cursor or colours text unless
 * stdout is a terminal that wants it.
 */
#include <langinfo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "basic/log.h"
#include "basic/parse-util.h"
#include "basic/string-util.h"
#include "tprof-bundle/bundle-output.h"
#include "tprof-bundle/tprof-bundle.h"

bool output_colors(void) {
        const char *term = getenv("TERM");

        if (getenv("NO_COLOR"))
                return false;
        if (term && streq(term, "dumb"))
                return false;
        return isatty(STDOUT_FILENO) > 0;
}

unsigned output_columns(void) {
        const char *e = getenv("COLUMNS");
        struct winsize ws = {};
        uint32_t v;

        if (e && safe_atou32(e, &v) >= 0 && v >= 20 && v <= 10000)
                return v;
        if (isatty(STDOUT_FILENO) > 0 && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) >= 0 && ws.ws_col >= 20)
                return ws.ws_col;
        return 0;
}

bool output_utf8(void) {
        const char *cs = nl_langinfo(CODESET);
        return cs && (streq(cs, "UTF-8") || streq(cs, "utf8"));
}

size_t utf8_width(const char *s) {
        size_t w = 0;
        for (; *s; s++)
                if (((unsigned char) *s & 0xc0) != 0x80)
                        w++;
        return w;
}

char *text_for_terminal_n(const char *s, size_t n, size_t width) {
        _cleanup_free_ char *e = NULL;
        const char *ell = output_utf8() ? "…" : "...";
        size_t ell_w = output_utf8() ? 1 : 3;
        size_t w = 0, i;

        if (!s)
                return strdup("-");
        e = escape_text(s, n);
        if (!e)
                return NULL;
        if (width == 0 || utf8_width(e) <= width)
                return TAKE_PTR(e);
        if (width <= ell_w)
                return strdup(ell);
        for (i = 0; e[i]; i++) {
                if (((unsigned char) e[i] & 0xc0) != 0x80) {
                        if (w == width - ell_w)
                                break;
                        w++;
                }
        }
        char *r = malloc(i + strlen(ell) + 1);
        if (!r)
                return NULL;
        memcpy(r, e, i);
        strcpy(r + i, ell);
        return r;
}

char *text_for_terminal(const char *s, size_t width) {
        return text_for_terminal_n(s, s ? strlen(s) : 0, width);
}

void json_text_print(const char *text) {
        /* json-writer already escaped every control character, C1 included; its pretty form ends
         * in a newline of its own. */
        fputs(text, stdout);
        if (!endswith(text, "\n"))
                putchar('\n');
}

int bundles_load(BundleList *ret) {
        struct stat st;
        int r;

        _cleanup_free_ char *sd = text_for_terminal(arg_state_dir, 0);

        /* A mistyped -D is not an empty ring: say so. */
        if (stat(arg_state_dir, &st) < 0)
                return log_error_errno(errno, errno == ENOENT || errno == ENOTDIR ? "No state directory at '%s': %m"
                                                                                 : "Cannot access state directory '%s': %m",
                                       sd ?: "?");
        r = bundle_list_load(arg_state_dir, ret);
        if (r < 0)
                return log_error_errno(r, "Failed to list bundles in '%s/incidents': %m", sd ?: "?");
        return 0;
}

void bundle_entry_warn_corrupt(const BundleEntry *e) {
        _cleanup_free_ char *name = NULL, *path = NULL;

        if (e->state != BUNDLE_ENTRY_CORRUPT)
                return;
        name = text_for_terminal(e->dirname, 200);
        path = text_for_terminal(e->path, 0);
        if (e->manifest_error == -EBADMSG || e->manifest_error == -ELOOP || e->manifest_error == -ERANGE)
                log_warning("Bundle '%s' has an invalid manifest (error at byte %zu), listing it as corrupt.",
                            name ?: "?", e->manifest_error_offset);
        else if (e->manifest_error == -EUCLEAN)
                log_warning("Bundle '%s' has a manifest without a status or with a field of the wrong type, "
                            "listing it as corrupt.", name ?: "?");
        else if (e->manifest_error == -EACCES || e->manifest_error == -EPERM)
                /* Not damage: this user may not read it (a bundle is 0750, group tprof). */
                log_warning_errno(e->manifest_error, "Bundle '%s' cannot be read, listing it as corrupt: %s: %m",
                                  name ?: "?", path ?: "?");
        else if (e->manifest_error == -EPROTO)
                log_warning("Bundle '%s' has a manifest of a newer format or with an unknown status, "
                            "listing it as corrupt.", name ?: "?");
        else
                log_warning_errno(e->manifest_error, "Bundle '%s' has no readable manifest, listing it as corrupt: %m",
                                  name ?: "?");
}

int bundles_resolve(const BundleList *l, const char *id) {
        _cleanup_free_ size_t *cand = NULL;
        _cleanup_free_ char *q = NULL;
        size_t n_cand = 0;
        int r;

        if (l->n == 0) {
                log_error("No bundles found.");
                return -ENOENT;
        }
        if (!id) {
                for (size_t i = l->n; i > 0; i--)
                        if (l->entries[i - 1].state == BUNDLE_ENTRY_COMPLETE ||
                            l->entries[i - 1].state == BUNDLE_ENTRY_PARTIAL ||
                            l->entries[i - 1].state == BUNDLE_ENTRY_NO_COVERAGE)
                                return (int) (i - 1);
                return (int) (l->n - 1);
        }
        q = text_for_terminal(id, 200);
        r = bundle_list_resolve(l, id, &cand, &n_cand);
        if (r == -ENOENT)
                return log_error_errno(r, "No bundle matches '%s'. See 'tprof-bundle ls'.", q ?: "?");
        if (r == -ENOTUNIQ) {
                log_error("'%s' matches %zu bundles; give more of the id:", q ?: "?", n_cand);
                for (size_t i = 0; i < n_cand; i++) {
                        _cleanup_free_ char *name = text_for_terminal(l->entries[cand[i]].dirname, 200);
                        fprintf(stderr, "        %s\n", name ?: "?");
                }
                return r;
        }
        if (r < 0)
                return log_oom();
        /* Only the bundle asked for: another's damage is ls's to report. */
        bundle_entry_warn_corrupt(&l->entries[r]);
        return r;
}

int parse_json_mode(const char *s) {
        if (!s || streq(s, "pretty"))
                return 2;
        if (streq(s, "short"))
                return 1;
        return -EINVAL;
}
