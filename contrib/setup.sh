#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Sets up tprof on a Debian 12 machine from nothing: installs the Debian packages the build, the
# tests and the runtime need (quietly, and only those missing), configures and builds; for
# `test` also speedscope from npm, for its test.
#
#   contrib/setup.sh            install packages, build into build/
#   contrib/setup.sh run [ARGS] ... then install to /usr/local and run tprofd in the foreground
#                               on its defaults (default rules, /var/lib/tprof); ARGS go to tprofd
#   contrib/setup.sh test       ... then run the whole test suite, again in a second build with
#                               ASan and UBSan (build-asan/), and each
#                               libFuzzer target for TPROF_FUZZ_SECONDS (15) in build-fuzz/
#
# Needs root (or sudo) for the packages, for `run` and for the privileged tests.
set -euo pipefail

cd "$(dirname "$0")/.."

PACKAGES=(
        # build
        gcc meson ninja-build pkg-config
        libsystemd-dev libpcre2-dev libyaml-dev libzstd-dev libelf-dev libdw-dev
        libprotobuf-c-dev protobuf-c-compiler zlib1g-dev  # pprof export: profile.proto, gzip
        libiberty-dev  # C++ and Rust symbols demangled
        liblzma-dev    # MiniDebugInfo (.gnu_debugdata): named directly, not only through libdw-dev
        # tests and benchmarks
        libcmocka-dev clang libclang-rt-14-dev pcre2-utils linux-perf python3 jq libxml2-utils valgrind strace bc
        binutils  # nm and objcopy: the stripped fixtures and the function-start checks
        lld       # links the stand-ins for Go PIEs as lld does: addresses in relocations alone
        zstd      # the zstd command: the second window reader decompresses chunks with it
        chromium chromium-driver python3-selenium  # report.html is tested in a real browser
        golang-go # go tool pprof reads the pprof exports in the tests; a Go program is unwound in one
        curl      # the page-webhook.sh hook recipe posts with it (its test, to a receiver here)
        # runtime: journald for the journal source and its tests, logger/setpriv for tests
        # (and losetup/fsfreeze with mkfs.ext4 for the hung task test's filesystem)
        systemd util-linux procps e2fsprogs
        iproute2  # ip: the loopback of the softirq test's own network namespace
)
# npm for speedscope (below), for the tests only: Debian's, unless a node.js with its own npm is
# installed already.
if [ "${1:-}" = test ] && ! command -v npm >/dev/null; then PACKAGES+=(npm); fi
# For the tests on an x86-64 machine: the unwinding fixture built for arm64 and run under
# qemu-user, whose stack the arm64 unwinder walks (test-sampler-unwind-arm64).
if [ "${1:-}" = test ] && [ "$(dpkg --print-architecture)" = amd64 ]; then
        PACKAGES+=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user-static)
fi

# speedscope, the profile viewer whose package ships its built web app: the bundles' stacks are
# opened in it in Chromium by tests/integration/test-speedscope.sh, which knows this version's views.
SPEEDSCOPE_VERSION=1.25.0

sudo_if_needed() {
        if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

install_packages() {
        local missing=() p
        for p in "${PACKAGES[@]}"; do
                dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
        done
        [ ${#missing[@]} -eq 0 ] && return 0
        echo "setup: installing ${missing[*]}" >&2
        sudo_if_needed apt-get update -qq
        sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
                "${missing[@]}" >/dev/null
}

install_speedscope() {
        local dir
        dir="$(npm root --global)/speedscope"
        grep -qs "\"version\": \"$SPEEDSCOPE_VERSION\"" "$dir/package.json" && return 0
        echo "setup: installing speedscope $SPEEDSCOPE_VERSION (npm)" >&2
        sudo_if_needed npm install --global --no-audit --no-fund --loglevel=error "speedscope@$SPEEDSCOPE_VERSION" >/dev/null
}

configure_and_build() {
        local dir=$1
        shift
        if [ ! -f "$dir/build.ninja" ]; then
                meson setup "$dir" "$@" >/dev/null
        fi
        ninja -C "$dir" >/dev/null
}

install_packages
configure_and_build build

case "${1:-}" in
"")
        ;;
run)
        shift
        sudo_if_needed meson install -C build --quiet
        sudo_if_needed ldconfig
        # Group tprof (readers of bundles and the control socket) and the state directory, as the
        # packaged unit's systemd would make them at boot.
        if command -v systemd-sysusers >/dev/null; then
                sudo_if_needed systemd-sysusers /usr/local/lib/sysusers.d/tprof.conf
                sudo_if_needed systemd-tmpfiles --create /usr/local/lib/tmpfiles.d/tprof.conf
        fi
        if [ "$(id -u)" = 0 ]; then exec /usr/local/sbin/tprofd "$@"; fi
        exec sudo /usr/local/sbin/tprofd "$@"
        ;;
test)
        # Without it (no npm registry) test-speedscope skips and says why; nothing else needs it.
        install_speedscope || echo "setup: speedscope $SPEEDSCOPE_VERSION not installed" >&2
        meson test -C build --print-errorlogs
        configure_and_build build-asan -Dsanitizers=true -Db_lundef=false
        meson test -C build-asan --print-errorlogs
        tests/fuzz/run-fuzzers.sh "${TPROF_FUZZ_SECONDS:-15}"
        ;;
*)
        echo "usage: contrib/setup.sh [run [TPROFD-ARGS...] | test]" >&2
        exit 64
        ;;
esac
