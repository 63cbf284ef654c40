"""A project's modules scanned together: a loop in one file that calls a
helper in another makes the helper hot, through relative and package
imports, methods of the project's classes and notebooks; scanned alone, the
helper is cold (issue 14: "loops in another file")."""
import json

from conftest import run

HELPERS = """import cupy as cp


def process(x):
    return _pad(x), 1


def _pad(x):
    return int(cp.ceil(x.shape[0] / 32.0)) + x.sum().item()


class Filters:
    def apply(self, x):
        return float(x.max())
"""

DRIVER = """import cupy as cp
from .helpers import process
from pkg import helpers


class Conveyor:
    def __init__(self):
        self.filters = helpers.Filters()

    def run(self, chunks):
        for chunk in chunks:
            data = cp.asarray(chunk)
            process(data)
            self.filters.apply(data)
"""


def project(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "helpers.py").write_text(HELPERS)
    (pkg / "driver.py").write_text(DRIVER)
    return pkg


def gpu601(doc, name):
    return sorted({(f["line"], f["rank"], f["rank_reason"]) for f in doc["findings"]
                   if f["rule"] == "GPU601" and f["path"].endswith(name)})


def test_helper_in_another_module_is_hot(tmp_path):
    pkg = project(tmp_path)
    r = run("scan", "--format", "json", "--fail-on", "never", pkg)
    assert r.rc == 0, r
    found = gpu601(r.json(), "helpers.py")
    assert [line for line, _, _ in found] == [9, 14], found
    for line, rank, reason in found:
        assert rank == 1
        assert "called from a loop in" in reason and "driver.py at line 11" in reason, reason


def test_helper_alone_is_cold(tmp_path):
    pkg = project(tmp_path)
    r = run("scan", "--format", "json", "--fail-on", "never", pkg / "helpers.py")
    assert gpu601(r.json(), "helpers.py") == []


def test_notebook_loop_calls_a_module(tmp_path):
    pkg = project(tmp_path)
    nb = {"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                     "source": ["import cupy as cp\n", "from pkg.helpers import process\n"]},
                    {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                     "source": ["for i in range(1000):\n", "    process(cp.ones(64))\n"]}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "run.ipynb").write_text(json.dumps(nb))
    r = run("scan", "--format", "json", "--fail-on", "never", pkg / "helpers.py", tmp_path / "run.ipynb")
    found = gpu601(r.json(), "helpers.py")
    assert [line for line, _, _ in found] == [9], found
    assert "run.ipynb" in found[0][2]
