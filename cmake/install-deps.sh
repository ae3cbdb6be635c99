#!/bin/sh
# Installs the Debian 12 packages the build needs. Idempotent: apt-get skips what is there.
set -eu
# clang, libclang-rt-14-dev (libFuzzer and the sanitizer runtimes) and llvm (llvm-symbolizer, for
# readable reports) build and run .ci/run's sanitizer and fuzz build.
# libpq-dev builds catalog::postgres; postgresql-15 is the server its tests start (initdb, pg_ctl).
# libutf8proc-dev (Unicode normalization, MIT-style licence) and libstemmer-dev (Snowball
# stemmers, BSD) analyse the words of search; libsqlite3-dev is the baseline (FTS5) the search
# benchmark measures against.
# doxygen builds the API reference (target docs) and checks every public declaration has its
# comment (ctest api_reference).
# lld links the project's programs (CATALOG_USE_LLD).
# libcli11-dev parses the command lines of the tools (header-only, build time only).
# lmdb-utils (mdb_dump, mdb_load) is the baseline catalog-bench measures catalog-admin's export and
# import against; the ctest smoke run of the bench runs it too, and the tools' tests load a store
# an older version wrote with mdb_load.
# groff-base renders the man pages (ctest man_pages).
# lintian checks the Debian packages (ctest package_deb).
packages="libboost1.81-dev libboost-json1.81-dev libboost-url1.81-dev liblmdb-dev catch2 libssl-dev ninja-build cmake g++ curl pkg-config libpq-dev postgresql-15 clang libclang-rt-14-dev llvm lmdb-utils libutf8proc-dev libstemmer-dev libsqlite3-dev doxygen libcli11-dev lld groff-base lintian"
missing=""
for p in $packages; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # shellcheck disable=SC2086
  apt-get install -y -qq $missing
fi
