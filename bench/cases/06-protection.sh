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
# ratios against protect=none.  Then, for protect=none, the default and
# the SIMD pair, where the guest's CPU goes per 4 KiB page (4 KiB random
# write and read at QD16, 1 MiB sequential at QD4): AEAD (encrypt and
# decrypt), session MAC (Poly1305 over messages), copy (socket buffers to
# and from pages), socket (TCP send, receive and the network softirq) and
# the rest, from the function_graph tracer (the guest kernel has no
# function profiler); and a projection of the crypto and the rest to a
# CPU with AVX2, next to the time a page takes at 10 and 25 GbE.
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
# ---- Where the CPU goes per page ----
# function_graph on a few functions, each a bucket: its time less that of
# the traced functions it calls (a Poly1305 call belongs to the AEAD or
# the session MAC that makes it).  sleep-time off: a task's time asleep
# in sock_recvmsg is not CPU.  Tracing costs CPU of its own; the untraced
# run just before gives the real total.
T=/sys/kernel/tracing
[ -f $T/current_tracer ] || mount -t tracefs nodev $T || die "cannot mount tracefs"
# function:bucket (names missing from this kernel are left out)
BUCKETS="crypto_aead_encrypt:aead crypto_aead_decrypt:aead
chacha20poly1305_encrypt:aead chacha20poly1305_decrypt:aead
chacha20poly1305_encrypt_sg_inplace:aead chacha20poly1305_decrypt_sg_inplace:aead
netram_message_mac:mac poly1305_update_arch:poly poly1305_final_arch:poly
poly1305_update_generic:poly poly1305_final_generic:poly
skb_copy_datagram_iter:copy skb_copy_datagram_from_iter:copy
sock_sendmsg:socket sock_recvmsg:socket kernel_sendpage:socket net_rx_action:socket"
echo 0 >$T/tracing_on
echo function_graph >$T/current_tracer || die "no function_graph tracer"
echo 16384 >$T/buffer_size_kb || die "trace buffer"
echo 0 >$T/options/sleep-time
echo 1 >$T/options/funcgraph-proc
echo 1 >$T/options/funcgraph-tail
echo "$BUCKETS" | tr ' ' '\n' | cut -d: -f1 | awk 'NR == FNR { want[$1] = 1; next } ($1 in want) { print $1 }' \
	- $T/available_filter_functions | sort -u >/tmp/traced
[ -s /tmp/traced ] || die "none of the functions to trace exists"
cat /tmp/traced >$T/set_ftrace_filter || die "set_ftrace_filter"
log "tracing: $(tr '\n' ' ' </tmp/traced)"

# fio_run dev rw depth bs: one job (no ramp: the trace covers all of it)
fio_run() {
	fio --name=b --filename="$1" --rw="$2" --ioengine=libaio --iodepth="$3" --bs="$4" \
		--direct=1 --size=${REGION_MB}M --time_based --runtime="$RUNTIME" \
		--randrepeat=0 --norandommap --output-format=terse --terse-version=3 \
		>/tmp/fio.out 2>/tmp/fio.err || die "fio $2 on $1 failed: $(cat /tmp/fio.err)"
}
# busy_us_per_page dev rw depth bs: one run -> "guest CPU µs per 4 KiB page, pages"
busy_us_per_page() {
	c0=$(cpu_busy) s0=$(io_sectors "$1")
	fio_run "$@"
	pages=$((($(io_sectors "$1") - s0) / 8)) busy=$(($(cpu_busy) - c0))
	[ "$pages" -gt 0 ] || die "no pages moved by $2 on $1"
	awk -v b="$busy" -v p="$pages" 'BEGIN { printf "%.0f %d\n", b * 10000 / p, p }'
}
# the trace's time per bucket, µs: "aead=N mac=N copy=N socket=N"
trace_buckets() {
	awk -F'|' -v buckets="$BUCKETS" '
	function cat(name, sp,   k, up) {
		k = bucket[name]
		if (k != "poly") return k
		up = sp > 1 ? kind[task, sp - 1] : ""
		return up == "aead" || up == "mac" ? up : "mac"
	}
	BEGIN {
		n = split(buckets, b, /[ \n]+/)
		for (i = 1; i <= n; i++) { split(b[i], kv, ":"); bucket[kv[1]] = kv[2] }
	}
	/^#/ || NF < 3 { next }
	{
		split($1, w, " "); task = w[2]; sub(/.*-/, "", task)
		d = $2; gsub(/[^0-9.]/, "", d); d += 0
		# (a module'"'"'s functions carry its name: "netram_message_mac [dm_nswap2l]()")
		f = $NF; gsub(/ *\[[^]]*\]/, "", f); sp = depth[task]
		if (f ~ /\{ *$/) {                      # entry
			name = f; gsub(/[ (){]/, "", name)
			if (!(name in bucket)) next
			sp = ++depth[task]; fn[task, sp] = name; child[task, sp] = 0
			kind[task, sp] = cat(name, sp)
		} else if (f ~ /\}/) {                  # return: its time less its traced callees
			name = f; sub(/.*\/\* */, "", name); sub(/ *\*\/.*/, "", name)
			if (sp < 1 || fn[task, sp] != name) next
			t[kind[task, sp]] += d - child[task, sp]
			depth[task] = --sp
			if (sp > 0) child[task, sp] += d
		} else {                                # a call with no traced callees
			name = f; gsub(/[ ();]/, "", name)
			if (!(name in bucket)) next
			t[cat(name, sp + 1)] += d
			if (sp > 0) child[task, sp] += d
		}
	}
	END { printf "aead=%.0f mac=%.0f copy=%.0f socket=%.0f\n", t["aead"], t["mac"], t["copy"], t["socket"] }' $T/trace
}

