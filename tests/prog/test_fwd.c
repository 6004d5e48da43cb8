// SPDX-License-Identifier: GPL-2.0-only
/*
 * Runs the XDP forwarder (bpf/xfib_fwd.bpf.c) with BPF_PROG_TEST_RUN on
 * hand-built frames and checks, for every case, the verdict, that exactly
 * the expected reason counter moved by one packet, and the output bytes.
 * The cases are tables at the end of this file: a frame, the verdict, the
 * counter, the next hop's MAC for a forwarded frame.
 *
 * The maps are private to the test (no pinning) and filled by hand. The
 * program reads ctx->ingress_ifindex and redirects through a DEVMAP_HASH,
 * both of which need real devices, so the test moves itself into a fresh
 * network namespace and creates two veth pairs there:
 *
 *   xt0 (ingress, MAC 02:00:00:00:00:01)   peer xt0p (not known to xfib)
 *   xt1 (egress,  MAC 02:00:00:00:00:02)   peer xt1p
 *
 * Routes (v4 in slot 1, v6 in slot 0; the other slot of each family is
 * filled with blackhole ranges, so a lookup in the wrong slot drops):
 *
 *   198.18.0.0/24   connected on xt1
 *   198.18.1.0/24   local
 *   198.18.2.0/24   unreachable
 *   198.18.3.0/24   blackhole
 *   198.18.5.0/24   via 198.18.0.4 on xt0 (the ingress port)
 *   198.18.6.0/24   unsupported kind
 *   198.18.7.0/24   via 198.18.0.1, route MTU 1280
 *   198.18.8.0/24   via 198.18.0.2 (neighbour INVALID)
 *   198.18.9.0/24   via 198.18.0.3 (neighbour entry on xt0)
 *   198.18.10.0/24  nexthop of an unknown kind
 *   198.18.12.0/24  multipath via 198.18.0.1 and 198.18.0.5 on xt1
 *   198.18.13.0/24  multipath without members
 *   198.18.14.0/24  multipath whose member is multipath
 *   198.18.16.0/24  multipath via 198.18.0.1 on xt1 and 198.18.0.4 on xt0
 *   198.18.17.0/24  connected on xt0, 198.18.17.255 broadcast (local)
 *   198.18.18.0/24  multipath via 198.18.0.1 on xt1 and a blackhole
 *   198.19.0.0/16   via 198.18.0.1 on xt1
 *
 *   2001:db8:0:1::/64     connected on xt1
 *   2001:db8:0:1::99/128  blackhole
 *   2001:db8:0:2::/64     local
 *   2001:db8:0:3::/64     unreachable
 *   2001:db8:0:4::/62     blackhole
 *   2001:db8:1::/48       via 2001:db8:0:1::1 on xt1
 *
 * Everything else has no route (nexthop 0). 25 IPv4 ranges are padded to
 * 32, 12 IPv6 ranges to 16.
 *
 * Exit status: 0 pass, 1 failure, 77 cannot run here (reason on stdout).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <sys/socket.h>

#include <linux/bpf.h>
#include <linux/fib_rules.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "xfib/maps.h"
#include "xfib/counters.h"
#include "xfib/flow_hash.h"
#include "xfib/xfrm.h"
#include "xfib/lookup_dir24.h"
#include "xfib/lookup_trie6.h"
#include "xfib/tbl8_pool.h"
#include "pin.h"
#include "dplookup.h"
#include "reasons.h"
#include "lease.h"

#define SKIP 77
#define FRAME_MAX 2048
#define VLAN_HLEN 4

/* ---- addresses ---------------------------------------------------------- */

static const __u8 mac_in[ETH_ALEN] = { 0x02, 0, 0, 0, 0x00, 0x01 };
static const __u8 mac_out[ETH_ALEN] = { 0x02, 0, 0, 0, 0x00, 0x02 };
static const __u8 mac_host[ETH_ALEN] = { 0x02, 0, 0, 0, 0x00, 0xaa };
static const __u8 mac_other[ETH_ALEN] = { 0x02, 0, 0, 0, 0x00, 0x99 };
static const __u8 mac_bcast[ETH_ALEN] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
static const __u8 mac_mcast[ETH_ALEN] = { 0x01, 0x00, 0x5e, 0x00, 0x00, 0x05 };
static const __u8 mac_lldp[ETH_ALEN] = { 0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e };

/* Neighbours' MACs. */
static const __u8 mac_gw4[ETH_ALEN] = { 0x02, 0, 0, 0, 0x10, 0x01 };
static const __u8 mac_host4[ETH_ALEN] = { 0x02, 0, 0, 0, 0x10, 0x02 };
static const __u8 mac_gw6[ETH_ALEN] = { 0x02, 0, 0, 0, 0x10, 0x05 };
static const __u8 mac_host6[ETH_ALEN] = { 0x02, 0, 0, 0, 0x10, 0x06 };
static const __u8 mac_misc[ETH_ALEN] = { 0x02, 0, 0, 0, 0x10, 0x0f };
static const __u8 mac_gw4b[ETH_ALEN] = { 0x02, 0, 0, 0, 0x10, 0x11 };
static const __u8 mac_gw6b[ETH_ALEN] = { 0x02, 0, 0, 0, 0x10, 0x15 };

#define SRC4 "198.18.200.7"
#define DST4 "198.19.1.1"		/* via the gateway */
#define HOST4 "198.18.0.10"		/* on-link, resolved */
#define SRC6 "2001:db8:ffff::7"
#define DST6 "2001:db8:1::1"		/* via the gateway */
#define HOST6 "2001:db8:0:1::10"	/* on-link, resolved */
#define DFLT4 "198.21.0.5"		/* by main's default route only */
#define DFLT6 "2001:db8:3::5"

/* Nexthop indexes (1 is XFIB_NH_IDX_LOCAL). */
enum {
	NH_GW4 = XFIB_NH_IDX_FIRST_FREE,
	NH_CONN,
	NH_UNREACH,
	NH_BLACKHOLE,
	NH_HAIRPIN,
	NH_UNSUPP,
	NH_GW4_MTU,
	NH_GW4_INVALID,
	NH_GW4_WRONG_IF,
	NH_BOGUS,
	NH_GW6,
	NH_GW4_B,	/* second member of the groups */
	NH_GW6_B,
	NH_GROUP4,	/* group 1: NH_GW4 | NH_GW4_B, half each */
	NH_GROUP6,	/* group 2: NH_GW6 | NH_GW6_B */
	NH_GROUP_EMPTY,	/* group 3: no members */
	NH_GROUP_NESTED, /* group 4: its member is a group */
	NH_CONN_IN,	/* connected on xt0, the ingress port */
	NH_GROUP_RPF,	/* group 5: NH_GW4 (xt1) | NH_HAIRPIN (xt0) */
	NH_GROUP_BH,	/* group 6: NH_GW4 | NH_BLACKHOLE */
	/* suppress_ifgroup's (cases_rules_ifgroup) */
	NH_G7,		/* connected on IF_G7, a port in group 7 */
	NH_G7_6,
	NH_UNKDEV,	/* via a device xfib does not know */
	NH_UNKDEV6,
	NH_GROUP_IFG4,	/* group 7: NH_GW4_B | NH_G7, first device varies */
	NH_GROUP_IFG6,	/* group 8: NH_GW6_B | NH_G7_6 */
};

/* Nexthops of main's default routes, which the walk tells by their
 * index (include/xfib/maps.h): copies of NH_GW4 and NH_GW6. */
enum {
	NH_DFLT4 = XFIB_NH_DFLT_FIRST,
	NH_DFLT6,
};
_Static_assert(NH_DFLT6 < XFIB_NH_IDX_FIRST_FREE && XFIB_NH_IS_DFLT(NH_DFLT4) &&
	       XFIB_NH_IS_DFLT(NH_DFLT6) && !XFIB_NH_IS_DFLT(NH_GW4) &&
	       !XFIB_NH_IS_DFLT(XFIB_NH_IDX_LOCAL),
	       "the default routes' nexthops are in their range, the others not");

/* Multipath groups (xfib_nh_groups indexes). */
enum {
	GRP4 = 1,
	GRP6,
	GRP_EMPTY,
	GRP_NESTED,
	GRP_RPF,
	GRP_BH,
	GRP_IFG4,
	GRP_IFG6,
};

/* Ports the walk reads the group of, and no packet leaves by: one in
 * group 7, and a device xfib does not know (no xfib_ifaces entry). */
#define IF_G7 1000u
#define IF_UNKNOWN 1001u

/* Neighbour indexes (0 is reserved). */
enum {
	NB_GW4 = 1,
	NB_HOST4,
	NB_INVALID,
	NB_WRONG_IF,
	NB_GW6,
	NB_HOST6,
	NB_HOST4_INVALID,
	NB_HAIRPIN,
	NB_GW4_B,
	NB_GW6_B,
};

/* ---- state -------------------------------------------------------------- */

static struct xfib_fwd_bpf *skel;
static int prog_fd;
static int fd_ifaces, fd_active, fd_bs4, fd_bs6, fd_nexthops, fd_neighs;
static int fd_hosts, fd_tx, fd_stats, fd_groups, fd_port_stats, fd_lease;
static int fd_seed;
static __u32 cur_seed;	/* the flow hash seed in xfib_hash_seed */
static int ncpus;
static __u32 if_in, if_out, if_peer;
/* A bridge (no device: only its xfib_ifaces entry) whose members xt0 or
 * xt1 become in the bridge states. */
static __u32 if_br;
/* xt2, the last ifindex xfib_ifaces holds, and xt3, the first beyond. */
static __u32 if_last, if_high;
static __u8 log2n4, log2n6;

static int ncases, nfailed;
static bool reached[XFIB_REASON_COUNT]; /* a case moved the counter */
static bool quiet;	/* harness self-check: report nothing */
static bool terse;	/* print failures only */

static const char *const reason_name[XFIB_REASON_COUNT] = {
#define XFIB_REASON_NAME(name, str, help) [XFIB_##name] = str,
	XFIB_REASONS(XFIB_REASON_NAME)
#undef XFIB_REASON_NAME
};

static const char *verdict_name(__u32 v)
{
	static const char *const names[] = { "XDP_ABORTED", "XDP_DROP",
					     "XDP_PASS", "XDP_TX",
					     "XDP_REDIRECT" };

	return v < sizeof(names) / sizeof(names[0]) ? names[v] : "XDP_?";
}

