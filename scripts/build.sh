#!/bin/sh
# One step from a fresh clone to a built relay-tune: install missing Debian
# packages, generate and configure the build (once), compile. Extra arguments go
# to ./configure (for example --enable-sanitizers).
set -e
cd "$(dirname "$0")/.."
scripts/setup.sh
[ -x configure ] && [ -f build-aux/tap-driver.sh ] || ./autogen.sh
[ -f Makefile ] && [ $# -eq 0 ] || ./configure -q "$@"
make -j"$(nproc)" -s
