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
