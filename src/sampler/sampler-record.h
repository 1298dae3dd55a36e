/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Decoding of the PERF_RECORD_* types the sampler asks for into plain structs, bounds-checked
 * against the record's own size: a short or inconsistent record is -EBADMSG, never an overread.
 * The layout depends on the sample_type we opened the events with, which the caller passes in;
 * only the bits the sampler sets (IP, TID, TIME, CPU, PERIOD, CALLCHAIN, optionally REGS_USER and
 * STACK_USER for unwinding by call frame information, CGROUP where the kernel has it
 * (SAMPLER_SAMPLE_TYPE_CGROUP), and with sample_id_all the TID/TIME/CPU trailer of side-band
 * records) are understood. Strings, the callchain, the registers and the stack copy point into the
 * record and live as long as it does.
 */
#pragma once

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>

/* The sample_type the sampler opens its events with, and the only one decoding accepts, with or
 * without PERF_SAMPLE_CGROUP (kernel 5.7 and later). */
#define SAMPLER_SAMPLE_TYPE                                                                                  \
        (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |      \
         PERF_SAMPLE_CALLCHAIN)
/* Added to SAMPLER_SAMPLE_TYPE when user stacks are unwound from a copy of the stack. */
#define SAMPLER_SAMPLE_TYPE_UNWIND (PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)
/* The user registers asked for with SAMPLER_SAMPLE_TYPE_UNWIND; they come in the record in bit
 * order. x86-64 (asm/perf_regs.h: AX 0, BX 1, CX 2, DX 3, SI 4, DI 5, BP 6, SP 7, IP 8, R8-R11
 * 16-19): besides ip, sp, bp and bx, the caller-saved ones hand-written code keeps its CFA in
 * while it realigns the stack (OpenSSL's: r9, rax, r10, r11, rsi), read for the interrupted frame
 * only: SAMPLER_SCRATCH_REGS of them, in bit order, in RecordSample.user_scratch. arm64 (its
 * asm/perf_regs.h: X0-X28 0-28, X29 29, LR 30, SP 31, PC 32): x29, the link register, sp and pc,
 * in user_bp, user_lr, user_sp and user_ip; no scratch ones. */
#define SAMPLER_SCRATCH_REGS 9U
#if defined(__aarch64__)
#define SAMPLER_REG_X29 29U
#define SAMPLER_REG_LR 30U
#define SAMPLER_REG_SP 31U
#define SAMPLER_REG_PC 32U
#define SAMPLER_REGS_USER_MASK                                                                               \
        ((1ULL << SAMPLER_REG_X29) | (1ULL << SAMPLER_REG_LR) | (1ULL << SAMPLER_REG_SP) | (1ULL << SAMPLER_REG_PC))
#else
#define SAMPLER_REG_AX 0U
#define SAMPLER_REG_BX 1U
#define SAMPLER_REG_CX 2U
#define SAMPLER_REG_DX 3U
#define SAMPLER_REG_SI 4U
#define SAMPLER_REG_DI 5U
#define SAMPLER_REG_BP 6U
#define SAMPLER_REG_SP 7U
#define SAMPLER_REG_IP 8U
#define SAMPLER_REG_R8 16U
#define SAMPLER_REG_R11 19U
#define SAMPLER_REGS_USER_MASK                                                                               \
        ((1ULL << SAMPLER_REG_AX) | (1ULL << SAMPLER_REG_BX) | (1ULL << SAMPLER_REG_CX) | (1ULL << SAMPLER_REG_DX) | \
         (1ULL << SAMPLER_REG_SI) | (1ULL << SAMPLER_REG_DI) | (1ULL << SAMPLER_REG_BP) | (1ULL << SAMPLER_REG_SP) | \
         (1ULL << SAMPLER_REG_IP) | (((1ULL << (SAMPLER_REG_R11 + 1)) - 1) & ~((1ULL << SAMPLER_REG_R8) - 1)))
#endif
#define SAMPLER_SAMPLE_TYPE_CGROUP (SAMPLER_SAMPLE_TYPE | PERF_SAMPLE_CGROUP)

