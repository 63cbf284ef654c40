"""The three outputs (text, JSON, SARIF), exit codes by --fail-on, -o,
--exclude, colour, and notebook positions."""
import json
import os
import re
from pathlib import Path

from conftest import ROOT, run

CODE = """\
import numpy as np
import pandas as pd
from sklearn.cluster import AgglomerativeClustering

a = np.fft.fft(np.ones(8))
df = pd.read_csv("x.csv")
for _, row in df.iterrows():
    pass
model = AgglomerativeClustering(3)
"""

FINDING_KEYS = {"path", "line", "column", "end_line", "end_column", "cell", "rule", "rule_name",
                "category", "library", "symbol", "target", "severity", "message", "fix", "rank",
                "loop_line", "rank_reason"}
CATEGORIES = {"library-port", "legacy-library", "gpu-native-framework", "python-loop",
              "roundtrip-in-loop", "unsynchronized-timing", "transfer-in-loop",
              "mixed-host-device", "no-gpu-path"}
TARGETS = {"cupy", "cudf.pandas", "cudf", "cuml.accel", "cuml", "nx-cugraph", "cugraph", "cucim",
           "cuvs", "kvikio", "numba-cuda", "numba-cuda-mlir", "warp", "newton", "raft", "dask", None}


def write(tmp_path, name="work.py", text=CODE):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_json_document(tmp_path):
    p = write(tmp_path)
    r = run("scan", "--format", "json", p)
    doc = r.json()
    assert set(doc) == {"tool", "version", "findings", "summary", "errors", "notices"}
    assert doc["version"] == run("--version").out.split()[1]
    assert doc["findings"], doc
    for f in doc["findings"]:
        assert set(f) == FINDING_KEYS
        assert f["category"] in CATEGORIES and f["target"] in TARGETS
        assert f["cell"] is None
        assert 1 <= f["line"] <= f["end_line"] and f["column"] >= 1
    s = doc["summary"]
    assert s["files_scanned"] == 1 and s["findings"] == len(doc["findings"])
    assert sum(s["by_target"].values()) == sum(s["by_category"].values()) == s["findings"]
    assert sum(s["by_severity"].values()) == s["findings"]
    by_line = {f["line"]: f for f in doc["findings"]}
    assert by_line[6]["target"] == "cudf.pandas" and by_line[6]["symbol"] == "pandas.read_csv"
    assert by_line[6]["fix"] == f"python -m cudf.pandas {p}"
    assert by_line[7]["category"] == "no-gpu-path" and by_line[7]["target"] is None
    assert by_line[9]["rule"] == "GPU203"


def test_fail_on_levels(tmp_path):
    p = write(tmp_path)
    assert run("scan", p).rc == 0                      # default: error
    assert run("scan", "--fail-on", "warning", p).rc == 1
    assert run("scan", "--fail-on", "note", p).rc == 1
    assert run("scan", "--fail-on", "never", p).rc == 0
    quiet = write(tmp_path, "plain.py", "print(sum(range(10)))\n")
    assert run("scan", "--fail-on", "note", quiet).rc == 0
    assert run("scan", "--format", "json", quiet).json()["findings"] == []


def test_text_output_groups_by_library(tmp_path):
    p = write(tmp_path)
    r = run("scan", p)
    out = r.out
    assert "\033[" not in out  # not a terminal: no colour
    assert out.startswith(f"{p}\n")
    assert re.search(r"pandas: \d+ calls? → cudf\.pandas", out)
    assert f"first step: python -m cudf.pandas {p}" in out
    # exceptions with location, rule and a code frame
    assert f"{p}:7:15: warning GPU206" in out
    assert "    7 |" in out and "^" in out
    assert "--verbose lists them" in out
    v = run("scan", "--verbose", p).out
    assert f"{p}:5:5: note GPU101" in v
    assert out.rstrip().splitlines()[-1].startswith("Scanned 1 file in ")


def test_colour_choice(tmp_path):
    p = write(tmp_path)
    assert "\033[" in run("scan", "--color", "always", p).out
    assert "\033[" not in run("scan", "--color", "never", p).out
    assert "\033[" not in run("scan", p, env={"NO_COLOR": "1"}).out


def test_output_file_is_written_whole_or_not_at_all(tmp_path):
    p = write(tmp_path)
    out = tmp_path / "report.json"
    r = run("scan", "--format", "json", "-o", out, p)
    assert r.rc == 0 and r.out == ""
    assert json.loads(out.read_text())["findings"]
    assert [x.name for x in tmp_path.iterdir() if "tmp" in x.name] == []
    r = run("scan", "--format", "json", "-o", tmp_path / "no" / "dir" / "r.json", p)
    assert r.rc == 2 and "cannot write" in r.err
    assert not (tmp_path / "no").exists()


