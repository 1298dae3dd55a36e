/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The sampler's perf event on each online CPU: the attributes, less what an older kernel lacks
 * (sampler_probe_kernel()), opening it with its ring (smaller rings for every CPU when the
 * locked-memory allowance says no), and following CPUs that go offline and come back
 * (sampler_update_cpus()).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "basic/alloc-util.h"
#include "basic/cleanup.h"
#include "basic/fileio.h"
#include "sampler/sampler-internal.h"

void sampler_cpu_close(Sampler *s, SamplerCpu *c) {
        if (!c)
                return;
        c->io = sd_event_source_disable_unref(c->io);
        if (c->base && c->base != MAP_FAILED)
                (void) munmap(c->base, c->map_size);
        safe_close(c->fd);
        free(c->ring);
        s->gone.samples += c->stats.samples;
        s->gone.lost += c->stats.lost;
        s->gone.throttled += c->stats.throttled;
        s->gone.unthrottled += c->stats.unthrottled;
        s->cpus[c->cpu] = NULL;
        s->n_open--;
        free(c);
}

int sampler_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd, unsigned long flags) {
        int fd = (int) syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
        return fd < 0 ? -errno : fd;
}

/* What going without each part costs, by its SamplerLack bit. */
static const char *const lack_table[_SAMPLER_LACK_MAX] = {
        [0] = "no PERF_SAMPLE_CGROUP (Linux 5.7): cgroups are read from /proc/PID/cgroup when samples are "
              "drained, so a process that moves without exec keeps its first cgroup",
        [1] = "no sample_max_stack (Linux 4.8): kernel call chains are cut at the kernel's own depth, not at "
              "kernel.perf_event_max_stack",
        [2] = "no comm_exec (Linux 3.16): an exec is not told from a rename, so a process keeps its old "
              "image's mappings until the new image's replace them, and its cgroup from /proc is not read again",
        [3] = "no PERF_FLAG_FD_CLOEXEC (Linux 3.14): close-on-exec is set on each event just after it opens",
        [4] = "no PERF_RECORD_MMAP2 (Linux 3.12): a new mapping comes with its path only, so its file is known "
              "by path: another container's file at that path, or one put there later, is taken for the one read first",
};

const char *sampler_kernel_lack(const Sampler *s, unsigned i) {
        for (unsigned k = 0; k < _SAMPLER_LACK_MAX; k++)
                if ((s->lacks & (1U << k)) && i-- == 0)
                        return lack_table[k];
        return NULL;
}

static void attr_init(Sampler *s, bool hardware) {
        struct perf_event_attr *a = &s->attr;

        *a = (struct perf_event_attr) {
                .size = sizeof(struct perf_event_attr),
                .type = hardware ? PERF_TYPE_HARDWARE : PERF_TYPE_SOFTWARE,
                .config = hardware ? PERF_COUNT_HW_CPU_CYCLES : PERF_COUNT_SW_CPU_CLOCK,
                .sample_freq = s->opts.freq_hz,
                .freq = 1,
                .sample_type = s->sample_type,
                .disabled = 1,
                /* PERF_RECORD_CGROUP, so cgroups made while we sample get their paths */
                .cgroup = !!(s->sample_type & PERF_SAMPLE_CGROUP),
                /* Side-band for the task table; see the header for why every CPU gets them. */
                .comm = 1,
                .comm_exec = 1,
                .mmap = 1,
                .mmap2 = 1,
                .task = 1,
                .sample_id_all = 1,
                .exclude_guest = 1,
                /* read() tells the time the event ran, which stands still in an event the
                 * kernel took off its CPU for good (event_dead()) */
                .read_format = PERF_FORMAT_TOTAL_TIME_RUNNING,
                .watermark = 1,
                .wakeup_watermark = (uint32_t) (s->opts.mmap_pages * s->page_size / 2),
                .sample_max_stack = (uint16_t) s->max_stack,
        };
        if (s->unwinder) {
                /* The kernel part of the chain still comes from the kernel; the user part from our
                 * walk of the copy, so the kernel's own frame-pointer walk of user memory (a
                 * fault-prone copy per frame, and garbage in code without frame pointers) is
                 * skipped, and the ring carries no user chain next to the stack copy. */
                a->sample_type |= SAMPLER_SAMPLE_TYPE_UNWIND;
                a->sample_regs_user = SAMPLER_REGS_USER_MASK;
                a->sample_stack_user = s->opts.unwind_stack_bytes;
                a->exclude_callchain_user = 1;
        }
        if (s->lacks & SAMPLER_LACK_CGROUP) {
                a->sample_type &= ~(uint64_t) PERF_SAMPLE_CGROUP;
                a->cgroup = 0;
        }
        if (s->lacks & SAMPLER_LACK_MAX_STACK)
                a->sample_max_stack = 0; /* the kernel's own depth: 127 before 4.8 */
        if (s->lacks & SAMPLER_LACK_COMM_EXEC)
                a->comm_exec = 0;
        if (s->lacks & SAMPLER_LACK_MMAP2)
                a->mmap2 = 0; /* PERF_RECORD_MMAP instead, executable mappings only */
}

