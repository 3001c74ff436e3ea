#!/usr/bin/env bash
# deb.bash - build dist/flamediag_<version>_all.deb with dpkg-deb: the tree under
#            /usr/lib/flamediag (bin/, lib/, playbooks/), /usr/bin/flamediag, the systemd unit.
#
# USAGE: bash packaging/deb.bash [DIST_DIR=dist]
#    eg,
#        make deb && sudo dpkg -i dist/flamediag_*_all.deb
#
# Diagnosis uses the system python3 with Debian's python3-jinja2, python3-yaml,
# python3-jsonschema and python3-markdown-it (Recommends, so a capture-only host installs without them).
set -euo pipefail

src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dist=${1:-$src/dist}
version=$(cat "$src/lib/VERSION")
stage=$(mktemp -d "${TMPDIR:-/tmp}/flamediag-deb.XXXXXX")
trap 'rm -rf "$stage"' EXIT
root=$stage/root
dest=$root/usr/lib/flamediag

mkdir -p "$root/DEBIAN" "$dest/lib" "$root/usr/bin" "$root/usr/share/doc/flamediag" "$root/lib/systemd/system" "$dist"
cp -R "$src/bin" "$src/playbooks" "$dest/"
cp -R "$src/lib/flamediag" "$src/lib/capture" "$dest/lib/"
cp "$src/lib/VERSION" "$src/lib/collectors.tsv" "$dest/lib/"
for f in "$src"/lib/*.bash; do
	[ "${f##*/}" = install.bash ] || cp "$f" "$dest/lib/"
done
find "$dest" -name __pycache__ -prune -exec rm -rf {} +
ln -s ../lib/flamediag/bin/flamediag "$root/usr/bin/flamediag"
shopt -s nullglob
for f in "$src"/contrib/systemd/*.service; do cp "$f" "$root/lib/systemd/system/"; done
cp "$src/README.md" "$root/usr/share/doc/flamediag/"
cp -R "$src/doc/." "$root/usr/share/doc/flamediag/"
chmod -R u=rwX,go=rX "$root"
chmod 755 "$dest/bin/flamediag"

installed_kb=$(du -sk "$root" --exclude=DEBIAN | cut -f1)
maintainer="${DEBFULLNAME:-flamediag maintainers} <${DEBEMAIL:-root@localhost}>"
sed -e "s/@VERSION@/$version/" -e "s/@SIZE@/$installed_kb/" -e "s/@MAINTAINER@/$maintainer/" "$src/packaging/deb-control" >"$root/DEBIAN/control"
install -m 755 "$src/packaging/deb-prerm" "$root/DEBIAN/prerm"

out=$dist/flamediag_${version}_all.deb
dpkg-deb --root-owner-group -Zgzip --build "$root" "$out.partial" >/dev/null
mv -f "$out.partial" "$out"
echo "$out"
