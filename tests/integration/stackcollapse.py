#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# Folds perf-script text by the rules of Brendan Gregg's stackcollapse-perf.pl with its default
# options (process names included, generic and Java tidying, one count per sample), written
# afresh from its documented behaviour so the store's test needs no Perl script in the tree.
import re
import sys

collapsed = {}
stack = []
pname = None
for line in sys.stdin:
    if line.startswith('#'):
        continue
    line = line.rstrip('\n')
    if line == '':
        stack.insert(0, pname if pname is not None else '')
        key = ';'.join(stack)
        collapsed[key] = collapsed.get(key, 0) + 1
        stack, pname = [], None
        continue
    m = re.match(r'^(\S.+?)\s+(\d+)/*(\d+)*\s+', line)
    if m and not line[0].isspace():
        pname = m.group(1).replace(' ', '_')
        continue
    m = re.match(r'^\s*(\w+)\s*(.+) \((\S*)\)', line)
    if not m:
        print('Unrecognized line: ' + line, file=sys.stderr)
        continue
    pc, rawfunc, mod = m.groups()
    rawfunc = re.sub(r'\+0x[\da-f]+$', '', rawfunc)
    if rawfunc.startswith('('):
        continue
    inline = []
    for func in rawfunc.split('->'):
        if func == '[unknown]' and mod != '[unknown]':
            func = '[' + re.sub(r'.*/', '', mod) + ']'
        func = func.replace(';', ':')
        if not re.search(r'\.\(.*\)\.', func):
            func = re.sub(r'\((?!anonymous namespace\)).*', '', func)
        func = func.replace('"', '').replace("'", '')
        if pname == 'java' and '/' in func:
            func = re.sub(r'^L', '', func)
        if inline:
            func += '_[i]'
        inline.append(func)
    stack[0:0] = inline

for k in sorted(collapsed, key=lambda s: s.encode()):
    print('%s %d' % (k, collapsed[k]))
