"""Bad input: each problem gives one clear error naming the file, the scan
goes on with the rest, and the exit code is 2 only if nothing was scanned."""
import json
import os
import pwd
import shutil
import stat
import tempfile
import time
from pathlib import Path

import pytest

from conftest import run

GOOD = "import numpy as np\nx = np.fft.fft(np.ones(8))\n"


def scan(*paths, **kw):
    return run("scan", "--format", "json", *paths, **kw)


def errors_of(r):
    return {Path(e["path"]).name: e["message"] for e in r.json()["errors"]}


@pytest.mark.parametrize("name,data,why", [
    ("binary.py", b"\x7fELF\x02\x01\x01\x00\x00\x00", "binary file"),
    ("nul.py", b"import numpy\x00 as np\n", "NUL byte"),
    ("latin.py", b"s = '\xe9t\xe9'\n", "invalid UTF-8 at byte 5 (line 1)"),
    ("trunc.py", b"s = '\xe2\x82'\n", "invalid UTF-8"),
    ("notjson.ipynb", b"{ not json", "not valid JSON"),
    ("shape.ipynb", b'{"cells": {"a": 1}}', "no \"cells\" array"),
    ("list.ipynb", b"[1, 2, 3]", "no \"cells\" array"),
    ("cell.ipynb", b'{"cells": [{"cell_type": "code", "source": [1]}]}', "cell 1"),
    ("notype.ipynb", b'{"cells": [{"source": "x"}]}', "cell 1 has no \"cell_type\""),
    ("badutf.ipynb", b'{"cells": [{"cell_type": "code", "source": "\xff"}]}', "not valid JSON"),
])
def test_bad_file_is_reported_and_the_scan_goes_on(tmp_path, name, data, why):
    (tmp_path / name).write_bytes(data)
    (tmp_path / "good.py").write_text(GOOD)
    r = scan(tmp_path)
    assert r.rc == 0, r
    doc = r.json()
    assert errors_of(r).keys() == {name}
    assert why in errors_of(r)[name]
    assert doc["summary"]["files_scanned"] == 1
    assert doc["summary"]["files_with_errors"] == 1
    assert any(f["path"].endswith("good.py") for f in doc["findings"])
    assert f"{name}: " in r.err  # also on stderr, naming the file
    # Alone, the bad file means nothing could be scanned: exit 2.
    alone = scan(tmp_path / name)
    assert alone.rc == 2, alone
    assert alone.err.startswith("gpuopt: ") and name in alone.err


def test_latin1_with_coding_declaration_is_scanned(tmp_path):
    p = tmp_path / "decl.py"
    p.write_bytes(b"# -*- coding: latin-1 -*-\nimport numpy as np\ns = '\xe9'; np.zeros(3)\n")
    doc = scan(p).json()
    assert doc["errors"] == []
    f = [f for f in doc["findings"] if f["line"] == 3]
    assert f and f[0]["column"] == 10  # columns count characters, not bytes


def test_ten_megabyte_line_and_deep_nesting(tmp_path):
    (tmp_path / "long.py").write_text("import numpy as np\nx = [" + "1, " * 3_400_000 + "np.zeros(1)]\n")
    assert (tmp_path / "long.py").stat().st_size > 10_000_000
    (tmp_path / "deep.py").write_text("import numpy as np\nx = " + "(" * 10000 + "np.zeros(1)" + ")" * 10000 + "\n")
    (tmp_path / "deepcall.py").write_text("import numpy as np\nx = " + "np.abs(" * 10000 + "1" + ")" * 10000 + "\n")
    (tmp_path / "deeplist.py").write_text("x = " + "[" * 10000 + "]" * 10000 + "\n")
    (tmp_path / "deepblocks.py").write_text(
        "import numpy as np\n" + "".join(" " * i + "if x:\n" for i in range(1000)) + " " * 1000 + "np.ones(1)\n")
    start = time.monotonic()
    r = scan(tmp_path, timeout=300)
    assert time.monotonic() - start < 120
    assert r.rc == 0, r
    doc = r.json()
    assert doc["errors"] == []
    lines = {(Path(f["path"]).name, f["line"]) for f in doc["findings"]}
    assert ("long.py", 2) in lines and ("deep.py", 2) in lines and ("deepcall.py", 2) in lines


def test_file_over_the_size_limit(tmp_path):
    p = tmp_path / "huge.py"
    with open(p, "wb") as f:
        f.truncate(17 << 20)
    r = scan(p)
    assert r.rc == 2 and "larger than the 16 MB limit" in r.err


def test_symlink_loops_and_broken_links(tmp_path):
    d = tmp_path / "proj"
    d.mkdir()
    (d / "good.py").write_text(GOOD)
    os.symlink(d, d / "again")           # directory loop
    os.symlink("self.py", d / "self.py")  # link to itself
    os.symlink("missing.py", d / "gone.py")
    r = scan(d)
    assert r.rc == 0, r
    errs = {Path(e["path"]).name: e["message"] for e in r.json()["errors"]}
    assert "loop" in errs["again"] and "loop" in errs["self.py"]
    assert errs["gone.py"] == "broken symbolic link"
    assert r.json()["summary"]["files_scanned"] == 1


def test_missing_path_and_empty_directory(tmp_path):
    r = scan(tmp_path / "nope.py")
    assert r.rc == 2 and "nope.py: No such file or directory" in r.err
    empty = tmp_path / "empty"
    empty.mkdir()
    r = scan(empty)
    assert r.rc == 2 and "no .py or .ipynb files found" in r.err, r  # nothing scanned: the help's exit 2


@pytest.mark.skipif(os.geteuid() != 0 and not hasattr(os, "setuid"), reason="needs a way to drop rights")
def test_unreadable_file_and_directory():
    # As root everything is readable, so the scan runs as 'nobody'.
    base = Path(tempfile.mkdtemp())
    try:
        os.chmod(base, 0o755)
        (base / "good.py").write_text(GOOD)
        (base / "secret.py").write_text(GOOD)
        os.chmod(base / "secret.py", 0)
        (base / "locked").mkdir()
        (base / "locked" / "x.py").write_text(GOOD)
        os.chmod(base / "locked", 0)
        for p in (base / "good.py",):
            os.chmod(p, 0o644)
        user = "nobody" if os.geteuid() == 0 else None
        r = run("scan", "--format", "json", base, user=user)
        assert r.rc == 0, r
        errs = {Path(e["path"]).name: e["message"] for e in r.json()["errors"]}
        assert errs["secret.py"] == "Permission denied"
        assert errs["locked"].startswith("cannot read directory: Permission denied")
    finally:
        os.chmod(base / "locked", 0o755)
        shutil.rmtree(base)


def test_stdin(gpuopt):
    r = run("scan", "--format", "json", "-", input=GOOD)
    doc = r.json()
    assert r.rc == 0
    assert doc["findings"] and doc["findings"][0]["path"] == "-"
