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


# ---- bench: parameters and shells ----

@pytest.mark.parametrize("args, said", [
    (["-L", "n", "1,2", "true {m}"], "bench: command 'true {m}': '{m}' is not a parameter (given: {n})"),
    (["-L", "n", "1,2", "-s", "echo {N}", "true {n}"], "bench: --setup 'echo {N}': '{N}' is not a parameter"),
    (["-P", "n", "1", "2", "-L", "m", "a", "true {n}"], "bench: parameter 'm' is used in no command line"),
    (["-L", "n", "1,2", "-n", "run {n}", "true"], "bench: parameter 'n' is used in no command line"),
])
def test_bench_parameter_typo_or_unused_is_a_usage_error(args, said):
    r = run("bench", *FAST, *args)
    assert r.rc == 2 and f"gpuopt: {said}" in r.err, r
    assert "{NAME} there that is none of them is refused" in run("bench", "--help").out


def test_bench_parameter_in_a_setup_only_and_braces_of_the_command_own(tmp_path):
    # a parameter that varies only the setup is used; braces that are no {NAME} are the command's
    r = run("bench", *FAST, "-L", "n", "1,2", "-s", "echo {n}", "--export-json", tmp_path / "b.json",
            f"{PY} -c 'd = {{1: 2}}; print(d)'")
    assert r.rc == 0, r
    groups = json.loads((tmp_path / "b.json").read_text())["groups"]
    setups = [c["setup"] for g in groups for c in g["commands"]]
    assert setups == ["echo 1", "echo 2"], setups


def test_bench_setup_output_goes_to_null_not_a_read_only_fd():
    r = run("bench", *FAST, "-s", "echo set up", "-p", "echo prepared", "-c", "echo cleaned", "true")
    assert r.rc == 0 and "write error" not in r.err, r


@pytest.mark.parametrize("shell, said", [
    ("/bin/false", "the empty shell run '/bin/false -c ''' exited with status 1"),
    ("/etc/passwd", "--shell: '/etc/passwd' is not executable"),
    ("/nonexistent/sh", "--shell: '/nonexistent/sh' does not exist"),
    ("/etc", "--shell: '/etc' is a directory, not a program"),
    ("no-such-shell-i25", "--shell: 'no-such-shell-i25' is not found in PATH"),
])
def test_bench_shell_message_names_the_shell(shell, said):
    r = run("bench", *FAST, f"--shell={shell}", "true")
    assert r.rc in (1, 2) and f"gpuopt: bench: {said}" in r.err, r
    assert "sh -c ''" not in r.err.replace(f"{shell} -c ''", ""), r


def test_bench_output_conflict_names_the_commands_output_not_the_report(tmp_path):
    py = tmp_path / "x.py"
    py.write_text("x = 1\n")
    r = run("bench", *FAST, "--output", py, "true")
    assert r.rc == 2 and "the commands' output would replace it (--force" in r.err, r
    r = run("bench", *FAST, "--output", py, f"cat {py}")
    assert r.rc == 2 and "it is also an input" in r.err and "the commands' output would replace it" in r.err, r
    assert "report" not in r.err, r
    r = run("bench", *FAST, "--export-json", py, "true")
    assert r.rc == 2 and "writing the report would replace it" in r.err, r  # an export is a report


# ---- trace show: -o is the report; options after FILE ----

TRACE = ROOT / "tests" / "e2e" / "fixtures" / "trace" / "cupy_roundtrip.json"


def test_trace_show_o_writes_the_report(tmp_path):
    out = tmp_path / "report.json"
    r = run("trace", "show", "-f", "json", "-o", out, TRACE)
    assert r.rc == 0 and r.out == "", r
    assert json.loads(out.read_text())["format"] == "gpuopt-trace-report"
    assert json.loads(out.read_text()) == json.loads(run("trace", "show", "-f", "json", TRACE).out)
    text = tmp_path / "report.txt"
    assert run("trace", "show", TRACE, "-o", text).rc == 0
    assert text.read_text() == run("trace", "show", TRACE).out
    assert run("trace", "show", "-o", "-", TRACE).out == run("trace", "show", TRACE).out
    assert "trace show: write the report to FILE" in run("trace", "--help").out


def test_trace_show_takes_options_after_the_file():
    after = run("trace", "show", TRACE, "--lines", "1", "--kernels", "1")
    assert after.rc == 0, after
    assert after.out == run("trace", "show", "--lines", "1", "--kernels", "1", TRACE).out
    assert after.out != run("trace", "show", TRACE).out
    r = run("trace", "show", TRACE, TRACE)
    assert r.rc == 2 and "give one saved trace FILE, not more" in r.err, r


