/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The conntrack gate: what the forwarder does with a packet it is about to
 * forward while the host has netfilter rules on the forward path
 * (include/xfib/netfilter.h says how xfibd decides the family's mode).
 *
 * In GATE mode a packet is forwarded in XDP only if conntrack already
 * holds its flow as established both ways, and the ruleset (which xfibd
 * checked) accepts every packet of such a flow unchanged. Everything that
 * changes a flow's state, or that the ruleset must see, goes to the kernel:
 *
 *  - fragments, IPv6 extension headers, protocols other than TCP, UDP and
 *    ICMP echo (the conntrack kfuncs look up TCP and UDP only; echo flows
 *    come from xfibd, which asks conntrack over ctnetlink);
 *  - TCP SYN, FIN and RST, and headers conntrack's tcp_error/udp_error
 *    would call invalid (bad data offset, flag combinations, UDP length),
 *    so the kernel sees every state change and every invalid packet;
 *  - flows without an entry, not yet replied, TCP not ESTABLISHED and
 *    ASSURED (so also every packet after a FIN), entries being destroyed;
 *  - sequence-adjusted flows and flows with a helper: the kernel
 *    rewrites or inspects their packets;
 *  - TCP flows whose entry is not yet BE_LIBERAL in both directions.
 *
 * Why BE_LIBERAL: conntrack's TCP window tracking only sees the packets
 * the kernel gets. After a fast-pathed transfer the FIN is far beyond the
 * last sequence number the kernel saw, conntrack would mark it invalid,
 * and a "ct state invalid drop" rule would drop it: the connection could
 * not close. The kernel's own flow offload marks offloaded TCP flows
 * BE_LIBERAL for the same reason. The program cannot write the TCP state,
 * so it sends the flow to xfibd (xfib_ct_events), which sets the flag over
 * ctnetlink; until then the flow's packets go to the kernel
 * (pass_ct_learn). No packet is forwarded in XDP before conntrack accepts
 * any sequence number of the flow.
 *
 * Timeouts: the kernel refreshes a flow's timeout with every packet it
 * sees (and makes a UDP flow that lasts a stream); for the packets
 * forwarded here the program does, to conntrack's value for the flow's
 * state (xfib_nf_conf, from the sysctls), once more
 * than XFIB_CT_REFRESH_HZ_DIV-th of a second has passed since the timeout
 * was last set. An entry therefore expires at most that much earlier than
 * if the kernel had seen every packet. Fixed-timeout entries are left
 * alone, as the kernel leaves them.
 *
 * NAT: a flow conntrack translates (masquerade, snat, dnat, both
 * directions) is forwarded here with conntrack's translation, as the
 * kernel's flowtable forwards it: the entry's tuple of the other direction
 * holds the addresses and ports the packet leaves with (lib/nat.h writes
 * them). Like the kernel, which runs conntrack and destination NAT in
 * prerouting, the gate looks the flow up before the route lookup
 * (xfib_ct_gate_pre), and the route is the translated destination's
 * (also while the flow is still to learn, so that a reply to a
 * masqueraded address is counted and learned as the other direction is).
 * It only records what it found: the packet's reason stays the route's (a
 * local destination stays pass_local), and xfibd hears of a flow only
 * when the packet would have been forwarded (ct_gate).
 *
 * The kfuncs are the kernel's (net/netfilter/nf_conntrack_bpf.c); the
 * lookup runs in the ingress device's namespace (BPF_F_CURRENT_NETNS) and
 * the default zone only. They exist only while nf_conntrack is loaded (a
 * module on most distribution kernels), and a program that names a kfunc
 * the kernel lacks does not load at all, even on paths it never takes. So
 * the program is built twice (Makefile): with them, and with
 * XFIB_NO_CT_KFUNCS, where a flow conntrack would have to be asked about
 * goes to the kernel (pass_ct_unavailable). The loader picks the build by
 * what the kernel has (ctl/lib/pin.c).
 */
#ifndef XFIB_BPF_CTGATE_H
#define XFIB_BPF_CTGATE_H

#include <linux/bpf.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/nf_conntrack_tcp.h>
#include <linux/netfilter/nf_conntrack_tuple_common.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_core_read.h>
#include "xfib/maps.h"
#include "xfib/counters.h"
#include "xfib/netfilter.h"
#include "lib/parse.h"

/* As in include/xfib/decide.h. */
#ifndef XFIB_NEXT
#define XFIB_NEXT XFIB_REASON_COUNT
#endif
#ifndef XFIB_AF_INET
#define XFIB_AF_INET 2
#define XFIB_AF_INET6 10
#endif

/* ---- maps ---------------------------------------------------------------- */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XFIB_FAMILIES);
	__type(key, __u32);
	__type(value, struct xfib_nf_conf);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xfib_nf_conf SEC(".maps");

/* Ports whose packets go to the kernel (enum xfib_nf_port_dir). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, XFIB_NF_PORTS_MAX);
	__type(key, __u32);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xfib_nf_ports SEC(".maps");

/* For xfibctl status; not read here. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XFIB_FAMILIES);
	__type(key, __u32);
	__type(value, struct xfib_nf_info);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xfib_nf_info SEC(".maps");

/* ICMP echo flows conntrack holds as established (written by xfibd). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, struct xfib_ct_echo_key);
	__type(value, struct xfib_ct_echo);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xfib_ct_echo SEC(".maps");

/* Flows sent to xfibd recently: when, so each goes once per retry time. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct xfib_ct_event);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xfib_ct_pending SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xfib_ct_events SEC(".maps");

/* Events sent in the current window, per CPU (XFIB_CT_LEARN_BURST). */
struct ct_budget {
	__u64 window; /* start, bpf_ktime_get_ns() */
	__u32 used;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ct_budget);
} xfib_ct_budget SEC(".maps");

