#!/usr/bin/env bash
# Builds the sample data root that `make run` serves and the README examples use, with stable
# names: build/sample/sample.lance (a 100k-row data file of the fixtures, 33 columns) and
# build/sample/embeddings.lance. Hard links, so nothing is copied and the fixtures' names
# (which carry the writer's random ids) can change without breaking the examples.
# Usage: scripts/sample-root.sh [DIR]   (prints DIR)
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${1:-build/sample}
rm -rf "$DIR"
mkdir -p "$DIR"
link() { # name fixture
  local f
  f=$(ls tests/fixtures/data/"$2"/data/*.lance 2>/dev/null | head -1)
  [[ -n $f ]] || { echo "sample-root: fixture $2 is missing (make fixtures)" >&2; exit 1; }
  ln "$f" "$DIR/$1" 2>/dev/null || cp "$f" "$DIR/$1"
}
link sample.lance core21
link embeddings.lance emb21
if [[ -d tests/fixtures/datasets/deletions_v22.lance ]]; then
  cp -al tests/fixtures/datasets/deletions_v22.lance "$DIR/train.lance" 2>/dev/null || cp -a tests/fixtures/datasets/deletions_v22.lance "$DIR/train.lance"
fi
echo "$DIR"
