/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The host's netfilter rules as xfibd checks them: one form for nftables
 * (nft.c reads it over NETLINK_NETFILTER) and legacy iptables (ipt.c reads
 * the tables' blobs), and the check (nfcheck.c) that decides, per family,
 * whether the forward path has rules and whether the conntrack gate may
 * stand in for them.
 *
 * The check runs each forward-path base chain (prerouting, forward,
 * postrouting) on an abstract packet: one
 * of a flow conntrack holds as established both ways and not NATed, which
 * is all the gate ever forwards. Of such a packet the check knows exactly
 * one thing, its ct state (established, or invalid in chains that run
 * before conntrack); every other value a rule loads is unknown. A rule
 * whose matches are decided false is skipped; one that may match must do
 * nothing but accept, continue, return or jump to a chain that is as
 * harmless. A chain passes if every established packet ends accepted
 * (a rule accepting them all, or the end of a base chain with policy
 * accept) without any rule before changing, dropping or sending it. Rule
 * counters are the one side effect allowed (they undercount what XDP
 * forwards; see the README). nat chains see only a flow's first packet,
 * so they count as rules but are not run.
 */
#ifndef XFIB_NFRULES_H
#define XFIB_NFRULES_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "xfib/netfilter.h"

/* Register slots of 4 bytes, as nf_tables numbers NFT_REG32_00..15. */
#define NFX_REGS 16
#define NFX_REG_NONE 0xfe    /* no register */
#define NFX_REG_VERDICT 0xff /* NFX_LOOKUP: the result is a verdict */

enum nfx_kind {
	NFX_LOAD,     /* dreg.. (len bytes) := something unknown */
	NFX_CLOBBER,  /* a pure match or load whose registers we do not
		       * track: every register unknown, the rule conditional */
	NFX_CT_STATE, /* dreg := the ct state */
	NFX_BITWISE,  /* dreg := (sreg & mask) ^ xor, 4 bytes */
	NFX_CMP,      /* match: sreg op data, len bytes */
	NFX_LOOKUP,   /* match: sreg in set (op: inverted); dreg
		       * NFX_REG_VERDICT: a verdict map */
	NFX_IMM,      /* dreg := data, len bytes */
	NFX_VERDICT,  /* verdict (and chain for jump/goto) */
	NFX_COND,     /* a match the check cannot decide */
	NFX_CT_MASK,  /* match: (ct state & data) != 0, inverted by op;
		       * mask also set: more conditions (undecided) */
	NFX_NOP,      /* no effect (comments) */
	NFX_ACCOUNT,  /* counter, last used: accounting only */
	NFX_EFFECT,   /* changes the packet, conntrack, some state, or logs */
};

/* What an expression touches that the gate cannot follow. */
enum nfx_feature {
	NFXF_CT_META = 1 << 0,	 /* ct mark, label, zone, secmark */
	NFXF_CT_HELPER = 1 << 1, /* ct helper, timeout or expectation */
	NFXF_CT_ACCT = 1 << 2,	 /* ct bytes, packets (accounting) */
	NFXF_SETS_MARK = 1 << 3, /* sets the packet's mark (meta mark set,
				  * MARK, CONNMARK, TPROXY) */
};

struct nfx_expr {
	__u8 kind;     /* enum nfx_kind */
	__u8 feat;     /* enum nfx_feature */
	__u8 sreg, dreg;
	__u8 len;
	__u8 op;       /* NFX_CMP: NFT_CMP_*; NFX_LOOKUP, NFX_CT_MASK: inverted */
	__u32 mask, xor, data;
	int verdict;   /* NFX_VERDICT: NF_ACCEPT, NF_DROP, NFT_JUMP, ... */
	char *name;    /* NFX_VERDICT: jump/goto chain; NFX_LOOKUP: set */
	const char *what; /* the expression, for messages (static) */
};

struct nfx_rule {
	__u64 handle;  /* nftables handle; legacy: position in the chain */
	unsigned int n;
	struct nfx_expr *e;
};

struct nfx_chain {
	char *name;
	bool base;
	bool nat;      /* type nat: runs for a flow's first packet only */
	__u32 hook;    /* NF_INET_* (NF_NETDEV_* in netdev tables) */
	__s32 prio;
	int policy;    /* NF_ACCEPT or NF_DROP */
	char **devs;   /* ingress/egress hooks: the devices */
	unsigned int ndevs;
	unsigned int nrules, cap;
	struct nfx_rule *rules;
};

struct nfx_elem {
	__u32 key;
	int verdict;   /* verdict maps */
	char *chain;
};

struct nfx_set {
	char *name;
	__u32 flags;   /* NFT_SET_* */
	__u32 klen;
	bool vmap;     /* data are verdicts */
	bool needed;   /* a lookup on the ct state uses it */
	bool complete; /* elements read: lookups on it can be decided */
	unsigned int n, cap;
	struct nfx_elem *el;
};

struct nfx_table {
	char *name;    /* "fw", "iptables-legacy filter" */
	const char *prefix; /* nftables: its family ("inet"), for messages */
	__u8 family;   /* NFPROTO_* */
	bool legacy;
	unsigned int nchains, ncap, nsets, scap;
	struct nfx_chain *chains;
	struct nfx_set *sets;
};

struct nfx_ruleset {
	unsigned int n, cap;
	struct nfx_table *tables;
};

/* The check's answer for one family. */
struct nfx_result {
	bool rules;	    /* a forward-path chain has an effect (chains
			     * bound to devices are reported by port) */
	bool gate_ok;	    /* ... and the gate may stand in for all of them */
	bool nat;	    /* ... one of them is a nat chain */
	bool ct_used;	    /* the ct state decided a match: with gate_ok
			     * and no nat, otherwise every packet would
			     * pass unchanged */
	unsigned int chains; /* forward-path base chains with an effect */
	char why[XFIB_NF_WHY_MAX]; /* why not gate_ok, or "" */
};

/* Where a device-bound chain sits. */
enum nfx_port_dir {
	NFX_PORT_IN = 1 << 0,  /* ingress: packets entering dev */
	NFX_PORT_OUT = 1 << 1, /* egress: packets leaving dev */
};

/* A device whose ingress or egress chain does more than accept every
 * packet unchanged: its packets must go to the kernel (dir: nfx_port_dir). */
typedef void (*nfx_port_fn)(const char *dev, unsigned int dir, void *ctx);

/*
 * Checks the family (XFIB_V4, XFIB_V6) of rs into res. Chains bound to
 * devices (ingress, netdev egress) are not part of the family's answer:
 * they see every packet of their device, before conntrack or after
 * routing, so each such device that they may act on is reported to port
 * instead, and the dataplane hands that port's packets to the kernel.
 */
void nfx_check(const struct nfx_ruleset *rs, unsigned int fam,
	       nfx_port_fn port, void *ctx, struct nfx_result *res);

/*
 * Whether a rule of family fam (XFIB_V4, XFIB_V6) may set a packet's mark
 * before it is routed: an expression that sets it in a table with a
 * chain on the prerouting or ingress hook (any of its chains: a base
 * chain may jump to them). Policy rules that select by fwmark depend on
 * it (rib_rule_class.c).
 */
bool nfx_marks_before_routing(const struct nfx_ruleset *rs, unsigned int fam);
/* A bridge-family base chain acts on what bridges pass up or send. */
bool nfx_bridge_chains(const struct nfx_ruleset *rs);

/* ---- building (nft.c, ipt.c) ---------------------------------------------- */

struct nfx_table *nfx_table_add(struct nfx_ruleset *rs, __u8 family,
				const char *name, bool legacy);
struct nfx_table *nfx_table_find(const struct nfx_ruleset *rs, __u8 family,
				 const char *name);
struct nfx_chain *nfx_chain_add(struct nfx_table *t, const char *name);
struct nfx_chain *nfx_chain_find(const struct nfx_table *t, const char *name);
int nfx_chain_add_dev(struct nfx_chain *c, const char *dev);
/* A new empty rule at the end of c. */
struct nfx_rule *nfx_rule_add(struct nfx_chain *c, __u64 handle);
/* A new expression at the end of r (zeroed, registers NFX_REG_NONE). */
struct nfx_expr *nfx_expr_add(struct nfx_rule *r);
struct nfx_set *nfx_set_add(struct nfx_table *t, const char *name);
struct nfx_set *nfx_set_find(const struct nfx_table *t, const char *name);
int nfx_set_add_elem(struct nfx_set *s, __u32 key, int verdict, const char *chain);
void nfx_ruleset_free(struct nfx_ruleset *rs);

/* An xt match or target (iptables-nft's compat expressions, legacy
 * iptables' entries) as an expression. */
void nfx_xt_match(struct nfx_expr *e, const char *name, unsigned int rev,
		  const void *info, size_t len);
void nfx_xt_target(struct nfx_expr *e, const char *name, unsigned int rev,
		   const void *info, size_t len);

/* 32-bit register slot of an nf_tables register number, or -1. */
int nfx_reg(__u32 reg);

#endif /* XFIB_NFRULES_H */
