// SPDX-License-Identifier: GPL-2.0-only
/*
 * xfib_fwd: the XDP forwarder. Parses Ethernet (+ one priority tag), IPv4
 * and IPv6, looks the destination up in the family's published instance,
 * resolves nexthop and neighbour through index arrays, decrements TTL/hop
 * limit, rewrites the MACs and redirects to the egress port.
 *
 * Rule: whatever the kernel would treat specially (local delivery, ICMP
 * errors, neighbour resolution, fragmentation, options, policy) goes to
 * the kernel with XDP_PASS and a counted reason. When in doubt, pass.
 *
 * xfib_fwd() at the bottom runs the steps in order; each returns XFIB_NEXT
 * or the reason (enum xfib_reason) that stops the packet:
 *
 *   check_lease     xfibd vouches for the mirror (xfib_lease_check in
 *                   include/xfib/decide.h): else everything to the kernel
 *   parse_eth       Ethernet and a priority tag
 *   check_ingress   the ingress port is xfib's and the frame is for it
 *   xfib_xfrm_check the family has no IPsec policy or state
 *                   (include/xfib/decide.h)
 *   route4/route6   the IP header, the port's settings, address classes,
 *                   TTL; where the host has a stateful ruleset, what
 *                   conntrack says of the flow and its NAT (xfib_ct_gate_pre,
 *                   lib/ctgate.h); then the lookup (lookup4/lookup6) of
 *                   the destination, translated if NATed; IPv4 also
 *                   looks the source up where that can matter (rp_filter
 *                   on, or a source xfib_nonlocal4 does not rule out as
 *                   local): a local source, and rp_filter
 *                   (xfib_source_wanted4, xfib_source_check4 in
 *                   include/xfib/decide.h)
 *   xfib_after_lookup (include/xfib/decide.h, shared with xfibctl):
 *                   multipath member, nexthop kind, egress port, MTU,
 *                   neighbour, attached port
 *   ct_gate         the host's netfilter rules: forward, hand to the
 *                   kernel, or forward only established flows
 *                   (lib/ctgate.h), NATed ones with their translation
 *   l4_csum_partial4/6  a TCP/UDP checksum left to the device by a local
 *                   sender goes to the kernel (lib/l4csum.h)
 *   forward         cut the frame to the IP packet, strip the tag, NAT
 *                   (lib/nat.h), TTL, MACs, redirect
 *
 * Every packet is counted once by its reason, in all (xfib_stats) and for
 * its ingress port (xfib_port_stats), and a forwarded one for its egress
 * port too. While someone runs xfibctl trace, the decision is described
 * to it (lib/trace.h) before the packet goes.
 */
#include <linux/bpf.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "lib/parse.h"
#include "lib/maps.h"

#define XFIB_TBL_AT(map, idx) bpf_map_lookup_elem(map, &(__u32){ (idx) })
#include "xfib/lookup_bsearch.h"

/*
 * dir24_8 and trie6 tables are arrays of __u64 holding two __u32 entries
 * each. One 8-byte load takes both halves from the same store, so a
 * concurrent update of the other half cannot tear the entry read.
 */
static __always_inline __u32 xfib_u32_at(void *map, __u32 idx)
{
	__u32 key = idx >> 1;
	__u64 *v = bpf_map_lookup_elem(map, &key);

	if (!v)
		return XFIB_NH_IDX_NONE;
	return (__u32)(*(volatile __u64 *)v >> ((idx & 1) * 32));
}

/*
 * A slot's pool of tbl8 groups (include/xfib/tbl8_pool.h): the outer map
 * of chunk maps and the slot's first chunk there. Both lookups of a read
 * are inlined by the verifier; the lookup headers take a pointer to this
 * as their tbl8, and after inlining it lives in registers.
 */
struct xfib_pool {
	void *chunks;
	__u32 base;
};

#define XFIB_POOL(outer, slot) \
	((struct xfib_pool){ (outer), (slot) * XFIB_POOL_SLOT_CHUNKS })

static __always_inline __u32 xfib_pool_u32_at(const struct xfib_pool *p,
					      __u32 idx)
{
	__u32 key = p->base + (idx >> XFIB_POOL_CHUNK_ENTRY_BITS);
	void *chunk = bpf_map_lookup_elem(p->chunks, &key);

	if (!chunk)
		return XFIB_NH_IDX_NONE;
	return xfib_u32_at(chunk, idx & (XFIB_POOL_CHUNK_ENTRIES - 1));
}

/*
 * A tbl24 (dir24_8, trie6) is one map value (bpf/lib/maps.h): t24 is its
 * address, fetched once per packet by tbl24_of(); an entry is one load,
 * read once. The mask repeats the index's bound for the verifier: the
 * compiler, which knows the index is below it, would drop it, and Linux
 * 6.1's verifier cannot bound an index built from a byte swap.
 */
static __always_inline const __u32 *tbl24_of(void *outer, __u32 slot)
{
	__u32 zero = 0;
	void *inner = bpf_map_lookup_elem(outer, &slot);

	return inner ? bpf_map_lookup_elem(inner, &zero) : NULL;
}

#define XFIB_U32_AT(map, idx) xfib_u32_at(map, idx)
static __always_inline __u32 tbl24_entry(const __u32 *t24, __u32 idx)
{
	barrier_var(idx);
	return ((const volatile __u32 *)t24)[idx & (XFIB_DIR24_TBL24_ENTRIES - 1)];
}

#define XFIB_TBL24_AT(t24, idx) tbl24_entry(t24, idx)
#define XFIB_GROUP_U32_AT(pool, idx) xfib_pool_u32_at(pool, idx)
#include "xfib/lookup_dir24.h"
#include "xfib/lookup_trie6.h"
#include "xfib/lookup_dxr.h"
#include "xfib/lookup_poptrie6.h"
#include "xfib/flow_hash.h"
#include "xfib/decide.h"
#include "xfib/rule_walk.h"
#include "lib/ctgate.h"
#include "lib/l4csum.h"
#include "lib/nat.h"
#ifndef XFIB_BENCH_WITHOUT_TRACE
#include "lib/trace.h"
#endif

#define ETH_P_8021Q_ 0x8100

char LICENSE[] SEC("license") = "GPL";

static __always_inline int count(__u32 reason, __u32 len, int verdict)
{
	struct xfib_counter *c = bpf_map_lookup_elem(&xfib_stats, &reason);

	if (c) {
		c->packets++;
		c->bytes += len;
	}
	return verdict;
}

/*
 * The per-port counters (include/xfib/maps.h): one per-CPU array entry
 * per port, found by ifindex, so counting costs an inlined array read and
 * two adds, no hash. XFIB_BENCH_WITHOUT_PORT_STATS builds the program
 * without them, for make bench-fwd's measure of their cost only.
 */
static __always_inline struct xfib_port_counters *port_counters(__u32 ifindex)
{
#ifdef XFIB_BENCH_WITHOUT_PORT_STATS
	return NULL;
#else
	return bpf_map_lookup_elem(&xfib_port_stats, &ifindex);
#endif
}

