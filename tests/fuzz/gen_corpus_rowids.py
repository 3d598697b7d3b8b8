#!/usr/bin/env python3
"""Seeds for fuzz_rowids: each stable-row-id fixture fragment's inline RowIdSequence (field 5
of each DataFragment, read straight from the manifests' protobuf) and one sequence per segment
kind. Output: tests/fuzz/corpus/fuzz_rowids/<sha1>, each two bytes of row count (the
fragment's physical rows) then the sequence."""
import glob
import hashlib
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus", "fuzz_rowids")
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))


def varint(v):
    out = bytearray()
    while True:
        c = v & 0x7F
        v >>= 7
        out.append(c | (0x80 if v else 0))
        if not v:
            return bytes(out)


def read_varint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << s
        s += 7
        if not c & 0x80:
            return v, i


def fields(b):
    i = 0
    while i < len(b):
        tag, i = read_varint(b, i)
        num, wire = tag >> 3, tag & 7
        if wire == 0:
            v, i = read_varint(b, i)
            yield num, v
        elif wire == 2:
            n, i = read_varint(b, i)
            yield num, b[i:i + n]
            i += n
        elif wire == 1:
            yield num, b[i:i + 8]
            i += 8
        elif wire == 5:
            yield num, b[i:i + 4]
            i += 4
        else:
            return


def fld(num, payload):
    if isinstance(payload, int):
        return varint(num << 3) + varint(payload)
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def manifests():
    for m in glob.glob(os.path.join(REPO, "tests/fixtures/datasets/stable_v2*.lance/_versions/*.manifest")):
        data = open(m, "rb").read()
        pos = struct.unpack("<Q", data[-16:-8])[0]
        n = struct.unpack("<I", data[pos:pos + 4])[0]
        for num, frag in fields(data[pos + 4:pos + 4 + n]):
            if num == 2 and isinstance(frag, bytes):  # Manifest.fragments
                f = dict((k, v) for k, v in fields(frag) if k in (4, 5))
                if 5 in f:
                    yield f.get(4, 0), f[5]


def kinds():
    def arr(width, base, vals):
        raw = b"".join(v.to_bytes(width, "little") for v in vals)
        inner = (fld(1, base) if width != 8 else b"") + fld(2, raw)
        return fld({2: 1, 4: 2, 8: 3}[width], inner)
    rng = lambda k, s, e, extra=b"": fld(k, fld(1, s) + fld(2, e) + extra)
    yield 5, fld(1, rng(1, 10, 15))
    yield 8, fld(1, rng(2, 0, 10, fld(3, arr(2, 0, [2, 5]))))
    yield 3, fld(1, rng(3, 100, 110, fld(3, bytes([5, 2]))))
    yield 3, fld(1, fld(4, arr(4, 1000, [0, 5, 70000])))
    yield 3, fld(1, fld(5, arr(8, 0, [7, 3, 1 << 40])))


os.makedirs(OUT, exist_ok=True)
for rows, seq in list(manifests()) + list(kinds()):
    blob = struct.pack("<H", min(rows, 65535)) + seq
    with open(os.path.join(OUT, hashlib.sha1(blob).hexdigest()), "wb") as f:
        f.write(blob)
print(len(os.listdir(OUT)), "seeds in", OUT)
