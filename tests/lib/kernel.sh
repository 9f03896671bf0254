# shellcheck shell=bash
# Guest kernel fetching: download linux-image-$KVER with `apt-get download`
# into a cache directory and extract it with `dpkg-deb -x` (never installed
# into the host's /boot).  Sourced by tests/run.
#
#   fetch_kernel KVER CACHE_ROOT   -> sets KERNEL_ROOT (extracted tree) and
#                                     KERNEL_IMAGE (vmlinuz path)

fetch_kernel() {
	local kver=$1 cache_root=$2
	local dir="$cache_root/$kver"
	local pkg="linux-image-$kver"
	KERNEL_ROOT="$dir/root"
	KERNEL_IMAGE="$KERNEL_ROOT/boot/vmlinuz-$kver"
	if [[ -f "$dir/.done" && -f "$KERNEL_IMAGE" && -d "$KERNEL_ROOT/lib/modules/$kver" ]]; then
		return 0
	fi
	msg "fetching guest kernel package $pkg into $dir"
	rm -rf "$dir"
	mkdir -p "$dir/dl"
	# apt-get download writes into the current directory.  As root it warns
	# that the _apt user cannot write there; harmless.
	if ! (cd "$dir/dl" && apt-get download "$pkg" >"$dir/download.log" 2>&1); then
		# stale or missing package lists on a fresh machine: update once, retry
		msg "apt-get download failed; running apt-get update and retrying"
		DEBIAN_FRONTEND=noninteractive apt-get update -q </dev/null >>"$dir/download.log" 2>&1 || true
		(cd "$dir/dl" && apt-get download "$pkg" >>"$dir/download.log" 2>&1) || true
	fi
	if ! ls "$dir"/dl/"${pkg}"_*.deb >/dev/null 2>&1; then
		cat "$dir/download.log" >&2
		die "apt-get download $pkg failed (is the package name right? try: apt-get update; apt-cache policy $pkg)"
	fi
	local deb
	deb=$(ls "$dir"/dl/"${pkg}"_*.deb 2>/dev/null | head -n1)
	[[ -n "$deb" ]] || die "apt-get download $pkg produced no .deb"
	mkdir -p "$KERNEL_ROOT"
	dpkg-deb -x "$deb" "$KERNEL_ROOT"
	[[ -f "$KERNEL_IMAGE" ]] || die "$deb has no boot/vmlinuz-$kver"
	[[ -d "$KERNEL_ROOT/lib/modules/$kver" ]] || die "$deb has no lib/modules/$kver"
	# The package ships no modules.dep (the postinst makes it); make one so
	# that `modprobe -d ... --show-depends` can resolve dependencies.
	depmod -b "$KERNEL_ROOT" "$kver"
	rm -rf "$dir/dl"
	basename "$deb" >"$dir/.done"
}