static void __attribute__((noreturn, format(printf, 1, 2)))
die(const char *fmt, ...)
{
	va_list ap;

	printf("FAIL setup: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	exit(1);
}

static void __attribute__((noreturn)) skip(const char *why)
{
	printf("SKIP: %s\n", why);
	exit(SKIP);
}

/* ---- checksums ---------------------------------------------------------- */

/* Sum of big-endian 16-bit words. */
static __u32 sum16(__u32 sum, const void *data, size_t n)
{
	const __u8 *p = data;

	for (; n > 1; p += 2, n -= 2)
		sum += (__u32)p[0] << 8 | p[1];
	if (n)
		sum += (__u32)p[0] << 8;
	return sum;
}

static __u16 fold(__u32 sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum;
}

/* IPv4 header checksum from scratch over the IHL words at hdr, host
 * order; 0 over a valid header. */
static __u16 ip4_csum(const __u8 *hdr)
{
	return (__u16)~fold(sum16(0, hdr, (hdr[0] & 0xf) * 4));
}

/* ---- frames ------------------------------------------------------------- */

struct frame {
	__u8 b[FRAME_MAX];
	unsigned int len;
	unsigned int l3; /* offset of the IP (or other L3) header */
};

/*
 * Headers live at odd offsets (14, 18) of byte buffers, so they are never
 * accessed through struct pointers: EDIT_IP4/EDIT_IP6 copy the header
 * into h, run stmt, and copy it back.
 */
#define EDIT_HDR(type, f, stmt)                                                \
	do {                                                                   \
		type h;                                                        \
		memcpy(&h, (f).b + (f).l3, sizeof(h));                         \
		stmt;                                                          \
		memcpy((f).b + (f).l3, &h, sizeof(h));                         \
	} while (0)
#define EDIT_IP4(f, stmt) EDIT_HDR(struct iphdr, f, stmt)
#define EDIT_IP6(f, stmt) EDIT_HDR(struct ipv6hdr, f, stmt)

static __u16 get16(const __u8 *p)
{
	return (__u16)(p[0] << 8 | p[1]);
}

static void put16(__u8 *p, __u16 v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

static __be32 addr4(const char *s)
{
	struct in_addr a;

	if (inet_pton(AF_INET, s, &a) != 1)
		die("bad IPv4 address %s", s);
	return a.s_addr;
}

static void addr6(const char *s, void *out)
{
	if (inet_pton(AF_INET6, s, out) != 1)
		die("bad IPv6 address %s", s);
}

/* Ethernet header from the sending host to dst; an 802.1Q tag if tci >= 0. */
static void put_eth(struct frame *f, const __u8 *dst, int tci, __u16 proto)
{
	memcpy(f->b, dst, ETH_ALEN);
	memcpy(f->b + ETH_ALEN, mac_host, ETH_ALEN);
	if (tci < 0) {
		put16(f->b + 12, proto);
		f->l3 = ETH_HLEN;
	} else {
		put16(f->b + 12, ETH_P_8021Q);
		put16(f->b + 14, (__u16)tci);
		put16(f->b + 16, proto);
		f->l3 = ETH_HLEN + VLAN_HLEN;
	}
	f->len = f->l3;
}

/*
 * UDP header and a patterned payload at off, with the checksum over the
 * pseudo-header sum psum.
 */
static void put_udp(struct frame *f, unsigned int off, unsigned int payload,
		    __u32 psum)
{
	struct udphdr uh = {
		.source = htons(40000),
		.dest = htons(5001),
		.len = htons(sizeof(uh) + payload),
	};
	unsigned int i;
	__u32 sum;

	if (off + sizeof(uh) + payload > FRAME_MAX)
		die("frame too large");
	for (i = 0; i < payload; i++)
		f->b[off + sizeof(uh) + i] = (__u8)(i * 7 + 3);
	sum = psum + IPPROTO_UDP + sizeof(uh) + payload;
	sum = sum16(sum, &uh, sizeof(uh));
	sum = sum16(sum, f->b + off + sizeof(uh), payload);
	uh.check = htons((__u16)~fold(sum) ?: 0xffff);
	memcpy(f->b + off, &uh, sizeof(uh));
	f->len = off + sizeof(uh) + payload;
}

/* Recomputes the IPv4 header checksum after a change. */
static void fix4(struct frame *f)
{
	__u8 *hdr = f->b + f->l3;

	put16(hdr + 10, 0);
	put16(hdr + 10, ip4_csum(hdr));
}

/* Eth [+ tag] + IPv4 + UDP with payload bytes. */
static struct frame frame4(int tci, const char *src, const char *dst,
			   __u8 ttl, unsigned int payload)
{
	struct iphdr iph = {
		.version = 4,
		.ihl = 5,
		.tos = 0x28,
		.tot_len = htons(sizeof(iph) + sizeof(struct udphdr) + payload),
		.id = htons(0x1234),
		.frag_off = htons(0x4000), /* DF */
		.ttl = ttl,
		.protocol = IPPROTO_UDP,
		.saddr = addr4(src),
		.daddr = addr4(dst),
	};
	struct frame f;

	memset(&f, 0, sizeof(f));
	put_eth(&f, mac_in, tci, ETH_P_IP);
	memcpy(f.b + f.l3, &iph, sizeof(iph));
	put_udp(&f, f.l3 + sizeof(iph), payload, sum16(0, &iph.saddr, 8));
	fix4(&f);
	return f;
}

/* Eth [+ tag] + IPv6 + UDP with payload bytes. */
static struct frame frame6(int tci, const char *src, const char *dst,
			   __u8 hlim, unsigned int payload)
{
	struct ipv6hdr ip6 = {
		.version = 6,
		.priority = 0x2,
		.flow_lbl = { 0x81, 0x23, 0x45 },
		.payload_len = htons(sizeof(struct udphdr) + payload),
		.nexthdr = IPPROTO_UDP,
		.hop_limit = hlim,
	};
	struct frame f;

	addr6(src, &ip6.saddr);
	addr6(dst, &ip6.daddr);
	memset(&f, 0, sizeof(f));
	put_eth(&f, mac_in, tci, ETH_P_IPV6);
	memcpy(f.b + f.l3, &ip6, sizeof(ip6));
	put_udp(&f, f.l3 + sizeof(ip6), payload, sum16(0, &ip6.saddr, 32));
	return f;
}

static struct frame v4(const char *dst)
{
	return frame4(-1, SRC4, dst, 64, 32);
}

static struct frame v6(const char *dst)
{
	return frame6(-1, SRC6, dst, 64, 32);
}

/* A frame of ethertype proto with some payload (ARP, LLDP, ...). */
static struct frame other(const __u8 *dst, int tci, __u16 proto)
{
	struct frame f;
	unsigned int i;

	memset(&f, 0, sizeof(f));
	put_eth(&f, dst, tci, proto);
	for (i = 0; i < 46; i++)
		f.b[f.l3 + i] = (__u8)i;
	f.len = f.l3 + 46;
	return f;
}

static void set_dmac(struct frame *f, const __u8 *mac)
{
	memcpy(f->b, mac, ETH_ALEN);
}

/* Grows an IPv4 header by 4 bytes of options (NOP NOP NOP EOL). */
static void add_ip4_options(struct frame *f)
{
	unsigned int opt = f->l3 + sizeof(struct iphdr);
	static const __u8 nops[4] = { 1, 1, 1, 0 };

	memmove(f->b + opt + 4, f->b + opt, f->len - opt);
	memcpy(f->b + opt, nops, 4);
	f->len += 4;
	EDIT_IP4(*f, h.ihl = 6; h.tot_len = htons(ntohs(h.tot_len) + 4));
	fix4(f);
}

/*
 * Chooses the IP ID so that the header checksum, as it appears on the wire,
 * is want. Used to put the TTL update on the carry edges.
 */
static void set_csum_by_id(struct frame *f, __u16 want)
{
	__u32 id;

	for (id = 0; id <= 0xffff; id++) {
		put16(f->b + f->l3 + 4, id);
		fix4(f);
		if (get16(f->b + f->l3 + 10) == want)
			return;
	}
	die("no IP ID gives checksum 0x%04x", want);
}

static bool is_v4(const struct frame *f)
{
	return get16(f->b + f->l3 - 2) == ETH_P_IP;
}

/* Appends n bytes of fill after the packet (Ethernet padding or trailing
 * junk); the IP length stays. */
static void add_trailer(struct frame *f, unsigned int n, __u8 fill)
{
	if (f->len + n > FRAME_MAX)
		die("frame too large");
	memset(f->b + f->len, fill, n);
	f->len += n;
}

/* The IP length of a frame as its header says. */
static unsigned int ip_len(const struct frame *f)
{
	return is_v4(f) ? get16(f->b + f->l3 + 2) :
			  get16(f->b + f->l3 + 4) + sizeof(struct ipv6hdr);
}

/*
 * What a forwarded frame must look like: priority tag removed, MACs
 * rewritten, TTL / hop limit one lower, (IPv4) the header checksum as
 * computed from scratch, and, as the kernel does, cut after the IP packet
 * (Ethernet padding and trailing bytes are not forwarded). Every other
 * byte is the input's.
 */
static struct frame forwarded(const struct frame *in, const __u8 *dmac)
{
	struct frame o = *in;

	if (o.l3 == ETH_HLEN + VLAN_HLEN) {
		memmove(o.b + 12, o.b + 16, o.len - 16);
		o.len -= VLAN_HLEN;
		o.l3 -= VLAN_HLEN;
	}
	memcpy(o.b, dmac, ETH_ALEN);
	memcpy(o.b + ETH_ALEN, mac_out, ETH_ALEN);
	if (get16(o.b + 12) == ETH_P_IP) {
		EDIT_IP4(o, h.ttl--);
		fix4(&o);
	} else {
		EDIT_IP6(o, h.hop_limit--);
	}
	if (o.l3 + ip_len(&o) < o.len)
		o.len = o.l3 + ip_len(&o);
	return o;
}

/* ---- maps --------------------------------------------------------------- */

static void update(int fd, const void *key, const void *val, const char *what)
{
	if (bpf_map_update_elem(fd, key, val, BPF_ANY))
		die("update %s: %s", what, strerror(errno));
}

static void delete(int fd, const void *key, const char *what)
{
	if (bpf_map_delete_elem(fd, key))
		die("delete %s: %s", what, strerror(errno));
}

static void get_port(__u32 ifindex, struct xfib_port *p)
{
	if (bpf_map_lookup_elem(fd_ifaces, &ifindex, p))
		die("read xfib_ifaces: %s", strerror(errno));
}

/*
 * As xfibd writes a port (ctl/xfibd/rib/rib_port.c): into the copy not live,
 * then live moves to it. The other copy is filled with a port that is
 * down, forwards nothing and has another MAC, so that a program reading
 * the wrong copy fails every case.
 */
static void put_port(const struct xfib_iface *v)
{
	struct xfib_iface poison = { .mac = { 0x02, 0xee, 0xee, 0xee, 0xee, 0xee },
				     .mtu = 68, .ifindex = v->ifindex,
				     .group = ~v->group };
	__u32 ifindex = v->ifindex;
	struct xfib_port p;

	get_port(ifindex, &p);
	p.live = p.live + 1 ?: 2;
	p.copy[p.live & 1] = *v;
	p.copy[(p.live + 1) & 1] = poison;
	update(fd_ifaces, &ifindex, &p, "xfib_ifaces");
}

static void put_bridge_iface(__u32 ifindex, const __u8 *mac, __u8 flags,
			     __u8 bridge, __u32 master, __u32 mtu)
{
	struct xfib_iface v = { .flags = flags, .mtu = mtu, .ifindex = ifindex,
				.bridge = bridge, .master = master };

	memcpy(v.mac, mac, ETH_ALEN);
	put_port(&v);
}

static void put_iface(__u32 ifindex, const __u8 *mac, __u8 flags)
{
	put_bridge_iface(ifindex, mac, flags, 0, 0, 1500);
}

/* A port in device group group (ip link set ... group). */
static void put_iface_group(__u32 ifindex, const __u8 *mac, __u8 flags,
			    __u32 group)
{
	struct xfib_iface v = { .flags = flags, .mtu = 1500, .ifindex = ifindex,
				.group = group };

	memcpy(v.mac, mac, ETH_ALEN);
	put_port(&v);
}

/* The bridge's (if_br) forwarding database: mac is behind port. */
static void put_fdb(const __u8 *mac, __u32 port, __u8 flags, __u8 moved)
{
	struct xfib_fdb_key k = { .bridge = if_br };
	struct xfib_fdb v = { .port = port, .flags = flags, .moved = moved };

	memcpy(k.mac, mac, ETH_ALEN);
	update(bpf_map__fd(skel->maps.xfib_fdb), &k, &v, "xfib_fdb");
}

static void del_fdb(const __u8 *mac)
{
	struct xfib_fdb_key k = { .bridge = if_br };

	memcpy(k.mac, mac, ETH_ALEN);
	bpf_map_delete_elem(bpf_map__fd(skel->maps.xfib_fdb), &k);
}

/* The port is gone (live 0); its copies stay as they were, valid. */
static void del_iface(__u32 ifindex)
{
	struct xfib_port p;

	get_port(ifindex, &p);
	p.live = 0;
	update(fd_ifaces, &ifindex, &p, "xfib_ifaces");
}

#define IF_ALL (XFIB_IF_UP | XFIB_IF_FWD4 | XFIB_IF_FWD6)

static void put_active(__u32 fam, __u8 algo, __u8 slot, __u8 log2n)
{
	struct xfib_active v = { .algo = algo, .slot = slot, .log2n = log2n,
				 .generation = 1 };

	update(fd_active, &fam, &v, "xfib_active");
}

static void active_default(void)
{
	put_active(XFIB_V4, XFIB_ALGO_BSEARCH4, 1, log2n4);
	put_active(XFIB_V6, XFIB_ALGO_BSEARCH6, 0, log2n6);
}

/* Sets bit b of xfib_nonlocal4 (include/xfib/maps.h), or clears it. */
static void put_nonlocal4(__u32 b, bool set)
{
	int fd = bpf_map__fd(skel->maps.xfib_nonlocal4);
	__u32 w = b / 64;
	__u64 v = 0;

	if (bpf_map_lookup_elem(fd, &w, &v))
		die("xfib_nonlocal4 read: %s", strerror(errno));
	v = set ? v | 1ull << (b % 64) : v & ~(1ull << (b % 64));
	update(fd, &w, &v, "xfib_nonlocal4");
}

/* Every bit of xfib_nonlocal4 set: no source can be local. */
static void put_nonlocal4_all(void)
{
	int fd = bpf_map__fd(skel->maps.xfib_nonlocal4);
	__u64 v = ~0ull;
	__u32 w;

	for (w = 0; w < XFIB_NONLOCAL4_WORDS; w++)
		update(fd, &w, &v, "xfib_nonlocal4");
}

static void put_tx_port(__u32 ifindex)
{
	struct bpf_devmap_val v = { .ifindex = ifindex };

	update(fd_tx, &ifindex, &v, "xfib_tx_ports");
}

static __u8 log2_ceil(unsigned int n)
{
	__u8 l = 0;

	while ((1u << l) < n)
		l++;
	return l;
}

/* Writes n ranges into slot, padded to 2^log2n by repeating the last. */
static __u8 put_bs4(__u32 slot, const struct xfib_bs4_range *r, unsigned int n)
{
	__u8 l = log2_ceil(n);
	__u32 i, idx;

	for (i = 0; i < (1u << l); i++) {
		idx = slot * XFIB_BS4_SLOT_SIZE + i;
		update(fd_bs4, &idx, &r[i < n ? i : n - 1], "xfib_bs4");
	}
	return l;
}

static __u8 put_bs6(__u32 slot, const struct xfib_bs6_range *r, unsigned int n)
{
	__u8 l = log2_ceil(n);
	__u32 i, idx;

	for (i = 0; i < (1u << l); i++) {
		idx = slot * XFIB_BS6_SLOT_SIZE + i;
		update(fd_bs6, &idx, &r[i < n ? i : n - 1], "xfib_bs6");
	}
	return l;
}

/* a.b.c.d in host order. */
#define H4(a, b, c, d) ((__u32)(a) << 24 | (__u32)(b) << 16 | (c) << 8 | (d))
/* 2001:db8:x:y::, upper half in host order. */
#define H6(x, y) (0x20010db800000000ull | (__u64)(x) << 16 | (y))

static void put_nexthop(__u32 idx, __u8 kind, __u32 ifindex, __u32 neigh,
			__u16 mtu)
{
	struct xfib_nexthop v = { .kind = kind, .ifindex = ifindex,
				  .neigh = neigh, .mtu = mtu };

	update(fd_nexthops, &idx, &v, "xfib_nexthops");
}

/* Group gidx at nexthop idx: buckets below split take a, the rest b;
 * first: the device of the route's first path (include/xfib/maps.h). */
static void put_group_first(__u32 idx, __u32 gidx, __u32 split, __u32 a,
			    __u32 b, __u32 first)
{
	struct xfib_nexthop v = { .kind = XFIB_NH_GROUP, .group = gidx,
				  .ifindex = first };
	struct xfib_nh_group g;
	__u32 i;

	for (i = 0; i < XFIB_GROUP_BUCKETS; i++)
		g.nh[i] = i < split ? a : b;
	update(fd_groups, &gidx, &g, "xfib_nh_groups");
	update(fd_nexthops, &idx, &v, "xfib_nexthops");
}

static void put_group(__u32 idx, __u32 gidx, __u32 split, __u32 a, __u32 b)
{
	put_group_first(idx, gidx, split, a, b, if_out);
}

static void put_neigh(__u32 idx, int family, const char *addr, const __u8 *dmac,
		      __u8 state, __u32 ifindex)
{
	struct xfib_neigh v = { .state = state, .family = family,
				.ifindex = ifindex };

	memcpy(v.dmac, dmac, ETH_ALEN);
	memcpy(v.smac, ifindex == if_in ? mac_in : mac_out, ETH_ALEN);
	if (family == AF_INET) {
		__be32 a = addr4(addr);

		memcpy(v.addr, &a, 4);
	} else {
		addr6(addr, v.addr);
	}
	update(fd_neighs, &idx, &v, "xfib_neighs");
}

static void put_host(__u32 ifindex, int family, const char *addr, __u32 nb)
{
	struct xfib_neigh_key k = { .ifindex = ifindex, .family = family };

	if (family == AF_INET) {
		__be32 a = addr4(addr);

		memcpy(k.addr, &a, 4);
	} else {
		addr6(addr, k.addr);
	}
	update(fd_hosts, &k, &nb, "xfib_neigh_hosts");
}

/* xfibd's lease on the mirror runs until until (CLOCK_MONOTONIC_COARSE). */
static void put_lease(__u64 until)
{
	struct xfib_lease l = { .until = until, .lease_ms = 10000, .pid = 1 };

	update(fd_lease, &(__u32){ 0 }, &l, "lease");
}

/* A lease that runs through the whole test, by the real clock: the
 * program compares it with its own reading of the clock. */
static void lease_default(void)
{
	put_lease(xfib_lease_clock() + 3600 * 1000000000ull);
}

/* The router's flow hash seed, for the program and for second_half(). */
static void put_seed(__u32 seed)
{
	struct xfib_hash_seed v = { .seed = seed, .origin = XFIB_SEED_SET };

	update(fd_seed, &(__u32){ 0 }, &v, "hash seed");
	cur_seed = seed;
}

static void fill_maps(void)
{
	static const struct xfib_bs4_range r4[] = {
		{ 0, XFIB_NH_IDX_NONE },
		{ H4(198, 18, 0, 0), NH_CONN },
		{ H4(198, 18, 1, 0), XFIB_NH_IDX_LOCAL },
		{ H4(198, 18, 2, 0), NH_UNREACH },
		{ H4(198, 18, 3, 0), NH_BLACKHOLE },
		{ H4(198, 18, 4, 0), XFIB_NH_IDX_NONE },
		{ H4(198, 18, 5, 0), NH_HAIRPIN },
		{ H4(198, 18, 6, 0), NH_UNSUPP },
		{ H4(198, 18, 7, 0), NH_GW4_MTU },
		{ H4(198, 18, 8, 0), NH_GW4_INVALID },
		{ H4(198, 18, 9, 0), NH_GW4_WRONG_IF },
		{ H4(198, 18, 10, 0), NH_BOGUS },
		{ H4(198, 18, 11, 0), XFIB_NH_IDX_NONE },
		{ H4(198, 18, 12, 0), NH_GROUP4 },
		{ H4(198, 18, 13, 0), NH_GROUP_EMPTY },
		{ H4(198, 18, 14, 0), NH_GROUP_NESTED },
		{ H4(198, 18, 15, 0), XFIB_NH_IDX_NONE },
		{ H4(198, 18, 16, 0), NH_GROUP_RPF },
		{ H4(198, 18, 17, 0), NH_CONN_IN },
		{ H4(198, 18, 17, 255), XFIB_NH_IDX_LOCAL },
		{ H4(198, 18, 18, 0), NH_GROUP_BH },
		{ H4(198, 18, 19, 0), XFIB_NH_IDX_NONE },
		{ H4(198, 19, 0, 0), NH_GW4 },
		{ H4(198, 20, 0, 0), XFIB_NH_IDX_NONE },
		{ H4(198, 21, 0, 0), NH_DFLT4 },	/* main's default route */
		{ H4(198, 22, 0, 0), XFIB_NH_IDX_NONE },
	};
	static const struct xfib_bs6_range r6[] = {
		{ 0, 0, XFIB_NH_IDX_NONE, 0 },
		{ H6(0, 1), 0, NH_CONN, 0 },
		{ H6(0, 1), 0x99, NH_BLACKHOLE, 0 },
		{ H6(0, 1), 0x9a, NH_CONN, 0 },
		{ H6(0, 2), 0, XFIB_NH_IDX_LOCAL, 0 },
		{ H6(0, 3), 0, NH_UNREACH, 0 },
		{ H6(0, 4), 0, NH_BLACKHOLE, 0 },
		{ H6(0, 8), 0, XFIB_NH_IDX_NONE, 0 },
		{ H6(0, 9), 0, NH_GROUP6, 0 },
		{ H6(0, 10), 0, XFIB_NH_IDX_NONE, 0 },
		{ H6(1, 0), 0, NH_GW6, 0 },
		{ H6(2, 0), 0, XFIB_NH_IDX_NONE, 0 },
		{ H6(3, 0), 0, NH_DFLT6, 0 },	/* main's default route */
		{ H6(4, 0), 0, XFIB_NH_IDX_NONE, 0 },
	};
	struct xfib_bs4_range trap4[sizeof(r4) / sizeof(r4[0])];
	struct xfib_bs6_range trap6[sizeof(r6) / sizeof(r6[0])];
	unsigned int n4 = sizeof(r4) / sizeof(r4[0]);
	unsigned int n6 = sizeof(r6) / sizeof(r6[0]);
	unsigned int i;

	put_iface(if_in, mac_in, IF_ALL);
	put_iface(if_out, mac_out, IF_ALL);
	/* Only the egress port is attached: bpf_redirect_map() with any
	 * other key falls back to XDP_PASS, so XDP_REDIRECT also proves the
	 * target was xt1. */
	put_tx_port(if_out);

	/* Active slots, and the standby slots full of blackholes. */
	log2n4 = put_bs4(1, r4, n4);
	log2n6 = put_bs6(0, r6, n6);
	for (i = 0; i < n4; i++)
		trap4[i] = (struct xfib_bs4_range){ r4[i].start, NH_BLACKHOLE };
	for (i = 0; i < n6; i++) {
		trap6[i] = r6[i];
		trap6[i].nh = NH_BLACKHOLE;
	}
	put_bs4(0, trap4, n4);
	put_bs6(1, trap6, n6);
	if (log2n4 != 5 || log2n6 != 4)
		die("unexpected log2n %u/%u", log2n4, log2n6);
	active_default();

	/* xfib_nonlocal4 as xfibd writes it for the local answers above: all
	 * set but the /24's /16 bit and the broadcast /32's hash slot bit. */
	put_nonlocal4_all();
	put_nonlocal4(XFIB_NONLOCAL4_BLOCK_BIT(H4(198, 18, 1, 0)), false);
	put_nonlocal4(XFIB_NONLOCAL4_SLOT_BIT(H4(198, 18, 17, 255)), false);
	put_nexthop(XFIB_NH_IDX_LOCAL, XFIB_NH_LOCAL, 0, 0, 0);
	put_nexthop(NH_GW4, XFIB_NH_GATEWAY, if_out, NB_GW4, 0);
	put_nexthop(NH_CONN, XFIB_NH_CONNECTED, if_out, 0, 0);
	put_nexthop(NH_UNREACH, XFIB_NH_UNREACHABLE, 0, 0, 0);
	put_nexthop(NH_BLACKHOLE, XFIB_NH_BLACKHOLE, 0, 0, 0);
	put_nexthop(NH_HAIRPIN, XFIB_NH_GATEWAY, if_in, NB_HAIRPIN, 0);
	put_nexthop(NH_UNSUPP, XFIB_NH_UNSUPPORTED, if_out, 0, 0);
	put_nexthop(NH_GW4_MTU, XFIB_NH_GATEWAY, if_out, NB_GW4, 1280);
	put_nexthop(NH_GW4_INVALID, XFIB_NH_GATEWAY, if_out, NB_INVALID, 0);
	put_nexthop(NH_GW4_WRONG_IF, XFIB_NH_GATEWAY, if_out, NB_WRONG_IF, 0);
	put_nexthop(NH_BOGUS, 200, if_out, NB_GW4, 0);
	put_nexthop(NH_GW6, XFIB_NH_GATEWAY, if_out, NB_GW6, 0);
	put_nexthop(NH_DFLT4, XFIB_NH_GATEWAY, if_out, NB_GW4, 0);
	put_nexthop(NH_DFLT6, XFIB_NH_GATEWAY, if_out, NB_GW6, 0);
	put_nexthop(NH_GW4_B, XFIB_NH_GATEWAY, if_out, NB_GW4_B, 0);
	put_nexthop(NH_GW6_B, XFIB_NH_GATEWAY, if_out, NB_GW6_B, 0);
	put_group(NH_GROUP4, GRP4, 128, NH_GW4, NH_GW4_B);
	put_group(NH_GROUP6, GRP6, 128, NH_GW6, NH_GW6_B);
	put_group(NH_GROUP_EMPTY, GRP_EMPTY, 0, 0, 0);
	put_group(NH_GROUP_NESTED, GRP_NESTED, 0, 0, NH_GROUP4);
	put_nexthop(NH_CONN_IN, XFIB_NH_CONNECTED, if_in, 0, 0);
	put_group(NH_GROUP_RPF, GRP_RPF, 128, NH_GW4, NH_HAIRPIN);
	put_group(NH_GROUP_BH, GRP_BH, 128, NH_GW4, NH_BLACKHOLE);

	put_neigh(NB_GW4, AF_INET, "198.18.0.1", mac_gw4, XFIB_NEIGH_VALID,
		  if_out);
	put_neigh(NB_HOST4, AF_INET, HOST4, mac_host4, XFIB_NEIGH_VALID,
		  if_out);
	put_neigh(NB_INVALID, AF_INET, "198.18.0.2", mac_misc,
		  XFIB_NEIGH_INVALID, if_out);
	put_neigh(NB_WRONG_IF, AF_INET, "198.18.0.3", mac_misc,
		  XFIB_NEIGH_VALID, if_in);
	put_neigh(NB_GW6, AF_INET6, "2001:db8:0:1::1", mac_gw6,
		  XFIB_NEIGH_VALID, if_out);
	put_neigh(NB_HOST6, AF_INET6, HOST6, mac_host6, XFIB_NEIGH_VALID,
		  if_out);
	put_neigh(NB_HOST4_INVALID, AF_INET, "198.18.0.11", mac_misc,
		  XFIB_NEIGH_INVALID, if_out);
	put_neigh(NB_HAIRPIN, AF_INET, "198.18.0.4", mac_misc,
		  XFIB_NEIGH_VALID, if_in);
	put_neigh(NB_GW4_B, AF_INET, "198.18.0.5", mac_gw4b, XFIB_NEIGH_VALID,
		  if_out);
	put_neigh(NB_GW6_B, AF_INET6, "2001:db8:0:1::5", mac_gw6b,
		  XFIB_NEIGH_VALID, if_out);

	put_host(if_out, AF_INET, HOST4, NB_HOST4);
	put_host(if_out, AF_INET, "198.18.0.11", NB_HOST4_INVALID);
	put_host(if_out, AF_INET6, HOST6, NB_HOST6);
	/* The right address on the wrong port must not match. */
	put_host(if_in, AF_INET, "198.18.0.12", NB_HOST4);
	lease_default();
	put_seed(0x5eed0001);
}

/* ---- stats -------------------------------------------------------------- */

static void stats_reset(void)
{
	struct xfib_counter zero[ncpus];
	__u32 k;

	memset(zero, 0, sizeof(zero));
	for (k = 0; k < XFIB_REASON_COUNT; k++)
		update(fd_stats, &k, zero, "xfib_stats");
}

static void stats_read(struct xfib_counter *sum)
{
	struct xfib_counter v[ncpus];
	__u32 k;
	int c;

	for (k = 0; k < XFIB_REASON_COUNT; k++) {
		if (bpf_map_lookup_elem(fd_stats, &k, v))
			die("read xfib_stats: %s", strerror(errno));
		sum[k] = (struct xfib_counter){ 0, 0 };
		for (c = 0; c < ncpus; c++) {
			sum[k].packets += v[c].packets;
			sum[k].bytes += v[c].bytes;
		}
	}
}

/* The per-port counters of the ports a case can touch, zeroed. */
static void port_stats_reset(void)
{
	struct xfib_port_counters zero[ncpus];
	__u32 ports[] = { if_in, if_out, if_peer, if_last };
	unsigned int i;

	memset(zero, 0, sizeof(zero));
	for (i = 0; i < sizeof(ports) / sizeof(ports[0]); i++)
		update(fd_port_stats, &ports[i], zero, "xfib_port_stats");
}

static void port_stats_read(__u32 ifindex, struct xfib_port_counters *sum)
{
	struct xfib_port_counters v[ncpus];
	unsigned int k;
	int c;

	if (bpf_map_lookup_elem(fd_port_stats, &ifindex, v))
		die("read xfib_port_stats: %s", strerror(errno));
	memset(sum, 0, sizeof(*sum));
	for (c = 0; c < ncpus; c++) {
		for (k = 0; k < XFIB_REASON_COUNT; k++) {
			sum->in[k].packets += v[c].in[k].packets;
			sum->in[k].bytes += v[c].in[k].bytes;
		}
		sum->tx.packets += v[c].tx.packets;
		sum->tx.bytes += v[c].tx.bytes;
	}
}

/* ---- running ------------------------------------------------------------ */

struct result {
	int err; /* 0 or -errno of the test run itself */
	__u32 verdict;
	__u32 out_len;
	__u8 out[4096];
	struct xfib_counter cnt[XFIB_REASON_COUNT];
	struct xfib_port_counters port_in;  /* the ingress port's */
	struct xfib_port_counters port_out; /* xt1's, the egress */
};

/* Runs the first len bytes of f as received on ifindex. */
static void run_prog(const struct frame *f, unsigned int len, __u32 ifindex,
		     struct result *r)
{
	struct xdp_md ctx = { .data = 0, .data_end = len,
			      .ingress_ifindex = ifindex };
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		.data_in = f->b,
		.data_size_in = len,
		.data_out = r->out,
		.data_size_out = sizeof(r->out),
		.ctx_in = &ctx,
		.ctx_size_in = sizeof(ctx),
		.repeat = 1,
	);

	stats_reset();
	port_stats_reset();
	r->err = bpf_prog_test_run_opts(prog_fd, &opts) ? -errno : 0;
	r->verdict = opts.retval;
	r->out_len = opts.data_size_out;
	stats_read(r->cnt);
	/* xfib_port_stats has no entry beyond XFIB_PORT_MAX. */
	memset(&r->port_in, 0, sizeof(r->port_in));
	if (ifindex < XFIB_PORT_MAX)
		port_stats_read(ifindex, &r->port_in);
	port_stats_read(if_out, &r->port_out);
}


/* Names the field at offset off of a frame laid out like f. */
static const char *field(const struct frame *f, unsigned int off)
{
	static const char *const f4[20] = {
		"ip version/ihl", "ip tos", "ip tot_len", "ip tot_len",
		"ip id", "ip id", "ip frag_off", "ip frag_off", "ip ttl",
		"ip protocol", "ip check", "ip check", "ip saddr", "ip saddr",
		"ip saddr", "ip saddr", "ip daddr", "ip daddr", "ip daddr",
		"ip daddr"
	};
	unsigned int l3 = f->l3;

	if (off < 6)
		return "eth dst";
	if (off < 12)
		return "eth src";
	if (off < l3 - 2)
		return "vlan tag";
	if (off < l3)
		return "ethertype";
	if (is_v4(f) && off < l3 + 20)
		return f4[off - l3];
	if (!is_v4(f) && off < l3 + 40) {
		off -= l3;
		return off < 4 ? "ip6 version/class/flow" :
		       off < 6 ? "ip6 payload_len" :
		       off == 6 ? "ip6 nexthdr" :
		       off == 7 ? "ip6 hop_limit" :
		       off < 24 ? "ip6 saddr" : "ip6 daddr";
	}
	return "payload";
}

/* Rows (16 bytes) of want and got that differ, with the differing bytes
 * marked. */
static void hexdiff(const __u8 *want, unsigned int wlen, const __u8 *got,
		    unsigned int glen)
{
	unsigned int max = wlen > glen ? wlen : glen, row, i, shown = 0;

	printf("      offset  expected (%u bytes) / actual (%u bytes)\n", wlen,
	       glen);
	for (row = 0; row < max; row += 16) {
		bool diff = false;

		for (i = row; i < row + 16 && i < max; i++)
			if (i >= wlen || i >= glen || want[i] != got[i])
				diff = true;
		if (!diff)
			continue;
		if (++shown > 12) {
			printf("      ...\n");
			break;
		}
		printf("      %04x  exp", row);
		for (i = row; i < row + 16 && i < max; i++) {
			if (i < wlen)
				printf(" %02x", want[i]);
			else
				printf("   ");
		}
		printf("\n            got");
		for (i = row; i < row + 16 && i < max; i++) {
			if (i < glen)
				printf(" %02x", got[i]);
			else
				printf("   ");
		}
		printf("\n               ");
		for (i = row; i < row + 16 && i < max; i++) {
			if (i >= wlen || i >= glen || want[i] != got[i])
				printf(" ^^");
			else
				printf("   ");
		}
		printf("\n");
	}
}

#define V(x) (1u << (x))

static void say_fail(bool *first, const char *name)
{
	if (*first && !quiet)
		printf("FAIL %s\n", name);
	*first = false;
}

/*
 * The per-port counters agree with the router's: the ingress port counted
 * the packet under the same reason, and the egress port (xt1) sent out
 * the output frame if it was redirected, else nothing. Counts mismatches.
 */
static int check_port_counters(const char *name, bool *first,
			       const struct result *r, __u32 ifindex)
{
	bool redirect = r->verdict == XDP_REDIRECT;
	int bad = 0;
	unsigned int k;

	for (k = 0; k < XFIB_REASON_COUNT && ifindex < XFIB_PORT_MAX; k++) {
		if (r->port_in.in[k].packets == r->cnt[k].packets &&
		    r->port_in.in[k].bytes == r->cnt[k].bytes)
			continue;
		say_fail(first, name);
		if (!quiet)
			printf("    port counter %s moved by %llu / %llu, the router's by %llu / %llu\n",
			       reason_name[k],
			       (unsigned long long)r->port_in.in[k].packets,
			       (unsigned long long)r->port_in.in[k].bytes,
			       (unsigned long long)r->cnt[k].packets,
			       (unsigned long long)r->cnt[k].bytes);
		bad++;
	}
	if (r->port_out.tx.packets != (redirect ? 1u : 0u) ||
	    r->port_out.tx.bytes != (redirect ? r->out_len : 0u) ||
	    (ifindex != if_out && r->port_in.tx.packets)) {
		say_fail(first, name);
		if (!quiet)
			printf("    egress port sent %llu / %llu, expected %u / %u\n",
			       (unsigned long long)r->port_out.tx.packets,
			       (unsigned long long)r->port_out.tx.bytes,
			       redirect ? 1 : 0, redirect ? r->out_len : 0);
		bad++;
	}
	return bad;
}

/*
 * Runs the first len bytes of f as received on ifindex and compares with
 * the expectation: a verdict in the mask verdicts, exactly one packet of
 * len bytes on counter reason and nothing on any other, and the output
 * frame want (NULL: the input, unchanged). Returns the number of
 * mismatches; prints the case and what differed.
 */
static int check(const char *name, const struct frame *f, unsigned int len,
		 __u32 ifindex, __u32 verdicts, int reason,
		 const struct frame *want)
{
	static struct result r;
	const __u8 *wb = want ? want->b : f->b;
	unsigned int wlen = want ? want->len : len, k;
	bool first = true;
	int bad = 0;

	run_prog(f, len, ifindex, &r);
	if (r.err) {
		say_fail(&first, name);
		if (!quiet)
			printf("    test run failed: %s\n", strerror(-r.err));
		bad++;
		goto out;
	}
	if (r.verdict >= 32 || !(verdicts & V(r.verdict))) {
		say_fail(&first, name);
		if (!quiet) {
			printf("    verdict %s (%u), expected", verdict_name(r.verdict),
			       r.verdict);
			for (k = 0; k < 32; k++)
				if (verdicts & V(k))
					printf(" %s", verdict_name(k));
			printf("\n");
		}
		bad++;
	}
	for (k = 0; k < XFIB_REASON_COUNT; k++) {
		__u64 wp = (int)k == reason ? 1 : 0;

		if (!quiet && r.cnt[k].packets)
			reached[k] = true;

		if (r.cnt[k].packets == wp && r.cnt[k].bytes == wp * len)
			continue;
		say_fail(&first, name);
		if (!quiet)
			printf("    counter %s moved by %llu packets / %llu bytes, expected %llu / %llu\n",
			       reason_name[k],
			       (unsigned long long)r.cnt[k].packets,
			       (unsigned long long)r.cnt[k].bytes,
			       (unsigned long long)wp,
			       (unsigned long long)(wp * len));
		bad++;
	}
	bad += check_port_counters(name, &first, &r, ifindex);
	if (r.out_len != wlen || memcmp(r.out, wb, wlen)) {
		say_fail(&first, name);
		if (!quiet) {
			for (k = 0; k < wlen && k < r.out_len; k++)
				if (r.out[k] != wb[k])
					break;
			if (k < wlen && k < r.out_len)
				printf("    output differs, first at offset %u (%s)\n",
				       k, field(want ? want : f, k));
			else
				printf("    output length %u, expected %u\n",
				       r.out_len, wlen);
			hexdiff(wb, wlen, r.out, r.out_len);
		}
		bad++;
	}
	/* Independent of the expected frame: a forwarded IPv4 header must
	 * carry a valid checksum. */
	if (r.verdict == XDP_REDIRECT && r.out_len >= ETH_HLEN + 20 &&
	    get16(r.out + 12) == ETH_P_IP &&
	    ip4_csum(r.out + ETH_HLEN) != 0) {
		say_fail(&first, name);
		if (!quiet)
			printf("    output IPv4 header checksum 0x%04x does not verify\n",
			       get16(r.out + ETH_HLEN + 10));
		bad++;
	}
out:
	if (!quiet) {
		ncases++;
		if (bad)
			nfailed++;
		else if (!terse)
			printf("ok   %s\n", name);
	}
	return bad;
}

static void expect_fwd(const char *name, const struct frame *f,
		       const __u8 *dmac)
{
	struct frame want = forwarded(f, dmac);

	check(name, f, f->len, if_in, V(XDP_REDIRECT),
	      is_v4(f) ? XFIB_FWD_V4 : XFIB_FWD_V6, &want);
}

/*
 * Every prefix of a forwardable frame: never redirected, pass_malformed
 * counted, nothing written. Then the whole frame, which is forwarded.
 */
static void expect_truncated(const char *name, const struct frame *f,
			     const __u8 *dmac)
{
	static struct result r;
	int before = nfailed;
	unsigned int len;
	char buf[128];

	terse = true;
	for (len = 0; len < f->len; len++) {
		snprintf(buf, sizeof(buf), "%s truncated to %u bytes", name,
			 len);
		if (len >= ETH_HLEN) {
			check(buf, f, len, if_in, V(XDP_PASS) | V(XDP_DROP),
			      XFIB_PASS_MALFORMED, NULL);
			continue;
		}
		/* bpf_prog_test_run_xdp() refuses frames shorter than an
		 * Ethernet header with -EINVAL (bpf_test_init()): the program
		 * never sees them, so the run itself must fail that way. */
		run_prog(f, len, if_in, &r);
		ncases++;
		if (r.err != -EINVAL) {
			nfailed++;
			printf("FAIL %s\n    test run returned %d (%s), expected -EINVAL\n",
			       buf, r.err, r.err ? strerror(-r.err) : "ok");
		}
	}
	terse = false;
	if (nfailed == before)
		printf("ok   %s truncated to every length 0..%u\n", name,
		       f->len - 1);
	snprintf(buf, sizeof(buf), "%s, whole (%u bytes)", name, f->len);
	expect_fwd(buf, f, dmac);
}

/* ---- setup -------------------------------------------------------------- */

static void sh(const char *cmd)
{
	if (system(cmd) != 0) {
		printf("SKIP: '%s' failed: cannot create test devices\n", cmd);
		exit(SKIP);
	}
}

static __u32 ifindex_of(const char *name)
{
	__u32 i = if_nametoindex(name);

	if (!i)
		die("no ifindex for %s: %s", name, strerror(errno));
	return i;
}

/*
 * A fresh network namespace, whether or not the test already runs in a
 * private one: the device names below cannot clash with anything, and
 * everything vanishes when the process exits.
 */
static void setup_netns(void)
{
	char cmd[256];

	if (unshare(CLONE_NEWNET)) {
		printf("SKIP: unshare(CLONE_NEWNET): %s\n", strerror(errno));
		exit(SKIP);
	}
	/* type dummy needs a module that cannot be loaded here: veth. */
	sh("ip link add xt0 type veth peer name xt0p");
	sh("ip link add xt1 type veth peer name xt1p");
	snprintf(cmd, sizeof(cmd),
		 "ip link add xt2 index %u type veth peer name xt2p && "
		 "ip link add xt3 index %u type veth peer name xt3p",
		 XFIB_PORT_MAX - 1, XFIB_PORT_MAX);
	sh(cmd);
	sh("ip link set dev lo up && ip link set dev xt0 up && "
	   "ip link set dev xt0p up && ip link set dev xt1 up && "
	   "ip link set dev xt1p up && ip link set dev xt2 up && "
	   "ip link set dev xt2p up && ip link set dev xt3 up && "
	   "ip link set dev xt3p up");
	if_in = ifindex_of("xt0");
	if_out = ifindex_of("xt1");
	if_peer = ifindex_of("xt0p");
	if_last = ifindex_of("xt2");
	if_br = if_last - 1;
	if_high = ifindex_of("xt3");
	if (if_last != XFIB_PORT_MAX - 1 || if_high != XFIB_PORT_MAX)
		die("xt2, xt3 have ifindex %u, %u, asked for %u, %u", if_last,
		    if_high, XFIB_PORT_MAX - 1, XFIB_PORT_MAX);
}

static int prog_info(int fd, struct bpf_prog_info *info)
{
	__u32 len = sizeof(*info);

	memset(info, 0, sizeof(*info));
#if LIBBPF_MAJOR_VERSION > 1 || \
	(LIBBPF_MAJOR_VERSION == 1 && LIBBPF_MINOR_VERSION >= 2)
	return bpf_prog_get_info_by_fd(fd, info, &len);
#else
	/* libbpf < 1.2 has only the generic call. */
	return bpf_obj_get_info_by_fd(fd, info, &len);
#endif
}

static void load(void)
{
	struct bpf_prog_info info;
	struct bpf_map *map;
	int err;

	skel = xfib_fwd_open(NULL, xfib_ct_kfuncs()); /* the build attach would load */
	if (!skel)
		die("open skeleton: %s", strerror(errno));
	/* Private maps: nothing is pinned or reused from /sys/fs/bpf. */
	bpf_object__for_each_map(map, skel->obj) {
		err = bpf_map__set_pin_path(map, NULL);
		if (err)
			die("unpin %s: %s", bpf_map__name(map), strerror(-err));
	}
	err = xfib_fwd_bpf__load(skel);
	if (err)
		die("load (verifier log above, if any): %s", strerror(-err));

	prog_fd = bpf_program__fd(skel->progs.xfib_fwd);
	fd_ifaces = bpf_map__fd(skel->maps.xfib_ifaces);
	fd_active = bpf_map__fd(skel->maps.xfib_active);
	fd_bs4 = bpf_map__fd(skel->maps.xfib_bs4);
	fd_bs6 = bpf_map__fd(skel->maps.xfib_bs6);
	fd_nexthops = bpf_map__fd(skel->maps.xfib_nexthops);
	fd_neighs = bpf_map__fd(skel->maps.xfib_neighs);
	fd_hosts = bpf_map__fd(skel->maps.xfib_neigh_hosts);
	fd_tx = bpf_map__fd(skel->maps.xfib_tx_ports);
	fd_stats = bpf_map__fd(skel->maps.xfib_stats);
	fd_groups = bpf_map__fd(skel->maps.xfib_nh_groups);
	fd_port_stats = bpf_map__fd(skel->maps.xfib_port_stats);
	fd_lease = bpf_map__fd(skel->maps.xfib_lease);
	fd_seed = bpf_map__fd(skel->maps.xfib_hash_seed);

	if (prog_info(prog_fd, &info))
		die("bpf_prog_get_info_by_fd: %s", strerror(errno));
	ncases++;
	if (strcmp(info.name, "xfib_fwd")) {
		nfailed++;
		printf("FAIL program name is \"%s\", expected \"xfib_fwd\"\n",
		       info.name);
	} else {
		printf("ok   program name is \"xfib_fwd\"\n");
	}
	printf("info xlated %u insns, jited %u bytes, verifier processed %u insns\n",
	       info.xlated_prog_len / (__u32)sizeof(struct bpf_insn),
	       info.jited_prog_len, info.verified_insns);
}

/* ---- case tables -------------------------------------------------------- */

/* A frame to send: Ethernet [+ tag] + IPv4 or IPv6 + UDP, or Ethernet
 * [+ tag] + 46 bytes of another ethertype. */
struct pkt_desc {
	int ip;			/* 4, 6, or 0 for a frame of ethertype proto */
	int tci;		/* 802.1Q tag, -1 for none */
	const char *src;
	const char *dst;
	__u8 ttl;		/* TTL or hop limit */
	unsigned int payload;	/* UDP payload bytes */
	__u16 proto;
};

/* The usual frames: from SRC4/SRC6, TTL 64, 32 bytes of payload. */
#define V4(dst) .pkt = { 4, -1, SRC4, dst, 64, 32, 0 }
#define V6(dst) .pkt = { 6, -1, SRC6, dst, 64, 32, 0 }
#define F4(tci, src, dst, ttl, payload) \
	.pkt = { 4, tci, src, dst, ttl, payload, 0 }
#define F6(tci, src, dst, hlim, payload) \
	.pkt = { 6, tci, src, dst, hlim, payload, 0 }
#define OTHER(tci, proto) .pkt = { 0, tci, NULL, NULL, 0, 0, proto }

/*
 * One case: the frame, received on the ingress port (xt0), and what must
 * happen to it: the verdict, the one counter that moves by one packet,
 * and for XDP_REDIRECT the next hop's MAC in the output frame
 * (forwarded()); the other verdicts must leave the frame as it was.
 */
struct fwd_case {
	const char *name;
	struct pkt_desc pkt;
	__u32 verdict;
	int reason;
	const __u8 *next_mac;
	void (*edit)(struct frame *f); /* a change after building, or NULL */
	const __u8 *dmac;   /* the frame's destination MAC; NULL: xt0's */
	bool from_peer;	    /* received on xt0p, a port xfib does not know */
	const __u32 *iif;   /* received on this port; NULL: xt0 (or xt0p) */
};

#define FWD4(mac) \
	.verdict = XDP_REDIRECT, .reason = XFIB_FWD_V4, .next_mac = mac
#define FWD6(mac) \
	.verdict = XDP_REDIRECT, .reason = XFIB_FWD_V6, .next_mac = mac
#define PASS(r) .verdict = XDP_PASS, .reason = r
#define DROP(r) .verdict = XDP_DROP, .reason = r

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static struct frame build(const struct pkt_desc *p)
{
	if (p->ip == 4)
		return frame4(p->tci, p->src, p->dst, p->ttl, p->payload);
	if (p->ip == 6)
		return frame6(p->tci, p->src, p->dst, p->ttl, p->payload);
	return other(mac_in, p->tci, p->proto);
}

/* ---- the same question to xfibctl's lookup ------------------------------ */

/*
 * xfibctl lookup and verify answer from ctl/lib/dplookup.c, which runs the
 * program's decision code (include/xfib/decide.h) over the same maps from
 * userspace, for a destination, or with --from and --iif for a source and
 * an ingress port, rather than for a frame. Every case of an IP frame asks
 * it (tests/prog/reasons.h): for an outcome those decide, its answer must
 * be the counter the program moved; for one only the frame shows, what
 * the program does with a well-formed frame of the same addresses on the
 * same port. The two cannot drift apart, whatever the map accessors of
 * either side do.
 */
static struct dpl dpl[XFIB_FAMILIES];
static int nlookups;
/* The policy rules' cases: xfibctl lookup is asked with the frame's
 * protocol, ports and TOS too (--proto, --sport, --dport, --tos). */
static bool lookup_with_flow;

/* The outcomes the destination alone decides: xfibctl lookup ADDR. */
static bool destination_decides(const struct fwd_case *c)
{
	if (!c->pkt.ip || c->from_peer || c->iif ||
	    strcmp(c->pkt.src, c->pkt.ip == 4 ? SRC4 : SRC6))
		return false;
	switch (c->reason) {
	case XFIB_FWD_V4:
	case XFIB_FWD_V6:
	case XFIB_DROP_BLACKHOLE:
	case XFIB_PASS_SPECIAL_ADDR:
	case XFIB_PASS_NO_FIB:
	case XFIB_PASS_NO_ROUTE:
	case XFIB_PASS_LOCAL:
	case XFIB_PASS_UNREACHABLE:
	case XFIB_PASS_UNSUPPORTED:
	case XFIB_PASS_NEIGH:
	case XFIB_PASS_EGRESS_DOWN:
	case XFIB_PASS_EGRESS_NOT_ATTACHED:
	case XFIB_PASS_EGRESS_NO_XMIT:
	case XFIB_PASS_XFRM:
	case XFIB_PASS_STALE:
		return true;
	default:
		return false;
	}
}

static __u32 case_iif(const struct fwd_case *c)
{
	return c->iif ? *c->iif : c->from_peer ? if_peer : if_in;
}

static void lookup_addr(const struct fwd_case *c, const char *s, __u8 *a)
{
	memset(a, 0, 16);
	if (c->pkt.ip == 4)
		memcpy(a, &(__be32){ addr4(s) }, 4);
	else
		addr6(s, a);
}

/*
 * The counter the program moves for a well-formed frame (TTL 64, 32 bytes
 * of UDP, untagged, to the port's MAC) from c's source to c's destination
 * on c's port; -1 if it moved none or one of another class than
 * RC_LOOKUP.
 */
static int plain_reason(const struct fwd_case *c)
{
	static struct result r;
	struct frame f = c->pkt.ip == 4 ?
		frame4(-1, c->pkt.src, c->pkt.dst, 64, 32) :
		frame6(-1, c->pkt.src, c->pkt.dst, 64, 32);
	int k;

	run_prog(&f, f.len, case_iif(c), &r);
	if (r.err)
		return -1;
	for (k = 0; k < XFIB_REASON_COUNT; k++)
		if (r.cnt[k].packets == 1)
			return reason_class[k] == RC_LOOKUP ? k : -1;
	return -1;
}

/* xfibctl lookup's answer for c, with the source and ingress port if
 * from, must be want. */
static void check_lookup_one(const struct fwd_case *c, bool from, int want)
{
	int fam = c->pkt.ip == 4 ? XFIB_V4 : XFIB_V6;
	struct dpl_result r;
	__u8 dst[16], src[16];
	int err;

	lookup_addr(c, c->pkt.dst, dst);
	lookup_addr(c, c->pkt.src, src);
	nlookups++;
	if (from && lookup_with_flow) {
		/* what frame4() and frame6() send: UDP 40000 -> 5001,
		 * TOS (traffic class) 0x28 */
		struct dpl_flow fl = { .proto = IPPROTO_UDP,
				       .sport = htons(40000),
				       .dport = htons(5001), .tos = 0x28 };

		err = dpl_resolve_packet(&dpl[fam], dst, src, case_iif(c), &fl,
					 &r);
	} else if (from) {
		err = dpl_resolve_from(&dpl[fam], dst, src, case_iif(c), &r);
	} else {
		err = dpl_resolve(&dpl[fam], dst, &r);
	}
	if (!err && (int)r.action == want)
		return;
	ncases++;
	nfailed++;
	if (err)
		printf("FAIL %s\n    xfibctl lookup of %s%s%s: %s\n", c->name,
		       c->pkt.dst, from ? " from " : "", from ? c->pkt.src : "",
		       strerror(-err));
	else
		printf("FAIL %s\n    xfibctl lookup of %s%s%s says %s, the program %s %s\n",
		       c->name, c->pkt.dst, from ? " from " : "",
		       from ? c->pkt.src : "", reason_name[r.action],
		       want == c->reason ? "counted" :
					   "counts for a well-formed frame",
		       reason_name[want]);
}

static void check_lookup(const struct fwd_case *c)
{
	int want;

	if (!c->pkt.ip)
		return; /* no address to ask about */
	if (destination_decides(c))
		check_lookup_one(c, false, c->reason);
	switch (reason_class[c->reason]) {
	case RC_LOOKUP:
		check_lookup_one(c, true, c->reason);
		break;
	case RC_FRAME:
		want = plain_reason(c);
		if (want >= 0)
			check_lookup_one(c, true, want);
		break;
	default:
		break;
	}
}

static void lookup_open(void)
{
	int fam, err;

	for (fam = XFIB_V4; fam < XFIB_FAMILIES; fam++) {
		err = dpl_open(&dpl[fam], skel, fam);
		if (err)
			die("open the userspace lookup: %s", strerror(-err));
	}
}

/* The comparison must have happened, or it proves nothing. */
static void lookup_close(void)
{
	int fam;

	for (fam = XFIB_V4; fam < XFIB_FAMILIES; fam++)
		dpl_close(&dpl[fam]);
	ncases++;
	if (nlookups < 50) {
		nfailed++;
		printf("FAIL only %d cases compared with xfibctl lookup\n",
		       nlookups);
	} else {
		printf("ok   xfibctl lookup gives the program's outcome for all %d destination and packet cases\n",
		       nlookups);
	}
}

static void run_case(const struct fwd_case *c)
{
	struct frame f = build(&c->pkt), want;

	if (c->edit)
		c->edit(&f);
	if (c->dmac)
		set_dmac(&f, c->dmac);
	if (c->verdict == XDP_REDIRECT)
		want = forwarded(&f, c->next_mac);
	check(c->name, &f, f.len,
	      c->iif ? *c->iif : c->from_peer ? if_peer : if_in,
	      V(c->verdict), c->reason,
	      c->verdict == XDP_REDIRECT ? &want : NULL);
	check_lookup(c);
}

static void run_cases(const struct fwd_case *c, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		run_case(&c[i]);
}

/* ---- edits: what a case changes in its frame ---------------------------- */

/* Checksum edges of the incremental TTL update (RFC 1624): the wire
 * checksum grows by 0x0100 in one's complement. */
static void csum_ff37(struct frame *f)
{
	set_csum_by_id(f, 0xff37);
}

static void csum_feff(struct frame *f)
{
	set_csum_by_id(f, 0xfeff);
}

static void csum_negative_zero(struct frame *f)
{
	set_csum_by_id(f, 0x0000);
	put16(f->b + f->l3 + 10, 0xffff); /* the other encoding of zero */
}

/* Bytes after the IP packet, which the kernel and xfib cut: Ethernet
 * padding of a minimum-size frame, trailing junk, a frame padded beyond
 * the egress MTU. */
static void pad_to_60(struct frame *f)
{
	add_trailer(f, 60 - f->len, 0);
}

static void pad_to_1400(struct frame *f)
{
	add_trailer(f, 1400 - f->len, 0);
}

static void pad_to_1600(struct frame *f)
{
	add_trailer(f, 1600 - f->len, 0);
}

static void trailer_7(struct frame *f)
{
	add_trailer(f, 7, 0);
}

static void trailer_20(struct frame *f)
{
	add_trailer(f, 20, 0);
}

static void trailer_30(struct frame *f)
{
	add_trailer(f, 30, 0xa5);
}

/*
 * TCP/UDP checksums as a local sender over veth leaves them to the device
 * (CHECKSUM_PARTIAL): the field holds the folded pseudo-header sum only.
 */
static unsigned int l4_off(const struct frame *f)
{
	return f->l3 + (is_v4(f) ? sizeof(struct iphdr) : sizeof(struct ipv6hdr));
}

static __u8 l4_proto(const struct frame *f)
{
	return f->b[f->l3 + (is_v4(f) ? 9 : 6)];
}

/* The pseudo-header sum (host order) of the frame's TCP/UDP packet. */
static __u32 pseudo_sum(const struct frame *f)
{
	const __u8 *ip = f->b + f->l3;
	unsigned int len;

	if (is_v4(f)) {
		len = get16(ip + 2) - sizeof(struct iphdr);
		return sum16(0, ip + 12, 8) + l4_proto(f) + len;
	}
	len = get16(ip + 4);
	return sum16(0, ip + 8, 32) + l4_proto(f) + len;
}

static void l4_set_partial(struct frame *f)
{
	unsigned int at = l4_off(f) + (l4_proto(f) == IPPROTO_TCP ? 16 : 6);

	put16(f->b + at, fold(pseudo_sum(f)));
}

/* Turns the UDP datagram into a TCP segment (ACK, 20-byte header, the
 * rest payload) with a complete checksum. */
static void to_tcp(struct frame *f)
{
	unsigned int l4 = l4_off(f), len = f->len - l4;
	__u8 *t = f->b + l4;

	if (len < 20)
		die("to_tcp: %u bytes after the IP header", len);
	if (is_v4(f)) {
		EDIT_IP4(*f, h.protocol = IPPROTO_TCP);
		fix4(f);
	} else {
		EDIT_IP6(*f, h.nexthdr = IPPROTO_TCP);
	}
	memset(t, 0, 20);
	put16(t, 40000);
	put16(t + 2, 443);
	put16(t + 4, 0x1234);
	t[12] = 5 << 4;
	t[13] = 0x10; /* ACK */
	put16(t + 14, 512);
	put16(t + 16, ~fold(sum16(pseudo_sum(f), t, len)));
}

static void udp_partial(struct frame *f)
{
	l4_set_partial(f);
}

static void tcp_complete(struct frame *f)
{
	to_tcp(f);
}

static void tcp_partial(struct frame *f)
{
	to_tcp(f);
	l4_set_partial(f);
}

/* A first fragment (MF) whose UDP checksum field happens to hold the
 * pseudo-header sum: the kernel never leaves a fragment's to the device. */
static void udp_partial_fragment(struct frame *f)
{
	EDIT_IP4(*f, h.frag_off = htons(0x2000));
	fix4(f);
	l4_set_partial(f);
}

static void udp_no_csum(struct frame *f)
{
	put16(f->b + l4_off(f) + 6, 0);
}

static void ihl_4(struct frame *f)
{
	EDIT_IP4(*f, h.ihl = 4);
	fix4(f);
}

static void ip_version_5(struct frame *f)
{
	EDIT_IP4(*f, h.version = 5);
	fix4(f);
}

static void ip_version_6(struct frame *f)
{
	EDIT_IP4(*f, h.version = 6);
	fix4(f);
}

static void csum_flip_high(struct frame *f)
{
	EDIT_IP4(*f, h.check ^= htons(0x0100));
}

static void csum_flip_low(struct frame *f)
{
	EDIT_IP4(*f, h.check ^= htons(0x0001));
}

static void tot_len_plus_1(struct frame *f)
{
	EDIT_IP4(*f, h.tot_len = htons(ntohs(h.tot_len) + 1));
	fix4(f);
}

static void tot_len_19(struct frame *f)
{
	EDIT_IP4(*f, h.tot_len = htons(19));
	fix4(f);
}

static void tot_len_20(struct frame *f)
{
	EDIT_IP4(*f, h.tot_len = htons(20));
	fix4(f);
}

static void hop_by_hop(struct frame *f)
{
	EDIT_IP6(*f, h.nexthdr = IPPROTO_HOPOPTS);
}

static void jumbogram(struct frame *f)
{
	EDIT_IP6(*f, h.nexthdr = IPPROTO_HOPOPTS; h.payload_len = 0);
}

static void payload_len_0(struct frame *f)
{
	EDIT_IP6(*f, h.payload_len = 0);
}

static void payload_len_8(struct frame *f)
{
	EDIT_IP6(*f, h.payload_len = htons(8));
}

static void payload_len_plus_1(struct frame *f)
{
	EDIT_IP6(*f, h.payload_len = htons(ntohs(h.payload_len) + 1));
}

static void ip6_version_4(struct frame *f)
{
	EDIT_IP6(*f, h.version = 4);
}

/* ---- cases -------------------------------------------------------------- */

/* The harness must notice a wrong verdict, counter or output byte. */
static void self_check(void)
{
	struct frame f = v4(DST4), want = forwarded(&f, mac_gw4);
	struct frame bad_out = forwarded(&f, mac_gw4);
	bool ok = true;

	bad_out.b[ETH_HLEN + 8]++; /* "not decremented" */
	quiet = true;
	/* The reference case must match ... */
	if (check("", &f, f.len, if_in, V(XDP_REDIRECT), XFIB_FWD_V4, &want))
		ok = false;
	/* ... and each broken expectation must not. */
	if (!check("", &f, f.len, if_in, V(XDP_PASS), XFIB_FWD_V4, &want))
		ok = false;
	if (!check("", &f, f.len, if_in, V(XDP_REDIRECT), XFIB_PASS_TTL, &want))
		ok = false;
	if (!check("", &f, f.len, if_in, V(XDP_REDIRECT), XFIB_FWD_V4,
		   &bad_out))
		ok = false;
	if (!check("", &f, f.len, if_in, V(XDP_REDIRECT), XFIB_FWD_V4, NULL))
		ok = false;
	quiet = false;
	ncases++;
	if (ok) {
		printf("ok   harness detects wrong verdict, counter and bytes\n");
	} else {
		nfailed++;
		printf("FAIL harness self-check: reference case failed or a wrong expectation passed\n");
	}
}

static const struct fwd_case forward_cases[] = {
	{ "v4 via gateway", V4(DST4), FWD4(mac_gw4) },
	{ "v4 via gateway, last address of the range", V4("198.19.255.255"),
	  FWD4(mac_gw4) },
	{ "v4 via gateway, first address of the range", V4("198.19.0.0"),
	  FWD4(mac_gw4) },
	{ "v4 TTL 2 forwarded with TTL 1", F4(-1, SRC4, DST4, 2, 32),
	  FWD4(mac_gw4) },
	{ "v4 TTL 255", F4(-1, SRC4, DST4, 255, 32), FWD4(mac_gw4) },
	{ "v4 no UDP payload", F4(-1, SRC4, DST4, 64, 0), FWD4(mac_gw4) },
	{ "v4 checksum 0xff37: carry out of the top byte wraps around",
	  V4(DST4), FWD4(mac_gw4), .edit = csum_ff37 },
	{ "v4 checksum 0xfeff: update gives 0xffff, folded to 0x0000",
	  V4(DST4), FWD4(mac_gw4), .edit = csum_feff },
	{ "v4 checksum 0xffff (negative zero): update gives 0x0100",
	  V4(DST4), FWD4(mac_gw4), .edit = csum_negative_zero },
	{ "v4 TTL 2 with checksum 0xfeff", F4(-1, SRC4, DST4, 2, 32),
	  FWD4(mac_gw4), .edit = csum_feff },
	{ "v4 on-link destination (connected, neigh_hosts)", V4(HOST4),
	  FWD4(mac_host4) },
	{ "v6 via gateway", V6(DST6), FWD6(mac_gw6) },
	{ "v6 hop limit 2 forwarded with 1", F6(-1, SRC6, DST6, 2, 32),
	  FWD6(mac_gw6) },
	{ "v6 hop limit 255, no UDP payload", F6(-1, SRC6, DST6, 255, 0),
	  FWD6(mac_gw6) },
	{ "v6 via gateway, last address of the range",
	  V6("2001:db8:1:ffff:ffff:ffff:ffff:ffff"), FWD6(mac_gw6) },
	{ "v6 via gateway, first address of the range", V6("2001:db8:1::"),
	  FWD6(mac_gw6) },
	{ "v6 on-link destination (connected, neigh_hosts)", V6(HOST6),
	  FWD6(mac_host6) },

	{ "v4 priority tag (VID 0): forwarded untagged",
	  F4(0, SRC4, DST4, 64, 32), FWD4(mac_gw4) },
	{ "v4 priority tag PCP 5 VID 0: forwarded untagged",
	  F4(0xa000, SRC4, DST4, 64, 32), FWD4(mac_gw4) },
	{ "v6 priority tag (VID 0): forwarded untagged",
	  F6(0, SRC6, DST6, 64, 32), FWD6(mac_gw6) },
	{ "v4 priority tag to an on-link destination",
	  F4(0, SRC4, HOST4, 64, 32), FWD4(mac_host4) },

	/* The kernel trims a frame to its IP length: Ethernet padding and
	 * trailing bytes are not forwarded. */
	{ "v4 short packet in a padded 60-byte frame: padding cut",
	  F4(-1, SRC4, DST4, 64, 0), FWD4(mac_gw4), .edit = pad_to_60 },
	{ "v4 with 30 trailing bytes: cut", F4(-1, SRC4, DST4, 64, 32),
	  FWD4(mac_gw4), .edit = trailer_30 },
	{ "v4 priority-tagged, 30 trailing bytes: untagged, cut",
	  F4(0, SRC4, DST4, 64, 32), FWD4(mac_gw4), .edit = trailer_30 },
	{ "v4 tot_len 20 in a longer frame: header only",
	  F4(-1, SRC4, DST4, 64, 32), FWD4(mac_gw4), .edit = tot_len_20 },
	{ "v6 with 30 trailing bytes: cut", F6(-1, SRC6, DST6, 64, 32),
	  FWD6(mac_gw6), .edit = trailer_30 },
	{ "v6 priority-tagged, 7 trailing bytes: untagged, cut",
	  F6(0, SRC6, DST6, 64, 0), FWD6(mac_gw6), .edit = trailer_7 },
	{ "v6 payload_len 8 in a longer frame: UDP header only",
	  F6(-1, SRC6, DST6, 64, 32), FWD6(mac_gw6), .edit = payload_len_8 },

	/* Checksums left to the device by a local sender over veth: only
	 * the kernel can pass that on; complete ones stay in XDP. */
	{ "v4 UDP checksum left to the device", V4(DST4),
	  PASS(XFIB_PASS_CSUM_PARTIAL), .edit = udp_partial },
	{ "v6 UDP checksum left to the device", V6(DST6),
	  PASS(XFIB_PASS_CSUM_PARTIAL), .edit = udp_partial },
	{ "v4 TCP checksum left to the device", V4(DST4),
	  PASS(XFIB_PASS_CSUM_PARTIAL), .edit = tcp_partial },
	{ "v6 TCP checksum left to the device", V6(DST6),
	  PASS(XFIB_PASS_CSUM_PARTIAL), .edit = tcp_partial },
	{ "v4 TCP with its checksum", V4(DST4), FWD4(mac_gw4),
	  .edit = tcp_complete },
	{ "v6 TCP with its checksum", V6(DST6), FWD6(mac_gw6),
	  .edit = tcp_complete },
	{ "v4 UDP without checksum (0)", V4(DST4), FWD4(mac_gw4),
	  .edit = udp_no_csum },
	{ "v4 first fragment, pseudo-header sum in the UDP field", V4(DST4),
	  FWD4(mac_gw4), .edit = udp_partial_fragment },

	/* MTU boundaries: egress MTU 1500, route MTU 1280. */
	{ "v4 tot_len 1500 = egress MTU", F4(-1, SRC4, DST4, 64, 1500 - 28),
	  FWD4(mac_gw4) },
	{ "v4 tot_len 1501 > egress MTU", F4(-1, SRC4, DST4, 64, 1501 - 28),
	  PASS(XFIB_PASS_MTU) },
	{ "v4 tagged, tot_len 1500 = egress MTU",
	  F4(0, SRC4, DST4, 64, 1500 - 28), FWD4(mac_gw4) },
	{ "v6 1500 bytes = egress MTU", F6(-1, SRC6, DST6, 64, 1500 - 48),
	  FWD6(mac_gw6) },
	{ "v6 1501 bytes > egress MTU", F6(-1, SRC6, DST6, 64, 1501 - 48),
	  PASS(XFIB_PASS_MTU) },
	{ "v4 tot_len 1280 = route MTU",
	  F4(-1, SRC4, "198.18.7.1", 64, 1280 - 28), FWD4(mac_gw4) },
	{ "v4 tot_len 1281 > route MTU 1280",
	  F4(-1, SRC4, "198.18.7.1", 64, 1281 - 28), PASS(XFIB_PASS_MTU) },
	/* Only the IP length counts against the MTU; the frame leaves cut. */
	{ "v4 100 bytes in a 1400-byte frame, route MTU 1280",
	  F4(-1, SRC4, "198.18.7.1", 64, 72), FWD4(mac_gw4),
	  .edit = pad_to_1400 },
	{ "v4 tot_len 1281 and trailing bytes > route MTU 1280",
	  F4(-1, SRC4, "198.18.7.1", 64, 1281 - 28), PASS(XFIB_PASS_MTU),
	  .edit = trailer_20 },
	{ "v6 120 bytes in a 1600-byte frame, egress MTU 1500",
	  F6(-1, SRC6, DST6, 64, 72), FWD6(mac_gw6), .edit = pad_to_1600 },
};

static const struct fwd_case route_cases[] = {
	{ "v4 TTL 1", F4(-1, SRC4, DST4, 1, 32), PASS(XFIB_PASS_TTL) },
	{ "v4 TTL 0", F4(-1, SRC4, DST4, 0, 32), PASS(XFIB_PASS_TTL) },
	{ "v4 tagged TTL 1", F4(0, SRC4, DST4, 1, 32), PASS(XFIB_PASS_TTL) },
	{ "v6 hop limit 1", F6(-1, SRC6, DST6, 1, 32), PASS(XFIB_PASS_TTL) },
	{ "v6 hop limit 0", F6(-1, SRC6, DST6, 0, 32), PASS(XFIB_PASS_TTL) },

	{ "v4 local nexthop", V4("198.18.1.5"), PASS(XFIB_PASS_LOCAL) },
	{ "v4 local nexthop, first address of the range", V4("198.18.1.0"),
	  PASS(XFIB_PASS_LOCAL) },
	{ "v6 local nexthop", V6("2001:db8:0:2::5"), PASS(XFIB_PASS_LOCAL) },
	{ "v4 unreachable nexthop", V4("198.18.2.1"),
	  PASS(XFIB_PASS_UNREACHABLE) },
	{ "v6 unreachable nexthop", V6("2001:db8:0:3::1"),
	  PASS(XFIB_PASS_UNREACHABLE) },
	{ "v4 blackhole nexthop", V4("198.18.3.1"),
	  DROP(XFIB_DROP_BLACKHOLE) },
	{ "v6 blackhole nexthop", V6("2001:db8:0:4::1"),
	  DROP(XFIB_DROP_BLACKHOLE) },
	{ "v6 blackhole, last address of the /62",
	  V6("2001:db8:0:7:ffff:ffff:ffff:ffff"), DROP(XFIB_DROP_BLACKHOLE) },
	{ "v6 blackhole /128 inside a connected /64", V6("2001:db8:0:1::99"),
	  DROP(XFIB_DROP_BLACKHOLE) },
	{ "v6 no route, first address after the /62", V6("2001:db8:0:8::"),
	  PASS(XFIB_PASS_NO_ROUTE) },
	{ "v4 unsupported nexthop", V4("198.18.6.1"),
	  PASS(XFIB_PASS_UNSUPPORTED) },
	{ "v4 nexthop of unknown kind", V4("198.18.10.1"),
	  PASS(XFIB_PASS_NO_ROUTE) },

	{ "v4 no route (gap between ranges)", V4("198.18.4.1"),
	  PASS(XFIB_PASS_NO_ROUTE) },
	{ "v4 no route, last address before 198.19.0.0",
	  V4("198.18.255.255"), PASS(XFIB_PASS_NO_ROUTE) },
	{ "v4 no route, first address after 198.19.0.0/16", V4("198.20.0.0"),
	  PASS(XFIB_PASS_NO_ROUTE) },
	{ "v6 no route", V6("2001:db8:2::1"), PASS(XFIB_PASS_NO_ROUTE) },

	{ "v4 gateway neighbour INVALID", V4("198.18.8.1"),
	  PASS(XFIB_PASS_NEIGH) },
	{ "v4 gateway neighbour on another port", V4("198.18.9.1"),
	  PASS(XFIB_PASS_NEIGH) },
	{ "v4 on-link neighbour INVALID", V4("198.18.0.11"),
	  PASS(XFIB_PASS_NEIGH) },
	{ "v4 on-link destination not in neigh_hosts for the port",
	  V4("198.18.0.12"), PASS(XFIB_PASS_NEIGH) },
	{ "v4 on-link, last address of the range, no neighbour",
	  V4("198.18.0.255"), PASS(XFIB_PASS_NEIGH) },
	{ "v6 on-link destination not in neigh_hosts", V6("2001:db8:0:1::98"),
	  PASS(XFIB_PASS_NEIGH) },
	{ "v6 on-link, first address after a /128", V6("2001:db8:0:1::9a"),
	  PASS(XFIB_PASS_NEIGH) },
	{ "v6 on-link, last address of the /64",
	  V6("2001:db8:0:1:ffff:ffff:ffff:ffff"), PASS(XFIB_PASS_NEIGH) },

	{ "v4 egress is the ingress port", V4("198.18.5.1"),
	  PASS(XFIB_PASS_HAIRPIN) },

	/* The kernel drops IPv4 from its own addresses (martian source). */
	{ "v4 source in a local route", F4(-1, "198.18.1.9", DST4, 64, 32),
	  PASS(XFIB_PASS_LOCAL_SOURCE) },
	{ "v4 source, first address of a local range",
	  F4(-1, "198.18.1.0", DST4, 64, 32), PASS(XFIB_PASS_LOCAL_SOURCE) },
	{ "v4 source just below a local range",
	  F4(-1, "198.18.0.255", DST4, 64, 32), FWD4(mac_gw4) },
	{ "v4 source in an unreachable route",
	  F4(-1, "198.18.2.9", DST4, 64, 32), FWD4(mac_gw4) },
	{ "v4 local source and TTL 1", F4(-1, "198.18.1.9", DST4, 1, 32),
	  PASS(XFIB_PASS_TTL) },
	{ "v6 source in a local route (the kernel forwards it)",
	  F6(-1, "2001:db8:0:2::9", DST6, 64, 32), FWD6(mac_gw6) },
};

/* Sets the UDP source port of f (checksums are not the dataplane's). */
static void set_sport(struct frame *f, __u16 sport)
{
	unsigned int l4 = f->l3 + (is_v4(f) ? sizeof(struct iphdr) :
					      sizeof(struct ipv6hdr));

	put16(f->b + l4, sport);
}

/* The group member (bucket half) the shared flow hash gives f. */
static bool second_half(const struct frame *f, bool with_ports)
{
	const __u8 *l3 = f->b + f->l3;
	__u32 s[4], d[4], ports = 0, h;

	if (is_v4(f)) {
		const struct iphdr *ip = (const void *)l3;

		if (with_ports)
			ports = (__u32)get16(l3 + 20) << 16 | get16(l3 + 22);
		memcpy(s, &ip->saddr, 4);
		memcpy(d, &ip->daddr, 4);
		h = xfib_flow_hash(cur_seed, s, d, 1, ip->protocol, ports);
	} else {
		if (with_ports)
			ports = (__u32)get16(l3 + 40) << 16 | get16(l3 + 42);
		memcpy(s, l3 + 8, 16);
		memcpy(d, l3 + 24, 16);
		h = xfib_flow_hash(cur_seed, s, d, 4, l3[6], ports);
	}
	return xfib_flow_bucket(h) >= 128;
}

static const struct fwd_case multipath_cases[] = {
	{ "v4 group without members", V4("198.18.13.1"),
	  PASS(XFIB_PASS_NO_ROUTE) },
	{ "v4 group whose member is a group", V4("198.18.14.1"),
	  PASS(XFIB_PASS_NO_ROUTE) },
	{ "v4 no route after the groups", V4("198.18.15.1"),
	  PASS(XFIB_PASS_NO_ROUTE) },
};

/*
 * Flows differing only in the source port spread over both members, each
 * where the flow hash with the router's seed puts it. Bit i of *halves:
 * the IPv4 flow of port 1024 + i took the second member.
 */
static void multipath_flows(__u64 *halves)
{
	unsigned int i, seen4[2] = { 0 }, seen6[2] = { 0 };
	char name[96];
	struct frame f;
	bool b;

	*halves = 0;
	for (i = 0; i < 64; i++) {
		f = v4("198.18.12.7");
		set_sport(&f, 1024 + i);
		b = second_half(&f, true);
		seen4[b]++;
		*halves |= (__u64)b << i;
		snprintf(name, sizeof(name), "v4 group, seed %#x, source port %u",
			 cur_seed, 1024 + i);
		expect_fwd(name, &f, b ? mac_gw4b : mac_gw4);
		f = v6("2001:db8:0:9::7");
		set_sport(&f, 1024 + i);
		b = second_half(&f, true);
		seen6[b]++;
		snprintf(name, sizeof(name), "v6 group, seed %#x, source port %u",
			 cur_seed, 1024 + i);
		expect_fwd(name, &f, b ? mac_gw6b : mac_gw6);
	}
	ncases++;
	if (!seen4[0] || !seen4[1] || !seen6[0] || !seen6[1]) {
		nfailed++;
		printf("FAIL 64 flows did not reach both members (v4 %u/%u, v6 %u/%u)\n",
		       seen4[0], seen4[1], seen6[0], seen6[1]);
	}
}

/* The member a lookup of 198.18.12.7 (any source, no ports) takes with
 * seed. */
static __u32 lookup_member(__u32 seed)
{
	static const __u32 zero[4];
	const __u8 dst[4] = { 198, 18, 12, 7 };
	__u32 h = xfib_flow_hash(seed, zero, (const __u32 *)dst, 1, 0, 0);

	return xfib_flow_bucket(h) >= 128 ? NH_GW4_B : NH_GW4;
}

/* xfibctl lookup's member for a multipath destination is the one the
 * seed gives. */
static void multipath_lookup(void)
{
	__u8 dst[16] = { 198, 18, 12, 7 };
	struct dpl_result r;
	__u32 want = lookup_member(cur_seed);

	ncases++;
	if (dpl_resolve(&dpl[XFIB_V4], dst, &r) || r.nh_idx != want) {
		nfailed++;
		printf("FAIL lookup 198.18.12.7 with seed %#x: member %u, expected %u\n",
		       cur_seed, r.nh_idx, want);
	} else {
		printf("ok   lookup 198.18.12.7 with seed %#x: member %u\n",
		       cur_seed, r.nh_idx);
	}
}

static void cases_multipath(void)
{
	unsigned int i;
	__u64 a, b;
	char name[96];
	struct frame f;

	/* Two routers' seeds split the same flows differently; the program
	 * and lookup follow the seed in the map. */
	__u32 seed2 = 0xc0ffee42;

	multipath_flows(&a);
	multipath_lookup();
	/* A second seed whose lookup takes the other member: a lookup that
	 * ignored the seed would be wrong for one of the two. */
	while (lookup_member(seed2) == lookup_member(cur_seed))
		seed2++;
	put_seed(seed2);
	multipath_flows(&b);
	multipath_lookup();
	ncases++;
	if (__builtin_popcountll(a ^ b) < 8) {
		nfailed++;
		printf("FAIL seeds %#x and %#x split 64 flows alike but for %d\n",
		       0x5eed0001, cur_seed, __builtin_popcountll(a ^ b));
	} else {
		printf("ok   seeds %#x and %#x put %d of 64 flows on other members\n",
		       0x5eed0001, cur_seed, __builtin_popcountll(a ^ b));
	}
	put_seed(0x5eed0001);
	/* Fragments hash without ports: all of a datagram's take one path. */
	for (i = 0; i < 8; i++) {
		f = v4("198.18.12.9");
		set_sport(&f, 3000 + 77 * i);
		EDIT_IP4(f, h.frag_off = htons(0x2000)); /* MF */
		fix4(&f);
		snprintf(name, sizeof(name), "v4 group, first fragment %u", i);
		expect_fwd(name, &f, second_half(&f, false) ? mac_gw4b : mac_gw4);
	}
	run_cases(multipath_cases, ARRAY_SIZE(multipath_cases));
}

/* Map states the port cases run in; each starts from fill_maps()'. */
enum port_state {
	ST_DEFAULT,
	ST_TX_DETACHED,	  /* egress port not in xfib_tx_ports */
	ST_EGRESS_NOT_UP, /* egress port without XFIB_IF_UP */
	ST_EGRESS_GONE,	  /* egress port gone from xfib_ifaces (live 0) */
	ST_EGRESS_HIGH,	  /* the route's egress is xt3, beyond XFIB_PORT_MAX */
	ST_IN_GONE,	  /* ingress port gone from xfib_ifaces (live 0) */
	ST_IN_LAST,	  /* xt2, the last port xfib_ifaces holds, known */
	ST_EGRESS_NO_XMIT, /* egress port takes no redirected frames */
	ST_IN_NO_XMIT,	  /* ingress port takes no redirected frames */
	ST_IN_NO_FWD4,	  /* ingress port: IPv4 forwarding off */
	ST_IN_NO_FWD6,	  /* ingress port: IPv6 forwarding off */
	ST_IN_NO_IPV6,	  /* ingress port: disable_ipv6 */
	ST_OUT_NO_IPV6,	  /* egress port: disable_ipv6 */
	ST_IN_RPF,	  /* ingress port: rp_filter on, strict */
	ST_IN_RPF_LOOSE,  /* ingress port: rp_filter on, loose */
	ST_IN_LOOSE_ONLY, /* ingress port: the loose bit without rp_filter */
	ST_LOCAL_RULED_OUT, /* xfib_nonlocal4 rules 198.18.0.0/16 out */
	ST_LOCAL_RULED_OUT_RPF, /* the same, and rp_filter on the ingress port */
	ST_V4_NONE,	  /* IPv4 algorithm NONE */
	ST_V4_BSEARCH6,	  /* IPv4 instance of an IPv6 algorithm */
	ST_V6_NONE,
	ST_V6_BSEARCH4,
	ST_V4_XFRM,	  /* IPv4 has IPsec policies: mode pass */
	ST_V6_XFRM,
	/* xt0 a member of bridge if_br, whose MAC is xt0's (mac_in), the
	 * member's own mac_other; the sender's MAC in the FDB on xt0 */
	ST_BR_IN,
	ST_BR_IN_UNKNOWN,  /* the sender's MAC not in the FDB */
	ST_BR_IN_MOVED,	   /* ... in it, behind xt1 */
	ST_BR_IN_LOCAL,	   /* ... one of the bridge's own */
	ST_BR_IN_NOT_FWD,  /* the member not in STP forwarding state */
	ST_BR_IN_VLAN,	   /* the bridge not routed through (VLAN filtering) */
	/* The gateways on bridge if_br (MAC mac_out), xt1 its member, the
	 * gateways' neighbours naming xt1 (as xfibd writes them from the
	 * FDB) */
	ST_BR_OUT,
	ST_BR_OUT_UNKNOWN, /* the gateways' MACs not in the FDB (no member) */
	ST_BR_OUT_MOVED,   /* a move on the bridge not yet mirrored */
	ST_BR_OUT_NOT_FWD, /* xt1 not forwarding */
	ST_BR_OUT_DOWN,	   /* xt1 down */
	ST_BR_OUT_NO_XMIT, /* xt1 takes no redirected frames */
	ST_BR_OUT_OTHER,   /* xt1 a member of another bridge */
	ST_BR_OUT_MTU,	   /* xt1's MTU 1000, the bridge's 1500 */
	ST_BR_OUT_DETACHED, /* xt1 not attached */
	ST_BR_OUT_VLAN,	   /* the bridge not routed through */
};

/* The bridge states' maps (set_port_state). */
static void bridge_in(__u8 member, __u8 bridge)
{
	put_bridge_iface(if_br, mac_in, IF_ALL | XFIB_IF_NO_XMIT, bridge, 0, 1500);
	put_bridge_iface(if_in, mac_other, IF_ALL, member, if_br, 1500);
	put_fdb(mac_host, if_in, XFIB_FDB_DYNAMIC, 0);
}

/* xfib_br_moving of the bridge if_br. */
static void put_br_moving(__u64 n)
{
	update(bpf_map__fd(skel->maps.xfib_br_moving), &if_br, &n, "xfib_br_moving");
}

static __u64 get_br_moving(void)
{
	__u64 n = 0;

	bpf_map_lookup_elem(bpf_map__fd(skel->maps.xfib_br_moving), &if_br, &n);
	return n;
}

/* The neighbour idx's bridge member (tx_port). */
static void put_neigh_port(__u32 idx, __u32 port)
{
	struct xfib_neigh v;

	if (bpf_map_lookup_elem(fd_neighs, &idx, &v))
		die("read xfib_neighs: %s", strerror(errno));
	v.tx_port = port;
	update(fd_neighs, &idx, &v, "xfib_neighs");
}

static void bridge_out(__u8 member, __u8 mflags, __u32 master, __u32 mtu,
		       __u8 bridge, __u32 port)
{
	put_nexthop(NH_GW4, XFIB_NH_GATEWAY, if_br, NB_GW4, 0);
	put_nexthop(NH_GW6, XFIB_NH_GATEWAY, if_br, NB_GW6, 0);
	put_neigh(NB_GW4, AF_INET, "198.18.0.1", mac_gw4, XFIB_NEIGH_VALID, if_br);
	put_neigh(NB_GW6, AF_INET6, "2001:db8:0:1::1", mac_gw6,
		  XFIB_NEIGH_VALID, if_br);
	put_neigh_port(NB_GW4, port);
	put_neigh_port(NB_GW6, port);
	put_bridge_iface(if_br, mac_out, IF_ALL | XFIB_IF_NO_XMIT, bridge, 0, 1500);
	put_bridge_iface(if_out, mac_other, mflags, member, master, mtu);
}

/* The family's entry of xfib_xfrm, mode as given. */
static void put_xfrm(__u32 fam, __u8 mode)
{
	struct xfib_xfrm_info x = { .mode = mode, .fwd_policies = mode ? 1 : 0 };

	update(bpf_map__fd(skel->maps.xfib_xfrm), &fam, &x, "xfib_xfrm");
}

static void set_port_state(enum port_state s)
{
	put_nexthop(NH_GW4, XFIB_NH_GATEWAY, if_out, NB_GW4, 0);
	put_nexthop(NH_GW6, XFIB_NH_GATEWAY, if_out, NB_GW6, 0);
	put_neigh(NB_GW4, AF_INET, "198.18.0.1", mac_gw4, XFIB_NEIGH_VALID, if_out);
	put_neigh(NB_GW6, AF_INET6, "2001:db8:0:1::1", mac_gw6,
		  XFIB_NEIGH_VALID, if_out);
	del_iface(if_br);
	del_fdb(mac_host);
	put_br_moving(0);
	bpf_map_delete_elem(fd_tx, &if_high);
	del_iface(if_last);
	put_tx_port(if_out);
	put_iface(if_out, mac_out, IF_ALL);
	put_iface(if_in, mac_in, IF_ALL);
	active_default();
	put_xfrm(XFIB_V4, XFIB_XFRM_OFF);
	put_xfrm(XFIB_V6, XFIB_XFRM_OFF);
	put_nonlocal4(XFIB_NONLOCAL4_BLOCK_BIT(H4(198, 18, 1, 0)), false);
	switch (s) {
	case ST_DEFAULT:
		break;
	case ST_LOCAL_RULED_OUT:
		put_nonlocal4(XFIB_NONLOCAL4_BLOCK_BIT(H4(198, 18, 1, 0)), true);
		break;
	case ST_LOCAL_RULED_OUT_RPF:
		put_nonlocal4(XFIB_NONLOCAL4_BLOCK_BIT(H4(198, 18, 1, 0)), true);
		put_iface(if_in, mac_in, IF_ALL | XFIB_IF_RPF);
		break;
	case ST_TX_DETACHED:
		delete(fd_tx, &if_out, "xfib_tx_ports");
		break;
	case ST_EGRESS_NOT_UP:
		put_iface(if_out, mac_out, XFIB_IF_FWD4 | XFIB_IF_FWD6);
		break;
	case ST_EGRESS_GONE:
		del_iface(if_out);
		break;
	case ST_EGRESS_HIGH:
		/* Attached and with a neighbour there: only the bound stops it. */
		put_tx_port(if_high);
		put_nexthop(NH_GW4, XFIB_NH_GATEWAY, if_high, NB_GW4, 0);
		put_nexthop(NH_GW6, XFIB_NH_GATEWAY, if_high, NB_GW6, 0);
		break;
	case ST_IN_GONE:
		del_iface(if_in);
		break;
	case ST_IN_LAST:
		put_iface(if_last, mac_in, IF_ALL);
		break;
	case ST_EGRESS_NO_XMIT:
		put_iface(if_out, mac_out, IF_ALL | XFIB_IF_NO_XMIT);
		break;
	case ST_IN_NO_XMIT:
		put_iface(if_in, mac_in, IF_ALL | XFIB_IF_NO_XMIT);
		break;
	case ST_IN_NO_FWD4:
		put_iface(if_in, mac_in, XFIB_IF_UP | XFIB_IF_FWD6);
		break;
	case ST_IN_NO_FWD6:
		put_iface(if_in, mac_in, XFIB_IF_UP | XFIB_IF_FWD4);
		break;
	case ST_IN_RPF:
		put_iface(if_in, mac_in, IF_ALL | XFIB_IF_RPF);
		break;
	case ST_IN_NO_IPV6:
		put_iface(if_in, mac_in, IF_ALL | XFIB_IF_NO_IPV6);
		break;
	case ST_OUT_NO_IPV6:
		put_iface(if_out, mac_out, IF_ALL | XFIB_IF_NO_IPV6);
		break;
	case ST_IN_RPF_LOOSE:
		put_iface(if_in, mac_in,
			  IF_ALL | XFIB_IF_RPF | XFIB_IF_RPF_LOOSE);
		break;
	case ST_IN_LOOSE_ONLY:
		put_iface(if_in, mac_in, IF_ALL | XFIB_IF_RPF_LOOSE);
		break;
	case ST_V4_NONE:
		put_active(XFIB_V4, XFIB_ALGO_NONE, 1, log2n4);
		break;
	case ST_V4_BSEARCH6:
		put_active(XFIB_V4, XFIB_ALGO_BSEARCH6, 1, log2n4);
		break;
	case ST_V6_NONE:
		put_active(XFIB_V6, XFIB_ALGO_NONE, 0, log2n6);
		break;
	case ST_V6_BSEARCH4:
		put_active(XFIB_V6, XFIB_ALGO_BSEARCH4, 0, log2n6);
		break;
	case ST_V4_XFRM:
		put_xfrm(XFIB_V4, XFIB_XFRM_PASS);
		break;
	case ST_V6_XFRM:
		put_xfrm(XFIB_V6, XFIB_XFRM_PASS);
		break;
	case ST_BR_IN:
		bridge_in(XFIB_BR_PORT_FWD, XFIB_BR_ROUTED);
		break;
	case ST_BR_IN_UNKNOWN:
		bridge_in(XFIB_BR_PORT_FWD, XFIB_BR_ROUTED);
		del_fdb(mac_host);
		break;
	case ST_BR_IN_MOVED:
		bridge_in(XFIB_BR_PORT_FWD, XFIB_BR_ROUTED);
		put_fdb(mac_host, if_out, XFIB_FDB_DYNAMIC, 0);
		break;
	case ST_BR_IN_LOCAL:
		bridge_in(XFIB_BR_PORT_FWD, XFIB_BR_ROUTED);
		put_fdb(mac_host, if_br, XFIB_FDB_LOCAL, 0);
		break;
	case ST_BR_IN_NOT_FWD:
		bridge_in(0, XFIB_BR_ROUTED);
		break;
	case ST_BR_IN_VLAN:
		bridge_in(XFIB_BR_PORT_FWD, 0);
		break;
	case ST_BR_OUT:
		bridge_out(XFIB_BR_PORT_FWD, IF_ALL, if_br, 1500, XFIB_BR_ROUTED,
			   if_out);
		break;
	case ST_BR_OUT_UNKNOWN:
		bridge_out(XFIB_BR_PORT_FWD, IF_ALL, if_br, 1500, XFIB_BR_ROUTED, 0);
		break;
	case ST_BR_OUT_MOVED:
		bridge_out(XFIB_BR_PORT_FWD, IF_ALL, if_br, 1500, XFIB_BR_ROUTED,
			   if_out);
		put_br_moving(1);
		break;
	case ST_BR_OUT_NOT_FWD:
		bridge_out(0, IF_ALL, if_br, 1500, XFIB_BR_ROUTED,
			   if_out);
		break;
	case ST_BR_OUT_DOWN:
		bridge_out(XFIB_BR_PORT_FWD, XFIB_IF_FWD4 | XFIB_IF_FWD6, if_br,
			   1500, XFIB_BR_ROUTED,
			   if_out);
		break;
	case ST_BR_OUT_NO_XMIT:
		bridge_out(XFIB_BR_PORT_FWD, IF_ALL | XFIB_IF_NO_XMIT, if_br,
			   1500, XFIB_BR_ROUTED,
			   if_out);
		break;
	case ST_BR_OUT_OTHER:
		bridge_out(XFIB_BR_PORT_FWD, IF_ALL, if_br - 1, 1500,
			   XFIB_BR_ROUTED,
			   if_out);
		break;
	case ST_BR_OUT_MTU:
		bridge_out(XFIB_BR_PORT_FWD, IF_ALL, if_br, 1000, XFIB_BR_ROUTED,
			   if_out);
		break;
	case ST_BR_OUT_DETACHED:
		bridge_out(XFIB_BR_PORT_FWD, IF_ALL, if_br, 1500, XFIB_BR_ROUTED,
			   if_out);
		delete(fd_tx, &if_out, "xfib_tx_ports");
		break;
	case ST_BR_OUT_VLAN:
		bridge_out(XFIB_BR_PORT_FWD, IF_ALL, if_br, 1500, 0,
			   if_out);
		break;
	}
}

static const struct port_case {
	enum port_state state;
	struct fwd_case c;
} port_cases[] = {
	{ ST_TX_DETACHED, { "v4 egress not in xfib_tx_ports", V4(DST4),
			    PASS(XFIB_PASS_EGRESS_NOT_ATTACHED) } },
	{ ST_TX_DETACHED, { "v6 egress not in xfib_tx_ports", V6(DST6),
			    PASS(XFIB_PASS_EGRESS_NOT_ATTACHED) } },
	{ ST_EGRESS_NOT_UP, { "v4 egress without XFIB_IF_UP", V4(DST4),
			      PASS(XFIB_PASS_EGRESS_DOWN) } },
	{ ST_EGRESS_NOT_UP, { "v6 egress without XFIB_IF_UP", V6(DST6),
			      PASS(XFIB_PASS_EGRESS_DOWN) } },
	{ ST_EGRESS_GONE, { "v4 egress gone from xfib_ifaces (copies kept)",
			    V4(DST4), PASS(XFIB_PASS_EGRESS_DOWN) } },
	{ ST_EGRESS_GONE, { "v6 egress gone from xfib_ifaces (copies kept)",
			    V6(DST6), PASS(XFIB_PASS_EGRESS_DOWN) } },
	{ ST_EGRESS_HIGH, { "v4 egress beyond XFIB_PORT_MAX", V4(DST4),
			    PASS(XFIB_PASS_EGRESS_DOWN) } },
	{ ST_EGRESS_HIGH, { "v6 egress beyond XFIB_PORT_MAX", V6(DST6),
			    PASS(XFIB_PASS_EGRESS_DOWN) } },
	{ ST_IN_GONE, { "v4 ingress gone from xfib_ifaces (copies kept)",
			V4(DST4), PASS(XFIB_PASS_NO_IFACE) } },
	{ ST_IN_GONE, { "v6 ingress gone from xfib_ifaces (copies kept)",
			V6(DST6), PASS(XFIB_PASS_NO_IFACE) } },
	{ ST_DEFAULT, { "v4 ingress beyond XFIB_PORT_MAX", V4(DST4),
			PASS(XFIB_PASS_NO_IFACE), .iif = &if_high } },
	{ ST_DEFAULT, { "v6 ingress beyond XFIB_PORT_MAX", V6(DST6),
			PASS(XFIB_PASS_NO_IFACE), .iif = &if_high } },
	{ ST_DEFAULT, { "v4 ingress on the last port, not mirrored", V4(DST4),
			PASS(XFIB_PASS_NO_IFACE), .iif = &if_last } },
	{ ST_IN_LAST, { "v4 ingress on the last port xfib_ifaces holds",
			V4(DST4), FWD4(mac_gw4), .iif = &if_last } },
	{ ST_IN_LAST, { "v6 ingress on the last port xfib_ifaces holds",
			V6(DST6), FWD6(mac_gw6), .iif = &if_last } },
	{ ST_EGRESS_NO_XMIT, { "v4 egress taking no redirected frames", V4(DST4),
			       PASS(XFIB_PASS_EGRESS_NO_XMIT) } },
	{ ST_EGRESS_NO_XMIT, { "v6 egress taking no redirected frames", V6(DST6),
			       PASS(XFIB_PASS_EGRESS_NO_XMIT) } },
	{ ST_IN_NO_XMIT, { "v4 ingress taking no redirected frames", V4(DST4),
			   FWD4(mac_gw4) } },
	{ ST_IN_NO_XMIT, { "v6 ingress taking no redirected frames", V6(DST6),
			   FWD6(mac_gw6) } },
	{ ST_DEFAULT, { "v4 ingress not in xfib_ifaces", V4(DST4),
			PASS(XFIB_PASS_NO_IFACE), .from_peer = true } },
	{ ST_DEFAULT, { "v6 ingress not in xfib_ifaces", V6(DST6),
			PASS(XFIB_PASS_NO_IFACE), .from_peer = true } },
	{ ST_IN_NO_FWD4, { "v4 with IPv4 forwarding off on ingress", V4(DST4),
			   PASS(XFIB_PASS_FWD_DISABLED) } },
	{ ST_IN_NO_FWD4, { "v6 with IPv4 forwarding off on ingress", V6(DST6),
			   FWD6(mac_gw6) } },
	{ ST_IN_NO_FWD6, { "v6 with IPv6 forwarding off on ingress", V6(DST6),
			   PASS(XFIB_PASS_FWD_DISABLED) } },
	{ ST_IN_NO_FWD6, { "v4 with IPv6 forwarding off on ingress", V4(DST4),
			   FWD4(mac_gw4) } },
	{ ST_IN_RPF, { "v6 with rp_filter flag on ingress (IPv4 only)",
		       V6(DST6), FWD6(mac_gw6) } },
	{ ST_IN_NO_IPV6, { "v6 with IPv6 disabled on ingress", V6(DST6),
			   PASS(XFIB_PASS_IPV6_DISABLED) } },
	{ ST_IN_NO_IPV6, { "v4 with IPv6 disabled on ingress", V4(DST4),
			   FWD4(mac_gw4) } },
	{ ST_OUT_NO_IPV6, { "v6 with IPv6 disabled on egress", V6(DST6),
			    PASS(XFIB_PASS_IPV6_DISABLED) } },
	{ ST_OUT_NO_IPV6, { "v4 with IPv6 disabled on egress", V4(DST4),
			    FWD4(mac_gw4) } },
	{ ST_V4_NONE, { "v4 with algo NONE", V4(DST4),
			PASS(XFIB_PASS_NO_FIB) } },
	{ ST_V4_NONE, { "v6 with v4 algo NONE", V6(DST6), FWD6(mac_gw6) } },
	{ ST_V4_BSEARCH6, { "v4 with algo BSEARCH6", V4(DST4),
			    PASS(XFIB_PASS_NO_FIB) } },
	{ ST_V6_NONE, { "v6 with algo NONE", V6(DST6),
			PASS(XFIB_PASS_NO_FIB) } },
	{ ST_V6_BSEARCH4, { "v6 with algo BSEARCH4", V6(DST6),
			    PASS(XFIB_PASS_NO_FIB) } },
	{ ST_V4_XFRM, { "v4 with IPv4 XFRM mode pass", V4(DST4),
			PASS(XFIB_PASS_XFRM) } },
	{ ST_V4_XFRM, { "v4 on-link with IPv4 XFRM mode pass", V4(HOST4),
			PASS(XFIB_PASS_XFRM) } },
	{ ST_V4_XFRM, { "v4 TTL 1 with IPv4 XFRM mode pass (checked first)",
			F4(-1, SRC4, DST4, 1, 32), PASS(XFIB_PASS_XFRM) } },
	{ ST_V4_XFRM, { "v6 with IPv4 XFRM mode pass", V6(DST6), FWD6(mac_gw6) } },
	{ ST_V6_XFRM, { "v6 with IPv6 XFRM mode pass", V6(DST6),
			PASS(XFIB_PASS_XFRM) } },
	{ ST_V6_XFRM, { "v4 with IPv6 XFRM mode pass", V4(DST4), FWD4(mac_gw4) } },
	{ ST_V4_XFRM, { "v4 from an unknown port, IPv4 XFRM mode pass", V4(DST4),
			PASS(XFIB_PASS_NO_IFACE), .from_peer = true } },
	{ ST_BR_IN, { "v4 from a bridge member", V4(DST4), FWD4(mac_gw4) } },
	{ ST_BR_IN, { "v6 from a bridge member", V6(DST6), FWD6(mac_gw6) } },
	{ ST_BR_IN, { "v4 from a bridge member to its own MAC, not the bridge's",
		      V4(DST4), PASS(XFIB_PASS_NOT_FOR_US), .dmac = mac_other } },
	{ ST_BR_IN_UNKNOWN, { "v4 from a bridge member, sender not in its FDB",
			      V4(DST4), PASS(XFIB_PASS_BRIDGE_LEARN) } },
	{ ST_BR_IN_UNKNOWN, { "v6 from a bridge member, sender not in its FDB",
			      V6(DST6), PASS(XFIB_PASS_BRIDGE_LEARN) } },
	{ ST_BR_IN_MOVED, { "v4 from a bridge member, sender behind another",
			    V4(DST4), PASS(XFIB_PASS_BRIDGE_LEARN) } },
	{ ST_BR_IN_LOCAL, { "v4 from a bridge member, sender the bridge's own MAC",
			    V4(DST4), PASS(XFIB_PASS_BRIDGE_LEARN) } },
	{ ST_BR_IN_NOT_FWD, { "v4 from a bridge member not forwarding",
			      V4(DST4), PASS(XFIB_PASS_BRIDGE) } },
	{ ST_BR_IN_NOT_FWD, { "v6 from a bridge member not forwarding",
			      V6(DST6), PASS(XFIB_PASS_BRIDGE) } },
	{ ST_BR_IN_VLAN, { "v4 from a member of a bridge not routed through",
			   V4(DST4), PASS(XFIB_PASS_BRIDGE) } },
	{ ST_BR_OUT, { "v4 out of a bridge, by its member", V4(DST4),
		       FWD4(mac_gw4) } },
	{ ST_BR_OUT, { "v6 out of a bridge, by its member", V6(DST6),
		       FWD6(mac_gw6) } },
	{ ST_BR_OUT_UNKNOWN, { "v4 out of a bridge, MAC not in its FDB",
			       V4(DST4), PASS(XFIB_PASS_FDB) } },
	{ ST_BR_OUT_UNKNOWN, { "v6 out of a bridge, MAC not in its FDB",
			       V6(DST6), PASS(XFIB_PASS_FDB) } },
	{ ST_BR_OUT_MOVED, { "v4 out of a bridge, a host's move not yet mirrored",
			     V4(DST4), PASS(XFIB_PASS_FDB) } },
	{ ST_BR_OUT_MOVED, { "v6 out of a bridge, a host's move not yet mirrored",
			     V6(DST6), PASS(XFIB_PASS_FDB) } },
	{ ST_BR_OUT_NOT_FWD, { "v4 out of a bridge, member not forwarding",
			       V4(DST4), PASS(XFIB_PASS_FDB) } },
	{ ST_BR_OUT_DOWN, { "v4 out of a bridge, member down", V4(DST4),
			    PASS(XFIB_PASS_FDB) } },
	{ ST_BR_OUT_NO_XMIT, { "v4 out of a bridge, member taking no redirected frames",
			       V4(DST4), PASS(XFIB_PASS_FDB) } },
	{ ST_BR_OUT_OTHER, { "v4 out of a bridge, FDB names another bridge's member",
			     V4(DST4), PASS(XFIB_PASS_FDB) } },
	{ ST_BR_OUT_MTU, { "v4 out of a bridge, over the member's MTU (1000)",
			   F4(-1, SRC4, DST4, 64, 1000), PASS(XFIB_PASS_MTU) } },
	{ ST_BR_OUT_MTU, { "v4 out of a bridge, at the member's MTU (1000)",
			   F4(-1, SRC4, DST4, 64, 972), FWD4(mac_gw4) } },
	{ ST_BR_OUT_DETACHED, { "v4 out of a bridge, member not attached",
				V4(DST4), PASS(XFIB_PASS_EGRESS_NOT_ATTACHED) } },
	{ ST_BR_OUT_VLAN, { "v4 out of a bridge not routed through", V4(DST4),
			    PASS(XFIB_PASS_EGRESS_NO_XMIT) } },
	{ ST_DEFAULT, { "v4 after restoring the tables", V4(DST4),
			FWD4(mac_gw4) } },
	{ ST_DEFAULT, { "v6 after restoring the tables", V6(DST6),
			FWD6(mac_gw6) } },
};

/* A packet to DST4 (via xt1) from src, as received on xt0. */
#define RPF_FROM(src) F4(-1, src, DST4, 64, 32)

/*
 * rp_filter (xfib_source_check4): the route back to the source, looked up
 * as the kernel's fib_validate_source() does, decides; a packet that
 * fails goes to the kernel, which drops it.
 */
static const struct port_case rpf_cases[] = {
	{ ST_IN_RPF, { "strict: no route back", RPF_FROM(SRC4),
		       PASS(XFIB_PASS_RP_FILTER) } },
	{ ST_IN_RPF, { "strict: no route back (gap)", RPF_FROM("198.18.4.9"),
		       PASS(XFIB_PASS_RP_FILTER) } },
	{ ST_IN_RPF, { "strict: back via a gateway on the ingress port",
		       RPF_FROM("198.18.5.9"), FWD4(mac_gw4) } },
	{ ST_IN_RPF, { "strict: back on-link on the ingress port",
		       RPF_FROM("198.18.17.9"), FWD4(mac_gw4) } },
	{ ST_IN_RPF, { "strict: back via a gateway on another port",
		       RPF_FROM("198.19.5.5"), PASS(XFIB_PASS_RP_FILTER) } },
	{ ST_IN_RPF, { "strict: back on-link on another port",
		       RPF_FROM("198.18.0.9"), PASS(XFIB_PASS_RP_FILTER) } },
	{ ST_IN_RPF, { "strict: multipath back, one path on the ingress port",
		       RPF_FROM("198.18.16.9"), FWD4(mac_gw4) } },
	{ ST_IN_RPF, { "strict: multipath back, another member's flow",
		       RPF_FROM("198.18.16.200"), FWD4(mac_gw4) } },
	{ ST_IN_RPF, { "strict: multipath back, all paths on another port",
		       RPF_FROM("198.18.12.9"), PASS(XFIB_PASS_RP_FILTER) } },
	{ ST_IN_RPF, { "strict: blackhole back", RPF_FROM("198.18.3.9"),
		       PASS(XFIB_PASS_RP_FILTER) } },
	{ ST_IN_RPF, { "strict: unreachable back", RPF_FROM("198.18.2.9"),
		       PASS(XFIB_PASS_RP_FILTER) } },
	{ ST_IN_RPF, { "strict: route back of a kind not mirrored",
		       RPF_FROM("198.18.6.9"), PASS(XFIB_PASS_RP_FILTER) } },
	{ ST_IN_RPF, { "strict: broadcast source of the ingress subnet",
		       RPF_FROM("198.18.17.255"),
		       PASS(XFIB_PASS_LOCAL_SOURCE) } },
	{ ST_IN_RPF, { "strict: local source", RPF_FROM("198.18.1.9"),
		       PASS(XFIB_PASS_LOCAL_SOURCE) } },
	{ ST_IN_RPF, { "strict: route back on ingress, TTL 1",
		       F4(-1, "198.18.5.9", DST4, 1, 32),
		       PASS(XFIB_PASS_TTL) } },

	{ ST_IN_RPF_LOOSE, { "loose: no route back", RPF_FROM(SRC4),
			     PASS(XFIB_PASS_RP_FILTER) } },
	{ ST_IN_RPF_LOOSE, { "loose: back via a gateway on another port",
			     RPF_FROM("198.19.5.5"), FWD4(mac_gw4) } },
	{ ST_IN_RPF_LOOSE, { "loose: back on-link on another port",
			     RPF_FROM("198.18.0.9"), FWD4(mac_gw4) } },
	{ ST_IN_RPF_LOOSE, { "loose: back via the ingress port",
			     RPF_FROM("198.18.5.9"), FWD4(mac_gw4) } },
	{ ST_IN_RPF_LOOSE, { "loose: multipath back on another port",
			     RPF_FROM("198.18.12.9"), FWD4(mac_gw4) } },
	{ ST_IN_RPF_LOOSE, { "loose: multipath back with a blackhole path",
			     RPF_FROM("198.18.18.9"),
			     PASS(XFIB_PASS_RP_FILTER) } },
	{ ST_IN_RPF_LOOSE, { "loose: multipath back without members",
			     RPF_FROM("198.18.13.9"),
			     PASS(XFIB_PASS_RP_FILTER) } },
	{ ST_IN_RPF_LOOSE, { "loose: multipath back whose member is multipath",
			     RPF_FROM("198.18.14.9"),
			     PASS(XFIB_PASS_RP_FILTER) } },
	{ ST_IN_RPF_LOOSE, { "loose: blackhole back", RPF_FROM("198.18.3.9"),
			     PASS(XFIB_PASS_RP_FILTER) } },
	{ ST_IN_RPF_LOOSE, { "loose: unreachable back", RPF_FROM("198.18.2.9"),
			     PASS(XFIB_PASS_RP_FILTER) } },
	{ ST_IN_RPF_LOOSE, { "loose: route back of a kind not mirrored",
			     RPF_FROM("198.18.6.9"),
			     PASS(XFIB_PASS_RP_FILTER) } },
	{ ST_IN_RPF_LOOSE, { "loose: nexthop of an unknown kind back",
			     RPF_FROM("198.18.10.9"),
			     PASS(XFIB_PASS_RP_FILTER) } },
	{ ST_IN_RPF_LOOSE, { "loose: broadcast source of a subnet",
			     RPF_FROM("198.18.17.255"),
			     PASS(XFIB_PASS_LOCAL_SOURCE) } },
	{ ST_IN_RPF_LOOSE, { "v6 with loose rp_filter (IPv4 only)", V6(DST6),
			     FWD6(mac_gw6) } },

	{ ST_DEFAULT, { "off: no route back", RPF_FROM(SRC4), FWD4(mac_gw4) } },
	{ ST_DEFAULT, { "off: blackhole back", RPF_FROM("198.18.3.9"),
			FWD4(mac_gw4) } },
	{ ST_DEFAULT, { "off: broadcast source of a subnet (kernel decides)",
			RPF_FROM("198.18.17.255"),
			PASS(XFIB_PASS_LOCAL_SOURCE) } },
	{ ST_IN_LOOSE_ONLY, { "the loose bit alone is off: no route back",
			      RPF_FROM(SRC4), FWD4(mac_gw4) } },

	/* xfib_nonlocal4 decides whether the source is looked up at all.
	 * With the /16 of the local /24 ruled out (xfibd never leaves it so),
	 * a port without rp_filter skips the lookup, one with it does not,
	 * and the local /32's clear hash slot bit still sends its source to
	 * the lookup: the skip is taken, only where it may be, and a source
	 * is ruled out only by both bits. */
	{ ST_LOCAL_RULED_OUT, { "off, /16 ruled out: source not looked up",
				RPF_FROM("198.18.1.9"), FWD4(mac_gw4) } },
	{ ST_LOCAL_RULED_OUT_RPF, { "strict, /16 ruled out: source looked up",
				    RPF_FROM("198.18.1.9"),
				    PASS(XFIB_PASS_LOCAL_SOURCE) } },
	{ ST_LOCAL_RULED_OUT, { "off, /16 ruled out: a local /32 by its slot",
				RPF_FROM("198.18.17.255"),
				PASS(XFIB_PASS_LOCAL_SOURCE) } },
};

static void cases_ports(void)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(port_cases); i++) {
		set_port_state(port_cases[i].state);
		run_case(&port_cases[i].c);
	}
	for (i = 0; i < ARRAY_SIZE(rpf_cases); i++) {
		set_port_state(rpf_cases[i].state);
		run_case(&rpf_cases[i].c);
	}
	set_port_state(ST_DEFAULT);
}

