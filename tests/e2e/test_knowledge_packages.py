"""The knowledge (data/knowledge/*.json) agrees with the real packages: tools/check_knowledge.py
reads cuML, cuDF, nx-cugraph, cuCIM and CuPy as installed from PyPI into .venv by
scripts/setup.sh (requirements/gpu-packages.txt, knowledge-check.txt) and reports every disagreement; this test
fails on any that is not accepted, and checks that the checker does catch a wrong fact."""
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


def test_a_wrong_fact_is_reported(tmp_path):
    data = tmp_path / "data"
    shutil.copytree(ROOT / "data", data)
    path = data / "knowledge" / "sklearn.json"
    doc = json.loads(path.read_text())
    for e in doc["apis"]:
        if e["name"] == "sklearn.cluster.KMeans":
            e.clear()
            e.update({"name": "sklearn.cluster.KMeans", "gpu": False, "why": "wrong on purpose"})
    path.write_text(json.dumps(doc))
    numpy_path = data / "knowledge" / "numpy.json"
    ndoc = json.loads(numpy_path.read_text())
    ndoc["apis"] = [e for e in ndoc["apis"] if e["name"] != "numpy.nditer"]
    ndoc["apis"].insert(0, {"name": "numpy.nditer"})
    numpy_path.write_text(json.dumps(ndoc))  # a port, though CuPy has no nditer
    r = run_check("--data", str(data))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "sklearn.json: sklearn.cluster.KMeans: cuML" in r.stdout
    assert "accelerates it under cuml.accel" in r.stdout
    assert "numpy.json: numpy.nditer: CuPy" in r.stdout and "has no cupy.nditer" in r.stdout
