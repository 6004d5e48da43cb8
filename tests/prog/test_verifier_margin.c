// SPDX-License-Identifier: GPL-2.0-only
/*
 * Every BPF program xfib and its benchmarks load is well under the
 * verifier's limit of 1,000,000 processed instructions: at most half of
 * it, so that another kernel's verifier (each release explores
 * differently; builds of one version differ too) or a change of the
 * program has room. Loads, with private maps, each program as this kernel
 * would get it (the forwarder with or without the conntrack kfuncs,
 * ctl/lib/pin.c; xfibctl verify's referee; each program of
 * tests/bench/lookup.bpf.c alone, with the verifier's statistics,
 * tests/lib/prog_insns.h), and prints how many instructions the verifier
 * processed. The kernel matrix (tests/kernels/matrix.sh) runs it on every
 * kernel, twice: without netfilter modules and with nf_conntrack; the
 * second time with XFIB_MARGIN_SKIP_LOOKUPS=1, for the lookup programs use
 * no conntrack and their check takes half a minute under an emulated CPU.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "pin.h"
#include "log.h"
#include "xfib/verify.h"
#include "xfib_verify.skel.h"
#include "lookup.skel.h"
#include "prog_insns.h"
#include "progtest.h"

#define VERIFIER_LIMIT XFIB_VERIFIER_LIMIT
#define MARGIN_LIMIT (VERIFIER_LIMIT / 2)

/* The instructions the verifier processed for prog (Linux 5.16+). */
static __u32 verified_insns(int prog_fd)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len))
		return 0;
	return info.verified_insns;
}

static void report(const char *name, int prog_fd)
{
	__u32 n = verified_insns(prog_fd);

	printf("%s: %u processed instructions (%.1f%% of the verifier's limit)\n",
	       name, n, 100.0 * n / VERIFIER_LIMIT);
	expect(n > 0 && n <= MARGIN_LIMIT, "%s within half the limit: %u <= %u",
	       name, n, MARGIN_LIMIT);
}

/* Private maps: nothing is pinned or reused from /sys/fs/bpf. */
static void unpin(struct bpf_object *obj)
{
	struct bpf_map *map;

	bpf_object__for_each_map(map, obj)
		bpf_map__set_pin_path(map, NULL);
}

static void check(const char *name, int err, __u32 n)
{
	expect(!err && n > 0 && n <= MARGIN_LIMIT,
	       "%-22s %s, %u instructions processed (at most %u)", name,
	       err ? strerror(-err) : "loaded", n, MARGIN_LIMIT);
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

/* The forwarder as xfib_open() would load it here; 0 or -errno. */
static int check_fwd(bool with_ct, bool udp_stream)
{
	struct xfib_fwd_bpf *skel = xfib_fwd_open(NULL, with_ct);
	char name[64];
	int err;

	if (!skel)
		return -errno;
	skel->rodata->xfib_ct_udp_stream = udp_stream;
	unpin(skel->obj);
	err = xfib_fwd_bpf__load(skel);
	if (!err) {
		snprintf(name, sizeof(name), "xfib_fwd (%s%s)",
			 with_ct ? "with conntrack kfuncs" : "without conntrack kfuncs",
			 with_ct && !udp_stream ? ", no UDP stream time" : "");
		report(name, bpf_program__fd(skel->progs.xfib_fwd));
	}
	xfib_fwd_bpf__destroy(skel);
	return err;
}

int main(void)
{
	struct xfib_verify_bpf *v;
	bool with_ct = xfib_ct_kfuncs();
	int err;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (geteuid()) {
		printf("SKIP: needs root\n");
		return SKIP;
	}
	log_setup_libbpf();
	err = check_fwd(false, false);
	expect(!err, "xfib_fwd without conntrack kfuncs loads%s%s", err ? ": " : "",
	       err ? strerror(-err) : "");
	if (with_ct) {
		err = check_fwd(true, true);
		if (err) {
			printf("this verifier refuses the UDP stream time read (%s): "
			       "as xfib_open() does, without it\n", strerror(-err));
			err = check_fwd(true, false);
		}
		expect(!err, "xfib_fwd with conntrack kfuncs loads%s%s", err ? ": " : "",
		       err ? strerror(-err) : "");
	} else {
		printf("no conntrack kfuncs in this kernel now: the build with them "
		       "is not loaded\n");
	}
	v = xfib_verify_bpf__open_and_load();
	expect(v != NULL, "xfib_verify loads%s%s", v ? "" : ": ", v ? "" : strerror(errno));
	if (v)
		report("xfib_verify", bpf_program__fd(v->progs.xfib_verify));
	xfib_verify_bpf__destroy(v);
	if (getenv("XFIB_MARGIN_SKIP_LOOKUPS"))
		printf("the lookup programs are not checked again (XFIB_MARGIN_SKIP_LOOKUPS)\n");
	else
		lookup_progs();
	printf("\n%d cases, %d failed\n", ncases, nfailed);
	return nfailed ? 1 : 0;
}
