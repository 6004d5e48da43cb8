/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * IPsec (XFRM) and forwarding: what xfibd found in the kernel's security
 * policy and association databases, per family, and what the dataplane
 * does about it. Shared by the XDP program, xfibd (ctl/xfibd/xfrm/xfrm.c),
 * xfibctl lookup and status.
 *
 * The kernel consults XFRM for a forwarded packet twice: ip_forward() and
 * ip6_forward() check the forward policies (xfrm4/6_policy_check with
 * XFRM_POLICY_FWD), which may drop the packet or demand it arrived
 * decrypted by given states; then the output route (xfrm4/6_route_forward,
 * xfrm_lookup) looks up the output policies, which may encapsulate the
 * packet or drop it. Both run only while the namespace has policies of
 * that direction or a default of "block" for it (ip xfrm policy
 * setdefault). A packet decrypted by a state of this host carries a
 * security path the forward check also judges (a tunnel-mode one without
 * a matching policy is dropped). Input policies and socket policies play
 * no part in forwarding.
 *
 * XDP runs before all of that, so while a family has a forward or output
 * policy, a state, or such a default, xfibd publishes XFIB_XFRM_PASS for
 * it and the dataplane hands every packet of the family to the kernel
 * (pass_xfrm). A policy's family is its selector's; a state counts for its
 * own family and, unless in transport mode, its selector's (the inner
 * packets of a tunnel); AF_UNSPEC counts for both. If reading the
 * databases fails, both families pass.
 */
#ifndef XFIB_XFRM_H
#define XFIB_XFRM_H

#include <linux/types.h>

enum xfib_xfrm_mode {
	XFIB_XFRM_OFF = 0,  /* nothing XFRM does to forwarded packets */
	XFIB_XFRM_PASS = 1, /* every packet of the family to the kernel */
};

/* Why, besides the counts (bits of xfib_xfrm_info.flags). */
enum xfib_xfrm_flag {
	XFIB_XFRM_FWD_BLOCK = 1 << 0, /* default forward policy: block */
	XFIB_XFRM_OUT_BLOCK = 1 << 1, /* default output policy: block */
	XFIB_XFRM_ERROR = 1 << 2,     /* reading failed: assumed present */
};

/* One per family in xfib_xfrm; the dataplane reads mode only. */
struct xfib_xfrm_info {
	__u8 mode;  /* enum xfib_xfrm_mode */
	__u8 flags; /* enum xfib_xfrm_flag */
	__u16 pad;
	__u32 fwd_policies; /* forward-direction policies of the family */
	__u32 out_policies; /* output-direction policies */
	__u32 states;	    /* states (SAs) */
	__u64 checked;	    /* CLOCK_REALTIME, seconds, of the last read */
	__u64 changes;	    /* reads that found different counts */
};
_Static_assert(sizeof(struct xfib_xfrm_info) == 32, "xfib_xfrm_info size");

#endif /* XFIB_XFRM_H */
