#!/usr/bin/env bash
# Self-test of bin/lanced-load against local stand-in servers on 127.0.0.1 (the mock lanced in
# loadtest_server.py, and python's stock http.server, which closes after every response):
# closed and open loop, rows API (GET and POST), chunked bodies, --verify, and exit codes.
set -uo pipefail
cd "$(dirname "$0")/../.."
LOAD=${LANCED_LOAD:-${BIN:-bin}/lanced-load}
[[ -x $LOAD ]] || { echo "loadtest_selftest: $LOAD not built"; exit 1; }
command -v python3 >/dev/null || { echo "loadtest_selftest: SKIP (no python3)"; exit 0; }

TMP=$(mktemp -d)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$TMP"
}
trap cleanup EXIT
fail=0
ok() { echo "ok   - $1"; }
bad() { echo "FAIL - $1"; fail=1; }

# Waits (at most 10 s) for a server to write its port.
wait_port() {
  for _ in $(seq 100); do [[ -s $1 ]] && { cat "$1"; return 0; }; sleep 0.1; done
  return 1
}

mkdir -p "$TMP/root"
head -c 4096 /dev/urandom > "$TMP/root/blob.bin"
timeout 300 python3 tests/integration/loadtest_server.py --root "$TMP/root" --num-rows 5000 \
  --port-file "$TMP/mock.port" & PIDS+=($!)
PORT=$(wait_port "$TMP/mock.port") || { echo "loadtest_selftest: mock server did not start"; exit 1; }
URL=http://127.0.0.1:$PORT

# check NAME FILE PYTHON-EXPR: evaluates the expression with r = the parsed JSON report.
check() {
  if python3 - "$2" "$3" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
need = ["config", "elapsed_s", "requests", "requests_per_s", "rows", "rows_per_s", "mb_per_s", "bytes_in",
        "latency_us", "status", "errors", "error_rate", "target_rate", "achieved_rate", "unsent", "result", "exit_code"]
missing = [k for k in need if k not in r]
lat = [k for k in ["p50", "p90", "p99", "p999", "max", "mean", "count"] if k not in r.get("latency_us", {})]
errs = [k for k in ["connect", "timeout", "http_4xx", "http_5xx", "parse", "short_body", "total"] if k not in r.get("errors", {})]
if missing or lat or errs:
    print("missing fields:", missing, lat, errs); sys.exit(1)
if not eval(sys.argv[2], {"r": r}):
    print("assertion failed:", sys.argv[2]); print(json.dumps(r, indent=1)[:3000]); sys.exit(1)
PY
  then ok "$1"; else bad "$1"; fi
}

# 1. --raw-path, closed loop.
"$LOAD" --url "$URL" --raw-path /blob.bin --connections 4 --threads 2 --duration 2 --json --quiet > "$TMP/r1.json"
rc=$?; [[ $rc == 0 ]] && ok "raw closed loop exits 0" || bad "raw closed loop exit $rc"
check "raw closed loop: requests, no errors, 4 KB bodies" "$TMP/r1.json" \
  'r["requests"] > 0 and r["errors"]["total"] == 0 and r["config"]["mode"] == "closed" and r["body_bytes"] == 4096 * r["requests"] and r["latency_us"]["p50"] > 0'

# 1b. --busy-poll: same answers, no errors, while polling before each sleep.
"$LOAD" --url "$URL" --raw-path /blob.bin --connections 4 --threads 1 --duration 1 --busy-poll 50 --json --quiet > "$TMP/r1b.json"
rc=$?; [[ $rc == 0 ]] && ok "busy-poll closed loop exits 0" || bad "busy-poll closed loop exit $rc"
check "busy-poll closed loop: requests, no errors" "$TMP/r1b.json" \
  'r["requests"] > 0 and r["errors"]["total"] == 0 and r["body_bytes"] == 4096 * r["requests"]'

# 2. --raw-path, open loop at a fixed rate: achieved within 20 % of the target.
"$LOAD" --url "$URL" --raw-path /blob.bin --connections 8 --threads 2 --duration 2 --rate 200 --json --quiet > "$TMP/r2.json"
rc=$?; [[ $rc == 0 ]] && ok "raw open loop exits 0" || bad "raw open loop exit $rc"
check "raw open loop: rate within 20% of 200/s, no errors" "$TMP/r2.json" \
  'r["requests"] > 0 and r["errors"]["total"] == 0 and abs(r["achieved_rate"] - 200) <= 40 and r["config"]["mode"] == "open" and r["target_rate"] == 200'

# 3. Rows API: metadata read, ids in range (the mock answers 400 otherwise), GET and POST.
"$LOAD" --url "$URL" --path data/train.lance --batch 5 --columns id,name --ids zipf:1.1 --connections 4 --threads 2 \
  --duration 2 --post-threshold 4 --json --quiet > "$TMP/r3.json"
rc=$?; [[ $rc == 0 ]] && ok "rows POST exits 0" || bad "rows POST exit $rc"
check "rows via POST: rows = 5 x requests, every request POSTed, num_rows from metadata" "$TMP/r3.json" \
  'r["requests"] > 0 and r["errors"]["total"] == 0 and r["rows"] == 5 * r["requests"] and r["posts"] >= r["requests"] and r["config"]["num_rows"] == 5000'
