// SPDX-License-Identifier: GPL-2.0-only
/*
 * nf_tables rule expressions (NFTA_RULE_EXPRESSIONS) into the check's
 * form (nfrules.h). Only what the check needs is kept: the ct state and
 * the registers it flows through, verdicts and jumps, set lookups, and
 * for everything else whether it only reads the packet, only counts, or
 * acts.
 */
#include <string.h>
#include <arpa/inet.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nf_tables_compat.h>
#include <libmnl/libmnl.h>

#include "nfrules.h"
#include "nftexpr.h"

#define ATTRS_MAX 32

struct attrs {
	const struct nlattr *a[ATTRS_MAX];
};

static int attrs_fill(const struct nlattr *a, void *data)
{
	struct attrs *t = data;
	unsigned int type = mnl_attr_get_type(a);

	if (type < ATTRS_MAX)
		t->a[type] = a;
	return MNL_CB_OK;
}

static void attrs_parse(const struct nlattr *nest, struct attrs *t)
{
	memset(t, 0, sizeof(*t));
	if (nest)
		mnl_attr_parse_nested(nest, attrs_fill, t);
}

static bool has(const struct nlattr *a, size_t len)
{
	return a && mnl_attr_get_payload_len(a) >= len;
}

static __u32 be32(const struct nlattr *a, __u32 dflt)
{
	return has(a, 4) ? ntohl(mnl_attr_get_u32(a)) : dflt;
}

/* A register attribute as a slot, or NFX_REG_NONE. */
static __u8 reg(const struct nlattr *a)
{
	int r;

	if (!has(a, 4))
		return NFX_REG_NONE;
	r = nfx_reg(ntohl(mnl_attr_get_u32(a)));
	return r < 0 ? NFX_REG_NONE : r;
}

/* The first 4 bytes of an nft_data value (NFTA_DATA_VALUE in nest), and
 * its length. */
static __u32 data_u32(const struct nlattr *nest, __u8 *len)
{
	struct attrs d;
	__u32 v = 0;
	size_t n;

	attrs_parse(nest, &d);
	if (!d.a[NFTA_DATA_VALUE]) {
		*len = 0;
		return 0;
	}
	n = mnl_attr_get_payload_len(d.a[NFTA_DATA_VALUE]);
	memcpy(&v, mnl_attr_get_payload(d.a[NFTA_DATA_VALUE]), n < 4 ? n : 4);
	*len = n > 255 ? 255 : n;
	return v;
}

int nft_verdict(const struct nlattr *data, int *code, const char **chain)
{
	struct attrs d, v;

	attrs_parse(data, &d);
	if (!d.a[NFTA_DATA_VERDICT])
		return -1;
	attrs_parse(d.a[NFTA_DATA_VERDICT], &v);
	if (!has(v.a[NFTA_VERDICT_CODE], 4))
		return -1;
	*code = (int)ntohl(mnl_attr_get_u32(v.a[NFTA_VERDICT_CODE]));
	*chain = v.a[NFTA_VERDICT_CHAIN] ? mnl_attr_get_str(v.a[NFTA_VERDICT_CHAIN]) : NULL;
	return 0;
}

static int expr_immediate(struct nfx_expr *e, const struct attrs *t)
{
	const char *chain;
	int code;

	e->dreg = reg(t->a[NFTA_IMMEDIATE_DREG]);
	if (has(t->a[NFTA_IMMEDIATE_DREG], 4) &&
	    ntohl(mnl_attr_get_u32(t->a[NFTA_IMMEDIATE_DREG])) == NFT_REG_VERDICT) {
		if (nft_verdict(t->a[NFTA_IMMEDIATE_DATA], &code, &chain))
			return -1;
		e->kind = NFX_VERDICT;
		e->verdict = code;
		if (chain && !(e->name = strdup(chain)))
			return -1;
		return 0;
	}
	e->kind = NFX_IMM;
	e->data = data_u32(t->a[NFTA_IMMEDIATE_DATA], &e->len);
	return 0;
}

static void expr_ct(struct nfx_expr *e, const struct attrs *t)
{
	__u32 key = be32(t->a[NFTA_CT_KEY], ~0u);

	switch (key) {
	case NFT_CT_MARK:
	case NFT_CT_SECMARK:
	case NFT_CT_LABELS:
	case NFT_CT_ZONE:
		e->feat = NFXF_CT_META;
		break;
	case NFT_CT_HELPER:
		e->feat = NFXF_CT_HELPER;
		break;
	case NFT_CT_PKTS:
	case NFT_CT_BYTES:
	case NFT_CT_AVGPKT:
		e->feat = NFXF_CT_ACCT;
		break;
	}
	if (t->a[NFTA_CT_SREG]) {
		e->kind = NFX_EFFECT;
		e->what = "ct set";
		return;
	}
	e->dreg = reg(t->a[NFTA_CT_DREG]);
	if (key == NFT_CT_STATE) {
		e->kind = NFX_CT_STATE;
	} else {
		e->kind = NFX_LOAD;
		e->len = 16;
	}
}