/*
 * Without xfibd's word the mirror is not forwarded by: every frame goes to
 * the kernel as pass_stale, whatever the maps would have done with it
 * (forward, drop, another reason), and xfibctl lookup says the same.
 */
static const struct fwd_case stale_cases[] = {
	{ "v4 via gateway, lease expired", V4(DST4), PASS(XFIB_PASS_STALE) },
	{ "v6 via gateway, lease expired", V6(DST6), PASS(XFIB_PASS_STALE) },
	{ "v4 on-link, lease expired", V4(HOST4), PASS(XFIB_PASS_STALE) },
	{ "v4 blackhole not dropped, lease expired", V4("198.18.3.1"),
	  PASS(XFIB_PASS_STALE) },
	{ "v4 no route, lease expired", V4("198.18.4.1"),
	  PASS(XFIB_PASS_STALE) },
	{ "v4 to another host's MAC, lease expired", V4(DST4),
	  PASS(XFIB_PASS_STALE), .dmac = mac_other },
	{ "ARP, lease expired", OTHER(-1, ETH_P_ARP), PASS(XFIB_PASS_STALE) },
};

static const struct fwd_case lease_cases[] = {
	{ "v4 via gateway, lease 2 s left", V4(DST4), FWD4(mac_gw4) },
	{ "v6 via gateway, lease 2 s left", V6(DST6), FWD6(mac_gw6) },
};

