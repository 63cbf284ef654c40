"""The command-line surface: help, version, the command table, exit codes."""
import re

from conftest import run


def test_version():
    r = run("--version")
    assert r.rc == 0
    assert re.fullmatch(r"gpuopt \d+\.\d+\.\d+\n", r.out)


def test_help_lists_every_command():
    r = run("--help")
    assert r.rc == 0
    for cmd in ("scan", "rules", "explain"):
        assert re.search(rf"^  {cmd} ", r.out, re.M), r.out
    assert "Exit codes" in r.out


def test_no_arguments_is_a_usage_error():
    r = run()
    assert r.rc == 2
    assert "Usage: gpuopt" in r.err


def test_help_command_and_flag_agree():
    a = run("help", "scan")
    b = run("scan", "--help")
    assert a.rc == b.rc == 0
    assert a.out == b.out
    assert "--format" in a.out and "--fail-on" in a.out


def test_every_option_in_scan_help_is_accepted(tmp_path):
    (tmp_path / "a.py").write_text("import numpy as np\nnp.zeros(3)\n")
    help_text = run("scan", "--help").out
    options = set(re.findall(r"--([a-z-]+)", help_text))
    values = {"format": "json", "output": str(tmp_path / "o.json"), "exclude": "x*",
              "fail-on": "never", "color": "never", "jobs": "2"}
    for opt in options - {"help"}:
        args = [f"--{opt}"] + ([values[opt]] if opt in values else [])
        r = run("scan", *args, tmp_path / "a.py")
        assert r.rc == 0, (opt, r)


def test_unknown_command_and_options():
    r = run("frobnicate")
    assert r.rc == 2 and "gpuopt: 'frobnicate' is not a gpuopt command" in r.err
    r = run("scan", "--nope", ".")
    assert r.rc == 2 and r.err.startswith("gpuopt: scan: unknown option")
    r = run("scan", "--format", "xml", ".")
    assert r.rc == 2 and "--format" in r.err
    r = run("scan", "--fail-on", "loud", ".")
    assert r.rc == 2 and "--fail-on" in r.err
    r = run("scan", "--jobs", "0", ".")
    assert r.rc == 2 and "--jobs" in r.err
    r = run("help", "nope")
    assert r.rc == 2


def test_rules_lists_unique_stable_ids():
    r = run("rules", "--format", "json")
    assert r.rc == 0
    rules = __import__("json").loads(r.out)
    ids = [x["id"] for x in rules]
    assert len(ids) == len(set(ids)) and len(ids) >= 20
    for x in rules:
        assert re.fullmatch(r"GPU\d{3}", x["id"])
        assert x["severity"] in ("note", "warning", "error")
    text = run("rules").out
    assert all(i in text for i in ids)


def test_explain_every_rule():
    rules = __import__("json").loads(run("rules", "--format", "json").out)
    for x in rules:
        r = run("explain", x["id"])
        assert r.rc == 0, r
        assert r.out.startswith(f"{x['id']} {x['name']}")
        assert "Why it matters" in r.out and "Before:" in r.out and "After:" in r.out, r.out
    assert run("explain", rules[0]["name"]).rc == 0
    r = run("explain", "GPU999")
    assert r.rc == 2 and "no rule 'GPU999'" in r.err
    assert run("explain").rc == 2
