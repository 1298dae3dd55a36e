/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Go function tables built byte by byte as the Go linker lays them out (src/runtime/symtab.go:
 * pcHeader, functab, _func), in the 1.18 layout (also 1.20's, another magic) and the 1.16 one,
 * and damaged ones: every offset in a table comes from an untrusted file.
 */
#include "tests.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symbolizer/symbolizer-gopclntab.h"

#define TEXT 0x401000U

typedef struct Seen {
        unsigned n;
        uint64_t entry[8], size[8];
        char name[8][32];
} Seen;

static int on_func(uint64_t entry, uint64_t size, const char *name, void *userdata) {
        Seen *s = userdata;

        assert_true(s->n < 8);
        s->entry[s->n] = entry;
        s->size[s->n] = size;
        snprintf(s->name[s->n], sizeof(s->name[0]), "%s", name);
        s->n++;
        return 0;
}

static void put(uint8_t *p, uint64_t v, unsigned n) {
        for (unsigned i = 0; i < n; i++)
                p[i] = (uint8_t) (v >> (8 * i));
}

/* Names, then functab (3 functions + end), then the three _func records. Returns its size. */
static size_t make_table(uint8_t *t, size_t cap, uint32_t magic) {
        static const char names[] = "main.main\0runtime.goexit\0main.leaf";
        const bool go118 = magic != 0xfffffffaU;
        const unsigned ptr = 8, entry_size = go118 ? 8 : 16, hdr = go118 ? 8 + 8 * ptr : 8 + 7 * ptr;
        const uint64_t entries[4] = { 0x100, 0x180, 0x200, 0x260 }; /* offsets from TEXT */
        const uint32_t name_offs[3] = { 0, 10, 25 };
        size_t names_off = hdr, functab = names_off + sizeof(names), funcs = functab + 3 * entry_size + entry_size / 2, size;
        unsigned h = 8;

        size = funcs + 3 * 16;
        /* The linker writes the last entry's first half only: the _func records follow at once. */
        assert_true(size <= cap);
        memset(t, 0, size);
        put(t, magic, 4);
        t[6] = 1;        /* minLC */
        t[7] = ptr;      /* ptrSize */
        put(t + h, 3, ptr), h += ptr; /* nfunc */
        put(t + h, 1, ptr), h += ptr; /* nfiles */
        if (go118)
                put(t + h, TEXT, ptr), h += ptr; /* textStart */
        put(t + h, names_off, ptr), h += ptr;    /* funcnameOffset */
        h += 3 * ptr;                            /* cuOffset, filetabOffset, pctabOffset */
        put(t + h, functab, ptr);                /* pclnOffset */
        memcpy(t + names_off, names, sizeof(names));
        for (unsigned i = 0; i < 4; i++) {
                uint8_t *e = t + functab + i * entry_size;
                uint64_t funcoff = funcs - functab + i * 16;
                if (go118) {
                        put(e, entries[i], 4);
                        if (i < 3)
                                put(e + 4, funcoff, 4);
                } else {
                        put(e, TEXT + entries[i], 8);
                        if (i < 3)
                                put(e + 8, funcoff, 8);
                }
        }
        for (unsigned i = 0; i < 3; i++) {
                uint8_t *f = t + funcs + i * 16;
                if (go118) {
                        put(f, entries[i], 4);
                        put(f + 4, name_offs[i], 4);
                } else {
                        put(f, TEXT + entries[i], 8);
                        put(f + 8, name_offs[i], 4);
                }
        }
        return size;
}

static void expect_three(const Seen *s) {
        assert_int_equal(s->n, 3);
        assert_int_equal(s->entry[0], TEXT + 0x100);
        assert_int_equal(s->size[0], 0x80);
        assert_string_equal(s->name[0], "main.main");
        assert_int_equal(s->entry[1], TEXT + 0x180);
        assert_string_equal(s->name[1], "runtime.goexit");
        assert_int_equal(s->entry[2], TEXT + 0x200);
        assert_int_equal(s->size[2], 0x60);
        assert_string_equal(s->name[2], "main.leaf");
}

static void test_go118_and_go120(void **state) {
        uint8_t t[512];
        size_t n;
        Seen s = {};

        n = make_table(t, sizeof(t), 0xfffffff0U);
        assert_int_equal(gopclntab_parse(t, n, 0, false, on_func, &s), 3);
        expect_three(&s);

        s = (Seen) {};
        n = make_table(t, sizeof(t), 0xfffffff1U);
        assert_int_equal(gopclntab_parse(t, n, 0, false, on_func, &s), 3);
        expect_three(&s);

        /* textStart left to a relocation (0 in the file): the relocation's value stands in; none, refused. */
        put(t + 24, 0, 8);
        s = (Seen) {};
        assert_int_equal(gopclntab_parse(t, n, TEXT, false, on_func, &s), 3);
        expect_three(&s);
        assert_int_equal(gopclntab_parse(t, n, 0, false, on_func, &s), -EBADMSG);
}

static void test_go116(void **state) {
        uint8_t t[512];
        size_t n = make_table(t, sizeof(t), 0xfffffffaU);
        Seen s = {};

        assert_int_equal(gopclntab_parse(t, n, 0, false, on_func, &s), 3);
        expect_three(&s);
}

static void test_other_releases_and_damage(void **state) {
        uint8_t t[512], u[512];
        size_t n = make_table(t, sizeof(t), 0xfffffff0U);
        Seen s = {};

        /* Go 1.2-1.15 and anything else */
        memcpy(u, t, n);
        put(u, 0xfffffffbU, 4);
        assert_int_equal(gopclntab_parse(u, n, 0, false, on_func, &s), -EPROTONOSUPPORT);
        assert_int_equal(gopclntab_parse(u, 3, 0, false, on_func, &s), -EBADMSG);

        /* Cut anywhere: never read past the end (each cut in a buffer of exactly its size, so a
         * sanitizer build sees any read beyond), never a crash. */
        for (size_t cut = 0; cut < n; cut++) {
                uint8_t *c = malloc(cut ?: 1);
                assert_non_null(c);
                memcpy(c, t, cut);
                s = (Seen) {};
                (void) gopclntab_parse(c, cut, 0, false, on_func, &s);
                free(c);
        }
        /* Every byte changed, one at a time, to three values. */
        for (size_t i = 0; i < n; i++)
                for (unsigned k = 0; k < 3; k++) {
                        uint8_t *c = malloc(n);
                        assert_non_null(c);
                        memcpy(c, t, n);
                        c[i] = k == 0 ? c[i] ^ 0xa5 : k == 1 ? 0xff : 0;
                        s = (Seen) {};
                        (void) gopclntab_parse(c, n, 0, false, on_func, &s);
                        free(c);
                }
        /* Entries out of order: the table is refused. */
        memcpy(u, t, n);
        put(u + 72 + 35 + 8, 0x50, 4); /* the second entry before the first */
        s = (Seen) {};
        assert_int_equal(gopclntab_parse(u, n, 0, false, on_func, &s), -EBADMSG);
        /* A name offset past the names: that function is left out, the others kept. */
        memcpy(u, t, n);
        put(u + 72 + 35 + 28 + 4, 5000, 4); /* _func 0's nameOff: header, names, 3.5 entries, entryOff */
        s = (Seen) {};
        assert_int_equal(gopclntab_parse(u, n, 0, false, on_func, &s), 3);
        assert_int_equal(s.n, 2);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_go118_and_go120),
                cmocka_unit_test(test_go116),
                cmocka_unit_test(test_other_releases_and_damage),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