/*
 * The flow cache: what conntrack said of a TCP or UDP flow the gate
 * forwards, and its NAT, kept for XFIB_CT_CACHE_NS
 * (include/xfib/netfilter.h says why that is exact enough). A packet whose
 * flow is here skips the conntrack lookup, its reference count and
 * release, the cost that made a stateful router's fast path slower than a
 * plain one's. Two-way set-associative by a hash of the flow, per CPU
 * (a flow's packets mostly stay on one CPU, and no other CPU can see an
 * entry half written): a third flow of a set replaces the one whose time
 * runs out first, which takes the lookup again. Private to each load of
 * the program: not pinned, never read by xfibd.
 *
 * A hit reads one cache line: a way holds the flow, its time and an IPv4
 * flow's NAT (with its checksums' change) in 64 bytes; an IPv6 flow's
 * translated addresses are in the set's third line. The sets of all CPUs
 * are in one array, CPU by CPU
 * (xfib_fwd_open() sizes it for the CPUs the machine may have): its
 * values start at a page (BPF_F_MMAPABLE), so each line of a set is a
 * line of memory. A per-CPU array would give each set a place of its own,
 * found through a table of pointers: a second memory read, which was, with
 * the read of the way, half of the gate's time with 256 flows.
 */
struct ct_cached {
	__u64 until; /* bpf_ktime_get_coarse_ns() before which it holds */
	struct xfib_ct_event key; /* the packet's flow, as ct_parse() gives it */
	/* then as struct ct_state: the rewrite, if the lowest bit of until
	 * says nat (a nanosecond later changes nothing) */
	__u16 csum_addr;
	__u16 csum_l4;
	__be16 sport;
	__be16 dport;
	__u32 saddr4; /* IPv4: the translated addresses */
	__u32 daddr4;
};

struct ct_cache_set {
	struct ct_cached way[2];
	struct {
		__u32 saddr[4];
		__u32 daddr[4];
	} nat6[2];   /* IPv6: each way's translated addresses */
};

_Static_assert(sizeof(struct ct_cached) == 64, "a way is a cache line");
_Static_assert(sizeof(struct ct_cache_set) == 192, "a set is three lines");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	/* One CPU's sets; xfib_fwd_open() makes room for every CPU's. A CPU
	 * without room does without the cache. */
	__uint(max_entries, XFIB_CT_CACHE_SETS);
	__type(key, __u32);
	__type(value, struct ct_cache_set);
} xfib_ct_cache SEC(".maps");

/* ---- the kernel's types and kfuncs ----------------------------------------- */

/* Set by the loader before the load (ct_udp_timeout()). In both builds,
 * which must have the same data. */
const volatile __u32 xfib_ct_udp_stream = 1;

/* How long the flow cache holds a flow: XFIB_CT_CACHE_NS, but for a test
 * on an emulated CPU, which cannot send twice within 25 ms. */
const volatile __u64 xfib_ct_cache_ns = XFIB_CT_CACHE_NS;

#ifndef XFIB_NO_CT_KFUNCS
/* Only the fields read here; offsets come from the kernel's BTF (CO-RE). */
struct ip_ct_tcp_state {
	__u8 flags;
} __attribute__((preserve_access_index));

struct ip_ct_tcp {
	struct ip_ct_tcp_state seen[2];
	__u8 state;
} __attribute__((preserve_access_index));

/* Linux 6.3 and later (before, a replied UDP flow is a stream at once). */
struct nf_ct_udp {
	unsigned long stream_ts; /* jiffies after which a replied flow is a stream */
} __attribute__((preserve_access_index));

union nf_conntrack_proto {
	struct ip_ct_tcp tcp;
	struct nf_ct_udp udp;
} __attribute__((preserve_access_index));

struct nf_ct_ext {
	__u8 offset[1]; /* [NF_CT_EXT_HELPER], which is always 0 */
} __attribute__((preserve_access_index));

/* A tuple's address and port (the port of TCP and UDP only); named
 * apart from the uapi headers' types, and matched to the kernel's by
 * CO-RE, which ignores the ___ suffix. */
union nf_inet_addr___xfib {
	__u32 all[4];
} __attribute__((preserve_access_index));

union nf_conntrack_man_proto___xfib {
	__be16 all;
} __attribute__((preserve_access_index));

struct nf_conntrack_man {
	union nf_inet_addr___xfib u3;
	union nf_conntrack_man_proto___xfib u;
} __attribute__((preserve_access_index));

struct nf_conntrack_tuple {
	struct nf_conntrack_man src;
	struct {
		union nf_inet_addr___xfib u3;
		union {
			__be16 all;
		} u;
	} dst;
} __attribute__((preserve_access_index));

struct nf_conntrack_tuple_hash {
	struct nf_conntrack_tuple tuple;
} __attribute__((preserve_access_index));

struct nf_conn {
	__u32 timeout; /* jiffies (32 bits) when the entry expires */
	struct nf_conntrack_tuple_hash tuplehash[2]; /* IP_CT_DIR_* */
	unsigned long status;
	struct nf_ct_ext *ext;
	union nf_conntrack_proto proto;
} __attribute__((preserve_access_index));

/*
 * The kernel's struct bpf_ct_opts: 12 bytes (NF_BPF_CT_OPTS_SZ) up to Linux
 * 6.7, 16 since the zone fields came. The kfunc refuses any size but its
 * own, so the size passed is the one the kernel's BTF has (opts_size(),
 * which asks through the second type: relocating the first's fields would
 * fail where the zone is missing).
 */
struct bpf_ct_opts___xfib {
	__s32 netns_id;
	__s32 error;
	__u8 l4proto;
	__u8 dir;
	__u16 ct_zone_id;
	__u8 ct_zone_dir;
	__u8 reserved[3];
};

struct bpf_ct_opts___zone {
	__u16 ct_zone_id;
} __attribute__((preserve_access_index));

