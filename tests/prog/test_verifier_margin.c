// SPDX-License-Identifier: GPL-2.0-only
/*
 * Every program the benchmarks load, and the forwarding program, loads
 * with at most half the verifier's limit of processed instructions
 * (500,000 of 1,000,000): kernel builds differ in how many they process
 * for the same program, and one stopped lookup_bsearch4 at the limit
 * where another had passed it. Each program of tests/bench/lookup.bpf.c
 * is loaded alone, over private maps, with the verifier's statistics
 * (tests/lib/prog_insns.h); then xfib_fwd from its own object.
 *
 * Exit status: 0 pass, 1 failure.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "prog_insns.h"
#include "progtest.h"
#include "lookup.skel.h"
#include "xfib_fwd.skel.h"

#define MARGIN_MAX (XFIB_VERIFIER_LIMIT / 2)

/* Private maps: nothing is pinned or reused from /sys/fs/bpf. */
static void unpin(struct bpf_object *obj)
{
	struct bpf_map *map;

	bpf_object__for_each_map(map, obj)
		bpf_map__set_pin_path(map, NULL);
}

static void check(const char *name, int err, __u32 n)
{
	expect(!err && n > 0 && n <= MARGIN_MAX,
	       "%-22s %s, %u instructions processed (at most %u)", name,
	       err ? strerror(-err) : "loaded", n, MARGIN_MAX);
}

static void lookup_progs(void)
{
	struct bpf_program *prog, *p;
	struct lookup_bpf *all, *one;
	char name[64];
	__u32 n;
	int err;

	all = lookup_bpf__open();
	if (!all) {
		expect(false, "open lookup.bpf.c: %s", strerror(errno));
		return;
	}
	bpf_object__for_each_program(prog, all->obj) {
		snprintf(name, sizeof(name), "%s", bpf_program__name(prog));
		if (!strcmp(name, "xfib_fwd"))
			continue; /* the included forwarder: below, alone */
		one = lookup_bpf__open();
		if (!one) {
			expect(false, "open lookup.bpf.c: %s", strerror(errno));
			break;
		}
		unpin(one->obj);
		bpf_object__for_each_program(p, one->obj)
			bpf_program__set_autoload(p, !strcmp(bpf_program__name(p), name));
		p = bpf_object__find_program_by_name(one->obj, name);
		err = prog_insns_load(one->obj, p, &n);
		check(name, err, n);
		lookup_bpf__destroy(one);
	}
	lookup_bpf__destroy(all);
}

int main(void)
{
	struct xfib_fwd_bpf *fwd;
	__u32 n;
	int err;

	libbpf_set_print(NULL);
	lookup_progs();
	fwd = xfib_fwd_bpf__open();
	if (!fwd) {
		expect(false, "open xfib_fwd.bpf.c: %s", strerror(errno));
	} else {
		unpin(fwd->obj);
		err = prog_insns_load(fwd->obj, fwd->progs.xfib_fwd, &n);
		check("xfib_fwd", err, n);
		xfib_fwd_bpf__destroy(fwd);
	}
	printf("%d cases, %d failed\n", ncases, nfailed);
	return nfailed ? 1 : 0;
}
