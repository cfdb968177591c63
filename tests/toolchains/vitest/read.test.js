// The README start under Vitest (its default Node environment): the package resolves to the
// Node build, whose init() does nothing. The server URL and the expected values come from
// tests/toolchains/run.mjs through the environment (CHUNKWISE_TOOLCHAIN_CASE, JSON).
import { expect, test } from "vitest";
import init, { ChunkwiseError, RemoteArray } from "chunkwise";

const c = JSON.parse(process.env.CHUNKWISE_TOOLCHAIN_CASE);

test("reads the fixture and rejects a missing one with a ChunkwiseError", async () => {
  await init();
  const arr = await RemoteArray.open(c.src);
  const { data, shape, dtype } = await arr.read(c.select);
  expect({ shape, dtype, values: Array.from(data, Number) }).toEqual(c.expected);
  const err = await RemoteArray.open(c.missing).catch((e) => e);
  expect(err).toBeInstanceOf(ChunkwiseError);
  expect(err.code).toBe("NOT_FOUND");
  arr.close();
});