static void cases_lease(void)
{
	__u64 now = xfib_lease_clock();

	/* Expired a jiffy or more ago (the coarse clock's resolution). */
	put_lease(now - 20 * 1000000ull);
	run_cases(stale_cases, ARRAY_SIZE(stale_cases));
	/* Never given: the maps as created. */
	put_lease(0);
	run_cases(stale_cases, 2);
	put_lease(xfib_lease_clock() + 2000 * 1000000ull);
	run_cases(lease_cases, ARRAY_SIZE(lease_cases));
	lease_default();
}

/* ---- policy rules -------------------------------------------------------- */

/*
 * The rules' walk (include/xfib/rule_walk.h) against hand-made rules and
 * tables: each selector and action, both families. Main (slot 0) is the
 * bsearch instance above: DST4 and DST6 leave by their gateways (mac_gw4,
 * mac_gw6). Table slots (xfib_tables, the pools):
 *  1: "table 100": 198.19.0.0/16 and 2001:db8:1::/48 by the second
 *     gateways (mac_gw4b, mac_gw6b), with a throw route 198.19.2.0/24;
 *  2: a table the kernel keeps (state KERNEL);
 *  3: "table 300": only a default route, by the second gateways;
 *  4: "table 400": only a default route, on-link on the ingress port
 *     (a route back that passes strict rp_filter);
 *  8: "table 800", a large table with an instance of its own (dir24_8,
 *     trie6; put_table_inst()): 198.19.1.1/32 and 2001:db8::/32 by the
 *     second gateways, through a group (the instances' second level);
 * 11: "table 900": only a local default route (IPv4).
 */
