// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit test of xfibd's netfilter check (ctl/xfibd/nf/nfcheck.c): rulesets
 * built by hand in the check's form, each with what the check must say
 * for each family: whether the forward path has rules, whether the
 * conntrack gate may stand in for them, whether the ct state decided a
 * match (else the rules accept every packet unchanged), and for a refusal
 * a word of the reason. The forms follow what nf_tables and x_tables
 * produce for the usual rules (nft --debug=netlink shows them).
 */
#define TESTLIB_SEED 0
#include "testlib.h"
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/xt_conntrack.h>
#include "xfib/maps.h"
#include "nf/nfrules.h"

#define EST 0x2u
#define REL 0x4u
#define INV 0x1u
#define NEW 0x8u

static struct nfx_ruleset rs;

static struct nfx_table *table(__u8 family, const char *name)
{
	struct nfx_table *t = nfx_table_add(&rs, family, name, false);

	CHECK(t, "table_add");
	t->prefix = "test";
	return t;
}

static struct nfx_chain *chain(struct nfx_table *t, const char *name, int hook,
			       int prio, int policy)
{
	struct nfx_chain *c = nfx_chain_add(t, name);

	CHECK(c, "chain_add");
	if (hook >= 0) {
		c->base = true;
		c->hook = hook;
		c->prio = prio;
		c->policy = policy;
	}
	return c;
}

static struct nfx_rule *rule(struct nfx_chain *c)
{
	struct nfx_rule *r = nfx_rule_add(c, c->nrules + 1);

	CHECK(r, "rule_add");
	return r;
}

static struct nfx_expr *ex(struct nfx_rule *r, __u8 kind)
{
	struct nfx_expr *e = nfx_expr_add(r);

	CHECK(e, "expr_add");
	e->kind = kind;
	e->what = "test";
	return e;
}

static void verdict(struct nfx_rule *r, int v, const char *target)
{
	struct nfx_expr *e = ex(r, NFX_VERDICT);

	e->verdict = v;
	if (target)
		e->name = strdup(target);
}

/* "ct state & mask != 0" (nft's form of ct state a,b,c) into reg 0. */
static void ct_match(struct nfx_rule *r, __u32 mask)
{
	struct nfx_expr *e = ex(r, NFX_CT_STATE);

	e->dreg = 0;
	e = ex(r, NFX_BITWISE);
	e->sreg = e->dreg = 0;
	e->mask = mask;
	e = ex(r, NFX_CMP);
	e->sreg = 0;
	e->op = NFT_CMP_NEQ;
	e->len = 4;
}

static void cond(struct nfx_rule *r)
{
	ex(r, NFX_LOAD)->dreg = 0;
	ex(r, NFX_CMP)->len = 4;
}

/* The usual rules. */
static void r_ct(struct nfx_chain *c, __u32 mask, int v)
{
	struct nfx_rule *r = rule(c);

	ct_match(r, mask);
	verdict(r, v, NULL);
}

static void r_cond(struct nfx_chain *c, int v, const char *target)
{
	struct nfx_rule *r = rule(c);

	cond(r);
	verdict(r, v, target);
}

static void r_effect(struct nfx_chain *c, bool after_cond)
{
	struct nfx_rule *r = rule(c);

	if (after_cond)
		cond(r);
	ex(r, NFX_EFFECT)->what = "log";
}

static void reset(void)
{
	nfx_ruleset_free(&rs);
}

/* The ports nfx_check reported, "dev:dir dev:dir ". */
static char ports[256];

static void port(const char *dev, unsigned int dir, void *ctx)
{
	size_t n = strlen(ports);

	snprintf(ports + n, sizeof(ports) - n, "%s:%u ", dev, dir);
}

/* What nfx_check must say for family fam: rules, gate_ok, ct_used, and
 * (if not gate_ok) a word of the reason. */
static void expect(const char *name, unsigned int fam, bool rules, bool gate_ok,
		   bool ct_used, const char *why)
{
	struct nfx_result r;

	cur_test = name;
	ports[0] = '\0';
	nfx_check(&rs, fam, port, NULL, &r);
	CHECK(r.rules == rules, "%s: rules %d, expected %d", fam ? "ipv6" : "ipv4", r.rules,
	      rules);
	CHECK(r.gate_ok == gate_ok, "%s: gate_ok %d, expected %d (%s)", fam ? "ipv6" : "ipv4",
	      r.gate_ok, gate_ok, r.why);
	if (rules && gate_ok)
		CHECK(r.ct_used == ct_used, "ct_used %d, expected %d", r.ct_used, ct_used);
	if (why)
		CHECK(strstr(r.why, why), "reason '%s' does not say '%s'", r.why, why);
	printf("ok   %s (%s)%s%s\n", name, fam ? "ipv6" : "ipv4", r.why[0] ? ": " : "", r.why);
}

