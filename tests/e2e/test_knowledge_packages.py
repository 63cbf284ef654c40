"""The knowledge (data/knowledge/*.json) agrees with the real packages: tools/check_knowledge.py
reads cuML, cuDF, nx-cugraph, cuCIM and CuPy as installed from PyPI into .venv by
scripts/setup.sh (requirements/gpu-packages.txt, knowledge-check.txt) and reports every disagreement; this test
fails on any that is not accepted, checks that the checker does catch a wrong fact (one found by
executing cuML's own parameter translation), and that every fact is accounted for: the summary
line's counts add up and none is skipped."""
import glob
import json
import re
import shutil
import subprocess

from conftest import ROOT, skip_unless_installed

PYTHON = ROOT / ".venv" / "bin" / "python"
CHECK = ROOT / "tools" / "check_knowledge.py"


def run_check(*args):
    skip_unless_installed("gpu-packages.txt")
    skip_unless_installed("knowledge-check.txt")
    assert PYTHON.exists() and glob.glob(str(ROOT / ".venv/lib/python3*/site-packages/cuml")), \
        "the packages of requirements/*.txt are not in .venv: run scripts/setup.sh"
    return subprocess.run([str(PYTHON), str(CHECK), *args], capture_output=True, text=True,
                          timeout=300)


def test_knowledge_agrees_with_the_packages():
    r = run_check()
    assert r.returncode == 0, r.stdout + r.stderr
    first = r.stdout.splitlines()[0]
    # it says which versions it read
    for dist in ("cuml-cu1", "cudf-cu1", "nx-cugraph-cu1", "cucim-cu1", "cupy-cuda1"):
        assert dist in first
    assert re.fullmatch(r"0 disagreement\(s\), \d+ accepted, 0 unreadable",
                        r.stdout.splitlines()[-1])
    check_summary(r.stdout)


SUMMARY = re.compile(r"facts: (\d+) in all, checked by executing package code: (\d+), by reading "
                     r"source: (\d+), marked uncheckable: (\d+) \((\d+) reason\(s\) listed\), "
                     r"skipped: (\d+)")


def check_summary(out):
    """Every fact is accounted for: executed, read, or uncheckable with a listed reason; none
    skipped; the counts add up."""
    m = [SUMMARY.fullmatch(line) for line in out.splitlines()]
    m = [x for x in m if x]
    assert len(m) == 1, out[-3000:]
    total, ran, read, unchecked, reasons, skipped = map(int, m[0].groups())
    assert skipped == 0, out[-3000:]
    assert total == ran + read + unchecked + skipped
    assert "skipped (no check reached it" not in out
    # the reasons are listed, and their counts are the uncheckable ones
    listed = re.findall(r"^uncheckable: (\d+) fact\(s\): \S", out, re.M)
    assert len(listed) == reasons and sum(map(int, listed)) == unchecked
    # most facts are checked against the packages, and cuML's translation is executed
    assert ran > 0 and read > 0 and ran + read > unchecked
    return total


def data_edited(tmp_path, edits):
    """A copy of data/ with knowledge files changed: edits maps a file name to
    a function that changes its document in place."""
    data = tmp_path / "data"
    shutil.copytree(ROOT / "data", data)
    for name, edit in edits.items():
        path = data / "knowledge" / name
        doc = json.loads(path.read_text())
        edit(doc)
        path.write_text(json.dumps(doc))
    return data


def test_a_fact_without_a_check_or_reason_is_skipped_and_fails(tmp_path):
    # OpenCV is not installed: marked uncheckable
    data = data_edited(tmp_path, {"opencv.json": lambda doc: doc.pop("check")})
    r = run_check("--data", str(data))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "skipped (no check reached it, and the data gives no reason): opencv.json: cv2." in r.stdout
    assert not re.search(r"skipped: 0$", [l for l in r.stdout.splitlines() if l.startswith("facts:")][0])


def test_class_weight_balanced_is_checked_by_running_cumls_translation(tmp_path):
    """The wrong fact issue 26 names: class_weight present falls back. cuML's own
    _params_from_cpu, executed, says "balanced" stays on the GPU."""
    def edit(doc):
        for e in doc["apis"]:
            if e["name"] == "sklearn.ensemble.RandomForestClassifier":
                for f in e["fallback"]:
                    if f["arg"] == "class_weight":
                        f.clear()
                        f.update({"arg": "class_weight", "present": True, "why": "wrong on purpose"})
    data = data_edited(tmp_path, {"sklearn.json": edit})
    r = run_check("--data", str(data))
    assert r.returncode == 1, r.stdout + r.stderr
    assert re.search(r"sklearn\.json: sklearn\.ensemble\.RandomForestClassifier: cuML [\d.]+'s "
                     r"\S+RandomForestClassifier\._params_from_cpu, run on .*class_weight=.*"
                     r"runs 'balanced' on the GPU", r.stdout), r.stdout[-3000:]


def test_a_wrong_fact_is_reported(tmp_path):
    def kmeans_not_gpu(doc):
        for e in doc["apis"]:
            if e["name"] == "sklearn.cluster.KMeans":
                e.clear()
                e.update({"name": "sklearn.cluster.KMeans", "gpu": False, "why": "wrong on purpose"})

    def nditer_a_port(doc):  # a port, though CuPy has no nditer
        doc["apis"] = [{"name": "numpy.nditer"}] + [e for e in doc["apis"] if e["name"] != "numpy.nditer"]
    data = data_edited(tmp_path, {"sklearn.json": kmeans_not_gpu, "numpy.json": nditer_a_port})
    r = run_check("--data", str(data))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "sklearn.json: sklearn.cluster.KMeans: cuML" in r.stdout
    assert "accelerates it under cuml.accel" in r.stdout
    assert "numpy.json: numpy.nditer: CuPy" in r.stdout and "has no cupy.nditer" in r.stdout
