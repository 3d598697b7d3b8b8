// Dataset checks for lanced that need node: (1) Arrow IPC bodies of dataset takes decode with
// apache-arrow to exactly Lance's answers (tests/fixtures/datasets/*.answers, converted with
// the fixtures' own tableToJsonRows); (2) versions committed by LanceDB while the daemon runs
// (table.add, then table.delete) are served by the next request and equal LanceDB's own
// takeOffsets, while the version before stays readable pinned.
// Usage: node daemon_datasets.mjs BASE_URL ROOT   (ROOT/live/app.lance: a copy of multi_v22,
// served as live/app.lance). Prints ok/FAIL lines and "N passed, M failed"; exits 1 on failure.
import * as lancedb from "@lancedb/lancedb";
import * as arrow from "apache-arrow";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { tableToJsonRows } from "../fixtures/jsonrows.mjs";

const [base, root] = process.argv.slice(2);
const here = path.dirname(fileURLToPath(import.meta.url));
const FIX = path.join(here, "../fixtures/datasets");
let passed = 0, failed = 0;
const ok = (m) => { passed++; if (process.env.VERBOSE) console.log("ok   " + m); };
const bad = (m) => { failed++; console.log("FAIL " + m); };
const check = (cond, m, detail = "") => (cond ? ok(m) : bad(m + (detail ? ": " + detail : "")));

async function get(url, opts) {
  const r = await fetch(url, opts);
  return { status: r.status, body: Buffer.from(await r.arrayBuffer()) };
}
const rowsUrl = (dir, ids, version) =>
  `${base}/files/${dir}/rows?ids=${ids.join(",")}${version ? `&version=${version}` : ""}`;

// ---- (1) Arrow bodies vs Lance's answers: a few lines per fixture, latest and pinned --------
for (const f of fs.readdirSync(FIX).filter((n) => n.endsWith(".answers")).sort()) {
  const name = f.replace(/\.answers$/, "");
  const lines = fs.readFileSync(path.join(FIX, f), "utf8").split("\n").filter(Boolean);
  const pick = [lines[2], lines[4], lines.find((l) => l.split("\t")[1] !== "0")].filter(Boolean);
  for (const line of pick) {
    const [ids, version, expected] = line.split("\t");
    const idv = JSON.parse(ids);
    const v = Number(version);
    const r = await get(rowsUrl(`ds/${name}.lance`, idv, v) + "&format=arrow");
    if (r.status !== 200) { bad(`arrow ${name}@${v}: status ${r.status} ${r.body.toString().slice(0, 200)}`); continue; }
    const t = arrow.tableFromIPC(new Uint8Array(r.body));
    const got = tableToJsonRows(t);
    check(got === expected, `arrow ${name}@${v} ids ${ids.slice(0, 40)}`, `\n got ${got.slice(0, 300)}\nwant ${expected.slice(0, 300)}`);
  }
}

// ---- (2) versions committed while the daemon runs -------------------------------------------
// The daemon checks a dataset's latest version at most every revalidate_ms (its flag, passed
// here as LANCED_REVALIDATE_MS): a commit must be served once that much time has passed.
const REVALIDATE_MS = Number(process.env.LANCED_REVALIDATE_MS ?? 0);
const settle = () => new Promise((r) => setTimeout(r, REVALIDATE_MS ? REVALIDATE_MS + 50 : 0));
const dir = "live/app.lance";
const describe = async (version) => {
  const r = await get(`${base}/files/${dir}${version ? `?version=${version}` : ""}`);
  if (r.status !== 200) throw new Error(`describe ${dir}: ${r.status} ${r.body}`);
  return JSON.parse(r.body.toString());
};
const daemonRows = async (ids, version) => {
  const r = await get(rowsUrl(dir, ids, version));
  return r.status === 200 ? r.body.toString() : `status ${r.status}: ${r.body}`;
};
// takeOffsets returns the rows of the sorted unique offsets: ask for exactly those.
const lanceRows = async (tbl, ids) => tableToJsonRows(await tbl.takeOffsets(ids).toArrow());
const sortedUnique = (a) => [...new Set(a)].sort((x, y) => x - y);

