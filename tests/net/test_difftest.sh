#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The differential packet test at CI size (tests/difftest/run.sh): 20000
# crafted and mutated frames, seed 1, through the router without xfib and
# with it (automatic algorithms, then dir24_8 and trie6). Before the xfib
# captures are compared, two kernel runs must compare equal and a planted
# difference must be found on exactly the planted frames. Needs the
# programs of tests/difftest built (make test or make difftest).
set -euo pipefail
exec "$(dirname "$0")/../difftest/run.sh" -n 20000 -s 1 -c 20000 -p 1
