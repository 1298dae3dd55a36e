#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A second reader of tprof window files (format versions 3, 4 and 5), written from docs/window-format.md
alone, so that the tests can check the document says enough to read a window.

Usage: window-reader.py FILE...

For every intact sample of every FILE, in file order (chunk order, then sample order within the
chunk), prints one line:

    TIME_NS CPU PID TID PERIOD COMM<TAB>FRAME;FRAME;...<TAB>CGROUP[<TAB>BUILD_ID;BUILD_ID;...]

- TIME_NS: the sample's perf-clock time in nanoseconds (decimal; a multiple of 1000).
- CPU, PID, TID: decimal. PERIOD: the recorded event period, decimal, 0 when unknown.
- COMM: the thread's comm as stored (not tidied as the exports tidy it), escaped (below). It may
  hold blanks; it ends at the tab.
- FRAMES: leaf first, joined by ';', nothing after the tab for a sample without a call chain.
  Each frame is ADDR:SYMBOL+0xOFF:DSO with ADDR and OFF in lowercase hex (ADDR without 0x, no
  leading zeros), SYMBOL and DSO as stored ("[unknown]" included, which prints "+0x0" or its
  offset like any other), escaped. SYMBOL may contain ':'; DSO never does (it is escaped), so a
  frame splits at its first ':' (address) and its last ':' (DSO), and the offset is after the
  last "+0x" of the middle part.
- CGROUP: the sample's cgroup path as stored, escaped as COMM; empty when the sample has none
  (reference 0, or a version 3 file).
- BUILD_IDS: only when one of the sample's frames has a build id (version 5): per frame, leaf
  first, the build id of its DSO in lowercase hex, empty when the chain gives it none.
- Escaping: bytes outside printable ASCII (0x20-0x7e), '\\', ';' (COMM, SYMBOL, DSO) and ':'
  (DSO only) are written as \\xHH (two lowercase hex digits).

The kernel-frame flags, clock mappings and lost-sample counts are decoded, not printed.

Corrupt stretches and chunks are skipped and reported on stderr as
"window-reader: FILE: corrupt ... at byte offset N: REASON"; a truncated end (the normal state of
a .partial being written) ends the file silently. A file whose header cannot be read is reported
and skipped.

Cases the document first left open (unknown chunk flag bits, raw_len of a stored payload, varints
beyond 64 bits, 32-bit pids and tids, the bounds of lost-sample CPUs and header strings, bytes
after the header strings, chain adjacency) were settled by trying tprof's store on forged files
and are now written into docs/window-format.md; this reader follows the document.

Exit status: 0 when every file's header was readable (corrupt chunks do not count), 1 when some
file could not be opened or its header was unreadable, 64 on a usage error.

