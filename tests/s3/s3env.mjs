// An S3-compatible object store for tests and benchmarks (issue 15): s3rver behind a proxy
// that checks SigV4 signatures, counts requests and injects what real object stores do to
// clients (latency, 5xx and 503 SlowDown, connection resets, truncated bodies). s3rver 3.7
// checks only the access key id of a SigV4 request, not its signature ("unimplemented" in its
// authentication middleware), so the proxy verifies every signature itself, with the secret
// key, and answers 403 SignatureDoesNotMatch as S3 would.
//
//   const s3 = await startS3({ bucket: "lance" });        // s3rver on 127.0.0.1, a temp dir
//   const px = await startProxy(s3.endpoint);              // what clients are pointed at
//   await uploadDir(px.endpoint, "lance", "fx/a.lance", "tests/fixtures/datasets/a.lance");
//   px.set({ latencyMs: 20 });                             // every request delayed 20 ms
//   px.fail({ status: 503, count: 2, method: "GET" });     // the next two GETs answer SlowDown
//   px.stats()  -> { requests, byMethod: {GET, HEAD, PUT, ...}, rangeGets, bytesOut, faults,
//                    rejected (bad signatures), inflight, maxInflight (most open at once) }
//   await px.close(); await s3.close();
//
// The proxy forwards every header unchanged (the Host header included: SigV4 signs it, and
// s3rver checks the signature against the Host it receives), so a client signs for the proxy's
// address and s3rver accepts it.
import S3rver from "s3rver";
import { S3Client, PutObjectCommand } from "@aws-sdk/client-s3";
import crypto from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";

// s3rver's fixed credentials: it accepts only these.
export const ACCESS_KEY = "S3RVER";
export const SECRET_KEY = "S3RVER";
export const REGION = "us-east-1";

export async function startS3({ bucket = "lance", dir } = {}) {
  const root = dir ?? fs.mkdtempSync(path.join(os.tmpdir(), "lanced-s3rver."));
  const srv = new S3rver({ port: 0, address: "127.0.0.1", silent: true, directory: root, configureBuckets: [{ name: bucket }] });
  const { port } = await srv.run();
  return {
    endpoint: `http://127.0.0.1:${port}`,
    bucket,
    dir: root,
    async close() {
      await srv.close();
      if (!dir) fs.rmSync(root, { recursive: true, force: true });
    },
  };
}

// LanceDB's storageOptions for an endpoint (path-style addressing, plain HTTP).
export function lancedbOptions(endpoint) {
  return { awsEndpoint: endpoint, allowHttp: "true", awsAccessKeyId: ACCESS_KEY, awsSecretAccessKey: SECRET_KEY, region: REGION };
}

function client(endpoint) {
  return new S3Client({ endpoint, region: REGION, forcePathStyle: true, credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY } });
}

// Every file below localDir to s3://bucket/prefix/<relative path>, byte for byte.
export async function uploadDir(endpoint, bucket, prefix, localDir) {
  const s3 = client(endpoint);
  const files = fs.readdirSync(localDir, { recursive: true }).filter((f) => fs.statSync(path.join(localDir, f)).isFile());
  for (const f of files) {
    const Key = `${prefix}/${f.split(path.sep).join("/")}`;
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key, Body: fs.readFileSync(path.join(localDir, f)) }));
  }
  s3.destroy();
  return files.length;
}

