#!/usr/bin/env python3
"""Run a Caterva2 server (caterva2[server] 2026.9.2) on loopback for tests and benchmarks.

Usage (with the project venv's python, scripts/setup.sh python):
    python scripts/caterva2-serve.py --roots DIR [--port N] [--statedir DIR]
                                     [--username EMAIL] [--password PW] [--no-login]

- `--roots DIR` holds `@public/`, `@shared/`, `@personal/` subtrees (any may be missing), as
  tests/fixtures/gen_caterva2.py writes under OUT_DIR/roots; each is copied into the server's
  state directory (`public/`, `shared/`, `personal/<user id>/`), so a test may rewrite the
  served copy without touching the fixture.
- `--statedir`: the server's state directory (must not exist or be empty); default a fresh
  temporary directory, removed at exit.
- `--port 0` (default) picks a free port on 127.0.0.1.
- A user (`--username`, default `user@example.com`; `--password`, default a random one) is
  created with Caterva2's own user manager (`srv_utils.add_user`, as `cat2-admin adduser`
  does); login is on (the JWT cookie `c2subauth` from `POST auth/jwt/login`) unless
  `--no-login`.

- `--latency-ms MS`: clients are given the address of a forwarding proxy in front of the server
  (scripts/latency_proxy.py, in this process) that holds each request MS milliseconds and
  counts requests and body bytes (`GET stats_url`, `POST .../reset`).

Once the server answers `GET api/roots`, one JSON line goes to stdout:
    {"port": N, "urlbase": "http://127.0.0.1:N/", "server_urlbase": "http://127.0.0.1:N/",
     "stats_url": null, "username": "..", "password": "..", "statedir": "..",
     "public_dir": "..", "pid": SERVER_PID}
(`urlbase` is the proxy's and `stats_url` is set with `--latency-ms`; `port` is the server's.)
The server's own output goes to `<statedir>/server.log` (its tail is printed to stderr if it
fails to start). The launcher exits, stopping the server (SIGTERM, then SIGKILL after 5 s), when
its stdin closes or on SIGTERM/SIGINT; the server also gets SIGTERM if the launcher dies
(PR_SET_PDEATHSIG). Only the server process it started is signalled.

Network: the server listens on 127.0.0.1 only. Caterva2 2026.9.2 makes outbound requests only
for configured peers (`[[server.peer]]`, none here), `api/load_from_url` (on request) and mail
for password resets (not enabled); its configuration is read only from the file written here
(`--conf`), never from ./caterva2-server.toml, ~/.caterva2-server.toml or /etc.
"""

import argparse
import asyncio
import ctypes
import json
import os
import pathlib
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

ROOTS = {"@public": "public", "@shared": "shared"}


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_conf(statedir, port, login):
    conf = os.path.join(statedir, "caterva2-server.toml")
    with open(conf, "w") as f:
        f.write("[server]\n")
        f.write(f'urlbase = "http://127.0.0.1:{port}"\n')
        f.write(f'listen = "127.0.0.1:{port}"\n')
        f.write(f"login = {'true' if login else 'false'}\n")
        f.write("register = false\n")
        f.write("maxusers = 5\n")
        f.write('loglevel = "warning"\n')
    return conf


def add_user(statedir, username, password):
    """Creates the user in `<statedir>/db.sqlite` and answers its id (a UUID string).

    Runs in the server process before the server starts (one import of Caterva2, not two)."""
    import contextlib

    from caterva2.services import db, srv_utils, users

    async def run():
        await srv_utils.aadd_user(username, password, False, state_dir=pathlib.Path(statedir))
        cx = contextlib.asynccontextmanager
        async with (
            cx(db.get_async_session)() as session,
            cx(db.get_user_db)(session) as udb,
            cx(users.get_user_manager)(udb) as umgr,
        ):
            user = await umgr.get_by_email(username)
            uid = str(user.id)
        await srv_utils._cleanup_db()
        return uid

    # the user manager prints "User ... has been added." to stdout
    with open(os.devnull, "w") as null, contextlib.redirect_stdout(null):
        return asyncio.run(run())


def populate(statedir, roots, uid):
    """Copies `@public` and `@shared` (uid None), or `@personal` into the user's dir."""
    todo = [("@personal", os.path.join("personal", uid))] if uid else list(ROOTS.items())
    for root, sub in todo:
        src = os.path.join(roots, root)
        if os.path.isdir(src):
            shutil.copytree(src, os.path.join(statedir, sub), dirs_exist_ok=True)


def pdeathsig():
    # Linux: the child gets SIGTERM when the launcher thread that forked it dies
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def answers(port):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/roots", timeout=1) as r:
            return r.status == 200
    except OSError:
        return False


def start(statedir, port, secret, user, log):
    env = dict(os.environ)
    env["CATERVA2_SECRET"] = secret
    if user:
        env[USER_ENV] = json.dumps(user)  # not in argv, which any local process can read
    env.pop("http_proxy", None), env.pop("https_proxy", None)
    env.pop("HTTP_PROXY", None), env.pop("HTTPS_PROXY", None)
    conf = os.path.join(statedir, "caterva2-server.toml")
    cmd = [sys.executable, os.path.abspath(__file__), "--run-server", f"--conf={conf}",
           f"--statedir={statedir}", f"--listen=127.0.0.1:{port}"]
    return subprocess.Popen(cmd, cwd=statedir, env=env, stdin=subprocess.DEVNULL, stdout=log,
                            stderr=subprocess.STDOUT, preexec_fn=pdeathsig)


