// results.json -> report.md (absolute figures, ratios against the targets, met/missed with
// the counters that say where the time goes) and plots (gnuplot: SVG and PNG).
//   node bench/report.mjs bench/out/<timestamp>
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';

const OUT = process.argv[2];
const R = JSON.parse(fs.readFileSync(path.join(OUT, 'results.json'), 'utf8'));
const C = R.cells.filter((c) => !c.skipped && !c.error);
const DS = R.datasets.filter((d) => !d.same_data_as).map((d) => d.name);
const VERSIONED = R.datasets.filter((d) => d.same_data_as); // file-version copies (bench/gen.mjs)
const BATCHES = [1, 10, 100, 1000];
const f0 = (x) => (x == null || Number.isNaN(x) ? '–' : Math.round(x).toLocaleString('en-US'));
const f2 = (x) => (x == null || Number.isNaN(x) ? '–' : x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
const pick = (q) => C.filter((c) => Object.entries(q).every(([k, v]) => (v === undefined ? c[k] === undefined : c[k] === v)));
const one = (q) => pick(q)[0];
const best = (q) => pick(q).reduce((m, c) => (!m || (c.rows_per_s ?? 0) > (m.rows_per_s ?? 0) ? c : m), null);
const warm = (extra) => ({ io_mode: 'buffered', cold: undefined, rate: undefined, ...extra });
const flag = (c) => (c?.disturbed ? ' ⚠' : c?.rerun ? ' ↻' : '');
const md = [];
const P = (s = '') => md.push(s);
// Rows with nothing measured past their name are left out, and so is a table left empty.
const blank = (v) => v == null || v === '' || v === '—' || v === '-' || (typeof v === 'string' && /^(NaN|undefined|null)/.test(v));
const table = (head, rows) => {
  rows = rows.filter((r) => r.slice(1).some((v) => !blank(v)));
  if (!rows.length) return;
  P(`| ${head.join(' | ')} |`); P(`|${head.map(() => ' --- ').join('|')}|`); for (const r of rows) P(`| ${r.join(' | ')} |`); P();
};

// ---------------------------------------------------------------- fio interpolation
const fioCells = (R.fio ?? []).filter((c) => !c.error && c.iops);
// fio's figure at a depth the run measured, or between two it measured (log-log between the
// neighbours); null outside what it measured: a target is judged only against a measurement
// (a depth-1 figure taken from the depth-8 cell called depth 8 "depth 1").
function fioAt(bs, depth, key = 'iops') {
  const pts = fioCells.filter((c) => c.bs === bs).sort((a, b) => a.depth - b.depth);
  if (!pts.length || depth < pts[0].depth || depth > pts[pts.length - 1].depth) return null;
  if (depth === pts[0].depth) return pts[0][key];
  for (let i = 1; i < pts.length; i++) if (depth <= pts[i].depth) {
    const a = pts[i - 1], b = pts[i], t = Math.log(depth / a.depth) / Math.log(b.depth / a.depth);
    return Math.exp(Math.log(a[key]) + t * (Math.log(b[key]) - Math.log(a[key])));
  }
  return null;
}
const nearestBs = (bytes) => { const have = [...new Set(fioCells.map((c) => c.bs))]; const kb = (s) => parseInt(s, 10) * 1024; return have.sort((a, b) => Math.abs(kb(a) - bytes) - Math.abs(kb(b) - bytes))[0]; };

// where the time goes, from lanced's counters for one cell
function whereTime(c) {
  if (!c) return '';
  const s = c.server ?? {}, n = s.lanced_request_duration_seconds_count_rows;
  const parts = [];
  if (n) parts.push(`server handler ${f0((s.lanced_request_duration_seconds_sum_rows / n) * 1e6)} µs/request of ${f0(c.latency_us?.mean)} µs mean client latency`);
  if (s.lanced_rows_served_total) parts.push(`${f2(s.lanced_reads_total / s.lanced_rows_served_total)} reads/row, ${f0(s.lanced_bytes_read_total / s.lanced_rows_served_total)} B read/row, ${f0(s.lanced_bytes_decoded_total / s.lanced_rows_served_total)} B decoded/row`);
  if (c.cpu && c.rows_per_s) parts.push(`our CPU ${f2((c.cpu.our_cpu_s / (c.rows_per_s * c.cpu.elapsed_s)) * 1e6)} µs/row (all benchmark processes), others ${f2(c.cpu.others_cores)} cores`);
  if (c.reads_per_row != null) parts.push(`${f2(c.reads_per_row)} reads/row, ${f0(c.bytes_per_row)} B read/row`);
  return parts.join('; ');
}

// ---------------------------------------------------------------- targets
const targets = [];
const T = (name, measured, ratio, goal, op, why, detail) => targets.push({ name, measured, ratio, goal, met: ratio == null ? null : op === '<' ? ratio < goal : ratio >= goal, why, detail, op });

for (const d of DS) {
  const l = best(warm({ system: 'lanced', dataset: d, batch: 1, format: 'arrow' }));
  const b = best({ system: 'lancedb-inproc', dataset: d, batch: 1 });
  if (l && b) T(`warm single-row GET vs LanceDB in-process batch 1 — ${d}`, `${f0(l.rows_per_s)} (c=${l.conc}) vs ${f0(b.rows_per_s)} rows/s (${b.conc} in flight)`, l.rows_per_s / b.rows_per_s, 10, '>=', whereTime(l));
}
for (const c of [64, 16, 4, 1]) {
  const l = one(warm({ system: 'lanced', dataset: 'scalars', batch: 1, format: 'arrow', conc: c })), s = one({ system: 'static', conc: c });
  if (l && s) T(`warm single-row GET vs static ${s.server} ${s.body_bytes}-byte file, ${c} connections (scalars)`, `${f0(l.rows_per_s)} vs ${f0(s.requests_per_s)} req/s`, l.rows_per_s / s.requests_per_s, 0.5, '>=', whereTime(l));
}
for (const d of DS) {
  const l = one(warm({ system: 'lanced', dataset: d, batch: 100, format: 'arrow', conc: 4 })), j = one(warm({ system: 'lanced', dataset: d, batch: 100, format: 'json', conc: 4 }));
  const b = one({ system: 'lancedb-inproc', dataset: d, batch: 100, conc: 4 });
  if (l && b) T(`warm batch 100, 4 in flight, Arrow vs LanceDB in-process 4 in flight — ${d}`, `${f0(l.rows_per_s)} vs ${f0(b.rows_per_s)} rows/s (JSON: ${f0(j?.rows_per_s)} rows/s, ${f2(j ? j.rows_per_s / b.rows_per_s : null)}×)`, l.rows_per_s / b.rows_per_s, 3, '>=', whereTime(l));
}
for (const d of DS) for (const c of pick({ system: 'lancectl', dataset: d, io: 'direct', cold: true }).filter((x) => x.columns && x.batch === 1)) {
  const readsS = c.rows_per_s * c.reads_per_row, depth = c.conc * Math.max(1, Math.ceil(c.reads_per_row * c.batch)), bs = nearestBs(c.bytes_per_row / c.reads_per_row), f = fioAt(bs, depth);
  if (f) T(`cold single-column take (lancectl, O_DIRECT, ${c.columns}, batch ${c.batch}, ${c.conc} thread${c.conc > 1 ? 's' : ''}; ${f0(c.bytes_per_row / c.reads_per_row)} B/read) vs fio ${bs} IOPS at depth ${depth} — ${d}`, `${f0(readsS)} reads/s vs ${f0(f)} IOPS`, readsS / f, 0.9, '>=', whereTime(c));
}
for (const c of pick({ system: 'lanced', cold: true, batch: 1 })) {
  const s = c.server ?? {}, readsS = (s.lanced_reads_total ?? 0) / c.cpu.elapsed_s, rpr = s.lanced_rows_served_total ? s.lanced_reads_total / s.lanced_rows_served_total : 0;
  const rsz = s.lanced_reads_total ? s.lanced_bytes_read_total / s.lanced_reads_total : 4096, bs = nearestBs(rsz);
  const depth = c.conc * Math.max(1, Math.ceil(rpr)), f = fioAt(bs, depth);
  const cached = c.page_cache_bytes_after > 0 ? ` — NOT cold: ${f0(c.page_cache_bytes_after)} bytes of the file were in the page cache after the cell, lanced read through it (io_mode direct not applied)` : '';
  if (f && readsS) T(`cold single-column take over HTTP (lanced io_mode=direct, ${c.columns}, ${c.conc} conn; ${f0(rsz)} B/read) vs fio ${bs} IOPS at depth ${depth} — ${c.dataset}`, `${f0(readsS)} reads/s vs ${f0(f)} IOPS${cached}`, readsS / f, 0.9, '>=', whereTime(c));
}
{
  const cs = pick({ system: 'lancectl', dataset: 'training', io: 'direct', cold: true, columns: undefined }).filter((c) => c.reads_per_row);
  for (const c of cs) {
    const bw = c.rows_per_s * c.bytes_per_row, rsz = c.bytes_per_row / c.reads_per_row, bs = nearestBs(rsz);
    const depth = c.conc * Math.max(1, Math.ceil(c.reads_per_row * c.batch)), f = bs ? fioAt(bs, depth, 'bw_bytes') : null;
    if (f) T(`training rows cold (lancectl, O_DIRECT, batch ${c.batch}, ${c.conc} thread${c.conc > 1 ? 's' : ''}; ${f0(rsz)} B/read) vs fio ${bs} bandwidth at depth ${depth}`, `${f2(bw / 1e6)} vs ${f2(f / 1e6)} MB/s`, bw / f, 0.8, '>=', whereTime(c));
  }
}
{
  const c = pick({ system: 'lanced', dataset: 'scalars', load_fraction: 0.5 })[0];
  if (c) T(`single-row p99 at 64 connections, half of max load (${f0(c.rate)} req/s open loop, achieved ${f0(c.achieved_rate)}; scalars)`, `p99 ${f0(c.latency_us.p99)} µs (p50 ${f0(c.latency_us.p50)} µs)`, c.latency_us.p99 / 1000, 1, '<', whereTime(c));
}

// ---------------------------------------------------------------- PyTorch DataLoader (bench/torch-loader.sh)
const TORCH = fs.existsSync(path.join(OUT, 'torch.json')) ? JSON.parse(fs.readFileSync(path.join(OUT, 'torch.json'), 'utf8')) : null;
const mean = (xs) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);
if (TORCH?.tensor_vs_arrow?.length) {
  const by = (f) => mean(TORCH.tensor_vs_arrow.filter((r) => r.format === f && !r.errors).map((r) => r.rows_per_s));
  const pr = by('proto'), ar = by('arrow');
  if (pr && ar) T('protobuf tensors vs Arrow, 768-d vectors, batch 100, 4 connections (same run, alternated)', `${f0(pr)} vs ${f0(ar)} rows/s`, pr / ar, 0.8, '>=', '');
}

