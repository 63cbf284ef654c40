"""gpuopt on real, executed Jupyter notebooks: tests/e2e/notebooks/*.ipynb, made by
tools/make_notebooks.py (hundreds of cells, markdown, magics, shell lines, PNG figures,
a traceback). The tests only read the committed files; nothing is re-executed.

Every expected position is computed here from the notebook JSON: each code cell is
turned into plain Python in place (magics and shell escapes become comments, so every
other line keeps its line and column numbers) and parsed with ast.

The statement after a `%time` / `%timeit` / `%prun` line magic is Python that IPython
runs, so it is kept (the magic becomes `_  ;`, columns unchanged) and must be scanned.
"""
import ast
import json
import re
from functools import lru_cache

import pytest

from conftest import ROOT, run

NB_DIR = ROOT / "tests" / "e2e" / "notebooks"
NOTEBOOKS = sorted(NB_DIR.glob("*.ipynb"))

# Cell magics whose body IPython runs as Python.
PY_CELL_MAGICS = {"time", "timeit", "capture", "prun", "debug"}
# "name = !cmd" and "name = %magic": IPython assignment from a shell command or a magic.
MAGIC_ASSIGN = re.compile(r"^(\s*[\w.,\s]+?=\s*)[!%]")
LINE_MAGIC = re.compile(r"^\s*%(?!%)(\w+)")
# `%time stmt`, `%timeit [-n N -r R ...] stmt`, `%prun stmt`: the statement is Python.
TIMED = re.compile(r"^(\s*)(%(?:time|timeit|prun)\b(?:\s+-[nrpsTDl]\s+\S+|\s+-\S+)*\s+)(\S.*)$")


# ---------------------------------------------------------------------------
# Reading the notebooks
# ---------------------------------------------------------------------------
@lru_cache(maxsize=None)
def notebook(path):
    return json.loads(path.read_text(encoding="utf-8"))


def source(cell):
    src = cell.get("source", "")
    return src if isinstance(src, str) else "".join(src)


def split_lines(src):
    """The cell's lines as gpuopt and Jupyter count them: split on \\n, a final \\n ends
    the last line rather than starting an empty one."""
    if src == "":
        return []
    lines = src.split("\n")
    if src.endswith("\n"):
        lines.pop()
    return lines


def as_python(src):
    """(lines, magic_lines): the cell as plain Python, line for line and column for
    column; magic_lines are the 1-based lines that were IPython-only."""
    lines = split_lines(src)
    out, magic, whole_cell = [], set(), False
    for i, line in enumerate(lines, 1):
        body = line.lstrip()
        indent = line[:len(line) - len(body)]
        m = MAGIC_ASSIGN.match(line)
        if i == 1 and line.startswith("%%"):
            words = line[2:].split()
            whole_cell = words[0] not in PY_CELL_MAGICS and not (
                words[0] == "writefile" and len(words) > 1 and words[-1].endswith(".py"))
            out.append("#" + line[1:])
            magic.add(i)
        elif whole_cell:
            out.append("# " + line)
            magic.add(i)
        elif TIMED.match(line):
            t = TIMED.match(line)
            prefix = t.group(2)
            out.append(t.group(1) + "_" + " " * (len(prefix) - 2) + ";" + t.group(3))
        elif body.startswith(("%", "!")):
            out.append(indent + "#" + body[1:])
            magic.add(i)
        elif m:
            out.append(m.group(1) + "None")
            magic.add(i)
        else:
            out.append(line)
    # Every IPython-only construct of the corpus is handled, or this fails.
    ast.parse("\n".join(out) + "\n")
    return out, magic


def code_cells(path):
    """[(1-based index over ALL cells, lines, python lines, magic lines)]."""
    cells = []
    for i, cell in enumerate(notebook(path)["cells"], 1):
        if cell["cell_type"] == "code":
            src = source(cell)
            py, magic = as_python(src)
            cells.append((i, split_lines(src), py, magic))
    return cells


def column(line, byte_offset):
    """1-based column in code points from ast's UTF-8 byte offset."""
    return len(line.encode("utf-8")[:byte_offset].decode("utf-8")) + 1


