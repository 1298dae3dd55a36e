/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The cgroup table of window format 4, one of a chain's tables (docs/window-format.md): each entry
 * names a string, the cgroup's path, and a sample refers to entry k as k + 1 (0: no cgroup). The
 * writer half interns a chunk's cgroups and lists the new ones; the reader half appends a chunk's
 * entries to the chain's table. Private to store-window.c, which owns the string table both
 * halves point into.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "basic/hashmap.h"
#include "store/store-codec.h"

typedef struct CgroupTableWriter {
        Hashmap *index; /* path string id -> entry */
        uint32_t *path; /* string id per entry */
        size_t n, allocated, emitted;
} CgroupTableWriter;

void cgroup_table_writer_done(CgroupTableWriter *t);
/* Empties the table (a chain starts), taking index, a new empty map, as its own: the caller makes
 * it with the chain's other tables' before any of them is emptied. */
void cgroup_table_writer_reset(CgroupTableWriter *t, Hashmap *index);
/* The reference of the cgroup whose path is string path_id. */
int cgroup_table_writer_ref(CgroupTableWriter *t, uint32_t path_id, uint32_t *ret_ref);
/* Appends the section: base, count of new entries, their path string ids. */
int cgroup_table_writer_put(const CgroupTableWriter *t, ByteBuf *b);
static inline uint32_t cgroup_table_writer_n_refs(const CgroupTableWriter *t) {
        return (uint32_t) t->n + 1;
}

typedef struct CgroupTableReader {
        uint32_t *path; /* string id per entry */
        size_t n, allocated;
} CgroupTableReader;

void cgroup_table_reader_done(CgroupTableReader *t);
/* Parses one chunk's section onto t; n_strings is the chain's string count, max_new a bound from
 * the payload size. -EBADMSG if it does not continue t or names a string that does not exist. */
int cgroup_table_reader_parse(CgroupTableReader *t, ByteCursor *c, size_t n_strings, size_t max_new);
