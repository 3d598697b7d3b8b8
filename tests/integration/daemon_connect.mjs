// The Connect RPC API exercised by a real client: code generated from proto/lanced/v1 by
// protoc-gen-es (run.sh puts it in ./gen next to this file) and @connectrpc/connect-node
// over HTTP/1.1, in both the binary and the JSON codec.
// Usage: node daemon_connect.mjs BASE_URL FILE_PATH
import { createClient, ConnectError, Code } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { tableFromIPC } from "apache-arrow";
import { RowService, Format } from "./gen/lanced/v1/lanced_pb.js";

const [baseUrl, file] = process.argv.slice(2);
const fail = (msg) => { console.error("FAIL " + msg); process.exit(1); };

const desc = await (await fetch(`${baseUrl}/files/${file}`)).json();
const ints = desc.columns.filter((c) => /^u?int(8|16|32|64)$/.test(c.type)).map((c) => c.name);
const strs = desc.columns.filter((c) => /^(large_)?utf8$/.test(c.type)).map((c) => c.name);
const cols = [ints[0], strs[0]].filter(Boolean);
const ids = [5n, 0n, 5n, 2n];
const json = await (await fetch(`${baseUrl}/files/${file}/rows?ids=${ids.join(",")}&columns=${cols.join(",")}`)).json();

for (const useBinaryFormat of [true, false]) {
  const tag = useBinaryFormat ? "binary" : "json";
  const client = createClient(RowService, createConnectTransport({ httpVersion: "1.1", baseUrl, useBinaryFormat }));

  const info = await client.getFile({ path: file });
  if (info.numRows !== BigInt(desc.num_rows)) fail(`${tag} GetFile numRows ${info.numRows}`);
  if (info.fields.length !== desc.columns.length) fail(`${tag} GetFile fields ${info.fields.length}`);
  if (!info.version.startsWith("2.")) fail(`${tag} GetFile version ${info.version}`);

  const a = await client.take({ path: file, ids, columns: cols, format: Format.ARROW });
  if (a.numRows !== BigInt(ids.length)) fail(`${tag} Take arrow numRows ${a.numRows}`);
  const t = tableFromIPC(a.arrowIpc);
  if (t.numRows !== ids.length) fail(`${tag} Take arrow table rows ${t.numRows}`);
  for (const c of cols)
    for (let i = 0; i < ids.length; i++) {
      const v = t.getChild(c).get(i), j = json.rows[i][c];
      if (String(v) !== String(j)) fail(`${tag} arrow row ${i} ${c}: ${v} vs ${j}`);
    }
  if (!a.stats) fail(`${tag} Take without stats`);

  const p = await client.take({ path: file, ids, columns: cols, format: Format.PROTO });
  if (p.columns.length !== cols.length) fail(`${tag} Take proto columns ${p.columns.length}`);
  for (const col of p.columns) {
    const vals = col.values.value?.values ?? [];
    if (vals.length !== ids.length) fail(`${tag} proto column ${col.name}: ${vals.length} values`);
    for (let i = 0; i < ids.length; i++) {
      const valid = col.validity.length === 0 || col.validity[i];
      const got = valid ? String(vals[i]) : "null", want = String(json.rows[i][col.name]);
      if (got !== want) fail(`${tag} proto row ${i} ${col.name}: ${got} vs ${want}`);
    }
  }

  const errs = [
    [{ path: "no/such.lance", ids: [1n] }, Code.NotFound],
    [{ path: file, ids: [] }, Code.InvalidArgument],
    [{ path: file, ids: [BigInt(desc.num_rows)] }, Code.OutOfRange],
    [{ path: file, ids: [1n], columns: ["no_such_column"] }, Code.InvalidArgument],
    [{ path: "../etc/passwd", ids: [1n] }, Code.InvalidArgument],
  ];
  for (const [req, want] of errs) {
    try {
      await client.take(req);
      fail(`${tag} ${JSON.stringify(req, (k, v) => typeof v === "bigint" ? String(v) : v)} succeeded`);
    } catch (e) {
      const ce = ConnectError.from(e);
      if (ce.code !== want) fail(`${tag} want code ${Code[want]}, got ${Code[ce.code]}: ${ce.message}`);
    }
  }
  console.log(`connect ${tag}: GetFile, Take (arrow, proto) and ${errs.length} error codes ok`);
}

