#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The layout of ctl/ holds (scripts/check-layout.py): xfibd's rooms are
# entered only by their doors, includes between rooms go the one way
# calls may, and no function in ctl/ is over 80 lines. Then the check is
# shown to catch each kind of breach, on a copy of ctl/ with one planted:
# another room's private header, a door against the direction (and
# reached by "../"), a room it does not know, and a long function.
# With the daemon built, the calls are checked too, from its objects
# (between rooms, and circles between the files of one), and planted
# breaches of those must be caught. Needs no root.
# Exit 0 pass, else fail.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$top/build}
check=$top/scripts/check-layout.py

command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
"$check" "$top" || { echo "FAIL: the layout of ctl/ is broken (above)"; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fresh() {
	rm -rf "$tmp/t"
	mkdir -p "$tmp/t"
	cp -a "$top/ctl" "$top/include" "$tmp/t/"
	"$check" "$tmp/t" >/dev/null || { echo "FAIL: the copy does not pass"; exit 1; }
}

# expect_caught WHAT PATTERN: the check fails on the planted breach and
# names it.
expect_caught() {
	local out
	if out=$("$check" "$tmp/t"); then
		echo "FAIL: not caught: $1"
		exit 1
	fi
	grep -q -- "$2" <<<"$out" || { echo "FAIL: $1: unexpected report: $out"; exit 1; }
	echo "caught: $1"
}

plant_include() { # FILE HEADER: an include after FILE's first line
	sed -i "1a #include \"$2\"" "$tmp/t/ctl/xfibd/$1"
}

fresh; plant_include fib/fib.c rib/rib_priv.h
expect_caught "a room's private header" "rib/rib_priv.h is private"
fresh; plant_include kernel/netlink.c ../rib/htab.h
expect_caught "a private header by ../" "rib/htab.h is private"
fresh; plant_include rib/rib.c fib/fib.h
expect_caught "a lower room including a higher one" "rib/ may not call fib/"
fresh; plant_include kernel/nl_reader.c fib/fib.h
expect_caught "a room including a sibling it may not use" "kernel/ may not call fib/"
fresh; plant_include nf/nfgate.c hash_seed.h
expect_caught "a room including the daemon's top" "may not include the top"
fresh; plant_include ../lib/log.c ../xfibd/xfrm/xfrm.h
expect_caught "ctl/lib using xfibd" "ctl/lib may not use ctl/xfibd"
fresh; mkdir "$tmp/t/ctl/xfibd/extra"
expect_caught "a room without a door" "a room check-layout.py does not know"
fresh
{
	printf 'static int planted_long(void)\n{\n\tint x = 0;\n\n'
	for i in $(seq 1 80); do printf '\tx += %d;\n' "$i"; done
	printf '\treturn x;\n}\n'
} >>"$tmp/t/ctl/xfibd/xfrm/xfrm_count.c"
expect_caught "a function over 80 lines" "planted_long() is 83 lines"
fresh
{
	printf 'int planted_brace(void) {\n\tint x = 0;\n\n'
	for i in $(seq 1 80); do printf '\tx += %d;\n' "$i"; done
	printf '\treturn x;\n}\n'
} >>"$tmp/t/ctl/lib/log.c"
expect_caught "a long function with its brace on the signature" "planted_brace() is 83 lines"

# The calls, from the objects make built: a room calling one it may not,
# or a function its door does not declare, through a declaration of its
# own that no include check sees; two files of a room in a circle.
objs=$build/ctl/xfibd
if [ ! -f "$objs/rib/rib.o" ]; then
	echo "PASS (calls not checked: no objects in $objs; run make)"
	exit 0
fi
"$check" "$top" "$build" || { echo "FAIL: calls between rooms (above)"; exit 1; }
plant_call() { # ROOM FUNCTION: a source and object of ROOM calling FUNCTION
	fresh
	rm -rf "$tmp/b"
	mkdir -p "$tmp/b/ctl"
	cp -a "$objs" "$tmp/b/ctl/"
	printf 'void %s(void);\nvoid planted_call(void) { %s(); }\n' "$2" "$2" \
		>"$tmp/t/ctl/xfibd/$1/planted.c"
	${CC:-cc} -c "$tmp/t/ctl/xfibd/$1/planted.c" -o "$tmp/b/ctl/xfibd/$1/planted.o"
}
expect_caught_calls() {
	local out
	if out=$("$check" "$tmp/t" "$tmp/b"); then
		echo "FAIL: not caught: $1"
		exit 1
	fi
	grep -q -- "$2" <<<"$out" || { echo "FAIL: $1: unexpected report: $out"; exit 1; }
	echo "caught: $1"
}
plant_src() { # ROOM NAME SOURCE: one more file of ROOM, built
	printf '%s\n' "$3" >"$tmp/t/ctl/xfibd/$1/$2.c"
	${CC:-cc} -c "$tmp/t/ctl/xfibd/$1/$2.c" -o "$tmp/b/ctl/xfibd/$1/$2.o"
}
plant_call fib planted_b
plant_src fib planted_b 'void planted_call(void); void planted_b(void) { planted_call(); }'
expect_caught_calls "two files of a room calling each other" "fib/planted.o, fib/planted_b.o call each other"
plant_call rib fib_flush
expect_caught_calls "a lower room calling a higher one" "calls fib_flush() of fib: rib/ may not call it"
plant_call kernel nexthop_get
expect_caught_calls "a call to a room's private function" "calls nexthop_get(), which rib/rib.h does not declare"
echo "PASS"
