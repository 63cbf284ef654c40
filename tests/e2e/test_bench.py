"""`gpuopt bench`: real commands (true, sleep, python3 -c, failing, missing,
never-ending), every option, the exports and their JSON schema, the
environment record ("no NVIDIA GPU" on a machine without one; a stand-in NVML
and CUDA driver for the GPU path; the committed H200 fixture)."""
import csv
import io
import json
import os
import signal
import statistics
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import BINARY, ROOT, run

FAST = ["--min-time", "0", "--warmup", "0"]
FIXTURE = ROOT / "tests" / "e2e" / "fixtures" / "h200_bench.json"
PY = sys.executable  # an interpreter that surely exists
FAIL3 = f"{PY} -c \"import sys; sys.stderr.write('boom from the command\\n'); sys.exit(3)\""

TOP_KEYS = {"tool", "version", "schema", "invocation", "started_at", "duration_s", "status",
            "complete", "settings", "environment", "groups"}
SETTINGS_KEYS = {"warmup", "min_runs", "max_runs", "min_time_s", "max_time_s", "precision",
                 "min_effect", "confidence", "resamples", "stop_rule_resamples", "seed",
                 "outlier_rule", "shell", "shell_startup", "timeout_s", "ignore_failure", "input",
                 "output", "parameters", "gpu_sample_interval_ms"}
HOST_KEYS = {"cpu_model", "logical_cpus", "physical_cores", "governor", "memory_total_bytes",
             "memory_available_bytes", "os", "kernel", "arch", "load_average"}
PYTHON_KEYS = {"interpreter", "found", "executable", "version", "packages", "error", "chosen_by",
               "other_interpreters"}
PACKAGES = {"numpy", "scipy", "pandas", "scikit-learn", "cupy", "torch", "cudf", "cuml"}
GPU_KEYS = {"found", "status", "reason", "driver_version", "cuda_driver_version", "nvml_version",
            "nvml", "cuda", "devices"}
GROUP_KEYS = {"parameters", "rounds", "elapsed_s", "total_s", "stop_reason", "shell_startup", "commands",
              "comparisons", "median_ci95", "median_reason", "warnings"}
COMMAND_KEYS = {"index", "role", "name", "command", "argv", "parameters", "prepare", "setup",
                "cleanup", "stats", "gpu", "warnings", "runs"}
SUMMARY_KEYS = {"n", "median", "mean", "sd", "mad", "min", "max", "p5", "p95", "outliers"}
RUN_KEYS = {"round", "slot", "warmup", "wall_s", "wall_raw_s", "user_s", "sys_s", "peak_rss_kib",
            "exit_code", "signal", "timed_out", "gpu"}
COMPARISON_KEYS = {"baseline", "candidate", "speedup", "ci95", "pairs", "verdict", "reason",
                   "conclusive", "half_width"}


def bench(*args, **kw):
    return run("bench", *args, **kw)


def bench_json(tmp_path, *args, expect_rc=0, **kw):
    out = tmp_path / "result.json"
    r = bench("--export-json", out, *args, **kw)
    assert r.rc == expect_rc, r
    return json.loads(out.read_text()), r


def nvidia_driver_present():
    return Path("/dev/nvidiactl").exists() or Path("/proc/driver/nvidia").exists()


# ---- the surface ----

def test_help_is_routed_and_complete():
    r = run("bench", "--help")
    assert r.rc == 0 and r.out.startswith("Usage: gpuopt bench")
    assert run("help", "bench").out == r.out
    for opt in ["--warmup", "--min-runs", "--max-runs", "--runs", "--min-time", "--max-time",
                "--precision", "--shell", "--prepare", "--setup", "--cleanup", "--parameter-scan",
                "--step", "--parameter-list", "--command-name", "--input", "--output",
                "--timeout", "--ignore-failure", "--min-effect", "--seed", "--resamples",
                "--fail-on-slower", "--python", "--export-json", "--export-csv",
                "--export-markdown", "Exit codes"]:
        assert opt in r.out, opt
    assert "bench" in run("--help").out


