// Protobuf answers against Lance's own: every case of every committed fixture (data files:
// tests/fixtures/data/*.answers; datasets: tests/fixtures/datasets/*.answers, pinned versions
// too) asked of a real lanced as a lanced.v1.TakeResponse with typed columns, four ways:
//   get    GET  /files/<path>/rows?ids=..&columns=..&format=proto
//   post   POST /files/<path>/rows, a protobuf TakeRequest body, Accept: application/x-protobuf
//   cbin   Connect Take, FORMAT_PROTO, binary codec   (@connectrpc/connect-node)
//   cjson  Connect Take, FORMAT_PROTO, proto3 JSON codec (@connectrpc/connect-node)
//   grpc   gRPC Take over HTTP/2 (h2c), FORMAT_PROTO (@connectrpc/connect-node's gRPC transport)
// Each answer is decoded with @bufbuild/protobuf (code generated from proto/lanced/v1 by
// protoc-gen-es), each value is written the way docs/json-rows.md writes it (the fixtures' own
// formatters, tests/fixtures/jsonrows.mjs) and compared with the raw text of Lance's answer,
// value by value: so 64-bit integers, timestamps, decimals and float32/float16 values are
// compared exactly. Tensors (numeric fixed-size lists and lists of them) are unpacked from
// their little-endian data; a null inner fixed-size list is read from item_validity (every
// value of it null) as docs/api.md says.
// Columns the protobuf format does not carry (docs/api.md: struct, map, lists of strings,
// bools or lists, decimal256) and utf8 values holding U+0000 must be refused with 501 /
// `unimplemented` naming the first such column; the other columns of the case are then asked
// for alone and compared. Blob columns (Lance answers descriptors) must be refused the same
// way with ?blobs=descriptors; Connect serves their bytes, which Lance's answers do not hold,
// so Connect skips them.
// Also checked: num_rows, column_names, Column.name and .type (as GET /files/<path> names
// the type), one value per row, validity empty without nulls, a null row holding the type's
// zero value, tensor dtype/shape/offsets/data/item_validity sizes, float values that are
// exactly float32/float16 values.
// Usage: node tests/integration/daemon_proto_answers.mjs [BIN_DIR] [--root=DIR]
//          [--only=name,name] [--modes=get,post,cbin,cjson,grpc] [--verbose]
// BIN_DIR (default bin) holds lanced; run from anywhere. --root serves another fixture root
// with its own index.json (e.g. the OUTDIR of `gen.mjs --large OUTDIR`); default
// tests/fixtures. --verbose lists every problem and the values compared per type. Exits 1 on
// any problem.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawn, execFileSync } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";
import {
  escapeString, f16BitsToNumber, f16round, fmtDate, fmtDateTime, fmtFloat16, fmtFloat32,
  fmtFloat64, fmtTime, fmtTimestamp, floorDiv,
} from "../fixtures/jsonrows.mjs";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
process.chdir(REPO);
const args = process.argv.slice(2);
const opt = (k) => args.find((a) => a.startsWith(`--${k}=`))?.slice(k.length + 3);
const BIN = args.find((a) => !a.startsWith("--")) ?? "bin";
const ONLY = opt("only")?.split(",");
const MODES = opt("modes")?.split(",") ?? ["get", "post", "cbin", "cjson", "grpc"];
const VERBOSE = args.includes("--verbose");
const ROOT = opt("root") ?? "tests/fixtures";
const t0 = Date.now();

// ---- generated code (as run.sh makes it for daemon_connect.mjs) -----------------------------
const work = fs.mkdtempSync(path.join(os.tmpdir(), "lanced-proto-answers."));
let daemon = null, exiting = false;
const cleanup = () => {
  exiting = true;
  if (daemon && daemon.exitCode === null) daemon.kill("SIGTERM");
  fs.rmSync(work, { recursive: true, force: true });
};
process.on("exit", cleanup);
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => process.exit(130));
execFileSync("protoc", [`--plugin=protoc-gen-es=${REPO}/node_modules/.bin/protoc-gen-es`, `--es_out=${work}`,
  "--es_opt=target=js", "-Iproto", "proto/lanced/v1/lanced.proto"]);