const db = await lancedb.connect(path.join(root, "live"));
const tbl = await db.openTable("app");
const d0 = await describe();
const n0 = await tbl.countRows();
check(d0.type === "dataset" && d0.num_rows === n0, `live: daemon sees ${n0} rows`, JSON.stringify(d0).slice(0, 200));
const v0 = d0.version;
const before = await daemonRows([0, n0 - 1]);
check(before === (await lanceRows(tbl, [0, n0 - 1])), "live: rows before the append");

// Append 40 rows with LanceDB (a new version with a new fragment).
// The fixture's schema (tests/fixtures/gen-datasets.mjs); LanceDB's own schema object comes
// from its bundled Arrow and does not mix with this one.
const schema = new arrow.Schema([
  new arrow.Field("id", new arrow.Int64(), false),
  new arrow.Field("x", new arrow.Float64(), true),
  new arrow.Field("s", new arrow.Utf8(), true),
  new arrow.Field("l", new arrow.List(new arrow.Field("item", new arrow.Int32(), true)), true),
]);
const add = 40;
const cols = {};
for (const field of schema.fields) {
  const vals = [];
  for (let i = 0; i < add; i++) {
    const id = n0 + i;
    if (field.name === "id") vals.push(BigInt(id));
    else if (field.name === "x") vals.push(i % 7 === 3 ? null : id * 0.5 - 100.25);
    else if (field.name === "s") vals.push(i % 9 === 4 ? null : `appended-${id}`);
    else if (field.name === "l") vals.push(i % 5 === 2 ? null : Array.from({ length: i % 4 }, (_, k) => id + k));
  }
  cols[field.name] = arrow.vectorFromArray(vals, field.type);
}
await tbl.add(new arrow.Table(schema, cols));
await settle();
const d1 = await describe();
const n1 = await tbl.countRows();
check(d1.version > v0 && d1.num_rows === n1 && n1 === n0 + add,
      `live: the appended version is served within revalidate_ms (${REVALIDATE_MS} ms; v${v0} → v${d1.version}, ${n1} rows)`,
      JSON.stringify({ version: d1.version, num_rows: d1.num_rows, n1 }));
const newIds = sortedUnique([0, n0 - 1, ...Array.from({ length: add }, (_, i) => n0 + i)]);
const got1 = await daemonRows(newIds);
const want1 = await lanceRows(tbl, newIds);
check(got1 === want1, "live: new rows equal LanceDB's takeOffsets", `\n got ${got1.slice(0, 300)}\nwant ${want1.slice(0, 300)}`);
check((await daemonRows([0, n0 - 1], v0)) === before, `live: version ${v0} still readable pinned`);
const pinnedPast = await get(rowsUrl(dir, [n0], v0));
check(pinnedPast.status === 400 && /out_of_range/.test(pinnedPast.body), `live: row ${n0} is past the end of v${v0}`, `${pinnedPast.status}`);

// Delete rows (a version with deletion files): offsets shift, the daemon follows.
await tbl.delete("id % 10 = 3");
await settle();
const d2 = await describe();
const n2 = await tbl.countRows();
check(d2.version > d1.version && d2.num_rows === n2 && n2 < n1,
      `live: the delete is served within revalidate_ms (v${d2.version}, ${n2} rows)`, JSON.stringify({ v: d2.version, n: d2.num_rows, n2 }));
const ids2 = sortedUnique(Array.from({ length: 50 }, (_, i) => (i * 37) % n2).concat([n2 - 1]));
const got2 = await daemonRows(ids2);
const want2 = await lanceRows(tbl, ids2);
check(got2 === want2, "live: rows after the delete equal LanceDB's", `\n got ${got2.slice(0, 300)}\nwant ${want2.slice(0, 300)}`);
check((await daemonRows(newIds, d1.version)) === want1, `live: version ${d1.version} still readable pinned`);

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
