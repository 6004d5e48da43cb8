#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The kernel matrix: runs xfib on Debian 12's own kernels, not only on the
# one this machine boots. For each kernel series named (default: 6.1, the
# kernel Debian 12 installs, and 6.12, its newer one) the newest package of
# that series in the archive is downloaded (cached in XFIB_KERNEL_CACHE,
# /var/cache/xfib-kernels by default) and booted under qemu with this
# machine's own userspace: the root is this machine's /, read-only over
# 9p, with a tmpfs overlay, so the guest runs exactly the binaries built
# here. Inside, tests/kernels/guest.sh runs the checks.
#
#   tests/kernels/matrix.sh [-m load|full] [-c COMMAND] [SERIES...]
#
# load: the dataplane's programs load (processed instructions against the
#       verifier's limit), xfibd starts with no netfilter module loaded,
#       ports attach and forward in XDP with the kernel's counters flat;
# full: that, then a core subset of the suite (forwarding, ECMP, the
#       conntrack gate, rp_filter, lookup and verify against the kernel,
#       a veth egress whose peer takes no redirected frames);
# -c COMMAND runs that shell command in the guest instead, from the
#       repository's top, for a look at one kernel by hand.
#
# Without KVM qemu emulates the CPU (TCG): slow, but the verifier and the
# network stack are the kernel's own. Prints one line per kernel and the
# closing "N passed, N failed, N skipped"; logs in $BUILD/kernels/SERIES/.
# XFIB_KERNEL_TIMEOUT: seconds a guest may run (load 1500, full 5400).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$top/build}
cache=${XFIB_KERNEL_CACHE:-/var/cache/xfib-kernels}
mode=load
cmd=
limit=${XFIB_KERNEL_TIMEOUT:-}

usage() {
	echo "usage: $0 [-m load|full] [-c COMMAND] [6.1|6.12|PACKAGE]..." >&2
	exit 2
}
while getopts m:c:h opt; do
	case $opt in
	m) mode=$OPTARG ;;
	c) cmd=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
case $mode in load | full) ;; *) usage ;; esac
# A guest's time limit: the load checks take two to three minutes under
# TCG, the full subset about an hour.
[ -n "$limit" ] || { [ "$mode" = load ] && limit=1500 || limit=5400; }
series=("$@")
[ ${#series[@]} -eq 0 ] && series=(6.1 6.12)

[ "$(id -u)" -eq 0 ] || { echo "matrix: run as root" >&2; exit 1; }
for t in qemu-system-x86_64 busybox depmod; do
	command -v "$t" >/dev/null ||
		{ echo "matrix: $t missing (scripts/install-deps.sh installs it)" >&2; exit 1; }
done
[ -x "$build/xfibd" ] && [ -x "$build/xfibctl" ] ||
	{ echo "matrix: build xfib first (make all and the tests)" >&2; exit 1; }

# The package of a series: Debian's unsigned image (the same kernel as the
# signed one, without the signature we do not need).
pkg_of() {
	local pat
	case $1 in
	6.1) pat='^linux-image-6\.1\.0-[0-9]+-amd64-unsigned$' ;;
	6.12) pat='^linux-image-6\.12\.[0-9]+\+deb12-amd64-unsigned$' ;;
	linux-image-*) echo "$1"; return ;;
	*) echo "matrix: unknown kernel series '$1' (6.1, 6.12 or a package name)" >&2; return 1 ;;
	esac
	local p
	p=$(apt-cache pkgnames linux-image-6. 2>/dev/null | grep -E "$pat" | sort -V | tail -n 1)
	if [ -z "$p" ]; then
		apt-get -o DPkg::Lock::Timeout=300 update -qq >/dev/null
		p=$(apt-cache pkgnames linux-image-6. | grep -E "$pat" | sort -V | tail -n 1)
	fi
	[ -n "$p" ] || { echo "matrix: no package for kernel $1 in the archive" >&2; return 1; }
	echo "$p"
}

# The modules that mount the root (virtio PCI, 9p, overlay), in load
# order, each decompressed: busybox insmod reads plain .ko files.
initramfs_modules() {
	local tree=$1 ver=$2 stage=$3 m line f
	mkdir -p "$stage/modules"
	: >"$stage/modules.list"
	for m in virtio_pci 9pnet_virtio 9p overlay; do
		modprobe -d "$tree" -S "$ver" --show-depends "$m" | while read -r line; do
			case $line in insmod\ *) ;; *) continue ;; esac
			f=${line#insmod }
			f=${f%% *}
			local base
			base=$(basename "$f")
			base=${base%.xz}
			grep -qx "$base" "$stage/modules.list" && continue
			case $f in
			*.xz) xz -dc "$f" >"$stage/modules/$base" ;;
			*) cp "$f" "$stage/modules/$base" ;;
			esac
			echo "$base" >>"$stage/modules.list"
		done
	done
}

# Unpacks the package once into $cache/PKG: the kernel, its modules (with
# modules.dep, which the package leaves to its postinst) and an initramfs.
# A tree is made again only when the initramfs's /init changed (its hash
# is kept in "ready"), and under a lock: another matrix run may be
# booting the tree at that moment.
prepare() {
	local pkg=$1 dir=$cache/$1 init_sum lock
	mkdir -p "$cache"
	init_sum=$(sha256sum <"$top/tests/kernels/initramfs-init")
	exec {lock}>"$cache/$pkg.lock"
	flock "$lock"
	if [ "$(cat "$dir/ready" 2>/dev/null)" != "$init_sum" ]; then
		unpack "$pkg" "$dir" && echo "$init_sum" >"$dir/ready"
	fi
	exec {lock}>&-
	[ -f "$dir/ready" ]
}

