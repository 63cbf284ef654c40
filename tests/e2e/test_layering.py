"""The include check (tests/check_layering.py) passes on the tree as it is
and fails, naming the file, the line and the rule, on a wrong-way include."""
import os
import shutil
import subprocess
import sys

ROOT = os.environ.get("GPUOPT_SOURCE_ROOT", os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
CHECK = os.path.join(ROOT, "tests", "check_layering.py")


def run(src):
    return subprocess.run([sys.executable, CHECK, src], capture_output=True, text=True)


def test_the_tree_as_it_is_passes():
    r = run(os.path.join(ROOT, "src"))
    assert r.returncode == 0, r.stderr


def copy_with(tmp_path, path, line):
    src = tmp_path / "src"
    shutil.copytree(os.path.join(ROOT, "src"), src)
    target = src / path
    text = target.read_text()
    target.write_text(line + "\n" + text)
    return str(src)


def test_an_engine_including_the_command_face_fails(tmp_path):
    r = run(copy_with(tmp_path, "scan/kb.c", '#include "cli/commands.h"'))
    assert r.returncode == 1
    assert "scan/kb.c:1: includes \"cli/commands.h\": no part includes cli" in r.stderr


def test_core_including_an_engine_fails(tmp_path):
    r = run(copy_with(tmp_path, "core/util.c", '#include "scan/kb.h"'))
    assert r.returncode == 1
    assert "core/util.c:1: includes \"scan/kb.h\": core may use nothing outside itself" in r.stderr


def test_one_engine_including_another_fails(tmp_path):
    r = run(copy_with(tmp_path, "verify/npz.h", '#  include "bench/bench.h"'))
    assert r.returncode == 1
    assert "verify/npz.h:1: includes \"bench/bench.h\": verify may use core" in r.stderr


def test_an_unknown_folder_fails(tmp_path):
    src = copy_with(tmp_path, "core/util.h", "")
    os.makedirs(os.path.join(src, "newpart"))
    r = run(src)
    assert r.returncode == 1
    assert "newpart/: a folder that tests/check_layering.py does not know" in r.stderr
