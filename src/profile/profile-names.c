/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Export naming rules shared by every exporter; see profile-names.h for the contract.
 */
#include <string.h>

#include "basic/string-util.h"
#include "profile/profile-names.h"

static const char *set_unknown_if_empty(char *buf, size_t l) {
        if (buf[0] == '\0')
                snprintf(buf, l, "[unknown]");
        return buf;
}

/* The blanks beyond ASCII that JavaScript's and Python's \s match (speedscope's event-line regex
 * would split a comm at them, its frame-line regex skip them before a symbol), as UTF-8. */
static bool is_unicode_blank(const char *p, size_t k) {
        static const char *const blanks[] = {
                "\u00a0", "\u1680", "\u2000", "\u2001", "\u2002", "\u2003", "\u2004", "\u2005", "\u2006",
                "\u2007", "\u2008", "\u2009", "\u200a", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000",
                "\ufeff",
        };

        for (size_t i = 0; i < ELEMENTSOF(blanks); i++)
                if (strlen(blanks[i]) == k && memcmp(p, blanks[i], k) == 0)
                        return true;
        return false;
}

const char *profile_comm_tidy(const char *comm, char *buf, size_t l) {
        static const char hex[] = "0123456789abcdef";
        size_t n = 0, chars = 0;
        const char *end;

        if (!comm)
                comm = "";
        end = comm + strlen(comm);
        /* Character by character, so that a name cut at l never ends inside one or an escape. */
        for (const char *p = comm; p < end;) {
                unsigned char c = (unsigned char) *p;
                char out[4];
                const char *src = out; /* what is written for the k bytes at p: m bytes */
                size_t k = 1, m = 1;

                if (c <= ' ' || c == 0x7f || (c == '#' && n == 0))
                        out[0] = '_'; /* a line starting with '#' is a comment to every perf script reader */
                else if (c == ';')
                        out[0] = ':';
                else if (c == '\\') {
                        out[0] = out[1] = '\\';
                        m = 2;
                } else if (c < 0x80)
                        out[0] = (char) c;
                else if ((k = utf8_sequence_length(p, (size_t) (end - p))) > 0) {
                        /* A thread's own name in any script stays itself, so two are never merged
                         * into one of question marks; its blanks and C1 controls are blanks. */
                        if ((k == 2 && c == 0xc2 && (unsigned char) p[1] < 0xa0) || is_unicode_blank(p, k))
                                out[0] = '_';
                        else {
                                src = p;
                                m = k;
                        }
                } else {
                        /* Not UTF-8 (a name the kernel cut inside a character): escaped as in symbols. */
                        k = 1;
                        out[0] = '\\', out[1] = 'x', out[2] = hex[c >> 4], out[3] = hex[c & 15];
                        m = 4;
                }
                if (n + m >= l)
                        break;
                memcpy(buf + n, src, m);
                n += m;
                p += k;
                chars++;
        }
        buf[n] = '\0';
        if (chars == 1 && n + 1 < l) {
                buf[n++] = '_';
                buf[n] = '\0';
        }
        return set_unknown_if_empty(buf, l);
}

const char *profile_dso_tidy(const char *dso, char *buf, size_t l) {
        size_t n = 0;
        const char *end;

        if (!dso)
                dso = "";
        /* A mapping of a deleted file carries " (deleted)": that is state, not part of the name. */
        end = endswith(dso, " (deleted)");
        if (!end)
                end = dso + strlen(dso);
        for (const char *p = dso; p < end && n + 1 < l; p++) {
                unsigned char c = (unsigned char) *p;
                if (c <= ' ' || c == '(' || c == ')' || c == 0x7f || c >= 0x80)
                        continue;
                buf[n++] = (char) c;
        }
        buf[n] = '\0';
        return set_unknown_if_empty(buf, l);
}

/* stackcollapse-perf.pl keeps what follows '(' only in names shaped like Go's "pkg.(*T).M". */
static bool looks_like_go_method(const char *s) {
        const char *open = strstr(s, ".(");
        const char *close;

        if (!open)
                return false;
        close = strchr(open + 2, ')');
        return close && close[1] == '.';
}

/* Flamescope's heatmap looks for its event regex " +([0-9.]+): .+?:" in every line, frame lines
 * too: a name such as "x 0.5: y:" would add a sample at time 0.5 and stretch the heatmap over
 * the whole uptime. The blank before such a "<digits and dots>: " is written '_'. */
