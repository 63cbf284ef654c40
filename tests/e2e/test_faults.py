"""Fault injection, as SQLite tests it: the test binary gpuopt-fault (built
by tests/meson.build with -DGPUOPT_FAULT_INJECTION) fails the Nth
allocation, temporary-file creation, write, fsync, close or rename
(GPUOPT_FAULT=OP:N). Whatever fails, a report is written whole or not at
all: the file under the final name keeps its old content, no temporary is
left beside it, and the error says which file and why."""
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from conftest import BINARY, CACHE_HOME

FAULT_BIN = Path(os.environ.get("GPUOPT_FAULT_BIN", BINARY.parent.parent / "tests" / "gpuopt-fault")).resolve()
OLD = "the old report\n"
WHY = {"open": "Permission denied", "write": "No space left on device", "fsync": "Input/output error",
       "close": "Input/output error", "rename": "Input/output error", "alloc": "out of memory"}


def faulted(op, n, args, cwd):
    env = dict(os.environ, GPUOPT_FAULT=f"{op}:{n}", XDG_CACHE_HOME=CACHE_HOME)
    return subprocess.run([str(FAULT_BIN), *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120)


def check_whole_or_nothing(out, r, op, complete):
    """After one faulted run: out is the old report, or a complete new one."""
    left = sorted(p.name for p in out.parent.iterdir() if p.name.startswith(out.name + "."))
    assert left == [], f"{op}: temporaries left behind: {left}\n{r.stderr}"
    text = out.read_text()
    if r.returncode == 2:
        assert text == OLD, f"{op}: the old report was damaged:\n{r.stderr}"
        assert r.stderr.startswith("gpuopt: "), r.stderr
        assert WHY[op] in r.stderr, r.stderr
        if op != "alloc":
            assert f"'{out.name}'" in r.stderr or str(out) in r.stderr, r.stderr
        return False
    assert complete(text), f"{op}: rc {r.returncode} but the report is not whole:\n{r.stderr}"
    return True


def sweep(tmp_path, op, args, complete, limit):
    """Fails call 1, 2, 4, ... of op until a run no longer reaches it."""
    out = tmp_path / "out" / "report.json"
    out.parent.mkdir(exist_ok=True)
    n, failures = 1, 0
    while n <= limit:
        out.write_text(OLD)
        r = faulted(op, n, [a if a != "OUT" else str(out) for a in args], tmp_path)
        if check_whole_or_nothing(out, r, op, complete):
            break
        failures += 1
        n = n * 2 if op == "alloc" else n + 1  # every write, rename...; allocations sampled
    assert failures > 0, f"{op}: no call was failed"


@pytest.fixture
def big_source(tmp_path):
    # Enough findings for a report of several MB: several writes of the 1 MB buffer.
    (tmp_path / "big.py").write_text("import numpy as np\n" + "x = np.fft.fft(np.ones(8))\n" * 6000)
    return tmp_path / "big.py"


def json_whole(text):
    import json
    try:
        json.loads(text)
        return True
    except ValueError:
        return False


@pytest.mark.parametrize("op", ["open", "write", "close", "rename", "alloc"])
def test_scan_report_is_whole_or_absent(tmp_path, big_source, op):
    assert FAULT_BIN.exists(), f"build the fault-injection binary first: {FAULT_BIN}"
    sweep(tmp_path, op, ["scan", "--no-cache", "-j", "1", "-f", "json", "-o", "OUT", str(big_source)],
          json_whole, limit=1 << 24)


@pytest.mark.parametrize("op", ["open", "write", "fsync", "close", "rename", "alloc"])
def test_verify_report_is_whole_or_absent(tmp_path, op):
    np.save(tmp_path / "ref.npy", np.arange(100000, dtype=np.float64))
    np.save(tmp_path / "cand.npy", np.arange(100000, dtype=np.float64) * (1 + 1e-3))
    sweep(tmp_path, op, ["verify", "--show", "100", "-f", "json", "-o", "OUT", str(tmp_path / "ref.npy"),
                         str(tmp_path / "cand.npy")], json_whole, limit=1 << 22)


@pytest.mark.parametrize("op", ["open", "write", "fsync", "close", "rename", "alloc"])
def test_bench_export_is_whole_or_absent(tmp_path, op):
    sweep(tmp_path, op, ["bench", "-r", "3", "-w", "0", "--min-time", "0", "--python", "true",
                         "--export-json", "OUT", "true"], json_whole, limit=1 << 22)