@pytest.mark.parametrize("args, message", [
    ([], "which command?"),
    (["--runs", "abc", "true"], "--runs: 'abc' is not a whole number"),
    (["--runs", "0", "true"], "--runs: must be at least 1"),
    (["--precision", "0", "true"], "--precision: '0' is not a percentage"),
    (["--min-effect", "150", "true"], "--min-effect"),
    (["--min-runs", "20", "--max-runs", "10", "true"], "--max-runs 10 is below --min-runs 20"),
    (["--timeout", "-1", "true"], "--timeout"),
    (["--bogus", "true"], "unknown option '--bogus'"),
    (["--warmup"], "--warmup needs 1 value"),
    (["--parameter-scan", "n", "5", "1", "true {n}"], "MIN <= MAX"),
    (["--parameter-scan", "n", "1", "x", "true {n}"], "need numbers"),
    (["--parameter-scan", "bad-name", "1", "2", "true"], "is not a name"),
    (["--step", "2", "true"], "--step goes with --parameter-scan"),
    (["-L", "n", "1,2", "-L", "n", "3", "true"], "given twice"),
    (["--prepare", "true", "--prepare", "true", "--prepare", "true", "true", "true"],
     "--prepare given 3 times for 2 commands"),
    (["--output", "", "true"], "--output"),
    (["--shell=", "true"], "the shell is empty"),
    (["--ignore-failure=yes", "true"], "takes no value"),
])
def test_usage_errors(args, message):
    r = bench(*args)
    assert r.rc == 2, r
    assert r.err.startswith("gpuopt: bench: ") and message in r.err, r
    assert r.out == ""


# ---- running ----

def test_one_command(tmp_path):
    doc, r = bench_json(tmp_path, "--runs", "5", *FAST, "true")
    assert r.out.startswith("one command: 'true' takes"), r
    g = doc["groups"][0]
    assert g["comparisons"] == [] and g["median_ci95"]["lo"] <= g["median_ci95"]["median"]
    cmd = g["commands"][0]
    assert cmd["argv"] == ["true"] and cmd["stats"]["runs"] == 5
    assert any("under 5 ms" in w for w in cmd["warnings"])  # process start-up dominates
    assert "under 5 ms" in r.out


def test_faster_and_slower_verdicts_lead_the_report(tmp_path):
    r = bench("--runs", "10", *FAST, "sleep 0.03", "sleep 0.01")
    assert r.rc == 0, r
    first = r.out.splitlines()[0]
    assert first.startswith("faster: 'sleep 0.01' is faster than 'sleep 0.03': speedup "), first
    # the other way round, and --fail-on-slower turns it into exit 1
    r = bench("--runs", "10", *FAST, "--fail-on-slower", "sleep 0.01", "sleep 0.03")
    assert r.rc == 1, r
    assert r.out.startswith("slower: 'sleep 0.03' is slower than 'sleep 0.01'"), r
    r = bench("--runs", "10", *FAST, "sleep 0.01", "sleep 0.03")
    assert r.rc == 0, r  # without --fail-on-slower a slower verdict is a result, not a failure


def test_identical_commands_no_difference(tmp_path):
    doc, r = bench_json(tmp_path, "--runs", "12", *FAST, "sleep 0.02", "sleep 0.02")
    c = doc["groups"][0]["comparisons"][0]
    assert c["verdict"] == "no difference", r
    assert r.out.startswith("no difference: 'sleep 0.02': no difference from 'sleep 0.02' beyond ±5%")