/* A packet received on port in_ifindex, counted by what became of it. */
static __always_inline void count_port_in(__u32 in_ifindex, __u32 reason,
					  __u32 len)
{
	struct xfib_port_counters *pc = port_counters(in_ifindex);

	/* One register for the check and the index: clang may otherwise
	 * check one copy of reason and index with another the verifier
	 * knows nothing about. */
	barrier_var(reason);
	if (pc && reason < XFIB_REASON_COUNT) {
		pc->in[reason].packets++;
		pc->in[reason].bytes += len;
	}
}

/* Counts a packet a step stopped for reason, and lets it go: to the
 * kernel, or dropped for the reasons that drop. */
static __always_inline int stop(__u32 reason, const struct xfib_pkt *pkt,
				__u32 in_ifindex)
{
	int drop = reason == XFIB_DROP_BLACKHOLE ||
		   reason == XFIB_DROP_REDIRECT;

	count_port_in(in_ifindex, reason, pkt->len);
	return count(reason, pkt->len, drop ? XDP_DROP : XDP_PASS);
}

static __always_inline __u64 load_be64(const void *p)
{
	return bpf_be64_to_cpu(*(const __u64 *)p);
}

/* Source and destination ports of a TCP or UDP packet whose transport
 * header starts at l4, as (sport << 16 | dport); 0 otherwise. */
static __always_inline __u32 l4_ports(const struct xfib_pkt *pkt,
				      const void *l4, __u8 proto)
{
	const __u32 *ports = l4;

	if (proto != IPPROTO_TCP && proto != IPPROTO_UDP)
		return 0;
	if ((const void *)(ports + 1) > pkt->data_end)
		return 0;
	return bpf_ntohl(*ports);
}

/* The router's flow hash seed: one inlined array read. */
static __always_inline __u32 flow_seed(void)
{
	__u32 zero = 0;
	const struct xfib_hash_seed *s =
		bpf_map_lookup_elem(&xfib_hash_seed, &zero);

	return s ? *(const volatile __u32 *)&s->seed : 0;
}

/* The flow hash of an IPv6 packet (include/xfib/flow_hash.h): the rule
 * walk's (xfib_rules_route) for suppress_ifgroup and the multipath
 * member's, the same for the same packet. */
static __always_inline __u32 pkt_flow_hash6(const struct xfib_pkt *pkt,
					    __u32 seed)
{
	const struct ipv6hdr *ip6h = pkt->l3;

	if ((const void *)(ip6h + 1) > pkt->data_end)
		return 0;
	return xfib_flow_hash(seed, ip6h->saddr.s6_addr32,
			      ip6h->daddr.s6_addr32, 4, ip6h->nexthdr,
			      l4_ports(pkt, ip6h + 1, ip6h->nexthdr));
}

/* The flow hash of the packet (include/xfib/flow_hash.h). Fragments hash
 * without ports, so all fragments of a datagram take one path. */
static __always_inline __u32 pkt_flow_hash(const struct xfib_pkt *pkt)
{
	__u32 seed = flow_seed();

	if (pkt->proto == ETH_P_IP) {
		const struct iphdr *iph = pkt->l3;
		__u32 ports = 0;

		if ((const void *)(iph + 1) > pkt->data_end)
			return 0;
		if (!(iph->frag_off & bpf_htons(XFIB_IP_MF_OFFSET)))
			ports = l4_ports(pkt, iph + 1, iph->protocol);
		return xfib_flow_hash(seed, &iph->saddr, &iph->daddr, 1,
				      iph->protocol, ports);
	}
	return pkt_flow_hash6(pkt, seed);
}

/* ---- the maps behind include/xfib/decide.h ------------------------------ */

struct xfib_env {
	const struct xfib_pkt *pkt;
};

static __always_inline const struct xfib_nexthop *
xfib_env_nexthop(struct xfib_env *env, __u32 idx)
{
	return bpf_map_lookup_elem(&xfib_nexthops, &idx);
}

static __always_inline const struct xfib_nh_group *
xfib_env_group(struct xfib_env *env, __u32 idx)
{
	return bpf_map_lookup_elem(&xfib_nh_groups, &idx);
}

static __always_inline __u32 xfib_env_flow_hash(struct xfib_env *env)
{
	return pkt_flow_hash(env->pkt);
}

/* An array lookup the verifier inlines; an ifindex at or above
 * XFIB_PORT_MAX finds nothing, as an absent port: the kernel's. live is
 * loaded once, and the copy it names is not written while it can be read
 * (struct xfib_port). */
static __always_inline const struct xfib_iface *
xfib_env_iface(struct xfib_env *env, __u32 ifindex)
{
	const struct xfib_port *p = bpf_map_lookup_elem(&xfib_ifaces, &ifindex);

	if (!p)
		return NULL;
	return xfib_port_iface(p, *(const volatile __u32 *)&p->live);
}

static __always_inline const __u32 *
xfib_env_neigh_host(struct xfib_env *env, const struct xfib_neigh_key *key)
{
	return bpf_map_lookup_elem(&xfib_neigh_hosts, key);
}

static __always_inline const struct xfib_neigh *
xfib_env_neigh(struct xfib_env *env, __u32 idx)
{
	return bpf_map_lookup_elem(&xfib_neighs, &idx);
}

static __always_inline int xfib_env_tx_port(struct xfib_env *env,
					    __u32 ifindex)
{
	return bpf_map_lookup_elem(&xfib_tx_ports, &ifindex) != NULL;
}

static __always_inline __u32 xfib_env_br_moving(struct xfib_env *env,
						 __u32 ifindex)
{
	const __u64 *n = bpf_map_lookup_elem(&xfib_br_moving, &ifindex);

	return n ? *(const volatile __u64 *)n != 0 : 1;
}

static __always_inline const struct xfib_xfrm_info *
xfib_env_xfrm(struct xfib_env *env, __u32 fam)
{
	return bpf_map_lookup_elem(&xfib_xfrm, &fam);
}

/* One inlined array read; the word is read once. */
static __always_inline __u64 xfib_env_nonlocal4(struct xfib_env *env, __u32 w)
{
	const __u64 *v = bpf_map_lookup_elem(&xfib_nonlocal4, &w);

	return v ? *(const volatile __u64 *)v : 0;
}

/* bpf_loop() passes i < XFIB_GROUP_BUCKETS; the mask tells the verifier,
 * which does not follow the copy of i the compiler compares. The map
 * accessors above need no environment. */
static long rpf_bucket_cb(__u64 i, void *ctx)
{
	return xfib_rpf_bucket(NULL, (__u32)i & (XFIB_GROUP_BUCKETS - 1), ctx);
}

/* bpf_loop(): the verifier checks the callback once, not 256 times. */
static __always_inline void xfib_env_rpf_scan(struct xfib_env *env,
					      struct xfib_rpf_scan *s)
{
	bpf_loop(XFIB_GROUP_BUCKETS, rpf_bucket_cb, s, 0);
}

/* ---- the maps behind include/xfib/rule_walk.h --------------------------- */

static __always_inline __u64 xfib_env_table(struct xfib_env *env, __u32 fam,
					    __u32 slot)
{
	__u32 k = fam * XFIB_TABLE_SLOTS + slot;
	const __u64 *v = bpf_map_lookup_elem(&xfib_tables, &k);

	return v ? *(const volatile __u64 *)v : 0;
}

