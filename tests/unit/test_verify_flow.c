// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit test of the flows xfibctl verify asks the policy rules about
 * (ctl/xfibctl/verify_flow.c). For random rule sets of both families
 * (from prefixes, iif on attached ports and others, ipproto, sport and
 * dport ranges reaching 0 and 65535, tos, not, selectors xfibd found to
 * never match), with no bound on the flows:
 *  - every rule the walk reads the selectors of, on an attached port,
 *    is matched by some flow and missed by another, as the walk's own
 *    xfib_rule_selectors() (include/xfib/rule_walk.h) judges them;
 *  - the edges are asked: each from prefix's first and last address and
 *    its neighbours, each port range's lo - 1, lo, hi, hi + 1 with the
 *    rule's protocol (none past 0 or 65535), each tos with its ECN bit;
 *    a source no from prefix holds;
 *  - the flows are the combinations, each once, on attached ports only,
 *    one run of flows per port;
 * and with a bound, at most that many, the same number per port.
 */
#include <linux/fib_rules.h>
#include <netinet/in.h>

#define TESTLIB_SEED 0x7e5f10a5d0e1ull
#include "testlib.h"
#include "verify.h"
#include "verify_priv.h"

/* The walk's accessors: only xfib_rule_selectors() is used here. */
struct xfib_env {
	int unused;
};

static __u64 xfib_env_table(struct xfib_env *env, __u32 fam, __u32 slot)
{
	return 0;
}

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

static const __u32 ports[] = { 3, 5, 8 }; /* attached, ascending */
#define NPORTS (sizeof(ports) / sizeof(ports[0]))
#define SWEEP_IIF 3

static struct xfib_rule_set set;
static unsigned int width;

static __u16 rnd_port(void)
{
	switch (rnd_below(4)) {
	case 0:
		return 0;
	case 1:
		return 65535;
	default:
		return (__u16)rnd();
	}
}

static void rnd_range(__u16 *lo, __u16 *hi)
{
	__u16 a = rnd_port(), b = rnd_port();

	*lo = a < b ? a : b;
	*hi = a < b ? b : a;
}

static void set_random(int fam, __u32 n)
{
	__u8 mask = fam == XFIB_V4 ? 0x1c : 0xfc;
	__u32 i;

	memset(&set, 0, sizeof(set));
	set.hdr.walk = 1;
	set.hdr.first = 1;
	set.hdr.count = n;
	set.rule[0].action = FR_ACT_TO_TBL; /* lookup local */
	for (i = 1; i < n; i++) {
		struct xfib_rule *x = &set.rule[i];

		x->action = FR_ACT_TO_TBL;
		x->tos_mask = mask;
		if (rnd_below(2)) {
			x->src_len = 1 + rnd_below(width);
			to_bytes(width, pfx_first(width, rnd_addr(width), x->src_len), x->src);
		}
		if (!rnd_below(4)) {
			x->flags |= XFIB_RULE_F_IIF;
			x->iif = rnd_below(3) ? ports[rnd_below(NPORTS)] : 4;
		}
		if (!rnd_below(3))
			x->ip_proto = rnd_below(2) ? IPPROTO_TCP : IPPROTO_UDP;
		if (!rnd_below(3)) {
			x->flags |= XFIB_RULE_F_DPORT;
			rnd_range(&x->dport_lo, &x->dport_hi);
		}
		if (!rnd_below(4)) {
			x->flags |= XFIB_RULE_F_SPORT;
			rnd_range(&x->sport_lo, &x->sport_hi);
		}
		if (!rnd_below(4))
			x->tos = (__u8)(4 + rnd_below(7) * 4) & mask;
		if (!rnd_below(5))
			x->flags |= XFIB_RULE_F_INVERT;
		if (!rnd_below(10))
			x->flags |= XFIB_RULE_F_MATCH_NONE;
	}
}

