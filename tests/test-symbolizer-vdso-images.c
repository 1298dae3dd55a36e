/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * vDSO images kept by their bytes, over a fake /proc whose PID/mem files hold each process's
 * "vDSO" at its address: a process's image serves another only where the bytes are the same (one
 * that wrote over its own gets an image of its own), a process's image is read again when the
 * caller's key changes, and no more than VDSO_IMAGES_MAX images are held.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolizer/vdso-images.h"
#include "tests.h"

#define START 0x1000U
#define SIZE 256U

static char dir[] = "/tmp/test-vdso-images-XXXXXX";
static unsigned loads, alive;

static int setup(void **state) {
        return test_dir_make(dir);
}

static int teardown(void **state) {
        return test_dir_remove(dir);
}

/* Process pid's memory: an "image" of SIZE bytes of tag at START. */
static void plant(unsigned pid, char tag) {
        char p[256], image[SIZE];
        int fd;

        snprintf(p, sizeof p, "%s/%u", dir, pid);
        (void) mkdir(p, 0755);
        snprintf(p, sizeof p, "%s/%u/mem", dir, pid);
        fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        memset(image, tag, sizeof image);
        assert_int_equal(pwrite(fd, image, sizeof image, START), (ssize_t) sizeof image);
        close(fd);
}

/* The caller's object: a copy of the first byte; images of '!' make nothing. */
static int load(void *userdata, const void *data, size_t size, void **ret) {
        char *o;

        assert_ptr_equal(userdata, &alive);
        if (((const char *) data)[0] == '!')
                return -ENOEXEC;
        o = malloc(1);
        if (!o)
                return -ENOMEM;
        *o = ((const char *) data)[0];
        loads++;
        alive++;
        *ret = o;
        return 0;
}

static void free_object(void *userdata, void *o) {
        assert_ptr_equal(userdata, &alive);
        free(o);
        alive--;
}

static char tag_of(VdsoImages *v, unsigned pid, uint64_t key) {
        const char *o = vdso_images_get(v, pid, key, START, SIZE);

        return o ? *o : 0;
}

static void test_images(void **state) {
        _cleanup_(vdso_images_freep) VdsoImages *v = vdso_images_new(dir, load, free_object, &alive);

        assert_non_null(v);
        plant(100, 'k');
        assert_int_equal(tag_of(v, 100, 1), 'k');
        assert_int_equal(loads, 1);

        /* The process writes over its own: with the same key the image it had stays, with a new
         * key its own bytes are read and make an image of their own. */
        plant(100, 'h');
        assert_int_equal(tag_of(v, 100, 1), 'k');
        assert_int_equal(tag_of(v, 100, 2), 'h');
        assert_int_equal(loads, 2);

        /* Another process with the kernel's bytes shares the first image, not the hostile one. */
        plant(101, 'k');
        assert_int_equal(tag_of(v, 101, 1), 'k');
        assert_int_equal(loads, 2);

        /* Bytes that make nothing give nothing, and are not tried again. */
        plant(102, '!');
        assert_int_equal(tag_of(v, 102, 1), 0);
        assert_int_equal(tag_of(v, 102, 2), 0);
        assert_int_equal(loads, 2);

        /* Unreadable memory (no such process): nothing. */
        assert_int_equal(tag_of(v, 999, 1), 0);

        /* Images beyond VDSO_IMAGES_MAX take the least recently used one's place ('k' was used
         * last by 101, before the others). */
        for (unsigned i = 0; i < VDSO_IMAGES_MAX; i++) {
                plant(110 + i, (char) ('a' + i));
                assert_int_equal(tag_of(v, 110 + i, 1), 'a' + i);
        }
        assert_true(alive <= VDSO_IMAGES_MAX);
        assert_int_equal(tag_of(v, 101, 3), 'k'); /* read again, loaded again */
        assert_int_equal(loads, 2 + VDSO_IMAGES_MAX + 1);
        assert_true(alive <= VDSO_IMAGES_MAX);
        /* key 0: read every time, the same image while the bytes are the same. */
        assert_int_equal(tag_of(v, 101, 0), 'k');
        assert_int_equal(loads, 2 + VDSO_IMAGES_MAX + 1);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_images),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