static void both(const char *name, bool rules, bool gate_ok, bool ct_used, const char *why)
{
	expect(name, XFIB_V4, rules, gate_ok, ct_used, why);
	expect(name, XFIB_V6, rules, gate_ok, ct_used, why);
}

static void test_basics(void)
{
	struct nfx_table *t;
	struct nfx_chain *c;

	both("no tables", false, true, false, NULL);
	t = table(NFPROTO_INET, "fw");
	chain(t, "forward", NF_INET_FORWARD, 0, NF_ACCEPT);
	chain(t, "input", NF_INET_LOCAL_IN, 0, NF_DROP);
	both("empty forward chain, policy accept; input policy drop", false, true, false, NULL);
	reset();

	t = table(NFPROTO_INET, "fw");
	chain(t, "forward", NF_INET_FORWARD, 0, NF_DROP);
	both("forward policy drop", true, false, false, "policy drop");
	reset();

	t = table(NFPROTO_IPV4, "fw");
	c = chain(t, "forward", NF_INET_FORWARD, 0, NF_DROP);
	r_ct(c, INV, NF_DROP);
	r_ct(c, EST | REL, NF_ACCEPT);
	r_cond(c, NF_ACCEPT, NULL);
	expect("ip table: invalid drop, established accept, policy drop", XFIB_V4, true,
	       true, true, NULL);
	expect("ip table leaves ipv6 alone", XFIB_V6, false, true, false, NULL);
	reset();

	t = table(NFPROTO_IPV6, "fw");
	c = chain(t, "forward", NF_INET_FORWARD, 0, NF_ACCEPT);
	ex(rule(c), NFX_ACCOUNT);
	expect("ip6 table: a counter only", XFIB_V6, true, true, false, NULL);
	expect("ip6 table leaves ipv4 alone", XFIB_V4, false, true, false, NULL);
	reset();
}

static void test_order(void)
{
	struct nfx_table *t = table(NFPROTO_INET, "fw");
	struct nfx_chain *c = chain(t, "forward", NF_INET_FORWARD, 0, NF_DROP);

	r_cond(c, NF_DROP, NULL);
	r_ct(c, EST, NF_ACCEPT);
	both("a drop that may match before established accept", true, false, false, "drop");
	reset();

	t = table(NFPROTO_INET, "fw");
	c = chain(t, "forward", NF_INET_FORWARD, 0, NF_DROP);
	r_effect(c, false);
	r_ct(c, EST, NF_ACCEPT);
	both("a log before established accept", true, false, false, "log");
	reset();

	t = table(NFPROTO_INET, "fw");
	c = chain(t, "forward", NF_INET_FORWARD, 0, NF_DROP);
	r_ct(c, NEW, NF_DROP);
	r_ct(c, EST, NF_ACCEPT);
	r_effect(c, true);
	both("rules that cannot match, and a log after established accept", true, true,
	     true, NULL);
	reset();

	t = table(NFPROTO_INET, "fw");
	c = chain(t, "forward", NF_INET_FORWARD, 0, NF_DROP);
	r_cond(c, NF_ACCEPT, NULL);
	r_cond(c, NFT_CONTINUE, NULL);
	r_ct(c, EST, NF_ACCEPT);
	both("conditional accepts before established accept", true, true, true, NULL);
	reset();
}

