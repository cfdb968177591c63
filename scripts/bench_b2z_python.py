"""python-blosc2's own remote reader on the `chunkwise bench b2z` workloads.

Usage (the venv's python; python-blosc2 4.14.1 and fsspec[http] pinned in
scripts/requirements.txt):
    python scripts/bench_b2z_python.py BASE_URL FIXTURE_DIR tree|table [--runs N]

BASE_URL serves FIXTURE_DIR (written by `tests/fixtures/gen_b2z.py --big FIXTURE_DIR`), for
example `chunkwise serve --root FIXTURE_DIR --latency-ms 40`. Workloads:
- tree: `blosc2.open(BASE_URL + "big.b2z")` (a RemoteStore), then element [0, 0] of each of
  the 20 leaves of big.json, one after the other;
- table: `blosc2.open(BASE_URL + "bench_table.b2z")` (a RemoteCTable), then live rows
  0..10000 of the columns a, b and d (`table[name][0:10000]`).

Each run has three phases, in one process: `cold`, the default MEMORY policy
(`blosc2.open(url)`); `cold, DISK`, CachePolicy.DISK on a new empty cache directory
(`cache_dir=`); `warm`, the same workload again after closing that handle, reopening on that
cache directory. A MEMORY cache belongs to its handle (a second open costs the cold requests
again), so DISK is how python-blosc2 warms across opens.

Every value read is checked against the manifests (big.json: each leaf's `first`, its
element [0, 0]; bench_table.json `bench_rows`: dtype, first, last and SHA-256 of each column's
values); a mismatch exits with status 1 and a message on stderr.

Prints one JSON line per run and phase: {"tool", "workload", "phase", "requests", "bytes",
"ms", "t0", "t1"}. requests and bytes are python-blosc2's own `Traffic` counter of the
handle; ms is from the open to the last value checked (imports excluded); t0 and t1 are
`time.monotonic()` (CLOCK_MONOTONIC on Linux) at the start and end of the phase, for a
caller that matches the server's request log to the phase.
"""

import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time

import blosc2
import numpy as np


def fail(msg):
    print("bench_b2z_python: wrong value: " + msg, file=sys.stderr)
    sys.exit(1)


def run_tree(url, manifest, cache_dir):
    leaves = manifest["leaves"]
    store = blosc2.open(url, cache_dir=cache_dir)
    try:
        for path, leaf in leaves.items():
            got = float(store[path][0, 0])
            if got != leaf["first"]:
                fail(f"{url} {path}[0, 0] = {got!r}, expected {leaf['first']!r}")
        traffic = store.traffic
        return traffic.requests, traffic.nbytes
    finally:
        store.close()


def run_table(url, manifest, cache_dir):
    rows = manifest["bench_rows"]
    start, stop = rows["start"], rows["stop"]
    table = blosc2.open(url, cache_dir=cache_dir)
    try:
        if len(table) != manifest["nrows"]:
            fail(f"{url}: {len(table)} live rows, expected {manifest['nrows']}")
        for name, want in rows["columns"].items():
            v = np.ascontiguousarray(np.asarray(table[name][start:stop]))
            if v.dtype.str != want["dtype"] or v.shape != (stop - start,):
                fail(f"{url} {name}: {v.dtype.str} {v.shape}, expected {want['dtype']} "
                     f"({stop - start},)")
            if v[0].item() != want["first"] or v[-1].item() != want["last"]:
                fail(f"{url} {name}: first/last {v[0]!r}/{v[-1]!r}, expected "
                     f"{want['first']!r}/{want['last']!r}")
            if hashlib.sha256(v.tobytes()).hexdigest() != want["sha256"]:
                fail(f"{url} {name}[{start}:{stop}]: SHA-256 differs from the data written")
        traffic = table.traffic
        return traffic.requests, traffic.nbytes
    finally:
        table.close()


WORKLOADS = {
    "tree": ("big.b2z", "big.json", run_tree),
    "table": ("bench_table.b2z", "bench_table.json", run_table),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("base_url")
    ap.add_argument("fixture_dir")
    ap.add_argument("workload", choices=sorted(WORKLOADS))
    ap.add_argument("--runs", type=int, default=1)
    args = ap.parse_args()
    name, manifest_name, fn = WORKLOADS[args.workload]
    with open(os.path.join(args.fixture_dir, manifest_name)) as f:
        manifest = json.load(f)
    url = args.base_url.rstrip("/") + "/" + name
    tool = "python-blosc2 " + blosc2.__version__
    for _ in range(args.runs):
        cache_dir = tempfile.mkdtemp(prefix="chunkwise-bench-b2z-py-")
        try:
            for phase, where in (("cold", None), ("cold, DISK", cache_dir), ("warm", cache_dir)):
                t0 = time.monotonic()
                requests, nbytes = fn(url, manifest, where)
                t1 = time.monotonic()
                print(json.dumps({"tool": tool, "workload": args.workload, "phase": phase,
                                  "requests": requests, "bytes": nbytes,
                                  "ms": (t1 - t0) * 1e3, "t0": t0, "t1": t1}), flush=True)
        finally:
            shutil.rmtree(cache_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
