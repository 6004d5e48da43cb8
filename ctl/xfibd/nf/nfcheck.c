// SPDX-License-Identifier: GPL-2.0-only
/*
 * Does the forward path have netfilter rules, and may the conntrack gate
 * stand in for them? nfrules.h describes the check; this is it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter_bridge.h>

#include "xfib/maps.h"
#include "nfrules.h"

/* ct state bits (NF_CT_STATE_BIT of enum ip_conntrack_info). */
#define CT_STATE_INVALID 1u
#define CT_STATE_ESTABLISHED 2u
/* nf_conntrack's priority: chains before it see no conntrack entry. */
#define NF_PRI_CONNTRACK (-200)
#define MAX_DEPTH 16

/* What a chain (or a rule) does with the established packets reaching it. */
enum outcome {
	O_ACCEPT,      /* all accepted */
	O_FALL,        /* chain: all come out the end or return */
	O_UNSAFE,      /* some may be dropped, changed or sent elsewhere */
	O_NEXT,        /* rule: none matched, or they continue */
	O_ACCEPT_SOME, /* rule: those matched accepted, the rest continue */
	O_RETURN,      /* rule: all return to the caller */
	O_RETURN_SOME, /* rule: those matched return, the rest continue */
};

struct eval {
	const struct nfx_table *t;
	const struct nfx_chain *base;
	bool ct_known;
	__u32 ct_state;
	int depth;
	bool ct_used;  /* the ct state decided a match */
	char *why;
	size_t whylen;
};

struct regs {
	bool known[NFX_REGS];
	__u32 v[NFX_REGS];
};

static int chain_eval(struct eval *ev, const struct nfx_chain *c);

