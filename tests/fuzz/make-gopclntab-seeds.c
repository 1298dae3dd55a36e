/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Writes the seed corpus of fuzz-gopclntab into a directory: the tables the unit test builds
 * (tests/gopclntab-tables.h) in each layout, each behind the target's options byte, so the seeds
 * follow the formats with no committed blobs.
 *
 *   make-gopclntab-seeds DIR
 */
#include <stdio.h>

#include "tests/gopclntab-tables.h"

static int write_seed(const char *dir, const char *name, uint8_t options, const uint8_t *t, size_t n) {
        char path[4096];
        FILE *f;
        int ok;

        snprintf(path, sizeof path, "%s/%s", dir, name);
        f = fopen(path, "we");
        if (!f)
                return -1;
        ok = fwrite(&options, 1, 1, f) == 1 && fwrite(t, 1, n, f) == n;
        return fclose(f) == 0 && ok ? 0 : -1;
}

int main(int argc, char **argv) {
        static const struct {
                const char *name;
                uint32_t magic;
                uint8_t options;
        } layouts[] = {
                { "go12", 0xfffffffbU, 0 },
                { "go116", 0xfffffffaU, 0 },
                { "go118", 0xfffffff0U, 0 },
                { "go120", 0xfffffff1U, 0 },
        };
        uint8_t t[1024];

        if (argc != 2) {
                fprintf(stderr, "usage: make-gopclntab-seeds DIR\n");
                return 64;
        }
        for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++) {
                size_t n = layouts[i].magic == 0xfffffffbU ? gopclntab_make_go12(t, sizeof t)
                                                           : gopclntab_make(t, sizeof t, layouts[i].magic);

                if (n == 0 || write_seed(argv[1], layouts[i].name, layouts[i].options, t, n) < 0) {
                        fprintf(stderr, "make-gopclntab-seeds: cannot write %s/%s\n", argv[1],
                                layouts[i].name);
                        return 1;
                }
        }
        return 0;
}
