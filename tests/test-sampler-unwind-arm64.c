/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The unwinder on arm64 code, on any machine: the unwinding fixture built for arm64 (a PIE
 * calling through a shared library, no frame pointers) runs under qemu-user and records, in a leaf
 * that keeps its return address in the link register, its registers (pc, sp, x29, x30), a copy of
 * its stack and its mappings, as perf's REGS_USER and STACK_USER give them on an arm64 host. The
 * copy is walked with the arm64 files' own CFI (the program's, its library's, the arm64 C
 * library's), and each address named from their symbols. Built with pointer authentication, the
 * saved return addresses carry a code in their top bits, which the walk must take off. Skipped
 * where the cross compiler or qemu-user is missing (contrib/setup.sh installs both).
 */
#include <fcntl.h>
#include <gelf.h>
#include <sys/auxv.h>

#include "basic/fileio.h"
#include "basic/string-util.h"
#include "sampler/sampler-unwind-cfi.h"
#include "unwind-test-util.h"

/* The fixture's snapshot, from the program named by env: under qemu where TPROF_QEMU_AARCH64
 * names it (with the arm64 libraries under TPROF_ARM64_SYSROOT), else run as it is (an arm64 host). */
static bool arm64_snapshot(const char *env, Snapshot *ret) {
        const char *fixture = getenv(env), *qemu = getenv("TPROF_QEMU_AARCH64"), *sysroot = getenv("TPROF_ARM64_SYSROOT");

        if (!fixture)
                return false;
        if (qemu)
                take_snapshot_with((const char *const[]) { qemu, "-L", sysroot ?: "/", NULL }, fixture, ret);
        else
                take_snapshot(fixture, ret);
        assert_true(ret->arm64);
        return true;
}

/* The address of the first entry of the fixture program's PLT in the snapshot's process. */
static uint64_t plt_entry(const Snapshot *s, const char *fixture) {
        _cleanup_close_ int fd = open(fixture, O_RDONLY | O_CLOEXEC);
        uint64_t base = 0, plt = 0;
        Elf_Scn *scn = NULL;
        size_t shstrndx;
        Elf *e;

        assert_true(fd >= 0);
        assert_int_not_equal(elf_version(EV_CURRENT), EV_NONE);
        e = elf_begin(fd, ELF_C_READ, NULL);
        assert_non_null(e);
        assert_int_equal(elf_getshdrstrndx(e, &shstrndx), 0);
        while ((scn = elf_nextscn(e, scn))) {
                GElf_Shdr sh;
                const char *name;

                if (gelf_getshdr(scn, &sh) && (name = elf_strptr(e, shstrndx, sh.sh_name)) && streq(name, ".plt"))
                        plt = sh.sh_addr;
        }
        elf_end(e);
        assert_int_not_equal(plt, 0);
        /* The program's first mapping (a PIE's addresses start at 0); PLT0, the lazy resolver's
         * stub, is 32 bytes, the first entry after it (AArch64 ELF ABI). */
        for (size_t i = 0; i < s->n_maps; i++)
                if (s->maps[i].pgoff == 0 && endswith(s->maps[i].path, strrchr(fixture, '/'))) {
                        base = s->maps[i].start;
                        break;
                }
        assert_int_not_equal(base, 0);
        return base + plt + 32;
}

static const char *const arm64_path[] = {
        "unwind_capture", "unwind_leaf", "unwind_callback", "unwind_fixture_lib_middle", "unwind_outer", "main",
};

/* Walks s in mode; the path must be whole, by CFI alone, from the leaf to _start. */
static size_t expect_whole_arm64(const Snapshot *s, const char *twin, UnwindMode mode, uint64_t *ips, size_t max) {
        UnwindStats st;
        char buf[256];
        size_t n;

        n = walk_printed(s, mode, twin, "", ips, max, &st);
        assert_true(n > ELEMENTSOF(arm64_path));
        for (size_t i = 0; i < ELEMENTSOF(arm64_path); i++)
                assert_string_equal(name_of(s, ips[i], i > 0, twin, buf, sizeof(buf)), arm64_path[i]);
        assert_int_not_equal(ips[n - 1], 0);
        assert_string_equal(name_of(s, ips[n - 1], true, twin, buf, sizeof(buf)), "_start");
        assert_int_equal(st.stacks, 1);
        assert_int_equal(st.stacks_cut, 0);
        assert_int_equal(st.stacks_cfi, 1);
        assert_int_equal(st.frames_fp, 0);
        return n;
}

