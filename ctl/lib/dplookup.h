/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The dataplane's answer, from userspace: looks addresses up in the live
 * instance of a family with the lookup code the XDP program runs
 * (include/xfib/lookup_*.h) over the pinned maps, mmap()ed read-only, and
 * follows the nexthop, neighbour and egress port with the program's own
 * decision code (include/xfib/decide.h). xfibctl lookup and xfibctl verify
 * answer with this, so what they print is what packets get, not what the
 * daemon meant to publish.
 *
 * Consistency: the daemon publishes an instance with one store of the
 * family's xfib_active word and may rebuild the slot of a retired instance
 * right after. A packet reads the word once; a batch of userspace lookups
 * reads it once too (dpl_open/dpl_refresh) and checks it again at the end
 * (dpl_refresh): if the generation moved, answers of that batch may come
 * from a slot being rewritten and the batch must be redone. In-place
 * updates of dir24_8 and trie6 keep the generation and are safe to read
 * at any time, as for packets.
 */
#ifndef XFIB_DPLOOKUP_H
#define XFIB_DPLOOKUP_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "xfib/counters.h"
#include "xfib/maps.h"
#include "xfib/rules.h"
#include "xfib/tables.h"

struct xfib_fwd_bpf;

/* A table as the shared lookup code sees it in userspace (see dpl_priv.h). */
struct dpl_tbl {
	void *base;
	size_t esz; /* bytes per entry */
	size_t n;   /* entries; reads past the end answer "nothing" */
	size_t len; /* bytes mapped */
};

struct dpl {
	struct xfib_fwd_bpf *skel;
	int fam;                    /* XFIB_V4 or XFIB_V6 */
	struct xfib_active act;     /* the instance answering */
	bool ready;                 /* act names an instance with tables */
	struct xfib_active *active; /* xfib_active, mmap()ed */
	size_t active_len;
	struct dpl_tbl bs;          /* xfib_bs4 or xfib_bs6, both slots */
	struct dpl_tbl t24, t8;     /* dir24_8 / trie6: the slot's inner maps */
	struct dpl_tbl dxr_direct;  /* IPv4: xfib_dxr_direct, both slots */
	struct dpl_tbl dxr_ranges;  /* IPv4: xfib_dxr_ranges, both slots */
	struct dpl_tbl pt6_direct;  /* IPv6: xfib_pt6_direct, both slots */
	struct dpl_tbl pt6_nodes;   /* IPv6: xfib_pt6_nodes, both slots */
	struct dpl_tbl pt6_leaves;  /* IPv6: xfib_pt6_leaves, both slots */
	struct xfib_nexthop *nh;    /* xfib_nexthops */
	size_t nh_len;
	struct xfib_neigh *neigh;   /* xfib_neighs */
	size_t neigh_len;
	struct xfib_nh_group *grp;  /* xfib_nh_groups */
	size_t grp_len;
	struct xfib_port *port;     /* xfib_ifaces */
	size_t port_len;
	struct xfib_lease *lease;   /* xfib_lease */
	size_t lease_len;
	struct xfib_hash_seed *seed; /* xfib_hash_seed */
	size_t seed_len;
	/* The policy rules and the tables they reach (dpl_rules.c). */
	struct xfib_rule_set *rules;          /* xfib_rules */
	size_t rules_len;
	struct xfib_rules_active *rules_active; /* xfib_rules_active */
	size_t rules_active_len;
	struct xfib_table_desc *tables;       /* xfib_tables */
	size_t tables_len;
	struct xfib_table_info *table_info;   /* xfib_table_info */
	size_t table_info_len;
	struct xfib_tr4 *tpool4;              /* IPv4: xfib_tpool4 */
	struct xfib_tr6 *tpool6;              /* IPv6: xfib_tpool6 */
	size_t tpool_len;
	/* The large tables' instances, mapped on first use, per table
	 * slot (dpl_rules.c). */
	struct dpl_table_inst *inst;
};

/*
 * Opens the live instance of family fam (XFIB_V4 or XFIB_V6) of the
 * dataplane whose maps skel holds. A family without a published instance
 * opens fine, with ready false: the dataplane hands all its packets to the
 * kernel. Returns 0 or -errno.
 */
int dpl_open(struct dpl *d, struct xfib_fwd_bpf *skel, int fam);
void dpl_close(struct dpl *d);

/*
 * Re-reads the family's xfib_active word: 0 if the instance answering is
 * still the published one, 1 if another was published meanwhile (d now
 * answers from it: redo what was looked up since the last call), or
 * -errno.
 */
int dpl_refresh(struct dpl *d);

