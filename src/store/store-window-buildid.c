/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Window format 5's build id table; see store-window-buildid.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "basic/alloc-util.h"
#include "basic/string-util.h"
#include "store/store-window-buildid.h"

void build_id_table_writer_done(BuildIdTableWriter *t) {
        hashmap_free(t->index);
        free(t->dso);
        byte_buf_done(&t->ids);
        *t = (BuildIdTableWriter) {};
}

void build_id_table_writer_reset(BuildIdTableWriter *t, Hashmap *index) {
        hashmap_free(t->index);
        t->index = index;
        t->n = t->emitted = 0;
        t->ids.len = t->ids_emitted = 0;
}

int build_id_table_writer_add(BuildIdTableWriter *t, uint32_t dso_id, const char *hex) {
        uint8_t id[WINDOW_BUILD_ID_BYTES_MAX];
        size_t l = strnlen(hex, 2 * WINDOW_BUILD_ID_BYTES_MAX + 1);
        uint64_t *slot;
        bool added;
        int r;

        if (l == 0 || l % 2 != 0 || l > 2 * WINDOW_BUILD_ID_BYTES_MAX)
                return 0;
        for (size_t i = 0; i < l / 2; i++) {
                int hi = unhexchar(hex[2 * i]), lo = unhexchar(hex[2 * i + 1]);
                if (hi < 0 || lo < 0)
                        return 0;
                id[i] = (uint8_t) (hi << 4 | lo);
        }
        /* Room first: a DSO the index has is listed, its build id with it (what
         * byte_buf_put_varint() reserves, then the bytes). */
        if (!GREEDY_REALLOC(t->dso, t->allocated, t->n + 1))
                return -ENOMEM;
        r = byte_buf_reserve(&t->ids, 10 + l / 2);
        if (r < 0)
                return r;
        slot = hashmap_slot(t->index, &dso_id, sizeof dso_id, t->n, &added);
        if (!slot)
                return -ENOMEM;
        if (!added)
                return 0;
        (void) byte_buf_put_varint(&t->ids, l / 2);
        (void) byte_buf_put(&t->ids, id, l / 2);
        t->dso[t->n++] = dso_id;
        return 0;
}

int build_id_table_writer_put(const BuildIdTableWriter *t, ByteBuf *b) {
        int r;

        r = byte_buf_put_id_run(b, t->dso, t->emitted, t->n);
        if (r >= 0 && t->ids.len > t->ids_emitted) /* no bytes yet: ids.data may be NULL */
                r = byte_buf_put(b, t->ids.data + t->ids_emitted, t->ids.len - t->ids_emitted);
        return r;
}

void build_id_table_reader_done(BuildIdTableReader *t) {
        free(t->by_string);
        *t = (BuildIdTableReader) {};
}

int build_id_table_reader_parse(BuildIdTableReader *t, ByteCursor *c, size_t n_strings, size_t max_new,
                                char **ret_pool) {
        _cleanup_free_ uint32_t *dso = NULL;
        _cleanup_free_ char *pool = NULL;
        ByteCursor probe;
        size_t add, bytes = 0;
        char *p;

        *ret_pool = NULL;
        if (cursor_varint(c) != t->n)
                return -EBADMSG;
        add = cursor_varint_max(c, max_new + 1);
        if (c->error)
                return -EBADMSG;
        if (add == 0)
                return 0;
        if (n_strings == 0)
                return -EBADMSG;
        dso = new(uint32_t, add);
        if (!dso)
                return -ENOMEM;
        for (size_t i = 0; i < add; i++)
                dso[i] = (uint32_t) cursor_varint_max(c, n_strings);
        /* measure first, so the pool is as large as the hex strings */
        probe = *c;
        for (size_t i = 0; i < add; i++) {
                size_t l = cursor_varint_max(&probe, WINDOW_BUILD_ID_BYTES_MAX + 1);
                (void) cursor_bytes(&probe, l);
                if (l == 0)
                        probe.error = true;
                bytes += 2 * l + 1;
        }
        if (c->error || probe.error)
                return -EBADMSG;
        pool = malloc(bytes);
        if (!pool)
                return -ENOMEM;
        if (t->n_by_string < n_strings) {
                const char **a = reallocarray(t->by_string, n_strings, sizeof(char *));
                if (!a)
                        return -ENOMEM;
                memset(a + t->n_by_string, 0, (n_strings - t->n_by_string) * sizeof(char *));
                t->by_string = a;
                t->n_by_string = n_strings;
        }
        p = pool;
        for (size_t i = 0; i < add; i++) {
                size_t l = cursor_varint_max(c, WINDOW_BUILD_ID_BYTES_MAX + 1);
                const uint8_t *b = cursor_bytes(c, l);
                static const char digits[] = "0123456789abcdef";

                if (t->by_string[dso[i]]) /* one build id per DSO and chain */
                        return -EBADMSG;
                t->by_string[dso[i]] = p;
                for (size_t k = 0; k < l; k++) {
                        *p++ = digits[b[k] >> 4];
                        *p++ = digits[b[k] & 15];
                }
                *p++ = '\0';
        }
        t->n += add;
        *ret_pool = TAKE_PTR(pool);
        return 0;
}
