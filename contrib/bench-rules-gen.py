#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Writes a realistic kernel log for contrib/bench-rules.sh: dmesg-format lines ("[ 123.456789] msg"),
# mostly the noise a busy server logs (network, storage, audit, containers, USB, firmware) with
# varying numbers and names, and every so often one of the events the default rules look for.
# Deterministic for a given seed, so runs are comparable.
#
# Usage: bench-rules-gen.py LINES [EVENT_EVERY] [SEED] > file.log
import random
import sys

NOISE = [
    "audit: type=1400 audit({t}:{n}): apparmor=\"DENIED\" operation=\"open\" profile=\"snap.{w}\" name=\"/proc/{n}/mounts\" pid={p} comm=\"{w}\" requested_mask=\"r\" denied_mask=\"r\" fsuid=0 ouid=0",
    "audit: type=1300 audit({t}:{n}): arch=c000003e syscall=257 success=yes exit=3 a0=ffffff9c items=1 ppid={p} pid={p} auid=4294967295 uid=0 gid=0 comm=\"{w}\" exe=\"/usr/bin/{w}\" key=(null)",
    "docker0: port {d}(veth{h}) entered forwarding state",
    "docker0: port {d}(veth{h}) entered blocking state",
    "eth0: renamed from veth{h}",
    "IPv6: ADDRCONF(NETDEV_CHANGE): veth{h}: link becomes ready",
    "IPv4: martian source 10.{d}.{d}.{d} from 10.{d}.{d}.{d}, on dev eth0",
    "TCP: request_sock_TCP: Possible SYN flooding on port {n}. Sending cookies.  Check SNMP counters.",
    "nf_conntrack: nf_conntrack: table full, dropping packet",
    "ena 0000:00:0{d}.0 eth{d}: Link is Up",
    "EXT4-fs (nvme{d}n1p1): mounted filesystem {h}-{h} r/w with ordered data mode. Quota mode: none.",
    "XFS (nvme{d}n1): Mounting V5 Filesystem {h}-{h}",
    "XFS (nvme{d}n1): Ending clean mount",
    "nvme nvme{d}: {d}/0/0 default/read/poll queues",
    "usb {d}-{d}: new high-speed USB device number {d} using xhci_hcd",
    "usb {d}-{d}: USB disconnect, device number {d}",
    "systemd[1]: Started session-{n}.scope - Session {n} of User {w}.",
    "overlayfs: upper fs does not support tmpfile.",
    "cgroup: fork rejected by pids controller in /kubepods.slice/kubepods-burstable.slice/pod{h}.slice",
    "{w}[{p}]: segfault at {h} ip 0000{h} sp 00007ffd{h} error 4 in lib{w}.so[{h}+1a000]",
    "perf: interrupt took too long ({n} > {n}), lowering kernel.perf_event_max_sample_rate to {n}",
    "hrtimer: interrupt took {n} ns",
    "device veth{h} entered promiscuous mode",
    "blk_update_request: I/O error, dev loop{d}, sector {n} op 0x0:(READ) flags 0x80700 phys_seg 1 prio class 0",
    "Memory cgroup stats for /kubepods.slice/pod{h}:",
    "kauditd_printk_skb: {d} callbacks suppressed",
    "bpfilter: Loaded bpfilter_umh pid {p}",
    "pcieport 0000:00:0{d}.0: AER: Corrected error received: 0000:0{d}:00.0",
    "NFSD: Using nfsdcld client tracking operations.",
]

EVENTS = [
    "ena 0000:00:05.0 eth0: Trigger reset is on",
    "ena 0000:00:05.0 eth0: The number of lost tx completions is above the threshold (129 > 128). Reset the device",
    "nvme nvme{d}: I/O {n} QID {d} timeout, aborting",
    "nvme nvme{d}: I/O tag {n} (00{d}d) opcode 0x1 (Write) QID {d} timeout, reset controller",
    "nvme nvme{d}: controller is down; will reset: CSTS=0xffffffff, PCI_STATUS=0xffff",
    "INFO: task {w}:{p} blocked for more than 122 seconds.",
    "watchdog: BUG: soft lockup - CPU#{d} stuck for 23s! [{w}:{p}]",
    "NMI watchdog: Watchdog detected hard LOCKUP on cpu {d}",
    "rcu: INFO: rcu_sched self-detected stall on CPU",
    "Out of memory: Killed process {p} ({w}) total-vm:1234567kB, anon-rss:1000000kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:2000kB oom_score_adj:0",
    "ena 0000:00:05.0 eth0: NETDEV WATCHDOG: CPU: {d}: transmit queue {d} timed out 5000 ms",
    "mce: [Hardware Error]: Machine check events logged",
    "{w}: page allocation failure: order:{d}, mode:0x40cc0(GFP_KERNEL|__GFP_COMP), nodemask=(null)",
    "EXT4-fs error (device nvme{d}n1p1): ext4_find_entry:1658: inode #2: comm {w}: reading directory lblock 0",
    "XFS (nvme{d}n1): Corruption detected. Unmount and run xfs_repair",
    "sched: RT throttling activated",
    "BUG: workqueue lockup - pool cpus={d} node=0 flags=0x0 nice=0 stuck for 41s!",
    "clocksource: timekeeping watchdog on CPU{d}: Marking clocksource 'tsc' as unstable because the skew is too large:",
]

WORDS = ["java", "python3", "kubelet", "containerd", "nginx", "postgres", "redis-server", "node",
         "kworker/u16:2", "snapd", "sshd", "systemd-journal", "dockerd", "envoy", "etcd"]


def fill(rng, tmpl):
    out = []
    i = 0
    while i < len(tmpl):
        if tmpl[i] == "{" and tmpl[i + 2] == "}":
            k = tmpl[i + 1]
            out.append({
                "t": lambda: str(rng.randint(1700000000, 1800000000)) + "." + str(rng.randint(100, 999)),
                "n": lambda: str(rng.randint(1, 99999)),
                "p": lambda: str(rng.randint(1, 4194304)),
                "d": lambda: str(rng.randint(0, 9)),
                "h": lambda: "%08x" % rng.getrandbits(32),
                "w": lambda: rng.choice(WORDS),
            }[k]())
            i += 3
        else:
            out.append(tmpl[i])
            i += 1
    return "".join(out)


def main():
    lines = int(sys.argv[1])
    every = int(sys.argv[2]) if len(sys.argv) > 2 else 5000
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
    t = 5.0
    out = sys.stdout
    buf = []
    for i in range(lines):
        t += rng.random() * 0.01
        tmpl = rng.choice(EVENTS) if i % every == every - 1 else rng.choice(NOISE)
        buf.append("[%12.6f] %s\n" % (t, fill(rng, tmpl)))
        if len(buf) >= 10000:
            out.write("".join(buf))
            buf = []
    out.write("".join(buf))


main()