def test_json_schema_and_interleaving(tmp_path):
    doc, r = bench_json(tmp_path, "--runs", "20", "--warmup", "2", "--min-time", "0",
                        "--seed", "7", "-n", "first", "-n", "second", "true", "true")
    assert set(doc) == TOP_KEYS
    assert doc["tool"] == "gpuopt" and doc["schema"] == "gpuopt-bench/1"
    assert doc["version"] == run("--version").out.split()[1]
    assert doc["invocation"].startswith("gpuopt bench --export-json ")
    assert doc["started_at"].endswith("Z") and doc["duration_s"] > 0
    s = doc["settings"]
    assert set(s) == SETTINGS_KEYS
    assert s["seed"] == 7 and s["warmup"] == 2 and s["min_runs"] == s["max_runs"] == 20
    assert s["confidence"] == 0.95 and s["min_effect"] == 0.05 and s["precision"] == 0.02
    assert "3.5" in s["outlier_rule"] and s["shell"] is None and s["output"] == "null"
    env = doc["environment"]
    assert set(env) == {"host", "python", "gpu", "peak_rss_floor_kib"}
    assert set(env["host"]) == HOST_KEYS and set(env["python"]) == PYTHON_KEYS
    assert set(env["python"]["packages"]) == PACKAGES and set(env["gpu"]) == GPU_KEYS
    assert env["host"]["logical_cpus"] >= 1 and env["host"]["kernel"].startswith("Linux")
    assert len(env["host"]["load_average"]) == 3 and env["host"]["memory_total_bytes"] > 0
    (g,) = doc["groups"]
    assert set(g) == GROUP_KEYS
    assert g["rounds"] == 20 and g["stop_reason"] == "runs" and g["parameters"] is None
    assert [c["name"] for c in g["commands"]] == ["first", "second"]
    assert [c["role"] for c in g["commands"]] == ["baseline", "candidate"]
    for c in g["commands"]:
        assert set(c) == COMMAND_KEYS
        assert set(c["stats"]["wall_s"]) == SUMMARY_KEYS
        assert c["stats"]["runs"] == 20 and c["stats"]["failed_runs"] == 0
        st = c["stats"]["wall_s"]
        assert st["min"] <= st["p5"] <= st["median"] <= st["p95"] <= st["max"]
        assert st["mad"] >= 0 and st["sd"] >= 0 and set(st["outliers"]) == {"low", "high"}
        assert len(c["runs"]) == 22
        assert [r["warmup"] for r in c["runs"]] == [True] * 2 + [False] * 20
        for run_ in c["runs"]:
            assert set(run_) == RUN_KEYS
            assert run_["exit_code"] == 0 and run_["signal"] is None and not run_["timed_out"]
            assert run_["wall_s"] > 0 and run_["user_s"] >= 0 and run_["peak_rss_kib"] > 0
            assert run_["gpu"] is None or isinstance(run_["gpu"], list)
        measured = [r_ for r_ in c["runs"] if not r_["warmup"]]
        assert [r_["round"] for r_ in measured] == list(range(20))
        walls = sorted(r_["wall_s"] for r_ in measured)
        assert st["median"] == pytest.approx((walls[9] + walls[10]) / 2)
    (cmp,) = g["comparisons"]
    assert set(cmp) == COMPARISON_KEYS
    assert cmp["baseline"] == 0 and cmp["candidate"] == 1 and cmp["pairs"] == 20
    assert cmp["ci95"][0] <= cmp["speedup"] <= cmp["ci95"][1]
    b = g["commands"][0]["stats"]["wall_s"]["median"]
    assert cmp["speedup"] == pytest.approx(b / g["commands"][1]["stats"]["wall_s"]["median"])
    # interleaved: every round runs both once, in a shuffled order that varies
    slots = [(a["slot"], c["slot"]) for a, c in zip(g["commands"][0]["runs"], g["commands"][1]["runs"])]
    assert all(sorted(p) == [0, 1] for p in slots)
    assert len({p for p in slots}) == 2


def test_adaptive_stop_until_precision(tmp_path):
    doc, _ = bench_json(tmp_path, "--min-runs", "5", "--min-time", "0", "--warmup", "0",
                        "--precision", "5", "--max-time", "20", "sleep 0.02", "sleep 0.02")
    g = doc["groups"][0]
    assert g["stop_reason"] == "precision" and g["rounds"] >= 5
    # the stop rule used its own resamples; the reported interval is close to it
    assert g["comparisons"][0]["half_width"] < 0.07


def test_max_runs_and_max_time_end_the_loop(tmp_path):
    doc, _ = bench_json(tmp_path, "--min-runs", "3", "--max-runs", "4", "--min-time", "100",
                        "--warmup", "0", "true", "true")
    assert doc["groups"][0]["rounds"] == 4 and doc["groups"][0]["stop_reason"] == "max-runs"
    t0 = time.monotonic()
    doc, r = bench_json(tmp_path, "--min-runs", "2", "--max-time", "0.3", "--min-time", "100",
                        "--warmup", "0", "sleep 0.05", "sleep 0.05")
    g = doc["groups"][0]
    assert g["stop_reason"] == "max-time" and g["rounds"] >= 2
    assert time.monotonic() - t0 < 10
    assert "--max-time was reached" in r.out


def test_warnings_first_run_and_variation(tmp_path):
    marker = tmp_path / "warm"
    cold_first = (f"{PY} -c \"import os, time; w = os.path.exists('{marker}'); "
                  f"open('{marker}', 'w'); time.sleep(0.02 if w else 0.4)\"")
    doc, r = bench_json(tmp_path, "--runs", "8", "--warmup", "0", "--min-time", "0", cold_first)
    warnings = doc["groups"][0]["commands"][0]["warnings"]
    assert any("first measured run took" in w and "warm-up" in w for w in warnings), r
    marker.unlink()
    doc, r = bench_json(tmp_path, "--runs", "8", "--warmup", "1", "--min-time", "0", cold_first)
    assert not any("first measured run" in w for w in doc["groups"][0]["commands"][0]["warnings"])
    noisy = f"{PY} -c \"import random, time; time.sleep(random.uniform(0.005, 0.08))\""
    doc, r = bench_json(tmp_path, "--runs", "12", *FAST, noisy)
    warnings = doc["groups"][0]["commands"][0]["warnings"]
    assert any(w.startswith("high variation") for w in warnings), r
    assert "warning: " in r.out


