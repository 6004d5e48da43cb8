// SPDX-License-Identifier: GPL-2.0-only
/*
 * What one NETLINK_XFRM message of a policy dump, a state dump or a
 * default policy answer adds to the counts that decide each family's XFRM
 * mode (xfrm.h). Only the fixed headers are read; their lengths are
 * checked first.
 */
#include <sys/socket.h>
#include <linux/xfrm.h>
#include <libmnl/libmnl.h>

#include "xfrm.h"

/* The families (1 << XFIB_V4, 1 << XFIB_V6) address family af stands for:
 * both for AF_UNSPEC, and for any other the kernel might report. */
static unsigned int fam_bits(__u16 af)
{
	if (af == AF_INET)
		return 1u << XFIB_V4;
	if (af == AF_INET6)
		return 1u << XFIB_V6;
	return (1u << XFIB_V4) | (1u << XFIB_V6);
}

static void add_fams(__u32 *count, unsigned int bits)
{
	unsigned int fam;

	for (fam = 0; fam < XFIB_FAMILIES; fam++)
		if (bits & (1u << fam))
			count[fam]++;
}

void xfrm_count_msg(struct xfrm_counts *c, const struct nlmsghdr *nlh)
{
	size_t len = mnl_nlmsg_get_payload_len(nlh);
	const void *p = mnl_nlmsg_get_payload(nlh);

	switch (nlh->nlmsg_type) {
	case XFRM_MSG_NEWPOLICY: {
		const struct xfrm_userpolicy_info *pi = p;

		if (len < sizeof(*pi))
			return;
		/* Socket policies come as XFRM_POLICY_MAX + dir: not these. */
		if (pi->dir == XFRM_POLICY_FWD)
			add_fams(c->fwd, fam_bits(pi->sel.family));
		else if (pi->dir == XFRM_POLICY_OUT)
			add_fams(c->out, fam_bits(pi->sel.family));
		return;
	}
	case XFRM_MSG_NEWSA: {
		const struct xfrm_usersa_info *sa = p;

		if (len < sizeof(*sa))
			return;
		/* The outer family, and the inner one a tunnel decrypts to:
		 * either, for a selector without a family. */
		if (sa->mode == XFRM_MODE_TRANSPORT)
			add_fams(c->states, fam_bits(sa->family));
		else
			add_fams(c->states, fam_bits(sa->family) |
						    fam_bits(sa->sel.family));
		return;
	}
	case XFRM_MSG_GETDEFAULT: {
		const struct xfrm_userpolicy_default *d = p;

		if (len < sizeof(*d))
			return;
		if (d->fwd == XFRM_USERPOLICY_BLOCK)
			c->flags |= XFIB_XFRM_FWD_BLOCK;
		if (d->out == XFRM_USERPOLICY_BLOCK)
			c->flags |= XFIB_XFRM_OUT_BLOCK;
		return;
	}
	default:
		return;
	}
}
