// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit test of the runs of policy rules on the source
 * (ctl/xfibd/rib/rib_rule_runs.c, read by include/xfib/rule_walk.h): for
 * random rule sets of both families, the walk with the compiled runs
 * must end as the walk rule by rule does, on every flow, at the same
 * rule, with the same answer. The sets mix what a run holds (from
 * prefixes that nest and overlap, with and without not; selectors xfibd
 * decided; rules on every source) with what ends one (ports, iif, a
 * rule the kernel judges, iif lo for the route back), and actions that
 * decide (lookup main) with ones that go on (a lookup that finds
 * nothing, nop, goto forward, resolved or not). The sources asked are
 * random and every prefix's first address, last address and their
 * neighbours. The test also checks that runs are compiled at all (the
 * walk reads fewer rules with them), so that it cannot pass by skipping
 * nothing.
 */
#include <linux/fib_rules.h>

#define TESTLIB_SEED 0x5eed0f2a17e5ull
#include "testlib.h"
#include "rib/rib.h"

struct xfib_env {
	int unused;
};

/* Every table but main is empty: a lookup there goes on. */
static __u64 xfib_env_table(struct xfib_env *env, __u32 fam, __u32 slot)
{
	return 0;
}

/* No table answers: no nexthop is read. */
static const struct xfib_nexthop *xfib_env_nexthop(struct xfib_env *env,
						   __u32 idx)
{
	return NULL;
}

/* Nor, without suppress_ifgroup, a group or a port. */
static const struct xfib_nh_group *xfib_env_group(struct xfib_env *env,
						   __u32 idx)
{
	return NULL;
}

static const struct xfib_iface *xfib_env_iface(struct xfib_env *env,
					       __u32 ifindex)
{
	return NULL;
}

static const struct xfib_tr4 *xfib_env_tr4(struct xfib_env *env, __u32 idx)
{
	return NULL;
}

static const struct xfib_tr6 *xfib_env_tr6(struct xfib_env *env, __u32 idx)
{
	return NULL;
}

struct xfib_rflow;
/* Nor does a large table's instance (unit test_table_select reads
 * them). */
static __u32 xfib_env_table_inst(struct xfib_env *env, __u32 fam, __u32 inst,
				 const struct xfib_rflow *f)
{
	return ~0u;
}

#include "xfib/rule_walk.h"

static int xfib_env_rule_ifgroup(struct xfib_env *env, __u32 fam, __u32 group,
				 __u32 nh_idx, __u32 flow_hash, __u32 *hashed)
{
	return xfib_rule_ifgroup(env, fam, group, nh_idx, flow_hash, hashed);
}

static __u32 xfib_env_table_answer(struct xfib_env *env, __u32 fam,
				   __u32 slot, const struct xfib_rflow *f,
				   __u32 *ans)
{
	return xfib_table_answer(env, fam, slot, f, ans);
}

static __u32 xfib_env_rule_run(struct xfib_env *env,
			      const struct xfib_rule_set *set,
			      const struct xfib_rule *x,
			      const struct xfib_rflow *f)
{
	return xfib_rule_run_next(set, x->run_off, x->run_log2n, f->src_hi,
				  f->src_lo);
}

#define MAIN_NH 7
#define EMPTY_SLOT 3

static struct xfib_rule_set set, linear;
static unsigned int decided; /* flows the source alone decided */
static u128 base[6]; /* the prefixes' addresses come from these */
static unsigned int width;

