#!/bin/bash
# make deb: the Debian packages build from the tree and lintian finds no
# error in them; installed into a scratch root (dpkg -x), nswapd --help,
# nswap2l --version and every manual page work from there, the DKMS package
# holds every source its Kbuild names and its dkms.conf, and the generator
# finds the command where the package put it.  make -C tools uninstall
# takes back what make -C tools install put in place.
source "$(dirname "$0")/lib.sh"

version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$REPO_DIR/dkms.conf")
make -C "$REPO_DIR" deb >"$WORK/deb.log" 2>&1 ||
	fail "make deb: $(grep -E '^(E|W): |error:|dpkg-buildpackage: error|Error [0-9]' "$WORK/deb.log" | head -n 5)"
grep -E '^[EW]: ' "$WORK/deb.log" | sed 's/^/# lintian: /' || true
ROOT=$WORK/root
for pkg in dm-nswap2l-dkms nswapd nswap2l; do
	deb=$(ls "$REPO_DIR"/build/deb/${pkg}_"$version"_*.deb 2>/dev/null)
	[[ -f $deb ]] || fail "no $pkg package in build/deb: $(ls "$REPO_DIR/build/deb")"
	dpkg -x "$deb" "$ROOT" || fail "dpkg -x $deb"
done
"$ROOT/usr/sbin/nswapd" --help | grep -q -- "--listen ADDR:PORT" || fail "the packaged nswapd --help"
[[ $("$ROOT/usr/sbin/nswapd" --version) == "nswapd $version "* ]] || fail "the packaged nswapd --version"
[[ $("$ROOT/usr/sbin/nswap2l" --version) == "nswap2l $version" ]] || fail "the packaged nswap2l --version"
for page in man8/nswapd.8 man8/nswap2l.8 man5/nswap2l.conf.5 man7/dm-nswap2l.7; do
	LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$ROOT/usr/share/man/$page.gz" >/dev/null 2>"$WORK/man.err" ||
		fail "man -l $page: $(cat "$WORK/man.err")"
	[[ ! -s $WORK/man.err ]] || fail "man -l $page warns: $(head -n 2 "$WORK/man.err")"
done
src=$ROOT/usr/src/dm-nswap2l-$version
[[ -f $src/dkms.conf ]] || fail "no dkms.conf in $src"
for obj in $(sed -n 's/\\$//; s/^dm-nswap2l-y := //p; s/^\t\t//p' "$REPO_DIR/Kbuild" | tr ' ' '\n' | grep '\.o$'); do
	[[ -f $src/${obj%.o}.c ]] || fail "the DKMS package has no ${obj%.o}.c"
done
[[ -f $ROOT/etc/default/nswapd && -f $ROOT/lib/systemd/system/nswapd.service ]] ||
	fail "nswapd's unit or /etc/default/nswapd missing"
grep -q "^ExecStart=/usr/sbin/nswapd " "$ROOT/lib/systemd/system/nswapd.service" ||
	fail "nswapd.service runs $(grep ^ExecStart "$ROOT/lib/systemd/system/nswapd.service")"
[[ -f $ROOT/usr/lib/sysusers.d/nswapd.conf ]] || fail "no sysusers.d entry for the group nswapd"
dpkg-deb -e "$(ls "$REPO_DIR"/build/deb/nswapd_"$version"_*.deb)" "$WORK/nswapd.control" || fail "dpkg-deb -e nswapd"
grep -q "systemd-sysusers" "$WORK/nswapd.control/postinst" || fail "nswapd's postinst does not make its group"
gen=$ROOT/usr/lib/systemd/system-generators/nswap2l-generator
grep -q '^NSWAP2L = "/usr/sbin/nswap2l"$' "$gen" || fail "the generator names $(grep '^NSWAP2L =' "$gen")"
log "$(cd "$REPO_DIR/build/deb" && ls ./*.deb | xargs -n1 basename | tr '\n' ' ')"

# without packages: make install under PREFIX, and uninstall takes back all
# but /etc (the units under PREFIX too, where systemd reads them)
make -s -C "$REPO_DIR/tools" install DESTDIR="$WORK/inst" PREFIX=/usr/local >"$WORK/inst.log" 2>&1 ||
	fail "make -C tools install: $(tail -n 3 "$WORK/inst.log")"
[[ -f $WORK/inst/usr/local/lib/systemd/system/nswapd.service &&
	-f $WORK/inst/usr/local/lib/sysusers.d/nswapd.conf ]] || fail "no unit or sysusers.d file under PREFIX"
make -s -C "$REPO_DIR/tools" uninstall DESTDIR="$WORK/inst" PREFIX=/usr/local >>"$WORK/inst.log" 2>&1 ||
	fail "make -C tools uninstall: $(tail -n 3 "$WORK/inst.log")"
left=$(cd "$WORK/inst" && find . -type f | grep -v '^\./etc/' || true)
[[ -z $left ]] || fail "uninstall left $left"
echo "ok"
