/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A program that calls libc and the C++-named function of helpers/elf-fixture.c through its PLT:
 * test-symbolizer-plt-linked.c names the PLT's entries from the file alone and holds them against
 * objdump's names. Never run.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

uint64_t fixture_gamma(uint64_t x) __asm__("_ZN7fixture5gammaEm");

int main(int argc, char **argv) {
        struct timespec ts;

        (void) argv;
        if (clock_gettime(CLOCK_MONOTONIC, &ts) < 0)
                abort();
        printf("%lld %llu\n", (long long) ts.tv_nsec, (unsigned long long) fixture_gamma((uint64_t) argc));
        return 0;
}