def test_failing_command_stops_with_its_stderr(tmp_path):
    out = tmp_path / "never.json"
    out.write_text("old content\n")
    r = bench("--runs", "3", *FAST, "--export-json", out, "true", FAIL3)
    assert r.rc == 1, r
    assert "exited with status 3" in r.err and "boom from the command" in r.err, r
    assert "nothing was exported" in r.err and "--ignore-failure" in r.err
    assert out.read_text() == "old content\n"  # written whole or not at all
    assert not list(tmp_path.glob("never.json.tmp*"))


def test_a_command_that_floods_stderr_is_not_kept_whole(tmp_path):
    """bench kept a run's whole stderr in a temporary file, to show its end
    if the run failed: 66 MB of it took 66 MB of /tmp (a bigger one fills
    the disk). Now it keeps the first and last 32 KB in memory. Looked at
    while the command sleeps after writing: no file of gpuopt's is big."""
    flood = (f"{PY} -c \"import sys, time; w = sys.stderr.write; [w('noise %08d ' % i + 'x' * 50 + chr(10)) "
             f"for i in range(1000000)]; w('the last words' + chr(10)); sys.stderr.flush(); "
             f"open('{tmp_path}/written', 'w'); time.sleep(3); sys.exit(4)\"")
    proc = subprocess.Popen([str(BINARY), "bench", "--runs", "3", *FAST, flood], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not (tmp_path / "written").exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert (tmp_path / "written").exists()
    kept = {}
    for fd in os.listdir(f"/proc/{proc.pid}/fd"):
        try:
            st = os.stat(f"/proc/{proc.pid}/fd/{fd}")
            kept[os.readlink(f"/proc/{proc.pid}/fd/{fd}")] = st.st_size if os.path.isfile(
                f"/proc/{proc.pid}/fd/{fd}") else 0
        except OSError:
            pass
    _, err = proc.communicate(timeout=60)
    assert max(kept.values(), default=0) < 1 << 20, kept  # 66 MB were written
    assert proc.returncode == 1 and "exited with status 4" in err, err
    assert "gpuopt: bench: its stderr ended with:" in err and "  | the last words" in err, err
    assert "noise 00999999 " in err  # the lines just before it


def test_ignore_failure_counts_failed_runs(tmp_path):
    doc, r = bench_json(tmp_path, "--runs", "3", *FAST, "--ignore-failure", "true", FAIL3)
    cand = doc["groups"][0]["commands"][1]
    assert cand["stats"]["failed_runs"] == 3
    assert all(x["exit_code"] == 3 for x in cand["runs"])
    assert any("3 of 3 measured runs failed" in w for w in cand["warnings"])


def test_command_not_found(tmp_path):
    r = bench("--runs", "3", *FAST, "true", "gpuopt-no-such-command --flag")
    assert r.rc == 2, r
    assert "'gpuopt-no-such-command' is not found in PATH (command not found)" in r.err
    r = bench("--runs", "3", *FAST, str(tmp_path / "missing"))
    assert r.rc == 2 and "is not an executable file" in r.err, r
    # checked before anything runs: a --setup that would create a file never ran
    marker = tmp_path / "ran"
    r = bench("--runs", "3", *FAST, "--setup", f"touch {marker}", "true", "gpuopt-no-such-command")
    assert r.rc == 2 and not marker.exists()


def test_timeout_kills_a_command_that_never_exits(tmp_path):
    t0 = time.monotonic()
    r = bench("--runs", "3", *FAST, "--timeout", "0.3", "sleep 60")
    assert r.rc == 1, r
    assert "timed out after 0.3 s and was killed" in r.err
    assert time.monotonic() - t0 < 15
    doc, _ = bench_json(tmp_path, "--runs", "2", *FAST, "--timeout", "0.2", "--ignore-failure",
                        "sleep 60")
    runs = doc["groups"][0]["commands"][0]["runs"]
    assert all(x["timed_out"] and x["signal"] == signal.SIGKILL for x in runs)
    assert all(0.2 <= x["wall_s"] < 5 for x in runs)
    assert doc["settings"]["timeout_s"] == 0.2


def test_interrupt_kills_the_running_command(tmp_path):
    out = tmp_path / "i.json"
    proc = subprocess.Popen([str(BINARY), "bench", "--runs", "3", *FAST, "--export-json", str(out),
                             f"{PY} -c \"import time; open('{tmp_path}/started', 'w'); time.sleep(60)\""],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for _ in range(200):
        if (tmp_path / "started").exists():
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 1 and "interrupted" in err and not out.exists()


def start_bench(tmp_path, *args):
    """gpuopt bench in the background on a command that leaves a file behind
    each time it runs (how many runs there were, from outside)."""
    marker = tmp_path / "runs"
    cmd = f"sh -c 'echo x >> {marker}'"
    p = subprocess.Popen([str(BINARY), "bench", *FAST, *args, cmd], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    return p, marker


def test_export_to_a_fifo_nobody_reads_fails_after_the_runs(tmp_path):
    """An export to a FIFO is opened when it is written, after the runs, and
    waited on for a reader 10 s at most; then bench says which file."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    t0 = time.monotonic()
    p, marker = start_bench(tmp_path, "--runs", "3", "--export-json", fifo)
    _, err = p.communicate(timeout=60)
    took = time.monotonic() - t0
    assert marker.read_text().count("x") == 3, err  # it ran first
    assert p.returncode == 2 and 9 < took < 30, (p.returncode, took, err)
    assert f"gpuopt: bench: --export-json: cannot write '{fifo}': a FIFO that no process read from for 10 s" in err


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_bench_waiting_on_an_export(tmp_path, sig):
    """bench waited out its 10 s on a FIFO nobody reads, and a reader that
    stopped reading held it forever, deaf to TERM and INT (its handler only
    passes them on to a command, and none was running). Now the signal ends
    the wait: bench stops at once, says so, exits 1."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    p, marker = start_bench(tmp_path, "--runs", "3", "--export-json", fifo)
    assert "one command" in p.stdout.readline()  # the report is printed before the exports
    time.sleep(1)
    t0 = time.monotonic()
    p.send_signal(sig)
    _, err = p.communicate(timeout=60)
    assert time.monotonic() - t0 < 3, err
    assert p.returncode == 1, (p.returncode, err)
    assert f"--export-json: cannot write '{fifo}': interrupted by a signal while waiting for a process to read it" in err
    assert f"interrupted by signal {int(sig)} ({signal.strsignal(sig)}) while writing the exports" in err
    # a reader that opened it and reads nothing: the export (over a pipe's 64 KB) waits on it
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        p, marker = start_bench(tmp_path, "--runs", "300", "--export-json", fifo)
        assert "one command" in p.stdout.readline()
        time.sleep(1)
        assert p.poll() is None  # still writing
        t0 = time.monotonic()
        p.send_signal(sig)
        try:
            _, err = p.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            raise AssertionError("bench did not stop")
        assert time.monotonic() - t0 < 3 and p.returncode == 1, (p.returncode, err)
        assert f"--export-json: cannot write '{fifo}': interrupted by a signal" in err
    finally:
        os.close(reader)


def test_output_to_a_fifo_nobody_reads_is_refused_before_the_runs(tmp_path):
    """--output FIFO (the commands' stdout) was opened blocking before the
    first run: with no reader, bench hung there for good."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    t0 = time.monotonic()
    p, marker = start_bench(tmp_path, "--runs", "3", "--output", fifo)
    try:
        _, err = p.communicate(timeout=40)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        raise AssertionError("bench hung on --output FIFO")
    assert p.returncode == 2 and time.monotonic() - t0 < 30, err
    assert f"gpuopt: bench: --output: cannot write '{fifo}': a FIFO that no process read from for 10 s" in err
    assert not marker.exists()


def test_no_shell_by_default_and_shell_on_request(tmp_path):
    r = bench("--runs", "3", *FAST, "sleep 0.01 | cat")
    assert r.rc == 2 and "'|' at column 12 is shell syntax (a pipe)" in r.err and "--shell" in r.err
    r = bench("--runs", "3", *FAST, "FOO=1 true")
    assert r.rc == 2 and "env NAME=value CMD" in r.err
    doc, r = bench_json(tmp_path, "--runs", "3", *FAST, "--shell", "sleep 0.01 | cat", "true")
    s = doc["settings"]
    assert s["shell"] == "/bin/sh" and s["shell_startup"]["runs"] >= 50
    assert s["shell_startup"]["median_wall_s"] > 0
    g = doc["groups"][0]
    cmd = g["commands"][0]
    assert cmd["argv"] == ["/bin/sh", "-c", "sleep 0.01 | cat"]
    # three rounds are too few for the start-up of their own: the one before
    assert g["shell_startup"]["from"] == "before the runs" and len(g["shell_startup"]["empty_runs_wall_s"]) == 3
    assert g["shell_startup"]["wall_s"] == s["shell_startup"]["median_wall_s"]
    for x in cmd["runs"]:
        assert x["wall_s"] == pytest.approx(max(0, x["wall_raw_s"] - s["shell_startup"]["median_wall_s"]))
    assert "Shell start-up subtracted from every run:" in r.out and "50 empty /bin/sh runs before" in r.out
    # with enough rounds, an empty run in each, timed beside the commands, is what is taken off
    doc, r = bench_json(tmp_path, "--runs", "7", *FAST, "--shell", "sleep 0.01 | cat", "true")
    sh = doc["groups"][0]["shell_startup"]
    assert sh["from"] == "rounds" and len(sh["empty_runs_wall_s"]) == 7
    assert sh["wall_s"] == pytest.approx(statistics.median(sh["empty_runs_wall_s"])) and sh["noise_s"] >= 0
    for c in doc["groups"][0]["commands"]:
        for x in c["runs"]:
            assert x["wall_s"] == pytest.approx(max(0, x["wall_raw_s"] - sh["wall_s"]))
    assert "the median of an empty /bin/sh run in each of the 7 rounds" in r.out
    doc, _ = bench_json(tmp_path, "--runs", "2", *FAST, "--shell=sh", "echo $HOME > /dev/null")
    assert doc["settings"]["shell"] == "sh"


def test_quotes_are_split_like_a_shell(tmp_path):
    doc, _ = bench_json(tmp_path, "--runs", "2", *FAST,
                        f"{PY} -c 'import sys; assert sys.argv[1:] == [\"a b\", \"c\"]' 'a b' c")
    assert doc["groups"][0]["commands"][0]["argv"][1:] == [
        "-c", 'import sys; assert sys.argv[1:] == ["a b", "c"]', "a b", "c"]


def test_prepare_setup_cleanup(tmp_path):
    log = tmp_path / "log"
    append = lambda ch: f"{PY} -c \"open('{log}', 'a').write('{ch}')\""
    r = bench("--runs", "3", "--warmup", "1", "--min-time", "0",
              "--setup", append("S"), "--cleanup", append("C"), "--prepare", append("p"),
              append("a"), append("b"))
    assert r.rc == 0, r
    text = log.read_text()
    # setup once first, cleanup once last, and a prepare before each of the 8 runs
    assert text[0] == "S" and text[-1] == "C" and len(text) == 2 + 2 * 8
    body = text[1:-1]
    assert all(body[i] == "p" and body[i + 1] in "ab" for i in range(0, len(body), 2))
    assert body.count("a") == body.count("b") == 4
    # once per command when given per command
    log.unlink()
    r = bench("--runs", "2", *FAST, "-s", append("1"), "-s", append("2"),
              "-c", append("x"), "-c", append("y"), append("a"), append("b"))
    assert r.rc == 0, r
    text = log.read_text()
    assert text[:2] == "12" and text[-2:] == "xy"


def test_failing_setup_stops_and_cleanup_still_runs(tmp_path):
    marker = tmp_path / "cleaned"
    r = bench("--runs", "2", *FAST, "--setup", "false", "--cleanup", f"touch {marker}", "true")
    assert r.rc == 1 and "--setup 'false' exited with status 1" in r.err, r
    assert not marker.exists()  # nothing was set up, so nothing to clean
    r = bench("--runs", "2", *FAST, "--cleanup", f"touch {marker}", "true", FAIL3)
    assert r.rc == 1 and marker.exists()


def test_parameter_scan_with_one_command(tmp_path):
    doc, r = bench_json(tmp_path, "--runs", "5", *FAST, "-P", "n", "1", "3", "sleep 0.0{n}")
    (g,) = doc["groups"]
    assert [c["command"] for c in g["commands"]] == ["sleep 0.01", "sleep 0.02", "sleep 0.03"]
    assert [c["parameters"] for c in g["commands"]] == [{"n": "1"}, {"n": "2"}, {"n": "3"}]
    assert [c["verdict"] for c in g["comparisons"]] == ["slower", "slower"]
    assert doc["settings"]["parameters"] == [{"name": "n", "values": ["1", "2", "3"]}]
    doc, _ = bench_json(tmp_path, "--runs", "2", *FAST, "-P", "x", "0.1", "0.3", "-D", "0.1",
                        "echo {x}")
    assert [c["command"] for c in doc["groups"][0]["commands"]] == ["echo 0.1", "echo 0.2", "echo 0.3"]
    doc, _ = bench_json(tmp_path, "--runs", "2", *FAST, "-P", "k", "0", "10", "--step", "5", "echo {k}")
    assert [c["command"] for c in doc["groups"][0]["commands"]] == ["echo 0", "echo 5", "echo 10"]


def test_parameter_lists_make_one_comparison_per_value(tmp_path):
    doc, r = bench_json(tmp_path, "--runs", "5", *FAST, "-L", "n", "1,2", "-L", "m", "a,b",
                        "-p", "true {m}", "sleep 0.0{n}", "sleep 0.00{n}")  # a parameter must be used
    groups = doc["groups"]
    assert [g["parameters"] for g in groups] == [{"n": "1", "m": "a"}, {"n": "1", "m": "b"},
                                                {"n": "2", "m": "a"}, {"n": "2", "m": "b"}]
    assert all(g["comparisons"][0]["verdict"] == "faster" for g in groups)
    assert groups[2]["commands"][1]["command"] == "sleep 0.002"
    lines = r.out.splitlines()
    assert lines[0].startswith("faster: [n=1, m=a] 'sleep 0.001' is faster than 'sleep 0.01'")
    assert "With n = 2, m = b:" in r.out


def test_input_and_output(tmp_path):
    src = tmp_path / "in.txt"
    src.write_text("hello from the input\n")
    out = tmp_path / "out.txt"
    r = bench("--runs", "2", *FAST, "--input", src, "--output", out, "cat")
    assert r.rc == 0, r
    assert out.read_text() == "hello from the input\n" * 2  # every run reads from the start
    assert "hello" not in r.out
    r = bench("--runs", "2", *FAST, "--input", src, "--output", "inherit", "cat")
    assert r.rc == 0 and r.out.count("hello from the input") == 2, r
    r = bench("--runs", "2", *FAST, "--input", src, "cat")  # default: null
    assert r.rc == 0 and "hello" not in r.out
    r = bench("--runs", "2", *FAST, "--input", tmp_path / "missing.txt", "cat")
    assert r.rc == 2 and "--input: cannot read" in r.err
    # a pipe (a FIFO here; bash's <(...) alike) is read once and replayed to every run
    fifo = tmp_path / "in.fifo"
    os.mkfifo(fifo)
    writer = subprocess.Popen(["sh", "-c", f"printf 'from a pipe\\n' > '{fifo}'"])
    r = bench("--runs", "3", *FAST, "--input", fifo, "--output", out, "cat")
    writer.wait(timeout=10)
    assert r.rc == 0, r
    assert out.read_text() == "from a pipe\n" * 3
    # stdin is /dev/null by default: a command reading it ends at once (head, not cat:
    # coreutils 9.1's cat refuses /dev/null to /dev/null as "input file is output file")
    r = bench("--runs", "2", *FAST, "--timeout", "5", "head -c 100")
    assert r.rc == 0, r


def test_exports(tmp_path):
    j, c, m = tmp_path / "r.json", tmp_path / "r.csv", tmp_path / "r.md"
    r = bench("--runs", "5", *FAST, "-L", "n", "1,2", "--export-json", j, "--export-csv", c,
              "--export-markdown", m, "sleep 0.0{n}", "sleep 0.00{n}")
    assert r.rc == 0, r
    doc = json.loads(j.read_text())
    rows = list(csv.DictReader(io.StringIO(c.read_text())))
    assert len(rows) == 4
    assert rows[0]["role"] == "baseline" and rows[1]["role"] == "candidate"
    assert rows[1]["verdict"] == "faster" and rows[0]["verdict"] == ""
    assert rows[2]["parameter_n"] == "2" and rows[2]["command"] == "sleep 0.02"
    assert float(rows[1]["median_s"]) == pytest.approx(
        doc["groups"][0]["commands"][1]["stats"]["wall_s"]["median"])
    assert float(rows[1]["ci95_low"]) <= float(rows[1]["speedup"]) <= float(rows[1]["ci95_high"])
    md = m.read_text()
    assert md.startswith("## gpuopt bench\n") and "- **faster**:" in md
    assert "| baseline | `sleep 0.01` |" in md and "### Environment" in md
    assert "GPU:" in md
    # "-" is stdout; the report then goes to stderr
    r = bench("--runs", "2", *FAST, "--export-json", "-", "true")
    assert r.rc == 0 and json.loads(r.out)["tool"] == "gpuopt" and "one command" in r.err
    # an export that cannot be written is refused before anything runs
    r = bench("--runs", "2", *FAST, "--export-csv", tmp_path / "no" / "such" / "dir.csv", "true")
    assert r.rc == 2 and "--export-csv" in r.err and "cannot write" in r.err
    assert r.out == ""


def test_csv_quotes_commas_and_quotes(tmp_path):
    c = tmp_path / "r.csv"
    r = bench("--runs", "2", *FAST, "--export-csv", c, "-n", 'a, "quoted" name', "true")
    assert r.rc == 0, r
    (row,) = list(csv.DictReader(io.StringIO(c.read_text())))
    assert row["name"] == 'a, "quoted" name'


def test_python_record(tmp_path):
    doc, r = bench_json(tmp_path, "--runs", "2", *FAST, "--python", PY, "true")
    py = doc["environment"]["python"]
    assert py["found"] and py["version"] == "%d.%d.%d" % sys.version_info[:3]
    assert py["error"] is None and set(py["packages"]) == PACKAGES
    for name, version in py["packages"].items():
        assert version is None or isinstance(version, str)
    assert f"Python: {py['version']}" in r.out
    doc, r = bench_json(tmp_path, "--runs", "2", *FAST, "--python", "gpuopt-no-such-python", "true")
    py = doc["environment"]["python"]
    assert not py["found"] and py["error"] == "command not found" and py["version"] is None
    assert all(v is None for v in py["packages"].values())
    assert "Python: gpuopt-no-such-python: command not found" in r.out


# ---- the GPU record ----

@pytest.mark.skipif(nvidia_driver_present(), reason="this machine has an NVIDIA driver")
def test_no_gpu_is_said_plainly(tmp_path):
    doc, r = bench_json(tmp_path, "--runs", "2", *FAST, "true")
    gpu = doc["environment"]["gpu"]
    assert gpu["found"] is False and gpu["status"] == "no NVIDIA GPU"
    assert "libnvidia-ml.so.1" in gpu["reason"] and "libcuda.so.1" in gpu["reason"]
    assert gpu["devices"] == [] and gpu["driver_version"] is None
    assert not gpu["nvml"]["loaded"] and not gpu["cuda"]["loaded"]
    cmd = doc["groups"][0]["commands"][0]
    assert cmd["gpu"] is None and all(x["gpu"] is None for x in cmd["runs"])
    assert "\nGPU: no NVIDIA GPU (" in r.out


def test_h200_fixture_has_the_gpu_fields_filled():
    """tests/e2e/fixtures/h200_bench.json: one real run on an NVIDIA H200 (see
    tests/e2e/fixtures/README.md)."""
    doc = json.loads(FIXTURE.read_text())
    # recorded before the result said its status (and whether it is complete)
    assert set(doc) == TOP_KEYS - {"status", "complete"} and doc["schema"] == "gpuopt-bench/1"
    gpu = doc["environment"]["gpu"]
    assert gpu["found"] is True and gpu["reason"] is None
    assert gpu["driver_version"] and gpu["cuda_driver_version"]
    assert gpu["nvml"]["loaded"] and gpu["cuda"]["loaded"]
    dev = gpu["devices"][0]
    assert "H200" in dev["name"]
    assert dev["compute_capability"] == "9.0"
    assert dev["memory_total_bytes"] > 100 << 30
    assert dev["multiprocessors"] == 132
    assert dev["clocks_mhz"]["sm"] and dev["max_clocks_mhz"]["sm"] and dev["max_clocks_mhz"]["memory"]
    py = doc["environment"]["python"]
    assert py["found"] and py["packages"]["cupy"] and py["packages"]["numpy"]
    for g in doc["groups"]:
        for cmd in g["commands"]:
            summary = cmd["gpu"][0]
            assert summary["samples"] > 0
            assert summary["memory_used_peak_bytes"] > 0
            assert summary["utilization_peak_pct"] is not None
            assert all(x["gpu"][0]["samples"] > 0 for x in cmd["runs"] if not x["warmup"])
        assert g["comparisons"] and g["comparisons"][0]["verdict"] in {"faster", "slower",
                                                                       "no difference"}
    # at the larger size the CuPy command kept the GPU busy and held more device memory
    cmds = doc["groups"][-1]["commands"]
    cpu_cmd, gpu_cmd = cmds
    assert "mm_gpu.py" in gpu_cmd["command"] and "mm_cpu.py" in cpu_cmd["command"]  # CuPy / NumPy
    assert gpu_cmd["gpu"][0]["utilization_peak_pct"] > 0
    assert gpu_cmd["gpu"][0]["memory_used_peak_bytes"] > cpu_cmd["gpu"][0]["memory_used_peak_bytes"]
