# python.bash - which Python runs flamediag's Python subcommands (sourced by bin/flamediag and
# lib/capture.bash; needs FLAMEDIAG_HOME).
# shellcheck shell=bash

# flamediag_python -> the interpreter: $FLAMEDIAG_PYTHON, else the checkout's (or install's)
# .venv, else python3 on PATH; prints nothing (and fails) when there is none.
flamediag_python() {
	local py
	if [ -n "${FLAMEDIAG_PYTHON:-}" ]; then
		py=$FLAMEDIAG_PYTHON
	elif [ -x "$FLAMEDIAG_HOME/.venv/bin/python" ]; then
		py=$FLAMEDIAG_HOME/.venv/bin/python
	else
		py=python3
	fi
	command -v "$py" 2>/dev/null
}