// ---------------------------------------------------------------- report.md
P(`# lanced benchmark — ${R.scale} (${R.started})`);
P();
P(`Machine: ${R.machine.nproc} CPUs (${R.machine.cpu}), ${(R.machine.mem_bytes / 2 ** 30).toFixed(1)} GiB RAM, kernel ${R.machine.kernel}; disk \`${R.machine.disk_df}\`; ${R.machine.fio}; ${R.machine.nginx}; node ${R.machine.node}.`);
P(`Run time ${f0(R.elapsed_s)} s. Cells: ${R.cells.length} (${R.cells.filter((c) => c.skipped).length} skipped, ${R.cells.filter((c) => c.error).length} failed, ${C.filter((c) => c.rerun).length} re-run because other processes used > ${process.env.BENCH_DISTURB_CORES ?? 0.25} cores during them, ${C.filter((c) => c.disturbed).length} still disturbed ⚠).`);
P();
for (const n of R.notes) P(`* ${n}`);
if (!R.can_drop_caches) P('* Cold cells: the page cache could not be dropped; "cold" means O_DIRECT reads only.');
P('* Same ids: the LanceDB in-process runner slices the seeded stream `ids.u32`; lanced and the LanceDB HTTP wrapper are driven by `lanced-load --seed 1` (identical id sequences for both); `lancectl bench` draws its own seeded uniform ids (same distribution, different sequence).');
P();
P('## Targets');
P();
table(['target', 'measured', 'ratio', 'goal', 'result'], targets.map((t) => [t.name, t.measured, f2(t.ratio) + (t.op === '<' ? ' ms' : '×'), (t.op === '<' ? '< ' : '≥ ') + t.goal + (t.op === '<' ? ' ms' : '×'), t.met ? '**met**' : 'missed']));
const missed = targets.filter((t) => t.met === false);
if (missed.length) {
  P('### Where the time goes (missed targets)');
  P();
  for (const t of missed) P(`* ${t.name}: ${t.why || 'no counters for this cell'}.`);
  P();
}

