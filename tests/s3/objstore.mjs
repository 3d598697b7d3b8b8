// liblance's object-store reader (lib/io/s3.c, through build/tests/s3check) against s3rver
// behind the fault-injecting proxy: SigV4 accepted, HEAD's size and ETag, ranges equal to the
// local bytes, coalescing (GETs counted at the proxy), GETs in parallel, retries of 503
// SlowDown, resets and truncated bodies, final errors that name the object (404, 403, a
// replaced object, retries exhausted, the deadline) and never carry the secret key. Then every
// data-file fixture read whole through lnc_file_open_s3 (lancectl take s3://...): each of
// Lance's recorded answers, byte for byte.
//
// Usage: node --openssl-legacy-provider tests/s3/objstore.mjs [BUILD]   (BUILD defaults to
// build; prints ok/FAIL lines). s3rver 3.7 ciphers its continuation tokens with DES, which
// Node's OpenSSL 3 has only in its legacy provider: without the flag a paged listing is 500.
import { execFile } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { storeTest, uploadDir, ACCESS_KEY, SECRET_KEY } from "./s3env.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, "..", "..");
const S3CHECK = path.join(root, process.argv[2] ?? "build", "tests", "s3check");
const LANCECTL = path.join(root, process.argv[3] ?? "bin", "lancectl");
const SRC = path.join(root, "tests", "fixtures", "datasets", "deletions_v21.lance");
const t = await storeTest("objstore");
const { ok, bad, check, px } = t;
const base = { S3_ENDPOINT: px.endpoint, S3_BUCKET: "lance", S3_PATH_STYLE: "1", AWS_ACCESS_KEY_ID: ACCESS_KEY, AWS_SECRET_ACCESS_KEY: SECRET_KEY, S3_BACKOFF_BASE_MS: "5" };
// Async: s3rver and the proxy run in this process, so the tool must not block its event loop.
const s3check = (args, env = {}) =>
  new Promise((done) =>
    execFile(S3CHECK, args, { env: { ...process.env, ...base, ...env }, encoding: "buffer", maxBuffer: 64 << 20 }, (e, stdout, stderr) =>
      done({ status: e ? (e.code ?? -1) : 0, stdout, stderr: stderr.toString() })));

const dataName = fs.readdirSync(path.join(SRC, "data"))[0];
const key = `d/data/${dataName}`;
const local = fs.readFileSync(path.join(SRC, "data", dataName));
await t.run(
  async () => {
    if (!fs.existsSync(S3CHECK)) throw new Error(`${S3CHECK} missing (make all)`);
    await uploadDir(px.endpoint, "lance", "d", SRC);
  },
  () => headAndRead(key, local),
  listing,
  boundedBatch,
  () => faults(key, local),
  () => finalErrors(key, local),
  fixturesThroughLancectl,
);

