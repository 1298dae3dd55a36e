/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzz target for the user stack walk (sampler/sampler-unwind.c with sampler-unwind-cfi.c and
 * sampler-unwind-go.c): a sampled process chooses its own registers and the bytes of its stack.
 * The tables are fixed and valid: those of tests/helpers/unwind-fixture.c and the files it maps
 * (its library, libc, the dynamic loader, the vDSO), from the mappings it lists when run once at
 * start in snapshot mode with address space randomization off (personality(2) ADDR_NO_RANDOMIZE),
 * so that the seeds make-seeds.sh writes from its snapshot under `setarch -R` walk them. The input:
 *
 *   u8 flags      bit 0: --unwind dwarf (else auto), 1: sampled in the kernel, 2: a 32-bit process,
 *                 3: the caller-saved registers sampled, 4: no rule cache
 *   u8 max        the frame limit: entries of the address array
 *   u64 ip, sp, bp, bx, and the UNWIND_SCRATCH_REGS caller-saved registers (host byte order)
 *   the stack copy, from sp on, in an allocation of exactly its size
 *
 * Checked against sampler-unwind.h: at most max entries (none below 2); one stack counted, whole
 * or cut by exactly one reason; a cut chain ends in a single 0, a whole one has none; the frame
 * limit's cut only with the array full; a 32-bit process's addresses below 4 GiB. Reads outside
 * the copy are AddressSanitizer's to catch.
 */
#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/wait.h>
#include <unistd.h>

#include "basic/macro.h"
#include "fuzz-util.h"
#include "sampler/proc-maps.h"
#include "sampler/sampler-unwind-cfi.h"
#include "sampler/sampler-unwind.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_PID 4000000000U /* no such process: files are opened by path */
#define FUZZ_HEADER_BYTES (2U + 8U * (4U + UNWIND_SCRATCH_REGS))

enum {
        FUZZ_DWARF = 1 << 0,
        FUZZ_KERNEL = 1 << 1,
        FUZZ_COMPAT32 = 1 << 2,
        FUZZ_SCRATCH = 1 << 3,
        FUZZ_NO_RULE_CACHE = 1 << 4,
};

static ProcTable *procs;
static Unwinder *unwinders[4]; /* auto, dwarf, and each without the rule cache */

/* Runs the fixture in snapshot mode, without address space randomization, and takes the mappings
 * it lists; its registers and stack are the seeds' business. */
static void load_fixture_maps(void) {
        const char *fixture = getenv("TPROF_UNWIND_FIXTURE") ?: TPROF_UNWIND_FIXTURE_PATH;
        char out[] = "/tmp/fuzz-unwind-walk.XXXXXX", line[4096];
        uint64_t hdr[4];
        char magic[4];
        int status, fd;
        pid_t pid;
        FILE *f;

        fd = mkstemp(out);
        assert(fd >= 0);
        close(fd);
        pid = fork();
        assert(pid >= 0);
        if (pid == 0) {
                (void) personality(ADDR_NO_RANDOMIZE);
                execl(fixture, fixture, "snapshot", out, (char *) NULL);
                _exit(127);
        }
        assert(waitpid(pid, &status, 0) == pid);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                fprintf(stderr, "fuzz-unwind-walk: %s snapshot failed (TPROF_UNWIND_FIXTURE names it)\n", fixture);
                abort();
        }
        f = fopen(out, "re");
        assert(f);
        /* "TPUA", an arm64 fixture's, has its link register after the header */
        assert(fread(magic, 1, 4, f) == 4 && (memcmp(magic, "TPUW", 4) == 0 || memcmp(magic, "TPUA", 4) == 0));
        assert(fread(hdr, sizeof(hdr), 1, f) == 1);
        assert(fseek(f, (long) (4 + sizeof(hdr) + (magic[3] == 'A' ? 8 : 0) + hdr[3]), SEEK_SET) == 0);
        procs = proc_table_new();
        assert(procs);
        assert(proc_table_comm_event(procs, FUZZ_PID, FUZZ_PID, "unwind-fixture", false) == 0);
        while (fgets(line, sizeof(line), f)) {
                ProcMap m;
                if (proc_maps_parse_line(line, &m) == 1) {
                        assert(proc_table_mmap(procs, FUZZ_PID, &m) == 0);
                        proc_map_done(&m);
                }
        }
        fclose(f);
        (void) unlink(out);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
        load_fixture_maps();
        for (unsigned i = 0; i < ELEMENTSOF(unwinders); i++)
                assert(unwinder_new(&(UnwinderOptions) { .mode = i & 1 ? UNWIND_MODE_DWARF : UNWIND_MODE_AUTO,
                                                         .no_rule_cache = i & 2 },
                                    &unwinders[i]) == 0);
        return 0;
}

