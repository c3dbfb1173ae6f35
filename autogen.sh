#!/bin/sh
# Regenerates the build system. Automake ships tap-driver.sh but does not copy it
# by itself, so it is taken from the installed automake here.
set -e
cd "$(dirname "$0")"
mkdir -p build-aux m4
autoreconf -fi
for d in /usr/share/automake-*; do
  [ -f "$d/tap-driver.sh" ] && cp -f "$d/tap-driver.sh" build-aux/ && break
done
[ -f build-aux/tap-driver.sh ] || { echo "autogen.sh: tap-driver.sh not found (install automake)" >&2; exit 1; }