static __always_inline const struct xfib_tr4 *
xfib_env_tr4(struct xfib_env *env, __u32 idx)
{
	return bpf_map_lookup_elem(&xfib_tpool4, &idx);
}

static __always_inline const struct xfib_tr6 *
xfib_env_tr6(struct xfib_env *env, __u32 idx)
{
	return bpf_map_lookup_elem(&xfib_tpool6, &idx);
}

/*
 * A large table's instance (include/xfib/tables.h): main's lookups, on
 * the table slot's own map-in-map slot inst (bounded by the caller). Only
 * reached from xfib_table_find() below, so the verifier checks these
 * paths once. trie6 reads the address's bytes: the destination is
 * rebuilt in network order from its host-order halves.
 */
static __always_inline __u32 xfib_env_table_inst(struct xfib_env *env,
						 __u32 fam, __u32 inst,
						 const struct xfib_rflow *f)
{
	const __u32 *t24;

	if (fam == XFIB_V4) {
		struct xfib_pool t8 = XFIB_POOL(&xfib_dir24_tbl8, inst);

		t24 = tbl24_of(&xfib_dir24_tbl24, inst);
		if (!t24)
			return ~0u;
		return xfib_dir24_lookup((void *)t24, &t8, (__u32)f->dst_lo);
	} else {
		struct xfib_pool t8 = XFIB_POOL(&xfib_trie6_tbl8, inst);
		__u64 daddr[2] = { bpf_cpu_to_be64(f->dst_hi),
				   bpf_cpu_to_be64(f->dst_lo) };

		t24 = tbl24_of(&xfib_trie6_tbl24, inst);
		if (!t24)
			return ~0u;
		return xfib_trie6_lookup((void *)t24, &t8, (const __u8 *)daddr);
	}
}

/*
 * A table's answer for the destination (hi, lo; IPv4 in lo), packed as in
 * xfib_tr4: nexthop index and prefix length, or ~0 for a table the
 * kernel keeps to itself. A function of its own, so that the verifier
 * checks the bisections once, not at every rule of the walk.
 */
__noinline __u32 xfib_table_find(__u32 fam, __u32 slot, __u64 hi, __u64 lo)
{
	struct xfib_rflow f = { .dst_hi = hi, .dst_lo = lo };
	__u32 ans;

	if (xfib_table_answer(NULL, fam & 1, slot, &f, &ans) != XFIB_NEXT)
		return ~0u;
	return ans;
}

static __always_inline __u32 xfib_env_table_answer(struct xfib_env *env,
						   __u32 fam, __u32 slot,
						   const struct xfib_rflow *f,
						   __u32 *ans)
{
	*ans = xfib_table_find(fam, slot, f->dst_hi, f->dst_lo);
	return *ans == ~0u ? XFIB_PASS_RULE : XFIB_NEXT;
}

/*
 * suppress_ifgroup's judgement of answer nh_idx for group
 * (xfib_rule_ifgroup()): its result + 1 in bits 0-1 (0 the kernel's, 1
 * not suppressed, 2 suppressed), in bit 2 whether it was an IPv6 member's.
 * A function of its own, so that the verifier checks its paths once, not
 * with each of the rule's.
 */
__noinline __u32 xfib_ifgroup_judge(__u32 fam, __u32 group, __u32 nh_idx,
				    __u32 flow_hash)
{
	__u32 hashed = 0;
	int m = xfib_rule_ifgroup(NULL, fam & 1, group, nh_idx, flow_hash,
				  &hashed);

	return (__u32)(m + 1) | hashed << 2;
}

static __always_inline int xfib_env_rule_ifgroup(struct xfib_env *env,
						 __u32 fam, __u32 group,
						 __u32 nh_idx, __u32 flow_hash,
						 __u32 *hashed)
{
	__u32 r = xfib_ifgroup_judge(fam, group, nh_idx, flow_hash);

	*hashed = r >> 2 & 1;
	return (int)(r & 3) - 1;
}

/*
 * The walk's state, in a per-CPU map rather than on the stack: Linux 6.1
 * allows 512 bytes of stack for the program and the functions it calls
 * together, and the conntrack gate's function takes most of what the
 * program does not (a packet's program runs on one CPU to the end).
 */
struct rule_scratch {
	struct xfib_rflow f;   /* the packet's flow */
	struct xfib_rflow rev; /* its reverse, for the route back */
	struct xfib_rwalk w;
	__u32 fam;
	__u32 key;             /* the half walked: its xfib_rules index */
	__u32 reverse;         /* the walk reads rev */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rule_scratch);
} xfib_rule_scratch SEC(".maps");

static __always_inline struct rule_scratch *rule_scratch(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&xfib_rule_scratch, &zero);
}

/*
 * The rule a walk goes on at from the first rule of a run
 * (include/xfib/rules.h): run_off in bits 0-7, run_log2n in 8-15, for
 * source (hi, lo), in the half of the rules the scratch names. A
 * function of its own, so that the verifier checks the bisection's paths
 * once, not each with the rest of the rule's step. ~0: no rules.
 */
__noinline __u32 xfib_rule_run_find(__u32 off_log2n, __u64 hi, __u64 lo)
{
	const struct xfib_rule_set *set;
	struct rule_scratch *s = rule_scratch();

	if (!s)
		return ~0u;
	set = bpf_map_lookup_elem(&xfib_rules, &s->key);
	if (!set)
		return ~0u;
	return xfib_rule_run_next(set, off_log2n & 0xff, (off_log2n >> 8) & 0xff,
				  hi, lo);
}

static __always_inline __u32 xfib_env_rule_run(struct xfib_env *env,
					       const struct xfib_rule_set *set,
					       const struct xfib_rule *x,
					       const struct xfib_rflow *f)
{
	return xfib_rule_run_find(x->run_off | x->run_log2n << 8, f->src_hi,
				  f->src_lo);
}

/* The half of the family's rules named by one read of xfib_rules_active,
 * and its index in xfib_rules: the whole walk reads that half. */
static __always_inline const struct xfib_rule_set *
rules_half(__u32 fam, __u32 *key)
{
	const struct xfib_rules_active *a =
		bpf_map_lookup_elem(&xfib_rules_active, &fam);

	if (!a)
		return NULL;
	*key = fam * 2 + (*(const volatile __u32 *)&a->half & 1);
	return bpf_map_lookup_elem(&xfib_rules, key);
}

/* What each of the walk's bpf_loop() calls reads: the scratch, the half
 * of the rules, and the flow walked (the packet's, or its reverse). */
struct rule_walk_ctx {
	struct rule_scratch *s;
	const struct xfib_rule_set *set;
	const struct xfib_rflow *f;
	__u32 fam;
};

static long rule_walk_cb(__u64 i, void *data)
{
	struct rule_walk_ctx *c = data;

	return xfib_rule_step(NULL, c->fam, c->set, c->f, &c->s->w);
}

/*
 * The walk decided by the packet's source alone (rule_walk.h), before the
 * rest of its flow is read: s->f holds its source and destination only.
 * 1: *nh_idx is the rules' answer. Not for a local route's destination
 * (the kernel's whatever the rules say), nor when the family's rules are
 * the kernel's.
 */
