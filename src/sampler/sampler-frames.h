/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One sample's callchain turned into Frames, leaf first: kernel addresses through kallsyms, user
 * addresses through the mapping the task table finds for them. The module owns only that walk;
 * the table (proc-maps.h) and the symbolizer belong to the sampler, which calls it once per sample,
 * and tests hand it a table and a callchain of their own, with no perf event behind them.
 */
#pragma once

#include <stdint.h>

#include "profile/profile-sample.h"
#include "sampler/proc-maps.h"
#include "sampler/sampler-record.h"
#include "symbolizer/symbolizer.h"

/*
 * Fills frames (room for PROFILE_STACK_DEPTH_MAX) from rs and returns how many it filled. The
 * frames point into the symbolizer's caches: call symbolizer_begin() first, and use them before
 * the next call to it.
 */
uint32_t sample_frames(ProcTable *procs, Symbolizer *z, const RecordSample *rs, Frame *frames);
