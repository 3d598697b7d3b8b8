#!/usr/bin/env bash
# Integration tests for lanced: start the real daemon on an ephemeral 127.0.0.1 port over a
# temporary copy of the fixture root, then talk to it with curl (JSON rows vs the fixtures'
# expected answers, bad inputs, traversal, limits, slow clients, reload, drain), with
# apache-arrow (Arrow IPC bodies) and with a Connect client generated from our .proto.
# Usage: BIN=bin tests/integration/run.sh   (what `make integration` runs). Exits non-zero
# on any failure; the last line is "N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
WORK_PREFIX=lanced-it
. tests/integration/lib.sh

# ---- data root: the fixtures (hard links when possible) plus traps for path tests --------
ROOT=$WORK/root
mkdir -p "$ROOT"
if [[ -d tests/fixtures/data ]]; then
  cp -al tests/fixtures/data "$ROOT/data" 2>/dev/null || cp -r tests/fixtures/data "$ROOT/data"
fi
ln -s /etc "$ROOT/evil"                  # a directory symlink leading outside
ln -s /etc/passwd "$ROOT/passwd.lance"   # a file symlink leading outside
echo "not a lance file" > "$ROOT/garbage.lance"
head -c 100000 /dev/urandom > "$ROOT/random.lance"

# First fixture data file (relative to the fixture root = our root's layout).
FILE=""
if [[ -f tests/fixtures/index.json ]]; then
  FILE=$(node -e 'const d=require("./tests/fixtures/index.json");const f=(d.fixtures||[])[0];
    if(f&&f.file)console.log(f.file.replace(/^tests\/fixtures\//,""))')
fi
[[ -n $FILE ]] && ln -s "$FILE" "$ROOT/inside.lance"   # a relative symlink staying inside

CONF=$WORK/lanced.conf
printf 'request_timeout_ms = 2000\nmax_ids_per_request = 50000\n' > "$CONF"
start_daemon "$WORK/lanced.log" --config "$CONF" || { echo "0 passed, 1 failed"; exit 1; }

expect() { # name want-status URL [curl args]
  local name=$1 want=$2 u=$3; shift 3
  local got; got=$(status "$u" "$@")
  if [[ $got == "$want" ]]; then ok "$name"; else bad "$name" "want $want, got $got: $(head -c 300 "$WORK/body")"; fi
  healthy "$name"
}
expect_in() { # name "s1 s2" URL [curl args]
  local name=$1 wants=$2 u=$3; shift 3
  local got; got=$(status "$u" "$@")
  if [[ " $wants " == *" $got "* ]]; then ok "$name"; else bad "$name" "want one of $wants, got $got"; fi
  healthy "$name"
}

# ---- basics ------------------------------------------------------------------------------------
expect "healthz" 200 "$URL/healthz"
expect "metrics" 200 "$URL/metrics"
grep -q '^# TYPE lanced_requests_total counter' "$WORK/body" && ok "metrics format" || bad "metrics format"
# Every metric family emitted is documented (docs/api.md's table and lanced(8)); latency
# buckets resolve warm requests (from 25 µs); build info and the standard process metrics.
undoc=""
for m in $(sed -n 's/^# TYPE \([a-z_]*\) .*/\1/p' "$WORK/body"); do
  grep -q "\`$m\(\`\|{\)" docs/api.md && grep -q "^\.B $m[,.]\?$" docs/man/lanced.8 || undoc="$undoc $m"
done
[[ -z $undoc ]] && ok "every metric documented" || bad "metrics not documented in docs/api.md or lanced(8):$undoc"
grep -q '^lanced_request_duration_seconds_bucket{route="healthz",le="2.5e-05"}' "$WORK/body" && ok "latency buckets from 25 us" || bad "latency buckets" "$(grep -m3 _bucket "$WORK/body")"
for m in 'lanced_build_info{version="[0-9.]*",file_versions="2.0,2.1,2.2"} 1' 'process_resident_memory_bytes [1-9]' 'process_open_fds [1-9]' 'process_start_time_seconds [1-9]' 'process_cpu_seconds_total [0-9]'; do
  grep -q "^$m" "$WORK/body" && ok "metric $m" || bad "metric $m missing"
done
expect "unknown route" 404 "$URL/nope"

if [[ -n $FILE ]]; then
  R=$URL/files/$FILE
  expect "describe" 200 "$R"
  node -e 'const b=JSON.parse(require("fs").readFileSync(process.argv[1]));if(!(b.num_rows>0)||!b.columns.length)process.exit(1)' "$WORK/body" \
    && ok "describe body" || bad "describe body" "$(head -c 200 "$WORK/body")"
  expect "rows json" 200 "$R/rows?ids=0,1,1,0"
  grep -q '"num_rows":4' "$WORK/body" && ok "rows in order with duplicates" || bad "rows duplicates" "$(head -c 200 "$WORK/body")"
  expect "relative symlink inside root" 200 "$URL/files/inside.lance/rows?ids=0"
  expect "POST json" 200 "$R/rows" -X POST -H 'Content-Type: application/json' -d '{"ids":[2,"1"]}'
  expect "HEAD rows" 200 "$R/rows?ids=1" -I

  # ---- JSON rows against Lance's own answers ----------------------------------------------------
  node -e '
    const d = require("./tests/fixtures/index.json");
    for (const f of d.fixtures || []) if (f.file && f.answers) console.log(f.file.replace(/^tests\/fixtures\//, "") + "\t" + f.answers);
  ' > "$WORK/answer-files"
  n_ans=0 n_ans_fail=0
  while IFS=$'\t' read -r rel answers; do
    [[ -f $answers ]] || continue
    lineno=0
    while IFS=$'\t' read -r ids cols expected; do
      lineno=$((lineno + 1))
      q="ids=$(tr -d '[] ' <<<"$ids")"
      [[ $cols != null ]] && q="$q&columns=$(tr -d '[]" ' <<<"$cols")"
      # Lance answers blob columns with descriptors; lanced serves bytes unless asked.
      got=$(curl -s "$URL/files/$rel/rows?$q&blobs=descriptors")
      n_ans=$((n_ans + 1))
      if [[ $got == "$expected" ]]; then ok "answer $answers:$lineno"
      else n_ans_fail=$((n_ans_fail + 1)); bad "answer $answers:$lineno" "GET ?$(head -c 100 <<<"$q") → $(head -c 200 <<<"$got")"; fi
    done < "$answers"
  done < "$WORK/answer-files"
  echo "answers: $((n_ans - n_ans_fail))/$n_ans bodies identical to Lance's"
  healthy "answers"

  # ---- a file with columns lanced cannot serve (a dictionary of bools, a list of fixed-size
  # lists nested five deep) beside a map; describing it as a dataset once crashed the daemon ------------
  U=$(node -e 'const f=require("./tests/fixtures/index.json").fixtures.find(x=>x.name==="unsup22");if(f)console.log(f.file.replace(/^tests\/fixtures\//,""))')
  if [[ -n $U ]]; then
    expect "unsupported: describe" 200 "$URL/files/$U"
    grep -q '"unsupported"' "$WORK/body" && ok "describe marks the unserved columns" || bad "describe unsupported" "$(head -c 300 "$WORK/body")"
    grep -qF '"map<utf8, int32>"' "$WORK/body" && ok "describe names the map as Arrow does" || bad "describe map type" "$(grep -o '"type":"map[^"]*"' "$WORK/body" | head -2)"
    expect "unsupported: other columns" 200 "$URL/files/$U/rows?ids=0,299&columns=id,s,x"
    expect "unsupported: all columns" 422 "$URL/files/$U/rows?ids=0"
    grep -q "column 'db' cannot be served" "$WORK/body" && ok "all columns names the unserved one" || bad "unsupported message" "$(head -c 300 "$WORK/body")"
    expect "unsupported: the map beside it" 200 "$URL/files/$U/rows?ids=2&columns=m"
    grep -qF '"m":[{"key":"k2","value":2}]' "$WORK/body" && ok "the map's entries in JSON" || bad "map JSON" "$(head -c 300 "$WORK/body")"
    expect "a map as Arrow" 200 "$URL/files/$U/rows?ids=2&columns=m" -H 'Accept: application/vnd.apache.arrow.stream'
    expect "a map over protobuf: use Arrow" 501 "$URL/files/$U/rows?ids=2&columns=m&format=proto"
    expect "unsupported: the column itself" 422 "$URL/files/$U/rows?ids=0&columns=db"
    expect "unsupported: a list of fixed-size lists nested five deep" 422 "$URL/files/$U/rows?ids=1&columns=lff"
    grep -q "column 'item' cannot be served" "$WORK/body" && ok "the nested fixed-size list's item named" || bad "lff message" "$(head -c 300 "$WORK/body")"
    expect "unsupported: a fixed-size list of strings" 422 "$URL/files/$U/rows?ids=1&columns=fstr,id"
    grep -q "column 'fstr' cannot be served" "$WORK/body" && ok "the fixed-size list of strings named" || bad "fstr message" "$(head -c 300 "$WORK/body")"
    expect "unsupported: a fixed-size list of structs" 422 "$URL/files/$U/rows?ids=1&columns=fst"
    grep -q "column 'fst' cannot be served" "$WORK/body" && ok "the fixed-size list of structs named" || bad "fst message" "$(head -c 300 "$WORK/body")"
    expect "unsupported: a fixed-size list of three structs" 422 "$URL/files/$U/rows?ids=1&columns=fst3,id"
    grep -q "column 'fst3' cannot be served" "$WORK/body" && ok "the fixed-size list of three structs named" || bad "fst3 message" "$(head -c 300 "$WORK/body")"
    expect "unsupported: a packed struct with a fixed-size list" 422 "$URL/files/$U/rows?ids=1&columns=id,pfsl"
    grep -q "column 'pfsl' cannot be served" "$WORK/body" && ok "the packed struct named" || bad "pfsl message" "$(head -c 300 "$WORK/body")"
    expect "unsupported: dataset describe" 200 "$URL/files/data/unsup22"
    expect "unsupported: dataset rows of the other columns" 200 "$URL/files/data/unsup22/rows?ids=0,1&columns=x,id"
  fi

  # ---- bad inputs ------------------------------------------------------------------------------
  expect "ids letters" 400 "$R/rows?ids=1,a"
  expect "ids negative" 400 "$R/rows?ids=-1"
  expect "ids overflow" 400 "$R/rows?ids=18446744073709551616"
  expect "ids empty" 400 "$R/rows?ids="
  expect "ids missing" 400 "$R/rows"
  expect "ids trailing comma" 400 "$R/rows?ids=1,"
  expect "ids double comma" 400 "$R/rows?ids=1,,2"
  expect "ids with space" 400 "$R/rows?ids=1%202"
  expect "ids NUL" 400 "$R/rows?ids=1%002"
  expect "id out of range" 400 "$R/rows?ids=0,999999999"
  grep -q 'rows' "$WORK/body" && grep -q out_of_range "$WORK/body" && ok "out of range names row count" || bad "out of range message" "$(cat "$WORK/body")"
  expect "unknown column" 400 "$R/rows?ids=0&columns=no_such_column"
  expect "empty column" 400 "$R/rows?ids=0&columns=,"
  expect "unknown format" 400 "$R/rows?ids=0&format=xml"
  python_ids() { node -e 'console.log(Array.from({length:+process.argv[1]},(_,i)=>i%7).join(","))' "$1"; }
  python_ids 100000 > "$WORK/ids100k"
  expect_in "100k ids in GET" "413 414" "$R/rows" -G --data-urlencode "ids@$WORK/ids100k"
  node -e 'console.log(JSON.stringify({ids:Array.from({length:60000},(_,i)=>i%7)}))' > "$WORK/ids60k.json"
  expect "too many ids in POST" 413 "$R/rows" -X POST -H 'Content-Type: application/json' --data-binary "@$WORK/ids60k.json"
  # One 38 KB row asked for 10,000 times: refused by max_response_bytes before the copies
  # are built (the take is bounded, not only the encoded answer).
  node -e 'console.log(JSON.stringify({ids:Array(10000).fill(3)}))' > "$WORK/dup10k.json"
  expect "one large row 10k times" 413 "$URL/files/data/enc21/rows" -X POST -H 'Content-Type: application/json' --data-binary "@$WORK/dup10k.json"
  grep -q 'rows asked for hold over' "$WORK/body" && ok "refused by the take, before the copies" || bad "dup take message" "$(head -c 300 "$WORK/body")"
  expect "one large row 10k times, a file" 413 "$URL/files/$(node -e 'console.log(require("./tests/fixtures/index.json").fixtures.find(x=>x.name==="enc21").file.replace(/^tests\/fixtures\//,""))')/rows" -X POST -H 'Content-Type: application/json' --data-binary "@$WORK/dup10k.json"
  grep -q 'rows asked for hold over' "$WORK/body" && ok "a file's take is bounded too" || bad "dup file take message" "$(head -c 300 "$WORK/body")"
  head -c 2000000 /dev/zero | tr '\0' ' ' > "$WORK/big"
  expect "body too big" 413 "$R/rows" -X POST -H 'Content-Type: application/json' --data-binary "@$WORK/big"
  expect "body not json" 400 "$R/rows" -X POST -H 'Content-Type: application/json' -d '{"ids":[1,'
  expect "body negative id" 400 "$R/rows" -X POST -H 'Content-Type: application/json' -d '{"ids":[-1]}'
  expect "body bad columns" 400 "$R/rows" -X POST -H 'Content-Type: application/json' -d '{"ids":[1],"columns":"a"}'
  expect "body bad protobuf" 400 "$R/rows" -X POST -H 'Content-Type: application/x-protobuf' --data-binary 'garbage!'
  expect "DELETE rows" 405 "$R/rows" -X DELETE
  grep -q . "$WORK/body" && ok "405 has a body" || bad "405 body"
  expect "PUT rows" 405 "$R/rows" -X PUT -d x
  expect "POST describe" 405 "$R" -X POST -d x
  expect "GET connect" 405 "$URL/lanced.v1.RowService/Take"
  expect "connect bad content type" 415 "$URL/lanced.v1.RowService/Take" -X POST -H 'Content-Type: text/plain' -d x
  [[ $(cat "$WORK/body") == '{"code":"invalid_argument","message":"Content-Type must be application/proto or application/json"}' ]] \
    && ok "connect 415: a Connect error body" || bad "connect 415 body" "$(cat "$WORK/body")"
  expect "connect unknown method" 501 "$URL/lanced.v1.RowService/Nope" -X POST -H 'Content-Type: application/json' -d '{}'
  expect "connect not found" 404 "$URL/lanced.v1.RowService/Take" -X POST -H 'Content-Type: application/json' -d '{"path":"nope.lance","ids":[1]}'
  grep -q '"code":"not_found"' "$WORK/body" && ok "connect error body" || bad "connect error body" "$(cat "$WORK/body")"
fi
# utf8 values holding U+0000: JSON escapes them, protobuf refuses them (it would cut them at the NUL).
expect "NUL in a string, JSON" 200 "$URL/files/data/strnul21/rows?ids=0,1&format=json"
grep -qF '"s":"a\u0000b0"' "$WORK/body" && ok "NUL escaped in JSON" || bad "NUL escaped in JSON" "$(head -c 200 "$WORK/body")"
expect "NUL in a string, protobuf" 501 "$URL/files/data/strnul21/rows?ids=0,1&format=proto"
expect "NUL in a string, Connect FORMAT_PROTO" 501 "$URL/lanced.v1.RowService/Take" -X POST -H 'Content-Type: application/json' \
  -d '{"path":"data/strnul21","ids":[0,2],"format":"FORMAT_PROTO"}'
expect "NUL-free rows of it, protobuf" 200 "$URL/files/data/strnul21/rows?ids=2,3&format=proto"
# Accept by q (RFC 9110): q=0 is "not acceptable", a higher q wins, Arrow first at equal q.
accept_is() { # name accept-header want-content-type
  local ct; ct=$(curl -s -o /dev/null -w '%{content_type}' -H "Accept: $2" "$URL/files/data/strnul21/rows?ids=3")
  [[ $ct == "$3"* ]] && ok "Accept: $1" || bad "Accept: $1" "got $ct"
}
accept_is "arrow q=0" "application/json, application/vnd.apache.arrow.stream;q=0" application/json
accept_is "json over protobuf by q" "application/json;q=1, application/x-protobuf;q=0.1" application/json
accept_is "protobuf over json by q" "application/json;q=0.5, application/x-protobuf" application/x-protobuf
accept_is "equal q: arrow" "application/json, application/vnd.apache.arrow.stream" application/vnd.apache.arrow.stream
accept_is "wildcard" "*/*" application/json

# ---- paths -------------------------------------------------------------------------------------
expect "dotdot" 400 "$URL/files/../etc/passwd" --path-as-is
expect "dotdot rows" 400 "$URL/files/data/../../etc/passwd/rows?ids=1" --path-as-is
expect "encoded dotdot" 400 "$URL/files/%2e%2e/%2e%2e/etc/passwd" --path-as-is
expect "encoded slash dotdot" 400 "$URL/files/data%2f..%2f..%2fetc%2fpasswd" --path-as-is
expect "absolute" 400 "$URL/files//etc/passwd" --path-as-is
expect "NUL in path" 400 "$URL/files/a%00b.lance" --path-as-is
expect_in "symlinked dir to /etc" "403 404" "$URL/files/evil/passwd/rows?ids=0"
expect_in "symlink to /etc/passwd" "403 404" "$URL/files/passwd.lance/rows?ids=0"
if grep -q 'root:' "$WORK/body"; then bad "symlink leak" "body shows /etc/passwd"; else ok "no leak"; fi
expect "missing file" 404 "$URL/files/nope.lance/rows?ids=0"
expect "directory" 404 "$URL/files/data"
expect "not a lance file" 422 "$URL/files/garbage.lance/rows?ids=0"
expect "random bytes" 422 "$URL/files/random.lance"

# ---- slow clients: a half-sent request neither blocks others nor lives past the timeout ---
exec 7<>/dev/tcp/127.0.0.1/"$PORT"
printf 'GET /healthz HTTP/1.1\r\nHost: x\r\n' >&7
expect "healthz with a slow client" 200 "$URL/healthz"
t0=$SECONDS
if timeout 8 cat <&7 >/dev/null; then
  ok "slow client closed after $((SECONDS - t0))s"
else
  bad "slow client not closed within 8s"
fi
exec 7<&- 7>&-
exec 8<>/dev/tcp/127.0.0.1/"$PORT"
printf 'GARBAGE\r\n\r\n' >&8
timeout 5 cat <&8 > "$WORK/garbage-reply"
exec 8<&- 8>&-
# libmicrohttpd answers 400 or just closes; either way the connection ends and we go on.
[[ ! -s $WORK/garbage-reply ]] || head -1 "$WORK/garbage-reply" | grep -q ' 400' &&
  ok "garbage request line refused" || bad "garbage request" "$(head -c 100 "$WORK/garbage-reply")"
healthy "garbage request"

# ---- Arrow and Connect clients (node) ---------------------------------------------------------
if [[ -n $FILE ]]; then
  if node tests/integration/daemon_arrow.mjs "$URL" "$FILE" > "$WORK/arrow.out" 2>&1; then ok "arrow client"
  else bad "arrow client" "$(tail -5 "$WORK/arrow.out")"; fi
  # File version 2.0 (and legacy files) decode through its own tree (lib/layout/v20.c), dictionary columns are
  # re-encoded as dictionaries, maps written as Arrow maps: Arrow bodies of those fixtures
  # against Lance's answers.
  node -e 'for (const f of require("./tests/fixtures/index.json").fixtures) if (f.version === "2.0" || f.version === "legacy" || f.name.startsWith("dict") || f.name.startsWith("map")) console.log(f.file.replace(/^tests\/fixtures\//, "") + "\t" + f.answers)' > "$WORK/fx20"
  while IFS=$'\t' read -r f20 a20; do
    if node tests/integration/daemon_arrow_answers.mjs "$URL" "$f20" "$a20" > "$WORK/arrow20.out" 2>&1; then ok "$(tail -1 "$WORK/arrow20.out")"
    else bad "arrow bodies of 2.0 $f20" "$(tail -5 "$WORK/arrow20.out")"; fi
  done < "$WORK/fx20"
  GEN=$WORK/gen
  mkdir -p "$GEN"
  if protoc --plugin=protoc-gen-es=node_modules/.bin/protoc-gen-es --es_out="$GEN" \
       --es_opt=target=js -Iproto proto/lanced/v1/lanced.proto 2> "$WORK/protoc.err"; then
    # The generated module imports @bufbuild/protobuf; resolve it from the repository.
    ln -s "$REPO/node_modules" "$WORK/node_modules"
    cp tests/integration/daemon_connect.mjs "$WORK/"
    if node "$WORK/daemon_connect.mjs" "$URL" "$FILE" > "$WORK/connect.out" 2>&1; then
      ok "connect client"; [[ -n ${VERBOSE:-} ]] && cat "$WORK/connect.out"
    else bad "connect client" "$(tail -8 "$WORK/connect.out")"; fi
  else
    bad "protoc-gen-es" "$(tail -3 "$WORK/protoc.err")"
  fi
  healthy "clients"
fi

# ---- connections spread over the network threads (--workers 2) ----------------------------
# Six idle keep-alive connections, then /metrics on a seventh: the acceptor gives each new
# connection to the thread with the fewest, so the two threads hold 3 and 4 (MHD's own pool
# let whichever thread woke first take them, often all on one).
exec 5<>/dev/tcp/127.0.0.1/"$PORT" 6<>/dev/tcp/127.0.0.1/"$PORT" 7<>/dev/tcp/127.0.0.1/"$PORT"
exec 8<>/dev/tcp/127.0.0.1/"$PORT" 9<>/dev/tcp/127.0.0.1/"$PORT" 3<>/dev/tcp/127.0.0.1/"$PORT"
sleep 0.2
per=$(curl -s "$URL/metrics" | sed -n 's/^lanced_network_thread_connections{thread="[0-9]*"} //p' | sort -n | tr '\n' ' ')
[[ $per == "3 4 " ]] && ok "connections balanced over network threads ($per)" ||
  bad "connections balanced over network threads" "per-thread connections: '$per' (want '3 4 ')"
exec 3<&- 3>&- 5<&- 5>&- 6<&- 6>&- 7<&- 7>&- 8<&- 8>&- 9<&- 9>&-

# ---- SIGHUP reload --------------------------------------------------------------------------
if [[ -n $FILE ]]; then
  printf 'request_timeout_ms = 2000\nmax_ids_per_request = 3\n' > "$CONF"
  kill -HUP "$DPID"
  for _ in $(seq 1 40); do grep -q reloaded "$WORK/lanced.log" && break; sleep 0.05; done
  expect "limit after reload" 413 "$R/rows?ids=1,2,3,4"
  expect "under the reloaded limit" 200 "$R/rows?ids=1,2,3"
  printf 'bogus_key = 1\n' > "$CONF"
  kill -HUP "$DPID"; sleep 0.3
  expect "bad reload keeps config" 413 "$R/rows?ids=1,2,3,4"
fi

# ---- SIGTERM: exits 0 ------------------------------------------------------------------------
kill -TERM "$DPID"
rc=124
for _ in $(seq 1 100); do
  if ! kill -0 "$DPID" 2>/dev/null; then wait "$DPID"; rc=$?; break; fi
  sleep 0.05
done
[[ $rc == 0 ]] && ok "SIGTERM exits 0" || bad "SIGTERM" "exit status $rc"
grep -q 'stopped' "$WORK/lanced.log" && ok "drain logged" || bad "drain log"

# ---- connection limit: the excess is told 503 + Retry-After -------------------------------
start_daemon "$WORK/limit.log" --connection-limit 2 || bad "second daemon"
exec 5<>/dev/tcp/127.0.0.1/"$PORT"
exec 6<>/dev/tcp/127.0.0.1/"$PORT"
sleep 0.5
# Over the limit, connections with no request in progress for 250 ms make room (oldest
# first): the new request is answered, and an idle one was closed for it.
code=$(curl -s -o /dev/null -D "$WORK/hdr" -w '%{http_code}' "$URL/files/x.lance")
[[ $code != 503 && $code != 000 ]] && ok "over connection_limit an idle connection makes room ($code)" || bad "connection limit" "got $code"
closed=0
for fd in 5 6; do read -r -t 1 -u $fd _ ; [[ $? -eq 1 ]] && closed=$((closed + 1)); done # EOF = closed
[[ $closed -ge 1 ]] && ok "the oldest idle connection was closed ($closed of 2)" || bad "no idle connection closed"
exec 5<&- 5>&- 6<&- 6>&-
expect "healthz after limit" 200 "$URL/healthz"

# ---- sd_notify: READY=1, RELOADING=1 + READY=1 on SIGHUP, STOPPING=1 on SIGTERM -----------
if command -v python3 >/dev/null; then
  NS=$WORK/notify.sock
  python3 - "$NS" > "$WORK/notify.out" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(sys.argv[1]); s.settimeout(10)
got = []
try:
    while not any(m.startswith("STOPPING=1") for m in got):
        got.append(s.recv(4096).decode())
except socket.timeout:
    pass
print("|".join(m.split("\n")[0] for m in got))
PY
  NPID=$!
  for _ in $(seq 1 100); do [[ -S $NS ]] && break; sleep 0.05; done
  NOTIFY_SOCKET=$NS start_daemon "$WORK/notify.log" || bad "notify daemon"
  kill -HUP "$DPID"; sleep 0.3; kill -TERM "$DPID"
  wait "$NPID"
  [[ $(cat "$WORK/notify.out") == "READY=1|RELOADING=1|READY=1|STOPPING=1" ]] &&
    ok "sd_notify sequence" || bad "sd_notify sequence" "$(cat "$WORK/notify.out")"
fi

# ---- config checking -------------------------------------------------------------------------
"$LANCED" --root "$ROOT" --listen 127.0.0.1:0 --check-config >/dev/null 2>&1 && ok "check-config ok" || bad "check-config ok"
"$LANCED" --root "$ROOT/nope" --listen 127.0.0.1:0 --check-config >/dev/null 2>&1 && bad "check-config bad root" || ok "check-config bad root"
"$LANCED" --root "$ROOT" --listen nonsense --check-config >/dev/null 2>&1 && bad "check-config bad listen" || ok "check-config bad listen"
# A timeout past a day is refused: 2^64 - 1 ms wrapped to 0 s, libmicrohttpd's "no timeout"
for k in request-timeout-ms client-header-timeout-ms; do
  "$LANCED" --root "$ROOT" --listen 127.0.0.1:0 --$k 18446744073709551615 --check-config >/dev/null 2>&1 && bad "check-config $k 2^64-1" || ok "check-config refuses $k 2^64-1"
done
"$LANCED" --root "$ROOT" --listen 127.0.0.1:0 --max-inflight 99999999999 --check-config >/dev/null 2>&1 && bad "check-config huge max-inflight" || ok "check-config refuses a huge max-inflight"
"$LANCED" --config conf/lanced.conf --root "$ROOT" --check-config >/dev/null 2>&1 && ok "example config parses" || bad "example config parses"

# ---- datasets: daemon_datasets.sh runs its own daemon over dataset fixtures -------------------
if BIN=$BIN tests/integration/daemon_datasets.sh > "$WORK/datasets.out" 2>&1; then ok "datasets: $(tail -1 "$WORK/datasets.out")"
else bad "datasets" "$(grep -E '^FAIL' "$WORK/datasets.out" | head -10; tail -1 "$WORK/datasets.out")"; fi
# Shallow clones (tests/fixtures/clones, `make clone-fixtures`): daemon_clones.sh, its own daemons.
if BIN=$BIN tests/integration/daemon_clones.sh > "$WORK/clones.out" 2>&1; then ok "clones: $(tail -1 "$WORK/clones.out")"
else bad "clones" "$(grep -E '^FAIL' "$WORK/clones.out" | head -10; tail -1 "$WORK/clones.out")"; fi

it_finish
