#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# tprofd bundle hook: copies the bundle to S3 with the AWS CLI.
#   incidents: { on_bundle: [/usr/local/share/doc/tprof/hooks/ship-s3.sh, s3://bucket/prefix] }
# The bundle lands in s3://bucket/prefix/<host>/<bundle id>/. The pinned windows (windows/) make up
# most of a bundle; TPROF_SHIP_WINDOWS=0 in tprofd's environment leaves them out. Credentials come
# the usual way (instance role, AWS_* variables, ~/.aws of the user tprofd runs as).
set -eu
dest=${1:?usage: ship-s3.sh s3://bucket/prefix}
: "${TPROF_BUNDLE_PATH:?run by tprofd as incidents.on_bundle}"
set -- aws s3 cp --recursive --only-show-errors
[ "${TPROF_SHIP_WINDOWS:-1}" = 0 ] && set -- "$@" --exclude 'windows/*'
exec "$@" "$TPROF_BUNDLE_PATH" "${dest%/}/$TPROF_HOST/$TPROF_BUNDLE_ID/"
