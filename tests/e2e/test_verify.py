"""gpuopt verify, end to end: fixtures written by numpy (Debian's
python3-numpy) for every dtype, byte order, layout, format version and edge
case the command reads; its verdict checked against numpy's own isclose on
the same data (mismatch counts, NaN patterns, largest errors and where they
are, relative L2 error); .npz archives stored, deflated and zip64; CSV / TSV
tables in order, by key and as multisets; recall@k by ids and by distance;
directories; and every kind of bad input, which must give a clear error
naming the file, exit code 2 and no crash."""
import io
import json
import math
import os
import resource
import struct
import subprocess
import time
import zipfile
import zlib

import numpy as np
import pytest

from conftest import BINARY, CACHE_HOME, ROOT, Result, run
from zipbuild import write_zip64

RNG = np.random.default_rng(20261130)

# torch.testing.assert_close defaults (rtol, atol)
DEFAULT_TOL = {"float16": (1e-3, 1e-5), "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7),
               "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7)}


def verify(*args, **kw):
    return run("verify", "--format", "json", *args, **kw)


def verify_limited(limit, *args):
    """verify --format json, under `ulimit -d` of limit bytes unless None (set in the child
    only, before gpuopt starts; the files verify maps read-only do not count against it)."""
    def set_limit():
        resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
    full_env = dict(os.environ, XDG_CACHE_HOME=CACHE_HOME)
    proc = subprocess.run([str(BINARY), "verify", "--format", "json", *map(str, args)], capture_output=True,
                          text=True, env=full_env, timeout=120, preexec_fn=set_limit if limit else None)
    return Result(proc)


def doc_of(r, rc=None):
    if rc is not None:
        assert r.rc == rc, r
    assert r.rc in (0, 1, 2), r
    return r.json()


def only_item(doc):
    assert len(doc["items"]) == 1, doc
    return doc["items"][0]


def save(path, arr, version=None):
    with open(path, "wb") as f:
        if version is None:
            np.save(f, arr)
        else:
            np.lib.format.write_array(f, arr, version=version)
    return path


def noisy_pair(shape, dtype, n_bad=7, nans=True):
    """A reference of dtype, and a candidate with tiny differences (within
    tolerance), differences right at and just past the boundary, large ones,
    and NaN-pattern changes."""
    dt = np.dtype(dtype)
    count = int(np.prod(shape))
    if dt.kind == "b":
        ref = RNG.integers(0, 2, count).astype(bool)
        cand = ref.copy()
        flip = RNG.choice(count, min(n_bad, count), replace=False) if count else []
        cand[flip] = ~cand[flip]
        return ref.reshape(shape), cand.reshape(shape)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        ref = RNG.integers(max(info.min, -1000), min(info.max, 1000), count, endpoint=True).astype(dt)
        if count > 2:
            ref[0], ref[1] = info.min, info.max
        cand = ref.copy()
        idx = RNG.choice(count, min(n_bad, count), replace=False) if count else []
        cand[idx] = (cand[idx].astype(np.int64) // 2).astype(dt)
        return ref.reshape(shape), cand.reshape(shape)
    real = np.float32 if dt in (np.float16, np.complex64) else np.float64
    base = np.dtype(real)
    scale = 10.0 ** RNG.integers(-3, 4, count)
    ref = (RNG.standard_normal(count) * scale).astype(base)
    rtol, atol = DEFAULT_TOL[dt.name]
    tol = atol + rtol * np.abs(ref.astype(np.float64))
    cand = ref + (RNG.uniform(-0.3, 0.3, count) * tol).astype(base)
    if count:
        k = min(n_bad, count)
        idx = RNG.choice(count, k, replace=False)
        cand[idx[: k // 2]] = ref[idx[: k // 2]] + (tol[idx[: k // 2]] * 50).astype(base)
        cand[idx[k // 2:]] = ref[idx[k // 2:]] + (tol[idx[k // 2:]] * 1.01).astype(base)
        if nans and count > 20:
            ref[3] = np.nan          # NaN on both sides
            cand[3] = np.nan
            ref[5] = np.nan          # only in the reference
            cand[7] = np.nan         # only in the candidate
            if dt.kind == "f":
                # (numpy.isclose multiplies complex infinities by 1, which
                # makes their imaginary part NaN: test_complex_infinities)
                ref[9] = cand[9] = np.inf
                ref[11], cand[11] = np.inf, -np.inf
    if dt.kind == "c":
        im = (RNG.standard_normal(count)).astype(base)
        ref = ref + 1j * im
        cand = cand + 1j * im
    return ref.astype(dt).reshape(shape), cand.astype(dt).reshape(shape)


def numpy_mismatches(ref, cand, rtol, atol, equal_nan=True):
    """numpy's verdict: the elements where isclose(cand, ref) is false.
    float16 is compared in float32, as gpuopt documents."""
    if ref.dtype == np.float16:
        ref, cand = ref.astype(np.float32), cand.astype(np.float32)
    if ref.dtype.kind in "biu":
        if rtol == 0 and atol == 0:
            return ref != cand
        ref, cand = ref.astype(np.float64), cand.astype(np.float64)
    rt = ref.dtype.type(rtol) if ref.dtype.kind in "fc" else rtol
    return ~np.isclose(cand, ref, rtol=rt, atol=atol, equal_nan=equal_nan)


def abs_errors(ref, cand):
    """|cand - ref| as gpuopt measures it: 0 where equal, NaN positions left out."""
    if ref.dtype == np.float16:
        ref, cand = ref.astype(np.float32), cand.astype(np.float32)
    if ref.dtype.kind in "biu":
        ref, cand = ref.astype(np.float64), cand.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        d = np.abs(cand - ref)
    d = np.where(cand == ref, 0, d)
    return np.where(np.isnan(ref) | np.isnan(cand), -1, d).real


DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("order", ["<", ">"])
def test_every_dtype_and_byte_order_matches_numpy_isclose(tmp_path, dtype, order):
    ref, cand = noisy_pair((37, 29), dtype)
    dt = np.dtype(dtype).newbyteorder(order) if np.dtype(dtype).itemsize > 1 else np.dtype(dtype)
    rp = save(tmp_path / "ref.npy", ref.astype(dt))
    cp = save(tmp_path / "cand.npy", cand.astype(dt))
    r = verify(rp, cp)
    it = only_item(doc_of(r))
    rtol, atol = DEFAULT_TOL.get(dtype, (0, 0))
    bad = numpy_mismatches(ref, cand, rtol, atol)
    assert it["mismatches"] == int(bad.sum()), it
    assert it["elements"] == ref.size
    assert it["dtype"] == dtype
    assert it["byte_order"]["reference"] == ("|" if dt.itemsize == 1 or dt.kind == "b" else order)
    assert it["test"]["rtol"] == pytest.approx(rtol) and it["test"]["atol"] == pytest.approx(atol)
    assert r.rc == (1 if bad.any() else 0)
    assert it["result"] == ("fail" if bad.any() else "pass")
    # the first mismatches are the first in C order, with their values
    first = [list(map(int, ix)) for ix in np.argwhere(bad)[:5]]
    assert [m["index"] for m in it["first_mismatches"]] == first
    # the largest absolute error, where numpy finds it
    d = abs_errors(ref, cand)
    if np.isfinite(d).all() and d.max() >= 0:
        at = list(map(int, np.unravel_index(int(np.argmax(d)), d.shape)))
        assert it["max_abs_error"]["index"] == at, (it["max_abs_error"], d.max())
        assert float(it["max_abs_error"]["value"]) == pytest.approx(float(d.max()), rel=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128", "float16"])
def test_nan_pattern_is_counted_apart(tmp_path, dtype):
    ref, cand = noisy_pair((500,), dtype, n_bad=0)
    rp, cp = save(tmp_path / "r.npy", ref), save(tmp_path / "c.npy", cand)
    it = only_item(doc_of(verify(rp, cp), 1))
    rn, cn = np.isnan(ref), np.isnan(cand)
    assert it["nan_pattern"] == {"ref_only": int((rn & ~cn).sum()), "cand_only": int((cn & ~rn).sum()),
                                 "both": int((rn & cn).sum())}
    rtol, atol = DEFAULT_TOL[dtype]
    assert it["mismatches"] == int(numpy_mismatches(ref, cand, rtol, atol).sum())
    # --no-equal-nan: NaN on both sides is a mismatch too, like isclose(equal_nan=False)
    it2 = only_item(doc_of(verify("--no-equal-nan", rp, cp), 1))
    assert it2["mismatches"] == int(numpy_mismatches(ref, cand, rtol, atol, equal_nan=False).sum())
    assert it2["mismatches"] == it["mismatches"] + int((rn & cn).sum())
    assert it2["test"]["equal_nan"] is False


def test_infinities_must_match_in_sign(tmp_path):
    ref = np.array([np.inf, -np.inf, np.inf, 1.0, np.inf], np.float64)
    cand = np.array([np.inf, -np.inf, -np.inf, np.inf, 1e308], np.float64)
    it = only_item(doc_of(verify(save(tmp_path / "r.npy", ref), save(tmp_path / "c.npy", cand)), 1))
    assert [m["index"] for m in it["first_mismatches"]] == [[2], [3], [4]]
    assert it["mismatches"] == int((~np.isclose(cand, ref)).sum()) == 3
    assert it["max_abs_error"]["value"] == "inf"
    assert it["rel_l2_error"] in ("inf", "nan") or math.isnan(float(it["rel_l2_error"]))


def test_complex_infinities(tmp_path):
    ref = np.array([complex(np.inf, 1), complex(np.inf, 1), complex(1, np.inf), complex(np.nan, 0)], np.complex128)
    cand = np.array([complex(np.inf, 1), complex(-np.inf, 1), complex(1, 2), complex(0, np.nan)], np.complex128)
    it = only_item(doc_of(verify(save(tmp_path / "r.npy", ref), save(tmp_path / "c.npy", cand)), 1))
    # equal infinities pass; a sign change or a finite value does not; NaN in
    # either part is NaN, and NaN equals NaN
    assert [m["index"] for m in it["first_mismatches"]] == [[1], [2]]
    assert it["nan_pattern"]["both"] == 1


@pytest.mark.parametrize("version", [(1, 0), (2, 0), (3, 0)])
@pytest.mark.parametrize("shape", [(), (0,), (1,), (17,), (4, 0, 3), (3, 5, 2, 4), (2, 1, 3, 1, 2)])
def test_versions_and_shapes(tmp_path, version, shape):
    ref, cand = noisy_pair(shape, "float64", n_bad=3, nans=False)
    rp = save(tmp_path / "r.npy", ref, version)
    cp = save(tmp_path / "c.npy", cand, version)
    assert open(rp, "rb").read()[6] == version[0]
    r = verify(rp, cp)
    it = only_item(doc_of(r))
    bad = numpy_mismatches(ref, cand, 1e-7, 1e-7)
    assert it["shape"] == list(shape)
    assert it["elements"] == ref.size
    assert it["mismatches"] == int(bad.sum())
    assert r.rc == (1 if bad.any() else 0)
    for m, ix in zip(it["first_mismatches"], np.argwhere(bad)):
        assert m["index"] == list(map(int, ix))
        assert m["ref"] == pytest.approx(float(ref[tuple(ix)]))
        assert m["cand"] == pytest.approx(float(cand[tuple(ix)]))


def test_zero_d_text(tmp_path):
    rp = save(tmp_path / "r.npy", np.array(2.5, np.float32))
    cp = save(tmp_path / "c.npy", np.array(2.75, np.float32))
    r = run("verify", rp, cp)
    assert r.rc == 1
    assert "float32 (): 1 of 1 elements differ" in r.out
    assert "at []: ref 2.5, cand 2.75" in r.out


@pytest.mark.parametrize("ref_order,cand_order", [("C", "F"), ("F", "C"), ("F", "F")])
def test_layouts(tmp_path, ref_order, cand_order):
    ref, cand = noisy_pair((13, 7, 5), "float32", n_bad=9, nans=False)
    rp = save(tmp_path / "r.npy", np.asarray(ref, order=ref_order))
    cp = save(tmp_path / "c.npy", np.asarray(cand, order=cand_order))
    assert np.load(rp).flags.f_contiguous == (ref_order == "F")
    it = only_item(doc_of(verify("--show", "100", rp, cp), 1))
    bad = numpy_mismatches(ref, cand, 1.3e-6, 1e-5)
    assert it["mismatches"] == int(bad.sum())
    assert it["fortran_order"] == (ref_order == "F")
    # every mismatch listed, at its logical index, in the reference's memory order
    listed = [tuple(m["index"]) for m in it["first_mismatches"]]
    expect = [tuple(map(int, ix)) for ix in np.argwhere(bad)]
    if ref_order == "F":
        expect.sort(key=lambda ix: tuple(reversed(ix)))
    assert listed == expect
    for m in it["first_mismatches"]:
        assert m["ref"] == pytest.approx(float(ref[tuple(m["index"])]))
        assert m["cand"] == pytest.approx(float(cand[tuple(m["index"])]))


def test_rtol_atol_override_and_l2(tmp_path):
    ref, cand = noisy_pair((2000,), "float64", n_bad=40, nans=False)
    rp, cp = save(tmp_path / "r.npy", ref), save(tmp_path / "c.npy", cand)
    for rtol, atol in [(1e-3, 0), (0, 1e-2), (1e-9, 1e-12), (0.5, 0.5)]:
        it = only_item(doc_of(verify("--rtol", rtol, "--atol", atol, rp, cp)))
        assert it["mismatches"] == int((~np.isclose(cand, ref, rtol=rtol, atol=atol)).sum())
        assert it["test"]["source"] == "--rtol and --atol"
    it = only_item(doc_of(verify("--rtol", "1e-3", rp, cp)))
    assert it["test"]["atol"] == pytest.approx(1e-7) and "--rtol" in it["test"]["source"]
    l2 = np.linalg.norm(cand - ref) / np.linalg.norm(ref)
    assert float(it["rel_l2_error"]) == pytest.approx(l2, rel=1e-9)
    rel = np.abs(cand - ref) / np.abs(ref)
    assert it["max_rel_error"]["index"] == [int(np.argmax(rel))]
    assert float(it["max_rel_error"]["value"]) == pytest.approx(float(rel.max()))


def test_integers_exact_unless_tolerance(tmp_path):
    ref = np.arange(-50, 50, dtype=np.int32)
    cand = ref.copy()
    cand[[3, 60]] += 1
    cand[90] += 10
    rp, cp = save(tmp_path / "r.npy", ref), save(tmp_path / "c.npy", cand)
    it = only_item(doc_of(verify(rp, cp), 1))
    assert it["mismatches"] == 3 and it["test"]["rtol"] == 0 and it["test"]["atol"] == 0
    assert it["max_abs_error"]["index"] == [90] and it["max_abs_error"]["cand"] == 50
    it = only_item(doc_of(verify("--atol", "1", rp, cp), 1))
    assert it["mismatches"] == 1
    # uint64 values above 2^53 are still compared exactly
    big = np.array([2**64 - 1, 2**53 + 1], np.uint64)
    it = only_item(doc_of(verify(save(tmp_path / "b1.npy", big),
                                 save(tmp_path / "b2.npy", big - np.uint64(1))), 1))
    assert it["mismatches"] == 2
    assert it["first_mismatches"][0]["ref"] == float(2**64 - 1)


def test_ulp(tmp_path):
    ref = (RNG.standard_normal(1000)).astype(np.float32)
    steps = RNG.integers(-6, 7, 1000)
    cand = ref.copy()
    for i, s in enumerate(steps):
        for _ in range(abs(s)):
            cand[i] = np.nextafter(cand[i], np.float32(np.inf if s > 0 else -np.inf))
    rp, cp = save(tmp_path / "r.npy", ref), save(tmp_path / "c.npy", cand)
    for n in (0, 2, 4, 6):
        it = only_item(doc_of(verify("--ulp", n, rp, cp)))
        assert it["mismatches"] == int((np.abs(steps) > n).sum())
        assert it["test"]["ulp"] == n and it["test"]["rtol"] is None
    it = only_item(doc_of(verify("--ulp", 3, rp, cp), 1))
    assert it["max_ulp"]["value"] == 6.0
    assert abs(steps[it["max_ulp"]["index"][0]]) == 6
    # --ulp with --rtol is a usage error; with different float dtypes, incompatible
    assert verify("--ulp", 1, "--rtol", 1e-3, rp, cp).rc == 2
    r = verify("--ulp", "1", "--allow-dtype", rp, save(tmp_path / "d.npy", cand.astype(np.float64)))
    assert r.rc == 2 and "ulp" in r.err


def test_allow_dtype(tmp_path):
    ref = RNG.standard_normal(300)
    cand = ref.astype(np.float32)
    cand[10] += 1
    rp, cp = save(tmp_path / "r.npy", ref), save(tmp_path / "c.npy", cand)
    r = verify(rp, cp)
    assert r.rc == 2
    assert f"gpuopt: verify: '{rp}' and '{cp}' cannot be compared: the dtypes differ: reference float64, candidate float32" in r.err
    assert "--allow-dtype" in r.err
    it = only_item(doc_of(verify("--allow-dtype", rp, cp), 1))
    assert it["compared_as"] == "float64"
    assert "reference float64, candidate float32; compared as float64" in it["note"]
    # tolerances: the larger defaults of the two (float32's)
    assert it["test"]["rtol"] == pytest.approx(1.3e-6) and it["test"]["atol"] == pytest.approx(1e-5)
    bad = ~np.isclose(cand.astype(np.float64), ref, rtol=1.3e-6, atol=1e-5)
    assert it["mismatches"] == int(bad.sum())
    text = run("verify", "--allow-dtype", rp, cp).out
    assert "note: dtypes differ: reference float64, candidate float32; compared as float64" in text
    # int32 against float32 goes to float64, as numpy promotes
    it = only_item(doc_of(verify("--allow-dtype", save(tmp_path / "i.npy", np.arange(5, dtype=np.int32)),
                                 save(tmp_path / "f.npy", np.arange(5, dtype=np.float32)))))
    assert it["compared_as"] == "float64" and it["result"] == "pass"


def test_shape_mismatch_is_incompatible(tmp_path):
    rp = save(tmp_path / "r.npy", np.zeros((3, 4)))
    cp = save(tmp_path / "c.npy", np.zeros((4, 3)))
    r = verify(rp, cp)
    assert r.rc == 2
    assert "the shapes differ: reference float64 (3, 4), candidate float64 (4, 3)" in r.err
    assert only_item(r.json())["result"] == "error"


def test_large_arrays_stream(tmp_path):
    """Several windows and thousands of blocks, and a deflated member larger
    than the inflate window."""
    ref, cand = noisy_pair((1_500_001,), "float32", n_bad=500)
    rp, cp = save(tmp_path / "r.npy", ref), save(tmp_path / "c.npy", cand)
    it = only_item(doc_of(verify(rp, cp), 1))
    bad = numpy_mismatches(ref, cand, 1.3e-6, 1e-5)
    assert it["mismatches"] == int(bad.sum())
    np.savez_compressed(tmp_path / "r.npz", x=ref)
    np.savez_compressed(tmp_path / "c.npz", x=cand)
    it = only_item(doc_of(verify(tmp_path / "r.npz", tmp_path / "c.npz"), 1))
    assert it["mismatches"] == int(bad.sum())
    assert it["name"].endswith("r.npz:x")


# ---- .npz ----

def zip64_npz(path, arrays):
    """An .npz of deflated members with zip64 fields throughout; checked below with zipfile
    and numpy.load."""
    members = []
    for name, arr in arrays.items():
        buf = io.BytesIO()
        np.save(buf, arr)
        data = buf.getvalue()
        co = zlib.compressobj(6, zlib.DEFLATED, -15)
        comp = co.compress(data) + co.flush()
        members.append((name + ".npy", 8, zlib.crc32(data), len(data), len(comp),
                        lambda f, comp=comp: f.write(comp)))
    return write_zip64(path, members)


def crc32_combine(crc1, crc2, len2):
    """zlib's crc32_combine: the CRC-32 of A + B from A's, B's and B's length, over GF(2)."""
    def times(mat, vec):
        out, i = 0, 0
        while vec:
            if vec & 1:
                out ^= mat[i]
            vec >>= 1
            i += 1
        return out

    def square(mat):
        return [times(mat, mat[n]) for n in range(32)]

    if len2 == 0:
        return crc1
    odd = [0xEDB88320] + [1 << n for n in range(31)]  # one zero bit
    even = square(odd)  # two
    odd = square(even)  # four
    while True:
        even = square(odd)
        if len2 & 1:
            crc1 = times(even, crc1)
        len2 >>= 1
        if not len2:
            break
        odd = square(even)
        if len2 & 1:
            crc1 = times(odd, crc1)
        len2 >>= 1
        if not len2:
            break
    return crc1 ^ crc2


def crc32_zeros(n, block=1 << 24):
    """The CRC-32 of n zero bytes (n a multiple of block) without reading them."""
    assert n % block == 0
    crc, piece, k = 0, zlib.crc32(bytes(block)), n // block
    while k:
        if k & 1:
            crc = crc32_combine(crc, piece, block)
        piece = crc32_combine(piece, piece, block)
        block *= 2
        k >>= 1
    return crc


def huge_zeros_npz(path, shape, fortran, stored=False):
    """An .npz in numpy's layout holding x.npy, a float64 array of zeros of `shape`, far
    larger than the file: the .npy header numpy writes, then the zeros — deflated, one
    stream written a fully flushed 16 MiB block at a time (every block compresses to the
    same bytes), or stored, left as a hole in a sparse file."""
    hdr = io.BytesIO()
    np.lib.format.write_array_header_1_0(hdr, {"descr": "<f8", "fortran_order": fortran,
                                               "shape": shape})
    header = hdr.getvalue()
    nbytes = math.prod(shape) * 8
    block = 1 << 24
    crc = crc32_combine(zlib.crc32(header), crc32_zeros(nbytes, block), nbytes)
    usize = len(header) + nbytes
    if stored:
        def write(f):
            f.write(header)
            f.seek(nbytes, io.SEEK_CUR)
        return write_zip64(path, [("x.npy", 0, crc, usize, usize, write)])
    co = zlib.compressobj(9, zlib.DEFLATED, -15)
    first = co.compress(header) + co.flush(zlib.Z_FULL_FLUSH)
    zeros = co.compress(bytes(block)) + co.flush(zlib.Z_FULL_FLUSH)
    end = co.flush()
    count = nbytes // block

    def write(f):
        f.write(first)
        for _ in range(count):
            f.write(zeros)
        f.write(end)
    return write_zip64(path, [("x.npy", 8, crc, usize, len(first) + count * len(zeros) + len(end), write)])


def force_zip64_npz(path, arrays):
    """zip64 local headers (zipfile's force_zip64), stored members."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as zf:
        for name, arr in arrays.items():
            with zf.open(name + ".npy", "w", force_zip64=True) as f:
                np.save(f, arr)
    return path


def test_npz_stored_deflated_zip64_member_by_member(tmp_path):
    a, a2 = noisy_pair((40, 30), "float32", n_bad=5)
    b, b2 = noisy_pair((100,), "int64", n_bad=2)
    c = np.arange(12, dtype=">f8").reshape(3, 4)
    ref = {"a": a, "b": b, "c": c}
    cand = {"a": a2, "b": b2, "c": c}
    np.savez(tmp_path / "stored.npz", **ref)
    np.savez_compressed(tmp_path / "deflated.npz", **cand)
    zip64_npz(tmp_path / "z64.npz", cand)
    force_zip64_npz(tmp_path / "f64.npz", cand)
    for p in ("z64.npz", "f64.npz"):
        with np.load(tmp_path / p) as z:  # the crafted archives are valid
            assert np.array_equal(z["c"], c)
    assert any(zi.compress_type == zipfile.ZIP_DEFLATED for zi in zipfile.ZipFile(tmp_path / "deflated.npz").infolist())
    expect = {"a": int(numpy_mismatches(a, a2, 1.3e-6, 1e-5).sum()), "b": int((b != b2).sum()), "c": 0}
    for cand_file in ("deflated.npz", "z64.npz", "f64.npz"):
        doc = doc_of(verify(tmp_path / "stored.npz", tmp_path / cand_file), 1)
        got = {it["name"].rsplit(":", 1)[1]: it["mismatches"] for it in doc["items"]}
        assert got == expect, cand_file
        assert doc["summary"] == {"compared": 3, "passed": 1, "failed": 2, "errors": 0}


def test_huge_zeros_npz_builder_is_numpys_layout(tmp_path):
    """The builder below, at a size numpy can load whole: zipfile checks the CRC-32 as it
    reads, numpy the header and the data."""
    assert crc32_zeros(3 << 24) == zlib.crc32(bytes(3 << 24))
    for stored in (False, True):
        p = huge_zeros_npz(tmp_path / f"small{stored}.npz", (4096, 1024), True, stored=stored)
        with np.load(p) as z:
            x = z["x"]
        assert x.shape == (4096, 1024) and x.flags.f_contiguous and not x.any()


def memory_available():
    fields = dict(line.split(":", 1) for line in open("/proc/meminfo"))
    return sum(int(fields[k].split()[0]) * 1024 for k in ("MemAvailable", "SwapFree") if k in fields)


def test_npz_member_too_big_to_hold_is_refused_by_name(tmp_path):
    """Issue 25: a 64 MB .npz whose deflated member is a 64 GiB array in Fortran order, against
    the same array in C order. Read out of order it would have to be inflated whole: verify
    checks its size (the .npy header inside the zip, and the zip's sizes) against what it can
    take first, and refuses naming the file, the member and the size — no "out of memory"
    naming nothing, no 64 GiB allocated."""
    shape = (65536, 131072)  # float64: 64 GiB
    ref = huge_zeros_npz(tmp_path / "ref.npz", shape, False, stored=True)
    cand = huge_zeros_npz(tmp_path / "cand.npz", shape, True)
    assert cand.stat().st_size < 70 << 20 and ref.stat().st_blocks * 512 < 1 << 20
    # numpy itself reads what the archives say
    for p, fortran in ((ref, False), (cand, True)):
        with zipfile.ZipFile(p) as zf:
            assert zf.getinfo("x.npy").file_size == 128 + (64 << 30)
            with zf.open("x.npy") as m:
                assert np.lib.format.read_magic(m) == (1, 0)
                assert np.lib.format.read_array_header_1_0(m) == (shape, fortran, np.dtype("<f8"))
        with np.load(p) as z:
            assert z.files == ["x"]
    # The limit: under `ulimit -d` of 8 GiB (a batch system's, or a user's) where the sanitizers
    # allow one (ASan reserves terabytes of shadow memory, which counts); under ASan, the memory
    # available, which must then be below 64 GiB.
    asan = b"__asan_init" in BINARY.read_bytes()
    if asan and memory_available() > 48 << 30:
        pytest.skip("this machine could hold 64 GiB, and ASan cannot run under ulimit -d")
    limit = None if asan else 8 << 30
    started = time.monotonic()
    r = verify_limited(limit, ref, cand)
    assert time.monotonic() - started < 20
    assert r.rc == 2, r
    assert "out of memory" not in r.err
    assert (f"gpuopt: verify: cannot read '{cand}:x.npy': in Fortran order against the reference's "
            "C order, this deflated member has to be inflated whole to be read out of order: 64 GiB "
            "(float64 (65536, 131072)), and this process can take ") in r.err, r
    assert ("(the memory available, MemAvailable)" if asan else "more (ulimit -d)") in r.err, r
    assert "np.ascontiguousarray" in r.err
    item = only_item(r.json())
    assert item["result"] == "error" and f"'{cand}:x.npy'" in item["error"]


def test_npz_directory_larger_than_deflate_can_inflate(tmp_path):
    """A zip directory that says a member inflates to more than its compressed bytes can (deflate
    expands at most 1032 to 1) is damaged: refused before anything is inflated or allocated."""
    np.savez_compressed(tmp_path / "r.npz", x=np.zeros(1000))
    data = bytearray((tmp_path / "r.npz").read_bytes())
    cd = struct.unpack("<I", data[data.rfind(b"PK\x05\x06") + 16:][:4])[0]
    csize = struct.unpack("<I", data[cd + 20:cd + 24])[0]
    data[cd + 24:cd + 28] = struct.pack("<I", 1033 * (csize + 2))
    (tmp_path / "c.npz").write_bytes(bytes(data))
    r = verify(tmp_path / "r.npz", tmp_path / "c.npz")
    assert r.rc == 2, r
    assert (f"gpuopt: verify: cannot read '{tmp_path / 'c.npz'}': bad central directory: member 'x.npy' "
            f"says it inflates from {csize} bytes to {1033 * (csize + 2)}, more than deflate can expand "
            "(at most 1032 to 1)") in r.err, r


@pytest.mark.parametrize("save_npz", [np.savez, np.savez_compressed])
def test_npz_layouts_out_of_order(tmp_path, save_npz):
    """C order against Fortran order inside archives: stored members are read where they lie,
    deflated ones inflated; the mismatches are numpy's either way, and a stored member changed
    under its CRC-32 is still caught when read out of order."""
    ref, cand = noisy_pair((31, 17, 5), "float64", n_bad=6, nans=False)
    save_npz(tmp_path / "r.npz", x=np.asarray(ref, order="C"))
    save_npz(tmp_path / "c.npz", x=np.asarray(cand, order="F"))
    it = only_item(doc_of(verify("--show", "100", tmp_path / "r.npz", tmp_path / "c.npz"), 1))
    bad = numpy_mismatches(ref, cand, 1e-7, 1e-7)
    assert it["mismatches"] == int(bad.sum())
    assert [tuple(m["index"]) for m in it["first_mismatches"]] == [tuple(map(int, ix)) for ix in np.argwhere(bad)]
    if save_npz is np.savez:
        data = bytearray((tmp_path / "c.npz").read_bytes())
        at = data.find(np.asarray(cand, order="F").tobytes(order="A")[-16:])
        data[at] ^= 1
        (tmp_path / "c2.npz").write_bytes(bytes(data))
        r = verify(tmp_path / "r.npz", tmp_path / "c2.npz")
        assert r.rc == 2 and f"cannot read '{tmp_path / 'c2.npz'}:x.npy': member 'x.npy' is damaged: its CRC-32 does not match" in r.err, r


def test_npz_missing_member_is_a_difference(tmp_path):
    np.savez(tmp_path / "r.npz", x=np.ones(3), y=np.ones(2))
    np.savez(tmp_path / "c.npz", x=np.ones(3), z=np.ones(2))
    doc = doc_of(verify(tmp_path / "r.npz", tmp_path / "c.npz"), 1)
    by = {it["name"].rsplit(":", 1)[1]: it for it in doc["items"]}
    assert by["x"]["result"] == "pass"
    assert by["y"]["kind"] == "missing" and by["y"]["note"] == "missing in the candidate"
    assert by["z"]["kind"] == "missing" and by["z"]["note"] == "missing in the reference"
    text = run("verify", tmp_path / "r.npz", tmp_path / "c.npz").out
    assert "r.npz:y: missing in the candidate" in text


def npy_bytes(a):
    b = io.BytesIO()
    np.save(b, a)
    return b.getvalue()


@pytest.mark.parametrize("compression", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
def test_npz_members_are_the_arrays_np_load_gives(tmp_path, compression):
    """np.load(f)[key] reads the member stored as key, else key + ".npy", and
    any member whose bytes are a .npy array: verify compares the same ones."""
    def npz(name, members):
        with zipfile.ZipFile(tmp_path / name, "w", compression) as zf:
            for k, v in members.items():
                zf.writestr(k, v)
        return tmp_path / name
    ref = npz("ref.npz", {"a.npy": npy_bytes(np.arange(5.0))})
    noext = npz("noext.npz", {"a": npy_bytes(np.arange(5.0)), "notes": b"not an array"})
    both = npz("both.npz", {"a.npy": npy_bytes(np.arange(5.0)), "a": npy_bytes(np.arange(5.0) + 1)})
    assert (np.load(noext)["a"] == np.arange(5.0)).all() and (np.load(both)["a"] == np.arange(5.0) + 1).all()
    r = verify(ref, noext)
    assert r.rc == 0, r
    assert f"{noext}: member 'notes' is not a .npy array: not compared" in r.out, r
    r = verify(ref, both)
    assert r.rc == 1 and json.loads(r.out)["items"][0]["mismatches"] == 5, r
    assert f"{both}: member 'a.npy' is not compared: numpy loads member 'a' for the name 'a'" in r.out, r


def test_npz_damaged_member(tmp_path):
    np.savez_compressed(tmp_path / "r.npz", x=np.arange(1000.0))
    data = bytearray((tmp_path / "r.npz").read_bytes())
    # flip bytes in the middle of the compressed stream
    mid = len(data) // 3
    data[mid:mid + 4] = bytes(255 - v for v in data[mid:mid + 4])
    (tmp_path / "c.npz").write_bytes(bytes(data))
    r = verify(tmp_path / "r.npz", tmp_path / "c.npz")
    assert r.rc == 2, r
    assert f"gpuopt: verify: cannot read '{tmp_path / 'c.npz'}:x.npy': member 'x.npy' is damaged" in r.err
    # a stored member whose bytes changed: the CRC says so
    np.savez(tmp_path / "s.npz", x=np.arange(100.0))
    data = bytearray((tmp_path / "s.npz").read_bytes())
    at = data.find(np.arange(100.0).tobytes()[800 - 16:800 - 8])
    data[at] ^= 1
    (tmp_path / "s2.npz").write_bytes(bytes(data))
    r = verify(tmp_path / "s.npz", tmp_path / "s2.npz")
    assert r.rc == 2 and "CRC-32 does not match" in r.err


def test_npz_damage_found_while_streaming_names_the_damaged_side(tmp_path):
    """Damage in a deflated member past what is inflated to read its header is found during the
    comparison: the message names the archive that is damaged, not the reference."""
    x = np.zeros(3 << 20)
    x[::1000] = np.arange(len(x[::1000]))
    np.savez_compressed(tmp_path / "r.npz", x=x)
    np.savez_compressed(tmp_path / "c.npz", x=x)
    data = bytearray((tmp_path / "c.npz").read_bytes())
    at = data.rfind(b"PK\x01\x02") - 200  # near the end of the member's compressed bytes
    data[at:at + 4] = bytes(255 - v for v in data[at:at + 4])
    (tmp_path / "c2.npz").write_bytes(bytes(data))
    for args, bad in (((tmp_path / "r.npz", tmp_path / "c2.npz"), "c2.npz"),
                      ((tmp_path / "c2.npz", tmp_path / "r.npz"), "c2.npz")):
        r = verify(*args)
        assert r.rc == 2, r
        assert f"gpuopt: verify: cannot read '{tmp_path / bad}:x.npy': member 'x.npy'" in r.err, r


# ---- tables ----

def write_csv(path, header, rows, sep=","):
    lines = [sep.join(header)] + [sep.join(str(v) for v in row) for row in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_csv_numeric_columns_match_isclose(tmp_path):
    n = 400
    x = RNG.standard_normal(n)
    y = x * (1 + RNG.uniform(-2e-7, 2e-7, n))
    y[[5, 50, 300]] += 1e-3
    ids = np.arange(n)
    names = [f"n{i}" for i in range(n)]
    rows_r = [(i, nm, repr(v), i * 2) for i, nm, v in zip(ids, names, x)]
    rows_c = [(i, nm, repr(v), i * 2) for i, nm, v in zip(ids, names, y)]
    rows_c[7] = (7, "CHANGED", repr(y[7]), 14)
    rows_c[8] = (8, "n8", repr(y[8]), 17)
    rp = write_csv(tmp_path / "r.csv", ["id", "name", "value", "twice"], rows_r)
    cp = write_csv(tmp_path / "c.csv", ["id", "name", "value", "twice"], rows_c)
    doc = doc_of(verify(rp, cp), 1)
    t = only_item(doc)
    assert t["kind"] == "table" and t["rows"]["reference"] == n and t["rows"]["matched"] == n
    cols = {c["name"]: c for c in t["columns"]}
    assert cols["id"]["type"] == "integer" and cols["id"]["result"] == "pass"
    assert cols["name"]["type"] == "text" and cols["name"]["mismatches"] == 1
    assert cols["name"]["first_mismatches"][0] == {"row": 7, "line": 9, "key": None, "ref": "n7",
                                                    "cand": "CHANGED"}
    assert cols["value"]["type"] == "float"
    assert cols["value"]["mismatches"] == int((~np.isclose(y, x, rtol=1e-7, atol=1e-7)).sum())
    assert cols["value"]["max_abs_error"]["row"] in (5, 50, 300)
    assert cols["twice"]["mismatches"] == 1 and cols["twice"]["first_mismatches"][0]["row"] == 8
    # looser tolerance: only the text and integer differences are left
    t = only_item(doc_of(verify("--rtol", "1e-2", "--atol", "1e-2", rp, cp), 1))
    cols = {c["name"]: c for c in t["columns"]}
    assert cols["value"]["result"] == "pass" and cols["twice"]["result"] == "fail"


def test_csv_key_and_unordered(tmp_path):
    header = ["id", "group", "score"]
    rows = [(i, "abc"[i % 3], round(float(v), 6)) for i, v in enumerate(RNG.standard_normal(50))]
    rp = write_csv(tmp_path / "r.csv", header, rows)
    shuffled = [rows[i] for i in RNG.permutation(len(rows))]
    cp = write_csv(tmp_path / "c.csv", header, shuffled)
    # row by row the shuffled table differs; by key and as a multiset it does not
    assert verify(rp, cp).rc == 1
    t = only_item(doc_of(verify("--key", "id", rp, cp), 0))
    assert t["rows"]["matched"] == 50 and "--key id" in t["note"]
    assert only_item(doc_of(verify("--unordered", rp, cp), 0))["result"] == "pass"
    # a changed score is found by key, with the key in the report
    changed = list(shuffled)
    k = next(i for i, row in enumerate(changed) if row[0] == 17)
    changed[k] = (17, changed[k][1], changed[k][2] + 1)
    changed.append((99, "z", 0.0))
    cp2 = write_csv(tmp_path / "c2.csv", header, changed)
    t = only_item(doc_of(verify("--key", "id", rp, cp2), 1))
    assert t["rows"]["candidate_only"] == 1 and t["rows"]["unmatched"] == ["candidate only: id=99 (line 52)"]
    score = next(c for c in t["columns"] if c["name"] == "score")
    assert score["mismatches"] == 1 and score["first_mismatches"][0]["key"] == "id=17"
    assert score["first_mismatches"][0]["row"] == 17
    # two key columns
    t = only_item(doc_of(verify("--key", "group,id", rp, cp), 0))
    assert t["rows"]["matched"] == 50
    # multiset with a changed row: one pair differs
    assert only_item(doc_of(verify("--unordered", rp, cp2), 1))["rows"]["candidate_only"] == 1
    assert verify("--key", "nope", rp, cp).rc == 2


def test_tsv_quotes_missing_values(tmp_path):
    r = tmp_path / "r.tsv"
    c = tmp_path / "c.tsv"
    r.write_bytes(b'\xef\xbb\xbfname\tx\r\n"a\ttab"\t1.5\r\n"multi\nline"\tNA\r\nq\t\r\n')
    c.write_bytes(b'name\tx\n"a\ttab"\t1.5000000001\n"multi\nline"\tnan\nq\tNaN\n')
    t = only_item(doc_of(verify(r, c), 0))
    assert [col["type"] for col in t["columns"]] == ["text", "float"]
    assert verify("--no-equal-nan", r, c).rc == 1


@pytest.mark.parametrize("ref_text,cand_text,message", [
    ("a,b\n1,2\n3\n", "a,b\n1,2\n3,4\n", "ragged rows: row 1 (line 3) has 1 field, the header has 2"),
    ("a,b\n1,2\n", "a,c\n1,2\n", "the headers differ: column 'b' is only in the reference; "
                                  "column 'c' is only in the candidate"),
    ('a,b\n1,"open\n', "a,b\n1,2\n", "line 2: a quoted field is not closed before the end of the file"),
    ("a,a\n1,2\n", "a,b\n1,2\n", "the header names column 'a' twice"),
    ("", "a\n1\n", "empty file: no header row"),
])
def test_bad_tables(tmp_path, ref_text, cand_text, message):
    rp, cp = tmp_path / "r.csv", tmp_path / "c.csv"
    rp.write_text(ref_text)
    cp.write_text(cand_text)
    r = verify(rp, cp)
    assert r.rc == 2, r
    assert message in r.err
    assert str(rp) in r.err
    assert only_item(r.json())["result"] == "error"


def test_row_count_difference(tmp_path):
    rp = write_csv(tmp_path / "r.csv", ["a"], [(1,), (2,), (3,)])
    cp = write_csv(tmp_path / "c.csv", ["a"], [(1,), (2,)])
    t = only_item(doc_of(verify(rp, cp), 1))
    assert t["rows"] == {"reference": 3, "candidate": 2, "matched": 2, "reference_only": 1,
                         "candidate_only": 0, "unmatched": ["reference only: row 2 (line 4)"]}


# ---- recall@k ----

def recall_fixture(tmp_path, nq=200, k=10, extra=5):
    exact = np.stack([RNG.permutation(1000)[: k + extra] for _ in range(nq)]).astype(np.int64)
    approx = exact.copy()
    for q in range(nq):
        miss = RNG.integers(0, 4)
        approx[q, k - miss:k] = 2000 + np.arange(miss)  # ids not in the true top k
    approx[0, :] = approx[0, ::-1]  # order within the top k does not matter...
    approx[1, :k] = -1               # ...and -1 (no neighbour) never counts
    np.save(tmp_path / "exact.npy", exact)
    np.save(tmp_path / "approx.npy", approx.astype(np.int32))
    per_query = [len(set(exact[q, :k]) & set(int(v) for v in approx[q, :k] if v >= 0)) / k
                 for q in range(nq)]
    return tmp_path / "exact.npy", tmp_path / "approx.npy", np.array(per_query)


def test_recall_by_ids(tmp_path):
    ex, ap, per_query = recall_fixture(tmp_path)
    it = only_item(doc_of(verify("--recall-k", "10", "--min-recall", "0.5", ex, ap), 0))
    rc = it["recall"]
    assert rc["mean"] == pytest.approx(per_query.mean())
    assert rc["min"] == pytest.approx(per_query.min()) and rc["min_query"] == int(np.argmin(per_query))
    assert rc["queries"] == 200 and rc["k"] == 10 and rc["by_distance"] is False
    hist = [int(((per_query >= i / 10 - 1e-9) & (per_query < (i + 1) / 10 - 1e-9)).sum()) for i in range(10)]
    assert [h["queries"] for h in rc["histogram"][:10]] == hist
    assert rc["histogram"][10]["queries"] == int((per_query == 1).sum())
    assert rc["lowest"][0]["query"] == 1 and rc["lowest"][0]["recall"] == 0
    r = verify("--recall-k", "10", "--min-recall", "0.99", ex, ap)
    assert r.rc == 1 and r.json()["items"][0]["recall"]["below_min"] == int((per_query < 0.99).sum())
    text = run("verify", "--recall-k", "10", ex, ap).out
    assert "recall@10" in text and "mean" in text and "distribution over queries" in text
    # k larger than the rows are wide: incompatible
    r = verify("--recall-k", "16", ex, ap)
    assert r.rc == 2 and "must be a (200, >= 16) integer (neighbour ids) array" in r.err


def test_recall_by_distance_counts_ties(tmp_path):
    nq, k = 50, 5
    true_d = np.sort(RNG.uniform(0, 10, (nq, k + 3)), axis=1)
    ids = np.tile(np.arange(k + 3), (nq, 1))
    cand_ids = ids.copy()
    cand_d = true_d.copy()
    # query 0: the 5th neighbour swapped for another at the same distance (a tie)
    cand_ids[0, 4] = 777
    cand_d[0, 4] = true_d[0, 4] + 5e-4
    # query 1: the 5th neighbour swapped for a clearly farther one
    cand_ids[1, 4] = 778
    cand_d[1, 4] = true_d[1, 4] + 1.0
    for name, arr in [("i", ids), ("ci", cand_ids), ("d", true_d), ("cd", cand_d)]:
        np.save(tmp_path / f"{name}.npy", arr)
    p = lambda n: tmp_path / f"{n}.npy"
    by_id = only_item(doc_of(verify("--recall-k", k, p("i"), p("ci"))))["recall"]
    assert by_id["mean"] == pytest.approx((nq - 2 + 2 * 0.8) / nq)
    by_d = only_item(doc_of(verify("--recall-k", k, "--distances", p("d"), p("cd"), p("i"), p("ci"))))["recall"]
    assert by_d["by_distance"] is True and by_d["epsilon"] == pytest.approx(1e-3)
    assert by_d["mean"] == pytest.approx((nq - 1 + 0.8) / nq)
    assert by_d["min_query"] == 1
    tight = only_item(doc_of(verify("--recall-k", k, "--epsilon", "1e-4", "--distances", p("d"), p("cd"),
                                    p("i"), p("ci"))))["recall"]
    assert tight["mean"] == pytest.approx(by_id["mean"])


# ---- directories ----

def test_directories(tmp_path):
    ref, cand = tmp_path / "cpu", tmp_path / "gpu"
    for d in (ref, cand, ref / "sub", cand / "sub"):
        d.mkdir(exist_ok=True)
    a, a2 = noisy_pair((50,), "float64", n_bad=2, nans=False)
    save(ref / "a.npy", a)
    save(cand / "a.npy", a2)
    save(ref / "sub" / "same.npy", np.arange(4))
    save(cand / "sub" / "same.npy", np.arange(4))
    save(ref / "sub" / "gone.npy", np.arange(4))
    save(cand / "sub" / "extra.npy", np.arange(4))
    write_csv(ref / "t.csv", ["x"], [(1,), (2,)])
    write_csv(cand / "t.csv", ["x"], [(1,), (2,)])
    (ref / "notes.txt").write_text("ignored")
    (ref / ".hidden.npy").write_bytes(b"junk")
    doc = doc_of(verify(ref, cand), 1)
    by = {it["name"]: it for it in doc["items"]}
    assert set(by) == {"a.npy", "sub/gone.npy", "sub/same.npy", "t.csv"}
    assert by["a.npy"]["mismatches"] == int(numpy_mismatches(a, a2, 1e-7, 1e-7).sum())
    assert by["sub/gone.npy"]["kind"] == "missing"
    assert by["sub/same.npy"]["result"] == "pass" and by["t.csv"]["result"] == "pass"
    assert any("extra.npy" in n for n in doc["notices"])
    # a damaged file makes the whole run exit 2, the others are still reported
    (cand / "sub" / "same.npy").write_bytes(b"\x93NUMPY\x01\x00")
    doc = doc_of(verify(ref, cand), 2)
    assert {it["name"]: it["result"] for it in doc["items"]}["sub/same.npy"] == "error"
    assert len(doc["items"]) == 4
    r = verify(ref, tmp_path / "cpu" / "a.npy")
    assert r.rc == 2 and "is a directory" in r.err
    # an empty reference directory proves nothing
    (tmp_path / "empty").mkdir()
    r = verify(tmp_path / "empty", cand)
    assert r.rc == 2 and "nothing to compare" in r.err


# ---- bad input ----

def good_npy_bytes(arr=None):
    buf = io.BytesIO()
    np.save(buf, np.arange(12, dtype=np.float32).reshape(3, 4) if arr is None else arr)
    return buf.getvalue()


def long_header():
    data = bytearray(good_npy_bytes())
    hdr_end = 10 + struct.unpack("<H", bytes(data[8:10]))[0]
    dict_text = bytes(data[10:hdr_end]).rstrip()
    padded = dict_text + b" " * (12000 - len(dict_text) - 1) + b"\n"
    return b"\x93NUMPY\x02\x00" + struct.pack("<I", len(padded)) + padded + bytes(data[hdr_end:])


def object_array():
    buf = io.BytesIO()
    np.save(buf, np.array([{"a": 1}, [1, 2]], dtype=object), allow_pickle=True)
    return buf.getvalue()


BAD_NPY = [
    ("truncated", lambda: good_npy_bytes()[:-7], "truncated: the header says (3, 4) float32, 48 bytes of data, but the file has 41"),
    ("lying", lambda: good_npy_bytes().replace(b"(3, 4)", b"(3, 5)"), "truncated: the header says (3, 5) float32"),
    ("lying_short", lambda: good_npy_bytes().replace(b"(3, 4)", b"(2, 4)"), "the header does not describe the data"),
    ("long_header", long_header, "numpy itself refuses headers longer than 10000 bytes"),
    ("not_dict", lambda: good_npy_bytes().replace(b"{'descr'", b"['descr'"), "not a valid .npy header dict"),
    ("object", object_array, "object array (dtype '|O'): its data is a Python pickle, which gpuopt never loads"),
    ("magic", lambda: b"PK\x03\x04" + good_npy_bytes()[4:], "header is not a .npy header"),
    ("empty", lambda: b"", "empty file"),
    ("preamble", lambda: b"\x93NUMPY\x01", "truncated"),
    ("version", lambda: good_npy_bytes()[:6] + b"\x05\x00" + good_npy_bytes()[8:], "unsupported .npy format version 5.0"),
    ("strings", lambda: good_npy_bytes(np.array(["ab", "cd"])), "dtype '<U2' is not supported"),
    ("structured", lambda: good_npy_bytes(np.zeros(2, dtype=[("a", "<f4")])), "structured array"),
]


@pytest.mark.parametrize("name,make,message", BAD_NPY, ids=[b[0] for b in BAD_NPY])
@pytest.mark.parametrize("side", ["reference", "candidate"])
def test_bad_npy(tmp_path, name, make, message, side):
    bad = tmp_path / f"{name}.npy"
    bad.write_bytes(make())
    good = tmp_path / "good.npy"
    good.write_bytes(good_npy_bytes())
    args = (bad, good) if side == "reference" else (good, bad)
    for fmt in ("text", "json"):
        r = run("verify", "--format", fmt, *args)
        assert r.rc == 2, r
        assert f"gpuopt: verify: cannot read '{bad}': " in r.err, r.err
        assert message in r.err, r.err
    assert only_item(verify(*args).json())["result"] == "error"


def bad_zips():
    buf = io.BytesIO()
    np.savez(buf, x=np.arange(10.0), y=np.arange(3))
    z = buf.getvalue()
    eocd = z.rfind(b"PK\x05\x06")
    cd = struct.unpack("<I", z[eocd + 16:eocd + 20])[0]
    out = {}
    out["cd_offset"] = (z[:eocd + 16] + struct.pack("<I", len(z) + 50) + z[eocd + 20:], "bad central directory")
    bad = bytearray(z)
    bad[cd:cd + 4] = b"JUNK"
    out["cd_entry"] = (bytes(bad), "bad central directory: entry 1 is damaged")
    out["cd_count"] = (z[:eocd + 10] + struct.pack("<H", 60000) + z[eocd + 12:], "entries cannot fit")
    out["truncated"] = (z[: len(z) // 2], "no end-of-central-directory record")
    bad = bytearray(z)
    bad[cd + 42:cd + 46] = struct.pack("<I", 7)
    out["local_header"] = (bytes(bad), "the local header of 'x.npy' is not where the directory says")
    bad = bytearray(z)
    bad[cd + 10:cd + 12] = struct.pack("<H", 12)
    out["method"] = (bytes(bad), "uses compression method 12")
    out["not_zip"] = (b"hello, this is not a zip archive at all" * 3, "not a zip archive")
    return out


@pytest.mark.parametrize("name", list(bad_zips()))
def test_bad_npz(tmp_path, name):
    data, message = bad_zips()[name]
    bad = tmp_path / "bad.npz"
    bad.write_bytes(data)
    np.savez(tmp_path / "good.npz", x=np.arange(10.0), y=np.arange(3))
    r = verify(tmp_path / "good.npz", bad)
    assert r.rc == 2, r
    assert f"gpuopt: verify: cannot read '{bad}': " in r.err and message in r.err, r.err


def test_missing_and_unknown_files(tmp_path):
    good = tmp_path / "g.npy"
    good.write_bytes(good_npy_bytes())
    r = verify(tmp_path / "nope.npy", good)
    assert r.rc == 2 and f"cannot read '{tmp_path / 'nope.npy'}': No such file or directory" in r.err
    (tmp_path / "x.bin").write_bytes(b"\x00\x01")
    r = verify(tmp_path / "x.bin", good)
    assert r.rc == 2 and "not a .npy, .npz, .csv or .tsv file" in r.err
    # a .npy without its extension is recognised by its magic
    (tmp_path / "noext").write_bytes(good_npy_bytes())
    assert verify(tmp_path / "noext", good).rc == 0
    np.savez(tmp_path / "z.npz", x=np.ones(2))
    r = verify(good, tmp_path / "z.npz")
    assert r.rc == 2 and "one is a .npy file, the other a .npz file" in r.err
    # a directory against a path that does not exist: it is missing, not "not a directory"
    (tmp_path / "refdir").mkdir()
    for args in ((tmp_path / "refdir", tmp_path / "gone"), (tmp_path / "gone", tmp_path / "refdir")):
        r = verify(*args)
        assert r.rc == 2 and f"cannot read '{tmp_path / 'gone'}': No such file or directory" in r.err, r
        assert "is not" not in r.err


@pytest.mark.parametrize("args,message", [
    ([], "give REFERENCE and CANDIDATE"),
    (["a.npy"], "give CANDIDATE too"),
    (["a", "b", "c"], "too many paths"),
    (["--rtol", "-1", "a", "b"], "--rtol: '-1' is not a number >= 0"),
    (["--atol", "abc", "a", "b"], "--atol: 'abc' is not a number"),
    (["--ulp", "1", "--atol", "1", "a", "b"], "--ulp replaces --rtol / --atol"),
    (["--key", "x", "--unordered", "a", "b"], "--key and --unordered"),
    (["--min-recall", "0.5", "a", "b"], "go with --recall-k"),
    (["--recall-k", "0", "a", "b"], "--recall-k: '0' is not a whole number"),
    (["--format", "xml", "a", "b"], "--format: 'xml' is not text or json"),
    (["--bogus", "a", "b"], "unknown option '--bogus'"),
    (["--rtol"], "option --rtol needs a value"),
    (["--show", "500", "a", "b"], "--show: '500'"),
])
def test_usage_errors(args, message):
    r = run("verify", *args)
    assert r.rc == 2, r
    assert message in r.err, r.err
    assert r.out == ""


def test_help_is_complete():
    r = run("verify", "--help")
    assert r.rc == 0
    assert r.out == run("help", "verify").out
    assert "|cand − ref| ≤ atol + rtol·|ref|" in r.out and "REFERENCE as ref" in r.out
    for opt in ("--rtol", "--atol", "--ulp", "--equal-nan", "--no-equal-nan", "--allow-dtype", "--key",
                "--unordered", "--recall-k", "--distances", "--epsilon", "--min-recall", "--show",
                "--format", "--output", "--verbose"):
        assert opt in r.out, opt
    assert "verify" in run("--help").out


def test_text_report_and_output_file(tmp_path):
    ref, cand = noisy_pair((30, 3), "float32", n_bad=4)
    rp, cp = save(tmp_path / "r.npy", ref), save(tmp_path / "c.npy", cand)
    r = run("verify", rp, cp)
    assert r.rc == 1
    assert r.out.startswith(f"FAIL   {rp}  float32 (30, 3): ")
    for part in ("test: |cand - ref| <= 1e-05 + 1.3e-06 * |ref| (float32 defaults); NaN equals NaN",
                 "in the NaN pattern", "largest abs error", "largest rel error",
                 "relative L2 error ||cand - ref|| / ||ref||", "first mismatches:"):
        assert part in r.out, part
    assert "verify: FAIL: 1 compared: 0 passed, 1 differ" in r.out
    out = tmp_path / "report.json"
    r = run("verify", "--format", "json", "-o", out, rp, cp)
    assert r.rc == 1 and r.out == ""
    doc = json.loads(out.read_text())
    assert doc["tool"] == "gpuopt" and doc["command"] == "verify" and doc["result"] == "fail"
    r = run("verify", "-o", tmp_path / "missing-dir" / "x.txt", rp, cp)
    assert r.rc == 2 and "cannot write" in r.err
    same = run("verify", "-v", rp, rp)
    assert same.rc == 0 and "PASS" in same.out and "relative L2 error" in same.out


def test_h200_fft_record():
    """tests/e2e/fixtures/h200_verify_fft.json: gpuopt verify run on the H200 machine on
    NumPy's and CuPy's |rfft| of the same data (see tests/e2e/fixtures/README.md). The GPU
    sums in another order, so a few elements exceed the float32 defaults while the whole
    array agrees to 1.5e-7 in relative L2 norm."""
    import json
    doc = json.loads((ROOT / "tests" / "e2e" / "fixtures" / "h200_verify_fft.json").read_text())
    assert doc["command"] == "verify" and doc["result"] == "fail"
    (item,) = doc["items"]
    assert item["dtype"] == "float32" and item["shape"] == [512, 2049]
    assert item["elements"] == 512 * 2049 and 0 < item["mismatches"] < item["elements"] // 100
    assert item["rel_l2_error"] < 1e-6
    assert item["max_abs_error"]["value"] < 1e-4