"$LOAD" --url "$URL" --path data/train.lance --batch 3 --ids sequential --connections 2 --threads 1 --duration 1 \
  --rate 100 --json --quiet > "$TMP/r4.json"
check "rows via GET, sequential, open loop" "$TMP/r4.json" \
  'r["requests"] > 0 and r["errors"]["total"] == 0 and r["posts"] == 0 and r["rows"] == 3 * r["requests"]'

# 4. Chunked transfer encoding (with chunk extensions and trailers).
"$LOAD" --url "$URL" --raw-path /chunked --connections 2 --threads 1 --duration 1 --json --quiet > "$TMP/r5.json"
check "chunked responses parsed" "$TMP/r5.json" \
  'r["requests"] > 0 and r["errors"]["total"] == 0 and r["body_bytes"] == 420 * r["requests"]'

# 5. A server that closes after each response (HTTP/1.0): reconnects, no errors.
mkdir -p "$TMP/static" && echo hello > "$TMP/static/hello.txt"
SPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
(cd "$TMP/static" && exec timeout 120 python3 -m http.server --bind 127.0.0.1 "$SPORT" >/dev/null 2>&1) & PIDS+=($!)
for _ in $(seq 100); do python3 -c "import socket; socket.create_connection(('127.0.0.1',$SPORT),0.2)" 2>/dev/null && break; sleep 0.1; done
"$LOAD" --url "http://127.0.0.1:$SPORT" --raw-path /hello.txt --connections 2 --threads 1 --duration 1 --json --quiet > "$TMP/r6.json"
check "connection-close server: reconnects, no errors" "$TMP/r6.json" \
  'r["requests"] > 0 and r["errors"]["total"] == 0 and r["connects"] >= r["requests"]'

# 6. --verify against stand-in lancectl scripts: one agrees with the server, one does not.
cat > "$TMP/lancectl-good" <<PY
#!/usr/bin/env python3
import sys
sys.path.insert(0, "$PWD/tests/integration")
from loadtest_server import rows_body
a = sys.argv[1:]
assert a[0] == "take" and a[2] == "--ids"
ids = [int(x) for x in a[3].split(",")]
cols = a[a.index("--columns") + 1].split(",") if "--columns" in a else None
sys.stdout.write(rows_body(ids, cols).decode() + "\n")
PY
sed 's/"\\n"/"x\\n"/' "$TMP/lancectl-good" > "$TMP/lancectl-bad"
chmod +x "$TMP/lancectl-good" "$TMP/lancectl-bad"
"$LOAD" --url "$URL" --path t.lance --batch 4 --columns id,name --connections 2 --threads 1 --duration 1 \
  --verify 5 --lancectl "$TMP/lancectl-good" --json --quiet > "$TMP/r7.json"
rc=$?; [[ $rc == 0 ]] && ok "verify with a matching lancectl exits 0" || bad "verify (matching) exit $rc"
check "verify: 5 samples compared and matched" "$TMP/r7.json" \
  'r["verify"]["compared"] == 5 and r["verify"]["matched"] == 5 and r["verify"]["mismatched"] == 0'
"$LOAD" --url "$URL" --path t.lance --batch 4 --connections 2 --threads 1 --duration 1 \
  --verify 3 --lancectl "$TMP/lancectl-bad" --quiet > /dev/null 2> "$TMP/r8.err"
rc=$?; [[ $rc == 3 ]] && ok "verify mismatch exits 3" || bad "verify mismatch exit $rc (want 3)"

# 7. Exit codes: unreachable server 2, bad usage 1, HTTP errors above the threshold 2.
"$LOAD" --url http://127.0.0.1:1 --raw-path / --duration 1 --quiet > /dev/null 2>&1
rc=$?; [[ $rc == 2 ]] && ok "unreachable server exits 2" || bad "unreachable server exit $rc (want 2)"
"$LOAD" --url "$URL" --path x --batch 0 > /dev/null 2>&1
rc=$?; [[ $rc == 1 ]] && ok "bad usage exits 1" || bad "bad usage exit $rc (want 1)"
"$LOAD" --url "$URL" --raw-path / --busy-poll -5 > /dev/null 2>&1
rc=$?; [[ $rc == 1 ]] && ok "bad --busy-poll exits 1" || bad "bad --busy-poll exit $rc (want 1)"
"$LOAD" --url "$URL" --path x --num-rows 999999 --connections 2 --threads 1 --duration 1 --json --quiet > "$TMP/r9.json"
rc=$?; [[ $rc == 2 ]] && ok "4xx answers above --max-error-rate exit 2" || bad "4xx run exit $rc (want 2)"
check "4xx counted by kind" "$TMP/r9.json" 'r["errors"]["http_4xx"] > 0 and r["status"]["4xx"] == r["errors"]["http_4xx"]'

# 8. Human summary and progress line.
"$LOAD" --url "$URL" --raw-path /blob.bin --connections 2 --threads 1 --duration 1.5 > "$TMP/r10.out" 2> "$TMP/r10.err"
grep -q "req/s" "$TMP/r10.err" && grep -q "p99" "$TMP/r10.out" && ok "progress line and human summary" \
  || bad "progress line / summary missing"

exit $fail
