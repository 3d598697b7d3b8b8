#!/usr/bin/env bash
# `make run`: serve the bundled sample data (tests/fixtures) with the freshly built daemon on
# 127.0.0.1:8080 and print a curl line to try. Usage: scripts/run-sample.sh BIN_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-bin}
ROOT=tests/fixtures
PORT=${PORT:-8080}
FILE=""
if [[ -f $ROOT/index.json ]] && command -v node >/dev/null; then
  FILE=$(node -e 'const d=require("./tests/fixtures/index.json");const f=(d.fixtures||[])[0];
    if(f&&f.file)console.log(f.file.replace(/^tests\/fixtures\//,""))')
fi
if [[ -z $FILE ]]; then
  FILE=$(cd "$ROOT" && find . -name '*.lance' -type f 2>/dev/null | sort | head -1 | sed 's|^\./||')
fi
echo "lanced: serving $ROOT on http://127.0.0.1:$PORT (Ctrl-C to stop)"
if [[ -n $FILE ]]; then
  echo "try:"
  echo "  curl 'http://127.0.0.1:$PORT/files/$FILE/rows?ids=0,5,9'"
  echo "  curl 'http://127.0.0.1:$PORT/files/$FILE'"
else
  echo "no sample data yet (make fixtures); try: curl http://127.0.0.1:$PORT/healthz"
fi
exec "$BIN/lanced" --root "$ROOT" --listen "127.0.0.1:$PORT"
