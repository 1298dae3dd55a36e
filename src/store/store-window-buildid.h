/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The build id table of window format 5, one of a chain's tables (docs/window-format.md): each
 * entry gives a DSO string (a file's path) the ELF build id of the file the chain's frames of that
 * DSO were in, once per chain, however many frames and samples name it. The writer half takes the
 * first build id a new frame of the DSO brings and lists the new entries; the reader half appends a
 * chunk's entries to the chain's table and answers a DSO string's build id, in hex. Private to the
 * window writer and reader, which own the string table both halves point into.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "basic/hashmap.h"
#include "store/store-codec.h"

/* Longest build id kept (bytes): GNU ld writes 20 (sha1), Go 32 at most, and LLD up to 64. */
#define WINDOW_BUILD_ID_BYTES_MAX 64U

typedef struct BuildIdTableWriter {
        Hashmap *index; /* DSO string id -> entry */
        uint32_t *dso;  /* string id per entry */
        size_t n, allocated, emitted;
        ByteBuf ids; /* per entry: varint length, the bytes */
        size_t ids_emitted;
} BuildIdTableWriter;

void build_id_table_writer_done(BuildIdTableWriter *t);
/* Empties the table (a chain starts), taking index, a new empty map, as its own (as
 * cgroup_table_writer_reset()). */
void build_id_table_writer_reset(BuildIdTableWriter *t, Hashmap *index);
/* DSO string dso_id's build id is hex (lowercase or uppercase hex digits), unless it has one
 * already: the first stays. A hex that is not a build id (odd length, too long) is ignored. */
int build_id_table_writer_add(BuildIdTableWriter *t, uint32_t dso_id, const char *hex);
/* Appends the section: base, count of new entries, their DSO string ids, their build ids. */
int build_id_table_writer_put(const BuildIdTableWriter *t, ByteBuf *b);
typedef struct BuildIdTableReader {
        const char **by_string; /* per DSO string id: the build id in hex, or NULL */
        size_t n_by_string, n; /* n: entries, what the next chunk's base must be */
} BuildIdTableReader;

void build_id_table_reader_done(BuildIdTableReader *t);
/* Parses one chunk's section onto t; n_strings is the chain's string count, max_new a bound from
 * the payload size. The hex strings go into one new allocation, *ret_pool (NULL when the section
 * adds none), which the caller keeps as long as it hands them out. -EBADMSG if the section does not
 * continue t, names a string that does not exist or one that has a build id already, or holds an
 * empty or too long build id. */
int build_id_table_reader_parse(BuildIdTableReader *t, ByteCursor *c, size_t n_strings, size_t max_new,
                                char **ret_pool);
static inline const char *build_id_table_reader_get(const BuildIdTableReader *t, uint32_t dso_id) {
        return dso_id < t->n_by_string ? t->by_string[dso_id] : NULL;
}
