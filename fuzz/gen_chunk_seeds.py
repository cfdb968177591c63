#!/usr/bin/env python3
"""Writes the `chunk` fuzz target's seeds of the group and block paths into corpus/chunk/:
chunks python-blosc2 compresses from seeded arrays with blocks of 4 KiB and more (the group
decoder's smallest), several codecs, filters and split modes, and the first chunk of each
dictionary fixture of tests/fixtures/blosc2 (`use_dict`). Inputs stay under the fuzzer's
32 KiB bound. Run with the project's venv (python-blosc2 as pinned in
scripts/requirements.txt): python fuzz/gen_chunk_seeds.py
"""
import pathlib

import blosc2
import numpy as np

here = pathlib.Path(__file__).resolve().parent
out = here / "corpus" / "chunk"
fixtures = here.parent / "tests" / "fixtures" / "blosc2"
rng = np.random.default_rng(20261206)

# A smooth float32 signal with noise: compresses, but not to nothing.
f4 = (np.sin(np.arange(8192, dtype=np.float32) / 50) * 1000 + rng.normal(0, 1, 8192)).astype(np.float32)
i4 = np.cumsum(rng.integers(-3, 4, 8192)).astype(np.int32)

cases = {
    "group_lz4_shuffle_f4": (f4, blosc2.Codec.LZ4, [blosc2.Filter.SHUFFLE], 4096, blosc2.SplitMode.AUTO_SPLIT),
    "group_zstd_delta_i4": (i4, blosc2.Codec.ZSTD, [blosc2.Filter.DELTA, blosc2.Filter.SHUFFLE], 8192, blosc2.SplitMode.ALWAYS_SPLIT),
    "group_blosclz_bitshuffle_i4": (i4, blosc2.Codec.BLOSCLZ, [blosc2.Filter.BITSHUFFLE], 4096, blosc2.SplitMode.NEVER_SPLIT),
    "group_zlib_bytedelta_f4": (f4, blosc2.Codec.ZLIB, [blosc2.Filter.SHUFFLE, blosc2.Filter.BYTEDELTA], 4096, blosc2.SplitMode.ALWAYS_SPLIT),
}
for name, (a, codec, filters, blocksize, split) in cases.items():
    cparams = {"codec": codec, "clevel": 5, "filters": filters, "filters_meta": [0] * len(filters),
               "typesize": a.itemsize, "blocksize": blocksize, "splitmode": split, "nthreads": 1}
    chunk = blosc2.compress2(a.tobytes(), **cparams)
    assert len(chunk) < 32768, (name, len(chunk))
    assert blosc2.decompress2(chunk) == a.tobytes()
    (out / f"{name}.chunk").write_bytes(chunk)

# Dictionary chunks (python-blosc2's `use_dict`, as the dict_* fixtures of
# tests/fixtures/blosc2 are written): ZSTD and LZ4, several blocks, DELTA in one.
for name, (a, codec, filters) in {
    "dict_zstd_i4": (i4, blosc2.Codec.ZSTD, [blosc2.Filter.SHUFFLE]),
    "dict_lz4_delta_i4": (i4, blosc2.Codec.LZ4, [blosc2.Filter.DELTA, blosc2.Filter.SHUFFLE]),
    "dict_lz4hc_f4": (f4, blosc2.Codec.LZ4HC, [blosc2.Filter.SHUFFLE]),
}.items():
    chunk = blosc2.compress2(a.tobytes(), codec=codec, clevel=5, filters=filters,
                             filters_meta=[0] * len(filters), typesize=a.itemsize,
                             blocksize=4096, use_dict=True, nthreads=1)
    assert len(chunk) < 32768, (name, len(chunk))
    assert blosc2.decompress2(chunk) == a.tobytes()
    (out / f"{name}.chunk").write_bytes(chunk)
print("seeds:", sorted(p.name for p in out.iterdir()))