enum { T100 = 1, TKERNEL = 2, T300 = 3, T400 = 4, TBH = 5, TUNR = 6,
       TUNSUPP = 7, TBIG = 8, TIFG = 9, TUNKDEV = 10, TLOCAL = 11 };

static void put_table(__u32 fam, __u32 slot, __u8 state, __u32 off,
		      __u8 log2n)
{
	struct xfib_table_desc d = { .off = off, .state = state,
				     .log2n = log2n, .gen = 1 };
	__u32 k = fam * XFIB_TABLE_SLOTS + slot;

	update(bpf_map__fd(skel->maps.xfib_tables), &k, &d, "xfib_tables");
}

/* Writes n IPv4 ranges at off, padded to a power of two; its log2. */
static __u8 put_tr4(__u32 off, const struct xfib_tr4 *r, unsigned int n)
{
	__u8 l = log2_ceil(n);
	__u32 i, idx;

	for (i = 0; i < (1u << l); i++) {
		idx = off + i;
		update(bpf_map__fd(skel->maps.xfib_tpool4), &idx,
		       &r[i < n ? i : n - 1], "xfib_tpool4");
	}
	return l;
}

static __u8 put_tr6(__u32 off, const struct xfib_tr6 *r, unsigned int n)
{
	__u8 l = log2_ceil(n);
	__u32 i, idx;

	for (i = 0; i < (1u << l); i++) {
		idx = off + i;
		update(bpf_map__fd(skel->maps.xfib_tpool6), &idx,
		       &r[i < n ? i : n - 1], "xfib_tpool6");
	}
	return l;
}

