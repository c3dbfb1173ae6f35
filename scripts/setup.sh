#!/bin/sh
# Installs the Debian packages relay-tune needs to build and test. Idempotent and
# quiet: it prints nothing and touches nothing when every package is present.
set -e
PKGS="build-essential autoconf automake libtool pkg-config
  libsqlite3-dev libjansson-dev zlib1g-dev libpapi-dev libxgboost-dev
  ocl-icd-opencl-dev opencl-headers pocl-opencl-icd libopenblas-dev libdnnl-dev
  libprotobuf-c-dev protobuf-c-compiler libonnx-dev libonnx-testdata"
missing=
for p in $PKGS; do
  st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  case "$st" in *" installed") ;; *) missing="$missing $p" ;; esac
done
[ -z "$missing" ] && exit 0
echo "setup: installing$missing"
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
