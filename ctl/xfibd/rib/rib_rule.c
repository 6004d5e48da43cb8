// SPDX-License-Identifier: GPL-2.0-only
/*
 * The kernel's policy rules, per family, and their publication in
 * xfib_rules (include/xfib/rules.h).
 *
 * Rules are few (tens; XFIB_RULES_MAX are published) and change rarely,
 * so a family's list is read whole from a dump each time the kernel
 * announces a change (kernel/netlink.c), never patched from the
 * notifications: the dump gives the kernel's order of rules of one
 * priority, and the state after a replace (a delete and an add), which
 * a missed or reordered notification could not. A dump that fails keeps
 * the previous list.
 *
 * Publishing resolves each iif name to the ifindex of the link of that
 * name now, as the kernel does when a device registers or is renamed
 * (fib_rules_event: attach_rules, detach_rules), and each goto to the
 * index of the first rule of its target priority (fib_nl_newrule), then
 * classifies every rule (rib_rule_class.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fib_rules.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdio.h>
#include <sys/utsname.h>

#include "log.h"
#include "rib_priv.h"

void rib_rules_begin(struct rib *r, int fam)
{
	struct rib_rules *n = &r->rules_new[fam];

	n->n = 0;
	n->unreadable = n->nomem = false;
}

void rib_rule_dumped(struct rib *r, int fam, const struct xfib_rule *x)
{
	struct rib_rules *n = &r->rules_new[fam];

	if (!x) {
		n->unreadable = true;
		return;
	}
	if (n->n == n->cap) {
		__u32 cap = n->cap ? 2 * n->cap : 16;
		void *v = realloc(n->v, cap * sizeof(*n->v));

		if (!v) {
			n->nomem = true;
			return;
		}
		n->v = v;
		n->cap = cap;
	}
	n->v[n->n++] = *x;
}

/* Matches every packet and sends it to table: "lookup <table>" alone. */
static bool plain_lookup(const struct xfib_rule *x, __u32 table)
{
	/* Any selector (suppress_* off is all ones), or flag but those the
	 * kernel sets by itself. */
	return x->action == FR_ACT_TO_TBL && x->table == table &&
	       !x->src_len && !x->dst_len && !x->tos && !x->ip_proto &&
	       !x->l3mdev && !(x->flags & ~XFIB_RULE_F_UNRESOLVED) &&
	       x->suppress_prefixlen == 0xffffffff &&
	       x->suppress_ifgroup == 0xffffffff;
}

/* The rules are "lookup local", "lookup <our table>" before any other:
 * the plain lookup of slot 0 answers, no rule need be walked. */
static bool rules_plain(const struct rib *r, const struct rib_rules *l)
{
	return l->n >= 2 && plain_lookup(&l->v[0], RT_TABLE_LOCAL) &&
	       plain_lookup(&l->v[1], r->table);
}

/*
 * The mirror answers like the kernel if the rules start with "lookup
 * local" for every packet: slot 0's lookup (main merged with local)
 * answers for it, and the walk goes on from the rule after it. What
 * follows "lookup <our table>" right after it does not matter: whatever
 * our table does not match goes to the kernel, which walks the rest
 * itself. With other rules between local and main, a route in the local
 * table of a type main could hold (unicast, throw, ...) would answer for
 * local in slot 0, before the rules between: such a family goes to the
 * kernel. Rules xfibd cannot publish whole (more than XFIB_RULES_MAX, or
 * one it could not read) send the family to the kernel too.
 */
static enum xfib_rules_fallback rules_fallback(const struct rib *r, int fam,
					       const struct rib_rules *l)
{
	if (l->unreadable || l->nomem)
		return XFIB_RULES_UNREADABLE;
	if (l->n > XFIB_RULES_MAX)
		return XFIB_RULES_TOO_MANY;
	if (l->n < 1 || !plain_lookup(&l->v[0], RT_TABLE_LOCAL))
		return XFIB_RULES_ORDER;
	if (!rules_plain(r, l) && r->local_odd[fam])
		return XFIB_RULES_LOCAL_ROUTES;
	return XFIB_RULES_OK;
}

enum xfib_rules_fallback rib_rules_end(struct rib *r, int fam, bool complete)
{
	struct rib_rules t;

