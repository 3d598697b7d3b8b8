// The benchmark matrix: every system on the same datasets and ids, warm and cold, one
// results.json. Called by bench/run.sh (which builds, generates data and draws the plots).
//
//   node bench/run.mjs --scale small|full --bin DIR --data DIR --out DIR
//
// Every cell records the CPU time other processes used while it ran (machine busy time from
// /proc/stat minus the CPU time of this process tree); a cell where others used more than
// DISTURB_CORES is re-run once and flagged.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import { spawn, spawnSync } from 'node:child_process';

const args = Object.fromEntries(process.argv.slice(2).reduce((acc, v, i, arr) => (i % 2 ? acc : acc.concat([[v.replace(/^--/, ''), arr[i + 1]]])), []));
const SCALE = args.scale ?? 'small';
const BIN = path.resolve(args.bin ?? 'bin');
const DATA = path.resolve(args.data ?? `bench/data/${SCALE}`);
const OUT = path.resolve(args.out);
const HERE = path.dirname(new URL(import.meta.url).pathname);
const S = SCALE === 'full' ? { cell: 5, fio: 5, raw: 3 } : { cell: 1, fio: 1, raw: 1 };
// BENCH_QUICK=1 (make test's smoke run): one cell per system on one dataset — a check that every part of
// the harness runs, in about a minute; its figures are not measurements.
const SMOKE = process.env.BENCH_QUICK === '1';
const BATCHES = SMOKE ? [1] : [1, 10, 100, 1000];
const INFLIGHT = SMOKE ? [1] : [1, 4];
const CONNS = SMOKE ? [4] : [1, 4, 16, 64];
const DISTURB_CORES = +(process.env.BENCH_DISTURB_CORES ?? 0.25);
const NCPU = os.cpus().length;
const HZ = +spawnSync('getconf', ['CLK_TCK']).stdout.toString().trim() || 100;
const T0 = Date.now();
const BUDGET_S = +(process.env.BENCH_BUDGET_S ?? (SCALE === 'full' ? 3300 : 780));

fs.mkdirSync(path.join(OUT, 'logs'), { recursive: true });
const log = (...a) => { const s = `[${((Date.now() - T0) / 1000).toFixed(0).padStart(4)}s] ${a.join(' ')}`; console.error(s); fs.appendFileSync(path.join(OUT, 'run.log'), s + '\n'); };
const manifest = JSON.parse(fs.readFileSync(path.join(DATA, 'manifest.json'), 'utf8'));
const R = { scale: SCALE, started: new Date().toISOString(), machine: machine(), notes: [], datasets: manifest.datasets, cells: [], fio: [], lanced_files: {} };
const save = () => fs.writeFileSync(path.join(OUT, 'results.json'), JSON.stringify(R, null, 1) + '\n');

function machine() {
  const sh = (c) => spawnSync('bash', ['-c', c]).stdout?.toString().trim() ?? '';
  return {
    nproc: NCPU, cpu: os.cpus()[0]?.model, mem_bytes: os.totalmem(), kernel: os.release(),
    disk_df: sh(`df -h ${DATA} | tail -1`), lsblk: sh('lsblk -d -o NAME,SIZE,ROTA,TYPE,MODEL 2>/dev/null'),
    fio: sh('fio --version 2>/dev/null'), nginx: sh('nginx -v 2>&1'), node: process.version,
  };
}

// ---------------------------------------------------------------- CPU accounting
function busyJiffies() {
  const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal: interrupt time is left out (our own I/O
  // completions land there, attributed to no process)
  return f[0] + f[1] + f[2];
}
function ourJiffies() {
  const parent = new Map(), times = new Map();
  for (const p of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const s = fs.readFileSync(`/proc/${p}/stat`, 'utf8');
      const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
      parent.set(+p, +f[1]);
      times.set(+p, +f[11] + +f[12] + +f[13] + +f[14]); // utime stime cutime cstime
    } catch { /* gone */ }
  }
  let sum = 0;
  for (const [pid, t] of times) {
    let q = pid;
    for (let k = 0; k < 64 && q > 1; k++) { if (q === process.pid) { sum += t; break; } q = parent.get(q) ?? 0; }
  }
  return sum;
}
const cpuMark = () => ({ t: performance.now(), busy: busyJiffies(), ours: ourJiffies() });
function cpuDelta(m) {
  const el = (performance.now() - m.t) / 1000, busy = (busyJiffies() - m.busy) / HZ, ours = (ourJiffies() - m.ours) / HZ;
  const others = Math.max(0, busy - ours);
  return { elapsed_s: +el.toFixed(3), busy_cpu_s: +busy.toFixed(2), our_cpu_s: +ours.toFixed(2), others_cpu_s: +others.toFixed(2), others_cores: +(others / el).toFixed(3) };
}

