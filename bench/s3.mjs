// The object-store section of `make bench` (issue 15): one dataset on s3rver behind the
// counting proxy, a round trip injected per request as a real region adds (--latency-ms,
// default 20), read by LanceDB in-process (takeOffsets(ids).toArrow()) and by lanced over HTTP
// (format=arrow) with its page cache and without it (s3_cache_budget 0: what coalescing and
// parallelism alone buy). Each cell: metadata warm (3 takes first, not measured), `inflight`
// takes in flight for --seconds, rows/s and requests per row counted at the proxy (GETs —
// ranges and listings — and HEADs). Ratios are against LanceDB measured in the same run.
//
//   node --openssl-legacy-provider bench/s3.mjs --dataset bench/data/small/scalars.lance
//        [--bin bin] [--latency-ms 20] [--batches 1,100] [--inflight 4] [--seconds 10]
//        [--ids FILE] [--systems lancedb,lanced,lanced-nocache] [--out DIR]
// Prints one JSON line per cell; with --out writes s3.json and s3.md (a report section).
// Ids: consecutive draws from the seeded stream (id = draw % num_rows), as bench/run.mjs's
// other runners read them.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import * as lancedb from "@lancedb/lancedb";
import { startS3, startProxy, uploadDir, lancedbOptions, ACCESS_KEY, SECRET_KEY, REGION } from "../tests/s3/s3env.mjs";

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const dataset = arg("dataset");
if (!dataset) {
  console.error("usage: node bench/s3.mjs --dataset DIR.lance [--bin bin] [--latency-ms 20] [--batches 1,100] [--inflight 4] [--seconds 10] [--ids FILE] [--systems ...] [--out DIR]");
  process.exit(2);
}
const bin = arg("bin", "bin");
const latencyMs = +arg("latency-ms", "20");
const batches = arg("batches", "1,100").split(",").map(Number);
const inflight = +arg("inflight", "4");
const seconds = +arg("seconds", "10");
const systems = arg("systems", "lancedb,lanced,lanced-nocache").split(",");
const out = arg("out");
const idsFile = arg("ids", path.join(path.dirname(dataset), "ids.u32"));
const raw = new Uint32Array(fs.readFileSync(idsFile).buffer.slice(0));
const name = path.basename(dataset, ".lance");

const s3 = await startS3({ bucket: "lance" });
const px = await startProxy(s3.endpoint);
const results = [];
const daemons = [];
try {
  const objects = await uploadDir(px.endpoint, "lance", `bench/${name}.lance`, dataset);
  const db = await lancedb.connect("s3://lance/bench", { storageOptions: lancedbOptions(px.endpoint) });
  const tbl = await db.openTable(name);
  const n = await tbl.countRows();
  const takers = {
    lancedb: async (ids) => (await tbl.takeOffsets(ids).toArrow()).numRows,
  };
  for (const s of systems)
    if (!["lancedb", "lanced", "lanced-nocache"].includes(s)) throw new Error(`unknown system ${s}`);
  for (const sys of systems.filter((s) => s === "lanced" || s === "lanced-nocache")) {
    const base = await startLanced(sys === "lanced-nocache" ? ["--s3-cache-budget", "0"] : []);
    takers[sys] = async (ids) => {
      const r = await fetch(`${base}/files/s3/${name}.lance/rows?ids=${ids.join(",")}&format=arrow`);
      if (r.status !== 200) throw new Error(`${sys}: ${r.status} ${(await r.text()).slice(0, 200)}`);
      await r.arrayBuffer();
      return ids.length; /* a take answers every id or fails */
    };
  }
  px.set({ latencyMs });
  let cursor = 0;
  const nextIds = (b) => Array.from({ length: b }, () => raw[cursor++ % raw.length] % n);
  for (const b of batches)
    for (const sys of systems) {
      const take = takers[sys];
      for (let i = 0; i < 3; i++) await take(nextIds(b)); // warm-up: manifest, metadata
      px.resetStats();
      let rows = 0, takes = 0;
      const t0 = performance.now(), end = t0 + seconds * 1000;
      const loop = async () => {
        while (performance.now() < end) {
          // Awaited first: `rows += await ...` would read rows before the await and lose the
          // other loops' additions.
          const got = await take(nextIds(b));
          rows += got;
          takes++;
        }
      };
      await Promise.all(Array.from({ length: inflight }, loop));
      const secs = (performance.now() - t0) / 1000, st = px.stats();
      const cell = { system: sys, dataset: name, objects, batch: b, inflight, latency_ms: latencyMs, rows_per_s: rows / secs,
        takes_per_s: takes / secs, gets_per_row: (st.byMethod.GET ?? 0) / rows, heads_per_row: (st.byMethod.HEAD ?? 0) / rows,
        requests_per_row: st.requests / rows, bytes_per_row: st.bytesOut / rows, rows, seconds: secs };
      results.push(cell);
      console.log(JSON.stringify(cell));
    }
  tbl.close();
} finally {
  for (const d of daemons) d.kill("SIGTERM");
  await px.close();
  await s3.close();
}
if (out) {
  fs.writeFileSync(path.join(out, "s3.json"), JSON.stringify(results, null, 1));
  fs.writeFileSync(path.join(out, "s3.md"), report());
}

// lanced serving the bucket's bench/ prefix as /files/s3/, credentials in its environment.
async function startLanced(extra) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "lanced-bench-s3."));
  const env = { ...process.env, AWS_ACCESS_KEY_ID: ACCESS_KEY, AWS_SECRET_ACCESS_KEY: SECRET_KEY, AWS_REGION: REGION };
  const d = spawn(path.join(bin, "lanced"), ["--root", root, "--listen", "127.0.0.1:0", "--mount", "s3=s3://lance/bench",
    "--s3-endpoint", px.endpoint, ...extra], { env, stdio: ["ignore", "pipe", "pipe"] });
  daemons.push(d);
  let log = "";
  d.stdout.on("data", (x) => (log += x));
  d.stderr.on("data", (x) => (log += x));
  for (let i = 0; i < 100; i++) {
    const m = /listening on (127\.0\.0\.1:\d+)/.exec(log);
    if (m) return `http://${m[1]}`;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`lanced did not start: ${log.slice(0, 400)}`);
}

function report() {
  const f = (x, d = 0) => x.toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d });
  const lines = [`## Object storage: ${name} on s3rver, ${latencyMs} ms per request, ${inflight} takes in flight`, "",
    "Requests counted at the proxy after a warm-up of 3 takes (metadata loaded); GETs include listings. " +
    "Ratios against LanceDB in-process in this run. `lanced (no cache)` runs with `--s3-cache-budget 0`.", "",
    "| system | batch | rows/s | vs LanceDB | GETs per row | HEADs per row | KB fetched per row |", "| --- | --- | --- | --- | --- | --- | --- |"];
  for (const c of results) {
    const ref = results.find((r) => r.system === "lancedb" && r.batch === c.batch);
    const label = c.system === "lanced-nocache" ? "lanced (no cache)" : c.system === "lanced" ? "lanced (page cache)" : "LanceDB in-process";
    lines.push(`| ${label} | ${c.batch} | ${f(c.rows_per_s)} | ${ref ? f(c.rows_per_s / ref.rows_per_s, 2) + "x" : "-"} | ${f(c.gets_per_row, 4)} | ${f(c.heads_per_row, 4)} | ${f(c.bytes_per_row / 1024, 2)} |`);
  }
  return lines.join("\n") + "\n\n";
}
