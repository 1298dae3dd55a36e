/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The perf mmap ring reader: snapshot data_head with acquire semantics, walk the records between
 * our tail and that head, copy the ones that wrap, and publish the new tail with release semantics.
 * A record with an impossible size means we lost framing; we then skip to the head, count it, and
 * go on, rather than read garbage as records.
 */
#include <errno.h>
#include <string.h>

#include "sampler/sampler-ring.h"

static inline uint64_t ring_load_head(struct perf_event_mmap_page *pc) {
        /* smp_load_acquire(): pairs with the kernel's release of data_head in perf_output_put_handle(). */
        return __atomic_load_n(&pc->data_head, __ATOMIC_ACQUIRE);
}

static inline void ring_store_tail(struct perf_event_mmap_page *pc, uint64_t tail) {
        /* smp_store_release(): our reads of the records complete before the kernel may reuse the space. */
        __atomic_store_n(&pc->data_tail, tail, __ATOMIC_RELEASE);
}

int sampler_ring_init(SamplerRing *r, void *base, size_t page_size, size_t data_size) {
        struct perf_event_mmap_page *pc = base;
        uint64_t off;

        if (!r || !base || data_size == 0 || (data_size & (data_size - 1)) != 0)
                return -EINVAL;

        /* Kernels since 4.1 publish the data area's place; older ones leave these 0. */
        off = pc->data_offset ?: page_size;
        if (pc->data_size != 0 && pc->data_size != data_size)
                return -EINVAL;

        r->page = pc;
        r->data = (uint8_t *) base + off;
        r->size = data_size;
        r->tail = __atomic_load_n(&pc->data_tail, __ATOMIC_RELAXED);
        r->head = r->tail;
        r->corrupt = 0;
        return 0;
}

bool sampler_ring_has_data(const SamplerRing *r) {
        return __atomic_load_n(&r->page->data_head, __ATOMIC_RELAXED) != r->tail;
}

uint64_t sampler_ring_used(const SamplerRing *r) {
        return __atomic_load_n(&r->page->data_head, __ATOMIC_RELAXED) - r->tail;
}

uint64_t sampler_ring_usec_to_half(uint64_t used, uint64_t size, uint64_t since_usec) {
        double usec;

        if (used == 0 || since_usec == 0)
                return UINT64_MAX;
        usec = (double) (size / 2) * (double) since_usec / (double) used;
        return usec >= (double) UINT64_MAX ? UINT64_MAX : (uint64_t) usec;
}

bool sampler_ring_wakeup_reads(uint64_t used, uint64_t size) {
        return used >= size / 8 * 3;
}

uint64_t sampler_ring_begin(SamplerRing *r) {
        r->head = ring_load_head(r->page);
        /* The kernel never runs more than one ring ahead of the tail we published. */
        if (r->head - r->tail > r->size) {
                r->corrupt++;
                r->tail = r->head;
        }
        return r->head - r->tail;
}

const struct perf_event_header *sampler_ring_next(SamplerRing *r) {
        struct perf_event_header h;
        uint64_t avail = r->head - r->tail, off, first;

        if (avail < sizeof(h))
                return NULL;

        off = r->tail & (r->size - 1);
        first = r->size - off;

        if (first >= sizeof(h))
                memcpy(&h, r->data + off, sizeof(h));
        else {
                memcpy(&h, r->data + off, first);
                memcpy((uint8_t *) &h + first, r->data, sizeof(h) - first);
        }

        /* Records are 8-byte aligned and at least a header long; anything else is lost framing. */
        if (h.size < sizeof(h) || (h.size & 7) != 0 || h.size > avail) {
                r->corrupt++;
                r->tail = r->head;
                return NULL;
        }

        r->tail += h.size;

        if (first >= h.size)
                return (const struct perf_event_header *) (r->data + off);

        memcpy(r->copy, r->data + off, first);
        memcpy(r->copy + first, r->data, h.size - first);
        return (const struct perf_event_header *) r->copy;
}

void sampler_ring_end(SamplerRing *r) {
        ring_store_tail(r->page, r->tail);
}
