// Turns bench/uring-path.sh's measurements into OUT/uring-path.json and OUT/uring-path.md:
// CPU per request (warm, direct) beside fio's CPU per read, throughput beside fio and nginx
// at equal depth, and issue 13's targets as ratios measured in this run.
// Usage: node bench/uring-path-report.mjs RESULTS.txt OUT_DIR FILE COLUMN DURATION
import fs from 'node:fs';
import path from 'node:path';

const [resultsPath, out, file, col, duration] = process.argv.slice(2);
const lines = fs.readFileSync(resultsPath, 'utf8').trim().split('\n').map((l) => l.split(' '));
const R = { file, column: col, duration_s: Number(duration), warm: {}, direct: {}, fio: {}, nginx: {} };
let reads = null;
const reps = new Map(); // repetition -> its CPU cells: warm, direct, warm1, direct1 (one network thread), fio
const rep = (k) => reps.get(k) ?? reps.set(k, { rep: k }).get(k);
for (const [kind, ...v] of lines) {
  if (kind === 'warm' || kind === 'direct') {
    const [conns, batch, rps, n, cpu] = v.map(Number);
    R[kind][`${batch}x${conns}`] = { conns, batch, requests_per_s: rps, requests: n, cpu_s: cpu, cpu_us_per_request: n ? (cpu / n) * 1e6 : null };
  } else if (kind === 'cpu') { // the CPU cells: 4 connections, batch 1, a daemon of their own
    const [k, mode, workers] = v;
    const [rps, n, cpu] = v.slice(3).map(Number);
    rep(Number(k))[(mode === 'buffered' ? 'warm' : 'direct') + (workers === '1' ? '1' : '')] =
      { requests_per_s: rps, requests: n, cpu_s: cpu, cpu_us_per_request: n ? (cpu / n) * 1e6 : null };
  } else if (kind === 'cpufio') {
    const [k, iops, cpu, lat] = v.map(Number);
    rep(k).fio = { iops, cpu_us_per_read: cpu, mean_latency_us: lat };
  } else if (kind === 'fio') {
    const [depth, iops, cpu, lat] = v.map(Number);
    R.fio[depth] = { depth, iops, cpu_us_per_read: cpu, mean_latency_us: lat };
  } else if (kind === 'nginx') {
    const [conns, rps, lat] = v.map(Number);
    R.nginx[conns] = { conns, requests_per_s: rps, mean_latency_us: lat };
  } else if (kind === 'mix') {
    const [lim, heavy, rps, p50, p99] = v.map(Number);
    (R.mix ??= {})[lim] = { loop_max_ids: lim, heavy_rows_per_s: heavy, light_requests_per_s: rps, light_p50_us: p50, light_p99_us: p99 };
  } else if (kind === 'died') {
    (R.died ??= []).push({ exit_status: Number(v[0]), during: v.slice(1).join(' ') });
  } else if (kind === 'reads') {
    const [r0, r1, t0, t1, handoffs, size] = v;
    reads = { reads: r1 - r0, engine_takes: t1 - t0, handoffs: Number(handoffs), read_size: size };
  }
}
// Each repetition's ratio direct / (warm + 1.5 x fio), with the default network threads and
// with one; the target is judged on the median repetition.
const median = (xs) => { const a = xs.filter((x) => x != null && !Number.isNaN(x)).sort((x, y) => x - y); return a.length ? (a.length % 2 ? a[(a.length - 1) / 2] : (a[a.length / 2 - 1] + a[a.length / 2]) / 2) : null; };
const ratioOf = (d, w, f) => (d?.cpu_us_per_request != null && w?.cpu_us_per_request != null && f ? d.cpu_us_per_request / (w.cpu_us_per_request + 1.5 * f.cpu_us_per_read) : null);
R.cpu_reps = [...reps.values()].sort((a, b) => a.rep - b.rep).map((r) => ({
  ...r, ratio: ratioOf(r.direct, r.warm, r.fio), ratio_one_thread: ratioOf(r.direct1, r.warm1, r.fio) }));
const med = (f) => median(R.cpu_reps.map(f));
R.cpu = { warm_us: med((r) => r.warm?.cpu_us_per_request), direct_us: med((r) => r.direct?.cpu_us_per_request),
  warm_one_thread_us: med((r) => r.warm1?.cpu_us_per_request), direct_one_thread_us: med((r) => r.direct1?.cpu_us_per_request),
  fio_us_per_read: med((r) => r.fio?.cpu_us_per_read), ratio: med((r) => r.ratio), ratio_one_thread: med((r) => r.ratio_one_thread) };
