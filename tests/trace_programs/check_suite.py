#!/usr/bin/env python3
"""Checks one suite run: did gpuopt trace name the expected rule at the line
marked `# EXPECT: RULE` in the program (or raise no warning where the program
says `# EXPECT: none`), and do the trace's kernel and copy times agree with
what the program measured itself with CUDA events (its GPUOPT_CHECK line)?

Usage: check_suite.py PROGRAM REPORT.json PROGRAM_OUTPUT [--tolerance 0.1]
Prints one line per check, "ok" or "FAIL", and exits 1 if any failed."""
import json
import os
import re
import sys


def expectations(program):
    """(rule, line) pairs that must be found, whether no warning may be found
    at all, and rules that must not be found anywhere."""
    rules, none, never = [], False, []
    for n, line in enumerate(open(program), 1):
        for m in re.finditer(r"# EXPECT(-NOT)?: ([a-z-]+)", line):
            if m.group(1):
                never.append(m.group(2))
            elif m.group(2) == "none":
                none = True
            else:
                rules.append((m.group(2), n))
    return rules, none, never


def line_of(label):
    m = re.match(r"(.*?):(\d+)", label or "")
    return (os.path.basename(m.group(1)), int(m.group(2))) if m else (None, None)


def main():
    program, report_path, output_path = sys.argv[1:4]
    tol = float(sys.argv[sys.argv.index("--tolerance") + 1]) if "--tolerance" in sys.argv else 0.1
    name = os.path.basename(program)
    ok = True
    try:
        report = json.load(open(report_path))
    except ValueError as e:
        print(f"FAIL {name}: the report is not JSON: {e}")
        return 1
    facts = {}
    for line in open(output_path, errors="replace"):
        if line.startswith("GPUOPT_CHECK "):
            facts = json.loads(line[len("GPUOPT_CHECK "):])
    rules, none, never = expectations(program)
    findings = report.get("findings", [])
    summary = ", ".join(f"{f['rule']}@{line_of(f.get('line'))[1]} {f['cost_s']:.3f}s" for f in findings) or "no finding"
    for rule, lineno in rules:
        hit = [f for f in findings if f["rule"] == rule and line_of(f.get("line")) == (name, lineno)]
        print(f"{'ok  ' if hit else 'FAIL'} {name}: {rule} at line {lineno}: found {summary}")
        ok &= bool(hit)
    for rule in never:
        bad = [f for f in findings if f["rule"] == rule]
        print(f"{'ok  ' if not bad else 'FAIL'} {name}: no {rule} expected: found {summary}")
        ok &= not bad
    if none:
        warn = [f for f in findings if f["severity"] == "warning"]
        print(f"{'ok  ' if not warn else 'FAIL'} {name}: no alarm expected: found {summary}")
        ok &= not warn
    lines = report.get("lines", [])

    def line_total(key, lineno=None):
        tot = 0
        for l in lines:
            if lineno is not None and line_of(l["label"]) != (name, lineno):
                continue
            if key == "kernel":
                tot += l["kernel_ns"]
            else:
                tot += sum(c["ns"] for c in l["copies"] if c["direction"] == key)
        return tot / 1e6

    def compare(what, traced_ms, event_ms):
        nonlocal ok
        ratio = traced_ms / event_ms if event_ms else float("nan")
        good = event_ms > 0 and abs(ratio - 1) <= tol
        print(f"{'ok  ' if good else 'FAIL'} {name}: {what}: trace {traced_ms:.2f} ms, CUDA events "
              f"{event_ms:.2f} ms (ratio {ratio:.3f}, tolerance {tol:.0%})")
        ok &= good

    marked = {}
    for n, line in enumerate(open(program), 1):
        m = re.search(r"# EVENTS: ([a-z0-9]+)", line)
        if m:
            marked.setdefault(m.group(1), []).append(n)

    def measured(kind, key):
        sel = marked.get(kind)
        return sum(line_total(key, n) for n in sel) if sel else line_total(key)

    for kind, key in (("kernel", "kernel"), ("h2d", "H2D"), ("d2h", "D2H")):
        if f"{kind}_event_ms" in facts:
            compare(f"{key} time" if kind != "kernel" else "kernel time", measured(kind, key),
                    facts[f"{kind}_event_ms"])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