PROFILE_JOBS="randwrite:16:4k randread:16:4k write:4:1M read:4:1M"
for s in none default simd; do
	for job in $PROFILE_JOBS; do
		set -- $(echo "$job" | tr : ' ')
		rw=$1 depth=$2 bs=$3
		key="$rw-qd$depth-$(echo "$bs" | tr 'KM' 'km')"
		dev=/dev/mapper/p_$s
		log "profile $s $key: untraced, then traced"
		set -- $(busy_us_per_page "$dev" "$rw" "$depth" "$bs")
		untraced=$1
		echo >$T/trace
		echo 1 >$T/tracing_on
		set -- $(busy_us_per_page "$dev" "$rw" "$depth" "$bs")
		echo 0 >$T/tracing_on
		traced=$1 pages=$2
		lost=$(awk '/^overrun:/ { n += $2 } END { print n + 0 }' $T/per_cpu/cpu*/stats)
		set -- $(trace_buckets | tr '=' ' ')
		# $2 aead, $4 mac, $6 copy, $8 socket: total µs over the traced run's pages
		echo "@@BENCH protection profile $s $key" $(awk -v p="$pages" -v a="$2" -v m="$4" -v c="$6" \
			-v k="$8" -v tr="$traced" -v u="$untraced" 'BEGIN {
				a /= p; m /= p; c /= p; k /= p
				printf "pages=%d aead=%.1f mac=%.1f copy=%.1f socket=%.1f other=%.1f traced=%s untraced=%s",
					p, a, m, c, k, tr - a - m - c - k, tr, u
			}') "lost=$lost" | tee -a /tmp/profile
	done
done
echo nop >$T/current_tracer

# What "default" is here: the module times its candidates once (netram_fastest.c).
echo "@@BENCH protection text The module's own choice of implementation here (dmesg): $(dmesg |
	sed -nE 's/.*nswap2l: ((session MAC|page protection): .*using .*)/\1/p' | paste -sd';' | sed 's/;/; /g')."
echo "@@BENCH protection text "

