// The object-store test bed (issue 15), checked before lanced reads from it: every dataset
// fixture (tests/fixtures/datasets/*.lance: appends, deletions, added columns, dictionaries,
// compaction; pinned versions) is uploaded byte for byte to s3rver, and LanceDB reading it
// as s3:// through the fault proxy must give the answers Lance recorded for the local copy.
// Then the proxy's own behaviour: request counting, latency, 503 SlowDown, 403, resets and
// truncated bodies as a client sees them.
//
// Usage: node tests/s3/lancedb_s3.mjs   (prints "ok ..." lines; exits 1 on any failure)
import * as lancedb from "@lancedb/lancedb";
import { S3Client, GetObjectCommand } from "@aws-sdk/client-s3";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { storeTest, uploadDir, lancedbOptions, ACCESS_KEY, SECRET_KEY, REGION } from "./s3env.mjs";
import { tableToJsonRows, takeOffsetsJson } from "../fixtures/jsonrows.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const FIXTURES = path.join(here, "..", "fixtures", "datasets");
const t = await storeTest("s3 test bed");
const { ok, bad, px } = t;
await t.run(datasetsMatchLance, proxyFaults);

async function datasetsMatchLance() {
  const names = fs
    .readdirSync(FIXTURES)
    .filter((f) => f.endsWith(".lance"))
    .map((f) => f.slice(0, -".lance".length))
    .filter((n) => fs.existsSync(path.join(FIXTURES, `${n}.answers`)));
  if (!names.length) throw new Error(`no dataset fixtures in ${FIXTURES}`);
  let objects = 0;
  for (const n of names) objects += await uploadDir(px.endpoint, "lance", `fx/${n}.lance`, path.join(FIXTURES, `${n}.lance`));
  ok(`${names.length} datasets uploaded (${objects} objects)`);

  const db = await lancedb.connect("s3://lance/fx", { storageOptions: lancedbOptions(px.endpoint) });
  let cases = 0, mismatched = 0;
  for (const n of names) {
    const tbl = await db.openTable(n);
    const lines = fs.readFileSync(path.join(FIXTURES, `${n}.answers`), "utf8").split("\n").filter(Boolean);
    // Stable-row-id tables: Lance 10's takeOffsets answers no rows once one is compacted, so
    // their answers were recorded from Lance's scan (gen-datasets.mjs recordScan): read so here.
    // Legacy tables (the _v01 ones) likewise: Lance 10 takes no offsets from legacy files.
    const scanned = fs.existsSync(path.join(FIXTURES, `${n}.rowids`)) || n.endsWith("_v01");
    let mismatch = null;
    for (const line of lines) {
      const [idsText, pinned, body] = line.split("\t");
      if (+pinned) await tbl.checkout(+pinned);
      else await tbl.checkoutLatest();
      let got;
      if (scanned) {
        const all = await tbl.query().toArrow();
        got = tableToJsonRows(all, all.schema.fields.map((f) => f.name), JSON.parse(idsText));
      } else got = await takeOffsetsJson(tbl, JSON.parse(idsText));
      if (got !== body && !mismatch) mismatch = `ids ${idsText.slice(0, 60)} version ${pinned}: ${got.slice(0, 120)} != ${body.slice(0, 120)}`;
      cases++;
    }
    tbl.close();
    if (mismatch) {
      mismatched++;
      bad(`${n} from s3`, mismatch);
    }
  }
  const st = px.stats();
  if (!mismatched) ok(`LanceDB over s3rver gives Lance's recorded answers: ${cases} takes over ${names.length} datasets`);
  if (st.rangeGets > 0 && st.byMethod.GET >= st.rangeGets) ok(`proxy counted ${st.requests} requests, ${st.rangeGets} range GETs`);
  else bad("proxy counts", JSON.stringify(st));
}

// A raw GET of one object through the proxy, as a client that does not retry sees it.
async function rawGet(key, range) {
  const c = new S3Client({ endpoint: px.endpoint, region: REGION, forcePathStyle: true, maxAttempts: 1, credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY } });
  try {
    const r = await c.send(new GetObjectCommand({ Bucket: "lance", Key: key, Range: range }));
    return { status: r.$metadata.httpStatusCode, body: Buffer.from(await r.Body.transformToByteArray()) };
  } catch (e) {
    return { status: e.$metadata?.httpStatusCode, code: e.Code ?? e.name, error: String(e.message ?? e) };
  } finally {
    c.destroy();
  }
}

async function proxyFaults() {
  const dir = path.join(FIXTURES, fs.readdirSync(FIXTURES).find((f) => f.endsWith(".lance")));
  const rel = fs.readdirSync(path.join(dir, "_versions"))[0];
  const key = `fx/${path.basename(dir)}/_versions/${rel}`;
  const local = fs.readFileSync(path.join(dir, "_versions", rel));

  const whole = await rawGet(key, "bytes=0-63");
  if (whole.status === 206 && whole.body.equals(local.subarray(0, 64))) ok("range GET through the proxy: 206, the object's bytes");
  else bad("range GET", JSON.stringify(whole).slice(0, 200));

  px.fail({ status: 503, method: "GET" });
  const slow = await rawGet(key);
  if (slow.status === 503 && slow.code === "SlowDown") ok("injected 503 answers SlowDown");
  else bad("503 SlowDown", JSON.stringify(slow).slice(0, 200));

  px.fail({ status: 403, method: "GET" });
  const denied = await rawGet(key);
  if (denied.status === 403 && denied.code === "AccessDenied") ok("injected 403 answers AccessDenied");
  else bad("403", JSON.stringify(denied).slice(0, 200));

  px.fail({ reset: true, method: "GET" });
  const reset = await rawGet(key);
  if (reset.status === undefined && reset.error) ok(`injected reset: the client sees a connection error (${reset.error.slice(0, 60)})`);
  else bad("reset", JSON.stringify(reset).slice(0, 200));

  px.fail({ truncate: 10, method: "GET" });
  const cut = await rawGet(key);
  if (cut.error || (cut.body && cut.body.length < local.length)) ok("injected truncation: the body ends early");
  else bad("truncation", JSON.stringify(cut).slice(0, 200));

  const again = await rawGet(key);
  if (again.status === 200 && again.body.equals(local)) ok("faults are used up: the next GET is whole");
  else bad("after faults", JSON.stringify(again).slice(0, 200));

  px.set({ latencyMs: 50 });
  const t0 = performance.now();
  await rawGet(key, "bytes=0-0");
  const ms = performance.now() - t0;
  px.set({ latencyMs: 0 });
  if (ms >= 50) ok(`latency injection delays a request (${ms.toFixed(0)} ms for 50 ms injected)`);
  else bad("latency", `${ms.toFixed(1)} ms`);
}
