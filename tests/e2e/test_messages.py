"""The second hostile reading of issue 25, part E: unclear messages and minor
inconsistencies (docs/hostile_reading_2.md). Each test runs the real binary
on real files and failed on the binary before its fix."""
import json
import os
import subprocess

import numpy as np
import pytest

from conftest import BINARY, CACHE_HOME, ROOT, run

PY = "/usr/bin/python3"  # Debian's interpreter: numpy is there
FAST = ["--runs", "5", "--warmup", "0", "--min-time", "0"]
CEILINGS = ROOT / "tests" / "e2e" / "fixtures" / "h200_ceilings.json"


def run_fds(args, stdin=None, stdout=None, close=(), cwd=None):
    """gpuopt with its standard fds as given: a path opened for it, or in
    close the fd numbers it starts without (`>&-`, `<&-`). Returns (rc, stderr)."""
    env = dict(os.environ, XDG_CACHE_HOME=CACHE_HOME)
    files = [open(stdin, "rb") if stdin else None, open(stdout, "wb") if stdout else None]
    try:
        p = subprocess.run([str(BINARY), *map(str, args)], stdin=files[0] or subprocess.DEVNULL,
                           stdout=files[1] or subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           env=env, cwd=cwd, timeout=120,
                           preexec_fn=lambda: [os.close(fd) for fd in close])
    finally:
        for f in files:
            if f:
                f.close()
    return p.returncode, p.stderr


# ---- closed or full stdout ----

@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """A finished try's results directory, for report."""
    d = tmp_path_factory.mktemp("try")
    (d / "run.py").write_text('import numpy as np\nnp.save("out.npy", np.arange(10.0))\n')
    (d / "gpu.py").write_text((d / "run.py").read_text())
    (d / "gpuopt.toml").write_text(
        f'baseline = "{PY} run.py"\noutputs = ["out.npy"]\ncandidates = ["{PY} gpu.py"]\n'
        'accelerators = "none"\nmin_runs = 5\nmax_time = 1\nmin_time = 0.1\n')
    r = run("try", "-q", cwd=d, timeout=300)
    assert r.rc in (0, 1), r
    return d / "gpuopt-try"


def stdout_commands(tmp_path, results):
    np.save(tmp_path / "a.npy", np.arange(3.0))
    np.save(tmp_path / "b.npy", np.arange(3.0) + 1)
    (tmp_path / "x.py").write_text("import numpy as np\nx = np.zeros(3)\n")
    return {
        "bench": ["bench", *FAST, "true"],
        "bench-json": ["bench", *FAST, "--export-json", "-", "true"],
        "scan": ["scan", tmp_path / "x.py"],
        "verify-pass": ["verify", tmp_path / "a.npy", tmp_path / "a.npy"],
        "verify-fail": ["verify", tmp_path / "a.npy", tmp_path / "b.npy"],
        "report": ["report", "-f", "markdown", "-o", "-", results],
        "explain": ["explain", "GPU101"],
        "fit": ["fit", "--ceilings", CEILINGS, "--bytes", "4096"],
        "version": ["--version"],
    }


@pytest.mark.parametrize("name", ["bench", "bench-json", "scan", "verify-pass", "verify-fail", "report",
                                  "explain", "fit", "version"])
@pytest.mark.parametrize("how", ["closed", "full"])
def test_output_that_cannot_be_written_is_an_error(tmp_path, results, name, how):
    args = stdout_commands(tmp_path, results)[name]
    if how == "closed":
        rc, err = run_fds(args, close=[1])
        why = "Bad file descriptor"
    else:
        rc, err = run_fds(args, stdout="/dev/full")
        why = "No space left on device"
    cmd = "" if args[0].startswith("-") else f"{args[0]}: "
    assert rc == 2, err
    assert f"gpuopt: {cmd}standard output: {why}\n" in err, err
    assert err.count("standard output") == 1 and "cannot write" not in err, err


def test_scan_of_a_closed_stdin_is_an_input_error(tmp_path):
    rc, err = run_fds(["scan", "--format", "json", "-"], close=[0])
    assert rc == 2, err
    assert "-: Bad file descriptor" in err, err


# ---- a scan of nothing ----

def test_scan_with_every_file_excluded_is_exit_2_as_the_help_says(tmp_path):
    (tmp_path / "a.ipynb").write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    r = run("scan", "-e", "*.ipynb", tmp_path)
    assert r.rc == 2 and "gpuopt: scan: no .py or .ipynb files found (after --exclude)" in r.err, r
    assert "or nothing could be scanned" in run("scan", "--help").out
    r = run("scan", "--format", "json", tmp_path / "a.ipynb")
    assert r.rc == 0, r  # the same file, not excluded, is scanned