static __always_inline int rules_by_source(struct rule_scratch *s,
					   const struct xfib_rule_set *set,
					   __u32 *nh_idx)
{
	const struct xfib_nexthop *nh = xfib_env_nexthop(NULL, *nh_idx);

	if (set->hdr.fallback != XFIB_RULES_OK || (nh && nh->kind == XFIB_NH_LOCAL))
		return 0;
	s->w.main_nh = *nh_idx;
	if (!xfib_rules_by_source(NULL, s->fam, set, &s->f, &s->w))
		return 0;
	*nh_idx = s->w.nh;
	return 1;
}

/*
 * The walk for a packet whose destination (s->reverse: source) slot 0
 * answered *nh_idx for: *nh_idx becomes the rules' answer (NONE: no
 * route), or the reason for the kernel is returned. A destination local
 * has a route for is the kernel's whatever the rules say
 * (include/xfib/rule_walk.h), so the walk does not start. bpf_loop():
 * the verifier checks one rule, not each of XFIB_RULES_MAX, and inlines
 * the loop; a goto only jumps forward, so a rule a call is enough.
 */
static __always_inline __u32 route_rules(struct rule_scratch *s,
					 const struct xfib_rule_set *set,
					 __u32 *nh_idx)
{
	const struct xfib_nexthop *nh = xfib_env_nexthop(NULL, *nh_idx);
	struct rule_walk_ctx c;

	if (set->hdr.fallback != XFIB_RULES_OK)
		return XFIB_PASS_RULE;
	if (nh && nh->kind == XFIB_NH_LOCAL)
		return XFIB_NEXT;
	s->w.main_nh = *nh_idx;
	s->w.rule = set->hdr.first;
	s->w.nh = XFIB_NH_IDX_NONE;
	s->w.reason = XFIB_PASS_RULE;
	s->w.suppressed = 0;
	c.s = s;
	c.set = set;
	c.f = s->reverse ? &s->rev : &s->f;
	c.fam = s->fam;
	bpf_loop(XFIB_RULES_MAX + 1, rule_walk_cb, &c, 0);
	if (s->w.reason != XFIB_NEXT)
		return s->w.reason;
	*nh_idx = s->w.nh;
	return XFIB_NEXT;
}

/* The ports the kernel's flow dissector gives the rules
 * (proto_ports_offset(): an ESP or AH packet's SPI stands for them), in
 * host order; none for a fragment. */
static __always_inline void rflow_ports(struct xfib_rflow *f, const void *l4,
					const void *end, __u8 proto)
{
	const __u8 *p = l4;

	switch (proto) {
	case IPPROTO_TCP:
	case IPPROTO_UDP:
	case IPPROTO_DCCP:
	case IPPROTO_ESP:
	case IPPROTO_SCTP:
	case IPPROTO_UDPLITE:
		break;
	case IPPROTO_AH:
		p += 4;
		break;
	default:
		return;
	}
	if ((const void *)(p + 4) > end)
		return;
	f->sport = (__u16)p[0] << 8 | p[1];
	f->dport = (__u16)p[2] << 8 | p[3];
}

/* ---- the steps ---------------------------------------------------------- */

/*
 * The mirror is forwarded by only while xfibd's lease runs: one inlined
 * array read and the coarse clock (CLOCK_MONOTONIC_COARSE, the clock xfibd
 * renews the lease by: a jiffy's resolution, no clock source read).
 */
static __always_inline __u32 check_lease(__u64 now)
{
	__u32 zero = 0;
	const struct xfib_lease *l = bpf_map_lookup_elem(&xfib_lease, &zero);

	if (!l)
		return XFIB_PASS_STALE;
	return xfib_lease_check(*(const volatile __u64 *)&l->until, now);
}

/* Ethernet and at most one 802.1Q tag, which must be a priority tag. */
static __always_inline __u32 parse_eth(struct xfib_pkt *pkt)
{
	pkt->eth = pkt->data;
	if ((void *)(pkt->eth + 1) > pkt->data_end)
		return XFIB_PASS_MALFORMED;
	pkt->proto = bpf_ntohs(pkt->eth->h_proto);
	pkt->l3 = pkt->eth + 1;
	if (pkt->proto == ETH_P_8021Q_) {
		struct xfib_vlan_hdr *vh = pkt->l3;

		if ((void *)(vh + 1) > pkt->data_end)
			return XFIB_PASS_MALFORMED;
		/* Only a priority tag (VID 0) means "untagged" to the kernel. */
		if (bpf_ntohs(vh->tci) & 0x0fff)
			return XFIB_PASS_VLAN;
		pkt->proto = bpf_ntohs(vh->proto);
		pkt->l3 = vh + 1;
		pkt->vlan0 = 1;
	}
	if (pkt->proto != ETH_P_IP && pkt->proto != ETH_P_IPV6)
		return XFIB_PASS_NOT_IP;
	return XFIB_NEXT;
}

/*
 * A frame received on a bridge member: the bridge passes it up to be
 * routed (br_handle_frame: a member forwarding, the frame for the bridge's
 * MAC), and the kernel routes it as a packet of the bridge device. So
 * from here on the ingress port is the bridge (q->in_ifindex, *in): its
 * sysctls, addresses, rules and netfilter's iifname. The bridge learns
 * the source's MAC on the member from every frame it sees (br_fdb_update),
 * and sees none of those forwarded here: a source the FDB does not hold
 * on this member (new, or moved from another member) goes to the kernel,
 * and the bridge learns it from that frame; one it holds is marked seen,
 * for xfibd to keep the entry from ageing out. A moved one is marked, and
 * its bridge's count of moves raised, until xfibd has written where the
 * bridge now has it: frames to it must not go to the old member
 * meanwhile (xfib_bridge_egress).
 */
static __always_inline __u32 check_bridge_ingress(const struct xfib_pkt *pkt,
						  struct xfib_fwd_query *q,
						  const struct xfib_iface **in)
{
	struct xfib_fdb_key key = { .bridge = (*in)->master };
	const struct xfib_iface *br;
	struct xfib_fdb *fdb;

	if (!((*in)->bridge & XFIB_BR_PORT_FWD))
		return XFIB_PASS_BRIDGE;
	br = xfib_env_iface(NULL, key.bridge);
	if (!br || !(br->bridge & XFIB_BR_ROUTED))
		return XFIB_PASS_BRIDGE;
	if (!mac_equal(pkt->eth->h_dest, br->mac))
		return XFIB_PASS_NOT_FOR_US;
	__builtin_memcpy(key.mac, pkt->eth->h_source, ETH_ALEN);
	fdb = bpf_map_lookup_elem(&xfib_fdb, &key);
	if (!fdb || (fdb->flags & XFIB_FDB_LOCAL))
		return XFIB_PASS_BRIDGE_LEARN;
	if (fdb->port != q->in_ifindex) {
		/* Marked once per move: the entry first, then the bridge's
		 * count, which xfibd clears only once it finds no entry
		 * marked (rib_fdb_moving_settle). */
		if (!fdb->moved) {
			__u64 *n = bpf_map_lookup_elem(&xfib_br_moving, &key.bridge);

			fdb->moved = 1;
			if (n)
				__sync_fetch_and_add(n, 1);
		}
		return XFIB_PASS_BRIDGE_LEARN;
	}
	/* Written only when it changes: the line stays shared between
	 * CPUs while the host is busy. */
	if (!fdb->seen)
		fdb->seen = 1;
	q->in_ifindex = key.bridge;
	*in = br;
	return XFIB_NEXT;
}

