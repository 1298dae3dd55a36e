# SPDX-License-Identifier: LGPL-2.1-or-later
"""What the end-to-end tests that plant a rise under the real daemon check in its bundle.

The rise is measured from the bundle's own files (event.folded against the rest of the bundle),
then looked for in `tprof-bundle show --json` and in the data report.html carries, which must
give one answer. Imported by the test scripts' Python with PYTHONPATH set to this folder.
"""
import json
import math


def kernel_functions():
    """The kernel's text symbols, as tprofd names kernel frames (/proc/kallsyms)."""
    names = set()
    with open("/proc/kallsyms") as f:
        for line in f:
            fields = line.split()
            if len(fields) >= 3 and fields[1] in "tT":
                names.add(fields[2])
    return names


class SyscallSamples:
    """A comm_counts() line hook counting one comm's samples taken in a system call (a sample the
    timer takes there names the kernel's entry path)."""

    def __init__(self, comm):
        self.comm, self.n = comm, 0

    def __call__(self, comm, stack, n):
        if comm == self.comm and ";entry_SYSCALL_64" in stack:
            self.n += n


def page_analysis(html_path):
    """The analysis report.html carries (what its page shows as the answer and the rankings)."""
    html = open(html_path).read()
    key = '"analysis":'
    return json.JSONDecoder().raw_decode(html[html.index(key) + len(key):])[0]


def comm_counts(bundle, name, line_hook=None):
    """Samples per comm (a stack's first frame) of the folded file name in bundle; line_hook(comm,
    stack, count) is called on every line."""
    counts = {}
    for line in open("%s/%s" % (bundle, name)):
        stack, n = line.rsplit(" ", 1)
        comm = stack.split(";", 1)[0]
        counts[comm] = counts.get(comm, 0) + int(n)
        if line_hook:
            line_hook(comm, stack, int(n))
    return counts


def proportion_z(a1, n1, a2, n2):
    """The two-proportion z of a1 of n1 against a2 of n2 (pooled), 0 where it is not defined."""
    p = (a1 + a2) / (n1 + n2)
    return (a1 / n1 - a2 / n2) / math.sqrt(p * (1 - p) * (1 / n1 + 1 / n2)) if 0 < p < 1 else 0


def near_rise(near, slice_, baseline, comms):
    """The samples of comms in the event's seconds (near, of n1) and in the rest of the bundle (of
    n2), and the two-proportion z of the first share against the second: (a1, n1, a2, n2, z)."""
    n1 = sum(near.values())
    n2 = sum(slice_.values()) + sum(baseline.values()) - n1
    a1 = sum(near.get(c, 0) for c in comms)
    a2 = sum(slice_.get(c, 0) + baseline.get(c, 0) for c in comms) - a1
    return a1, n1, a2, n2, proportion_z(a1, n1, a2, n2)


def check_ranked(show, page, process, z, top_ok, absent=()):
    """process ranks among the rises around the event where its z puts it, in the page's ranking
    (10 rows) and show's (5), with a top function top_ok() takes (other work on the machine may
    come first); no row is named as one of absent. show counts an interrupt that landed on the
    process as [irq]'s and the files under its comm: its z is the files' within a tenth."""
    for name, rows, full in (("page", page["near"]["processes"], 10),
                             ("show", show["around_event"]["processes"], 5)):
        rows = [dict(r, name=r.get("name", r.get("process"))) for r in rows]
        ours = [r for r in rows if r["name"] == process]
        assert not [r for r in rows if r["name"] in absent], (name, rows)
        assert ours or (len(rows) == full and rows[-1]["z"] >= 0.9 * z), \
            (name, z, [(r["name"], r["z"]) for r in rows])
        assert not ours or (top_ok(ours[0]["top_function"]) and abs(ours[0]["z"] - z) < 0.1 * z), \
            (name, z, ours)


def check_answers_agree(show, page):
    """show's one-line answer and the page's are one (the thread of a pool too), and so is the
    fall. Returns show's answer (None where there is none)."""
    a, pa = show["answer"], page["answer"]
    assert (a is None) == (pa is None), (a, pa)
    if a:
        name = a["process"] + (";" + a["function"] if a["kind"] == "function" and a.get("function") else "")
        assert (pa["name"], pa["from"], pa["kind"], pa["under"], pa.get("thread"), pa.get("processes")) == \
            (name, a["from"], a["kind"], a.get("under"), a.get("thread"), a.get("processes")), (a, pa)
    assert (show["fall"] or {}).get("process") == (page["fall"] or {}).get("name"), (show["fall"], page["fall"])
    return a
