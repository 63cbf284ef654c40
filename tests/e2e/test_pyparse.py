"""The fast parser against tree-sitter on real code: tests/tools/ptdiff
parses every file both ways and compares the trees node for node. Any
difference fails; files the fast parser declines are allowed (tree-sitter
then parses them), but only a few."""
import re
import subprocess
from pathlib import Path

import pytest

from conftest import BINARY, ROOT

PTDIFF = BINARY.parent.parent / "tests" / "tools" / "ptdiff"
SUMMARY = re.compile(r"files (\d+): same (\d+), differ (\d+), declined (\d+) \(([\d.]+)% of bytes\), "
                     r"syntax errors (\d+); pytree_from_ts differs (\d+)")

# Python packages from Debian on this machine (numpy at least: setup.sh
# installs python3-numpy); more of the scientific stack when present.
PACKAGES = ["numpy", "scipy", "pandas", "sklearn", "skimage", "networkx"]
DIST = Path("/usr/lib/python3/dist-packages")


def ptdiff(files):
    proc = subprocess.run([str(PTDIFF), *map(str, files)], capture_output=True, text=True,
                          timeout=900)
    m = SUMMARY.search(proc.stdout)
    assert m, proc.stdout + proc.stderr
    return proc, [int(m.group(i)) for i in (1, 2, 3, 4)] + [float(m.group(5)), int(m.group(6)),
                                                            int(m.group(7))]


def test_bundled_code_parses_the_same():
    files = sorted((ROOT / "examples").glob("*.py")) + sorted((ROOT / "tests/e2e/cases").glob("*.py")) \
        + sorted((ROOT / "tests/fuzz/corpus/pyparse").iterdir())
    proc, (n, same, differ, declined, pct, errors, copy_differ) = ptdiff(files)
    assert differ == 0 and copy_differ == 0, proc.stdout
    # declined: the Python 2 print statement, and `[*a.b]` splats (tree-sitter reads (*a).b)
    assert declined <= 3, proc.stdout
    assert same >= n - declined - errors


@pytest.mark.parametrize("package", PACKAGES)
def test_debian_package_parses_the_same(package):
    root = DIST / package
    if not root.is_dir():
        pytest.skip(f"python3-{package} is not installed")
    files = sorted(root.rglob("*.py"))
    proc, (n, same, differ, declined, pct, errors, copy_differ) = ptdiff(files)
    assert n > 50
    assert differ == 0 and copy_differ == 0, proc.stdout[-4000:]
    assert pct < 5.0, proc.stdout[-4000:]


def test_ptdiff_catches_a_difference(tmp_path):
    # the check itself must be able to fail: a file tree-sitter reads with
    # an error is declined, never accepted
    bad = tmp_path / "bad.py"
    bad.write_text("def f(:\n    pass\n")
    proc, (n, same, differ, declined, pct, errors, copy_differ) = ptdiff([bad])
    assert errors == 1 and differ == 0


def test_a_file_ending_inside_an_fstring_does_not_break_the_next(tmp_path):
    # tree-sitter-python's scanner kept "inside an f-string" from one file
    # to the next, so a later file (one the fast parser leaves to
    # tree-sitter: it has a Python 2 print statement) lost its dedents and
    # got a syntax error it does not have.
    from conftest import run
    broken = tmp_path / "a_broken.py"
    broken.write_text('x = f"{\n')
    later = tmp_path / "b_later.py"
    later.write_text("import numpy as np\n"
                     "print 'py2'\n"
                     "def f(a):\n"
                     "    if a:\n"
                     "        return np.sum(a)\n"
                     "    return 0\n"
                     "y = np.zeros(3)\n")
    alone = run("scan", "--no-cache", "--jobs", "1", "--format", "json", "--fail-on", "never",
                str(later)).json()
    both = run("scan", "--no-cache", "--jobs", "1", "--format", "json", "--fail-on", "never",
               str(broken), str(later)).json()
    notices = [n for n in both["notices"] if n["path"] == str(later)]
    assert notices == [], notices
    assert [f for f in both["findings"] if f["path"] == str(later)] == alone["findings"]
    assert any(n["path"] == str(broken) for n in both["notices"])