	if (complete) {
		t = r->rules[fam];
		r->rules[fam] = r->rules_new[fam];
		r->rules_new[fam] = t;
		r->rules_dirty = true;
		tables_assign(r, fam);
	}
	return rules_fallback(r, fam, &r->rules[fam]);
}

bool rib_rules_local_routes(const struct rib *r, int fam)
{
	return rules_fallback(r, fam, &r->rules[fam]) == XFIB_RULES_LOCAL_ROUTES;
}

void rib_rules_marks(struct rib *r, int fam, bool marks)
{
	if (r->marks[fam] == marks)
		return;
	pr_info("%s: netfilter %s set a packet's mark before routing: fwmark rules %s",
		fam == XFIB_V4 ? "ipv4" : "ipv6", marks ? "may" : "cannot",
		marks ? "are left to the kernel" : "are decided for mark 0");
	r->marks[fam] = marks;
	r->rules_dirty = true;
}

/* The ifindex of the link named name, 0 if none; *loopback if it is one. */
static __u32 link_by_name(struct rib *r, const char *name, bool *loopback)
{
	struct rib_link *l;
	size_t i;

	htab_for_each(&r->links, l, t, i) {
		if (!strncmp(l->name, name, IF_NAMESIZE)) {
			*loopback = l->ifflags & IFF_LOOPBACK;
			return l->ifindex;
		}
	}
	return 0;
}

static void rule_resolve_iif(struct rib *r, struct xfib_rule *x)
{
	bool loopback = false;

	x->flags &= ~(XFIB_RULE_F_IIF_DETACHED | XFIB_RULE_F_IIF_LOOPBACK);
	x->iif = 0;
	if (!(x->flags & XFIB_RULE_F_IIF))
		return;
	x->iif = link_by_name(r, x->iifname, &loopback);
	if (!x->iif)
		x->flags |= XFIB_RULE_F_IIF_DETACHED;
	else if (loopback)
		x->flags |= XFIB_RULE_F_IIF_LOOPBACK;
}

static void rule_resolve_goto(const struct xfib_rule *v, __u32 n,
			      struct xfib_rule *x)
{
	__u32 i;

	x->goto_idx = XFIB_RULE_NO_TARGET;
	x->flags &= ~XFIB_RULE_F_UNRESOLVED;
	if (x->action != FR_ACT_GOTO)
		return;
	for (i = 0; i < n; i++) {
		if (v[i].priority == x->goto_prio) {
			x->goto_idx = i;
			return;
		}
	}
	x->flags |= XFIB_RULE_F_UNRESOLVED;
}

/*
 * The bits of a packet's TOS (IPv4) or traffic class (IPv6) this kernel
 * compares with a rule's tos, for a packet being routed in:
 *  - IPv4: ip_route_input masked the header's TOS with IPTOS_RT_MASK
 *    (0x1c) before fib4_rule_match compared it with the rule's; since the
 *    input path keeps the whole DSCP (6.13 on), fib4_rule_match masks it
 *    for a tos selector itself (fib_dscp_masked_match, with
 *    INET_DSCP_LEGACY_TOS_MASK, 0x1c), to keep that behaviour; only the
 *    newer dscp selector (FRA_DSCP, an attribute xfibd leaves to the
 *    kernel) compares all six DSCP bits. 0x1c on every kernel.
 *  - IPv6: fib6_rule_match compared the whole traffic class (ECN too)
 *    until 5.18, which made the rule's tclass a DSCP (ip6_dscp(): 0xfc,
 *    ECN ignored); 6.1, 6.12 and 6.18 compare the DSCP.
 */
static __u8 rule_tos_mask(int fam)
{
	static int v6_mask; /* 0: not read yet */
	struct utsname u;
	unsigned int major = 0, minor = 0;

	if (fam == XFIB_V4)
		return 0x1c;
	if (!v6_mask) {
		v6_mask = 0xfc;
		if (!uname(&u) && sscanf(u.release, "%u.%u", &major, &minor) == 2 &&
		    (major < 5 || (major == 5 && minor < 18)))
			v6_mask = 0xff;
	}
	return v6_mask;
}

/* Sets hdr's walk and first (include/xfib/rules.h). */
static void rules_walk(const struct rib *r, const struct rib_rules *l,
		       struct xfib_rules_hdr *hdr)
{
	hdr->walk = hdr->fallback == XFIB_RULES_OK && !rules_plain(r, l);
	hdr->first = hdr->walk ? 1 : 0;
}