# ---- Projection to a CPU with AVX2 ----
# Cycles per byte of the kernel's x86-64 SIMD code, large buffers, Skylake
# and Haswell (rdtsc at a fixed clock):
# - ChaCha20, 8 blocks at a time in AVX2: 1.19 and 1.23, the "NxAVX"
#   column of OpenSSL's crypto/chacha/asm/chacha-x86_64.pl header
#   (https://github.com/openssl/openssl/blob/master/crypto/chacha/asm/chacha-x86_64.pl);
#   the kernel's chacha-avx2-x86_64.S is another 8-block AVX2 code, so
#   this is a stand-in, not its own figure.
# - Poly1305 in AVX2: 0.51 and 0.65, the header of the kernel's own
#   arch/x86/crypto/poly1305-x86_64-cryptogams.pl (OpenSSL's
#   poly1305-x86_64.pl, brought in with Zinc; 6.1's poly1305-x86_64.ko).
CHACHA_CPB_SKL=1.19 CHACHA_CPB_HSW=1.23 POLY_CPB_SKL=0.51 POLY_CPB_HSW=0.65
GHZ=3.0                 # assumed clock of the real CPU
# assumed: TCG runs the guest's kernel code (TCP, virtio, block layer,
# the module, fio) 30-100x slower than a native core; the table also
# gives, as a check, how much slower the SIMD AEAD ran here than its
# published cost, and the slowdown at which one core just keeps up
TCG_SLOW="30 100"
awk -v ck="$CHACHA_CPB_SKL" -v ch="$CHACHA_CPB_HSW" -v pk="$POLY_CPB_SKL" -v ph="$POLY_CPB_HSW" \
	-v ghz="$GHZ" -v slow="$TCG_SLOW" '
	function us(cpb) { return cpb * 4096 / (ghz * 1000) }
	{
		s = $4; j = $5
		for (i = 6; i <= NF; i++) { split($i, kv, "="); v[s, j, kv[1]] = kv[2] }
		row[++n] = s SUBSEP j
	}
	END {
		split(slow, f, " ")
		b10 = 4096 * 8 / 10e3; b25 = 4096 * 8 / 25e3
		p = "@@BENCH protection text "
		print p "## Projection to a CPU with AVX2"
		print p ""
		printf "%sCrypto per 4 KiB page at %.1f GHz (cycles per byte, large buffers, Skylake - Haswell): ChaCha20 %.2f - %.2f µs (%s - %s c/B, 8-block AVX2, OpenSSL crypto/chacha/asm/chacha-x86_64.pl, https://github.com/openssl/openssl/blob/master/crypto/chacha/asm/chacha-x86_64.pl, a stand-in for the kernel'"'"'s own chacha-avx2-x86_64.S), Poly1305 %.2f - %.2f µs (%s - %s c/B, AVX2, the header of the kernel'"'"'s arch/x86/crypto/poly1305-x86_64-cryptogams.pl, from OpenSSL'"'"'s poly1305-x86_64.pl). Start-up per call (key setup, FPU save, tags) is left out.\n", p, ghz, us(ck), us(ch), ck, ch, us(pk), us(ph), pk, ph
		print p ""
		# the SIMD AEAD'"'"'s slowdown here against its published cost (4 KiB writes)
		if (v["simd", "randwrite-qd16-4k", "aead"] > 0)
			cal = sprintf(" For scale: the SIMD ChaCha20-Poly1305 took %.0f µs per page here on 4 KiB writes, %.0f-%.0fx its published cost (TCG emulates AVX2 an instruction at a time; scalar code fares better).",
				v["simd", "randwrite-qd16-4k", "aead"], v["simd", "randwrite-qd16-4k", "aead"] / (us(ch) + us(ph)),
				v["simd", "randwrite-qd16-4k", "aead"] / (us(ck) + us(pk)))
		printf "%sThe rest of the guest'"'"'s CPU per page (untraced total less the traced AEAD and MAC time: socket, copy, block layer, the module, fio, and the emulated NIC'"'"'s exits) is measured in TCG; on hardware it is taken as %s-%sx faster, an assumption, not a measurement.%s Time on the wire per page at line rate (payload only): %.2f µs at 10 GbE, %.2f µs at 25 GbE. \"Cores\": CPU per page over that time, the cores one device keeps busy at line rate. \"Keeps up on one core\": the TCG slowdown above which one core would do the page in its wire time (none: at the Haswell figures the crypto alone takes longer).\n", p, f[1], f[2], cal, b10, b25
		print p ""
		print p "| setting | job | passes over the page: ChaCha20 / Poly1305 | crypto µs/page | rest µs/page in TCG | rest µs/page native (÷" f[2] " - ÷" f[1] ") | total µs/page native | cores at 10 GbE | cores at 25 GbE | keeps up on one core if TCG is slower than: 10 GbE / 25 GbE |"
		print p "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
		for (r = 1; r <= n; r++) {
			split(row[r], sj, SUBSEP); s = sj[1]; j = sj[2]
			# the session MAC covers the page where it costs about what protect=none'"'"'s does
			m = v["none", j, "mac"] > 0 ? v[s, j, "mac"] / v["none", j, "mac"] : 1
			mp = s == "none" || m >= 0.5 ? 1 : 0
			ap = s == "none" ? 0 : 1
			clo = ap * (us(ck) + us(pk)) + mp * us(pk)
			chi = ap * (us(ch) + us(ph)) + mp * us(ph)
			rest = v[s, j, "untraced"] - v[s, j, "aead"] - v[s, j, "mac"]
			if (rest < 0) rest = 0
			tlo = clo + rest / f[2]; thi = chi + rest / f[1]
			k10 = b10 > chi ? sprintf("%.0fx", rest / (b10 - chi)) : "none"
			k25 = b25 > chi ? sprintf("%.0fx", rest / (b25 - chi)) : "none"
			printf "%s| %s | %s | %d / %d | %.2f - %.2f | %.0f | %.1f - %.1f | %.1f - %.1f | %.1f - %.1f | %.1f - %.1f | %s / %s |\n", p, s, j, ap, ap + mp,
				clo, chi, rest, rest / f[2], rest / f[1], tlo, thi, tlo / b10, thi / b10, tlo / b25, thi / b25, k10, k25
		}
	}' /tmp/profile
for s in $SETTINGS; do
	name=${s%%:*}
	assert_eq "$(nsw_recovery "p_$name" refused)" 0 "pages refused on p_$name"
	dm_remove "p_$name" || die "remove p_$name"
done
log "ok"