static bool looks_like_event_time(const char *p) {
        size_t k = strspn(p, "0123456789.");

        return k > 0 && p[k] == ':' && p[k + 1] == ' ';
}

const char *profile_symbol_tidy(const char *symbol, char *buf, size_t l) {
        _cleanup_strbuf_ StrBuf esc = STRBUF_NULL;
        bool go;
        size_t n = 0;
        const char *s;

        if (!symbol || !*symbol || l < 2)
                return set_unknown_if_empty((buf[0] = '\0', buf), l);
        if (strbuf_append_escaped(&esc, symbol, strlen(symbol)) < 0)
                return set_unknown_if_empty((buf[0] = '\0', buf), l);
        s = esc.data;
        go = looks_like_go_method(s);

        /* Unit by unit, so that a name cut at l never ends inside a UTF-8 character or an escape
         * ("\\", "\xNN"): the viewers read these files as UTF-8 and stop at the first bad byte. */
        const char *end = s + esc.len;
        for (const char *p = s; p < end;) {
                size_t k = 1;

                if (*p == '\\')
                        k = p + 1 < end && p[1] == 'x' ? 4 : 2;
                else if ((unsigned char) *p >= 0x80)
                        k = utf8_sequence_length(p, (size_t) (end - p)) ?: 1;
                k = MIN(k, (size_t) (end - p));
                if (n + k >= l)
                        break;
                if (n == 0 && k > 1 && is_unicode_blank(p, k)) {
                        p += k; /* nor those beyond ASCII, which speedscope's \s eats as well */
                        continue;
                }
                if (k > 1) {
                        memcpy(buf + n, p, k);
                        n += k;
                        p += k;
                        continue;
                }
                if (*p == '(' && !go && !startswith(p, "(anonymous namespace)"))
                        break;
                if (*p == ';')
                        buf[n++] = ':';
                else if (*p == '-' && p[1] == '>')
                        buf[n++] = '_';
                else if ((*p == ' ' && n == 0) || *p == '"' || *p == '\'')
                        ; /* no leading blanks: the frame-line regex would eat them; no quotes */
                else
                        buf[n++] = *p;
                p++;
        }
        buf[n] = '\0';

        /* perf 4.8+ prints "sym+0xoff"; a symbol that itself ends like that would lose it later. */
        char *plus = strrchr(buf, '+');
        if (plus && plus[1] == '0' && plus[2] == 'x' && plus[3] &&
            strspn(plus + 3, "0123456789abcdef") == strlen(plus + 3)) {
                *plus = '\0';
                n = (size_t) (plus - buf);
        }
        /* A trailing blank would be read as part of the " (dso)" separator. */
        while (n > 0 && buf[n - 1] == ' ')
                buf[--n] = '\0';
        /* A frame starting with '(' is skipped by stackcollapse as a process name. */
        if (buf[0] == '(')
                buf[0] = '_';
        /* On what is written, after the quotes are gone: "x 0.5\": y:" is "x 0.5: y:" by now. */
        for (size_t i = 0; i < n; i++)
                if (buf[i] == ' ' && looks_like_event_time(buf + i + 1))
                        buf[i] = '_';
        return set_unknown_if_empty(buf, l);
}

const char *profile_folded_frame(const char *tidy_comm, const char *tidy_symbol, const char *tidy_dso, char *buf,
                                 size_t l) {
        /* stackcollapse-perf.pl's $tidy_java: for every process whose name starts with "java" */
        if (startswith(tidy_comm, "java") && tidy_symbol[0] == 'L' && strchr(tidy_symbol, '/'))
                tidy_symbol++;
        if (streq(tidy_symbol, "[unknown]") && !streq(tidy_dso, "[unknown]")) {
                const char *base = strrchr(tidy_dso, '/');
                size_t n = 0;

                snprintf(buf, l, "[%s]", base ? base + 1 : tidy_dso);
                /* stackcollapse-perf.pl tidies the name it makes of the DSO as it tidies symbols: ';'
                 * (which would split the folded frame) becomes ':', quotes go. */
                for (char *p = buf; *p; p++)
                        if (*p == ';')
                                buf[n++] = ':';
                        else if (*p != '"' && *p != '\'')
                                buf[n++] = *p;
                buf[n] = '\0';
        } else
                snprintf(buf, l, "%s", tidy_symbol);
        return buf;
}
