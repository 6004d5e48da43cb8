// SPDX-License-Identifier: GPL-2.0-only
/*
 * Building and freeing the rule model of nfrules.h, and the xt matches and
 * targets (shared by iptables-nft's compat expressions and legacy
 * iptables) translated into it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/xt_conntrack.h>
#include <linux/netfilter/xt_state.h>

#include "nfrules.h"

/* Grows *arr (of *cap elements of size sz) to hold n + 1. */
static int grow(void **arr, unsigned int *cap, unsigned int n, size_t sz)
{
	unsigned int ncap;
	void *p;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 8;
	p = realloc(*arr, (size_t)ncap * sz);
	if (!p)
		return -ENOMEM;
	memset((char *)p + (size_t)*cap * sz, 0, (size_t)(ncap - *cap) * sz);
	*arr = p;
	*cap = ncap;
	return 0;
}

struct nfx_table *nfx_table_add(struct nfx_ruleset *rs, __u8 family,
				const char *name, bool legacy)
{
	struct nfx_table *t;

	if (grow((void **)&rs->tables, &rs->cap, rs->n, sizeof(*t)))
		return NULL;
	t = &rs->tables[rs->n];
	t->name = strdup(name);
	if (!t->name)
		return NULL;
	t->family = family;
	t->legacy = legacy;
	rs->n++;
	return t;
}

struct nfx_table *nfx_table_find(const struct nfx_ruleset *rs, __u8 family,
				 const char *name)
{
	unsigned int i;

	for (i = 0; i < rs->n; i++)
		if (rs->tables[i].family == family && !strcmp(rs->tables[i].name, name))
			return &rs->tables[i];
	return NULL;
}

struct nfx_chain *nfx_chain_add(struct nfx_table *t, const char *name)
{
	struct nfx_chain *c;

	if (grow((void **)&t->chains, &t->ncap, t->nchains, sizeof(*c)))
		return NULL;
	c = &t->chains[t->nchains];
	c->name = strdup(name);
	if (!c->name)
		return NULL;
	c->policy = NF_ACCEPT;
	t->nchains++;
	return c;
}

struct nfx_chain *nfx_chain_find(const struct nfx_table *t, const char *name)
{
	unsigned int i;

	for (i = 0; i < t->nchains; i++)
		if (!strcmp(t->chains[i].name, name))
			return &t->chains[i];
	return NULL;
}

int nfx_chain_add_dev(struct nfx_chain *c, const char *dev)
{
	char **d = realloc(c->devs, (c->ndevs + 1) * sizeof(*d));

	if (!d)
		return -ENOMEM;
	c->devs = d;
	d[c->ndevs] = strdup(dev);
	if (!d[c->ndevs])
		return -ENOMEM;
	c->ndevs++;
	return 0;
}

struct nfx_rule *nfx_rule_add(struct nfx_chain *c, __u64 handle)
{
	struct nfx_rule *r;

	if (grow((void **)&c->rules, &c->cap, c->nrules, sizeof(*r)))
		return NULL;
	r = &c->rules[c->nrules++];
	r->handle = handle;
	return r;
}

struct nfx_expr *nfx_expr_add(struct nfx_rule *r)
{
	struct nfx_expr *e = realloc(r->e, (r->n + 1) * sizeof(*e));

	if (!e)
		return NULL;
	r->e = e;
	e = &r->e[r->n++];
	memset(e, 0, sizeof(*e));
	e->sreg = e->dreg = NFX_REG_NONE;
	return e;
}

struct nfx_set *nfx_set_add(struct nfx_table *t, const char *name)
{
	struct nfx_set *s;

	if (grow((void **)&t->sets, &t->scap, t->nsets, sizeof(*s)))
		return NULL;
	s = &t->sets[t->nsets];
	s->name = strdup(name);
	if (!s->name)
		return NULL;
	t->nsets++;
	return s;
}

struct nfx_set *nfx_set_find(const struct nfx_table *t, const char *name)
{
	unsigned int i;

	for (i = 0; i < t->nsets; i++)
		if (!strcmp(t->sets[i].name, name))
			return &t->sets[i];
	return NULL;
}

int nfx_set_add_elem(struct nfx_set *s, __u32 key, int verdict, const char *chain)
{
	struct nfx_elem *el;

	if (grow((void **)&s->el, &s->cap, s->n, sizeof(*el)))
		return -ENOMEM;
	el = &s->el[s->n];
	el->key = key;
	el->verdict = verdict;
	if (chain) {
		el->chain = strdup(chain);
		if (!el->chain)
			return -ENOMEM;
	}
	s->n++;
	return 0;
}

static void chain_free(struct nfx_chain *c)
{
	unsigned int i, j;

	for (i = 0; i < c->nrules; i++) {
		for (j = 0; j < c->rules[i].n; j++)
			free(c->rules[i].e[j].name);
		free(c->rules[i].e);
	}
	for (i = 0; i < c->ndevs; i++)
		free(c->devs[i]);
	free(c->devs);
	free(c->rules);
	free(c->name);
}

