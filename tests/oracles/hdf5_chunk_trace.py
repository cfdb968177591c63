"""Real-HDF5 oracle for the chunk-cache simulator: counts raw chunk reads through h5py.

Reads a JSON document on stdin and writes one on stdout; runs under any h5py (3.7 with
libhdf5 1.10.8, 3.16 with HDF5 2.0.0).

Input:  {"cases": [{"id": str, "shape": [..], "chunks": [..], "dtype": "<u4", "gzip": 6 | null,
                    "data": "arange" | "mod251", "holes": bool (every third chunk unwritten),
                    "nslots": int, "nbytes": int, "w0": float,
                    "trace": {"selections": [{"points": [[..], ..]} |
                                             {"hyperslab": {"start", "count", "stride"?, "block"?}}]}}]}
Output: {"hdf5_version": str, "h5py_version": str, "results": [{"id", "ok", "error",
          "effective": [nslots, nbytes, w0], "chunks": [{"coords", "address", "stored_size"}],
          "selections": [{"reads": [[coords], ..], "raw_bytes": int, "other_reads": int}],
          "reads": int, "raw_bytes": int}]}

Each case writes (or reuses) a file with libver ('v110', 'v110') in memory, opens it afresh through
a file object whose readinto/read are logged, checks the dataset's effective chunk-cache settings,
loads chunk addresses and stored sizes before the trace (so index reads stay out of it), then runs
every selection as one H5Dread. A driver read counts as a raw chunk read only when (offset, size)
equals a chunk's (address, stored size); a read that overlaps a chunk otherwise fails the case.
Every value read is checked against the array written.
"""

import bisect
import io
import json
import sys

import h5py
import numpy as np


class LoggedFile:
    """A read-only in-memory file that records (offset, size) of every read."""

    def __init__(self, data):
        self._f = io.BytesIO(data)
        self.log = None

    def seek(self, offset, whence=0):
        return self._f.seek(offset, whence)

    def tell(self):
        return self._f.tell()

    def readinto(self, buf):
        pos = self._f.tell()
        n = self._f.readinto(buf)
        if self.log is not None:
            self.log.append((pos, len(memoryview(buf).cast("B"))))
        return n

    def read(self, size=-1):
        pos = self._f.tell()
        data = self._f.read(size)
        if self.log is not None:
            self.log.append((pos, len(data)))
        return data

    def flush(self):
        pass


_files = {}


def make_array(case):
    shape = tuple(case["shape"])
    n = int(np.prod(shape, dtype=np.int64))
    kind = case.get("data", "arange")
    if kind == "arange":
        flat = np.arange(n)
    else:
        flat = (np.arange(n) * 7919) % 251
    return flat.astype(np.dtype(case["dtype"])).reshape(shape)


