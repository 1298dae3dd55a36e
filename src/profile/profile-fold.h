/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Folding: samples in, "comm;root;...;leaf count" lines out, sorted bytewise as
 * stackcollapse-perf.pl sorts them, counting samples (not periods). Names go through
 * profile-names.h, so a folded file and the fold of our perf-script export are identical.
 * Memory grows with distinct stacks, not with samples.
 */
#pragma once

#include <stdint.h>
#include <stdio.h>

#include "profile/profile-sample.h"

#include "basic/string-util.h"

/* The folded key of one sample, "comm;root;...;leaf", into key (replacing its content). */
int profile_fold_key(const Sample *s, StrBuf *key);

typedef struct Folder Folder;

Folder *folder_new(void);
Folder *folder_free(Folder *f);
int folder_add(Folder *f, const Sample *s, uint64_t count);
uint64_t folder_total(const Folder *f);
size_t folder_n_stacks(const Folder *f);

typedef struct FoldedStack {
        const char *key; /* "comm;root;...;leaf", NUL-terminated */
        uint64_t count;
} FoldedStack;

/* Returns the stacks sorted bytewise by key; the array and keys live until folder_free(). */
int folder_sorted(Folder *f, const FoldedStack **ret_stacks, size_t *ret_n);
int folder_write(Folder *f, FILE *out);

#include "basic/cleanup.h"
DEFINE_TRIVIAL_CLEANUP_FUNC(Folder *, folder_free);