/*
 * A large table's instance, as xfibd's dir24_8 (IPv4) or trie6 (IPv6)
 * builds one: a tbl24 and one chunk of groups in the table slot's first
 * map-in-map slot of the family's outer maps, published by the slot's
 * descriptor. tbl24 entry e24 leads to group 0, whose entry g8 answers
 * nh; everything else has no route.
 */
static void put_table_inst(__u32 fam, __u32 slot, __u32 e24, __u32 g8, __u32 nh)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_MMAPABLE);
	struct xfib_table_desc d = {
		.off = XFIB_TABLE_INST_SLOT(slot, 0), .state = XFIB_TABLE_INSTANCE,
		.algo = fam == XFIB_V4 ? XFIB_ALGO_DIR24_8 : XFIB_ALGO_TRIE6, .gen = 1,
	};
	int o24 = bpf_map__fd(fam == XFIB_V4 ? skel->maps.xfib_dir24_tbl24 :
					       skel->maps.xfib_trie6_tbl24);
	int o8 = bpf_map__fd(fam == XFIB_V4 ? skel->maps.xfib_dir24_tbl8 :
					      skel->maps.xfib_trie6_tbl8);
	__u32 k = fam * XFIB_TABLE_SLOTS + slot, k8 = d.off * XFIB_POOL_SLOT_CHUNKS;
	int fd24, fd8;
	__u32 *t24, *t8;

	fd24 = bpf_map_create(BPF_MAP_TYPE_ARRAY, "xfib_tbl24", 4,
			      XFIB_DIR24_TBL24_BYTES, 1, &o);
	fd8 = bpf_map_create(BPF_MAP_TYPE_ARRAY, XFIB_POOL_CHUNK_NAME, 4, 8,
			     XFIB_POOL_CHUNK_VALUES, &o);
	if (fd24 < 0 || fd8 < 0)
		die("creating a table instance's maps: %s", strerror(errno));
	t24 = mmap(NULL, XFIB_DIR24_TBL24_BYTES, PROT_READ | PROT_WRITE,
		   MAP_SHARED, fd24, 0);
	t8 = mmap(NULL, XFIB_POOL_CHUNK_BYTES, PROT_READ | PROT_WRITE,
		  MAP_SHARED, fd8, 0);
	if (t24 == MAP_FAILED || t8 == MAP_FAILED)
		die("mapping a table instance: %s", strerror(errno));
	/* dir24_8's and trie6's group bit are the same. */
	t24[e24] = XFIB_DIR24_EXT | 0;
	t8[g8] = nh;
	update(o8, &k8, &fd8, "a table instance's chunk");
	update(o24, &d.off, &fd24, "a table instance's tbl24");
	update(bpf_map__fd(skel->maps.xfib_tables), &k, &d, "xfib_tables");
	munmap(t24, XFIB_DIR24_TBL24_BYTES);
	munmap(t8, XFIB_POOL_CHUNK_BYTES);
	close(fd24);
	close(fd8);
}

static void put_rule_tables(void)
{
	static const struct xfib_tr4 t100[] = {
		{ 0, XFIB_TR4_PACK(XFIB_NH_IDX_NONE, 0) },
		{ H4(198, 19, 0, 0), XFIB_TR4_PACK(NH_GW4_B, 16) },
		{ H4(198, 19, 2, 0), XFIB_TR4_PACK(XFIB_NH_IDX_NONE, 24) },
		{ H4(198, 19, 3, 0), XFIB_TR4_PACK(NH_GW4_B, 16) },
		{ H4(198, 20, 0, 0), XFIB_TR4_PACK(XFIB_NH_IDX_NONE, 0) },
	};
	static const struct xfib_tr4 t300[] = {
		{ 0, XFIB_TR4_PACK(NH_GW4_B, 0) },
	};
	static const struct xfib_tr4 t400[] = {
		{ 0, XFIB_TR4_PACK(NH_CONN_IN, 0) },
	};
	static const struct xfib_tr6 t100_6[] = {
		{ 0, 0, XFIB_NH_IDX_NONE, 0, { 0 } },
		{ H6(1, 0), 0, NH_GW6_B, 48, { 0 } },
		{ H6(2, 0), 0, XFIB_NH_IDX_NONE, 0, { 0 } },
	};
	static const struct xfib_tr6 t300_6[] = {
		{ 0, 0, NH_GW6_B, 0, { 0 } },
	};
	/* default routes of error kinds, and one xfib does not mirror */
	static const struct xfib_tr4 tbh[] = {
		{ 0, XFIB_TR4_PACK(NH_BLACKHOLE, 0) },
	};
	static const struct xfib_tr4 tunr[] = {
		{ 0, XFIB_TR4_PACK(NH_UNREACH, 0) },
	};
	static const struct xfib_tr4 tunsupp[] = {
		{ 0, XFIB_TR4_PACK(NH_UNSUPP, 0) },
	};
	static const struct xfib_tr6 tbh_6[] = {
		{ 0, 0, NH_BLACKHOLE, 0, { 0 } },
	};
	static const struct xfib_tr4 tlocal[] = {
		{ 0, XFIB_TR4_PACK(XFIB_NH_IDX_LOCAL, 0) },
	};

	/* Odd offsets: a table starts anywhere in its pool. */
	put_table(XFIB_V4, T100, XFIB_TABLE_READY, 64, put_tr4(64, t100, 5));
	put_table(XFIB_V4, TKERNEL, XFIB_TABLE_KERNEL, 0, 0);
	put_table(XFIB_V4, T300, XFIB_TABLE_READY, 8, put_tr4(8, t300, 1));
	put_table(XFIB_V4, T400, XFIB_TABLE_READY, 12, put_tr4(12, t400, 1));
	put_table(XFIB_V6, T100, XFIB_TABLE_READY, 32, put_tr6(32, t100_6, 3));
	put_table(XFIB_V6, TKERNEL, XFIB_TABLE_KERNEL, 0, 0);
	put_table(XFIB_V6, T300, XFIB_TABLE_READY, 4, put_tr6(4, t300_6, 1));
	put_table(XFIB_V4, TBH, XFIB_TABLE_READY, 16, put_tr4(16, tbh, 1));
	put_table(XFIB_V4, TUNR, XFIB_TABLE_READY, 17, put_tr4(17, tunr, 1));
	put_table(XFIB_V4, TUNSUPP, XFIB_TABLE_READY, 18, put_tr4(18, tunsupp, 1));
	put_table(XFIB_V6, TBH, XFIB_TABLE_READY, 5, put_tr6(5, tbh_6, 1));
	put_table(XFIB_V4, TLOCAL, XFIB_TABLE_READY, 19, put_tr4(19, tlocal, 1));
	put_table_inst(XFIB_V4, TBIG, H4(198, 19, 1, 0) >> 8, 1, NH_GW4_B);
	/* 2001:db8::/32: the /24 2001:0d00::, then the byte 0xb8 */
	put_table_inst(XFIB_V6, TBIG, 0x20010d, 0xb8, NH_GW6_B);
}

/* A rule as xfibd publishes it: no selector, no suppression. */
static struct xfib_rule rule(__u32 prio, __u8 action, __u32 table, __u8 tslot)
{
	struct xfib_rule x = {
		.priority = prio, .action = action, .table = table,
		.tslot = tslot, .goto_idx = XFIB_RULE_NO_TARGET,
		.suppress_prefixlen = 0xffffffff, .suppress_ifgroup = 0xffffffff,
	};

	return x;
}

static struct xfib_rule lookup(__u32 prio, __u32 table, __u8 tslot)
{
	return rule(prio, FR_ACT_TO_TBL, table, tslot);
}

static struct xfib_rule from4(struct xfib_rule x, const char *pfx, __u8 len)
{
	memcpy(x.src, &(__be32){ addr4(pfx) }, 4);
	x.src_len = len;
	return x;
}

static struct xfib_rule to4(struct xfib_rule x, const char *pfx, __u8 len)
{
	memcpy(x.dst, &(__be32){ addr4(pfx) }, 4);
	x.dst_len = len;
	return x;
}

static struct xfib_rule from6(struct xfib_rule x, const char *pfx, __u8 len)
{
	addr6(pfx, x.src);
	x.src_len = len;
	return x;
}

/* Publishes rules r[0..n) after "lookup local" into the family's next
 * half (fallback: the header's), as xfibd does. */
static void put_rules(__u32 fam, const struct xfib_rule *r, unsigned int n,
		      __u32 fallback)
{
	static struct xfib_rule_set set;
	static __u32 gen[XFIB_FAMILIES];
	struct xfib_rules_active a;
	__u32 k;

	memset(&set, 0, sizeof(set));
	set.rule[0] = lookup(0, 255, XFIB_TSLOT_LOCAL);
	memcpy(&set.rule[1], r, n * sizeof(*r));
	for (k = 0; k < n; k++)
		if (r[k].suppress_ifgroup != 0xffffffff)
			set.hdr.ifgroup = 1;
	set.hdr.count = set.hdr.total = n + 1;
	set.hdr.fallback = fallback;
	set.hdr.walk = n > 0;
	set.hdr.first = 1;
	gen[fam]++;
	set.hdr.generation = gen[fam];
	a.half = gen[fam] & 1;
	a.generation = gen[fam];
	k = fam * 2 + a.half;
	update(bpf_map__fd(skel->maps.xfib_rules), &k, &set, "xfib_rules");
	update(bpf_map__fd(skel->maps.xfib_rules_active), &fam, &a,
	       "xfib_rules_active");
}

/* A frame from src to dst on xt0 under rules r: the verdict, counter and
 * next hop, and xfibctl lookup's answer, must be these. */
static void rule_case(const char *name, __u32 fam, const struct xfib_rule *r,
		      unsigned int n, const char *src, const char *dst,
		      __u32 verdict, int reason, const __u8 *mac)
{
	struct fwd_case c = {
		.name = name,
		.pkt = { fam == XFIB_V4 ? 4 : 6, -1, src, dst, 64, 32, 0 },
		.verdict = verdict, .reason = reason, .next_mac = mac,
		.iif = &if_in,
	};

	put_rules(fam, r, n, XFIB_RULES_OK);
	run_case(&c);
}

#define RULES(...) ((const struct xfib_rule[]){ __VA_ARGS__ }), \
	(sizeof((const struct xfib_rule[]){ __VA_ARGS__ }) / sizeof(struct xfib_rule))

#define MAIN4 lookup(32766, 254, XFIB_TSLOT_MAIN)
#define SRC4_24 "198.18.200.0", 24