extern struct nf_conn *bpf_xdp_ct_lookup(struct xdp_md *ctx,
					 struct bpf_sock_tuple *tuple,
					 __u32 tuple__sz,
					 struct bpf_ct_opts___xfib *opts,
					 __u32 opts__sz) __ksym;
extern void bpf_ct_release(struct nf_conn *ct) __ksym;
extern int bpf_ct_change_timeout(struct nf_conn *ct, __u32 timeout) __ksym;
extern int bpf_ct_change_status(struct nf_conn *ct, __u32 status) __ksym;

extern unsigned int CONFIG_HZ __kconfig;
#endif /* XFIB_NO_CT_KFUNCS */

#define XFIB_BPF_F_CURRENT_NETNS (-1)
/* IPS_NAT_CLASH (newer than some uapi headers): shares IPS_UNTRACKED's bit. */
#define IPS_NAT_CLASH_ (1 << 12)
#define XFIB_CT_REFRESH_HZ_DIV 4

#define TCPF_FIN_ 0x01
#define TCPF_SYN_ 0x02
#define TCPF_RST_ 0x04
#define TCPF_PSH_ 0x08
#define TCPF_ACK_ 0x10
#define TCPF_URG_ 0x20
#define TCPF_ECE_ 0x40
#define TCPF_CWR_ 0x80

#define ICMP_ECHOREPLY_ 0
#define ICMP_ECHO_ 8
#define ICMPV6_ECHO_REQUEST_ 128
#define ICMPV6_ECHO_REPLY_ 129

/* ---- the packet's flow ------------------------------------------------------ */

struct ct_flow {
	struct bpf_sock_tuple tuple; /* TCP/UDP: the kfunc's lookup key */
	__u32 tuple_len;
	/* the flow as xfibd is told about it, and the flow cache's key
	 * (compared as 64-bit words) */
	struct xfib_ct_event ev __attribute__((aligned(8)));
};

/*
 * What xfib_ct_gate_pre() found, for the route lookup (the translated
 * destination) and the steps after it: ct_gate() (the verdict) and
 * forward() (the rewrite, lib/nat.h).
 */
struct ct_state {
	__u64 now;	/* bpf_ktime_get_coarse_ns(), as the lease check read it */
	__u32 verdict;	/* GATE mode: XFIB_NEXT, or the reason for the kernel */
	__u8 mode;	/* the family's enum xfib_nf_mode, read once */
	__u8 ports;	/* xfib_nf_conf.ports, read with it */
	__u8 nat;	/* forward() writes the addresses and ports below */
	__u8 proto;	/* IPPROTO_TCP, _UDP, _ICMP or _ICMPV6, when nat */
	__be16 sport;	/* the packet's ports (ICMP echo: the identifier in
			 * sport) and addresses as it leaves */
	__be16 dport;
	/* When nat, what the rewrite changes in the one's complement sums
	 * (ct_nat_csum()): the addresses' (the IPv4 header's checksum), and
	 * what the transport checksum covers of it (addresses in the
	 * pseudo-header, ports or identifier). A flow's are the same for
	 * each packet: the flow cache keeps them, and forward() only adds. */
	__u16 csum_addr;
	__u16 csum_l4;
	/* network order; IPv4 in the first word; 8-byte aligned for
	 * route6's two 64-bit loads of the destination */
	__u32 saddr[4] __attribute__((aligned(8)));
	__u32 daddr[4];
	struct xfib_ct_event ev; /* the flow, for xfibd (PASS_CT_LEARN) */
};

/*
 * The change of the one's complement sum when n 32-bit words (as stored)
 * change from old to new, added to acc: ~old + new, a word at a time in
 * 64 bits (2^16 is 1 modulo 0xffff, so the sum of the words folds to the
 * sum of their halves), then folded to at most 17 bits, so that the sums
 * made on top of it cannot overflow.
 */
static __always_inline __u32 ct_csum_diff(__u32 acc, const __u32 *old,
					  const __u32 *new, int n)
{
	__u64 sum = acc;
	int i;

#pragma unroll
	for (i = 0; i < n; i++)
		sum += (__u64)(__u32)~old[i] + new[i];
	sum = (sum & 0xffffffff) + (sum >> 32);
	sum = (sum & 0xffffffff) + (sum >> 32);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u32)((sum & 0xffff) + (sum >> 16));
}

/* A sum from ct_csum_diff() in 16 bits. */
static __always_inline __u16 ct_csum_fold(__u32 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)((sum & 0xffff) + (sum >> 16));
}

/*
 * cs->csum_addr and cs->csum_l4 for the translation in cs of flow ev (the
 * packet's addresses, and its ports or echo identifier as ev has them):
 * as the kernel's nf_nat_ipv4_manip_pkt() and l4proto_manip_pkt() update
 * the checksums, IPv4's header covers the addresses, TCP's and UDP's and
 * ICMPv6's the pseudo-header's addresses too, ICMP's only the identifier.
 */
static __always_inline void ct_nat_csum(struct ct_state *cs,
					const struct xfib_ct_event *ev)
{
	/* ev is 8-byte aligned (struct ct_flow); its addresses are read in
	 * place, for the stack the gate shares with the forwarder is full. */
	const __u32 *sa = (const __u32 *)ev->saddr, *da = (const __u32 *)ev->daddr;
	/* Both port words in the same order: the sum is of 16-bit halves. */
	__u32 was = (__u32)ev->sport | (__u32)ev->dport << 16;
	__u32 now = (__u32)cs->sport | (__u32)cs->dport << 16;
	__u32 addr;

	if (ev->family == XFIB_AF_INET) {
		addr = ct_csum_diff(0, sa, cs->saddr, 1);
		addr = ct_csum_diff(addr, da, cs->daddr, 1);
	} else {
		addr = ct_csum_diff(0, sa, cs->saddr, 4);
		addr = ct_csum_diff(addr, da, cs->daddr, 4);
	}
	cs->csum_addr = ct_csum_fold(addr);
	if (ev->proto == IPPROTO_ICMP)
		addr = 0;
	cs->csum_l4 = ct_csum_fold(ct_csum_diff(addr, &was, &now, 1));
}