R.reads = reads;
const f0 = (x) => (x == null || Number.isNaN(x) ? '–' : Math.round(x).toLocaleString('en-US'));
const f1 = (x) => (x == null || Number.isNaN(x) ? '–' : x.toFixed(1));
const f2 = (x) => (x == null || Number.isNaN(x) ? '–' : x.toFixed(2));
const targets = [];
const target = (name, value, want, ok, detail) => targets.push({ name, value, want, met: ok, detail });

const nreps = R.cpu_reps.length;
const each = (f) => R.cpu_reps.map((r) => f2(f(r))).join(', ');
if (R.cpu.ratio != null)
  target(`direct CPU per request <= warm + 1.5 x fio CPU per read (median of ${nreps} repetition${nreps > 1 ? 's' : ''})`,
    R.cpu.ratio, 1, R.cpu.ratio <= 1, `direct ÷ (warm + 1.5 × fio) = ${f2(R.cpu.ratio)} (each: ${each((r) => r.ratio)})`);
if (R.cpu.ratio_one_thread != null)
  target('with one network thread (--workers 1): direct CPU per request <= warm + 1.5 x fio CPU per read',
    R.cpu.ratio_one_thread, 1, R.cpu.ratio_one_thread <= 1,
    `${f2(R.cpu.ratio_one_thread)} (each: ${each((r) => r.ratio_one_thread)})`);
const d16 = R.direct['1x16'], fio16 = R.fio[16];
if (d16 && fio16) target('direct single-row GETs at 16 connections >= 0.5 x fio IOPS at depth 16',
  d16.requests_per_s / fio16.iops, 0.5, d16.requests_per_s / fio16.iops >= 0.5,
  `${f0(d16.requests_per_s)} req/s vs ${f0(fio16.iops)} IOPS`);
const d1 = R.direct['1x1'], fio1 = R.fio[1], ng1 = R.nginx[1];
if (d1 && fio1 && ng1 && ng1.requests_per_s) {
  const rtt = 1e6 / ng1.requests_per_s, allow = 1e6 / (fio1.mean_latency_us + rtt);
  target('direct single-row GETs at 1 connection >= 0.8 x (fio latency at depth 1 + nginx round trip)',
    d1.requests_per_s / allow, 0.8, d1.requests_per_s / allow >= 0.8,
    `${f0(d1.requests_per_s)} req/s vs 1 / (${f1(fio1.mean_latency_us)} + ${f1(rtt)} µs) = ${f0(allow)} req/s`);
}
for (const c of [4, 16, 64]) {
  const w = R.warm[`1x${c}`], n = R.nginx[c];
  if (w && n && n.requests_per_s) target(`warm single-row GETs at ${c} connections >= 0.7 x nginx`,
    w.requests_per_s / n.requests_per_s, 0.7, w.requests_per_s / n.requests_per_s >= 0.7,
    `${f0(w.requests_per_s)} vs ${f0(n.requests_per_s)} req/s`);
}
R.targets = targets;

const md = [];
md.push(`\n## The io_uring request path (bench/uring-path.sh: ${file}, column ${col}, ${duration} s per cell, back to back)\n`);
for (const d of R.died ?? [])
  md.push(`**The daemon died (exit status ${d.exit_status}) during ${d.during}: those figures are not valid.**\n`);
md.push('CPU per request is the daemon\'s utime+stime over a run divided by its requests (4 connections, single-row GETs,');
md.push('a daemon started per cell); fio reads the same file O_DIRECT with io_uring at depth 4 and the read size lanced issues' +
  (reads ? ` (${reads.read_size})` : '') + `, right after them. Measured ${nreps} time${nreps > 1 ? 's' : ''}, back to back; medians:\n`);
md.push('| | CPU µs per request / read |\n| --- | --- |');
md.push(`| lanced, io_mode buffered (warm, page cache) | ${f1(R.cpu.warm_us)} |`);
md.push(`| lanced, io_mode direct (loop tasks, O_DIRECT) | ${f1(R.cpu.direct_us)} |`);
md.push(`| lanced --workers 1, buffered (warm) | ${f1(R.cpu.warm_one_thread_us)} |`);
md.push(`| lanced --workers 1, direct | ${f1(R.cpu.direct_one_thread_us)} |`);
md.push(`| fio, io_uring, depth 4 | ${f1(R.cpu.fio_us_per_read)} |\n`);
md.push('| repetition | warm µs | direct µs | fio µs per read | direct ÷ (warm + 1.5 × fio) | the same, --workers 1 |\n| --- | --- | --- | --- | --- | --- |');
for (const r of R.cpu_reps)
  md.push(`| ${r.rep} | ${f1(r.warm?.cpu_us_per_request)} | ${f1(r.direct?.cpu_us_per_request)} | ${f1(r.fio?.cpu_us_per_read)} | ${f2(r.ratio)} | ${f2(r.ratio_one_thread)} |`);
