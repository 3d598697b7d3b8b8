// The object-store baseline (issue 15): LanceDB in-process reading a dataset from s3rver
// through the counting proxy, with a round trip injected per request as a real region would
// add. Prints one JSON line per cell: rows/s, takes/s and GET requests per row taken (counted
// at the proxy, after a warm-up that loads the metadata).
//
//   node bench/s3-lancedb.mjs --dataset bench/data/small/scalars.lance [--latency-ms 20]
//        [--batches 1,100] [--inflight 4] [--seconds 10] [--ids bench/data/small/ids.u32]
// Ids: consecutive draws from the seeded stream (id = draw % num_rows), as bench/run.mjs's
// other runners read them.
import fs from "node:fs";
import path from "node:path";
import * as lancedb from "@lancedb/lancedb";
import { startS3, startProxy, uploadDir, lancedbOptions } from "../tests/s3/s3env.mjs";

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const dataset = arg("dataset");
if (!dataset) {
  console.error("usage: node bench/s3-lancedb.mjs --dataset DIR.lance [--latency-ms 20] [--batches 1,100] [--inflight 4] [--seconds 10] [--ids FILE]");
  process.exit(2);
}
const latencyMs = +arg("latency-ms", "20");
const batches = arg("batches", "1,100").split(",").map(Number);
const inflight = +arg("inflight", "4");
const seconds = +arg("seconds", "10");
const idsFile = arg("ids", path.join(path.dirname(dataset), "ids.u32"));
const raw = new Uint32Array(fs.readFileSync(idsFile).buffer.slice(0));

const s3 = await startS3({ bucket: "lance" });
const px = await startProxy(s3.endpoint);
try {
  const name = path.basename(dataset, ".lance");
  const objects = await uploadDir(px.endpoint, "lance", `bench/${name}.lance`, dataset);
  const db = await lancedb.connect("s3://lance/bench", { storageOptions: lancedbOptions(px.endpoint) });
  const tbl = await db.openTable(name);
  const n = await tbl.countRows();
  px.set({ latencyMs });
  let cursor = 0;
  const nextIds = (b) => Array.from({ length: b }, () => raw[cursor++ % raw.length] % n);
  for (const b of batches) {
    // Warm-up: manifest, file metadata and whatever LanceDB keeps (not measured).
    for (let i = 0; i < 3; i++) await tbl.takeOffsets(nextIds(b)).toArrow();
    px.resetStats();
    let rows = 0, takes = 0;
    const t0 = performance.now(), end = t0 + seconds * 1000;
    const loop = async () => {
      while (performance.now() < end) {
        // Awaited first: `rows += await ...` would read rows before the await and lose the
        // other loops' additions.
        const got = (await tbl.takeOffsets(nextIds(b)).toArrow()).numRows;
        rows += got;
        takes++;
      }
    };
    await Promise.all(Array.from({ length: inflight }, loop));
    const secs = (performance.now() - t0) / 1000, st = px.stats();
    console.log(JSON.stringify({ system: "lancedb-s3", dataset: name, objects, batch: b, inflight, latency_ms: latencyMs,
      rows_per_s: rows / secs, takes_per_s: takes / secs, gets_per_row: st.byMethod.GET / rows, requests_per_row: st.requests / rows,
      bytes_per_row: st.bytesOut / rows, rows, seconds: secs }));
  }
  tbl.close();
} finally {
  await px.close();
  await s3.close();
}
