// LanceDB in-process: closed loop of `table.takeOffsets(ids).toArrow()` with N promises in
// flight for a fixed time. One cell per invocation; prints one JSON object.
//
//   node bench/lancedb-inproc.mjs --root DIR --table NAME --batch B --inflight N --seconds S
//        [--ids DIR/ids.u32] [--columns a,b]
// Ids: consecutive draws from the seeded stream (id = draw % num_rows), so every batch size
// sees the same batches in the same order as the other runners that read ids.u32.
import fs from 'node:fs';
import * as lancedb from '@lancedb/lancedb';

const a = Object.fromEntries(process.argv.slice(2).reduce((acc, v, i, arr) => (i % 2 ? acc : acc.concat([[v.replace(/^--/, ''), arr[i + 1]]])), []));
const batch = +(a.batch ?? 1), inflight = +(a.inflight ?? 1), seconds = +(a.seconds ?? 5);
const db = await lancedb.connect(a.root);
const tbl = await db.openTable(a.table);
const n = await tbl.countRows();
const raw = new Uint32Array(fs.readFileSync(a.ids ?? `${a.root}/ids.u32`).buffer.slice(0));
const cols = a.columns ? a.columns.split(',') : undefined;
let cursor = 0;
function nextIds() {
  const ids = new Array(batch);
  for (let i = 0; i < batch; i++) { ids[i] = raw[cursor] % n; cursor = (cursor + 1) % raw.length; }
  return ids;
}
async function takeOnce(ids) {
  // takeOffsets(offsets, {columns}) where supported; the whole row otherwise.
  const q = tbl.takeOffsets(ids);
  const t = cols && q.select ? await q.select(cols).toArrow() : await q.toArrow();
  return t.numRows;
}
// Warm-up: open files, fill caches (not measured).
const warmEnd = performance.now() + Math.min(1000, seconds * 200);
while (performance.now() < warmEnd) await takeOnce(nextIds());

const lat = [];
let rows = 0, returned = 0, takes = 0;
const t0 = performance.now(), end = t0 + seconds * 1000;
async function loop() {
  while (performance.now() < end) {
    const s = performance.now();
    const got = await takeOnce(nextIds());
    lat.push(performance.now() - s);
    rows += batch; returned += got; takes++;
  }
}
await Promise.all(Array.from({ length: inflight }, loop));
const el = (performance.now() - t0) / 1000;
lat.sort((x, y) => x - y);
const pct = (p) => (lat.length ? Math.round(lat[Math.min(lat.length - 1, Math.floor(p * lat.length))] * 1000) : null);
console.log(JSON.stringify({ system: 'lancedb-inproc', batch, inflight, seconds: el, takes, rows, rows_returned: returned, rows_per_s: rows / el,
  takes_per_s: takes / el, latency_us: { p50: pct(0.5), p90: pct(0.9), p99: pct(0.99), max: pct(1) } }));
