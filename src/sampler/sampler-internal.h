/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The sampler's state, shared by its files: sampler.c (setup, the drain, records into samples)
 * and sampler-cpus.c (the perf event on each online CPU). Not for use outside src/sampler/.
 */
#pragma once

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <systemd/sd-event.h>

#include "sampler/proc-maps.h"
#include "sampler/sampler-cgroup.h"
#include "sampler/sampler-frames.h"
#include "sampler/sampler-ring.h"
#include "sampler/sampler-stack-cache.h"
#include "sampler/sampler-unwind.h"
#include "sampler/sampler.h"
#include "symbolizer/symbolizer.h"

typedef struct SamplerCpu {
        unsigned cpu;
        int fd;
        void *base;
        size_t map_size;
        SamplerRing *ring;
        sd_event_source *io;
        SamplerStats stats;
        bool hup;
        uint64_t seen_head;    /* the ring's head at the last look for a dead event, */
        uint64_t seen_running; /* and the time the event ran, read then */
        bool seen_read;        /* (if it was read then) */
} SamplerCpu;

/* Parts of the perf ABI tprofd uses that older kernels refuse (EINVAL, or E2BIG for a field past
 * their struct perf_event_attr), newest first, with the version that brought each. What the
 * running kernel refuses is done without (sampler_probe_kernel()). */
typedef enum SamplerLack {
        SAMPLER_LACK_CGROUP = 1U << 0,    /* PERF_SAMPLE_CGROUP and attr.cgroup: 5.7 */
        SAMPLER_LACK_MAX_STACK = 1U << 1, /* attr.sample_max_stack: 4.8, past the struct before 4.1 */
        SAMPLER_LACK_COMM_EXEC = 1U << 2, /* attr.comm_exec: 3.16 */
        SAMPLER_LACK_CLOEXEC = 1U << 3,   /* PERF_FLAG_FD_CLOEXEC: 3.14 */
        SAMPLER_LACK_MMAP2 = 1U << 4,     /* attr.mmap2: 3.12 */
        _SAMPLER_LACK_MAX = 5,
} SamplerLack;

typedef struct BatchEntry {
        uint64_t time;
        const struct perf_event_header *in_ring; /* the record where the kernel wrote it, or NULL: */
        size_t offset;                           /* copied into the batch at this offset */
        uint32_t cpu;
        uint32_t seq;
} BatchEntry;

struct Sampler {
        SamplerOptions opts;
        SampleHandler handler;
        LostHandler lost_handler;
        void *userdata;

        struct perf_event_attr attr;
        unsigned lacks; /* SamplerLack: what attr goes without */
        uint64_t sample_type; /* SAMPLER_SAMPLE_TYPE, with PERF_SAMPLE_CGROUP where the kernel has it */
        bool cgroups_part; /* only part of the cgroup hierarchy is mounted here */
        const char *event_name;
        size_t page_size;
        uint32_t max_stack;

        SamplerCpu **cpus; /* indexed by CPU number */
        unsigned n_cpus_max;
        int online_fd; /* /sys/devices/system/cpu/online, read again from its start at each look; -1 */
        unsigned n_open;
        bool enabled;
        bool rescanned; /* /proc was read again once the events ran */
        uint64_t lost_records; /* PERF_RECORD_LOSTs seen: side-band records may be among the lost */
        uint64_t swept_lost, swept_ns; /* lost_records and perf time at the last proc_table_sweep() */

        ProcTable *procs;
        Symbolizer *symbolizer;
        StackCache *stacks;
        uint64_t stack_epoch_ns; /* perf time the stack cache's epoch began */
        Unwinder *unwinder; /* NULL with UNWIND_MODE_FP */
        /* A sample's kernel chain and its unwound user addresses, as one callchain. */
        uint64_t chain[2 * PROFILE_STACK_DEPTH_MAX + 4];
        CgroupMap *cgroups; /* NULL: no cgroup hierarchy to name samples from */

        uint8_t *batch;
        size_t batch_len, batch_allocated;
        BatchEntry *entries;
        size_t n_entries, n_entries_allocated;
        /* Bytes from the start of the last sample's stack copy to its record's end: where the next
         * sample's copy starts, to fetch it into the cache while this one is unwound. */
        size_t stack_tail;
        Frame frames[PROFILE_STACK_DEPTH_MAX];
        char comm_buf[32];

        uint64_t last_time_ns;

        /* Clock measurement in progress: the COMM record we wait for. */
        uint32_t probe_tid;
        char probe_comm[PROC_COMM_BYTES + 1];
        uint64_t probe_time_ns;
        bool probe_found;

        sd_event *event;
        sd_event_source *timer;
        int64_t priority;
        uint64_t drained_usec; /* CLOCK_MONOTONIC of the last drain, 0 before the first */
        uint64_t drain_interval_usec; /* from the last drain to the next timed one (plan_next_drain()) */
        uint64_t cpus_checked_usec; /* CLOCK_MONOTONIC of the last look at the online CPUs */
        bool updating_cpus; /* in sampler_update_cpus(), whose drains must not call it again */

        SamplerStats gone; /* stats of CPUs whose events were closed */
        SamplerDebugStats debug;
        SampleFramesStats frame_stats;
};

/* sampler-cpus.c */
int sampler_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd, unsigned long flags);
/* s->attr on one CPU, close-on-exec; the fd or -errno. */
int sampler_event_open(Sampler *s, int cpu);
/* Finds what of the perf ABI the kernel refuses, into s->lacks; none when the event does not open
 * for another reason (sampler_open_events() then fails with it). */
void sampler_probe_kernel(Sampler *s);
/* Opens the event on every online CPU: cycles where the PMU has them, else the software clock. */
int sampler_open_events(Sampler *s);
void sampler_cpu_close(Sampler *s, SamplerCpu *c);
/* The ioctl on every open CPU's event; the first error. */
int sampler_cpus_ioctl(Sampler *s, unsigned long request);

/* sampler.c */
/* Puts a CPU's ring on the event loop. */
int sampler_attach_cpu(Sampler *s, SamplerCpu *c);
