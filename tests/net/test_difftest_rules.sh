#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The differential packet test's policy-routing run (tests/difftest/run.sh
# -R): a rule set with every selector and action xfib walks (from, to,
# iif, tos, ipproto with port ranges, not, a fwmark that matches nothing,
# goto, nop, blackhole, unreachable, prohibit, lookups into tables that
# send destinations elsewhere than main, a throw route, lookup main
# suppress_prefixlength 0 before a default route), both families, and
# 4000 frames, seed 1, that each rule decides some of (rulecases.py):
# sources inside and outside its prefixes, ports inside and outside its
# ranges, TOS values, frames into another port, fragments, TTL corners,
# random mutations. The kernel's and xfib's frames must be the same at
# every host; before that, two kernel runs must compare equal and a
# planted difference must be found. Needs tests/difftest built (make test
# or make difftest).
# run.sh: long
set -euo pipefail
exec "$(dirname "$0")/../difftest/run.sh" -R -n 4000 -s 1 -c 4000 -p 1