/* The nexthop index for addr (4 or 16 bytes, network order), exactly as
 * the XDP program computes it; XFIB_NH_IDX_NONE when !d->ready. */
__u32 dpl_lookup(struct dpl *d, const __u8 *addr);

/* A consistent copy of port ifindex's xfib_ifaces entry into *out; false
 * if the port is absent (or beyond XFIB_PORT_MAX), as for the program. */
bool dpl_port(const struct dpl *d, __u32 ifindex, struct xfib_iface *out);

/* A copy of nexthop idx (kind XFIB_NH_NONE if out of range). */
void dpl_nexthop(const struct dpl *d, __u32 idx, struct xfib_nexthop *nh);

/* The daemon's lease as the program checks it now (xfib/lease.h):
 * XFIB_PASS_STALE once it has run out, else the packet goes on. */
__u32 dpl_lease_check(const struct dpl *d);

/*
 * True for destinations the XDP program hands to the kernel before any
 * lookup (multicast, loopback, link-local, ...; xfib_ipv4_special and
 * xfib_ipv6_special): the table's answer for them is never used.
 */
bool dpl_special(int fam, const __u8 *addr);

/* Whether the forwarder looks IPv4 source addr (network order) up on a
 * port without rp_filter: xfib_nonlocal4 does not rule it out as local
 * (xfib_source_wanted4). A local address must be looked up. */
bool dpl_source_wanted4(const struct dpl *d, const __u8 *addr);

/* What the family's policy rules chose for a flow (dpl_rules_route). */
struct dpl_rules_answer {
	bool walked;          /* the rules are more than local, main */
	__u32 reason;         /* XFIB_NEXT (nh), or why the kernel's */
	__u32 nh;             /* the nexthop index chosen (NONE: no route) */
	__u32 fallback;       /* enum xfib_rules_fallback, if not OK */
	__u32 count;          /* rules published */
	struct xfib_rwalk w;  /* w.rule: the rule that decided (count: none) */
	struct xfib_rule rule; /* ... a copy of it */
};

/* Everything the dataplane decides for one destination. */
struct dpl_result {
	int fam;
	__u8 addr[16];
	struct xfib_active act;   /* instance that answered */
	bool ready;               /* a lookup table was published */
	/* The nexthop a packet uses: for a multipath route, the member
	 * that the flow (any source, protocol 0, no ports) hashes to. */
	__u32 nh_idx;
	struct xfib_nexthop nh;
	bool group;               /* the route is multipath: */
	__u32 group_nh_idx;       /* the lookup's answer */
	struct xfib_nexthop group_nh;
	__u32 members;            /* distinct members with buckets */
	bool have_iface;          /* egress port known to xfibd */
	struct xfib_iface iface;
	bool attached;            /* egress port in xfib_tx_ports */
	/* The port the frame is sent by: a bridge's member (by its FDB),
	 * else nh.ifindex; 0 if the chain stopped before. */
	__u32 tx_ifindex;
	bool have_neigh;
	__u32 neigh_idx;
	struct xfib_neigh neigh;
	/* dpl_resolve_from(): the packet's source and ingress port. */
	bool have_src;
	__u8 src[16];
	__u32 src_nh_idx;         /* the route back to the source (IPv4) */
	struct xfib_nexthop src_nh;
	__u32 iif;                /* XFIB_IFINDEX_NONE: not given; a
				   * bridge member's bridge */
	__u32 in_port;            /* the member iif was given as, or 0 */
	bool have_in;             /* the ingress port is known to xfibd */
	struct xfib_iface in;
	/* The policy rules' choice for the destination, and (IPv4 with a
	 * source) for the route back, as rp_filter looks it up. */
	struct dpl_rules_answer rules;
	struct dpl_rules_answer src_rules;
	/*
	 * What the XDP program would do with a packet to addr that passed
	 * the per-packet checks (TTL, size, and without dpl_resolve_from()
	 * the ingress port and the source): XFIB_FWD_V4/V6,
	 * XFIB_DROP_BLACKHOLE or the XFIB_PASS_* reason.
	 */
	enum xfib_reason action;
};

/*
 * The rules' answer for flow f, whose destination slot 0 (main after
 * local) answers main_nh for, with the program's walk
 * (include/xfib/rule_walk.h); flow_hash is the packet's flow hash, which
 * picks an IPv6 multipath answer's member for suppress_ifgroup. 0 or
 * -errno (-EBUSY: the rules or a table kept changing).
 */
int dpl_rules_route(const struct dpl *d, const struct xfib_rflow *f,
		    __u32 main_nh, __u32 flow_hash, struct dpl_rules_answer *out);
