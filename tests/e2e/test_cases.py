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


def test_every_rule_has_a_case():
    import json
    rules = {r["id"] for r in json.loads(run("rules", "--format", "json").out)}
    covered = set()
    for case in CASES:
        for specs in expectations(case).values():
            covered |= {s.partition("/")[0] for s in specs}
    assert rules - covered == set(), "rules without an end-to-end case"


def test_data_dir_override(tmp_path):
    """GPUOPT_DATA_DIR reads the knowledge from disk: a corrected fact takes
    effect without a rebuild, and a broken file is refused by name."""
    import json
    import shutil
    data = tmp_path / "data"
    shutil.copytree(ROOT / "data", data)
    sk = data / "knowledge" / "sklearn.json"
    doc = json.loads(sk.read_text())
    doc["apis"] = [e for e in doc["apis"] if e["name"] != "sklearn.cluster.Birch"]
    doc["apis"].append({"name": "sklearn.cluster.Birch"})
    sk.write_text(json.dumps(doc))
    case = tmp_path / "birch.py"
    case.write_text("from sklearn.cluster import Birch\nBirch()\n")
    before = run("scan", "--format", "json", case).json()["findings"]
    after = run("scan", "--format", "json", case, env={"GPUOPT_DATA_DIR": str(data)}).json()["findings"]
    assert [f["rule"] for f in before] == ["GPU203"]
    assert [f["rule"] for f in after] == ["GPU104"]
    sk.write_text("{ broken")
    r = run("scan", case, env={"GPUOPT_DATA_DIR": str(data)})
    assert r.rc == 2 and "knowledge/sklearn.json: line 1" in r.err
