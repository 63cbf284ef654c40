#!/usr/bin/env python3
"""Check gpuopt's data files and compile them into a C source file.

Usage: embed.py --root DATA_DIR --output data_blob.c [--depfile FILE.d] [FILE...]

Without FILEs it takes DATA_DIR/rules.json, every other .json at the top of DATA_DIR
(gpus.json, fit.json, trace.json, try.json, ...), DATA_DIR/knowledge/*.json,
DATA_DIR/doctor/*.json and DATA_DIR/probes/*.py.
Each FILE is stored under its path relative to DATA_DIR ("rules.json",
"knowledge/numpy.json"). The checks here are the build-time half of the
validation (JSON syntax, rule ids, targets, fallback keys); the C loader
repeats the structural checks for files read at run time from
GPUOPT_DATA_DIR. A failed check prints `FILE: ENTRY: problem` and exits 1.
"""
import argparse
import json
import os
import re
import sys

TARGETS = {"cupy", "cudf.pandas", "cudf", "cuml.accel", "cuml", "nx-cugraph", "cugraph",
           "cucim", "cuvs", "kvikio", "numba-cuda", "numba-cuda-mlir", "warp", "newton",
           "raft", "dask", None}
CATEGORIES = {"library-port", "legacy-library", "gpu-native-framework", "python-loop",
              "roundtrip-in-loop", "unsynchronized-timing", "transfer-in-loop",
              "mixed-host-device", "no-gpu-path", "not-in-knowledge"}
SEVERITIES = {"note", "warning", "error"}
POLICIES = {"port", "no-gpu", "ignore"}
FALLBACK_KEYS = {"arg", "pos", "present", "equals", "not_in", "callable", "prefix", "is", "default", "why",
                 "check"}
EFFECTS = {"gpu", "d2h", "h2d", "h2d-if-device", "sync", "clock", "timeit"}
TYPE_KEYS = {"methods", "device", "returns", "host_attributes", "host_methods", "module_methods", "attributes", "items",
             "mask_indexing"}
FLOWS = {"array-module", "devspec", "zero-copy", "kernel", "host", "converts", "device-constructor", "iterates", "same", "to-device", "mask", "reduces"}
ENTRY_KEYS = {"check", "name", "gpu", "ignore", "rule", "target", "message", "fix", "why", "gpu_name",
              "returns", "library", "fallback", "effect", "device_if", "device_returns", "flow", "fills", "by_arg_type", "quiet",
              "meta"}
LIB_KEYS = {"check", "library", "display", "notebook_fix", "modules", "source", "target", "rule", "gpu_prefix",
            "message", "fix", "headline_fix", "no_gpu", "unlisted", "types", "imports", "apis",
            "returns", "verdicts", "device_arrays"}


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


def check_mark(path, where, obj):
    """A fact tools/check_knowledge.py cannot check says why: "uncheckable: REASON"."""
    if "check" in obj and not (isinstance(obj["check"], str) and
                               re.fullmatch(r"uncheckable: \S.{9,}", obj["check"])):
        fail(path, where, "'check' is \"uncheckable: <the reason, in words>\"")


def check_entry(path, e, rule_ids, where):
    check_mark(path, where, e)
    for k in e:
        if k not in ENTRY_KEYS and k not in ("module", "category"):
            fail(path, where, f"unknown key '{k}'")
    if "rule" in e and e["rule"] not in rule_ids:
        fail(path, where, f"unknown rule '{e['rule']}'")
    if "target" in e and e["target"] not in TARGETS:
        fail(path, where, f"unknown target '{e['target']}'")
    if "effect" in e and e["effect"] not in EFFECTS:
        fail(path, where, f"unknown effect '{e['effect']}'")
    for t, spec in e.get("by_arg_type", {}).get("types", {}).items():
        if spec.get("rule") not in rule_ids or spec.get("target", None) not in TARGETS or "message" not in spec:
            fail(path, where, f"by_arg_type.{t}: needs a known rule, a target and a message")
    if "flow" in e and e["flow"] not in FLOWS:
        fail(path, where, f"unknown flow '{e['flow']}'")
    if ("device_if" in e) != ("device_returns" in e):
        fail(path, where, "device_if and device_returns go together")
    for fb in e.get("fallback", []) + ([e["device_if"]] if "device_if" in e else []):
        check_mark(path, where, fb)
        for k in fb:
            if k not in FALLBACK_KEYS:
                fail(path, where, f"fallback: unknown key '{k}'")
        if not isinstance(fb.get("arg"), str):
            fail(path, where, "fallback without 'arg'")
        conds = [k for k in ("present", "equals", "not_in", "callable", "prefix", "is") if k in fb]
        if len(conds) != 1:
            fail(path, where, f"condition on '{fb['arg']}' needs exactly one of present/equals/not_in/callable/prefix/is")
        if "is" in fb and (not isinstance(fb["is"], list) or
                           any(t not in ("int", "float", "str", "bool", "null") for t in fb["is"])):
            fail(path, where, f"condition on '{fb['arg']}': 'is' lists literal types (int, float, str, bool, null)")


def check_knowledge(path, doc, rule_ids, seen_modules):
    for k in doc:
        if k not in LIB_KEYS:
            fail(path, "file", f"unknown key '{k}'")
    check_mark(path, "file", doc)
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
    if doc.get("device_arrays", "pass-through") not in ("pass-through", "converts"):
        fail(path, "file", "'device_arrays' is 'pass-through' or 'converts'")
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