P('## Warm rows/s (page cache warm; Arrow unless marked; c = connections / promises / threads in flight)');
P();
for (const d of DS) {
  P(`### ${d}`);
  P();
  const rows = [];
  const line = (label, q) => rows.push([label, ...BATCHES.map((b) => { const c = one({ ...q, batch: b }); return c ? f0(c.rows_per_s) + flag(c) : '–'; })]);
  for (const c of [1, 4]) line(`LanceDB in-process, ${c} in flight`, { system: 'lancedb-inproc', dataset: d, conc: c });
  for (const c of [1, 4, 16, 64]) line(`LanceDB HTTP wrapper, c=${c}`, { system: 'lancedb-http', dataset: d, conc: c });
  for (const c of [1, 4, 16, 64]) line(`lanced Arrow, c=${c}`, warm({ system: 'lanced', dataset: d, conc: c, format: 'arrow' }));
  for (const c of [4, 64]) line(`lanced JSON, c=${c}`, warm({ system: 'lanced', dataset: d, conc: c, format: 'json' }));
  for (const t of [1, 4]) line(`liblance (lancectl bench, buffered), ${t} thread${t > 1 ? 's' : ''}`, { system: 'lancectl', dataset: d, conc: t, io: 'buffered', columns: undefined });
  table(['system', ...BATCHES.map((b) => `batch ${b}`)], rows);
  const lat = [];
  for (const c of [1, 64]) {
    const l = one(warm({ system: 'lanced', dataset: d, conc: c, format: 'arrow', batch: 1 })), w = one({ system: 'lancedb-http', dataset: d, conc: c, batch: 1 });
    if (l) lat.push([`lanced Arrow batch 1, c=${c}`, f0(l.latency_us.p50), f0(l.latency_us.p99), f0(l.latency_us.p999)]);
    if (w) lat.push([`LanceDB HTTP batch 1, c=${c}`, f0(w.latency_us.p50), f0(w.latency_us.p99), f0(w.latency_us.p999)]);
  }
  const ip = one({ system: 'lancedb-inproc', dataset: d, conc: 1, batch: 1 });
  if (ip) lat.push(['LanceDB in-process batch 1, 1 in flight', f0(ip.latency_us.p50), f0(ip.latency_us.p99), '–']);
  if (lat.length) table(['closed-loop latency', 'p50 µs', 'p99 µs', 'p99.9 µs'], lat);
}

