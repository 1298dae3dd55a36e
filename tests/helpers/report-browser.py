#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Opens a tprof report.html in headless Chromium (Debian's chromium + chromium-driver through
python3-selenium) and checks it against the bundle's perf-script file:

  - the heatmap's cell counts equal the samples of the perf-script file in each cell, binned as
    Flamescope bins them: column = floor(t - floor(first)), row = floor(fraction of the second /
    20 ms) (a bundle's heatmap spans its slice: columns Flamescope has not, before or after its
    own, must be empty);
  - every log line is marked on the time axis, the trigger among them;
  - a selection dragged with the mouse over the heatmap gives a flame graph whose root total is
    the number of samples in those cells, a click on one cell the samples in it, and so does a
    drag over the per-CPU lanes (CPU and time);
  - a search highlights frames and counts the samples of the selection that match;
  - the keyboard: Tab reaches the heatmap, whose arrow keys select a cell and with Shift grow the
    selection, and the flame graph, where Up goes to the busiest process, Enter zooms to it and
    Escape out; Enter on a log line selects its second, on a ranking row marks it;
  - the page made no network request and carries a Content-Security-Policy of default-src 'none';
  - a screenshot is saved.

    report-browser.py REPORT PERF_SCRIPT OUTDIR [--search COMM] [--no-log] [--bench]
    report-browser.py REPORT - OUTDIR --answer TEXT [--row ROW]... [--marks ROW N]... [--unusual TEXT]
                      [--log-omitted TEXT] [--fact TEXT]...
    report-browser.py --headers OUTDIR -- REPORT --answer TEXT [...] [-- REPORT --answer TEXT [...]]...
    report-browser.py REPORT - OUTDIR --empty
    report-browser.py REPORT - OUTDIR --heap-per-node BYTES [--cut]

With --answer it checks the header and the unusual ranking only (with --row, repeated: a row of
the ranking says ROW, and clicking it marks it): the one-line answer contains TEXT,
the ranking has rows, and clicking one marks it; with --marks, repeated: with every sample selected,
clicking the row that says ROW highlights N frames of the flame graph (the nodes its key counts);
with --unusual, that the ranking has no rows and says TEXT instead; with --log-omitted, that the
log pane says TEXT of the lines it left out and lists the trigger line; with --fact, repeated, that
the header says TEXT. --headers does that for
each page given after a "--", in one browser.

With --empty it checks the page of a bundle without samples: it says so, marks the trigger and
every log line on the time axis, and a drag over the CPU lanes or the arrow keys select a time
range of no samples on all CPUs, with no error.

With --heap-per-node it checks that the page, once loaded and collected, holds at most BYTES of
JavaScript heap per node of its call tree (and 16 MiB more), and that its flame graph has every
sample; it prints the heap and the timings. With --cut, that the tree was cut at its bound and the
header says how many stacks were cut.

