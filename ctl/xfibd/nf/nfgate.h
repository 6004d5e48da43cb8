/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Netfilter-aware forwarding, xfibd's side (include/xfib/netfilter.h has
 * the modes): reads the forward path's rules at start, on every nftables
 * notification and every second for legacy iptables; publishes each
 * family's mode and conntrack's timeouts to the dataplane; prepares the
 * flows the dataplane reports (xfib_ct_events) for the fast path, and
 * keeps the conntrack entries of fast-pathed echo flows alive.
 */
#ifndef XFIB_NFGATE_H
#define XFIB_NFGATE_H

#include <poll.h>
#include <stdbool.h>
#include <linux/types.h>

#include "xfib/maps.h"
#include "xfib/netfilter.h"
#include "nfrules.h"

struct xfib_fwd_bpf;
struct mnl_socket;
struct ring_buffer;

/* conntrack's timeouts and accounting, from its sysctls. */
struct nf_sysctls {
	__u32 tcp_s, udp_s, udp_stream_s, icmp_s, icmpv6_s;
	bool acct;
};

struct nfgate {
	struct xfib_fwd_bpf *skel;
	int option;		  /* enum xfib_nf_option */
	struct mnl_socket *notify; /* nftables changes */
	struct mnl_socket *ct;	  /* ctnetlink requests */
	struct ring_buffer *rb;	  /* xfib_ct_events */
	bool nft_dirty;		  /* read nftables again */
	int nft_err, ipt_err;	  /* last read's failure, 0 if none */
	struct nfx_ruleset nft, ipt;
	__u64 ipt_hash;
	__u64 next_tick_ms;
	struct nf_sysctls sys;
	struct xfib_nf_conf conf[2];
	struct xfib_nf_info info[2];
	/* Per family: a rule may set a packet's mark before routing (or
	 * the rules could not be read). */
	bool marks[2];
	/* Bridge-family chains act on frames (or nftables could not be
	 * read): no bridge is routed through. */
	bool bridge_chains;
	bool published;
	/* Ports with ingress/egress rules, as the last check found them. */
	unsigned int nports;
	__u32 port_ifindex[XFIB_NF_PORTS_MAX];
	__u32 port_dir[XFIB_NF_PORTS_MAX];
};

/* Opens the sockets and the ring, reads the rules and publishes the
 * modes: before the daemon publishes anything the dataplane forwards by.
 * 0 or -errno. */
int nfgate_init(struct nfgate *g, struct xfib_fwd_bpf *skel, int option);
void nfgate_fini(struct nfgate *g);

/* The descriptors to poll (at most 2), into pfd; their number. */
int nfgate_fds(struct nfgate *g, struct pollfd *pfd);

/* Milliseconds until nfgate_run has timed work. */
int nfgate_timeout(struct nfgate *g, __u64 now_ms);

/* Handles what came on its descriptors and the timed work. */
void nfgate_run(struct nfgate *g, __u64 now_ms);

/* --netfilter's value: enum xfib_nf_option, or -1. */
int nfgate_option(const char *s);

/* ---- ctlearn.c: preparing flows for the fast path ---------------------------- */

/* Forgets the flows a previous xfibd prepared or was told about. */
void ctlearn_reset(struct nfgate *g);
/* A flow the dataplane found established but not prepared. */
void ctlearn_event(struct nfgate *g, const struct xfib_ct_event *ev);
/* Every second: keeps fast-pathed echo flows' conntrack entries alive,
 * drops the ones conntrack let go. */
void ctlearn_tick(struct nfgate *g);

#endif /* XFIB_NFGATE_H */