/* The ingress port is known to xfibd (so below XFIB_PORT_MAX), and the
 * frame is addressed to it, or to its bridge. */
static __always_inline __u32 check_ingress(const struct xfib_pkt *pkt,
					   struct xfib_fwd_query *q,
					   const struct xfib_iface **in)
{
	*in = xfib_env_iface(NULL, q->in_ifindex);
	if (!*in)
		return XFIB_PASS_NO_IFACE;
	if ((*in)->master)
		return check_bridge_ingress(pkt, q, in);
	/* The kernel forwards only frames addressed to the port (PACKET_HOST). */
	if (!mac_equal(pkt->eth->h_dest, (*in)->mac))
		return XFIB_PASS_NOT_FOR_US;
	return XFIB_NEXT;
}

/* The family's published instance, read once: the whole packet uses one
 * generation. Non-zero if there is none. */
static __always_inline int active_instance(__u32 fam, struct xfib_active *act)
{
	__u64 *actp = bpf_map_lookup_elem(&xfib_active, &fam);

	if (!actp)
		return -1;
	*(__u64 *)act = *(volatile __u64 *)actp;
	return 0;
}

/* dst in host order, looked up in the IPv4 instance act. */
static __always_inline __u32 lookup4(const struct xfib_active *act, __u32 dst,
				     __u32 *nh_idx)
{
	*nh_idx = XFIB_NH_IDX_NONE;
	if (act->algo == XFIB_ALGO_DIR24_8) {
		const __u32 *t24 = tbl24_of(&xfib_dir24_tbl24, act->slot);
		struct xfib_pool t8 = XFIB_POOL(&xfib_dir24_tbl8, act->slot);

		if (!t24)
			return XFIB_PASS_NO_FIB;
		*nh_idx = xfib_dir24_lookup((void *)t24, &t8, dst);
	} else if (act->algo == XFIB_ALGO_DXR) {
		*nh_idx = xfib_dxr_lookup(&xfib_dxr_direct, &xfib_dxr_ranges,
					  act->slot, dst);
	} else if (act->algo == XFIB_ALGO_BSEARCH4) {
		*nh_idx = xfib_bs4_lookup(&xfib_bs4, act->slot, act->log2n, dst);
	} else {
		return XFIB_PASS_NO_FIB;
	}
	return XFIB_NEXT;
}

/* daddr in network order, dhi and dlo its halves in host order. */
static __always_inline __u32 lookup6(const __u8 *daddr, __u64 dhi, __u64 dlo,
				     __u32 *nh_idx)
{
	struct xfib_active act;

	if (active_instance(XFIB_V6, &act))
		return XFIB_PASS_NO_FIB;
	if (act.algo == XFIB_ALGO_TRIE6) {
		const __u32 *t24 = tbl24_of(&xfib_trie6_tbl24, act.slot);
		struct xfib_pool t8 = XFIB_POOL(&xfib_trie6_tbl8, act.slot);

		if (!t24)
			return XFIB_PASS_NO_FIB;
		*nh_idx = xfib_trie6_lookup((void *)t24, &t8, daddr);
	} else if (act.algo == XFIB_ALGO_POPTRIE6) {
		*nh_idx = xfib_pt6_lookup(&xfib_pt6_direct, &xfib_pt6_nodes,
					  &xfib_pt6_leaves, act.slot, dhi, dlo);
	} else if (act.algo == XFIB_ALGO_BSEARCH6) {
		*nh_idx = xfib_bs6_lookup(&xfib_bs6, act.slot, act.log2n, dhi, dlo);
	} else {
		return XFIB_PASS_NO_FIB;
	}
	return XFIB_NEXT;
}

/*
 * The kernel's checks of an IPv4 source, rp_filter included
 * (xfib_source_check4() in include/xfib/decide.h, shared with xfibctl
 * lookup): saddr (host order) is looked up in the IPv4 instance act
 * (struct xfib_active as one word), the one the destination was looked up
 * in, for a packet received on port in_ifindex with flags in_flags.
 * XFIB_NEXT, the reason to pass it to the kernel, or XFIB_PASS_NO_FIB if
 * the instance cannot be read.
 *
 * A global function, so the verifier checks it once rather than on every
 * path of the destination's lookup that reaches it: inlined, it nearly
 * doubled the instructions the verifier processes. On ports with
 * rp_filter on, every IPv4 packet pays the source's lookup, and the check
 * reads more of the route back: its port, and the members of a multipath
 * route. On the others only a packet whose source may be local
 * (xfib_source_wanted4) comes here.
 */
__noinline __u32 xfib_check_source4(__u64 act, __u32 saddr, __u32 in_ifindex,
				    __u32 in_flags, __u32 rules)
{
	struct xfib_env env = { .pkt = NULL };
	const struct xfib_rule_set *set;
	struct rule_scratch *s;
	struct xfib_active a;
	__u32 r, idx, key;

	*(__u64 *)&a = act;
	r = lookup4(&a, saddr, &idx);
	if (r != XFIB_NEXT)
		return r;
	/* With policy rules the route back is the rules' (the flow reversed
	 * in the scratch, as __fib_validate_source() looks it up; the half
	 * of the rules the destination's walk read), rp_filter on or off:
	 * the kernel looks a source up through its rules whenever it has
	 * any (fib4_has_custom_rules()), and a local route of a rule's
	 * table makes the source a martian. */
	if (rules) {
		s = rule_scratch();
		if (!s)
			return XFIB_PASS_RULE;
		key = s->key;
		set = bpf_map_lookup_elem(&xfib_rules, &key);
		if (!set)
			return XFIB_PASS_RULE;
		s->reverse = 1;
		r = route_rules(s, set, &idx);
		if (r != XFIB_NEXT)
			return r;
	}
	return xfib_source_check4(&env, idx, in_ifindex, in_flags);
}

/*
 * The flow an IPv4 packet's rules see (include/xfib/rule_walk.h): the
 * source as received, the destination routed (conntrack's translation
 * for a NATed flow, whose destination port is translated too: DNAT
 * happens before routing, SNAT after), the ingress port, TOS, protocol
 * and ports.
 */
static __always_inline void rflow4(struct xfib_rflow *f,
				   const struct iphdr *iph, const void *end,
				   __u32 dst, __u32 iif,
				   const struct ct_state *cs)
{
	__builtin_memset(f, 0, sizeof(*f));
	f->src_lo = bpf_ntohl(iph->saddr);
	f->dst_lo = dst;
	f->iif = iif;
	f->tos = iph->tos;
	f->proto = iph->protocol;
	if (!(iph->frag_off & bpf_htons(XFIB_IP_MF_OFFSET)))
		rflow_ports(f, iph + 1, end, iph->protocol);
	if (cs->nat)
		f->dport = bpf_ntohs(cs->dport);
}

