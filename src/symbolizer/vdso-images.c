/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "basic/alloc-util.h"
#include "basic/fileio.h"
#include "basic/macro.h"
#include "symbolizer/vdso-images.h"

#define VDSO_IMAGE_BYTES_MAX (1024U * 1024U)
#define VDSO_PROCESSES 64U

typedef struct VdsoImage {
        uint8_t *data; /* NULL: a free place */
        size_t size;
        uint64_t hash;
        void *object; /* the caller's, NULL if it made nothing of the bytes */
        uint64_t used; /* VdsoImages.tick at the last use */
        uint64_t gen;  /* changes each time the place takes other bytes */
} VdsoImage;

/* Which image one process maps (image -1: its memory could not be read). */
typedef struct VdsoProcess {
        uint32_t pid;
        uint64_t key, start, size;
        int image;
        uint64_t image_gen;
} VdsoProcess;

struct VdsoImages {
        char *proc_root;
        VdsoImageLoad load;
        VdsoImageFree free_object;
        void *userdata;
        VdsoImage images[VDSO_IMAGES_MAX];
        VdsoProcess processes[VDSO_PROCESSES];
        uint64_t tick, gens;
};

VdsoImages *vdso_images_new(const char *proc_root, VdsoImageLoad load, VdsoImageFree free_object, void *userdata) {
        _cleanup_(vdso_images_freep) VdsoImages *v = new0(VdsoImages, 1);

        if (!v)
                return NULL;
        v->proc_root = strdup(proc_root);
        if (!v->proc_root)
                return NULL;
        v->load = load;
        v->free_object = free_object;
        v->userdata = userdata;
        return TAKE_PTR(v);
}

static void image_clear(VdsoImages *v, VdsoImage *im) {
        if (im->object)
                v->free_object(v->userdata, im->object);
        free(im->data);
        *im = (VdsoImage) { .gen = im->gen };
}

VdsoImages *vdso_images_free(VdsoImages *v) {
        if (!v)
                return NULL;
        for (size_t i = 0; i < VDSO_IMAGES_MAX; i++)
                image_clear(v, &v->images[i]);
        free(v->proc_root);
        return mfree(v);
}

static uint64_t fnv1a(const uint8_t *p, size_t n) {
        uint64_t h = UINT64_C(0xcbf29ce484222325);

        for (size_t i = 0; i < n; i++)
                h = (h ^ p[i]) * UINT64_C(0x100000001b3);
        return h;
}

/* The place of the image with these bytes (data handed over, or freed if one has them already). */
static int image_for(VdsoImages *v, uint8_t *data, size_t size) {
        uint64_t hash = fnv1a(data, size);
        VdsoImage *im = NULL;
        int r;

        for (size_t i = 0; i < VDSO_IMAGES_MAX; i++) {
                VdsoImage *c = &v->images[i];

                if (c->data && c->size == size && c->hash == hash && memcmp(c->data, data, size) == 0) {
                        free(data);
                        return (int) i;
                }
                /* A free place, else the least recently used. */
                if (!im || (im->data && (!c->data || c->used < im->used)))
                        im = c;
        }
        image_clear(v, im);
        im->data = data;
        im->size = size;
        im->hash = hash;
        im->gen = ++v->gens;
        r = v->load(v->userdata, im->data, im->size, &im->object);
        if (r < 0)
                im->object = NULL; /* kept, so that the same bytes are not tried again */
        return (int) (im - v->images);
}

void *vdso_images_get(VdsoImages *v, uint32_t pid, uint64_t key, uint64_t start, uint64_t size) {
        VdsoProcess *p = &v->processes[pid % VDSO_PROCESSES];
        VdsoImage *im;
        void *data = NULL;
        int i;

        if (size == 0 || size > VDSO_IMAGE_BYTES_MAX)
                return NULL;
        if (key != 0 && p->pid == pid && p->key == key && p->start == start && p->size == size &&
            (p->image < 0 || v->images[p->image].gen == p->image_gen))
                i = p->image;
        else {
                i = process_memory_copy(v->proc_root, pid, start, size, &data) < 0 ? -1 : image_for(v, data, size);
                if (key != 0)
                        *p = (VdsoProcess) { .pid = pid, .key = key, .start = start, .size = size, .image = i,
                                             .image_gen = i >= 0 ? v->images[i].gen : 0 };
        }
        if (i < 0)
                return NULL;
        im = &v->images[i];
        im->used = ++v->tick;
        return im->object;
}
