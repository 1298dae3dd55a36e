/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The model a window chunk's sample stream is coded with (range-coder.h codes the bits). It
 * predicts when a sample comes, which thread it is in and which stack it has from what the chain's
 * earlier samples had, and lives as long as the chain of chunks its tables belong to:
 *
 *  - time: a tick after the CPU's last expected tick (the sampling interval), rounded down to the
 *    window's resolution; coded is how many resolution steps it is off;
 *  - thread: the one last sampled on the same CPU (a busy thread keeps its CPU from one tick to the
 *    next); else one of the 32 threads sampled most recently, by recency; else a table id, coded
 *    as its distance from the newest thread;
 *  - stack: ranked among the stacks earlier samples of the same comm had, most frequent first (the
 *    processes of one program share their stacks, whatever their pids); else a node id, coded as
 *    its distance from the newest node;
 *  - cgroup (format 4): the one the thread's last sample had, or for a thread's first sample the
 *    one its CPU's last sample had, confirmed by one bit; else the reference itself.
 *
 * Writer and reader run the same model on the same samples in the same order, so they agree on
 * every probability and list. docs/window-format.md specifies it for other readers. Memory is
 * bounded by the chain: one entry per distinct (comm, stack) pair and per CPU number sampled.
 */
#pragma once

#include <stdint.h>

#include "store/range-coder.h"

#define SAMPLE_MODEL_RECENT_THREADS 32

typedef struct SampleModel SampleModel;

SampleModel *sample_model_new(void);
SampleModel *sample_model_free(SampleModel *m);
/* Forgets everything: the state at the start of a chain. */
int sample_model_reset(SampleModel *m);

/* Before a chunk's samples: its first sample time, its sampling interval (0: unknown) and the
 * window's time resolution, all in microseconds. */
void sample_model_begin_chunk(SampleModel *m, uint64_t first_us, uint64_t interval_us, uint64_t resolution_us);
/*
 * Codes one sample's time (µs, a multiple of the resolution), thread and stack node. comm is the
 * thread's comm string id; n_threads and n_nodes are the sizes of the chain's thread and node tables
 * with this chunk's entries (n_nodes counts the root). -EINVAL if an id is out of range or the time
 * is off the resolution, -ENOMEM.
 */
int sample_model_encode(SampleModel *m, RcEncoder *e, uint32_t cpu, uint64_t t_us, uint32_t thread, uint32_t comm,
                        uint32_t node, uint32_t n_threads, uint32_t n_nodes);
/* The reverse; thread_comm maps each thread id to its comm string id. -EBADMSG if the stream names
 * something that does not exist or a time past 2^64 ns, -ENOMEM. */
int sample_model_decode(SampleModel *m, RcDecoder *d, uint32_t cpu, const uint32_t *thread_comm, uint32_t n_threads,
                        uint32_t n_nodes, uint64_t *ret_t_us, uint32_t *ret_thread, uint32_t *ret_node);

/*
 * Format 4: after a sample's time, thread and stack, its cgroup reference (0: none; k: entry k - 1
 * of the chain's cgroup table); n_refs is that table's size with this chunk's entries plus one.
 * -EINVAL (-EBADMSG decoding) if the reference is out of range, -ENOMEM.
 */
int sample_model_encode_cgroup(SampleModel *m, RcEncoder *e, uint32_t cpu, uint32_t thread, uint32_t ref,
                               uint32_t n_refs);
int sample_model_decode_cgroup(SampleModel *m, RcDecoder *d, uint32_t cpu, uint32_t thread, uint32_t n_refs,
                               uint32_t *ret);

#include "basic/cleanup.h"
DEFINE_TRIVIAL_CLEANUP_FUNC(SampleModel *, sample_model_free);
