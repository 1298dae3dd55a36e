#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Writes incident bundles as docs/bundle-format.md describes them into a state directory, for the
tests of tprof-bundle. Every file is generated here as text, deterministically, so the fixtures
are reviewable and no binary blob is committed.

    make-fixture-bundle.py STATE_DIR KIND [--id ID] [--time EPOCH] [--rule RULE] [--status S]

KIND is one of:
  anomaly   the motivating case: kubelet rises from 0.8% of the baseline to 6.5% of the slice,
            in mem_cgroup_nr_lru_pages, on a rule that captured cpu=3; noise processes keep
            their shares.
  burst     kubelet at its usual 0.8% but in the 10 s around the event, where it takes 6.5%: the
            whole slice dilutes that below notice, event.folded against the rest shows it.
  under     the burst, with kubelet's memory.stat work split between two leaves under
            memcg_stat_show (and a fifth of its samples elsewhere): the caller explains the rise.
  few       kubelet rises to 2.0% over the slice, and 8 samples of sh run only around the event:
            a large z for what took no CPU to speak of, which the summary must not name.
  quiet     a bundle whose slice looks like its baseline (nothing should be reported as unusual).
  softirq   as quiet, but around the event every CPU's ksoftirqd/N polls the ENA NIC
            (ena_io_poll): each 1.6% of a CPU, under the answer's floor, all of them a quarter
            of a CPU (run it with --cpus 16); the manifest lists them in the root cgroup.
  idle      a mostly idle host (run it with --cpus 16) sampled with cycles, which idle CPUs take
            no samples of: the samples are those of about one busy CPU, and around the event cron
            has 1% of them, 1% of a CPU (a share times the 16 CPUs would make it 16%): no clear
            rise.
  irqidle   as quiet, but around the event the ENA NIC's receive softirqs run on the way out of its
            interrupts (6.8+: asm_common_interrupt, __irq_exit_rcu, handle_softirqs), in the idle
            task (12% of the samples) and in postgres (3%): the answer as "[irq]", not idle nor
            postgres.
  drop      as quiet, but postgres (11% of the non-kubelet samples) stops in the 10 s around the
            event, its CPU idle: the summary says it fell.
  starve    a host at 100% (no idle): in the 10 s around the event kubelet spins on 55% of the
            CPUs, which the scheduler takes from every other process: each keeps 45% of its
            share, none of them stopped, and the summary names the rise and no fall.
  hostile   escape sequences, C1 controls, invalid UTF-8 and overlong text in the message, the
            log, the rule and the process names.
  corrupt   a bundle directory whose manifest.json is not JSON.
  pending   a .tmp-* directory with a pending manifest (the slice is still being recorded).
  nocov     a no-coverage bundle: the log only, no samples.