/*
 * Whether the kernel's FIB helper (bpf_fib_lookup(), the referee of
 * lookup and verify) can judge the rules' answer a: its IPv6 walk skips
 * suppress_prefixlength (fib6_rule_suppress() needs the route clone that
 * fib6_rule_action_alt() does not make), so where a rule's answer was
 * suppressed it answers as packets never get. Such an answer is the
 * kernel's input path's, which the differential test checks.
 */
bool dpl_rules_judgeable(int fam, const struct dpl_rules_answer *a);
/* A copy of the family's published rules (its header, and its rules and
 * run ranges if it has them), read as one generation. 0 or -EBUSY. */
int dpl_rules_snapshot(const struct dpl *d, struct xfib_rule_set *set);
/* An address (4 or 16 bytes, network order) of family fam as the
 * rules' host-order halves (struct xfib_rflow; IPv4 in *lo). */
void dpl_rflow_addr(int fam, const __u8 *a, __u64 *hi, __u64 *lo);
/* A copy of the family's table slot's xfib_table_info. */
void dpl_table_info(const struct dpl *d, __u32 slot, struct xfib_table_info *ti);
/* dpl_open()'s mapping of the rules' maps, and its undoing. */
int dpl_rules_map(struct dpl *d);
void dpl_rules_unmap(struct dpl *d);

/* Looks addr up and follows the nexthop as the XDP program does, retrying
 * across instance swaps. Returns 0 or -errno. */
int dpl_resolve(struct dpl *d, const __u8 *addr, struct dpl_result *r);

/*
 * The same for a packet from src (NULL: any) received on port iif
 * (XFIB_IFINDEX_NONE: none): also the ingress port's checks (known to
 * xfibd, forwarding on) and, for IPv4, the source's (a local or broadcast
 * source, rp_filter), with the program's code; the flow hash of a
 * multipath route takes src.
 */
int dpl_resolve_from(struct dpl *d, const __u8 *addr, const __u8 *src,
		     __u32 iif, struct dpl_result *r);

/* A packet of a flow as the dataplane receives it: its addresses (before
 * any NAT; 4 or 16 bytes, network order), protocol and TCP/UDP ports
 * (network order), which the flow hash of a multipath route takes
 * (include/xfib/flow_hash.h). */
struct dpl_flow {
	__u8 src[16];
	__u8 dst[16];
	__u8 proto;
	__be16 sport;
	__be16 dport;
	__u8 tos; /* IPv4 TOS, IPv6 traffic class (policy rules' tos) */
	/* The port the policy rules see it enter by when the query names
	 * none for the ingress checks (0: none) */
	__u32 iif;
};

/*
 * dpl_resolve_from() for a packet of flow f, entering by a port not
 * given: routed to addr, which is f's destination or, for a flow
 * conntrack translates, the translated one (the program routes that); the
 * source's checks take f's source, and a multipath route's member is the
 * one f hashes to.
 */
int dpl_resolve_flow(struct dpl *d, const __u8 *addr, const struct dpl_flow *f,
		     struct dpl_result *r);

/* dpl_resolve_from() for a packet of f's protocol, ports and tos (f's
 * addresses unused): what xfibctl lookup asks with --from, --iif,
 * --proto, --sport, --dport and --tos. */
int dpl_resolve_packet(struct dpl *d, const __u8 *addr, const __u8 *src,
		       __u32 iif, const struct dpl_flow *f, struct dpl_result *r);

const char *dpl_kind_name(unsigned int kind);

/* An address as an integer (IPv4 in the low 32 bits). */
typedef unsigned __int128 dpl_addr;
typedef int (*dpl_walk_fn)(dpl_addr start, __u32 nh_idx, void *arg);

/*
 * Calls fn for every address where the instance's answer changes, in
 * address order from 0: the nexthop index from start up to the next
 * call's start. Stops at fn's first non-zero return, which it returns.
 * The instance may be replaced meanwhile: dpl_refresh() after the walk
 * says whether to walk again.
 */
int dpl_walk(struct dpl *d, dpl_walk_fn fn, void *arg);

/* The distinct member nexthop indexes of group nexthop nh, in bucket
 * order, into out[XFIB_GROUP_BUCKETS], and, unless NULL, how many
 * buckets each has into buckets[]; grp is the mmap()ed xfib_nh_groups.
 * Returns how many members. */
size_t dpl_group_members(const struct xfib_nh_group *grp,
			 const struct xfib_nexthop *nh, __u32 *out,
			 __u32 *buckets);

#endif /* XFIB_DPLOOKUP_H */
