#!/usr/bin/env bash
# liblance installs as a library (issue 17, point 1): `make install DESTDIR=…` puts lance.h,
# liblance.a and the versioned liblance.so (SONAME liblance.so.0) with lance.pc in place; a
# program outside the tree builds with `cc $(pkg-config --cflags --libs lance)` and, run
# against the installed library, answers what `lancectl take` answers for the same row.
# Usage: BIN=<bin dir> [MAKE_VARS=...] tests/integration/install_lib.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=${BIN:-bin}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; }
D=$TMP/dest
make -s install-lib DESTDIR="$D" PREFIX=/usr/local ${MAKE_VARS:-} > "$TMP/install.log" 2>&1 || cat "$TMP/install.log"
L=$D/usr/local/lib
for f in "$D/usr/local/include/lance/lance.h" "$D/usr/local/include/lance/arrow/abi.h" "$L/liblance.a" \
         "$L/liblance.so.0.1.0" "$L/liblance.so.0" "$L/liblance.so" "$L/pkgconfig/lance.pc"; do
  [[ -e $f ]] || bad "not installed: ${f#"$D"}"
done
soname=$(readelf -d "$L/liblance.so.0.1.0" 2>/dev/null | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[[ $soname == liblance.so.0 ]] && ok "SONAME liblance.so.0" || bad "SONAME: '$soname'"
export PKG_CONFIG_SYSROOT_DIR=$D PKG_CONFIG_PATH=$L/pkgconfig
flags=$(pkg-config --cflags --libs lance 2>&1) || bad "pkg-config: $flags"
if cc -o "$TMP/use_lance" tests/integration/install/use_lance.c $flags 2> "$TMP/cc.log"; then
  ok "an outside program builds with \$(pkg-config --cflags --libs lance)"
else
  bad "build: $(head -5 "$TMP/cc.log")"
fi
ROOT=$(scripts/sample-root.sh "$TMP/root")
want=$("$BIN/lancectl" take "$ROOT/sample.lance" --ids 7 --columns i64 2>&1 | tr -d '\n')
got=$(LD_LIBRARY_PATH=$L "$TMP/use_lance" "$ROOT/sample.lance" 7 i64 2>&1)
[[ $(sed -n 2p <<<"$got") == "$want" ]] && ok "it reads row 7 as lancectl take does: $want" || bad "got '$got', want '$want'"
n=$("$BIN/lancectl" inspect "$ROOT/sample.lance" 2>/dev/null | sed -n 's/.*rows[: ]*\([0-9][0-9]*\).*/\1/p' | head -1)
[[ $(sed -n 1p <<<"$got") == "rows ${n:-?}" ]] && ok "row count $n" || bad "row count: $(sed -n 1p <<<"$got") vs inspect ${n:-?}"
# ldd's output is captured first: under pipefail, `ldd | grep -q` fails whenever grep exits on its
# match before ldd has finished writing (ldd then dies of SIGPIPE, status 141) — it did in CI.
linked=$(LD_LIBRARY_PATH=$L ldd "$TMP/use_lance" 2>&1)
[[ $linked == *"liblance.so.0 => $L/liblance.so.0 "* ]] && ok "linked against the installed liblance.so.0" \
  || bad "ldd: $(grep lance <<<"$linked")"
echo "install: $pass passed, $fail failed"
[[ $fail -eq 0 ]]