static void test_chains(void)
{
	struct nfx_table *t = table(NFPROTO_INET, "fw");
	struct nfx_chain *c = chain(t, "forward", NF_INET_FORWARD, 0, NF_DROP), *u;

	r_cond(c, NFT_JUMP, "user");
	r_ct(c, EST, NF_ACCEPT);
	u = chain(t, "user", -1, 0, 0);
	r_cond(u, NFT_RETURN, NULL);
	r_cond(u, NF_ACCEPT, NULL);
	both("jump to a harmless chain", true, true, true, NULL);
	r_cond(u, NF_DROP, NULL);
	both("jump to a chain that may drop", true, false, false, "user");
	reset();

	t = table(NFPROTO_INET, "fw");
	c = chain(t, "forward", NF_INET_FORWARD, 0, NF_DROP);
	r_cond(c, NFT_GOTO, "user");
	r_ct(c, EST, NF_ACCEPT);
	u = chain(t, "user", -1, 0, 0);
	r_cond(u, NF_ACCEPT, NULL);
	both("goto a chain whose end returns to policy drop", true, false, false, "policy");
	reset();

	t = table(NFPROTO_INET, "fw");
	c = chain(t, "forward", NF_INET_FORWARD, 0, NF_DROP);
	r_cond(c, NFT_JUMP, "missing");
	both("jump to a chain that is not there", true, false, false, "missing");
	reset();

	t = table(NFPROTO_INET, "fw");
	c = chain(t, "forward", NF_INET_FORWARD, 0, NF_DROP);
	r_cond(c, NFT_JUMP, "loop");
	u = chain(t, "loop", -1, 0, 0);
	r_cond(u, NFT_JUMP, "loop");
	both("a jump loop", true, false, false, "loop");
	reset();
}

/* ct state vmap { established : accept, invalid : drop }, or a set. */
static void vmap_rule(struct nfx_chain *c, bool vmap, bool complete)
{
	struct nfx_set *s = nfx_set_find(&rs.tables[0], "m");
	struct nfx_rule *r = rule(c);
	struct nfx_expr *e;

	if (!s) {
		s = nfx_set_add(&rs.tables[0], "m");
		s->klen = 4;
		s->vmap = vmap;
		s->complete = complete;
		nfx_set_add_elem(s, EST, NF_ACCEPT, NULL);
		nfx_set_add_elem(s, INV, NF_DROP, NULL);
		if (!vmap)
			nfx_set_add_elem(s, REL, 0, NULL);
	}
	ex(r, NFX_CT_STATE)->dreg = 0;
	e = ex(r, NFX_LOOKUP);
	e->sreg = 0;
	e->dreg = vmap ? NFX_REG_VERDICT : NFX_REG_NONE;
	e->name = strdup("m");
	if (!vmap)
		verdict(r, NF_ACCEPT, NULL);
}

static void test_sets(void)
{
	struct nfx_table *t = table(NFPROTO_INET, "fw");
	struct nfx_chain *c = chain(t, "forward", NF_INET_FORWARD, 0, NF_DROP);

	vmap_rule(c, true, true);
	both("ct state vmap { established : accept, invalid : drop }", true, true, true, NULL);
	rs.tables[0].sets[0].complete = false;
	both("... whose elements could not be read", true, false, false, "verdict map");
	reset();

	t = table(NFPROTO_INET, "fw");
	c = chain(t, "forward", NF_INET_FORWARD, 0, NF_DROP);
	vmap_rule(c, false, true);
	both("ct state { established, related } accept", true, true, true, NULL);
	rs.tables[0].sets[0].complete = false;
	both("... with the set unread: established packets reach the policy", true, false,
	     false, "policy");
	reset();
}

static void test_hooks(void)
{
	struct nfx_table *t = table(NFPROTO_INET, "raw");
	struct nfx_chain *c = chain(t, "pre", NF_INET_PRE_ROUTING, -300, NF_ACCEPT);

	r_ct(c, EST, NF_ACCEPT);
	r_effect(c, true);
	both("before conntrack the ct state is invalid: established accept does not match",
	     true, false, false, "log");
	reset();

	t = table(NFPROTO_INET, "mangle");
	c = chain(t, "pre", NF_INET_PRE_ROUTING, -150, NF_ACCEPT);
	r_ct(c, EST, NF_ACCEPT);
	r_effect(c, true);
	both("after conntrack it is established", true, true, true, NULL);
	reset();

	t = table(NFPROTO_NETDEV, "edge");
	c = chain(t, "in", NF_NETDEV_INGRESS, 0, NF_ACCEPT);
	nfx_chain_add_dev(c, "port0");
	nfx_chain_add_dev(c, "port1");
	ex(rule(c), NFX_ACCOUNT);
	both("netdev ingress counting only: no port, no family rules", false, true, false, NULL);
	CHECK(!ports[0], "ports reported: %s", ports);
	r_effect(c, false);
	both("netdev ingress that logs: its ports, not the family", false, true, false, NULL);
	CHECK(!strcmp(ports, "port0:1 port1:1 "), "ports reported: '%s'", ports);
	t = table(NFPROTO_NETDEV, "edge2");
	c = chain(t, "out", NF_NETDEV_EGRESS, 0, NF_DROP);
	nfx_chain_add_dev(c, "port2");
	r_ct(c, EST, NF_ACCEPT);
	both("netdev egress accepting established only: a port (any flow passes it)", false,
	     true, false, NULL);
	CHECK(strstr(ports, "port2:2"), "ports reported: '%s'", ports);
	reset();

	t = table(NFPROTO_INET, "fw");
	c = chain(t, "in", NF_INET_INGRESS, 0, NF_ACCEPT);
	nfx_chain_add_dev(c, "port3");
	r_cond(c, NF_DROP, NULL);
	both("inet ingress that may drop: its port", false, true, false, NULL);
	CHECK(!strcmp(ports, "port3:1 "), "ports reported: '%s'", ports);
	reset();

	t = table(NFPROTO_INET, "nat");
	c = chain(t, "post", NF_INET_POST_ROUTING, 100, NF_ACCEPT);
	c->nat = true;
	r_effect(c, true);
	both("a nat chain (first packets only) counts, is not run", true, true, false, NULL);
	reset();

	t = table(NFPROTO_ARP, "a");
	c = chain(t, "in", NF_INET_FORWARD, 0, NF_DROP);
	both("arp tables are not on the routed path", false, true, false, NULL);
	reset();
}

