#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Hosts behind veth ports with their default offloads: a local sender
# leaves its TCP checksums to the device (CHECKSUM_PARTIAL), and the frame
# crosses the veth with the field half filled in. The kernel's forwarding
# carries that state along; an XDP redirect would not, and the receiver
# would drop every segment. xfib hands such packets to the kernel
# (pass_csum_partial): TCP transfers in both families arrive whole and
# intact, the receiver counts no checksum error. With the hosts' checksum
# offload off, the same transfers are forwarded in XDP.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init
command -v socat >/dev/null || skip "missing tool: socat (scripts/install-deps.sh)"

topo_up
BYTES=$((4 * 1024 * 1024))
head -c "$BYTES" /dev/urandom >"$XFIB_TMP/data"
SUM=$(sha256sum <"$XFIB_TMP/data")

for ns_dev in "$GEN:$GEN_IF" "$SNK:$SNK_IF"; do
	ip netns exec "${ns_dev%%:*}" ethtool -k "${ns_dev#*:}" | grep -qx 'tx-checksumming: on' ||
		fail "${ns_dev#*:}: TX checksum offload is not on: the case under test needs it"
done

# csum_errors NS: the TCP checksum errors NS's stack counted.
csum_errors() {
	# shellcheck disable=SC2016
	in_ns "$1" awk '$1 == "Tcp:" && !h { for (i = 2; i <= NF; i++) c[$i] = i; h = 1; next }
		$1 == "Tcp:" && h { print $c["InCsumErrors"]; exit }' /proc/net/snmp
}

# transfer FAMILY DST: BYTES of random data from gen to sink over TCP,
# which must arrive intact within 30 s.
transfer() {
	local fam=$1 dst=$2 tcp=TCP4 got="$XFIB_TMP/got" pid deadline
	[ "$fam" = 4 ] || { tcp=TCP6; dst="[$dst]"; }
	rm -f "$got"
	ip netns exec "$SNK" timeout 30 socat -u "$tcp-LISTEN:5301,reuseaddr" "OPEN:$got,creat,trunc" &
	pid=$!
	XFIB_PIDS+=("$pid")
	deadline=$(($(now_ms) + 5000))
	until ip netns exec "$SNK" ss -Hltn 'sport = :5301' | grep -q .; do
		(($(now_ms) < deadline)) || fail "nothing listens on port 5301 in $SNK"
		sleep 0.05
	done
	timeout 30 ip netns exec "$GEN" socat -u "OPEN:$XFIB_TMP/data" "$tcp:$dst:5301" ||
		fail "IPv$fam TCP transfer to $dst failed or stalled ($(stats_line))"
	wait "$pid" || fail "IPv$fam TCP receiver exited $? ($(stats_line))"
	[ "$(sha256sum <"$got")" = "$SUM" ] ||
		fail "IPv$fam TCP: $(stat -c %s "$got") bytes arrived, not the $BYTES sent"
}

# ---- default offloads: the kernel forwards what is left half done ------------
for fam in 4 6; do
	dst=$SNK4
	[ "$fam" = 4 ] || dst=$SNK6
	p0=$(counter pass_csum_partial) k0=$("kfwd$fam" "$RTR") e0=$(csum_errors "$SNK")
	transfer "$fam" "$dst"
	dp=$(($(counter pass_csum_partial) - p0)) dk=$(($("kfwd$fam" "$RTR") - k0))
	de=$(($(csum_errors "$SNK") - e0))
	log "IPv$fam, offloads on: $BYTES bytes intact; pass_csum_partial +$dp, kernel forwarded +$dk"
	# 4 MiB is at least 2,900 segments of at most 1,448 bytes.
	((dp >= 2900 && dk >= 2900)) ||
		fail "IPv$fam: partial checksums not handed to the kernel ($(stats_line))"
	((de == 0)) || fail "IPv$fam: the receiver counted $de TCP checksum errors"
done

# ---- checksums filled in by the hosts: forwarded in XDP ------------------------
hosts_fill_checksums "$GEN:$GEN_IF" "$SNK:$SNK_IF"
for fam in 4 6; do
	dst=$SNK4
	[ "$fam" = 4 ] || dst=$SNK6
	p0=$(counter pass_csum_partial) x0=$(counter "forwarded_v$fam")
	transfer "$fam" "$dst"
	dp=$(($(counter pass_csum_partial) - p0)) dx=$(($(counter "forwarded_v$fam") - x0))
	log "IPv$fam, offloads off: $BYTES bytes intact; forwarded_v$fam +$dx, pass_csum_partial +$dp"
	# A finished checksum equals the pseudo-header sum for one packet in
	# 65536: of the ~7,000 here (data and ACKs), 0.1 on average.
	((dp <= 5 && dx >= 2900)) || fail "IPv$fam: complete checksums not kept in XDP ($(stats_line))"
done
log "PASS: partial checksums to the kernel, complete ones in XDP"