P('## Ratios (warm)');
P();
{
  const rows = [];
  for (const d of DS) for (const b of BATCHES) {
    const ip = one({ system: 'lancedb-inproc', dataset: d, batch: b, conc: 4 }), wr = one({ system: 'lancedb-http', dataset: d, batch: b, conc: 4 });
    const la = one(warm({ system: 'lanced', dataset: d, batch: b, conc: 4, format: 'arrow' })), lj = one(warm({ system: 'lanced', dataset: d, batch: b, conc: 4, format: 'json' }));
    const lc = one({ system: 'lancectl', dataset: d, batch: b, conc: 4, io: 'buffered', columns: undefined });
    const r = (a, z) => (a && z ? f2(a.rows_per_s / z.rows_per_s) + '×' : '–');
    rows.push([d, b, r(la, ip), r(lj, ip), r(la, wr), r(lc, ip), r(la, lc)]);
  }
  table(['dataset', 'batch', 'lanced Arrow / LanceDB in-proc', 'lanced JSON / LanceDB in-proc', 'lanced Arrow / LanceDB HTTP', 'liblance / LanceDB in-proc', 'lanced Arrow / liblance'], rows);
  P('All at 4 requests / promises / threads in flight.');
  P();
}

if (VERSIONED.length) {
  P('## File version 2.0 beside 2.1 (same data, warm)');
  P();
  P('Each 2.0 dataset holds the same rows as its 2.1 base (same seed, same schema). Goal: 2.0 within 1.5× of 2.1 (ratio ≥ 0.67).');
  P();
  const rows = [];
  const r = (a, z) => (a && z ? f2(a.rows_per_s / z.rows_per_s) : '–');
  for (const v of VERSIONED) for (const b of [1, 100]) {
    const q = [
      ['LanceDB in-process, 1 in flight', { system: 'lancedb-inproc', conc: 1, batch: b }],
      ['lanced Arrow, c=1', warm({ system: 'lanced', conc: 1, format: 'arrow', batch: b })],
      ['lanced Arrow, c=4', warm({ system: 'lanced', conc: 4, format: 'arrow', batch: b })],
      ['liblance (lancectl bench, buffered), 1 thread', { system: 'lancectl', conc: 1, io: 'buffered', columns: undefined, batch: b }],
    ];
    for (const [label, qq] of q) {
      const a = one({ ...qq, dataset: v.name }), z = one({ ...qq, dataset: v.same_data_as });
      rows.push([`${v.same_data_as}`, b, label, a ? f0(a.rows_per_s) + flag(a) : '–', z ? f0(z.rows_per_s) + flag(z) : '–', r(a, z)]);
    }
    const l20 = one(warm({ system: 'lanced', conc: 1, format: 'arrow', batch: b, dataset: v.name }));
    const ip20 = one({ system: 'lancedb-inproc', conc: 1, batch: b, dataset: v.name });
    if (l20 && ip20) rows.push([v.same_data_as, b, 'lanced Arrow c=1 / LanceDB in-process (both 2.0)', '', '', r(l20, ip20) + '×']);
  }
  table(['data', 'batch', 'system', '2.0 rows/s', '2.1 rows/s', '2.0 / 2.1'], rows);
}