/* IPv6: the traffic class; an extension header (hop-by-hop ones never
 * come here) hides the transport from the rules, as the kernel's flow
 * dissector would not. */
static __always_inline void rflow6(struct xfib_rflow *f,
				   const struct ipv6hdr *ip6h, const void *end,
				   __u64 dhi, __u64 dlo, __u32 iif,
				   const struct ct_state *cs)
{
	__builtin_memset(f, 0, sizeof(*f));
	f->src_hi = load_be64(&ip6h->saddr.s6_addr[0]);
	f->src_lo = load_be64(&ip6h->saddr.s6_addr[8]);
	f->dst_hi = dhi;
	f->dst_lo = dlo;
	f->iif = iif;
	f->tos = (ip6h->priority << 4) | (ip6h->flow_lbl[0] >> 4);
	f->proto = ip6h->nexthdr;
	switch (ip6h->nexthdr) {
	case IPPROTO_ROUTING:
	case IPPROTO_FRAGMENT:
	case IPPROTO_DSTOPTS:
	case IPPROTO_MH:
		f->l4_unknown = 1;
		return;
	}
	rflow_ports(f, ip6h + 1, end, ip6h->nexthdr);
	if (cs->nat)
		f->dport = bpf_ntohs(cs->dport);
}

/* The flow of the kernel's lookup of the source (__fib_validate_source):
 * addresses and ports swapped, from the loopback device. */
static __always_inline void rflow_reverse(struct xfib_rflow *r,
					  const struct xfib_rflow *f)
{
	*r = *f;
	r->src_lo = f->dst_lo;
	r->dst_lo = f->src_lo;
	r->sport = f->dport;
	r->dport = f->sport;
	r->iif = XFIB_LOOPBACK_IFINDEX;
	r->reverse = 1;
}

/* xfib_rules_route()'s answer: the reason (XFIB_NEXT: the nexthop
 * index below), and whether the rules were walked. */
#define XFIB_RR_REASON(v) (((v) >> 24) & 0x7f)
#define XFIB_RR_NH(v) ((v) & 0xffffff)
#define XFIB_RR_WALKED (1u << 31)
/* In xfib_rules_route()'s fam_l3off: the source is to be checked
 * (rp_filter, or a source xfib_nonlocal4 does not rule out as local). */
#define XFIB_RR_SOURCE (1u << 1)
_Static_assert(XFIB_NEXTHOP_MAX <= 0x1000000 && XFIB_NEXT < 0x80,
	       "xfib_rules_route() packs a nexthop index and a reason");

/* Whether the family's rules are more than local, main: one read of the
 * half in use's header. */
static __always_inline int rules_wanted(__u32 fam)
{
	const struct xfib_rule_set *set;
	__u32 key;

	set = rules_half(fam, &key);
	return set && (set->hdr.walk || set->hdr.fallback);
}

/*
 * The rules' answer for the packet at l3off (fam_l3off: family in bit 0,
 * XFIB_RR_SOURCE, offset from bit 8) whose routed destination (cs->daddr)
 * slot 0 answered nh_idx for, received on iif: packed as XFIB_RR_*. For
 * an IPv4 source to be checked the reversed flow is left in the scratch
 * for xfib_check_source4(). A
 * function of its own: the flow and the walk's state stay out of the
 * program's stack frame, which 6.1's limit on the stack of the program
 * and the conntrack gate together leaves no room to.
 */
__noinline __u32 xfib_rules_route(struct xdp_md *ctx, const struct ct_state *cs,
				  __u32 fam_l3off, __u32 nh_idx, __u32 iif)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	__u32 fam = fam_l3off & 1, l3off = (fam_l3off >> 8) & 0xff, key, r;
	const struct xfib_rule_set *set;
	struct rule_scratch *s;

	if (!cs)
		return XFIB_PASS_RULE << 24;
	set = rules_half(fam, &key);
	if (!set)
		return XFIB_PASS_RULE << 24;
	if (!set->hdr.walk && !set->hdr.fallback)
		return XFIB_NEXT << 24 | nh_idx;
	s = rule_scratch();
	if (!s)
		return XFIB_PASS_RULE << 24;
	s->fam = fam;
	s->key = key;
	s->reverse = 0;
	if (fam == XFIB_V4) {
		const struct iphdr *iph = data + l3off;

		if ((void *)(iph + 1) > end)
			return XFIB_PASS_MALFORMED << 24;
		if (!(fam_l3off & XFIB_RR_SOURCE)) {
			s->f.src_hi = 0;
			s->f.src_lo = bpf_ntohl(iph->saddr);
			s->f.dst_hi = 0;
			s->f.dst_lo = bpf_ntohl(cs->daddr[0]);
			if (rules_by_source(s, set, &nh_idx))
				goto walked;
		}
		rflow4(&s->f, iph, end, bpf_ntohl(cs->daddr[0]), iif, cs);
	} else {
		const struct ipv6hdr *ip6h = data + l3off;

		if ((void *)(ip6h + 1) > end)
			return XFIB_PASS_MALFORMED << 24;
		s->f.src_hi = load_be64(&ip6h->saddr.s6_addr[0]);
		s->f.src_lo = load_be64(&ip6h->saddr.s6_addr[8]);
		s->f.dst_hi = load_be64(&cs->daddr[0]);
		s->f.dst_lo = load_be64(&cs->daddr[2]);
		if (rules_by_source(s, set, &nh_idx))
			goto walked;
		rflow6(&s->f, ip6h, end, load_be64(&cs->daddr[0]),
		       load_be64(&cs->daddr[2]), iif, cs);
		/* The packet as received, which xfib_after_lookup() hashes
		 * for the multipath member too (forward() rewrites it only
		 * later). */
		s->w.flow_hash = 0;
		if (set->hdr.ifgroup) {
			struct xfib_pkt p = { .l3 = (void *)ip6h, .data_end = end };

			s->w.flow_hash = pkt_flow_hash6(&p, flow_seed());
		}
	}
	r = route_rules(s, set, &nh_idx);
	if (r != XFIB_NEXT)
		return r << 24;
	if (fam == XFIB_V4 && (fam_l3off & XFIB_RR_SOURCE))
		rflow_reverse(&s->rev, &s->f);
walked:
	return XFIB_RR_WALKED | XFIB_NEXT << 24 | XFIB_RR_NH(nh_idx);
}

/*
 * Whether the IP packet of l3len bytes fits the frame. Linux 6.1's
 * verifier keeps no bounds through a byte swap, nor through the stack
 * slot the length may be kept in, and refuses a packet pointer plus a
 * value it cannot bound: the mask, which the barrier keeps the compiler
 * from dropping, bounds it (IPv6's length reaches 65575).
 */
static __always_inline int ip_len_fits(const struct xfib_pkt *pkt, __u32 l3len)
{
	barrier_var(l3len);
	return pkt->l3 + (l3len & 0x1ffff) <= pkt->data_end;
}

/*
 * IPv4: a header ip_rcv would accept, without options; forwarding on at
 * the ingress port; no special address; TTL left to decrement. Then the
 * lookup, of the destination (conntrack's translation of it, for a NATed
 * flow) and of the source (a local source, the port's rp_filter, checked
 * on the source as received, as the kernel does), in one instance; the
 * source's only where it can matter. Fills pkt->l3len, cs, and q for the
 * chain after the lookup.
 */