def test_exclude_and_skipped_directories(tmp_path):
    write(tmp_path, "keep.py")
    write(tmp_path, "skip_me.py")
    for d in (".git", "node_modules", "site-packages", "__pycache__", "venv_custom", "build"):
        (tmp_path / d).mkdir()
        write(tmp_path / d, "inside.py")
    (tmp_path / "venv_custom" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    doc = run("scan", "--format", "json", "--exclude", "skip_*", "-e", "build", tmp_path).json()
    names = {os.path.relpath(f["path"], tmp_path) for f in doc["findings"]}
    assert names == {"keep.py"}


def test_sarif_document(tmp_path):
    p = write(tmp_path, "has space.py")
    r = run("scan", "--format", "sarif", p)
    assert r.rc == 0
    doc = json.loads(r.out)
    assert doc["version"] == "2.1.0" and "sarif-2.1.0" in doc["$schema"]
    (run_,) = doc["runs"]
    driver = run_["tool"]["driver"]
    assert driver["name"] == "gpuopt"
    ids = [x["id"] for x in driver["rules"]]
    assert len(ids) == len(set(ids))
    for rule in driver["rules"]:
        assert rule["shortDescription"]["text"] and rule["fullDescription"]["text"]
        assert rule["defaultConfiguration"]["level"] in ("note", "warning", "error")
    assert run_["results"]
    for res in run_["results"]:
        assert driver["rules"][res["ruleIndex"]]["id"] == res["ruleId"]
        assert res["level"] in ("note", "warning", "error") and res["message"]["text"]
        loc = res["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uri"].endswith("has%20space.py")
        reg = loc["region"]
        assert reg["startLine"] >= 1 and reg["startColumn"] >= 1
        assert (reg["endLine"], reg["endColumn"]) >= (reg["startLine"], reg["startColumn"])
    assert run_["columnKind"] == "unicodeCodePoints"
    assert run_["invocations"][0]["executionSuccessful"] is True


def test_notebook_positions(tmp_path):
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "markdown", "metadata": {}, "source": ["# Analysis\n"]},
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": 1,
         "source": ["%matplotlib inline\n", "import pandas as pd\n", "!pip list\n"]},
        {"cell_type": "code", "metadata": {}, "execution_count": 2,
         "outputs": [{"output_type": "display_data", "data": {"image/png": "iVBORw0KGgo=" * 1000}}],
         "source": "df = pd.read_csv('x.csv')\n\nfor _, r in df.iterrows():\n    pass"},
        {"cell_type": "code", "metadata": {}, "outputs": [], "source": ["%%bash\n", "pd.read_csv('no')\n"]},
        {"cell_type": "code", "metadata": {}, "outputs": [], "source": ["%%time\n", "df.groupby('a').sum()\n"]},
    ]}
    p = tmp_path / "analysis.ipynb"
    p.write_text(json.dumps(nb))
    doc = run("scan", "--format", "json", p).json()
    assert doc["errors"] == [] and doc["summary"]["notebooks"] == 1
    got = {(f["cell"], f["line"], f["column"], f["symbol"]) for f in doc["findings"]}
    assert (3, 1, 6, "pandas.read_csv") in got
    assert (3, 3, 13, "pandas.DataFrame.iterrows") in got
    assert not any(c == 4 for c, *_ in got)  # %%bash cell is not Python
    assert any(c == 5 and line == 2 for c, line, *_ in got)
    fix = [f for f in doc["findings"] if f["symbol"] == "pandas.read_csv"][0]["fix"]
    assert "%load_ext cudf.pandas" in fix
    text = run("scan", p).out
    assert f"{p}:cell 3:3:13: warning GPU206" in text


def test_examples_directory_scans_cleanly():
    r = run("scan", "--format", "json", ROOT / "examples")
    doc = r.json()
    assert doc["errors"] == []
    assert doc["summary"]["files_scanned"] >= 12
    # exit 1: the wrong-on-purpose examples have error-level findings, and only they
    assert r.rc == 1
    errors = {Path(f["path"]).name for f in doc["findings"] if f["severity"] == "error"}
    assert errors and all(name.startswith("wrong_") for name in errors)


