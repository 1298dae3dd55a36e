#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Folds `perf script` text the way stackcollapse-perf.pl does with its default options, so tests
can check that tprof's perf-script export folds to exactly tprof's folded export without needing
the FlameGraph scripts installed. Rules (VIEWERS.md, stackcollapse-perf.pl defaults):
  - '#' lines are skipped; a blank line ends a sample;
  - event line: comm is the lazy match before the first run of blanks followed by PID[/TID] and a
    blank; blanks in it become '_'; it becomes the root frame;
  - frame line: '<hex> <symbol> (<dso>)', a trailing '+0x<hex>' is cut from the symbol; '[unknown]'
    with a known DSO becomes '[<dso basename>]'; ';' -> ':'; everything from the first '(' is cut
    unless it looks like a Go method '.(...).' or opens '(anonymous namespace)'; quotes removed;
    for comm 'java' a leading 'L' is cut from names containing '/'; '->' splits inlined frames,
    marked '_[i]' after the first;
  - frames are collected leaf first and joined root first with ';'; counts are samples (the period
    column is not summed); output sorted bytewise.
"""
import re
import sys

EVENT = re.compile(r'^(\S.+?)\s+(\d+)/*(\d+)*\s+')
FRAME = re.compile(r'^\s*(\w+)\s*(.+) \((\S*)\)')


def tidy(func, mod, pname):
    out = []
    for f in func.split('->'):
        if f == '[unknown]' and mod != '[unknown]':
            f = '[' + mod.rsplit('/', 1)[-1] + ']'
        f = f.replace(';', ':')
        if not re.search(r'\.\(.*\)\.', f):
            f = re.sub(r'\((?!anonymous namespace\)).*', '', f)
        f = f.replace('"', '').replace("'", '')
        if pname == 'java' and '/' in f:
            f = re.sub(r'^L', '', f)
        if out:
            f += '_[i]'
        out.append(f)
    return out


def main():
    collapsed = {}
    stack, pname = [], None
    data = open(sys.argv[1], 'rb').read() if len(sys.argv) > 1 else sys.stdin.buffer.read()
    for raw in data.decode('utf-8').split('\n'):
        line = raw
        if line.startswith('#'):
            continue
        if line == '':
            # stackcollapse-perf.pl puts the comm in front first, so even a sample without
            # frames counts, as the bare comm.
            if stack or pname is not None:
                key = ';'.join([pname if pname is not None else ''] + stack)
                collapsed[key] = collapsed.get(key, 0) + 1
            stack, pname = [], None
            continue
        m = EVENT.match(line)
        if m and not line.startswith('\t'):
            pname = m.group(1).replace(' ', '_')
            continue
        m = FRAME.match(line)
        if m:
            func, mod = m.group(2), m.group(3)
            func = re.sub(r'\+0x[\da-f]+$', '', func)
            if func.startswith('('):
                continue
            stack = tidy(func, mod, pname) + stack
            continue
        print('unrecognized line: %r' % line, file=sys.stderr)
        sys.exit(2)
    out = sys.stdout.buffer
    for k in sorted(collapsed, key=lambda s: s.encode('utf-8')):
        out.write(('%s %d\n' % (k, collapsed[k])).encode('utf-8'))


main()