// Every fixture data file uploaded; every answer line (ids, columns, Lance's body) asked of
// lancectl take s3://..., four at a time, with the settings in AWS's environment variables.
async function fixturesThroughLancectl() {
  const index = JSON.parse(fs.readFileSync(path.join(root, "tests", "fixtures", "index.json"), "utf8")).fixtures;
  const env = { ...process.env, AWS_ENDPOINT_URL: px.endpoint, AWS_ACCESS_KEY_ID: ACCESS_KEY, AWS_SECRET_ACCESS_KEY: SECRET_KEY, AWS_REGION: "us-east-1" };
  const run = (args) =>
    new Promise((done) => execFile(LANCECTL, args, { env, encoding: "buffer", maxBuffer: 256 << 20 }, (e, out, err) => done({ status: e ? (e.code ?? -1) : 0, out: out.toString(), err: err.toString() })));
  const jobs = [];
  for (const fx of index) {
    const tmp = fs.mkdtempSync("/tmp/lanced-s3-fx.");
    fs.copyFileSync(path.join(root, fx.file), path.join(tmp, "f.lance"));
    await uploadDir(px.endpoint, "lance", `fx/${fx.name}`, tmp);
    fs.rmSync(tmp, { recursive: true });
    for (const line of fs.readFileSync(path.join(root, fx.answers), "utf8").split("\n").filter(Boolean)) {
      const [ids, cols, body] = line.split("\t");
      jobs.push({ fx: fx.name, ids: JSON.parse(ids), cols: JSON.parse(cols), body });
    }
  }
  px.resetStats();
  let bad1 = null, done = 0;
  const worker = async () => {
    for (let j; (j = jobs.shift()); ) {
      // Lance answers blob columns with their descriptors (position, size).
      const r = await run(["take", `s3://lance/fx/${j.fx}/f.lance`, "--ids", j.ids.join(","), "--blobs", "descriptors", ...(j.cols ? ["--columns", j.cols.join(",")] : [])]);
      if ((r.status !== 0 || r.out !== j.body) && !bad1) bad1 = `${j.fx} ids ${j.ids.slice(0, 5)}: ${r.err || r.out.slice(0, 150)}`;
      done++;
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
  const st = px.stats();
  check(!bad1, `${done} of Lance's answers over ${index.length} fixture files read from s3 (${st.byMethod.HEAD ?? 0} HEADs, ${st.byMethod.GET ?? 0} GETs)`, bad1);
  px.resetStats();
  const ins = await run(["inspect", `s3://lance/fx/${index[0].name}/f.lance`]);
  const opened = px.stats();
  const mb = (fs.statSync(path.join(root, index[0].file)).size / 1e6).toFixed(1);
  check(!opened.byMethod.HEAD && opened.byMethod.GET === 1, `opening a ${mb} MB file from s3: one GET, a suffix range (footer and metadata; its Content-Range and ETag say the size and version)`, JSON.stringify(opened.byMethod));
  const local = await run(["inspect", path.join(root, index[0].file)]);
  check(ins.status === 0 && ins.out.replace(/^.*\n/, "") === local.out.replace(/^.*\n/, ""), "lancectl inspect s3://... describes the file as the local copy", ins.err);
  // A store that answers a suffix range with another range (s3rver itself reads "bytes=-N"
  // as "0-N"): the client notices, and opens with a HEAD and a range GET instead.
  px.set({ suffixRanges: false });
  px.resetStats();
  const ins2 = await run(["inspect", `s3://lance/fx/${index[0].name}/f.lance`]);
  const fell = px.stats();
  px.set({ suffixRanges: true });
  check(ins2.status === 0 && ins2.out === ins.out && fell.byMethod.HEAD === 1 && fell.byMethod.GET === 2,
    "a store without suffix ranges: one refused try, then a HEAD and a range GET, same description", `${JSON.stringify(fell.byMethod)} ${ins2.err}`);
  const missing = await run(["take", "s3://lance/fx/none/f.lance", "--ids", "0"]);
  check(missing.status !== 0 && /s3:\/\/lance\/fx\/none\/f.lance.*no such object/.test(missing.err), "a missing object: lancectl says so, naming it", missing.err);
}

// The bytes the reads should give, concatenated in request order.
function byKey(a, b) {
  const x = a.slice(a.indexOf(" ") + 1), y = b.slice(b.indexOf(" ") + 1);
  return x < y ? -1 : x > y ? 1 : 0;
}
function expect(local, reads) {
  return Buffer.concat(reads.map(([o, l]) => local.subarray(o, o + l)));
}
function spec(reads) {
  return reads.map(([o, l]) => `${o}:${l}`).join(",");
}

async function headAndRead(key, local) {
  const h = await s3check(["head", key]);
  const [size, etag] = h.stdout.toString().trim().split(" ");
  check(h.status === 0 && +size === local.length && /^"[0-9a-f]{32}"$/.test(etag), "HEAD: size and ETag (SigV4 accepted)", h.stderr + h.stdout);

  // Neighbours within the 64 KiB default gap: one GET; the answer is exactly the local bytes.
  const near = [[0, 100], [4096, 50], [30000, 10], [100, 20]];
  px.resetStats();
  let r = await s3check(["read", key, spec(near)]);
  let st = px.stats();
  check(r.status === 0 && r.stdout.equals(expect(local, near)), "ranges equal the object's bytes, in request order", r.stderr);
  check(st.byMethod.GET === 1 && st.rangeGets === 1, "reads within the merge gap are one range GET", JSON.stringify(st));

  // No merging: disjoint ranges, all in flight at once (100 ms per request makes them overlap).
  const far = [[0, 10], [20000, 10], [60000, 10], [120000, 10], [160000, 10]].filter(([o]) => o < local.length);
  px.resetStats();
  px.set({ latencyMs: 100 });
  r = await s3check(["read", key, spec(far)], { S3_MERGE_GAP: "1" });
  px.set({ latencyMs: 0 });
  st = px.stats();
  check(r.status === 0 && r.stdout.equals(expect(local, far)), `${far.length} disjoint ranges read`, r.stderr);
  check(st.byMethod.GET === far.length && st.maxInflight >= far.length, `${far.length} GETs in flight at once (the proxy saw ${st.maxInflight})`, JSON.stringify(st));
}

// ListObjectsV2: every object under a prefix, page after page, keys that need escaping intact.
async function listing() {
  const want = fs
    .readdirSync(SRC, { recursive: true })
    .filter((f) => fs.statSync(path.join(SRC, f)).isFile())
    .map((f) => `${fs.statSync(path.join(SRC, f)).size} d/${f.split(path.sep).join("/")}`)
    .sort(byKey);
  for (const page of ["", "3"]) {
    px.resetStats();
    const r = await s3check(["list", "d/"], { S3_LIST_PAGE: page });
    // s3rver lists in its directory walk's order, not S3's by-key order: compared as sets.
    const got = r.stdout.toString().trim().split("\n").sort(byKey);
    const pages = px.stats().byMethod.GET;
    check(r.status === 0 && JSON.stringify(got) === JSON.stringify(want) && pages === (page ? Math.ceil(want.length / 3) : 1),
      `listing d/: ${got.length} objects with sizes${page ? `, ${pages} pages of ${page}` : ", one page"}`, `${r.stderr} ${got.slice(0, 3)} != ${want.slice(0, 3)} (${pages} GETs)`);
  }
  // A key with a space, '+', '&', '<' and non-ASCII: encoded in the request, decoded from XML.
  const tmp = fs.mkdtempSync("/tmp/lanced-s3-odd.");
  const odd = "odd key+&<ü>.bin";
  fs.writeFileSync(path.join(tmp, odd), "x");
  await uploadDir(px.endpoint, "lance", "o", tmp);
  fs.rmSync(tmp, { recursive: true });
  const r = await s3check(["list", "o/odd key+&"]);
  check(r.status === 0 && r.stdout.toString() === `1 o/${odd}\n`, "a key that needs escaping is listed as it is", r.stderr + r.stdout);
  const h = await s3check(["head", `o/${odd}`]);
  check(h.status === 0 && h.stdout.toString().startsWith("1 "), "and can be read (HEAD) under that name", h.stderr);
  // A store that answers with keys outside the prefix asked for (one that ignores the
  // parameter): they are not the listing's. Before, a mount cut the prefix's length off each
  // and read the rest as a name below it: another dataset's manifest as this one's version.
  const vers = want.filter((l) => l.includes(" d/_versions/"));
  px.fail({ method: "GET", match: /list-type=2/, edit: (xml) => xml.replace("</ListBucketResult>",
    ["e/_versions/99.manifest", "d/_versionsX/7.manifest", "c", "d/_version"].map((k) => `<Contents><Key>${k}</Key><Size>1</Size></Contents>`).join("") + "</ListBucketResult>") });
  const outside = await s3check(["list", "d/_versions/"]);
  const got = outside.stdout.toString().trim().split("\n").sort(byKey);
  check(outside.status === 0 && px.stats().faults > 0 && JSON.stringify(got) === JSON.stringify(vers),
    `keys outside the prefix in a listing's answer are skipped (${got.length} listed)`, `${outside.stderr} ${got}`);
  px.clearFaults();
  const none = await s3check(["list", "no/such/prefix/"]);
  check(none.status === 0 && none.stdout.length === 0, "an empty prefix lists nothing, without error", none.stderr);
}

// A batch of many merged ranges (a take of thousands of ids: reads within the merge gap share
// a GET) holds the bodies of the GETs in flight, not all of them until the last arrives:
// 1,024 one-byte reads over a 32 MiB object, 256 KiB per GET, 2 at a time. Before, every
// range's buffer was allocated up front and kept to the end (32 MiB more at the peak).
async function boundedBatch() {
  const tmp = fs.mkdtempSync("/tmp/lanced-s3-big.");
  const big = crypto.randomBytes(32 << 20);
  fs.writeFileSync(path.join(tmp, "r.bin"), big);
  await uploadDir(px.endpoint, "lance", "big", tmp);
  fs.rmSync(tmp, { recursive: true });
  const reads = Array.from({ length: 1024 }, (_, i) => [i * 32768 + 7, 1]);
  const env = { S3_MERGE_GAP: "65536", S3_MAX_MERGED: "262144", S3_MAX_PARALLEL: "2" };
  const rss = (r) => Number(/hwm_kb=(-?\d+)/.exec(r.stderr)?.[1] ?? 0);
  const one = await s3check(["read", "big/r.bin", "7:1"], env);
  const r = await s3check(["read", "big/r.bin", spec(reads)], env);
  // hwm_kb is -1 under ASan (its quarantine keeps freed memory): the bytes are checked alone.
  const asan = rss(one) < 0, grew = (rss(r) - rss(one)) >> 10;
  check(one.status === 0 && r.status === 0 && r.stdout.equals(expect(big, reads)) && /gets=128 /.test(r.stderr) && (asan || (rss(one) > 0 && grew < 12)),
    `1,024 reads in 128 merged GETs of a 32 MiB object: right bytes, ${asan ? "peak memory not measured (ASan)" : `peak memory ${grew} MiB over a one-read call`}`, `${r.stderr} ${one.stderr}`);
}

async function faults(key, local) {
  const reads = [[10, 1000], [50000, 2000]];
  const want = expect(local, reads);
  for (const [what, rule] of [
    ["503 SlowDown twice", { status: 503, count: 2 }],
    ["500 once", { status: 500 }],
    ["a connection reset", { reset: true }],
    ["a body cut short", { truncate: 100 }],
  ]) {
    px.clearFaults();
    px.resetStats();
    px.fail({ method: "GET", ...rule });
    const r = await s3check(["read", key, spec(reads)], { S3_MERGE_GAP: "1" });
    const st = px.stats();
    check(r.status === 0 && r.stdout.equals(want) && st.faults === (rule.count ?? 1) && st.byMethod.GET === 2 + (rule.count ?? 1),
      `retried after ${what}: right bytes, ${st.byMethod.GET} GETs`, `${r.stderr} ${JSON.stringify(st)}`);
  }
  px.clearFaults();
}

async function finalErrors(key, local) {
  const noSecret = (r) => !r.stderr.includes(SECRET_KEY) || SECRET_KEY === ACCESS_KEY; // s3rver's pair is one word
  let r = await s3check(["head", "d/data/no-such-object.lance"]);
  check(r.status === 1 && r.stderr.includes("s3://lance/d/data/no-such-object.lance") && /no such object/.test(r.stderr), "404: not found, naming the object", r.stderr);

  px.fail({ method: "GET", status: 403 });
  r = await s3check(["read", key, "0:10"]);
  check(r.status === 1 && r.stderr.includes(`s3://lance/${key}`) && /access denied/.test(r.stderr) && /AccessDenied/.test(r.stderr) && noSecret(r), "403: access denied, naming the object, no retry", r.stderr);

  // A bucket in another region than the one requests are signed for: AWS answers 301 (a HEAD's
  // without a body) and names the bucket's region in a header, which the message passes on.
  px.fail({ method: "HEAD", status: 301, headers: { "x-amz-bucket-region": "eu-west-1" } });
  r = await s3check(["head", key]);
  check(r.status === 1 && r.stderr.includes(`s3://lance/${key}`) && /HTTP 301: the bucket is in region eu-west-1, requests are signed for us-east-1 \(set s3_region\)/.test(r.stderr),
    "a bucket in another region: the error says which, and that s3_region is the fix", r.stderr);

  px.fail({ method: "GET", status: 503, count: 100 });
  r = await s3check(["read", key, "0:10"], { S3_MAX_ATTEMPTS: "3" });
  px.clearFaults();
  check(r.status === 1 && /gave up after 3 attempts: HTTP 503 SlowDown/.test(r.stderr), "503 every time: gives up after max_attempts", r.stderr);

  px.set({ latencyMs: 1500 });
  const t0 = Date.now();
  r = await s3check(["read", key, "0:10"], { S3_DEADLINE_MS: "400", S3_ATTEMPT_TIMEOUT_MS: "300" });
  px.set({ latencyMs: 0 });
  check(r.status === 1 && /deadline|Timeout|timed out/i.test(r.stderr) && Date.now() - t0 < 1400, "a store that does not answer: the deadline ends the call", r.stderr);

  // The object replaced after HEAD: its old ETag no longer matches, so no bytes of two versions.
  const h = (await s3check(["head", key])).stdout.toString().trim().split(" ");
  const tmp = fs.mkdtempSync("/tmp/lanced-s3-replace.");
  fs.mkdirSync(path.join(tmp, "data"));
  fs.writeFileSync(path.join(tmp, "data", path.basename(key)), Buffer.concat([local.subarray(0, 100), Buffer.from("changed")]));
  await uploadDir(px.endpoint, "lance", "d", tmp);
  fs.rmSync(tmp, { recursive: true });
  r = await s3check(["read", "--size", h[0], "--etag", h[1], key, "0:10"]);
  check(r.status === 1 && /changed since it was opened/.test(r.stderr), "an object replaced since HEAD: an error, not mixed bytes", r.stderr);

  // LNC_S3_VERBOSE traces the exchanges to stderr (the daemon's log): the headers that carry
  // secrets are named, their values not.
  r = await s3check(["head", key], { LNC_S3_VERBOSE: "1", AWS_SESSION_TOKEN: "tok-0123-sessionsecret" });
  check(/> HEAD /.test(r.stderr) && /> Authorization: \(redacted\)/i.test(r.stderr) && /x-amz-security-token: \(redacted\)/i.test(r.stderr) &&
    !r.stderr.includes("tok-0123-sessionsecret") && !/Signature=/.test(r.stderr),
    "the verbose trace redacts the signature and the session token (the key id, not a secret, is named)", r.stderr.slice(0, 2000));

  px.resetStats();
  r = await s3check(["read", key, "0:10"], { AWS_SECRET_ACCESS_KEY: "not-the-secret-0123" });
  check(r.status === 1 && /access denied \(HTTP 403/.test(r.stderr) && !r.stderr.includes("not-the-secret-0123") && px.stats().rejected === 1,
    "a wrong secret: refused by the signature check (403), the secret not in the message", r.stderr);
}
