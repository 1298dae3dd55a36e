/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Go function tables built byte by byte as the Go linker lays them out (tests/gopclntab-tables.h),
 * in the 1.18 layout (also 1.20's, another magic), the 1.16 one and the 1.2 one, and damaged
 * ones: every offset in a table comes from an untrusted file.
 */
#include "tests.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symbolizer/symbolizer-gopclntab.h"
#include "tests/gopclntab-tables.h"

typedef struct Seen {
        unsigned n;
        uint8_t flags[8];
        uint64_t entry[8], size[8];
        size_t name_len[8];
        char name[8][32];
} Seen;

static int on_func(uint64_t entry, uint64_t size, const char *name, size_t name_len, void *userdata) {
        Seen *s = userdata;

        assert_true(s->n < 8);
        assert_null(memchr(name, '\0', name_len));
        s->entry[s->n] = entry;
        s->size[s->n] = size;
        s->name_len[s->n] = name_len;
        snprintf(s->name[s->n], sizeof(s->name[0]), "%.*s", (int) MIN(name_len, sizeof(s->name[0]) - 1), name);
        s->n++;
        return 0;
}

static int on_flags(uint64_t entry, uint64_t size, uint8_t flags, const char *name, size_t name_len, void *userdata) {
        Seen *s = userdata;

        assert_true(name || name_len == 0);
        assert_int_equal(on_func(entry, size, name ?: "", name_len, userdata), 0);
        s->flags[s->n - 1] = flags;
        return 0;
}
static void expect_three(const Seen *s) {
        assert_int_equal(s->n, 3);
        assert_int_equal(s->entry[0], GOPCLNTAB_TEXT + 0x100);
        assert_int_equal(s->size[0], 0x80);
        assert_string_equal(s->name[0], "main.main");
        assert_int_equal(s->entry[1], GOPCLNTAB_TEXT + 0x180);
        assert_string_equal(s->name[1], "runtime.goexit");
        assert_int_equal(s->entry[2], GOPCLNTAB_TEXT + 0x200);
        assert_int_equal(s->size[2], 0x60);
        assert_string_equal(s->name[2], "main.leaf");
}

static void test_go118_and_go120(void **state) {
        uint8_t t[512];
        size_t n;
        Seen s = {};

        n = gopclntab_make(t, sizeof(t), 0xfffffff0U);
        assert_int_equal(gopclntab_parse(t, n, false, NULL, on_func, &s), 3);
        expect_three(&s);

        s = (Seen) {};
        n = gopclntab_make(t, sizeof(t), 0xfffffff1U);
        assert_int_equal(gopclntab_parse(t, n, false, NULL, on_func, &s), 3);
        expect_three(&s);

        /* textStart 0 (a relocation not put in): the entries are offsets from nowhere, refused. */
        gopclntab_put(t + 24, 0, 8);
        assert_int_equal(gopclntab_parse(t, n, false, NULL, on_func, &s), -EBADMSG);
}

static void test_go116(void **state) {
        uint8_t t[512];
        size_t n = gopclntab_make(t, sizeof(t), 0xfffffffaU);
        Seen s = {};

        assert_int_equal(gopclntab_parse(t, n, false, NULL, on_func, &s), 3);
        expect_three(&s);
}

static void test_go12(void **state) {
        uint8_t t[512];
        size_t n = gopclntab_make_go12(t, sizeof(t));
        Seen s = {};

        assert_int_equal(gopclntab_parse(t, n, false, NULL, on_func, &s), 3);
        expect_three(&s);
        /* The table's end right after the functab's last half entry: the _func records are past
         * it, and are not read. */
        assert_int_equal(gopclntab_parse(t, 16 + 3 * 16 + 8, false, NULL, on_func, &s), -EBADMSG);
}

/* _func.flag, where Go's traceback stops: at its offset in each layout (1.17's after cuOffset and
 * funcID, 1.18's the same after a 4-byte entryOff, 1.20's after startLine too; src/runtime/runtime2.go
 * of each), and none before 1.17 (1.16's byte there is a pad the linker leaves 0). */
static void test_flags(void **state) {
        static const uint32_t magics[] = { 0xfffffffaU, 0xfffffff0U, 0xfffffff1U };
        uint8_t t[512];
        size_t n;
        Seen s;

        for (size_t i = 0; i < ELEMENTSOF(magics); i++) {
                n = gopclntab_make(t, sizeof(t), magics[i]);
                s = (Seen) {};
                assert_int_equal(gopclntab_parse_flags(t, n, false, NULL, on_flags, &s), 3);
                expect_three(&s);
                assert_int_equal(s.flags[0], 0);
                assert_int_equal(s.flags[1], GOPCLNTAB_FLAG_TOPFRAME); /* runtime.goexit */
                assert_int_equal(s.flags[2], GOPCLNTAB_FLAG_SPWRITE);
                /* the table cut in the last _func record's flag byte: refused, nothing read past it */
                assert_int_equal(gopclntab_parse_flags(t, n - GOPCLNTAB_FUNC_SIZE + (magics[i] == 0xfffffff1U ? 41 : magics[i] == 0xfffffff0U ? 37 : 41),
                                                       false, NULL, on_flags, &(Seen) {}),
                                 -EBADMSG);
        }
        n = gopclntab_make_go12(t, sizeof(t));
        s = (Seen) {};
        assert_int_equal(gopclntab_parse_flags(t, n, false, NULL, on_flags, &s), 3);
        expect_three(&s);
        for (unsigned i = 0; i < 3; i++)
                assert_int_equal(s.flags[i], 0);
}

/* Go 1.8-1.17 mark the hole between two text sections with an entry whose func offset is all
 * ones: no function there, the one before it ends at its entry. */
static void test_text_section_hole(void **state) {
        uint8_t t[512];
        size_t n = gopclntab_make_go12(t, sizeof(t));
        Seen s = {};

        gopclntab_put(t + 16 + 16 + 8, UINT64_MAX, 8); /* the second entry's func offset */
        assert_int_equal(gopclntab_parse(t, n, false, NULL, on_func, &s), 3);
        assert_int_equal(s.n, 2);
        assert_string_equal(s.name[0], "main.main");
        assert_int_equal(s.size[0], 0x80);
        assert_string_equal(s.name[1], "main.leaf");
}

/* A budget of entries: a table needs nfunc + 1 of it; with less it stops, its budget spent. */
static void test_budget(void **state) {
        uint8_t t[512];
        size_t n = gopclntab_make(t, sizeof(t), 0xfffffff0U);
        uint64_t budget = 4;
        Seen s = {};

        assert_int_equal(gopclntab_parse(t, n, false, &budget, on_func, &s), 3);
        assert_int_equal(budget, 0);
        budget = 3;
        s = (Seen) {};
        assert_int_equal(gopclntab_parse(t, n, false, &budget, on_func, &s), -ETIME);
        assert_int_equal(budget, 0);
}

/* Cut anywhere: never read past the end (each cut in a buffer of exactly its size, so a sanitizer
 * build sees any read beyond), never a crash; then every byte changed, one at a time, to three values. */
static void damage_everywhere(const uint8_t *t, size_t n) {
        Seen s;

        for (size_t cut = 0; cut < n; cut++) {
                uint8_t *c = malloc(cut ?: 1);
                assert_non_null(c);
                memcpy(c, t, cut);
                s = (Seen) {};
                (void) gopclntab_parse(c, cut, false, NULL, on_func, &s);
                s = (Seen) {};
                (void) gopclntab_parse_flags(c, cut, false, NULL, on_flags, &s);
                free(c);
        }
        for (size_t i = 0; i < n; i++)
                for (unsigned k = 0; k < 3; k++) {
                        uint8_t *c = malloc(n);
                        assert_non_null(c);
                        memcpy(c, t, n);
                        c[i] = k == 0 ? c[i] ^ 0xa5 : k == 1 ? 0xff : 0;
                        s = (Seen) {};
                        (void) gopclntab_parse(c, n, false, NULL, on_func, &s);
                        s = (Seen) {};
                        (void) gopclntab_parse_flags(c, n, false, NULL, on_flags, &s);
                        free(c);
                }
}

/* Every function's name in one long stretch without a NUL: each name is cut at
 * GOPCLNTAB_NAME_BYTES_MAX, and no function costs a scan of the whole stretch. */
static void test_long_names(void **state) {
        const size_t stretch = 1024 * 1024;
        uint8_t *t = calloc(1, 512 + stretch);
        size_t n;
        Seen s = {};

        assert_non_null(t);
        n = gopclntab_make_go12(t, 512);
        /* The three names now far into a stretch of 'x' appended to the table. */
        memset(t + n, 'x', stretch);
        for (unsigned i = 0; i < 3; i++)
                gopclntab_put(t + n - 3 * GOPCLNTAB_FUNC_SIZE + i * GOPCLNTAB_FUNC_SIZE + 8, n + i * 1000, 4);
        assert_int_equal(gopclntab_parse(t, n + stretch, false, NULL, on_func, &s), 3);
        assert_int_equal(s.n, 3);
        for (unsigned i = 0; i < 3; i++)
                assert_int_equal(s.name_len[i], GOPCLNTAB_NAME_BYTES_MAX);
        assert_int_equal(strspn(s.name[0], "x"), sizeof(s.name[0]) - 1);
        /* The stretch's end is the table's: a name there ends with it. */
        s = (Seen) {};
        gopclntab_put(t + n - 3 * GOPCLNTAB_FUNC_SIZE + 8, n + stretch - 5, 4);
        assert_int_equal(gopclntab_parse(t, n + stretch, false, NULL, on_func, &s), 3);
        assert_int_equal(s.name_len[0], 5);
        free(t);
}

static void test_other_releases_and_damage(void **state) {
        uint8_t t[512], u[512];
        size_t n = gopclntab_make(t, sizeof(t), 0xfffffff0U);
        Seen s = {};

        /* Go 1.0-1.1 and anything else */
        memcpy(u, t, n);
        gopclntab_put(u, 0xfffffffcU, 4);
        assert_int_equal(gopclntab_parse(u, n, false, NULL, on_func, &s), -EPROTONOSUPPORT);
        assert_int_equal(gopclntab_parse(u, 3, false, NULL, on_func, &s), -EBADMSG);

        damage_everywhere(t, n);
        n = gopclntab_make(u, sizeof(u), 0xfffffffaU);
        damage_everywhere(u, n);
        n = gopclntab_make_go12(u, sizeof(u));
        damage_everywhere(u, n);
        n = gopclntab_make(t, sizeof(t), 0xfffffff0U);
        /* Entries out of order: the table is refused. */
        memcpy(u, t, n);
        gopclntab_put(u + 72 + 35 + 8, 0x50, 4); /* the second entry before the first */
        s = (Seen) {};
        assert_int_equal(gopclntab_parse(u, n, false, NULL, on_func, &s), -EBADMSG);
        /* A _func record whose entry is not its functab entry (1.18: entryOff): refused, and in
         * the 1.2 layout (entry uintptr) too: what tells a table in .data.rel.ro from bytes that
         * only start like one. */
        memcpy(u, t, n);
        gopclntab_put(u + 72 + 35 + 28 + GOPCLNTAB_FUNC_SIZE, 0x184, 4); /* _func 1's entryOff: header, names, 3.5 entries, _func 0 */
        s = (Seen) {};
        assert_int_equal(gopclntab_parse(u, n, false, NULL, on_func, &s), -EBADMSG);
        n = gopclntab_make_go12(u, sizeof(u));
        gopclntab_put(u + n - GOPCLNTAB_FUNC_SIZE, GOPCLNTAB_TEXT + 0x208, 8); /* the last _func's entry */
        s = (Seen) {};
        assert_int_equal(gopclntab_parse(u, n, false, NULL, on_func, &s), -EBADMSG);
        n = gopclntab_make(t, sizeof(t), 0xfffffff0U);
        /* A name offset past the names: that function is left out, the others kept. */
        memcpy(u, t, n);
        gopclntab_put(u + 72 + 35 + 28 + 4, 5000, 4); /* _func 0's nameOff: header, names, 3.5 entries, entryOff */
        s = (Seen) {};
        assert_int_equal(gopclntab_parse(u, n, false, NULL, on_func, &s), 3);
        assert_int_equal(s.n, 2);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_go118_and_go120),
                cmocka_unit_test(test_go116),
                cmocka_unit_test(test_go12),
                cmocka_unit_test(test_flags),
                cmocka_unit_test(test_text_section_hole),
                cmocka_unit_test(test_budget),
                cmocka_unit_test(test_long_names),
                cmocka_unit_test(test_other_releases_and_damage),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
