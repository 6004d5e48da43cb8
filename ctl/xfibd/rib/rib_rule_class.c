// SPDX-License-Identifier: GPL-2.0-only
/*
 * What xfib could do with a policy rule for a packet it forwards: evaluate
 * it as the kernel does (exact), know that it never matches (never), or
 * leave it to the kernel (kernel). The kernel code each decision follows
 * is listed in include/xfib/rules.h. Pure: the rule as published (its
 * flags say whether its iif was resolved, its tslot whether its table is
 * mirrored) and whether netfilter may mark packets before routing are
 * all it reads.
 */
#include <linux/fib_rules.h>

#include "rib.h"

/*
 * A selector that no forwarded packet satisfies, the reason, or NONE.
 * fib_rule_match tests iif, oif, mark, tun_id, l3mdev, uid, then the
 * family's match, and-ed; one false makes the whole false.
 */
static enum xfib_rule_reason never_reason(const struct xfib_rule *x)
{
	/* flowi_oif is 0 for input routes; oifindex never is. */
	if (x->flags & XFIB_RULE_F_OIF)
		return XFIB_RULE_R_OIF;
	/* iifindex -1 (no such device) equals no flowi_iif. */
	if ((x->flags & XFIB_RULE_F_IIF) && (x->flags & XFIB_RULE_F_IIF_DETACHED))
		return XFIB_RULE_R_IIF_MISSING;
	/* A packet that arrived on a port did not arrive on lo. */
	if ((x->flags & XFIB_RULE_F_IIF) && (x->flags & XFIB_RULE_F_IIF_LOOPBACK))
		return XFIB_RULE_R_IIF_LOOPBACK;
	/* flowi_uid of an input route: uid 0 (sock_net_uid(net, NULL)). */
	if ((x->flags & XFIB_RULE_F_UID) && x->uid_start > 0)
		return XFIB_RULE_R_UID;
	return XFIB_RULE_R_NONE;
}

/*
 * (mark ^ flowi_mark) & mask: with mask 0, true whatever the mark. While
 * netfilter cannot mark a packet before routing, flowi_mark is 0 for
 * every forwarded packet (a tc program runs after XDP): the selector
 * holds iff mark & mask is 0.
 */
static bool fwmark_fails(const struct xfib_rule *x, bool marks)
{
	return !marks && (x->flags & XFIB_RULE_F_FWMARK) &&
	       (x->fwmark & x->fwmask);
}

/* A selector only the kernel can evaluate, the reason, or NONE. */
static enum xfib_rule_reason kernel_reason(const struct xfib_rule *x, bool marks)
{
	if (marks && (x->flags & XFIB_RULE_F_FWMARK) && x->fwmask)
		return XFIB_RULE_R_FWMARK;
	if (x->flags & XFIB_RULE_F_TUN_ID)
		return XFIB_RULE_R_TUN_ID;
	if ((x->flags & XFIB_RULE_F_L3MDEV) || x->l3mdev)
		return XFIB_RULE_R_L3MDEV;
	if (x->flags & XFIB_RULE_F_REALMS)
		return XFIB_RULE_R_REALMS;
	return XFIB_RULE_R_NONE;
}

/* The actions fib_rules_lookup and the families' actions know. */
static bool action_known(__u8 action)
{
	switch (action) {
	case FR_ACT_TO_TBL:
	case FR_ACT_GOTO:
	case FR_ACT_NOP:
	case FR_ACT_BLACKHOLE:
	case FR_ACT_UNREACHABLE:
	case FR_ACT_PROHIBIT:
		return true;
	default:
		return false;
	}
}

static void set_class(struct xfib_rule *x, enum xfib_rule_class cls,
		      enum xfib_rule_reason reason)
{
	x->cls = cls;
	x->reason = reason;
}

/*
 * What the lookup of a rule that matches needs that xfib does not have: a
 * table without a slot (one in state KERNEL is the walk's to read). The
 * device group of the route found, which suppress_ifgroup compares
 * (fib4_rule_suppress, fib6_rule_suppress), the walk reads from the
 * port's entry (include/xfib/rule_walk.h).
 */
static enum xfib_rule_reason lookup_reason(const struct xfib_rule *x)
{
	if (x->action != FR_ACT_TO_TBL)
		return XFIB_RULE_R_NONE;
	if (x->tslot == XFIB_TSLOT_NONE)
		return XFIB_RULE_R_TABLE;
	return XFIB_RULE_R_NONE;
}

void rib_rule_classify(struct xfib_rule *x, bool marks)
{
	enum xfib_rule_reason never, kernel;
	bool none;

	x->flags &= ~XFIB_RULE_F_MATCH_NONE;
	/* An attribute of a newer kernel may change what the others mean. */
	if (x->flags & XFIB_RULE_F_UNKNOWN) {
		set_class(x, XFIB_RULE_KERNEL, XFIB_RULE_R_ATTR);
		return;
	}
	never = never_reason(x);
	/* An fwmark that fails for mark 0 never matches either, but it is
	 * the walk that knows it (no "never" reason names a selector that
	 * a netfilter rule may make match tomorrow). */
	none = never != XFIB_RULE_R_NONE || fwmark_fails(x, marks);
	if (none) {
		x->flags |= XFIB_RULE_F_MATCH_NONE;
		if (!(x->flags & XFIB_RULE_F_INVERT)) {
			set_class(x, never != XFIB_RULE_R_NONE ? XFIB_RULE_NEVER :
				  XFIB_RULE_EXACT, never);
			return;
		}
	}
	/* Inverted, a rule that matches nothing matches everything: what
	 * its other selectors say does not matter, its action does. */
	kernel = !none ? kernel_reason(x, marks) : XFIB_RULE_R_NONE;
	if (kernel != XFIB_RULE_R_NONE) {
		set_class(x, XFIB_RULE_KERNEL, kernel);
		return;
	}
	if (!action_known(x->action)) {
		x->reason_arg = x->action;
		set_class(x, XFIB_RULE_KERNEL, XFIB_RULE_R_ACTION);
		return;
	}
	kernel = lookup_reason(x);
	if (kernel != XFIB_RULE_R_NONE) {
		set_class(x, XFIB_RULE_KERNEL, kernel);
		return;
	}
	set_class(x, XFIB_RULE_EXACT,
		  none ? XFIB_RULE_R_ALWAYS : XFIB_RULE_R_NONE);
}
