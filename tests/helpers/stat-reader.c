/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A node agent whose time is in the kernel, for test-tprofd-story-kernel.sh: it reads the files
 * given, one after the other (open, read to the end, close: as a monitoring agent reads the
 * memory.stat of every cgroup), paced as go-burn paces its function:
 *
 *   stat-reader SECONDS FILE PATH...
 *
 * every 100 ms 0.5 ms of CPU reading, and while FILE exists 12 ms more: from 0.5% of a CPU to
 * 12.5%, nearly all of it in the system calls. The budget is CPU time (CLOCK_PROCESS_CPUTIME_ID) and the
 * periods keep their schedule, so a busy host does not shrink it.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double clock_s(clockid_t id) {
        struct timespec ts;
        clock_gettime(id, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void read_one(const char *path) {
        char buf[16384];
        int fd = open(path, O_RDONLY | O_CLOEXEC);

        if (fd < 0)
                return;
        while (read(fd, buf, sizeof buf) > 0)
                ;
        close(fd);
}

/* Reads the paths round robin until the process has run for seconds more of CPU time. */
__attribute__((noinline)) static void read_for(double seconds, char **paths, int n, int *next) {
        double end = clock_s(CLOCK_PROCESS_CPUTIME_ID) + seconds;

        while (clock_s(CLOCK_PROCESS_CPUTIME_ID) < end) {
                read_one(paths[*next]);
                *next = (*next + 1) % n;
        }
}

int main(int argc, char *argv[]) {
        double end, period;
        int next = 0;

        if (argc < 4)
                return 64;
        period = clock_s(CLOCK_MONOTONIC);
        end = period + atof(argv[1]);
        /* Periods on a fixed schedule: one the scheduler delayed is made up by the next ones. */
        for (; period < end; period += 0.1) {
                double left;

                read_for(0.0005, argv + 3, argc - 3, &next);
                if (access(argv[2], F_OK) == 0)
                        read_for(0.012, argv + 3, argc - 3, &next);
                left = period + 0.1 - clock_s(CLOCK_MONOTONIC);
                if (left > 0)
                        usleep((useconds_t) (left * 1e6));
        }
        return 0;
}
