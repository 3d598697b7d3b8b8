// A LanceDB writer for the Python tests (the real writer; Debian has no Python lancedb):
//   node writer.mjs create DIR NAME N     a table of N rows, id = 0..N-1, v = id * 10
//   node writer.mjs delete DIR NAME PRED  delete the rows PRED selects (SQL, e.g. "id < 100")
//   node writer.mjs append DIR NAME FROM COUNT
// Prints the table's version after the operation.
import * as lancedb from "@lancedb/lancedb";

const [op, dir, name, a, b] = process.argv.slice(2);
const db = await lancedb.connect(dir);
const rows = (from, n) => Array.from({ length: n }, (_, i) => ({ id: from + i, v: (from + i) * 10 }));
let t;
if (op === "create") t = await db.createTable(name, rows(0, Number(a)), { mode: "overwrite" });
else {
  t = await db.openTable(name);
  if (op === "delete") await t.delete(a);
  else if (op === "append") await t.add(rows(Number(a), Number(b)));
  else throw new Error(`unknown op ${op}`);
}
console.log(await t.version());