static uint64_t take_u64(const uint8_t **p) {
        uint64_t v;

        memcpy(&v, *p, sizeof(v));
        *p += sizeof(v);
        return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        uint64_t scratch[UNWIND_SCRATCH_REGS], ips[256];
        UnwindStats before, after;
        const uint8_t *p = data;
        UnwindInput in = { .pid = FUZZ_PID };
        uint8_t flags, max;
        Unwinder *u;
        char *stack;
        size_t n, zeros = 0;
        uint64_t cuts = 0;
        int cut = -1;

        if (size < FUZZ_HEADER_BYTES)
                return 0;
        flags = *p++;
        max = *p++;
        in.ip = take_u64(&p);
        in.sp = take_u64(&p);
        in.bp = take_u64(&p);
        in.bx = take_u64(&p);
        for (unsigned i = 0; i < UNWIND_SCRATCH_REGS; i++)
                scratch[i] = take_u64(&p);
        in.scratch = flags & FUZZ_SCRATCH ? scratch : NULL;
        in.kernel_mode = flags & FUZZ_KERNEL;
        in.compat32 = flags & FUZZ_COMPAT32;
        in.stack_size = size - FUZZ_HEADER_BYTES;
        stack = fuzz_copy(p, in.stack_size);
        if (!stack)
                return 0;
        in.stack = (const uint8_t *) stack;

        u = unwinders[(flags & FUZZ_DWARF ? 1 : 0) | (flags & FUZZ_NO_RULE_CACHE ? 2 : 0)];
        unwinder_get_stats(u, &before);
        /* Entries past max are poisoned: the walk must not write them. */
        memset(ips, 0xa5, sizeof(ips));
        n = unwinder_unwind(u, procs, &in, ips, max);
        unwinder_get_stats(u, &after);
        free(stack);

        assert(n <= max);
        for (size_t i = max; i < ELEMENTSOF(ips); i++)
                assert(ips[i] == UINT64_C(0xa5a5a5a5a5a5a5a5));
        if (max < 2) {
                assert(n == 0);
                return 0;
        }
        assert(n >= 2 || (n == 1 && ips[0] != 0));
        assert(after.stacks == before.stacks + 1);
        for (int i = 0; i < _UNWIND_CUT_MAX; i++) {
                assert(after.cut[i] >= before.cut[i]);
                if (after.cut[i] != before.cut[i])
                        cut = i;
                cuts += after.cut[i] - before.cut[i];
        }
        assert(after.stacks_cut - before.stacks_cut == cuts);
        assert(cuts <= 1);
        assert((after.stacks_cfi - before.stacks_cfi) + (after.stacks_fp - before.stacks_fp) + cuts == 1);
        for (size_t i = 1; i < n; i++)
                zeros += ips[i] == 0;
        if (cut >= 0) {
                /* The interrupted address may be 0 itself (unmapped); every other but the last is not. */
                assert(ips[n - 1] == 0 && zeros == 1);
                if (cut == UNWIND_CUT_DEPTH)
                        assert(n == max);
        } else
                assert(zeros == 0 && ips[0] != 0);
        if (in.compat32)
                for (size_t i = 0; i < n; i++)
                        assert(ips[i] <= UINT32_MAX);
        /* The statistics line takes any counts. */
        char line[512];
        unwind_stats_format(&after, line, sizeof(line));
        assert(strlen(line) < sizeof(line));
        return 0;
}
