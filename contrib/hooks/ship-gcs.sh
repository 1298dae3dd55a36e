#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# tprofd bundle hook: copies the bundle to Google Cloud Storage with gsutil.
#   incidents: { on_bundle: [/usr/local/share/doc/tprof/hooks/ship-gcs.sh, gs://bucket/prefix] }
# The bundle lands in gs://bucket/prefix/<host>/<bundle id>/; TPROF_SHIP_WINDOWS=0 leaves the
# pinned windows out.
set -eu
dest=${1:?usage: ship-gcs.sh gs://bucket/prefix}
: "${TPROF_BUNDLE_PATH:?run by tprofd as incidents.on_bundle}"
if [ "${TPROF_SHIP_WINDOWS:-1}" = 0 ]; then
        exec gsutil -q -m rsync -r -x '^windows/' "$TPROF_BUNDLE_PATH" "${dest%/}/$TPROF_HOST/$TPROF_BUNDLE_ID"
fi
exec gsutil -q -m rsync -r "$TPROF_BUNDLE_PATH" "${dest%/}/$TPROF_HOST/$TPROF_BUNDLE_ID"