P('## Cold (O_DIRECT; page cache dropped before each cell)');
P();
{
  const rows = [];
  for (const c of pick({ system: 'lancectl', io: 'direct' })) rows.push([c.dataset, c.columns ?? 'all', c.batch, c.conc, f0(c.rows_per_s) + flag(c), f2(c.reads_per_row), f0(c.bytes_per_row), f0(c.rows_per_s * c.reads_per_row), `${f0(c.raw_reads_per_s)} (${f0(c.raw_read_bytes)} B, depth ${c.raw_depth})`, f2(c.device_limit_ratio)]);
  P('liblance in-process (`lancectl bench --io direct`):');
  for (const c of pick({ system: 'lancectl' }).filter((x) => x.raw_error)) P(`* ${c.dataset} batch ${c.batch}, ${c.conc} threads, ${c.io}: take figures kept, ${c.raw_error}`);
  P();
  table(['dataset', 'columns', 'batch', 'threads', 'rows/s', 'reads/row', 'bytes/row', 'reads/s', 'raw reads/s (same size, depth)', 'device-limit ratio'], rows);
  const h = pick({ system: 'lanced', cold: true });
  if (h.length) {
    P('lanced over HTTP (`--io-mode direct`, Arrow, single column):');
    P();
    table(['dataset', 'column', 'batch', 'conns', 'rows/s', 'p99 µs', 'reads/row (server)', 'page cache after cell'], h.map((c) => [c.dataset, c.columns, c.batch, c.conc, f0(c.rows_per_s) + flag(c), f0(c.latency_us?.p99),
      f2(c.server?.lanced_rows_served_total ? c.server.lanced_reads_total / c.server.lanced_rows_served_total : null), c.page_cache_bytes_after == null ? '?' : `${f0(c.page_cache_bytes_after)} B`]));
  }
  P('fio (random reads, O_DIRECT, io_uring, on the largest data file / the training file):');
  P();
  table(['file', 'block', 'depth', 'IOPS', 'MB/s', 'p50 µs', 'p99 µs'], fioCells.map((c) => [c.dataset, c.bs, c.depth, f0(c.iops) + flag(c), f2(c.bw_bytes / 1e6), f0(c.lat_us?.p50), f0(c.lat_us?.p99)]));
}