static int expr_lookup(struct nfx_expr *e, const struct attrs *t)
{
	e->kind = NFX_LOOKUP;
	e->sreg = reg(t->a[NFTA_LOOKUP_SREG]);
	/* dreg absent: a plain set; NFT_REG_VERDICT: a verdict map; another
	 * register: a data map, whose result we do not know. */
	if (has(t->a[NFTA_LOOKUP_DREG], 4)) {
		__u32 d = ntohl(mnl_attr_get_u32(t->a[NFTA_LOOKUP_DREG]));

		if (d != NFT_REG_VERDICT) {
			e->kind = NFX_CLOBBER;
			return 0;
		}
		e->dreg = NFX_REG_VERDICT;
	}
	e->op = !!(be32(t->a[NFTA_LOOKUP_FLAGS], 0) & NFT_LOOKUP_F_INV);
	if (t->a[NFTA_LOOKUP_SET] &&
	    !(e->name = strdup(mnl_attr_get_str(t->a[NFTA_LOOKUP_SET]))))
		return -1;
	return 0;
}

static void expr_objref(struct nfx_expr *e, const struct attrs *t)
{
	__u32 type = be32(t->a[NFTA_OBJREF_IMM_TYPE], 0);

	e->kind = NFX_EFFECT;
	e->what = "a stateful object";
	if (t->a[NFTA_OBJREF_SET_SREG])
		return;
	if (type == NFT_OBJECT_COUNTER)
		e->kind = NFX_ACCOUNT;
	else if (type == NFT_OBJECT_CT_HELPER || type == NFT_OBJECT_CT_TIMEOUT ||
		 type == NFT_OBJECT_CT_EXPECT)
		e->feat = NFXF_CT_HELPER;
	else if (type == NFT_OBJECT_SECMARK)
		e->feat = NFXF_CT_META;
}

/* A load of len bytes into the register in a, or an action if the
 * expression writes the packet (sreg). */
static void expr_load_or_set(struct nfx_expr *e, const struct nlattr *dreg,
			     const struct nlattr *sreg, const struct nlattr *len,
			     const char *what)
{
	if (sreg) {
		e->kind = NFX_EFFECT;
		e->what = what;
		return;
	}
	e->kind = NFX_LOAD;
	e->dreg = reg(dreg);
	e->len = len ? be32(len, 16) : 16;
}

static bool name_in(const char *name, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(name, *list))
			return true;
	return false;
}

/* Expressions that load into registers we do not follow or match on the
 * packet, with no effect. */
static const char *const pure[] = {
	"byteorder", "hash", "numgen", "fib", "rt", "socket", "osf", "xfrm",
	"tunnel", "range", "inner", NULL
};
/* Expressions that act (change, log, send, rate-limit, update state). */
static const char *const effects[] = {
	"log", "limit", "quota", "connlimit", "dynset", "nat", "masq", "redir",
	"tproxy", "dup", "fwd", "notrack", "flow_offload", "synproxy", "queue",
	NULL
};

static int expr_xt(struct nfx_expr *e, const struct attrs *t, bool match)
{
	const struct nlattr *n = t->a[match ? NFTA_MATCH_NAME : NFTA_TARGET_NAME];
	const struct nlattr *rev = t->a[match ? NFTA_MATCH_REV : NFTA_TARGET_REV];
	const struct nlattr *info = t->a[match ? NFTA_MATCH_INFO : NFTA_TARGET_INFO];
	const void *p = info ? mnl_attr_get_payload(info) : NULL;
	size_t len = info ? mnl_attr_get_payload_len(info) : 0;

	if (!n)
		return -1;
	if (match)
		nfx_xt_match(e, mnl_attr_get_str(n), be32(rev, 0), p, len);
	else
		nfx_xt_target(e, mnl_attr_get_str(n), be32(rev, 0), p, len);
	return 0;
}

/* One expression: name and data. 0, or -1 if it cannot be read (the
 * caller then treats the rule as acting). */
