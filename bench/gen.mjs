// Benchmark datasets, written with the real Lance writer (@lancedb/lancedb), file version 2.1,
// and the same scalars/strings/lists data again in file version 2.0 (<name>20) to compare.
//
//   node bench/gen.mjs --scale small|full --out bench/data/<scale>
//
// Seeded (mulberry32), generated once: a dataset whose manifest entry exists is reused.
// Writes OUT/<name>.lance (a LanceDB table, compacted to one fragment so that the single data
// file's row ids equal LanceDB's offsets), OUT/ids.u32 (a seeded stream of uniform draws the
// in-process LanceDB runner slices into batches) and OUT/manifest.json:
//   {"scale":..,"datasets":[{"name","table","file" (data file, relative to OUT),"num_rows",
//     "file_bytes","columns":[..],"single_column":..}]}
import fs from 'node:fs';
import path from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import * as arrow from 'apache-arrow';

const args = process.argv.slice(2);
let scale = 'small', out = null, only = null, legacy = false;
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--scale') scale = args[++i];
  else if (args[i] === '--out') out = args[++i];
  else if (args[i] === '--only') only = args[++i].split(',');
  else if (args[i] === '--legacy') legacy = true;
  else throw new Error(`unknown argument ${args[i]}`);
}
if (!['small', 'full'].includes(scale)) throw new Error(`--scale small|full, not ${scale}`);
out ??= `bench/data/${scale}`;
fs.mkdirSync(out, { recursive: true });

const ROWS = scale === 'full' ? { scalars: 1_000_000, strings: 1_000_000, vectors: 1_000_000, lists: 1_000_000, training: 200_000 }
  : { scalars: 20_000, strings: 20_000, vectors: 20_000, lists: 20_000, training: 5_000 };
// Rows per Arrow chunk handed to the writer (bounded memory; one IPC buffer per chunk).
const CHUNK = { scalars: 250_000, strings: 250_000, vectors: 50_000, lists: 250_000, training: 5_000 };
if (process.env.BENCH_GEN_CHUNK) for (const k of Object.keys(CHUNK)) CHUNK[k] = +process.env.BENCH_GEN_CHUNK; // testing the compaction path
const DIM = 768;

