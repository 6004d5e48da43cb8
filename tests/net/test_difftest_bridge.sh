#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The differential packet test with the sinks behind a Linux bridge
# (tests/difftest/run.sh -B): r-sink and r-sink2 are br-lan's members,
# the bridge has their addresses, and what xfib routes to the sinks
# leaves by the member the bridge's FDB names. 5000 crafted and mutated
# frames, seed 3, without xfib and with it (automatic algorithms, then
# dir24_8 and trie6); the comparison proves itself first on this
# topology (kernel against kernel, a planted difference found).
set -euo pipefail
exec "$(dirname "$0")/../difftest/run.sh" -B -n 5000 -s 3 -c 5000 -p 1
