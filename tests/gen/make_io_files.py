#!/usr/bin/python3
"""Write the small .npy/.npz files that tests/ir/test_tensor_io.c reads.

Usage: /usr/bin/python3 tests/gen/make_io_files.py [--out DIR]
(default DIR: tests/ref/io). Needs numpy only. The files are committed; the
C test needs no Python. Every array holds arange-based values, so the test
can check each element without a second copy of the data:

  value of element i (C order) = i * 0.5 - 1   for float dtypes
                               = i - 3         for signed integers
                               = i             for uint8
                               = i % 3 == 0    for bool

Besides plain files in each supported dtype there are the layouts the reader
must convert (Fortran order, big-endian), every .npy format version, zip
archives as numpy.savez / savez_compressed write them, one written to an
unseekable stream (data descriptors), a hand-made zip64 archive, and files
the reader must refuse with a clear message.
"""
import argparse
import io
import os
import struct
import zipfile
import zlib

import numpy as np
from numpy.lib import format as npformat

SHAPE = (2, 3, 4)


def values(dtype, shape=SHAPE):
    n = int(np.prod(shape))
    i = np.arange(n)
    dt = np.dtype(dtype)
    if dt.kind == "f":
        v = i * 0.5 - 1
    elif dt.kind == "i":
        v = i - 3
    elif dt.kind == "u":
        v = i
    else:
        v = i % 3 == 0
    return v.astype(dt).reshape(shape)


def npy_bytes(arr, version=None):
    f = io.BytesIO()
    npformat.write_array(f, arr, version=version, allow_pickle=True)
    return f.getvalue()


def zip64_archive(members):
    """A stored zip whose central directory and end record use zip64 forms,
    as a writer does past 4 GiB or 65535 entries (made small by hand)."""
    out, central = io.BytesIO(), io.BytesIO()
    for name, data in members:
        name = name.encode()
        crc = zlib.crc32(data) & 0xFFFFFFFF
        off = out.tell()
        extra = struct.pack("<HHQQ", 1, 16, len(data), len(data))
        out.write(struct.pack("<IHHHHHIIIHH", 0x04034B50, 45, 0, 0, 0, 33, crc,
                              0xFFFFFFFF, 0xFFFFFFFF, len(name), len(extra)))
        out.write(name + extra + data)
        cextra = struct.pack("<HHQQQ", 1, 24, len(data), len(data), off)
        central.write(struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 45, 0, 0, 0, 33,
                                  crc, 0xFFFFFFFF, 0xFFFFFFFF, len(name), len(cextra),
                                  0, 0, 0, 0, 0xFFFFFFFF))
        central.write(name + cextra)
    cd = central.getvalue()
    cd_off = out.tell()
    out.write(cd)
    eocd64_off = out.tell()
    n = len(members)
    out.write(struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, n, n, len(cd), cd_off))
    out.write(struct.pack("<IIQI", 0x07064B50, 0, eocd64_off, 1))
    out.write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF,
                          0xFFFFFFFF, 0))
    return out.getvalue()


class Unseekable(io.RawIOBase):
    """A write-only stream without tell/seek: zipfile then writes data
    descriptors after each member instead of patching its local header."""

    def __init__(self):
        self.buf = bytearray()

    def writable(self):
        return True

    def write(self, b):
        self.buf += b
        return len(b)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(os.path.dirname(here), "ref", "io"))
    out = ap.parse_args().out
    os.makedirs(out, exist_ok=True)

    def put(name, data):
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)

    for dt in ("float32", "float16", "float64", "int8", "int16", "int32", "int64",
               "uint8", "bool"):
        put("%s.npy" % dt, npy_bytes(values(dt)))
    put("scalar.npy", npy_bytes(np.array(2.5, dtype=np.float32)))
    put("vector.npy", npy_bytes(values("int64", (5,))))
    put("empty.npy", npy_bytes(np.zeros((0, 3), dtype=np.float32)))
    put("fortran.npy", npy_bytes(np.asfortranarray(values("float32"))))
    put("bigendian.npy", npy_bytes(values("float32").astype(">f4")))
    put("bigendian_i64.npy", npy_bytes(values("int64").astype(">i8")))
    put("fortran_bigendian.npy",
        npy_bytes(np.asfortranarray(values("int32").astype(">i4"))))
    put("v2.npy", npy_bytes(values("float32"), version=(2, 0)))
    put("v3.npy", npy_bytes(values("float32"), version=(3, 0)))
    # refused, each with its own message
    put("uint16.npy", npy_bytes(values("uint16")))
    put("complex.npy", npy_bytes(np.arange(4, dtype=np.complex64)))
    put("unicode.npy", npy_bytes(np.array(["ab", "c"])))
    put("structured.npy", npy_bytes(np.zeros(2, dtype=[("a", "<f4"), ("b", "<i4")])))
    put("object.npy", npy_bytes(np.array([1, "x"], dtype=object)))

    arrays = {"a": values("float32"), "b.weight": values("int64", (5,)),
              "flags": values("bool", (3, 2)), "s": np.array(7, dtype=np.int32)}
    np.savez(os.path.join(out, "savez.npz"), **arrays)
    np.savez_compressed(os.path.join(out, "savez_compressed.npz"), **arrays)
    # data descriptors: the same members written to an unseekable stream
    raw = Unseekable()
    with zipfile.ZipFile(raw, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for k, v in arrays.items():
            with z.open(k + ".npy", "w") as f:
                f.write(npy_bytes(v))
    put("descriptor.npz", bytes(raw.buf))
    put("zip64.npz", zip64_archive([(k + ".npy", npy_bytes(v)) for k, v in arrays.items()]))
    # members that are not arrays
    with zipfile.ZipFile(os.path.join(out, "not_npy.npz"), "w") as z:
        z.writestr("a.npy", npy_bytes(values("float32")))
        z.writestr("readme.txt", b"hello")
    with zipfile.ZipFile(os.path.join(out, "bzip2.npz"), "w", compression=zipfile.ZIP_BZIP2) as z:
        z.writestr("a.npy", npy_bytes(values("float32")))
    # every file above must read back as written (the generator's self-check)
    for name in sorted(os.listdir(out)):
        if name.endswith(".npz") and name not in ("not_npy.npz", "bzip2.npz"):
            with np.load(os.path.join(out, name)) as z:
                for k, v in arrays.items():
                    assert np.array_equal(z[k], v), (name, k)
    print("wrote %d files to %s" % (len(os.listdir(out)), os.path.relpath(out)))


if __name__ == "__main__":
    main()
