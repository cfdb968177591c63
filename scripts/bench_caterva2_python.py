#!/usr/bin/env python3
"""python-blosc2 4.14.1's Caterva2 client (`blosc2.C2Array`, and `blosc2.Proxy` over it) on the
Caterva2 benchmark workloads, through a latency proxy that counts requests and bytes.

Usage (the venv's python; python-blosc2 4.14.1, caterva2[server] 2026.9.2 and aiohttp pinned
in scripts/requirements.txt):
    python scripts/bench_caterva2_python.py [--latency-ms 40] [--runs N] [--table]
    python scripts/bench_caterva2_python.py --urlbase URL --stats-url URL --fixture DIR ...

Without `--urlbase` it writes the datasets of tests/fixtures/gen_caterva2.py into a temporary
directory and starts scripts/caterva2-serve.py on them with `--latency-ms` (default 40: each
request is held 40 ms by scripts/latency_proxy.py before it reaches the server). With it, URL
is such a proxy in front of a server of FIXTURE (the generator's OUT_DIR), and `--stats-url`
its counter.

Workloads, on `@public/big/grid.b2nd` (float32 (1024, 1280), chunks (128, 128)) and
`@public/big/one_chunk.b2nd` (float32 (512, 2048), one 4 MiB chunk):
- `preview`: open, then chunk (0, 0) of grid (`[0:128, 0:128]`);
- `band`: open, then the first chunk row of grid, 10 chunks (`[0:128, 0:1280]`);
- `small-of-big`: open, then `[0:16, 0:16]` of one_chunk.

Phases, each in this process:
- `cold`: a new `C2Array(path, urlbase)` (one `api/info`), then the read (one `api/fetch`:
  C2Array asks the server for the slice as a Blosc2 frame);
- `warm`: the same read again on that handle (C2Array keeps no data between reads);
- `cold, Proxy`: `blosc2.Proxy(C2Array(..), urlpath=NEW)` (python-blosc2's chunk cache on
  disk, filled by `api/chunk` or ranged reads of whole chunks), then the read;
- `warm, Proxy`: a new C2Array and `blosc2.Proxy(.., urlpath=SAME, mode="a")` adopting that
  cache, then the read.

Every value read is compared with the .npy the generator wrote; a mismatch exits with
status 1. Prints one JSON line per run, workload and phase: {"tool", "workload", "phase",
"requests", "bytes", "ms"} (and "log", the requests as `METHOD PATH STATUS BYTES`, with `--log`): requests and response body bytes as the latency proxy counted them
(the same counter the chunkwise side of `scripts/bench-caterva2.py` reads), ms from the open
to the last value checked. `--table` prints the medians as a table instead.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

import blosc2
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
WORKLOADS = {
    "preview": ("@public/big/grid.b2nd", (slice(0, 128), slice(0, 128))),
    "band": ("@public/big/grid.b2nd", (slice(0, 128), slice(0, 1280))),
    "small-of-big": ("@public/big/one_chunk.b2nd", (slice(0, 16), slice(0, 16))),
}
PHASES = ["cold", "warm", "cold, Proxy", "warm, Proxy"]


def fail(msg):
    print("bench_caterva2_python: wrong value: " + msg, file=sys.stderr)
    sys.exit(1)


class Counter:
    """The latency proxy's request counter (scripts/latency_proxy.py)."""

    def __init__(self, stats_url):
        self.stats_url = stats_url
        self.reset_url = stats_url.rsplit("/", 1)[0] + "/reset"

    def reset(self):
        urllib.request.urlopen(urllib.request.Request(self.reset_url, method="POST")).close()

    def read(self):
        with urllib.request.urlopen(self.stats_url) as r:
            s = json.load(r)
        return s["requests"], s["bytes"], [f"{r['method']} {r['path']} {r['status']} {r['bytes']}"
                                           for r in s["log"]]


