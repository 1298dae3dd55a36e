/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An LD_PRELOAD shim: the wall clock of this process only is stepped, as NTP or an administrator
 * steps a host's (clock_settime()), without touching the machine's. clock_gettime() of
 * CLOCK_REALTIME and CLOCK_REALTIME_COARSE returns the real time plus the signed number of seconds
 * in the file TPROF_REALTIME_STEP_FILE names (0 while it is missing or empty), read again at most
 * every 100 ms; every other clock goes through.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int clock_gettime(clockid_t clock, struct timespec *ts);

static int (*real_clock_gettime)(clockid_t, struct timespec *);

static int64_t step_sec(void) {
        static int64_t step, checked_ns;
        struct timespec now;
        const char *path;
        int64_t ns, v = 0;
        FILE *f;

        if (real_clock_gettime(CLOCK_MONOTONIC, &now) < 0)
                return __atomic_load_n(&step, __ATOMIC_RELAXED);
        ns = (int64_t) now.tv_sec * 1000000000 + now.tv_nsec;
        if (ns - __atomic_load_n(&checked_ns, __ATOMIC_RELAXED) < 100000000)
                return __atomic_load_n(&step, __ATOMIC_RELAXED);
        __atomic_store_n(&checked_ns, ns, __ATOMIC_RELAXED);
        path = getenv("TPROF_REALTIME_STEP_FILE");
        f = path ? fopen(path, "re") : NULL;
        if (f) {
                long long x;
                if (fscanf(f, "%lld", &x) == 1)
                        v = x;
                fclose(f);
        }
        __atomic_store_n(&step, v, __ATOMIC_RELAXED);
        return v;
}

int clock_gettime(clockid_t clock, struct timespec *ts) {
        int r;

        if (!real_clock_gettime)
                real_clock_gettime = (int (*)(clockid_t, struct timespec *)) dlsym(RTLD_NEXT, "clock_gettime");
        r = real_clock_gettime(clock, ts);
        if (r == 0 && (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE))
                ts->tv_sec += (time_t) step_sec();
        return r;
}
