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
 *  - NATed flows, sequence-adjusted ones and flows with a helper: the
 *    kernel rewrites or inspects their packets;
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

/* ---- the kernel's types and kfuncs ----------------------------------------- */

/* Set by the loader before the load (ct_udp_timeout()). In both builds,
 * which must have the same data. */
const volatile __u32 xfib_ct_udp_stream = 1;

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

struct nf_conn {
	__u32 timeout; /* jiffies (32 bits) when the entry expires */
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
	struct xfib_ct_event ev;     /* the flow as xfibd is told about it */
};

/* Ports of a TCP or UDP header at l4 with l4len bytes of IP payload, and
 * the checks conntrack's tcp_error / udp_error make before it tracks a
 * packet. */
static __always_inline __u32 ct_parse_l4(const struct xfib_pkt *pkt,
					 const void *l4, __u32 l4len,
					 struct ct_flow *f)
{
	const __u8 *b = l4;

	if (f->ev.proto == IPPROTO_TCP) {
		__u8 doff, flags;

		if ((const void *)(b + 20) > pkt->data_end)
			return XFIB_PASS_CT_INVALID;
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
	} else if (f->ev.proto == IPPROTO_UDP) {
		__u32 ulen;

		if ((const void *)(b + 8) > pkt->data_end)
			return XFIB_PASS_CT_INVALID;
		ulen = (__u32)b[4] << 8 | b[5];
		if (ulen < 8 || ulen > l4len)
			return XFIB_PASS_CT_INVALID;
	} else {
		return XFIB_PASS_CT_PROTO;
	}
	__builtin_memcpy(&f->ev.sport, b, 4);
	return XFIB_NEXT;
}

/* An ICMP echo request or reply at l4 (type and code, identifier). */
static __always_inline __u32 ct_parse_echo(const struct xfib_pkt *pkt,
					   const void *l4, struct ct_flow *f)
{
	const __u8 *b = l4;
	__u8 req = ICMP_ECHO_, rep = ICMP_ECHOREPLY_;

	if (f->ev.proto == IPPROTO_ICMPV6) {
		req = ICMPV6_ECHO_REQUEST_;
		rep = ICMPV6_ECHO_REPLY_;
	}
	if ((const void *)(b + 8) > pkt->data_end)
		return XFIB_PASS_CT_INVALID;
	if ((b[0] != req && b[0] != rep) || b[1] != 0)
		return XFIB_PASS_CT_PROTO;
	f->ev.icmp_type = b[0];
	__builtin_memcpy(&f->ev.sport, b + 4, 2);
	return XFIB_NEXT;
}

/* The flow of the IP packet at pkt->l3 (already checked by route4 or
 * route6: a whole header, no IPv4 options, pkt->l3len set). */
static __always_inline __u32 ct_parse(const struct xfib_pkt *pkt,
				      struct ct_flow *f)
{
	const void *l4;
	__u32 l4len;

