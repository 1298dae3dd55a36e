#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The shipped hook recipes (contrib/hooks/): page-webhook.sh against a real HTTP receiver on this
# host: one JSON document per bundle whose fields are the bundle's facts as tprofd hands them over
# (the trigger line unescaped once: a backslash in the log is one backslash on the page), and
# nothing posted for a rule TPROF_PAGE_RULES leaves out.
set -eu
. "$(dirname "$0")/lib.sh"

command -v curl >/dev/null || fail "curl is missing (contrib/setup.sh installs it)"
HOOK="$TPROF_SOURCE_ROOT/contrib/hooks/page-webhook.sh"

# The receiver: answers each POST with 200 and appends its body, one per line, to bodies (500 and
# nothing kept for /refuse).
python3 - "$TEST_TMP" <<'PY' &
import http.server, sys, os
d = sys.argv[1]
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if self.path == "/refuse":
            self.send_response(500)
            self.end_headers()
            return
        with open(os.path.join(d, "bodies"), "ab") as f:
            f.write(body + b"\n")
        self.send_response(200)
        self.end_headers()
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
with open(os.path.join(d, "port.tmp"), "w") as f:
    f.write(str(s.server_address[1]))
os.rename(os.path.join(d, "port.tmp"), os.path.join(d, "port"))
s.serve_forever()
PY
on_exit "kill $!"
wait_for 10 test -s "$TEST_TMP/port" || fail "the receiver did not start"
URL="http://127.0.0.1:$(cat "$TEST_TMP/port")/T0/B0"

# The environment tprofd gives a hook (README, "The bundle hook"); the trigger line as tprofd escapes it:
# the log said  ena 0000:00:05.0 eth0: C:\tmp "x" ESC 50%  (ESC the control byte).
export TPROF_BUNDLE_ID=20261127T031500Z-ena-reset-3fa9c2d1 TPROF_SHORT_ID=3fa9c2d1 \
        TPROF_BUNDLE_PATH=/var/lib/tprof/incidents/20261127T031500Z-ena-reset-3fa9c2d1 \
        TPROF_RULE=ena-reset TPROF_HOST=ip-10-0-1-23 TPROF_STATUS=complete \
        TPROF_TRIGGER_TIME=2026-11-27T03:15:00.123456Z TPROF_STATE_DIR=/var/lib/tprof
export TPROF_TRIGGER_MESSAGE='ena 0000:00:05.0 eth0: C:\\tmp "x" \x1b 50%'

expect_exit 0 env -u TPROF_PAGE_RULES "$HOOK" "$URL"
TPROF_PAGE_RULES="oom-kill hung-task" expect_exit 0 "$HOOK" "$URL"
TPROF_PAGE_RULES="oom-kill ena-reset" expect_exit 0 "$HOOK" "$URL"
[ "$(wc -l <"$TEST_TMP/bodies")" = 2 ] || fail "expected two posts (the rule left out pages nothing): $(cat "$TEST_TMP/bodies")"
python3 - "$TEST_TMP/bodies" <<'PY' || fail "the posted JSON is not what the bundle says"
import json, sys
for line in open(sys.argv[1]):
    d = json.loads(line)
    want = 'ena 0000:00:05.0 eth0: C:\\tmp "x" \\x1b 50%'
    assert d["message"] == want, (d["message"], want)
    assert d["rule"] == "ena-reset" and d["host"] == "ip-10-0-1-23" and d["status"] == "complete", d
    assert d["id"] == "20261127T031500Z-ena-reset-3fa9c2d1", d
    assert d["time"] == "2026-11-27T03:15:00.123456Z", d
    assert d["path"] == "/var/lib/tprof/incidents/20261127T031500Z-ena-reset-3fa9c2d1", d
    assert d["text"] == ("tprof: ena-reset on ip-10-0-1-23 at 2026-11-27T03:15:00.123456Z (complete): " + want), d["text"]
PY

# A receiver that refuses: the hook fails (curl's status), which tprofd logs.
expect_exit 22 "$HOOK" "http://127.0.0.1:$(cat "$TEST_TMP/port")/refuse"
grep -q "500" "$ERR" || fail "the refusal is not said: $(cat "$ERR")"

# pyroscope-upload.sh with tprof-bundle on fixture bundles (tests/helpers/make-fixture-bundle.py)
# and a profilecli that records its calls (Grafana's own is not packaged for Debian): a bundle
# without samples uploads nothing and succeeds, where the export would fail (there is no profile),
# and an empty baseline is found by the query the recipe asks tprof-bundle.
PYRO="$TPROF_SOURCE_ROOT/contrib/hooks/pyroscope-upload.sh"
FX="$TEST_TMP/fx"
python3 "$TPROF_SOURCE_ROOT/tests/helpers/make-fixture-bundle.py" "$FX" nocov --id 1111aaaa >/dev/null
python3 "$TPROF_SOURCE_ROOT/tests/helpers/make-fixture-bundle.py" "$FX" anomaly --id 2222bbbb >/dev/null
mkdir -p "$TEST_TMP/bin"
ln -sf "$TPROF_BUNDLE" "$TEST_TMP/bin/tprof-bundle"
printf '#!/bin/sh\necho "$@" >>"%s"\n' "$TEST_TMP/profilecli.calls" >"$TEST_TMP/bin/profilecli"
chmod +x "$TEST_TMP/bin/profilecli"
PATH="$TEST_TMP/bin:$PATH" TPROF_STATE_DIR="$FX" TPROF_BUNDLE_ID=20261121T143000Z-ena-reset-1111aaaa \
        TPROF_STATUS=no-coverage TPROF_UPLOAD_BASELINE=1 expect_exit 0 "$PYRO" http://127.0.0.1:1
[ ! -e "$TEST_TMP/profilecli.calls" ] || fail "a bundle without samples was uploaded: $(cat "$TEST_TMP/profilecli.calls")"
grep -q "no samples (no-coverage): nothing to upload" "$ERR" || fail "the skipped upload is not said: $(cat "$ERR")"
expect_exit 1 "$TPROF_BUNDLE" -D "$FX" ls --no-legend id=20261121T143000Z-ena-reset-2222bbbb baseline.samples=0
sed -i 's/"samples": 61740/"samples": 0/' "$FX"/incidents/*2222bbbb/manifest.json
expect_exit 0 "$TPROF_BUNDLE" -D "$FX" ls --no-legend id=20261121T143000Z-ena-reset-2222bbbb baseline.samples=0