static void test_arm64_whole_by_cfi(void **state) {
        _cleanup_(snapshot_done) Snapshot s = {};
        uint64_t ips[128];

        if (!arm64_snapshot("TPROF_ARM64_FIXTURE", &s))
                skip();
        /* The leaf's return address is in x30 only: its caller is found there, not on the stack. */
        expect_whole_arm64(&s, getenv("TPROF_ARM64_FIXTURE"), UNWIND_MODE_DWARF, ips, ELEMENTSOF(ips));
        assert_int_equal(ips[1], s.lr);
        expect_whole_arm64(&s, getenv("TPROF_ARM64_FIXTURE"), UNWIND_MODE_AUTO, ips, ELEMENTSOF(ips));
}

static void test_arm64_signed_return_addresses(void **state) {
        _cleanup_(snapshot_done) Snapshot s = {};
        uint64_t ips[128];
        unsigned signed_found = 0;
        size_t n;

        if (!arm64_snapshot("TPROF_ARM64_FIXTURE_PAC", &s))
                skip();
        n = expect_whole_arm64(&s, getenv("TPROF_ARM64_FIXTURE_PAC"), UNWIND_MODE_DWARF, ips, ELEMENTSOF(ips));
        /* The copy holds the return addresses of the fixture's own frames signed: their low bits
         * the address walked, their top bits a code. Without one the test would not test it. */
        for (size_t off = 0; off + 8 <= s.size; off += 8) {
                uint64_t w;
                memcpy(&w, s.stack + off, sizeof(w));
                for (size_t i = 1; i < n && (w >> 48) != 0; i++)
                        if ((w & UNWIND_ARM64_ADDR_MASK) == ips[i]) {
                                signed_found++;
                                break;
                        }
        }
        print_message("  %u signed return addresses in the copy\n", signed_found);
#if defined(__aarch64__) && defined(HWCAP_PACA)
        /* Run here, on an arm64 CPU without pointer authentication (Graviton2, Neoverse N1), the
         * fixture's signing instructions do nothing. */
        if (!getenv("TPROF_QEMU_AARCH64") && !(getauxval(AT_HWCAP) & HWCAP_PACA)) {
                print_message("  this CPU has no pointer authentication: nothing was signed\n");
                return;
        }
#endif
        assert_true(signed_found >= 3);
}

/* The arm64 files' CFI is not taken for a process of another machine: walked as an x86-64
 * process's, the arm64 snapshot has no rule for its first address and is cut there. */
static void test_arm64_files_not_for_x86_64(void **state) {
        _cleanup_(unwinder_freep) Unwinder *u = NULL;
        _cleanup_(snapshot_done) Snapshot s = {};
        uint64_t ips[128];
        UnwindStats st;
        size_t n;

        if (!arm64_snapshot("TPROF_ARM64_FIXTURE", &s))
                skip();
        assert_int_equal(unwinder_new(&(UnwinderOptions) { .mode = UNWIND_MODE_DWARF }, &u), 0);
        n = unwinder_unwind(u, s.procs,
                            &(UnwindInput) {
                                    .pid = FIXTURE_PID, .ip = s.ip, .sp = s.sp, .bp = s.bp, .lr = s.lr,
                                    .machine = EM_X86_64, .stack = s.stack, .stack_size = s.size,
                            },
                            ips, ELEMENTSOF(ips));
        assert_int_equal(n, 2);
        assert_int_equal(ips[1], 0);
        unwinder_get_stats(u, &st);
        assert_int_equal(st.cut[UNWIND_CUT_NO_CFI], 1);
}

