#!/usr/bin/env python3
"""Scores one run of a verdict evaluation set against the expectations written
before it (bench/verdict_eval/README.md).

Usage: score.py SET_DIR RESULTS_DIR [--json OUT.json]
  SET_DIR      bench/verdict_eval/setN (expected*.tsv)
  RESULTS_DIR  the set's folder from run_eval.sh's tarball (traces/, ports/)

Per program and mode (default, --exact): is the top finding the expected one,
at an expected line, and did gpuopt trace exit with the program's status?
Per port candidate: verdict, factor, and (where lines are expected) whether the
verdict's reason names one of them. Prints a table and the totals."""
import csv
import glob
import json
import os
import re
import statistics
import sys


def read_tsv(path):
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return [r for r in csv.DictReader(f, delimiter="\t") if any((v or "").strip() for v in r.values())]


def site(label):
    """'dir/prog.py:12 (fn) via ...' -> 'prog.py:12'."""
    m = re.match(r"\s*(\S+?):(\d+)", label or "")
    return f"{os.path.basename(m.group(1))}:{m.group(2)}" if m else None


def accept(lines):
    out = set()
    for x in (lines or "").split(","):
        x = x.strip()
        if x and x != "-":
            f, _, n = x.rpartition(":")
            out.add(f"{os.path.basename(f)}:{n}")
    return out


def yn(b):
    return "ok" if b else "NO"


def score_program(row, res, mode):
    name = row["program"].removesuffix(".py")
    base = os.path.join(res, "traces", f"{name}.{mode}")
    out = {"program": name, "mode": mode}
    try:
        rc = int(open(base + ".rc").read().strip())
    except (OSError, ValueError):
        out["missing"] = True
        return out
    out["rc"] = rc
    out["exit_ok"] = rc == int(row["exit"])
    try:
        rep = json.load(open(base + ".report.json"))
    except (OSError, ValueError):
        rep = {}
    findings = rep.get("findings", [])
    # a program that failed before any GPU work, and not as it was meant to, did not run
    # (the machine's packages: numba-cuda 0.30.4 fails on numpy 2.5): left out of the totals
    kernels = (rep.get("budget") or {}).get("kernels", 0)
    if not kernels and rc != int(row["exit"]):
        tail = open(base + ".out", errors="replace").read().strip().splitlines()[-1:] if os.path.exists(base + ".out") else []
        out["not_run"] = tail[0][:120] if tail else f"exit {rc}, no GPU work"
    top = findings[0] if findings else None
    want = row["top"].strip()
    warnings = [f for f in findings if f.get("severity") == "warning"]
    if want == "none":
        out["top_ok"] = not warnings
        out["line_ok"] = out["top_ok"]
        out["got"] = "none" if not warnings else f"{warnings[0]['rule']}@{site(warnings[0].get('line'))}"
    else:
        out["got"] = f"{top['rule']}@{site(top.get('line'))}" if top else "none"
        out["top_ok"] = bool(top) and top["rule"] == want
        lines = accept(row["lines"])
        named = {site(top.get("line"))} if top else set()
        # a finding that names two lines (gpu-starved: before and after the gap) may match either
        if top:
            named |= {site(m.group(0)) for m in re.finditer(r"\S+\.py:\d+", top.get("evidence", ""))}
        out["line_ok"] = out["top_ok"] and (not lines or bool(named & lines))
    out["want"] = f"{want}@{','.join(sorted(accept(row['lines']))) or '-'}"
    return out


def score_port(row, res):
    port, cand = row["port"], row["candidate"]
    out = {"port": port, "candidate": cand}
    docs = sorted(glob.glob(os.path.join(res, "ports", port, "candidate-*.json")))
    doc = None
    for d in docs:
        try:
            j = json.load(open(d))
        except (OSError, ValueError):
            continue
        if j.get("name") == cand or cand in (j.get("command") or "") or len(docs) == 1:
            doc = j
            break
    if not doc:
        out["missing"] = True
        return out
    v = doc.get("verdict", {})
    out["got"] = f"{v.get('verdict')} / {v.get('factor')}"
    out["want"] = f"{row['verdict']} / {row['factor']}"
    want_v = {x.strip() for x in row["verdict"].split("/")}
    out["verdict_ok"] = v.get("verdict") in want_v
    want_f = row["factor"].strip()
    out["factor_ok"] = (want_f == "-" and not v.get("factor")) or v.get("factor") == want_f
    lines = accept(row["lines"])
    reason = v.get("reason") or ""
    named = {site(m.group(0)) for m in re.finditer(r"\S+\.py:\d+", reason)}
    out["line_ok"] = (not lines) or bool(named & lines)
    out["reason"] = reason
    return out


