#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Install the Debian packages xfib needs to build, test, benchmark and demo
# (python3-matplotlib draws the benchmark plots; bird2 and frr are route
# sources in tests; debhelper, dpkg-dev, fakeroot and lintian build and
# check the .deb; bash-completion runs the completion's test; nftables,
# iptables, conntrack and socat run the netfilter tests and the gate
# benchmark; qemu-system-x86, busybox-static and kmod boot and run the
# kernel matrix, tests/kernels/). Idempotent:
# installs only what is missing, and runs apt-get update only if it must.
set -euo pipefail

PKGS=(
	make gcc clang llvm libclang-rt-14-dev pkg-config libc6-dev linux-libc-dev
	libbpf-dev libxdp-dev libmnl-dev libjson-c-dev libelf-dev zlib1g-dev
	bpftool iproute2 ethtool iputils-ping tcpdump util-linux procps jq
	python3 python3-matplotlib groff-base bird2 frr systemd
	debhelper dpkg-dev fakeroot lintian bash-completion
	nftables iptables conntrack socat
	qemu-system-x86 busybox-static kmod
)

missing=()
for p in "${PKGS[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done

if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages: ${missing[*]}" >&2
	echo "install-deps: run as root (or install them yourself)" >&2
	exit 1
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# Wait for another apt run (unattended upgrades, a parallel install)
# instead of failing on its lock.
apt-get -o DPkg::Lock::Timeout=300 update -qq
apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends \
	"${missing[@]}" >/dev/null
