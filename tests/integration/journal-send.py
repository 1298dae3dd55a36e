#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Sends journal entries to the journald of namespace NS in its native protocol, and exits only
after journald has written them (journalctl --sync is a barrier for everything sent before it).

journald fills the trusted fields _COMM, _EXE, _CMDLINE and _SYSTEMD_UNIT from /proc/<pid> of the
sender when it reads a message; a sender that has already exited by then (logger, on a busy
machine) leaves them out, and a rule filtering on them does not match. This sender stays alive
until its entries are written, so they always carry them; its comm is "journal-send.py".

Usage: journal-send.py NS FIELD=VALUE...         one entry
       journal-send.py NS --burst N FIELD=VALUE...  N entries, "%d" in a value becomes 0..N-1
"""
import socket
import subprocess
import sys
import time


def entry(fields, i):
    out = bytearray()
    for f in fields:
        name, _, value = f.partition("=")
        value = value.replace("%d", str(i)).encode()
        if b"\n" in value:
            out += name.encode() + b"\n" + len(value).to_bytes(8, "little") + value + b"\n"
        else:
            out += name.encode() + b"=" + value + b"\n"
    return bytes(out)


def main():
    ns, args = sys.argv[1], sys.argv[2:]
    n = 1
    if args[:1] == ["--burst"]:
        n, args = int(args[1]), args[2:]
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 8 * 1024 * 1024)
    # journald may have made its socket file a moment before it reads from it (and on a busy
    # machine that moment is long): a refused connection is tried again for a while.
    for attempt in range(100):
        try:
            sock.connect("/run/systemd/journal.%s/socket" % ns)
            break
        except (ConnectionRefusedError, FileNotFoundError):
            if attempt == 99:
                raise
            time.sleep(0.1)
    for i in range(n):
        sock.send(entry(args, i))
    subprocess.run(["journalctl", "--namespace", ns, "--sync"], check=True)


main()
