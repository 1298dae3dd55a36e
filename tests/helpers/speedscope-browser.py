#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Opens tprof's stacks in the real speedscope (the npm package's built app, in headless Chromium
through chromium-driver and python3-selenium, served from 127.0.0.1 with each file) and checks
what its sandwich view lists against the folded stacks the files must agree with:

    speedscope-browser.py APP_DIR OUTDIR -- FOLDED [--folded FILE [--as NAME]]...
                          [--perf-script FILE [--as NAME]]... [--frame NAME]... [--comm NAME]...
                          [-- FOLDED ...]...

Each group after a "--" names the folded stacks (FOLDED: "comm;outermost;...;leaf COUNT") and
the files to load, each opened by its name (or NAME) through speedscope's #profileURL=, as a
person's link to a served file opens it:

  - a --folded file (the folded stacks again, or gzipped): speedscope shows one profile, and its
    sandwich table lists exactly the frames of FOLDED (the comms among them, as root frames), each
    with the samples of the lines it is in as its total and of those it ends as its self;
  - a --perf-script file (which stackcollapse-perf.pl folds to FOLDED: the caller checks that):
    it holds as many samples as FOLDED counts, and speedscope shows one profile for each thread ("COMM pid: PID tid: TID", as it names them),
    whose table lists exactly the thread's functions, each named as the file names it (a frame
    "[unknown] (DSO)" as "??? (DSO)", speedscope's name for it) with the weights speedscope gives
    them. speedscope weighs a perf script sample by time, not as one: each by half the time to
    its thread's previous and half to its next sample (the first and the last by only their one
    half; a thread's only sample weighs 1, a count), StackListProfileBuilder's
    appendSampleWithTimestamp in src/lib/profile.ts of speedscope 1.25.0. The weights shown are
    rounded to two places of the unit shown, so they are compared to that;
  - every --frame NAME is a function of the table (of some thread's, for a perf script) and every
    --comm NAME a root frame of the folded table and a thread's name in the perf script's.

Exit 0 when every check passes, 1 otherwise, 77 when no browser runs. A screenshot of each file's
first profile goes to OUTDIR.
"""
import functools
import gzip
import importlib.util
import os
import re
import sys
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

_spec = importlib.util.spec_from_file_location(
    "report_browser", os.path.join(os.path.dirname(os.path.abspath(__file__)), "report-browser.py"))
rb = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rb)  # exits 77 without selenium
from selenium.common.exceptions import UnexpectedAlertPresentException  # noqa: E402

check = rb.check

# tprof's perf script lines (docs/window-format.md, "Exports of a range").
EVENT = re.compile(r"^(\S.*) (\d+)/(\d+) \[(\d+)\] (\d+\.\d+): (\d+) (\S+):$")
FRAME = re.compile(r"^\t([0-9a-f]+) (.+) \((\S*)\)$")
OFFSET = re.compile(r"\+0x[0-9a-f]+$")


def read_folded(path):
    stacks = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            stack, n = line.rstrip("\n").rsplit(" ", 1)
            stacks[stack] = stacks.get(stack, 0) + int(n)
    return stacks


def folded_table(stacks):
    """{(name, file): [total, self]} of a folded file's one profile (no file: "")."""
    table = {}
    for stack, n in stacks.items():
        frames = stack.split(";")
        for name in set(frames):
            table.setdefault((name, ""), [0, 0])[0] += n
        table[(frames[-1], "")][1] += n
    return {k: ("raw", v[0], v[1]) for k, v in table.items()}


def read_perf_script(path):
    """[(comm, pid, tid, seconds, [(symbol, dso), ...leaf first])] in the file's order."""
    opener = gzip.open if path.endswith(".gz") else open
    events, cur = [], None
    with opener(path, "rt", encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("#"):
                continue
            if line == "":
                cur = None
                continue
            if cur is None:
                m = EVENT.match(line)
                if m is None:
                    check(False, "an event line of tprof's form: %r" % line)
                cur = (m.group(1), int(m.group(2)), int(m.group(3)), float(m.group(5)), [])
                events.append(cur)
                continue
            m = FRAME.match(line)
            if m is None:
                check(False, "a frame line of tprof's form: %r" % line)
            cur[4].append((OFFSET.sub("", m.group(2)), m.group(3)))
    return events


def perf_script_tables(events):
    """{profile name: {(name, file): (unit, total, self)}}, speedscope's profiles and weights."""
    threads = {}
    for comm, pid, tid, t, frames in events:
        # speedscope names a thread's profile so, leaving out a pid or tid of 0.
        name = " ".join([comm] + (["pid: %d" % pid] if pid else []) + (["tid: %d" % tid] if tid else []))
        threads.setdefault(name, []).append((t, frames))
    tables = {}
    for name, samples in threads.items():
        weights = []
        if len(samples) == 1:
            unit, weights = "raw", [1]
        else:
            unit = "s"
            for i, (t, _) in enumerate(samples):
                lo = (samples[i - 1][0] + t) / 2 if i > 0 else t
                hi = (samples[i + 1][0] + t) / 2 if i + 1 < len(samples) else t
                weights.append(hi - lo)
        table = {}
        for (t, frames), w in zip(samples, weights):
            keys = [(sym if sym != "[unknown]" else "??? (%s)" % dso, dso) for sym, dso in frames]
            for k in set(keys):
                table.setdefault(k, [0, 0])[0] += w
            if keys:
                table[keys[0]][1] += w
        tables[name] = {k: (unit, v[0], v[1]) for k, v in table.items()}
    return tables


def parse_shown(text):
    """A weight as the table shows it ("1,234", "12.34ms", "1:05") -> (value, unit, step)."""
    text = text.replace("\u00a0", "").replace(",", "").strip()
    m = re.fullmatch(r"(\d+):(\d\d)", text)
    if m:
        return int(m.group(1)) * 60 + int(m.group(2)), "s", 1.0
    for suffix, mult in (("ns", 1e-9), ("µs", 1e-6), ("ms", 1e-3), ("s", 1.0)):
        if text.endswith(suffix) and re.fullmatch(r"\d+\.\d\d", text[:-len(suffix)]):
            return float(text[:-len(suffix)]) * mult, "s", 0.01 * mult
    if re.fullmatch(r"\d+", text):
        return int(text), "raw", 0
    return None, None, None


def agrees(want, shown):
    """want: (unit, total, self); shown: the two cells' texts."""
    unit = want[0]
    for w, text in zip(want[1:], shown):
        v, u, step = parse_shown(text)
        if v is None or u != unit:
            return False
        # two places of the unit shown, rounded half up (JavaScript's toFixed) or to even, and
        # summed in another order: within one step of the last place
        if abs(v - w) > step * 1.0001 + 1e-12:
            return False
    return True


# The sandwich table of each profile in turn, from the first: the rows the scrolling list has
# drawn, scrolled through to its end, then the key n (speedscope's next profile) and the next
# profile once the toolbar names it. A row is [total cell, self cell, name, file (the name cell's
# title)]; the answer is [[profile name, rows]...], or a string saying what went wrong.
READ_TABLES = r"""
const done = arguments[arguments.length - 1];
const count = arguments[0];
const frame = () => new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)));
const profile = () => {
  for (const s of document.querySelectorAll('span > span')) {
    const m = /^\((\d+)\/(\d+)\)$/.exec(s.textContent);
    if (m) return [s.parentElement.firstChild.textContent.trim(), +m[1]];
  }
  return [document.title.replace(/ - speedscope$/, ''), 1];
};
const scroller = () => {
  const th = Array.from(document.querySelectorAll('th')).find(t => t.textContent.trim() === 'Symbol Name');
  return th ? th.closest('table').parentElement.children[1] : null;
};
const drawn = sc => Array.from(sc.querySelectorAll('tr')).map(tr => tr.querySelectorAll('td')).filter(td => td.length === 3)
  .map(td => [td[0].textContent, td[1].textContent, td[2].textContent, td[2].getAttribute('title') || '']);
// The view draws a profile's rows a frame or more after the toolbar names it, once its list has
// measured itself, and a scrolled list its rows after the scroll: the rows are read when two
// frames in a row show the same ones (or the list says it has none).
const settled = async () => {
  let last = null, sc = null, now = null;
  for (let k = 0; k < 1000; k++) {
    await frame();
    sc = scroller();
    now = sc && JSON.stringify(drawn(sc));
    if (now && now === last && (now !== '[]' || /No symbols found/.test(sc.textContent))) break;
    last = now;
  }
  return sc && [sc, JSON.parse(now)];
};
const table = async () => {
  let got = await settled();
  if (!got) return null;
  if (got[0].scrollTop !== 0) {
    got[0].scrollTop = 0;
    got = await settled();
  }
  const rows = new Map();
  for (let guard = 0; guard < 100000; guard++) {
    const [sc, drawnRows] = got;
    for (const row of drawnRows)
      rows.set(row[2] + '\u0000' + row[3], row);
    if (sc.scrollTop + sc.clientHeight >= sc.scrollHeight - 1) break;
    sc.scrollTop += Math.max(16, sc.clientHeight - 40);
    got = await settled();
  }
  return Array.from(rows.values());
};
(async () => {
  const out = [];
  for (let i = 1; i <= count; i++) {
    if (i > 1) {
      window.dispatchEvent(new KeyboardEvent('keypress', {key: 'n'}));
      let k = 0;
      while (profile()[1] !== i && k++ < 2000) await frame();
      if (profile()[1] !== i) { done('the key n did not go on to profile ' + i + ': ' + profile()); return; }
    }
    const rows = await table();
    if (rows === null) { done('no sandwich table in profile ' + i); return; }
    out.push([profile()[0], rows]);
  }
  done(out);
})().catch(e => done('error: ' + e));
"""

# The toolbar's profile name and, with more than one profile, its "(i/N)".
READ_PROFILE = r"""
for (const s of document.querySelectorAll('span > span')) {
  const m = /^\((\d+)\/(\d+)\)$/.exec(s.textContent);
  if (m) return [s.parentElement.firstChild.textContent.trim(), +m[1], +m[2]];
}
const th = Array.from(document.querySelectorAll('th')).find(t => t.textContent.trim() === 'Symbol Name');
if (!th) return null;
return [document.title.replace(/ - speedscope$/, ''), 1, 1];
"""


def serve(files):
    """Serves the directory FILES (links: the app at /app/, each file at /f/K/NAME) on 127.0.0.1."""
    handler = functools.partial(Quiet, directory=files)
    srv = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


class Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def end_headers(self):
        self.send_header("Cache-Control", "no-store")
        super().end_headers()


def alert_text(driver):
    try:
        a = driver.switch_to.alert
        t = a.text
        a.accept()
        return t
    except Exception:
        return None


def open_profile(driver, url, what):
    driver.get("about:blank")
    driver.get(url)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            p = driver.execute_script(READ_PROFILE)
            if p is not None:
                return p
        except UnexpectedAlertPresentException:
            check(False, "speedscope opens %s (it says: %s)" % (what, alert_text(driver)))
        t = alert_text(driver)
        check(t is None, "speedscope opens %s (it says: %s)" % (what, t))
        time.sleep(0.1)
    logs = [e["message"] for e in driver.get_log("browser") if e.get("level") in ("SEVERE", "WARNING")]
    check(False, "speedscope showed %s within 30 s (console: %s)" % (what, logs[-3:]))


def compare(what, want, rows):
    shown = {(r[2], r[3]): (r[0].rsplit(" (", 1)[0], r[1].rsplit(" (", 1)[0]) for r in rows}
    missing = sorted(set(want) - set(shown))
    extra = sorted(set(shown) - set(want))
    wrong = [(k, want[k], shown[k]) for k in sorted(set(want) & set(shown)) if not agrees(want[k], shown[k])]
    check(not missing and not extra and not wrong,
          "%s: the sandwich table lists its %d functions whole, with their total and self weights%s%s%s" %
          (what, len(want), "; missing: %r" % missing[:5] if missing else "", "; not in the file: %r" % extra[:5] if extra else "",
           "; differing (function, want, shown): %r" % wrong[:5] if wrong else ""))


def check_file(driver, base, path, name, kind, folded, frames, comms, outdir, k):
    what = "%s %s" % (kind, name)
    url = "%s/app/index.html#profileURL=%s&view=sandwich" % (base, "/f/%d/%s" % (k, name))
    profile = open_profile(driver, url, what)
    if kind == "folded":
        check(profile[2] == 1, "%s: one profile (%s)" % (what, profile))
        want = folded_table(folded)
        got = driver.execute_async_script(READ_TABLES, 1)
        check(not isinstance(got, str), "%s: speedscope shows its sandwich table (%s)" % (what, got if isinstance(got, str) else "ok"))
        rows = got[0][1]
        driver.save_screenshot(os.path.join(outdir, "speedscope-%d.png" % k))
        compare(what, want, rows)
        names = {r[2] for r in rows}
        for f in frames + comms:
            check(f in names, "%s: %r is a row of the table" % (what, f))
        return

    events = read_perf_script(path)
    check(len(events) == sum(folded.values()), "%s holds the %d samples of the folded stacks" % (what, len(events)))
    tables = perf_script_tables(events)
    check(profile[2] == len(tables), "%s: speedscope shows %d profiles, one a thread (%s)" % (what, len(tables), profile))
    driver.save_screenshot(os.path.join(outdir, "speedscope-%d.png" % k))
    got = driver.execute_async_script(READ_TABLES, profile[2])
    check(not isinstance(got, str), "%s: speedscope shows the sandwich table of each of its %d profiles (%s)" %
          (what, profile[2], got if isinstance(got, str) else "ok"))
    seen_frames, seen = set(), []
    for name, rows in got:
        if name not in tables:
            check(False, "%s: profile %r is a thread of the file" % (what, name))
        want = tables[name]
        shown = {(r[2], r[3]): (r[0].rsplit(" (", 1)[0], r[1].rsplit(" (", 1)[0]) for r in rows}
        if set(shown) != set(want) or any(not agrees(want[x], shown[x]) for x in want):
            compare("%s, thread %r" % (what, name), want, rows)
        seen.append(name)
        seen_frames.update(r[2] for r in rows)
    check(sorted(seen) == sorted(tables),
          "%s: every one of its %d threads shows its functions whole, with speedscope's weights" % (what, len(tables)))
    for f in frames:
        check(f in seen_frames, "%s: %r is a row of a thread's table" % (what, f))
    for c in comms:
        check(any(s == c or s.startswith(c + " pid: ") or s.startswith(c + " tid: ") for s in seen),
              "%s: %r names a thread" % (what, c))


def main():
    argv = sys.argv[1:]
    if len(argv) < 4 or argv[2] != "--":
        print(__doc__, file=sys.stderr)
        return 64
    app, outdir = argv[0], argv[1]
    groups, cur = [], None
    for a in argv[3:]:
        if a == "--":
            cur = None
            continue
        if cur is None:
            cur = {"folded": a, "files": [], "frames": [], "comms": []}
            groups.append(cur)
        else:
            cur.setdefault("args", []).append(a)
    cases = []
    root = os.path.join(outdir, "served")
    os.makedirs(root, exist_ok=True)
    if not os.path.exists(os.path.join(root, "app")):
        os.symlink(os.path.abspath(app), os.path.join(root, "app"))
    for g in groups:
        args = g.pop("args", [])
        i = 0
        while i < len(args):
            opt, val = args[i], args[i + 1]
            i += 2
            if opt in ("--folded", "--perf-script"):
                g["files"].append([opt[2:], val, os.path.basename(val)])
            elif opt == "--as":
                g["files"][-1][2] = val
            elif opt == "--frame":
                g["frames"].append(val)
            elif opt == "--comm":
                g["comms"].append(val)
            else:
                print("unknown option %s" % opt, file=sys.stderr)
                return 64
        folded = read_folded(g["folded"])
        for kind, path, name in g["files"]:
            k = len(cases)
            os.makedirs(os.path.join(root, "f", str(k)), exist_ok=True)
            os.symlink(os.path.abspath(path), os.path.join(root, "f", str(k), name))
            cases.append((path, name, kind, folded, g["frames"], g["comms"], k))

    srv = serve(root)
    base = "http://127.0.0.1:%d" % srv.server_address[1]
    driver = rb.start_browser(("--lang=en-US",))
    try:
        driver.set_script_timeout(60)
        for path, name, kind, folded, frames, comms, k in cases:
            t0 = time.monotonic()
            check_file(driver, base, path, name, kind, folded, frames, comms, outdir, k)
            print("   (%s in %.1f s)" % (name, time.monotonic() - t0))
    finally:
        driver.quit()
        srv.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