static void test_features(void)
{
	struct nfx_table *t = table(NFPROTO_INET, "fw");
	struct nfx_chain *c = chain(t, "forward", NF_INET_FORWARD, 0, NF_DROP), *in;
	struct nfx_rule *r;

	r_ct(c, EST, NF_ACCEPT);
	in = chain(t, "input", NF_INET_LOCAL_IN, 0, NF_ACCEPT);
	r = rule(in);
	ex(r, NFX_LOAD)->feat = NFXF_CT_META;
	verdict(r, NF_ACCEPT, NULL);
	both("ct mark anywhere in a forward-path table", true, false, false, "ct mark");
	reset();
}

/* xt matches as iptables-nft and legacy iptables carry them. */
static void test_xt(void)
{
	struct xt_conntrack_mtinfo3 m = { .match_flags = XT_CONNTRACK_STATE,
					  .state_mask = EST | REL };
	struct nfx_table *t = table(NFPROTO_IPV4, "filter");
	struct nfx_chain *c = chain(t, "FORWARD", NF_INET_FORWARD, 0, NF_DROP);
	struct nfx_rule *r;
	unsigned int st = EST;

	r = rule(c);
	nfx_xt_match(ex(r, NFX_NOP), "conntrack", 3, &m, sizeof(m));
	ex(r, NFX_ACCOUNT);
	verdict(r, NF_ACCEPT, NULL);
	expect("-m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT", XFIB_V4, true, true,
	       true, NULL);
	m.invert_flags = XT_CONNTRACK_STATE;
	memcpy(&c->rules[0].e[0], &(struct nfx_expr){ 0 }, sizeof(struct nfx_expr));
	nfx_xt_match(&c->rules[0].e[0], "conntrack", 3, &m, sizeof(m));
	expect("... with ! --ctstate: established packets reach the policy", XFIB_V4, true,
	       false, false, "policy");
	reset();

	t = table(NFPROTO_IPV4, "filter");
	c = chain(t, "FORWARD", NF_INET_FORWARD, 0, NF_DROP);
	r = rule(c);
	nfx_xt_match(ex(r, NFX_NOP), "state", 0, &st, sizeof(st));
	verdict(r, NF_ACCEPT, NULL);
	expect("-m state --state ESTABLISHED -j ACCEPT", XFIB_V4, true, true, true, NULL);
	r = rule(c);
	nfx_xt_match(ex(r, NFX_NOP), "connmark", 0, NULL, 0);
	verdict(r, NF_ACCEPT, NULL);
	expect("... and a connmark match after it", XFIB_V4, true, false, false, "ct mark");
	reset();

	t = table(NFPROTO_IPV4, "filter");
	c = chain(t, "FORWARD", NF_INET_FORWARD, 0, NF_DROP);
	r = rule(c);
	nfx_xt_match(ex(r, NFX_NOP), "limit", 0, NULL, 0);
	verdict(r, NF_ACCEPT, NULL);
	expect("-m limit -j ACCEPT keeps state per packet", XFIB_V4, true, false, false, NULL);
	reset();
}

int main(int argc, char **argv)
{
	test_basics();
	test_order();
	test_chains();
	test_sets();
	test_hooks();
	test_features();
	test_xt();
	reset();
	printf("PASS\n");
	return 0;
}
