#!/usr/bin/python3
"""Writes the seed corpora of fuzz_npy, fuzz_npz and fuzz_csv: small files
written by numpy (every dtype family, byte order, layout and format version;
stored, deflated and zip64 archives) and broken ones (truncated, lying or
oversized headers, pickles, damaged zip directories, ragged tables).
Run from anywhere: /usr/bin/python3 tests/fuzz/make_verify_corpus.py"""
import io
import os
import struct
import sys
import tempfile
import zipfile
import zlib
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "e2e"))
from zipbuild import write_zip64  # noqa: E402

HERE = Path(__file__).resolve().parent / "corpus"


def npy_bytes(arr, version=None):
    f = io.BytesIO()
    if version is None:
        np.save(f, arr, allow_pickle=True)
    else:
        np.lib.format.write_array(f, arr, version=version, allow_pickle=True)
    return f.getvalue()


def write(sub, name, data):
    (HERE / sub).mkdir(parents=True, exist_ok=True)
    (HERE / sub / name).write_bytes(data)


def zip64_archive(members):
    """A zip whose headers use zip64 extra fields and records, as zipfile
    writes only for members over 4 GB: deflated members (name, data)."""
    rows = []
    for name, data in members:
        raw = zlib.compressobj(6, zlib.DEFLATED, -15)
        comp = raw.compress(data) + raw.flush()
        rows.append((name, 8, zlib.crc32(data), len(data), len(comp), lambda f, c=comp: f.write(c)))
    with tempfile.TemporaryDirectory() as d:
        return Path(write_zip64(Path(d) / "a.npz", rows)).read_bytes()


def npz_bytes(arrays, compressed):
    f = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(f, **arrays)
    return f.getvalue()


def main():
    rng = np.random.default_rng(7)
    a = rng.standard_normal((3, 4))
    # npy: every dtype family, both byte orders, both layouts, all versions
    for dt in ["?", "i1", "<i2", ">i4", "<i8", "u1", ">u2", "<u4", ">u8", "<f2", ">f4", "<f8",
               "<c8", ">c16"]:
        arr = (a * 10).astype(dt)
        write("npy", f"{dt.replace('<', 'le_').replace('>', 'be_').replace('?', 'bool')}.npy",
              npy_bytes(arr))
    write("npy", "fortran.npy", npy_bytes(np.asfortranarray(a.astype("f4"))))
    write("npy", "zero_d.npy", npy_bytes(np.array(3.5)))
    write("npy", "empty.npy", npy_bytes(np.zeros((0, 5), "f4")))
    write("npy", "v2.npy", npy_bytes(a, version=(2, 0)))
    write("npy", "v3.npy", npy_bytes(a, version=(3, 0)))
    write("npy", "nd5.npy", npy_bytes(np.arange(32, dtype="i2").reshape(2, 2, 2, 2, 2)))
    good = npy_bytes(a.astype("f4"))
    write("npy", "bad_truncated.npy", good[:-5])
    write("npy", "bad_lying_shape.npy", good.replace(b"(3, 4)", b"(4, 4)"))
    write("npy", "bad_not_dict.npy", good[:10] + b"[1, 2, 3]".ljust(len(good) - 11) + b"\n")
    big = bytearray(npy_bytes(a, version=(2, 0)))
    big[8:12] = struct.pack("<I", 20000)
    write("npy", "bad_long_header.npy", bytes(big))
    write("npy", "bad_object.npy", npy_bytes(np.array([{"a": 1}, None], dtype=object)))
    write("npy", "bad_magic.npy", b"\x93NUMPX" + good[6:])
    write("npy", "bad_version.npy", good[:6] + b"\x04\x00" + good[8:])
    # npz: stored, deflated, zip64; broken ones
    arrays = {"x": a.astype("f4"), "ids": np.arange(6, dtype="i8").reshape(2, 3),
              "flag": np.array([True, False])}
    write("npz", "stored.npz", npz_bytes(arrays, False))
    write("npz", "deflated.npz", npz_bytes(arrays, True))
    write("npz", "zip64.npz", zip64_archive([("x.npy", npy_bytes(a)), ("y.npy", npy_bytes(a.T))]))
    z = npz_bytes(arrays, True)
    write("npz", "bad_truncated.npz", z[: len(z) // 2])
    eocd = z.rfind(b"PK\x05\x06")
    bad = bytearray(z)
    bad[eocd + 16:eocd + 20] = struct.pack("<I", len(z) + 100)
    write("npz", "bad_cd_offset.npz", bytes(bad))
    bad = bytearray(z)
    cd = struct.unpack("<I", z[eocd + 16:eocd + 20])[0]
    bad[cd:cd + 4] = b"XXXX"
    write("npz", "bad_cd_entry.npz", bytes(bad))
    bad = bytearray(z)
    first = z.find(b"x.npy") + 40
    bad[first:first + 8] = b"\xff" * 8
    write("npz", "bad_deflate.npz", bytes(bad))
    # a directory that says a member inflates to more than deflate can make of its bytes
    bad = bytearray(z)
    csize = struct.unpack("<I", z[cd + 20:cd + 24])[0]
    bad[cd + 24:cd + 28] = struct.pack("<I", 1033 * (csize + 2))
    write("npz", "bad_inflate_ratio.npz", bytes(bad))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("notes.txt", "not an array")
        zf.writestr("x.npy", npy_bytes(a))
    write("npz", "mixed.npz", buf.getvalue())
    # csv / tsv
    write("csv", "plain.csv", b"id,name,value\n1,alpha,0.5\n2,beta,1e-3\n3,gamma,nan\n")
    write("csv", "quoted.csv", b'id,text\r\n1,"a, ""quoted"" field"\r\n2,"two\nlines"\r\n')
    write("csv", "bom_blank.csv", b"\xef\xbb\xbfa,b\n\n1,2\n\n3,4")
    write("csv", "table.tsv", b"k\tv\nx\t1.5\ny\tNA\n")
    write("csv", "bad_ragged.csv", b"a,b,c\n1,2,3\n4,5\n")
    write("csv", "bad_quote.csv", b'a,b\n1,"never closed\n')
    write("csv", "bad_after_quote.csv", b'a,b\n"x"y,2\n')
    write("csv", "bad_dup_header.csv", b"a,a\n1,2\n")


if __name__ == "__main__":
    main()
