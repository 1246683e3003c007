#!/bin/sh
# Installs the Debian packages a make target needs, when they are missing.
# usage: scripts/deps.sh build|check|bench
# As root it runs apt-get; otherwise it prints the exact apt-get line and
# fails, so that nothing half-works.
set -eu

build="gcc g++ make cmake pkg-config libcmocka-dev libunwind-dev libzstd-dev libdw-dev libelf-dev clang libclang-rt-14-dev libcairo2-dev zlib1g-dev libxxhash-dev"
check="$build python3 perl git sqlite3 xz-utils gawk binutils chromium nodejs valgrind protobuf-compiler poppler-utils libjemalloc2 libtcmalloc-minimal4 libmimalloc2.0 strace"
bench="$check heaptrack time liblz4-dev"

case "${1:-build}" in
  build) want=$build ;;
  check) want=$check ;;
  bench) want=$bench ;;
  *) echo "usage: $0 build|check|bench" >&2; exit 2 ;;
esac

missing=""
for pkg in $want; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing="$missing $pkg"
  fi
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
  echo "heaphook needs these Debian packages:$missing" >&2
  echo "run: sudo apt-get install -y$missing" >&2
  exit 1
fi
echo "installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
# shellcheck disable=SC2086
apt-get install -y -q $missing >/dev/null 2>&1 || {
  apt-get update -q >/dev/null
  apt-get install -y -q $missing >/dev/null
}