/* Ports of a TCP or UDP header at l4 with l4len bytes of IP payload (as
 * they are in the packet, into *ports), and the checks conntrack's
 * tcp_error / udp_error make before it tracks a packet. */
static __always_inline __u32 ct_parse_l4(const struct xfib_pkt *pkt,
					 const void *l4, __u32 l4len,
					 __u8 proto, __u32 *ports)
{
	const __u8 *b = l4;

	if (proto == IPPROTO_TCP) {
		__u8 doff, flags;

		if ((const void *)(b + 20) > pkt->data_end)
			return XFIB_PASS_CT_INVALID;
		/* The ports first: a SYN, FIN or RST's flow is forgotten
		 * (ct_cache_forget). */
		*ports = *(const __u32 *)b;
		doff = b[12] >> 4;
		flags = b[13];
		if (doff < 5 || doff * 4u > l4len)
			return XFIB_PASS_CT_INVALID;
		if (flags & (TCPF_SYN_ | TCPF_FIN_ | TCPF_RST_))
			return XFIB_PASS_CT_TCP_FLAGS;
		/* tcp_valid_flags[] without SYN, FIN, RST: ACK, ACK|URG. */
		flags &= ~(TCPF_ECE_ | TCPF_CWR_ | TCPF_PSH_);
		if (flags != TCPF_ACK_ && flags != (TCPF_ACK_ | TCPF_URG_))
			return XFIB_PASS_CT_INVALID;
	} else if (proto == IPPROTO_UDP) {
		__u32 ulen;

		if ((const void *)(b + 8) > pkt->data_end)
			return XFIB_PASS_CT_INVALID;
		ulen = (__u32)b[4] << 8 | b[5];
		if (ulen < 8 || ulen > l4len)
			return XFIB_PASS_CT_INVALID;
		*ports = *(const __u32 *)b;
	} else {
		return XFIB_PASS_CT_PROTO;
	}
	return XFIB_NEXT;
}

/* An ICMP echo request or reply at l4: its type into *type, its
 * identifier where a flow's source port is, into *ports. */
static __always_inline __u32 ct_parse_echo(const struct xfib_pkt *pkt,
					   const void *l4, __u8 proto,
					   __u8 *type, __u32 *ports)
{
	const __u8 *b = l4;
	__u8 req = ICMP_ECHO_, rep = ICMP_ECHOREPLY_;
	union {
		__be16 port[2];
		__u32 both;
	} id = {};

	if (proto == IPPROTO_ICMPV6) {
		req = ICMPV6_ECHO_REQUEST_;
		rep = ICMPV6_ECHO_REPLY_;
	}
	if ((const void *)(b + 8) > pkt->data_end)
		return XFIB_PASS_CT_INVALID;
	if ((b[0] != req && b[0] != rep) || b[1] != 0)
		return XFIB_PASS_CT_PROTO;
	*type = b[0];
	id.port[0] = *(const __be16 *)(b + 4);
	*ports = id.both;
	return XFIB_NEXT;
}

/*
 * The flow of the IP packet at pkt->l3 (already checked by route4 or
 * route6: a whole header, no IPv4 options, pkt->l3len set), into f->ev.
 *
 * Written as five 64-bit words, assembled in registers: the flow cache
 * reads the key back as such words at once, and a read that spans
 * several narrower writes (a byte here, an address there) cannot be
 * served from the CPU's store buffer and waits for them to reach the
 * cache, which made reading the key back cost more than the hash.
 */
static __always_inline __u32 ct_parse(const struct xfib_pkt *pkt,
				      struct ct_flow *f)
{
	__u64 *k = (__u64 *)&f->ev;
	union {
		struct {
			__u8 family;
			__u8 proto;
			__u8 icmp_type;
			__u8 pad;
			__u32 ports;
		};
		__u64 word;
	} head = {};
	union {
		__u32 v4[2];
		__u64 word;
	} s = {}, d = {};
	const void *l4;
	__u32 l4len, r;

	if (pkt->proto == ETH_P_IP) {
		const struct iphdr *iph = pkt->l3;

		if ((const void *)(iph + 1) > pkt->data_end)
			return XFIB_PASS_MALFORMED;
		if (iph->frag_off & bpf_htons(XFIB_IP_MF_OFFSET))
			return XFIB_PASS_CT_PROTO;
		head.family = XFIB_AF_INET;
		head.proto = iph->protocol;
		s.v4[0] = iph->saddr;
		d.v4[0] = iph->daddr;
		k[1] = s.word;
		k[2] = 0;
		k[3] = d.word;
		k[4] = 0;
		l4 = iph + 1;
		l4len = pkt->l3len - sizeof(*iph);
	} else {
		const struct ipv6hdr *ip6h = pkt->l3;
		const __u64 *a = (const __u64 *)&ip6h->saddr; /* saddr, daddr */

		if ((const void *)(ip6h + 1) > pkt->data_end)
			return XFIB_PASS_MALFORMED;
		head.family = XFIB_AF_INET6;
		head.proto = ip6h->nexthdr;
		k[1] = a[0];
		k[2] = a[1];
		k[3] = a[2];
		k[4] = a[3];
		l4 = ip6h + 1;
		l4len = pkt->l3len - sizeof(*ip6h);
	}
	if (head.proto == IPPROTO_ICMP || head.proto == IPPROTO_ICMPV6) {
		/* ICMP in the wrong family is what conntrack calls generic. */
		if ((head.proto == IPPROTO_ICMP) != (head.family == XFIB_AF_INET))
			return XFIB_PASS_CT_PROTO;
		r = ct_parse_echo(pkt, l4, head.proto, &head.icmp_type, &head.ports);
	} else {
		r = ct_parse_l4(pkt, l4, l4len, head.proto, &head.ports);
	}
	k[0] = head.word;
	return r;
}