Standard library only; zstd frames are decompressed by the zstd command-line tool.
"""
import signal
import subprocess
import sys

M32 = 0xFFFFFFFF
M64 = (1 << 64) - 1

CHUNK_HEADER_LEN = 48
MAX_SAMPLES = 1 << 22
MAX_LEN = 256 << 20
MAX_STRING = 1024
MAX_DEPTH = 127
MAX_INTERVAL_US = 3600 * 1000000
RECENCY_MAX = 32


class Corrupt(Exception):
    pass


# ---------------------------------------------------------------------------------------- crc32c

def _crc_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC_TABLE = _crc_table()


def crc32c(data):
    c = 0xFFFFFFFF
    t = _CRC_TABLE
    for b in data:
        c = t[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


assert crc32c(b"123456789") == 0xE3069283


def le(data, off, size):
    return int.from_bytes(data[off:off + size], "little")


def le_signed(data, off, size):
    return int.from_bytes(data[off:off + size], "little", signed=True)


# ---------------------------------------------------------------------------------------- varints

class Reader:
    def __init__(self, buf):
        self.buf = buf
        self.pos = 0

    def remaining(self):
        return len(self.buf) - self.pos

    def varint(self):
        v = 0
        for i in range(10):
            if self.pos >= len(self.buf):
                raise Corrupt("payload ends inside a varint")
            b = self.buf[self.pos]
            self.pos += 1
            if i == 9 and b > 1:
                raise Corrupt("varint does not fit 64 bits")
            v |= (b & 0x7F) << (7 * i)
            if not b & 0x80:
                return v
        raise Corrupt("varint longer than 10 bytes")

    def svarint(self):
        u = self.varint()
        return (u >> 1) ^ -(u & 1)

    def bytes(self, n):
        if n > self.remaining():
            raise Corrupt("payload ends inside a byte string")
        b = self.buf[self.pos:self.pos + n]
        self.pos += n
        return b

    def count(self, n, min_bytes_each):
        if n * min_bytes_each > self.remaining():
            raise Corrupt("a count exceeds what the remaining bytes could hold")
        return n


# ---------------------------------------------------------------------------------- range coder

class RangeDecoder:
    def __init__(self, buf):
        if len(buf) < 5:
            raise Corrupt("sample stream shorter than 5 bytes")
        if buf[0] != 0:
            raise Corrupt("sample stream does not start with 0")
        self.buf = buf
        self.code = int.from_bytes(buf[1:5], "big")
        self.range = 0xFFFFFFFF
        self.pos = 5

    def bit(self, probs, i):
        p = probs[i]
        bound = (self.range >> 11) * p
        if self.code < bound:
            self.range = bound
            probs[i] = p + ((2048 - p) >> 5)
            b = 0
        else:
            self.code -= bound
            self.range -= bound
            probs[i] = p - (p >> 5)
            b = 1
        while self.range < (1 << 24):
            if self.pos >= len(self.buf):
                raise Corrupt("sample stream needs bytes past its end")
            self.range = (self.range << 8) & M32
            self.code = ((self.code << 8) | self.buf[self.pos]) & M32
            self.pos += 1
        return b

    def half(self):
        return self.bit([1024], 0)

    def tree(self, probs, k):
        m = 1
        for _ in range(k):
            m = 2 * m + self.bit(probs, m)
        return m - (1 << k)


class IntModel:
    def __init__(self):
        self.slot = [1024] * 32
        self.low = [None] + [[1024] * (1 << k) for k in range(1, 5)]

    def decode(self, rc):
        s = rc.tree(self.slot, 5)
        if s == 0:
            return 0
        if s <= 4:
            low = rc.tree(self.low[s], s)
        else:
            low = 0
            for _ in range(s):
                low = (low << 1) | rc.half()
        return (1 << s) + low - 1

    def decode64(self, rc):
        v = self.decode(rc)
        if v < 0xFFFFFFFE:
            return v
        v = 0
        for _ in range(64):
            v = (v << 1) | rc.half()
        return v


class StackContext:
    def __init__(self):
        self.entries = []  # [node, count], sorted by count, largest first
        self.rank = IntModel()


class Model:
    """The sample model: lives as long as a chain."""

    def __init__(self):
        self.time_models = [IntModel(), IntModel()]  # after a miss, after a hit (or none)
        self.next_us = {}  # per CPU: the unrounded time its next tick is expected at
        self.on_time = {}
        self.same = [1024]
        self.thread_rank = IntModel()
        self.thread_back = IntModel()
        self.stack_back = IntModel()
        self.last_thread = {}
        self.recency = []
        self.contexts = {}
        self.cgroup_same = [1024, 1024]  # the prediction was: [0] the thread's, [1] the CPU's
        self.cgroup_model = IntModel()
        self.thread_cgroup = {}
        self.cpu_cgroup = {}

    def time(self, rc, cpu, first_us, interval_us, res):
        expected = self.next_us.get(cpu, first_us)
        predicted = expected - expected % res
        ctx = 1 if cpu not in self.next_us or self.on_time[cpu] else 0
        z = self.time_models[ctx].decode64(rc)
        steps = (z >> 1) ^ -(z & 1)
        t = predicted + steps * res
        if t < 0 or t > M64 // 1000:
            raise Corrupt("sample time out of range")
        hit = steps == 0
        self.next_us[cpu] = (expected if hit else t) + interval_us
        self.on_time[cpu] = hit
        return t

    def thread(self, rc, cpu, n_threads):
        t = self.last_thread.get(cpu)
        if t is None or rc.bit(self.same, 0) != 0:
            r = self.thread_rank.decode(rc)
            if r >= 1:
                if r - 1 >= len(self.recency):
                    raise Corrupt("thread rank beyond the recency list")
                t = self.recency[r - 1]
            else:
                b = self.thread_back.decode(rc)
                if b >= n_threads:
                    raise Corrupt("thread id out of range")
                t = n_threads - 1 - b
        if t in self.recency:
            self.recency.remove(t)
        self.recency.insert(0, t)
        del self.recency[RECENCY_MAX:]
        self.last_thread[cpu] = t
        return t

    def stack(self, rc, comm_id, n_nodes):
        ctx = self.contexts.get(comm_id)
        if ctx is None:
            ctx = self.contexts[comm_id] = StackContext()
        e = ctx.entries
        r = ctx.rank.decode(rc)
        if r >= 1:
            i = r - 1
            if i >= len(e):
                raise Corrupt("stack rank beyond its context")
        else:
            b = self.stack_back.decode(rc)
            if b >= n_nodes:
                raise Corrupt("stack node out of range")
            e.append([n_nodes - 1 - b, 0])
            i = len(e) - 1
        node, c = e[i]
        if c != M32:
            j = i
            while j > 0 and e[j - 1][1] == c:
                j -= 1
            e[i], e[j] = e[j], e[i]
            e[j][1] = c + 1
        return node

    def cgroup(self, rc, cpu, thread, n_cgroups):
        """Version 4: the sample's cgroup reference (0: none, k: table entry k - 1)."""
        pred, ctx = self.thread_cgroup.get(thread), 0
        if pred is None:
            pred, ctx = self.cpu_cgroup.get(cpu), 1
        if pred is not None and rc.bit(self.cgroup_same, ctx) == 0:
            g = pred
        else:
            g = self.cgroup_model.decode(rc)
            if g > n_cgroups:
                raise Corrupt("cgroup reference out of range")
        self.thread_cgroup[thread] = g
        self.cpu_cgroup[cpu] = g
        return g