static void rflow_of(int fam, const struct verify_flow *f, struct xfib_rflow *r)
{
	memset(r, 0, sizeof(*r));
	dpl_rflow_addr(fam, f->src, &r->src_hi, &r->src_lo);
	r->iif = f->iif;
	r->proto = f->proto;
	r->sport = f->sport;
	r->dport = f->dport;
	r->tos = f->tos;
}

/* dplookup.c's, which the test does not link. */
void dpl_rflow_addr(int fam, const __u8 *a, __u64 *hi, __u64 *lo)
{
	u128 v = from_bytes(fam == XFIB_V4 ? 32 : 128, a);

	*hi = (__u64)(v >> 64);
	*lo = (__u64)v;
}

static bool has_selector(const struct xfib_rule *x)
{
	return x->src_len || x->ip_proto || x->tos ||
	       (x->flags & (XFIB_RULE_F_IIF | XFIB_RULE_F_SPORT | XFIB_RULE_F_DPORT));
}

/* Whether a flow can miss the rule: a selector some value is outside
 * of (an iif too, but the rules may name every attached port). */
static bool can_miss(const struct xfib_rule *x)
{
	return x->src_len || x->ip_proto || x->tos ||
	       ((x->flags & XFIB_RULE_F_DPORT) && (x->dport_lo || x->dport_hi < 65535)) ||
	       ((x->flags & XFIB_RULE_F_SPORT) && (x->sport_lo || x->sport_hi < 65535));
}

static bool on_attached(const struct xfib_rule *x)
{
	size_t k;

	if (!(x->flags & XFIB_RULE_F_IIF))
		return true;
	for (k = 0; k < NPORTS; k++)
		if (ports[k] == x->iif)
			return true;
	return false;
}

static bool has_source(const struct flows *fl, int fam, u128 a)
{
	__u8 b[16] = { 0 };
	size_t i;

	to_bytes(width, a, b);
	for (i = 0; i < fl->n; i++)
		if (!memcmp(fl->v[i].src, b, 16))
			return true;
	return false;
}

static bool has_port(const struct flows *fl, __u8 proto, bool dport, __u16 p)
{
	size_t i;

	for (i = 0; i < fl->n; i++)
		if (fl->v[i].proto == proto && (dport ? fl->v[i].dport : fl->v[i].sport) == p)
			return true;
	return false;
}

static bool has_tos(const struct flows *fl, __u8 tos)
{
	size_t i;

	for (i = 0; i < fl->n; i++)
		if (fl->v[i].tos == tos)
			return true;
	return false;
}

static int flow_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct verify_flow));
}

static void check_range(const struct flows *fl, const struct xfib_rule *x,
			bool dport)
{
	__u16 lo = dport ? x->dport_lo : x->sport_lo;
	__u16 hi = dport ? x->dport_hi : x->sport_hi;
	__u8 proto = x->ip_proto ? x->ip_proto : IPPROTO_TCP;

	CHECK(has_port(fl, proto, dport, lo) && has_port(fl, proto, dport, hi),
	      "%s range %u-%u: an edge not asked", dport ? "dport" : "sport", lo, hi);
	CHECK(!lo || has_port(fl, proto, dport, lo - 1), "%s %u - 1 not asked",
	      dport ? "dport" : "sport", lo);
	CHECK(hi == 65535 || has_port(fl, proto, dport, hi + 1),
	      "%s %u + 1 not asked", dport ? "dport" : "sport", hi);
}

