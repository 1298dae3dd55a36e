#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# tprofd bundle hook: tells a chat or paging system about the bundle, by POSTing JSON to a webhook
# with curl. The body has a Slack-compatible "text" and the facts as fields, for other receivers.
#   incidents: { on_bundle: [/usr/local/share/doc/tprof/hooks/page-webhook.sh, https://hooks.example/T0/B0/XYZ] }
# Only bundles of the rules listed in TPROF_PAGE_RULES (blank-separated; empty: every rule) page.
set -eu
url=${1:?usage: page-webhook.sh WEBHOOK-URL}
: "${TPROF_BUNDLE_ID:?run by tprofd as incidents.on_bundle}"
if [ -n "${TPROF_PAGE_RULES:-}" ]; then
        case " $TPROF_PAGE_RULES " in *" $TPROF_RULE "*) ;; *) exit 0 ;; esac
fi
# JSON string escaping of the values (they come from logs: quotes and backslashes happen).
j() { printf '%s' "$1" | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g'; }
# tprofd hands the trigger line over escaped (a backslash doubled, control bytes as \xNN): the
# page shows it with one backslash again, the control bytes still as \xNN.
message=$(printf '%s' "$TPROF_TRIGGER_MESSAGE" | sed -e 's/\\\\/\\/g')
body=$(printf '{"text":"tprof: %s on %s at %s (%s): %s","host":"%s","rule":"%s","status":"%s","time":"%s","id":"%s","path":"%s","message":"%s"}' \
        "$(j "$TPROF_RULE")" "$(j "$TPROF_HOST")" "$(j "$TPROF_TRIGGER_TIME")" "$(j "$TPROF_STATUS")" \
        "$(j "$message")" "$(j "$TPROF_HOST")" "$(j "$TPROF_RULE")" "$(j "$TPROF_STATUS")" \
        "$(j "$TPROF_TRIGGER_TIME")" "$(j "$TPROF_BUNDLE_ID")" "$(j "$TPROF_BUNDLE_PATH")" "$(j "$message")")
exec curl -fsS --max-time 30 -H 'Content-Type: application/json' --data-binary "$body" "$url"