static void cases_rules4(void)
{
	struct xfib_rule x;

	/* from, and not from */
	rule_case("rules v4: from the source's /24: table 100", XFIB_V4,
		  RULES(from4(lookup(100, 100, T100), SRC4_24), MAIN4),
		  SRC4, DST4, XDP_REDIRECT, XFIB_FWD_V4, mac_gw4b);
	rule_case("rules v4: from another /24: main", XFIB_V4,
		  RULES(from4(lookup(100, 100, T100), SRC4_24), MAIN4),
		  "198.18.201.7", DST4, XDP_REDIRECT, XFIB_FWD_V4, mac_gw4);
	x = from4(lookup(100, 100, T100), SRC4_24);
	x.flags |= XFIB_RULE_F_INVERT;
	rule_case("rules v4: not from the source's /24: main", XFIB_V4,
		  RULES(x, MAIN4), SRC4, DST4, XDP_REDIRECT, XFIB_FWD_V4, mac_gw4);
	rule_case("rules v4: not from another /24: table 100", XFIB_V4,
		  RULES(x, MAIN4), "198.18.201.7", DST4, XDP_REDIRECT,
		  XFIB_FWD_V4, mac_gw4b);
	/* to */
	rule_case("rules v4: to 198.19.0.0/16: table 100", XFIB_V4,
		  RULES(to4(lookup(100, 100, T100), "198.19.0.0", 16), MAIN4),
		  SRC4, DST4, XDP_REDIRECT, XFIB_FWD_V4, mac_gw4b);
	rule_case("rules v4: to 198.19.9.0/24: main", XFIB_V4,
		  RULES(to4(lookup(100, 100, T100), "198.19.9.0", 24), MAIN4),
		  SRC4, DST4, XDP_REDIRECT, XFIB_FWD_V4, mac_gw4);
	/* iif: the ingress port, and a device that is not it */
	x = lookup(100, 100, T100);
	x.flags |= XFIB_RULE_F_IIF;
	x.iif = if_in;
	rule_case("rules v4: iif the ingress port: table 100", XFIB_V4,
		  RULES(x, MAIN4), SRC4, DST4, XDP_REDIRECT, XFIB_FWD_V4, mac_gw4b);
	x.iif = if_out;
	rule_case("rules v4: iif another port: main", XFIB_V4,
		  RULES(x, MAIN4), SRC4, DST4, XDP_REDIRECT, XFIB_FWD_V4, mac_gw4);
	/* a selector xfibd found to fail for every forwarded packet (oif) */
	x = lookup(100, 100, T100);
	x.flags |= XFIB_RULE_F_OIF | XFIB_RULE_F_MATCH_NONE;
	rule_case("rules v4: oif: never", XFIB_V4, RULES(x, MAIN4), SRC4, DST4,
		  XDP_REDIRECT, XFIB_FWD_V4, mac_gw4);
	x.flags |= XFIB_RULE_F_INVERT;
	rule_case("rules v4: not oif: always", XFIB_V4, RULES(x, MAIN4), SRC4,
		  DST4, XDP_REDIRECT, XFIB_FWD_V4, mac_gw4b);
	/* tos: the frames' is 0x28; this kernel's mask as xfibd gives it */
	x = lookup(100, 100, T100);
	x.tos = 0x28;
	x.tos_mask = 0xfc;
	rule_case("rules v4: tos 0x28: table 100", XFIB_V4, RULES(x, MAIN4),
		  SRC4, DST4, XDP_REDIRECT, XFIB_FWD_V4, mac_gw4b);
	x.tos = 0x08;
	x.tos_mask = 0x1c;
	rule_case("rules v4: tos 0x08 of the low bits: table 100", XFIB_V4,
		  RULES(x, MAIN4), SRC4, DST4, XDP_REDIRECT, XFIB_FWD_V4, mac_gw4b);
	x.tos_mask = 0xfc;
	rule_case("rules v4: tos 0x08 of the DSCP: main", XFIB_V4,
		  RULES(x, MAIN4), SRC4, DST4, XDP_REDIRECT, XFIB_FWD_V4, mac_gw4);
	/* ipproto, sport, dport: the frames are UDP 40000 -> 5001 */
	x = lookup(100, 100, T100);
	x.ip_proto = IPPROTO_UDP;
	x.flags |= XFIB_RULE_F_DPORT;
	x.dport_lo = 5000;
	x.dport_hi = 5010;
	rule_case("rules v4: ipproto udp dport 5000-5010: table 100", XFIB_V4,
		  RULES(x, MAIN4), SRC4, DST4, XDP_REDIRECT, XFIB_FWD_V4, mac_gw4b);
	x.dport_lo = x.dport_hi = 5002;
	rule_case("rules v4: dport 5002: main", XFIB_V4, RULES(x, MAIN4), SRC4,
		  DST4, XDP_REDIRECT, XFIB_FWD_V4, mac_gw4);
	x = lookup(100, 100, T100);
	x.ip_proto = IPPROTO_TCP;
	rule_case("rules v4: ipproto tcp: main", XFIB_V4, RULES(x, MAIN4), SRC4,
		  DST4, XDP_REDIRECT, XFIB_FWD_V4, mac_gw4);
	x = lookup(100, 100, T100);
	x.flags |= XFIB_RULE_F_SPORT;
	x.sport_lo = 40000;
	x.sport_hi = 40000;
	rule_case("rules v4: sport 40000: table 100", XFIB_V4, RULES(x, MAIN4),
		  SRC4, DST4, XDP_REDIRECT, XFIB_FWD_V4, mac_gw4b);
	/* goto, nop */
	x = rule(50, FR_ACT_GOTO, 0, XFIB_TSLOT_NONE);
	x.goto_prio = 32766;
	x.goto_idx = 3;
	rule_case("rules v4: goto past table 100: main", XFIB_V4,
		  RULES(x, lookup(100, 100, T100), MAIN4), SRC4, DST4,
		  XDP_REDIRECT, XFIB_FWD_V4, mac_gw4);
	x.goto_idx = XFIB_RULE_NO_TARGET;
	x.flags |= XFIB_RULE_F_UNRESOLVED;
	rule_case("rules v4: goto without a target: on to table 100", XFIB_V4,
		  RULES(x, lookup(100, 100, T100), MAIN4), SRC4, DST4,
		  XDP_REDIRECT, XFIB_FWD_V4, mac_gw4b);
	rule_case("rules v4: nop: on to table 100", XFIB_V4,
		  RULES(rule(50, FR_ACT_NOP, 0, XFIB_TSLOT_NONE),
			lookup(100, 100, T100), MAIN4),
		  SRC4, DST4, XDP_REDIRECT, XFIB_FWD_V4, mac_gw4b);
	/* the actions that end in the kernel */
	rule_case("rules v4: blackhole: kernel", XFIB_V4,
		  RULES(rule(50, FR_ACT_BLACKHOLE, 0, XFIB_TSLOT_NONE), MAIN4),
		  SRC4, DST4, XDP_PASS, XFIB_PASS_RULE, NULL);
	rule_case("rules v4: unreachable: kernel", XFIB_V4,
		  RULES(rule(50, FR_ACT_UNREACHABLE, 0, XFIB_TSLOT_NONE), MAIN4),
		  SRC4, DST4, XDP_PASS, XFIB_PASS_RULE, NULL);
	rule_case("rules v4: prohibit, from another /24: main", XFIB_V4,
		  RULES(from4(rule(50, FR_ACT_PROHIBIT, 0, XFIB_TSLOT_NONE),
			      "198.18.201.0", 24), MAIN4),
		  SRC4, DST4, XDP_REDIRECT, XFIB_FWD_V4, mac_gw4);
	/* a throw route, and no route: on to the next rule */
	rule_case("rules v4: table 100's throw route: main", XFIB_V4,
		  RULES(lookup(100, 100, T100), MAIN4), SRC4, "198.19.2.5",
		  XDP_REDIRECT, XFIB_FWD_V4, mac_gw4);
	rule_case("rules v4: no route in table 100 nor after: no route",
		  XFIB_V4, RULES(lookup(100, 100, T100)), SRC4, "198.20.0.1",
		  XDP_PASS, XFIB_PASS_NO_ROUTE, NULL);
	/* suppress_prefixlength */
	x = lookup(100, 300, T300);
	x.suppress_prefixlen = 0;
	rule_case("rules v4: table 300's default suppressed: main", XFIB_V4,
		  RULES(x, MAIN4), SRC4, DST4, XDP_REDIRECT, XFIB_FWD_V4, mac_gw4);
	x.suppress_prefixlen = 0xffffffff;
	rule_case("rules v4: table 300's default: taken", XFIB_V4,
		  RULES(x, MAIN4), SRC4, DST4, XDP_REDIRECT, XFIB_FWD_V4, mac_gw4b);
	x = lookup(100, 100, T100);
	x.suppress_prefixlen = 15;
	rule_case("rules v4: table 100's /16 over suppress_prefixlength 15",
		  XFIB_V4, RULES(x, MAIN4), SRC4, DST4, XDP_REDIRECT, XFIB_FWD_V4,
		  mac_gw4b);
	x.suppress_prefixlen = 16;
	rule_case("rules v4: table 100's /16 suppressed at 16: main", XFIB_V4,
		  RULES(x, MAIN4), SRC4, DST4, XDP_REDIRECT, XFIB_FWD_V4, mac_gw4);
	/* the kernel suppresses no error: an error route's answer stands */
	x = lookup(100, 500, TBH);
	x.suppress_prefixlen = 0;
	rule_case("rules v4: a blackhole default not suppressed at 0: dropped",
		  XFIB_V4, RULES(x, MAIN4), SRC4, DST4, XDP_DROP,
		  XFIB_DROP_BLACKHOLE, NULL);
	x = lookup(100, 600, TUNR);
	x.suppress_prefixlen = 0;
	rule_case("rules v4: an unreachable default not suppressed at 0: kernel",
		  XFIB_V4, RULES(x, MAIN4), SRC4, DST4, XDP_PASS,
		  XFIB_PASS_UNREACHABLE, NULL);
	x = lookup(100, 700, TUNSUPP);
	x.suppress_prefixlen = 0;
	rule_case("rules v4: a route xfib does not mirror under suppression: kernel",
		  XFIB_V4, RULES(x, MAIN4), SRC4, DST4, XDP_PASS,
		  XFIB_PASS_RULE, NULL);
	/* wg-quick's "lookup main suppress_prefixlength 0" on slot 0: an
	 * answer of main's default route (its index says so) gives way, any
	 * other is main's */
	x = MAIN4;
	x.suppress_prefixlen = 0;
	rule_case("rules v4: main's default suppressed: table 300", XFIB_V4,
		  RULES(x, lookup(32767, 300, T300)), SRC4, DFLT4, XDP_REDIRECT,
		  XFIB_FWD_V4, mac_gw4b);
	rule_case("rules v4: main's /16 not suppressed at 0: main", XFIB_V4,
		  RULES(x, lookup(32767, 300, T300)), SRC4, DST4, XDP_REDIRECT,
		  XFIB_FWD_V4, mac_gw4);
	rule_case("rules v4: main's default suppressed, no rule after: no route",
		  XFIB_V4, RULES(x), SRC4, DFLT4, XDP_PASS, XFIB_PASS_NO_ROUTE,
		  NULL);
	rule_case("rules v4: main's default, not suppressed: main", XFIB_V4,
		  RULES(MAIN4, lookup(32767, 300, T300)), SRC4, DFLT4,
		  XDP_REDIRECT, XFIB_FWD_V4, mac_gw4);
	x.suppress_prefixlen = 8; /* xfibd gives it a copy: never on slot 0 */
	rule_case("rules v4: main on slot 0 suppressing at 8: kernel", XFIB_V4,
		  RULES(x, lookup(32767, 300, T300)), SRC4, DST4, XDP_PASS,
		  XFIB_PASS_RULE, NULL);
	/* tables and rules the kernel keeps */
	rule_case("rules v4: a table the kernel keeps: kernel", XFIB_V4,
		  RULES(lookup(100, 200, TKERNEL), MAIN4), SRC4, DST4, XDP_PASS,
		  XFIB_PASS_RULE, NULL);
	rule_case("rules v4: a table without a slot: kernel", XFIB_V4,
		  RULES(lookup(100, 201, XFIB_TSLOT_NONE), MAIN4), SRC4, DST4,
		  XDP_PASS, XFIB_PASS_RULE, NULL);
	x = lookup(100, 100, T100);
	x.cls = XFIB_RULE_KERNEL;
	x.reason = XFIB_RULE_R_FWMARK;
	x.flags |= XFIB_RULE_F_FWMARK;
	x.fwmark = x.fwmask = 1;
	rule_case("rules v4: a fwmark rule: kernel", XFIB_V4, RULES(x, MAIN4),
		  SRC4, DST4, XDP_PASS, XFIB_PASS_RULE, NULL);
	x = from4(x, "198.18.201.0", 24);
	rule_case("rules v4: a fwmark rule from another /24: main", XFIB_V4,
		  RULES(x, MAIN4), SRC4, DST4, XDP_REDIRECT, XFIB_FWD_V4, mac_gw4);
	x.flags |= XFIB_RULE_F_INVERT;
	rule_case("rules v4: not (a fwmark rule from another /24): kernel",
		  XFIB_V4, RULES(x, MAIN4), SRC4, DST4, XDP_PASS, XFIB_PASS_RULE,
		  NULL);
	/* local's routes come first, whatever the rules say */
	rule_case("rules v4: a local destination: kernel", XFIB_V4,
		  RULES(lookup(100, 300, T300), MAIN4), SRC4, "198.18.1.5",
		  XDP_PASS, XFIB_PASS_LOCAL, NULL);
	/* rules xfibd could not publish whole */
	put_rules(XFIB_V4, &x, 1, XFIB_RULES_ORDER);
	{
		struct fwd_case c = { "rules v4: the family's rules to the kernel",
				      V4(DST4), PASS(XFIB_PASS_RULE),
				      .iif = &if_in };

		run_case(&c);
	}
}

/* rp_filter through the rules: the route back of SRC4 is the rules'
 * for the reversed flow (from DST4, to SRC4, from lo). Main has none. */
static void cases_rules_rpf(void)
{
	struct xfib_rule x;

	put_iface(if_in, mac_in, IF_ALL | XFIB_IF_RPF);
	rule_case("rules v4 rp_filter: no route back in main", XFIB_V4,
		  RULES(from4(lookup(100, 100, T100), "198.18.201.0", 24), MAIN4),
		  SRC4, DST4, XDP_PASS, XFIB_PASS_RP_FILTER, NULL);
	rule_case("rules v4 rp_filter: back by table 400, on the port", XFIB_V4,
		  RULES(to4(lookup(100, 400, T400), SRC4_24), MAIN4), SRC4, DST4,
		  XDP_REDIRECT, XFIB_FWD_V4, mac_gw4);
	rule_case("rules v4 rp_filter: back by table 300, another port",
		  XFIB_V4, RULES(to4(lookup(100, 300, T300), SRC4_24), MAIN4),
		  SRC4, DST4, XDP_PASS, XFIB_PASS_RP_FILTER, NULL);
	/* "iif lo" matches the route back's lookup, no forwarded packet */
	x = lookup(100, 300, T300);
	x.flags |= XFIB_RULE_F_IIF | XFIB_RULE_F_IIF_LOOPBACK |
		   XFIB_RULE_F_MATCH_NONE;
	rule_case("rules v4 rp_filter: an iif lo rule: kernel", XFIB_V4,
		  RULES(x, MAIN4), SRC4, DST4, XDP_PASS, XFIB_PASS_RULE, NULL);
	put_iface(if_in, mac_in, IF_ALL | XFIB_IF_RPF | XFIB_IF_RPF_LOOSE);
	rule_case("rules v4 rp_filter loose: back by table 300", XFIB_V4,
		  RULES(to4(lookup(100, 300, T300), SRC4_24), MAIN4), SRC4, DST4,
		  XDP_REDIRECT, XFIB_FWD_V4, mac_gw4);
	put_iface(if_in, mac_in, IF_ALL);
	/* rp_filter off: with rules the kernel still looks the source up
	 * through them, and a local route back makes it a martian
	 * (xfib_nonlocal4, all clear here, rules nothing out) */
	rule_case("rules v4 no rp_filter: back by table 900, local: kernel",
		  XFIB_V4, RULES(to4(lookup(100, 900, TLOCAL), SRC4_24), MAIN4),
		  SRC4, DST4, XDP_PASS, XFIB_PASS_LOCAL_SOURCE, NULL);
	rule_case("rules v4 no rp_filter: back by table 300", XFIB_V4,
		  RULES(to4(lookup(100, 300, T300), SRC4_24), MAIN4), SRC4, DST4,
		  XDP_REDIRECT, XFIB_FWD_V4, mac_gw4);
	rule_case("rules v4 no rp_filter: back by a blackhole", XFIB_V4,
		  RULES(to4(lookup(100, 500, TBH), SRC4_24), MAIN4), SRC4, DST4,
		  XDP_REDIRECT, XFIB_FWD_V4, mac_gw4);
	rule_case("rules v4 no rp_filter: no route back", XFIB_V4,
		  RULES(from4(lookup(100, 100, T100), "198.18.201.0", 24), MAIN4),
		  SRC4, DST4, XDP_REDIRECT, XFIB_FWD_V4, mac_gw4);
}

#define MAIN6 lookup(32766, 254, XFIB_TSLOT_MAIN)

static void cases_rules6(void)
{
	struct xfib_rule x;

	rule_case("rules v6: from the source's /48: table 100", XFIB_V6,
		  RULES(from6(lookup(100, 100, T100), "2001:db8:ffff::", 48), MAIN6),
		  SRC6, DST6, XDP_REDIRECT, XFIB_FWD_V6, mac_gw6b);
	rule_case("rules v6: from another /64: main", XFIB_V6,
		  RULES(from6(lookup(100, 100, T100), "2001:db8:ffff:1::", 64),
			MAIN6),
		  SRC6, DST6, XDP_REDIRECT, XFIB_FWD_V6, mac_gw6);
	x = lookup(100, 100, T100);
	x.tos = 0x28;
	x.tos_mask = 0xff;
	rule_case("rules v6: traffic class 0x28: table 100", XFIB_V6,
		  RULES(x, MAIN6), SRC6, DST6, XDP_REDIRECT, XFIB_FWD_V6, mac_gw6b);
	x.tos = 0x2c;
	rule_case("rules v6: traffic class 0x2c: main", XFIB_V6,
		  RULES(x, MAIN6), SRC6, DST6, XDP_REDIRECT, XFIB_FWD_V6, mac_gw6);
	x = lookup(100, 100, T100);
	x.ip_proto = IPPROTO_UDP;
	x.flags |= XFIB_RULE_F_DPORT;
	x.dport_lo = x.dport_hi = 5001;
	rule_case("rules v6: ipproto udp dport 5001: table 100", XFIB_V6,
		  RULES(x, MAIN6), SRC6, DST6, XDP_REDIRECT, XFIB_FWD_V6, mac_gw6b);
	x = lookup(100, 300, T300);
	x.suppress_prefixlen = 0;
	rule_case("rules v6: table 300's default suppressed: main", XFIB_V6,
		  RULES(x, MAIN6), SRC6, DST6, XDP_REDIRECT, XFIB_FWD_V6, mac_gw6);
	x = lookup(100, 500, TBH);
	x.suppress_prefixlen = 0;
	rule_case("rules v6: a blackhole default not suppressed at 0: dropped",
		  XFIB_V6, RULES(x, MAIN6), SRC6, DST6, XDP_DROP,
		  XFIB_DROP_BLACKHOLE, NULL);
	x = MAIN6;
	x.suppress_prefixlen = 0;
	rule_case("rules v6: main's default suppressed: table 300", XFIB_V6,
		  RULES(x, lookup(32767, 300, T300)), SRC6, DFLT6, XDP_REDIRECT,
		  XFIB_FWD_V6, mac_gw6b);
	rule_case("rules v6: main's /48 not suppressed at 0: main", XFIB_V6,
		  RULES(x, lookup(32767, 300, T300)), SRC6, DST6, XDP_REDIRECT,
		  XFIB_FWD_V6, mac_gw6);
	rule_case("rules v6: main's default, not suppressed: main", XFIB_V6,
		  RULES(MAIN6, lookup(32767, 300, T300)), SRC6, DFLT6,
		  XDP_REDIRECT, XFIB_FWD_V6, mac_gw6);
	rule_case("rules v6: no route in table 100: main", XFIB_V6,
		  RULES(lookup(100, 100, T100), MAIN6), SRC6, "2001:db8:2::1",
		  XDP_PASS, XFIB_PASS_NO_ROUTE, NULL);
	rule_case("rules v6: a table the kernel keeps: kernel", XFIB_V6,
		  RULES(lookup(100, 200, TKERNEL), MAIN6), SRC6, DST6, XDP_PASS,
		  XFIB_PASS_RULE, NULL);
	rule_case("rules v6: a large table's trie6 instance: table 800", XFIB_V6,
		  RULES(from6(lookup(100, 800, TBIG), "2001:db8:ffff::", 48), MAIN6),
		  SRC6, DST6, XDP_REDIRECT, XFIB_FWD_V6, mac_gw6b);
	rule_case("rules v6: no route in table 800's instance: main", XFIB_V6,
		  RULES(lookup(100, 800, TBIG), MAIN6), SRC6, "2001:db9::1",
		  XDP_PASS, XFIB_PASS_NO_ROUTE, NULL);
	x = lookup(100, 800, TBIG);
	x.suppress_prefixlen = 8;
	rule_case("rules v6: suppress_prefixlength on an instance: kernel",
		  XFIB_V6, RULES(x, MAIN6), SRC6, DST6, XDP_PASS,
		  XFIB_PASS_RULE, NULL);
}

static void cases_rules_large4(void)
{
	struct xfib_rule x;

	rule_case("rules v4: a large table's dir24_8 instance: table 800",
		  XFIB_V4, RULES(from4(lookup(100, 800, TBIG), SRC4_24), MAIN4),
		  SRC4, DST4, XDP_REDIRECT, XFIB_FWD_V4, mac_gw4b);
	rule_case("rules v4: no route in table 800's group: main", XFIB_V4,
		  RULES(lookup(100, 800, TBIG), MAIN4), SRC4, "198.19.1.2",
		  XDP_REDIRECT, XFIB_FWD_V4, mac_gw4);
	rule_case("rules v4: no route in table 800's tbl24: main", XFIB_V4,
		  RULES(lookup(100, 800, TBIG), MAIN4), SRC4, "198.19.3.1",
		  XDP_REDIRECT, XFIB_FWD_V4, mac_gw4);
	x = lookup(100, 800, TBIG);
	x.suppress_prefixlen = 0;
	rule_case("rules v4: suppress_prefixlength on an instance: kernel",
		  XFIB_V4, RULES(x, MAIN4), SRC4, DST4, XDP_PASS,
		  XFIB_PASS_RULE, NULL);
}

/*
 * The group member the frame rule_case() sends to dst takes: flow_nh in
 * the half of the buckets its flow hash picks, other in the rest; first,
 * the device of the route's first path.
 */
static void put_group_for_flow(__u32 fam, const char *dst, __u32 idx,
			       __u32 gidx, __u32 flow_nh, __u32 other,
			       __u32 first)
{
	struct frame f = fam == XFIB_V4 ? frame4(-1, SRC4, dst, 64, 32) :
					  frame6(-1, SRC6, dst, 64, 32);

	if (second_half(&f, true))
		put_group_first(idx, gidx, 128, other, flow_nh, first);
	else
		put_group_first(idx, gidx, 128, flow_nh, other, first);
}

static struct xfib_rule ifgroup(struct xfib_rule x, __u32 group)
{
	x.suppress_ifgroup = group;
	return x;
}

/*
 * suppress_ifgroup, as fib4_rule_suppress() and fib6_rule_suppress()
 * judge it: the group of the device of an IPv4 route's first path
 * whichever member the flow takes, of the member an IPv6 flow takes; no
 * error route's answer; a device xfib does not know is the kernel's.
 * Tables 300 (a default route via xt1), 100 (198.19.0.0/16 via xt1),
 * TIFG (a default route by a group of xt1 and IF_G7), TUNKDEV (by a
 * device not in xfib_ifaces); main answers DST4 / DST6 via xt1 too.
 */