static void check_rule(int fam, const struct flows *fl, __u32 i)
{
	const struct xfib_rule *x = &set.rule[i];
	bool match = false, miss = false;
	struct xfib_rflow r;
	size_t k;

	for (k = 0; k < fl->n && !(match && miss); k++) {
		rflow_of(fam, &fl->v[k], &r);
		if (xfib_rule_selectors(x, &r, fam == XFIB_V4))
			match = true;
		else
			miss = true;
	}
	if (!has_selector(x) || (x->flags & XFIB_RULE_F_MATCH_NONE))
		return;
	if (on_attached(x))
		CHECK(match, "rule %u: no flow matches it", i);
	CHECK(miss || !can_miss(x), "rule %u: every flow matches it (flags 0x%x, from /%u, proto %u, sport %u-%u, dport %u-%u, tos 0x%02x)",
	      i, x->flags, x->src_len, x->ip_proto, x->sport_lo, x->sport_hi,
	      x->dport_lo, x->dport_hi, x->tos);
	if (x->src_len) {
		u128 a = from_bytes(width, x->src);
		u128 first = pfx_first(width, a, x->src_len);
		u128 last = pfx_last(width, a, x->src_len);

		CHECK(has_source(fl, fam, first) && has_source(fl, fam, last),
		      "rule %u: its from prefix's first or last address not asked", i);
		CHECK(!first || has_source(fl, fam, first - 1),
		      "rule %u: the address before its from prefix not asked", i);
		CHECK(last == last_addr(width) || has_source(fl, fam, last + 1),
		      "rule %u: the address after its from prefix not asked", i);
	}
	if (x->flags & XFIB_RULE_F_DPORT)
		check_range(fl, x, true);
	if (x->flags & XFIB_RULE_F_SPORT)
		check_range(fl, x, false);
	if (x->tos)
		CHECK(has_tos(fl, x->tos) && has_tos(fl, x->tos | 1),
		      "rule %u: tos 0x%02x, or it with ECN, not asked", i, x->tos);
}

/* Each flow once, on attached ports, one run per port; no port past 0 or
 * 65535 wrapped around. */
static void check_shape(const struct flows *fl)
{
	struct verify_flow *v = malloc(fl->n * sizeof(*v) + 1);
	size_t i, k, changes = 0;

	CHECK(v, "allocate");
	for (i = 0; i < fl->n; i++) {
		bool attached = false;

		for (k = 0; k < NPORTS; k++)
			attached |= fl->v[i].iif == ports[k];
		CHECK(attached, "flow %zu enters by port %u, not attached", i, fl->v[i].iif);
		changes += i && fl->v[i].iif != fl->v[i - 1].iif;
		CHECK(fl->v[i].proto || (!fl->v[i].sport && !fl->v[i].dport),
		      "flow %zu: ports without a protocol", i);
	}
	CHECK(changes < NPORTS, "the flows change ports %zu times", changes);
	memcpy(v, fl->v, fl->n * sizeof(*v));
	qsort(v, fl->n, sizeof(*v), flow_cmp);
	for (i = 1; i < fl->n; i++)
		CHECK(flow_cmp(&v[i - 1], &v[i]), "a flow asked twice");
	free(v);
}

int main(int argc, char **argv)
{
	unsigned long total = 0;
	struct flows fl;
	unsigned int run;
	__u64 rng;
	__u32 i;
	int fam;

	testlib_start(argv[0], argc > 1 ? argv[1] : NULL);
	for (fam = XFIB_V4; fam <= XFIB_V6; fam++) {
		cur_test = fam == XFIB_V4 ? "ipv4" : "ipv6";
		width = fam == XFIB_V4 ? 32 : 128;
		for (run = 0; run < 300; run++) {
			set_random(fam, 2 + rnd_below(7));
			rng = rnd();
			CHECK(!rule_flows(fam, &set, ports, NPORTS, SWEEP_IIF, ~0ul, &rng, &fl),
			      "rule_flows failed");
			CHECK(fl.n == fl.combinations, "%zu flows of %lu combinations",
			      fl.n, fl.combinations);
			check_shape(&fl);
			for (i = 1; i < set.hdr.count; i++)
				check_rule(fam, &fl, i);
			total += fl.n;
			free(fl.v);

			/* Bounded: at most the bound, the same share per port. */
			CHECK(!rule_flows(fam, &set, ports, NPORTS, SWEEP_IIF, 12, &rng, &fl),
			      "rule_flows (bounded) failed");
			CHECK(fl.n <= 12 && fl.n > 0, "%zu flows for a bound of 12", fl.n);
			check_shape(&fl);
			free(fl.v);
		}
	}
	printf("%lu flows checked\n", total);
	CHECK(total > 10000, "only %lu flows made", total);
	printf("PASS\n");
	return 0;
}