def expected_sites(path):
    """The calls gpuopt must flag, found with ast: (rule, symbol, cell, line, column)."""
    sites = []
    for index, _, py, _ in code_cells(path):
        for node in ast.walk(ast.parse("\n".join(py) + "\n")):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            kw = {k.arg: k for k in node.keywords if k.arg}

            def at(n):
                return (index, n.lineno, column(py[n.lineno - 1], n.col_offset))

            if name == "apply" and "axis" in kw and getattr(kw["axis"].value, "value", None) == 1:
                sites.append(("GPU301", "pandas.DataFrame.apply", *at(kw["axis"])))
            elif name == "iterrows":
                sites.append(("GPU206", "pandas.DataFrame.iterrows", *at(node)))
            elif (name == "nanpercentile" and isinstance(func, ast.Attribute)
                  and getattr(func.value, "id", None) == "np"):
                sites.append(("GPU201", "numpy.nanpercentile", *at(node)))
            elif (name == "RandomForestClassifier" and "class_weight" in kw
                  and getattr(kw["class_weight"].value, "value", None) == "balanced"):
                # cuML 26.10's parameter translation falls back only on "balanced_subsample":
                # class_weight="balanced" runs on the GPU (a port, no fallback finding)
                sites.append(("GPU104", "sklearn.ensemble.RandomForestClassifier", *at(node)))
    return sorted(sites, key=lambda s: s[2:])


# ---------------------------------------------------------------------------
# Scanning
# ---------------------------------------------------------------------------
@lru_cache(maxsize=None)
def scan_folder():
    r = run("scan", "--format", "json", "--fail-on", "never", NB_DIR)
    assert r.rc == 0, r
    return r.json()


def findings_of(path):
    return [f for f in scan_folder()["findings"] if f["path"] == str(path)]


def test_corpus_is_real_executed_notebooks():
    assert len(NOTEBOOKS) >= 4, NOTEBOOKS
    assert (NB_DIR / "README.md").is_file()
    total = sum(p.stat().st_size for p in NB_DIR.iterdir())
    assert total < 6 * 1024 * 1024, f"the corpus grew to {total} bytes"
    for path in NOTEBOOKS:
        nb = notebook(path)
        cells = nb["cells"]
        assert nb["nbformat"] == 4 and 100 <= len(cells) <= 250, (path, len(cells))
        kinds = {c["cell_type"] for c in cells}
        assert kinds == {"code", "markdown"}, (path, kinds)
        code = [source(c) for c in cells if c["cell_type"] == "code"]
        text = "\n".join(code)
        assert "%matplotlib inline" in text and "!echo" in text, path
        assert any(s.startswith("%%time") for s in code), path
        assert re.search(r"^%time ", text, re.M), path
        outputs = [o for c in cells if c["cell_type"] == "code" for o in c["outputs"]]
        assert sum("image/png" in o.get("data", {}) for o in outputs) >= 5, path
        # executed: every non-empty code cell ran
        assert all(c["execution_count"] for c in cells
                   if c["cell_type"] == "code" and source(c).strip()), path
    errors = [o for p in NOTEBOOKS for c in notebook(p)["cells"] if c["cell_type"] == "code"
              for o in c["outputs"] if o["output_type"] == "error"]
    assert errors, "the corpus keeps one traceback, as real notebooks do"


def test_every_notebook_is_scanned_without_error():
    doc = scan_folder()
    assert doc["errors"] == []
    s = doc["summary"]
    assert s["notebooks"] == s["files_scanned"] == len(NOTEBOOKS)
    assert s["files_with_errors"] == 0
    assert s["findings"] == len(doc["findings"]) >= 400
    for path in NOTEBOOKS:
        assert len(findings_of(path)) >= 50, path
    rules = set(s["by_rule"])
    assert {"GPU101", "GPU102", "GPU103", "GPU104", "GPU106", "GPU201", "GPU206", "GPU301"} <= rules


def test_every_finding_points_into_a_code_cell():
    doc = scan_folder()
    for f in doc["findings"]:
        path = NB_DIR / f["path"].rsplit("/", 1)[-1]
        cells = notebook(path)["cells"]
        where = f"{path.name} cell {f['cell']} line {f['line']}: {f['symbol']}"
        assert isinstance(f["cell"], int) and 1 <= f["cell"] <= len(cells), where
        cell = cells[f["cell"] - 1]
        assert cell["cell_type"] == "code", where
        lines = split_lines(source(cell))
        assert 1 <= f["line"] <= f["end_line"] <= len(lines), where
        text = lines[f["line"] - 1]
        assert 1 <= f["column"] <= len(text) + 1, where
        if f["end_line"] == f["line"]:
            span = text[f["column"] - 1:f["end_column"] - 1]
            if f["rule"] == "GPU301":
                assert "=" in span, (where, span)   # the argument that forces the fallback
            else:
                assert f["symbol"].rsplit(".", 1)[-1] in span, (where, span)


