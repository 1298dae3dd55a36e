/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Callchain -> frames. The kernel writes a context marker (PERF_CONTEXT_KERNEL, _USER, _GUEST...)
 * before each part of the chain; the first address after a marker is where that mode was
 * interrupted, the others are return addresses, which are looked up one byte back so that a call
 * at the very end of a function is not named after the next one.
 */
#include <linux/perf_event.h>
#include <stdbool.h>

#include <string.h>

#include "basic/macro.h"

#include "sampler/sampler-frames.h"

/* Where a user chain left the mapped code. Address 0, not the word read there: that word differs
 * from stack to stack and would keep apart stacks that are the same. perf script prints the frame
 * as "0 [unknown] ([unknown])" and stackcollapse folds it to "[unknown]". */
static const Frame frame_cut = {
        .symbol = SYMBOLIZER_UNKNOWN,
        .dso = SYMBOLIZER_UNKNOWN,
};

static bool frame_unresolved(const Frame *f) {
        return !f->symbol || streq(f->symbol, SYMBOLIZER_UNKNOWN);
}

/* Returns true when the frame is volatile: named (or not) other than from the mapping's file.
 * *ret_same (a leaf's, not a return address'; when not NULL): the addresses that make the same
 * frame (SymbolizerRange). */
static bool user_frame(Symbolizer *z, uint32_t pid, const ProcMap *m, uint64_t ip, bool is_return, Frame *f,
                       SymbolizerRange *ret_same) {
        SymbolizerMapping sm;
        bool final;

        if (m)
                sm = (SymbolizerMapping) {
                        .start = m->start, .end = m->end, .pgoff = m->pgoff,
                        .dev = m->dev, .ino = m->ino, .ino_gen = m->ino_gen, .path = m->path,
                };
        final = is_return ? symbolizer_user(z, pid, m ? &sm : NULL, ip, true, f) :
                            symbolizer_user_leaf(z, pid, m ? &sm : NULL, ip, f, ret_same);
        return !final && (!m || frame_unresolved(f) || f->dso != m->path);
}

bool sample_chain_has_leaf(const RecordSample *rs) {
        return rs->nr >= 2 && (rs->ips[0] == (uint64_t) PERF_CONTEXT_KERNEL || rs->ips[0] == (uint64_t) PERF_CONTEXT_USER) &&
               rs->ips[1] < (uint64_t) PERF_CONTEXT_MAX;
}

/* The interrupted address (not a return address) of pid, in the kernel or not; true when volatile.
 * *ret_same (when not NULL): the addresses that make the same frame (SymbolizerRange). */
static bool leaf_frame(ProcTable *procs, Symbolizer *z, uint32_t pid, bool kernel, uint64_t ip, Frame *ret,
                       SymbolizerRange *ret_same) {
        if (kernel) {
                symbolizer_kernel_leaf(z, ip, ret, ret_same);
                return frame_unresolved(ret);
        }
        return user_frame(z, pid, proc_table_find_map(procs, pid, ip), ip, false, ret, ret_same);
}

bool sample_leaf_frame(ProcTable *procs, Symbolizer *z, const RecordSample *rs, Frame *ret, SymbolizerRange *ret_same) {
        return leaf_frame(procs, z, rs->id.pid, rs->ips[0] == (uint64_t) PERF_CONTEXT_KERNEL, rs->ips[1], ret, ret_same);
}

uint32_t sample_frames(ProcTable *procs, Symbolizer *z, const RecordSample *rs, Frame *frames,
                       SampleFramesStats *stats) {
        enum { CTX_NONE, CTX_KERNEL, CTX_USER, CTX_OTHER } ctx = CTX_NONE;
        uint32_t pid = rs->id.pid, n = 0;
        bool first = true, cut = false, vol = false, vol_callers = false;

        if (rs->nr == 0) {
                vol = leaf_frame(procs, z, pid, rs->kernel_ip, rs->ip, &frames[n++], NULL);
                stats->volatile_chains += vol;
                stats->volatile_callers += vol;
                return n;
        }

        for (uint64_t i = 0; i < rs->nr && n < PROFILE_STACK_DEPTH_MAX; i++) {
                uint64_t ip = rs->ips[i];
                const ProcMap *m;

                if (ip >= (uint64_t) PERF_CONTEXT_MAX) {
                        ctx = ip == (uint64_t) PERF_CONTEXT_KERNEL ? CTX_KERNEL :
                              ip == (uint64_t) PERF_CONTEXT_USER   ? CTX_USER :
                                                                     CTX_OTHER;
                        first = true;
                        continue;
                }
                if (ctx == CTX_NONE)
                        ctx = rs->kernel_ip ? CTX_KERNEL : CTX_USER;
                if (ctx == CTX_OTHER) /* guest frames: not ours to name */
                        continue;
                if (ctx == CTX_KERNEL) {
                        bool v;

                        symbolizer_kernel(z, ip, !first, &frames[n]);
                        v = frame_unresolved(&frames[n]);
                        vol |= v;
                        vol_callers |= v && n > 0;
                        n++;
                        first = false;
                        continue;
                }

                if (cut) {
                        stats->frames_dropped++;
                        continue;
                }
                m = proc_table_find_map(procs, pid, first ? ip : ip - 1);
                /* The leaf is real even unmapped (JIT code the table has not caught up with); a
                 * return address outside every known mapping is where the walk lost its way. */
                if (!m && !first && proc_table_has_maps(procs, pid)) {
                        frames[n++] = frame_cut;
                        stats->callchains_cut++;
                        cut = true;
                        continue;
                }
                if (user_frame(z, pid, m, ip, !first, &frames[n], NULL)) {
                        vol = true;
                        vol_callers |= n > 0;
                }
                n++;
                first = false;
        }
        stats->volatile_chains += vol;
        stats->volatile_callers += vol_callers;
        return n;
}
