"""zip64 archives as numpy and zipfile write them only past 4 GB: built
front to back for the tests (tests/e2e/test_verify.py) and the fuzz corpus
(tests/fuzz/make_verify_corpus.py), which need them small."""
import struct


def write_zip64(path, members):
    """Writes path: a zip archive whose local and central headers use zip64 extra fields
    and records, front to back. members: (name, method, crc, usize, csize, write) with
    write(f) writing the member's csize bytes."""
    central = []
    with open(path, "wb") as out:
        for name, method, crc, usize, csize, write in members:
            off = out.tell()
            nm = name.encode()
            extra = struct.pack("<HHQQ", 1, 16, usize, csize)
            out.write(struct.pack("<IHHHHHIIIHH", 0x04034b50, 45, 0, method, 0, 0, crc,
                                  0xFFFFFFFF, 0xFFFFFFFF, len(nm), len(extra)) + nm + extra)
            start = out.tell()
            write(out)
            assert out.tell() - start == csize
            central.append((nm, method, crc, csize, usize, off))
        cd_off = out.tell()
        for nm, method, crc, csize, usize, off in central:
            extra = struct.pack("<HHQQQ", 1, 24, usize, csize, off)
            out.write(struct.pack("<IHHHHHHIIIHHHHHII", 0x02014b50, 45, 45, 0, method, 0, 0, crc,
                                  0xFFFFFFFF, 0xFFFFFFFF, len(nm), len(extra), 0, 0, 0, 0,
                                  0xFFFFFFFF) + nm + extra)
        cd_size = out.tell() - cd_off
        z64 = out.tell()
        n = len(central)
        out.write(struct.pack("<IQHHIIQQQQ", 0x06064b50, 44, 45, 45, 0, 0, n, n, cd_size, cd_off))
        out.write(struct.pack("<IIQI", 0x07064b50, 0, z64, 1))
        out.write(struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0))
    return path