def main():
    set_dir, res = sys.argv[1], sys.argv[2]
    rows = []
    for p in sorted(glob.glob(os.path.join(set_dir, "expected*.tsv"))):
        if not p.endswith("expected_ports.tsv"):
            rows += read_tsv(p)
    progs = [score_program(r, res, m) for r in rows for m in ("default", "exact")]
    ports = [score_port(r, res) for r in read_tsv(os.path.join(set_dir, "expected_ports.tsv"))]
    print(f"{'program':<28} {'mode':<8} {'top':<4} {'line':<4} {'exit':<4} want / got")
    for x in progs:
        if x.get("missing"):
            print(f"{x['program']:<28} {x['mode']:<8} (no result)")
            continue
        if x.get("not_run"):
            print(f"{x['program']:<28} {x['mode']:<8} did not run: {x['not_run']}")
            continue
        print(f"{x['program']:<28} {x['mode']:<8} {yn(x['top_ok']):<4} {yn(x['line_ok']):<4} {yn(x['exit_ok']):<4} "
              f"{x['want']} / {x['got']} (rc {x['rc']})")
    totals = {}
    for mode in ("default", "exact"):
        xs = [x for x in progs if x["mode"] == mode and not x.get("missing") and not x.get("not_run")]
        n = len([x for x in progs if x["mode"] == mode and not x.get("not_run")])
        totals[mode] = {k: sum(bool(x.get(k)) for x in xs) for k in ("top_ok", "line_ok", "exit_ok")}
        totals[mode]["n"] = n
        t = totals[mode]
        skipped = sum(1 for x in progs if x["mode"] == mode and x.get("not_run"))
        print(f"{mode}: top finding {t['top_ok']}/{n}, top finding at the right line {t['line_ok']}/{n}, "
              f"exit status {t['exit_ok']}/{n}" + (f" ({skipped} did not run, left out)" if skipped else ""))
    # the default must reach --exact's top finding and line (issue 24): how often it did
    by = {}
    for x in progs:
        if not x.get("missing") and not x.get("not_run"):
            by.setdefault(x["program"], {})[x["mode"]] = x["got"]
    both = [p for p, m in by.items() if "default" in m and "exact" in m]
    same = [p for p in both if by[p]["default"] == by[p]["exact"]]
    totals["default_as_exact"] = {"same": len(same), "n": len(both)}
    print(f"default reached --exact's top finding and line on {len(same)}/{len(both)}"
          + (": not on " + ", ".join(sorted(set(both) - set(same))) if len(same) < len(both) else ""))
    if ports:
        print(f"\n{'port':<22} {'candidate':<24} {'verd':<4} {'fact':<4} {'line':<4} want / got")
        for x in ports:
            if x.get("missing"):
                print(f"{x['port']:<22} {x['candidate']:<24} (no result)")
                continue
            print(f"{x['port']:<22} {x['candidate'][:24]:<24} {yn(x['verdict_ok']):<4} {yn(x['factor_ok']):<4} "
                  f"{yn(x['line_ok']):<4} {x['want']} / {x['got']}")
        n = len(ports)
        t = {k: sum(bool(x.get(k)) for x in ports) for k in ("verdict_ok", "factor_ok", "line_ok")}
        totals["ports"] = dict(t, n=n)
        print(f"ports: verdict {t['verdict_ok']}/{n}, factor {t['factor_ok']}/{n}, line named {t['line_ok']}/{n}")
    ov = os.path.join(res, "overhead.tsv")
    if os.path.exists(ov):
        by = {}
        for r in read_tsv(ov):
            if r["rc"] in ("0",) or True:
                by.setdefault(r["program"], {}).setdefault(r["mode"], []).append(float(r["wall_s"]))
        ratios = {}
        for p, m in sorted(by.items()):
            if m.get("plain") and m.get("trace") and statistics.median(m["plain"]) > 0:
                ratios[p] = statistics.median(m["trace"]) / statistics.median(m["plain"])
                print(f"overhead {p:<28} plain {statistics.median(m['plain']):.3f}s  "
                      f"traced {statistics.median(m['trace']):.3f}s  ratio {ratios[p]:.3f}")
        if by and not ratios:
            print("overhead: no usable timings (every plain run timed 0 s)")
        if ratios:
            vals = sorted(ratios.values())
            print(f"overhead: median ratio {statistics.median(vals):.3f}, max {vals[-1]:.3f} over {len(vals)} programs")
            totals["overhead"] = {"ratios": ratios, "median": statistics.median(vals), "max": vals[-1]}
    if "--json" in sys.argv:
        json.dump({"programs": progs, "ports": ports, "totals": totals},
                  open(sys.argv[sys.argv.index("--json") + 1], "w"), indent=1)


if __name__ == "__main__":
    sys.exit(main())