/* Fills set with the family's rules as packets will read them. */
static void rules_build(struct rib *r, int fam, struct xfib_rule_set *set)
{
	const struct rib_rules *l = &r->rules[fam];
	__u32 i, n = l->n < XFIB_RULES_MAX ? l->n : XFIB_RULES_MAX;

	memset(set, 0, sizeof(*set));
	set->hdr.count = n;
	set->hdr.total = l->n;
	set->hdr.fallback = rules_fallback(r, fam, l);
	rules_walk(r, l, &set->hdr);
	for (i = 0; i < n; i++) {
		struct xfib_rule *x = &set->rule[i];

		*x = l->v[i];
		rule_resolve_iif(r, x);
		rule_resolve_goto(l->v, n, x);
		x->tslot = tables_rule_slot(r, fam, x);
		x->tos_mask = rule_tos_mask(fam);
		rib_rule_classify(x, r->marks[fam]);
		if (x->suppress_ifgroup != 0xffffffff)
			set->hdr.ifgroup = 1;
	}
	rib_rule_runs(set, fam);
}

/* What the rules' fallback says of the family, for fib.c; logged when it
 * changes for a reason the dump did not see (local table routes). */
static void rules_ok_set(struct rib *r, int fam, __u32 fallback)
{
	bool ok = fallback == XFIB_RULES_OK;

	if (ok == r->fam[fam].rules_ok)
		return;
	if (fallback == XFIB_RULES_LOCAL_ROUTES)
		pr_warn("%s: the local table holds routes other than local ones, and rules follow it: this traffic goes to the kernel",
			fam == XFIB_V4 ? "ipv4" : "ipv6");
	r->fam[fam].rules_ok = ok;
	r->fam[fam].dirty = true;
}

/*
 * Writes set as the family's standby half, publishes it, then waits until
 * no packet can still read the half it replaced, which the next
 * publication writes. Unchanged rules are not published again.
 */
static int rules_write(struct rib *r, int fam, struct xfib_rule_set *set)
{
	struct xfib_rules_active *act = &r->dp.rules_active[fam];
	struct xfib_rules_active now = {
		.half = __atomic_load_n(&act->half, __ATOMIC_RELAXED) & 1,
		.generation = __atomic_load_n(&act->generation, __ATOMIC_RELAXED),
	};
	struct xfib_rule_set *cur = &r->dp.rules[fam * 2 + now.half];
	struct xfib_rule_set *standby = &r->dp.rules[fam * 2 + !now.half];
	struct xfib_rules_active next;
	__u64 word;

	set->hdr.generation = now.generation;
	if (now.generation && !memcmp(cur, set, sizeof(*set)))
		return 0;
	next.half = !now.half;
	next.generation = now.generation + 1 ? now.generation + 1 : 1;
	set->hdr.generation = next.generation;
	memcpy(standby, set, sizeof(*set));
	/* The half and its generation change in one store, after the half
	 * is written: a reader sees the old set or the new, whole. */
	memcpy(&word, &next, sizeof(word));
	__atomic_store_n((__u64 *)act, word, __ATOMIC_RELEASE);
	return rib_rcu_sync(r);
}

int rib_rules_publish(struct rib *r)
{
	struct xfib_rule_set *set;
	int fam, err = 0;

	/* A slot's descriptor must say what it holds before a rule names
	 * it (rib_table.c): fib_tables.c publishes them first. */
	if (!r->rules_dirty || r->tables_pending || !r->dp.rules ||
	    !r->dp.rules_active)
		return 0;
	set = malloc(sizeof(*set));
	if (!set)
		return -ENOMEM;
	for (fam = 0; fam < XFIB_FAMILIES && !err; fam++) {
		rules_build(r, fam, set);
		rules_ok_set(r, fam, set->hdr.fallback);
		err = rules_write(r, fam, set);
	}
	free(set);
	if (err) {
		pr_warn("publishing the policy rules: %s", strerror(-err));
		return err;
	}
	r->rules_dirty = false;
	tables_release(r);
	return 0;
}

void rib_tables_published(struct rib *r)
{
	r->tables_pending = false;
}