# ----------------------------------------------------------------------------------- formatting

def esc(b, specials):
    out = []
    for ch in b:
        if 0x20 <= ch <= 0x7E and ch != 0x5C and ch not in specials:
            out.append(chr(ch))
        else:
            out.append("\\x%02x" % ch)
    return "".join(out)


COMM_SPECIALS = frozenset(b";\t")
SYMBOL_SPECIALS = frozenset(b";")
DSO_SPECIALS = frozenset(b";:")


# ------------------------------------------------------------------------------------ the chain

class Chain:
    """Tables and model shared by the chunks of a chain."""

    def __init__(self):
        self.strings = []
        self.frames = []        # (symbol id, dso id, addr, offset, flags)
        self.parent = [0]       # node 0 is the root
        self.node_frame = [None]
        self.depth = [0]
        self.threads = []       # (pid, tid, comm id)
        self.cgroups = []       # path string ids (version 4)
        self.build_ids = {}     # DSO string id -> build id, hex (version 5)
        self.n_build_ids = 0
        self.model = Model()
        self.clock = [0, 0, 0, 0, 0]  # method and four fields, as the last chunk gave them (mod 2^64)
        self.next_pos = 0       # chain_pos the next chunk must have
        self.end = 0            # file offset right after the chain's last chunk
        self.stack_text = {0: ""}
        self.frame_text = {}
        self.comm_text = {}

    def frame_str(self, f):
        s = self.frame_text.get(f)
        if s is None:
            sym, dso, addr, off, _flags = self.frames[f]
            s = "%x:%s+0x%x:%s" % (addr, esc(self.strings[sym], SYMBOL_SPECIALS), off,
                                  esc(self.strings[dso], DSO_SPECIALS))
            self.frame_text[f] = s
        return s

    def build_ids_str(self, node):
        """The BUILD_IDS column of a sample with this stack ("" if no frame has one)."""
        ids = []
        while node != 0:
            ids.append(self.build_ids.get(self.frames[self.node_frame[node]][1], ""))
            node = self.parent[node]
        return "\t" + ";".join(ids) if any(ids) else ""

    def stack_str(self, node):
        s = self.stack_text.get(node)
        if s is None:
            path = []
            n = node
            while n != 0 and n not in self.stack_text:
                path.append(n)
                n = self.parent[n]
            # fill from the outermost uncached node down to the leaf
            for m in reversed(path):
                tail = self.stack_text[self.parent[m]]
                fs = self.frame_str(self.node_frame[m])
                self.stack_text[m] = fs + (";" + tail if tail else "")
            s = self.stack_text[node]
        return s

    def comm_str(self, sid):
        s = self.comm_text.get(sid)
        if s is None:
            s = self.comm_text[sid] = esc(self.strings[sid], COMM_SPECIALS)
        return s


