// An S3-compatible object store for tests and benchmarks (issue 15): s3rver, which checks
// SigV4 signatures, behind a proxy that counts requests and injects what real object stores
// do to clients (latency, 5xx and 503 SlowDown, connection resets, truncated bodies).
//
//   const s3 = await startS3({ bucket: "lance" });        // s3rver on 127.0.0.1, a temp dir
//   const px = await startProxy(s3.endpoint);              // what clients are pointed at
//   await uploadDir(px.endpoint, "lance", "fx/a.lance", "tests/fixtures/datasets/a.lance");
//   px.set({ latencyMs: 20 });                             // every request delayed 20 ms
//   px.fail({ status: 503, count: 2, method: "GET" });     // the next two GETs answer SlowDown
//   px.stats()  -> { requests, byMethod: {GET, HEAD, PUT, ...}, rangeGets, bytesOut, faults }
//   await px.close(); await s3.close();
//
// The proxy forwards every header unchanged (the Host header included: SigV4 signs it, and
// s3rver checks the signature against the Host it receives), so a client signs for the proxy's
// address and s3rver accepts it.
import S3rver from "s3rver";
import { S3Client, PutObjectCommand } from "@aws-sdk/client-s3";
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
const CODES = { 403: "AccessDenied", 404: "NoSuchKey", 500: "InternalError", 503: "SlowDown" };

export async function startProxy(target) {
  const up = new URL(target);
  const agent = new http.Agent({ keepAlive: true });
  let cfg = { latencyMs: 0 };
  let rules = []; // { status | reset | truncate, count, method?, match? }: applied in order, each `count` times
  const st = { requests: 0, byMethod: {}, rangeGets: 0, bytesOut: 0, faults: 0 };

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
    st.byMethod[req.method] = (st.byMethod[req.method] ?? 0) + 1;
    if (req.method === "GET" && req.headers.range) st.rangeGets++;
    const rule = takeRule(req);
    setTimeout(() => {
      if (rule?.reset) return req.socket.destroy();
      if (rule?.status) {
        const body = errorBody(CODES[rule.status] ?? "InternalError", `injected by the test proxy (${rule.status})`);
        res.writeHead(rule.status, { "content-type": "application/xml", "content-length": Buffer.byteLength(body) });
        return res.end(body);
      }
      forward(req, res, rule?.truncate);
    }, cfg.latencyMs);
  });

  // Forwards the request as it came; `truncate` = bytes of the answer's body sent before the
  // connection is cut (its Content-Length still promises the whole body).
  function forward(req, res, truncate) {
    const preq = http.request({ host: up.hostname, port: up.port, method: req.method, path: req.url, headers: req.headers, agent }, (pres) => {
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
    // One fault rule: { status: 503 } | { reset: true } | { truncate: bytes }, with count
    // (default 1), method and match (a RegExp on the path) to pick the requests it hits.
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
      Object.assign(st, { requests: 0, byMethod: {}, rangeGets: 0, bytesOut: 0, faults: 0 });
    },
    async close() {
      server.closeAllConnections();
      await new Promise((ok) => server.close(ok));
      agent.destroy();
    },
  };
}
