#!/usr/bin/env bash
# install.bash - install flamediag under PREFIX (bin/flamediag + lib/flamediag/{bin,lib,playbooks}).
#
# USAGE: bash lib/install.bash PREFIX
#    eg,
#        make install PREFIX=/usr/local
# The installed tree gets its own .venv for diagnosis when python3 can make one;
# capture needs only bash and the tools it drives.
set -euo pipefail

prefix=${1:?usage: install.bash PREFIX}
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dest=$prefix/lib/flamediag

mkdir -p "$dest" "$prefix/bin"
rm -rf "${dest:?}/bin" "${dest:?}/lib" "${dest:?}/playbooks"
cp -R "$src/bin" "$src/lib" "$src/playbooks" "$dest/"
cp "$src/requirements.txt" "$dest/"
find "$dest/lib" -name __pycache__ -prune -exec rm -rf {} +
ln -sfn "$dest/bin/flamediag" "$prefix/bin/flamediag"

if [ -z "${FLAMEDIAG_INSTALL_NO_VENV:-}" ] && python3 -m venv "$dest/.venv" 2>/dev/null; then
	"$dest/.venv/bin/python" -m pip install -q --disable-pip-version-check -r "$dest/requirements.txt" \
		|| echo "install: could not install Python libraries into $dest/.venv; diagnose needs: pip install -r $dest/requirements.txt" >&2
else
	echo "install: no Python venv created; diagnose will use python3 (needs jinja2, PyYAML, jsonschema)" >&2
fi
echo "installed: $prefix/bin/flamediag -> $dest/bin/flamediag"