// ---------------------------------------------------------------- processes
const children = new Set();
function run(cmd, argv, { timeout = 600e3, env } = {}) {
  return new Promise((resolve) => {
    const p = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'], env: env ?? process.env });
    children.add(p);
    let out = '', err = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (err += d));
    const to = setTimeout(() => p.kill('SIGKILL'), timeout);
    p.on('close', (code, sig) => { clearTimeout(to); children.delete(p); resolve({ code, sig, out, err }); });
  });
}
function startServer(name, cmd, argv) {
  const logf = fs.openSync(path.join(OUT, 'logs', `${name}.log`), 'a');
  const p = spawn(cmd, argv, { stdio: ['ignore', logf, logf] });
  children.add(p);
  p.on('exit', (code, sig) => { children.delete(p); p.exited = { code, sig }; });
  return p;
}
async function stopServer(p) {
  if (!p || p.exited) return;
  p.kill('SIGTERM');
  for (let i = 0; i < 50 && !p.exited; i++) await sleep(100);
  if (!p.exited) p.kill('SIGKILL');
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
function killAll() { for (const p of children) try { p.kill('SIGKILL'); } catch { /* */ } }
process.on('exit', killAll);
for (const s of ['SIGINT', 'SIGTERM']) process.on(s, () => { killAll(); process.exit(130); });

function freePort() {
  return new Promise((res) => { const s = net.createServer(); s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => res(p)); }); });
}
async function waitHttp(port, p, pathq = '/', ms = 20000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (p?.exited) return false;
    try { const r = await fetch(`http://127.0.0.1:${port}${pathq}`); await r.arrayBuffer(); if (r.status < 500) return true; } catch { /* */ }
    await sleep(100);
  }
  return false;
}
async function httpStatus(port, pathq) {
  try { const r = await fetch(`http://127.0.0.1:${port}${pathq}`); await r.arrayBuffer(); return r.status; } catch { return null; }
}
async function httpText(url) { try { const r = await fetch(url); return await r.text(); } catch { return null; } }

// ---------------------------------------------------------------- page cache
let canDrop = false;
function dropCaches() {
  if (!canDrop) return false;
  spawnSync('sync');
  try { fs.writeFileSync('/proc/sys/vm/drop_caches', '3'); return true; } catch { return false; }
}
function fincore(file) {
  const r = spawnSync('fincore', ['-b', '-n', '-o', 'RES', file]);
  return r.status === 0 ? +r.stdout.toString().trim() : null;
}