	if (pkt->proto == ETH_P_IP) {
		const struct iphdr *iph = pkt->l3;

		if ((const void *)(iph + 1) > pkt->data_end)
			return XFIB_PASS_MALFORMED;
		if (iph->frag_off & bpf_htons(XFIB_IP_MF_OFFSET))
			return XFIB_PASS_CT_PROTO;
		f->ev.family = XFIB_AF_INET;
		f->ev.proto = iph->protocol;
		__builtin_memcpy(f->ev.saddr, &iph->saddr, 4);
		__builtin_memcpy(f->ev.daddr, &iph->daddr, 4);
		l4 = iph + 1;
		l4len = pkt->l3len - sizeof(*iph);
	} else {
		const struct ipv6hdr *ip6h = pkt->l3;

		if ((const void *)(ip6h + 1) > pkt->data_end)
			return XFIB_PASS_MALFORMED;
		f->ev.family = XFIB_AF_INET6;
		f->ev.proto = ip6h->nexthdr;
		__builtin_memcpy(f->ev.saddr, &ip6h->saddr, 16);
		__builtin_memcpy(f->ev.daddr, &ip6h->daddr, 16);
		l4 = ip6h + 1;
		l4len = pkt->l3len - sizeof(*ip6h);
	}
	if (f->ev.proto == IPPROTO_ICMP || f->ev.proto == IPPROTO_ICMPV6) {
		/* ICMP in the wrong family is what conntrack calls generic. */
		if ((f->ev.proto == IPPROTO_ICMP) != (f->ev.family == XFIB_AF_INET))
			return XFIB_PASS_CT_PROTO;
		return ct_parse_echo(pkt, l4, f);
	}
	return ct_parse_l4(pkt, l4, l4len, f);
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
static __always_inline void ct_learn(struct ct_flow *f)
{
	__u64 now = bpf_ktime_get_ns(), *last;

	last = bpf_map_lookup_elem(&xfib_ct_pending, &f->ev);
	if (last && now - *last < XFIB_CT_LEARN_RETRY_NS)
		return;
	if (!ct_budget_take(now))
		return;
	bpf_map_update_elem(&xfib_ct_pending, &f->ev, &now, BPF_ANY);
	bpf_ringbuf_output(&xfib_ct_events, &f->ev, sizeof(f->ev), 0);
}

/* ---- the decisions --------------------------------------------------------- */

/* An echo request or reply: forwarded while xfibd says conntrack holds its
 * flow established (xfib_ct_echo); the time of use lets xfibd keep the
 * entry's timeout fresh. */
static __always_inline __u32 ct_echo(struct ct_flow *f)
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
	if (!e || now >= e->valid_until) {
		ct_learn(f);
		return XFIB_PASS_CT_LEARN;
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
	if (status & (IPS_NAT_MASK | IPS_SEQ_ADJUST | IPS_HELPER))
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

/* The size of the kernel's struct bpf_ct_opts, fixed at load time. */
static __always_inline __u32 opts_size(void)
{
	if (bpf_core_field_exists(struct bpf_ct_opts___zone, ct_zone_id))
		return sizeof(struct bpf_ct_opts___xfib);
	return offsetof(struct bpf_ct_opts___xfib, ct_zone_id) + 2;
}

static __always_inline __u32 ct_lookup(struct xdp_md *ctx, struct ct_flow *f,
				       const struct xfib_nf_conf *conf)
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
	bpf_ct_release(ct);
	if (r == XFIB_PASS_CT_LEARN)
		ct_learn(f);
	return r;
}
#else
/* Built without the kfuncs: conntrack cannot be asked. */
static __always_inline __u32 ct_lookup(struct xdp_md *ctx, struct ct_flow *f,
				       const struct xfib_nf_conf *conf)
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

/*
 * The gate proper, for a router with a stateful ruleset: parse, then the
 * echo map or conntrack. Out of line (a BPF-to-BPF call, verified where it
 * is called): the packets of every other router never enter it, and
 * inlined it made their path's code larger, which cost them about 20 ns a
 * packet (BPF_PROG_TEST_RUN, IPv4 and IPv6 alike).
 */
static __noinline __u32 ct_gate_slow(struct xdp_md *ctx,
				      const struct xfib_pkt *pkt,
				      const struct xfib_nf_conf *conf)
{
	struct ct_flow f = {};
	__u32 r;

	r = ct_parse(pkt, &f);
	if (r != XFIB_NEXT)
		return r;
	if (f.ev.proto == IPPROTO_ICMP || f.ev.proto == IPPROTO_ICMPV6)
		return ct_echo(&f);
	return ct_lookup(ctx, &f, conf);
}

/*
 * The netfilter step for a packet the forwarder is about to forward in
 * family fam (XFIB_V4 / XFIB_V6) from port in to port out: XFIB_NEXT to
 * forward it, else the reason it goes to the kernel.
 */
static __always_inline __u32 ct_gate(struct xdp_md *ctx,
				     const struct xfib_pkt *pkt, __u32 fam,
				     __u32 in, __u32 out)
{
	const struct xfib_nf_conf *conf = bpf_map_lookup_elem(&xfib_nf_conf, &fam);

	if (!conf)
		return XFIB_NEXT;
	if (conf->ports && (ct_port_rules(in, XFIB_NF_PORT_IN) ||
			    ct_port_rules(out, XFIB_NF_PORT_OUT)))
		return XFIB_PASS_NETFILTER;
	if (conf->mode == XFIB_NF_OFF)
		return XFIB_NEXT;
	if (conf->mode != XFIB_NF_GATE)
		return XFIB_PASS_NETFILTER;
	return ct_gate_slow(ctx, pkt, conf);
}

#endif /* XFIB_BPF_CTGATE_H */
