/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What every cmocka test includes: cmocka needs these four system headers before its own.
 */
#pragma once

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "basic/cleanup.h"
#include "basic/macro.h"

/* Exit code meson treats as "skipped". */
#define EXIT_TEST_SKIP 77
