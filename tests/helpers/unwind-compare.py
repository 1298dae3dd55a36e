#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Compares the stacks tprofd gave for one process with those `perf record --call-graph dwarf`
gave for the same process over the same seconds.

    unwind-compare.py PERF_SCRIPT_TEXT TPROFD_FOLDED COMM [--min-match 0.9] [--min-whole 0.9]

The two tools take different samples, so stacks are compared as sets, function names leaf to root:
a sample matches when its callers (the stack without the leaf, which is the interrupted
instruction and not unwound) are, root first, the beginning of some stack of the other tool.
A walk that went wrong (garbage frames, a cut) gives callers the other tool never saw. Both
directions are reported; both must reach --min-match. "Whole" is the share of tprofd's samples
whose root is _start (or whose stack holds main, or libc's __libc_start_call_main, which is all
a program stripped of every symbol of its own shows).

Names are compared after the tidying the two symbol sources need: perf prints inlined functions
as frames of their own ("(inlined)"), which tprofd, naming machine frames, does not; glibc exports
one function under several names (__libc_start_main@@GLIBC_2.34 and __libc_start_main_impl,
realloc and __GI___libc_realloc); GCC's clones carry suffixes (.part.0, .isra.0, .constprop.0); a frame with no name is
"[unknown]" to perf and "[file]" in tprofd's folded stacks; perf prints C++ names with their
parameters, which folded stacks cut at the first '(' as stackcollapse-perf.pl does.
"""
import re
import sys


def cut_params(name):
    """A name as folded stacks have it: cut at its first '(' (C++ parameters, and whatever follows a
    lambda's or local class's function in template arguments), as stackcollapse-perf.pl cuts it,
    unless the '(' opens "(anonymous namespace)" or the name is shaped like Go's "pkg.(*T).M"."""
    m = re.search(r'\.\(', name)
    if m and re.match(r'[^)]*\)\.', name[m.end():]):
        return name
    i = 0
    while True:
        i = name.find('(', i)
        if i < 0:
            return name
        if not name.startswith('(anonymous namespace)', i):
            return name[:i].rstrip()
        i += 1


def tidy(name):
    if name.startswith('[') and name.endswith(']'):
        return '[unknown]'  # tprofd names an unnamed frame by its file, [python3.11]; perf [unknown]
    name = name.split('@')[0]
    name = cut_params(name)
    name = re.sub(r'\.(part|isra|constprop|cold|lto_priv)\.\d+$', '', name)
    name = re.sub(r'\.(part|isra|constprop|cold|lto_priv)(\.\d+)*', '', name)
    name = name.replace('__GI_', '')
    name = name.lstrip('_')
    if name.startswith('libc_'):
        name = name[len('libc_'):]
    if name.endswith('_impl'):
        name = name[:-len('_impl')]
    return name


def machine_frames(lines):
    """(address, name) lines of one sample -> names of machine frames: an "(inlined)" line stands
    for a function inlined into the frame on the next line, which has the same address; one
    whose next line has another address is a frame of its own (perf's DWARF lookup can call an
    alias "inlined")."""
    out = []
    first_user = next((i for i, line in enumerate(lines) if not line[0].startswith('ffffffff')), None)
    for i, (addr, name, inlined) in enumerate(lines):
        if inlined and i + 1 < len(lines) and lines[i + 1][0] == addr:
            continue
        # perf may print the interrupted user address twice, as the kernel's chain ends and as its
        # DWARF walk starts (redis-server in write(): a third of its samples): one frame.
        if i == first_user and i + 1 < len(lines) and lines[i + 1][0] == addr and not lines[i + 1][2]:
            continue
        out.append(name)
    return out


def read_perf(path, comm):
    """perf script text -> list of root-first tuples of tidied names, one per sample of comm."""
    stacks, lines, current = [], [], None
    with open(path, errors='replace') as f:
        for line in list(f) + ['\n']:
            line = line.rstrip('\n')
            if not line.strip():
                if current == comm and lines:
                    stacks.append(tuple(reversed(machine_frames(lines))))
                lines, current = [], None
                continue
            if not line[0].isspace():
                m = re.match(r'^(\S.*?)\s+\d+(/\d+)?\s+', line)
                current = m.group(1).replace(' ', '_') if m else None
                continue
            m = re.match(r'^\s*([0-9a-f]+)\s+(.*?)\s+\((.*)\)$', line)
            if not m:
                continue
            sym = re.sub(r'\+0x[0-9a-f]+$', '', m.group(2))
            lines.append((m.group(1), tidy(sym), m.group(3) == 'inlined'))
    return stacks


def read_folded(path, comm):
    stacks = []
    with open(path, errors='replace') as f:
        for line in f:
            key, _, count = line.rstrip('\n').rpartition(' ')
            parts = key.split(';')
            if parts[0] != comm:
                continue
            stacks += [tuple(tidy(p) for p in parts[1:])] * int(count)
    return stacks


def prefixes(stacks):
    out = set()
    for s in stacks:
        for i in range(len(s) + 1):
            out.add(s[:i])
    return out


def matching(stacks, others):
    known = prefixes(others)
    return sum(1 for s in stacks if s[:-1] in known)


def whole(s):
    # Debian's gzip keeps no symbol of its own: its _start and main are unnamed, libc's start is not.
    return (len(s) > 0 and s[0] == 'start') or 'main' in s or 'start_call_main' in s


def main(argv):
    args = argv[1:]
    opts = {'--min-match': 0.9, '--min-whole': 0.9}
    pos = []
    i = 0
    while i < len(args):
        if args[i] in opts:
            opts[args[i]] = float(args[i + 1])
            i += 2
        else:
            pos.append(args[i])
            i += 1
    if len(pos) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    perf = read_perf(pos[0], pos[2])
    tprof = read_folded(pos[1], pos[2])
    if not perf or not tprof:
        print(f'no samples to compare: perf {len(perf)}, tprofd {len(tprof)}')
        return 1
    t_match = matching(tprof, perf) / len(tprof)
    p_match = matching(perf, tprof) / len(perf)
    t_whole = sum(1 for s in tprof if whole(s)) / len(tprof)
    p_whole = sum(1 for s in perf if whole(s)) / len(perf)
    print(f'{pos[2]}: tprofd {len(tprof)} samples, {t_whole:.1%} whole, {t_match:.1%} match perf; '
          f'perf {len(perf)} samples, {p_whole:.1%} whole, {p_match:.1%} match tprofd')
    ok = t_match >= opts['--min-match'] and p_match >= opts['--min-match'] and t_whole >= opts['--min-whole']
    if not ok:
        unmatched = {}
        known = prefixes(perf)
        for s in tprof:
            if s[:-1] not in known:
                unmatched[s] = unmatched.get(s, 0) + 1
        for s, n in sorted(unmatched.items(), key=lambda x: -x[1])[:5]:
            print(f'  tprofd only ({n}): {";".join(s)}')
        known = prefixes(tprof)
        unmatched = {}
        for s in perf:
            if s[:-1] not in known:
                unmatched[s] = unmatched.get(s, 0) + 1
        for s, n in sorted(unmatched.items(), key=lambda x: -x[1])[:5]:
            print(f'  perf only ({n}): {";".join(s)}')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main(sys.argv))
