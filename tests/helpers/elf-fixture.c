/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A tiny shared library with known functions: test-symbolizer-elf.c loads it, takes the
 * addresses of these functions and checks that the symbolizer names them from the file alone.
 */
#include <stdint.h>

uint64_t fixture_alpha(uint64_t x);
uint64_t fixture_beta(uint64_t x);
/* A C++-mangled name, fixture::gamma(unsigned long), for the demangling test. */
uint64_t fixture_gamma(uint64_t x) __asm__("_ZN7fixture5gammaEm");

__attribute__((noinline)) static uint64_t fixture_local(uint64_t x) {
        return x * 2654435761U + 1;
}

__attribute__((noinline)) uint64_t fixture_alpha(uint64_t x) {
        return fixture_local(x) ^ 0x5555;
}

__attribute__((noinline)) uint64_t fixture_beta(uint64_t x) {
        uint64_t r = 0;
        for (uint64_t i = 0; i < x; i++)
                r += fixture_alpha(i);
        return r;
}

__attribute__((noinline)) uint64_t fixture_gamma(uint64_t x) {
        return fixture_beta(x) + 1;
}

/* Aligned, so that padding no symbol covers lies between fixture::gamma and it. */
uint64_t fixture_delta(uint64_t x);
__attribute__((noinline, aligned(64))) uint64_t fixture_delta(uint64_t x) {
        return fixture_gamma(x) - 1;
}