uint32_t sampler_ring_pages(size_t page_size, uint32_t freq_hz, uint32_t unwind_stack_bytes) {
        uint64_t hz = freq_hz ?: SAMPLER_FREQ_HZ_DEFAULT, bytes, pages;

        if (unwind_stack_bytes > 0) {
                /* A record carries the whole stack copy. The ring grows until it holds
                 * SAMPLER_UNWIND_RING_SECONDS of a CPU that is busy in user code throughout. */
                uint64_t want = hz * (unwind_stack_bytes + 512) * SAMPLER_UNWIND_RING_SECONDS;
                bytes = SAMPLER_RING_BYTES_UNWIND;
                while (bytes < SAMPLER_RING_BYTES_UNWIND_MAX && bytes < want)
                        bytes *= 2;
        } else {
                /* The same seconds of samples at any rate, up to 16 times the default at high
                 * per-CPU rates (a busy daemon thread, a bundle being written, must not cost
                 * samples). */
                bytes = SAMPLER_RING_BYTES_DEFAULT;
                while (bytes < SAMPLER_RING_BYTES_DEFAULT * 16ULL &&
                       bytes * SAMPLER_FREQ_HZ_DEFAULT < (uint64_t) SAMPLER_RING_BYTES_DEFAULT * hz)
                        bytes *= 2;
        }
        /* Page sizes are powers of two, and so are these sizes: so is the quotient. */
        pages = page_size > 0 ? bytes / page_size : 0;
        return pages > 0 ? (uint32_t) pages : 1;
}