fs.symlinkSync(path.join(REPO, "node_modules"), path.join(work, "node_modules"));
const pb = await import(pathToFileURL(path.join(work, "lanced/v1/lanced_pb.js")).href);
const { create, toBinary, fromBinary } = await import("@bufbuild/protobuf");
const { createClient, ConnectError, Code } = await import("@connectrpc/connect");
const { createConnectTransport, createGrpcTransport } = await import("@connectrpc/connect-node");

// ---- the daemon --------------------------------------------------------------------------------
const base = await new Promise((resolve, reject) => {
  daemon = spawn(path.join(BIN, "lanced"), ["--root", ROOT, "--listen", "127.0.0.1:0", "--workers", "2"],
    { stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  const timer = setTimeout(() => reject(new Error(`lanced did not start:\n${log}`)), 10000);
  daemon.stderr.on("data", (d) => {
    log += d;
    const m = /listening on 127\.0\.0\.1:(\d+)/.exec(log);
    if (m) { clearTimeout(timer); resolve(`http://127.0.0.1:${m[1]}`); }
  });
  daemon.on("exit", (code, sig) => {
    reject(new Error(`lanced exited (${code ?? sig}):\n${log}`));
    if (!exiting) console.error(`FAIL lanced exited (${code ?? sig}) during the run:\n${log.slice(-2000)}`);
  });
  daemon.on("error", reject);
});
const clients = {
  cbin: createClient(pb.RowService, createConnectTransport({ httpVersion: "1.1", baseUrl: base, useBinaryFormat: true })),
  cjson: createClient(pb.RowService, createConnectTransport({ httpVersion: "1.1", baseUrl: base, useBinaryFormat: false })),
  // gRPC over one HTTP/2 connection, the cases' four workers multiplexed on it.
  grpc: createClient(pb.RowService, createGrpcTransport({ httpVersion: "2", baseUrl: base })),
};

// ---- Arrow type names (as lanced writes them) -------------------------------------------------
const NUMERIC = new Set(["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32", "float64"]);
const WIDTH = { int8: 1, uint8: 1, int16: 2, uint16: 2, float16: 2, int32: 4, uint32: 4, float32: 4, int64: 8, uint64: 8, float64: 8 };
function parseType(s) {
  let m;
  if ((m = /^dictionary<(.*)>$/.exec(s))) return { k: "dict", child: parseType(m[1]), s };
  if ((m = /^(large_)?list<(.*)>$/.exec(s))) return { k: "list", child: parseType(m[2]), s };
  if ((m = /^fixed_size_list<(.*)>\[(\d+)\]$/.exec(s))) return { k: "fsl", child: parseType(m[1]), size: Number(m[2]), s };
  if (/^(map|struct)</.test(s)) return { k: s.slice(0, s.indexOf("<")), s };
  return { k: "scalar", s };
}
// The value list a scalar type fills (docs/api.md), or null when protobuf does not carry it.
function scalarCase(s) {
  if (s === "bool") return "bools";
  if (/^int(8|16|32|64)$/.test(s) || /^(date32|date64|time32\[(s|ms)\]|time64\[(us|ns)\]|timestamp\[.*\]|duration\[(s|ms|us|ns)\])$/.test(s)) return "int64s";
  if (/^uint(8|16|32|64)$/.test(s)) return "uint64s";
  if (/^float(16|32|64)$/.test(s)) return "doubles";
  if (s === "utf8" || s === "large_utf8" || /^decimal\(-?\d+,-?\d+\)$/.test(s)) return "strings";
  if (s === "binary" || s === "large_binary" || /^fixed_size_binary\[\d+\]$/.test(s)) return "binaries";
  if (s === "null") return "none";
  return null;
}
// fixed-size-list dims down to a numeric leaf: {dims, leaf} or null
function fslChain(t) {
  const dims = [];
  while (t.k === "fsl") dims.push(t.size), (t = t.child);
  return t.k === "scalar" && NUMERIC.has(t.s) ? { dims, leaf: t.s } : null;
}
// How a column of type string s comes back: {case, ...} or null (not carried: 501).
function carriage(s) {
  const t = parseType(s);
  if (t.k === "scalar") { const c = scalarCase(s); return c ? { case: c, scalar: s } : null; }
  if (t.k === "dict") { const c = t.child.k === "scalar" ? scalarCase(t.child.s) : null; return c && c !== "none" ? { case: c, scalar: t.child.s } : null; }
  if (t.k === "fsl") { const ch = fslChain(t); return ch && { case: "tensor", list: false, ...ch }; }
  if (t.k === "list") { const ch = fslChain(t.child); return ch && { case: "tensor", list: true, ...ch }; }
  return null;
}

// ---- one value as docs/json-rows.md writes it -------------------------------------------------
const UNIT = { s: 0, ms: 1, us: 2, ns: 3 };
const b64 = (u8) => '"' + Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength).toString("base64") + '"';
// returns [text, problem] (problem: a value the type cannot hold)
function scalarJson(s, c, v) {
  let m;
  switch (c) {
    case "bools": return [v ? "true" : "false"];
    case "uint64s": return [String(v)];
    case "binaries": return [b64(v)];
    case "strings": return [s.startsWith("decimal") ? '"' + v + '"' : escapeString(v)];
    case "doubles":
      if (s === "float32") return [fmtFloat32(v), Number.isNaN(v) || Math.fround(v) === v ? null : "not a float32 value"];
      if (s === "float16") return [fmtFloat16(v), Number.isNaN(v) || f16round(v) === v ? null : "not a float16 value"];
      return [fmtFloat64(v)];
    case "int64s": {
      if (s === "date32") return ['"' + fmtDate(v) + '"'];
      if (s === "date64") {
        const days = floorDiv(v, 86400000n);
        return ['"' + (days * 86400000n === v ? fmtDate(days) : fmtDateTime(v, 1, "Z")) + '"'];
      }
      if ((m = /^time(32|64)\[(\w+)\]$/.exec(s))) return ['"' + fmtTime(v, UNIT[m[2]]) + '"'];
      if ((m = /^timestamp\[(\w+)(?:, tz=(.*))?\]$/.exec(s))) return ['"' + fmtTimestamp(v, UNIT[m[1]], m[2] ?? null) + '"'];
      return [String(v)];
    }
  }
  throw new Error(`no JSON form for ${c} ${s}`);
}
const ZERO = { bools: (v) => v === false, int64s: (v) => v === 0n, uint64s: (v) => v === 0n,
  doubles: (v) => Object.is(v, 0), strings: (v) => v === "", binaries: (v) => v.length === 0 };

function tensorElem(dtype, dv, i) {
  const w = WIDTH[dtype], o = i * w;
  switch (dtype) {
    case "int8": return String(dv.getInt8(o));
    case "uint8": return String(dv.getUint8(o));
    case "int16": return String(dv.getInt16(o, true));
    case "uint16": return String(dv.getUint16(o, true));
    case "int32": return String(dv.getInt32(o, true));
    case "uint32": return String(dv.getUint32(o, true));
    case "int64": return String(dv.getBigInt64(o, true));
    case "uint64": return String(dv.getBigUint64(o, true));
    case "float16": return fmtFloat16(f16BitsToNumber(dv.getUint16(o, true)));
    case "float32": return fmtFloat32(dv.getFloat32(o, true));
    case "float64": return fmtFloat64(dv.getFloat64(o, true));
  }
  throw new Error(`dtype ${dtype}`);
}
// Values [pos, pos + prod(dims)) as nested JSON arrays; with collapse, an inner fixed-size
// list whose values are all null is written null (how a null inner list comes back).
function tensorJson(ten, dv, dims, pos, collapse) {
  if (!dims.length) return ten.itemValidity.length && !ten.itemValidity[pos] ? "null" : tensorElem(ten.dtype, dv, pos);
  const per = dims.slice(1).reduce((a, b) => a * b, 1), parts = [];
  for (let k = 0; k < dims[0]; k++) {
    const p = pos + k * per;
    if (collapse && dims.length > 1 && ten.itemValidity.length && ten.itemValidity.subarray(p, p + per).every((x) => x === 0)) parts.push("null");
    else parts.push(tensorJson(ten, dv, dims.slice(1), p, collapse));
  }
  return "[" + parts.join(",") + "]";
}

// A value's text with every list inside it whose values are all null written null, bottom up
// (the form tensorJson's collapse gives): `[[1,null],[null,null]]` -> `[[1,null],null]`. The
// value itself is kept a list. Numbers only: tensors hold no strings that could contain "[".
function collapseInner(w) {
  if (!w.startsWith("[")) return w;
  let inner = w.slice(1, -1), prev;
  do {
    prev = inner;
    inner = inner.replace(/\[null(?:,null)*\]/g, "null");
  } while (inner !== prev);
  return "[" + inner + "]";
}

// ---- Lance's answer, raw text per value --------------------------------------------------------
function skipValue(s, i) {
  if (s[i] === '"') {
    for (i++; s[i] !== '"'; i++) if (s[i] === "\\") i++;
    return i + 1;
  }
  if (s[i] === "{" || s[i] === "[") {
    let depth = 0;
    for (; ; i++) {
      const c = s[i];
      if (c === '"') { i = skipValue(s, i) - 1; continue; }
      if (c === "{" || c === "[") depth++;
      else if ((c === "}" || c === "]") && --depth === 0) return i + 1;
    }
  }
  while (i < s.length && !",}]".includes(s[i])) i++;
  return i;
}
// {num_rows, columns, rows: [Map(name -> raw JSON text)]}
function parseBody(body) {
  const at = body.indexOf(',"rows":[');
  const head = JSON.parse(body.slice(0, at) + "}");
  const rows = [];
  let i = at + 9;
  while (body[i] === "{") {
    const row = new Map();
    i++;
    while (body[i] !== "}") {
      const ke = skipValue(body, i), key = JSON.parse(body.slice(i, ke));
      const ve = skipValue(body, ke + 1);
      row.set(key, body.slice(ke + 1, ve));
      i = body[ve] === "," ? ve + 1 : ve;
    }
    rows.push(row);
    i++;
    if (body[i] === ",") i++;
  }
  if (rows.length !== head.num_rows) throw new Error(`answer parse: ${rows.length} rows, num_rows ${head.num_rows}`);
  return { ...head, rows };
}

// ---- fixtures and cases ------------------------------------------------------------------------
const index = JSON.parse(fs.readFileSync(path.join(ROOT, "index.json"), "utf8"));
const fixtures = [];
for (const f of index.fixtures) {
  if (!f.answers || !f.file || !fs.existsSync(f.answers)) continue;
  const blobs = new Set(f.columns.filter((c) => c.metadata?.["lance-encoding:blob"] === "true" || c.metadata?.["ARROW:extension:name"] === "lance.blob.v2").map((c) => c.name));
  fixtures.push({ name: f.name, path: path.relative(ROOT, f.file), answers: f.answers, dataset: false, blobs });
}
const dsDir = path.join(ROOT, "datasets");
for (const a of fs.existsSync(dsDir) ? fs.readdirSync(dsDir).filter((n) => n.endsWith(".answers")).sort() : []) {
  const name = a.slice(0, -".answers".length);
  fixtures.push({ name, path: `datasets/${name}.lance`, answers: path.join(dsDir, a), dataset: true, blobs: new Set() });
}

const describeCache = new Map();
async function describe(p, version) {
  const key = `${p}@${version}`;
  if (!describeCache.has(key)) {
    const res = await fetch(`${base}/files/${p}${version ? `?version=${version}` : ""}`);
    if (res.status !== 200) throw new Error(`describe ${key}: ${res.status} ${await res.text()}`);
    const d = await res.json();
    describeCache.set(key, new Map(d.columns.map((c) => [c.name, c.type])));
  }
  return describeCache.get(key);
}

// ---- asking ----------------------------------------------------------------------------------------
const rpc = (mode) => mode.startsWith("c") || mode === "grpc"; // a RowService client, not fetch
// -> {resp} or {status, code, message}
async function ask(mode, fx, ids, columns, version) {
  if (mode === "get" || mode === "post") {
    let res;
    if (mode === "get") {
      const q = `ids=${ids.join(",")}${columns ? `&columns=${columns.map(encodeURIComponent).join(",")}` : ""}${version ? `&version=${version}` : ""}`;
      res = await fetch(`${base}/files/${fx.path}/rows?${q}&format=proto&blobs=descriptors`);
    } else {
      const body = toBinary(pb.TakeRequestSchema, create(pb.TakeRequestSchema, { ids: ids.map(BigInt), columns: columns ?? [], version: BigInt(version || 0) }));
      res = await fetch(`${base}/files/${fx.path}/rows?blobs=descriptors`, { method: "POST", body,
        headers: { "Content-Type": "application/x-protobuf", Accept: "application/x-protobuf" } });
    }
    const bytes = new Uint8Array(await res.arrayBuffer());
    if (res.status !== 200) {
      let e = {};
      try { e = JSON.parse(Buffer.from(bytes).toString()).error ?? {}; } catch { /* not JSON */ }
      return { status: res.status, code: e.code, message: e.message ?? Buffer.from(bytes).toString().slice(0, 200) };
    }
    const ct = res.headers.get("content-type");
    if (ct !== "application/x-protobuf") return { status: 200, code: "content-type", message: `Content-Type ${ct}` };
    return { resp: fromBinary(pb.TakeResponseSchema, bytes) };
  }
  try {
    return { resp: await clients[mode].take({ path: fx.path, ids: ids.map(BigInt), columns: columns ?? [], format: pb.Format.PROTO, version: BigInt(version || 0) }) };
  } catch (err) {
    const ce = ConnectError.from(err);
    return { status: ce.code === Code.Unimplemented ? 501 : -1, code: Code[ce.code], message: ce.rawMessage };
  }
}

// Compares one TakeResponse with the columns `cols` of Lance's rows; returns [problems, values]
function compare(resp, want, cols, types, ids) {
  const probs = [];
  let values = 0;
  if (resp.numRows !== BigInt(ids.length)) probs.push(`num_rows ${resp.numRows}, want ${ids.length}`);
  if (resp.columnNames.join() !== cols.join()) probs.push(`column_names [${resp.columnNames}], want [${cols}]`);
  if (resp.columns.length !== cols.length) { probs.push(`${resp.columns.length} columns, want ${cols.length}`); return [probs, 0]; }
  if (resp.arrowIpc.length) probs.push("arrow_ipc set in a FORMAT_PROTO answer");
  const n = ids.length;
  cols.forEach((name, ci) => {
    const col = resp.columns[ci], type = types.get(name), how = carriage(type);
    const at = (r) => `column ${name} (${type}) row ${r} (id ${ids[r]})`;
    if (col.name !== name) probs.push(`columns[${ci}].name ${col.name}, want ${name}`);
    if (col.type !== type) probs.push(`column ${name}: type ${col.type}, GET /files names ${type}`);
    const valid = col.validity;
    if (valid.length && valid.length !== n) { probs.push(`column ${name}: ${valid.length} validity entries for ${n} rows`); return; }
    if (valid.length && valid.every(Boolean)) probs.push(`column ${name}: validity given though no row is null`);
    const isValid = (r) => !valid.length || valid[r];
    const wantCase = how.case === "none" ? undefined : how.case;
    if (col.values.case !== wantCase) { probs.push(`column ${name}: values in ${col.values.case}, want ${wantCase}`); return; }
    const gotText = [];
    if (how.case === "none") {
      for (let r = 0; r < n; r++) gotText.push(isValid(r) ? "(a valid row of a null column)" : "null");
    } else if (how.case !== "tensor") {
      const vals = col.values.value.values;
      if (vals.length !== n) { probs.push(`column ${name}: ${vals.length} values for ${n} rows`); return; }
      for (let r = 0; r < n; r++) {
        if (!isValid(r)) {
          if (!ZERO[how.case](vals[r])) probs.push(`${at(r)}: a null row holds ${vals[r]}, not the zero value`);
          gotText.push("null");
          continue;
        }
        const [text, bad] = scalarJson(how.scalar, how.case, vals[r]);
        if (bad) probs.push(`${at(r)}: ${vals[r]} is ${bad}`);
        gotText.push(text);
      }
    } else {
      const ten = col.values.value, per = how.dims.reduce((a, b) => a * b, 1);
      if (ten.dtype !== how.leaf) probs.push(`column ${name}: dtype ${ten.dtype}, want ${how.leaf}`);
      // shape: the sizes below the row (a fixed-size list) or below the list item
      if (ten.shape.map(Number).join() !== how.dims.join()) { probs.push(`column ${name}: shape [${ten.shape}], want [${how.dims}]`); return; }
      const itemDims = how.dims;
      let items = n;
      const offs = ten.offsets.map(Number);
      if (how.list) {
        if (offs.length !== n + 1 || offs[0] !== 0) { probs.push(`column ${name}: ${offs.length} offsets (first ${offs[0]}) for ${n} rows`); return; }
        items = offs[n];
      } else if (offs.length) probs.push(`column ${name}: offsets in a fixed-size list tensor`);
      const total = items * per, w = WIDTH[how.leaf];
      if (ten.data.length !== total * w) { probs.push(`column ${name}: ${ten.data.length} data bytes, want ${total} values of ${w}`); return; }
      if (ten.itemValidity.length && ten.itemValidity.length !== total) { probs.push(`column ${name}: ${ten.itemValidity.length} item_validity bytes for ${total} values`); return; }
      const dv = new DataView(ten.data.buffer, ten.data.byteOffset, ten.data.byteLength);
      for (let r = 0; r < n; r++) {
        if (!isValid(r)) {
          if (how.list && offs[r + 1] !== offs[r]) probs.push(`${at(r)}: a null list row has ${offs[r + 1] - offs[r]} items`);
          gotText.push("null");
          continue;
        }
        if (!how.list) { gotText.push([tensorJson(ten, dv, itemDims, r * per, true), tensorJson(ten, dv, itemDims, r * per, false)]); continue; }
        const variants = [true, false].map((collapse) => {
          const parts = [];
          for (let k = offs[r]; k < offs[r + 1]; k++) {
            if (collapse && itemDims.length && ten.itemValidity.length && ten.itemValidity.subarray(k * per, (k + 1) * per).every((x) => x === 0)) parts.push("null");
            else parts.push(tensorJson(ten, dv, itemDims, k * per, collapse));
          }
          return "[" + parts.join(",") + "]";
        });
        gotText.push(variants);
      }
    }
    const tally = byType.get(type) ?? byType.set(type, { values: 0, nulls: 0, refused: 0, collapsed: 0, uncollapsed: 0 }).get(type);
    for (let r = 0; r < n; r++) {
      const w = want.rows[r].get(name);
      values++;
      tally.values++;
      if (w === "null") tally.nulls++;
      if (Array.isArray(gotText[r]) && gotText[r][0] !== gotText[r][1]) {
        if (gotText[r][0] === w) tally.collapsed++;
        else if (gotText[r][1] === w) tally.uncollapsed++;
      }
      const g = gotText[r];
      // A tensor value: read with null inner lists (item_validity all 0) or, where Lance says
      // so, as a list of null values; either reading of the same bytes may be Lance's. A value
      // holding both (nested fixed-size lists: a null inner list beside one of null items) is
      // Lance's once both are read as null, which is all a tensor carries (docs/api.md).
      const ok = Array.isArray(g) ? g.includes(w) || g[0] === collapseInner(w) : g === w;
      if (!ok) probs.push(`${at(r)}: got ${String(Array.isArray(g) ? g[0] : g).slice(0, 200)}, want ${w.slice(0, 200)}`);
    }
  });
  return [probs, values];
}

// ---- the run ---------------------------------------------------------------------------------------
const stats = Object.fromEntries(MODES.map((m) => [m, { cases: 0, values: 0, refusals: 0, problems: 0 }]));
const problems = [];
const byType = new Map(); // type -> values compared, of them null, refusals (summed over the ways asked)
let nCases = 0, blobSkips = 0;
const report = (mode, fx, line, what, repro) => {
  stats[mode].problems++;
  problems.push(`${mode} ${fx.name}:${line} ${what}${repro ? `\n    ${repro}` : ""}`);
};
const reproOf = (mode, fx, ids, cols, version) => {
  const idList = ids.length > 12 ? `${ids.slice(0, 12).join(",")},...(${ids.length} ids)` : ids.join(",");
  if (mode === "get" || mode === "post")
    return `curl -s "$URL/files/${fx.path}/rows?ids=${idList}${cols ? `&columns=${cols.join(",")}` : ""}${version ? `&version=${version}` : ""}&format=proto&blobs=descriptors" | protoc --decode=lanced.v1.TakeResponse -Iproto lanced/v1/lanced.proto`;
  return `curl -s -H 'Content-Type: application/json' -d '{"path":"${fx.path}","ids":[${idList}]${cols ? `,"columns":${JSON.stringify(cols)}` : ""}${version ? `,"version":${version}` : ""},"format":"FORMAT_PROTO"}' $URL/lanced.v1.RowService/Take`;
};

async function runCase(fx, line, text) {
  const [idsText, second, body] = text.split("\t");
  const ids = JSON.parse(idsText);
  const version = fx.dataset ? Number(second) : 0;
  const asked = fx.dataset || second === "null" ? null : JSON.parse(second);
  const want = parseBody(body);
  const types = await describe(fx.path, version);
  for (const c of want.columns) if (!types.has(c)) throw new Error(`${fx.name}:${line}: column ${c} not described`);
  // Columns refused over protobuf: by type, blobs (descriptors, structs), strings with U+0000.
  const hasNul = (c) => /^(dictionary<)?(large_)?utf8>?$/.test(types.get(c)) && want.rows.some((r) => r.get(c).includes("\\u0000"));
  const refused = want.columns.filter((c) => !carriage(types.get(c)) || fx.blobs.has(c) || hasNul(c));
  nCases++;
  for (const mode of MODES) {
    const st = stats[mode];
    let cols = want.columns, askCols = asked;
    // Connect and gRPC serve blob bytes, not Lance's descriptors: nothing to compare them with.
    if (rpc(mode) && want.columns.some((c) => fx.blobs.has(c))) {
      cols = want.columns.filter((c) => !fx.blobs.has(c));
      askCols = cols;
      blobSkips++;
      if (!cols.length) continue;
    }
    const refusedHere = refused.filter((c) => cols.includes(c));
    if (refusedHere.length) {
      const r = await ask(mode, fx, ids, askCols, version);
      st.refusals++;
      const first = refusedHere[0];
      for (const c of refusedHere) {
        const k = fx.blobs.has(c) ? `${types.get(c)} (blob)` : hasNul(c) ? `${types.get(c)} (U+0000)` : types.get(c);
        (byType.get(k) ?? byType.set(k, { values: 0, nulls: 0, refused: 0, collapsed: 0, uncollapsed: 0 }).get(k)).refused++;
      }
      if (r.resp) report(mode, fx, line, `answered 200, want 501 naming column ${first} (${types.get(first)})`, reproOf(mode, fx, ids, askCols, version));
      else if (r.status !== 501 || r.code !== (rpc(mode) ? "Unimplemented" : "unimplemented") || !r.message?.startsWith(`column ${first} `))
        report(mode, fx, line, `want 501 unimplemented naming column ${first}, got ${r.status} ${r.code}: ${r.message}`, reproOf(mode, fx, ids, askCols, version));
      cols = cols.filter((c) => !refused.includes(c));
      askCols = cols;
      if (!cols.length) continue;
    }
    const r = await ask(mode, fx, ids, askCols, version);
    st.cases++;
    if (!r.resp) { report(mode, fx, line, `status ${r.status} ${r.code}: ${r.message}`, reproOf(mode, fx, ids, askCols, version)); continue; }
    const [probs, values] = compare(r.resp, want, cols, types, ids);
    st.values += values;
    const shown = VERBOSE ? probs : probs.slice(0, 5);
    for (const p of shown) report(mode, fx, line, p, null);
    if (probs.length > shown.length) report(mode, fx, line, `... and ${probs.length - shown.length} more`, null);
    if (probs.length) problems.push(`    ${reproOf(mode, fx, ids, askCols, version)}`);
  }
}

const todo = [];
for (const fx of fixtures) {
  if (ONLY && !ONLY.includes(fx.name)) continue;
  const lines = fs.readFileSync(fx.answers, "utf8").split("\n").filter(Boolean);
  lines.forEach((l, i) => todo.push([fx, i + 1, l]));
}
// A few cases at a time (the daemon has two network threads and take threads).
let next = 0;
await Promise.all(Array.from({ length: 4 }, async () => {
  while (next < todo.length && daemon.exitCode === null && daemon.signalCode === null) {
    const [fx, line, text] = todo[next++];
    try {
      await runCase(fx, line, text);
    } catch (err) {
      stats[MODES[0]].problems++;
      problems.push(`${fx.name}:${line} ${err.stack ?? err}`);
    }
  }
}));

// Problems are printed in the order found; without --verbose the first 150 lines.
const shownProblems = VERBOSE ? problems : problems.slice(0, 150);
for (const p of shownProblems) console.error(p);
if (shownProblems.length < problems.length) console.error(`... ${problems.length - shownProblems.length} more lines (--verbose prints them all)`);
if (VERBOSE)
  for (const [t, c] of [...byType].sort())
    console.log(`  ${t}: ${c.values} values (${c.nulls} null${c.collapsed ? `, ${c.collapsed} with a null inner list` : ""}` +
      `${c.uncollapsed ? `, ${c.uncollapsed} with an inner list of null values` : ""}), ${c.refused} refusals (summed over ${MODES.length} modes)`);
const nProblems = Object.values(stats).reduce((a, s) => a + s.problems, 0);
for (const [m, s] of Object.entries(stats))
  console.log(`proto answers ${m}: ${s.cases} cases, ${s.values} values compared with Lance's, ${s.refusals} refusals checked, ${s.problems} problems`);
console.log(`proto answers: ${nCases} cases of ${new Set(todo.map((t) => t[0].name)).size} fixtures` +
  `${blobSkips ? `, blob columns left out of ${blobSkips} Connect asks (bytes, not Lance's descriptors)` : ""}` +
  `, ${((Date.now() - t0) / 1000).toFixed(1)} s: ${nProblems ? "FAIL" : "ok"}`);
process.exit(nProblems ? 1 : 0);