def check_gpus(path, doc):
    if not isinstance(doc.get("source"), str):
        fail(path, "file", "missing 'source'")
    lanes = doc.get("pcie", {}).get("lane_gbps", {})
    if not lanes or not all(isinstance(v, (int, float)) and v > 0 for v in lanes.values()):
        fail(path, "pcie", "lane_gbps needs a positive rate per generation")
    for i, g in enumerate(doc.get("gpus", [])):
        where = g.get("name", f"gpus[{i}]")
        m = g.get("match")
        if not isinstance(m, list) or not m or not all(isinstance(x, str) and x for x in m):
            fail(path, where, "'match' must be a list of strings")
        for k in ("memory_gbps", "host_gbps"):
            if not isinstance(g.get(k), (int, float)) or g[k] <= 0:
                fail(path, where, f"'{k}' must be a positive number")
        for k in ("name", "host_link", "source"):
            if not isinstance(g.get(k), str):
                fail(path, where, f"missing string field '{k}'")


def check_doctor(path, doc, docs):
    if not isinstance(doc.get("source"), str):
        fail(path, "file", "missing 'source'")
    if path.endswith("packages.json"):
        names = set()
        for i, p in enumerate(doc.get("packages", [])):
            where = p.get("name", f"packages[{i}]")
            if not isinstance(p.get("name"), str) or not isinstance(p.get("dists"), list):
                fail(path, where, "a package needs 'name' and a 'dists' list")
            if p["name"] in names:
                fail(path, where, "duplicate name")
            names.add(p["name"])
            if p.get("check") not in (None, "cupy", "torch", "rmm", "numba", "jax", "warp"):
                fail(path, where, f"unknown check '{p.get('check')}' (data/probes/doctor.py has none)")
    if path.endswith("install.json"):
        for name, e in doc.get("packages", {}).items():
            if not isinstance(e.get("source"), str) or "pip" not in e:
                fail(path, name, "an install entry needs 'pip' and 'source'")


def check_probe(path, raw):
    try:
        compile(raw, path, "exec")
    except SyntaxError as e:
        fail(path, f"line {e.lineno}", f"Python syntax error: {e.msg}")


TRACE_RULES = {"transfer-bound", "roundtrip-storm", "pageable-transfer", "sync-bound", "launch-bound",
               "gpu-starved", "memory-pressure", "cpu-fallback"}


def check_trace(path, doc):
    """trace.json: every rule that src/trace/rules.c computes, with its texts; thresholds with values."""
    for k, v in doc.get("thresholds", {}).items():
        if not isinstance(v, dict) or not isinstance(v.get("value"), (int, float)) or not isinstance(v.get("about"), str):
            fail(path, f"thresholds.{k}", "needs a numeric 'value' and an 'about' text")
    names = set()
    for i, r in enumerate(doc.get("rules", [])):
        where = r.get("name", f"rules[{i}]")
        for k in ("name", "severity", "summary", "evidence", "fix"):
            if not isinstance(r.get(k), str):
                fail(path, where, f"missing string field '{k}'")
        if r["severity"] not in SEVERITIES:
            fail(path, where, f"unknown severity '{r['severity']}'")
        names.add(r["name"])
    if names != TRACE_RULES:
        fail(path, "rules", f"must be exactly {sorted(TRACE_RULES)}")
    for i, p in enumerate(doc.get("log_patterns", [])):
        if not isinstance(p.get("regex"), str) or p.get("kind") not in ("fallback", "gpu"):
            fail(path, f"log_patterns[{i}]", "needs a 'regex' and a kind of fallback or gpu")


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
    folders = {"knowledge": ".json", "doctor": ".json", "probes": ".py"}
    if not a.files:
        # rules.json first, every other data file at the top of data/ (each
        # part's own facts: gpus.json, fit.json, try.json, ...), then the folders
        top = sorted(f for f in os.listdir(a.root) if f.endswith(".json") and f != "rules.json")
        a.files = [os.path.join(a.root, f) for f in ["rules.json"] + top]
        for sub, ext in folders.items():
            d = os.path.join(a.root, sub)
            a.files += sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(ext))
    docs = []
    for f in a.files:
        rel = os.path.relpath(f, a.root)
        raw = open(f, "rb").read()
        if rel.endswith(".py"):
            check_probe(rel, raw)
            docs.append((rel, raw, None))
            continue
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
        if rel == "trace.json":
            check_trace(rel, doc)
        elif rel.startswith("knowledge/"):
            check_knowledge(rel, doc, rule_ids, seen)
        elif rel == "gpus.json":
            check_gpus(rel, doc)
        elif rel.startswith("doctor/"):
            check_doctor(rel, doc, docs)
        elif rel == "fit.json":
            if not isinstance(doc.get("context_reserve_bytes"), int) or not isinstance(doc.get("too_big"), str):
                fail(rel, "file", "needs context_reserve_bytes (a whole number) and too_big (text)")
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
        deps = [os.path.abspath(f) for f in a.files] + [
            os.path.abspath(os.path.join(a.root, sub)) for sub in folders] + [os.path.abspath(a.root)]
        with open(a.depfile, "w") as d:
            d.write(a.output.replace(" ", "\\ ") + ": " + " ".join(x.replace(" ", "\\ ") for x in deps) + "\n")


if __name__ == "__main__":
    main()