static int expr_parse(struct nfx_expr *e, const char *name, const struct nlattr *data)
{
	struct attrs t;

	attrs_parse(data, &t);
	e->what = name;
	if (!strcmp(name, "immediate"))
		return expr_immediate(e, &t);
	if (!strcmp(name, "cmp")) {
		e->kind = NFX_CMP;
		e->sreg = reg(t.a[NFTA_CMP_SREG]);
		e->op = be32(t.a[NFTA_CMP_OP], ~0u);
		e->data = data_u32(t.a[NFTA_CMP_DATA], &e->len);
	} else if (!strcmp(name, "bitwise")) {
		__u8 l1, l2;

		e->kind = NFX_BITWISE;
		e->sreg = reg(t.a[NFTA_BITWISE_SREG]);
		e->dreg = reg(t.a[NFTA_BITWISE_DREG]);
		e->mask = data_u32(t.a[NFTA_BITWISE_MASK], &l1);
		e->xor = data_u32(t.a[NFTA_BITWISE_XOR], &l2);
		/* Shifts, or wider than a register: not followed. */
		if (be32(t.a[NFTA_BITWISE_OP], NFT_BITWISE_BOOL) != NFT_BITWISE_BOOL ||
		    be32(t.a[NFTA_BITWISE_LEN], 0) != 4 || l1 != 4 || l2 != 4) {
			e->kind = NFX_LOAD;
			e->len = be32(t.a[NFTA_BITWISE_LEN], 16);
		}
	} else if (!strcmp(name, "ct")) {
		expr_ct(e, &t);
	} else if (!strcmp(name, "lookup")) {
		return expr_lookup(e, &t);
	} else if (!strcmp(name, "payload")) {
		expr_load_or_set(e, t.a[NFTA_PAYLOAD_DREG], t.a[NFTA_PAYLOAD_SREG],
				 t.a[NFTA_PAYLOAD_LEN], "payload set");
	} else if (!strcmp(name, "meta")) {
		expr_load_or_set(e, t.a[NFTA_META_DREG], t.a[NFTA_META_SREG], NULL,
				 "meta set");
		if (t.a[NFTA_META_SREG] &&
		    be32(t.a[NFTA_META_KEY], NFT_META_MARK) == NFT_META_MARK)
			e->feat |= NFXF_SETS_MARK;
	} else if (!strcmp(name, "exthdr")) {
		expr_load_or_set(e, t.a[NFTA_EXTHDR_DREG], t.a[NFTA_EXTHDR_SREG],
				 t.a[NFTA_EXTHDR_LEN], "exthdr set");
	} else if (!strcmp(name, "counter") || !strcmp(name, "last")) {
		e->kind = NFX_ACCOUNT;
	} else if (!strcmp(name, "objref")) {
		expr_objref(e, &t);
	} else if (!strcmp(name, "reject")) {
		e->kind = NFX_VERDICT;
		e->verdict = NF_DROP;
	} else if (!strcmp(name, "match") || !strcmp(name, "target")) {
		return expr_xt(e, &t, name[0] == 'm');
	} else if (name_in(name, pure)) {
		e->kind = NFX_CLOBBER;
	} else {
		/* The actions, and what this xfib does not know. */
		e->kind = NFX_EFFECT;
		if (!name_in(name, effects))
			e->what = "an unknown expression";
	}
	return 0;
}

int nft_rule_exprs(struct nfx_rule *r, const struct nlattr *list)
{
	const struct nlattr *el;

	mnl_attr_for_each_nested(el, list) {
		struct nfx_expr *e = nfx_expr_add(r);
		struct attrs t;

		if (!e)
			return -1;
		attrs_parse(el, &t);
		e->kind = NFX_EFFECT;
		e->what = "an unreadable expression";
		if (!t.a[NFTA_EXPR_NAME])
			continue;
		if (expr_parse(e, mnl_attr_get_str(t.a[NFTA_EXPR_NAME]),
			       t.a[NFTA_EXPR_DATA])) {
			e->kind = NFX_EFFECT;
			e->what = "an unreadable expression";
		}
	}
	return 0;
}

bool nft_rule_needs_set(const struct nfx_rule *r, unsigned int i)
{
	const struct nfx_expr *e = &r->e[i];
	unsigned int j;

	if (e->kind != NFX_LOOKUP || !e->name || e->sreg >= NFX_REGS)
		return false;
	/* The last writer of its register before it loads the ct state. */
	for (j = i; j-- > 0;) {
		const struct nfx_expr *w = &r->e[j];

		if (w->dreg != e->sreg)
			continue;
		if (w->kind == NFX_CT_STATE)
			return true;
		if (w->kind != NFX_BITWISE)
			return false;
	}
	return false;
}