void nfx_ruleset_free(struct nfx_ruleset *rs)
{
	unsigned int i, j, k;

	for (i = 0; i < rs->n; i++) {
		struct nfx_table *t = &rs->tables[i];

		for (j = 0; j < t->nchains; j++)
			chain_free(&t->chains[j]);
		for (j = 0; j < t->nsets; j++) {
			for (k = 0; k < t->sets[j].n; k++)
				free(t->sets[j].el[k].chain);
			free(t->sets[j].el);
			free(t->sets[j].name);
		}
		free(t->chains);
		free(t->sets);
		free(t->name);
	}
	free(rs->tables);
	memset(rs, 0, sizeof(*rs));
}

int nfx_reg(__u32 reg)
{
	if (reg >= NFT_REG32_00 && reg <= NFT_REG32_15)
		return reg - NFT_REG32_00;
	if (reg >= NFT_REG_1 && reg <= NFT_REG_4)
		return (reg - NFT_REG_1) * 4;
	return -1;
}

/* ---- xt matches and targets ------------------------------------------------ */

static bool name_in(const char *name, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(name, *list))
			return true;
	return false;
}

/* Matches that only look at the packet (or at state nothing changes per
 * packet): the check cannot decide them, but they have no effect. */
static const char *const xt_pure[] = {
	"tcp", "udp", "icmp", "icmp6", "multiport", "iprange", "addrtype",
	"mac", "pkttype", "set", "physdev", "policy", "length", "ttl", "hl",
	"tos", "dscp", "ecn", "mark", "rpfilter", "devgroup", "realm",
	"ipv6header", "frag", "ah", "esp", "rt", "hbh", "dst", "mh", "eui64",
	"sctp", "dccp", "tcpmss", "time", "owner", "socket", "cgroup", "cpu",
	"bpf", "u32", "string", "osf", "l2tp", "ipcomp", "helper", "ipvs",
	"conntrack", "state", NULL
};

/* conntrack revisions 1..3: the state part, if any. */
static void xt_conntrack(struct nfx_expr *e, unsigned int rev,
			 const void *info, size_t len)
{
	__u16 flags, inv, state;

	if (rev == 1 && len >= sizeof(struct xt_conntrack_mtinfo1)) {
		const struct xt_conntrack_mtinfo1 *m = info;

		flags = m->match_flags, inv = m->invert_flags, state = m->state_mask;
	} else if (rev == 2 && len >= sizeof(struct xt_conntrack_mtinfo2)) {
		const struct xt_conntrack_mtinfo2 *m = info;

		flags = m->match_flags, inv = m->invert_flags, state = m->state_mask;
	} else if (rev == 3 && len >= sizeof(struct xt_conntrack_mtinfo3)) {
		const struct xt_conntrack_mtinfo3 *m = info;

		flags = m->match_flags, inv = m->invert_flags, state = m->state_mask;
	} else {
		return; /* an undecided pure match */
	}
	if (!(flags & XT_CONNTRACK_STATE))
		return;
	e->kind = NFX_CT_MASK;
	e->data = state;
	e->op = !!(inv & XT_CONNTRACK_STATE);
	/* Anything else it matches on (status, addresses, expiry) is
	 * undecided. */
	e->mask = !!(flags & ~(XT_CONNTRACK_STATE | XT_CONNTRACK_STATE_ALIAS));
}

void nfx_xt_match(struct nfx_expr *e, const char *name, unsigned int rev,
		  const void *info, size_t len)
{
	static const char *const ct_meta[] = { "connmark", "connlabel", NULL };

	e->what = "xt match";
	if (!strcmp(name, "comment")) {
		e->kind = NFX_NOP;
	} else if (name_in(name, ct_meta)) {
		e->kind = NFX_COND;
		e->feat = NFXF_CT_META;
	} else if (!strcmp(name, "connbytes")) {
		e->kind = NFX_COND;
		e->feat = NFXF_CT_ACCT;
	} else if (name_in(name, xt_pure)) {
		e->kind = NFX_COND;
		if (!strcmp(name, "conntrack"))
			xt_conntrack(e, rev, info, len);
		else if (!strcmp(name, "state") && len >= sizeof(struct xt_state_info)) {
			e->kind = NFX_CT_MASK;
			e->data = ((const struct xt_state_info *)info)->statemask;
		}
	} else {
		/* limit, hashlimit, recent, quota, connlimit, statistic,
		 * nfacct and the unknown: state that moves per packet. */
		e->kind = NFX_EFFECT;
	}
}

void nfx_xt_target(struct nfx_expr *e, const char *name, unsigned int rev,
		   const void *info, size_t len)
{
	static const char *const ct_meta[] = { "CONNMARK", "CONNSECMARK", NULL };

	e->what = "xt target";
	if (!strcmp(name, "REJECT")) {
		e->kind = NFX_VERDICT;
		e->verdict = NF_DROP;
		return;
	}
	e->kind = NFX_EFFECT;
	/* CONNMARK --restore-mark sets the packet's mark; its other forms
	 * only conntrack's, but which one a blob holds is not read. */
	if (!strcmp(name, "MARK") || !strcmp(name, "CONNMARK") ||
	    !strcmp(name, "TPROXY"))
		e->feat |= NFXF_SETS_MARK;
	if (name_in(name, ct_meta))
		e->feat |= NFXF_CT_META;
	else if (!strcmp(name, "CT"))
		e->feat = NFXF_CT_META | NFXF_CT_HELPER; /* zone, helper, timeout */
}