def _site_params():
    return [pytest.param(path, site, id=f"{path.stem}:cell{site[2]}:{site[3]}:{site[4]}:{site[0]}")
            for path in NOTEBOOKS for site in expected_sites(path)]


def test_expected_sites_exist():
    kinds = {(rule, symbol) for p in NOTEBOOKS for rule, symbol, *_ in expected_sites(p)}
    assert {("GPU301", "pandas.DataFrame.apply"), ("GPU206", "pandas.DataFrame.iterrows"),
            ("GPU201", "numpy.nanpercentile"),
            ("GPU104", "sklearn.ensemble.RandomForestClassifier")} <= kinds


@pytest.mark.parametrize("path,site", _site_params())
def test_expected_finding_at_its_cell_and_line(path, site):
    rule, symbol, cell, line, col = site
    got = {(f["rule"], f["symbol"], f["cell"], f["line"], f["column"]) for f in findings_of(path)}
    near = sorted(g for g in got if g[2] == cell)
    assert site in got, f"{path.name}: expected {site}; findings in cell {cell}: {near}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_same_findings_as_the_code_in_a_python_file(path, tmp_path):
    """The code cells joined into a .py file (IPython-only lines commented out, as gpuopt
    does) give the same findings, at the same (cell, line, column)."""
    py_lines, where = [], []
    for index, _, py, _ in code_cells(path):
        py_lines += py
        where += [(index, n) for n in range(1, len(py) + 1)]
    script = tmp_path / f"{path.stem}.py"
    script.write_text("\n".join(py_lines) + "\n", encoding="utf-8")
    r = run("scan", "--format", "json", "--fail-on", "never", script)
    assert r.rc == 0, r
    as_py = {(*where[f["line"] - 1], f["column"], f["end_column"], f["rule"], f["symbol"])
             for f in r.json()["findings"]}
    as_nb = {(f["cell"], f["line"], f["column"], f["end_column"], f["rule"], f["symbol"])
             for f in findings_of(path)}
    missing, extra = sorted(as_py - as_nb), sorted(as_nb - as_py)
    assert not missing and not extra, (
        f"{path.name}: {len(missing)} findings only in the .py scan (first: {missing[:3]}), "
        f"{len(extra)} only in the notebook scan (first: {extra[:3]})")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_syntax_error_notice_on_valid_notebooks(path):
    notices = [n for n in scan_folder()["notices"] if n.get("path") == str(path)]
    assert notices == [], notices


def test_text_output_names_cells():
    r = run("scan", "--fail-on", "never", NB_DIR)
    assert r.rc == 0, r
    out = r.out
    for path in NOTEBOOKS:
        assert f"{path}\n" in out
    positions = re.findall(r"\.ipynb:cell (\d+):(\d+):(\d+): (?:warning|error|note) GPU\d{3}", out)
    assert len(positions) >= 10, out[:2000]
    for path in NOTEBOOKS:
        for rule, _, cell, line, col in expected_sites(path):
            if rule.startswith("GPU1"):
                continue  # a GPU path is a note, listed only with --verbose
            assert f"{path}:cell {cell}:{line}:{col}: warning {rule}" in out, (path.name, cell, line)


def test_line_magic_bodies_are_scanned():
    timed = set()
    for path in NOTEBOOKS:
        for index, lines, _, _ in code_cells(path):
            for n, line in enumerate(lines, 1):
                m = LINE_MAGIC.match(line)
                if m and m.group(1) in ("time", "timeit") and "(" in line:
                    timed.add((str(path), index, n))
    assert timed
    flagged = {(f["path"], f["cell"], f["line"]) for f in scan_folder()["findings"]}
    assert timed & flagged, f"no finding on any of {len(timed)} timed calls"


def test_writefile_cells_are_the_program(tmp_path):
    """A `%%writefile NAME.py` cell holds the program the notebook runs next:
    it is scanned as Python; a %%writefile of anything else is not."""
    prog = ["%%writefile power.py\n", "import cupy as cp\n", "v = cp.ones(8)\n",
            "for i in range(1000):\n", "    if cp.linalg.norm(v) < 1e-6:\n", "        break\n"]
    data = ["%%writefile notes.txt\n", "import cupy as cp\n", "for i in range(1000):\n",
            "    x = cp.ones(3).get()\n"]
    nb = {"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": prog},
                    {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": data}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "wf.ipynb"
    path.write_text(json.dumps(nb))
    r = run("scan", "--format", "json", "--fail-on", "never", path)
    found = [(f["cell"], f["line"], f["rule"]) for f in r.json()["findings"] if f["rule"].startswith("GPU6")]
    assert found == [(1, 5, "GPU601")], found
