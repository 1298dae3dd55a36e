/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The vDSO images of processes whose vDSO is not tprofd's own (32-bit processes map the kernel's
 * 32-bit image), and what a caller makes of each (the unwinder its CFI, the symbolizer its
 * symbols). An image is read from each process's own memory, and a process may have written
 * over its own (through /proc/self/mem; madvise() can even put the kernel's page back under
 * it): so what one process's bytes give is used for that process, and for another only where the
 * other's bytes are the very same. Images are kept by their bytes, VDSO_IMAGES_MAX of them, the
 * least recently used making room; which image a process maps is kept per process (pid, and a
 * key of the caller's that changes when the process may have changed: the unwinder's maps
 * generation).
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define VDSO_IMAGES_MAX 4U

typedef struct VdsoImages VdsoImages;

/* What a caller makes of an image's bytes (they live as long as the object): < 0 if nothing. An
 * object is freed when its image makes room for another (at any vdso_images_get()), so whatever
 * the caller keeps that points into it must go then too. userdata: vdso_images_new()'s. */
typedef int (*VdsoImageLoad)(void *userdata, const void *data, size_t size, void **ret);
typedef void (*VdsoImageFree)(void *userdata, void *object);

VdsoImages *vdso_images_new(const char *proc_root, VdsoImageLoad load, VdsoImageFree free_object, void *userdata);
VdsoImages *vdso_images_free(VdsoImages *v);

/*
 * The caller's object for the image process pid maps at [start, start + size) (at most 1 MiB),
 * NULL if its memory cannot be read or load() made nothing of it. key: 0 to read the memory
 * again every time, else the same key means the same mapping of the same process.
 */
void *vdso_images_get(VdsoImages *v, uint32_t pid, uint64_t key, uint64_t start, uint64_t size);

#include "basic/cleanup.h"
DEFINE_TRIVIAL_CLEANUP_FUNC(VdsoImages *, vdso_images_free);