def chunk_slices(shape, chunks):
    """Yield (linear chunk index, slices) in row-major chunk order."""
    counts = [-(-s // c) for s, c in zip(shape, chunks)]
    for linear, scaled in enumerate(np.ndindex(*counts)):
        yield linear, tuple(slice(k * c, min((k + 1) * c, s))
                            for k, c, s in zip(scaled, chunks, shape))


def file_bytes(case):
    holes = bool(case.get("holes", False))
    key = (tuple(case["shape"]), tuple(case["chunks"]), case["dtype"], case.get("gzip"),
           case.get("data", "arange"), holes)
    if key not in _files:
        data = make_array(case)
        buf = io.BytesIO()
        kw = {}
        if case.get("gzip") is not None:
            kw = {"compression": "gzip", "compression_opts": int(case["gzip"])}
        with h5py.File(buf, "w", libver=("v110", "v110")) as f:
            if not holes:
                f.create_dataset("x", data=data, chunks=tuple(case["chunks"]), **kw)
            else:
                # Every third chunk (linear index 1, 4, 7, ...) is never written: not allocated,
                # read back as the default fill value 0.
                d = f.create_dataset("x", shape=data.shape, dtype=data.dtype,
                                     chunks=tuple(case["chunks"]), **kw)
                for linear, sl in chunk_slices(data.shape, case["chunks"]):
                    if linear % 3 == 1:
                        data[sl] = 0
                    else:
                        d[sl] = data[sl]
        _files[key] = (buf.getvalue(), data)
    return _files[key]


def hyperslab_indices(h, rank):
    ones = [1] * rank
    stride = h.get("stride") or ones
    block = h.get("block") or ones
    idx = []
    for u in range(rank):
        idx.append([h["start"][u] + i * stride[u] + j
                    for i in range(h["count"][u]) for j in range(block[u])])
    return idx, stride, block


def run_selection(dset, data, sel):
    space = dset.id.get_space()
    rank = data.ndim
    if "points" in sel:
        pts = np.asarray(sel["points"], dtype=np.uint64).reshape(-1, rank)
        space.select_elements(pts)
        out = np.empty((len(pts),), dtype=data.dtype)
        mspace = h5py.h5s.create_simple(out.shape)
        dset.id.read(mspace, space, out)
        expected = data[tuple(pts.astype(np.int64).T)]
    else:
        h = sel["hyperslab"]
        idx, stride, block = hyperslab_indices(h, rank)
        space.select_hyperslab(tuple(h["start"]), tuple(h["count"]), tuple(stride), tuple(block))
        out = np.empty(tuple(len(i) for i in idx), dtype=data.dtype)
        mspace = h5py.h5s.create_simple(out.shape)
        dset.id.read(mspace, space, out)
        expected = data[np.ix_(*idx)]
    if not np.array_equal(out, expected):
        raise AssertionError("values read differ from the array written")


def run_case(case):
    raw, data = file_bytes(case)
    fobj = LoggedFile(raw)
    res = {"id": case["id"], "ok": False, "error": None}
    f = h5py.File(fobj, "r", rdcc_nslots=int(case["nslots"]), rdcc_nbytes=int(case["nbytes"]),
                  rdcc_w0=float(case["w0"]))
    try:
        dset = f["x"]
        eff = dset.id.get_access_plist().get_chunk_cache()
        res["effective"] = [int(eff[0]), int(eff[1]), float(eff[2])]
        want = [int(case["nslots"]), int(case["nbytes"]), float(case["w0"])]
        if want[0] == 0 or want[1] == 0:
            want[0] = want[1] = 0
        if res["effective"] != want:
            raise AssertionError("effective chunk cache %r differs from requested %r"
                                 % (res["effective"], want))
        chunk_shape = dset.chunks
        chunks = []
        for i in range(dset.id.get_num_chunks()):
            info = dset.id.get_chunk_info(i)
            coords = [int(o) // int(c) for o, c in zip(info.chunk_offset, chunk_shape)]
            chunks.append({"coords": coords, "address": int(info.byte_offset),
                           "stored_size": int(info.size)})
        res["chunks"] = chunks
        exact = {(c["address"], c["stored_size"]): c for c in chunks}
        spans = sorted((c["address"], c["address"] + c["stored_size"]) for c in chunks)
        starts = [s for s, _ in spans]
        sels = []
        for k, sel in enumerate(case["trace"]["selections"]):
            fobj.log = []
            run_selection(dset, data, sel)
            log, fobj.log = fobj.log, None
            reads, raw_bytes, other = [], 0, 0
            for off, size in log:
                c = exact.get((off, size))
                if c is not None:
                    reads.append(c["coords"])
                    raw_bytes += size
                    continue
                j = bisect.bisect_right(starts, off + size - 1) - 1 if size > 0 else -1
                if j >= 0 and spans[j][1] > off:
                    raise AssertionError("selection %d: driver read (%d, %d) partially overlaps "
                                         "chunk bytes %r" % (k, off, size, spans[j]))
                other += 1
            sels.append({"reads": reads, "raw_bytes": raw_bytes, "other_reads": other})
        res["selections"] = sels
        res["reads"] = sum(len(s["reads"]) for s in sels)
        res["raw_bytes"] = sum(s["raw_bytes"] for s in sels)
        res["ok"] = True
    except Exception as e:  # reported per case; the caller fails the test
        res["error"] = "%s: %s" % (type(e).__name__, e)
    finally:
        f.close()
    return res


def main():
    doc = json.load(sys.stdin)
    results = [run_case(c) for c in doc["cases"]]
    json.dump({"hdf5_version": h5py.version.hdf5_version, "h5py_version": h5py.version.version,
               "results": results}, sys.stdout)


if __name__ == "__main__":
    main()
