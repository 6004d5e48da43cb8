/* SPDX-License-Identifier: GPL-2.0-only */
/* The nftables ruleset over NETLINK_NETFILTER (nft.c). */
#ifndef XFIB_NFT_H
#define XFIB_NFT_H

#include "nfrules.h"

struct mnl_socket;

/* Reads the ruleset of this network namespace into rs (emptied first): 0,
 * -EAGAIN if it kept changing while read, or -errno. */
int nft_read(struct nfx_ruleset *rs);

/* A socket that receives the ruleset's change notifications. */
int nft_notify_open(struct mnl_socket **nl);

/* Reads what is queued on it: 1 if the ruleset changed (or notifications
 * were lost), 0 if nothing came, -errno. */
int nft_notify_drain(struct mnl_socket *nl);

#endif /* XFIB_NFT_H */