// S3's own error body, so a client sees the code it would see from AWS.
function errorBody(code, message) {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>`;
}
const CODES = { 301: "PermanentRedirect", 403: "AccessDenied", 404: "NoSuchKey", 500: "InternalError", 503: "SlowDown" };

// ---- SigV4 verification (AWS's "Signature Version 4 signing process") -------------------
const hmac = (key, data) => crypto.createHmac("sha256", key).update(data).digest();
const sha256hex = (data) => crypto.createHash("sha256").update(data).digest("hex");
// RFC 3986 encoding of a query key or value, as SigV4's canonical query string wants it.
const uriEncode = (v) => encodeURIComponent(v).replace(/[!'()*]/g, (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase());

function canonicalQuery(raw) {
  if (!raw) return "";
  return raw
    .split("&")
    .filter(Boolean)
    .map((kv) => {
      const i = kv.indexOf("=");
      const k = decodeURIComponent((i < 0 ? kv : kv.slice(0, i)).replace(/\+/g, "%20"));
      const v = i < 0 ? "" : decodeURIComponent(kv.slice(i + 1).replace(/\+/g, "%20"));
      return [uriEncode(k), uriEncode(v)];
    })
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join("&");
}

// null when the request's SigV4 signature is right for SECRET_KEY; else why not. Requests
// without an Authorization header (presigned URLs) are not used by these tests: refused.
export function sigv4Problem(req) {
  const auth = req.headers.authorization ?? "";
  const m = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(auth);
  if (!m) return `no SigV4 Authorization header (${auth.slice(0, 40)})`;
  const [, akid, date, region, service, signed, signature] = m;
  if (akid !== ACCESS_KEY) return `unknown access key id ${akid}`;
  const amzDate = req.headers["x-amz-date"];
  if (!amzDate || !amzDate.startsWith(date)) return "x-amz-date missing or not the credential's date";
  const q = req.url.indexOf("?");
  const names = signed.split(";");
  if (!names.includes("host")) return "host is not signed";
  const headers = names.map((h) => `${h}:${String(req.headers[h] ?? "").trim().replace(/\s+/g, " ")}\n`).join("");
  const payload = req.headers["x-amz-content-sha256"] ?? sha256hex("");
  const canonical = [req.method, q < 0 ? req.url : req.url.slice(0, q), canonicalQuery(q < 0 ? "" : req.url.slice(q + 1)), headers, signed, payload].join("\n");
  const scope = `${date}/${region}/${service}/aws4_request`;
  const toSign = ["AWS4-HMAC-SHA256", amzDate, scope, sha256hex(canonical)].join("\n");
  let key = hmac(`AWS4${SECRET_KEY}`, date);
  for (const part of [region, service, "aws4_request"]) key = hmac(key, part);
  if (process.env.SIGV4_DEBUG) console.error("canonical:\n" + canonical); // SIGV4_DEBUG=1: what was signed
  return hmac(key, toSign).toString("hex") === signature ? null : "signature does not match";
}

export async function startProxy(target) {
  const up = new URL(target);
  const agent = new http.Agent({ keepAlive: true });
  // suffixRanges: answer "Range: bytes=-N" as S3 does (the object's last N bytes); s3rver 3.7
  // reads it as "0-N", so the proxy rewrites it into the absolute range after a HEAD.
  let cfg = { latencyMs: 0, suffixRanges: true };
  let rules = []; // { status | reset | truncate | delay, count, method?, match? }: applied in order, each `count` times
  const st = { requests: 0, byMethod: {}, rangeGets: 0, bytesOut: 0, faults: 0, rejected: 0, inflight: 0, maxInflight: 0 };

  const takeRule = (req) => {
    const i = rules.findIndex((r) => (!r.method || r.method === req.method) && (!r.match || r.match.test(req.url)));
    if (i < 0) return null;
    const r = rules[i];
    if (--r.count <= 0) rules.splice(i, 1);
    st.faults++;
    return r;
  };

  const server = http.createServer((req, res) => {
    st.requests++;
    st.maxInflight = Math.max(st.maxInflight, ++st.inflight);
    res.on("close", () => st.inflight--);
    st.byMethod[req.method] = (st.byMethod[req.method] ?? 0) + 1;
    if (req.method === "GET" && req.headers.range) st.rangeGets++;
    const bad = sigv4Problem(req);
    if (bad) {
      st.rejected++;
      const body = errorBody("SignatureDoesNotMatch", `rejected by the test proxy: ${bad}`);
      res.writeHead(403, { "content-type": "application/xml", "content-length": Buffer.byteLength(body) });
      return res.end(body);
    }
    const rule = takeRule(req);
    setTimeout(() => {
      if (rule?.reset) return req.socket.destroy();
      if (rule?.status) {
        const body = errorBody(CODES[rule.status] ?? "InternalError", `injected by the test proxy (${rule.status})`);
        res.writeHead(rule.status, { "content-type": "application/xml", "content-length": Buffer.byteLength(body), ...rule.headers });
        return res.end(body);
      }
      forward(req, res, rule?.truncate, rule?.edit);
    }, cfg.latencyMs + (rule?.delay ?? 0));
  });

  // Forwards the request as it came (a suffix range made absolute, see suffixRanges);
  // `truncate` = bytes of the answer's body sent before the connection is cut (its
  // Content-Length still promises the whole body); `edit` = a function of the answer's body
  // (a string) whose result is sent instead.
  function forward(req, res, truncate, edit) {
    const suffix = /^bytes=-(\d+)$/.exec(req.headers.range ?? "");
    if (edit) return sendEdited(req, res, edit);
    if (req.method !== "GET" || !suffix || !cfg.suffixRanges) return send(req, res, truncate, req.headers);
    const { range, ...plain } = req.headers; // the size of the whole object: no Range on the HEAD
    const head = http.request({ host: up.hostname, port: up.port, method: "HEAD", path: req.url, headers: plain, agent }, (hres) => {
      hres.resume();
      const size = Number(hres.headers["content-length"]);
      if (hres.statusCode !== 200 || !(size > 0)) return send(req, res, truncate, req.headers); // the store's own error
      const n = Math.min(Number(suffix[1]), size);
      send(req, res, truncate, { ...req.headers, range: `bytes=${size - n}-${size - 1}` });
    });
    head.on("error", () => res.socket?.destroy());
    head.end();
  }

  function sendEdited(req, res, edit) {
    const preq = http.request({ host: up.hostname, port: up.port, method: req.method, path: req.url, headers: req.headers, agent }, (pres) => {
      const chunks = [];
      pres.on("data", (c) => chunks.push(c));
      pres.on("end", () => {
        const body = Buffer.from(edit(Buffer.concat(chunks).toString()));
        const { "transfer-encoding": _, ...headers } = pres.headers;
        res.writeHead(pres.statusCode, { ...headers, "content-length": body.length });
        st.bytesOut += body.length;
        res.end(body);
      });
    });
    preq.on("error", () => res.socket?.destroy());
    req.pipe(preq);
  }

  function send(req, res, truncate, headers) {
    const preq = http.request({ host: up.hostname, port: up.port, method: req.method, path: req.url, headers, agent }, (pres) => {
      res.writeHead(pres.statusCode, pres.headers);
      let sent = 0;
      pres.on("data", (chunk) => {
        if (truncate !== undefined) {
          const room = truncate - sent;
          if (room <= 0) return;
          if (chunk.length >= room) {
            chunk = chunk.subarray(0, room);
            sent += chunk.length;
            st.bytesOut += chunk.length;
            res.write(chunk, () => res.socket?.destroy());
            return;
          }
        }
        sent += chunk.length;
        st.bytesOut += chunk.length;
        res.write(chunk);
      });
      pres.on("end", () => {
        if (truncate === undefined || sent < truncate) res.end();
      });
    });
    preq.on("error", () => res.socket?.destroy());
    req.pipe(preq);
  }

  await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
  return {
    endpoint: `http://127.0.0.1:${server.address().port}`,
    set(c) {
      cfg = { ...cfg, ...c };
    },
    // One fault rule: { status: 503, headers? } | { reset: true } | { truncate: bytes } |
    // { delay: ms } | { edit: (body) => body },
    // with count (default 1), method and match (a RegExp on the path) to pick the requests it hits.
    fail(rule) {
      rules.push({ count: 1, ...rule });
    },
    clearFaults() {
      rules = [];
    },
    stats() {
      return structuredClone(st);
    },
    resetStats() {
      Object.assign(st, { requests: 0, byMethod: {}, rangeGets: 0, bytesOut: 0, faults: 0, rejected: 0, maxInflight: st.inflight });
    },
    async close() {
      server.closeAllConnections();
      await new Promise((ok) => server.close(ok));
      agent.destroy();
    },
  };
}

// A test script's frame: s3rver and the proxy started, the steps run in order (an exception is
// one failure), both stopped, "ok"/"FAIL" lines and a summary printed, the exit status set.
//   const t = await storeTest("objstore");  t.ok(what); t.bad(what, why); t.check(cond, what, why)
//   await t.run(stepA, stepB);              // t.s3, t.px are the store and the proxy
export async function storeTest(name) {
  let failed = 0;
  const t = {
    ok: (what) => console.log(`ok   ${what}`),
    bad: (what, why) => {
      failed++;
      console.log(`FAIL ${what}: ${why}`);
    },
    check: (cond, what, why) => (cond ? t.ok(what) : t.bad(what, why)),
    s3: await startS3({ bucket: "lance" }),
    async run(...steps) {
      try {
        for (const step of steps) await step();
      } catch (e) {
        t.bad(name, e.stack ?? e);
      } finally {
        await t.px.close();
        await t.s3.close();
      }
      console.log(failed ? `${failed} failed` : `${name}: all passed`);
      process.exit(failed ? 1 : 0);
    },
  };
  t.px = await startProxy(t.s3.endpoint);
  return t;
}