def decode_payload(raw, hdr, chain):
    """Decodes a raw payload into chain (tables and model grow); returns the samples as
    (time_ns, cpu, thread id, period, node). Raises Corrupt."""
    r = Reader(raw)
    # 1. preamble: the clock mapping, each field against the chain's previous chunk's (decoded, not
    # printed), then the sampling interval
    method = r.varint()
    chain.clock = [method] + [(b + r.svarint()) & M64 for b in chain.clock[1:]]
    interval_us = r.varint()
    if interval_us >= MAX_INTERVAL_US:
        raise Corrupt("interval_us of 3600 s or more")

    # 2. strings
    base, n = r.varint(), r.varint()
    if base != len(chain.strings):
        raise Corrupt("string table base %d, expected %d" % (base, len(chain.strings)))
    r.count(n, 1)
    for _ in range(n):
        ln = r.varint()
        if ln > MAX_STRING:
            raise Corrupt("string longer than %d bytes" % MAX_STRING)
        s = r.bytes(ln)
        if 0 in s:
            raise Corrupt("string contains NUL")
        chain.strings.append(bytes(s))
    n_strings = len(chain.strings)

    # 3. frames
    base, n = r.varint(), r.varint()
    if base != len(chain.frames):
        raise Corrupt("frame table base %d, expected %d" % (base, len(chain.frames)))
    r.count(n, 5)
    syms = [r.varint() for _ in range(n)]
    dsos = [r.varint() for _ in range(n)]
    deltas = [r.svarint() for _ in range(n)]
    offs = [r.svarint() for _ in range(n)]
    flags = [r.varint() for _ in range(n)]
    addr = 0
    prev_off = 0
    for k in range(n):
        if syms[k] >= n_strings or dsos[k] >= n_strings:
            raise Corrupt("frame names a string out of range")
        addr = (addr + deltas[k]) & M64
        guess = 0
        if k > 0 and syms[k] == syms[k - 1] and dsos[k] == dsos[k - 1] and prev_off != 0:
            guess = prev_off + deltas[k]
        off = (guess + offs[k]) & M64
        chain.frames.append((syms[k], dsos[k], addr, off, flags[k]))
        prev_off = off
    n_frames = len(chain.frames)

    # 4. stack nodes
    base, n = r.varint(), r.varint()
    if base != len(chain.parent) - 1:
        raise Corrupt("node table base %d, expected %d" % (base, len(chain.parent) - 1))
    r.count(n, 2)
    backs = [r.varint() for _ in range(n)]
    fids = [r.varint() for _ in range(n)]
    for k in range(n):
        nid = base + 1 + k
        if not 1 <= backs[k] <= nid:
            raise Corrupt("node back out of range")
        if fids[k] >= n_frames:
            raise Corrupt("node names a frame out of range")
        p = nid - backs[k]
        d = chain.depth[p] + 1
        if d > MAX_DEPTH:
            raise Corrupt("stack deeper than %d" % MAX_DEPTH)
        chain.parent.append(p)
        chain.node_frame.append(fids[k])
        chain.depth.append(d)
    n_nodes = len(chain.parent)  # counts the root

    # 5. threads
    base, n = r.varint(), r.varint()
    if base != len(chain.threads):
        raise Corrupt("thread table base %d, expected %d" % (base, len(chain.threads)))
    r.count(n, 3)
    pids = [r.varint() for _ in range(n)]
    tdel = [r.svarint() for _ in range(n)]
    comms = [r.varint() for _ in range(n)]
    for k in range(n):
        if comms[k] >= n_strings:
            raise Corrupt("thread names a comm out of range")
        if pids[k] > M32:
            raise Corrupt("pid of 2^32 or more")
        chain.threads.append((pids[k], (pids[k] + tdel[k]) & M32, comms[k]))
    n_threads = len(chain.threads)

    # 5b. cgroups (version 4)
    if hdr["version"] >= 4:
        base, n = r.varint(), r.varint()
        if base != len(chain.cgroups):
            raise Corrupt("cgroup table base %d, expected %d" % (base, len(chain.cgroups)))
        r.count(n, 1)
        for _ in range(n):
            sid = r.varint()
            if sid >= n_strings:
                raise Corrupt("cgroup names a string out of range")
            chain.cgroups.append(sid)

    # 5c. build ids (version 5)
    if hdr["version"] >= 5:
        base, n = r.varint(), r.varint()
        if base != chain.n_build_ids:
            raise Corrupt("build id table base %d, expected %d" % (base, chain.n_build_ids))
        r.count(n, 2)
        dsos = [r.varint() for _ in range(n)]
        for sid in dsos:
            if sid >= n_strings:
                raise Corrupt("build id names a string out of range")
            ln = r.varint()
            if ln < 1 or ln > 64:
                raise Corrupt("build id of %d bytes" % ln)
            if sid in chain.build_ids:
                raise Corrupt("a second build id for one DSO in a chain")
            chain.build_ids[sid] = r.bytes(ln).hex()
        chain.n_build_ids += n

    # 6. samples
    ns = hdr["n_samples"]
    r.count(ns, 2)
    cpus = [r.varint() for _ in range(ns)]
    pdel = [r.svarint() for _ in range(ns)]
    for c in cpus:
        if c >= 65536:
            raise Corrupt("CPU 65536 or above")
    periods = []
    p = 0
    for d in pdel:
        p = (p + d) & M64
        periods.append(p)
    ln = r.varint()
    stream = r.bytes(ln)
    rc = RangeDecoder(stream)
    model = chain.model
    out = []
    times = []
    first_us = hdr["first_ns"] // 1000
    resolution_us = hdr["resolution_us"]
    for i in range(ns):
        times.append(model.time(rc, cpus[i], first_us, interval_us, resolution_us))
        t = model.thread(rc, cpus[i], n_threads)
        node = model.stack(rc, chain.threads[t][2], n_nodes)
        g = model.cgroup(rc, cpus[i], t, len(chain.cgroups)) if hdr["version"] >= 4 else 0
        out.append((times[i] * 1000, cpus[i], t, periods[i], node, chain.cgroups[g - 1] if g else None))
    if rc.pos != len(stream):
        raise Corrupt("sample stream leaves %d bytes unread" % (len(stream) - rc.pos))
    for i in range(1, ns):
        if times[i] < times[i - 1]:
            raise Corrupt("sample times decrease")
    for t in times:
        if t % resolution_us:
            raise Corrupt("sample time %d us is not a multiple of the resolution" % t)
    if ns and times[0] * 1000 != hdr["first_ns"]:
        raise Corrupt("first sample time %d ns differs from first_ns %d" % (times[0] * 1000, hdr["first_ns"]))
    if ns and times[-1] * 1000 != hdr["last_ns"]:
        raise Corrupt("last sample time %d ns differs from last_ns %d" % (times[-1] * 1000, hdr["last_ns"]))

    # 7. lost samples
    n = r.varint()
    r.count(n, 2)
    for _ in range(n):
        # a CPU as in the sample column (the document gives no bound here; the store's)
        if r.varint() >= 65536:
            raise Corrupt("lost samples on CPU 65536 or above")
        r.varint()
    if r.remaining():
        raise Corrupt("%d bytes left over" % r.remaining())
    return out


