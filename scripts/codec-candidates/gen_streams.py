"""Writes the compressed streams the codec-candidates benchmark decodes.

Each case file holds the codec streams of one real chunk, as records of
[u32 LE compressed size][u32 LE decoded size][stream]; CASE.raw beside it holds the decoded
bytes expected (computed here from the data, not by decoding). Blosc2 cases are the per-block
streams of a C-Blosc2 chunk (python-blosc2, 4 MiB of the data `chunkwise bench decode` uses);
the zlib case is one 4 MiB zlib stream, like a Zarr/HDF5 gzip or zlib chunk.

Usage: python gen_streams.py OUTDIR
"""
import struct
import sys
import zlib
from pathlib import Path

import blosc2
import numpy as np


def float32_data(n):
    # chunkwise bench decode's float32_data: sin wave plus xorshift32 noise.
    s = 1
    noise = np.empty(n, dtype=np.float32)
    for i in range(n):
        s ^= (s << 13) & 0xFFFFFFFF
        s ^= s >> 17
        s ^= (s << 5) & 0xFFFFFFFF
        noise[i] = (s % 1000) * 1e-4
    i = np.arange(n, dtype=np.float32)
    return (np.sin(i * np.float32(0.001)).astype(np.float32) * np.float32(50.0) + noise).astype("<f4")


def int64_data(n):
    i = np.arange(n, dtype=np.int64)
    return (1_000_000 + i * 3 + (i * 7919) % 13).astype("<i8")


def shuffle(block, typesize):
    n = len(block) // typesize * typesize
    body = np.frombuffer(block[:n], dtype=np.uint8).reshape(-1, typesize).T.tobytes()
    return body + block[n:]


def blosc2_streams(data, typesize, codec, clevel):
    chunk = blosc2.compress2(data, codec=codec, clevel=clevel,
                             filters=[blosc2.Filter.SHUFFLE], typesize=typesize,
                             splitmode=blosc2.SplitMode.NEVER_SPLIT)
    nbytes, blocksize, cbytes = struct.unpack_from("<iii", chunk, 4)
    assert chunk[0] >= 3 and nbytes == len(data)
    nblocks = -(-nbytes // blocksize)
    records, raw = [], []
    for b in range(nblocks):
        start = struct.unpack_from("<i", chunk, 32 + 4 * b)[0]
        bsize = min(blocksize, nbytes - b * blocksize)
        cs = struct.unpack_from("<i", chunk, start)[0]
        assert 0 < cs < bsize, f"block {b}: stream size {cs} (raw or special)"
        records.append((chunk[start + 4:start + 4 + cs], bsize))
        raw.append(shuffle(data[b * blocksize:b * blocksize + bsize], typesize))
    return records, b"".join(raw), blocksize


def write(out, name, records, raw):
    with open(out / f"{name}.streams", "wb") as f:
        for body, dlen in records:
            f.write(struct.pack("<II", len(body), dlen))
            f.write(body)
    (out / f"{name}.raw").write_bytes(raw)


def main():
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    f32 = float32_data(1 << 20).tobytes()
    i64 = int64_data(1 << 19).tobytes()
    for name, data, ts, codec, clevel in [
        ("zstd3_shuffle_float32", f32, 4, blosc2.Codec.ZSTD, 3),
        ("zstd3_shuffle_int64", i64, 8, blosc2.Codec.ZSTD, 3),
        ("zlib5_shuffle_float32", f32, 4, blosc2.Codec.ZLIB, 5),
        ("zlib5_shuffle_int64", i64, 8, blosc2.Codec.ZLIB, 5),
    ]:
        records, raw, bs = blosc2_streams(data, ts, codec, clevel)
        write(out, name, records, raw)
        print(name, "blocks", len(records), "blocksize", bs,
              "cratio %.2f" % (len(raw) / sum(len(r[0]) for r in records)))
    # One whole-chunk zlib stream (a Zarr zlib / HDF5 deflate chunk), level 5.
    for name, data in [("zlib5_whole_float32", f32)]:
        write(out, name, [(zlib.compress(data, 5), len(data))], data)
        print(name, "cratio %.2f" % (len(data) / len(zlib.compress(data, 5))))


if __name__ == "__main__":
    main()