static __always_inline __u32 route4(struct xdp_md *ctx, struct xfib_pkt *pkt,
				    const struct xfib_iface *in,
				    struct xfib_fwd_query *q, __u32 *nh_idx,
				    struct ct_state *cs)
{
	struct iphdr *iph = pkt->l3;
	struct xfib_active act;
	__u32 r, l3len, dst, rules = 0, src_check;

	if ((void *)(iph + 1) > pkt->data_end)
		return XFIB_PASS_MALFORMED;
	if (iph->version != 4 || iph->ihl < 5)
		return XFIB_PASS_MALFORMED;
	if (iph->ihl > 5)
		return XFIB_PASS_IP_OPTIONS;
	l3len = bpf_ntohs(iph->tot_len);
	if (l3len < sizeof(*iph) || !ip_len_fits(pkt, l3len))
		return XFIB_PASS_MALFORMED;
	/* ip_rcv drops a bad header checksum; never forward one. */
	if (ipv4_csum_check(iph))
		return XFIB_PASS_MALFORMED;
	r = xfib_before_lookup(in, XFIB_AF_INET,
			       xfib_ipv4_special(bpf_ntohl(iph->daddr)) ||
			       xfib_ipv4_special(bpf_ntohl(iph->saddr)),
			       iph->ttl);
	if (r != XFIB_NEXT)
		return r;
	pkt->l3len = l3len;
	q->af = XFIB_AF_INET;
	q->l3len = l3len;
	xfib_ct_gate_pre(ctx, pkt->l3 - pkt->data, l3len, XFIB_V4, cs);
	/* The destination routed, conntrack's translation or the packet's,
	 * is read from one place either way: the verifier then finds both
	 * ways in the same state and checks the lookups once (so the
	 * packet's own destination is checked for a special address again:
	 * a branch on the translation would split the states). */
	if (!cs->nat)
		cs->daddr[0] = iph->daddr;
	q->daddr = cs->daddr;
	dst = bpf_ntohl(cs->daddr[0]);
	if (xfib_ipv4_special(dst))
		return XFIB_PASS_SPECIAL_ADDR;
	if (active_instance(XFIB_V4, &act))
		return XFIB_PASS_NO_FIB;
	r = lookup4(&act, dst, nh_idx);
	if (r != XFIB_NEXT)
		return r;
	/* Whether the source is checked, known before the rules' walk, which
	 * then leaves the reversed flow for the check.
	 * XFIB_BENCH_SOURCE_ALWAYS (make bench-fwd only) looks every source
	 * up, to measure what xfib_nonlocal4 saves. */
#ifdef XFIB_BENCH_SOURCE_ALWAYS
	src_check = 1;
#else
	src_check = xfib_source_wanted4(NULL, bpf_ntohl(iph->saddr), in->flags);
#endif
	if (rules_wanted(XFIB_V4)) {
		r = xfib_rules_route(ctx, cs, XFIB_V4 | (pkt->l3 - pkt->data) << 8 |
				     (src_check ? XFIB_RR_SOURCE : 0),
				     *nh_idx, q->in_ifindex);
		if (XFIB_RR_REASON(r) != XFIB_NEXT)
			return XFIB_RR_REASON(r);
		*nh_idx = XFIB_RR_NH(r);
		rules = r & XFIB_RR_WALKED;
	}
	if (!src_check)
		return XFIB_NEXT;
	return xfib_check_source4(*(__u64 *)&act, bpf_ntohl(iph->saddr),
				  q->in_ifindex, in->flags, rules);
}

/*
 * IPv6: a sane header without hop-by-hop options (jumbograms included);
 * IPv6 enabled and forwarding on at the ingress port; no special address;
 * hop limit left to decrement. Then the lookup (of the translated
 * destination, for a NATed flow). Fills pkt->l3len, cs, and q for the
 * chain after the lookup.
 */
static __always_inline __u32 route6(struct xdp_md *ctx, struct xfib_pkt *pkt,
				    const struct xfib_iface *in,
				    struct xfib_fwd_query *q, __u32 *nh_idx,
				    struct ct_state *cs)
{
	struct ipv6hdr *ip6h = pkt->l3;
	__u64 dhi, dlo;
	__u32 r, l3len;

	if ((void *)(ip6h + 1) > pkt->data_end)
		return XFIB_PASS_MALFORMED;
	if (ip6h->version != 6)
		return XFIB_PASS_MALFORMED;
	l3len = bpf_ntohs(ip6h->payload_len);
	/* payload_len 0 is a jumbogram (hop-by-hop option): kernel. */
	if (l3len == 0 && ip6h->nexthdr != IPPROTO_HOPOPTS)
		return XFIB_PASS_MALFORMED;
	l3len += sizeof(*ip6h);
	if (!ip_len_fits(pkt, l3len))
		return XFIB_PASS_MALFORMED;
	if (ip6h->nexthdr == IPPROTO_HOPOPTS)
		return XFIB_PASS_IPV6_HBH;
	dhi = load_be64(&ip6h->daddr.s6_addr[0]);
	dlo = load_be64(&ip6h->daddr.s6_addr[8]);
	r = xfib_before_lookup(in, XFIB_AF_INET6,
			       xfib_ipv6_special(dhi, dlo) ||
			       xfib_ipv6_special(load_be64(&ip6h->saddr.s6_addr[0]),
						 load_be64(&ip6h->saddr.s6_addr[8])),
			       ip6h->hop_limit);
	if (r != XFIB_NEXT)
		return r;
	pkt->l3len = l3len;
	q->af = XFIB_AF_INET6;
	q->l3len = l3len;
	xfib_ct_gate_pre(ctx, pkt->l3 - pkt->data, l3len, XFIB_V6, cs);
	/* As in route4. */
	if (!cs->nat)
		__builtin_memcpy(cs->daddr, &ip6h->daddr, 16);
	q->daddr = cs->daddr;
	dhi = load_be64(&cs->daddr[0]);
	dlo = load_be64(&cs->daddr[2]);
	if (xfib_ipv6_special(dhi, dlo))
		return XFIB_PASS_SPECIAL_ADDR;
	r = lookup6(q->daddr, dhi, dlo, nh_idx);
	if (r != XFIB_NEXT)
		return r;
	if (rules_wanted(XFIB_V6)) {
		r = xfib_rules_route(ctx, cs, XFIB_V6 | (pkt->l3 - pkt->data) << 8,
				     *nh_idx, q->in_ifindex);
		if (XFIB_RR_REASON(r) != XFIB_NEXT)
			return XFIB_RR_REASON(r);
		*nh_idx = XFIB_RR_NH(r);
	}
	return XFIB_NEXT;
}

/*
 * The kernel trims a packet to its IP length (ip_rcv_core(), ipv6_rcv()):
 * Ethernet padding and whatever else follows the packet is not forwarded,
 * and only the IP length counts against the egress MTU. Cuts the frame
 * after pkt->l3len bytes of IP; non-zero if that failed (nothing changed).
 */