/* The kfunc's tuple for a TCP or UDP flow. */
static __always_inline void ct_tuple(struct ct_flow *f)
{
	if (f->ev.family == XFIB_AF_INET) {
		__builtin_memcpy(&f->tuple.ipv4.saddr, f->ev.saddr, 4);
		__builtin_memcpy(&f->tuple.ipv4.daddr, f->ev.daddr, 4);
		f->tuple.ipv4.sport = f->ev.sport;
		f->tuple.ipv4.dport = f->ev.dport;
		f->tuple_len = sizeof(f->tuple.ipv4);
	} else {
		__builtin_memcpy(f->tuple.ipv6.saddr, f->ev.saddr, 16);
		__builtin_memcpy(f->tuple.ipv6.daddr, f->ev.daddr, 16);
		f->tuple.ipv6.sport = f->ev.sport;
		f->tuple.ipv6.dport = f->ev.dport;
		f->tuple_len = sizeof(f->tuple.ipv6);
	}
}

/* ---- talking to xfibd ---------------------------------------------------- */

/* One more event in this CPU's window, if the budget allows. */
static __always_inline int ct_budget_take(__u64 now)
{
	__u32 zero = 0;
	struct ct_budget *b = bpf_map_lookup_elem(&xfib_ct_budget, &zero);

	if (!b)
		return 0;
	if (now - b->window >= XFIB_CT_LEARN_WINDOW_NS) {
		b->window = now;
		b->used = 0;
	}
	if (b->used >= XFIB_CT_LEARN_BURST)
		return 0;
	b->used++;
	return 1;
}

/* Tells xfibd about the flow, unless it was told less than
 * XFIB_CT_LEARN_RETRY_NS ago. Packets anyone can send trigger this (a
 * stream of echo requests with new identifiers): a per-CPU budget bounds
 * the work they make for xfibd. A flow over budget, or whose event a full
 * ring drops, is sent with a later packet. */
static __always_inline void ct_learn(struct xfib_ct_event *ev)
{
	__u64 now = bpf_ktime_get_ns(), *last;

	last = bpf_map_lookup_elem(&xfib_ct_pending, ev);
	if (last && now - *last < XFIB_CT_LEARN_RETRY_NS)
		return;
	if (!ct_budget_take(now))
		return;
	bpf_map_update_elem(&xfib_ct_pending, ev, &now, BPF_ANY);
	bpf_ringbuf_output(&xfib_ct_events, ev, sizeof(*ev), 0);
}

/* ---- the decisions --------------------------------------------------------- */

/* An echo request or reply: forwarded while xfibd says conntrack holds its
 * flow established (xfib_ct_echo), with its translation if conntrack NATs
 * it; the time of use lets xfibd keep the entry's timeout fresh. Echo
 * flows xfibd does not hold yet are learned (ct_gate). */
static __always_inline __u32 ct_echo(struct ct_flow *f, struct ct_state *cs)
{
	struct xfib_ct_echo_key key = { .family = f->ev.family, .id = f->ev.sport };
	int request = f->ev.icmp_type == ICMP_ECHO_ ||
		       f->ev.icmp_type == ICMPV6_ECHO_REQUEST_;
	struct xfib_ct_echo *e;
	__u64 now;

	__builtin_memcpy(key.requester, request ? f->ev.saddr : f->ev.daddr, 16);
	__builtin_memcpy(key.responder, request ? f->ev.daddr : f->ev.saddr, 16);
	e = bpf_map_lookup_elem(&xfib_ct_echo, &key);
	now = bpf_ktime_get_ns();
	if (!e || now >= e->valid_until)
		return XFIB_PASS_CT_LEARN;
	if (e->nat) {
		/* A request to the responder's side of a translated flow, or a
		 * reply to the requester's: not the flow's packet. */
		if ((e->nat == XFIB_ECHO_NAT_REQUEST) != request)
			return XFIB_PASS_CT_NAT;
		cs->nat = 1;
		cs->proto = f->ev.proto;
		cs->sport = e->id;
		cs->dport = 0;
		__builtin_memcpy(cs->saddr, e->saddr, sizeof(cs->saddr));
		__builtin_memcpy(cs->daddr, e->daddr, sizeof(cs->daddr));
		ct_nat_csum(cs, &f->ev);
	}
	/* One store per 100 ms at most: the line is shared between CPUs. */
	if (now - e->last_used > 100000000ull)
		e->last_used = now;
	return XFIB_NEXT;
}

#ifndef XFIB_NO_CT_KFUNCS
/* Sets the entry's timeout to ms, as the kernel would for this packet,
 * unless it was set less than 1/XFIB_CT_REFRESH_HZ_DIV s ago. */
static __always_inline void ct_refresh(struct nf_conn *ct, unsigned long status,
				       __u32 ms)
{
	__u64 full = (__u64)ms * CONFIG_HZ / 1000;
	__u64 slack = CONFIG_HZ / XFIB_CT_REFRESH_HZ_DIV;
	__s32 left = (__s32)(ct->timeout - (__u32)bpf_jiffies64());

	if (status & IPS_FIXED_TIMEOUT)
		return;
	if (slack > full / 8)
		slack = full / 8;
	if ((__s64)left + (__s64)slack < (__s64)full)
		bpf_ct_change_timeout(ct, ms);
}

