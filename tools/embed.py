#!/usr/bin/env python3
"""Check gpuopt's data files and compile them into a C source file.

Usage: embed.py --root DATA_DIR --output data_blob.c [--depfile FILE.d] [FILE...]

Without FILEs it takes DATA_DIR/rules.json and DATA_DIR/knowledge/*.json.
Each FILE is stored under its path relative to DATA_DIR ("rules.json",
"knowledge/numpy.json"). The checks here are the build-time half of the
validation (JSON syntax, rule ids, targets, fallback keys); the C loader
repeats the structural checks for files read at run time from
GPUOPT_DATA_DIR. A failed check prints `FILE: ENTRY: problem` and exits 1.
"""
import argparse
import json
import os
import sys

TARGETS = {"cupy", "cudf.pandas", "cudf", "cuml.accel", "cuml", "nx-cugraph", "cugraph",
           "cucim", "cuvs", "kvikio", "numba-cuda", "numba-cuda-mlir", "warp", "newton",
           "raft", "dask", None}
CATEGORIES = {"library-port", "legacy-library", "gpu-native-framework", "python-loop",
              "roundtrip-in-loop", "unsynchronized-timing", "transfer-in-loop",
              "mixed-host-device", "no-gpu-path"}
SEVERITIES = {"note", "warning", "error"}
POLICIES = {"port", "no-gpu", "ignore"}
FALLBACK_KEYS = {"arg", "pos", "present", "equals", "not_in", "callable", "prefix", "default", "why"}
EFFECTS = {"gpu", "d2h", "h2d", "h2d-if-device", "sync", "clock", "timeit"}
TYPE_KEYS = {"methods", "device", "returns", "host_attributes"}
ENTRY_KEYS = {"name", "gpu", "ignore", "rule", "target", "message", "fix", "why", "gpu_name",
              "returns", "library", "fallback", "effect", "device_if", "device_returns"}
LIB_KEYS = {"library", "display", "notebook_fix", "modules", "source", "target", "rule", "gpu_prefix",
            "message", "fix", "headline_fix", "no_gpu", "unlisted", "types", "imports", "apis",
            "returns"}


def fail(path, where, msg):
    sys.stderr.write(f"{path}: {where}: {msg}\n")
    sys.exit(1)


def check_rules(path, doc):
    ids = set()
    for i, r in enumerate(doc.get("rules", [])):
        where = r.get("id", f"rule #{i}")
        for k in ("id", "name", "category", "severity", "summary"):
            if not isinstance(r.get(k), str):
                fail(path, where, f"missing string field '{k}'")
        if r["category"] not in CATEGORIES:
            fail(path, where, f"unknown category '{r['category']}'")
        if r["severity"] not in SEVERITIES:
            fail(path, where, f"unknown severity '{r['severity']}'")
        if r["id"] in ids:
            fail(path, where, "duplicate rule id")
        ids.add(r["id"])
    return ids


def check_entry(path, e, rule_ids, where):
    for k in e:
        if k not in ENTRY_KEYS and k not in ("module", "category"):
            fail(path, where, f"unknown key '{k}'")
    if "rule" in e and e["rule"] not in rule_ids:
        fail(path, where, f"unknown rule '{e['rule']}'")
    if "target" in e and e["target"] not in TARGETS:
        fail(path, where, f"unknown target '{e['target']}'")
    if "effect" in e and e["effect"] not in EFFECTS:
        fail(path, where, f"unknown effect '{e['effect']}'")
    if ("device_if" in e) != ("device_returns" in e):
        fail(path, where, "device_if and device_returns go together")
    for fb in e.get("fallback", []) + ([e["device_if"]] if "device_if" in e else []):
        for k in fb:
            if k not in FALLBACK_KEYS:
                fail(path, where, f"fallback: unknown key '{k}'")
        if not isinstance(fb.get("arg"), str):
            fail(path, where, "fallback without 'arg'")
        conds = [k for k in ("present", "equals", "not_in", "callable", "prefix") if k in fb]
        if len(conds) != 1:
            fail(path, where, f"condition on '{fb['arg']}' needs exactly one of present/equals/not_in/callable/prefix")


