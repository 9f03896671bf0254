# What end-to-end page protection costs: 4 KiB random write and read IOPS
# (libaio QD16 and psync QD1) and guest CPU time per page on nswap2l over
# one nswapd with protect=none, with the default (rfc7539(chacha20,poly1305):
# the kernel picks the fastest registered implementations; in the test
# guests the SIMD ChaCha20 is loaded by name only, so this is the generic C
# ChaCha20 with the SIMD Poly1305 that the module links against), with
# the SIMD ChaCha20 and Poly1305 (what the kernel picks on an x86 CPU with
# SSSE3/AVX2), with gcm(aes) (synchronous: the crypto API's gcm template
# over AES-NI and GHASH) and with both generic C implementations.  Side by
# side in one boot, interleaved over several rounds; medians reported,
# ratios against protect=none.
# Goal: protection costs at most 10 % of the IOPS of protect=none.
# mem: 768M
# servers: 1
# timeout: 3000

REGION_MB=${BENCH_REGION_MB:-64}
RUNTIME=${BENCH_RUNTIME:-4}
ROUNDS=${BENCH_ROUNDS:-5}
SECTORS=$((REGION_MB * 2048))

load_nswap2l
netram_load_key >/dev/null
KEY=$(netram_table_arg | cut -d' ' -f2)
# name:protect= value (empty: the default)
SETTINGS="none:none default: simd:rfc7539(chacha20-simd,poly1305-simd) gcm:gcm(aes) generic:rfc7539(chacha20-generic,poly1305-generic)"
modprobe chacha_x86_64 || die "modprobe chacha_x86_64"
for s in $SETTINGS; do
	name=${s%%:*} protect=${s#*:}
	options="netram=$(netram_server 0) $KEY${protect:+ protect=$protect}"
	dm_create "p_$name" "0 $SECTORS nswap2l $(echo $options | wc -w) $options" ||
		die "create with protect=$protect"
	prefill_random "/dev/mapper/p_$name" "$REGION_MB"
	log "p_$name: $(dmsetup table "p_$name" | cut -d' ' -f5-) -> $(nsw_recovery "p_$name" protect)"
done

for job in "randwrite libaio 16" "randread libaio 16" "randwrite psync 1" "randread psync 1"; do
	set -- $job
	key="$1-qd$3"
	all=""
	for s in $SETTINGS; do eval "iops_${s%%:*}=; cpu_${s%%:*}="; done
	round=1
	while [ $round -le "$ROUNDS" ]; do
		log "$key: round $round of $ROUNDS"
		for s in $SETTINGS; do
			name=${s%%:*}
			before=$(cpu_busy)
			iops=$(fio_iops "/dev/mapper/p_$name" "$1" "$2" "$3")
			busy=$(($(cpu_busy) - before))
			# guest CPU µs per page: busy ticks over the pages of the timed part
			# (fio's ramp second is busy too, so this overstates a little, equally
			# for every setting)
			cpu=$(awk -v b="$busy" -v i="$iops" -v t="$RUNTIME" 'BEGIN { printf "%.0f", b * 10000 / (i * (t + 1)) }')
			eval "iops_$name=\"\$iops_$name $iops\"; cpu_$name=\"\$cpu_$name $cpu\""
		done
		round=$((round + 1))
	done
	line="@@BENCH protection $key"
	for s in $SETTINGS; do
		name=${s%%:*}
		eval "line=\"\$line $name=\$(echo \$iops_$name | median) ${name}_cpu=\$(echo \$cpu_$name | median)\""
		eval "all=\"\$all [$name:\$iops_$name]\""
	done
	echo "$line rounds=$(echo $all | tr ' ' ',')"
done
for s in $SETTINGS; do
	name=${s%%:*}
	assert_eq "$(nsw_recovery "p_$name" refused)" 0 "pages refused on p_$name"
	dm_remove "p_$name" || die "remove p_$name"
done
log "ok"