/*
 * The timeout conntrack's udp_packet() would give a replied UDP flow for
 * this packet: the stream one once the flow has lasted past stream_ts
 * (two seconds after it began), when it also becomes ASSURED, which the
 * kernel can no longer see happen; the shorter one before. 0 where the
 * program cannot tell: the kernel must see the packet.
 *
 * Linux 6.1's verifier finds the first member of union nf_conntrack_proto
 * (DCCP's) at the stream time's offset and refuses the read; where the
 * loader finds that so, xfib_ct_udp_stream is 0 (the verifier then skips
 * the read), and a UDP flow is forwarded here once conntrack, which sees
 * its packets until then, has made it ASSURED: a stream.
 */
static __always_inline __u32 ct_udp_timeout(struct nf_conn *ct, unsigned long status,
					    const struct xfib_nf_conf *conf)
{
	if (!xfib_ct_udp_stream)
		return status & IPS_ASSURED ? conf->udp_stream_ms : 0;
	/* Before Linux 6.3 udp_packet() makes every replied flow a stream
	 * at once; the check is resolved when the program is loaded. */
	if (bpf_core_type_exists(struct nf_ct_udp) &&
	    (__s64)(bpf_jiffies64() - ct->proto.udp.stream_ts) <= 0)
		return conf->udp_ms;
	if (!(status & (IPS_ASSURED | IPS_NAT_CLASH_)))
		bpf_ct_change_status(ct, (__u32)status | IPS_ASSURED);
	return conf->udp_stream_ms;
}

/* What conntrack's entry says about forwarding this TCP or UDP packet. */
static __always_inline __u32 ct_entry_check(struct nf_conn *ct, __u8 proto,
					    const struct xfib_nf_conf *conf)
{
	unsigned long status = ct->status;
	struct nf_ct_ext *ext;
	__u32 ms;

	if (!(status & IPS_CONFIRMED) || !(status & IPS_SEEN_REPLY) ||
	    (status & IPS_DYING))
		return XFIB_PASS_CT_NEW;
	if (status & (IPS_SEQ_ADJUST | IPS_HELPER))
		return XFIB_PASS_CT_NAT;
	/* A NAT whose bindings are not both set up yet (a flow still being
	 * set up in the other direction's hook). */
	if ((status & IPS_NAT_MASK) &&
	    (status & IPS_NAT_DONE_MASK) != IPS_NAT_DONE_MASK)
		return XFIB_PASS_CT_NAT;
	ext = ct->ext;
	if (ext && ext->offset[0])
		return XFIB_PASS_CT_NAT;
	if (proto == IPPROTO_TCP) {
		if (!(status & IPS_ASSURED) ||
		    ct->proto.tcp.state != TCP_CONNTRACK_ESTABLISHED)
			return XFIB_PASS_CT_NEW;
		if (!(ct->proto.tcp.seen[0].flags & ct->proto.tcp.seen[1].flags &
		      IP_CT_TCP_FLAG_BE_LIBERAL))
			return XFIB_PASS_CT_LEARN;
		ms = conf->tcp_ms;
	} else {
		ms = ct_udp_timeout(ct, status, conf);
		if (!ms)
			return XFIB_PASS_CT_NEW;
	}
	ct_refresh(ct, status, ms);
	return XFIB_NEXT;
}

/* The words of a tuple's address (all four: an IPv4 entry's last three
 * are zero, as are the packet's copies). */
static __always_inline void ct_addr_read(__u32 *to,
					 const union nf_inet_addr___xfib *a)
{
	to[0] = a->all[0];
	to[1] = a->all[1];
	to[2] = a->all[2];
	to[3] = a->all[3];
}

/*
 * The packet leaves with the addresses and ports of the other direction's
 * tuple, swapped: a packet of the original direction takes the reply
 * tuple's destination as its source (snat, masquerade) and its source as
 * its destination (dnat), and a reply the original tuple's. Read from the
 * tuple the packet did not match; the verifier wants constant offsets,
 * hence two branches.
 */
static __always_inline void ct_nat_read(struct nf_conn *ct, __u8 dir,
					struct ct_state *cs)
{
	const struct nf_conntrack_tuple *t;

	if (dir == IP_CT_DIR_ORIGINAL)
		t = &ct->tuplehash[IP_CT_DIR_REPLY].tuple;
	else
		t = &ct->tuplehash[IP_CT_DIR_ORIGINAL].tuple;
	ct_addr_read(cs->saddr, &t->dst.u3);
	ct_addr_read(cs->daddr, &t->src.u3);
	cs->sport = t->dst.u.all;
	cs->dport = t->src.u.all;
}

static __always_inline __u32 ct_addr_differs(const __u32 *a, const __u8 *b)
{
	__u32 w[4];

	__builtin_memcpy(w, b, sizeof(w));
	return (a[0] ^ w[0]) | (a[1] ^ w[1]) | (a[2] ^ w[2]) | (a[3] ^ w[3]);
}

/* Does the translation in cs change the packet of flow f? */
static __always_inline int ct_nat_changes(const struct ct_state *cs,
					  const struct ct_flow *f)
{
	return ct_addr_differs(cs->saddr, f->ev.saddr) ||
	       ct_addr_differs(cs->daddr, f->ev.daddr) ||
	       cs->sport != f->ev.sport || cs->dport != f->ev.dport;
}

/* The size of the kernel's struct bpf_ct_opts, fixed at load time. */
static __always_inline __u32 opts_size(void)
{
	if (bpf_core_field_exists(struct bpf_ct_opts___zone, ct_zone_id))
		return sizeof(struct bpf_ct_opts___xfib);
	return offsetof(struct bpf_ct_opts___xfib, ct_zone_id) + 2;
}

/* The kfunc sets opts.dir: which of the entry's tuples the packet's is. */
static __always_inline __u32 ct_lookup(struct xdp_md *ctx, struct ct_flow *f,
				       const struct xfib_nf_conf *conf,
				       struct ct_state *cs)
{
	struct bpf_ct_opts___xfib opts = {
		.netns_id = XFIB_BPF_F_CURRENT_NETNS,
		.l4proto = f->ev.proto,
	};
	struct nf_conn *ct;
	__u32 r;

