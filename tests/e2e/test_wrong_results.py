"""No wrong result served (issue 25): settings that would silence every rule
are refused. Real runs of the real binary on a real H200 trace."""
import json

import pytest

from conftest import ROOT, run

TRACE = ROOT / "tests" / "e2e" / "fixtures" / "trace" / "cupy_compute_bound.json"
THRESHOLDS = list(json.loads((ROOT / "data" / "trace.json").read_text())["thresholds"])


@pytest.mark.parametrize("name", THRESHOLDS)
@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "-1", "1e999"])
def test_a_threshold_that_is_not_a_number_is_refused(name, value):
    r = run("trace", "show", "--set", f"{name}={value}", TRACE)
    assert r.rc == 2, r
    assert f"--set {name}: '{value}' is not a finite non-negative number" in r.err, r


@pytest.mark.parametrize("name", [n for n in THRESHOLDS if n.endswith(("_share", "_capacity"))])
def test_a_share_above_one_is_refused(name):
    r = run("trace", "show", "--set", f"{name}=1.5", TRACE)
    assert r.rc == 2 and "is a share, between 0 and 1" in r.err, r
    assert run("trace", "show", "--set", f"{name}=1", TRACE).rc == 0


def test_numbers_beyond_float64_are_compared_as_decimals(tmp_path):
    """1e400 and 5e401 both read as infinity: equal as doubles, not as numbers."""
    (tmp_path / "r.csv").write_text("id,a\n1,1e400\n2,3.5\n")
    (tmp_path / "c.csv").write_text("id,a\n1,5e401\n2,3.5\n")
    (tmp_path / "same.csv").write_text("id,a\n1,10.0e399\n2,3.5\n")
    r = run("verify", tmp_path / "r.csv", tmp_path / "c.csv", "--rtol", "0", "--atol", "0")
    assert r.rc == 1, r
    assert "1 value beyond float64's range differ (compared as decimals, exactly): ref 1e400, cand 5e401" in r.out, r
    r = run("verify", tmp_path / "r.csv", tmp_path / "same.csv", "--rtol", "0", "--atol", "0")
    assert r.rc == 0, r


def test_an_all_nan_candidate_has_no_error_to_report(tmp_path):
    import numpy as np
    np.save(tmp_path / "r.npy", np.arange(5.0))
    np.save(tmp_path / "c.npy", np.full(5, np.nan))
    r = run("verify", tmp_path / "r.npy", tmp_path / "c.npy")
    assert r.rc == 1, r
    assert "5 NaN only in the candidate" in r.out and "relative L2 error: none" in r.out, r
    assert "relative L2 error ||cand - ref|| / ||ref|| = 0" not in r.out, r


def test_try_says_an_all_nan_candidate_is_nan_not_error_zero(tmp_path):
    py = "/usr/bin/python3"
    (tmp_path / "base.py").write_text("import numpy as np\nnp.save('out.npy', np.arange(5.0))\n")
    (tmp_path / "nan.py").write_text("import numpy as np\nnp.save('out.npy', np.full(5, np.nan))\n")
    (tmp_path / "gpuopt.toml").write_text(
        f'baseline = "{py} base.py"\noutputs = ["out.npy"]\ncandidates = ["{py} nan.py"]\n'
        'accelerators = "none"\ntrace = false\nwarmup = 0\nmin_runs = 5\nmax_time = 1\nmin_time = 0\n')
    r = run("try", cwd=tmp_path, timeout=120)
    assert r.rc == 1, r
    assert "out.npy: 5 of 5 elements differ (5 NaN only in the candidate, 0 only in the reference)" in r.out, r
    assert "largest abs error 0" not in r.out, r


@pytest.mark.parametrize("path", ["/dev/zero", "/dev/urandom"])
def test_trace_show_refuses_a_device_from_its_first_bytes(path):
    """/dev/zero was read to 4 GB (6.3 GB peak) before the refusal. The peak
    is measured in a fresh interpreter, whose only child is gpuopt."""
    import subprocess
    import sys
    from conftest import BINARY
    probe = ("import resource, subprocess, sys, time\n"
             "t = time.monotonic()\n"
             "p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
             "print(p.returncode, round(time.monotonic() - t, 2),"
             " resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
             "print(p.stderr)\n")
    out = subprocess.run([sys.executable, "-c", probe, str(BINARY), "trace", "show", path],
                         capture_output=True, text=True, timeout=60).stdout
    rc, seconds, peak_kib = out.split("\n", 1)[0].split()
    assert rc == "2" and "is not a gpuopt trace: it does not begin with a JSON object" in out, out
    assert float(seconds) < 5 and int(peak_kib) < 200_000, out