def start_server(latency_ms):
    """Fixtures into a temp dir and a launcher on them; answers (info, fixture_dir, stop)."""
    fixture = tempfile.mkdtemp(prefix="chunkwise-bench-caterva2-")
    gen = os.path.join(HERE, "..", "tests", "fixtures", "gen_caterva2.py")
    subprocess.run([sys.executable, gen, fixture], check=True)
    proc = subprocess.Popen([sys.executable, os.path.join(HERE, "caterva2-serve.py"), "--roots",
                             os.path.join(fixture, "roots"), "--latency-ms", str(latency_ms)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    line = proc.stdout.readline()
    if not line:
        proc.wait()
        shutil.rmtree(fixture, ignore_errors=True)
        sys.exit("bench_caterva2_python: the Caterva2 server did not start")

    def stop():
        proc.stdin.close()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(fixture, ignore_errors=True)

    return json.loads(line), fixture, stop


def expected(fixture, path):
    with open(os.path.join(fixture, "manifest.json")) as f:
        entry = next(d for d in json.load(f)["datasets"] if d["path"] == path)
    return np.load(os.path.join(fixture, entry["npy"]))


def check(got, want, what):
    if got.dtype != want.dtype or got.shape != want.shape or not np.array_equal(got, want):
        fail(f"{what}: got {got.dtype} {got.shape}, expected {want.dtype} {want.shape}")


def run(urlbase, counter, fixture, scratch, log):
    rows = []
    for name, (path, key) in WORKLOADS.items():
        want = expected(fixture, path)[key]
        cache = os.path.join(scratch, f"{name}.proxy.b2nd")
        if os.path.exists(cache):
            os.remove(cache)
        arr = None
        for phase in PHASES:
            counter.reset()
            t = time.perf_counter()
            if phase == "cold":
                arr = blosc2.C2Array(path, urlbase=urlbase)
                got = arr[key]
            elif phase == "warm":
                got = arr[key]
            elif phase == "cold, Proxy":
                got = blosc2.Proxy(blosc2.C2Array(path, urlbase=urlbase), urlpath=cache,
                                   mode="w")[key]
            else:
                got = blosc2.Proxy(blosc2.C2Array(path, urlbase=urlbase), urlpath=cache,
                                   mode="a")[key]
            ms = (time.perf_counter() - t) * 1000
            check(np.asarray(got), want, f"{name} {phase}")
            requests, nbytes, lines = counter.read()
            rows.append({"tool": "python-blosc2 C2Array", "workload": name, "phase": phase,
                         "requests": requests, "bytes": nbytes, "ms": round(ms, 1)})
            if log:
                rows[-1]["log"] = lines
    return rows


def table(rows):
    keys = []
    for r in rows:
        k = (r["tool"], r["workload"], r["phase"])
        if k not in keys:
            keys.append(k)
    out = [f"{'tool':<24} {'workload':<13} {'phase':<12} {'requests':>8} {'bytes':>10} "
           f"{'ms':>8}"]
    for k in keys:
        rs = [r for r in rows if (r["tool"], r["workload"], r["phase"]) == k]
        med = {f: statistics.median(r[f] for r in rs) for f in ("requests", "bytes", "ms")}
        out.append(f"{k[0]:<24} {k[1]:<13} {k[2]:<12} {med['requests']:>8.0f} "
                   f"{med['bytes']:>10.0f} {med['ms']:>8.1f}")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--urlbase")
    ap.add_argument("--stats-url")
    ap.add_argument("--fixture")
    ap.add_argument("--latency-ms", type=float, default=40)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--table", action="store_true")
    ap.add_argument("--log", action="store_true", help="add each phase's requests to its line")
    args = ap.parse_args()
    stop = None
    if args.urlbase:
        if not (args.stats_url and args.fixture):
            sys.exit("bench_caterva2_python: --urlbase needs --stats-url and --fixture")
        urlbase, stats_url, fixture = args.urlbase, args.stats_url, args.fixture
    else:
        info, fixture, stop = start_server(args.latency_ms)
        urlbase, stats_url = info["urlbase"], info["stats_url"]
    scratch = tempfile.mkdtemp(prefix="chunkwise-bench-caterva2-cache-")
    try:
        counter = Counter(stats_url)
        rows = []
        for _ in range(args.runs):
            for r in run(urlbase, counter, fixture, scratch, args.log):
                rows.append(r)
                if not args.table:
                    print(json.dumps(r), flush=True)
        if args.table:
            print(table(rows))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        if stop:
            stop()


if __name__ == "__main__":
    main()
