"""Data-driven end-to-end cases.

Each file in cases/ is scanned alone; a comment `# expect: RULE/TARGET ...`
on a line lists the findings that line must produce (TARGET `-` = no GPU
target; `RULE` alone = any target). Every other line must produce none.

The bundled examples/ are checked against examples.expected (one line per
finding: `file:line rule target category`); after a deliberate change,
regenerate it with GPUOPT_UPDATE_GOLDEN=1 and review the diff."""
import os
import re
from pathlib import Path

import pytest

from conftest import ROOT, run

HERE = Path(__file__).parent
CASES = sorted(p for p in (HERE / "cases").iterdir() if p.suffix in (".py", ".ipynb"))
EXPECT = re.compile(r"#\s*expect:\s*(.*)$")


def expectations(path):
    want = {}
    for no, line in enumerate(path.read_text().splitlines(), 1):
        m = EXPECT.search(line)
        if m:
            want[no] = sorted(m.group(1).split())
    return want


def matches(spec, finding):
    rule, _, target = spec.partition("/")
    if rule != finding["rule"]:
        return False
    if target == "":
        return True
    return (finding["target"] or "-") == target


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_case(case):
    r = run("scan", "--format", "json", "--fail-on", "never", case)
    assert r.rc == 0, r
    doc = r.json()
    assert doc["errors"] == []
    got = {}
    for f in doc["findings"]:
        got.setdefault(f["line"], []).append(f)
    want = expectations(case)
    problems = []
    for line in sorted(set(got) | set(want)):
        specs, finds = want.get(line, []), got.get(line, [])
        unmatched = list(finds)
        for spec in specs:
            hit = next((f for f in unmatched if matches(spec, f)), None)
            if hit is None:
                problems.append(f"line {line}: expected {spec}, got "
                                f"{[(f['rule'], f['target'], f['symbol']) for f in finds]}")
            else:
                unmatched.remove(hit)
        for f in unmatched:
            problems.append(f"line {line}: unexpected {f['rule']}/{f['target'] or '-'} "
                            f"{f['symbol']}: {f['message']}")
    assert not problems, "\n".join(problems)


def golden_lines():
    doc = run("scan", "--format", "json", ROOT / "examples").json()
    rows = []
    for f in doc["findings"]:
        rel = os.path.relpath(f["path"], ROOT)
        rows.append(f"{rel}:{f['line']} {f['rule']} {f['target'] or '-'} {f['category']} {f['symbol']}")
    return rows


def test_examples_match_golden():
    golden = HERE / "examples.expected"
    rows = golden_lines()
    if os.environ.get("GPUOPT_UPDATE_GOLDEN"):
        golden.write_text("\n".join(rows) + "\n")
    assert golden.exists(), "run with GPUOPT_UPDATE_GOLDEN=1 to create examples.expected"
    want = golden.read_text().splitlines()
    assert rows == want
