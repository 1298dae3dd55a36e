/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Perf JIT maps: /tmp/perf-PID.map, one "START SIZE name" line per generated function (hex
 * addresses, the name may contain blanks), written by Java agents, Node --perf-basic-prof, LuaJIT
 * and friends. Parsed into a sorted table; lines that do not parse are skipped and counted. Bounded
 * by file size and entry count, since the file belongs to the process we are profiling.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JIT_MAP_BYTES_MAX (256U * 1024U * 1024U)
#define JIT_MAP_ENTRIES_MAX 4194304U

typedef struct JitMap JitMap;

int jit_map_load(const char *path, JitMap **ret);
/* Parses text of n bytes (need not be NUL-terminated). */
int jit_map_parse(const char *text, size_t n, JitMap **ret);
JitMap *jit_map_free(JitMap *m);
size_t jit_map_size(const JitMap *m);
size_t jit_map_bytes(const JitMap *m);
size_t jit_map_skipped(const JitMap *m);
bool jit_map_lookup(const JitMap *m, uint64_t addr, const char **ret_name, uint64_t *ret_offset);

#include "basic/cleanup.h"
DEFINE_TRIVIAL_CLEANUP_FUNC(JitMap *, jit_map_free);
