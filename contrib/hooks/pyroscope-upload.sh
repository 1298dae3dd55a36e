#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# tprofd bundle hook: exports the bundle's slice as pprof and uploads it to a Pyroscope server with
# Grafana's own client, profilecli.
#   incidents: { on_bundle: [/usr/local/share/doc/tprof/hooks/pyroscope-upload.sh, http://pyroscope:4040] }
# The profile carries the labels host, rule, incident, comm, pid, cpu per sample; the upload adds
# service_name=tprof (PYROSCOPE_SERVICE_NAME to change it). With TPROF_UPLOAD_BASELINE=1 the
# baseline goes up too (label slice=baseline), for a diff in the Pyroscope UI. A bundle without
# samples (no-coverage: tprofd was not sampling then) and an empty baseline (a bundle taken soon
# after tprofd started) are said and skipped: there is no profile to upload.
set -eu
url=${1:?usage: pyroscope-upload.sh http://pyroscope:4040}
: "${TPROF_BUNDLE_ID:?run by tprofd as incidents.on_bundle}"
state=${TPROF_STATE_DIR:-/var/lib/tprof}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
service=${PYROSCOPE_SERVICE_NAME:-tprof}

if [ "${TPROF_STATUS:-}" = no-coverage ]; then
        echo "pyroscope-upload: bundle $TPROF_BUNDLE_ID has no samples (no-coverage): nothing to upload" >&2
        exit 0
fi
tprof-bundle -D "$state" export "$TPROF_BUNDLE_ID" --format pprof -o "$tmp/slice.pb.gz"
profilecli upload --url="$url" --extra-labels="service_name=$service" --extra-labels="host=$TPROF_HOST" \
        --extra-labels="rule=$TPROF_RULE" --extra-labels="incident=$TPROF_BUNDLE_ID" "$tmp/slice.pb.gz"
if [ "${TPROF_UPLOAD_BASELINE:-0}" = 1 ] &&
   tprof-bundle -D "$state" ls --no-legend "id=$TPROF_BUNDLE_ID" baseline.samples=0 >/dev/null 2>&1; then
        echo "pyroscope-upload: bundle $TPROF_BUNDLE_ID has an empty baseline: only its slice uploaded" >&2
elif [ "${TPROF_UPLOAD_BASELINE:-0}" = 1 ]; then
        tprof-bundle -D "$state" export "$TPROF_BUNDLE_ID" --format pprof --baseline -o "$tmp/baseline.pb.gz"
        profilecli upload --url="$url" --extra-labels="service_name=$service" --extra-labels="host=$TPROF_HOST" \
                --extra-labels="rule=$TPROF_RULE" --extra-labels="incident=$TPROF_BUNDLE_ID" "$tmp/baseline.pb.gz"
fi