md.push('');
// The same comparison at every depth, from the throughput cells (each measures the daemon's
// CPU too) and fio at that depth: where the 4-connection target's gap comes from. A request
// server pays a sleep and a wake-up per request while few are in flight, which fio at the
// same depth shares among the reads it reaps together; with more in flight both amortize.
const depthRows = [];
for (const c of Object.keys(R.fio).map(Number).sort((a, b) => a - b)) {
  const w = R.warm[`1x${c}`], d = R.direct[`1x${c}`], f = R.fio[c];
  if (!w || !d || !f || w.cpu_us_per_request == null || d.cpu_us_per_request == null) continue;
  const limit = w.cpu_us_per_request + 1.5 * f.cpu_us_per_read;
  depthRows.push({ conns: c, warm: w.cpu_us_per_request, direct: d.cpu_us_per_request, fio: f.cpu_us_per_read, limit, ratio: d.cpu_us_per_request / limit });
}
R.cpu_by_depth = depthRows;
if (depthRows.length) {
  md.push('CPU per request at each depth (the throughput cells below; fio at the same depth):\n');
  md.push('| connections | warm µs | direct µs | fio µs per read | warm + 1.5 × fio | direct ÷ that |\n| --- | --- | --- | --- | --- | --- |');
  for (const r of depthRows) md.push(`| ${r.conns} | ${f1(r.warm)} | ${f1(r.direct)} | ${f1(r.fio)} | ${f1(r.limit)} | ${f2(r.ratio)} |`);
  md.push('');
}
if (reads) md.push(`The first direct CPU cell: ${f0(reads.reads)} device reads for ${f0(reads.engine_takes)} single-row takes; ${reads.handoffs} request(s) of the direct throughput cells handed to a take thread (the search cache is loaded before the cells).\n`);
md.push('| connections | direct batch 1 req/s | fio IOPS at that depth | ratio | direct batch 100 rows/s | warm batch 1 req/s | nginx static req/s | ratio |');
md.push('| --- | --- | --- | --- | --- | --- | --- | --- |');
for (const c of Object.keys(R.nginx).map(Number).concat(Object.values(R.direct).map((x) => x.conns)).filter((v, i, a) => a.indexOf(v) === i).sort((a, b) => a - b)) {
  const d = R.direct[`1x${c}`], b = R.direct[`100x${c}`], w = R.warm[`1x${c}`], f = R.fio[c], n = R.nginx[c];
  if (!d && !w) continue;
  md.push(`| ${c} | ${f0(d?.requests_per_s)} | ${f0(f?.iops)} | ${f2(d && f ? d.requests_per_s / f.iops : null)} | ${f0(b ? b.requests_per_s * 100 : null)} | ${f0(w?.requests_per_s)} | ${f0(n?.requests_per_s)} | ${f2(w && n ? w.requests_per_s / n.requests_per_s : null)} |`);
}
if (R.mix) {
  md.push('\nHeavy decoding beside light requests (direct; batch-1000 GETs on 2 connections and single-row GETs on 4, at once):\n');
  md.push('| where takes of > 100 ids run | batch-1000 rows/s | single-row req/s | single-row p50 µs | p99 µs |\n| --- | --- | --- | --- | --- |');
  for (const m of Object.values(R.mix)) md.push(`| ${m.loop_max_ids ? 'take threads (loop_max_ids 100)' : 'the loop (loop_max_ids 0)'} | ${f0(m.heavy_rows_per_s)} | ${f0(m.light_requests_per_s)} | ${f0(m.light_p50_us)} | ${f0(m.light_p99_us)} |`);
}
md.push('\nTargets (issue 13), each a ratio within this run:\n');
for (const t of targets) md.push(`- ${t.met ? 'met' : '**not met**'}: ${t.name}: ${t.detail}`);
fs.writeFileSync(path.join(out, 'uring-path.json'), JSON.stringify(R, null, 2));
fs.writeFileSync(path.join(out, 'uring-path.md'), md.join('\n') + '\n');
process.stdout.write(md.join('\n') + '\n');
