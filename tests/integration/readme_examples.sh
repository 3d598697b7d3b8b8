#!/usr/bin/env bash
# Runs the README's example commands as printed (every `curl …` and `bin/lancectl …` line of its
# sh blocks) against a daemon serving the sample root the way `make run` does, and checks each
# exits 0 and prints no error body. Usage: BIN=<bin dir> tests/integration/readme_examples.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=${BIN:-bin}
PORT=8080
if curl -s -o /dev/null "http://127.0.0.1:$PORT/healthz" 2>/dev/null; then
  echo "readme_examples: SKIP (something already listens on 127.0.0.1:$PORT)"; exit 0
fi
ROOT=$(scripts/sample-root.sh build/sample)
"$BIN/lanced" --root "$ROOT" --listen "127.0.0.1:$PORT" > build/readme-lanced.log 2>&1 &
PID=$!
TMPD=$(mktemp -d)
trap 'kill $PID 2>/dev/null; wait $PID 2>/dev/null; rm -rf "$TMPD"' EXIT
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$PORT/healthz" && break; sleep 0.1; done
pass=0 fail=0
while IFS= read -r cmd; do
  cmd=${cmd//bin\/lancectl/$BIN/lancectl}
  out=$(bash -c "$cmd" 2>&1); rc=$?
  if [[ $rc -eq 0 && -n $out && $out != *'"error"'* && $out != *'"code":'* ]]; then
    pass=$((pass + 1)); echo "ok   $(head -c 90 <<<"$cmd")"
  else
    fail=$((fail + 1)); echo "FAIL $cmd"; echo "     → rc=$rc $(head -c 300 <<<"$out")"
  fi
done < <(awk '/^```sh/{f=1;next} /^```/{f=0} f && /^(curl|bin\/lancectl) /' README.md)
# Every `GET /…` the prose names (the headline's included) answers 200 on the same data.
while IFS= read -r path; do
  code=$(curl -s -o "$TMPD/body" -w '%{http_code}' "http://127.0.0.1:$PORT$path")
  if [[ $code == 200 ]]; then
    pass=$((pass + 1)); echo "ok   GET $path (prose)"
  else
    fail=$((fail + 1)); echo "FAIL GET $path (prose) answered $code: $(head -c 300 "$TMPD/body")"
  fi
done < <(grep -o '`GET /[^`]*`' README.md | sed 's/^`GET //; s/`$//' | sort -u)
# "lancectl take prints exactly the body": the same bytes, no newline added, for a pipe.
if cmp -s <("$BIN/lancectl" take build/sample/sample.lance --ids 17,90210,5 --columns i64,s,l) \
          <(curl -s "http://127.0.0.1:$PORT/files/sample.lance/rows?ids=17,90210,5&columns=i64,s,l"); then
  pass=$((pass + 1)); echo "ok   lancectl take prints exactly the daemon's body (byte for byte)"
else
  fail=$((fail + 1)); echo "FAIL lancectl take and the daemon's body differ"
fi
echo "readme examples: $pass passed, $fail failed"
[[ $fail -eq 0 && $pass -gt 0 ]]