static void say(struct eval *ev, const struct nfx_chain *c,
		const struct nfx_rule *r, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* The first reason found is kept: "TABLE CHAIN: rule HANDLE: what". */
static void say(struct eval *ev, const struct nfx_chain *c,
		const struct nfx_rule *r, const char *fmt, ...)
{
	size_t off;
	va_list ap;

	if (*ev->why)
		return;
	off = snprintf(ev->why, ev->whylen, "%s%s%s %s: ", ev->t->prefix ?: "",
		       ev->t->prefix ? " " : "", ev->t->name, c->name);
	if (r && off < ev->whylen)
		off += snprintf(ev->why + off, ev->whylen - off, "rule %llu: ",
				(unsigned long long)r->handle);
	if (off >= ev->whylen)
		return;
	va_start(ap, fmt);
	vsnprintf(ev->why + off, ev->whylen - off, fmt, ap);
	va_end(ap);
}

static void regs_unknown(struct regs *rg, int reg, unsigned int len)
{
	unsigned int i, n = len ? (len + 3) / 4 : NFX_REGS;

	for (i = 0; i < n && reg >= 0 && reg + i < NFX_REGS; i++)
		rg->known[reg + i] = false;
	if (reg < 0 || !len)
		memset(rg->known, 0, sizeof(rg->known));
}

static bool reg_ok(__u8 r)
{
	return r < NFX_REGS;
}

/* What a verdict (of a rule, or a verdict map's element) does; cond: only
 * some established packets get it. */
static int verdict_eval(struct eval *ev, const struct nfx_chain *c,
			const struct nfx_rule *r, int verdict,
			const char *target, bool cond)
{
	const struct nfx_chain *sub;
	int o;

	switch (verdict) {
	case NF_ACCEPT:
		return cond ? O_ACCEPT_SOME : O_ACCEPT;
	case NFT_CONTINUE:
		return O_NEXT;
	case NFT_RETURN:
		return cond ? O_RETURN_SOME : O_RETURN;
	case NFT_JUMP:
	case NFT_GOTO:
		sub = target ? nfx_chain_find(ev->t, target) : NULL;
		if (!sub || ev->depth >= MAX_DEPTH) {
			say(ev, c, r, "jumps to %s, which cannot be followed",
			    target ? target : "a chain");
			return O_UNSAFE;
		}
		ev->depth++;
		o = chain_eval(ev, sub);
		ev->depth--;
		if (o == O_ACCEPT)
			return cond ? O_ACCEPT_SOME : O_ACCEPT;
		if (o == O_UNSAFE)
			return O_UNSAFE;
		/* They came back: from a jump, on to the next rule; from a
		 * goto, out of this chain. */
		if (verdict == NFT_JUMP)
			return O_NEXT;
		return cond ? O_RETURN_SOME : O_RETURN;
	default:
		say(ev, c, r, "may %s established packets",
		    verdict == NF_DROP ? "drop" : verdict == NF_QUEUE ? "queue" : "steal");
		return O_UNSAFE;
	}
}

/* A lookup: O_NEXT if it may match (cond set when undecided), -1 if it
 * cannot; a verdict map's outcome otherwise. */
static int lookup_eval(struct eval *ev, const struct nfx_chain *c,
		       const struct nfx_rule *r, const struct nfx_expr *e,
		       const struct regs *rg, bool *cond)
{
	const struct nfx_set *s = e->name ? nfx_set_find(ev->t, e->name) : NULL;
	bool decidable = s && s->complete && s->klen == 4 && reg_ok(e->sreg) &&
			 rg->known[e->sreg];
	const struct nfx_elem *hit = NULL;
	unsigned int i;
	int o, worst = O_NEXT;

	if (decidable)
		ev->ct_used = true;
	if (decidable)
		for (i = 0; i < s->n && !hit; i++)
			if (s->el[i].key == rg->v[e->sreg])
				hit = &s->el[i];
	if (e->dreg != NFX_REG_VERDICT) {
		if (!decidable) {
			*cond = true;
			return O_NEXT;
		}
		return (hit != NULL) != !!e->op ? O_NEXT : -1;
	}
	/* A verdict map. */
	if (decidable)
		return hit ? verdict_eval(ev, c, r, hit->verdict, hit->chain, *cond) : -1;
	if (!s || !s->complete) {
		say(ev, c, r, "a verdict map the check cannot read");
		return O_UNSAFE;
	}
	/* Undecided key: every element's verdict may be taken. */
	for (i = 0; i < s->n; i++) {
		o = verdict_eval(ev, c, r, s->el[i].verdict, s->el[i].chain, true);
		if (o == O_UNSAFE)
			return O_UNSAFE;
		if (o == O_RETURN_SOME)
			worst = O_RETURN_SOME;
	}
	return worst;
}

/* An expression that only sets or forgets registers (a load, a
 * clobber, the ct state, a bitwise, an immediate), applied to rg. */
static void regs_eval(const struct eval *ev, struct regs *rg,
		      const struct nfx_expr *e, bool *cond)
{
	switch (e->kind) {
	case NFX_LOAD:
		regs_unknown(rg, reg_ok(e->dreg) ? e->dreg : -1, e->len);
		break;
	case NFX_CLOBBER:
		regs_unknown(rg, -1, 0);
		*cond = true;
		break;
	case NFX_CT_STATE:
		if (reg_ok(e->dreg)) {
			rg->known[e->dreg] = ev->ct_known;
			rg->v[e->dreg] = ev->ct_state;
		}
		break;
	case NFX_BITWISE:
		if (!reg_ok(e->dreg))
			break;
		rg->known[e->dreg] = reg_ok(e->sreg) && rg->known[e->sreg];
		if (rg->known[e->dreg])
			rg->v[e->dreg] = (rg->v[e->sreg] & e->mask) ^ e->xor;
		break;
	case NFX_IMM:
		if (!reg_ok(e->dreg))
			break;
		regs_unknown(rg, e->dreg, e->len);
		rg->known[e->dreg] = e->len == 4;
		rg->v[e->dreg] = e->data;
		break;
	default:
		break;
	}
}

/* A comparison (cmp, ct state mask) on the abstract packet: false when
 * the packet certainly does not match, which ends the rule. */
static bool match_eval(struct eval *ev, const struct regs *rg,
		       const struct nfx_expr *e, bool *cond)
{
	switch (e->kind) {
	case NFX_CMP:
		if (e->len != 4 || !reg_ok(e->sreg) || !rg->known[e->sreg] ||
		    (e->op != NFT_CMP_EQ && e->op != NFT_CMP_NEQ)) {
			*cond = true;
			return true;
		}
		ev->ct_used = true; /* only the ct state is known */
		return (rg->v[e->sreg] == e->data) == (e->op == NFT_CMP_EQ);
	case NFX_CT_MASK:
		if (!ev->ct_known) {
			*cond = true;
			return true;
		}
		ev->ct_used = true;
		if (((ev->ct_state & e->data) != 0) == !!e->op)
			return false;
		if (e->mask)
			*cond = true;
		return true;
	default:
		return true;
	}
}

/* One rule on the abstract packet. */
static int rule_eval(struct eval *ev, const struct nfx_chain *c,
		     const struct nfx_rule *r)
{
	struct regs rg = { 0 };
	bool cond = false, ret_some = false;
	unsigned int i;
	int o;

	for (i = 0; i < r->n; i++) {
		const struct nfx_expr *e = &r->e[i];

		switch (e->kind) {
		case NFX_LOAD:
		case NFX_CLOBBER:
		case NFX_CT_STATE:
		case NFX_BITWISE:
		case NFX_IMM:
			regs_eval(ev, &rg, e, &cond);
			break;
		case NFX_CMP:
		case NFX_CT_MASK:
			if (!match_eval(ev, &rg, e, &cond))
				return O_NEXT;
			break;
		case NFX_LOOKUP:
			o = lookup_eval(ev, c, r, e, &rg, &cond);
			if (o < 0)
				return O_NEXT;
			/* A verdict map's "continue" goes on with the
			 * rule's next expression, as a plain match does. */
			if (o == O_RETURN_SOME && e->dreg == NFX_REG_VERDICT)
				ret_some = true;
			else if (o != O_NEXT)
				return o;
			break;
		case NFX_COND:
			cond = true;
			break;
		case NFX_NOP:
		case NFX_ACCOUNT:
			break;
		case NFX_EFFECT:
			say(ev, c, r, "%s %s established packets", e->what ? e->what : "?",
			    cond ? "may act on" : "acts on");
			return O_UNSAFE;
		case NFX_VERDICT:
			o = verdict_eval(ev, c, r, e->verdict, e->name, cond);
			if (ret_some && o != O_UNSAFE && o != O_RETURN)
				return O_RETURN_SOME;
			return o;
		}
	}
	return ret_some ? O_RETURN_SOME : O_NEXT;
}

static int chain_eval(struct eval *ev, const struct nfx_chain *c)
{
	bool base = c == ev->base;
	unsigned int i;

	for (i = 0; i < c->nrules; i++) {
		switch (rule_eval(ev, c, &c->rules[i])) {
		case O_ACCEPT:
			return O_ACCEPT;
		case O_UNSAFE:
			return O_UNSAFE;
		case O_RETURN:
			if (!base)
				return O_FALL;
			goto policy;
		case O_RETURN_SOME:
			if (base && c->policy != NF_ACCEPT)
				goto policy;
			break;
		default:
			break;
		}
	}
	if (!base)
		return O_FALL;
policy:
	if (c->policy == NF_ACCEPT)
		return O_ACCEPT;
	say(ev, c, NULL, "policy drop reached by established packets");
	return O_UNSAFE;
}

/* ---- which chains -------------------------------------------------------------- */

static bool table_in_family(const struct nfx_table *t, unsigned int fam)
{
	switch (t->family) {
	case NFPROTO_IPV4:
		return fam == XFIB_V4;
	case NFPROTO_IPV6:
		return fam == XFIB_V6;
	case NFPROTO_INET:
	case NFPROTO_NETDEV:
		return true;
	default:
		return false; /* arp, bridge: not on the routed path */
	}
}

/*
 * Is c a chain forwarded packets cross that XDP would bypass, and not
 * bound to devices? Sets the ct state such packets have there. *dir is
 * set for a device-bound chain (ingress, netdev egress).
 */
static bool chain_on_path(const struct nfx_table *t, const struct nfx_chain *c,
			  struct eval *ev, unsigned int *dir)
{
	ev->ct_known = true;
	ev->ct_state = CT_STATE_ESTABLISHED;
	*dir = 0;
	if (!c->base)
		return false;
	if (t->family == NFPROTO_NETDEV) {
		/* ingress runs before conntrack, egress after */
		if (c->hook == NF_NETDEV_INGRESS)
			ev->ct_state = CT_STATE_INVALID;
		*dir = c->hook == NF_NETDEV_INGRESS ? NFX_PORT_IN : NFX_PORT_OUT;
		return false;
	}
	switch (c->hook) {
	case NF_INET_PRE_ROUTING:
		if (c->prio < NF_PRI_CONNTRACK)
			ev->ct_state = CT_STATE_INVALID;
		else if (c->prio == NF_PRI_CONNTRACK)
			ev->ct_known = false;
		return true;
	case NF_INET_FORWARD:
	case NF_INET_POST_ROUTING:
		return true;
	case NF_INET_INGRESS:
		ev->ct_state = CT_STATE_INVALID;
		*dir = NFX_PORT_IN;
		return false;
	default:
		return false; /* input, output: not forwarded packets */
	}
}

/* A device-bound chain: the packets of its devices go to the kernel
 * unless it accepts every packet unchanged whatever conntrack says (the
 * family's mode does not apply there: it may be "forward"). */
static void port_chain(struct eval *ev, const struct nfx_chain *c, unsigned int dir,
		       nfx_port_fn port, void *ctx)
{
	char why[XFIB_NF_WHY_MAX] = "";
	unsigned int i;

	if (!c->nrules && c->policy == NF_ACCEPT)
		return;
	ev->base = c;
	ev->depth = 0;
	ev->ct_used = false;
	ev->why = why;
	ev->whylen = sizeof(why);
	if (chain_eval(ev, c) == O_ACCEPT && !ev->ct_used)
		return;
	for (i = 0; i < c->ndevs; i++)
		if (port)
			port(c->devs[i], dir, ctx);
}

/* The first expression of t using what the gate cannot follow. */
static bool table_features(const struct nfx_table *t, char *why, size_t len)
{
	static const char *const names[] = {
		"ct mark, label or zone", "ct helper, timeout or expectation",
		"ct bytes or packets",
	};
	unsigned int i, j, k, b;

	for (i = 0; i < t->nchains; i++)
		for (j = 0; j < t->chains[i].nrules; j++)
			for (k = 0; k < t->chains[i].rules[j].n; k++) {
				__u8 f = t->chains[i].rules[j].e[k].feat;

				for (b = 0; f && b < 3; b++)
					if (f & (1 << b)) {
						snprintf(why, len, "%s%s%s %s: rule %llu uses %s",
							 t->prefix ?: "", t->prefix ? " " : "",
							 t->name, t->chains[i].name,
							 (unsigned long long)t->chains[i].rules[j].handle,
							 names[b]);
						return true;
					}
			}
	return false;
}

static void table_check(const struct nfx_table *t, nfx_port_fn port,
			void *ctx, struct nfx_result *res)
{
	struct eval ev = { .t = t };
	bool on_path = false;
	unsigned int i, dir;

	for (i = 0; i < t->nchains; i++) {
		const struct nfx_chain *c = &t->chains[i];

		if (!chain_on_path(t, c, &ev, &dir)) {
			if (dir)
				port_chain(&ev, c, dir, port, ctx);
			continue;
		}
		on_path = true;
		if (!c->nrules && c->policy == NF_ACCEPT)
			continue;
		res->rules = true;
		res->chains++;
		if (c->nat)
			res->nat = true;
		if (c->nat || !res->gate_ok)
			continue;
		ev.base = c;
		ev.depth = 0;
		ev.ct_used = false;
		ev.why = res->why;
		ev.whylen = sizeof(res->why);
		if (chain_eval(&ev, c) != O_ACCEPT)
			res->gate_ok = false;
		if (ev.ct_used)
			res->ct_used = true;
	}
	if (on_path && res->gate_ok && table_features(t, res->why, sizeof(res->why)))
		res->gate_ok = false;
}

void nfx_check(const struct nfx_ruleset *rs, unsigned int fam,
	       nfx_port_fn port, void *ctx, struct nfx_result *res)
{
	unsigned int i;

	memset(res, 0, sizeof(*res));
	res->gate_ok = true;
	for (i = 0; i < rs->n; i++)
		if (table_in_family(&rs->tables[i], fam))
			table_check(&rs->tables[i], port, ctx, res);
	if (!res->rules) {
		res->gate_ok = true;
		res->why[0] = '\0';
	}
}

/* A chain of t runs before routing: prerouting, or ingress. */
static bool table_before_routing(const struct nfx_table *t)
{
	unsigned int i;

	for (i = 0; i < t->nchains; i++) {
		const struct nfx_chain *c = &t->chains[i];

		if (!c->base)
			continue;
		if (t->family == NFPROTO_NETDEV ? c->hook == NF_NETDEV_INGRESS :
		    c->hook == NF_INET_PRE_ROUTING || c->hook == NF_INET_INGRESS)
			return true;
	}
	return false;
}

static bool table_sets_mark(const struct nfx_table *t)
{
	unsigned int i, j, k;

	for (i = 0; i < t->nchains; i++)
		for (j = 0; j < t->chains[i].nrules; j++)
			for (k = 0; k < t->chains[i].rules[j].n; k++)
				if (t->chains[i].rules[j].e[k].feat & NFXF_SETS_MARK)
					return true;
	return false;
}

bool nfx_marks_before_routing(const struct nfx_ruleset *rs, unsigned int fam)
{
	unsigned int i;

	for (i = 0; i < rs->n; i++)
		if (table_in_family(&rs->tables[i], fam) &&
		    table_before_routing(&rs->tables[i]) &&
		    table_sets_mark(&rs->tables[i]))
			return true;
	return false;
}

/*
 * Does a bridge-family base chain act on frames? The bridge's hooks see
 * a routed frame too: the prerouting and input chains as a member passes
 * it up, the output and postrouting chains as the bridge sends one out
 * (br_pass_frame_up, br_dev_xmit). The forward hook sees only frames
 * bridged between members, which xfib leaves alone; an empty chain that
 * accepts is nothing.
 */
bool nfx_bridge_chains(const struct nfx_ruleset *rs)
{
	unsigned int i, j;

	for (i = 0; i < rs->n; i++) {
		const struct nfx_table *t = &rs->tables[i];

		if (t->family != NFPROTO_BRIDGE)
			continue;
		for (j = 0; j < t->nchains; j++)
			if (t->chains[j].base &&
			    t->chains[j].hook != NF_BR_FORWARD &&
			    (t->chains[j].nrules ||
			     t->chains[j].policy != NF_ACCEPT))
				return true;
	}
	return false;
}
