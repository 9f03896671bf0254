# shellcheck shell=bash
# Guest kernel fetching: download linux-image-$KVER with `apt-get download`
# into a cache directory and extract it with `dpkg-deb -x` (never installed
# into the host's /boot).  Sourced by tests/run.
#
#   fetch_kernel KVER CACHE_ROOT   -> sets KERNEL_ROOT (extracted tree) and
#                                     KERNEL_IMAGE (what QEMU boots: see
#                                     pvh_vmlinux)

# A bzImage decompresses itself before the kernel starts, which under TCG
# takes seconds of every boot (6.1, XZ: about 5 s; 6.12, zstd: about 1 s).
# Debian's kernels have CONFIG_PVH, so QEMU can start the vmlinux inside at
# its PVH entry point instead (KASLR does not apply there).
# pvh_vmlinux VMLINUZ OUT: OUT is that vmlinux, or absent if it has no PVH
# entry or a compression this does not know
pvh_vmlinux() {
	local img=$1 out=$2 magic tool off
	rm -f "$out"
	for magic in 'xz:\xfd7zXZ\x00' 'zstd:\x28\xb5\x2f\xfd' 'gzip:\x1f\x8b\x08'; do
		tool=${magic%%:*}
		off=$(LC_ALL=C grep -abo -m1 -P "${magic#*:}" "$img" | head -n1 | cut -d: -f1) || true
		[[ -n "$off" ]] || continue
		# the bytes after the payload make the tool complain: not an error
		tail -c +$((off + 1)) "$img" | "$tool" -dc >"$out.tmp" 2>/dev/null || true
		# XEN_ELFNOTE_PHYS32_ENTRY (18): the PVH entry point
		if [[ "$(head -c 4 "$out.tmp")" == $'\x7fELF' ]] &&
			readelf -n "$out.tmp" 2>/dev/null | grep -q 'Xen .*(0x00000012)'; then
			mv "$out.tmp" "$out"
			return
		fi
		break
	done
	rm -f "$out.tmp"
}

fetch_kernel() {
	local dir="$2/$1"
	fetch_kernel_package "$1" "$dir"
	[[ -f "$dir/.pvh" ]] || { pvh_vmlinux "$KERNEL_IMAGE" "$dir/vmlinux"; : >"$dir/.pvh"; }
	[[ -f "$dir/vmlinux" ]] && KERNEL_IMAGE="$dir/vmlinux"
	return 0
}

# fetch_kernel_package KVER DIR: the package extracted under DIR/root
# (cached); sets KERNEL_ROOT and KERNEL_IMAGE (its vmlinuz)
fetch_kernel_package() {
	local kver=$1 dir=$2
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
