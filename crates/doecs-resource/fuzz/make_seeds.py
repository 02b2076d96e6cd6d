"""Writes seed blobs for the fuzzer, built by an independent writer of the format."""
import struct, sys, os

def fnv(name):
    h = 0xcbf29ce484222325
    for b in name.encode():
        h ^= b
        h = (h * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h

def pad(b):
    return b + b"\0" * (-len(b) % 16)

def blob(parents, blocks):
    body = b"".join(struct.pack("<I", p) for p in parents)
    out = pad(b"DOECSLVL" + struct.pack("<IIQII", 2, 0, 0, len(parents), len(blocks)) + body)
    for name, size, idx, data in blocks:
        out += struct.pack("<QII", fnv(name), len(idx), size) + b"".join(struct.pack("<I", i) for i in idx)
        out = pad(out)
        out = pad(out + data)
    return out[:16] + struct.pack("<Q", len(out)) + out[24:]

ident = struct.pack("<16f", 1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,0)
move = struct.pack("<16f", 1,0,0,0, 0,1,0,0, 0,0,1,0, 1,2,3,0)
M = 0xFFFFFFFF
seeds = {
    "empty": blob([], []),
    "roots": blob([M, M], [("mass", 4, [0, 1], struct.pack("<2f", 1, 2))]),
    "tree": blob([M, 0, 1, 1, M], [
        ("transform", 64, [0, 1, 2, 3], ident + move + ident + move),
        ("position", 12, [0, 4], struct.pack("<6f", 1, 2, 3, 4, 5, 6)),
        ("mass", 4, [1, 3, 4], struct.pack("<3f", 1, 2, 3)),
        ("tag", 4, [2], struct.pack("<2H", 7, 9)),
        ("unknown", 3, [0, 2], b"abcdef"),
    ]),
}
out_dir = sys.argv[1]
os.makedirs(out_dir, exist_ok=True)
for k, v in seeds.items():
    open(os.path.join(out_dir, k), "wb").write(v)
print(seeds["tree"].hex())