typedef struct RecordId { /* the sample_id_all trailer, or the sample's own fields */
        uint32_t pid, tid;
        uint64_t time;
        uint32_t cpu;
        bool valid;
} RecordId;

typedef struct RecordSample {
        uint64_t ip;
        RecordId id;
        uint64_t period;
        uint64_t nr;          /* callchain entries, context markers included */
        const uint64_t *ips;  /* nr entries */
        bool kernel_ip;       /* header.misc says the sample hit kernel mode */
        /* With SAMPLER_SAMPLE_TYPE_UNWIND: the user registers (valid when regs_abi is not
         * PERF_SAMPLE_REGS_ABI_NONE, i.e. the task has a user context) and the copy of the user
         * stack from regs sp on: stack_size bytes, of which stack_dyn_size were filled. */
        uint64_t regs_abi;
        uint64_t user_bx, user_bp, user_sp, user_ip;
        uint64_t user_lr; /* arm64's x30; 0 on x86-64 */
        uint64_t user_scratch[SAMPLER_SCRATCH_REGS]; /* x86-64's ax, cx, dx, si, di, r8, r9, r10, r11 */
        const uint8_t *stack;
        uint64_t stack_size, stack_dyn_size;
        uint64_t cgroup;      /* PERF_SAMPLE_CGROUP: the task's cgroup id; 0 without it */
} RecordSample;

typedef struct RecordMmap2 {
        uint32_t pid, tid;
        uint64_t addr, len, pgoff;
        uint32_t maj, min;
        uint64_t ino;
        uint64_t ino_gen; /* the inode's generation: a freed inode number used again gets another */
        uint32_t prot, flags;
        const char *filename; /* NUL-terminated inside the record */
        RecordId id;
} RecordMmap2;

typedef struct RecordComm {
        uint32_t pid, tid;
        const char *comm;
        bool exec;
        RecordId id;
} RecordComm;

typedef struct RecordTask { /* FORK and EXIT */
        uint32_t pid, ppid, tid, ptid;
        uint64_t time;
        RecordId id;
} RecordTask;

typedef struct RecordCgroup { /* PERF_RECORD_CGROUP: a cgroup was created */
        uint64_t id;
        const char *path; /* relative to its hierarchy's root */
        RecordId id_trailer;
} RecordCgroup;

typedef struct RecordLost {
        uint64_t event_id, lost;
        RecordId id;
} RecordLost;

typedef struct RecordThrottle {
        uint64_t time, event_id, stream_id;
        RecordId id;
} RecordThrottle;

int record_parse_sample(const struct perf_event_header *h, uint64_t sample_type, RecordSample *ret);
int record_parse_mmap2(const struct perf_event_header *h, uint64_t sample_type, RecordMmap2 *ret);
/* PERF_RECORD_MMAP (no device/inode) is turned into an Mmap2 with maj/min/ino 0. */
int record_parse_mmap(const struct perf_event_header *h, uint64_t sample_type, RecordMmap2 *ret);
int record_parse_comm(const struct perf_event_header *h, uint64_t sample_type, RecordComm *ret);
int record_parse_task(const struct perf_event_header *h, uint64_t sample_type, RecordTask *ret);
int record_parse_cgroup(const struct perf_event_header *h, uint64_t sample_type, RecordCgroup *ret);
int record_parse_lost(const struct perf_event_header *h, uint64_t sample_type, RecordLost *ret);
int record_parse_throttle(const struct perf_event_header *h, uint64_t sample_type, RecordThrottle *ret);

/* The sample_id_all trailer of any side-band record (time for ordering); -EBADMSG if too short. */
int record_parse_id(const struct perf_event_header *h, uint64_t sample_type, RecordId *ret);

/* Time by which records are ordered: a sample's time, or a side-band record's trailer time; 0 if none.
 * A sample's time is read without parsing the rest of it: record_parse_sample() may still refuse it. */
uint64_t record_time(const struct perf_event_header *h, uint64_t sample_type);