static void rule_random(struct xfib_rule *x, __u32 i, __u32 n)
{
	unsigned int k = rnd_below(100), len;
	u128 a;

	memset(x, 0, sizeof(*x));
	x->priority = 100 + i;
	x->suppress_prefixlen = x->suppress_ifgroup = 0xffffffff;
	x->tos_mask = width == 32 ? 0x1c : 0xfc;
	x->tslot = XFIB_TSLOT_NONE;
	if (k < 55) { /* from a prefix */
		len = rnd_below(4) ? rnd_below(width + 1) : width;
		a = base[rnd_below(6)];
		if (rnd_below(3) == 0) /* somewhere near the base */
			a ^= (u128)rnd_below(1024) << rnd_below(width - 10);
		to_bytes(width, a, x->src);
		x->src_len = len;
	} else if (k < 65) { /* a selector xfibd decided for every packet */
		x->flags |= XFIB_RULE_F_MATCH_NONE | XFIB_RULE_F_FWMARK;
	} else if (k < 75) { /* ports, iif */
		if (rnd_below(2)) {
			x->flags |= XFIB_RULE_F_DPORT;
			x->dport_lo = 100;
			x->dport_hi = 200;
		} else {
			x->flags |= XFIB_RULE_F_IIF;
			x->iif = 2;
		}
	} else if (k < 80) { /* the kernel's */
		x->flags |= XFIB_RULE_F_FWMARK;
		x->cls = XFIB_RULE_KERNEL;
		x->reason = XFIB_RULE_R_FWMARK;
		x->fwmark = x->fwmask = 1;
	} else if (k < 83) { /* iif lo: a route back's is the kernel's */
		x->flags |= XFIB_RULE_F_IIF | XFIB_RULE_F_IIF_LOOPBACK |
			    XFIB_RULE_F_MATCH_NONE;
	} /* else: every source */
	if (rnd_below(6) == 0)
		x->flags |= XFIB_RULE_F_INVERT;
	k = rnd_below(100);
	if (k < 45) {
		x->action = FR_ACT_TO_TBL;
		x->table = RT_TABLE_MAIN;
		x->tslot = XFIB_TSLOT_MAIN;
	} else if (k < 75) {
		x->action = FR_ACT_TO_TBL;
		x->table = 1000 + i;
		x->tslot = EMPTY_SLOT;
	} else if (k < 88) {
		x->action = FR_ACT_NOP;
	} else {
		x->action = FR_ACT_GOTO;
		x->goto_idx = i + 1 < n && rnd_below(4) ?
				      i + 1 + rnd_below(n - i - 1) : XFIB_RULE_NO_TARGET;
	}
}

static void set_random(int fam, __u32 n)
{
	__u32 i;

	memset(&set, 0, sizeof(set));
	set.hdr.count = set.hdr.total = n;
	set.hdr.walk = 1;
	set.hdr.first = 1;
	set.rule[0].action = FR_ACT_TO_TBL;
	set.rule[0].table = RT_TABLE_LOCAL;
	set.rule[0].tslot = XFIB_TSLOT_LOCAL;
	for (i = 0; i < 6; i++)
		base[i] = rnd_addr(width);
	for (i = 1; i < n; i++)
		rule_random(&set.rule[i], i, n);
	rib_rule_runs(&set, fam);
	linear = set;
	for (i = 0; i < XFIB_RULES_MAX; i++)
		linear.rule[i].run = 0;
}

/* The walk over s for the source; *steps counts the rules it read. */
static struct xfib_rwalk walk(int fam, const struct xfib_rule_set *s, u128 src,
			      __u16 dport, __u32 iif, int reverse,
			      unsigned int *steps)
{
	struct xfib_rflow f = { 0 };
	struct xfib_rwalk w = { 0 };
	unsigned int i;

	f.src_hi = (__u64)(src >> 64);
	f.src_lo = (__u64)src;
	f.dst_lo = 0x01020304;
	f.dport = dport;
	f.iif = iif;
	f.proto = IPPROTO_UDP;
	f.reverse = reverse;
	w.main_nh = MAIN_NH;
	w.rule = s->hdr.first;
	w.nh = XFIB_NH_IDX_NONE;
	w.reason = XFIB_PASS_RULE;
	for (i = 0; i <= XFIB_RULES_MAX; i++) {
		++*steps;
		if (xfib_rule_step(NULL, fam, s, &f, &w))
			break;
	}
	return w;
}