int sampler_event_open(Sampler *s, int cpu) {
        int fd, r;

        if (!(s->lacks & SAMPLER_LACK_CLOEXEC))
                return sampler_perf_event_open(&s->attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
        /* Opened and marked by the thread that runs the sampler, in tprofd the event loop's, the only
         * one that starts programs (hooks): none can inherit it in between. */
        fd = sampler_perf_event_open(&s->attr, -1, cpu, -1, 0);
        if (fd >= 0 && fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
                r = -errno;
                safe_close(fd);
                return r;
        }
        return fd;
}

/* 0 if the software event as attr_init() makes it without the parts in lacks opens on CPU 0. */
static int probe(Sampler *s, unsigned lacks) {
        int fd;

        s->lacks = lacks;
        attr_init(s, false);
        fd = sampler_event_open(s, 0);
        if (fd < 0)
                return fd;
        safe_close(fd);
        return 0;
}

void sampler_probe_kernel(Sampler *s) {
        unsigned lacks = 0;
        int r;

        /* perf_copy_attr() refuses a bit, a field or a flag it does not know with EINVAL, a non-zero
         * byte past its struct with E2BIG; anything else is not for want of a part. */
        r = probe(s, 0);
        if (r != -EINVAL && r != -E2BIG) {
                s->lacks = 0;
                return;
        }
        /* Without the newest parts first, as kernels gained them, until the event opens... */
        for (unsigned k = 0; k < _SAMPLER_LACK_MAX && r < 0; k++) {
                lacks |= 1U << k;
                r = probe(s, lacks);
        }
        if (r < 0) {
                s->lacks = 0;
                return;
        }
        /* ...then each back that still opens: a kernel with backports has newer parts without older ones. */
        for (unsigned k = 0; k < _SAMPLER_LACK_MAX; k++)
                if ((lacks & (1U << k)) && probe(s, lacks & ~(1U << k)) == 0)
                        lacks &= ~(1U << k);
        s->lacks = lacks;
}


static int cpu_open(Sampler *s, unsigned cpu) {
        _cleanup_free_ SamplerCpu *c = NULL;
        int r;

        if (cpu >= s->n_cpus_max || s->cpus[cpu])
                return 0;
        c = new0(SamplerCpu, 1);
        if (!c)
                return -ENOMEM;
        c->cpu = cpu;
        c->fd = sampler_event_open(s, (int) cpu);
        if (c->fd < 0)
                return c->fd;
        for (;;) {
                c->map_size = (s->opts.mmap_pages + 1) * s->page_size;
                c->base = mmap(NULL, c->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd, 0);
                if (c->base != MAP_FAILED)
                        break;
                r = -errno;
                safe_close(c->fd);
                /* Over the locked-memory allowance: smaller rings for every CPU, before the events
                 * first run (no ring holds anything to lose). The kernel's allowance grows with the
                 * online CPUs (perf_mmap()), so it is a later CPU's ring it refuses, not the
                 * first's: those open already are closed, for the caller to open again (-EAGAIN). */
                if ((r != -EPERM && r != -ENOMEM) || s->enabled || s->rescanned ||
                    s->opts.mmap_pages <= sampler_ring_pages(s->page_size, SAMPLER_FREQ_HZ_DEFAULT, 0))
                        return r;
                s->opts.mmap_pages /= 2;
                s->attr.wakeup_watermark = (uint32_t) (s->opts.mmap_pages * s->page_size / 2);
                if (s->n_open > 0) {
                        for (unsigned i = 0; i < s->n_cpus_max; i++)
                                if (s->cpus[i])
                                        sampler_cpu_close(s, s->cpus[i]);
                        return -EAGAIN;
                }
                c->fd = sampler_event_open(s, (int) cpu);
                if (c->fd < 0)
                        return c->fd;
        }
        c->ring = new0(SamplerRing, 1);
        if (!c->ring) {
                (void) munmap(c->base, c->map_size);
                safe_close(c->fd);
                return -ENOMEM;
        }
        r = sampler_ring_init(c->ring, c->base, s->page_size, s->opts.mmap_pages * s->page_size);
        if (r < 0) {
                free(c->ring);
                (void) munmap(c->base, c->map_size);
                safe_close(c->fd);
                return r;
        }
        if (s->enabled && ioctl(c->fd, PERF_EVENT_IOC_ENABLE, 0) < 0) {
                r = -errno;
                free(c->ring);
                (void) munmap(c->base, c->map_size);
                safe_close(c->fd);
                return r;
        }
        s->cpus[cpu] = TAKE_PTR(c);
        s->n_open++;
        return 1;
}

/* Parses a CPU list like "0-3,8,10-11" into a bitmap of n entries. */
static int parse_cpu_list(const char *l, bool *set, unsigned n) {
        const char *p = l;

        while (*p && *p != '\n') {
                char *e;
                unsigned long a, b;

                errno = 0;
                a = strtoul(p, &e, 10);
                if (errno != 0 || e == p)
                        return -EBADMSG;
                b = a;
                if (*e == '-') {
                        p = e + 1;
                        b = strtoul(p, &e, 10);
                        if (errno != 0 || e == p || b < a)
                                return -EBADMSG;
                }
                for (unsigned long i = a; i <= b && i < n; i++)
                        set[i] = true;
                p = e;
                if (*p == ',')
                        p++;
                else if (*p && *p != '\n')
                        return -EBADMSG;
        }
        return 0;
}

static int read_online(Sampler *s, bool *online) {
        char l[4096]; /* the kernel writes at most a page */
        ssize_t n = -1;

        /* Opened once and read again from its start at every look (a drain, at most once a
         * second): opening a sysfs file costs several times what reading it does. */
        if (s->online_fd < 0)
                s->online_fd = open("/sys/devices/system/cpu/online", O_RDONLY | O_CLOEXEC);
        if (s->online_fd >= 0)
                n = pread(s->online_fd, l, sizeof l - 1, 0);
        if (n <= 0) {
                /* No sysfs (a container without it): trust the CPU count. Try the file again next time. */
                long k = sysconf(_SC_NPROCESSORS_ONLN);

                s->online_fd = safe_close(s->online_fd);
                for (long i = 0; i < k && (unsigned long) i < s->n_cpus_max; i++)
                        online[i] = true;
                return 0;
        }
        l[n] = '\0';
        return parse_cpu_list(l, online, s->n_cpus_max);
}

/*
 * A CPU that goes offline and comes back between two looks leaves its event dead: the kernel
 * takes the event off the CPU for good (it runs and samples no more, whether it is enabled again
 * or not), and no POLLHUP says so. A ring that moved since the last look is alive. One that did
 * not (an idle CPU counting cycles, or a dead event) is asked the time its event ran, which an
 * enabled event's CPU adds to all the while, and is dead when that has not moved since it was
 * asked last (0 included: an event that died before it was first enabled never ran).
 */
static bool event_dead(SamplerCpu *c) {
        struct {
                uint64_t value, running;
        } rf;
        uint64_t head = __atomic_load_n(&c->ring->page->data_head, __ATOMIC_RELAXED);
        bool dead;

        if (head != c->seen_head) {
                c->seen_head = head;
                c->seen_read = false;
                return false;
        }
        if (read(c->fd, &rf, sizeof rf) != (ssize_t) sizeof rf)
                return false;
        dead = c->seen_read && rf.running == c->seen_running;
        c->seen_read = true;
        c->seen_running = rf.running;
        return dead;
}

static int update_cpus(Sampler *s) {
        _cleanup_free_ bool *online = new0(bool, s->n_cpus_max);
        bool changed = false;
        int r, ret = 0;

        if (!online)
                return -ENOMEM;
        r = read_online(s, online);
        if (r < 0)
                return r;

restart:
        for (unsigned i = 0; i < s->n_cpus_max; i++) {
                SamplerCpu *c = s->cpus[i];

                if (c && (!online[i] || c->hup || (s->enabled && event_dead(c)))) {
                        /* Gone, or back with a dead event: take what it wrote, then let it go. It
                         * is opened anew when it is (or as it is) online. */
                        (void) sampler_drain(s);
                        if (s->cpus[i]) {
                                sampler_cpu_close(s, s->cpus[i]);
                                changed = true;
                        }
                        c = NULL;
                }
                if (!c && online[i]) {
                        r = cpu_open(s, i);
                        if (r == -EAGAIN) {
                                /* Every ring smaller, those open closed: open them all again. */
                                changed = true;
                                goto restart;
                        }
                        if (r > 0) {
                                changed = true;
                                if (s->event && (r = sampler_attach_cpu(s, s->cpus[i])) < 0)
                                        sampler_cpu_close(s, s->cpus[i]); /* opened again, and attached, next look */
                        }
                        /* A CPU that cannot be opened now is tried again at the next look; the
                         * others are still opened. */
                        if (r < 0 && r != -ENODEV && r != -ENXIO && r != -EINVAL && ret == 0)
                                ret = r;
                }
        }
        return ret < 0 ? ret : changed;
}

int sampler_update_cpus(Sampler *s) {
        bool nested = s->updating_cpus;
        int r;

        s->updating_cpus = true;
        r = update_cpus(s);
        s->updating_cpus = nested;
        return r;
}

/* Opens the event on every online CPU: cycles where the PMU has them; VMs and some clouds only
 * have the software clock. */
int sampler_open_events(Sampler *s) {
        attr_init(s, true);
        s->event_name = "cycles";
        if (cpu_open(s, 0) < 0 || !s->cpus[0]) {
                attr_init(s, false);
                s->event_name = "cpu-clock";
        }
        return sampler_update_cpus(s);
}

int sampler_cpus_ioctl(Sampler *s, unsigned long request) {
        int r = 0;
        for (unsigned i = 0; i < s->n_cpus_max; i++)
                if (s->cpus[i] && ioctl(s->cpus[i]->fd, request, 0) < 0 && r == 0)
                        r = -errno;
        return r;
}
