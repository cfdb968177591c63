// Caterva2 sources: a real Caterva2 server (caterva2[server] 2026.9.2, scripts/caterva2-serve.py)
// on 127.0.0.1 publishing the python-blosc2 datasets of tests/fixtures/gen_caterva2.py.

import assert from "node:assert/strict";
import fs from "node:fs";
import { after, before, describe, test } from "node:test";
import { startCaterva2 } from "./lib.mjs";

let c2;
before(async () => { c2 = await startCaterva2(); });
after(async () => { await c2?.stop(); });

describe("the Caterva2 test server", () => {
  test("serves the fixtures publicly and the private roots after the login", async () => {
    const base = c2.urlbase;
    const j = async (url, init) => {
      const r = await fetch(url, init);
      assert.equal(r.status, 200, url);
      return r.json();
    };
    const want = c2.fixtures.datasets.map((d) => d.path).filter((p) => p.startsWith("@public/"))
      .map((p) => p.slice("@public/".length)).sort();
    assert.deepEqual(await j(`${base}api/list/@public`), want);
    for (const d of c2.fixtures.datasets.filter((x) => x.path.startsWith("@public/"))) {
      const info = await j(`${base}api/info/${d.path}`);
      assert.deepEqual(info.shape, d.shape, d.path);
      if (d.kind === "stored") assert.deepEqual(info.chunks, d.chunks, d.path);
      else assert.equal(info.expression, d.expression, d.path);
    }
    assert.equal((await fetch(`${base}api/list/@personal`)).status, 401);
    const login = await fetch(`${base}auth/jwt/login`, {
      method: "POST",
      body: new URLSearchParams({ username: c2.username, password: c2.password }),
    });
    assert.equal(login.status, 204);
    const cookie = login.headers.getSetCookie().find((c) => c.startsWith("c2subauth="));
    assert.ok(cookie, "the login sets c2subauth");
    const headers = { cookie: cookie.split(";")[0] };
    assert.deepEqual(await j(`${base}api/list/@personal`, { headers }), ["secret.b2nd"]);
    assert.deepEqual(await j(`${base}api/list/@shared`, { headers }), ["team.b2nd"]);
    assert.ok(fs.existsSync(c2.statedir));
  });
});