static __always_inline int trim_to_ip_len(struct xdp_md *ctx,
					  struct xfib_pkt *pkt)
{
	__u32 l2len = sizeof(struct ethhdr) +
		      (pkt->vlan0 ? sizeof(struct xfib_vlan_hdr) : 0);
	int excess = (int)pkt->len - (int)(l2len + pkt->l3len);

	if (excess <= 0)
		return 0;
	if (bpf_xdp_adjust_tail(ctx, -excess))
		return -1;
	pkt->data = (void *)(long)ctx->data;
	pkt->data_end = (void *)(long)ctx->data_end;
	pkt->eth = pkt->data;
	pkt->l3 = pkt->data + l2len;
	return 0;
}

/*
 * The packet is ours: cut it to its IP length (to the kernel should that
 * fail), strip a priority tag as the kernel would (the Ethernet header
 * written then covers the old header and the tag), write conntrack's
 * translation of a NATed flow, decrement TTL / hop limit, write the
 * neighbour's MACs and redirect to the egress port. Counts fwd (FWD_V4 or
 * FWD_V6; FWD_NAT_V4 or FWD_NAT_V6 if translated) only if the redirect
 * took the packet.
 */
static __always_inline int forward(struct xdp_md *ctx, struct xfib_pkt *pkt,
				   const struct xfib_fwd_path *path, __u32 fwd,
				   __u32 in_ifindex, const struct ct_state *cs)
{
	struct xfib_port_counters *out;

	if (trim_to_ip_len(ctx, pkt))
		return stop(XFIB_PASS_MALFORMED, pkt, in_ifindex);
	if ((void *)(pkt->eth + 1) > pkt->data_end)
		return XDP_DROP;
	if (pkt->vlan0) {
		if (bpf_xdp_adjust_head(ctx, (int)sizeof(struct xfib_vlan_hdr)))
			return stop(XFIB_PASS_MALFORMED, pkt, in_ifindex);
		pkt->data = (void *)(long)ctx->data;
		pkt->data_end = (void *)(long)ctx->data_end;
		pkt->eth = pkt->data;
		if ((void *)(pkt->eth + 1) > pkt->data_end)
			return XDP_DROP;
		pkt->l3 = pkt->eth + 1;
		pkt->eth->h_proto = bpf_htons(pkt->proto);
	}
	if (fwd == XFIB_FWD_V4) {
		struct iphdr *iph = pkt->l3;

		if ((void *)(iph + 1) > pkt->data_end)
			return XDP_DROP;
		if (cs->nat) {
			if (nat_write4(iph, pkt->data_end, cs))
				return XDP_DROP;
			fwd = XFIB_FWD_NAT_V4;
		}
		ipv4_decrease_ttl(iph);
	} else {
		struct ipv6hdr *ip6h = pkt->l3;

		if ((void *)(ip6h + 1) > pkt->data_end)
			return XDP_DROP;
		if (cs->nat) {
			if (nat_write6(ip6h, pkt->data_end, cs))
				return XDP_DROP;
			fwd = XFIB_FWD_NAT_V6;
		}
		ip6h->hop_limit--;
	}
	__builtin_memcpy(pkt->eth->h_dest, &path->neigh_w0, ETH_ALEN);
	__builtin_memcpy(pkt->eth->h_source, &path->neigh_w1, ETH_ALEN);

	/* The port was in the devmap a moment ago; should it have been
	 * detached since, drop: the frame is already rewritten, and the
	 * kernel would forward it a second time. Forwarded counts only what
	 * the redirect took. */
	if (bpf_redirect_map(&xfib_tx_ports, path->tx_ifindex, XDP_DROP) !=
	    XDP_REDIRECT)
		return stop(XFIB_DROP_REDIRECT, pkt, in_ifindex);
	count_port_in(in_ifindex, fwd, pkt->len);
	out = port_counters(path->tx_ifindex);
	if (out) {
		out->tx.packets++;
		out->tx.bytes += pkt->data_end - pkt->data;
	}
	return count(fwd, pkt->len, XDP_REDIRECT);
}

/* The steps in order: the reason that stopped the packet, or FWD_V4 /
 * FWD_V6 with *path where it goes. */
static __always_inline __u32 decide(struct xdp_md *ctx, struct xfib_pkt *pkt,
				    struct xfib_env *env,
				    struct xfib_fwd_query *q,
				    struct xfib_fwd_path *path,
				    struct ct_state *cs)
{
	const struct xfib_iface *in;
	__u32 r, nf, nh_idx;

	/* The frame's length, for the counters, whatever stops it. */
	pkt->data = (void *)(long)ctx->data;
	pkt->data_end = (void *)(long)ctx->data_end;
	pkt->len = pkt->data_end - pkt->data;
	/* One clock read a packet: the flow cache's time is the lease's. */
	cs->now = bpf_ktime_get_coarse_ns();
	r = check_lease(cs->now);
	if (r != XFIB_NEXT)
		return r;
	r = parse_eth(pkt);
	if (r != XFIB_NEXT)
		return r;
	r = check_ingress(pkt, q, &in);
	if (r != XFIB_NEXT)
		return r;
	r = xfib_xfrm_check(env, pkt->proto == ETH_P_IP ? XFIB_V4 : XFIB_V6);
	if (r != XFIB_NEXT)
		return r;
	if (pkt->proto == ETH_P_IP)
		r = route4(ctx, pkt, in, q, &nh_idx, cs);
	else
		r = route6(ctx, pkt, in, q, &nh_idx, cs);
	if (r != XFIB_NEXT)
		return r;
	r = xfib_after_lookup(env, q, nh_idx, path);
	if (r != XFIB_FWD_V4 && r != XFIB_FWD_V6)
		return r;
	nf = ct_gate(cs, q->in_ifindex, path->ifindex, ctx->ingress_ifindex,
		     path->tx_ifindex);
	if (nf != XFIB_NEXT)
		return nf;
	if (r == XFIB_FWD_V4 ? l4_csum_partial4(pkt) : l4_csum_partial6(pkt))
		return XFIB_PASS_CSUM_PARTIAL;
	return r;
}

SEC("xdp")
int xfib_fwd(struct xdp_md *ctx)
{
	struct xfib_pkt pkt = {};
	struct xfib_env env = { .pkt = &pkt };
	struct xfib_fwd_query q = { .in_ifindex = ctx->ingress_ifindex };
	struct xfib_fwd_path path = {};
	struct ct_state cs = {};
	__u32 r;

	r = decide(ctx, &pkt, &env, &q, &path, &cs);
#ifndef XFIB_BENCH_WITHOUT_TRACE
	/* Tracing reads the frame as received: before forward() rewrites it.
	 * XFIB_BENCH_WITHOUT_TRACE (make bench-fwd only) measures this. */
	if (trace_wanted())
		xfib_trace(ctx, ctx->ingress_ifindex, r, &path);
#endif
	/* Counted on the port the frame came in by: a bridge member's own. */
	if (r != XFIB_FWD_V4 && r != XFIB_FWD_V6)
		return stop(r, &pkt, ctx->ingress_ifindex);
	return forward(ctx, &pkt, &path, r, ctx->ingress_ifindex, &cs);
}
