/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Window format 4's cgroup table; see store-window-cgroup.h.
 */
#include <errno.h>
#include <stdlib.h>

#include "basic/alloc-util.h"
#include "store/store-window-cgroup.h"

void cgroup_table_writer_done(CgroupTableWriter *t) {
        hashmap_free(t->index);
        free(t->path);
        *t = (CgroupTableWriter) {};
}

void cgroup_table_writer_reset(CgroupTableWriter *t, Hashmap *index) {
        hashmap_free(t->index);
        t->index = index;
        t->n = t->emitted = 0;
}

int cgroup_table_writer_ref(CgroupTableWriter *t, uint32_t path_id, uint32_t *ret_ref) {
        uint64_t *slot;
        bool added;

        /* Room first: a path the index has is in the list. */
        if (!GREEDY_REALLOC(t->path, t->allocated, t->n + 1))
                return -ENOMEM;
        slot = hashmap_slot(t->index, &path_id, sizeof path_id, t->n, &added);
        if (!slot)
                return -ENOMEM;
        if (added)
                t->path[t->n++] = path_id;
        *ret_ref = (uint32_t) *slot + 1;
        return 0;
}

int cgroup_table_writer_put(const CgroupTableWriter *t, ByteBuf *b) {
        return byte_buf_put_id_run(b, t->path, t->emitted, t->n);
}

void cgroup_table_reader_done(CgroupTableReader *t) {
        free(t->path);
        *t = (CgroupTableReader) {};
}

int cgroup_table_reader_parse(CgroupTableReader *t, ByteCursor *c, size_t n_strings, size_t max_new) {
        size_t add;

        if (cursor_varint(c) != t->n)
                return -EBADMSG;
        add = cursor_varint_max(c, max_new + 1);
        if (c->error)
                return -EBADMSG;
        if (add > 0 && n_strings == 0)
                return -EBADMSG;
        if (!GREEDY_REALLOC(t->path, t->allocated, t->n + add))
                return -ENOMEM;
        for (size_t i = 0; i < add; i++)
                t->path[t->n + i] = (uint32_t) cursor_varint_max(c, n_strings);
        if (c->error)
                return -EBADMSG;
        t->n += add;
        return 0;
}