unpack() {
	local pkg=$1 dir=$2 ver stage deb
	rm -rf "$dir"
	mkdir -p "$dir"
	(cd "$cache" && ls "${pkg}"_*.deb >/dev/null 2>&1 ||
		apt-get download -q "$pkg" >/dev/null 2>&1 ||
		{ apt-get -o DPkg::Lock::Timeout=300 update -qq >/dev/null && apt-get download -q "$pkg"; }) ||
		return 1
	deb=$(ls "$cache/${pkg}"_*.deb | sort -V | tail -n 1)
	dpkg-deb -x "$deb" "$dir/tree" || return 1
	ver=$(ls "$dir/tree/lib/modules")
	depmod -b "$dir/tree" "$ver" || return 1
	stage=$(mktemp -d)
	mkdir -p "$stage/bin"
	cp "$(command -v busybox)" "$stage/bin/busybox" || return 1
	install -m 0755 "$top/tests/kernels/initramfs-init" "$stage/init"
	initramfs_modules "$dir/tree" "$ver" "$stage"
	(cd "$stage" && find . | busybox cpio -o -H newc 2>/dev/null | gzip -1) >"$dir/initrd.gz" ||
		return 1
	rm -rf "$stage"
	echo "$ver" >"$dir/ver"
}

# Boots one kernel and runs guest.sh MODE in it; returns its exit status.
boot() {
	local s=$1 pkg=$2 dir=$cache/$2 ver out rc qpid lockup
	ver=$(cat "$dir/ver")
	out=$build/kernels/$s
	rm -rf "$out"
	mkdir -p "$out"
	cat >"$out/entry.sh" <<-ENTRY
	#!/bin/bash
	export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
	export BUILD=$build XFIB_KERNEL_OUT=/xfib-out
	cd $top
	bash tests/kernels/guest.sh $mode "\$(cat /xfib-out/cmd)"
	echo \$? >/xfib-out/rc
	sync
	busybox poweroff -f
	ENTRY
	printf '%s' "$cmd" >"$out/cmd"
	# -cpu max: every feature TCG emulates, so the JIT sees a modern CPU.
	rc=0 lockup=""
	# loglevel=5: a lockup's or a warning's backtrace reaches the console.
	timeout -k 10 "$limit" qemu-system-x86_64 -machine q35 -accel tcg,thread=multi \
		-cpu max -smp 2 -m 3072 -nographic -no-reboot -nic none \
		-kernel "$dir/tree/boot/vmlinuz-$ver" -initrd "$dir/initrd.gz" \
		-append "console=ttyS0 panic=-1 quiet loglevel=5" \
		-virtfs local,path=/,mount_tag=xroot,security_model=none,readonly=on,multidevs=remap \
		-virtfs "local,path=$dir/tree,mount_tag=xtree,security_model=none,readonly=on" \
		-virtfs "local,path=$out,mount_tag=xout,security_model=none" \
		</dev/null >"$out/console.log" 2>&1 &
	qpid=$!
	# A guest whose CPU has been stuck for two minutes (a soft lockup the
	# kernel reports) does not come back: it is stopped then, not at the
	# time limit. A shorter report can be an emulated CPU that the host
	# did not run for a while, and is only kept in the log.
	while kill -0 "$qpid" 2>/dev/null; do
		lockup=$(grep -aoE 'soft lockup - CPU#[0-9]+ stuck for ([1-9][0-9]{3,}|[2-9][0-9]{2}|1[2-9][0-9])s' \
			"$out/console.log" | head -n 1 || true)
		[ -z "$lockup" ] || { kill "$qpid" 2>/dev/null; break; }
		sleep 5
	done
	wait "$qpid" || rc=$?
	if [ -n "$lockup" ]; then
		echo "matrix: $s: the guest kernel locked up ($lockup): stopped" >>"$out/console.log"
		rc=1
	elif [ -f "$out/rc" ]; then
		rc=$(cat "$out/rc")
	elif [ "$rc" -eq 124 ]; then
		echo "matrix: $s: stopped after $limit s" >>"$out/console.log"
		rc=1
	else
		rc=1
	fi
	return "$rc"
}

pass=0 fail=0
for s in "${series[@]}"; do
	start=$(date +%s)
	if ! pkg=$(pkg_of "$s") || ! prepare "$pkg" >"$build/kernels-prepare-$s.log" 2>&1; then
		fail=$((fail + 1))
		printf 'FAIL  kernel %-28s (could not prepare: see %s)\n' "$s" "$build/kernels-prepare-$s.log"
		continue
	fi
	rc=0
	boot "$s" "$pkg" || rc=$?
	secs=$(($(date +%s) - start))
	ver=$(cat "$cache/$pkg/ver")
	if [ "$rc" -eq 0 ]; then
		pass=$((pass + 1))
		printf 'PASS  kernel %-28s %4ss\n' "$ver" "$secs"
	else
		fail=$((fail + 1))
		printf 'FAIL  kernel %-28s %4ss  (exit %s)\n' "$ver" "$secs" "$rc"
		sed 's/^/    | /' "$build/kernels/$s/console.log" | tail -n 80
	fi
	[ -f "$build/kernels/$s/summary" ] && sed 's/^/      /' "$build/kernels/$s/summary"
done
echo
echo "$pass passed, $fail failed, 0 skipped"
[ "$fail" -eq 0 ]