function mulberry32(a) {
  return function () {
    a |= 0; a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const { makeData, Field, Schema, Struct, RecordBatch } = arrow;
const enc = new TextEncoder();
const WORDS = 'alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu'.split(' ');

function int64(v) { return makeData({ type: new arrow.Int64(), length: v.length, data: v }); }
function int32(v) { return makeData({ type: new arrow.Int32(), length: v.length, data: v }); }
function float32(v) { return makeData({ type: new arrow.Float32(), length: v.length, data: v }); }
function varlen(type, parts) {
  const offs = new Int32Array(parts.length + 1);
  let n = 0;
  parts.forEach((p, i) => { n += p.length; offs[i + 1] = n; });
  const data = new Uint8Array(n);
  parts.forEach((p, i) => data.set(p, offs[i]));
  return makeData({ type, length: parts.length, valueOffsets: offs, data });
}
function text(rng, lo, hi) {
  const len = lo + Math.floor(rng() * (hi - lo + 1));
  let s = '';
  while (s.length < len) s += (s ? ' ' : '') + WORDS[Math.floor(rng() * WORDS.length)];
  return enc.encode(s.slice(0, len));
}
function vectors(rng, n) {
  const v = new Float32Array(n * DIM);
  for (let i = 0; i < v.length; i++) v[i] = rng() * 2 - 1;
  const child = new Field('item', new arrow.Float32(), true);
  const type = new arrow.FixedSizeList(DIM, child);
  return makeData({ type, length: n, child: float32(v) });
}

// Column builders: (rng, start, n) -> [Field, Data][]
const SPECS = {
  scalars: {
    single: 'i64',
    cols: (rng, start, n) => {
      const a = new BigInt64Array(n), f = new Float32Array(n), c = new Int32Array(n);
      for (let i = 0; i < n; i++) {
        a[i] = BigInt(start + i) * 1000003n + BigInt(Math.floor(rng() * 1000));
        f[i] = rng() * 1000;
        c[i] = Math.floor(rng() * 16);
      }
      return [[new Field('i64', new arrow.Int64(), false), int64(a)], [new Field('f32', new arrow.Float32(), false), float32(f)],
        [new Field('i32c', new arrow.Int32(), false), int32(c)]];
    },
  },
  strings: {
    single: 's',
    cols: (rng, start, n) => [[new Field('s', new arrow.Utf8(), false), varlen(new arrow.Utf8(), Array.from({ length: n }, () => text(rng, 40, 120)))]],
  },
  vectors: {
    single: 'v',
    cols: (rng, start, n) => [[new Field('v', new arrow.FixedSizeList(DIM, new Field('item', new arrow.Float32(), true)), false), vectors(rng, n)]],
  },
  lists: {
    single: 'l',
    cols: (rng, start, n) => {
      const offs = new Int32Array(n + 1);
      for (let i = 0; i < n; i++) offs[i + 1] = offs[i] + Math.floor(rng() * 21);
      const vals = new Int32Array(offs[n]);
      for (let i = 0; i < vals.length; i++) vals[i] = Math.floor(rng() * 2 ** 31) - 2 ** 30;
      const child = new Field('item', new arrow.Int32(), true);
      const type = new arrow.List(child);
      return [[new Field('l', type, false), makeData({ type, length: n, valueOffsets: offs, child: int32(vals) })]];
    },
  },
  // What a training loop samples (issue 34): id, label, caption, a 768-d embedding, a token
  // list and an 8-32 KiB image. rev 2 added id and tokens (a rev 1 table is regenerated).
  training: {
    single: 'label',
    rev: 2,
    cols: (rng, start, n) => {
      const id = new BigInt64Array(n), label = new BigInt64Array(n);
      for (let i = 0; i < n; i++) { id[i] = BigInt(start + i); label[i] = BigInt(Math.floor(rng() * 1000)); }
      const toffs = new Int32Array(n + 1);
      for (let i = 0; i < n; i++) toffs[i + 1] = toffs[i] + 16 + Math.floor(rng() * 113);
      const toks = new Int32Array(toffs[n]);
      for (let i = 0; i < toks.length; i++) toks[i] = Math.floor(rng() * 50_000);
      const tokType = new arrow.List(new Field('item', new arrow.Int32(), true));
      const caps = Array.from({ length: n }, () => text(rng, 40, 200));
      const imgs = Array.from({ length: n }, () => {
        const len = 8192 + Math.floor(rng() * (32768 - 8192 + 1));
        const b = new Uint8Array(len);
        // incompressible bytes, like an encoded image
        for (let j = 0; j < len; j += 4) { const x = (rng() * 4294967296) >>> 0; b[j] = x; b[j + 1] = x >>> 8; b[j + 2] = x >>> 16; b[j + 3] = x >>> 24; }
        return b;
      });
      return [[new Field('id', new arrow.Int64(), false), int64(id)], [new Field('label', new arrow.Int64(), false), int64(label)],
        [new Field('caption', new arrow.Utf8(), false), varlen(new arrow.Utf8(), caps)],
        [new Field('embedding', new arrow.FixedSizeList(DIM, new Field('item', new arrow.Float32(), true)), false), vectors(rng, n)],
        [new Field('tokens', tokType, false), makeData({ type: tokType, length: n, valueOffsets: toffs, child: int32(toks) })],
        [new Field('image', new arrow.Binary(), false), varlen(new arrow.Binary(), imgs)]];
    },
  },
};

function chunkTable(spec, rng, start, n) {
  const cols = spec.cols(rng, start, n);
  const schema = new Schema(cols.map(([f]) => f));
  const data = makeData({ type: new Struct(schema.fields), length: n, children: cols.map(([, d]) => d) });
  return new arrow.Table(schema, [new RecordBatch(schema, data)]);
}

// File version 2.0 copies: same schema, same seed, same rows as their 2.1 base.
for (const base of ['scalars', 'strings', 'lists']) {
  SPECS[`${base}20`] = { ...SPECS[base], version: '2.0', base };
  ROWS[`${base}20`] = ROWS[base];
  CHUNK[`${base}20`] = CHUNK[base];
}
// --legacy (bench/legacy.sh): only legacy-file copies (<name>01) of the same data, in their
// own manifest-legacy.json (Lance 10 takes no offsets from legacy files, so the in-process
// LanceDB runner could not read them). Written in one createTable: compacting a legacy table
// needs Lance's filtered read, which legacy files lack.
if (legacy) {
  for (const name of Object.keys(SPECS)) if (!name.endsWith('20')) delete SPECS[name];
  for (const name of Object.keys(SPECS)) {
    const spec = SPECS[name], base = spec.base;
    delete SPECS[name];
    SPECS[`${base}01`] = { ...spec, version: 'legacy', base };
    ROWS[`${base}01`] = ROWS[base];
    CHUNK[`${base}01`] = ROWS[base];
  }
}

const manPath = path.join(out, legacy ? 'manifest-legacy.json' : 'manifest.json');
const manifest = fs.existsSync(manPath) ? JSON.parse(fs.readFileSync(manPath, 'utf8')) : { scale, datasets: [] };
const storage = { new_table_data_storage_version: '2.1' };
const db = await lancedb.connect(out, { storageOptions: storage });

for (const [name, spec] of Object.entries(SPECS)) {
  if (only && !only.includes(name)) continue;
  const have = manifest.datasets.find((d) => d.name === name);
  if (have && have.num_rows === ROWS[name] && (have.rev ?? 1) === (spec.rev ?? 1) && fs.existsSync(path.join(out, have.file))) { console.error(`gen: ${name} present, reused`); continue; }
  const t0 = Date.now();
  const n = ROWS[name];
  const rng = mulberry32(0xbe7c4 ^ n ^ (spec.base ?? name).length * 7919);
  const storage = { new_table_data_storage_version: spec.version ?? '2.1' };
  fs.rmSync(path.join(out, `${name}.lance`), { recursive: true, force: true });
  let tbl = null;
  for (let start = 0; start < n; start += CHUNK[name]) {
    const m = Math.min(CHUNK[name], n - start);
    const t = chunkTable(spec, rng, start, m);
    if (!tbl) {
      // The native createTable with the IPC file (as Connection.createTable does after its checks).
      await db.inner.createTable(name, Buffer.from(arrow.tableToIPC(t, 'file')), 'overwrite', [], storage);
      tbl = await db.openTable(name);
    } else await tbl.add(t);
  }
  // One fragment, one data file: lanced's row ids are then LanceDB's offsets.
  let files = fs.readdirSync(path.join(out, `${name}.lance`, 'data')).filter((f) => f.endsWith('.lance'));
  if (files.length > 1) {
    await tbl.optimize({ cleanupOlderThan: new Date(Date.now() + 86400e3), deleteUnverified: true });
    const frags = await tbl.stats();
    console.error(`gen: ${name} compacted: ${JSON.stringify(frags.fragmentStats ?? {})}`);
  }
  // The data file(s) the latest version uses: after cleanup only those remain.
  files = fs.readdirSync(path.join(out, `${name}.lance`, 'data')).filter((f) => f.endsWith('.lance'));
  const sized = files.map((f) => ({ f, size: fs.statSync(path.join(out, `${name}.lance`, 'data', f)).size })).sort((a, b) => b.size - a.size);
  const rows = await tbl.countRows();
  const entry = {
    name, table: `${name}.lance`, file: `${name}.lance/data/${sized[0].f}`, data_files: sized.length, num_rows: rows,
    file_bytes: sized[0].size, columns: chunkTable(spec, mulberry32(1), 0, 1).schema.fields.map((f) => f.name),
    single_column: spec.single, seconds_to_write: (Date.now() - t0) / 1000,
    file_version: spec.version ?? '2.1', ...(spec.rev ? { rev: spec.rev } : {}), ...(spec.base ? { same_data_as: spec.base } : {}),
  };
  if (sized.length > 1) console.error(`gen: WARNING ${name} has ${sized.length} data files; benchmarks use the largest`);
  manifest.datasets = manifest.datasets.filter((d) => d.name !== name).concat([entry]);
  fs.writeFileSync(manPath, JSON.stringify(manifest, null, 1) + '\n');
  console.error(`gen: ${name}: ${rows} rows, ${(sized[0].size / 1e6).toFixed(1)} MB in ${entry.seconds_to_write.toFixed(1)} s`);
}

// A seeded stream of uniform draws in [0, 2^32); runners take id = draw % num_rows, consecutive
// draws per batch, so every system at a given batch size asks for the same batches.
const idsPath = path.join(out, 'ids.u32');
if (!fs.existsSync(idsPath)) {
  const rng = mulberry32(0x1d5);
  const a = new Uint32Array(1 << 21);
  for (let i = 0; i < a.length; i++) a[i] = Math.floor(rng() * 4294967296);
  fs.writeFileSync(idsPath, Buffer.from(a.buffer));
}
console.log(JSON.stringify(manifest));