def stop(proc):
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def run_server(argv):
    """The server process: Caterva2's own `main`, with lazy expressions openable (see below)."""
    sys.argv = [sys.argv[0], *argv]
    import blosc2

    # python-blosc2 4.14 opens a saved lazy expression only with `deserialize="full"` (it
    # raises UnsafeDeserializationError otherwise), and Caterva2 2026.9.2 calls `blosc2.open`
    # without it, so with the pinned pair every `api/info` of a computed dataset answers 500.
    # The server opens only files under its state dir, written by our fixture generator.
    if STRICT not in os.environ:
        plain_open = blosc2.open

        def open_full(urlpath, *args, **kwargs):
            kwargs.setdefault("deserialize", "full")
            return plain_open(urlpath, *args, **kwargs)

        blosc2.open = open_full
    user = os.environ.pop(USER_ENV, None)
    if user:
        user = json.loads(user)
        statedir = next(a.split("=", 1)[1] for a in argv if a.startswith("--statedir="))
        uid = add_user(statedir, user["username"], user["password"])
        with open(os.path.join(statedir, "user-id"), "w") as f:
            f.write(uid)
    from caterva2.services import server

    server.main()


STRICT = "CHUNKWISE_CATERVA2_STRICT_OPEN"
USER_ENV = "CHUNKWISE_CATERVA2_ADD_USER"


def main():
    if sys.argv[1:2] == ["--run-server"]:
        return run_server(sys.argv[2:])
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--roots", required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--statedir")
    ap.add_argument("--username", default="user@example.com")
    ap.add_argument("--password")
    ap.add_argument("--no-login", action="store_true")
    ap.add_argument("--latency-ms", type=float, default=0)
    args = ap.parse_args()
    login = not args.no_login
    password = args.password or secrets.token_urlsafe(12)
    own_statedir = args.statedir is None
    statedir = os.path.abspath(args.statedir or tempfile.mkdtemp(prefix="chunkwise-caterva2-"))
    os.makedirs(statedir, exist_ok=True)
    if os.listdir(statedir):
        sys.exit(f"caterva2-serve: state dir {statedir} is not empty")
    secret = secrets.token_hex(32)
    proc = None
    try:
        port = args.port or free_port()
        write_conf(statedir, port, login)
        roots = os.path.abspath(args.roots)
        populate(statedir, roots, None)
        user = {"username": args.username, "password": password} if login else None
        for attempt in range(3):
            log = open(os.path.join(statedir, "server.log"), "ab")
            proc = start(statedir, port, secret, user, log)
            log.close()
            deadline = time.monotonic() + 30
            while proc.poll() is None and time.monotonic() < deadline and not answers(port):
                time.sleep(0.1)
            if proc.poll() is None and answers(port):
                break
            stop(proc)
            proc = None
            if args.port:
                break
            port = free_port()  # the picked port was taken meanwhile: try another
            write_conf(statedir, port, login)
        if proc is None:
            with open(os.path.join(statedir, "server.log"), "rb") as f:
                sys.stderr.write(f.read()[-4000:].decode(errors="replace"))
            sys.exit("caterva2-serve: the server did not start")
        if login:
            with open(os.path.join(statedir, "user-id")) as f:
                populate(statedir, roots, f.read().strip())

        urlbase = server_urlbase = f"http://127.0.0.1:{port}/"
        stats_url = None
        if args.latency_ms:
            sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
            sys.dont_write_bytecode = True  # no scripts/__pycache__
            from latency_proxy import LatencyProxy

            proxy_port = LatencyProxy(server_urlbase, args.latency_ms).start()
            urlbase = f"http://127.0.0.1:{proxy_port}/"
            stats_url = f"{urlbase}__latency_proxy/stats"
        print(json.dumps({
            "port": port, "urlbase": urlbase, "server_urlbase": server_urlbase,
            "stats_url": stats_url,
            "username": args.username if login else None,
            "password": password if login else None,
            "statedir": statedir, "public_dir": os.path.join(statedir, "public"),
            "pid": proc.pid,
        }), flush=True)

        done = threading.Event()
        signal.signal(signal.SIGTERM, lambda *_: done.set())
        signal.signal(signal.SIGINT, lambda *_: done.set())

        def stdin_closed():
            try:
                while os.read(0, 4096):  # the raw fd: no buffer lock held at shutdown
                    pass
            except OSError:
                pass
            done.set()

        threading.Thread(target=stdin_closed, daemon=True).start()
        while not done.wait(0.5):
            if proc.poll() is not None:
                sys.stderr.write(f"caterva2-serve: the server exited ({proc.returncode})\n")
                break
    finally:
        if proc is not None:
            stop(proc)
        if own_statedir:
            shutil.rmtree(statedir, ignore_errors=True)


if __name__ == "__main__":
    main()
