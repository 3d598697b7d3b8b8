// lanced serving an object-store root (issue 15): the conformance fixtures — every data file
// and every dataset, several versions, deletions — uploaded to s3rver behind the
// SigV4-checking, fault-injecting proxy, mounted with `--mount s3=s3://lance/fx` (and again as
// s3b), and every one of Lance's recorded answers asked of the daemon: JSON bodies byte for
// byte, Arrow bodies decoded by apache-arrow to the same rows, pinned dataset versions
// included; Connect Take calls and ?format=proto too. Then how it reads: a repeated take costs
// no GET (page cache), a first take no HEAD and few GETs at once, takes of cached objects run on
// the event loop with no hand-off. Then its behaviour around the store: a replaced object served
// in its new version after the revalidation interval, 503s retried, 403 and 404 naming the
// object, a store that does not answer never delaying the local root or the other mount, and
// the secret key never in a log line, a metric or a body.
//
// Usage: node --openssl-legacy-provider tests/s3/daemon_s3.mjs [BIN]   (BIN defaults to bin)
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import * as lancedb from "@lancedb/lancedb";
import * as arrow from "apache-arrow";
import { tableFromIPC } from "apache-arrow";
import { tableToJsonRows } from "../fixtures/jsonrows.mjs";
import { storeTest, uploadDir, lancedbOptions, ACCESS_KEY, SECRET_KEY } from "./s3env.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, "..", "..");
const LANCED = path.join(root, process.argv[2] ?? "bin", "lanced");
const FIX = path.join(root, "tests", "fixtures");
const REVALIDATE_MS = 300;
// Two mounts: each may have a third of it waiting on its store (mountShare).
const MAX_INFLIGHT = 60;
const t = await storeTest("daemon_s3");
const { ok, bad, check, px } = t;
const work = fs.mkdtempSync(path.join(os.tmpdir(), "lanced-s3d."));
let daemon = null, base = "", log = "";
const errorBodies = [];


async function upload() {
  await uploadDir(px.endpoint, "lance", "fx/data", path.join(FIX, "data"));
  await uploadDir(px.endpoint, "lance", "fx/datasets", path.join(FIX, "datasets"));
  // The local root: one fixture file, to show local requests are served alongside.
  fs.mkdirSync(path.join(work, "root"));
  fs.copyFileSync(path.join(root, fixtures()[0].file), path.join(work, "root", "local.lance"));
}

function fixtures() {
  return JSON.parse(fs.readFileSync(path.join(FIX, "index.json"), "utf8")).fixtures;
}

async function startDaemon() {
  // Credentials from the config file (the environment is the other way, used by lancectl).
  const conf = path.join(work, "lanced.conf");
  fs.writeFileSync(conf, `s3_access_key_id = ${ACCESS_KEY}\ns3_secret_access_key = ${SECRET_KEY}\n`, { mode: 0o600 });
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith("AWS_")) delete env[k];
  daemon = spawn(LANCED, ["--config", conf, "--root", path.join(work, "root"), "--listen", "127.0.0.1:0", "--workers", "1",
    "--mount", "s3=s3://lance/fx", "--mount", "s3b=s3://lance/fx", "--s3-endpoint", px.endpoint, "--s3-region", "us-east-1", "--s3-revalidate-ms", String(REVALIDATE_MS),
    "--s3-timeout-ms", "4000", "--max-inflight", String(MAX_INFLIGHT), "--request-log", "on", "--log-level", "debug"], { env });
  daemon.stdout.on("data", (d) => (log += d));
  daemon.stderr.on("data", (d) => { log += d; if (process.env.DAEMON_LOG) process.stderr.write(d); });
  for (let i = 0; i < 100 && !base; i++) {
    const m = /listening on (127\.0\.0\.1:\d+)/.exec(log);
    if (m) base = `http://${m[1]}`;
    else await new Promise((r) => setTimeout(r, 100));
  }
  if (!base) throw new Error(`lanced did not start: ${log.slice(0, 500)}`);
  ok(`lanced serves s3://lance/fx as /files/s3/ (${px.endpoint})`);
}

// A clean exit: under ASan/UBSan a report (a leak found at exit included) fails it.
async function stopDaemon() {
  const exited = new Promise((r) => daemon.on("exit", (code, sig) => r({ code, sig })));
  daemon.kill("SIGTERM");
  const { code, sig } = await exited;
  check(code === 0 && !/Sanitizer/.test(log), `lanced exits cleanly on SIGTERM (status ${code ?? sig})`, log.split("\n").filter((l) => /Sanitizer|ERROR/.test(l)).slice(0, 3).join(" | "));
}