# ------------------------------------------------------------------------------------- the file

def parse_file_header(data):
    if len(data) < 16:
        raise Corrupt("shorter than a file header")
    if data[0:8] != b"TPROFWIN":
        raise Corrupt("not a window (bad magic)")
    version = le(data, 8, 2)
    if version not in (3, 4, 5):
        raise Corrupt("format version %d not supported" % version)
    flags = le(data, 10, 2)
    if flags & ~1:
        raise Corrupt("unknown header flags 0x%x" % flags)
    header_len = le(data, 12, 4)
    if header_len < 80 + 4 * 2 + 4:
        raise Corrupt("header_len %d too small" % header_len)
    if header_len > len(data):
        raise Corrupt("file shorter than its header")
    if crc32c(data[0:header_len - 4]) != le(data, header_len - 4, 4):
        raise Corrupt("header CRC mismatch")
    res = le(data, 44, 4)
    if res > 1000000:
        raise Corrupt("time_resolution_us %d above 1 s" % res)
    pos = 80
    strings = []
    for _ in range(4):
        if pos + 2 > header_len - 4:
            raise Corrupt("header strings overrun the header")
        ln = le(data, pos, 2)
        pos += 2
        if ln > MAX_STRING or pos + ln > header_len - 4:
            raise Corrupt("header string too long")
        strings.append(bytes(data[pos:pos + ln]))
        pos += ln
    return {"header_len": header_len, "version": version, "flags": flags, "time_resolution_us": res or 1,
            "host": strings[0], "boot_id": strings[1], "kernel": strings[2], "event": strings[3]}