P('## Latency vs load (lanced, scalars, batch 1, 64 connections, open loop)');
P();
table(['load', 'target req/s', 'achieved', 'p50 µs', 'p90 µs', 'p99 µs', 'p99.9 µs', 'unsent'], pick({ system: 'lanced', dataset: 'scalars' }).filter((c) => c.rate).map((c) =>
  [`${Math.round(c.load_fraction * 100)} %`, f0(c.rate), f0(c.achieved_rate), f0(c.latency_us.p50), f0(c.latency_us.p90), f0(c.latency_us.p99), f0(c.latency_us.p999), f0(c.unsent)]));

P('## HTTP ceiling (static file, same connections)');
P();
table(['server', 'body bytes', 'connections', 'req/s', 'p99 µs'], pick({ system: 'static' }).map((c) => [c.server, c.body_bytes, c.conc, f0(c.requests_per_s) + flag(c), f0(c.latency_us.p99)]));

P('## Search cache, reads and bytes per row');
P();
{
  const rows = DS.map((d) => {
    const lf = R.lanced_files?.[d] ?? {}, dsm = R.datasets.find((x) => x.name === d);
    const lc = one({ system: 'lancectl', dataset: d, batch: 100, conc: 1, io: 'direct', columns: undefined });
    const lcs = one({ system: 'lancectl', dataset: d, batch: 100, conc: 1, io: 'direct', columns: dsm.single_column });
    const lw = one(warm({ system: 'lanced', dataset: d, batch: 100, conc: 4, format: 'arrow' }));
    const s = lw?.server ?? {};
    return [d, f0(dsm.num_rows), f2(dsm.file_bytes / 1e6), f0(lc?.search_cache_bytes), lf.search_cache_bytes == null ? 'not reported' : f0(lf.search_cache_bytes),
      lf.pages ? `${lf.pages} (${lf.pages_cached} cached)` : '–', lc?.search_cache_bytes && lf.pages ? f0(lc.search_cache_bytes / lf.pages) : '–',
      f2(lc?.reads_per_row), f0(lc?.bytes_per_row), f2(lcs?.reads_per_row), f0(lcs?.bytes_per_row),
      s.lanced_rows_served_total ? f2(s.lanced_reads_total / s.lanced_rows_served_total) : '–', s.lanced_rows_served_total ? f0(s.lanced_bytes_read_total / s.lanced_rows_served_total) : '–'];
  });
  table(['dataset', 'rows', 'file MB', 'search cache B (lancectl)', 'search_cache_bytes (lanced GET /files)', 'pages', 'cache B/page', 'reads/row all cols (b=100)', 'B read/row', 'reads/row single col', 'B read/row single col', 'lanced reads/row (warm b=100)', 'lanced B read/row'], rows);
  P('Per chunk: neither `lancectl bench` nor `GET /files` reports chunk counts yet, so the cache is given per file and per page.');
  P();
}
const dist = R.cells.filter((c) => c.rerun);
if (dist.length) {
  P('## Disturbed cells');
  P();
  table(['cell', 'others (1st run), cores', 'rows/s 1st run', 'others (re-run), cores', 'rows/s re-run', 'still disturbed'], dist.map((c) =>
    [`${c.system}${c.format ? '/' + c.format : ''} ${c.dataset ?? ''} b=${c.batch ?? '-'} c=${c.conc ?? c.depth ?? '-'}${c.bs ? ' ' + c.bs : ''}${c.cold ? ' cold' : ''}`, f2(c.first_run.others_cores), f0(c.first_run.rows_per_s), f2(c.cpu.others_cores), f0(c.rows_per_s ?? c.iops), c.disturbed ? '⚠ yes' : 'no']));
}
const errs = R.cells.filter((c) => c.error);
if (errs.length) {
  P('## Failed cells');
  P();
  for (const c of errs) P(`* ${c.system} ${c.dataset ?? ''} b=${c.batch} c=${c.conc}${c.format ? ' ' + c.format : ''}: ${c.error}`);
  P();
}
if (TORCH?.loader?.length) {
  P('## PyTorch DataLoader (num_workers=2, batch_size=256)');
  P();
  P('`lanced.torch.LancedDataset` (`batches()`: Arrow answers read into numpy, 4 requests in flight per worker) against the same loop fed by JSON rows (`bench/torch_loader.py`), beside LanceDB in-process rows/s (batch 100, 4 in flight, no DataLoader) of the same dataset.');
  P();
  const rows = [...new Set(TORCH.loader.map((r) => r.dataset))].map((d) => {
    const p = TORCH.loader.find((r) => r.dataset === d && r.feed === 'arrow'), j = TORCH.loader.find((r) => r.dataset === d && r.feed === 'json');
    const ip = one({ system: 'lancedb-inproc', dataset: d, batch: 100, conc: 4 });
    return [d, p?.columns ?? '', f0(p?.samples_per_s), f0(j?.samples_per_s), f2(p && j ? p.samples_per_s / j.samples_per_s : null) + '×', f0(ip?.rows_per_s)];
  });
  table(['dataset', 'columns', 'Arrow samples/s', 'JSON samples/s', 'Arrow / JSON', 'LanceDB in-process rows/s'], rows);
}
P('## Plots');
P();
for (const d of DS) P(`![rows/s vs batch, ${d}](rows_vs_batch_${d}.svg)`);
P('![latency vs load](latency_vs_load.svg)');
P('![cold IOPS vs fio](cold_vs_fio.svg)');
P();
fs.writeFileSync(path.join(OUT, 'report.md'), md.join('\n') + '\n');
fs.writeFileSync(path.join(OUT, 'targets.json'), JSON.stringify(targets, null, 1) + '\n');

