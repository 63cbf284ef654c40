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


def long_loop(path, n):
    """A GPU training step whose loop holds n statements, then a copy back in a
    loop at module level that the GPU rules find when they get that far."""
    lines = ["import cupy as cp", "", "", "class Trainer:", "    def step(self):", "        for i in range(10):"]
    lines += [f"            a{k % 50} = cp.zeros(3)" for k in range(n)]
    lines += ["", "", "Trainer().step()", "for i in range(30):", "    y = cp.ones(3).get()", ""]
    path.write_text("\n".join(lines))
    return len(lines) - 1  # the line of the copy back


def test_scan_says_which_file_it_did_not_fully_analyse(tmp_path):
    """Past the flow model's work budget (a 100,000-statement loop) the GPU
    rules stopped looking and the scan said nothing: no notice, no count,
    exit 0, as if the file had been checked. Now every format says it, where
    (the line, the function) and counts it, as for a syntax error."""
    big = tmp_path / "big.py"
    long_loop(big, 100_000)
    small = tmp_path / "small.py"
    copy_line = long_loop(small, 100)
    broken = tmp_path / "broken.py"  # a syntax error: scanned as far as the parser recovered
    broken.write_text("import numpy as np\nx = np.fft.fft(np.ones(8))\ny = (\n")
    r = run("scan", "-f", "json", "--no-cache", tmp_path, timeout=300)
    assert r.rc == 0, r
    doc = r.json()
    assert doc["summary"]["files_not_fully_analysed"] == 2, doc["summary"]
    assert [(n["path"], n["kind"]) for n in doc["notices"]] == [(str(big), "budget"), (str(broken), "syntax-error")]
    notice = doc["notices"][0]
    assert notice["function"] == "Trainer.step" and 7 <= notice["line"] <= 100_006, notice
    assert "work budget ran out" in notice["message"] and "GPU601-GPU605" in notice["message"], notice
    # the file under the budget is analysed to its end
    assert [(f["line"], f["rule"]) for f in doc["findings"] if f["path"] == str(small)] == [(copy_line, "GPU601")]
    text = run("scan", "--no-cache", big, timeout=300)
    assert text.rc == 0, text
    assert (f"note: not fully analysed: the flow model's work budget ran out at line {notice['line']} "
            "in Trainer.step()") in text.out, text
    assert "1 file not fully analysed" in text.out.splitlines()[-1], text
    sarif = run("scan", "-f", "sarif", "--no-cache", big, broken, timeout=300).json()
    note, syntax = sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert syntax["level"] == "warning" and syntax["properties"]["kind"] == "syntax-error", syntax
    assert syntax["locations"][0]["physicalLocation"]["region"]["startLine"] == 3, syntax
    assert note["level"] == "warning" and note["properties"]["kind"] == "budget", note
    assert note["locations"][0]["physicalLocation"]["region"]["startLine"] == notice["line"], note
    assert "in Trainer.step()" in note["message"]["text"], note


def test_report_shows_an_infinite_relative_error_as_inf(tmp_path):
    """The reference holds a 0 the candidate does not: the relative error is
    inf (verify writes the string "inf" in JSON); the report said nan."""
    py = "/usr/bin/python3"
    (tmp_path / "base.py").write_text("import numpy as np\nnp.save('out.npy', np.arange(10.0))\n")
    (tmp_path / "off.py").write_text("import numpy as np\nnp.save('out.npy', np.arange(10.0) + 1)\n")
    (tmp_path / "gpuopt.toml").write_text(
        f'baseline = "{py} base.py"\noutputs = ["out.npy"]\ncandidates = ["{py} off.py"]\n'
        'accelerators = "none"\ntrace = false\nwarmup = 0\nmin_runs = 5\nmax_time = 1\nmin_time = 0\n')
    assert run("try", "-q", cwd=tmp_path, timeout=120).rc == 1
    for fmt in ("markdown", "html"):
        r = run("report", "-f", fmt, "-o", "-", tmp_path / "gpuopt-try")
        assert r.rc == 0, r
        row = [ln for ln in r.out.splitlines() if "out.npy" in ln and "1 / " in ln]
        assert row and "1 / inf" in row[0] and "nan" not in row[0], r.out
