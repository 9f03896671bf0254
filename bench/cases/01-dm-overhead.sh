# What the target's bio path costs: 4 KiB random read and write IOPS, psync
# (QD1) and libaio QD16, on a raw device, on dm-linear over it and on nswap2l
# with that device as its only tier, measured side by side in one boot,
# interleaved over several short rounds.  Emulation is noisy, so the ratio
# reported is the median of the per-round ratios nswap2l/dm-linear (each
# round measures both back to back).  Done twice:
# over a virtio-blk disk (the flash tier of the tests) and over a brd
# ramdisk, where the device is fast enough for the target's own CPU cost to
# show (BENCH_DM_DEVICES=virtio,brd picks them).  With bench/run
# --baseline-module, nswap2l is measured once per pass of each build.
# mem: 768M
# disks: flash=512M
# timeout: 1500

REGION_MB=${BENCH_REGION_MB:-256}
RUNTIME=${BENCH_RUNTIME:-4}
ROUNDS=${BENCH_ROUNDS:-7}
SECTORS=$((REGION_MB * 2048))
DM_DEVICES=${BENCH_DM_DEVICES:-virtio,brd}

modprobe brd rd_nr=1 rd_size=$((REGION_MB * 1024)) max_part=0 || die "modprobe brd failed"

bench_device() { # label rawdev module
	label=$1
	raw=$2
	name=$(bench_name dm-overhead "$3")
	dm_create "lin_$label" "0 $SECTORS linear $raw 0"
	dm_create "nsw_$label" "0 $SECTORS nswap2l 1 flash=$raw"
	# Map every page first, so that reads hit the tier and not the zero path.
	dd if=/dev/zero of="/dev/mapper/nsw_$label" bs=1M count="$REGION_MB" oflag=direct 2>/dev/null ||
		die "prefill of nsw_$label failed"
	assert_eq "$(tier_stat "nsw_$label" flash used)" $((SECTORS / 8)) "pages mapped after prefill"

	for job in "randread psync 1" "randwrite psync 1" "randread libaio 16" "randwrite libaio 16"; do
		set -- $job
		key="$1-$2-qd$3"
		r_raw="" r_lin="" r_nsw="" ratios=""
		i=0
		while [ $i -lt "$ROUNDS" ]; do
			raw_iops=$(fio_iops "$raw" "$1" "$2" "$3")
			lin_iops=$(fio_iops "/dev/mapper/lin_$label" "$1" "$2" "$3")
			nsw_iops=$(fio_iops "/dev/mapper/nsw_$label" "$1" "$2" "$3")
			r_raw="$r_raw $raw_iops"
			r_lin="$r_lin $lin_iops"
			r_nsw="$r_nsw $nsw_iops"
			ratios="$ratios $(awk -v a="$nsw_iops" -v b="$lin_iops" 'BEGIN { printf "%.4f", a / b }')"
			i=$((i + 1))
		done
		echo "@@BENCH $name $label $key raw=$(echo $r_raw | median) linear=$(echo $r_lin | median) nswap2l=$(echo $r_nsw | median) ratio=$(echo $ratios | median) rounds=[raw:$r_raw][linear:$r_lin][nswap2l:$r_nsw]"
	done
	dm_remove "nsw_$label"
	dm_remove "lin_$label"
}

for module in $(module_passes); do
	use_module "$module"
	case ",$DM_DEVICES," in *,virtio,*) bench_device virtio "$FLASH" "$module" ;; esac
	case ",$DM_DEVICES," in *,brd,*) bench_device brd /dev/ram0 "$module" ;; esac
done
