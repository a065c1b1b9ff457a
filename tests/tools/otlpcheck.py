#!/usr/bin/env python3
"""Finds a window's pprof in its OTLP request (tests/otlp.bats).

usage: otlpcheck.py PPROF_RAW DECODED [--timeline]

PPROF_RAW is `go tool pprof -raw FILE` of the window's pprof, DECODED what
tests/tools/otlpdecode printed for the request.  For every sample type of the pprof there
must be a Profile of that type and unit whose total is the pprof's, and whose values per
stack (the locations' addresses, leaf first, with process.pid and thread.id) are the
pprof's, stack for stack.  With --timeline the CPU time type is checked against the
timeline Profile's sum of values (one per timestamp) instead, and samples/count against
its count of timestamps.  Prints one line per sample type with the total and the top
stacks' leaf functions; exits 1 at the first difference.
"""
import re
import sys
from collections import defaultdict


def parse_raw(path):
    types, samples, locs = [], [], {}
    section = None
    cur = None
    for line in open(path):
        line = line.rstrip("\n")
        if line == "Samples:":
            section = "types"
            continue
        if line.startswith("Locations"):
            section = "locs"
            continue
        if line.startswith("Mappings"):
            section = None
            continue
        if section == "types":
            types = [t.replace("[dflt]", "") for t in line.split()]
            section = "samples"
            continue
        if section == "samples":
            m = re.match(r"^\s+([\d ]+): ([\d ]*)$", line)
            if m:
                vals = [int(v) for v in m.group(1).split()]
                cur = {"vals": vals, "locs": [int(x) for x in m.group(2).split()],
                       "pid": None, "tid": None}
                samples.append(cur)
                continue
            m = re.search(r"process\.pid:\[(\d+)", line)
            if m and cur:
                cur["pid"] = m.group(1)
            m = re.search(r"thread\.id:\[(\d+)", line)
            if m and cur:
                cur["tid"] = m.group(1)
        if section == "locs":
            m = re.match(r"^\s+(\d+): (0x[0-9a-f]+)", line)
            if m:
                locs[int(m.group(1))] = int(m.group(2), 16)
    return types, samples, locs


def parse_decoded(path):
    profiles = {}
    order = []
    for line in open(path):
        f = line.split()
        if f[0] == "profile":
            profiles[f[1]] = {"type": f[2], "samples": [], "timestamps": 0}
            order.append(f[1])
            m = re.search(r"timestamps=(\d+)", line)
            profiles[f[1]]["timestamps"] = int(m.group(1))
        elif f[0] == "sample":
            attrs = dict(x.split("=", 1) for x in f[3:] if "=" in x)
            addrs = tuple(int(a, 16) for a in attrs.get("stack", "").split(",") if a)
            profiles[f[1]]["samples"].append(
                (int(f[2]), attrs.get("process.pid"), attrs.get("thread.id"), addrs,
                 attrs.get("leaf", "-")))
    return [profiles[k] for k in order]


def main():
    raw, dec = sys.argv[1], sys.argv[2]
    timeline = "--timeline" in sys.argv[3:]
    types, samples, locs = parse_raw(raw)
    profiles = parse_decoded(dec)
    if not types:
        sys.exit("otlpcheck: no sample types in %s" % raw)
    for i, t in enumerate(types):
        want = defaultdict(int)
        for s in samples:
            key = (s["pid"], s["tid"], tuple(locs[x] for x in s["locs"]))
            want[key] += s["vals"][i]
        if timeline:
            p = [p for p in profiles if p["type"] == "cpu/nanoseconds"]
        else:
            p = [p for p in profiles if p["type"] == t]
        if len(p) != 1:
            sys.exit("otlpcheck: %d profiles of type %s" % (len(p), t))
        got = defaultdict(int)
        leaf = {}
        for v, pid, tid, addrs, lf in p[0]["samples"]:
            if timeline and t == "samples/count":
                continue
            got[(pid, tid, addrs)] += v
            leaf[(pid, tid, addrs)] = lf
        if timeline and t == "samples/count":
            total = sum(want.values())
            if p[0]["timestamps"] != total:
                sys.exit("otlpcheck: %s: %d timestamps for %d samples" %
                         (t, p[0]["timestamps"], total))
            print("ok %s timestamps=%d" % (t, total))
            continue
        if sum(got.values()) != sum(want.values()):
            sys.exit("otlpcheck: %s: total %d, the pprof's %d" %
                     (t, sum(got.values()), sum(want.values())))
        if dict(got) != dict(want):
            diff = set(got.items()) ^ set(want.items())
            sys.exit("otlpcheck: %s: %d stacks differ, e.g. %s" % (t, len(diff), sorted(diff)[0]))
        top = sorted(got.items(), key=lambda kv: -kv[1])[:3]
        print("ok %s total=%d stacks=%d top=%s" %
              (t, sum(got.values()), len(got), ",".join(leaf[k] for k, _ in top)))


main()
