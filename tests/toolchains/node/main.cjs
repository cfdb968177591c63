// The same in CommonJS: require("chunkwise").
const { ChunkwiseError, RemoteArray } = require("chunkwise");
const [src, select, missingUrl] = process.argv.slice(2);
(async () => {
  await require("chunkwise").default();
  const arr = await RemoteArray.open(src);
  const { data, shape, dtype } = await arr.read(select);
  let missing = null;
  try {
    await RemoteArray.open(missingUrl);
  } catch (e) {
    missing = { isClass: e instanceof ChunkwiseError, isError: e instanceof Error, code: e.code, name: e.name };
  }
  arr.close();
  console.log(JSON.stringify({ shape, dtype, values: Array.from(data, Number), missing, same: true }));
})().catch((e) => { console.error(e); process.exit(1); });
