#!/usr/bin/env bash
# Installs what the build and tests need and is missing: Debian packages (apt-get update
# once, only when something is missing) and the npm packages pinned in package-lock.json.
# Does nothing when everything is present.
set -euo pipefail
cd "$(dirname "$0")/.."

# Build: the compiler and the libraries. Tests: clang-format (make format-check), protoc (Connect client generation), node/npm
# (the real Lance writer, apache-arrow, the Connect client), curl, python3 (load generator
# self-test), systemd (systemd-analyze verify), prometheus (promtool checks /metrics), the Python client's numpy, protobuf, pytest,
# torch, setuptools and pip (clients/python), groff (the man pages render without warnings). Benchmarks: fio, gnuplot, nginx, wrk.
PKGS=(build-essential pkg-config libmicrohttpd-dev libnghttp2-dev libprotobuf-c-dev protobuf-c-compiler
      libzstd-dev liblz4-dev liburing-dev libjansson-dev zlib1g-dev libsystemd-dev libcurl4-openssl-dev check clang-format protobuf-compiler nodejs npm curl
      python3 python3-numpy python3-protobuf python3-pytest python3-torch python3-setuptools python3-pip
      python3-grpcio python3-grpc-tools python3-hpack
      systemd prometheus fio gnuplot-nox nginx-light wrk nghttp2-client groff-base
      ${LANCED_EXTRA_PKGS:-})
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# node/npm may come from outside Debian (as on the development image); accept those.
if command -v node >/dev/null && command -v npm >/dev/null; then
  tmp=(); for p in "${missing[@]}"; do [[ $p == nodejs || $p == npm ]] || tmp+=("$p"); done
  missing=("${tmp[@]}")
fi
if ((${#missing[@]})); then
  echo "deps: installing ${missing[*]}"
  SUDO=""; [[ $(id -u) -eq 0 ]] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# npm packages: install when node_modules is missing or older than the lockfile.
if [[ -f package-lock.json ]]; then
  stamp=node_modules/.lanced-stamp
  if [[ ! -f $stamp || package-lock.json -nt $stamp ]]; then
    echo "deps: npm ci"
    npm ci --no-audit --no-fund --loglevel=error
    touch "$stamp"
  fi
fi