// gzip both ways (Content-Encoding on requests, Accept-Encoding on answers), as connect-node
// sends and accepts it: the same answers as without compression. Bodies below 1 KiB go as
// they are, so the request asks for enough rows to be compressed.
{
  const { compressionGzip } = await import("@connectrpc/connect-node");
  const many = Array.from({ length: 200 }, (_, i) => BigInt(i % Number(desc.num_rows)));
  for (const useBinaryFormat of [true, false]) {
    const tag = `${useBinaryFormat ? "binary" : "json"} gzip`;
    const plain = createClient(RowService, createConnectTransport({ httpVersion: "1.1", baseUrl, useBinaryFormat }));
    const gz = createClient(RowService, createConnectTransport({
      httpVersion: "1.1", baseUrl, useBinaryFormat, sendCompression: compressionGzip,
      acceptCompression: [compressionGzip], compressMinBytes: 0 }));
    const want = await plain.take({ path: file, ids: many, columns: cols, format: Format.ARROW });
    const got = await gz.take({ path: file, ids: many, columns: cols, format: Format.ARROW });
    if (Buffer.compare(Buffer.from(want.arrowIpc), Buffer.from(got.arrowIpc)) !== 0) fail(`${tag}: answers differ`);
    console.log(`connect ${tag}: compressed request and answer, same rows`);
  }
  // What travels: a gzip request body is accepted, the answer says Content-Encoding: gzip.
  const zlib = await import("node:zlib");
  const body = zlib.gzipSync(Buffer.from(JSON.stringify({ path: file, ids: many.map(String), columns: cols })));
  const r = await fetch(`${baseUrl}/lanced.v1.RowService/Take`, { method: "POST", body,
    headers: { "Content-Type": "application/json", "Content-Encoding": "gzip", "Accept-Encoding": "gzip",
               "Connect-Protocol-Version": "1" } });
  if (r.status !== 200) fail(`raw gzip request: ${r.status} ${await r.text()}`);
  if (r.headers.get("content-encoding") !== "gzip") fail(`raw gzip: answer Content-Encoding ${r.headers.get("content-encoding")}`);
  // A gzip body of several members (RFC 1952 2.2; Go's, Node's and Python's readers take them
  // all) is the members' bytes one after the other; bytes after the last member that are not
  // one are an error, not ignored.
  const text = Buffer.from(JSON.stringify({ path: file, ids: many.map(String), columns: cols }));
  const cut = text.length >> 1;
  for (const [what, bytes, status] of [
    ["two members", Buffer.concat([zlib.gzipSync(text.subarray(0, cut)), zlib.gzipSync(text.subarray(cut))]), 200],
    ["one member and trailing garbage", Buffer.concat([body, Buffer.from("garbage")]), 400]]) {
    const m = await fetch(`${baseUrl}/lanced.v1.RowService/Take`, { method: "POST", body: bytes,
      headers: { "Content-Type": "application/json", "Content-Encoding": "gzip", "Connect-Protocol-Version": "1" } });
    const mj = await m.json();
    if (m.status !== status || (status === 200 ? mj.numRows !== String(many.length) : mj.code !== "invalid_argument"))
      fail(`gzip body of ${what}: want ${status}, got ${m.status} ${JSON.stringify(mj).slice(0, 200)}`);
  }
  // Accept-Encoding's q (RFC 9110 12.4.2), with the optional whitespace: q=0 refuses gzip.
  const ae = { "gzip; q=0": false, "br, gzip ;q=0": false, "gzip;q=0.000": false, "identity": false,
               "gzip;q=0.5": true, "GZIP": true, "deflate, gzip ; q=1": true, "x-gzip": false };
  for (const [value, want] of Object.entries(ae)) {
    const a = await fetch(`${baseUrl}/lanced.v1.RowService/Take`, { method: "POST", body,
      headers: { "Content-Type": "application/json", "Content-Encoding": "gzip", "Accept-Encoding": value,
                 "Connect-Protocol-Version": "1" } });
    await a.arrayBuffer();
    if (a.status !== 200 || (a.headers.get("content-encoding") === "gzip") !== want)
      fail(`Accept-Encoding '${value}': ${a.status}, Content-Encoding ${a.headers.get("content-encoding")}, want gzip ${want}`);
  }
  // A body over max_body_bytes, refused before it is read: in Connect's error shape, as the
  // same limit reached by a gzip body that inflates past it (it was a REST 413).
  // (Headers only, read at once: a client still writing the body may see the close as EPIPE.)
  const net = await import("node:net");
  const u = new URL(baseUrl);
  const raw = await new Promise((done) => {
    const sock = net.connect(+u.port, u.hostname, () => sock.write("POST /lanced.v1.RowService/Take HTTP/1.1\r\nHost: x\r\n" +
      "Content-Type: application/json\r\nConnect-Protocol-Version: 1\r\nContent-Length: 1100000\r\n\r\n"));
    let got = "";
    sock.on("data", (d) => { got += d; if (/\r\n\r\n[\s\S]*\}/.test(got)) sock.destroy(); });
    sock.on("close", () => done(got));
    sock.on("error", () => done(got));
    setTimeout(() => sock.destroy(), 3000);
  });
  const bigj = (() => { try { return JSON.parse(raw.slice(raw.indexOf("\r\n\r\n") + 4)); } catch { return null; } })();
  if (!raw.startsWith("HTTP/1.1 429") || bigj?.code !== "resource_exhausted" || !/max_body_bytes/.test(bigj?.message ?? ""))
    fail(`a body over max_body_bytes: want 429 resource_exhausted, got ${raw.slice(0, 300)}`);
  // A limit a retry meets again carries no Retry-After (it invited clients to loop).
  if (/^retry-after:/im.test(raw.slice(0, raw.indexOf("\r\n\r\n"))))
    fail(`a body over max_body_bytes: 429 with Retry-After: ${raw.slice(0, 300)}`);
  const br = await fetch(`${baseUrl}/lanced.v1.RowService/Take`, { method: "POST", body,
    headers: { "Content-Type": "application/json", "Content-Encoding": "br", "Connect-Protocol-Version": "1" } });
  const bj = await br.json();
  if (br.status !== 501 || bj.code !== "unimplemented" || !/gzip/.test(br.headers.get("accept-encoding") ?? ""))
    fail(`Content-Encoding br: want 501 unimplemented listing gzip, got ${br.status} ${JSON.stringify(bj)}`);
  // gRPC-Web and gRPC clients: an answer in their own shape (trailers-only, grpc-status 12).
  for (const ct of ["application/grpc-web+proto", "application/grpc"]) {
    const g = await fetch(`${baseUrl}/lanced.v1.RowService/Take`, { method: "POST", body: new Uint8Array(5),
      headers: { "Content-Type": ct } });
    if (g.status !== 200 || g.headers.get("grpc-status") !== "12" || !/Connect/.test(g.headers.get("grpc-message") ?? ""))
      fail(`${ct}: want 200 with grpc-status 12, got ${g.status} grpc-status ${g.headers.get("grpc-status")}`);
  }
  console.log("connect: raw gzip request/answer, gzip members and trailing garbage, Accept-Encoding's q, a body over the limit, unsupported encoding, gRPC and gRPC-Web answered in their shape");
}
