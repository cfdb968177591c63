#!/usr/bin/env python3
"""A forwarding HTTP proxy on 127.0.0.1 that adds latency to each request and counts them.

Used in front of a loopback server (scripts/caterva2-serve.py `--latency-ms`) so that clients
pay a round trip per request, as over a network, and so that two clients are measured by the
same counter. Needs aiohttp (scripts/requirements.txt).

Each request is held `latency_ms` before it is forwarded (as `chunkwise serve --latency-ms`
delays its answers), then forwarded to the upstream base with its method, path, query, headers
(hop-by-hop ones dropped) and body; the answer comes back unchanged (no decompression), and is
counted: one request, its status, and its body bytes.

Requests under `/__latency_proxy/` are the proxy's own, neither delayed nor counted:
- `GET /__latency_proxy/stats`: `{"requests": N, "bytes": B, "log": [{"method", "path",
  "status", "bytes"}]}` since the last reset (`path` with its query);
- `POST /__latency_proxy/reset`: zeroes the counters.

As a program: `python latency_proxy.py UPSTREAM_BASE LATENCY_MS` prints
`{"port": N, "urlbase": "http://127.0.0.1:N/"}` and runs until stdin closes or SIGTERM.
"""

import asyncio
import json
import os
import signal
import sys
import threading

from aiohttp import ClientSession, ClientTimeout, DummyCookieJar, TCPConnector, web

HOP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te",
       "trailers", "transfer-encoding", "upgrade", "host", "content-length"}
OWN = "/__latency_proxy/"


class LatencyProxy:
    """The proxy's state; `start()` runs it on a thread of its own with its own event loop."""

    def __init__(self, upstream, latency_ms):
        self.upstream = upstream.rstrip("/")
        self.latency = latency_ms / 1000
        self.log = []
        self.lock = threading.Lock()
        self.port = None
        self._loop = None
        self._runner = None

    def stats(self):
        with self.lock:
            log = list(self.log)
        return {"requests": len(log), "bytes": sum(r["bytes"] for r in log), "log": log}

    def reset(self):
        with self.lock:
            self.log.clear()

    async def _handle(self, request):
        if request.path.startswith(OWN):
            if request.path == OWN + "stats":
                return web.json_response(self.stats())
            if request.path == OWN + "reset" and request.method == "POST":
                self.reset()
                return web.Response(status=204)
            return web.Response(status=404)
        body = await request.read()
        if self.latency:
            await asyncio.sleep(self.latency)
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP}
        async with self._session.request(request.method, self.upstream + request.path_qs,
                                         headers=headers, data=body or None,
                                         allow_redirects=False) as up:
            data = await up.read()
            out = web.Response(status=up.status, body=data)
            for k, v in up.headers.items():
                if k.lower() not in HOP:
                    out.headers.add(k, v)
        with self.lock:
            self.log.append({"method": request.method, "path": request.path_qs,
                             "status": up.status, "bytes": len(data)})
        return out

    async def _start(self, ready):
        self._session = ClientSession(auto_decompress=False, timeout=ClientTimeout(total=None),
                                      connector=TCPConnector(limit=0), cookie_jar=DummyCookieJar())
        app = web.Application(client_max_size=1 << 30)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]
        ready.set()

    def start(self):
        """Starts serving on a free port of 127.0.0.1 (a daemon thread); answers the port."""
        ready = threading.Event()

        def run():
            self._loop = asyncio.new_event_loop()
            self._loop.run_until_complete(self._start(ready))
            self._loop.run_forever()

        threading.Thread(target=run, daemon=True).start()
        if not ready.wait(30):
            raise RuntimeError("the latency proxy did not start")
        return self.port


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    proxy = LatencyProxy(sys.argv[1], float(sys.argv[2]))
    port = proxy.start()
    print(json.dumps({"port": port, "urlbase": f"http://127.0.0.1:{port}/"}), flush=True)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())

    def stdin_closed():
        while os.read(0, 4096):
            pass
        done.set()

    threading.Thread(target=stdin_closed, daemon=True).start()
    done.wait()


if __name__ == "__main__":
    main()