def parse_chunk_header(data, pos):
    """The chunk header at pos as a dict, or None if it is not a valid one."""
    if pos + CHUNK_HEADER_LEN > len(data) or data[pos:pos + 4] != b"TPCK":
        return None
    if crc32c(data[pos:pos + 44]) != le(data, pos + 44, 4):
        return None
    h = {
        "flags": le(data, pos + 4, 2),
        "chain_pos": le(data, pos + 6, 2),
        "first_ns": le(data, pos + 8, 8),
        "last_ns": le(data, pos + 16, 8),
        "n_samples": le(data, pos + 24, 4),
        "raw_len": le(data, pos + 28, 4),
        "stored_len": le(data, pos + 32, 4),
        "crc": le(data, pos + 36, 4),
        "lost": le(data, pos + 40, 4),
    }
    if h["first_ns"] > h["last_ns"]:
        return None
    # Flag bits other than 0 make the header invalid (search on), not the chunk corrupt: the
    # store reads a valid header inside such a chunk's payload.
    if h["flags"] & ~1:
        return None
    if h["n_samples"] > MAX_SAMPLES or h["raw_len"] > MAX_LEN or h["stored_len"] > MAX_LEN:
        return None
    if not h["flags"] & 1 and h["raw_len"] != h["stored_len"]:
        return None
    if h["n_samples"] == 0 and h["last_ns"] != 0:
        return None
    return h


def find_next_header(data, pos):
    while True:
        pos = data.find(b"TPCK", pos)
        if pos < 0 or pos + CHUNK_HEADER_LEN > len(data):
            return None
        if parse_chunk_header(data, pos) is not None:
            return pos
        pos += 1


def payload(data, pos, h):
    stored = data[pos + CHUNK_HEADER_LEN:pos + CHUNK_HEADER_LEN + h["stored_len"]]
    if crc32c(stored) != h["crc"]:
        raise Corrupt("payload CRC mismatch")
    if not h["flags"] & 1:
        return stored
    p = subprocess.run(["zstd", "-d", "-q", "-c"], input=bytes(stored), stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL)
    if p.returncode != 0:
        raise Corrupt("payload does not decompress")
    if len(p.stdout) != h["raw_len"]:
        raise Corrupt("payload decompresses to %d bytes, raw_len says %d" % (len(p.stdout), h["raw_len"]))
    return p.stdout


def read_file(path, out, err):
    """Prints the file's samples; returns False if its header could not be read."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        err.write("window-reader: %s: %s\n" % (path, e.strerror))
        return False
    try:
        fh = parse_file_header(data)
    except Corrupt as e:
        err.write("window-reader: %s: unreadable: %s\n" % (path, e))
        return False

    def corrupt(what, offset, why):
        err.write("window-reader: %s: corrupt %s at byte offset %d: %s\n" % (path, what, offset, why))

    pos = fh["header_len"]
    chain = None
    size = len(data)
    while size - pos >= CHUNK_HEADER_LEN:
        h = parse_chunk_header(data, pos)
        if h is None:
            nxt = find_next_header(data, pos + 1)
            if nxt is None:
                break  # truncated at the invalid header
            corrupt("stretch", pos, "%d bytes without a valid chunk header" % (nxt - pos))
            chain = None
            pos = nxt
            continue
        end = pos + CHUNK_HEADER_LEN + h["stored_len"]
        if end > size:
            break  # truncated
        try:
            if h["chain_pos"] == 0:
                chain = Chain()
            elif chain is None or chain.next_pos != h["chain_pos"] or chain.end != pos:
                chain = None
                raise Corrupt("continues a chain (chain_pos %d) whose earlier chunks are missing or corrupt"
                              % h["chain_pos"])
            h["resolution_us"] = fh["time_resolution_us"]
            h["version"] = fh["version"]
            samples = decode_payload(payload(data, pos, h), h, chain)
        except Corrupt as e:
            corrupt("chunk", pos, str(e))
            chain = None
            pos = end
            continue
        chain.next_pos = h["chain_pos"] + 1
        chain.end = end
        lines = []
        for t_ns, cpu, tid_idx, period, node, cgroup in samples:
            pid, tid, comm = chain.threads[tid_idx]
            lines.append("%d %d %d %d %d %s\t%s\t%s%s\n" % (t_ns, cpu, pid, tid, period, chain.comm_str(comm),
                                                            chain.stack_str(node),
                                                            "" if cgroup is None else chain.comm_str(cgroup),
                                                            chain.build_ids_str(node)))
        out.write("".join(lines))
        pos = end
    return True


def main(argv):
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet under `| head`
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        sys.stderr.write("usage: window-reader.py FILE...\n")
        return 64 if len(argv) < 2 else 0
    ok = True
    for path in argv[1:]:
        ok = read_file(path, sys.stdout, sys.stderr) and ok
    sys.stdout.flush()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
