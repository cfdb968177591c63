"""Writes the arrays of scripts/bench-read.sh into DIR: the same seeded 64 MiB float64 array
(4096 x 2048, 512 x 512 chunks) as a Blosc2 frame (python-blosc2), an HDF5 dataset (h5py:
shuffle + gzip 1) and a Zarr v3 array (zarr-python, its default zstd), plus the expected
window as .npy; and a 2048 x 2048 uint8 Blosc2 frame in 16 x 16 chunks (16,384 chunks), for
the cost per chunk of a read. Versions are pinned in scripts/requirements.txt."""
import os
import sys

import blosc2
import h5py
import numpy as np
import zarr

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(20261201)
# Integers stored as float64: compressible like measured data, not like noise.
a = rng.integers(0, 1000, size=(4096, 2048)).astype("<f8")
assert a.nbytes == 64 * 1024 * 1024
done = os.path.join(out, "done-2")
if not os.path.exists(done):
    blosc2.asarray(a, chunks=(512, 512), blocks=(128, 128),
                   urlpath=os.path.join(out, "big.b2nd"), mode="w")
    with h5py.File(os.path.join(out, "big.h5"), "w") as f:
        f.create_dataset("data", data=a, chunks=(512, 512), shuffle=True,
                         compression="gzip", compression_opts=1)
    z = zarr.create_array(os.path.join(out, "big.zarr"), shape=a.shape, chunks=(512, 512),
                          dtype="<f8", zarr_format=3, overwrite=True)
    z[:] = a
    np.save(os.path.join(out, "window.npy"), a[1000:1512, 700:1212])
    m = rng.integers(0, 256, size=(2048, 2048), dtype="u1")
    blosc2.asarray(m, chunks=(16, 16), blocks=(16, 16),
                   urlpath=os.path.join(out, "many.b2nd"), mode="w")
    open(done, "w").close()