	ct_tuple(f);
	ct = bpf_xdp_ct_lookup(ctx, &f->tuple, f->tuple_len, &opts, opts_size());
	if (!ct)
		return XFIB_PASS_CT_NEW;
	r = ct_entry_check(ct, f->ev.proto, conf);
	/* A flow still to learn is translated too: its route is then the
	 * translated destination's, so that a reply to a masqueraded
	 * address reaches ct_gate(), which counts it pass_ct_learn and
	 * asks xfibd to learn the flow, rather than stopping at the route
	 * as pass_local (the kernel forwards it either way: the verdict
	 * is not XFIB_NEXT, so nothing is rewritten). */
	if ((r == XFIB_NEXT || r == XFIB_PASS_CT_LEARN) &&
	    (ct->status & IPS_NAT_MASK)) {
		ct_nat_read(ct, opts.dir, cs);
		cs->nat = ct_nat_changes(cs, f);
		cs->proto = f->ev.proto;
	}
	bpf_ct_release(ct);
	/* After the release: fewer values live across the kfunc calls, and
	 * the stack the gate shares with the forwarder stays within 6.1's
	 * 512 bytes (it rounds each function's to 32). */
	if (cs->nat)
		ct_nat_csum(cs, &f->ev);
	return r;
}
#else
/* Built without the kfuncs: conntrack cannot be asked. */
static __always_inline __u32 ct_lookup(struct xdp_md *ctx, struct ct_flow *f,
				       const struct xfib_nf_conf *conf,
				       struct ct_state *cs)
{
	return XFIB_PASS_CT_UNAVAILABLE;
}
#endif /* XFIB_NO_CT_KFUNCS */

/* Does port ifindex have rules for packets going in direction dir? */
static __always_inline int ct_port_rules(__u32 ifindex, __u32 dir)
{
	__u32 *d = bpf_map_lookup_elem(&xfib_nf_ports, &ifindex);

	return d && (*d & dir);
}

/* ---- the flow cache -------------------------------------------------------------- */

/* The set of flow ev: its ten words folded into one (the destination's
 * turned, so that a flow's two directions differ), then one
 * multiplication, whose top bits depend on every bit folded (Fibonacci
 * hashing). A chain of mixing rounds cost each packet more than the rest
 * of the cache; a collision costs only a conntrack lookup, which is what
 * every packet paid without the cache, and the key is compared whole. */
static __always_inline struct ct_cache_set *ct_cache_set(const struct xfib_ct_event *ev)
{
	const __u32 *w = (const __u32 *)ev; /* proto etc., ports, saddr, daddr */
	__u32 s = w[2] ^ w[3] ^ w[4] ^ w[5], d = w[6] ^ w[7] ^ w[8] ^ w[9];
	__u32 key;

	key = (w[0] ^ w[1] ^ s ^ ((d << 16) | (d >> 16))) * 0x9e3779b1u;
	key >>= 32 - XFIB_CT_CACHE_SETS_LOG2;
	key += bpf_get_smp_processor_id() * XFIB_CT_CACHE_SETS;
	return bpf_map_lookup_elem(&xfib_ct_cache, &key);
}

static __always_inline int ct_cache_holds(const struct ct_cached *c,
					  const struct xfib_ct_event *ev)
{
	const __u64 *a = (const __u64 *)&c->key, *b = (const __u64 *)ev;

	return !((a[0] ^ b[0]) | (a[1] ^ b[1]) | (a[2] ^ b[2]) |
		 (a[3] ^ b[3]) | (a[4] ^ b[4]));
}

/* A SYN, FIN or RST: the kernel sees the flow change state, and its next
 * packets take the conntrack lookup again. */
static __always_inline void ct_cache_forget(const struct xfib_ct_event *ev)
{
	struct ct_cache_set *s = ct_cache_set(ev);

	if (!s)
		return;
	if (ct_cache_holds(&s->way[0], ev))
		s->way[0].until = 0;
	if (ct_cache_holds(&s->way[1], ev))
		s->way[1].until = 0;
}

/* The way of set s that holds flow ev, if it still holds: its NAT into cs. */
static __always_inline int ct_cache_use(const struct ct_cache_set *s,
					const struct xfib_ct_event *ev,
					__u64 now, struct ct_state *cs)
{
	const struct ct_cached *c;
	__u32 w = 0;

	if (!s)
		return 0;
	if (!ct_cache_holds(&s->way[0], ev))
		w = 1;
	c = &s->way[w & 1];
	if (now >= c->until || !ct_cache_holds(c, ev))
		return 0;
	cs->nat = c->until & 1;
	if (cs->nat) {
		cs->proto = ev->proto;
		cs->sport = c->sport;
		cs->dport = c->dport;
		cs->csum_addr = c->csum_addr;
		cs->csum_l4 = c->csum_l4;
		if (ev->family == XFIB_AF_INET) {
			/* cs's other words are zero, as the tuple's are */
			cs->saddr[0] = c->saddr4;
			cs->daddr[0] = c->daddr4;
		} else {
			__builtin_memcpy(cs->saddr, s->nat6[w & 1].saddr,
					 sizeof(cs->saddr));
			__builtin_memcpy(cs->daddr, s->nat6[w & 1].daddr,
					 sizeof(cs->daddr));
		}
	}
	return 1;
}

/* Into the way of set s that holds ev already, else the one whose time
 * runs out first. */
