#!/usr/bin/env bash
# capture - placeholder until the capture issue lands.
usage() {
	cat <<-'END'
	USAGE: flamediag capture [-d SECONDS] [-F HZ] [-o DIR]
	   eg,
	       sudo flamediag capture -d 30
	END
}
case ${1:-} in
-h | --help) usage; exit 0 ;;
*) usage >&2; exit 2 ;;
esac