/* Interrupted in a PLT entry (no CFI: ld writes none for them on arm64), the function that
 * called through it is in x30: auto mode walks on from there, dwarf mode cuts. The snapshot's
 * registers with the stub's address as pc: unwind_leaf calling through it. Only PLT entries: in
 * the PLT's header the walk goes by the frame pointer. */
static void test_arm64_plt_stub(void **state) {
        const char *fixture = getenv("TPROF_ARM64_FIXTURE");
        _cleanup_(snapshot_done) Snapshot s = {};
        uint64_t ips[128];
        UnwindStats st;
        char buf[256];
        size_t n;

        if (!arm64_snapshot("TPROF_ARM64_FIXTURE", &s))
                skip();
        s.ip = plt_entry(&s, fixture);
        for (UnwindMode mode = UNWIND_MODE_DWARF; mode <= UNWIND_MODE_AUTO; mode++) {
                n = walk_printed(&s, mode, fixture, mode == UNWIND_MODE_DWARF ? "dwarf " : "auto ", ips,
                                 ELEMENTSOF(ips), &st);
                if (mode == UNWIND_MODE_DWARF) {
                        assert_int_equal(n, 2);
                        assert_int_equal(ips[1], 0);
                        assert_int_equal(st.cut[UNWIND_CUT_NO_CFI], 1);
                        continue;
                }
                assert_true(n > ELEMENTSOF(arm64_path));
                for (size_t i = 1; i < ELEMENTSOF(arm64_path); i++)
                        assert_string_equal(name_of(&s, ips[i], true, fixture, buf, sizeof(buf)), arm64_path[i]);
                assert_string_equal(name_of(&s, ips[n - 1], true, fixture, buf, sizeof(buf)), "_start");
                assert_int_equal(st.stacks_cut, 0);
                assert_int_equal(st.stacks_fp, 1);
                assert_int_equal(st.frames_fp, 1);
        }

        /* PLT0, the lazy resolver's entry, pushes x16 and x30 first: not a stub walked from x30 (as
         * no other code without CFI is), but by the frame pointer. */
        s.ip = plt_entry(&s, fixture) - 32 + 8;
        n = walk_printed(&s, UNWIND_MODE_AUTO, fixture, "PLT0 ", ips, ELEMENTSOF(ips), &st);
        assert_true(n >= 2);
        assert_int_not_equal(ips[1], s.lr);
}

/* The library without CFI, with frame pointers: its frame is walked by its frame record, which
 * does not say where its caller's stack pointer was; the caller, whose rule needs it, is walked by
 * its frame pointer too (or the walk is cut), never by its rule from a made-up stack pointer. */
static void test_arm64_frame_pointer_step(void **state) {
        const char *fixture = getenv("TPROF_ARM64_FIXTURE_NOCFI");
        _cleanup_(snapshot_done) Snapshot s = {};
        uint64_t ips[128];
        UnwindStats st;
        char buf[256];
        size_t n;

        if (!arm64_snapshot("TPROF_ARM64_FIXTURE_NOCFI", &s))
                skip();
        n = walk_printed(&s, UNWIND_MODE_AUTO, fixture, "", ips, ELEMENTSOF(ips), &st);
        assert_true(n > 5);
        for (size_t i = 0; i < 5; i++)
                assert_string_equal(name_of(&s, ips[i], i > 0, fixture, buf, sizeof(buf)), arm64_path[i]);
        assert_true(st.frames_fp >= 1);
        /* unwind_outer's rule from sp = x29 + 16 read a word of lib_middle's frame as its return
         * address (0x4); by frame pointers main is passed over (as perf -g passes over it), but no
         * frame is made up. */
        for (size_t i = 5; i < n && ips[i] != 0; i++)
                assert_string_not_equal(name_of(&s, ips[i], true, fixture, buf, sizeof(buf)), "(unmapped)");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_arm64_whole_by_cfi),
                cmocka_unit_test(test_arm64_signed_return_addresses),
                cmocka_unit_test(test_arm64_files_not_for_x86_64),
                cmocka_unit_test(test_arm64_plt_stub),
                cmocka_unit_test(test_arm64_frame_pointer_step),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
