/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Symbols of a stripped library from elsewhere, as distributions ship them: its MiniDebugInfo
 * (.gnu_debugdata, an xz-compressed ELF file of the functions' symbols), and a separate debug file
 * under a debug root, found by the library's build id or by its .gnu_debuglink name.
 */
#include "tests.h"
#include "symbolizer-test-util.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "basic/fileio.h"

static void test_minidebuginfo(void **state) {
        _cleanup_(elf_symbols_freep) ElfSymbols *e = NULL;
        char cmd[2048];

        /* The recipe distributions use: keep the functions' symbols in a small ELF, xz it, add it. */
        snprintf(cmd, sizeof(cmd),
                 "set -e; cd '%1$s'; "
                 "objcopy --strip-all --remove-section=.gnu_debuglink '%2$s' mini.so; "
                 "objcopy --only-keep-debug '%2$s' debug.so; "
                 "objcopy -S --remove-section .gdb_index --remove-section .comment --keep-symbol=fixture_alpha "
                 "--keep-symbol=fixture_beta --keep-symbol=fixture_local debug.so mini.debug; "
                 "xz -f mini.debug; objcopy --add-section .gnu_debugdata=mini.debug.xz mini.so",
                 tmpdir, fixture);
        if (run("command -v xz >/dev/null") != 0 || run(cmd) != 0)
                skip();
        char path[256];
        snprintf(path, sizeof(path), "%s/mini.so", tmpdir);
        assert_int_equal(elf_symbols_load_path(path, NULL, &e), 0);
        assert_int_equal(elf_symbols_source(e), ELF_SYMBOLS_MINIDEBUG);
        expect_name(e, alpha, "fixture_alpha");
}

static void test_debug_file_by_build_id(void **state) {
        _cleanup_(elf_symbols_freep) ElfSymbols *orig = NULL, *e = NULL;
        char root[256], dir[512], cmd[2048], hex[2 * ELF_BUILD_ID_BYTES_MAX + 1];
        const uint8_t *bid;
        size_t n;

        assert_int_equal(elf_symbols_load_path(fixture, NULL, &orig), 0);
        bid = elf_symbols_build_id(orig, &n);
        if (!bid)
                skip();
        for (size_t i = 0; i < n; i++)
                sprintf(hex + 2 * i, "%02x", bid[i]);

        /* A debug root laid out as /usr/lib/debug/.build-id/xx/rest.debug, and a stripped binary. */
        snprintf(root, sizeof(root), "%s/buildid-root", tmpdir);
        snprintf(dir, sizeof(dir), "%s/usr/lib/debug/.build-id/%.2s", root, hex);
        assert_int_equal(mkdir_p(dir, 0755), 0);
        snprintf(cmd, sizeof(cmd),
                 "objcopy --only-keep-debug '%s' '%s/%s.debug' && "
                 "objcopy --strip-all --remove-section=.gnu_debuglink '%s' '%s/stripped-bid.so'",
                 fixture, dir, hex + 2, fixture, tmpdir);
        if (run(cmd) != 0)
                skip();

        const char *const roots[] = { root, NULL };
        char path[512];
        snprintf(path, sizeof(path), "%s/stripped-bid.so", tmpdir);
        assert_int_equal(elf_symbols_load_path(path, roots, &e), 0);
        assert_int_equal(elf_symbols_source(e), ELF_SYMBOLS_DEBUG_FILE);
        expect_name(e, alpha, "fixture_alpha");
        expect_name(e, beta, "fixture_beta");
}

static void test_debug_file_by_debuglink(void **state) {
        _cleanup_(elf_symbols_freep) ElfSymbols *e = NULL;
        _cleanup_close_ int fd = -EBADF;
        char root[256], cmd[2048], path[512];

        /* /usr/lib/debug/<dir of the binary>/<debuglink name>, with no build-id file around. */
        snprintf(root, sizeof(root), "%s/link-root", tmpdir);
        snprintf(path, sizeof(path), "%s/usr/lib/debug/opt/app", root);
        assert_int_equal(mkdir_p(path, 0755), 0);
        snprintf(cmd, sizeof(cmd),
                 "cd '%1$s' && objcopy --only-keep-debug '%2$s' fixture.debug && "
                 "objcopy --strip-all --remove-section=.gnu_debuglink '%2$s' stripped-link.so && "
                 "objcopy --add-gnu-debuglink=fixture.debug stripped-link.so && mv fixture.debug '%3$s/'",
                 tmpdir, fixture, path);
        if (run(cmd) != 0)
                skip();

        snprintf(path, sizeof(path), "%s/stripped-link.so", tmpdir);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        const char *const roots[] = { root, NULL };
        /* As mapped inside its container: /opt/app/stripped-link.so. */
        assert_int_equal(elf_symbols_load_fd(fd, "/opt/app/stripped-link.so", roots, &e), 0);
        assert_int_equal(elf_symbols_source(e), ELF_SYMBOLS_DEBUG_FILE);
        expect_name(e, alpha, "fixture_alpha");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_minidebuginfo),
                cmocka_unit_test(test_debug_file_by_build_id),
                cmocka_unit_test(test_debug_file_by_debuglink),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
