#!/usr/bin/env bash
# `make run`: serve the bundled sample data with the freshly built daemon on 127.0.0.1:8080
# (PORT to change) and print curl lines to try. Usage: scripts/run-sample.sh BIN_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-bin}
PORT=${PORT:-8080}
ROOT=$(scripts/sample-root.sh build/sample)
cat <<MSG
lanced: serving $ROOT on http://127.0.0.1:$PORT (Ctrl-C to stop). Try:
  curl 'http://127.0.0.1:$PORT/files/sample.lance/rows?ids=17,90210,5&columns=i64,s,l'
  curl 'http://127.0.0.1:$PORT/files/sample.lance'
  curl -H 'Content-Type: application/json' -d '{"path":"sample.lance","ids":["1","2"],"columns":["i32","s"]}' http://127.0.0.1:$PORT/lanced.v1.RowService/Take
MSG
exec "$BIN/lanced" --root "$ROOT" --listen "127.0.0.1:$PORT"