// ---------------------------------------------------------------- plots
const pdir = path.join(OUT, 'plotdata');
fs.mkdirSync(pdir, { recursive: true });
const series = [
  ['LanceDB in-process (4)', { system: 'lancedb-inproc', conc: 4 }], ['LanceDB HTTP (c=4)', { system: 'lancedb-http', conc: 4 }],
  ['lanced Arrow (c=4)', warm({ system: 'lanced', conc: 4, format: 'arrow' })], ['lanced Arrow (c=64)', warm({ system: 'lanced', conc: 64, format: 'arrow' })],
  ['lanced JSON (c=4)', warm({ system: 'lanced', conc: 4, format: 'json' })], ['liblance buffered (4 thr)', { system: 'lancectl', conc: 4, io: 'buffered', columns: undefined }],
  ['liblance direct (4 thr)', { system: 'lancectl', conc: 4, io: 'direct', columns: undefined }],
];
const gp = [];
const term = (name, kind) => (kind === 'svg' ? `set terminal svg size 900,560 dynamic font "sans,11"\nset output '${name}.svg'` : `set terminal pngcairo size 900,560 font "sans,10"\nset output '${name}.png'`);
const plotBoth = (name, body) => { for (const k of ['svg', 'png']) gp.push(`${term(name, k)}\nset termoption noenhanced\n${body}\n`); };
for (const d of DS) {
  const files = [];
  series.forEach(([label, q], i) => {
    const pts = BATCHES.map((b) => one({ ...q, dataset: d, batch: b })).filter(Boolean);
    if (!pts.length) return;
    const f = `plotdata/rows_${d}_${i}.dat`;
    fs.writeFileSync(path.join(OUT, f), pts.map((c) => `${c.batch} ${c.rows_per_s}`).join('\n') + '\n');
    files.push(`'${f}' using 1:2 with linespoints lw 2 title '${label}'`);
  });
  if (files.length) plotBoth(`rows_vs_batch_${d}`, `set title 'rows/s vs batch size — ${d} (${R.scale}, warm unless marked)'\nset logscale xy\nset xlabel 'batch size (rows per request)'\nset ylabel 'rows/s'\nset key left top\nset grid\nplot ${files.join(', \\\n  ')}\nunset logscale`);
}
{
  const pts = pick({ system: 'lanced', dataset: 'scalars' }).filter((c) => c.rate).sort((a, b) => a.rate - b.rate);
  if (pts.length) {
    fs.writeFileSync(path.join(pdir, 'latency.dat'), pts.map((c) => `${c.achieved_rate} ${c.latency_us.p50} ${c.latency_us.p90} ${c.latency_us.p99} ${c.latency_us.p999}`).join('\n') + '\n');
    plotBoth('latency_vs_load', `set title 'lanced single-row latency vs load (scalars, 64 connections, open loop)'\nset logscale y\nset xlabel 'achieved requests/s'\nset ylabel 'latency (µs)'\nset key left top\nset grid\nplot 'plotdata/latency.dat' using 1:2 w lp lw 2 t 'p50', '' using 1:3 w lp lw 2 t 'p90', '' using 1:4 w lp lw 2 t 'p99', '' using 1:5 w lp lw 2 t 'p99.9', 1000 w l dt 2 t '1 ms'\nunset logscale`);
  }
}
{
  const lines = [];
  for (const bs of ['4k', '8k', '16k', '32k']) {
    const pts = fioCells.filter((c) => c.bs === bs).sort((a, b) => a.depth - b.depth);
    if (!pts.length) continue;
    fs.writeFileSync(path.join(pdir, `fio_${bs}.dat`), pts.map((c) => `${c.depth} ${c.iops}`).join('\n') + '\n');
    lines.push(`'plotdata/fio_${bs}.dat' using 1:2 with linespoints lw 2 title 'fio ${bs} randread'`);
  }
  const lc = pick({ system: 'lancectl', io: 'direct' }).filter((c) => c.reads_per_row);
  fs.writeFileSync(path.join(pdir, 'cold_lancectl.dat'), lc.map((c) => `${c.conc * Math.max(1, Math.ceil(c.reads_per_row * c.batch))} ${c.rows_per_s * c.reads_per_row}`).join('\n') + '\n');
  if (lc.length) lines.push(`'plotdata/cold_lancectl.dat' using 1:2 with points pt 7 ps 1.2 title 'liblance takes, O_DIRECT (reads/s)'`);
  const lh = pick({ system: 'lanced', cold: true }).filter((c) => c.server?.lanced_reads_total);
  fs.writeFileSync(path.join(pdir, 'cold_lanced.dat'), lh.map((c) => `${c.conc * Math.max(1, Math.ceil((c.server.lanced_reads_total / c.server.lanced_rows_served_total) * c.batch))} ${c.server.lanced_reads_total / c.cpu.elapsed_s}`).join('\n') + '\n');
  if (lh.length) lines.push(`'plotdata/cold_lanced.dat' using 1:2 with points pt 5 ps 1.2 title 'lanced HTTP, io_mode=direct (reads/s)'`);
  if (lines.length) plotBoth('cold_vs_fio', `set title 'cold random reads vs the fio curve (${R.scale})'\nset logscale xy\nset xlabel 'reads in flight'\nset ylabel 'reads/s (IOPS)'\nset key left top\nset grid\nplot ${lines.join(', \\\n  ')}\nunset logscale`);
}
fs.writeFileSync(path.join(OUT, 'plots.gp'), gp.join('\n'));
const g = spawnSync('gnuplot', ['plots.gp'], { cwd: OUT });
if (g.error || g.status !== 0) console.error(`report: gnuplot failed (${g.error?.code ?? g.stderr?.toString().trim()}); plots.gp and plotdata/ are kept`);
console.error(R.smoke ? `report: ${path.join(OUT, 'report.md')} (smoke run: the harness works; figures are not measurements — \`make bench\` for those)`
  : `report: ${path.join(OUT, 'report.md')} (${targets.filter((t) => t.met).length}/${targets.length} targets met)`);