def check_knowledge(path, doc, rule_ids, seen_modules):
    for k in doc:
        if k not in LIB_KEYS:
            fail(path, "file", f"unknown key '{k}'")
    for k in ("library", "modules", "source"):
        if k not in doc:
            fail(path, "file", f"missing '{k}'")
    for m in doc["modules"]:
        if m in seen_modules:
            fail(path, "modules", f"module '{m}' is also claimed by {seen_modules[m]}")
        seen_modules[m] = path
    if doc.get("target", None) not in TARGETS:
        fail(path, "file", f"unknown target '{doc.get('target')}'")
    for key in ("rule",):
        if key in doc and doc[key] not in rule_ids:
            fail(path, "file", f"unknown rule '{doc[key]}'")
    if "no_gpu" in doc and doc["no_gpu"].get("rule") not in rule_ids:
        fail(path, "no_gpu", f"unknown rule '{doc['no_gpu'].get('rule')}'")
    for k, v in doc.get("unlisted", {}).items():
        if k not in ("classes", "functions", "methods") or v not in POLICIES:
            fail(path, "unlisted", f"bad policy {k}={v}")
    for t, spec in doc.get("types", {}).items():
        if spec.get("methods", "ignore") not in POLICIES:
            fail(path, f"types.{t}", "bad methods policy")
        for k in spec:
            if k not in TYPE_KEYS:
                fail(path, f"types.{t}", f"unknown key '{k}'")
    names = set()
    for i, e in enumerate(doc.get("apis", [])):
        where = e.get("name", f"apis[{i}]")
        if not isinstance(e.get("name"), str):
            fail(path, where, "entry without 'name'")
        if e["name"] in names:
            fail(path, where, "duplicate name")
        names.add(e["name"])
        check_entry(path, e, rule_ids, where)
    for i, e in enumerate(doc.get("imports", [])):
        where = e.get("module", f"imports[{i}]")
        if not isinstance(e.get("module"), str) or e.get("rule") not in rule_ids:
            fail(path, where, "import entry needs 'module' and a known 'rule'")
        check_entry(path, e, rule_ids, where)


def c_string(data):
    out = []
    for i in range(0, len(data), 64):
        chunk = data[i:i + 64]
        out.append('  "' + "".join(
            chr(b) if 32 <= b < 127 and b not in (34, 92, 63) else f"\\{b:03o}" for b in chunk) + '"')
    return "\n".join(out) if out else '  ""'


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--output", required=True)
    ap.add_argument("--depfile")
    ap.add_argument("files", nargs="*")
    a = ap.parse_args()
    if not a.files:
        kdir = os.path.join(a.root, "knowledge")
        # rules.json first, the knowledge files, then every other data file
        # at the top of data/ (each part's own facts: try.json, ...)
        others = sorted(os.path.join(a.root, f) for f in os.listdir(a.root)
                        if f.endswith(".json") and f != "rules.json")
        a.files = [os.path.join(a.root, "rules.json")] + sorted(
            os.path.join(kdir, f) for f in os.listdir(kdir) if f.endswith(".json")) + others
    docs = []
    for f in a.files:
        rel = os.path.relpath(f, a.root)
        raw = open(f, "rb").read()
        try:
            doc = json.loads(raw)
        except ValueError as e:
            fail(rel, "JSON", str(e))
        docs.append((rel, raw, doc))
    rules = [d for d in docs if d[0] == "rules.json"]
    if not rules:
        fail("rules.json", "file", "missing")
    rule_ids = check_rules("rules.json", rules[0][2])
    seen = {}
    for rel, _, doc in docs:
        if rel.startswith("knowledge/"):
            check_knowledge(rel, doc, rule_ids, seen)
    tmp = a.output + ".tmp"
    with open(tmp, "w") as out:
        out.write("/* Generated by tools/embed.py from data/: do not edit. */\n")
        out.write('#include "data.h"\n\n')
        out.write("const struct data_file gpuopt_data_files[] = {\n")
        for rel, raw, _ in docs:
            out.write(f'  {{"{rel}", {len(raw)},\n{c_string(raw)}}},\n')
        out.write("};\n")
        out.write(f"const size_t gpuopt_data_file_count = {len(docs)};\n")
    os.replace(tmp, a.output)
    if a.depfile:
        deps = [os.path.abspath(f) for f in a.files] + [os.path.abspath(os.path.join(a.root, "knowledge")),
                                                        os.path.abspath(a.root)]
        with open(a.depfile, "w") as d:
            d.write(a.output.replace(" ", "\\ ") + ": " + " ".join(x.replace(" ", "\\ ") for x in deps) + "\n")


if __name__ == "__main__":
    main()
