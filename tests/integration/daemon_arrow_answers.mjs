// Arrow IPC bodies from lanced against Lance's own answers for a file fixture: each case of
// the fixture's .answers file (ids, columns, Lance's body) is fetched with format=arrow, read
// with apache-arrow and turned into the JSON rows body by the fixtures' own converter, then
// compared byte for byte (so 64-bit integers, NaN payloads and nested values are exact).
// Usage: node daemon_arrow_answers.mjs BASE_URL FILE_PATH ANSWERS [MAX_CASES]
import fs from "node:fs";
import { tableFromIPC } from "apache-arrow";
import { tableToJsonRows } from "../fixtures/jsonrows.mjs";

const [base, file, answers, max = "12"] = process.argv.slice(2);
const lines = fs.readFileSync(answers, "utf8").split("\n").filter(Boolean);
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
  const got = tableToJsonRows(tableFromIPC(new Uint8Array(await res.arrayBuffer())));
  if (got !== expected) { bad++; console.error(`FAIL line ${i + 1}:\n got ${got.slice(0, 300)}\nwant ${expected.slice(0, 300)}`); }
}
console.log(`arrow vs Lance's answers: ${n - bad}/${n} cases of ${file}`);
process.exit(bad ? 1 : 0);
