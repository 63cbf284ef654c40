"""Nothing of the user's lost (issue 25): the results directory gpuopt try
takes (never one holding the user's files, only what try wrote removed, one
try at a time), runs that cannot change the project, and one rule for every
output path of every command. Real runs of the real binary on real files;
each test failed on the binary before the fixes."""
import hashlib
import json
import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

from conftest import BINARY, CACHE_HOME, ROOT, run

PY = "/usr/bin/python3"  # Debian's, with numpy

BASE = """import numpy as np, sys
x = np.arange(2000, dtype=np.float64)
np.save("out.npy", np.sqrt(x))
"""
CONTRACT = f"""baseline = "{PY} base.py"
outputs = ["out.npy"]
candidates = ["{PY} base.py"]
accelerators = "none"
trace = false
warmup = 0
min_runs = 5
max_time = 1
min_time = 0
"""


def digest(root):
    """Every file and link under root: content hash (or link target) and mtime."""
    h = {}
    for p in sorted(Path(root).rglob("*")):
        rel = str(p.relative_to(root))
        if p.is_symlink():
            h[rel] = ("link", os.readlink(p))
        elif p.is_file():
            h[rel] = (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
    return h


def make_project(tmp_path, contract=CONTRACT):
    d = tmp_path / "proj"
    d.mkdir()
    (d / "base.py").write_text(BASE)
    (d / "gpuopt.toml").write_text(contract)
    return d


def user_dir(path):
    """A directory of the user's that looks like try's results: runs/, logs/, reference/."""
    for sub in ("runs", "logs", "reference"):
        (path / sub).mkdir(parents=True, exist_ok=True)
        (path / sub / "mine.txt").write_text(f"the user's {sub}\n")
    (path / "notes.md").write_text("mine\n")
    return path


# ---- the results directory ----

def test_results_dir_holding_the_users_files_is_refused(tmp_path):
    d = make_project(tmp_path)
    mine = user_dir(tmp_path / "mine")
    before = digest(tmp_path)
    r = run("try", "-r", mine, cwd=d, timeout=120)
    assert r.rc == 2, r
    assert "holds files that gpuopt try did not write" in r.err and str(mine) in r.err, r
    assert "try only ever removes what it wrote" in r.err
    assert digest(tmp_path) == before


@pytest.mark.parametrize("results", [".", "..", "/", "base.py"])
def test_results_dir_that_is_the_project_or_above_it_is_refused(tmp_path, results):
    d = make_project(tmp_path, CONTRACT + f'results = "{results}"\n')
    user_dir(d)  # the project has runs/, logs/ and reference/ of its own
    before = digest(tmp_path)
    r = run("try", cwd=d, timeout=120)
    assert r.rc == 2, r
    assert ("is the project directory or holds it" in r.err or "is not a directory" in r.err), r
    assert digest(tmp_path) == before


def test_empty_results_dir_is_taken_and_reused(tmp_path):
    d = make_project(tmp_path)
    res = tmp_path / "res"
    res.mkdir()
    r = run("try", "-r", res, cwd=d, timeout=120)
    assert r.rc in (0, 1), r
    assert (res / ".gpuopt-try").read_text().startswith("gpuopt try results")
    assert (res / "candidate-1.json").exists()
    # its own results: taken again, resumed, and started over with --fresh
    r = run("try", "-r", res, cwd=d, timeout=120)
    assert r.rc in (0, 1), r
    r = run("try", "-r", res, "--fresh", cwd=d, timeout=120)
    assert r.rc in (0, 1), r
    # a file of the user's put there afterwards is never removed
    (res / "mine.txt").write_text("keep me\n")
    r = run("try", "-r", res, "--fresh", cwd=d, timeout=120)
    assert r.rc in (0, 1), r
    assert (res / "mine.txt").read_text() == "keep me\n"


def test_a_link_planted_in_the_results_is_not_followed(tmp_path):
    d = make_project(tmp_path)
    r = run("try", cwd=d, timeout=120)
    assert r.rc in (0, 1), r
    res = d / "gpuopt-try"
    mine = user_dir(tmp_path / "mine")
    before = digest(mine)
    for sub in ("runs", "logs", "reference"):
        target = res / sub
        if target.exists():
            subprocess.run(["rm", "-rf", str(target)], check=True)
        target.symlink_to(mine / sub)
    r = run("try", "--fresh", cwd=d, timeout=120)
    assert r.rc in (0, 1), r
    assert digest(mine) == before


def test_a_second_try_on_the_same_results_is_told_who_holds_them(tmp_path):
    slow = CONTRACT.replace(f'baseline = "{PY} base.py"',
                            f'baseline = "{PY} -c \'import time; time.sleep(30)\'"')
    d = make_project(tmp_path, slow)
    env = dict(os.environ, XDG_CACHE_HOME=CACHE_HOME)
    first = subprocess.Popen([str(BINARY), "try", "-q"], cwd=d, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lock = d / "gpuopt-try" / ".gpuopt-try.lock"
        end = time.monotonic() + 30
        while time.monotonic() < end and not (lock.exists() and lock.read_text()):
            time.sleep(0.05)
        r = run("try", cwd=d, timeout=60)
        assert r.rc == 2, r
        assert "is in use by another gpuopt try (pid %d, started " % first.pid in r.err, r
    finally:
        first.send_signal(signal.SIGINT)
        first.communicate(timeout=60)
    # released when the first ends: the next one runs
    r = run("try", "--baseline", f"{PY} base.py", cwd=d, timeout=120)
    assert "in use by another" not in r.err, r


# ---- runs cannot change the project ----

REWRITE = """import numpy as np
with open("big.bin", "r+b") as f:   # a checkpoint rewritten in place
    f.write(b"overwritten by the run")
with open("data/more.bin", "wb") as f:  # a file in a directory too large to mirror
    f.write(b"new")
np.save("out.npy", np.sqrt(np.arange(2000, dtype=np.float64)))
"""


@pytest.mark.parametrize("user", [None, "nobody"])
def test_a_run_cannot_change_the_projects_files(tmp_path, user):
    # as root the mount namespace alone; as another user, a user namespace too
    if user and os.geteuid() != 0:
        pytest.skip("needs root to run as another user")
    if user:
        tmp_path = Path(tempfile.mkdtemp())
        os.chmod(tmp_path, 0o755)
    d = make_project(tmp_path, CONTRACT.replace(f'candidates = ["{PY} base.py"]',
                                                f'candidates = ["{PY} rewrite.py"]'))
    (d / "rewrite.py").write_text(REWRITE)
    (d / "big.bin").write_bytes(os.urandom(3 << 20))   # linked, not copied, into each run
    (d / "data").mkdir()
    for i in range(5100):                              # more entries than a run mirrors
        (d / "data" / f"{i}.txt").write_text(str(i))
    if user:
        subprocess.run(["chown", "-R", user, str(d)], check=True)
    before = digest(d)
    r = run("try", cwd=d, timeout=300, user=user)
    after = digest(d)
    after = {k: v for k, v in after.items() if not k.startswith("gpuopt-try/")}
    assert after == before, r
    assert r.rc == 1, r
    assert "Read-only file system" in r.out + r.err, r
    assert "cannot be made read-only" not in r.err, r


@pytest.mark.parametrize("link", ["absolute", "relative"])
def test_a_run_cannot_write_through_a_link_out_of_the_project(tmp_path, link):
    """The second hostile reading: a project's link to a directory outside it
    ('outdir -> /home/me/data') was mirrored into each run as it was, and a
    candidate writing outdir/out.npy replaced the user's file there. What
    the project's links lead to is read-only to the runs too."""
    user = tmp_path / "userdata"
    user.mkdir()
    np.save(user / "out.npy", np.full(3, 42.0))
    (user / "notes.txt").write_text("the user's\n")
    d = make_project(tmp_path, CONTRACT.replace(f'candidates = ["{PY} base.py"]',
                                                f'candidates = ["{PY} through.py"]'))
    (d / "outdir").symlink_to(user if link == "absolute" else Path("..") / "userdata")
    (d / "through.py").write_text("import numpy as np\nnp.save('outdir/out.npy', np.arange(10.0) + 7)\n"
                                  "open('outdir/notes.txt', 'w').write('gone')\n"
                                  "np.save('out.npy', np.sqrt(np.arange(2000, dtype=np.float64)))\n")
    before = digest(user)
    r = run("try", cwd=d, timeout=300)
    assert digest(user) == before, r
    assert np.load(user / "out.npy").tolist() == [42.0] * 3
    assert "Read-only file system" in r.out + r.err, r
    assert "cannot be made read-only" not in r.err, r


# ---- one rule for every output path ----

TRACE = ROOT / "tests" / "e2e" / "fixtures" / "trace" / "cupy_compute_bound.json"
SCRIPT = "import numpy as np\nnp.save('a.npy', np.arange(3.0))\n"


def files_at(tmp_path):
    (tmp_path / "s.py").write_text(SCRIPT)
    (tmp_path / "t.json").write_bytes(TRACE.read_bytes())
    (tmp_path / "keep.py").write_text("# the user's\n")
    np.save(tmp_path / "data.npy", np.arange(4.0))
    (tmp_path / "link.json").symlink_to(tmp_path / "t.json")
    (tmp_path / "tolink.html").symlink_to(tmp_path / "keep.py")
    for d in ("d1", "d2", "sd"):
        (tmp_path / d).mkdir()
    np.save(tmp_path / "d1" / "a.npy", np.arange(3.0))
    np.save(tmp_path / "d2" / "a.npy", np.arange(3.0))
    (tmp_path / "sd" / "s.py").write_text(SCRIPT)
    return tmp_path


REFUSED = [
    # named as an input, directly or through a link: never, --force or not
    (["trace", "-o", "s.py", "--", PY, "s.py"], "it is also an input ('s.py')"),
    (["trace", "--force", "-o", "s.py", "--", PY, "s.py"], "it is also an input ('s.py')"),
    (["trace", "show", "--export-trace", "t.json", "t.json"], "it is also an input ('t.json')"),
    (["trace", "show", "--export-trace", "link.json", "t.json"], "it is also an input ('t.json')"),
    (["trace", "show", "--force", "--export-trace", "t.json", "link.json"], "it is also an input"),
    (["bench", "--force", "--output", "s.py", f"{PY} s.py"], "it is also an input ('s.py')"),
    (["bench", "--force", "--export-json", "s.py", f"{PY} s.py"], "it is also an input ('s.py')"),
    # named inside a shell command line (found in the hostile reading after the fixes)
    (["bench", "--force", "--output", "s.py", f"sh -c '{PY} s.py > /dev/null'"], "it is also an input ('s.py')"),
    (["try", "--init", "s.py", "-o", "s.py", "--force"], "it is also an input ('s.py')"),
    # found inside an input directory
    (["verify", "d1", "d2", "-o", "d1/a.npy", "--force"], "inside the input directory 'd1'"),
    (["scan", "sd", "-o", "sd/s.py", "--force"], "inside the input directory 'sd'"),
    # a source or data file without --force, also through a link
    (["trace", "show", "--export-trace", "keep.py", "t.json"], "it is a .py file"),
    (["bench", "--output", "data.npy", f"{PY} -c pass"], "it is a .npy file"),
    (["report", "-o", "tolink.html", "res"], "it is a .py file"),
    # two documents on standard output
    (["trace", "show", "--format", "json", "--export-trace", "-", "t.json"], "standard output carries the report"),
    # second hostile reading: any file of the results report reads, and two outputs in one file
    (["report", "-o", "res/logs/baseline.err", "res"], "inside the input directory 'res'"),
    (["report", "--force", "-o", "res/reference/out.npy", "res"], "inside the input directory 'res'"),
    (["bench", "--export-json", "same.out", "--export-markdown", "same.out", f"{PY} -c pass"],
     "--export-json and --export-markdown both name 'same.out'"),
    (["bench", "--export-json", "same.out", "--output", "./same.out", f"{PY} -c pass"],
     "--export-json and --output both name './same.out'"),
    (["bench", "--export-csv", "link.json", "--export-json", "t.json", f"{PY} -c pass"],
     "--export-json and --export-csv both name"),
]


@pytest.mark.parametrize("args,message", REFUSED, ids=[" ".join(a[:4]) for a, _ in REFUSED])
def test_an_output_never_replaces_an_input(tmp_path, args, message):
    d = files_at(tmp_path)
    if "report" in args:
        # results a try wrote (a contract is enough to render)
        (d / "res").mkdir()
        (d / "res" / "contract.json").write_text('{"contract": {"baseline": "python3 s.py"}, "gpuopt": "x"}\n')
        for sub, name in (("logs", "baseline.err"), ("reference", "out.npy")):
            (d / "res" / sub).mkdir()
            (d / "res" / sub / name).write_text("kept\n")
    (d / "same.out").write_text("the user's\n")
    before = digest(d)
    r = run(*args, cwd=d, timeout=60)
    assert r.rc == 2, r
    assert message in r.err, r
    assert digest(d) == before


def test_report_reads_its_results_and_never_writes_over_them(tmp_path):
    d = files_at(tmp_path)
    res = d / "res"
    res.mkdir()
    (res / "contract.json").write_text('{"contract": {"baseline": "python3 s.py"}, "gpuopt": "x"}\n')
    (res / "verdict.json").write_text('{"candidates": []}\n')
    before = digest(res)
    r = run("report", "-o", res / "verdict.json", res)
    assert r.rc == 2 and "inside the input directory" in r.err, r
    assert digest(res) == before
    # the page beside them is fine, and --force lets a .py outside be replaced
    r = run("report", "-o", res / "page.html", res)
    assert r.rc == 0, r
    r = run("report", "--force", "-o", d / "keep.py", res)
    assert r.rc == 0, r


def test_report_names_damaged_results_and_renders_the_rest(tmp_path):
    res = tmp_path / "res"
    res.mkdir()
    (res / "contract.json").write_text('{"contract": {"baseline": "python3 s.py"}, "gpuopt": "x"}\n')
    (res / "candidate-1.json").write_text('{"name": "cupy port", "verdict": {"verdict": "keep"')  # cut short
    (res / "candidate-2.json").write_text('{"name": "torch port", "verdict": {"verdict": "reject", '
                                          '"factor": "crash", "reason": "it crashed"}}\n')
    r = run("report", "-f", "markdown", "-o", "-", res)
    assert r.rc == 1, r
    assert "candidate-1.json" in r.err and "damaged" in r.err, r
    assert "Damaged results" in r.out and "candidate-1.json" in r.out, r
    assert "torch port" in r.out, r
    r = run("report", tmp_path / "nonexistent")
    assert r.rc == 2 and "cannot read" in r.err and "No such file" in r.err, r


# ---- a saved step is taken again only for what it ran ----

HELPER_OK = "import numpy as np\ndef values():\n    return np.sqrt(np.arange(2000, dtype=np.float64))\n"
CAND = "import numpy as np\nfrom helper import values\nnp.save('out.npy', values())\n"


def test_a_changed_candidate_is_run_again_not_served_from_saved_steps(tmp_path):
    d = make_project(tmp_path, CONTRACT.replace(f'candidates = ["{PY} base.py"]',
                                                f'candidates = ["{PY} cand.py"]'))
    (d / "cand.py").write_text(CAND)
    (d / "helper.py").write_text(HELPER_OK)
    r = run("try", cwd=d, timeout=120)
    assert r.rc in (0, 1) and "[wrong output]" not in r.out, r
    # unchanged: every step is taken again as saved
    r = run("try", cwd=d, timeout=120)
    assert "running it again" not in r.err, r
    # the module the candidate imports made wrong: the candidate runs again and is rejected;
    # the baseline, which does not read it, is kept
    (d / "helper.py").write_text(HELPER_OK.replace("np.sqrt", "np.cbrt"))
    r = run("try", cwd=d, timeout=120)
    assert r.rc == 1, r
    assert "candidate-1.json: what it ran changed since it was saved" in r.err, r
    assert "baseline.json: what it ran changed" not in r.err, r
    assert "[wrong output]" in r.out, r


def test_an_installed_package_makes_the_saved_steps_stale(tmp_path):
    d = make_project(tmp_path)
    site = tmp_path / "site"
    site.mkdir()
    env = {"PYTHONPATH": str(site)}
    r = run("try", cwd=d, timeout=120, env=env)
    assert r.rc in (0, 1), r
    # a package installed where the interpreter finds it
    (site / "newpkg-1.0.dist-info").mkdir()
    r = run("try", cwd=d, timeout=120, env=env)
    assert "environment.json: what it ran changed" in r.err, r
    assert "baseline.json: what it ran changed" in r.err, r


def test_results_a_failed_try_did_not_confirm_are_said_to_be_stale(tmp_path):
    """A finished try, then one whose baseline fails after its code changed:
    the saved candidate and verdict are an earlier try's. report says so on
    the page and on stderr and exits 1 (the second hostile reading's B1:
    the old verdict was shown beside the new environment, exit 0)."""
    d = make_project(tmp_path, CONTRACT.replace(f'baseline = "{PY} base.py"', f'baseline = "{PY} cand.py"'))
    (d / "cand.py").write_text(CAND)
    (d / "helper.py").write_text(HELPER_OK)
    assert run("try", "-q", cwd=d, timeout=120).rc in (0, 1)
    status = json.loads((d / "gpuopt-try" / "status.json").read_text())
    assert status["state"] == "finished" and "candidate-1.json" in status["confirmed"], status
    r = run("report", "-f", "markdown", "-o", "-", d / "gpuopt-try")
    assert r.rc == 0 and "The last try" not in r.out, r
    (d / "helper.py").write_text("raise RuntimeError('helper broken')\n")
    r = run("try", "-q", cwd=d, timeout=120)
    assert r.rc == 2 and "helper broken" in r.err, r
    status = json.loads((d / "gpuopt-try" / "status.json").read_text())
    assert status["state"] == "stopped" and "helper broken" in status["message"], status
    r = run("report", "-f", "markdown", "-o", "-", d / "gpuopt-try")
    assert r.rc == 1, r
    assert "The last try stopped at " in r.out and "helper broken" in r.out, r.out
    stale = r.out.split("did not confirm", 1)[1].split("\n", 1)[0]
    assert "baseline.json" in stale and "candidate-1.json" in stale and "verdict.json" in stale, stale
    assert "environment.json" not in stale, stale
    assert "3 saved results are from an earlier try, not confirmed by the last one" in r.err, r


# ---- nothing left running ----

def leftovers(tag, program=None):
    """Processes whose command line holds tag (and whose program is
    `program`, when given: gpuopt's own command line holds the tag too)."""
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit() or int(d.name) == os.getpid():
            continue
        try:
            argv = (d / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(tag.encode() in a for a in argv) and (program is None or argv[0] == program.encode()):
            found.append(d.name)
    return found


def test_bench_and_try_leave_no_process_behind(tmp_path):
    """A command that starts a daemon (setsid, double fork) and a background
    job: each ends with the run that started it."""
    tag = "317.25"
    (tmp_path / "spawner.py").write_text(
        "import os, subprocess, sys\n"
        f"subprocess.Popen(['setsid', 'sleep', '{tag}'])\n"              # leaves the group
        f"subprocess.Popen(['sh', '-c', 'sleep {tag} &'])\n"              # orphaned in the group
        "if os.fork() == 0:\n"                                            # a double-forked daemon
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        f"        os.execvp('sleep', ['sleep', '{tag}'])\n"
        "    os._exit(0)\n"
        "import numpy as np\nnp.save('out.npy', np.arange(3.0))\n")
    try:
        r = run("bench", "--runs", "5", "--warmup", "0", f"{PY} spawner.py", cwd=tmp_path, timeout=120)
        assert r.rc == 0, r
        time.sleep(0.5)
        assert leftovers(tag) == [], r
        d = make_project(tmp_path, CONTRACT.replace(f'candidates = ["{PY} base.py"]',
                                                    f'candidates = ["{PY} spawner.py"]'))
        (d / "spawner.py").write_text((tmp_path / "spawner.py").read_text())
        r = run("try", cwd=d, timeout=120)
        assert r.rc in (0, 1), r
        time.sleep(0.5)
        assert leftovers(tag) == [], r
    finally:
        subprocess.run(["pkill", "-f", tag])


@pytest.mark.parametrize("sig", ["SIGHUP", "SIGPIPE", "SIGUSR1", "SIGQUIT", "SIGINT", "SIGTERM", "SIGKILL"])
def test_trace_leaves_neither_the_program_nor_its_directory_when_stopped(tmp_path, sig):
    """gpuopt trace stopped by a signal: the program goes too (the signal
    passed on, or the watchdog after SIGKILL), and so does the trace's
    temporary directory."""
    tag = "gpuoptleftover417"
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = dict(os.environ, TMPDIR=str(tmp), XDG_CACHE_HOME=CACHE_HOME)
    p = subprocess.Popen([str(BINARY), "trace", "-q", "--", PY, "-c", f"import time; {tag} = 1; time.sleep(41.5)"],
                         env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        end = time.monotonic() + 20
        while time.monotonic() < end and not leftovers(tag, PY):
            time.sleep(0.05)
        assert leftovers(tag, PY), "the program did not start"
        p.send_signal(getattr(signal, sig))
        p.wait(timeout=30)
        end = time.monotonic() + 5
        while time.monotonic() < end and (leftovers(tag) or list(tmp.iterdir())):
            time.sleep(0.05)
        assert leftovers(tag) == [], sig
        assert list(tmp.iterdir()) == [], sig
        if sig != "SIGKILL":
            # the program's own end is gpuopt's status: 128 + the signal passed on
            passed = {"SIGPIPE": "SIGTERM", "SIGUSR1": "SIGTERM"}.get(sig, sig)
            assert p.returncode in (128 + getattr(signal, passed), 1), (p.returncode, p.stderr.read())
    finally:
        subprocess.run(["pkill", "-f", tag])


# ---- no hang on a FIFO ----

@pytest.mark.parametrize("args,message", [
    (["trace", "show", "F"], "cannot read 'F': a FIFO that nothing wrote to for 10 s"),
    # fit sizes a .npy file from its header and the file's size, which a FIFO has not: refused at once
    (["fit", "F"], "cannot read 'F': a named pipe (FIFO), not a .npy file"),
    (["bench", "--runs", "5", "--input", "F", "cat"], "cannot read 'F': a FIFO that nothing wrote to"),
    (["scan", "s.py", "-o", "F"], "a FIFO that no process read from for 10 s"),
    (["verify", "a.npy", "a.npy", "-o", "F"], "a FIFO that no process read from for 10 s"),
])
def test_a_fifo_nobody_uses_is_an_error_not_a_hang(tmp_path, args, message):
    os.mkfifo(tmp_path / "F")
    (tmp_path / "s.py").write_text("import numpy as np\n")
    np.save(tmp_path / "a.npy", np.arange(3.0))
    t = time.monotonic()
    r = run(*args, cwd=tmp_path, timeout=60)
    assert time.monotonic() - t < 40, r
    assert r.rc == 2, r
    assert message in r.err, r


def test_a_fifo_with_a_writer_is_read(tmp_path):
    """bash's <(...) and a FIFO someone writes to still work."""
    src = ROOT / "tests" / "e2e" / "fixtures" / "trace" / "cupy_compute_bound.json"
    os.mkfifo(tmp_path / "F")
    w = subprocess.Popen(["sh", "-c", f"sleep 1; cat '{src}' > '{tmp_path / 'F'}'"])
    r = run("trace", "show", tmp_path / "F", timeout=60)
    w.wait(timeout=30)
    assert r.rc == 0, r


def test_a_candidate_that_hangs_does_not_hang_try(tmp_path):
    """No timeout in the contract: a run may take 10x the baseline's time, at
    least 60 s; then it is killed, and the verdict says so."""
    d = make_project(tmp_path, CONTRACT.replace(f'candidates = ["{PY} base.py"]',
                                                f'candidates = ["{PY} hang.py"]'))
    (d / "hang.py").write_text("import time\ntime.sleep(3600)\n")
    t = time.monotonic()
    r = run("try", cwd=d, timeout=300)
    assert time.monotonic() - t < 150, r
    assert r.rc == 1, r
    assert "reject" in r.out and "timed out after 60 s" in r.out + r.err, r
