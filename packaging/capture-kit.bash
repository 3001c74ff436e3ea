#!/usr/bin/env bash
# capture-kit.bash - build dist/flamediag-capture-<version>.tar.gz: the bash-only part of flamediag
#                    (capture, watch, collectors) for production hosts without Python.
#
# USAGE: bash packaging/capture-kit.bash [DIST_DIR=dist]
#    eg,
#        make dist          # also builds the sdist and the wheel, then dist/SHA256SUMS
#
# The tarball has one top directory flamediag-capture-<version>/ holding bin/flamediag (the same
# dispatcher as the checkout; Python subcommands say they are not in the kit), lib/ (capture.bash,
# watch.bash, capture/*.bash, collectors.tsv, VERSION), doc/, README.md and SHA256SUMS over every
# other file. Reproducible: sorted members, owner 0, mtime of the last commit, gzip -n.
set -euo pipefail

src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dist=${1:-$src/dist}
version=$(cat "$src/lib/VERSION")
top=flamediag-capture-$version
stage=$(mktemp -d "${TMPDIR:-/tmp}/flamediag-kit.XXXXXX")
trap 'rm -rf "$stage"' EXIT

epoch=${SOURCE_DATE_EPOCH:-$(git -C "$src" log -1 --format=%ct 2>/dev/null || date +%s)}
kit=$stage/$top
mkdir -p "$kit/bin" "$kit/lib/capture" "$kit/doc" "$dist"
install -m 755 "$src/bin/flamediag" "$kit/bin/flamediag"
shopt -s nullglob
# the shell subcommands (lib/<sub>.bash) and what they read; install.bash installs a checkout
for f in "$src"/lib/*.bash; do
	[ "${f##*/}" = install.bash ] || install -m 644 "$f" "$kit/lib/"
done
install -m 644 "$src/lib/VERSION" "$src/lib/collectors.tsv" "$kit/lib/"
install -m 644 "$src"/lib/capture/*.bash "$kit/lib/capture/"
for f in capture watch bundle-format; do
	[ -f "$src/doc/$f.md" ] && install -m 644 "$src/doc/$f.md" "$kit/doc/"
done
sed "s/@VERSION@/$version/g" "$src/packaging/capture-kit-README.md" >"$kit/README.md"
(cd "$kit" && find . -type f -printf '%P\n' | LC_ALL=C sort | xargs sha256sum >"$stage/SHA256SUMS") && mv "$stage/SHA256SUMS" "$kit/"

tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" -C "$stage" -cf - "$top" |
	gzip -n -9 >"$dist/$top.tar.gz.partial"
mv -f "$dist/$top.tar.gz.partial" "$dist/$top.tar.gz"
echo "$dist/$top.tar.gz"
