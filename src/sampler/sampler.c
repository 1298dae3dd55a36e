/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The sampler: setup (the perf event on each CPU is in sampler-cpus.c), draining the rings into one batch that is sorted by time
 * (so a sample on CPU 1 sees the MMAP2 its process wrote on CPU 0 just before), applying side-band
 * records to the task table, and turning each sample's callchain into symbolized frames.
 *
 * When to drain: every drain costs cache misses on whatever the load evicted since the last one
 * (unwind rules, symbol tables, the handler's tables), so fewer, larger batches cost less a sample.
 * The timer comes the caller's drain_usec after the last drain, or sooner, before the ring that
 * fills fastest is half full again at the rate it filled (plan_next_drain()): one drain for all
 * rings, however many CPUs are busy. The kernel also wakes a ring's reader each time another half
 * ring has been written; such a wakeup drains only a ring three eighths full (a rate that grew
 * since the plan). sd-event priorities: the ring fds and the timer share the caller's priority.
 */
#include <assert.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "basic/alloc-util.h"
#include "basic/cleanup.h"
#include "basic/fileio.h"
#include "basic/macro.h"
#include "basic/time-util.h"
#include "sampler/proc-maps.h"
#include "sampler/sampler-cgroup.h"
#include "sampler/sampler-frames.h"
#include "sampler/sampler-internal.h"
#include "sampler/sampler-record.h"
#include "sampler/sampler-ring.h"
#include "sampler/sampler-stack-cache.h"
#include "sampler/sampler-unwind-cfi.h"
#include "sampler/sampler-unwind.h"
#include "sampler/sampler.h"
#include "symbolizer/symbolizer.h"

static_assert(SAMPLER_SCRATCH_REGS == UNWIND_SCRATCH_REGS, "a sample's caller-saved registers go to the unwinder as they are");

/* The timed drain's earliest (and its slack); a fill rate is measured over at least this long. */
#define SAMPLER_DRAIN_USEC_MIN (50U * 1000U)
#define SAMPLER_RATE_USEC_MIN (200U * 1000U)

/* A drain copies at most this much out of the rings before it processes what it has. */
#define SAMPLER_BATCH_BYTES_MAX (64U * 1024U * 1024U)
#define SAMPLER_CPUS_MAX 8192U
#define SAMPLER_DRAIN_ROUNDS_MAX 8U
#define SAMPLER_CLOCK_TRIES 5U
#define SAMPLER_STACK_EPOCH_NS (1000U * 1000U * 1000U)
#define SAMPLER_MAPS_RESCAN_NS (1000U * 1000U * 1000U)
#define SAMPLER_SWEEP_NS (UINT64_C(60) * 1000U * 1000U * 1000U)
/* The kernel's thread that makes every other kernel thread, in the initial pid namespace. */
#define KTHREADD_PID 2U

Sampler *sampler_free(Sampler *s) {
        if (!s)
                return NULL;
        for (unsigned i = 0; i < s->n_cpus_max; i++)
                if (s->cpus[i])
                        sampler_cpu_close(s, s->cpus[i]);
        free(s->cpus);
        safe_close(s->online_fd);
        s->timer = sd_event_source_disable_unref(s->timer);
        s->event = sd_event_unref(s->event);
        stack_cache_free(s->stacks);
        proc_table_free(s->procs);
        symbolizer_free(s->symbolizer);
        unwinder_free(s->unwinder);
        cgroup_map_free(s->cgroups);
        free(s->batch);
        free(s->entries);
        return mfree(s);
}

/* A small number from /proc/sys; -errno if unreadable. */
static int read_sysctl_u32(const char *path, uint32_t *ret) {
        _cleanup_free_ char *l = NULL;
        unsigned long v;
        char *e;
        int r;

        r = read_one_line_file(path, &l);
        if (r < 0)
                return r;
        errno = 0;
        v = strtoul(l, &e, 10);
        if (errno != 0 || e == l || v > UINT32_MAX)
                return -EBADMSG;
        *ret = (uint32_t) v;
        return 0;
}

/* Where sample cgroups are named from: the hierarchy perf reports ids of, walked now. No
 * hierarchy at all is no error: samples then carry no cgroup. */
static int sampler_cgroup_setup(Sampler *s) {
        _cleanup_free_ char *mount = NULL;
        CgroupHierarchyFlags flags = 0;
        int r;

        s->sample_type = SAMPLER_SAMPLE_TYPE;
        if (s->opts.no_cgroups)
                return 0;
        r = cgroup_hierarchy_find("/proc/self/mountinfo", &mount, &flags);
        s->cgroups_part = flags & CGROUP_HIERARCHY_PART; /* also with -ENOENT: what was there */
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        r = cgroup_map_new(mount, flags, &s->cgroups);
        if (r < 0)
                return r;
        if (!cgroup_ns_is_initial("/proc/self/ns/cgroup")) {
                /* /proc/PID/cgroup reads relative to our namespace's root: find it in the hierarchy */
                r = cgroup_map_set_namespace(s->cgroups, "/proc/self/mountinfo", "/proc/self/cgroup",
                                             (uint32_t) getpid());
                if (r < 0)
                        return r;
        }
        if (!s->opts.cgroups_from_proc) {
                s->sample_type = SAMPLER_SAMPLE_TYPE_CGROUP;
                r = cgroup_map_scan(s->cgroups);
                if (r < 0)
                        return r;
        }
        return 0;
}

const char *sampler_cgroup_problem(const Sampler *s) {
        if (s->cgroups_part)
                return "only part of the cgroup hierarchy is mounted here (tprofd runs in a cgroup namespace of its "
                       "own, or sees a sub-cgroup only): samples outside it carry no cgroup, so no unit, container "
                       "or pod; run tprofd in the host's cgroup namespace";
        return s->cgroups ? cgroup_map_namespace_problem(s->cgroups) : NULL;
}

const char *sampler_cgroup_source(const Sampler *s) {
        return !s->cgroups ? "none" : (s->sample_type & PERF_SAMPLE_CGROUP) ? "perf" : "proc";
}

static const char *sample_cgroup(Sampler *s, const RecordSample *rs) {
        if (!s->cgroups)
                return NULL;
        if (s->sample_type & PERF_SAMPLE_CGROUP)
                return cgroup_map_by_id(s->cgroups, rs->cgroup, rs->id.pid);
        return cgroup_map_by_pid(s->cgroups, "/proc", rs->id.pid);
}

int sampler_new(const SamplerOptions *o, SampleHandler handler, void *userdata, Sampler **ret) {
        _cleanup_(sampler_freep) Sampler *s = NULL;
        long n;
        int r;

        s = new0(Sampler, 1);
        if (!s)
                return -ENOMEM;
        s->online_fd = -1;
        s->opts = o ? *o : (SamplerOptions) {};
        s->page_size = (size_t) sysconf(_SC_PAGESIZE);
        if (s->opts.freq_hz == 0)
                s->opts.freq_hz = SAMPLER_FREQ_HZ_DEFAULT;
        if (s->opts.drain_usec == 0)
                s->opts.drain_usec = SAMPLER_DRAIN_USEC_DEFAULT;
        s->opts.drain_usec = MAX(s->opts.drain_usec, (uint64_t) SAMPLER_DRAIN_USEC_MIN);
        if (s->opts.unwind < 0 || s->opts.unwind >= _UNWIND_MODE_MAX)
                return -EINVAL;
#if !defined(__x86_64__) && !defined(__aarch64__)
        /* The registers asked for are x86-64's or arm64's; elsewhere frame pointers it is. */
        s->opts.unwind = UNWIND_MODE_FP;
#endif
        if (s->opts.unwind != UNWIND_MODE_FP) {
                if (s->opts.unwind_stack_bytes == 0)
                        s->opts.unwind_stack_bytes = SAMPLER_UNWIND_STACK_BYTES_DEFAULT;
                if (s->opts.unwind_stack_bytes < SAMPLER_UNWIND_STACK_BYTES_MIN ||
                    s->opts.unwind_stack_bytes > SAMPLER_UNWIND_STACK_BYTES_MAX || s->opts.unwind_stack_bytes % 8 != 0)
                        return -EINVAL;
                if (s->opts.mmap_pages == 0)
                        s->opts.mmap_pages = sampler_ring_pages(s->page_size, s->opts.freq_hz,
                                                                s->opts.unwind_stack_bytes);
                r = unwinder_new(&(UnwinderOptions) { .mode = s->opts.unwind, .cache_bytes_max = s->opts.unwind_cache_bytes },
                                 &s->unwinder);
                if (r < 0)
                        return r;
        }
        if (s->opts.mmap_pages == 0)
                s->opts.mmap_pages = sampler_ring_pages(s->page_size, s->opts.freq_hz, 0);
        if ((s->opts.mmap_pages & (s->opts.mmap_pages - 1)) != 0 || s->opts.mmap_pages > 65536)
                return -EINVAL;
        s->handler = handler;
        s->userdata = userdata;

        /* Asking for more than the sysctls allow fails perf_event_open() with EINVAL/EOVERFLOW;
         * say which limit instead. The kernel lowers max_sample_rate by itself when sampling
         * interrupts take too long. */
        uint32_t v;
        if (read_sysctl_u32("/proc/sys/kernel/perf_event_max_sample_rate", &v) >= 0 && s->opts.freq_hz > v)
                return -ERANGE;
        s->max_stack = PROFILE_STACK_DEPTH_MAX;
        if (read_sysctl_u32("/proc/sys/kernel/perf_event_max_stack", &v) >= 0 && v < s->max_stack)
                s->max_stack = v;

        n = sysconf(_SC_NPROCESSORS_CONF);
        if (n < 1)
                n = 1;
        s->n_cpus_max = (unsigned) MIN(n, (long) SAMPLER_CPUS_MAX);
        s->cpus = new0(SamplerCpu *, s->n_cpus_max);
        if (!s->cpus)
                return -ENOMEM;

        s->procs = proc_table_new();
        s->stacks = stack_cache_new(0);
        if (!s->procs || !s->stacks)
                return -ENOMEM;
        r = symbolizer_new(&(SymbolizerOptions) { .function_frames = s->opts.function_frames,
                                                  .cache_bytes_max = s->opts.symbol_cache_bytes },
                           &s->symbolizer);
        if (r < 0)
                return r;

        r = sampler_cgroup_setup(s);
        if (r < 0)
                return r;
        sampler_probe_kernel(s);
        if (s->lacks & SAMPLER_LACK_CGROUP)
                s->sample_type = SAMPLER_SAMPLE_TYPE; /* before 5.7: cgroups from /proc */
        r = sampler_open_events(s);
        if (r < 0)
                return r;
        if (s->n_open == 0) {
                /* Try once more to get the reason. */
                r = sampler_event_open(s, 0);
                if (r >= 0) {
                        safe_close(r);
                        r = -ENODEV;
                }
                return r;
        }

        /* A sample's cgroup read from /proc when it is drained: a process that lived shorter than
         * the wait is gone by then. */
        if (s->cgroups && !(s->sample_type & PERF_SAMPLE_CGROUP))
                s->opts.drain_usec = MIN(s->opts.drain_usec, (uint64_t) USEC_PER_SEC);

        r = proc_table_scan(s->procs, "/proc");
        if (r < 0)
                return r;

        *ret = TAKE_PTR(s);
        return 0;
}

/* Tasks /proc no longer has, whose EXIT no record told, marked exited for the reaping: an access()
 * each. Not where this /proc is another pid namespace's than the records' (ours): there every
 * task would look gone. */
static void sweep_tasks(Sampler *s) {
        char self[64];

        s->swept_lost = s->lost_records;
        s->swept_ns = s->last_time_ns;
        snprintf(self, sizeof(self), "/proc/%d", (int) getpid());
        if (access(self, F_OK) < 0)
                return;
        (void) proc_table_sweep(s->procs, "/proc", s->last_time_ns);
}

int sampler_enable(Sampler *s) {
        int r = sampler_cpus_ioctl(s, PERF_EVENT_IOC_ENABLE);
        if (r < 0)
                return r;
        s->enabled = true;
        /* /proc is read again once the events run: a process that exec'd or loaded a library
         * after sampler_new() read it has that change in no record, and would otherwise keep the
         * old image's mappings (its stacks cut "outside every mapping") for its whole life. From
         * here on every change comes as a record, applied over what this scan found. The first
         * scan still counts for the processes that end before this one reaches them. */
        if (!s->rescanned) {
                r = proc_table_rescan(s->procs, "/proc");
                if (r < 0)
                        return r;
                /* And what the first scan found that ended before the events ran, which no EXIT
                 * record will tell. */
                sweep_tasks(s);
                s->rescanned = true;
        }
        return 0;
}

int sampler_disable(Sampler *s) {
        s->enabled = false;
        return sampler_cpus_ioctl(s, PERF_EVENT_IOC_DISABLE);
}

const char *sampler_open_error_hint(int error) {
        switch (error) {
        case -EACCES:
                return "needs root or CAP_PERFMON (CAP_SYS_ADMIN before Linux 5.8), or kernel.perf_event_paranoid 0 or lower (1 for --once --pid)";
        case -EPERM:
                /* perf_event_open()'s own refusal, or mmap()'s of a ring over the allowance */
                return "needs root or CAP_PERFMON (CAP_SYS_ADMIN before Linux 5.8), kernel.perf_event_paranoid 0 or lower (1 for --once --pid), "
                       "or locked memory for the rings (kernel.perf_event_mlock_kb, RLIMIT_MEMLOCK)";
        case -EINVAL:
        case -E2BIG:
        case -EOPNOTSUPP:
                /* what sampler_probe_kernel() could not do without: user register and stack copies
                 * (Linux 3.7) or the event itself */
                return "the kernel refuses the sampling event even without its newer parts; --unwind fp asks for less";
        case -ENOENT:
        case -ENODEV:
                return "no such event on this kernel or CPU";
        case -EMFILE:
        case -ENFILE:
                return "too many open files: raise the limit (one event per CPU)";
        default:
                return "needs root or CAP_PERFMON";
        }
}

/* Lists what each ring holds, in place or copied into the batch; batch_release() frees the rings'
 * space after. Returns true if some ring still has data (batch full). */
static bool batch_collect(Sampler *s) {
        bool more = false;
        uint32_t seq = 0;

        for (unsigned i = 0; i < s->n_cpus_max; i++) {
                SamplerCpu *c = s->cpus[i];
                const struct perf_event_header *h;

                if (!c)
                        continue;
                sampler_ring_begin(c->ring);
                while ((h = sampler_ring_next(c->ring))) {
                        if (!GREEDY_REALLOC(s->entries, s->n_entries_allocated, s->n_entries + 1)) {
                                c->ring->tail -= h->size;
                                more = true;
                                break;
                        }
                        if ((const uint8_t *) h != c->ring->copy) {
                                /* Read in place: the ring's tail is published only once the batch has
                                 * been processed, so the kernel leaves the record alone until then.
                                 * Copying each sample's 8 KiB stack out was a tenth of the daemon's
                                 * CPU at 4850 Hz. */
                                s->entries[s->n_entries++] = (BatchEntry) {
                                        .time = record_time(h, s->attr.sample_type),
                                        .in_ring = h,
                                        .cpu = c->cpu,
                                        .seq = seq++,
                                };
                                continue;
                        }
                        /* A record that wraps around the ring's end was made contiguous in a buffer
                         * the next one reuses: it is copied. */
                        if (s->batch_len + h->size > SAMPLER_BATCH_BYTES_MAX) {
                                /* Leave the record (and the rest) in the ring for the next round. */
                                c->ring->tail -= h->size;
                                s->debug.batch_full++;
                                more = true;
                                break;
                        }
                        if (!GREEDY_REALLOC(s->batch, s->batch_allocated, s->batch_len + h->size)) {
                                c->ring->tail -= h->size;
                                more = true;
                                break;
                        }
                        memcpy(s->batch + s->batch_len, h, h->size);
                        s->entries[s->n_entries++] = (BatchEntry) {
                                .time = record_time(h, s->attr.sample_type),
                                .offset = s->batch_len,
                                .cpu = c->cpu,
                                .seq = seq++,
                        };
                        s->batch_len += h->size;
                }
        }
        return more;
}

/* Hands the space of every record collected back to the kernel, once the batch is processed. */
static void batch_release(Sampler *s) {
        for (unsigned i = 0; i < s->n_cpus_max; i++)
                if (s->cpus[i])
                        sampler_ring_end(s->cpus[i]->ring);
}

static int entry_cmp(const void *a, const void *b) {
        const BatchEntry *x = a, *y = b;
        if (x->time != y->time)
                return x->time < y->time ? -1 : 1;
        /* seq keeps each ring's own order for records stamped alike. */
        return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static SamplerStats *cpu_stats(Sampler *s, uint32_t cpu) {
        static SamplerStats dummy;
        if (cpu < s->n_cpus_max && s->cpus[cpu])
                return &s->cpus[cpu]->stats;
        return &dummy;
}

static const char *sample_comm(Sampler *s, uint32_t pid, uint32_t tid) {
        const char *comm;

        if (pid == 0)
                return "swapper";
        if (pid == UINT32_MAX) /* exiting, its pid already gone: nothing in /proc to look at */
                return proc_unnamed(tid, s->comm_buf);
        comm = proc_table_comm(s->procs, pid, tid);
        if (!comm && !proc_table_get(s->procs, pid)) {
                /* Started between our scan and the events being enabled: look once, remember either way. */
                if (proc_table_scan_pid(s->procs, "/proc", pid) < 0)
                        (void) proc_table_comm_event(s->procs, pid, pid, "", false);
                comm = proc_table_comm(s->procs, pid, tid);
        }
        if (comm)
                return comm;
        return proc_unnamed(tid, s->comm_buf);
}

/*
 * Replaces rs's callchain by its kernel part (the chain holds no user part: exclude_callchain_user)
 * followed by the user addresses walked from the stack copy, so that the frames path sees the
 * same shape of chain whichever way the user part was found.
 */
static void unwind_user(Sampler *s, RecordSample *rs) {
        size_t n = 0, max_user;
        int why;

        for (uint64_t i = 0; i < rs->nr && n < PROFILE_STACK_DEPTH_MAX; i++) {
                if (rs->ips[i] == (uint64_t) PERF_CONTEXT_USER)
                        break;
                s->chain[n++] = rs->ips[i];
        }
        if (n == 0 && rs->kernel_ip) { /* no chain at all: keep the interrupted kernel address */
                s->chain[n++] = (uint64_t) PERF_CONTEXT_KERNEL;
                s->chain[n++] = rs->ip;
        }
        if (rs->regs_abi == PERF_SAMPLE_REGS_ABI_NONE) { /* a kernel thread: no user part */
                unwinder_count_no_user(s->unwinder, UNWIND_NO_USER_REGS);
                rs->ips = s->chain;
                rs->nr = n;
                return;
        }
        s->chain[n++] = (uint64_t) PERF_CONTEXT_USER;
        max_user = PROFILE_STACK_DEPTH_MAX + 1;
        why = unwind_no_user_cause(rs->regs_abi, rs->user_sp, rs->stack_size, rs->stack_dyn_size);
        if (why >= 0) {
                /* Registers but no copy: the interrupted address alone, cut. */
                unwinder_count_no_user(s->unwinder, why);
                s->chain[n++] = rs->user_ip;
                s->chain[n++] = 0;
        } else
                n += unwinder_unwind(s->unwinder, s->procs,
                                     &(UnwindInput) {
                                             .pid = rs->id.pid,
                                             .ip = rs->user_ip,
                                             .sp = rs->user_sp,
                                             .bp = rs->user_bp,
                                             .bx = rs->user_bx,
                                             .lr = rs->user_lr,
#if defined(__x86_64__)
                                             .scratch = rs->user_scratch, /* in the same order */
#endif
                                             .kernel_mode = rs->kernel_ip,
                                             .stack = rs->stack,
                                             .stack_size = rs->stack_dyn_size,
                                             .compat32 = rs->regs_abi == PERF_SAMPLE_REGS_ABI_32,
                                     },
                                     s->chain + n, max_user);
        rs->ips = s->chain;
        rs->nr = n;
}

/*
 * A ring that overflowed may have dropped MMAP2 and COMM records with the samples, and a process
 * whose library mapping was lost would have every later stack cut "outside every mapping" for its
 * whole life. So after a loss, a stack cut that way has its process's maps read again from /proc,
 * once per process and loss (at most once a second), and is walked again (the first walk stays in
 * the counts).
 */
static bool maps_after_loss(Sampler *s, uint32_t pid, uint64_t t_ns) {
        ProcTask *task = proc_table_get(s->procs, pid);

        if (!task || task->pid != pid || task->exited || task->rescan_mark == s->lost_records)
                return false;
        /* A ring that keeps overflowing reports a loss every drain: read a process at most once a
         * second, so a daemon that is already behind does not fall further behind. */
        if (task->rescan_ns != 0 && t_ns < task->rescan_ns + SAMPLER_MAPS_RESCAN_NS)
                return false;
        task->rescan_mark = s->lost_records;
        task->rescan_ns = t_ns;
        s->debug.maps_rescans++;
        return proc_table_rescan_pid(s->procs, "/proc", pid) >= 0;
}

static void unwind_user_sample(Sampler *s, RecordSample *rs) {
        const RecordSample orig = *rs;
        UnwindStats before, after;

        if (s->lost_records == 0 || rs->id.pid == 0) {
                unwind_user(s, rs);
                return;
        }
        unwinder_get_stats(s->unwinder, &before);
        unwind_user(s, rs);
        unwinder_get_stats(s->unwinder, &after);
        if (after.cut[UNWIND_CUT_UNMAPPED] != before.cut[UNWIND_CUT_UNMAPPED] && maps_after_loss(s, rs->id.pid, rs->id.time)) {
                *rs = orig;
                unwind_user(s, rs);
        }
}

static int process_sample(Sampler *s, const struct perf_event_header *h) {
        RecordSample rs;
        Sample sample;

        if (record_parse_sample(h, s->attr.sample_type, &rs) < 0) {
                s->debug.decode_errors++;
                return 0;
        }
        cpu_stats(s, rs.id.cpu)->samples++;
        if (s->opts.pid > 0 && rs.id.pid != (uint32_t) s->opts.pid) {
                s->debug.samples_filtered++;
                return 0;
        }
        if (!s->handler)
                return 0;

        symbolizer_begin(s->symbolizer);
        sample = (Sample) {
                .t_ns = rs.id.time,
                .cpu = rs.id.cpu,
                .pid = rs.id.pid,
                .tid = rs.id.tid,
                .comm = sample_comm(s, rs.id.pid, rs.id.tid),
                .period = rs.period,
                .cgroup = sample_cgroup(s, &rs),
        };
        if (rs.stack_size > 0)
                s->stack_tail = (size_t) ((const uint8_t *) h + h->size - rs.stack);
        if (s->unwinder)
                unwind_user_sample(s, &rs); /* the key of the stack cache is the chain it leaves */
        stack_cache_frames(s->stacks, s->procs, s->symbolizer, &rs, s->frames, &s->frame_stats, &sample);
        return s->handler(&sample, s->userdata);
}

static void process_record(Sampler *s, const struct perf_event_header *h, uint32_t ring_cpu, int *handler_error) {
        const uint64_t st = s->attr.sample_type;
        int r;

        s->debug.records++;
        switch (h->type) {

        case PERF_RECORD_SAMPLE:
                r = process_sample(s, h);
                if (r < 0 && *handler_error == 0)
                        *handler_error = r;
                break;

        case PERF_RECORD_MMAP:
        case PERF_RECORD_MMAP2: {
                RecordMmap2 m;
                ProcMap pm;

                r = h->type == PERF_RECORD_MMAP2 ? record_parse_mmap2(h, st, &m) : record_parse_mmap(h, st, &m);
                if (r < 0) {
                        s->debug.decode_errors++;
                        break;
                }
                /* pid -1: kernel modules; kallsyms names those. */
                if (m.pid == UINT32_MAX || !(m.prot & PROT_EXEC))
                        break;
                pm = (ProcMap) {
                        .start = m.addr,
                        .end = m.addr + m.len,
                        .pgoff = m.pgoff,
                        .dev = makedev(m.maj, m.min),
                        .ino = m.ino,
                        .ino_gen = m.ino_gen,
                        .prot = m.prot,
                        .path = (char *) m.filename,
                };
                (void) proc_table_mmap(s->procs, m.pid, &pm);
                break;
        }

        case PERF_RECORD_COMM: {
                RecordComm c;

                if (record_parse_comm(h, st, &c) < 0) {
                        s->debug.decode_errors++;
                        break;
                }
                if (s->probe_tid != 0 && c.tid == s->probe_tid && streq(c.comm, s->probe_comm)) {
                        s->probe_time_ns = c.id.time;
                        s->probe_found = true;
                }
                (void) proc_table_comm_event(s->procs, c.pid, c.tid, c.comm, c.exec);
                if (c.exec && s->cgroups)
                        cgroup_map_forget_pid(s->cgroups, c.pid);
                break;
        }

        case PERF_RECORD_CGROUP: {
                RecordCgroup g;

                if (record_parse_cgroup(h, st, &g) < 0) {
                        s->debug.decode_errors++;
                        break;
                }
                if (s->cgroups)
                        (void) cgroup_map_record(s->cgroups, g.id, g.path);
                break;
        }

        case PERF_RECORD_FORK: {
                RecordTask t;

                if (record_parse_task(h, st, &t) < 0) {
                        s->debug.decode_errors++;
                        break;
                }
                (void) proc_table_fork(s->procs, t.pid, t.ppid, t.tid, t.ptid);
                /* Made by kthreadd itself (ptid: a user-mode helper is a kworker's child that
                 * CLONE_PARENT gives kthreadd as its parent), which is pid 2 only in the initial
                 * pid namespace: elsewhere pid 2 is somebody's process. */
                if (t.ppid == KTHREADD_PID && t.ptid == KTHREADD_PID && t.pid == t.tid) {
                        const char *pc = proc_table_comm(s->procs, KTHREADD_PID, KTHREADD_PID);
                        if (pc && streq(pc, "kthreadd"))
                                (void) proc_table_kthread_comm(s->procs, "/proc", t.tid);
                }
                /* A new process: what was read of its pid is another's, which has gone. */
                if (t.pid == t.tid && t.pid != t.ppid && s->cgroups)
                        cgroup_map_forget_pid(s->cgroups, t.pid);
                break;
        }

        case PERF_RECORD_EXIT: {
                RecordTask t;

                if (record_parse_task(h, st, &t) < 0) {
                        s->debug.decode_errors++;
                        break;
                }
                (void) proc_table_exit(s->procs, t.pid, t.tid, t.time);
                break;
        }

        case PERF_RECORD_LOST: {
                RecordLost l;

                if (record_parse_lost(h, st, &l) < 0) {
                        s->debug.decode_errors++;
                        break;
                }
                /* The ring that overflowed is the one that told us. */
                cpu_stats(s, ring_cpu)->lost += l.lost;
                s->lost_records++;
                if (s->lost_handler)
                        s->lost_handler(ring_cpu, l.lost, s->userdata);
                break;
        }

        case PERF_RECORD_THROTTLE:
                cpu_stats(s, ring_cpu)->throttled++;
                break;
        case PERF_RECORD_UNTHROTTLE:
                cpu_stats(s, ring_cpu)->unthrottled++;
                break;

        default:
                break;
        }
}

static const struct perf_event_header *entry_record(const Sampler *s, const BatchEntry *e) {
        return e->in_ring ?: (const struct perf_event_header *) (s->batch + e->offset);
}

/* Stack copies are read a few words at a time, frame by frame, long after the kernel wrote them
 * (a drain comes every few seconds, or when a ring is half full): each word read is a cache miss, and
 * at high rates those misses were a fifth of the daemon's time. The next record is fetched while this
 * one is done: its fields before the copy (the chain and the registers, which the parse reads one
 * after the other), the start of its copy (where the innermost frames are) and its end (the copy's
 * dynamic size and the cgroup, 8 KiB past the start: a miss that alone was two thirds of the
 * parse's time at 4850 Hz). The header, which says where those are, was asked for a record earlier
 * (prefetch_header()), so reading its size here does not wait. */
#define PREFETCH_STACK_BYTES 1024U
#define PREFETCH_HEAD_BYTES 512U
static void prefetch_header(const Sampler *s, const BatchEntry *e) {
        __builtin_prefetch(entry_record(s, e));
}

static void prefetch_record(const Sampler *s, const BatchEntry *e) {
        const uint8_t *h = (const uint8_t *) entry_record(s, e), *stack;
        uint16_t size = 0;

        __builtin_prefetch(h);
        if (s->stack_tail > 0)
                memcpy(&size, h + offsetof(struct perf_event_header, size), sizeof size);
        if (size <= s->stack_tail) { /* no stack copy (frame pointers), or a record without one */
                __builtin_prefetch(h + 64);
                return;
        }
        stack = h + size - s->stack_tail;
        for (size_t k = 64; k < PREFETCH_HEAD_BYTES && h + k < stack; k += 64)
                __builtin_prefetch(h + k);
        for (size_t k = 0; k < PREFETCH_STACK_BYTES && k < s->stack_tail; k += 64)
                __builtin_prefetch(stack + k);
        __builtin_prefetch(h + size - 1);
}

/* The fastest any ring fills, as the time until it is half full again once drained now (from what
 * each holds and the time since the last drain). */
static uint64_t rings_usec_to_half(const Sampler *s, uint64_t since_usec) {
        uint64_t to_half = UINT64_MAX;

        for (unsigned i = 0; i < s->n_cpus_max; i++) {
                const SamplerCpu *c = s->cpus[i];

                if (c && c->ring)
                        to_half = MIN(to_half, sampler_ring_usec_to_half(sampler_ring_used(c->ring), c->ring->size, since_usec));
        }
        return to_half;
}

/*
 * The next timed drain, counted from this one: the drain period, or sooner, before the ring that
 * fills fastest is half full again at the rate it filled since the last drain (seven eighths of
 * the way there: for a rate that grows, and the timer's slack). A busy CPU's ring then drains
 * about every second at 97 Hz, however many CPUs wake the daemon, and rings that fill slowly wait
 * for the period. A drain too soon after the last to measure a rate keeps the last interval.
 */
static void plan_next_drain(Sampler *s, uint64_t now, uint64_t since_usec, uint64_t to_half) {
        if (s->drain_interval_usec == 0 || since_usec >= SAMPLER_RATE_USEC_MIN) {
                uint64_t interval = MIN(s->opts.drain_usec, to_half / 8 * 7);

                s->drain_interval_usec = MAX(interval, (uint64_t) SAMPLER_DRAIN_USEC_MIN);
        }
        if (!s->timer)
                return;
        (void) sd_event_source_set_time(s->timer, now + s->drain_interval_usec);
        (void) sd_event_source_set_enabled(s->timer, SD_EVENT_ONESHOT);
}

int sampler_drain(Sampler *s) {
        uint64_t now = now_usec(CLOCK_MONOTONIC), since = s->drained_usec > 0 ? now - s->drained_usec : 0;
        uint64_t to_half = rings_usec_to_half(s, since);
        int handler_error = 0;

        s->drained_usec = now;
        s->debug.drains++;
        /* Between drains no sample holds a cgroup path: the map may start over if full. */
        if (s->cgroups)
                (void) cgroup_map_renew(s->cgroups, now);

        for (unsigned round = 0; round < SAMPLER_DRAIN_ROUNDS_MAX; round++) {
                bool more;

                s->batch_len = 0;
                s->n_entries = 0;
                more = batch_collect(s);
                if (s->n_entries == 0) {
                        batch_release(s); /* a ring that lost framing skipped to its head */
                        break;
                }

                qsort(s->entries, s->n_entries, sizeof(BatchEntry), entry_cmp);
                symbolizer_next_epoch(s->symbolizer);
                /* Volatile chains are symbolized again (and JIT maps looked at) at every drain a
                 * second or more after the last time; at high rates the rings wake a drain far
                 * more often than that. */
                if (s->last_time_ns >= s->stack_epoch_ns + SAMPLER_STACK_EPOCH_NS) {
                        stack_cache_next_epoch(s->stacks);
                        s->stack_epoch_ns = s->last_time_ns;
                }
                for (size_t i = 0; i < s->n_entries; i++) {
                        const BatchEntry *e = &s->entries[i];
                        uint64_t errors = s->debug.decode_errors;

                        if (i + 2 < s->n_entries)
                                prefetch_header(s, &s->entries[i + 2]);
                        if (i + 1 < s->n_entries)
                                prefetch_record(s, &s->entries[i + 1]);
                        process_record(s, entry_record(s, e), e->cpu, &handler_error);
                        /* Only a record that decoded moves the clock that reaping and the stack
                         * cache's epochs follow: a garbled one's time may be anything. */
                        if (e->time > s->last_time_ns && s->debug.decode_errors == errors)
                                s->last_time_ns = e->time;
                }
                batch_release(s);
                if (!more)
                        break;
        }

        /* Samples of a task can trail its EXIT by a little (another CPU's ring); keep it a while. */
        if (s->last_time_ns > SAMPLER_EXIT_GRACE_NS)
                (void) proc_table_reap(s->procs, s->last_time_ns - SAMPLER_EXIT_GRACE_NS);
        /* Lost records may have held EXITs: the tasks they ended would stay, with their
         * mappings, until their tids are used again. Looked for at most once a minute. */
        if (s->lost_records != s->swept_lost && s->last_time_ns >= s->swept_ns + SAMPLER_SWEEP_NS)
                sweep_tasks(s);
        /* CPUs that went offline or came back, at most once a second (a sysfs read). */
        if (!s->updating_cpus && now - s->cpus_checked_usec >= USEC_PER_SEC) {
                s->cpus_checked_usec = now;
                (void) sampler_update_cpus(s);
        }
        plan_next_drain(s, now, since, to_half);
        return handler_error;
}

int sampler_drain_if_older(Sampler *s, uint64_t usec) {
        if (s->drained_usec > 0 && now_usec(CLOCK_MONOTONIC) - s->drained_usec < usec)
                return 0;
        return sampler_drain(s);
}

static int on_timer(sd_event_source *src, uint64_t usec, void *userdata) {
        (void) sampler_drain(userdata); /* which sets the timer again */
        return 0;
}

static int on_ring(sd_event_source *src, int fd, uint32_t revents, void *userdata) {
        Sampler *s = userdata;

        if (revents & (EPOLLHUP | EPOLLERR)) {
                /* The CPU went away under the event; the next drain closes it after a last read. */
                for (unsigned i = 0; i < s->n_cpus_max; i++)
                        if (s->cpus[i] && s->cpus[i]->fd == fd) {
                                s->cpus[i]->hup = true;
                                (void) sd_event_source_set_enabled(src, SD_EVENT_OFF);
                        }
        } else {
                bool drain = false;

                s->debug.ring_wakeups++;
                /* Any ring three eighths full: the timer planned for a rate that grew. Below that
                 * the timer comes first, or the ring's next wakeup, still short of full. */
                for (unsigned i = 0; i < s->n_cpus_max && !drain; i++)
                        drain = s->cpus[i] && s->cpus[i]->ring &&
                                sampler_ring_wakeup_reads(sampler_ring_used(s->cpus[i]->ring), s->cpus[i]->ring->size);
                if (!drain) {
                        s->debug.ring_wakeups_left++;
                        return 0;
                }
        }
        (void) sampler_drain(s);
        return 0;
}

int sampler_attach_cpu(Sampler *s, SamplerCpu *c) {
        int r;

        r = sd_event_add_io(s->event, &c->io, c->fd, EPOLLIN, on_ring, s);
        if (r < 0)
                return r;
        return sd_event_source_set_priority(c->io, s->priority);
}

int sampler_attach_event(Sampler *s, sd_event *e, int64_t priority) {
        int r;

        if (s->event)
                return -EBUSY;
        s->event = sd_event_ref(e);
        s->priority = priority;
        for (unsigned i = 0; i < s->n_cpus_max; i++)
                if (s->cpus[i]) {
                        r = sampler_attach_cpu(s, s->cpus[i]);
                        if (r < 0)
                                return r;
                }
        r = sd_event_add_time_relative(e, &s->timer, CLOCK_MONOTONIC, s->drain_interval_usec ?: s->opts.drain_usec,
                                       /* accuracy= */ SAMPLER_DRAIN_USEC_MIN, on_timer, s);
        if (r < 0)
                return r;
        return sd_event_source_set_priority(s->timer, priority);
}

int sampler_measure_clock(Sampler *s, ClockMap *ret) {
        char saved[PROC_COMM_BYTES + 1] = "";
        uint64_t best_bracket = UINT64_MAX;
        int64_t best_offset = 0;
        uint64_t m0, m1, rt;

        if (!s->enabled)
                return -ESRCH;
        if (prctl(PR_GET_NAME, saved) < 0)
                return -errno;

        /* Anything already in the rings first, so the probe's drain is short. */
        (void) sampler_drain(s);

        for (unsigned i = 0; i < SAMPLER_CLOCK_TRIES; i++) {
                uint64_t t0, t1;

                snprintf(s->probe_comm, sizeof(s->probe_comm), "tprof-clk-%u", i);
                s->probe_tid = (uint32_t) gettid();
                s->probe_found = false;

                t0 = now_nsec(CLOCK_MONOTONIC);
                if (prctl(PR_SET_NAME, s->probe_comm) < 0) {
                        s->probe_tid = 0;
                        return -errno;
                }
                t1 = now_nsec(CLOCK_MONOTONIC);
                (void) prctl(PR_SET_NAME, saved);

                (void) sampler_drain(s);
                s->probe_tid = 0;
                if (!s->probe_found)
                        continue;
                if (t1 - t0 < best_bracket) {
                        best_bracket = t1 - t0;
                        best_offset = (int64_t) (s->probe_time_ns - (t0 + (t1 - t0) / 2));
                }
        }
        if (best_bracket == UINT64_MAX)
                return -ETIMEDOUT;

        m0 = now_nsec(CLOCK_MONOTONIC);
        rt = now_nsec(CLOCK_REALTIME);
        m1 = now_nsec(CLOCK_MONOTONIC);

        *ret = (ClockMap) {
                .method = CLOCK_MAP_PERF_BRACKET,
                .perf_minus_mono_ns = best_offset,
                .realtime_minus_mono_ns = (int64_t) (rt - (m0 + (m1 - m0) / 2)),
                .error_ns = (best_bracket + 1) / 2,
                .measured_mono_ns = m1,
        };
        return 0;
}
