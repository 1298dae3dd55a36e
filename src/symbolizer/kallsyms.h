/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Kernel symbols from /proc/kallsyms (or a fixture in the same format): text symbols of the kernel
 * image and of loaded modules, sorted by address for binary search. A kernel address resolves to
 * the nearest symbol at or below it, within the kernel's or the module's text; the DSO is
 * "[kernel.kallsyms]" or "[module]" as perf prints them. Lines that do not parse are skipped and
 * counted; the table is bounded (KALLSYMS_SYMBOLS_MAX). Zero addresses (kptr_restrict) make the
 * table empty, and every kernel frame "[unknown]".
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KALLSYMS_SYMBOLS_MAX 4194304U
#define KALLSYMS_DSO_KERNEL "[kernel.kallsyms]"

typedef struct Kallsyms Kallsyms;

int kallsyms_load(const char *path, Kallsyms **ret);
Kallsyms *kallsyms_free(Kallsyms *k);
size_t kallsyms_size(const Kallsyms *k);
size_t kallsyms_skipped(const Kallsyms *k);

/* Returns true if addr resolves; *ret_name and *ret_dso live as long as the table. *ret_extent
 * (when not NULL): how many bytes from the symbol's start (addr - *ret_offset) give it too. */
bool kallsyms_lookup(const Kallsyms *k, uint64_t addr, const char **ret_name, const char **ret_dso,
                     uint64_t *ret_offset, uint64_t *ret_extent);

#include "basic/cleanup.h"
DEFINE_TRIVIAL_CLEANUP_FUNC(Kallsyms *, kallsyms_free);
