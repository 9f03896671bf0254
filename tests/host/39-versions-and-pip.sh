#!/bin/bash
# The project's version is kept in one place, dkms.conf's PACKAGE_VERSION:
# nswapd --version and nswap2l --version say it.  The nswap2l command
# installs with pip (tools/nswap2l/pyproject.toml) into a virtual
# environment, with no network (the system's setuptools), and runs from
# there.
source "$(dirname "$0")/lib.sh"

version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$REPO_DIR/dkms.conf")
[[ -n $version ]] || fail "no PACKAGE_VERSION in dkms.conf"
got=$("$NSWAPD" --version)
[[ $got == "nswapd $version "* ]] || fail "nswapd --version says '$got', dkms.conf $version"
got=$("$REPO_DIR/tools/nswap2l/nswap2l" --version)
[[ $got == "nswap2l $version" ]] || fail "nswap2l --version says '$got', dkms.conf $version"
log "version $version"

# Debian's python3 (python3-venv, python3-setuptools), whatever python3
# comes first in PATH
PY=/usr/bin/python3
"$PY" -m venv --system-site-packages "$WORK/venv" >"$WORK/venv.out" 2>&1 ||
	fail "python3 -m venv: $(tail -n 3 "$WORK/venv.out") (apt-get install python3-venv)"
# pip builds in the directory it is given: a copy, not the source tree
cp -r "$REPO_DIR/tools/nswap2l" "$WORK/src"
"$WORK/venv/bin/pip" install --no-build-isolation --no-index "$WORK/src" >"$WORK/pip.out" 2>&1 ||
	fail "pip install: $(tail -n 5 "$WORK/pip.out")"
got=$("$WORK/venv/bin/nswap2l" --version)
[[ $got == "nswap2l $version" ]] || fail "the pip-installed nswap2l --version says '$got'"
where=$("$WORK/venv/bin/python" -c 'import nswap2l_cmd; print(nswap2l_cmd.__file__)')
[[ $where == "$WORK/venv/"* ]] || fail "the installed command imports its package from $where"
"$WORK/venv/bin/nswap2l" status --help | grep -q "^usage: nswap2l status" ||
	fail "the pip-installed nswap2l status --help"
echo "ok"
