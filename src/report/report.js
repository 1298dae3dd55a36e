// SPDX-License-Identifier: LGPL-2.1-or-later
// tprof report.html: the Flamescope view of a bundle (sub-second heatmap, per-CPU lanes, log marks),
// the flame graph of any selection (search, zoom, differential against the baseline) and the
// unusual ranking. Everything comes from the JSON document in #tprof-data (written by
// src/report/report-stacks.c, whose header describes the encoding); nothing is fetched.
'use strict';
(function () {
  const T_START = performance.now();
  const D = JSON.parse(document.getElementById('tprof-data').textContent);
  const T_PARSED = performance.now();
  const $ = (id) => document.getElementById(id);
  const US = 1e6;

  // ---- decoding ----
  function bytes(b64) {
    const bin = atob(b64 || '');
    const a = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) a[i] = bin.charCodeAt(i);
    return a;
  }
  // LEB128 varints; decoded inline in the loops below (a call per varint costs at 10^5 samples)
  function Reader(a) { this.a = a; this.p = 0; }
  Reader.prototype.more = function () { return this.p < this.a.length; };
  Reader.prototype.v = function () {
    const a = this.a;
    let p = this.p, b = a[p++], x = b & 127;
    if (b & 128) { let m = 128; do { b = a[p++]; x += (b & 127) * m; m *= 128; } while (b & 128); }
    this.p = p;
    return x;
  };

  const frames = D.frames || [];
  const nNodes = D.n_nodes || 1;
  const parent = new Int32Array(nNodes), frameOf = new Int32Array(nNodes), depth = new Int32Array(nNodes);
  parent[0] = -1;
  {
    const a = bytes(D.nodes);
    let p = 0;
    for (let i = 1; i < nNodes; i++) {
      let b = a[p++], x = b & 127;
      if (b & 128) { let m = 128; do { b = a[p++]; x += (b & 127) * m; m *= 128; } while (b & 128); }
      parent[i] = i - x;
      b = a[p++]; x = b & 127;
      if (b & 128) { let m = 128; do { b = a[p++]; x += (b & 127) * m; m *= 128; } while (b & 128); }
      frameOf[i] = x;
      depth[i] = depth[parent[i]] + 1;
    }
  }
  // Interrupt work, as the rankings key it ("[irq]", bundle-analyze.h folded_stack_irq(),
  // profile-irq.h profile_irq_step()): under a swapper root, the nodes from an interrupt's or a
  // softirq's frame on (D.irq_frames, D.softirq_frames), unless one of the idle loop's follows
  // (D.idle_frames); under any other root, the nodes from an interrupt's entry on (D.irq_frames),
  // unless the task's own way back from one follows (D.irq_return_frames). The frame nearest the
  // leaf that says decides, as the rankings' walk from the leaf does. irqState[i]: 0 a process's
  // own, 1 the idle task's idle, 2 interrupt work in the idle task, 3 in another.
  const IRQ_KEY = '[irq]';
  const irqState = new Uint8Array(nNodes);
  {
    const kind = new Uint8Array(frames.length);
    (D.irq_frames || []).forEach((f) => { kind[f] = 1; });
    (D.softirq_frames || []).forEach((f) => { kind[f] = 2; });
    (D.irq_return_frames || []).forEach((f) => { kind[f] = 3; });
    (D.idle_frames || []).forEach((f) => { kind[f] = 4; });
    for (let i = 1; i < nNodes; i++) {
      const p = parent[i], k = kind[frameOf[i]], s = irqState[p];
      if (p === 0) irqState[i] = isIdleComm(frames[frameOf[i]]) ? 1 : 0;
      else if (s === 1 || s === 2) irqState[i] = k === 1 || k === 2 ? 2 : k === 4 ? 1 : s;
      else irqState[i] = k === 1 ? 3 : k === 3 ? 0 : s;
    }
  }
  function isIdleComm(c) { return c === 'swapper' || (c.length > 8 && c.startsWith('swapper/')); }
  const T_NODES = performance.now();
  const stackNode = new Int32Array(D.n_stacks || 0);
  {
    const r = new Reader(bytes(D.stacks));
    for (let i = 0; i < stackNode.length; i++) stackNode[i] = r.v();
  }
  const N = D.n_samples || 0;
  const T = new Float64Array(N), C = new Int32Array(N), S = new Int32Array(N);
  const groups = []; // {cpu, start, end}: samples of one CPU, in time order
  {
    const r = new Reader(bytes(D.samples)), a = r.a, q = D.quantum_us || 1;
    let k = 0;
    while (r.more() && k < N) {
      const cpu = r.v(), n = r.v(), start = k;
      let t = D.t0_us || 0, p = r.p;
      for (let i = 0; i < n && k < N; i++, k++) {
        let b = a[p++], x = b & 127;
        if (b & 128) { let m = 128; do { b = a[p++]; x += (b & 127) * m; m *= 128; } while (b & 128); }
        t += x * q;
        b = a[p++]; x = b & 127;
        if (b & 128) { let m = 128; do { b = a[p++]; x += (b & 127) * m; m *= 128; } while (b & 128); }
        T[k] = t; C[k] = cpu; S[k] = stackNode[x];
      }
      r.p = p;
      groups.push({ cpu: cpu, start: start, end: k });
    }
  }
  const T_SAMPLES = performance.now();
  const baseCount = new Float64Array(nNodes);
  let baseTotal = 0;
  {
    const r = new Reader(bytes(D.baseline));
    while (r.more()) { const node = r.v(), c = r.v(); baseCount[node] += c; baseTotal += c; }
  }
  const baseTot = new Float64Array(baseCount);
  for (let i = nNodes - 1; i > 0; i--) baseTot[parent[i]] += baseTot[i];

  // children, sorted by name as flamegraph.pl sorts them: node i's are kidList[kidStart[i] ..
  // kidStart[i + 1]), in two typed arrays (an array per node took 80 bytes a node more and five
  // times the time: 900,000 nodes, 12,788 stacks 127 frames deep, cost 116 MB and 0.47 s)
  const kidStart = new Int32Array(nNodes + 1), kidList = new Int32Array(Math.max(0, nNodes - 1));
  for (let i = 1; i < nNodes; i++) kidStart[parent[i] + 1]++;
  for (let i = 0; i < nNodes; i++) kidStart[i + 1] += kidStart[i];
  {
    const next = kidStart.slice(0, nNodes);
    for (let i = 1; i < nNodes; i++) kidList[next[parent[i]]++] = i;
  }
  const kids = (i) => kidList.subarray(kidStart[i], kidStart[i + 1]);
  const rank = new Int32Array(frames.length);
  frames.map((f, i) => i).sort((a, b) => (frames[a] < frames[b] ? -1 : frames[a] > frames[b] ? 1 : 0)).forEach((f, i) => { rank[f] = i; });
  for (let i = 0; i < nNodes; i++)
    if (kidStart[i + 1] - kidStart[i] > 1) kids(i).sort((a, b) => rank[frameOf[a]] - rank[frameOf[b]]);
  const cpus = groups.map((g) => g.cpu).sort((a, b) => a - b);
  const cpuRow = new Map(cpus.map((c, i) => [c, i]));
  const T_DECODED = performance.now();

  // ---- time ----
  let first = Infinity, last = -Infinity;
  for (const g of groups) if (g.end > g.start) { first = Math.min(first, T[g.start]); last = Math.max(last, T[g.end - 1]); }
  if (!isFinite(first)) { first = D.slice_from_us || D.trigger_us || 0; last = D.slice_to_us || first; }
  // Flamescope's columns count from floor(first sample) and end with the last one's; a bundle's
  // columns span its whole slice, so the trigger and every log line have their place on the axis
  // even where tprofd was not sampling (it started or stopped inside the slice). The cells are the
  // same whole seconds of the perf clock either way.
  let spanFrom = first, spanTo = last;
  if (D.kind === 'bundle' && D.slice_from_us !== undefined && D.slice_to_us > D.slice_from_us) {
    spanFrom = Math.min(spanFrom, D.slice_from_us);
    spanTo = Math.max(spanTo, D.slice_to_us - 1);
  }
  const base = Math.floor(spanFrom / US) * US;
  const nCols = Math.max(1, Math.floor((spanTo - base) / US) + 1);
  const off = D.realtime_offset_us;
  function wall(tUs, withDate) {
    if (off === undefined) return '';
    const d = new Date((tUs + off) / 1000), s = d.toISOString();
    return withDate ? s.replace('T', ' ').replace('Z', ' UTC') : s.slice(11, 23);
  }
  function rel(tUs) {
    if (D.trigger_us === undefined) return ((tUs - base) / US).toFixed(3) + ' s';
    const x = (tUs - D.trigger_us) / US;
    return (x >= 0 ? '+' : '\u2212') + Math.abs(x).toFixed(3) + ' s';
  }
  const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c]));
  const pct = (x) => (x > 0 && x < 0.0005 ? '<0.1%' : (100 * x).toFixed(1) + '%');

  // ---- tooltip ----
  const tip = $('tooltip');
  function showTip(ev, text) { tip.textContent = text; tip.hidden = false; tip.style.left = Math.min(ev.clientX + 12, innerWidth - 300) + 'px'; tip.style.top = (ev.clientY + 14) + 'px'; }
  function hideTip() { tip.hidden = true; }

  // ---- header ----
  // As show judges a comparison: against a baseline (or a rest of the bundle around the event) of
  // fewer than samples_min samples a rise is noise, and nothing is told from it.
  const baselineFew = (a) => a.baseline_total < a.samples_min;
  const nothingComparable = (a) => baselineFew(a) && (!a.near || a.near.rest_total < a.samples_min);

  function header() {
    const h = D.header || {};
    $('title').textContent = D.kind === 'bundle' ? 'Bundle ' + (h.id || '') : 'Ring range ' + (h.from_utc || '') + ' .. ' + (h.to_utc || '');
    const a = D.analysis;
    let ans = '';
    if ((a ? a.slice_total : N) === 0 || h.status === 'no-coverage') ans = 'No samples in the slice (tprofd was not sampling then); the log below is what there is.';
    else if (a && a.answer) {
      // The rise tprof-bundle show names: from "near" (the event's own seconds) or the "slice", a
      // process or a function ("comm;function": the function, in its process).
      const r = a.answer, near = r.from === 'near', fn = r.kind === 'function', cut = r.name.indexOf(';');
      // Of a group's rise ("pool-*"), the one thread that carried it, the group after it.
      const comm = fn && cut >= 0 ? r.name.slice(0, cut) : r.name, grp = r.thread ? 'one of ' + (r.thread_of ? 'its' : 'the') + ' threads <b>' + esc(comm) + '</b>' : '';
      const who = (fn && cut >= 0 ? '<b>' + esc(r.name.slice(cut + 1)) + '</b> in ' : '') + '<b>' + esc(r.thread || comm) + '</b>' + (!r.thread && r.processes ? ' (' + r.processes + ' processes)' : '');
      ans = (r.clear === false ? 'No clear rise; the strongest: ' : '') + who + (r.thread_of ? ' of <b>' + esc(r.thread_of) + '</b>' : '') + (grp || r.where ? ' (' + grp + (grp && r.where ? '; ' : '') + esc(r.where || '') + ')' : '') + ' rose to ' + pct(r.slice_share) + ' of the samples' + (near ? ' around the event' : '') +
        ' (' + (near ? 'the rest of the bundle ' : 'baseline ') + pct(r.baseline_share) + ', z=' + r.z.toFixed(1) + ')' +
        (!fn && r.top_function ? '; its function that rose most: <b>' + esc(r.top_function) + '</b>' : '') +
        (r.under && r.under !== r.top_function ? (r.top_function ? ',' : ';') + ' most of the rise under <b>' + esc(r.under) + '</b>' : '') + '.';
    } else if (a && (!a.has_slice || !a.has_baseline)) ans = 'No comparison with the baseline possible (missing stacks).';
    // A baseline (or a rest) too small to compare with, as show says it: nothing could be told.
    else if (a && nothingComparable(a))
      ans = 'No comparison possible: the baseline has ' + a.baseline_total + ' samples, too few to compare with; see the flame graph.';
    else if (a && baselineFew(a))
      ans = 'Nothing rose significantly around the event against the rest of the bundle (the baseline has ' + a.baseline_total + ' samples, too few to compare the slice with); see the flame graph.';
    else if (a) ans = 'Nothing rose significantly against the baseline; see the flame graph.';
    else ans = N + ' samples; no baseline in a ring range.';
    // What stopped at the event, as show says it.
    if (a && a.fall) ans += ' <b>' + esc(a.fall.name) + '</b>' + (a.fall.processes ? ' (' + a.fall.processes + ' processes)' : '') + (a.fall.thread_of ? ' of <b>' + esc(a.fall.thread_of) + '</b>' : '') + (a.fall.where ? ' (' + esc(a.fall.where) + ')' : '') + ' fell to ' + pct(a.fall.near_share) +
      ' of the samples around the event (the rest of the bundle ' + pct(a.fall.rest_share) + ', z=' + a.fall.z.toFixed(1) + ').';
    $('answer').innerHTML = ans;
    const f = [];
    const add = (k, v) => { if (v !== undefined && v !== null && v !== '') f.push('<dt>' + esc(k) + '</dt><dd>' + esc(v) + '</dd>'); };
    if (D.kind === 'bundle') {
      // Who was killed, first: the event's line names the task that asked for memory.
      if (D.oom_victim) add('Killed', D.oom_victim.comm + ' (pid ' + D.oom_victim.pid + '), by the OOM killer');
      add('Rule', (h.rule || '-') + (h.rule_description ? ' - ' + h.rule_description : ''));
      add('Time', h.utc);
      add('Line', h.message);
      add('Host', (h.host || '-') + ', kernel ' + (h.kernel || '-'));
      add('Status', h.status);
      if (h.interrupted) add('Interrupted', 'tprofd stopped while recording the slice; its next start' + (h.interrupted.resumed_utc ? ', at ' + h.interrupted.resumed_utc + ',' : '') + ' finished the bundle');
      add('Alignment', (h.alignment || '-') + (h.alignment_error_ns !== undefined ? ', event time within \u00b1' + (h.alignment_error_ns < 1000 ? '1us' : Math.round(h.alignment_error_ns / 1000) + 'us') : ''));
      add('Slice', (h.slice_samples || 0) + ' samples, ' + (h.lost || 0) + ' lost (' + (h.freq_hz || '?') + ' Hz ' + (h.event || '') + ', ' + (h.n_cpus || '?') + ' CPUs)');
      add('Baseline', baseTotal + ' samples outside the slice');
      if (h.repeats > 1) add('Repeats', h.repeats + ' times within the cooldown');
      add('Note', h.note);
      add('Source', h.source);
      if (D.captured_cpu !== undefined) add('Captured CPU', D.captured_cpu);
      if (D.windows_unreadable || D.chunks_damaged)
        add('Missing', (D.windows_unreadable || 0) + ' pinned windows could not be read, ' + (D.chunks_damaged || 0) + ' damaged chunks skipped: their samples are not shown');
    } else {
      add('Range', (h.from_utc || '') + ' .. ' + (h.to_utc || ''));
      add('Host', (h.host || '-') + ', kernel ' + (h.kernel || '-'));
      add('Samples', N + ' (' + (h.freq_hz || '?') + ' Hz ' + (h.event || '') + ', ' + (h.n_cpus || '?') + ' CPUs), ' + (h.lost || 0) + ' lost');
      add('Alignment', h.alignment);
    }
    // A call tree too large for a page (deep stacks nearly all distinct) is cut: every sample is
    // there, with its time and CPU, but these stacks only down to where they leave the tree.
    const cut = D.cut;
    if (cut && cut.stacks)
      add('Cut stacks', cut.stacks + ' distinct stacks (' + cut.samples + ' samples of the slice' + (D.kind === 'bundle' ? ', ' + cut.baseline + ' of the baseline' : '') +
        ') are shown only down to where they leave the page\'s call tree of ' + cut.nodes_max + ' frames (' + (cut.frame_bytes_max >> 20) + ' MiB of names); ' +
        (D.kind === 'bundle' ? 'stacks.folded has them whole' : 'export has them whole'));
    $('facts').innerHTML = f.join('');
    document.title = D.title || document.title;
  }

  // ---- heatmap (Flamescope's binning) ----
  let rowUs = 20000, nRows = 50, cellW = 8, cellH = 6, counts = null, maxCount = 1;
  const heat = $('heatmap'), heatOv = $('heat-overlay'), cpuCv = $('cpus'), cpuOv = $('cpu-overlay');
  const dpr = window.devicePixelRatio || 1;
  function sizeCanvas(cv, w, h) {
    cv.width = Math.round(w * dpr); cv.height = Math.round(h * dpr);
    cv.style.width = w + 'px'; cv.style.height = h + 'px';
    const g = cv.getContext('2d'); g.setTransform(dpr, 0, 0, dpr, 0, 0); return g;
  }
  function cellOf(t) {
    const o = t - base, col = Math.floor(o / US);
    return [col, Math.floor((o - col * US) / rowUs)];
  }
  function binAll() {
    nRows = Math.ceil(US / rowUs);
    counts = new Uint32Array(nCols * nRows);
    for (let i = 0; i < N; i++) {
      const o = T[i] - base, col = Math.floor(o / US);
      counts[col * nRows + Math.floor((o - col * US) / rowUs)]++;
    }
    maxCount = 1;
    for (let i = 0; i < counts.length; i++) if (counts[i] > maxCount) maxCount = counts[i];
  }
  function heatColor(n) {
    if (n === 0) return '#f4f4f6';
    const x = Math.sqrt(n / maxCount); // Flamescope-like: light to dark red
    const r = Math.round(255 - 60 * x), g = Math.round(235 - 215 * x), b = Math.round(215 - 195 * x);
    return 'rgb(' + r + ',' + g + ',' + b + ')';
  }
  function drawHeat() {
    const avail = Math.max(300, $('heat-scroll').clientWidth - 4);
    cellW = Math.max(3, Math.min(40, Math.floor(avail / nCols)));
    cellH = Math.max(2, Math.min(8, Math.floor(300 / nRows)));
    const W = nCols * cellW, H = nRows * cellH;
    const g = sizeCanvas(heat, W, H);
    sizeCanvas(heatOv, W, H);
    for (let c = 0; c < nCols; c++)
      for (let r = 0; r < nRows; r++) {
        g.fillStyle = heatColor(counts[c * nRows + r]);
        g.fillRect(c * cellW, r * cellH, cellW - (cellW > 4 ? 1 : 0), cellH);
      }
    heat.dataset.cols = nCols; heat.dataset.rows = nRows; heat.dataset.rowMs = rowUs / 1000; heat.dataset.samples = N;
    // axis: seconds from the first column
    const ax = $('heat-axis'), step = Math.max(1, Math.ceil(40 / cellW));
    let html = '';
    for (let c = 0; c < nCols; c += step) html += '<span style="left:' + (c * cellW + cellW / 2) + 'px">' + c + '</span>';
    ax.innerHTML = html; ax.style.width = W + 'px';
    // marks: every log line at its time, the trigger in red
    const mk = $('marks');
    mk.style.width = W + 'px';
    mk.innerHTML = '';
    (D.logs || []).forEach((l, i) => {
      const x = (l[0] - base) / US * cellW;
      if (x < 0 || x > W) return;
      const d = document.createElement('div');
      d.className = 'mark' + (l[1] ? ' trigger' : '');
      d.style.left = x + 'px';
      d.title = (l[2] || wall(l[0])) + ' ' + rel(l[0]) + '\n' + l[4];
      d.dataset.index = i;
      d.addEventListener('click', () => selectAround(l[0]));
      mk.appendChild(d);
    });
    drawCpus();
    drawOverlays();
  }
  // per-CPU lanes: bins of 1/cellW s (one pixel), samples per bin as colour
  let laneH = 8;
  function drawCpus() {
    const W = nCols * cellW, nl = Math.max(1, cpus.length);
    laneH = Math.max(2, Math.min(12, Math.floor(240 / nl)));
    const H = nl * laneH;
    const g = sizeCanvas(cpuCv, W, H);
    sizeCanvas(cpuOv, W, H);
    const bins = new Uint32Array(nl * W);
    let mx = 1;
    for (const gr of groups) {
      const row = cpuRow.get(gr.cpu);
      for (let i = gr.start; i < gr.end; i++) {
        const x = Math.min(W - 1, Math.floor((T[i] - base) / US * cellW));
        const v = ++bins[row * W + x];
        if (v > mx) mx = v;
      }
    }
    g.fillStyle = '#f4f4f6'; g.fillRect(0, 0, W, H);
    for (let r = 0; r < nl; r++)
      for (let x = 0; x < W; x++) {
        const v = bins[r * W + x];
        if (!v) continue;
        const s = Math.sqrt(v / mx);
        g.fillStyle = 'rgb(' + Math.round(230 - 200 * s) + ',' + Math.round(240 - 150 * s) + ',' + Math.round(255 - 90 * s) + ')';
        g.fillRect(x, r * laneH, 1, laneH - (laneH > 3 ? 1 : 0));
      }
    const lab = $('cpu-labels');
    lab.innerHTML = laneH >= 8 ? cpus.map((c, i) => '<div style="position:absolute;top:' + (i * laneH - 2) + 'px;left:2px">' + c + '</div>').join('') : '';
    cpuCv.dataset.cpus = cpus.join(',');
  }

  // ---- selection ----
  // {from, to}: perf µs, [from, to); cpus: null (all) or a Set
  let sel = { from: first, to: last + 1, cpus: null };
  function drawOverlays() {
    const W = nCols * cellW;
    let g = heatOv.getContext('2d');
    g.clearRect(0, 0, W, nRows * cellH);
    // the selection stays vivid, the rest is dimmed: every cell whose time range is inside it
    g.fillStyle = 'rgba(255,255,255,0.6)';
    g.fillRect(0, 0, W, nRows * cellH);
    const c0 = Math.floor((sel.from - base) / US), c1 = Math.floor((sel.to - 1 - base) / US);
    g.strokeStyle = 'rgba(20,60,160,0.9)'; g.lineWidth = 1;
    for (let c = Math.max(0, c0); c <= Math.min(nCols - 1, c1); c++) {
      const s0 = base + c * US;
      const r0 = c === c0 ? Math.floor((sel.from - s0) / rowUs) : 0;
      const r1 = c === c1 ? Math.floor((sel.to - 1 - s0) / rowUs) : nRows - 1;
      g.clearRect(c * cellW, r0 * cellH, cellW, (r1 - r0 + 1) * cellH);
    }
    if (D.trigger_us !== undefined) {
      const t = cellOf(D.trigger_us);
      g.strokeStyle = '#b3261e'; g.lineWidth = 2;
      g.strokeRect(t[0] * cellW - 1, t[1] * cellH - 1, cellW + 1, cellH + 2);
    }
    g = cpuOv.getContext('2d');
    g.clearRect(0, 0, W, cpuCv.height);
    g.fillStyle = 'rgba(255,255,255,0.65)';
    g.fillRect(0, 0, W, cpus.length * laneH);
    const x0 = (sel.from - base) / US * cellW, x1 = (sel.to - base) / US * cellW;
    cpus.forEach((c, i) => { if (!sel.cpus || sel.cpus.has(c)) g.clearRect(x0, i * laneH, Math.max(1, x1 - x0), laneH); });
    if (D.trigger_us !== undefined) {
      const x = (D.trigger_us - base) / US * cellW;
      g.fillStyle = '#b3261e'; g.fillRect(x - 1, 0, 2, cpus.length * laneH);
    }
  }
  function cellAt(ev) {
    const b = heatOv.getBoundingClientRect();
    const c = Math.max(0, Math.min(nCols - 1, Math.floor((ev.clientX - b.left) / cellW)));
    const r = Math.max(0, Math.min(nRows - 1, Math.floor((ev.clientY - b.top) / cellH)));
    return [c, r];
  }
  function cellStart(c, r) { return base + c * US + r * rowUs; }
  function cellEnd(c, r) { return Math.min(base + c * US + (r + 1) * rowUs, base + (c + 1) * US); }
  // A drag selects from the cell it started in to the one under the mouse: a click, the one cell.
  let drag = null;
  function heatDragTo(c) {
    const a = drag.a, k1 = a[0] * nRows + a[1], k2 = c[0] * nRows + c[1];
    const lo = k1 <= k2 ? a : c, hi = k1 <= k2 ? c : a;
    sel = { from: cellStart(lo[0], lo[1]), to: cellEnd(hi[0], hi[1]), cpus: null };
    drawOverlays();
  }
  function cellTip(ev, c) {
    const n = counts[c[0] * nRows + c[1]];
    showTip(ev, 'second ' + c[0] + ', ' + (c[1] * rowUs / 1000) + '-' + ((c[1] + 1) * rowUs / 1000) + ' ms: ' + n + ' sample' + (n === 1 ? '' : 's') +
      '\n' + wall(cellStart(c[0], c[1])) + ' (' + rel(cellStart(c[0], c[1])) + ')');
  }
  // The keyboard's cell and the end of the selection it grows from (with Shift), where the mouse
  // left them; forgotten when anything else selects, so the arrows go on from that selection.
  let keyCell = null, keyAnchor = null;
  function setSelection(s) { sel = s; keyCell = keyAnchor = null; }
  heatOv.addEventListener('mousedown', (ev) => {
    ev.preventDefault();
    drag = { a: cellAt(ev), kind: 'heat' };
    keyCell = keyAnchor = drag.a;
    heatOv.focus({ preventScroll: true });
    heatDragTo(drag.a);
  });
  heatOv.addEventListener('mousemove', (ev) => {
    const c = cellAt(ev);
    cellTip(ev, c);
    if (drag && drag.kind === 'heat') { keyCell = c; heatDragTo(c); }
  });
  heatOv.addEventListener('mouseleave', hideTip);
  // Keyboard (Tab to the heatmap): the arrows select the next cell, with Shift they grow the
  // selection from the cell it started in; the flame graph follows at once.
  heatOv.tabIndex = 0;
  heatOv.addEventListener('keydown', (ev) => {
    const d = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] }[ev.key];
    if (!d || ev.altKey || ev.ctrlKey || ev.metaKey) return;
    ev.preventDefault();
    const prev = keyCell || cellOf(Math.max(sel.from, base));
    const c = [Math.max(0, Math.min(nCols - 1, prev[0] + d[0])), Math.max(0, Math.min(nRows - 1, prev[1] + d[1]))];
    if (!ev.shiftKey) keyAnchor = c;
    else if (!keyAnchor) keyAnchor = prev;
    keyCell = c;
    drag = { a: keyAnchor, kind: 'heat' };
    heatDragTo(c);
    drag = null;
    zoomNode = 0;
    update();
    const b = heatOv.getBoundingClientRect();
    cellTip({ clientX: b.left + (c[0] + 1) * cellW, clientY: b.top + (c[1] + 1) * cellH }, c);
  });
  heatOv.addEventListener('blur', hideTip);
  function binAt(ev) {
    const b = cpuOv.getBoundingClientRect();
    const x = Math.max(0, Math.min(nCols * cellW - 1, Math.floor(ev.clientX - b.left)));
    const r = Math.max(0, Math.min(cpus.length - 1, Math.floor((ev.clientY - b.top) / laneH)));
    return [x, r];
  }
  function cpuDragTo(p) {
    const a = drag.a;
    const x0 = Math.min(a[0], p[0]), x1 = Math.max(a[0], p[0]) + 1;
    const set = new Set();
    if (cpus.length) // no samples: one empty lane, no CPU
      for (let i = Math.min(a[1], p[1]); i <= Math.max(a[1], p[1]); i++) set.add(cpus[i]);
    setSelection({ from: base + x0 / cellW * US, to: base + x1 / cellW * US, cpus: set.size === cpus.length ? null : set });
    drawOverlays();
  }
  cpuOv.addEventListener('mousedown', (ev) => { ev.preventDefault(); drag = { a: binAt(ev), kind: 'cpu' }; cpuDragTo(drag.a); });
  cpuOv.addEventListener('mousemove', (ev) => {
    const p = binAt(ev), t = base + p[0] / cellW * US;
    showTip(ev, (cpus.length ? 'CPU ' + cpus[p[1]] : 'no samples') + ', ' + wall(t) + ' (' + rel(t) + ')');
    if (drag && drag.kind === 'cpu') cpuDragTo(p);
  });
  cpuOv.addEventListener('mouseleave', hideTip);
  window.addEventListener('mouseup', () => { if (drag) { drag = null; zoomNode = 0; update(); } });

  function selectAround(t) {
    const c = cellOf(t);
    setSelection({ from: base + c[0] * US, to: base + (c[0] + 1) * US, cpus: null });
    zoomNode = 0; drawOverlays(); update();
  }

  // ---- flame graph ----
  let tot = new Float64Array(nNodes), selTotal = 0, zoomNode = 0, focusNode = -1;
  function lowerBound(a, lo, hi, x) { while (lo < hi) { const m = (lo + hi) >> 1; if (a[m] < x) lo = m + 1; else hi = m; } return lo; }
  function countSelection() {
    tot = new Float64Array(nNodes);
    selTotal = 0;
    for (const g of groups) {
      if (sel.cpus && !sel.cpus.has(g.cpu)) continue;
      const i0 = lowerBound(T, g.start, g.end, sel.from), i1 = lowerBound(T, g.start, g.end, sel.to);
      for (let i = i0; i < i1; i++) tot[S[i]]++;
      selTotal += i1 - i0;
    }
    for (let i = nNodes - 1; i > 0; i--) tot[parent[i]] += tot[i];
  }
  const flame = $('flame');
  const ROW = 16;
  let rects = [], searchRe = null, searchSet = null, highlight = null, diff = false;
  function hashColor(name) {
    let h = 0;
    for (let i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) >>> 0;
    const v1 = (h % 1000) / 1000, v2 = ((h >>> 10) % 1000) / 1000;
    return 'rgb(' + Math.round(205 + 50 * v2) + ',' + Math.round(230 * v1) + ',' + Math.round(55 * v2) + ')';
  }
  function diffColor(i) {
    const s = selTotal ? tot[i] / selTotal : 0, b = baseTotal ? baseTot[i] / baseTotal : 0, d = s - b;
    const x = Math.min(1, Math.abs(d) * 5);
    if (Math.abs(d) < 1e-9) return 'rgb(235,235,235)';
    const k = Math.round(235 - 200 * x);
    return d > 0 ? 'rgb(235,' + k + ',' + k + ')' : 'rgb(' + k + ',' + k + ',235)';
  }
  function matches(i) { return searchSet ? searchSet[i] === 1 : false; }
  function drawFlame() {
    const W = Math.max(400, $('flame-box').clientWidth);
    // the zoomed node and its ancestors take the whole width
    const chain = [];
    for (let z = zoomNode; z > 0; z = parent[z]) chain.unshift(z);
    let maxD = 0;
    const items = [];
    const scale = tot[zoomNode] > 0 ? W / tot[zoomNode] : 0;
    items.push([0, 0, W]);
    chain.forEach((z) => { items.push([z, 0, W]); });
    (function walk(i, x) {
      let cx = x;
      for (const k of kids(i)) {
        const w = tot[k] * scale;
        if (w >= 0.4) { items.push([k, cx, w]); if (depth[k] > maxD) maxD = depth[k]; walk(k, cx); }
        cx += w;
      }
    })(zoomNode, 0);
    maxD = Math.max(maxD, depth[zoomNode]);
    const H = (maxD + 1) * ROW + 4;
    const g = sizeCanvas(flame, W, H);
    g.font = '11px system-ui, sans-serif';
    g.textBaseline = 'middle';
    rects = [];
    let matchedFrames = 0;
    for (const it of items) {
      const i = it[0], x = it[1], w = it[2], y = H - (depth[i] + 1) * ROW;
      const name = i === 0 ? 'all' : frames[frameOf[i]];
      const hit = matches(i) || (highlight && highlight[i] === 1);
      if (hit) matchedFrames++;
      g.fillStyle = hit ? 'rgb(230,0,230)' : i === 0 ? 'rgb(200,200,200)' : diff ? diffColor(i) : hashColor(name);
      g.fillRect(x, y, Math.max(0.5, w - 0.5), ROW - 1);
      if (w > 28) {
        g.fillStyle = '#000';
        const label = i === 0 ? 'all (' + tot[0] + ' samples)' : name;
        const maxc = Math.floor((w - 6) / 6.2);
        g.fillText(label.length > maxc ? label.slice(0, Math.max(0, maxc - 2)) + '..' : label, x + 3, y + ROW / 2);
      }
      if (i === focusNode) { g.strokeStyle = '#000'; g.lineWidth = 2; g.strokeRect(x + 1, y + 1, Math.max(1, w - 2.5), ROW - 3); }
      rects.push([x, y, w, i]);
    }
    flame.dataset.focus = focusNode;
    flame.dataset.rootTotal = tot[0];
    flame.dataset.zoom = zoomNode;
    flame.dataset.frames = items.length;
    flame.dataset.highlighted = matchedFrames;
  }
  function frameAt(ev) {
    const b = flame.getBoundingClientRect(), x = ev.clientX - b.left, y = ev.clientY - b.top;
    for (let k = rects.length - 1; k >= 0; k--) { const r = rects[k]; if (x >= r[0] && x < r[0] + r[2] && y >= r[1] && y < r[1] + ROW) return r[3]; }
    return -1;
  }
  function pathOf(i) { const p = []; for (; i > 0; i = parent[i]) p.unshift(frames[frameOf[i]]); return p; }
  function frameTip(ev, i) {
    let t = (i === 0 ? 'all' : frames[frameOf[i]]) + '\n' + tot[i] + ' samples, ' + pct(selTotal ? tot[i] / selTotal : 0) + ' of the selection';
    if (i > 0) t += '\nprocess ' + pathOf(i)[0];
    if (baseTotal) t += '\nbaseline ' + pct(baseTot[i] / baseTotal);
    showTip(ev, t);
  }
  flame.addEventListener('mousemove', (ev) => {
    const i = frameAt(ev);
    if (i < 0) { hideTip(); return; }
    frameTip(ev, i);
  });
  flame.addEventListener('mouseleave', hideTip);
  flame.addEventListener('click', (ev) => { const i = frameAt(ev); if (i >= 0) { zoomNode = i; focusNode = -1; drawFlame(); } });
  // Keyboard (Tab to the flame graph): Up to the frame's busiest callee, Down to its caller, Left
  // and Right to its neighbours; Enter zooms to it, Escape zooms out.
  flame.tabIndex = 0;
  flame.addEventListener('keydown', (ev) => {
    if (ev.altKey || ev.ctrlKey || ev.metaKey) return;
    const drawn = new Set(rects.map((r) => r[3]));
    let f = drawn.has(focusNode) ? focusNode : zoomNode;
    if (ev.key === 'ArrowUp') {
      let best = -1;
      for (const k of kids(f)) if (drawn.has(k) && (best < 0 || tot[k] > tot[best])) best = k;
      if (best >= 0) f = best;
    } else if (ev.key === 'ArrowDown') {
      if (f > 0) f = parent[f];
    } else if (ev.key === 'ArrowLeft' || ev.key === 'ArrowRight') {
      if (f > 0 && f !== zoomNode && drawn.has(parent[f])) {
        const sib = kids(parent[f]).filter((k) => drawn.has(k)), at = sib.indexOf(f);
        f = sib[Math.max(0, Math.min(sib.length - 1, at + (ev.key === 'ArrowLeft' ? -1 : 1)))];
      }
    } else if (ev.key === 'Enter') zoomNode = f;
    else if (ev.key === 'Escape') { zoomNode = 0; f = -1; }
    else return;
    ev.preventDefault();
    focusNode = f;
    drawFlame();
    const r = rects.find((x) => x[3] === f), b = flame.getBoundingClientRect();
    if (r) frameTip({ clientX: b.left + r[0] + Math.min(r[2], 40), clientY: b.top + r[1] }, f); else hideTip();
  });
  flame.addEventListener('blur', hideTip);
  $('reset-zoom').addEventListener('click', () => { zoomNode = 0; drawFlame(); });
  $('select-all').addEventListener('click', () => { setSelection({ from: first, to: last + 1, cpus: null }); zoomNode = 0; drawOverlays(); update(); });
  $('diff').addEventListener('change', (ev) => { diff = ev.target.checked; drawFlame(); });
  $('rowms').addEventListener('change', (ev) => { rowUs = Number(ev.target.value) * 1000; binAll(); drawHeat(); });

  function applySearch() {
    const q = $('search').value;
    searchRe = null; searchSet = null;
    if (q) {
      try { searchRe = new RegExp(q, 'i'); } catch (e) { searchRe = new RegExp(q.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'i'); }
      searchSet = new Uint8Array(nNodes);
      const fm = frames.map((f) => searchRe.test(f));
      for (let i = 1; i < nNodes; i++) if (fm[frameOf[i]]) searchSet[i] = 1;
      // samples matched: counted once per stack, at the topmost matching frame
      let m = 0;
      for (let i = 1; i < nNodes; i++) if (searchSet[i] && !hasMatchingAncestor(i)) m += tot[i];
      $('search-info').textContent = 'matched ' + m + ' of ' + selTotal + ' samples (' + pct(selTotal ? m / selTotal : 0) + ')';
      $('search-info').dataset.samples = m;
    } else { $('search-info').textContent = ''; $('search-info').dataset.samples = 0; }
    drawFlame();
  }
  function hasMatchingAncestor(i) { for (let p = parent[i]; p > 0; p = parent[p]) if (searchSet[p]) return true; return false; }
  $('search').addEventListener('input', applySearch);

  function update() {
    countSelection();
    const span = (sel.to - sel.from) / US;
    $('sel-info').textContent = selTotal + ' samples, ' + wall(sel.from) + ' .. ' + wall(sel.to) + ' (' + rel(sel.from) + ' .. ' + rel(sel.to) + ', ' + span.toFixed(3) + ' s' +
      (sel.cpus ? ', CPU ' + Array.from(sel.cpus).sort((a, b) => a - b).join(',') : ', all CPUs') + ')';
    const si = $('sel-info').dataset;
    si.samples = selTotal; si.from = sel.from; si.to = sel.to;
    if (searchSet) applySearch(); else drawFlame();
  }

  // ---- unusual ranking ----
  function unusual() {
    const a = D.analysis, body = $('unusual-body');
    if (!a) { $('unusual').hidden = true; return; }
    if (!a.has_slice || !a.has_baseline) { body.textContent = 'Needs stacks.folded and baseline.folded.'; return; }
    const near = a.near || { processes: [], functions: [] };
    // Show gives no rise against too few samples: neither do we.
    const few = baselineFew(a);
    if (nothingComparable(a)) { body.textContent = 'Nothing to tell: the baseline has ' + a.baseline_total + ' samples, too few to compare with.'; return; }
    const slice = few ? { processes: [], functions: [] } : a;
    if (!slice.processes.length && !slice.functions.length && !near.processes.length && !near.functions.length) {
      body.textContent = few ? 'Nothing rose significantly (z >= 3) around the event against the rest of the bundle; the baseline has ' + a.baseline_total + ' samples, too few to compare the slice with.'
        : 'Nothing rose significantly (z >= 3): the slice looks like the baseline.';
      return;
    }
    // Rows of the slice against the baseline, then of the event's own seconds against the rest
    // (event.folded): "slice" and "baseline" are then those two.
    const rows = [];
    slice.processes.forEach((r) => rows.push(['process', r, '']));
    slice.functions.forEach((r) => rows.push(['function', r, '']));
    near.processes.forEach((r) => rows.push(['process', r, ' around the event']));
    near.functions.forEach((r) => rows.push(['function', r, ' around the event']));
    let h = '<table><tr><th>kind</th><th>name</th><th class="num">slice (or the event&#39;s seconds)</th><th class="num">baseline (or the rest)</th><th class="num">z</th><th>function that rose most</th></tr>';
    rows.forEach(([kind, r, where], i) => {
      let name = esc(r.name);
      if (kind === 'function') {
        const semi = r.name.indexOf(';'), comm = semi >= 0 ? r.name.slice(0, semi) : r.name, fn = semi >= 0 ? r.name.slice(semi + 1) : '-';
        name = esc(fn) + ' <span class="hint">in ' + esc(comm) + '</span>';
      } else if (r.thread) {
        name += ' <span class="hint">carried by ' + esc(r.thread) + '</span>';
      } else if (r.processes) {
        name += ' <span class="hint">' + r.processes + ' processes</span>';
      }
      h += '<tr class="rise" tabindex="0" data-kind="' + kind + '" data-i="' + i + '"><td>' + kind + where + '</td><td>' + name + '</td><td class="num">' + pct(r.slice_share) + '</td><td class="num">' + pct(r.baseline_share) + '</td><td class="num">' + r.z.toFixed(1) + '</td><td>' + (kind === 'process' ? esc(r.top_function || '-') : '') + '</td></tr>';
    });
    body.innerHTML = h + '</table>';
    body.querySelectorAll('tr.rise').forEach((tr) => tr.addEventListener('keydown', clickByKey));
    body.querySelectorAll('tr.rise').forEach((tr) => tr.addEventListener('click', () => {
      const on = tr.classList.contains('on');
      body.querySelectorAll('tr.rise').forEach((x) => x.classList.remove('on'));
      highlight = null;
      if (!on) {
        tr.classList.add('on');
        const r = rows[Number(tr.dataset.i)][1];
        highlight = new Uint8Array(nNodes);
        if (tr.dataset.kind === 'process') {
          for (const k of kids(0)) markKeyed(k, commKey(frames[frameOf[k]]), r.name, null);
        } else {
          const semi = r.name.indexOf(';'), comm = r.name.slice(0, semi), fn = r.name.slice(semi + 1);
          for (const k of kids(0)) markKeyed(k, commKey(frames[frameOf[k]]), comm, fn);
        }
      }
      drawFlame();
    }));
  }
  // A comm frame as the rankings count it: per-CPU kernel threads as one (bundle-analyze.h:
  // "kworker/" and anything after it, or NAME/DIGITS, NAME lowercase, not swapper) -> "NAME/*".
  function commKey(c) {
    if (c.length > 8 && c.startsWith('kworker/')) return 'kworker/*';
    const m = /^([a-z][a-z0-9_-]*\/)([0-9]+|\*)$/.exec(c);
    return m && m[1] !== 'swapper/' ? m[1] + '*' : c;
  }
  // Marks the nodes under i (a comm's, whose key is c) that key counts: all of them, or those
  // named fn; interrupt work counts as IRQ_KEY, not as its comm.
  function markKeyed(i, c, key, fn) {
    if ((irqState[i] >= 2 ? IRQ_KEY : c) === key && (fn === null || frames[frameOf[i]] === fn)) highlight[i] = 1;
    for (const k of kids(i)) markKeyed(k, c, key, fn);
  }

  // Rows and log lines take the focus (Tab); Enter or Space does what a click does.
  function clickByKey(ev) {
    if (ev.key !== 'Enter' && ev.key !== ' ') return;
    ev.preventDefault();
    ev.currentTarget.click();
  }

  // ---- log ----
  function logList() {
    const body = $('log-body'), logs = D.logs || [];
    if (!logs.length) { $('log').hidden = D.kind !== 'bundle'; body.textContent = 'No log lines.'; return; }
    // A log longer than the page keeps (a storm of lines): the lines around the trigger, and what
    // was left out said.
    const before = D.logs_omitted_before || 0, after = D.logs_omitted_after || 0;
    $('log-omitted').hidden = !(before || after);
    $('log-omitted').textContent = before || after ? 'The log has ' + (before + logs.length + after) + ' lines: the ' + logs.length + ' around the trigger are shown, ' +
      before + ' earlier and ' + after + ' later ones left out (log.txt and log.jsonl have them all).' : '';
    body.innerHTML = logs.map((l, i) => '<div class="logline' + (l[1] ? ' trigger' : '') + '" tabindex="0" data-i="' + i + '"><span class="t">' + (l[1] ? '&gt; ' : '  ') + esc(l[2] || wall(l[0])) + ' ' + esc(rel(l[0])) + ' ' + esc(l[3]) + '</span> ' + esc(l[4]) + '</div>').join('');
    body.querySelectorAll('.logline').forEach((d) => {
      d.addEventListener('click', () => selectAround(logs[Number(d.dataset.i)][0]));
      d.addEventListener('keydown', clickByKey);
    });
    const trig = body.querySelector('.trigger');
    if (trig) body.scrollTop = Math.max(0, trig.offsetTop - body.offsetTop - 100);
  }

  // ---- start ----
  header();
  binAll();
  if (D.trigger_us !== undefined && N > 0) {
    const b = D.default_before_us || 5 * US, a = D.default_after_us || 5 * US;
    sel = { from: Math.max(first, D.trigger_us - b), to: Math.min(last + 1, D.trigger_us + a), cpus: null };
    if (sel.to <= sel.from) sel = { from: first, to: last + 1, cpus: null };
  }
  drawHeat();
  const T_HEAT = performance.now();
  unusual();
  logList();
  update();
  const T_FLAME = performance.now();
  window.addEventListener('resize', () => { drawHeat(); drawFlame(); });

  // What the tests and the benchmark read.
  window.tprof = {
    timings: { start: T_START, parsed: T_PARSED, nodes: T_NODES, samples: T_SAMPLES, decoded: T_DECODED, heatmap: T_HEAT, flame: T_FLAME },
    grid: () => ({ cols: nCols, rows: nRows, rowMs: rowUs / 1000, base_us: base, counts: Array.from(counts) }),
    layout: () => ({ cellW: cellW, cellH: cellH, laneH: laneH, cpus: cpus.slice() }),
    selection: () => ({ from: sel.from, to: sel.to, cpus: sel.cpus ? Array.from(sel.cpus) : null, samples: selTotal }),
    select: (from, to, cpuList) => { const t = performance.now(); setSelection({ from: from, to: to, cpus: cpuList ? new Set(cpuList) : null }); zoomNode = 0; drawOverlays(); update(); return performance.now() - t; },
    rootTotal: () => tot[0],
    search: (q) => { $('search').value = q; applySearch(); return Number($('search-info').dataset.samples); },
    highlighted: () => Number(flame.dataset.highlighted),
    focus: () => (focusNode < 0 ? null : { node: focusNode, name: focusNode === 0 ? 'all' : frames[frameOf[focusNode]], samples: tot[focusNode], zoom: zoomNode }),
    samples: () => N,
  };
  document.body.dataset.ready = '1';
})();
