#!/usr/bin/env python3
"""USAGE: jsonwin_check.py SCHEMA validate FILE...
          jsonwin_check.py SCHEMA sum FILE        (prints each value column's sum)
          jsonwin_check.py SCHEMA deltas FILE...  (heap files in window order: checks that
                                                  each delta is in-use minus the previous
                                                  window's, and that the deltas sum to the
                                                  last window's in-use totals; prints
                                                  those totals and how many deltas are
                                                  negative)
Validates every file against SCHEMA first (python3-jsonschema, draft 2020-12)."""
import json
import sys

import jsonschema


def load(schema, path):
    doc = json.load(open(path))
    jsonschema.validate(doc, schema, cls=jsonschema.Draft202012Validator)
    return doc


def key(s):
    return json.dumps([s["labels"], s["frames"]])


def deltas(docs):
    total = [0, 0]
    released = 0
    prev = {}
    for d in docs:
        cur = {}
        for s in d["stacks"]:
            k = key(s)
            was = prev.get(k, [0, 0])
            now = s["values"][2:4]
            if [now[0] - was[0], now[1] - was[1]] != s["delta"]:
                sys.exit(f"window {d['window']['index']}: delta {s['delta']} is not {now} - {was}")
            total = [total[0] + s["delta"][0], total[1] + s["delta"][1]]
            released += s["delta"][1] < 0
            cur[k] = now
        for k, was in prev.items():
            if k not in cur and was != [0, 0]:
                sys.exit(f"window {d['window']['index']}: a stack of {was} is not listed gone")
        prev = cur
    last = [sum(s["values"][2] for s in docs[-1]["stacks"]),
            sum(s["values"][3] for s in docs[-1]["stacks"])]
    if total != last:
        sys.exit(f"deltas sum to {total}, last in-use is {last}")
    print(total[0], total[1], released)


def main():
    schema = json.load(open(sys.argv[1]))
    docs = [load(schema, p) for p in sys.argv[3:]]
    if sys.argv[2] == "sum":
        n = len(docs[0]["sample_types"])
        print(" ".join(str(sum(s["values"][i] for s in docs[0]["stacks"])) for i in range(n)))
    elif sys.argv[2] == "deltas":
        deltas(docs)
    else:
        print("valid", len(docs))


main()