// ---------------------------------------------------------------- one measured cell
async function cell(meta, fn) {
  if ((Date.now() - T0) / 1000 > BUDGET_S) {
    if (!R.notes.some((n) => n.startsWith('time budget'))) R.notes.push(`time budget (${BUDGET_S} s, BENCH_BUDGET_S) exhausted: later cells skipped (skipped: true in results.json)`);
    R.cells.push({ ...meta, skipped: 'time budget' });
    return null;
  }
  if (meta.cold) dropCaches();
  let m = cpuMark(), res = await fn(), cpu = cpuDelta(m);
  let rec = { ...meta, ...res, cpu };
  // Re-run once, while the time budget allows (a shared machine can disturb every cell).
  if (cpu.others_cores > DISTURB_CORES && !res.error && (Date.now() - T0) / 1000 > 0.6 * BUDGET_S) rec.disturbed = true;
  else if (cpu.others_cores > DISTURB_CORES && !res.error) {
    log(`  disturbed (others ${cpu.others_cores} cores), re-running once`);
    if (meta.cold) dropCaches();
    m = cpuMark(); const res2 = await fn(); const cpu2 = cpuDelta(m);
    rec = { ...meta, ...res2, cpu: cpu2, rerun: true, first_run: { rows_per_s: res.rows_per_s, others_cores: cpu.others_cores }, disturbed: cpu2.others_cores > DISTURB_CORES };
  }
  R.cells.push(rec);
  save();
  log(`${meta.system}${meta.format ? '/' + meta.format : ''} ${meta.dataset ?? ''} b=${meta.batch ?? '-'} c=${meta.conc ?? '-'}${meta.cold ? ' cold' : ''}${meta.rate ? ' rate=' + meta.rate : ''}: ` +
    (rec.error ? `ERROR ${rec.error}` : rec.iops != null ? `${meta.bs} depth ${meta.depth}: ${Math.round(rec.iops)} IOPS ${(rec.bw_bytes / 1e6).toFixed(0)} MB/s others=${rec.cpu.others_cores}${rec.disturbed ? ' DISTURBED' : ''}` : `${Math.round(rec.rows_per_s || rec.requests_per_s || 0)} ${rec.rows_per_s ? 'rows' : 'req'}/s p99=${rec.latency_us?.p99 ?? '-'}us others=${rec.cpu.others_cores}${rec.disturbed ? ' DISTURBED' : ''}`));
  return rec;
}

// ---------------------------------------------------------------- systems
const dur = (b) => String(b >= 1000 ? Math.max(3, S.cell) : S.cell); // batch-1000 answers are large: a 1 s cell may see none complete
async function load(port, extra) {
  const r = await run(path.join(BIN, 'lanced-load'), ['--url', `http://127.0.0.1:${port}`, '--json', '--quiet', '--seed', '1', '--timeout', '30', ...extra], { timeout: 180e3 });
  try {
    const j = JSON.parse(r.out);
    return { rows_per_s: j.rows_per_s, requests_per_s: j.requests_per_s, latency_us: j.latency_us, body_bytes_per_req: j.requests ? j.body_bytes / j.requests : null,
      mb_per_s: j.mb_per_s, errors: j.errors?.total, unsent: j.unsent, achieved_rate: j.achieved_rate, ...(j.exit_code ? { error: `lanced-load exit ${j.exit_code} (${j.result})` } : {}) };
  } catch { return { error: `lanced-load exit ${r.code}: ${r.err.trim().split('\n').slice(-2).join(' | ')}` }; }
}
async function inproc(ds, batch, inflight, seconds, columns) {
  const r = await run('node', [path.join(HERE, 'lancedb-inproc.mjs'), '--root', DATA, '--table', ds.name, '--batch', String(batch), '--inflight', String(inflight), '--seconds', String(seconds),
    ...(columns ? ['--columns', columns] : [])], { timeout: 300e3 });
  try { return JSON.parse(r.out.trim().split('\n').pop()); } catch { return { error: `exit ${r.code}: ${r.err.trim().split('\n').slice(-2).join(' | ')}` }; }
}
// A file-version copy of a dataset (bench/gen.mjs <name>20): warm batch 1 and 100 for LanceDB
// in-process, lanced over HTTP and liblance in-process, the same cells as its base dataset,
// so the report can put the two versions side by side.
async function versionCompare(ds) {
  const abs = path.join(DATA, ds.file);
  log(`=== ${ds.name} (file version ${ds.file_version}, same data as ${ds.same_data_as})`);
  spawnSync('bash', ['-c', `cat '${abs}' > /dev/null`]);
  for (const b of [1, 100])
    await cell({ system: 'lancedb-inproc', dataset: ds.name, batch: b, conc: 1, format: 'arrow' }, () => inproc(ds, b, 1, S.cell));
  const port = await freePort();
  const p = startServer(`lanced-${ds.name}-warm`, path.join(BIN, 'lanced'), ['--root', DATA, '--listen', `127.0.0.1:${port}`, '--io-mode', 'buffered', '--request-log', 'off', '--log-level', 'warn']);
  if (await waitHttp(port, p, '/healthz')) {
    for (const b of [1, 100]) for (const c of [1, 4])
      await cell({ system: 'lanced', dataset: ds.name, batch: b, conc: c, format: 'arrow', io_mode: 'buffered' },
        () => load(port, ['--path', ds.file, '--batch', String(b), '--connections', String(c), '--duration', dur(b), '--format', 'arrow']));
  } else R.notes.push(`lanced did not start for ${ds.name} (see logs/lanced-${ds.name}-warm.log)`);
  await stopServer(p);
  for (const b of [1, 100])
    await cell({ system: 'lancectl', dataset: ds.name, batch: b, conc: 1, io: 'buffered', cold: false, format: 'arrow' }, () => lancectlBench(ds, b, 1, 'buffered'));
}