/* Where the source alone decides (xfib_rules_by_source()), it must
 * decide as the walk rule by rule, b, did. */
static void by_source(int fam, u128 src, const struct xfib_rwalk *b)
{
	struct xfib_rflow f = { 0 };
	struct xfib_rwalk w = { 0 };
	char buf[INET6_ADDRSTRLEN];

	f.src_hi = (__u64)(src >> 64);
	f.src_lo = (__u64)src;
	f.dst_lo = 0x01020304;
	w.main_nh = MAIN_NH;
	if (!xfib_rules_by_source(NULL, fam, &set, &f, &w))
		return;
	decided++;
	CHECK(w.reason == b->reason && w.nh == b->nh && w.rule == b->rule &&
		      w.table == b->table && !b->suppressed,
	      "source %s: by the source alone rule %u nh %u, rule by rule reason %u nh %u rule %u",
	      fmt_addr(width, src, buf), w.rule, w.nh, b->reason, b->nh, b->rule);
}

static void check_source(int fam, u128 src, unsigned int *sr, unsigned int *sl)
{
	__u16 dport = rnd_below(2) ? 150 : 300;
	__u32 iif = 2 + rnd_below(2);
	int rev = rnd_below(4) == 0;
	char buf[INET6_ADDRSTRLEN];
	struct xfib_rwalk a, b;

	src &= last_addr(width);
	a = walk(fam, &set, src, dport, iif, rev, sr);
	b = walk(fam, &linear, src, dport, iif, rev, sl);
	by_source(fam, src, &b);

	CHECK(a.reason == b.reason && a.nh == b.nh && a.rule == b.rule &&
		      a.table == b.table && a.suppressed == b.suppressed,
	      "source %s dport %u iif %u%s: with runs reason %u nh %u rule %u, rule by rule reason %u nh %u rule %u",
	      fmt_addr(width, src, buf), dport, iif, rev ? " (route back)" : "",
	      a.reason, a.nh, a.rule, b.reason, b.nh, b.rule);
}

int main(int argc, char **argv)
{
	unsigned int run, i, runs = 0, steps_runs = 0, steps_linear = 0;
	int fam;

	testlib_start(argv[0], argc > 1 ? argv[1] : NULL);
	for (fam = XFIB_V4; fam <= XFIB_V6; fam++) {
		cur_test = fam == XFIB_V4 ? "ipv4" : "ipv6";
		width = fam == XFIB_V4 ? 32 : 128;
		for (run = 0; run < 400; run++) {
			__u32 n = 2 + rnd_below(run % 4 ? 24 : XFIB_RULES_MAX - 1);

			set_random(fam, n);
			for (i = 1; i < n; i++)
				runs += set.rule[i].run;
			for (i = 1; i < n; i++) {
				const struct xfib_rule *x = &set.rule[i];
				u128 a = from_bytes(width, x->src);
				u128 first = pfx_first(width, a, x->src_len);
				u128 last = pfx_last(width, a, x->src_len);

				check_source(fam, first, &steps_runs, &steps_linear);
				check_source(fam, first - 1, &steps_runs, &steps_linear);
				check_source(fam, last, &steps_runs, &steps_linear);
				check_source(fam, last + 1, &steps_runs, &steps_linear);
			}
			for (i = 0; i < 64; i++)
				check_source(fam, rnd_addr(width), &steps_runs, &steps_linear);
			check_source(fam, 0, &steps_runs, &steps_linear);
		}
	}
	printf("%u runs compiled; rules read with runs %u, rule by rule %u; %u walks decided by the source alone\n",
	       runs, steps_runs, steps_linear, decided);
	CHECK(decided > 1000, "the source alone decided only %u walks", decided);
	CHECK(runs > 400 && steps_runs * 10 < steps_linear * 8,
	      "the runs save too little: %u runs, %u against %u rules read", runs,
	      steps_runs, steps_linear);
	printf("PASS\n");
	return 0;
}