With --bench it prints the timings only (heatmap drawn after load, a selection's redraw) and checks
nothing but the cell counts. Exit 0 when every check passes, 1 otherwise, 77 when no browser runs.
"""
import argparse
import json
import os
import re
import sys
import time

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
except ImportError as e:
    print("SKIP: python3-selenium is not installed: %s" % e, file=sys.stderr)
    sys.exit(77)

EVENT_LINE = re.compile(r"^(\S.*?)\s+(\d+)(?:/(\d+))?\s+\[(\d+)\]\s+(\d+)\.(\d{6}):")


def read_perf_script(path):
    """(t_us, cpu, comm) of every sample, from the event lines."""
    out = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if not line or line[0] in "#\t \n":
                continue
            m = EVENT_LINE.match(line)
            if not m:
                continue
            out.append((int(m.group(5)) * 1000000 + int(m.group(6)), int(m.group(4)), m.group(1)))
    return out


def flamescope_bins(samples, row_us=20000):
    first = min(t for t, _, _ in samples)
    base = first // 1000000 * 1000000
    rows = -(-1000000 // row_us)
    cols = (max(t for t, _, _ in samples) - base) // 1000000 + 1
    counts = [0] * (cols * rows)
    for t, _, _ in samples:
        col = (t - base) // 1000000
        row = (t - base - col * 1000000) // row_us
        counts[col * rows + row] += 1
    return base, cols, rows, counts


def start_browser(extra=()):
    opts = Options()
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--window-size=1500,1300", "--hide-scrollbars", "--force-device-scale-factor=1") + tuple(extra):
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    for binary in ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"):
        if os.path.exists(binary):
            opts.binary_location = binary
            break
    else:
        print("SKIP: no chromium binary", file=sys.stderr)
        sys.exit(77)
    driver_path = "/usr/bin/chromedriver"
    if not os.path.exists(driver_path):
        print("SKIP: no chromedriver (Debian package chromium-driver)", file=sys.stderr)
        sys.exit(77)
    try:
        return webdriver.Chrome(service=Service(driver_path), options=opts)
    except Exception as e:  # a browser that cannot start here: say why
        print("SKIP: chromium does not start: %s" % str(e).splitlines()[0], file=sys.stderr)
        sys.exit(77)


def check(cond, what):
    if not cond:
        print("FAIL: " + what, file=sys.stderr)
        sys.exit(1)
    print("ok: " + what)


def into_view(driver, element):
    """Scrolls element to the viewport's middle: pointer actions outside the viewport are refused
    (MoveTargetOutOfBounds), and keys used before may have scrolled the page elsewhere."""
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)


def drag(driver, element, x1, y1, x2, y2):
    """Real mouse actions from (x1, y1) to (x2, y2), in CSS pixels from the element's top left."""
    into_view(driver, element)
    r = driver.execute_script("const b = arguments[0].getBoundingClientRect(); return [b.width, b.height];", element)
    cx, cy = r[0] / 2, r[1] / 2  # selenium 4 offsets count from the element's centre
    a = ActionChains(driver)
    a.move_to_element_with_offset(element, int(x1 - cx), int(y1 - cy)).click_and_hold()
    a.move_to_element_with_offset(element, int((x1 + x2) / 2 - cx), int((y1 + y2) / 2 - cy))
    a.move_to_element_with_offset(element, int(x2 - cx), int(y2 - cy)).release().perform()


def click_at(driver, element, x, y):
    """A real click, with no movement in between, at (x, y) in CSS pixels from the element's top left."""
    into_view(driver, element)
    r = driver.execute_script("const b = arguments[0].getBoundingClientRect(); return [b.width, b.height];", element)
    ActionChains(driver).move_to_element_with_offset(element, int(x - r[0] / 2), int(y - r[1] / 2)).click().perform()


def load(driver, path):
    driver.get("file://" + os.path.abspath(path))
    for _ in range(600):
        if driver.execute_script("return document.body && document.body.dataset.ready === '1'"):
            break
        time.sleep(0.05)
    errors = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
    check(driver.execute_script("return document.body.dataset.ready") == "1",
          "the page ran its script (%s)" % (errors[:3] or "no console errors"))


def check_header(args, driver=None):
    own = driver is None
    if own:
        driver = start_browser()
    try:
        print("page: %s" % args.report)
        load(driver, args.report)
        answer = driver.find_element(By.ID, "answer").text
        check(args.answer in answer, "the one-line answer says %r: %r" % (args.answer, answer))
        facts = driver.find_element(By.ID, "facts").text
        for label in ("Rule", "Time", "Host", "Alignment", "Status"):
            check(label in facts, "the header shows %s" % label)
        for want in args.fact or []:
            check(want in facts, "the header says %r: %r" % (want, facts))
        rows = driver.find_elements(By.CSS_SELECTOR, "#unusual-body tr.rise")
        if args.unusual is not None:
            said = driver.find_element(By.ID, "unusual-body").text
            check(not rows and args.unusual in said, "the unusual ranking has no rows and says %r: %d rows, %r" %
                  (args.unusual, len(rows), said))
            driver.save_screenshot(os.path.join(args.outdir, "report-header-unusual.png"))
            return 0
        check(len(rows) > 0, "the unusual ranking has %d rows" % len(rows))
        rows[0].click()
        check("on" in rows[0].get_attribute("class").split(), "clicking a row marks it")
        rows[-1].send_keys(Keys.ENTER)
        check("on" in rows[-1].get_attribute("class").split(), "Enter on a row marks it, as a click does")
        for want in args.row or []:
            found = [r for r in rows if want in r.text]
            check(len(found) > 0, "a ranking row says %r: %r" % (want, [r.text for r in rows]))
            found[0].click()
            check("on" in found[0].get_attribute("class").split(), "clicking the row %r marks it" % want)
        for want, n in args.marks or []:
            found = [r for r in rows if want in r.text]
            check(len(found) > 0, "a ranking row says %r: %r" % (want, [r.text for r in rows]))
            driver.execute_script("window.tprof.select(0, 1e15, null)")
            if "on" in found[0].get_attribute("class").split():
                found[0].click()
            found[0].click()
            got = driver.execute_script("return window.tprof.highlighted()")
            check(got == int(n), "clicking the row %r highlights %s frames: %d" % (want, n, got))
            found[0].click()
        # A handler that throws still leaves its row marked: the console says so.
        for r in rows:
            r.click()
        errors = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
        check(not errors, "clicking every row of the ranking raised no error (%s)" % (errors[:3] or "none"))
        # counted in the page: a WebDriver reference to each of 20,000 lines takes seconds
        n_marks, n_logs, n_trig = driver.execute_script(
            "return ['#marks .mark', '#log-body .logline', '#log-body .logline.trigger'].map(q => document.querySelectorAll(q).length)")
        check(n_logs > 0, "the log lists %d lines (%d marked on the time axis)" % (n_logs, n_marks))
        if args.log_omitted:
            check(n_trig == 1, "the log lists the trigger line among its %d lines (%d)" % (n_logs, n_trig))
            said = driver.execute_script("const e = document.getElementById('log-omitted'); return e && !e.hidden ? e.textContent : ''")
            check(args.log_omitted in said, "the log says %r (%r)" % (args.log_omitted, said))
        driver.save_screenshot(os.path.join(args.outdir, "report-header.png"))
    finally:
        if own:
            driver.quit()
    return 0


def check_headers(argv):
    """--headers OUTDIR -- REPORT --answer TEXT [...] -- REPORT ...: check_header on each page, in
    one browser (a browser's start is seconds on a busy machine)."""
    ap = argparse.ArgumentParser(prog="report-browser.py --headers OUTDIR --")
    ap.add_argument("report")
    ap.add_argument("--answer", required=True)
    ap.add_argument("--row", action="append")
    ap.add_argument("--marks", nargs=2, action="append")
    ap.add_argument("--unusual", default=None)
    ap.add_argument("--log-omitted", default=None)
    ap.add_argument("--fact", action="append")
    groups, cur = [], None
    for a in argv[1:]:
        if a == "--":
            cur = []
            groups.append(cur)
        elif cur is not None:
            cur.append(a)
    driver = start_browser()
    try:
        for g in groups:
            args = ap.parse_args(g)
            args.outdir = argv[0]
            check_header(args, driver)
    finally:
        driver.quit()
    return 0


def check_empty(args):
    driver = start_browser()
    try:
        load(driver, args.report)
        answer = driver.find_element(By.ID, "answer").text
        check(answer.startswith("No samples in the slice"), "the page says the slice has no samples: %r" % answer)
        marks = driver.execute_script(
            "return Array.from(document.querySelectorAll('#marks .mark')).map(m => [m.className, m.title])")
        n_logs = len(driver.find_elements(By.CSS_SELECTOR, "#log-body .logline"))
        check(len(marks) == n_logs and any("trigger" in c for c, _ in marks),
              "%d of the %d log lines marked on the time axis, the trigger among them" % (len(marks), n_logs))
        lanes = driver.find_element(By.ID, "cpu-overlay")
        lay = driver.execute_script("return window.tprof.layout()")
        drag(driver, lanes, 2, lay["laneH"] / 2, 3 * lay["cellW"], lay["laneH"] / 2)
        sel = driver.execute_script("return window.tprof.selection()")
        info = driver.find_element(By.ID, "sel-info").text
        check(sel["cpus"] is None and sel["samples"] == 0 and info.endswith("all CPUs)"),
              "a drag over the empty lane selects no samples on all CPUs: %s, %r" % (sel, info))
        driver.execute_script("document.getElementById('rowms').focus()")
        ActionChains(driver).send_keys(Keys.TAB, Keys.ARROW_RIGHT).perform()
        sel = driver.execute_script("return window.tprof.selection()")
        check(sel["samples"] == 0 and sel["to"] - sel["from"] == 20000, "an arrow key selects one empty cell: %s" % sel)
        errors = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
        check(not errors, "no error (%s)" % (errors[:3] or "none"))
        driver.save_screenshot(os.path.join(args.outdir, "report-empty.png"))
    finally:
        driver.quit()
    return 0


def check_heap(args):
    driver = start_browser(("--enable-precise-memory-info", "--js-flags=--expose-gc"))
    try:
        load(driver, args.report)
        got = driver.execute_script("""gc();
            const D = JSON.parse(document.getElementById('tprof-data').textContent), t = window.tprof.timings;
            return { heap: performance.memory.usedJSHeapSize, nodes: D.n_nodes, samples: D.n_samples,
                     root: window.tprof.rootTotal(), decode_ms: t.decoded - t.start, heatmap_ms: t.heatmap }""")
        print("%d samples, %d nodes: %.1f MiB of heap (%.0f bytes a node), decoded in %.0f ms, heatmap drawn %.0f ms after navigation" %
              (got["samples"], got["nodes"], got["heap"] / 1048576, got["heap"] / max(1, got["nodes"]), got["decode_ms"], got["heatmap_ms"]))
        driver.find_element(By.ID, "select-all").click()
        check(driver.execute_script("return window.tprof.rootTotal()") == got["samples"] > 0,
              "the flame graph of everything holds all %d samples" % got["samples"])
        if args.cut:
            cut = driver.execute_script("return JSON.parse(document.getElementById('tprof-data').textContent).cut") or \
                {"stacks": 0, "samples": 0, "nodes_max": 0}
            facts = driver.find_element(By.ID, "facts").text
            said = "%d distinct stacks (%d samples of the slice) are shown only down to where they leave the page's call tree of %d frames" % (
                cut["stacks"], cut["samples"], cut["nodes_max"])
            check(cut["samples"] > 0 and got["nodes"] <= cut["nodes_max"] and said in facts,
                  "a tree past its bound is cut at %d nodes (%d) and the page says so: %r" % (cut["nodes_max"], got["nodes"], facts[-300:]))
        limit = args.heap_per_node * got["nodes"] + 16 * 1048576
        check(got["heap"] <= limit, "the page holds %d bytes of heap, at most %d (%d a node of %d)" %
              (got["heap"], limit, args.heap_per_node, got["nodes"]))
    finally:
        driver.quit()
    return 0


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--headers":
        return check_headers(sys.argv[2:])
    ap = argparse.ArgumentParser()
    ap.add_argument("report")
    ap.add_argument("perf_script")
    ap.add_argument("outdir")
    ap.add_argument("--search", default=None, help="a comm whose samples the search must count")
    ap.add_argument("--bench", action="store_true")
    ap.add_argument("--answer", default=None)
    ap.add_argument("--row", action="append", help="with --answer: a row of the ranking that says this")
    ap.add_argument("--marks", nargs=2, action="append", metavar=("ROW", "N"),
                    help="with --answer: clicking the row that says ROW highlights N frames")
    ap.add_argument("--unusual", default=None, help="with --answer: the ranking has no rows and says this")
    ap.add_argument("--log-omitted", default=None, help="with --answer: the log says this of the lines left out, and lists the trigger")
    ap.add_argument("--fact", action="append", help="with --answer: the header says this")
    ap.add_argument("--no-log", action="store_true", help="a ring range: no log lines to mark")
    ap.add_argument("--empty", action="store_true", help="a bundle without samples")
    ap.add_argument("--heap-per-node", type=int, default=None, help="the page's heap, at most, per node of its tree")
    ap.add_argument("--cut", action="store_true", help="with --heap-per-node: the tree is cut at its bound, and the page says so")
    args = ap.parse_args()
    if args.heap_per_node is not None:
        return check_heap(args)
    if args.answer is not None:
        return check_header(args)
    if args.empty:
        return check_empty(args)

    samples = read_perf_script(args.perf_script)
    if len(samples) < 2:
        print("FAIL: the perf-script file holds %d samples" % len(samples), file=sys.stderr)
        return 1
    base, cols, rows, want = flamescope_bins(samples)
    html = open(args.report, encoding="utf-8", errors="replace").read()

    driver = start_browser()
    try:
        t0 = time.monotonic()
        load(driver, args.report)
        timings = driver.execute_script("return window.tprof.timings")
        load_s = time.monotonic() - t0
        grid = driver.execute_script("return window.tprof.grid()")
        # A bundle's heatmap spans its whole slice: it may start whole seconds before Flamescope's
        # first column and end after its last, with nothing in those columns.
        pre = (base - grid["base_us"]) // 1000000
        check(grid["rows"] == rows and grid["base_us"] <= base and (base - grid["base_us"]) % 1000000 == 0 and
              grid["cols"] >= pre + cols,
              "heatmap covers %d seconds x %d rows of 20 ms from %d us (page: %d x %d from %d)" %
              (cols, rows, base, grid["cols"], grid["rows"], grid["base_us"]))
        base, cols = grid["base_us"], grid["cols"]
        want = [0] * (pre * rows) + want + [0] * ((cols - pre) * rows - len(want))
        diffs = [(i // rows, i % rows, w, g) for i, (w, g) in enumerate(zip(want, grid["counts"])) if w != g]
        check(not diffs, "every one of %d cells holds the samples of the perf-script file in it (%d samples)%s" %
              (len(want), len(samples), "; differing cells (col, row, file, page): %s" % diffs[:5] if diffs else ""))
        # one selection redraw, timed inside the page
        redraw = driver.execute_script("return window.tprof.select(arguments[0], arguments[1], null)",
                                       base, base + cols * 1000000)
        if args.bench:
            print(json.dumps({"samples": len(samples), "bytes": os.path.getsize(args.report),
                              "heatmap_drawn_ms": round(timings["heatmap"], 1),
                              "flame_drawn_ms": round(timings["flame"], 1),
                              "script_start_ms": round(timings["start"], 1),
                              "decode_ms": round(timings["decoded"] - timings["start"], 1),
                              "script_to_heatmap_ms": round(timings["heatmap"] - timings["start"], 1),
                              "selection_redraw_ms": round(redraw, 1), "wall_load_s": round(load_s, 2)}))
            return 0

        # the log lines on the time axis, the trigger among them, with their text on hover
        marks = driver.execute_script(
            "return Array.from(document.querySelectorAll('#marks .mark')).map(m => [m.className, m.title])")
        n_logs = len(driver.find_elements(By.CSS_SELECTOR, "#log-body .logline"))
        check(args.no_log or (len(marks) == n_logs and any("trigger" in c for c, _ in marks) and all(t for _, t in marks)),
              "%d of the %d log lines marked on the time axis, the trigger among them: %s" % (len(marks), n_logs, marks[:2]))

        # no network: nothing fetched, and a policy that forbids it
        res = driver.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
        check(res == [], "the page fetched nothing (resource entries: %s)" % res)
        check(re.search(r'http-equiv="Content-Security-Policy" content="default-src \'none\'', html) is not None,
              "the page carries a Content-Security-Policy of default-src 'none'")
        check(re.search(r'(src|href)\s*=\s*["\']?\s*(https?:)?//', html) is None and "@import" not in html,
              "no external script, style or link")

        # drag over the heatmap: from a cell a few seconds in to one a few seconds later
        lay = driver.execute_script("return window.tprof.layout()")
        cw, ch = lay["cellW"], lay["cellH"]
        heat = driver.find_element(By.ID, "heat-overlay")
        busy = [i for i, n in enumerate(want) if n > 0]
        k1 = busy[len(busy) // 5]
        k2 = busy[(len(busy) * 3) // 5]
        c1, r1, c2, r2 = k1 // rows, k1 % rows, k2 // rows, k2 % rows
        drag(driver, heat, c1 * cw + cw / 2, r1 * ch + ch / 2, c2 * cw + cw / 2, r2 * ch + ch / 2)
        expect = sum(want[k1:k2 + 1])
        total = driver.execute_script("return window.tprof.rootTotal()")
        sel = driver.execute_script("return window.tprof.selection()")
        attr = driver.find_element(By.ID, "flame").get_attribute("data-root-total")
        check(total == expect and int(attr) == expect and sel["samples"] == expect,
              "dragging from cell (%d, %d) to (%d, %d) gives a flame graph of the %d samples in those cells "
              "(root %s, attribute %s)" % (c1, r1, c2, r2, expect, total, attr))
        info = driver.find_element(By.ID, "sel-info").text
        check(info.startswith("%d samples" % expect), "the bar shows the count and the range: %r" % info)

        # search: the frames of one process, and the samples of the selection it holds
        if args.search:
            lo = base + (k1 // rows) * 1000000 + (k1 % rows) * 20000
            hi = base + (k2 // rows) * 1000000 + (k2 % rows + 1) * 20000
            want_m = sum(1 for t, _, comm in samples if lo <= t < hi and comm == args.search)
            box = driver.find_element(By.ID, "search")
            box.clear()
            box.send_keys("^%s$" % re.escape(args.search))
            got = int(driver.find_element(By.ID, "search-info").get_attribute("data-samples"))
            hl = driver.execute_script("return window.tprof.highlighted()")
            check(got == want_m and want_m > 0 and hl > 0,
                  "search '^%s$' highlights %d frames and counts %d samples (the file has %d in the selection)" %
                  (args.search, hl, got, want_m))
            driver.save_screenshot(os.path.join(args.outdir, "report-search.png"))
            box.clear()
            box.send_keys(" ")
            box.clear()
            driver.execute_script("document.getElementById('search').dispatchEvent(new Event('input'))")
            check(driver.execute_script("return window.tprof.highlighted()") == 0, "clearing the search clears the highlight")

        # a click on a cell, with no drag, selects that cell
        click_at(driver, heat, c2 * cw + cw / 2, r2 * ch + ch / 2)
        sel = driver.execute_script("return window.tprof.selection()")
        total = driver.execute_script("return window.tprof.rootTotal()")
        check(sel["from"] == base + c2 * 1000000 + r2 * 20000 and sel["to"] == base + c2 * 1000000 + (r2 + 1) * 20000 and
              total == want[k2],
              "a click on cell (%d, %d) selects its %d samples (from %s to %s, root %d)" %
              (c2, r2, want[k2], sel["from"], sel["to"], total))

        # the keyboard: Tab from the row-height list to the heatmap, an arrow selects the next cell,
        # Shift and an arrow grow the selection from there
        driver.execute_script("document.getElementById('rowms').focus()")
        ActionChains(driver).send_keys(Keys.TAB).perform()
        check(driver.execute_script("return document.activeElement.id") == "heat-overlay", "Tab reaches the heatmap")
        r3 = r2 - 1 if r2 > 0 else r2 + 1
        ActionChains(driver).send_keys(Keys.ARROW_UP if r2 > 0 else Keys.ARROW_DOWN).perform()
        sel = driver.execute_script("return window.tprof.selection()")
        total = driver.execute_script("return window.tprof.rootTotal()")
        check(sel["from"] == base + c2 * 1000000 + r3 * 20000 and total == want[c2 * rows + r3],
              "an arrow key selects cell (%d, %d) and its %d samples (from %s, root %d)" % (c2, r3, want[c2 * rows + r3], sel["from"], total))
        c4 = c2 - 1 if c2 > 0 else min(c2 + 1, cols - 1)
        ActionChains(driver).key_down(Keys.SHIFT).send_keys(Keys.ARROW_LEFT if c2 > 0 else Keys.ARROW_RIGHT).key_up(Keys.SHIFT).perform()
        ka, kb = sorted((c2 * rows + r3, c4 * rows + r3))
        total = driver.execute_script("return window.tprof.rootTotal()")
        check(total == sum(want[ka:kb + 1]), "Shift and an arrow grow it to cells (%d, %d)-(%d, %d): %d samples (root %d)" %
              (ka // rows, ka % rows, kb // rows, kb % rows, sum(want[ka:kb + 1]), total))
        # the flame graph: Tab to it, Up to the busiest process, Enter zooms to it, Escape zooms out
        lo, hi = base + ka // rows * 1000000 + ka % rows * 20000, base + kb // rows * 1000000 + (kb % rows + 1) * 20000
        by_comm = {}
        for t, _, comm in samples:
            if lo <= t < hi:
                by_comm[comm] = by_comm.get(comm, 0) + 1
        driver.execute_script("document.getElementById('select-all').focus()")
        ActionChains(driver).send_keys(Keys.TAB).perform()
        check(driver.execute_script("return document.activeElement.id") == "flame", "Tab reaches the flame graph")
        ActionChains(driver).send_keys(Keys.ARROW_UP).perform()
        foc = driver.execute_script("return window.tprof.focus()")
        check(foc is not None and foc["samples"] == max(by_comm.values()),
              "Up goes to the busiest process of the selection, %d samples: %s" % (max(by_comm.values()), foc))
        ActionChains(driver).send_keys(Keys.ENTER).perform()
        flame = driver.find_element(By.ID, "flame")
        check(flame.get_attribute("data-zoom") == str(foc["node"]), "Enter zooms to it (zoom %s)" % flame.get_attribute("data-zoom"))
        ActionChains(driver).send_keys(Keys.ESCAPE).perform()
        check(flame.get_attribute("data-zoom") == "0", "Escape zooms out (zoom %s)" % flame.get_attribute("data-zoom"))
        # a log line: Enter selects the second around it, as a click does
        if not args.no_log:
            driver.find_elements(By.CSS_SELECTOR, "#log-body .logline")[0].send_keys(Keys.ENTER)
            sel = driver.execute_script("return window.tprof.selection()")
            col = (sel["from"] - base) // 1000000
            total = driver.execute_script("return window.tprof.rootTotal()")
            check(sel["to"] - sel["from"] == 1000000 and total == sum(want[col * rows:(col + 1) * rows]),
                  "Enter on the first log line selects second %d and its %d samples (root %d)" %
                  (col, sum(want[col * rows:(col + 1) * rows]), total))
            # the heatmap's keys go on from that selection, not from the cell they last left
            driver.execute_script("document.getElementById('rowms').focus()")
            ActionChains(driver).send_keys(Keys.TAB, Keys.ARROW_RIGHT).perform()
            sel = driver.execute_script("return window.tprof.selection()")
            c5 = min(col + 1, cols - 1)
            check(sel["from"] == base + c5 * 1000000 and sel["to"] == sel["from"] + 20000,
                  "then Right in the heatmap selects the first cell of second %d (from %s, %.3f s)" %
                  (c5, sel["from"], (sel["from"] - base) / 1e6))

        # drag over the per-CPU lanes: the first CPU only, over the same seconds
        cpus = lay["cpus"]
        lane = lay["laneH"]
        lanes = driver.find_element(By.ID, "cpu-overlay")
        x1, x2 = c1 * cw + 1, (c2 + 1) * cw - 1
        drag(driver, lanes, x1, lane / 2, x2, lane / 2)
        sel = driver.execute_script("return window.tprof.selection()")
        lo, hi = sel["from"], sel["to"]
        want_c = sum(1 for t, cpu, _ in samples if lo <= t < hi and cpu == cpus[0])
        total = driver.execute_script("return window.tprof.rootTotal()")
        check(sel["cpus"] == [cpus[0]] or (len(cpus) == 1 and sel["cpus"] is None),
              "dragging along the first lane selects CPU %d (%s)" % (cpus[0], sel["cpus"]))
        check(total == want_c, "the flame graph of CPU %d from %.3f to %.3f s holds its %d samples (root %d)" %
              (cpus[0], (lo - base) / 1e6, (hi - base) / 1e6, want_c, total))

        # the default view again, for the picture: the trigger's seconds, in the differential view
        driver.find_element(By.ID, "select-all").click()
        check(driver.execute_script("return window.tprof.rootTotal()") == len(samples),
              "select all: the root holds all %d samples" % len(samples))
        driver.execute_script("window.scrollTo(0, 0)")
        driver.save_screenshot(os.path.join(args.outdir, "report.png"))
        driver.find_element(By.ID, "diff").click()
        driver.save_screenshot(os.path.join(args.outdir, "report-diff.png"))
        print("screenshots in %s; heatmap drawn %.0f ms after navigation, selection redraw %.1f ms" %
              (args.outdir, timings["heatmap"], redraw))
    finally:
        driver.quit()
    return 0


if __name__ == "__main__":
    sys.exit(main())
