#!/usr/bin/python3
"""validate_json.py SCHEMA FILE: validates FILE against the JSON Schema (draft 2020-12) SCHEMA
with Debian's python3-jsonschema; prints every violation and exits 1 when there is one."""
import json
import sys

import jsonschema

schema = json.load(open(sys.argv[1]))
doc = json.load(open(sys.argv[2]))
v = jsonschema.Draft202012Validator(schema)
errors = sorted(v.iter_errors(doc), key=lambda e: list(e.path))
for e in errors:
    print("%s: %s" % ("/".join(str(p) for p in e.path) or "(root)", e.message))
sys.exit(1 if errors else 0)
