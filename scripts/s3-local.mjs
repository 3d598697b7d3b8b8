// A local S3-compatible store to try lanced's object-store mounts (docs/object-storage.md):
// s3rver (npm, installed by `make deps`) on 127.0.0.1, with a directory uploaded as a prefix of
// bucket `lance`. Prints the endpoint and what to run; serves until interrupted.
//   node --openssl-legacy-provider scripts/s3-local.mjs [DIR (build/sample)] [PORT (4569)]
// (s3rver 3.7 ciphers listing tokens with DES, which node 20 keeps behind the legacy provider.)
import S3rver from "s3rver";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { uploadDir, ACCESS_KEY, SECRET_KEY, REGION } from "../tests/s3/s3env.mjs";

const dir = process.argv[2] ?? "build/sample";
const port = Number(process.argv[3] ?? 4569);
if (!fs.existsSync(dir)) {
  console.error(`s3-local: ${dir} does not exist (make run builds build/sample)`);
  process.exit(1);
}
const store = fs.mkdtempSync(path.join(os.tmpdir(), "lanced-s3-local."));
const srv = new S3rver({ port, address: "127.0.0.1", silent: true, directory: store, configureBuckets: [{ name: "lance" }] });
await srv.run();
const endpoint = `http://127.0.0.1:${port}`;
const prefix = path.basename(path.resolve(dir));
await uploadDir(endpoint, "lance", prefix, dir);
console.log(`s3-local: ${dir} is s3://lance/${prefix} at ${endpoint} (credentials ${ACCESS_KEY} / ${SECRET_KEY}, region ${REGION})`);
console.log(`  AWS_ACCESS_KEY_ID=${ACCESS_KEY} AWS_SECRET_ACCESS_KEY=${SECRET_KEY} bin/lanced --listen 127.0.0.1:8081 \\`);
console.log(`    --mount ${prefix}=s3://lance/${prefix} --s3-endpoint ${endpoint} --s3-region ${REGION}`);
const stop = async () => {
  await srv.close();
  fs.rmSync(store, { recursive: true, force: true });
  process.exit(0);
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
