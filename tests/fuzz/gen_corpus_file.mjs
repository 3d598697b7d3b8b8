// Seed corpus for tests/fuzz/fuzz_file.c: tiny real Lance files (2.0, 2.1 and 2.2, a handful of
// types, nulls, nested, a zstd column, 128-float vectors that go full-zip, with nulls and without) written by @lancedb/lancedb, plus damaged variants
// (truncated, footer only, flipped bytes). Keeps tests/fuzz/corpus/fuzz_file/ well under 1 MB.
//   node tests/fuzz/gen_corpus_file.mjs          (from the repository root)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import * as arrow from 'apache-arrow';
import { field, makeTable } from '../fixtures/build.mjs';

const OUT = 'tests/fuzz/corpus/fuzz_file';
fs.mkdirSync(OUT, { recursive: true });

function table(n) {
  const i32 = Int32Array.from({ length: n }, (_, i) => (i * 7919) % 1000 - 500);
  const f64 = Float64Array.from({ length: n }, (_, i) => i / 3);
  const s = Array.from({ length: n }, (_, i) => (i % 5 === 1 ? null : `s${i}-${'x'.repeat(i % 9)}`));
  const lst = Array.from({ length: n }, (_, i) => (i % 6 === 2 ? null : Array.from({ length: i % 4 }, (_, k) => i + k)));
  const st = Array.from({ length: n }, (_, i) => ({ a: i, b: i % 3 ? `b${i}` : null }));
  const b = Array.from({ length: n }, (_, i) => (i % 7 === 3 ? null : i % 2 === 0));
  const fsl = Array.from({ length: n }, (_, i) => [i, i + 0.5, -i, 1 / (i + 1)]);
  const emb = Array.from({ length: n }, (_, i) => (i % 9 === 4 ? null : Array.from({ length: 128 }, (_, k) => Math.fround((i * k) % 97 / 7))));
  const zs = Array.from({ length: n }, (_, i) => `zstd value ${i % 4}`);
  const zfield = new arrow.Field('z', new arrow.Utf8(), false,
    new Map([['lance-encoding:compression', 'zstd']]));
  const schema = new arrow.Schema([
    new arrow.Field('i', new arrow.Int32(), false),
    new arrow.Field('f', new arrow.Float64(), false),
    new arrow.Field('s', new arrow.Utf8(), true),
    new arrow.Field('l', new arrow.List(new arrow.Field('item', new arrow.Int32(), true)), true),
    new arrow.Field('st', new arrow.Struct([new arrow.Field('a', new arrow.Int32(), true),
                                            new arrow.Field('b', new arrow.Utf8(), true)]), true),
    new arrow.Field('b', new arrow.Bool(), true),
    new arrow.Field('v', new arrow.FixedSizeList(4, new arrow.Field('item', new arrow.Float32(), true)), true),
    zfield,
    new arrow.Field('e', new arrow.FixedSizeList(128, new arrow.Field('item', new arrow.Float32(), true)), true),
  ]);
  const vec = (type, values) => arrow.vectorFromArray(values, type);
  const cols = [vec(new arrow.Int32(), i32), vec(new arrow.Float64(), f64), vec(new arrow.Utf8(), s),
    vec(schema.fields[3].type, lst), vec(schema.fields[4].type, st), vec(new arrow.Bool(), b),
    vec(schema.fields[6].type, fsl), vec(new arrow.Utf8(), zs),
    vec(schema.fields[8].type, emb)];
  const data = arrow.makeData({ type: new arrow.Struct(schema.fields), length: n, nullCount: 0,
    children: cols.map((c) => c.data[0]) });
  return new arrow.Table(schema, [new arrow.RecordBatch(schema, data)]);
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lnc-fuzz-corpus-'));
const db = await lancedb.connect(tmp);
const written = [];
for (const [name, version, n] of [['real21', '2.1', 40], ['real22', '2.2', 40], ['one21', '2.1', 1], ['real20', '2.0', 40]]) {
  const buf = Buffer.from(arrow.tableToIPC(table(n), 'file'));
  await db.inner.createTable(name, buf, 'overwrite', [], { new_table_data_storage_version: version });
  const dir = path.join(tmp, `${name}.lance`, 'data');
  const file = fs.readdirSync(dir).find((f) => f.endsWith('.lance'));
  const bytes = fs.readFileSync(path.join(dir, file));
  fs.writeFileSync(path.join(OUT, `${name}.lance`), bytes);
  written.push([name, bytes]);
}
// A vector column with no nulls (full-zip FixedSizeList(128, Flat(32)) without a control word):
// the one lanced leaves in the file for an Arrow answer, which file_common.h checks against
// the ordinary take.
function vectors(n) {
  const FSL = new arrow.FixedSizeList(128, new arrow.Field('item', new arrow.Float32(), true));
  return makeTable([
    { field: field('id', new arrow.Int32(), false), values: Array.from({ length: n }, (_, i) => i) },
    { field: field('e', FSL, false), values: Array.from({ length: n }, (_, i) => Array.from({ length: 128 }, (_, k) => Math.fround(((i + 1) * (k + 3)) % 89 / 9))) },
  ]);
}
for (const [name, version] of [['vec21', '2.1'], ['vec22', '2.2']]) {
  const buf = Buffer.from(arrow.tableToIPC(vectors(12), 'file'));
  await db.inner.createTable(name, buf, 'overwrite', [], { new_table_data_storage_version: version });
  const dir = path.join(tmp, `${name}.lance`, 'data');
  fs.copyFileSync(path.join(dir, fs.readdirSync(dir).find((f) => f.endsWith('.lance'))), path.join(OUT, `${name}.lance`));
}
// Fixed-size lists of fixed-size lists, nullable at every level (a validity layer per level in
// the values; full-zip when wide): the shapes tests/fixtures/specs.mjs's nfsl2x serve.
function nestedFsl(n) {
  const FSL = (d, t) => new arrow.FixedSizeList(d, new arrow.Field('item', t, true));
  const t2 = FSL(2, FSL(3, new arrow.Int8())), tz = FSL(2, FSL(40, new arrow.Int16()));
  const val = (i, d0, d1, f) => (i % 5 === 1 ? null : Array.from({ length: d0 }, (_, a) => ((i + a) % 4 === 2 ? null
    : Array.from({ length: d1 }, (_, b) => ((i + a + b) % 7 === 3 ? null : f(i, a, b))))));
  // makeTable (the fixtures' builder): apache-arrow's vectorFromArray leaves nested lists short
  return makeTable([
    { field: field('f2', t2, true), values: Array.from({ length: n }, (_, i) => val(i, 2, 3, (x, a, b) => (x + a * 3 + b) % 100)) },
    { field: field('fz', tz, true, { 'lance-encoding:structural-encoding': 'fullzip' }), values: Array.from({ length: n }, (_, i) => val(i, 2, 40, (x, a, b) => x * 40 + b - a)) },
  ]);
}
for (const [name, version] of [['nfsl20', '2.0'], ['nfsl21', '2.1'], ['nfsl22', '2.2']]) {
  const buf = Buffer.from(arrow.tableToIPC(nestedFsl(30), 'file'));
  await db.inner.createTable(name, buf, 'overwrite', [], { new_table_data_storage_version: version });
  const dir = path.join(tmp, `${name}.lance`, 'data');
  fs.copyFileSync(path.join(dir, fs.readdirSync(dir).find((f) => f.endsWith('.lance'))), path.join(OUT, `${name}.lance`));
}
// Legacy files (footer 0.2) for tests/fuzz/fuzz_legacy.c: the same table in one batch and in
// several (max_rows_per_group is LanceDB's 1024: 2,100 rows make three), and one row.
const LEGACY = 'tests/fuzz/corpus/fuzz_legacy';
fs.mkdirSync(LEGACY, { recursive: true });
const legacyWritten = [];
for (const [name, n] of [['real01', 40], ['one01', 1], ['batches01', 2100]]) {
  const buf = Buffer.from(arrow.tableToIPC(n > 1000 ? nestedFsl(n) : table(n), 'file'));
  await db.inner.createTable(name, buf, 'overwrite', [], { new_table_data_storage_version: 'legacy' });
  const dir = path.join(tmp, `${name}.lance`, 'data');
  const bytes = fs.readFileSync(path.join(dir, fs.readdirSync(dir).find((f) => f.endsWith('.lance'))));
  fs.writeFileSync(path.join(LEGACY, `${name}.lance`), bytes);
  legacyWritten.push([name, bytes]);
}
fs.rmSync(tmp, { recursive: true, force: true });

// Damaged legacy variants: the footer's metadata position moved, the metadata, the embedded
// schema and the page table (all in the file's tail) flipped, cuts.
for (const [base, src] of legacyWritten.slice(0, 1)) {
  const at = Number(src.readBigInt64LE(src.length - 16));
  const v = {
    'cut-half': src.subarray(0, src.length >> 1),
    'cut-16': src.subarray(src.length - 16),
    'meta-pos+1': Buffer.from(src),
    'meta-pos-big': Buffer.from(src),
  };
  v['meta-pos+1'].writeBigInt64LE(BigInt(at + 1), src.length - 16);
  v['meta-pos-big'].writeBigInt64LE(1n << 40n, src.length - 16);
  for (const [what, from, to] of [['metadata', at, src.length - 16], ['schema', Math.max(0, at - 400), at],
                                  ['tail', Math.max(0, src.length - 1200), src.length - 16]]) {
    const b = Buffer.from(src);
    for (let k = 0; k < 12; k++) b[from + ((k * 7919) % Math.max(1, to - from))] ^= 0x5a;
    v[`flipped-${what}`] = b;
  }
  for (const [name, b] of Object.entries(v)) fs.writeFileSync(path.join(LEGACY, `${base}-${name}`), b);
}

// Damaged variants of the 2.1 file and of the 2.0 file (whose pages are ArrayEncoding trees).
for (const [base, src] of [written[0], written[3]]) {
const variants = {
  'cut-half': src.subarray(0, src.length >> 1),
  'cut-39': src.subarray(0, 39),
  'cut-footer': src.subarray(0, src.length - 1),
  'tail-only': src.subarray(src.length - Math.min(src.length, 2048)),
};
const flip = Buffer.from(src);
for (let k = 0; k < 16; k++) flip[(k * 7331) % (flip.length - 40)] ^= 0x5a;
variants['flipped-data'] = flip;
const meta = Buffer.from(src);
for (let k = 1; k <= 8; k++) meta[meta.length - 40 - k * 13] ^= 0xff;
variants['flipped-meta'] = meta;
for (const [name, b] of Object.entries(variants)) fs.writeFileSync(path.join(OUT, `${base}-${name}`), b);
}
let total = 0;
for (const f of fs.readdirSync(OUT)) total += fs.statSync(path.join(OUT, f)).size;
console.log(`${OUT}: ${fs.readdirSync(OUT).length} files, ${total} bytes`);
