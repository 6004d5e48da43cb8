#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The differential packet test's NAT run (tests/difftest/run.sh -N): a
# home router's stateful nftables ruleset (masquerade, a fixed source
# address, a port forward), xfib in conntrack gate mode, and 6000 frames of
# NATed flows, seed 1: TCP and UDP both ways, IPv4 and IPv6, with every
# header the kernel treats specially, SYN/FIN/RST, fragments, ICMP errors
# and echoes, flows without an entry, random mutations. The conntrack
# entries are created again before every run. The kernel's and xfib's
# frames must be the same at every host, addresses, ports and checksums
# included; before that, two kernel runs must compare equal and a planted
# difference must be found. Needs tests/difftest built (make test or make
# difftest).
set -euo pipefail
exec "$(dirname "$0")/../difftest/run.sh" -N -n 6000 -s 1 -c 6000 -p 1
