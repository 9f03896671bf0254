# shellcheck shell=bash
# Guest image builders.  Sourced by tests/run.
#
# The guest gets two things:
#  * an initramfs (small, lives in guest RAM): busybox-static with all applets,
#    /init, the shell test library and cases, the static test helpers, and the
#    kernel modules the tests need (decompressed, with a modules.dep made by
#    the host's depmod so busybox modprobe works), plus dm-nswap2l.ko under
#    /lib/modules/$KVER/extra/.
#  * a read-only "tools" disk (ext4 image, virtio-blk, serial "nst-tools")
#    mounted at /usr: the dynamically linked host tools (dmsetup, fio,
#    e2fsprogs, util-linux tools...) and every library `ldd` lists for them.
#    fio alone drags in ~80 MiB of libraries, far too much for the RAM of the
#    swap test, so they stay on disk and only cost page cache.

# Dynamically linked tools copied to the tools disk (name -> looked up in PATH).
TOOLS_BINARIES=(dmsetup fio mke2fs mkfs.ext4 e2fsck tune2fs dumpe2fs mkswap swapon swapoff
	blkdiscard fstrim losetup blockdev sha256sum dd stress-ng nbd-client blktrace blkparse
	python3 keyctl)
# What tools/nswap2l imports beyond the standard library: the plots.
PYTHON_PROBE='import matplotlib; matplotlib.use("Agg"); import matplotlib.pyplot as plt
plt.figure().savefig("/dev/null", format="png")'
# Modules (by name) copied to the initramfs together with their dependencies.
# The AEADs of protect= come by request_module: chacha20poly1305 (the
# default) and gcm(aes), with their generic and x86 pieces.
GUEST_MODULES=(virtio_pci virtio_blk virtio_net ext4 crc32c_generic crc32c_intel dm_mod dm_delay
	brd zram nbd loop lzo lzo_rle lz4 zstd
	chacha20poly1305 chacha_generic chacha_x86_64 poly1305_generic poly1305_x86_64
	gcm ctr aesni_intel ghash_generic ghash_clmulni_intel)
# Loaded by name only, never for an alias such as crypto-chacha20: TCG
# emulates SSSE3/AVX2 slowly, so under it the generic C ChaCha20 is the
# fastest (bench/results/protection.md), and the default protect= gets that
# one.  Test 40 and the protection benchmark load it by hand.  (The SIMD
# Poly1305 is loaded anyway: the module's session MAC links against it.)
GUEST_MODULES_BY_NAME_ONLY=(chacha_x86_64)

# build_tools_image OUT_IMG
build_tools_image() {
	local out=$1 stage bin path lib
	stage=$(mktemp -d "${out%/*}/tools-stage.XXXXXX")
	mkdir -p "$stage/bin" "$stage/sbin" "$stage/lib/x86_64-linux-gnu" "$stage/lib64"
	local -A libs=()
	for bin in "${TOOLS_BINARIES[@]}"; do
		path=$(PATH=/usr/sbin:/usr/bin:/sbin:/bin command -v "$bin" || true)
		if [[ -z "$path" ]]; then
			[[ "$bin" == nbd-client ]] && continue   # optional (later benchmarks)
			die "host tool '$bin' not found; run scripts/install-deps"
		fi
		case "$path" in */sbin/*) cp -L "$path" "$stage/sbin/$bin" ;; *) cp -L "$path" "$stage/bin/$bin" ;; esac
		# ldd lines: "libx.so.1 => /lib/x86_64-linux-gnu/libx.so.1 (0x...)" and
		# the loader "/lib64/ld-linux-x86-64.so.2 (0x...)".
		while read -r lib; do
			[[ -n "$lib" ]] && libs["$lib"]=1
		done < <(ldd "$path" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}')
	done
	stage_python "$stage"
	while read -r lib; do
		[[ -n "$lib" ]] && libs["$lib"]=1
	done < <(find "$stage/lib/python3" "$stage/lib/python3."* -name '*.so*' -exec ldd {} + 2>/dev/null |
		awk '$2 == "=>" && $3 ~ /^\// {print $3}')
	for lib in "${!libs[@]}"; do
		cp -L "$lib" "$stage/lib/x86_64-linux-gnu/${lib##*/}"
	done
	ln -s ../lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 "$stage/lib64/ld-linux-x86-64.so.2"
	# Size: contents + 25% + 8 MiB, in MiB.
	local kib
	kib=$(du -sk "$stage" | cut -f1)
	local mib=$(((kib * 5 / 4) / 1024 + 8))
	rm -f "$out.tmp.$$"
	mke2fs -q -t ext4 -O ^has_journal -E root_owner=0:0 -L nst-tools -d "$stage" "$out.tmp.$$" "${mib}M" >/dev/null \
		|| die "mke2fs of tools image failed"
	mv "$out.tmp.$$" "$out"
	rm -rf "$stage"
}

