/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reader side of one perf mmap ring: the control page (struct perf_event_mmap_page) followed by a
 * power-of-two data area. The module owns the head/tail protocol and the copy of records that wrap
 * the end of the data area; it knows nothing about what the records mean (sampler-record.h) and
 * nothing about file descriptors (sampler.c maps and unmaps). It works on any memory laid out like
 * a perf ring, so tests feed it synthetic pages.
 *
 * Memory ordering contract, as the kernel documents it in include/uapi/linux/perf_event.h and
 * Linux tools/include/linux/ring_buffer.h spell it for user space:
 *
 *   kernel (writer)                       user (reader, us)
 *   write record data                     head = load_acquire(&pc->data_head)
 *   store_release(&pc->data_head, head)   read records in [tail, head)
 *                                         store_release(&pc->data_tail, head)
 *
 * The acquire on data_head orders our reads of record bytes after the kernel's publication of
 * them; the release on data_tail orders our reads before we hand the space back, so the kernel
 * cannot overwrite a record we are still copying. A compiler-only barrier is not enough on weakly
 * ordered CPUs; we use the __atomic builtins, which emit the right fences on every architecture.
 */
#pragma once

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Largest record the kernel can write: header.size is 16 bits. */
#define SAMPLER_RING_RECORD_BYTES_MAX 65536U

typedef struct SamplerRing {
        struct perf_event_mmap_page *page; /* control page; data follows at page->data_offset */
        uint8_t *data;
        uint64_t size;                     /* data area bytes, a power of two */
        uint64_t head;                     /* snapshot taken by sampler_ring_begin() */
        uint64_t tail;                     /* our read position */
        uint64_t corrupt;                  /* records skipped because their header was impossible */
        uint8_t copy[SAMPLER_RING_RECORD_BYTES_MAX]; /* a record that wraps, made contiguous */
} SamplerRing;

/*
 * base points at the control page; data_size is the size of the data area (pages - 1) * page size.
 * The data area starts one page after base unless the control page says otherwise.
 */
int sampler_ring_init(SamplerRing *r, void *base, size_t page_size, size_t data_size);

/*
 * Reading protocol (like perf_mmap__read_init()/read_event()/consume() in Linux tools/lib/perf):
 *
 *   sampler_ring_begin(r);
 *   while ((ev = sampler_ring_next(r)))
 *           use(ev);              (ev is valid until the next call)
 *   sampler_ring_end(r);          (hands [old tail, head) back to the kernel)
 *
 * Returns the number of bytes available between tail and head.
 */
uint64_t sampler_ring_begin(SamplerRing *r);
const struct perf_event_header *sampler_ring_next(SamplerRing *r);
void sampler_ring_end(SamplerRing *r);

/* True if records are waiting (a cheap check without taking a snapshot). */
bool sampler_ring_has_data(const SamplerRing *r);

/* Bytes written and not yet handed back: how full the ring is, without taking a snapshot. */
uint64_t sampler_ring_used(const SamplerRing *r);

/*
 * A ring of size bytes about to be emptied, which had used bytes written in the since_usec since
 * it was emptied last: the microseconds until half of it is written again at that rate
 * (UINT64_MAX when nothing was written or no time passed).
 */
uint64_t sampler_ring_usec_to_half(uint64_t used, uint64_t size, uint64_t since_usec);

/*
 * Whether a ring of size bytes that woke its reader holding used of them should be read at once:
 * from three eighths on. The kernel wakes the reader each time another half ring has been
 * written, read or not, so a ring left below that is woken again before it is seven eighths full.
 */
bool sampler_ring_wakeup_reads(uint64_t used, uint64_t size);
