// Reads the Arrow IPC streams written by tests/unit/test_ipc.c (IPC_OUT_DIR) with
// apache-arrow's own reader and checks them against what the C test wrote next to them:
// <name>.schema.json (field names, C format strings, nullability, nesting, dictionaries) and
// <name>.json (lnc_encode_json of the same batch, compared with the fixture generator's
// converter applied to the decoded table). Usage: node ipc_roundtrip.mjs DIR; exit 1 on any
// mismatch.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { tableFromIPC, Type } from 'apache-arrow';
import { tableToJsonRows } from '../fixtures/jsonrows.mjs';

const UNIT = ['s', 'm', 'u', 'n'];

// apache-arrow DataType -> Arrow C Data Interface format string
function formatOf(t) {
  switch (t.typeId) {
    case Type.Null: return 'n';
    case Type.Bool: return 'b';
    case Type.Int: {
      const c = { 8: 'c', 16: 's', 32: 'i', 64: 'l' }[t.bitWidth];
      return t.isSigned ? c : c.toUpperCase();
    }
    case Type.Float: return ['e', 'f', 'g'][t.precision];
    case Type.Utf8: return 'u';
    case Type.LargeUtf8: return 'U';
    case Type.Binary: return 'z';
    case Type.LargeBinary: return 'Z';
    case Type.FixedSizeBinary: return `w:${t.byteWidth}`;
    case Type.Decimal: return `d:${t.precision},${t.scale},${t.bitWidth}`;
    case Type.Date: return t.unit === 0 ? 'tdD' : 'tdm';
    case Type.Time: return `tt${UNIT[t.unit]}`;
    case Type.Timestamp: return `ts${UNIT[t.unit]}:${t.timezone ?? ''}`;
    case Type.Duration: return `tD${UNIT[t.unit]}`;
    case Type.List: return '+l';
    case Type.FixedSizeList: return `+w:${t.listSize}`;
    case Type.Struct: return '+s';
    case Type.Dictionary: return formatOf(t.indices);
    default: throw new Error(`no C format for ${t}`);
  }
}

function describe(f) {
  const t = f.type;
  const isDict = t.typeId === Type.Dictionary;
  const vt = isDict ? t.dictionary : t;
  return {
    name: f.name,
    format: formatOf(t),
    nullable: f.nullable,
    children: (vt.children ?? []).map(describe),
    dictionary: isDict ? { format: formatOf(vt), children: (vt.children ?? []).map(describe) } : null,
  };
}

// The C description of a dictionary's value schema carries a name and nullability that the
// IPC format has no place for; compare only what IPC keeps.
function normalize(d) {
  return {
    name: d.name,
    format: d.format,
    nullable: d.nullable,
    children: d.children.map(normalize),
    dictionary: d.dictionary
      ? { format: d.dictionary.format, children: d.dictionary.children.map(normalize) }
      : null,
  };
}

const dir = process.argv[2];
if (!dir) {
  console.error('usage: node ipc_roundtrip.mjs DIR');
  process.exit(2);
}
const names = readdirSync(dir).filter((f) => f.endsWith('.arrows')).map((f) => f.slice(0, -7)).sort();
if (names.length === 0) {
  console.error(`ipc_roundtrip: no .arrows files in ${dir}`);
  process.exit(1);
}
let failed = 0;
for (const name of names) {
  try {
    const table = tableFromIPC(readFileSync(join(dir, `${name}.arrows`)));
    const wantSchema = JSON.parse(readFileSync(join(dir, `${name}.schema.json`), 'utf8')).map(normalize);
    const gotSchema = table.schema.fields.map(describe);
    const a = JSON.stringify(gotSchema), b = JSON.stringify(wantSchema);
    if (a !== b) throw new Error(`schema mismatch\n got: ${a}\nwant: ${b}`);
    const wantRows = readFileSync(join(dir, `${name}.json`), 'utf8');
    const gotRows = tableToJsonRows(table);
    if (gotRows !== wantRows) {
      const g = JSON.parse(gotRows), w = JSON.parse(wantRows);
      let detail = '';
      for (let r = 0; r < Math.max(g.rows.length, w.rows.length) && !detail; r++) {
        for (const k of w.columns) {
          const x = JSON.stringify(g.rows[r]?.[k]), y = JSON.stringify(w.rows[r]?.[k]);
          if (x !== y) { detail = `row ${r} column ${k}: got ${x}, want ${y}`; break; }
        }
      }
      throw new Error(`values mismatch: ${detail || 'envelope'}\n got: ${gotRows}\nwant: ${wantRows}`);
    }
    if (table.numRows !== JSON.parse(wantRows).num_rows) throw new Error('row count mismatch');
    console.log(`ok   ${name} (${table.numRows} rows, ${table.schema.fields.length} columns)`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${name}: ${e.stack || e}`);
  }
}
console.log(`ipc_roundtrip: ${names.length - failed}/${names.length} passed`);
process.exit(failed ? 1 : 0);