async function lancectlBench(ds, batch, threads, io, columns) {
  const r = await run(path.join(BIN, 'lancectl'), ['bench', path.join(DATA, ds.file), '--batch', String(batch), '--threads', String(threads), '--seconds', String(S.raw), '--io', io,
    ...(columns ? ['--columns', columns] : [])], { timeout: 300e3 });
  // The take figures are printed before the raw-read comparison; keep them if only that failed.
  if (r.code !== 0 && !/rows\/s: /.test(r.out)) return { error: `exit ${r.code}: ${r.err.trim()}` };
  const rawError = r.code !== 0 ? `raw-read comparison failed: ${r.err.trim()}` : undefined;
  const g = (re) => { const m = re.exec(r.out); return m ? +m[1] : null; };
  // "raw reads/s: N (4096-byte random reads, D in flight per thread" or, since c8fd90a,
  // "raw reads/s: N (random reads of A or B bytes, mean M, D in flight per thread"
  const raw = /raw reads\/s: (\d+) \((\d+)-byte random reads, (\d+) in flight per thread/.exec(r.out) ??
    /raw reads\/s: (\d+) \(random reads of \d+ or \d+ bytes, mean (\d+), (\d+) in flight per thread/.exec(r.out);
  return { rows_per_s: g(/rows\/s: ([\d.]+)/), reads_per_row: g(/reads\/row: ([\d.]+)/), bytes_per_row: g(/bytes read\/row: ([\d.]+)/),
    search_cache_bytes: g(/search cache: (\d+) bytes/), raw_reads_per_s: raw ? +raw[1] : null, raw_read_bytes: raw ? +raw[2] : null, raw_depth: raw ? +raw[3] : null,
    device_limit_ratio: g(/device-limit ratio: ([\d.]+)/), raw_error: rawError, takes_per_s: g(/takes: (\d+) in/) / (g(/in ([\d.]+) s/) || 1), stdout: r.out.trim() };
}
async function fio(file, bs, depth) {
  const r = await run('fio', ['--name=randread', `--filename=${file}`, '--readonly', '--rw=randread', `--bs=${bs}`, '--direct=1', '--ioengine=io_uring', `--iodepth=${depth}`,
    '--time_based', `--runtime=${S.fio}`, '--ramp_time=0', '--output-format=json'], { timeout: 120e3 });
  let j;
  try { j = JSON.parse(r.out.slice(r.out.indexOf('{'))); } catch { return { error: `fio exit ${r.code}: ${r.err.trim().slice(0, 300)}` }; }
  const rd = j.jobs[0].read, pc = rd.clat_ns?.percentile ?? {};
  return { iops: rd.iops, bw_bytes: rd.bw_bytes, lat_us: { p50: pc['50.000000'] / 1e3, p99: pc['99.000000'] / 1e3 } };
}
async function metrics(port) {
  const t = await httpText(`http://127.0.0.1:${port}/metrics`);
  const m = {};
  for (const line of (t ?? '').split('\n')) {
    const x = /^(lanced_[a-z_]+)(\{[^}]*\})? ([\d.eE+-]+)$/.exec(line);
    if (x && !x[2]) m[x[1]] = +x[3];
    else if (x && /_sum|_count/.test(x[1]) && x[2].includes('"rows"')) m[x[1] + '_rows'] = +x[3];
  }
  return m;
}
const mdiff = (a, b) => Object.fromEntries(Object.keys(b).filter((k) => /_total|_sum|_count/.test(k)).map((k) => [k, b[k] - (a[k] ?? 0)]));

// 5. the HTTP ceiling: a static file of the size of lanced's single-row Arrow body (scalars),
// run right after the first dataset so it is never cut by the time budget.
let staticDone = false;
async function staticCeiling() {
  staticDone = true;
  {
    const one = R.cells.find((x) => x.system === 'lanced' && x.dataset === 'scalars' && x.batch === 1 && x.format === 'arrow' && x.body_bytes_per_req);
    const size = Math.max(64, Math.round(one?.body_bytes_per_req ?? 1024));
    // Served from a directory of its own under the system's temporary directory, readable by
    // all: nginx's workers drop root for `nobody`, who cannot read a checkout under a 0700
    // home or mkdtemp directory (every static cell then answered 403).
    const www = fs.mkdtempSync(path.join(os.tmpdir(), 'lanced-static-'));
    fs.chmodSync(www, 0o755);
    fs.writeFileSync(path.join(www, 'row.bin'), Buffer.alloc(size, 0x61), { mode: 0o644 });
    fs.chmodSync(path.join(www, 'row.bin'), 0o644);
    const port = await freePort();
    let p = null, server = null;
    if (spawnSync('bash', ['-c', 'command -v nginx']).status === 0) {
      const conf = path.join(OUT, 'nginx.conf');
      const tmp = path.join(OUT, 'static-tmp');
      fs.writeFileSync(conf, `daemon off;\nworker_processes ${NCPU};\npid ${OUT}/nginx.pid;\nerror_log ${OUT}/logs/nginx-error.log;\nevents { worker_connections 1024; }\nhttp {\n  access_log off;\n  client_body_temp_path ${tmp}; proxy_temp_path ${tmp}; fastcgi_temp_path ${tmp}; uwsgi_temp_path ${tmp}; scgi_temp_path ${tmp};\n  keepalive_requests 1000000;\n  server { listen 127.0.0.1:${port}; root ${www}; location / { } }\n}\n`);
      fs.mkdirSync(tmp, { recursive: true });
      p = startServer('nginx', 'nginx', ['-c', conf, '-p', OUT]);
      server = 'nginx';
      const status = (await waitHttp(port, p, '/row.bin', 5000)) ? await httpStatus(port, '/row.bin') : null;
      if (status !== 200) {
        R.notes.push(`static ceiling: nginx did not serve /row.bin (status ${status}); python3 http.server used`);
        await stopServer(p);
        p = null;
      }
    }
    if (!p) {
      p = startServer('static-python', 'python3', ['-m', 'http.server', '--bind', '127.0.0.1', '--directory', www, String(port)]);
      server = 'python3 http.server';
      R.notes.push('static ceiling: nginx unavailable, python3 http.server used (a much lower ceiling)');
      await waitHttp(port, p, '/row.bin', 10000);
    }
    for (const c of CONNS)
      await cell({ system: 'static', server, body_bytes: size, conc: c, batch: 1 }, () => load(port, ['--raw-path', '/row.bin', '--connections', String(c), '--duration', String(S.cell)]));
    await stopServer(p);
    fs.rmSync(www, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------- main
async function main() {
  log(`bench: scale ${SCALE}, bin ${BIN}, data ${DATA}, out ${OUT}, ${S.cell}s cells, budget ${BUDGET_S}s`);
  spawnSync('sync');
  try { fs.writeFileSync('/proc/sys/vm/drop_caches', '3'); canDrop = true; } catch (e) {
    R.notes.push(`cold cells: cannot drop the page cache (${e.code}: /proc/sys/vm/drop_caches not writable); cold figures come from O_DIRECT reads only`);
  }
  R.can_drop_caches = canDrop;
  log(`drop_caches: ${canDrop ? 'ok' : 'not permitted'}`);
  const help = spawnSync(path.join(BIN, 'lanced'), ['--help']).stderr.toString() + spawnSync(path.join(BIN, 'lanced'), ['--help']).stdout.toString();
  R.lanced_help_mentions_io_mode = /io-mode|io_mode/.test(help);

  // ---- limits first (quiet machine, no servers running): fio on the largest data file
  const big = [...manifest.datasets].sort((a, b) => b.file_bytes - a.file_bytes)[0];
  const train = manifest.datasets.find((d) => d.name === 'training') ?? big;
  const fioPlan = SMOKE ? [['4k', [8], big]]
    : [['4k', [1, 8, 32, 128], big], ['8k', [1, 8, 32], big], ['16k', [1, 8, 32, 128], train], ['32k', [1, 8, 32, 128], train]];
  if (SMOKE) R.notes.push('smoke run (BENCH_QUICK=1): one cell per system on one dataset, to show the harness works; not a measurement — `make bench` runs the full matrix');
  R.smoke = SMOKE;
  for (const [bs, depths, ds] of fioPlan) for (const d of depths) {
    const rec = await cell({ system: 'fio', dataset: ds.name, bs, depth: d, cold: false }, () => fio(path.join(DATA, ds.file), bs, d));
    if (rec) R.fio.push(rec);
  }

  for (const ds of manifest.datasets) {
    if (SMOKE && ds.name !== 'scalars') continue;
    const file = ds.file, abs = path.join(DATA, file), col = ds.single_column;
    if (ds.same_data_as) { await versionCompare(ds); continue; }
    log(`=== ${ds.name}: ${ds.num_rows} rows, ${(ds.file_bytes / 1e6).toFixed(1)} MB`);
    // warm the page cache with the data file
    spawnSync('cat', [abs], { stdio: 'ignore', maxBuffer: 1 });
    spawnSync('bash', ['-c', `cat '${abs}' > /dev/null`]);

    // 1. LanceDB in-process
    for (const b of BATCHES) for (const f of INFLIGHT)
      await cell({ system: 'lancedb-inproc', dataset: ds.name, batch: b, conc: f, format: 'arrow' }, () => inproc(ds, b, f, S.cell));

    // 2. LanceDB HTTP wrapper, driven by lanced-load
    {
      const port = await freePort();
      const p = startServer(`lancedb-http-${ds.name}`, 'node', [path.join(HERE, 'lancedb-http.mjs'), '--root', DATA, '--listen', `127.0.0.1:${port}`]);
      if (await waitHttp(port, p, `/files/${file}`)) {
        for (const b of BATCHES) for (const c of (b === 1 ? CONNS : [4, 64]))
          await cell({ system: 'lancedb-http', dataset: ds.name, batch: b, conc: c, format: 'arrow' },
            () => load(port, ['--path', file, '--batch', String(b), '--connections', String(c), '--duration', dur(b), '--format', 'arrow']));
      } else R.notes.push(`lancedb-http did not start for ${ds.name} (see logs/lancedb-http-${ds.name}.log)`);
      await stopServer(p);
    }

    // 3. lanced over HTTP, warm (io_mode buffered), Arrow and JSON
    {
      const port = await freePort();
      const p = startServer(`lanced-${ds.name}-warm`, path.join(BIN, 'lanced'), ['--root', DATA, '--listen', `127.0.0.1:${port}`, '--io-mode', 'buffered', '--request-log', 'off', '--log-level', 'warn']);
      if (await waitHttp(port, p, '/healthz')) {
        const m0 = await metrics(port);
        for (const fmt of ['arrow', 'json']) for (const b of BATCHES) for (const c of (fmt === 'arrow' || SMOKE ? CONNS : (b === 1 ? [4, 64] : [4]))) {
          const a = await metrics(port);
          const rec = await cell({ system: 'lanced', dataset: ds.name, batch: b, conc: c, format: fmt, io_mode: 'buffered' },
            () => load(port, ['--path', file, '--batch', String(b), '--connections', String(c), '--duration', dur(b), '--format', fmt]));
          if (rec) rec.server = mdiff(a, await metrics(port));
          if (p.exited) { R.notes.push(`lanced exited during ${ds.name} b=${b} c=${c} ${fmt}: ${JSON.stringify(p.exited)}`); break; }
        }
        // latency vs load: single-row GETs, 64 connections, open loop at fractions of the closed-loop max
        // max load = the closed-loop single-row rate at the same 64 connections
        const max = R.cells.filter((x) => x.system === 'lanced' && x.dataset === ds.name && x.batch === 1 && x.format === 'arrow' && x.conc === 64 && !x.rate && x.rows_per_s).reduce((m, x) => Math.max(m, x.rows_per_s), 0);
        if (ds.name === 'scalars' && max > 0 && !p.exited)
          for (const frac of SMOKE ? [0.5] : [0.1, 0.25, 0.5, 0.75, 0.9]) {
            const rate = Math.max(1, Math.round(max * frac));
            const a = await metrics(port);
            const rec = await cell({ system: 'lanced', dataset: ds.name, batch: 1, conc: 64, format: 'arrow', io_mode: 'buffered', rate, load_fraction: frac, max_rows_per_s: max },
              () => load(port, ['--path', file, '--batch', '1', '--connections', '64', '--duration', String(Math.max(2, S.cell)), '--format', 'arrow', '--rate', String(rate)]));
            if (rec) rec.server = mdiff(a, await metrics(port));
          }
        const desc = await httpText(`http://127.0.0.1:${port}/files/${file}`);
        try {
          const j = JSON.parse(desc).file;
          const pages = j.columns.reduce((n, c) => n + c.pages.length, 0), cached = j.columns.reduce((n, c) => n + c.pages.filter((x) => x.cached).length, 0);
          R.lanced_files[ds.name] = { search_cache_bytes: j.search_cache_bytes ?? null, pages, pages_cached: cached,
            per_column: j.columns.map((c) => ({ field: c.field, pages: c.pages.length, cache_bytes: c.pages.reduce((n, x) => n + (x.cache_bytes ?? 0), 0), layout: c.pages[0]?.encoding?.layout })),
            metrics_total: mdiff(m0, await metrics(port)) };
        } catch { R.lanced_files[ds.name] = { error: 'GET /files failed' }; }
      } else R.notes.push(`lanced did not start for ${ds.name} (see logs/lanced-${ds.name}-warm.log)`);
      await stopServer(p);
    }

    // 3b. lanced cold: io_mode direct, page cache dropped before each cell; single column
    if (canDrop) {
      const port = await freePort();
      const p = startServer(`lanced-${ds.name}-cold`, path.join(BIN, 'lanced'), ['--root', DATA, '--listen', `127.0.0.1:${port}`, '--io-mode', 'direct', '--request-log', 'off', '--log-level', 'warn']);
      if (await waitHttp(port, p, '/healthz')) {
        await httpText(`http://127.0.0.1:${port}/files/${file}`); // search cache loaded before the cold cells
        for (const b of SMOKE ? [1] : [1, 100]) for (const c of SMOKE ? [1] : [1, 4]) {
          const a = await metrics(port);
          const rec = await cell({ system: 'lanced', dataset: ds.name, batch: b, conc: c, format: 'arrow', io_mode: 'direct', cold: true, columns: col },
            () => load(port, ['--path', file, '--batch', String(b), '--connections', String(c), '--duration', String(S.cell), '--format', 'arrow', '--columns', col]));
          if (rec) { rec.server = mdiff(a, await metrics(port)); rec.page_cache_bytes_after = fincore(abs); }
        }
      }
      await stopServer(p);
    }

    // 4. liblance in-process (lancectl bench): warm buffered, cold direct; all columns and the single column
    for (const io of ['buffered', 'direct']) for (const b of BATCHES) for (const t of SMOKE ? [1] : [1, 4])
      await cell({ system: 'lancectl', dataset: ds.name, batch: b, conc: t, io, cold: io === 'direct', format: 'arrow' }, () => lancectlBench(ds, b, t, io));
    for (const b of SMOKE ? [1] : [1, 100]) for (const t of SMOKE ? [1] : [1, 4])
      await cell({ system: 'lancectl', dataset: ds.name, batch: b, conc: t, io: 'direct', cold: true, columns: col, format: 'arrow' }, () => lancectlBench(ds, b, t, 'direct', col));
    if (!staticDone) await staticCeiling();
  }

  if (!staticDone) await staticCeiling();
  R.finished = new Date().toISOString();
  R.elapsed_s = (Date.now() - T0) / 1000;
  save();
  log(`bench: done in ${R.elapsed_s.toFixed(0)} s -> ${OUT}/results.json`);
}
main().catch((e) => { log(`bench: FAILED ${e.stack}`); save(); killAll(); process.exit(1); });
