// Arrow bodies carry the field metadata Lance's own reader returns (issue 17, point 3): a
// dataset written by LanceDB (file versions 2.0, 2.1, 2.2) with user metadata and lance-encoding
// keys on its fields; each field's metadata in lanced's Arrow answer — for the dataset and for
// its data file — must equal what LanceDB's takeOffsets(...).toArrow() returns for it.
// Usage: node tests/integration/arrow_metadata.mjs BIN_DIR
import * as lancedb from "@lancedb/lancedb";
import * as arrow from "apache-arrow";
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const bin = path.resolve(process.argv[2] ?? "bin");
const root = fs.mkdtempSync(path.join(os.tmpdir(), "lanced-meta-"));
let passed = 0, failed = 0;
const check = (ok, msg) => { ok ? passed++ : failed++; console.log(`${ok ? "ok  " : "FAIL"} ${msg}`); };
const asObj = (m) => Object.fromEntries([...(m ?? new Map())].sort());

const db = await lancedb.connect(root);
const base = arrow.tableFromArrays({ a: BigInt64Array.from([1n, 2n, 3n, 4n]), b: ["w", "x", "y", "z"], c: Float32Array.from([1, 2, 3, 4]) });
const mds = [new Map([["user_key", "v1"], ["lance-encoding:compression", "zstd"]]),
             new Map([["note", "héllo"], ["owner", "team-a"]]), new Map()];
const schema = new arrow.Schema(base.schema.fields.map((f, i) => f.clone({ metadata: mds[i] })));
const table = new arrow.Table(schema, base.batches.map((b) => new arrow.RecordBatch(schema, b.data)));
const wants = {};
for (const v of ["2.0", "2.1", "2.2"]) {
  const name = `meta${v.replace(".", "")}`;
  const t = await db.createTable(name, table, { storageOptions: { new_table_data_storage_version: v } });
  const got = await t.takeOffsets([0, 2]).toArrow();
  wants[name] = Object.fromEntries(got.schema.fields.map((f) => [f.name, asObj(f.metadata)]));
}

const daemon = spawn(path.join(bin, "lanced"), ["--root", root, "--listen", "127.0.0.1:0", "--workers", "1"],
                     { stdio: ["ignore", "ignore", "pipe"] });
const port = await new Promise((resolve, reject) => {
  let log = "";
  daemon.stderr.on("data", (d) => { log += d; const m = /listening on 127\.0\.0\.1:(\d+)/.exec(log); if (m) resolve(m[1]); });
  setTimeout(() => reject(new Error(`lanced did not start: ${log}`)), 10000);
});
try {
  for (const [name, want] of Object.entries(wants)) {
    const dataFile = fs.readdirSync(path.join(root, `${name}.lance`, "data"))[0];
    for (const p of [`${name}.lance`, `${name}.lance/data/${dataFile}`]) {
      const r = await fetch(`http://127.0.0.1:${port}/files/${p}/rows?ids=0,2&format=arrow`);
      const t = arrow.tableFromIPC(new Uint8Array(await r.arrayBuffer()));
      const got = Object.fromEntries(t.schema.fields.map((f) => [f.name, asObj(f.metadata)]));
      check(JSON.stringify(got) === JSON.stringify(want),
            `${p}: field metadata equals LanceDB's ${JSON.stringify(want)}${JSON.stringify(got) === JSON.stringify(want) ? "" : ` — got ${JSON.stringify(got)}`}`);
    }
  }
} finally {
  daemon.kill();
  fs.rmSync(root, { recursive: true, force: true });
}
console.log(`arrow metadata: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
