#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# tprofd bundle hook: copies the bundle with rclone, to any of its backends (S3, GCS, Azure, SFTP...).
#   incidents: { on_bundle: [/usr/local/share/doc/tprof/hooks/ship-rclone.sh, remote:bucket/prefix] }
# The remote is configured in the rclone.conf of the user tprofd runs as (or RCLONE_CONFIG);
# the bundle lands in remote:bucket/prefix/<host>/<bundle id>; TPROF_SHIP_WINDOWS=0 leaves the
# pinned windows out.
set -eu
dest=${1:?usage: ship-rclone.sh remote:path}
: "${TPROF_BUNDLE_PATH:?run by tprofd as incidents.on_bundle}"
set -- rclone copy --quiet
[ "${TPROF_SHIP_WINDOWS:-1}" = 0 ] && set -- "$@" --exclude 'windows/**'
exec "$@" "$TPROF_BUNDLE_PATH" "${dest%/}/$TPROF_HOST/$TPROF_BUNDLE_ID"
