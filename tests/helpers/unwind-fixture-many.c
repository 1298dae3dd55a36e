/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A thousand small functions, unwind_many_1000 to unwind_many_1999, each with an FDE of its own,
 * linked after the fixture library's own code into its twin with .eh_frame_hdr last: a rule for
 * the last of them must not make libdw read and keep the FDEs of all the others.
 */
#include <stdint.h>

#define F(n)                                                                                                           \
        __attribute__((visibility("default"), noinline)) uint64_t unwind_many_##n(uint64_t x);                         \
        uint64_t unwind_many_##n(uint64_t x) {                                                                         \
                return x * (n##ULL + 3) ^ (x >> 7);                                                                    \
        }
#define D(p) F(p##0) F(p##1) F(p##2) F(p##3) F(p##4) F(p##5) F(p##6) F(p##7) F(p##8) F(p##9)
#define C(p) D(p##0) D(p##1) D(p##2) D(p##3) D(p##4) D(p##5) D(p##6) D(p##7) D(p##8) D(p##9)
#define B(p) C(p##0) C(p##1) C(p##2) C(p##3) C(p##4) C(p##5) C(p##6) C(p##7) C(p##8) C(p##9)

B(1)
