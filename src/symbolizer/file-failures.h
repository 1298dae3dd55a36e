/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Files a process could not be opened through: the process was gone before its samples were read
 * (its /proc/PID/map_files and root with it) and the path is not the file on the host (a
 * container's, a memfd, a deleted file). Such a failure is that process's alone: another process
 * mapping the file can still reach it, so the file is not marked unreadable. The failure is kept
 * per (file, pid) for a while, so the process's other samples do not try again, and forgotten
 * after FILE_FAILURE_RETRY_USEC (a pid used again by a live process of the same image is asked
 * anew); at most FILE_FAILURES_MAX are kept, all forgotten at once past that. The symbolizer's
 * symbol tables and the unwinder's CFI tables each keep one.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "basic/hashmap.h"

#define FILE_FAILURES_MAX 4096U
#define FILE_FAILURE_RETRY_USEC (UINT64_C(10) * UINT64_C(1000000))

typedef struct FileFailureKey {
        uint64_t dev, ino, ino_gen, pid;
} FileFailureKey;

typedef struct FileFailures {
        Hashmap *map; /* FileFailureKey -> CLOCK_MONOTONIC usec of the failure */
} FileFailures;

/* True if the process failed to open the file less than FILE_FAILURE_RETRY_USEC before now. */
bool file_failures_recent(const FileFailures *f, const FileFailureKey *k, uint64_t now_usec);
/* Remembers a failure; -ENOMEM. */
int file_failures_add(FileFailures *f, const FileFailureKey *k, uint64_t now_usec);
size_t file_failures_size(const FileFailures *f);
void file_failures_done(FileFailures *f);