async function get(url, opts) {
  const r = await fetch(base + url, opts);
  const body = Buffer.from(await r.arrayBuffer());
  if (r.status !== 200) errorBodies.push(body.toString());
  return { status: r.status, body };
}

// Runs jobs four at a time (lanced's clients do not wait for each other).
async function pool(jobs, fn) {
  const worker = async () => {
    for (let j; (j = jobs.shift()); ) await fn(j);
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
}

const query = (ids, cols) => `ids=${ids.join(",")}${cols ? `&columns=${cols.join(",")}` : ""}&blobs=descriptors`;

// Every answer line of every data-file fixture as JSON; every fourth also as Arrow.
async function fileAnswers() {
  const jobs = [];
  for (const fx of fixtures()) {
    const rel = `s3/${fx.file.replace(/^tests\/fixtures\//, "")}`;
    fs.readFileSync(path.join(root, fx.answers), "utf8").split("\n").filter(Boolean).forEach((line, i) => {
      const [ids, cols, body] = line.split("\t");
      jobs.push({ rel, ids: JSON.parse(ids), cols: JSON.parse(cols), body, arrow: i % 4 === 0, where: `${fx.name}:${i + 1}` });
    });
  }
  px.resetStats();
  const n = jobs.length;
  let json = 0, arrow = 0, first = null;
  await pool(jobs, async (j) => {
    const r = await get(`/files/${j.rel}/rows?${query(j.ids, j.cols)}`);
    if (r.status === 200 && r.body.toString() === j.body) json++;
    else first ??= `${j.where}: ${r.status} ${r.body.toString().slice(0, 200)}`;
    if (!j.arrow) return;
    const a = await get(`/files/${j.rel}/rows?${query(j.ids, j.cols)}&format=arrow`);
    if (a.status === 200 && tableToJsonRows(tableFromIPC(new Uint8Array(a.body))) === j.body) arrow++;
    else first ??= `${j.where} (arrow): ${a.status} ${a.body.toString().slice(0, 200)}`;
  });
  const st = px.stats();
  check(!first, `${json} of ${n} of Lance's answers for ${fixtures().length} data files, JSON, through the daemon from s3 (${st.byMethod.HEAD ?? 0} HEADs, ${st.byMethod.GET ?? 0} GETs)`, first);
  check(!first, `${arrow} Arrow bodies decoded by apache-arrow equal to Lance's answers`, first);
}

// Every answer line of every dataset fixture (latest and pinned versions), JSON; every third
// also Arrow.
async function datasetAnswers() {
  const jobs = [];
  const names = fs.readdirSync(path.join(FIX, "datasets")).filter((f) => f.endsWith(".answers")).sort();
  for (const f of names) {
    const dir = `s3/datasets/${f.replace(/\.answers$/, "")}.lance`;
    fs.readFileSync(path.join(FIX, "datasets", f), "utf8").split("\n").filter(Boolean).forEach((line, i) => {
      const [ids, version, body] = line.split("\t");
      jobs.push({ dir, ids: JSON.parse(ids), version: Number(version), body, arrow: i % 3 === 0, where: `${f}:${i + 1}` });
    });
  }
  const n = jobs.length;
  let json = 0, arrow = 0, pinned = 0, first = null;
  await pool(jobs, async (j) => {
    const url = `/files/${j.dir}/rows?ids=${j.ids.join(",")}${j.version ? `&version=${j.version}` : ""}`;
    const r = await get(url);
    if (r.status === 200 && r.body.toString() === j.body) json++, (pinned += j.version ? 1 : 0);
    else first ??= `${j.where}: ${r.status} ${r.body.toString().slice(0, 200)}`;
    if (!j.arrow) return;
    const a = await get(url + "&format=arrow");
    if (a.status === 200 && tableToJsonRows(tableFromIPC(new Uint8Array(a.body))) === j.body) arrow++;
    else first ??= `${j.where} (arrow): ${a.status} ${a.body.toString().slice(0, 200)}`;
  });
  check(!first, `${json} of ${n} of Lance's answers for ${names.length} datasets from s3 (${pinned} at pinned versions), JSON`, first);
  check(!first && arrow > 0, `${arrow} dataset Arrow bodies equal to Lance's answers`, first);
}

// Rows by Lance row id from the mount (issue 35): Lance's takeRowIds bodies of the stable-row-id
// fixtures, and for every other dataset row_ids= the row addresses of a few live offsets
// answers what ids= those offsets does.
async function datasetRowIds() {
  const dir = path.join(FIX, "datasets");
  let n = 0, first = null;
  for (const f of fs.readdirSync(dir).filter((x) => x.endsWith(".takerowids")).sort()) {
    for (const line of fs.readFileSync(path.join(dir, f), "utf8").split("\n").filter(Boolean)) {
      const [version, ids, body] = line.split("\t");
      const r = await get(`/files/s3/datasets/${f.replace(/\.takerowids$/, "")}.lance/rows?row_ids=${JSON.parse(ids).join(",")}${+version ? `&version=${version}` : ""}`);
      if (r.status === 200 && r.body.toString() === body) n++;
      else first ??= `${f}: ${r.status} ${r.body.toString().slice(0, 200)}`;
    }
  }
  for (const f of fs.readdirSync(dir).filter((x) => x.endsWith(".rowaddr")).sort()) {
    const [, , addrs] = fs.readFileSync(path.join(dir, f), "utf8").split("\n")[0].split("\t");
    const a = JSON.parse(addrs), offs = [0, a.length - 1, a.length >> 1, 0];
    const ds = `/files/s3/datasets/${f.replace(/\.rowaddr$/, "")}.lance/rows?`;
    const [byOff, byId] = await Promise.all([get(`${ds}ids=${offs.join(",")}`), get(`${ds}row_ids=${offs.map((o) => a[o]).join(",")}`)]);
    if (byOff.status === 200 && byId.status === 200 && byOff.body.equals(byId.body)) n++;
    else first ??= `${f}: ${byId.status} ${byId.body.toString().slice(0, 200)}`;
  }
  check(!first && n > 0, `${n} row-id takes from s3 equal to Lance's (takeRowIds bodies, row addresses)`, first);
}

// A take whose pages were fetched before is served from the page cache: no GET (a HEAD at
// most, when the revalidation interval has passed), and /metrics counts the hits.
async function pageCache() {
  const fx = fixtures().find((f) => f.name === "core21");
  const url = `/files/s3/${fx.file.replace(/^tests\/fixtures\//, "")}/rows?ids=3,40000,99999`;
  const first = await get(url);
  px.resetStats();
  const again = await get(url);
  const st = px.stats();
  const metrics = (await get("/metrics")).body.toString();
  const hits = Number(/^lanced_object_cache_hits_total (\d+)/m.exec(metrics)?.[1] ?? 0);
  check(first.status === 200 && again.body.equals(first.body) && !(st.byMethod.GET ?? 0) && hits > 0,
    `a take of pages fetched before costs no GET (page cache: ${hits} hits so far, ${(st.byMethod.HEAD ?? 0)} HEAD)`, JSON.stringify(st.byMethod));
}

// Once a file is in the search cache, its takes run as tasks on the network thread's event
// loop: a task parks while its GETs are in flight (the loop's io_uring polls libcurl's
// sockets) and no request is handed to a thread.
async function onTheLoop() {
  const metric = async (name) => Number(new RegExp(`^${name} (\\d+)`, "m").exec((await get("/metrics")).body.toString())?.[1] ?? -1);
  const fx = fixtures().find((f) => f.name === "core21"); // 100,037 rows, pages not fetched yet
  const tmp = path.join(work, "loop");
  fs.mkdirSync(tmp);
  fs.copyFileSync(path.join(root, fx.file), path.join(tmp, "f.lance"));
  await uploadDir(px.endpoint, "lance", "fx/loop", tmp);
  const rel = "s3/loop/f.lance";
  px.resetStats();
  const first = await get(`/files/${rel}/rows?ids=0&columns=i8`); // loaded, on an object-store thread
  const opened = px.stats();
  // core21's 35 columns have ~200 pages: prepared one by one, each fetching its own chunk
  // table, they cost ~150 sequential GETs; prefetched in one batch, a few merged ones at once.
  check(first.status === 200 && !opened.byMethod.HEAD && opened.byMethod.GET <= 40 && opened.maxInflight > 1,
    `a first take of an object: no HEAD, its tail in one suffix-range GET, the pages' tables in one parallel batch (${opened.byMethod.GET} GETs in all, ${opened.maxInflight} at once)`,
    JSON.stringify(opened));
  await new Promise((r) => setTimeout(r, REVALIDATE_MS + 50));
  const h0 = await metric("lanced_take_handoffs_total"), p0 = await metric("lanced_loop_parked_tasks_total");
  px.resetStats();
  let same = 0;
  for (let i = 0; i < 20; i++) {
    const ids = [i * 4999 + 1, i * 3001 + 2];
    const r = await get(`/files/${rel}/rows?ids=${ids.join(",")}&blobs=descriptors`);
    same += r.status === 200;
  }
  const h1 = await metric("lanced_take_handoffs_total"), p1 = await metric("lanced_loop_parked_tasks_total");
  const st = px.stats();
  check(same === 20 && h1 === h0 && p1 > p0 && (st.byMethod.HEAD ?? 0) + (st.byMethod.GET ?? 0) > 0,
    `takes of a cached s3 file run on the event loop: 0 hand-offs, ${p1 - p0} parked tasks, ${st.byMethod.HEAD ?? 0} HEAD + ${st.byMethod.GET ?? 0} GETs awaited there`,
    `200s ${same}/20, handoffs ${h0}->${h1}, parked ${p0}->${p1}, ${JSON.stringify(st.byMethod)}`);
}

// Revalidation is one round trip however many takes are in flight: 16 takes at once, once
// the interval has passed, send one HEAD for a file and one listing for a dataset (the others
// are served the version being checked).
async function oneCheckAtATime() {
  const file = "/files/s3/loop/f.lance/rows?ids=1&columns=i8";
  const ds = "/files/s3/datasets/deletions_v21.lance/rows?ids=1";
  await Promise.all([get(file), get(ds)]);
  await new Promise((r) => setTimeout(r, REVALIDATE_MS + 100));
  px.resetStats();
  const a = await Promise.all(Array.from({ length: 16 }, () => get(file)));
  const heads = px.stats().byMethod.HEAD ?? 0;
  await new Promise((r) => setTimeout(r, REVALIDATE_MS + 100));
  px.resetStats();
  const b = await Promise.all(Array.from({ length: 16 }, () => get(ds)));
  const st = px.stats(), lists = (st.byMethod.GET ?? 0) - st.rangeGets;
  check(a.every((r) => r.status === 200) && b.every((r) => r.status === 200) && heads === 1 && lists === 1,
    `16 takes at once after the revalidation interval: ${heads} HEAD for a file, ${lists} listing for a dataset`, JSON.stringify(st));
}

// The other ways in: the Connect protocol (JSON codec, Arrow answer) for a file and a pinned
// dataset version, value for value Lance's answers; and ?format=proto.
async function otherFormats() {
  const connect = async (body) => {
    const r = await fetch(`${base}/lanced.v1.RowService/Take`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    const j = await r.json();
    return r.status === 200 && j.arrowIpc ? tableToJsonRows(tableFromIPC(Buffer.from(j.arrowIpc, "base64"))) : `${r.status} ${JSON.stringify(j).slice(0, 200)}`;
  };
  let n = 0, first = null;
  for (const fx of fixtures().slice(0, 6)) {
    const line = fs.readFileSync(path.join(root, fx.answers), "utf8").split("\n")[3];
    const [ids, cols, body] = line.split("\t");
    const got = await connect({ path: `s3/${fx.file.replace(/^tests\/fixtures\//, "")}`, ids: JSON.parse(ids).map(String), columns: JSON.parse(cols) ?? [], format: "FORMAT_ARROW" });
    if (got === body) n++;
    else first ??= `${fx.name}: ${got.slice(0, 200)}`;
  }
  for (const f of ["deletions_v21", "compacted_v22"]) {
    const line = fs.readFileSync(path.join(FIX, "datasets", `${f}.answers`), "utf8").split("\n").find((l) => l.split("\t")[1] !== "0");
    const [ids, version, body] = line.split("\t");
    const got = await connect({ path: `s3/datasets/${f}.lance`, ids: JSON.parse(ids).map(String), format: "FORMAT_ARROW", version: version });
    if (got === body) n++;
    else first ??= `${f}@${version}: ${got.slice(0, 200)}`;
  }
  check(!first, `${n} Connect Take calls (6 files, 2 pinned dataset versions) equal to Lance's answers`, first);
  const r = await fetch(`${base}/files/s3/${fixtures()[0].file.replace(/^tests\/fixtures\//, "")}/rows?ids=1,2&columns=i64&format=proto`);
  const bytes = Buffer.from(await r.arrayBuffer());
  check(r.status === 200 && /protobuf/.test(r.headers.get("content-type")) && bytes.length > 0, `?format=proto from s3: 200, ${r.headers.get("content-type")}, ${bytes.length} bytes`, `${r.status}`);
}

async function describeAndErrors() {
  const d = await get("/files/s3/datasets/deletions_v21.lance");
  let info = {};
  try { info = JSON.parse(d.body.toString()); } catch {}
  const versions = JSON.stringify(info).match(/"versions":\[[0-9,]*\]/)?.[0] ?? "";
  check(d.status === 200 && versions.length > 13, `describe of a dataset on s3 lists its versions (${versions})`, `${d.status} ${d.body.toString().slice(0, 300)}`);
  const root = await get("/files/");
  let names = "";
  try { names = JSON.parse(root.body.toString()).entries.map((x) => `${x.name}:${x.kind}`).join(","); } catch {}
  check(root.status === 200 && names === "local.lance:file,s3:mount,s3b:mount", `the root listing names the mounts (${names})`, root.body.toString().slice(0, 200));
  const inside = await get("/files/s3/datasets/");
  check(inside.status === 501 && /object-store mount/.test(inside.body.toString()), "listing inside a mount: 501, saying so", `${inside.status} ${inside.body}`);
  const miss = await get("/files/s3/data/nope.lance/rows?ids=0");
  check(miss.status === 404 && /nope\.lance/.test(miss.body.toString()), "a missing object: 404 naming it", `${miss.status} ${miss.body}`);
  const dots = await get("/files/s3/data/%2e%2e/datasets/x.lance/rows?ids=0");
  check(dots.status === 400 || dots.status === 404, `a path with '..' below a mount is refused (${dots.status})`, `${dots.status} ${dots.body}`);
}

// An object replaced in the store (new ETag): served in its new version once revalidate_ms has
// passed, and never a mix of the two.
async function replacedObject() {
  const [a, b] = fixtures().filter((f) => f.version === "2.1");
  const tmp = path.join(work, "swap");
  fs.mkdirSync(tmp);
  fs.copyFileSync(path.join(root, a.file), path.join(tmp, "f.lance"));
  await uploadDir(px.endpoint, "lance", "fx/swap", tmp);
  const first = await get("/files/s3/swap/f.lance/rows?ids=0,1,2");
  fs.copyFileSync(path.join(root, b.file), path.join(tmp, "f.lance"));
  await uploadDir(px.endpoint, "lance", "fx/swap", tmp);
  await new Promise((r) => setTimeout(r, REVALIDATE_MS + 200));
  const second = await get("/files/s3/swap/f.lance/rows?ids=0,1,2");
  const want = (await get(`/files/s3/${b.file.replace(/^tests\/fixtures\//, "")}/rows?ids=0,1,2`)).body.toString();
  check(first.status === 200 && second.status === 200 && second.body.toString() === want && first.body.toString() !== want,
    `an object replaced in the store is served in its new version after the revalidation interval (${a.name} -> ${b.name})`,
    `${first.status}/${second.status} ${second.body.toString().slice(0, 200)}`);
}

// On an object not read before (nothing of it in the page cache), so the faults meet GETs.
async function faults() {
  const fx = fixtures()[1];
  const tmp = path.join(work, "faulty");
  fs.mkdirSync(tmp);
  fs.copyFileSync(path.join(root, fx.file), path.join(tmp, "f.lance"));
  await uploadDir(px.endpoint, "lance", "fx/faulty", tmp);
  const want = (await get(`/files/s3/${fx.file.replace(/^tests\/fixtures\//, "")}/rows?ids=5,6`)).body.toString();
  px.resetStats();
  px.fail({ status: 503, count: 2, method: "GET" });
  const r = await get("/files/s3/faulty/f.lance/rows?ids=5,6");
  const hit = px.stats().faults;
  check(r.status === 200 && r.body.toString() === want && hit === 2, `503 SlowDown from the store is retried: the request succeeds (${hit} faults met)`, `${r.status} ${r.body}`);
  px.clearFaults();
  px.fail({ status: 403, count: 50 });
  await new Promise((r) => setTimeout(r, REVALIDATE_MS + 100)); // the next request HEADs again
  const denied = await get("/files/s3/faulty/f.lance/rows?ids=5,6");
  px.clearFaults();
  check(denied.status === 403 && /s3:\/\/lance\/fx\/faulty\/f\.lance/.test(denied.body.toString()), "403 from the store: 403 naming the object", `${denied.status} ${denied.body}`);
  const again = await get("/files/s3/faulty/f.lance/rows?ids=5,6");
  check(again.status === 200 && again.body.toString() === want, "served again once the store answers", `${again.status}`);
}

// One mount's store stops answering (every request for its keys delayed past the daemon's
// timeout) while 16 descriptions wait on it — they hold all of that mount's 4 object-store
// threads and queue behind them: the local root, a take of a cached object of the other mount
// on the loop, and a first load through the other mount (its own threads) are answered
// meanwhile, and the stuck requests end with an error, not a hang: those that waited
// s3_timeout_ms for a thread are answered when one takes them, not sent to the store in their
// turn (which took 16 / 4 timeouts for the last of them).
async function deadStore() {
  px.fail({ delay: 6000, count: 1000, match: /^\/lance\/fx\/datasets\// });
  const stuck = [];
  const t0 = Date.now();
  const names = fs.readdirSync(path.join(FIX, "datasets")).filter((f) => f.endsWith(".lance")).slice(0, 16);
  for (const n of names) stuck.push(get(`/files/s3/datasets/${n}`).then((r) => ({ ...r, ms: Date.now() - t0 })));
  await new Promise((r) => setTimeout(r, 300));
  const timed = async (url) => {
    const t0 = Date.now();
    const r = await get(url);
    return { status: r.status, ms: Date.now() - t0 };
  };
  const local = await timed("/files/local.lance/rows?ids=1,2,3");
  const other = fixtures()[2];
  const cached = await timed(`/files/s3/${other.file.replace(/^tests\/fixtures\//, "")}/rows?ids=1`);
  const fresh = await timed(`/files/s3b/${other.file.replace(/^tests\/fixtures\//, "")}/rows?ids=2`);
  const ends = await Promise.all(stuck);
  px.clearFaults();
  check(local.status === 200 && local.ms < 3000, `a local request is answered while 16 requests wait on a store that does not answer (${local.ms} ms)`, `${local.status}`);
  check(cached.status === 200 && cached.ms < 3000, `a take of a cached object on the loop meanwhile (${cached.ms} ms)`, `${cached.status}`);
  check(fresh.status === 200 && fresh.ms < 3000, `a first load through another mount, on that mount's own threads, meanwhile (${fresh.ms} ms)`, `${fresh.status}`);
  const codes = [...new Set(ends.map((e) => e.status))].join(",");
  check(ends.every((e) => e.status >= 500), `the stuck requests end with an error at the deadline (${codes}), not a hang`, codes);
  // s3_timeout_ms is 4000: a thread each for 4 s, then the ones left waiting answered at once
  // when a thread takes them (two rounds at most, where the queue took four).
  const last = Math.max(...ends.map((e) => e.ms));
  const waited = ends.filter((e) => /waited \d+ ms for a thread of mount 's3'.*s3_timeout_ms 4000/.test(e.body.toString())).length;
  check(last < 11000 && waited > 0, `the last of 16 requests queued for 4 stuck threads ends after ${last} ms; ${waited} answered 503 for having waited s3_timeout_ms for a thread`,
    ends.map((e) => `${e.status}@${e.ms}`).join(" "));
}

// A shallow clone in the store (LanceDB cloneTable of s3://lance/fx/clones/src.lance): its
// manifest names the source by s3:// URL, which the daemon reads through the mount that holds
// it. Rows from the source's fragments (with the source's deletion file), from the clone's own
// fragment and its new deletion file equal LanceDB's takeOffsets through the same store.
async function clones() {
  // cloneTable opens the source without the connection's storage options: the store's
  // settings go through the environment as well (object_store reads AWS_*).
  const o = lancedbOptions(px.endpoint);
  Object.assign(process.env, { AWS_ENDPOINT: o.awsEndpoint, AWS_ALLOW_HTTP: "true", AWS_ACCESS_KEY_ID: o.awsAccessKeyId,
    AWS_SECRET_ACCESS_KEY: o.awsSecretAccessKey, AWS_REGION: o.region });
  const db = await lancedb.connect("s3://lance/fx/clones", { storageOptions: lancedbOptions(px.endpoint) });
  const mk = (n, off) => arrow.tableFromArrays({ id: BigInt64Array.from({ length: n }, (_, i) => BigInt(i + off)),
    s: Array.from({ length: n }, (_, i) => `v${i + off}`) });
  const src = await db.createTable("src", mk(200, 0), { storageOptions: { new_table_data_storage_version: "2.2" } });
  await src.add(mk(100, 1000));
  await src.delete("id % 9 = 4");
  const cl = await db.cloneTable("cl", "s3://lance/fx/clones/src.lance");
  await cl.add(mk(50, 5000));
  await cl.delete("id % 10 = 7");
  const n = await cl.countRows();
  // Sorted and unique: LanceDB's takeOffsets answers in that order.
  const ids = [...new Set([0, 1, 5, 150, 180, 200, n - 60, n - 40, n - 1])].sort((a, b) => a - b);
  const want = tableToJsonRows(await cl.takeOffsets(ids).toArrow());
  const r = await get(`/files/s3/clones/cl.lance/rows?ids=${ids.join(",")}`);
  check(r.status === 200 && r.body.toString() === want, `a shallow clone in the store: rows from its source's fragments and its own equal LanceDB's (${n} rows)`,
    `${r.status} ${r.body.toString().slice(0, 300)} | want ${want.slice(0, 200)}`);
  const d = await get("/files/s3/clones/cl.lance");
  check(d.status === 200 && d.body.toString().includes('"path":"s3://lance/fx/clones/src.lance"'), "described with its base path", d.body.toString().slice(0, 300));
}

// A version pruned from the store (LanceDB's optimize with cleanupOlderThan) after the daemon
// cached it as the dataset's latest: `version=N` for it is not found once the revalidation
// interval has passed, as Lance says, not served from the cache until a request for the latest
// comes by (the local cache did that until ops-fuzz.mjs found it; here compaction also removes
// the version's data files, which the daemon notices).
async function prunedLatest() {
  const db = await lancedb.connect("s3://lance/fx/prune", { storageOptions: lancedbOptions(px.endpoint) });
  const mk = (n, off) => arrow.tableFromArrays({ id: BigInt64Array.from({ length: n }, (_, i) => BigInt(i + off)) });
  const tbl = await db.createTable("p", mk(20, 0), { storageOptions: { new_table_data_storage_version: "2.1" } });
  await tbl.add(mk(10, 100));
  const v = await tbl.version();
  const before = await get(`/files/s3/prune/p.lance/rows?ids=0,25&version=${v}`);
  await tbl.add(mk(5, 200));
  await tbl.optimize({ cleanupOlderThan: new Date(), deleteUnverified: true });
  const gone = (await tbl.listVersions()).every((x) => x.version !== v);
  await new Promise((r) => setTimeout(r, REVALIDATE_MS + 200));
  const after = await get(`/files/s3/prune/p.lance/rows?ids=0,25&version=${v}`);
  check(before.status === 200 && gone && after.status === 404,
    `version ${v}, the cached latest, pruned from the store: 404 after the revalidation interval (before ${before.status})`,
    `pruned ${gone}; ${after.status} ${after.body.toString().slice(0, 200)}`);
}

// A store that stops answering while 70 takes of a cached object of it are parked on the
// loop: the mount may hold its share of max_inflight (60 / 3 = 20) waiting on the store, and
// its takes past that are answered 503 at once, so a local request is still admitted. (Before,
// the takes held every max_inflight slot until the deadline and the local request was refused
// "server busy".)
async function mountShare() {
  // A fresh copy of core21 (100,037 rows), opened by one take: the others run on the loop and
  // their rows' pages, spread over the file, are not in the page cache.
  const fx = fixtures().find((f) => f.name === "core21");
  const tmp = path.join(work, "share");
  fs.mkdirSync(tmp);
  fs.copyFileSync(path.join(root, fx.file), path.join(tmp, "f.lance"));
  await uploadDir(px.endpoint, "lance", "fx/share", tmp);
  const rel = "s3/share/f.lance";
  const opened = await get(`/files/${rel}/rows?ids=1&blobs=descriptors`);
  px.fail({ delay: 6000, count: 1000, match: /^\/lance\/fx\/share\// });
  const parked = Array.from({ length: 70 }, (_, i) => get(`/files/${rel}/rows?ids=${i * 997 + 5}&blobs=descriptors`));
  await new Promise((r) => setTimeout(r, 1500));
  const local = await get("/files/local.lance/rows?ids=1,2,3");
  const ends = await Promise.all(parked);
  px.clearFaults();
  const refused = ends.filter((e) => e.status === 503 && /mount 's3' has 20 requests waiting on its store already/.test(e.body.toString())).length;
  check(opened.status === 200 && local.status === 200 && refused >= 45 && ends.every((e) => e.status === 200 || e.status === 503),
    `70 takes parked on a store that does not answer hold the mount's share of max_inflight (${70 - refused} of them); ${refused} answered 503 at once, a local request served (${local.status})`,
    `local ${local.status} ${local.body.toString().slice(0, 200)}; ${ends.map((e) => e.status).join(",")}`);
}

// Blob v2 values kept in sidecar .blob objects next to their data file (enc22's 70 kB values)
// are served as bytes from a mount as from a local file: lancectl's bytes of the fixture file
// equal the mount's answer. (They were refused: "blob sidecar files need a data file opened by
// path".)
async function blobSidecars() {
  const fx = fixtures().find((f) => f.name === "enc22");
  const rel = `s3/${fx.file.replace(/^tests\/fixtures\//, "")}`;
  const q = "ids=5,805,55,1&columns=blob2";
  const remote = await get(`/files/${rel}/rows?${q}`);
  const lancectl = path.join(path.dirname(LANCED), "lancectl");
  const local = await new Promise((resolve) => {
    const p = spawn(lancectl, ["take", path.join(root, fx.file), "--ids", "5,805,55,1", "--columns", "blob2"]);
    const out = [];
    p.stdout.on("data", (d) => out.push(d));
    p.on("exit", (code) => resolve({ code, body: Buffer.concat(out).toString() }));
  });
  check(remote.status === 200 && local.code === 0 && remote.body.toString() === local.body && remote.body.length > 180000,
    `blob v2 sidecar values served from a mount as bytes, equal to the local file's (${remote.body.length} bytes)`,
    `${remote.status} ${remote.body.toString().slice(0, 200)} / lancectl ${local.code} ${local.body.slice(0, 100)}`);
}

// No `root`, mounts only (docs/object-storage.md's recipe): served as an empty local root, so a
// local path is not found, the listing names the mount, and the mount's rows equal the main
// daemon's.
async function mountsOnly() {
  const conf = path.join(work, "lanced.conf");
  const env = { ...process.env, TMPDIR: work };
  for (const k of Object.keys(env)) if (k.startsWith("AWS_")) delete env[k];
  const d = spawn(LANCED, ["--config", conf, "--listen", "127.0.0.1:0", "--workers", "1", "--mount", "s3=s3://lance/fx",
    "--s3-endpoint", px.endpoint, "--s3-region", "us-east-1"], { env });
  let dlog = "", url = "";
  d.stderr.on("data", (x) => (dlog += x));
  for (let i = 0; i < 100 && !url; i++) {
    const m = /listening on (127\.0\.0\.1:\d+)/.exec(dlog);
    if (m) url = `http://${m[1]}`;
    else await new Promise((r) => setTimeout(r, 100));
  }
  const fx = fixtures()[0], rel = `s3/${fx.file.replace(/^tests\/fixtures\//, "")}`;
  const fetchBody = async (u) => { const r = await fetch(u); return { status: r.status, body: Buffer.from(await r.arrayBuffer()).toString() }; };
  const mine = url ? await fetchBody(`${url}/files/${rel}/rows?ids=1,2&blobs=descriptors`) : { status: 0, body: dlog };
  const main = await get(`/files/${rel}/rows?ids=1,2&blobs=descriptors`);
  const local = url ? await fetchBody(`${url}/files/local.lance/rows?ids=1`) : { status: 0 };
  const list = url ? await fetchBody(`${url}/files/`) : { status: 0, body: "" };
  const exited = new Promise((r) => d.on("exit", (code) => r(code)));
  d.kill("SIGTERM");
  const code = await exited;
  const left = fs.readdirSync(work).filter((n) => n.startsWith("lanced-mounts-only-"));
  check(mine.status === 200 && mine.body === main.body.toString() && local.status === 404 &&
        list.body.trim() === '{"path":"","entries":[{"name":"s3","kind":"mount"}]}' && code === 0 && !left.length &&
        !/holds no Lance data/.test(dlog),
    "no root, mounts only: the mount's rows as with a root, a local path 404, the listing the mount alone, its empty root removed at exit",
    `${mine.status} ${mine.body.slice(0, 120)}; local ${local.status}; list ${list.body}; exit ${code}; left ${left}; ${dlog.slice(0, 300)}`);
}

async function secrets() {
  const m = await get("/metrics");
  const bodies = [m.body.toString(), log, ...errorBodies];
  check(!bodies.some((b) => b.includes(SECRET_KEY)) && log.length > 1000, `the secret key is in no log line, metric or error body (${errorBodies.length} error bodies)`, "found");
}

await t.run(upload, startDaemon, fileAnswers, datasetAnswers, datasetRowIds, pageCache, onTheLoop, oneCheckAtATime, otherFormats, describeAndErrors, replacedObject, clones, prunedLatest, faults, deadStore, mountShare, blobSidecars, mountsOnly, secrets, stopDaemon);
fs.rmSync(work, { recursive: true, force: true });
