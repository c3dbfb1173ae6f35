#!/bin/sh
# Installs the Debian packages relay-tune needs to build and test. Idempotent and
# quiet: it prints nothing and touches nothing when every package is present.
set -e
PKGS="build-essential autoconf automake libtool pkg-config
  libsqlite3-dev sqlite3 libjansson-dev zlib1g-dev libpapi-dev libxgboost-dev
  ocl-icd-opencl-dev opencl-headers pocl-opencl-icd libopenblas-dev libdnnl-dev
  libmicrohttpd-dev libjs-chart.js chromium
  libprotobuf-c-dev protobuf-c-compiler libonnx-dev libonnx-testdata
  libopenmpi-dev openmpi-bin"
missing=
for p in $PKGS; do
  st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  case "$st" in *" installed") ;; *) missing="$missing $p" ;; esac
done
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
if [ -n "$missing" ]; then
    echo "setup: installing$missing"
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
# the dashboard's browser test drives Debian's chromium through playwright-core
# (npm), kept in a git-ignored folder of the tree; any Node.js with npm will do
root=$(cd "$(dirname "$0")/.." && pwd)
PLAYWRIGHT=playwright-core@1.65.1
if [ ! -f "$root/tests/dashboard/node_modules/playwright-core/package.json" ]; then
    if ! command -v npm >/dev/null 2>&1; then
        echo "setup: installing nodejs npm"
        $SUDO apt-get update -qq
        $SUDO apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
    fi
    echo "setup: installing $PLAYWRIGHT for the browser test"
    npm install --silent --no-save --no-package-lock --no-audit --no-fund --prefix "$root/tests/dashboard" "$PLAYWRIGHT" >/dev/null
fi