# ---- a relative XDG_CACHE_HOME ----

def test_relative_xdg_cache_home_is_ignored_as_if_unset(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (tmp_path / "x.py").write_text("import numpy as np\nx = np.zeros(3)\n")
    r = run("scan", "x.py", cwd=tmp_path, env={"XDG_CACHE_HOME": "relcache", "HOME": str(home)})
    assert r.rc == 0, r
    assert not (tmp_path / "relcache").exists()
    assert (home / ".cache" / "gpuopt").is_dir()  # the default place, as with no XDG_CACHE_HOME
    absolute = tmp_path / "abscache"
    assert run("scan", "x.py", cwd=tmp_path, env={"XDG_CACHE_HOME": str(absolute)}).rc == 0
    assert (absolute / "gpuopt").is_dir()


# ---- a NUL in a .npy header ----

def npy_with_descr(path, descr: bytes):
    header = b"{'descr': '" + descr + b"', 'fortran_order': False, 'shape': (1,), }"
    header += b" " * (63 - (10 + len(header)) % 64) + b"\n"
    path.write_bytes(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header + b"\0" * 8)


def test_npy_descr_with_a_nul_is_shown_escaped_not_truncated(tmp_path):
    npy_with_descr(tmp_path / "bad.npy", b"<f8\x00")
    np.save(tmp_path / "good.npy", np.zeros(1))
    r = run("verify", tmp_path / "good.npy", tmp_path / "bad.npy")
    assert r.rc == 2 and "dtype '<f8\\x00' is not supported" in r.err, r
    npy_with_descr(tmp_path / "long.npy", b"<f8" + b"\x01" * 40)
    r = run("verify", tmp_path / "good.npy", tmp_path / "long.npy")
    assert r.rc == 2 and "dtype '<f8" + "\\x01" * 29 + "...' is not supported" in r.err, r


# ---- notebooks: a byte order mark; another language ----

def notebook(cells, metadata=None):
    return json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                                  "source": c} for c in cells],
                       "metadata": metadata or {}, "nbformat": 4, "nbformat_minor": 5})


def test_notebook_with_a_utf8_bom_is_read(tmp_path):
    nb = tmp_path / "bom.ipynb"
    nb.write_bytes(b"\xef\xbb\xbf" + notebook(["import numpy as np\n", "x = np.linalg.inv(np.eye(3))\n"]).encode())
    r = run("scan", "--format", "json", nb)
    assert r.rc in (0, 1), r
    doc = r.json()
    assert doc["summary"]["files_scanned"] == 1 and doc["summary"]["notebooks"] == 1 and not doc["errors"], doc
    assert any(f["cell"] == 2 for f in doc["findings"]), doc["findings"]


R_META = {"kernelspec": {"display_name": "R", "language": "R", "name": "ir"},
          "language_info": {"name": "R"}}


def test_notebook_in_another_language_is_skipped_with_a_note(tmp_path):
    (tmp_path / "r.ipynb").write_text(notebook(["library(ggplot2)\nx <- c(1, 2)\n"], R_META))
    (tmp_path / "py.ipynb").write_text(notebook(["import numpy as np\n"],
                                                {"kernelspec": {"language": "python", "name": "python3"}}))
    r = run("scan", tmp_path)
    assert r.rc == 0, r
    assert "note: the notebook's language is R, not Python: not scanned" in r.out, r
    assert "syntax error" not in r.out and "1 notebook in another language skipped" in r.out, r
    doc = run("scan", "--format", "json", tmp_path).json()
    assert doc["summary"]["files_scanned"] == 1 and doc["summary"]["notebooks_skipped"] == 1, doc["summary"]
    assert [(n["kind"], n["language"]) for n in doc["notices"]] == [("not-python", "R")], doc["notices"]
    sarif = json.loads(run("scan", "--format", "sarif", tmp_path).out)
    notes = sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert any("language is R" in n["message"]["text"] for n in notes), notes
    r = run("scan", tmp_path / "r.ipynb")  # nothing else to scan: nothing scanned is exit 2
    assert r.rc == 2 and "nothing scanned: the notebook found is in another language than Python" in r.err, r
    assert "A notebook whose kernel's language is not Python" in run("scan", "--help").out


# ---- fit: a tiny working set's first touch ----

