// Arrow IPC bodies from lanced, read with apache-arrow's tableFromIPC and compared with the
// JSON rows body of the same request. Usage: node daemon_arrow.mjs BASE_URL FILE_PATH
import { tableFromIPC } from "apache-arrow";

const [base, file] = process.argv.slice(2);
const fail = (msg) => { console.error("FAIL " + msg); process.exit(1); };

const desc = await (await fetch(`${base}/files/${file}`)).json();
const scalar = /^(u?int(8|16|32|64)|utf8|large_utf8|bool)$/;
const cols = desc.columns.filter((c) => scalar.test(c.type)).map((c) => c.name).slice(0, 8);
if (!cols.length) fail("no scalar columns to compare in " + file);
const ids = [0, 7, 3, 3, Math.max(0, desc.num_rows - 1)];
const q = `ids=${ids.join(",")}&columns=${cols.join(",")}`;

const jr = await fetch(`${base}/files/${file}/rows?${q}`);
const json = await jr.json();
for (const how of ["format", "accept"]) {
  const res = how === "format"
    ? await fetch(`${base}/files/${file}/rows?${q}&format=arrow`)
    : await fetch(`${base}/files/${file}/rows?${q}`, { headers: { Accept: "application/vnd.apache.arrow.stream" } });
  if (res.status !== 200) fail(`${how}: status ${res.status}`);
  if (res.headers.get("content-type") !== "application/vnd.apache.arrow.stream") fail(`${how}: content-type ${res.headers.get("content-type")}`);
  const table = tableFromIPC(new Uint8Array(await res.arrayBuffer()));
  if (table.numRows !== ids.length) fail(`${how}: ${table.numRows} rows, want ${ids.length}`);
  const names = table.schema.fields.map((f) => f.name);
  if (names.join() !== cols.join()) fail(`${how}: columns ${names} want ${cols}`);
  for (const c of cols) {
    const vec = table.getChild(c);
    for (let i = 0; i < ids.length; i++) {
      const a = vec.get(i), j = json.rows[i][c];
      const as = a === null ? "null" : String(a), js = j === null ? "null" : String(j);
      if (as !== js) fail(`${how}: row ${i} column ${c}: arrow ${as} json ${js}`);
    }
  }
}
console.log(`arrow: ${cols.length} columns x ${ids.length} rows match the JSON body`);
