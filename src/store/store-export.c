/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Folded and perf-script exporters; see store-export.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "basic/macro.h"
#include "basic/string-util.h"
#include "basic/time-util.h"
#include "profile/profile-fold.h"
#include "profile/profile-names.h"
#include "store/store-export.h"

void export_stats_done(ExportStats *s) {
        slice_stats_done(&s->slice);
}

static int fold_handler(const Sample *s, void *ud) {
        return folder_add(ud, s, 1);
}

int export_folded(char *const *paths, size_t n, uint64_t from_perf_ns, uint64_t to_perf_ns, FILE *out,
                  ExportStats *ret_stats) {
        _cleanup_(folder_freep) Folder *f = folder_new();
        ExportStats st = {};
        int r;

        if (!f)
                return -ENOMEM;
        r = slice_read(paths, n, from_perf_ns, to_perf_ns, fold_handler, f, &st.slice);
        if (r >= 0 && st.slice.samples == 0)
                r = -ENODATA;
        if (r >= 0)
                r = folder_write(f, out);
        if (r >= 0 && fflush(out) != 0)
                r = -errno;
        if (ret_stats)
                *ret_stats = st;
        else
                export_stats_done(&st);
        return r;
}

typedef struct ScriptWriter {
        FILE *out;
        StrBuf head, frames; /* the pending sample: event line up to the timestamp, then its frames */
        StrBuf tail;         /* the pending sample's event line after the timestamp */
        const char *event;
        uint64_t pending_t_ns;
        bool have_pending;
        uint64_t written;
} ScriptWriter;

static int script_flush_pending(ScriptWriter *w, bool last) {
        uint64_t sec = w->pending_t_ns / NSEC_PER_SEC, usec = (w->pending_t_ns % NSEC_PER_SEC) / NSEC_PER_USEC;

        if (!w->have_pending)
                return 0;
        /* Flamescope rejects a file whose last timestamp is a whole number. */
        if (last && usec == 0)
                usec = 1;
        if (w->written == 0)
                fprintf(w->out, "# tprof %s perf-script export, event %s; comm blanks written as '_'\n", TPROF_VERSION,
                        w->event);
        fprintf(w->out, "%s%llu.%06llu:%s\n%s\n", w->head.data, (unsigned long long) sec, (unsigned long long) usec,
                w->tail.data, w->frames.len > 0 ? w->frames.data : "");
        w->have_pending = false;
        w->written++;
        return ferror(w->out) ? -EIO : 0;
}

static int script_handler(const Sample *s, void *ud) {
        ScriptWriter *w = ud;
        char comm[64], sym[PROFILE_NAME_BYTES_MAX], dso[PROFILE_NAME_BYTES_MAX];
        int r;

        r = script_flush_pending(w, false);
        if (r < 0)
                return r;
        strbuf_reset(&w->head);
        strbuf_reset(&w->tail);
        strbuf_reset(&w->frames);
        profile_comm_tidy(s->comm, comm, sizeof comm);
        r = strbuf_appendf(&w->head, "%s %u/%u [%03u] ", comm, s->pid, s->tid, s->cpu);
        if (r >= 0)
                r = strbuf_appendf(&w->tail, " %llu %s:", (unsigned long long) (s->period ?: 1), w->event);
        for (uint32_t i = 0; r >= 0 && i < s->n_frames; i++) {
                const Frame *f = &s->frames[i];
                profile_symbol_tidy(f->symbol, sym, sizeof sym);
                profile_dso_tidy(f->dso, dso, sizeof dso);
                if (streq(sym, "[unknown]"))
                        r = strbuf_appendf(&w->frames, "\t%llx [unknown] (%s)\n", (unsigned long long) f->addr, dso);
                else
                        r = strbuf_appendf(&w->frames, "\t%llx %s+0x%llx (%s)\n", (unsigned long long) f->addr, sym,
                                           (unsigned long long) f->offset, dso);
        }
        if (r < 0)
                return r;
        w->pending_t_ns = s->t_ns;
        w->have_pending = true;
        return 0;
}

int export_select_event(char *const *paths, size_t n, uint64_t from_perf_ns, uint64_t to_perf_ns, const char *event,
                        char ***ret_keep, size_t *ret_n_keep, char **ret_event, uint64_t *ret_skipped) {
        _cleanup_free_ char **keep = NULL;
        _cleanup_free_ char *ev = NULL;
        uint64_t skipped = 0;
        size_t n_keep = 0;
        int r;

        keep = calloc(n ?: 1, sizeof(char *));
        if (!keep)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                WindowInfo info;

                r = window_info_load(paths[i], /* verify= */ false, &info);
                if (r < 0)
                        return r;
                if (info.error < 0) {
                        r = info.error;
                        window_info_done(&info);
                        return r;
                }
                if (!ev) {
                        ev = strdup(event ?: (isempty(info.header.info.event) ? "cpu-clock" : info.header.info.event));
                        if (!ev) {
                                window_info_done(&info);
                                return -ENOMEM;
                        }
                }
                if (streq(ev, isempty(info.header.info.event) ? "cpu-clock" : info.header.info.event))
                        keep[n_keep++] = paths[i];
                else if (info.samples > 0 && info.first_ns <= to_perf_ns && info.last_ns >= from_perf_ns)
                        skipped += info.samples; /* an upper bound: whole windows */
                window_info_done(&info);
        }
        if (!ev) {
                ev = strdup(event ?: "cpu-clock");
                if (!ev)
                        return -ENOMEM;
        }
        *ret_keep = TAKE_PTR(keep);
        *ret_n_keep = n_keep;
        *ret_event = TAKE_PTR(ev);
        if (ret_skipped)
                *ret_skipped = skipped;
        return 0;
}

int export_perf_script(char *const *paths, size_t n, uint64_t from_perf_ns, uint64_t to_perf_ns, const char *event,
                       FILE *out, ExportStats *ret_stats) {
        _cleanup_free_ char **keep = NULL;
        _cleanup_free_ char *ev = NULL;
        ScriptWriter w = { .out = out };
        ExportStats st = {};
        size_t n_keep = 0;
        int r;

        /* One event name per file: stackcollapse and speedscope keep only the first they see. */
        r = export_select_event(paths, n, from_perf_ns, to_perf_ns, event, &keep, &n_keep, &ev,
                                &st.skipped_other_event);
        if (r < 0)
                return r;

        w.event = ev;
        r = slice_read(keep, n_keep, from_perf_ns, to_perf_ns, script_handler, &w, &st.slice);
        if (r >= 0 && st.slice.samples == 0)
                r = -ENODATA;
        if (r >= 0)
                r = script_flush_pending(&w, true);
        if (r >= 0 && fflush(out) != 0)
                r = -errno;
        strbuf_done(&w.head);
        strbuf_done(&w.frames);
        strbuf_done(&w.tail);
        if (ret_stats)
                *ret_stats = st;
        else
                export_stats_done(&st);
        return r;
}
