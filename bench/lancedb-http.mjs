// A minimal LanceDB HTTP wrapper at the routes lanced serves, so lanced-load drives it
// unchanged:  GET /files/<path>  -> {"num_rows":N}
//             GET /files/<path>/rows?ids=1,2&format=arrow[&columns=a,b]
//             POST /files/<path>/rows  {"ids":[..],"columns":[..]}
// <path> is a Lance data file "<table>.lance/data/<file>.lance" under --root (or the table
// directory itself); rows come from the table's takeOffsets and go back as an Arrow IPC
// stream (format=json: a plain JSON rows body, BigInts as numbers).
//   node bench/lancedb-http.mjs --root DIR --listen 127.0.0.1:PORT
import http from 'node:http';
import * as lancedb from '@lancedb/lancedb';
import { createRequire } from 'node:module';
// LanceDB hands back tables of the CommonJS apache-arrow build: encode with that same module.
const arrow = createRequire(import.meta.url)('apache-arrow');

const a = Object.fromEntries(process.argv.slice(2).reduce((acc, v, i, arr) => (i % 2 ? acc : acc.concat([[v.replace(/^--/, ''), arr[i + 1]]])), []));
const [host, port] = (a.listen ?? '127.0.0.1:8090').split(':');
const db = await lancedb.connect(a.root);
const tables = new Map();
async function table(p) {
  const m = /^([^/]+)\.lance(\/|$)/.exec(p);
  if (!m) throw Object.assign(new Error(`not a table path: ${p}`), { status: 404 });
  let t = tables.get(m[1]);
  if (!t) {
    const tbl = await db.openTable(m[1]);
    t = { tbl, n: await tbl.countRows() };
    tables.set(m[1], t);
  }
  return t;
}
function send(res, status, type, body) {
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': body.length });
  res.end(body);
}
async function rows(res, t, ids, cols, format) {
  for (const id of ids) if (!(id >= 0 && id < t.n)) return send(res, 400, 'application/json', Buffer.from(`{"error":{"code":"out_of_range"}}`));
  const q = t.tbl.takeOffsets(ids);
  const tb = cols && q.select ? await q.select(cols).toArrow() : await q.toArrow();
  if (format === 'json') {
    const body = JSON.stringify({ num_rows: tb.numRows, columns: tb.schema.fields.map((f) => f.name), rows: tb.toArray().map((r) => r.toJSON()) },
      (k, v) => (typeof v === 'bigint' ? Number(v) : ArrayBuffer.isView(v) ? Array.from(v) : v));
    return send(res, 200, 'application/json', Buffer.from(body));
  }
  send(res, 200, 'application/vnd.apache.arrow.stream', Buffer.from(arrow.tableToIPC(tb, 'stream')));
}
const server = http.createServer(async (req, res) => {
  try {
    const u = new URL(req.url, 'http://x');
    const p = decodeURIComponent(u.pathname);
    if (!p.startsWith('/files/')) return send(res, 404, 'application/json', Buffer.from('{"error":{"code":"not_found"}}'));
    const rest = p.slice(7);
    if (rest.endsWith('/rows')) {
      const t = await table(rest.slice(0, -5));
      const format = u.searchParams.get('format') ?? ((req.headers.accept ?? '').includes('arrow') ? 'arrow' : 'json');
      if (req.method === 'POST') {
        const chunks = [];
        for await (const c of req) chunks.push(c);
        const b = JSON.parse(Buffer.concat(chunks).toString());
        return await rows(res, t, b.ids.map(Number), b.columns, format);
      }
      const ids = (u.searchParams.get('ids') ?? '').split(',').map(Number);
      const cols = u.searchParams.get('columns')?.split(',');
      return await rows(res, t, ids, cols, format);
    }
    const t = await table(rest);
    send(res, 200, 'application/json', Buffer.from(JSON.stringify({ path: rest, num_rows: t.n }) + '\n'));
  } catch (e) {
    send(res, e.status ?? 500, 'application/json', Buffer.from(JSON.stringify({ error: { code: 'internal', message: String(e.message) } })));
  }
});
server.keepAliveTimeout = 60000;
server.listen(+port, host, () => console.error(`lancedb-http: listening on ${host}:${server.address().port}`));
process.on('SIGTERM', () => process.exit(0));
