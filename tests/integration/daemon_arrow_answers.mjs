// Arrow IPC bodies from lanced against Lance's own answers for a file fixture: each case of
// the fixture's .answers file (ids, columns, Lance's body) is fetched with format=arrow, read
// with apache-arrow and turned into the JSON rows body by the fixtures' own converter, then
// compared byte for byte (so 64-bit integers, NaN payloads and nested values are exact).
// Dictionary-typed and map columns must also come back as Lance returns them,
// Dictionary<index, value> and Map<{key, value}> (the fixture's written type, recorded in
// index.json; Lance's toArrow() shows the same).
// Usage: node daemon_arrow_answers.mjs BASE_URL FILE_PATH ANSWERS [MAX_CASES]
import fs from "node:fs";
import { tableFromIPC } from "apache-arrow";
import { tableToJsonRows } from "../fixtures/jsonrows.mjs";

const [base, file, answers, max = "12"] = process.argv.slice(2);
const lines = fs.readFileSync(answers, "utf8").split("\n").filter(Boolean);
const entry = JSON.parse(fs.readFileSync("tests/fixtures/index.json", "utf8")).fixtures.find((f) => f.answers === answers);
const dictTypes = new Map((entry?.columns ?? []).filter((c) => c.type.startsWith("Dictionary<") || c.type.startsWith("Map<")).map((c) => [c.name, c.type]));
// Spread the cases over the file (single ids, boundaries, batches, duplicates, projections).
const step = Math.max(1, Math.floor(lines.length / Number(max)));
let n = 0, bad = 0;
for (let i = 0; i < lines.length; i += step) {
  const [ids, cols, expected] = lines[i].split("\t");
  const columns = cols === "null" ? null : JSON.parse(cols);
  const q = `ids=${JSON.parse(ids).join(",")}${columns ? `&columns=${columns.join(",")}` : ""}&blobs=descriptors&format=arrow`;
  const res = await fetch(`${base}/files/${file}/rows?${q}`);
  n++;
  if (res.status !== 200) { bad++; console.error(`FAIL line ${i + 1}: status ${res.status} ${(await res.text()).slice(0, 200)}`); continue; }
  const table = tableFromIPC(new Uint8Array(await res.arrayBuffer()));
  for (const f of table.schema.fields)
    if (dictTypes.has(f.name) && String(f.type) !== dictTypes.get(f.name)) {
      bad++;
      console.error(`FAIL line ${i + 1}: column ${f.name} is ${f.type}, Lance returns ${dictTypes.get(f.name)}`);
    }
  const got = tableToJsonRows(table);
  if (got !== expected) { bad++; console.error(`FAIL line ${i + 1}:\n got ${got.slice(0, 300)}\nwant ${expected.slice(0, 300)}`); }
}
console.log(`arrow vs Lance's answers: ${n - bad}/${n} cases of ${file}`);
process.exit(bad ? 1 : 0);
