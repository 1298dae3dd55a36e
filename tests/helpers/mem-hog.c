/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A process that runs out of memory, for test-tprofd-oom.sh: run in a memory cgroup whose limit is
 * LIMIT_MB, it makes the kernel's OOM killer kill it.
 *
 *   mem-hog SECONDS LIMIT_MB
 *
 * For SECONDS of CPU time (at most three times as long by the clock) it maps half of LIMIT_MB,
 * writes to each of its pages and unmaps it again, over and over: nearly all that time is the
 * kernel's page faults (hog_touch() -> the fault -> handle_mm_fault()). Then it maps and touches
 * 1 MiB after 1 MiB and keeps them all, past the limit, until the kernel kills it. Small pages
 * only (MADV_NOHUGEPAGE), so every page faults. Should it reach 16 times LIMIT_MB alive, the limit
 * is not in force: it exits 2 rather than go on eating the machine's memory.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static double clock_s(clockid_t id) {
        struct timespec ts;
        clock_gettime(id, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static char *map_pages(size_t bytes) {
        char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

        if (p == MAP_FAILED) {
                perror("mmap");
                exit(1);
        }
        (void) madvise(p, bytes, MADV_NOHUGEPAGE);
        return p;
}

/* One write per page: each one a page fault. */
__attribute__((noinline)) static void hog_touch(volatile char *p, size_t bytes, size_t page) {
        for (size_t off = 0; off < bytes; off += page)
                p[off] = (char) off;
}

__attribute__((noinline)) static void hog_churn(double seconds, size_t bytes, size_t page) {
        double end_cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) + seconds;
        double end_wall = clock_s(CLOCK_MONOTONIC) + 3 * seconds;

        while (clock_s(CLOCK_PROCESS_CPUTIME_ID) < end_cpu && clock_s(CLOCK_MONOTONIC) < end_wall) {
                char *p = map_pages(bytes);
                hog_touch(p, bytes, page);
                munmap(p, bytes);
        }
}

__attribute__((noinline)) static void hog_grow(size_t most, size_t page) {
        const size_t chunk = 1 << 20;

        for (size_t total = 0; total < most; total += chunk)
                hog_touch(map_pages(chunk), chunk, page);
}

int main(int argc, char *argv[]) {
        size_t page = (size_t) sysconf(_SC_PAGESIZE), limit;
        double seconds;

        if (argc != 3) {
                fprintf(stderr, "usage: mem-hog SECONDS LIMIT_MB\n");
                return 1;
        }
        seconds = atof(argv[1]);
        limit = (size_t) strtoul(argv[2], NULL, 10) << 20;
        if (limit == 0) {
                fprintf(stderr, "mem-hog: no limit given\n");
                return 1;
        }
        hog_churn(seconds, limit / 2, page);
        hog_grow(16 * limit, page);
        fprintf(stderr, "mem-hog: %zu MiB touched and still alive: no limit in force\n", (16 * limit) >> 20);
        return 2;
}