static __always_inline void ct_cache_put(struct ct_cache_set *s,
					 const struct xfib_ct_event *ev,
					 __u64 now, const struct ct_state *cs)
{
	struct ct_cached *c;
	__u32 w = 0;

	if (!ct_cache_holds(&s->way[0], ev) &&
	    (ct_cache_holds(&s->way[1], ev) || s->way[1].until < s->way[0].until))
		w = 1;
	c = &s->way[w & 1];
	__builtin_memcpy(&c->key, ev, sizeof(c->key));
	c->csum_addr = cs->csum_addr;
	c->csum_l4 = cs->csum_l4;
	c->sport = cs->sport;
	c->dport = cs->dport;
	c->saddr4 = cs->saddr[0];
	c->daddr4 = cs->daddr[0];
	if (ev->family != XFIB_AF_INET) {
		__builtin_memcpy(s->nat6[w & 1].saddr, cs->saddr, sizeof(cs->saddr));
		__builtin_memcpy(s->nat6[w & 1].daddr, cs->daddr, sizeof(cs->daddr));
	}
	c->until = ((now + xfib_ct_cache_ns) & ~1ull) | (cs->nat ? 1 : 0);
}

/* The gate proper, for a router with a stateful ruleset: parse, then the
 * echo map, or the flow cache and conntrack. */
static __always_inline __u32 ct_gate_flow(struct xdp_md *ctx,
					  const struct xfib_pkt *pkt,
					  const struct xfib_nf_conf *conf,
					  struct ct_state *cs)
{
	struct ct_flow f;
	struct ct_cache_set *c;
	__u64 now;
	__u32 r;

	/* ct_parse() writes all of f.ev (its unused bytes are the cache's
	 * key and xfibd's); the kfunc's tuple is written before it is read. */
	r = ct_parse(pkt, &f);
	if (r == XFIB_PASS_CT_TCP_FLAGS)
		ct_cache_forget(&f.ev);
	if (r != XFIB_NEXT)
		return r;
	if (f.ev.proto == IPPROTO_ICMP || f.ev.proto == IPPROTO_ICMPV6) {
		r = ct_echo(&f, cs);
	} else {
		c = ct_cache_set(&f.ev);
		now = cs->now;
		if (ct_cache_use(c, &f.ev, now, cs))
			return XFIB_NEXT;
		r = ct_lookup(ctx, &f, conf, cs);
		if (r == XFIB_NEXT && c)
			ct_cache_put(c, &f.ev, now, cs);
	}
	if (r == XFIB_PASS_CT_LEARN)
		__builtin_memcpy(&cs->ev, &f.ev, sizeof(f.ev));
	return r;
}

/* Where the IP header may start: after Ethernet and a priority tag. */
#define XFIB_CT_L3OFF_MAX (sizeof(struct ethhdr) + sizeof(struct xfib_vlan_hdr))

/*
 * Before the route lookup, for the IP packet l3off bytes into the frame
 * of ctx, l3len bytes long (its header checked by route4 or route6), of
 * family fam (XFIB_V4 / XFIB_V6): the family's mode, and in GATE mode
 * what conntrack says of the packet's flow and its NAT, into *cs.
 *
 * A global function, so the verifier checks it once, for any arguments,
 * and its caller learns only that *cs holds some value. Checked where it
 * is called, each outcome (a dozen reasons, NAT or not) was a state of its
 * own through the route lookup after it: four times the instructions the
 * verifier processed. And the packets of every router without a stateful
 * ruleset leave it once they have read the family's mode: the gate's own
 * code stays off their path (inlined, it cost them about 20 ns a packet).
 */
__noinline int xfib_ct_gate_pre(struct xdp_md *ctx, __u32 l3off, __u32 l3len,
				__u32 fam, struct ct_state *cs)
{
	const struct xfib_nf_conf *conf;
	struct xfib_pkt pkt = {};

	if (!cs)
		return 0;
	conf = bpf_map_lookup_elem(&xfib_nf_conf, &fam);
	if (!conf)
		return 0;
	cs->mode = conf->mode;
	cs->ports = conf->ports;
	if (cs->mode != XFIB_NF_GATE)
		return 0;
	if (l3off > XFIB_CT_L3OFF_MAX) {
		cs->verdict = XFIB_PASS_MALFORMED;
		return 0;
	}
	pkt.data = (void *)(long)ctx->data;
	pkt.data_end = (void *)(long)ctx->data_end;
	pkt.l3 = pkt.data + l3off;
	pkt.proto = fam == XFIB_V4 ? ETH_P_IP : ETH_P_IPV6;
	pkt.l3len = l3len;
	cs->verdict = ct_gate_flow(ctx, &pkt, conf, cs);
	return 0;
}

/*
 * The netfilter step for a packet the forwarder is about to forward from
 * port in to port out, with what xfib_ct_gate_pre() found: XFIB_NEXT to
 * forward it, else the reason it goes to the kernel. in_port and
 * out_port are the ports the frame comes and goes by: in and out, or a
 * bridge's member, whose netdev ingress and egress chains see it too.
 */
static __always_inline __u32 ct_gate(struct ct_state *cs, __u32 in, __u32 out,
				     __u32 in_port, __u32 out_port)
{
	if (cs->ports && (ct_port_rules(in, XFIB_NF_PORT_IN) ||
			  ct_port_rules(out, XFIB_NF_PORT_OUT) ||
			  (in_port != in &&
			   ct_port_rules(in_port, XFIB_NF_PORT_IN)) ||
			  (out_port != out &&
			   ct_port_rules(out_port, XFIB_NF_PORT_OUT))))
		return XFIB_PASS_NETFILTER;
	if (cs->mode == XFIB_NF_OFF)
		return XFIB_NEXT;
	if (cs->mode != XFIB_NF_GATE)
		return XFIB_PASS_NETFILTER;
	if (cs->verdict == XFIB_PASS_CT_LEARN)
		ct_learn(&cs->ev);
	return cs->verdict;
}

#endif /* XFIB_BPF_CTGATE_H */
