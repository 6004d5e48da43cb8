// SPDX-License-Identifier: GPL-2.0-only
/*
 * What xfib could do with a policy rule for a packet it forwards: evaluate
 * it as the kernel does (exact), know that it never matches (never), or
 * leave it to the kernel (kernel). The kernel code each decision follows
 * is listed in include/xfib/rules.h. Pure: the rule as published (its
 * flags say whether its iif was resolved) is all it reads.
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

/* A selector only the kernel can evaluate, the reason, or NONE. */
static enum xfib_rule_reason kernel_reason(const struct xfib_rule *x)
{
	/* (mark ^ flowi_mark) & mask: with mask 0, true whatever the mark. */
	if ((x->flags & XFIB_RULE_F_FWMARK) && x->fwmask)
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

void rib_rule_classify(struct xfib_rule *x)
{
	enum xfib_rule_reason never, kernel;

	x->flags &= ~XFIB_RULE_F_MATCH_NONE;
	/* An attribute of a newer kernel may change what the others mean. */
	if (x->flags & XFIB_RULE_F_UNKNOWN) {
		set_class(x, XFIB_RULE_KERNEL, XFIB_RULE_R_ATTR);
		return;
	}
	never = never_reason(x);
	if (never != XFIB_RULE_R_NONE) {
		x->flags |= XFIB_RULE_F_MATCH_NONE;
		if (!(x->flags & XFIB_RULE_F_INVERT)) {
			set_class(x, XFIB_RULE_NEVER, never);
			return;
		}
	}
	/* Inverted, a rule that matches nothing matches everything: what
	 * its other selectors say does not matter, its action does. */
	kernel = never == XFIB_RULE_R_NONE ? kernel_reason(x) : XFIB_RULE_R_NONE;
	if (kernel != XFIB_RULE_R_NONE) {
		set_class(x, XFIB_RULE_KERNEL, kernel);
		return;
	}
	if (!action_known(x->action)) {
		x->reason_arg = x->action;
		set_class(x, XFIB_RULE_KERNEL, XFIB_RULE_R_ACTION);
		return;
	}
	set_class(x, XFIB_RULE_EXACT,
		  never != XFIB_RULE_R_NONE ? XFIB_RULE_R_ALWAYS : XFIB_RULE_R_NONE);
}