@pytest.mark.parametrize("nbytes", [4, 4096, 1 << 20, 1 << 30])
def test_fit_first_touch_is_never_faster_than_pinned_or_reused_pageable(nbytes):
    r = run("fit", "--ceilings", CEILINGS, "--bytes", nbytes, "--format", "json")
    assert r.rc == 0, r
    s = r.json()["answer"]["seconds"]
    for d in ("in", "out"):
        assert s[f"{d}_fresh"] >= s[f"{d}_pageable"] >= s[f"{d}_pinned"] > 0, s
    if nbytes == 4:  # was 0.0 µs: the fixed latency of a copy was left out
        assert s["in_fresh"] > 1e-6 and s["out_fresh"] > 1e-6, s


# ---- verify: CSV cells with newlines and control characters ----

def test_verify_csv_mismatch_listing_shows_cells_escaped_one_per_line(tmp_path):
    (tmp_path / "ref.csv").write_text('id,name,x\n1,"a\nb",1.0\n2,x,2.0\n')
    (tmp_path / "cand.csv").write_text('id,name,x\n1,"a\nc",1.0\n2,"y\\z\t\x1b[2J",2.0\n', newline="")
    r = run("verify", tmp_path / "ref.csv", tmp_path / "cand.csv")
    assert r.rc == 1, r
    assert "ref 'a\\nb', cand 'a\\nc'\n" in r.out, r
    assert "ref 'x', cand 'y\\\\z\\t\\x1b[2J'\n" in r.out, r
    listing = [l for l in r.out.splitlines() if "ref '" in l]
    assert len(listing) == 2, r.out  # one line per cell: no raw newline broke the layout


# ---- verify: directory outputs and symbolic links out of them ----

def test_verify_directories_do_not_follow_links_out_of_the_tree(tmp_path):
    ref, cand, outside = tmp_path / "ref", tmp_path / "cand", tmp_path / "outside"
    for d in (ref / "sub", cand / "sub", outside):
        d.mkdir(parents=True)
    for d in (ref, cand):
        np.save(d / "a.npy", np.arange(3.0))
        (d / "sys").symlink_to("/usr")  # 810 system files were compared through this
        (d / "sub" / "in.npy").symlink_to("../a.npy")  # inside the tree: followed
    np.save(outside / "o.npy", np.zeros(2))
    np.save(outside / "p.npy", np.ones(2))
    (ref / "o.npy").symlink_to(outside / "o.npy")
    (cand / "o.npy").symlink_to(outside / "o.npy")
    r = run("verify", "--format", "json", ref, cand)
    assert r.rc == 0, r
    doc = r.json()
    compared = sorted(i["name"] for i in doc["items"]) if "items" in doc else None
    assert compared == ["a.npy", "sub/in.npy"], doc
    text = run("verify", ref, cand)
    assert text.rc == 0, text
    assert f"note: {ref}/sys: a symbolic link out of '{ref}' (to '/usr'): not followed, not compared" in text.out
    assert f"{ref}/o.npy: a symbolic link out of '{ref}' (to '{outside}/o.npy')" in text.out
    assert "/usr/" not in text.out.replace("(to '/usr')", ""), text.out
    # a candidate file that is a link out, where the reference has the file: a difference
    (cand / "a.npy").unlink()
    (cand / "a.npy").symlink_to(outside / "p.npy")
    r = run("verify", ref, cand)
    assert r.rc == 1 and "a.npy: in the candidate, a symbolic link out of its directory: not followed" in r.out, r
    assert "leads out of it (sys -> /usr" in run("verify", "--help").out


# ---- option errors of doctor, fit and report, said as scan says them (opterr.c) ----

@pytest.mark.parametrize("cmd, args, said", [
    ("doctor", ["-vZ"], "unknown option '-Z' in '-vZ' (see `gpuopt doctor --help`)"),
    ("doctor", ["--verbose=yes"], "option --verbose takes no value, but '--verbose=yes' gives it one"),
    ("doctor", ["--form"], "option --form (--format) needs a value"),
    ("fit", ["-qZ"], "unknown option '-Z' in '-qZ' (see `gpuopt fit --help`)"),
    ("fit", ["--verbose=1"], "option --verbose takes no value, but '--verbose=1' gives it one"),
    ("fit", ["-o"], "option -o needs a value"),
    ("report", ["--force=1", "x"], "option --force takes no value, but '--force=1' gives it one"),
    ("report", ["--bogus", "x"], "unknown option '--bogus' (see `gpuopt report --help`)"),
    ("report", ["x", "--form"], "option --form (--format) needs a value"),
])
def test_option_errors_name_the_word_at_fault(cmd, args, said):
    r = run(cmd, *args)
    assert r.rc == 2 and r.err == f"gpuopt: {cmd}: {said}\n", r
