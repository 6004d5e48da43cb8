#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Runs inside a kernel matrix VM (tests/kernels/matrix.sh) as its first
# process: sets up what an init would (proc, sys, bpffs, tmpfs on /run and
# /tmp), then runs the checks of MODE (load, full) or, given a command,
# that command. Writes a summary to $XFIB_KERNEL_OUT for the host to print.
set -u
mode=$1
cmd=${2:-}
out=${XFIB_KERNEL_OUT:-/xfib-out}
summary=$out/summary

mount -t proc proc /proc
mount -t sysfs sysfs /sys 2>/dev/null
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /dev/pts /dev/shm
# What udev would make: bash's process substitution needs /dev/fd.
ln -sfn /proc/self/fd /dev/fd
ln -sfn /proc/self/fd/0 /dev/stdin
ln -sfn /proc/self/fd/1 /dev/stdout
ln -sfn /proc/self/fd/2 /dev/stderr
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
# The host's /run and /tmp show through the overlay: start from empty ones.
# A checkout under /tmp (a CI's clone, say) is kept: it is moved aside
# before /tmp is covered and put back at its path on the new /tmp.
mount -t tmpfs tmpfs /run
top=$PWD
case $top/ in
/tmp/*)
	mkdir -p /run/xfib-top
	mount --bind "$top" /run/xfib-top
	mount -t tmpfs tmpfs /tmp
	mkdir -p "$top"
	mount --move /run/xfib-top "$top"
	cd "$top" || exit 1
	;;
*) mount -t tmpfs tmpfs /tmp ;;
esac
mount -t bpf -o mode=0700 bpf /sys/fs/bpf
mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null
ip link set lo up
hostname xfib-matrix 2>/dev/null

# The CPU is emulated, 10 to 50 times slower than the host: a start-up
# that takes a second here takes tens of seconds there, for the checks
# and for a command given with -c alike.
export XFIB_TEST_TIMEOUT=${XFIB_TEST_TIMEOUT:-1200}
export XFIBD_SYNC_TIMEOUT=${XFIBD_SYNC_TIMEOUT:-90}

if [ -n "$cmd" ]; then
	bash -c "$cmd"
	exit $?
fi

# Netfilter modules loaded now: none on a fresh boot, which is what the
# load checks are about (xfibd must start without them).
nf_modules() {
	awk '$1 ~ /^(nf_|nft_|nfnetlink|x_tables|ip_tables)/ { print $1 }' /proc/modules |
		sort | tr '\n' ' '
}

{
	echo "kernel: $(uname -r) ($(uname -v))"
	echo "netfilter modules at boot: $(nf_modules)"
} >"$summary"

# First with no netfilter module loaded, as on a router without a
# firewall; then with nf_conntrack, which brings the conntrack kfuncs:
# the forwarder built with them loads, and the gate works, on this kernel.
case $mode in
load) before=(prog/test_verifier_margin net/test_forward)
	after=(prog/test_verifier_margin prog/test_ctgate) ;;
full) before=(prog/test_verifier_margin net/test_forward net/test_ecmp
		net/test_rp_filter net/test_verify net/test_veth_egress prog/test_fwd)
	after=(prog/test_verifier_margin prog/test_ctgate net/test_nf_stateful) ;;
esac
# The logs straight to the host, where they can be read while tests run.
logs=$out/test-logs
mkdir -p "$logs"
rm -rf "$BUILD/test-logs"
ln -s "$logs" "$BUILD/test-logs"

rc=0
tests/run.sh "${before[@]}" | tee "$out/tests.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
echo "netfilter modules after the tests without them: $(nf_modules)" >>"$summary"
mv "$logs/prog_test_verifier_margin.log" "$logs/prog_test_verifier_margin-no-netfilter.log"
modprobe nf_conntrack || rc=1
# The lookup programs use no conntrack: checked once, before.
XFIB_MARGIN_SKIP_LOOKUPS=1 tests/run.sh "${after[@]}" | tee -a "$out/tests.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
{
	grep -E '^(PASS|FAIL|SKIP) ' "$out/tests.log"
	grep -h 'xfib_.*processed instructions' "$logs"/prog_test_verifier_margin*.log
	grep -h 'refuses the UDP stream time' "$logs"/prog_test_verifier_margin.log
} >>"$summary"
exit "$rc"
