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
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
# The host's /run and /tmp show through the overlay: start from empty ones.
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp
mount -t bpf -o mode=0700 bpf /sys/fs/bpf
mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null
ip link set lo up
hostname xfib-matrix 2>/dev/null

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

case $mode in
load) tests=(prog/test_verifier_margin net/test_forward) ;;
full) tests=(prog/test_verifier_margin net/test_forward net/test_ecmp net/test_rp_filter
	net/test_verify prog/test_fwd prog/test_ctgate net/test_nf_stateful) ;;
esac
# The CPU is emulated, 10 to 50 times slower than the host: a start-up
# that takes a second here takes tens of seconds there.
export XFIB_TEST_TIMEOUT=${XFIB_TEST_TIMEOUT:-900}
export XFIBD_SYNC_TIMEOUT=${XFIBD_SYNC_TIMEOUT:-90}
# The logs straight to the host, where they can be read while tests run.
mkdir -p "$out/test-logs"
rm -rf "$BUILD/test-logs"
ln -s "$out/test-logs" "$BUILD/test-logs"
tests/run.sh "${tests[@]}" | tee "$out/tests.log"
rc=${PIPESTATUS[0]}
{
	grep -E '^(PASS|FAIL|SKIP) ' "$out/tests.log"
	grep -h 'processed instructions' "$out"/test-logs/prog_test_verifier_margin.log 2>/dev/null
	echo "netfilter modules at the end: $(nf_modules)"
} >>"$summary"
exit "$rc"