def test_hot_paths_are_ranked(tmp_path):
    p = write(tmp_path, "hot.py", """\
import numpy as np


def inner(x):
    return np.sum(x)


def outer(x):
    return inner(x)


np.ones(3)
for i in range(3):
    np.zeros(3)
    for j in range(3):
        np.ones(3)
    outer(i)
""")
    doc = run("scan", "--format", "json", p).json()
    by_line = {f["line"]: f for f in doc["findings"]}
    assert by_line[12]["rank"] == 0 and by_line[12]["rank_reason"] is None
    assert by_line[14]["rank"] == 2 and by_line[14]["loop_line"] == 13
    assert by_line[14]["rank_reason"] == "in a loop at line 13"
    assert by_line[16]["rank"] == 3 and by_line[16]["loop_line"] == 15
    assert by_line[5]["rank"] == 1 and by_line[5]["loop_line"] == 13
    assert by_line[5]["rank_reason"] == "in inner(), called from a loop at line 13"
    text = run("scan", "--verbose", "--fail-on", "never", p).out
    # hottest first within the file, with the reason
    order = [int(m) for m in re.findall(r"hot\.py:(\d+):", text)]
    assert order.index(16) < order.index(14) < order.index(5) < order.index(12)
    assert "in a nested loop (2 deep) at line 15" in text


def test_notebook_hot_path_names_the_cell_of_the_loop(tmp_path):
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "code", "metadata": {}, "outputs": [],
         "source": "import numpy as np\n\ndef smooth(x):\n    return np.convolve(x, np.ones(3))\n"},
        {"cell_type": "markdown", "metadata": {}, "source": "Run it many times."},
        {"cell_type": "code", "metadata": {}, "outputs": [],
         "source": "for i in range(10):\n    smooth(np.ones(100))\n"},
    ]}
    p = tmp_path / "hot.ipynb"
    p.write_text(json.dumps(nb))
    doc = run("scan", "--format", "json", p).json()
    f = [f for f in doc["findings"] if f["symbol"] == "numpy.convolve"][0]
    assert (f["cell"], f["line"], f["rank"]) == (1, 4, 1)
    assert f["rank_reason"] == "in smooth(), called from a loop in cell 3 at line 1"
    g = [f for f in doc["findings"] if f["cell"] == 3 and f["line"] == 2][0]
    assert g["rank_reason"] == "in a loop at line 1"


def test_report_is_the_same_whatever_the_threads(tmp_path):
    # more files than workers may run ahead of the reporter (128), so every
    # hand-off is exercised: the reporter scanning, waiting, workers stalling
    sources = sorted((ROOT / "examples").glob("*.py")) + sorted((ROOT / "tests/e2e/cases").glob("*.py"))
    for i in range(300):
        src = sources[i % len(sources)]
        (tmp_path / f"f{i:03d}.py").write_text(f"# copy {i}\n" + "\n" * (i % 7) + src.read_text())
    cache = tmp_path / "cache"
    outs = {}
    for fmt in ("json", "text"):
        for jobs in ("1", "2", "3", "8"):
            for cache_arg in ("--no-cache", None):
                args = ["scan", "--format", fmt, "--fail-on", "never", "--jobs", jobs, "--color", "never"]
                if cache_arg:
                    args.append(cache_arg)
                r = run(*args, tmp_path, env={"XDG_CACHE_HOME": str(cache)})
                assert r.rc == 0, r
                if fmt == "json":
                    doc = r.json()
                    assert doc["summary"].pop("seconds") >= 0
                    assert doc["summary"]["files_scanned"] == 300
                    out = json.dumps(doc)
                else:
                    out = re.sub(r" in \d+\.\d\d s:", " in T:", r.out)
                    assert " in T:" in out
                outs.setdefault(fmt, set()).add(out)
    assert len(outs["json"]) == 1 and len(outs["text"]) == 1


def test_text_counts_a_note_without_a_gpu_path_apart(tmp_path):
    # a NumPy generator has no GPU path: a note (GPU208), not a GPU path in
    # the headline, and said apart in the line that counts the quiet sites
    p = write(tmp_path, text="import numpy as np\nrng = np.random.default_rng(0)\nx = np.fft.fft(rng.random(8))\n")
    out = run("scan", p).out
    assert "NumPy: 1 call → cupy; 1 without a GPU path or flagged below" in out, out
    assert "(1 more site with a GPU path, 1 note on a call without one: --verbose lists them)" in out, out
    assert "warning GPU" not in out and "(0 error, 0 warning, 2 note)" in out
    v = run("scan", "--verbose", p).out
    assert f"{p}:2:7: note GPU208 numpy.random.default_rng" in v, v