static void cases_rules_ifgroup(void)
{
	static const struct xfib_tr4 tifg[] = {
		{ 0, XFIB_TR4_PACK(NH_GROUP_IFG4, 0) },
	};
	static const struct xfib_tr4 tunk[] = {
		{ 0, XFIB_TR4_PACK(NH_UNKDEV, 0) },
	};
	static const struct xfib_tr6 tifg6[] = {
		{ 0, 0, NH_GROUP_IFG6, 0, { 0 } },
	};
	static const struct xfib_tr6 tunk6[] = {
		{ 0, 0, NH_UNKDEV6, 0, { 0 } },
	};
	struct xfib_rule x;

	put_table(XFIB_V4, TIFG, XFIB_TABLE_READY, 20, put_tr4(20, tifg, 1));
	put_table(XFIB_V4, TUNKDEV, XFIB_TABLE_READY, 21, put_tr4(21, tunk, 1));
	put_table(XFIB_V6, TIFG, XFIB_TABLE_READY, 8, put_tr6(8, tifg6, 1));
	put_table(XFIB_V6, TUNKDEV, XFIB_TABLE_READY, 9, put_tr6(9, tunk6, 1));
	put_iface_group(IF_G7, mac_other, IF_ALL, 7);
	put_nexthop(NH_G7, XFIB_NH_CONNECTED, IF_G7, 0, 0);
	put_nexthop(NH_G7_6, XFIB_NH_CONNECTED, IF_G7, 0, 0);
	put_nexthop(NH_UNKDEV, XFIB_NH_CONNECTED, IF_UNKNOWN, 0, 0);
	put_nexthop(NH_UNKDEV6, XFIB_NH_CONNECTED, IF_UNKNOWN, 0, 0);

	/* a single path's device */
	put_iface_group(if_out, mac_out, IF_ALL, 7);
	rule_case("rules v4 ifgroup: table 300's device in group 7: main",
		  XFIB_V4, RULES(ifgroup(lookup(100, 300, T300), 7), MAIN4),
		  SRC4, DST4, XDP_REDIRECT, XFIB_FWD_V4, mac_gw4);
	rule_case("rules v4 ifgroup: table 300's device not in group 8: taken",
		  XFIB_V4, RULES(ifgroup(lookup(100, 300, T300), 8), MAIN4),
		  SRC4, DST4, XDP_REDIRECT, XFIB_FWD_V4, mac_gw4b);
	rule_case("rules v4 ifgroup: main's device in group 7: table 300",
		  XFIB_V4, RULES(ifgroup(MAIN4, 7), lookup(32767, 300, T300)),
		  SRC4, DST4, XDP_REDIRECT, XFIB_FWD_V4, mac_gw4b);
	rule_case("rules v4 ifgroup: main's device not in group 8: main",
		  XFIB_V4, RULES(ifgroup(MAIN4, 8), lookup(32767, 300, T300)),
		  SRC4, DST4, XDP_REDIRECT, XFIB_FWD_V4, mac_gw4);
	rule_case("rules v6 ifgroup: table 300's device in group 7: main",
		  XFIB_V6, RULES(ifgroup(lookup(100, 300, T300), 7), MAIN6),
		  SRC6, DST6, XDP_REDIRECT, XFIB_FWD_V6, mac_gw6);
	rule_case("rules v6 ifgroup: table 300's device not in group 8: taken",
		  XFIB_V6, RULES(ifgroup(lookup(100, 300, T300), 8), MAIN6),
		  SRC6, DST6, XDP_REDIRECT, XFIB_FWD_V6, mac_gw6b);
	/* with suppress_prefixlength: either suppresses (table 100's /16) */
	x = ifgroup(lookup(100, 100, T100), 7);
	x.suppress_prefixlen = 15;
	rule_case("rules v4 ifgroup: /16 over length 15, device in group 7: main",
		  XFIB_V4, RULES(x, MAIN4), SRC4, DST4, XDP_REDIRECT,
		  XFIB_FWD_V4, mac_gw4);
	x = ifgroup(lookup(100, 100, T100), 8);
	x.suppress_prefixlen = 16;
	rule_case("rules v4 ifgroup: /16 at length 16, device not in group 8: main",
		  XFIB_V4, RULES(x, MAIN4), SRC4, DST4, XDP_REDIRECT,
		  XFIB_FWD_V4, mac_gw4);
	x.suppress_prefixlen = 15;
	rule_case("rules v4 ifgroup: /16 over length 15, device not in group 8: taken",
		  XFIB_V4, RULES(x, MAIN4), SRC4, DST4, XDP_REDIRECT,
		  XFIB_FWD_V4, mac_gw4b);
	x = ifgroup(lookup(100, 100, T100), 7);
	x.suppress_prefixlen = 0;
	rule_case("rules v6 ifgroup: /48 over length 0, device in group 7: main",
		  XFIB_V6, RULES(x, MAIN6), SRC6, DST6, XDP_REDIRECT,
		  XFIB_FWD_V6, mac_gw6);
	/* an error route's answer stands: the lookup failed */
	rule_case("rules v4 ifgroup: a blackhole default: dropped", XFIB_V4,
		  RULES(ifgroup(lookup(100, 500, TBH), 0), MAIN4), SRC4, DST4,
		  XDP_DROP, XFIB_DROP_BLACKHOLE, NULL);
	rule_case("rules v4 ifgroup: an unreachable default: kernel", XFIB_V4,
		  RULES(ifgroup(lookup(100, 600, TUNR), 0), MAIN4), SRC4, DST4,
		  XDP_PASS, XFIB_PASS_UNREACHABLE, NULL);
	rule_case("rules v6 ifgroup: a blackhole default: dropped", XFIB_V6,
		  RULES(ifgroup(lookup(100, 500, TBH), 0), MAIN6), SRC6, DST6,
		  XDP_DROP, XFIB_DROP_BLACKHOLE, NULL);
	/* a device xfib does not know, a route xfib does not mirror */
	rule_case("rules v4 ifgroup: a device xfib does not know: kernel",
		  XFIB_V4, RULES(ifgroup(lookup(100, 900, TUNKDEV), 7), MAIN4),
		  SRC4, DST4, XDP_PASS, XFIB_PASS_RULE, NULL);
	rule_case("rules v6 ifgroup: a device xfib does not know: kernel",
		  XFIB_V6, RULES(ifgroup(lookup(100, 900, TUNKDEV), 7), MAIN6),
		  SRC6, DST6, XDP_PASS, XFIB_PASS_RULE, NULL);
	rule_case("rules v4 ifgroup: a route xfib does not mirror: kernel",
		  XFIB_V4, RULES(ifgroup(lookup(100, 700, TUNSUPP), 7), MAIN4),
		  SRC4, DST4, XDP_PASS, XFIB_PASS_RULE, NULL);

	/* IPv4 multipath: the first path's device, whichever member the
	 * flow takes (xt1 in group 0 from here on) */
	put_iface(if_out, mac_out, IF_ALL);
	x = ifgroup(lookup(100, 910, TIFG), 7);
	put_group_for_flow(XFIB_V4, DST4, NH_GROUP_IFG4, GRP_IFG4, NH_GW4_B,
			   NH_G7, IF_G7);
	rule_case("rules v4 ifgroup: first path in group 7, flow on xt1: main",
		  XFIB_V4, RULES(x, MAIN4), SRC4, DST4, XDP_REDIRECT,
		  XFIB_FWD_V4, mac_gw4);
	put_group_for_flow(XFIB_V4, DST4, NH_GROUP_IFG4, GRP_IFG4, NH_G7,
			   NH_GW4_B, IF_G7);
	rule_case("rules v4 ifgroup: first path in group 7, flow on it: main",
		  XFIB_V4, RULES(x, MAIN4), SRC4, DST4, XDP_REDIRECT,
		  XFIB_FWD_V4, mac_gw4);
	put_group_for_flow(XFIB_V4, DST4, NH_GROUP_IFG4, GRP_IFG4, NH_GW4_B,
			   NH_G7, if_out);
	rule_case("rules v4 ifgroup: only a later path in group 7, flow on xt1: taken",
		  XFIB_V4, RULES(x, MAIN4), SRC4, DST4, XDP_REDIRECT,
		  XFIB_FWD_V4, mac_gw4b);
	put_group_for_flow(XFIB_V4, DST4, NH_GROUP_IFG4, GRP_IFG4, NH_G7,
			   NH_GW4_B, if_out);
	/* not suppressed: the member in group 7 is taken, whose on-link
	 * neighbour xfib does not have */
	rule_case("rules v4 ifgroup: only a later path in group 7, flow on it: taken",
		  XFIB_V4, RULES(x, MAIN4), SRC4, DST4, XDP_PASS,
		  XFIB_PASS_NEIGH, NULL);
	put_group_for_flow(XFIB_V4, DST4, NH_GROUP_IFG4, GRP_IFG4, NH_GW4_B,
			   NH_G7, 0);
	rule_case("rules v4 ifgroup: first path's device not known: kernel",
		  XFIB_V4, RULES(x, MAIN4), SRC4, DST4, XDP_PASS,
		  XFIB_PASS_RULE, NULL);

	/* IPv6 multipath: the member the flow takes (the first path's
	 * device, in group 7, does not count) */
	x = ifgroup(lookup(100, 910, TIFG), 7);
	put_group_for_flow(XFIB_V6, DST6, NH_GROUP_IFG6, GRP_IFG6, NH_GW6_B,
			   NH_G7_6, IF_G7);
	rule_case("rules v6 ifgroup: flow on xt1, group 0: taken", XFIB_V6,
		  RULES(x, MAIN6), SRC6, DST6, XDP_REDIRECT, XFIB_FWD_V6,
		  mac_gw6b);
	put_group_for_flow(XFIB_V6, DST6, NH_GROUP_IFG6, GRP_IFG6, NH_G7_6,
			   NH_GW6_B, if_out);
	rule_case("rules v6 ifgroup: flow on the member in group 7: main",
		  XFIB_V6, RULES(x, MAIN6), SRC6, DST6, XDP_REDIRECT,
		  XFIB_FWD_V6, mac_gw6);

	del_iface(IF_G7);
}

static void cases_rules(void)
{
	lookup_with_flow = true;
	put_rule_tables();
	cases_rules4();
	cases_rules_large4();
	cases_rules_rpf();
	cases_rules6();
	cases_rules_ifgroup();
	/* back to "lookup local, lookup main" */
	put_rules(XFIB_V4, NULL, 0, XFIB_RULES_OK);
	put_rules(XFIB_V6, NULL, 0, XFIB_RULES_OK);
	lookup_with_flow = false;
}

static const struct fwd_case l2_cases[] = {
	{ "v4 to another host's MAC", V4(DST4), PASS(XFIB_PASS_NOT_FOR_US),
	  .dmac = mac_other },
	{ "v4 to broadcast MAC", V4(DST4), PASS(XFIB_PASS_NOT_FOR_US),
	  .dmac = mac_bcast },
	{ "v4 to multicast MAC", V4(DST4), PASS(XFIB_PASS_NOT_FOR_US),
	  .dmac = mac_mcast },
	{ "v4 to the egress port's MAC", V4(DST4), PASS(XFIB_PASS_NOT_FOR_US),
	  .dmac = mac_out },
	{ "v6 to another host's MAC", V6(DST6), PASS(XFIB_PASS_NOT_FOR_US),
	  .dmac = mac_other },
	{ "v4 tagged to broadcast MAC", F4(0, SRC4, DST4, 64, 32),
	  PASS(XFIB_PASS_NOT_FOR_US), .dmac = mac_bcast },

	{ "ARP", OTHER(-1, ETH_P_ARP), PASS(XFIB_PASS_NOT_IP),
	  .dmac = mac_bcast },
	{ "ARP to the port's MAC", OTHER(-1, ETH_P_ARP),
	  PASS(XFIB_PASS_NOT_IP) },
	{ "LLDP", OTHER(-1, ETH_P_LLDP), PASS(XFIB_PASS_NOT_IP),
	  .dmac = mac_lldp },
	{ "ARP with a priority tag", OTHER(0, ETH_P_ARP),
	  PASS(XFIB_PASS_NOT_IP) },
	{ "two 802.1Q tags, outer VID 0", OTHER(0, ETH_P_8021Q),
	  PASS(XFIB_PASS_NOT_IP) },
	{ "802.1ad outer tag", OTHER(-1, ETH_P_8021AD),
	  PASS(XFIB_PASS_NOT_IP) },

	{ "v4 VLAN VID 5", F4(5, SRC4, DST4, 64, 32), PASS(XFIB_PASS_VLAN) },
	{ "v4 VLAN PCP 7 VID 5", F4(0xe005, SRC4, DST4, 64, 32),
	  PASS(XFIB_PASS_VLAN) },
	{ "v6 VLAN VID 4095", F6(0xfff, SRC6, DST6, 64, 32),
	  PASS(XFIB_PASS_VLAN) },
	{ "v4 VLAN VID 5 to another host's MAC", F4(5, SRC4, DST4, 64, 32),
	  PASS(XFIB_PASS_VLAN), .dmac = mac_other },
};

static const struct fwd_case l3_cases[] = {
	{ "v4 options (IHL 6)", V4(DST4), PASS(XFIB_PASS_IP_OPTIONS),
	  .edit = add_ip4_options },
	{ "v4 IHL 4", V4(DST4), PASS(XFIB_PASS_MALFORMED), .edit = ihl_4 },
	{ "v4 version 5", V4(DST4), PASS(XFIB_PASS_MALFORMED), .edit = ip_version_5 },
	{ "v4 ethertype with version 6", V4(DST4), PASS(XFIB_PASS_MALFORMED),
	  .edit = ip_version_6 },
	{ "v4 bad header checksum", V4(DST4), PASS(XFIB_PASS_MALFORMED),
	  .edit = csum_flip_high },
	{ "v4 bad header checksum and TTL 1", F4(-1, SRC4, DST4, 1, 32),
	  PASS(XFIB_PASS_MALFORMED), .edit = csum_flip_low },
	{ "v4 tot_len one larger than the frame", V4(DST4),
	  PASS(XFIB_PASS_MALFORMED), .edit = tot_len_plus_1 },
	{ "v4 tot_len 19", V4(DST4), PASS(XFIB_PASS_MALFORMED), .edit = tot_len_19 },

	{ "v4 multicast destination 224.0.0.5", V4("224.0.0.5"),
	  PASS(XFIB_PASS_SPECIAL_ADDR) },
	{ "v4 multicast destination 239.1.2.3", V4("239.1.2.3"),
	  PASS(XFIB_PASS_SPECIAL_ADDR) },
	{ "v4 limited broadcast destination", V4("255.255.255.255"),
	  PASS(XFIB_PASS_SPECIAL_ADDR) },
	{ "v4 loopback destination", V4("127.0.0.1"),
	  PASS(XFIB_PASS_SPECIAL_ADDR) },
	{ "v4 zero destination", V4("0.0.0.0"), PASS(XFIB_PASS_SPECIAL_ADDR) },
	{ "v4 multicast source", F4(-1, "224.0.0.1", DST4, 64, 32),
	  PASS(XFIB_PASS_SPECIAL_ADDR) },
	{ "v4 loopback source", F4(-1, "127.0.0.1", DST4, 64, 32),
	  PASS(XFIB_PASS_SPECIAL_ADDR) },
	{ "v4 zero source", F4(-1, "0.0.0.0", DST4, 64, 32),
	  PASS(XFIB_PASS_SPECIAL_ADDR) },

	{ "v6 hop-by-hop next header", V6(DST6), PASS(XFIB_PASS_IPV6_HBH),
	  .edit = hop_by_hop },
	{ "v6 jumbogram (payload_len 0, hop-by-hop)", V6(DST6),
	  PASS(XFIB_PASS_IPV6_HBH), .edit = jumbogram },
	{ "v6 payload_len 0 without hop-by-hop", V6(DST6),
	  PASS(XFIB_PASS_MALFORMED), .edit = payload_len_0 },
	{ "v6 payload_len one larger than the frame", V6(DST6),
	  PASS(XFIB_PASS_MALFORMED), .edit = payload_len_plus_1 },
	{ "v6 ethertype with version 4", V6(DST6), PASS(XFIB_PASS_MALFORMED),
	  .edit = ip6_version_4 },

	{ "v6 link-local destination", V6("fe80::1"),
	  PASS(XFIB_PASS_SPECIAL_ADDR) },
	{ "v6 link-local destination, top of fe80::/10", V6("febf:ffff::1"),
	  PASS(XFIB_PASS_SPECIAL_ADDR) },
	{ "v6 multicast destination ff02::1", V6("ff02::1"),
	  PASS(XFIB_PASS_SPECIAL_ADDR) },
	{ "v6 multicast destination ff0e::db8:1", V6("ff0e::db8:1"),
	  PASS(XFIB_PASS_SPECIAL_ADDR) },
	{ "v6 loopback destination", V6("::1"), PASS(XFIB_PASS_SPECIAL_ADDR) },
	{ "v6 unspecified destination", V6("::"),
	  PASS(XFIB_PASS_SPECIAL_ADDR) },
	{ "v6 IPv4-mapped destination", V6("::ffff:198.18.0.1"),
	  PASS(XFIB_PASS_SPECIAL_ADDR) },
	{ "v6 IPv4-compatible destination", V6("::198.18.0.1"),
	  PASS(XFIB_PASS_SPECIAL_ADDR) },
	{ "v6 link-local source", F6(-1, "fe80::1", DST6, 64, 32),
	  PASS(XFIB_PASS_SPECIAL_ADDR) },
	{ "v6 multicast source", F6(-1, "ff02::1", DST6, 64, 32),
	  PASS(XFIB_PASS_SPECIAL_ADDR) },
	{ "v6 loopback source", F6(-1, "::1", DST6, 64, 32),
	  PASS(XFIB_PASS_SPECIAL_ADDR) },
	{ "v6 link-local source and hop limit 1", F6(-1, "fe80::1", DST6, 1, 32),
	  PASS(XFIB_PASS_SPECIAL_ADDR) },
};

/* Forwardable frames cut at every length (expect_truncated). */
static const struct fwd_case truncated_cases[] = {
	{ "v4", V4(DST4), FWD4(mac_gw4) },
	{ "v6", V6(DST6), FWD6(mac_gw6) },
	{ "v4 priority-tagged", F4(0, SRC4, DST4, 64, 32), FWD4(mac_gw4) },
	{ "v6 priority-tagged", F6(0, SRC6, DST6, 64, 32), FWD6(mac_gw6) },
};

static void cases_truncated(void)
{
	struct frame f;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(truncated_cases); i++) {
		f = build(&truncated_cases[i].pkt);
		expect_truncated(truncated_cases[i].name, &f,
				 truncated_cases[i].next_mac);
	}
}

/*
 * drop_redirect: xt1 leaves xfib_tx_ports between the program's check that
 * it is attached (xfib_after_lookup) and bpf_redirect_map(). Only a race
 * shows it: a thread detaches and re-attaches xt1 without pause while the
 * program runs one frame over and over. Every run must count one of
 * forwarded_v4 (attached throughout), pass_egress_not_attached (detached
 * at the check) and drop_redirect (detached in between), and the last
 * must happen. The batches stop once it has: a bound on the runs, not a
 * retry. It takes two CPUs running at once.
 *
 * The runs of a batch share one buffer, which each forward rewrites: the
 * gateway's MAC is xt0's meanwhile, so that the frame stays addressed to
 * the port, and its TTL of 255 outlasts the batch's decrements.
 */
#define RACE_REPEAT 250
#define RACE_BATCHES 4000

static volatile bool race_stop;

/* The update takes far longer than the delete: a pause after it keeps
 * xt1 attached most of the time, for the program's check to find it. */
static void *detach_loop(void *arg)
{
	struct bpf_devmap_val v = { .ifindex = if_out };
	int i;

	(void)arg;
	while (!race_stop) {
		bpf_map_delete_elem(fd_tx, &if_out);
		bpf_map_update_elem(fd_tx, &if_out, &v, BPF_ANY);
		for (i = 0; i < 2000 && !race_stop; i++)
			__asm__ volatile("" ::: "memory");
	}
	return NULL;
}

/* Runs f RACE_REPEAT times on xt0, adding the counters into sum. */
static int race_batch(const struct frame *f, struct xfib_counter *sum)
{
	static __u8 out[sizeof(((struct frame *)0)->b)];
	struct xfib_counter cnt[XFIB_REASON_COUNT];
	struct xdp_md ctx = { .data_end = f->len, .ingress_ifindex = if_in };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = f->b,
		    .data_size_in = f->len, .data_out = out,
		    .data_size_out = sizeof(out), .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx), .repeat = RACE_REPEAT);
	int k;

	stats_reset();
	if (bpf_prog_test_run_opts(prog_fd, &opts))
		return -errno;
	stats_read(cnt);
	for (k = 0; k < XFIB_REASON_COUNT; k++)
		sum[k].packets += cnt[k].packets;
	return 0;
}

/*
 * A frame from a MAC its bridge's FDB holds behind another member: the
 * entry is marked moved and the bridge's count of moves goes up, once,
 * however many frames follow before xfibd mirrors the move.
 */
static void case_bridge_move(void)
{
	static const struct fwd_case c = {
		"v4 from a bridge member, sender behind another (again)", V4(DST4),
		PASS(XFIB_PASS_BRIDGE_LEARN) };
	struct xfib_fdb_key k = { .bridge = if_br };
	struct xfib_fdb v = { 0 };

	set_port_state(ST_BR_IN_MOVED);
	run_case(&c);
	run_case(&c);
	memcpy(k.mac, mac_host, ETH_ALEN);
	bpf_map_lookup_elem(bpf_map__fd(skel->maps.xfib_fdb), &k, &v);
	ncases++;
	if (!v.moved || get_br_moving() != 1) {
		nfailed++;
		printf("FAIL a host's move: entry marked %u, bridge's count %llu (expected 1, 1)\n",
		       v.moved, (unsigned long long)get_br_moving());
	} else if (!terse) {
		printf("ok   a host's move: entry marked, the bridge's count 1 after two frames\n");
	}
	set_port_state(ST_DEFAULT);
}

static void case_drop_redirect(void)
{
	static const struct fwd_case c = { "v4 egress detached while forwarding",
					   F4(-1, SRC4, DST4, 255, 32),
					   DROP(XFIB_DROP_REDIRECT) };
	struct xfib_counter sum[XFIB_REASON_COUNT] = {};
	struct frame f = build(&c.pkt);
	__u64 runs = 0, others;
	pthread_t t;
	int b, err = 0;

	set_port_state(ST_DEFAULT);
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		return; /* reasons_check() notes it */
	put_neigh(NB_GW4, AF_INET, "198.18.0.1", mac_in, XFIB_NEIGH_VALID,
		  if_out);
	race_stop = false;
	if (pthread_create(&t, NULL, detach_loop, NULL))
		die("pthread_create: %s", strerror(errno));
	for (b = 0; b < RACE_BATCHES && !err; b++) {
		err = race_batch(&f, sum);
		runs += RACE_REPEAT;
		if (sum[XFIB_DROP_REDIRECT].packets)
			break;
	}
	race_stop = true;
	pthread_join(t, NULL);
	put_neigh(NB_GW4, AF_INET, "198.18.0.1", mac_gw4, XFIB_NEIGH_VALID,
		  if_out);
	set_port_state(ST_DEFAULT);
	others = runs - sum[XFIB_FWD_V4].packets -
		 sum[XFIB_PASS_EGRESS_NOT_ATTACHED].packets -
		 sum[XFIB_DROP_REDIRECT].packets;
	ncases++;
	if (err || others || !sum[XFIB_DROP_REDIRECT].packets) {
		nfailed++;
		printf("FAIL %s\n    %llu runs%s%s: %llu forwarded, %llu not attached, %llu drop_redirect, %llu other\n",
		       c.name, (unsigned long long)runs, err ? ", " : "",
		       err ? strerror(-err) : "",
		       (unsigned long long)sum[XFIB_FWD_V4].packets,
		       (unsigned long long)sum[XFIB_PASS_EGRESS_NOT_ATTACHED].packets,
		       (unsigned long long)sum[XFIB_DROP_REDIRECT].packets,
		       (unsigned long long)others);
		return;
	}
	reached[XFIB_DROP_REDIRECT] = true;
	printf("ok   %s (%llu of %llu runs)\n", c.name,
	       (unsigned long long)sum[XFIB_DROP_REDIRECT].packets,
	       (unsigned long long)runs);
	/* Attached again: xfibctl lookup says forward, as the program does. */
	check_lookup(&c);
}

/* Every outcome of test_fwd's classes was reached (tests/prog/reasons.h). */
static void check_reached(void)
{
	static const char *excused[XFIB_REASON_COUNT];
	int bad;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		excused[XFIB_DROP_REDIRECT] = "its race needs two CPUs";
	bad = reasons_check(RC_BIT(RC_LOOKUP) | RC_BIT(RC_FRAME), reached,
			    reason_name, excused);
	ncases++;
	if (bad)
		nfailed++;
	else
		printf("ok   every outcome of the program but the conntrack gate's was reached\n");
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (geteuid() != 0)
		skip("needs root (BPF, network namespace and devices)");
	setup_netns();

	ncpus = libbpf_num_possible_cpus();
	if (ncpus <= 0)
		die("libbpf_num_possible_cpus: %d", ncpus);
	load();
	fill_maps();
	lookup_open();

	self_check();
	run_cases(forward_cases, ARRAY_SIZE(forward_cases));
	run_cases(route_cases, ARRAY_SIZE(route_cases));
	cases_multipath();
	cases_ports();
	cases_lease();
	cases_rules();
	run_cases(l2_cases, ARRAY_SIZE(l2_cases));
	run_cases(l3_cases, ARRAY_SIZE(l3_cases));
	cases_truncated();
	case_drop_redirect();
	case_bridge_move();
	lookup_close();
	check_reached();

	xfib_fwd_bpf__destroy(skel);
	printf("\n%d cases, %d failed\n", ncases, nfailed);
	return nfailed ? 1 : 0;
}
