#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_encodings (tests/fuzz/corpus/fuzz_encodings/): one small valid
input per encoding tree of the target, in its layout (u8 index, u16 n, u8 nbufs-1, u16 buffer
lengths, [u16 table length + FSST table], data). zstd frames come from the zstd CLI."""
import os, struct, subprocess, sys

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "fuzz_encodings")
FL = [0, 4, 2, 6, 1, 5, 3, 7]

def zstd(b):
    return subprocess.run(["zstd", "-q", "-c", "-3"], input=b, stdout=subprocess.PIPE, check=True).stdout

def zpref(b):
    return struct.pack("<Q", len(b)) + zstd(b)

def lz4(b):  # one literal-only LZ4 block with Lance's u32 length prefix
    n = len(b)
    if n < 15:
        tok = bytes([n << 4])
    else:
        r = n - 15
        tok = bytes([0xF0]) + b"\xff" * (r // 255) + bytes([r % 255])
    return struct.pack("<I", n) + tok + b

def fl_pack(T, W, vals):
    lanes = 1024 // T
    words = [0] * (1024 * W // T)
    for row in range(T):
        for lane in range(lanes):
            v = vals[FL[row // 8] * 16 + (row % 8) * 128 + lane]
            for b in range(W):
                if (v >> b) & 1:
                    pos = row * W + b
                    words[lanes * (pos // T) + lane] |= 1 << (pos % T)
    return b"".join(w.to_bytes(T // 8, "little") for w in words)

def var_chunk(strs, w=4):
    fmt = "<I" if w == 4 else "<Q"
    off = (len(strs) + 1) * w
    offs = [off]
    for s in strs:
        off += len(s)
        offs.append(off)
    b = b"".join(struct.pack(fmt, o) for o in offs) + b"".join(strs)
    while len(b) % w:
        b += b"\x48"
    return b

def var_block(strs):
    start = 8 + (len(strs) + 1) * 4
    b = struct.pack("<II", 32, start)
    off = 0
    b += struct.pack("<I", 0)
    for s in strs:
        off += len(s)
        b += struct.pack("<I", off)
    return b + b"".join(strs)

def fsst_table(syms, on=1):
    h = (0x46535354 << 32) | (on << 24) | len(syms)
    t = struct.pack("<Q", h) + b"".join(s.ljust(8, b"\0") for s in syms) + bytes(len(s) for s in syms)
    return t.ljust(8 + 256 * 9, b"\0")

def inp(idx, n, bufs, table=None):
    head = struct.pack("<BHB", idx, n, len(bufs) - 1)
    for b in bufs[:-1]:
        head += struct.pack("<H", len(b))
    if table is not None:
        head += struct.pack("<H", len(table)) + table
    return head + b"".join(bufs)

def main():
    os.makedirs(OUT, exist_ok=True)
    words = [b"alpha", b"", b"beta", b"gamma delta", b"e"]
    seeds = {}
    seeds["flat32"] = inp(0, 10, [struct.pack("<10I", *range(10))])
    seeds["flat1"] = inp(1, 12, [b"\xa5\x0f"])
    seeds["flat64_zstd"] = inp(2, 8, [zpref(struct.pack("<8Q", *range(8)))])
    seeds["var32"] = inp(3, 5, [var_chunk(words)])
    seeds["var32_block"] = inp(3, 5, [var_block(words)])
    seeds["var64"] = inp(4, 5, [var_chunk(words, 8)])
    v16 = [i % 8 for i in range(1024)]
    seeds["inline16"] = inp(5, 1024, [struct.pack("<H", 3) + fl_pack(16, 3, v16)])
    v32 = [(i * 37) % 1000 for i in range(1024)]
    seeds["inline32"] = inp(6, 1000, [struct.pack("<I", 10) + fl_pack(32, 10, v32)])
    seeds["inline64_zero"] = inp(7, 1024, [struct.pack("<Q", 0)])
    seeds["ool16"] = inp(8, 1100, [fl_pack(16, 3, v16) + struct.pack("<76H", *range(76))])
    seeds["ool8"] = inp(9, 1024, [fl_pack(8, 5, [i % 32 for i in range(1024)])])
    syms = [b"hello", b" ", b"world", b"the "]
    seeds["fsst"] = inp(10, 2, [var_chunk([b"\x00\x01\x02", b"\x03\xff!"])], fsst_table(syms))
    seeds["fsst_off"] = inp(10, 2, [var_chunk([b"plain", b"text"])], fsst_table([], 0))
    seeds["rle32"] = inp(11, 260, [struct.pack("<3I", 7, 9, 11), bytes([3, 255, 2])])
    seeds["rle16_block"] = inp(12, 1024, [bytes.fromhex("0a00000000000000" "01000100010001000100" "ffffffff04")])
    seeds["rle64"] = inp(13, 1024, [struct.pack("<2Q", 1 << 40, 5), struct.pack("<2H", 1000, 24)])
    seeds["bss32"] = inp(14, 4, [bytes(range(16))])
    seeds["bss64"] = inp(15, 2, [bytes(range(16))])
    seeds["general_zstd_var"] = inp(16, 5, [zpref(var_chunk(words))])
    seeds["general_zstd_bare"] = inp(16, 5, [zstd(var_chunk(words))])
    seeds["general_lz4_var"] = inp(17, 5, [lz4(var_chunk(words))])
    seeds["general_lz4_dict"] = inp(17, 5, [lz4(var_block(words))])
    seeds["general_lz4_bss"] = inp(18, 4, [lz4(bytes(range(16)))])
    seeds["fsl3"] = inp(19, 4, [b"\xff\x0d", struct.pack("<12i", *range(12))])
    seeds["fsl_nested"] = inp(20, 2, [b"\x03", b"\x0f", bytes(range(8))])
    seeds["fsl_allnull"] = inp(21, 2, [b"\x00"])
    seeds["packed"] = inp(22, 3, [bytes(range(39))])
    seeds["constant"] = inp(23, 10, [b""])
    row = struct.pack("<I", 42) + struct.pack("<I", 5) + b"hello"
    z = zpref(b"compressed!")
    row += struct.pack("<Q", len(z)) + z
    seeds["vps"] = inp(24, 1, [row], fsst_table([], 0))
    seeds["general_zstd_rle"] = inp(25, 260, [zpref(struct.pack("<3I", 7, 9, 11)), bytes([3, 255, 2])])
    seeds["flat8"] = inp(26, 16, [bytes(range(16))])
    seeds["general_lz4_fsst"] = inp(27, 1, [lz4(b"\x00\x02")], fsst_table(syms))
    for name, data in seeds.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
    print(f"wrote {len(seeds)} seeds to {OUT}")

if __name__ == "__main__":
    sys.exit(main())
