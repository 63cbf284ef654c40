"""Shared fixtures for the end-to-end tests: they run the real gpuopt binary
(GPUOPT, else build/src/gpuopt) on real files and check what it prints."""
import json
import os
import subprocess
import tempfile
from pathlib import Path

import pytest

ROOT = Path(os.environ.get("GPUOPT_SOURCE_ROOT", Path(__file__).resolve().parents[2]))
BINARY = Path(os.environ.get("GPUOPT", ROOT / "build" / "src" / "gpuopt")).absolute()


class Result:
    def __init__(self, proc):
        self.rc = proc.returncode
        self.out = proc.stdout
        self.err = proc.stderr

    def json(self):
        return json.loads(self.out)

    def __repr__(self):
        return f"rc={self.rc}\nstdout:\n{self.out}\nstderr:\n{self.err}"


# Each test run gets its own scan cache, so tests neither read a stale one
# nor leave entries in the user's.
CACHE_HOME = tempfile.mkdtemp(prefix="gpuopt-test-cache-")
os.chmod(CACHE_HOME, 0o777)


def run(*args, input=None, env=None, cwd=None, timeout=120, user=None):
    full_env = dict(os.environ)
    full_env.pop("NO_COLOR", None)
    full_env["XDG_CACHE_HOME"] = CACHE_HOME
    full_env.update(env or {})
    kw = {}
    if user is not None:
        kw["user"] = user
    proc = subprocess.run([str(BINARY), *map(str, args)], input=input, capture_output=True,
                          text=True, env=full_env, cwd=cwd, timeout=timeout, **kw)
    return Result(proc)


@pytest.fixture
def gpuopt():
    assert BINARY.exists(), f"build gpuopt first: {BINARY} is missing"
    return run


def scan_json(*paths, **kw):
    r = run("scan", "--format", "json", *paths, **kw)
    assert r.rc in (0, 1), r
    return r.json()


def skip_unless_installed(requirements):
    """Skip the calling test when scripts/setup.sh left requirements/REQUIREMENTS (an
    optional file: "# setup: optional, needs-mb N") out of .venv for want of disk, with
    the reason it recorded in .venv/.gpuopt-skipped. A package that is missing for any
    other reason is not skipped: the test goes on and fails on it."""
    record = ROOT / ".venv" / ".gpuopt-skipped"
    for line in record.read_text().splitlines() if record.exists() else []:
        if line.startswith(f"requirements/{requirements}:"):
            pytest.skip(f"scripts/setup.sh did not install {line}")
