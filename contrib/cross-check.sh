#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Builds tprof for arm64 (aarch64) on a Debian 12 x86-64 machine and runs its unit tests under
# qemu-user: installs, through Debian's multiarch, the arm64 libraries the build needs, the aarch64
# cross compiler and qemu-user-static (quietly, only those missing; apt never removes a package
# for them), configures build-arm64/ with contrib/cross/aarch64-linux-gnu.ini and runs the suites.
# Optional, not part of CI (.ci/run): the first run downloads some 130 MB (600 MB installed) and
# builds for minutes.
#
#   contrib/cross-check.sh                  install, build into build-arm64/, run the unit tests
#   contrib/cross-check.sh [MESON-TEST-ARGS] ... run those instead (e.g. test-symbolizer-elf -v)
#
# Under qemu-user perf_event_open() is not implemented (ENOSYS): test-sampler-live and every
# integration test that samples cannot run, so only the unit suite runs by default
# (test-sampler-unwind-arm64 walks the arm64 fixture's stack; test-sampler-unwind,
# test-sampler-unwind-debuginfo, test-sampler-unwind-libdwfl and test-sampler-unwind-cfi skip there:
# their fixtures are x86-64's). Needs root (or sudo) for the packages.
set -euo pipefail

cd "$(dirname "$0")/.."

# The build's libraries of contrib/setup.sh, for arm64, and the tests' cmocka.
ARM64_LIBRARIES=(
        libc6-dev libsystemd-dev libpcre2-dev libyaml-dev libzstd-dev libelf-dev libdw-dev
        libprotobuf-c-dev zlib1g-dev libiberty-dev liblzma-dev libcmocka-dev
)
PACKAGES=(gcc-aarch64-linux-gnu binutils-aarch64-linux-gnu qemu-user-static
          meson ninja-build pkg-config protobuf-c-compiler)
for p in "${ARM64_LIBRARIES[@]}"; do
        PACKAGES+=("$p:arm64")
done

sudo_if_needed() {
        if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

install_packages() {
        local missing=() p
        for p in "${PACKAGES[@]}"; do
                dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
        done
        [ ${#missing[@]} -eq 0 ] && return 0
        if ! dpkg --print-foreign-architectures | grep -qx arm64; then
                echo "cross-check: adding the arm64 architecture to dpkg" >&2
                sudo_if_needed dpkg --add-architecture arm64
        fi
        echo "cross-check: installing ${missing[*]}" >&2
        sudo_if_needed apt-get update -qq
        # --no-remove: an arm64 library whose version differs from the installed amd64 one would
        # have apt remove the latter; stop instead (apt-get upgrade first).
        sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
                --no-remove "${missing[@]}" >/dev/null
}

install_packages
if [ ! -f build-arm64/build.ninja ]; then
        meson setup build-arm64 --cross-file contrib/cross/aarch64-linux-gnu.ini >/dev/null
fi
ninja -C build-arm64 >/dev/null
if [ $# -eq 0 ]; then
        set -- --suite unit
fi
exec meson test -C build-arm64 --print-errorlogs --num-processes 1 "$@"