# stage_python STAGE: the host's Python standard library (without its tests,
# GUIs and static library) and the packages PYTHON_PROBE loads from
# dist-packages, with matplotlib's data, for tools/nswap2l in the guests.
stage_python() {
	local stage=$1 stdlib tops top
	stdlib=$(/usr/bin/python3 -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')
	mkdir -p "$stage/lib/python3/dist-packages" "$stage/share/matplotlib"
	tar -C "${stdlib%/*}" -cf - --exclude=test --exclude=idlelib --exclude=tkinter \
		--exclude=turtledemo --exclude=lib2to3 --exclude='config-*' "${stdlib##*/}" |
		tar -C "$stage/lib" -xf -
	tops=$(/usr/bin/python3 -c "$PYTHON_PROBE"'
import sys
print("\n".join(sorted({m.__file__.split("/dist-packages/")[1].split("/")[0]
	for m in list(sys.modules.values())
	if "/dist-packages/" in (getattr(m, "__file__", None) or "")})))') \
		|| die "python3-matplotlib is missing; run scripts/install-deps"
	for top in $tops; do
		cp -a "/usr/lib/python3/dist-packages/$top" "$stage/lib/python3/dist-packages/"
	done
	cp -aL "$(/usr/bin/python3 -c 'import matplotlib; print(matplotlib.get_data_path())')" \
		"$stage/share/matplotlib/mpl-data"
	# matplotlib's font list, of its own fonts (the guest has no others):
	# made in the guest, it costs every boot that plots 9 s of emulation
	/usr/bin/python3 - "$stage/share/matplotlib" <<-'PY' || die "cannot make matplotlib's font list"
		import os, sys, matplotlib, matplotlib.font_manager as fm
		own = matplotlib.get_data_path()
		fonts = fm.FontManager()
		fonts.ttflist = [f for f in fonts.ttflist if f.fname.startswith(own)]
		fonts.afmlist = [f for f in fonts.afmlist if f.fname.startswith(own)]
		fm.json_dump(fonts, os.path.join(sys.argv[1], f"fontlist-v{fm.FontManager.__version__}.json"))
	PY
}

# tools_image_stamp: changes whenever one of the tools (or this file) changes.
tools_image_stamp() {
	local bin path
	{
		for bin in "${TOOLS_BINARIES[@]}"; do
			path=$(PATH=/usr/sbin:/usr/bin:/sbin:/bin command -v "$bin" || true)
			[[ -n "$path" ]] && stat -L -c '%n %s %Y' "$path"
		done
		sha256sum "${BASH_SOURCE[0]}"
	} | sha256sum | cut -d' ' -f1
}

# ensure_tools_image OUT_IMG
ensure_tools_image() {
	local out=$1 stamp
	stamp=$(tools_image_stamp)
	if [[ -f "$out" && -f "$out.stamp" && "$(cat "$out.stamp")" == "$stamp" ]]; then
		return 0
	fi
	msg "building tools disk image $out"
	build_tools_image "$out"
	echo "$stamp" >"$out.stamp"
}

# build_initramfs KVER KERNEL_ROOT MODULE(or empty) PROGS_DIR OUT
build_initramfs() {
	local kver=$1 kroot=$2 module=$3 progs=$4 out=$5
	local stage mdir src rel f
	local -a mods=("${GUEST_MODULES[@]}")
	# modules dm-nswap2l.ko itself depends on (e.g. dm-bufio), from the kernel tree
	if [[ -n "$module" ]]; then
		local dep
		for dep in $(modinfo -F depends "$module" 2>/dev/null | tr ',' ' '); do
			mods+=("$dep")
		done
	fi
	stage=$(mktemp -d "${out%/*}/initramfs-stage.XXXXXX")
	mkdir -p "$stage"/{bin,sbin,dev,proc,sys,tmp,run,mnt,usr,etc,root,tests/bin,tests/cases}
	mkdir -p "$stage/lib"
	ln -s ../usr/lib/x86_64-linux-gnu "$stage/lib/x86_64-linux-gnu"
	ln -s usr/lib64 "$stage/lib64"
	# /lib64/ld-linux-x86-64.so.2 resolves through this to the tools disk.

	cp /bin/busybox "$stage/bin/busybox"
	local applet
	for applet in $("$stage/bin/busybox" --list); do
		[[ "$applet" == busybox ]] && continue
		case "$applet" in
		modprobe | insmod | rmmod | lsmod | depmod | modinfo | poweroff | reboot | halt | mdev | swapon | swapoff | switch_root)
			ln -sf ../bin/busybox "$stage/sbin/$applet" ;;
		*) ln -sf busybox "$stage/bin/$applet" ;;
		esac
	done

	# Kernel modules.
	mdir="$stage/lib/modules/$kver"
	mkdir -p "$mdir"
	while read -r kind src _; do
		[[ "$kind" == insmod ]] || continue
		rel=${src#"$kroot/lib/modules/$kver/"}
		case "$rel" in
		*.ko.xz) mkdir -p "$mdir/${rel%/*}"; xz -dc "$src" >"$mdir/${rel%.xz}" ;;
		*.ko.zst) mkdir -p "$mdir/${rel%/*}"; zstd -qdc "$src" >"$mdir/${rel%.zst}" ;;
		*.ko.gz) mkdir -p "$mdir/${rel%/*}"; gzip -dc "$src" >"$mdir/${rel%.gz}" ;;
		*.ko) mkdir -p "$mdir/${rel%/*}"; cp "$src" "$mdir/$rel" ;;
		esac
	done < <(modprobe -d "$kroot" -S "$kver" --show-depends -a "${mods[@]}" 2>/dev/null | sort -u)
	for f in modules.builtin modules.builtin.modinfo modules.order; do
		[[ -f "$kroot/lib/modules/$kver/$f" ]] && cp "$kroot/lib/modules/$kver/$f" "$mdir/"
	done
	if [[ -n "$module" ]]; then
		mkdir -p "$mdir/extra"
		cp "$module" "$mdir/extra/dm-nswap2l.ko"
		strip --strip-debug "$mdir/extra/dm-nswap2l.ko" 2>/dev/null || true
	fi
	local extra
	for extra in "${EXTRA_MODULES[@]}"; do
		mkdir -p "$mdir/extra"
		cp "$extra" "$mdir/extra/"
		strip --strip-debug "$mdir/extra/${extra##*/}" 2>/dev/null || true
	done
	# outside /lib/modules: depmod must not index a second dm-nswap2l
	if [[ -n "${BASELINE_MODULE:-}" ]]; then
		mkdir -p "$stage/opt/baseline"
		cp "$BASELINE_MODULE" "$stage/opt/baseline/dm-nswap2l.ko"
		strip --strip-debug "$stage/opt/baseline/dm-nswap2l.ko" 2>/dev/null || true
	fi
	depmod -b "$stage" "$kver" || die "depmod for the initramfs failed"
	local only
	for only in "${GUEST_MODULES_BY_NAME_ONLY[@]}"; do
		sed -i "/ $only\$/d" "$mdir/modules.alias"
	done
	rm -f "$mdir/modules.alias.bin"   # busybox modprobe reads the text

	# Test library, cases, helpers.
	cp "$TESTS_DIR/lib/guest-init" "$stage/init"
	chmod 755 "$stage/init"
	cp "$TESTS_DIR/lib/guest-lib.sh" "$stage/tests/lib.sh"
	cp "${CASES_DIR:-$TESTS_DIR/cases}"/*.sh "$stage/tests/cases/"
	cp "$progs"/* "$stage/tests/bin/"
	# nswap2l, installed as make install does (its unit and /etc/nswap2l too)
	make -s -C "$REPO_DIR/tools/nswap2l" install DESTDIR="$stage" PREFIX=/opt/nswap2l \
		SYSTEMD_UNIT_DIR=/opt/nswap2l/systemd >/dev/null || die "make -C tools/nswap2l install failed"
	ln -s /opt/nswap2l/sbin/nswap2l "$stage/sbin/nswap2l"
	[[ -f /etc/mke2fs.conf ]] && cp /etc/mke2fs.conf "$stage/etc/"
	# Debian's matplotlib reads its defaults from here (the plots of nswap2l)
	[[ -f /etc/matplotlibrc ]] && cp /etc/matplotlibrc "$stage/etc/"
	printf 'root:x:0:0:root:/root:/bin/sh\n' >"$stage/etc/passwd"
	printf 'root:x:0:\ndisk:x:6:\n' >"$stage/etc/group"
	echo "$kver" >"$stage/etc/nst-kver"

	(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) >"$out.tmp.$$" \
		|| die "cpio failed"
	mv "$out.tmp.$$" "$out"
	rm -rf "$stage"
}