--cpus N changes the number of CPUs (4 by default) of the profile and activity.tsv.
"""
import argparse
import json
import os
import random

FREQ = 49
N_CPUS = 4
BEFORE_S = 90
AFTER_S = 15
EVENT_PERF_NS = 81234567891000
EVENT_MONO_NS = 81234567000000


def utc(usec):
    import datetime
    t = datetime.datetime.fromtimestamp(usec // 1000000, datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S") + ".%06dZ" % (usec % 1000000)


def name_time(usec):
    import datetime
    t = datetime.datetime.fromtimestamp(usec // 1000000, datetime.timezone.utc)
    return t.strftime("%Y%m%dT%H%M%SZ")


def write(path, data, mode="w"):
    with open(path, mode) as f:
        f.write(data)


def folded_text(counts):
    return "".join("%s %d\n" % (k, v) for k, v in sorted(counts.items()) if v > 0)


# Stacks of the noise processes and their share of the non-kubelet samples.
NOISE = [
    ("java;start_thread;JavaMain;Interpreter;SharedRuntime::resolve;os::javaTimeNanos", 0.20),
    ("java;start_thread;JavaMain;Interpreter;GC::collect;G1ParScanThreadState::trim_queue", 0.16),
    ("nginx;__libc_start_main;ngx_worker_process_cycle;ngx_process_events_and_timers;epoll_wait", 0.12),
    ("nginx;__libc_start_main;ngx_worker_process_cycle;ngx_http_process_request;memcpy", 0.05),
    ("postgres;__libc_start_main;PostgresMain;exec_simple_query;ExecScan;heap_getnext", 0.11),
    ("swapper;secondary_startup_64;cpu_startup_entry;do_idle;cpuidle_enter;intel_idle", 0.36),
]
KUBELET_HOT = ("kubelet;runtime.goexit;k8s.io/kubelet/cm.(*containerManagerImpl).GetStats;"
               "syscall.Syscall;entry_SYSCALL_64;do_syscall_64;ksys_read;seq_read;memcg_stat_show;"
               "mem_cgroup_nr_lru_pages")
KUBELET_COLD = "kubelet;runtime.goexit;k8s.io/kubelet/pleg.(*GenericPLEG).relist;runtime.futex"


def profile(total, kubelet_share, hot_fraction):
    """Counts per stack: kubelet_share of the total for kubelet (hot_fraction of it in the hot
    stack), the rest split among the noise stacks by their fixed shares."""
    counts = {}
    k = round(total * kubelet_share)
    counts[KUBELET_HOT] = round(k * hot_fraction)
    counts[KUBELET_COLD] = k - counts[KUBELET_HOT]
    rest = total - k
    left = rest
    for i, (stack, share) in enumerate(NOISE):
        n = left if i == len(NOISE) - 1 else round(rest * share)
        counts[stack] = n
        left -= n
    return counts


def manifest(args, kind, short_id, bundle_id, status, samples, baseline_samples, message, captures, extra=None):
    ev_usec = args.time
    m = {
        "format": 1,
        "id": bundle_id,
        "short_id": short_id,
        "status": status,
        "tprof_version": "0.1.0",
        "created_utc": utc(ev_usec + 16000000),
        "host": "ip-10-0-0-1",
        "boot_id": "2f0a4c1e9b7d4e1f8a3b5c6d7e8f9012",
        "kernel_release": "6.1.0-27-cloud-amd64",
        "rule": {
            "name": args.rule, "description": "AWS ENA driver reset", "source": "kernel",
            "origin": "kernel", "match": "^ena \\S+ \\S+: Trigger reset is on",
            "before_usec": BEFORE_S * 1000000, "after_usec": AFTER_S * 1000000,
            "cooldown_usec": 600000000, "severity": "err",
        },
        "event": {
            "t_perf_ns": EVENT_PERF_NS, "t_monotonic_ns": EVENT_MONO_NS,
            "t_realtime_usec": ev_usec, "utc": utc(ev_usec),
            "source": "kmsg", "kernel_origin": True, "priority": 3, "facility": 0, "seq": 1234,
            "unit": None, "comm": None,
            "message": message,
            "captures": captures,
            "alignment": {"method": "kmsg-timestamp", "clock_map": "perf-bracket", "error_ns": 4200},
        },
        "repeats": 1,
        "last_repeat_perf_ns": EVENT_PERF_NS,
        "note": None,
        "profile": {"event": "cpu-clock", "freq_hz": FREQ, "n_cpus": N_CPUS},
        "slice": {
            "from_perf_ns": EVENT_PERF_NS - BEFORE_S * 10**9, "to_perf_ns": EVENT_PERF_NS + AFTER_S * 10**9,
            "from_utc": utc(ev_usec - BEFORE_S * 1000000), "to_utc": utc(ev_usec + AFTER_S * 1000000),
            "samples": samples, "lost": 0,
            "covered_from_perf_ns": EVENT_PERF_NS - BEFORE_S * 10**9,
            "covered_to_perf_ns": EVENT_PERF_NS + AFTER_S * 10**9,
        },
        "baseline": {"from_perf_ns": EVENT_PERF_NS - 300 * 10**9, "to_perf_ns": EVENT_PERF_NS + 120 * 10**9,
                     "samples": baseline_samples},
        "windows": ["ip-10-0-0-1-%s-120s.tpw" % name_time(ev_usec - 120000000),
                    "ip-10-0-0-1-%s-120s.tpw" % name_time(ev_usec)],
    }
    if extra:
        extra(m)
    return m


def log_lines(args, message, hostile=False):
    """45 lines about a second apart over the end of the slice, the trigger at index 30."""
    rnd = random.Random(7)
    lines = []
    for i in range(45):
        off_ms = (i - 30) * 1000 + (rnd.randint(0, 900) if i != 30 else 0)
        trig = i == 30
        src = "kmsg" if i % 3 == 0 or trig else "journal"
        msg = message if trig else (
            "kubelet.service: PLEG is not healthy: pleg was last seen active %ds ago" % (i + 3)
            if src == "journal" else "ena 0000:00:05.0 eth0: TX hang detected on queue %d" % (i % 4))
        if hostile and i == 28:
            msg = "\x1b[2J\x1b]0;owned\x07 clear-screen and title \u009b31m C1 CSI"
        if hostile and i == 29:
            msg = "long " + "x" * 5000
        lines.append({
            "t_perf_ns": EVENT_PERF_NS + off_ms * 10**6,
            "t_realtime_usec": args.time + off_ms * 1000,
            "utc": utc(args.time + off_ms * 1000),
            "source": src, "kernel_origin": src == "kmsg",
            "priority": 3 if trig else (4 if src == "kmsg" else 6), "facility": 0 if src == "kmsg" else 3,
            "seq": 1200 + i, "unit": None if src == "kmsg" else "kubelet.service",
            "comm": None if src == "kmsg" else "kubelet",
            "message": msg, "trigger": trig,
        })
    return lines


def write_logs(d, lines):
    write(os.path.join(d, "log.jsonl"), "".join(json.dumps(l, ensure_ascii=False) + "\n" for l in lines))
    prio = ["emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"]
    txt = ""
    for l in lines:
        msg = "".join(c if 0x20 <= ord(c) < 0x7f or ord(c) >= 0xa0 else "\\x%02x" % ord(c)
                      for c in l["message"])
        txt += "%s %s %-8s %-7s %s\n" % (">" if l["trigger"] else " ", l["utc"], l["source"],
                                          prio[l["priority"]], msg)
    write(os.path.join(d, "log.txt"), txt)


def activity(starved_cpu=3, stolen_cpu=None):
    """Per second and CPU: FREQ samples (the clock fires on idle CPUs too), but a quarter of them
    on stolen_cpu (a vCPU the host did not run)."""
    rows = ["# offset_s\tcpu\tsamples\tbusy"]
    for s in range(BEFORE_S + AFTER_S):
        for cpu in range(N_CPUS):
            if cpu == stolen_cpu:
                rows.append("%d\t%d\t%d\t%d" % (s, cpu, FREQ // 4, FREQ // 8))
                continue
            busy = [12, 30, 22, 20][cpu % 4] + (s * 7 + cpu * 13) % 11
            if cpu == starved_cpu and s >= 60:
                busy = FREQ
            if cpu == 1 and 85 <= s <= 92:
                busy = 40
            rows.append("%d\t%d\t%d\t%d" % (s, cpu, FREQ, min(busy, FREQ)))
    return "\n".join(rows) + "\n"


def perf_script(counts):
    out = []
    t = 81144.6
    for stack, n in sorted(counts.items()):
        frames = stack.split(";")
        for _ in range(min(n, 2)):
            t += 0.010101
            out.append("%s 1234/1234 [003] %.6f: 20408163 cpu-clock:" % (frames[0], t))
            for f in reversed(frames[1:]):
                out.append("\tffffffff81000000 %s+0x10 ([kernel.kallsyms])" % f)
            out.append("")
    return "\n".join(out) + "\n"


def make(args):
    kind = args.kind
    short_id = args.id
    rule_safe = "".join(c if c.isalnum() and c.isascii() or c in "_-" else "_" for c in args.rule)
    bundle_id = "%s-%s-%s" % (name_time(args.time), rule_safe, short_id)
    inc = os.path.join(args.state_dir, "incidents")
    os.makedirs(inc, exist_ok=True)
    d = os.path.join(inc, (".tmp-" if kind == "pending" else "") + bundle_id)
    os.makedirs(d)
    message = "ena 0000:00:05.0 eth0: Trigger reset is on"
    total = (BEFORE_S + AFTER_S) * FREQ * N_CPUS
    base_total = 420 * FREQ * N_CPUS - total

    if kind == "corrupt":
        write(os.path.join(d, "manifest.json"), '{"format": 1, "id": "%s", "status": ' % bundle_id)
        return
    # event.folded: the 10 s around the event, part of the slice's samples.
    near_total = 2 * 5 * FREQ * N_CPUS
    if kind in ("anomaly", "hostile", "pending", "thread", "stuck", "pool"):
        slice_c = profile(total, 0.065, 0.92)
        base_c = profile(base_total, 0.008, 0.05)
        near_c = profile(near_total, 0.065, 0.92)
    elif kind == "drift":
        # kubelet, a hog, drifts from 40% to 55% of the samples: many CPUs' worth, but its share
        # not doubled, and nothing else rose: no clear rise, the strongest named as such.
        slice_c = profile(total, 0.55, 0.92)
        base_c = profile(base_total, 0.40, 0.92)
        near_c = profile(near_total, 0.55, 0.92)
    elif kind in ("few", "burst", "under"):
        # The event's own seconds first, then the rest of the slice; the slice holds both.
        if kind == "few":
            # kubelet 0.8% -> 2.0% over the slice; around the event also a handful of samples of
            # a process seen nowhere else (the one that logged the event, say).
            near_c = profile(near_total, 0.02, 0.92)
            near_c["sh;main;fork"] = 8
            slice_c = profile(total - near_total, 0.02, 0.92)
        else:
            # kubelet as usual but in the event's own seconds: the whole slice dilutes it.
            near_c = profile(near_total, 0.065, 0.92 if kind == "burst" else 0.80)
            if kind == "under":
                # memory.stat's work split between two leaves under memcg_stat_show: neither
                # leaf holds half of the rise, their caller does.
                hot = near_c.pop(KUBELET_HOT)
                near_c[KUBELET_HOT] = hot // 2
                near_c[KUBELET_HOT.rsplit(";", 1)[0] + ";memcg_page_state"] = hot - hot // 2
            slice_c = profile(total - near_total, 0.008, 0.05)
        for stack, n in near_c.items():
            slice_c[stack] = slice_c.get(stack, 0) + n
        base_c = profile(base_total, 0.008, 0.05)
    elif kind == "softirq":
        # Each CPU's ksoftirqd 1.6% of a CPU around the event, its usual sliver elsewhere.
        ksoft = ("ksoftirqd/%d;ret_from_fork_asm;ret_from_fork;kthread;smpboot_thread_fn;run_ksoftirqd;"
                 "handle_softirqs;")
        each = round(0.016 * near_total / N_CPUS)
        near_c = profile(near_total - each * N_CPUS, 0.008, 0.05)
        slice_c = profile(total - near_total - N_CPUS, 0.008, 0.05)
        base_c = profile(base_total - 2 * N_CPUS, 0.008, 0.05)
        for cpu in range(N_CPUS):
            near_c[ksoft % cpu + "net_rx_action;__napi_poll;ena_io_poll"] = each
            slice_c[ksoft % cpu + "rcu_core"] = 1
            base_c[ksoft % cpu + "rcu_core"] = 2
        for stack, n in near_c.items():
            slice_c[stack] = slice_c.get(stack, 0) + n
        ks_slice = sum(n for k, n in slice_c.items() if k.startswith("ksoftirqd/"))

        def extra(m):
            m["cgroups"] = [
                {"path": "/", "samples": ks_slice, "baseline_samples": 2 * N_CPUS,
                 "comms": [{"comm": "ksoftirqd/%d" % cpu, "samples": ks_slice // N_CPUS} for cpu in range(N_CPUS)]},
                {"path": "/system.slice/kubelet.service", "samples": total - ks_slice,
                 "baseline_samples": base_total - 2 * N_CPUS, "unit": "kubelet.service",
                 "comms": [{"comm": "kubelet", "samples": 100}]},
            ]
            m["threads"] = [{"comm": "ksoftirqd/%d" % cpu, "pid": 14 + 8 * cpu, "process": "ksoftirqd/%d" % cpu,
                             "samples": ks_slice // N_CPUS} for cpu in range(N_CPUS)]
    elif kind == "idle":
        # One CPU's worth of samples: the other CPUs idled, and cycles does not fire in idle.
        total = (BEFORE_S + AFTER_S) * FREQ
        base_total = 420 * FREQ - total
        near_total = 2 * 5 * FREQ
        java = NOISE[0][0]
        near_c = {java: near_total - 5, "cron;__libc_start_main;main;run_job": 5}
        slice_c = {java: total - near_total}
        for stack, n in near_c.items():
            slice_c[stack] = slice_c.get(stack, 0) + n
        base_c = {java: base_total}

        def extra(m):
            m["profile"]["event"] = "cycles"
    elif kind == "irqidle":
        # The idle task's own stack (NOISE's last) with the interrupt's work on top of its halt.
        idle = NOISE[-1][0]
        irq = idle + ";asm_common_interrupt;common_interrupt;__irq_exit_rcu;handle_softirqs;net_rx_action;__napi_poll;ena_io_poll"
        tick = idle + ";asm_sysvec_apic_timer_interrupt;sysvec_apic_timer_interrupt;__sysvec_apic_timer_interrupt;hrtimer_interrupt"
        near_c = profile(near_total, 0.008, 0.05)
        storm = round(0.12 * near_total)
        near_c[idle] -= storm + 2
        near_c[irq + ";ena_clean_rx_irq"] = storm
        near_c[tick] = 2
        # and, on a busy CPU, in postgres's context, from user mode: the interrupt's entry the
        # kernel chain's root, above its user frames (3% of the samples taken from its own)
        pg = NOISE[4][0]
        busy = round(0.03 * near_total)
        near_c[pg] -= busy
        near_c[pg + irq[len(idle):] + ";ena_clean_rx_irq"] = busy
        slice_c = profile(total - near_total, 0.008, 0.05)
        slice_c[idle] -= 10
        slice_c[tick] = 10
        for stack, n in near_c.items():
            slice_c[stack] = slice_c.get(stack, 0) + n
        base_c = profile(base_total, 0.008, 0.05)
        base_c[idle] -= 40
        base_c[tick] = 40
    elif kind == "starve":
        busy = [(stack, share) for stack, share in NOISE if not stack.startswith("swapper;")]
        busy_total = sum(share for _, share in busy)

        def host(n, kubelet):
            counts = {KUBELET_HOT: round(n * kubelet)}
            for stack, share in busy:
                counts[stack] = round((n - counts[KUBELET_HOT]) * share / busy_total)
            return counts
        near_c = host(near_total, 0.55)
        slice_c = host(total - near_total, 0.008)
        for stack, n in near_c.items():
            slice_c[stack] = slice_c.get(stack, 0) + n
        base_c = host(base_total, 0.008)
    elif kind == "drop":
        near_c = profile(near_total, 0.008, 0.05)
        pg = [k for k in near_c if k.startswith("postgres;")][0]
        idle = [k for k in near_c if k.startswith("swapper;")][0]
        near_c[idle] += near_c[pg]
        near_c[pg] = 0
        slice_c = profile(total - near_total, 0.008, 0.05)
        for stack, n in near_c.items():
            slice_c[stack] = slice_c.get(stack, 0) + n
        base_c = profile(base_total, 0.008, 0.05)
    else:
        slice_c = profile(total, 0.008, 0.05)
        base_c = profile(base_total, 0.008, 0.05)
        near_c = profile(near_total, 0.008, 0.05)
    if kind not in ("softirq", "idle"):
        extra = None
    if kind == "thread":
        # The rise is a JVM thread's ("VM Thread", "VM_Thread" in the stacks): the manifest says
        # whose thread it is and where that ran, by the raw name.
        for counts in (slice_c, base_c, near_c):
            for stack in [s for s in counts if s.startswith("kubelet;")]:
                counts["VM_Thread;" + stack.split(";", 1)[1]] = counts.pop(stack)
        vm = sum(n for s, n in slice_c.items() if s.startswith("VM_Thread;"))
        vm_base = sum(n for s, n in base_c.items() if s.startswith("VM_Thread;"))

        def extra(m):
            m["cgroups"] = [
                {"path": "/system.slice/app.service", "samples": vm + 800, "baseline_samples": vm_base + 9000,
                 "unit": "app.service", "comms": [{"comm": "VM Thread", "samples": vm}, {"comm": "java", "samples": 800}]},
                {"path": "/system.slice/batch.service", "samples": 300, "baseline_samples": 9000,
                 "unit": "batch.service", "comms": [{"comm": "java", "samples": 300}]},
            ]
            m["threads"] = [{"comm": "VM Thread", "pid": 4242, "process": "java", "samples": vm}]
    if kind in ("stuck", "pool"):
        # kubelet's work as a pool's, mt's threads pool-0 ... pool-3: spread over the four in the
        # baseline; in the slice its rise (the hot stack) either all one thread's, pool-2 stuck
        # spinning ("stuck"), or spread over the four, the pool busier ("pool").
        for counts in (slice_c, base_c, near_c):
            for stack in [s for s in counts if s.startswith("kubelet;")]:
                n, rest = counts.pop(stack), stack.split(";", 1)[1]
                if kind == "stuck" and counts is not base_c and stack == KUBELET_HOT:
                    counts["pool-2;" + rest] = n
                    continue
                for t in range(4):
                    counts["pool-%d;%s" % (t, rest)] = n // 4 + (t < n % 4)
        pool = sum(n for s, n in slice_c.items() if s.startswith("pool-"))
        pool_base = sum(n for s, n in base_c.items() if s.startswith("pool-"))

        def extra(m):
            m["cgroups"] = [
                {"path": "/system.slice/mt.service", "samples": pool, "baseline_samples": pool_base,
                 "unit": "mt.service", "comms": [{"comm": "pool-%d" % t, "samples": pool // 4} for t in range(4)]},
            ]
            m["threads"] = [{"comm": "pool-%d" % t, "pid": 4300, "process": "mt", "samples": pool // 4}
                            for t in range(4)]
    captures = {"cpu": "3"} if kind in ("anomaly", "hostile") else {}
    status = {"nocov": "no-coverage", "pending": "complete"}.get(kind, args.status)

    if kind == "hostile":
        message = "\x1b[31mena\x1b[0m \x1b]0;pwned\x07 reset \u009b1;1H" + " tail" * 400
        hostile_comm = "evil\x1b[2Jcomm"
        slice_c[hostile_comm + ";main;\x1b]0;t\x07spin"] = 3000
        slice_c["bad\xff\xfeutf8;main;loop"] = 10
        # and in the event's own seconds, so that their rows are escaped too
        near_c[hostile_comm + ";main;\x1b]0;t\x07spin"] = 600
        near_c["bad\xff\xfeutf8;main;loop"] = 10

        def extra(m):
            m["rule"]["description"] = "desc \x1b[5mblink\x1b[0m"
            m["host"] = "host\x1b[1m"
            m["note"] = "line1\nline2\r\x1b[A"
    logs = log_lines(args, message, hostile=(kind == "hostile"))
    m = manifest(args, kind, short_id, bundle_id, status, 0 if kind == "nocov" else total,
                 base_total, message, captures, extra)
    write(os.path.join(d, "pending" if kind == "pending" else "manifest.json"),
          json.dumps(m, indent=2, ensure_ascii=(kind != "hostile")) + "\n")
    write_logs(d, logs)
    if kind == "nocov":
        write(os.path.join(d, "stacks.folded"), "")
        write(os.path.join(d, "baseline.folded"), folded_text(base_c))
        write(os.path.join(d, "activity.tsv"), "# offset_s\tcpu\tsamples\tbusy\n")
        return
    mode = "wb" if kind == "hostile" else "w"

    def raw(text):  # the hostile kind's invalid UTF-8, as bytes
        if kind != "hostile":
            return text
        return text.encode("utf-8", "surrogateescape").replace("bad\u00ff\u00fe".encode(), b"bad\xff\xfe")
    write(os.path.join(d, "stacks.folded"), raw(folded_text(slice_c)), mode)
    write(os.path.join(d, "baseline.folded"), folded_text(base_c))
    write(os.path.join(d, "event.folded"), raw(folded_text(near_c)), mode)
    write(os.path.join(d, "stacks.perf-script"), perf_script(slice_c))
    write(os.path.join(d, "activity.tsv"), activity(stolen_cpu=2 if kind == "steal" else None))
    if captures.get("cpu") == "3":
        cpu_slice = {KUBELET_HOT: 900, NOISE[0][0]: 400, NOISE[4][0]: 300, NOISE[5][0]: 100}
        cpu_base = {KUBELET_HOT: 20, KUBELET_COLD: 30, NOISE[0][0]: 1400, NOISE[4][0]: 1100, NOISE[5][0]: 1500}
        write(os.path.join(d, "cpu3.folded"), folded_text(cpu_slice))
        write(os.path.join(d, "cpu3-baseline.folded"), folded_text(cpu_base))
    os.makedirs(os.path.join(d, "windows"))
    for w in m["windows"]:
        write(os.path.join(d, "windows", w), "W" * 4096)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("state_dir")
    p.add_argument("kind", choices=["anomaly", "thread", "stuck", "pool", "steal", "drift", "burst", "under", "few", "quiet", "softirq", "idle", "irqidle", "drop", "starve", "hostile", "corrupt", "pending",
                                    "nocov"])
    p.add_argument("--id", default="3fa9c2d1")
    p.add_argument("--time", type=int, default=1795271400123456, help="event time, usec since the epoch")
    p.add_argument("--rule", default="ena-reset")
    p.add_argument("--status", default="complete")
    p.add_argument("--cpus", type=int, default=N_CPUS, help="CPUs in the profile and activity.tsv")
    args = p.parse_args()
    globals()["N_CPUS"] = args.cpus
    make(args)


if __name__ == "__main__":
    main()
