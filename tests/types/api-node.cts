// require() of the Node build: the same exports, init included.
import cw = require("chunkwise");
const { RemoteArray, ChunkwiseError, initSync } = cw;
initSync();
async function main(): Promise<void> {
  await cw.default();
  const arr = await RemoteArray.open("http://127.0.0.1:1/x.b2nd");
  console.log(arr.shape, ChunkwiseError.name);
}
void main();
