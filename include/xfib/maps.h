/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Map keys and values shared by the XDP dataplane (bpf/) and the control
 * plane (ctl/). Only fixed-width types, explicit padding and size asserts:
 * both compilers must agree on every byte, and bpftool prints these with
 * their field names through BTF.
 */
#ifndef XFIB_MAPS_H
#define XFIB_MAPS_H

#include <linux/types.h>
#include "counters.h"

/*
 * Capacity of the index arrays. Index 0 of each is reserved ("none").
 * Nexthops are deduplicated by content (kind, device, gateway, MTU), so
 * they number about the distinct gateways plus the groups; every gateway
 * also takes a neighbour, as does every on-link host packets go to.
 * 131072 of each (4 MiB of nexthops, 5 MiB of neighbours) leaves room for
 * tens of thousands of peers. What does not fit goes to the kernel.
 */
#define XFIB_NEXTHOP_MAX 131072
#define XFIB_NEIGH_MAX 131072

/*
 * The layout of the pinned maps, kept in xfib_layout: bumped whenever a
 * map's definition changes (type, sizes, flags, inner maps, or what the
 * bytes of a value mean), so that a build tells its own maps from an
 * older xfib's, which its xfibd upgrades (ctl/xfibd/upgrade.c), and from
 * a newer one's, which it leaves alone. Pins of a build from before the
 * layout was kept read as layout 0.
 *
 * make LAYOUT_TEST=1 builds a copy whose maps differ from this one's (one
 * more entry in xfib_neigh_hosts) and whose layout is one newer, for
 * tests/net/test_upgrade.sh; never for a router.
 */
/* Layout 6: the dir24_8 and trie6 outer maps have slots for the
 * instances of the rules' large tables (XFIB_INST_SLOTS,
 * include/xfib/tables.h), a table's descriptor may name one, and
 * xfib_table_info says which algorithm serves a table and its memory;
 * bridges: struct xfib_iface grew (a member's bridge, bridge flags),
 * xfib_neigh names a bridge neighbour's member, and xfib_fdb and
 * xfib_br_moving are new. */
/* Layout 7: struct xfib_iface holds the device's group (IFLA_GROUP),
 * a multipath group's struct xfib_nexthop the device of the route's
 * first path, and struct xfib_rules_hdr whether a rule has
 * suppress_ifgroup, all for the rules' suppress_ifgroup. */
#ifdef XFIB_LAYOUT_TEST
#define XFIB_LAYOUT_VERSION 8
#define XFIB_NEIGH_HOSTS_MAX (XFIB_NEIGH_MAX + 1)
#else
#define XFIB_LAYOUT_VERSION 7
#define XFIB_NEIGH_HOSTS_MAX XFIB_NEIGH_MAX
#endif

/* No port has this ifindex: a query for a destination, not a packet
 * (include/xfib/decide.h). */
#define XFIB_IFINDEX_NONE 0xffffffffu

/* Entries of the xfib_tx_ports devmap (attached ports, by ifindex). */
#define XFIB_IFACE_MAX 4096

/*
 * Ports xfib forwards between: those with an ifindex below XFIB_PORT_MAX.
 * xfib_ifaces (struct xfib_port) and xfib_port_stats are arrays indexed by
 * ifindex, so that the program's lookups are a bounds check and an add
 * that the verifier inlines, not a call into the hash table. Ifindexes
 * are numbered per network namespace from 1, so a router's ports come
 * well below 1024 unless devices are created and deleted thousands of
 * times; a port above it is left to the kernel (xfibctl attach refuses
 * it, the program passes its packets, xfibd says so). The cost is 56
 * bytes per port for xfib_ifaces (56 KiB) and, per CPU, one struct
 * xfib_port_counters per port for xfib_port_stats.
 */
#define XFIB_PORT_MAX 1024

/*
 * Where an IPv4 source cannot be one of the router's own (xfib_nonlocal4),
 * from the prefixes whose answer is local (the addresses and broadcasts of
 * the local table, its custom local routes, local routes of the mirrored
 * table and of the tables policy rules reach), in two bitmaps:
 *  - one bit per /16, clear where a local prefix shorter than /32 covers
 *    any of the /16 (127.0.0.0/8, a local route for a whole range);
 *  - one bit per slot of a hash of the address, clear for each local /32
 *    (a router's own addresses: hashed, so that a host on a connected
 *    subnet, whose /16 and /24 are the router's too, is told apart).
 * On a port without rp_filter, a source whose two bits are both set needs
 * no lookup (nor, with policy rules, a walk of them), as the kernel's own
 * fib_validate_source() then finds no local route for it; any clear bit
 * only means "look the source up", so a map nobody wrote (all clear) is
 * safe. 2 x 65536 bits, 16 KiB.
 */
#define XFIB_NONLOCAL4_BLOCKS 65536
#define XFIB_NONLOCAL4_SLOTS 65536
#define XFIB_NONLOCAL4_BITS (XFIB_NONLOCAL4_BLOCKS + XFIB_NONLOCAL4_SLOTS)
#define XFIB_NONLOCAL4_WORDS (XFIB_NONLOCAL4_BITS / 64)

/* The bits of IPv4 address addr (host order): its /16, and its hash slot
 * (Fibonacci hashing: the multiply spreads the low bits that tell a
 * subnet's hosts apart over the top 16). */
#define XFIB_NONLOCAL4_BLOCK_BIT(addr) ((__u32)(addr) >> 16)
#define XFIB_NONLOCAL4_SLOT_BIT(addr) \
	(XFIB_NONLOCAL4_BLOCKS + (((__u32)(addr) * 0x9e3779b1u) >> 16))

/*
 * Multipath groups: each is a table of XFIB_GROUP_BUCKETS member nexthop
 * indexes, filled in proportion to the members' weights; a packet takes
 * bucket (flow hash >> 24), so a flow keeps its member and flows split by
 * weight. Up to XFIB_GROUP_MEMBERS distinct members per group. A group is
 * taken by each distinct set of multipath paths and by each nexthop group
 * object (ip nexthop ... group) that routes use: routing daemons with many
 * peers make thousands. 16384 groups are 16 MiB.
 */
#define XFIB_GROUP_MAX 16384
#define XFIB_GROUP_BUCKETS 256
#define XFIB_GROUP_MEMBERS 64

/*
 * bsearch tables hold two slots per family (active and standby), each
 * 2^LOG2_MAX ranges. A table of n prefixes needs at most 2n + 1 ranges.
 */
#define XFIB_BS4_LOG2_MAX 18
#define XFIB_BS6_LOG2_MAX 17
#define XFIB_BS4_SLOT_SIZE (1u << XFIB_BS4_LOG2_MAX)
#define XFIB_BS6_SLOT_SIZE (1u << XFIB_BS6_LOG2_MAX)

enum xfib_family {
	XFIB_V4 = 0,
	XFIB_V6 = 1,
	XFIB_FAMILIES,
};

/* Lookup algorithms. NONE means "no table published": every packet goes to
 * the kernel. */
enum xfib_algo {
	XFIB_ALGO_NONE = 0,
	XFIB_ALGO_BSEARCH4 = 1,
	XFIB_ALGO_BSEARCH6 = 2,
	XFIB_ALGO_DIR24_8 = 3, /* IPv4: tbl24 + tbl8 groups (lookup_dir24.h) */
	XFIB_ALGO_TRIE6 = 4,   /* IPv6: 24-bit first level, 8-bit strides */
	XFIB_ALGO_DXR = 5,     /* IPv4: /16 chunks of ranges (lookup_dxr.h) */
	XFIB_ALGO_POPTRIE6 = 6, /* IPv6: popcount trie (lookup_poptrie6.h) */
	XFIB_ALGO_COUNT,
};

/* Instances of map-backed algorithms live in map-in-map slots. */
#define XFIB_SLOTS 2

/*
 * The published instance of one family. The dataplane reads it as one
 * 64-bit word, once per packet, so a packet never mixes two generations;
 * the daemon writes it with one aligned atomic store.
 */
struct xfib_active {
	__u8 algo;   /* enum xfib_algo */
	__u8 slot;   /* which of the algorithm's XFIB_SLOTS tables */
	__u8 log2n;  /* bsearch: the slot holds 2^log2n ranges */
	__u8 pad;
	__u32 generation;
} __attribute__((aligned(8)));
_Static_assert(sizeof(struct xfib_active) == 8, "xfib_active is one word");

/* A multipath group: member nexthop index per bucket. Each bucket is one
 * 4-byte store, so a rewrite in place never shows a packet a torn index. */
struct xfib_nh_group {
	__u32 nh[XFIB_GROUP_BUCKETS];
};
_Static_assert(sizeof(struct xfib_nh_group) == 4 * XFIB_GROUP_BUCKETS,
	       "xfib_nh_group size");

/* Nexthop kinds: what the dataplane does with a packet that matched. */
enum xfib_nh_kind {
	XFIB_NH_NONE = 0,        /* no route: the kernel answers */
	XFIB_NH_GATEWAY = 1,     /* via a neighbour: neigh is its index */
	XFIB_NH_CONNECTED = 2,   /* on-link: neighbour is the destination */
	XFIB_NH_BLACKHOLE = 3,   /* drop */
	XFIB_NH_LOCAL = 4,       /* local/broadcast/anycast/multicast: kernel */
	XFIB_NH_UNREACHABLE = 5, /* unreachable/prohibit/throw: kernel sends ICMP */
	XFIB_NH_UNSUPPORTED = 6, /* a route xfib does not mirror (yet): kernel */
	XFIB_NH_GROUP = 7,       /* multipath: group is an index into
				  * xfib_nh_groups, whose members are
				  * GATEWAY/CONNECTED/BLACKHOLE nexthops */
	XFIB_NH_KIND_COUNT,
};

/* Reserved nexthop indexes. */
#define XFIB_NH_IDX_NONE 0
#define XFIB_NH_IDX_LOCAL 1

/*
 * Indexes [XFIB_NH_DFLT_FIRST, XFIB_NH_DFLT_FIRST + XFIB_NH_DFLT_COUNT)
 * are the answers of default routes (0.0.0.0/0, ::/0) of the mirrored
 * table, main, and of nothing else: each such route of a kind the
 * kernel's suppress_prefixlength can suppress (a gateway, on-link or
 * multipath route; fib_rules_lookup() suppresses no lookup that failed,
 * as a blackhole, unreachable or prohibit route's does) takes an entry
 * here that no other route shares, a copy of what its nexthop would be
 * (a multipath one names the same xfib_nh_groups entry), written before
 * slot 0 may answer with it. So the rule walk knows from slot 0's answer
 * alone whether it came from a /0, which "lookup main
 * suppress_prefixlength 0" (wg-quick's rule) suppresses, at any size of
 * main; slot 0's structures keep no prefix lengths (include/xfib/rule_walk.h).
 * The range sits just above the fixed indexes rather than at the top of
 * the array: dxr packs nexthop indexes in 16 bits (lookup_dxr.h). A
 * default route that finds it full, a few dozen being more than a router
 * has, goes to the kernel. Layout 5: a layout 4 program would take such
 * an answer for main's own, and a layout 4 daemon gives these indexes to
 * any route.
 */
#define XFIB_NH_DFLT_FIRST 2
#define XFIB_NH_DFLT_COUNT 64
#define XFIB_NH_IS_DFLT(idx) ((__u32)(idx) - XFIB_NH_DFLT_FIRST < XFIB_NH_DFLT_COUNT)
/* The first index of the other nexthops. */
#define XFIB_NH_IDX_FIRST_FREE (XFIB_NH_DFLT_FIRST + XFIB_NH_DFLT_COUNT)

struct xfib_nexthop {
	__u8 kind;    /* enum xfib_nh_kind */
	__u8 family;  /* AF_INET or AF_INET6 of gw */
	__u16 mtu;    /* route MTU (RTAX_MTU), 0 = egress device MTU */
	/* The egress device. XFIB_NH_GROUP: the device of the route's
	 * first path as the kernel keeps it (the first of RTA_MULTIPATH,
	 * dead or not; a nexthop object group's first member), whose group
	 * an IPv4 rule's suppress_ifgroup reads (fib4_rule_suppress():
	 * fib_info_nhc(fi, 0)), whichever member a flow takes; 0 if not
	 * known (the rule's answer is then the kernel's). Written with
	 * one 4-byte store when a nexthop object's first member changes. */
	__u32 ifindex;
	__u32 neigh;  /* XFIB_NH_GATEWAY: index into xfib_neighs */
	__u32 group;  /* XFIB_NH_GROUP: index into xfib_nh_groups */
	__u8 gw[16];  /* gateway address, network order (for inspection) */
};
_Static_assert(sizeof(struct xfib_nexthop) == 32, "xfib_nexthop size");

enum xfib_neigh_state {
	XFIB_NEIGH_INVALID = 0, /* unknown, INCOMPLETE or FAILED: kernel resolves */
	XFIB_NEIGH_VALID = 1,   /* REACHABLE/STALE/DELAY/PROBE/PERMANENT/NOARP */
};

/*
 * A neighbour. The first word (dmac, state) and the second (smac) are each
 * written with one atomic 8-byte store and read once by the dataplane, so a
 * MAC change never produces a torn address.
 */
struct xfib_neigh {
	__u8 dmac[6];
	__u8 state;  /* enum xfib_neigh_state */
	__u8 family; /* AF_INET or AF_INET6 */
	__u8 smac[6];
	__u16 pad;
	__u32 ifindex;
	/* On a bridge: the member its forwarding database names for dmac,
	 * 0 if none (unknown, the bridge's own): written by xfibd with one
	 * store whenever the entry or the FDB changes, so that a route out
	 * of a bridge costs no FDB lookup (xfib_bridge_egress). */
	__u32 tx_port;
	__u8 addr[16]; /* network order (IPv4 in the first 4 bytes) */
} __attribute__((aligned(8)));
_Static_assert(sizeof(struct xfib_neigh) == 40, "xfib_neigh size");

/* Key of xfib_neigh_hosts: finds the neighbour of an on-link destination. */
struct xfib_neigh_key {
	__u32 ifindex;
	__u8 family;
	__u8 pad[3];
	__u8 addr[16];
};
_Static_assert(sizeof(struct xfib_neigh_key) == 24, "xfib_neigh_key size");

enum xfib_iface_flags {
	XFIB_IF_UP = 1 << 0,   /* IFF_UP and IFF_RUNNING (carrier) */
	XFIB_IF_FWD4 = 1 << 1, /* net.ipv4.conf.<if>.forwarding */
	XFIB_IF_FWD6 = 1 << 2, /* net.ipv6.conf.all.forwarding */
	XFIB_IF_RPF = 1 << 3,  /* rp_filter on (1 or 2): sources are checked */
	/* With XFIB_IF_RPF: loose mode (2), any route back will do; without,
	 * strict (1), the route back must leave by the port. The effective
	 * mode is max(conf.all, conf.<port>) as in the kernel, and a port
	 * without an IPv4 address is strict whatever the mode: see
	 * xfib_source_check4() in decide.h. */
	XFIB_IF_RPF_LOOSE = 1 << 4,
	/* net.ipv6.conf.<if>.disable_ipv6 (or no IPv6 on the device): the
	 * kernel neither receives nor sends IPv6 there */
	XFIB_IF_NO_IPV6 = 1 << 5,
	/* The port takes no XDP-redirected frames (no NETDEV_XDP_ACT_NDO_XMIT:
	 * a veth whose peer has neither GRO nor an XDP program, a driver
	 * without ndo_xdp_xmit); the kernel would drop what xfib redirects
	 * to it. */
	XFIB_IF_NO_XMIT = 1 << 6,
};

/*
 * A Linux bridge and its member ports (struct xfib_iface.bridge). A frame
 * a member receives for the bridge's MAC is routed as the kernel routes
 * it: as a packet that arrived on the bridge device. A route out of the
 * bridge leaves by the member its forwarding database names for the
 * neighbour's MAC (xfib_fdb). Layout 6.
 */
enum xfib_bridge_flags {
	/* On a bridge: xfib routes through it. Not while it filters VLANs
	 * (its ports' VLAN membership and PVIDs are not mirrored), nor while
	 * bridge-family netfilter chains see the frames it passes up or
	 * sends (xfibd tells, from nf/). */
	XFIB_BR_ROUTED = 1 << 0,
	/* On a member port: in STP forwarding state (BR_STATE_FORWARDING);
	 * in any other the bridge drops, or only learns from, its frames. */
	XFIB_BR_PORT_FWD = 1 << 1,
};

/* One interface of the namespace, as the kernel sees it. */
struct xfib_iface {
	__u8 mac[6];
	__u8 flags;  /* enum xfib_iface_flags */
	__u8 bridge; /* enum xfib_bridge_flags */
	__u32 mtu;
	__u32 ifindex;
	__u32 master; /* a bridge member's bridge (ifindex), else 0 */
	/* The device's group (IFLA_GROUP; ip link set ... group), which
	 * the rules' suppress_ifgroup compares (include/xfib/rule_walk.h).
	 * Layout 7. */
	__u32 group;
};
_Static_assert(sizeof(struct xfib_iface) == 24, "xfib_iface size");

/*
 * xfib_fdb: the bridges' forwarding databases as the kernel holds them
 * (AF_BRIDGE neighbours that name a bridge, NDA_MASTER): which member a
 * MAC is behind. Only bridges without VLAN filtering are routed through,
 * so vlan is 0 in every entry the dataplane asks for; entries of other
 * VLANs are not mirrored. The dataplane looks a frame's source up here
 * (check_bridge_ingress); a route out of a bridge reads the member from
 * the neighbour (struct xfib_neigh.tx_port), which xfibd keeps in step.
 *
 * xfib_br_moving[bridge]: how many MACs the dataplane saw come in by
 * another member than their entry's since xfibd last found every such
 * entry rewritten. While it is not 0, routes out of the bridge are the
 * kernel's: a neighbour's tx_port may still name the member a host left.
 */
struct xfib_fdb_key {
	__u32 bridge; /* ifindex */
	__u8 mac[6];
	__u16 vlan;
};
_Static_assert(sizeof(struct xfib_fdb_key) == 12, "xfib_fdb_key size");

enum xfib_fdb_flags {
	/* The bridge's own address (or a port's): delivered up, never out
	 * of a member. */
	XFIB_FDB_LOCAL = 1 << 0,
	/* Learned from traffic, so aged by the bridge: the dataplane marks
	 * seen when it routes a frame from this MAC, and xfibd renews such
	 * entries (NTF_USE), as the frames the bridge no longer sees would
	 * have. */
	XFIB_FDB_DYNAMIC = 1 << 1,
};

struct xfib_fdb {
	__u32 port;  /* the member's ifindex (the bridge's own for LOCAL) */
	__u8 flags;  /* enum xfib_fdb_flags */
	__u8 seen;   /* set by the dataplane, cleared by xfibd */
	/* Set by the dataplane when this MAC came in by another member than
	 * port (and xfib_br_moving[bridge] counted up): the bridge is about
	 * to learn that it moved. Cleared by xfibd's write of the new port,
	 * or a renewal period later if the bridge did not move it. */
	__u8 moved;
	__u8 pad;
};
_Static_assert(sizeof(struct xfib_fdb) == 8, "xfib_fdb size");

/* Entries of xfib_fdb: the hosts of every routed bridge's LANs. */
#define XFIB_FDB_MAX 65536

/*
 * An xfib_ifaces entry: the port's struct xfib_iface, in two copies.
 * live is 0 while the port is not mirrored (absent: what a missing entry
 * of a hash map was), else copy[live & 1] is the port's state.
 *
 * An array value is updated in place, so a reader could see a copy half
 * written (a new MAC with an old MTU). xfibd therefore never writes the
 * copy in use: it fills the other one, then publishes it with one aligned
 * 4-byte store of live + 1 (ctl/xfibd/rib/rib_port.c). It rewrites a copy
 * only after an RCU grace period has passed since the copy was last in
 * use (the grace periods that already guard the nexthop and neighbour
 * arrays), so no program still reads it; the program loads live once and
 * reads the copy it names. live only counts up (skipping 0), so a
 * userspace reader, which no grace period waits for, reads live, the copy
 * and live again, and has a consistent copy if live did not change.
 */
struct xfib_port {
	__u32 live;
	__u32 pad;
	struct xfib_iface copy[2];
};
_Static_assert(sizeof(struct xfib_port) == 56, "xfib_port size");

/* The port's state as of one load of live, or NULL if it is absent. */
static inline __attribute__((always_inline)) const struct xfib_iface *
xfib_port_iface(const struct xfib_port *p, __u32 live)
{
	return live ? &p->copy[live & 1] : (const struct xfib_iface *)0;
}

/* bsearch ranges: a range starts at start and runs to the next start.
 * Addresses in host order so comparisons are plain integer compares. */
struct xfib_bs4_range {
	__u32 start;
	__u32 nh;
};
_Static_assert(sizeof(struct xfib_bs4_range) == 8, "xfib_bs4_range size");

struct xfib_bs6_range {
	__u64 hi;
	__u64 lo;
	__u32 nh;
	__u32 pad;
};
_Static_assert(sizeof(struct xfib_bs6_range) == 24, "xfib_bs6_range size");

/* Why a family has no fast path even though xfibd runs. */
enum xfib_fallback {
	XFIB_FALLBACK_NONE = 0,
	XFIB_FALLBACK_TOO_LARGE = 1, /* the table does not fit the algorithm */
	XFIB_FALLBACK_RULES = 2,     /* policy rules the mirror does not model */
};

/* Per-family view of the published instance, for status and bpftool. */
struct xfib_fib_info {
	__u32 algo;
	__u32 generation;
	__u32 routes;      /* prefixes in the instance */
	__u32 ranges;      /* bsearch: ranges; dir24_8/trie6: tbl8 groups in use */
	__u64 swaps;       /* instances published (builds, switches) */
	__u64 last_swap;   /* CLOCK_REALTIME, seconds */
	__u64 mem_bytes;   /* bytes of the active instance */
	__u32 fallback;    /* enum xfib_fallback: why algo is NONE */
	__u32 forced;      /* algorithm forced by the operator, 0: automatic */
	__u8 pref[8];      /* preference of each enum xfib_algo, 0..255 */
	__u64 updates;     /* prefixes updated in place */
	__u64 build_us;    /* duration of the last full build */
	__u32 capacity;    /* groups (dir24_8/trie6) or ranges (bsearch) */
	__u32 build_error; /* errno of the last failed build, 0 after success;
			    * the previous instance keeps serving meanwhile */
};
_Static_assert(sizeof(struct xfib_fib_info) == 80, "xfib_fib_info size");

/*
 * Operator requests to xfibd, one per family, written by xfibctl. The
 * daemon acts when seq changes.
 */
struct xfib_control {
	__u32 algo; /* enum xfib_algo to force, or XFIB_ALGO_NONE for automatic */
	__u32 seq;
};
_Static_assert(sizeof(struct xfib_control) == 8, "xfib_control size");

/*
 * Written by whoever loads the forwarder (xfibctl attach): the build loaded
 * and what this kernel let it do, for xfibctl status.
 */
enum xfib_prog_flags {
	XFIB_PROG_CT_KFUNCS = 1 << 0,   /* with the conntrack kfuncs */
	XFIB_PROG_CT_UDP_STREAM = 1 << 1, /* reads conntrack's UDP stream time */
};

struct xfib_prog_info {
	__u32 flags;          /* enum xfib_prog_flags */
	__u32 verified_insns; /* instructions the verifier processed; 0 if unknown */
	__u64 loaded;         /* CLOCK_REALTIME, seconds */
};
_Static_assert(sizeof(struct xfib_prog_info) == 16, "xfib_prog_info size");

/* Written by xfibd: who is maintaining the maps. */
struct xfib_daemon {
	__u32 pid;
	__u32 table; /* routing table mirrored */
	__u64 started;   /* CLOCK_REALTIME, seconds */
	__u64 last_sync; /* CLOCK_REALTIME, seconds, of the last full dump */
	__u64 resyncs;   /* full dumps after netlink overruns */
	__u32 links;
	__u32 neighs;
	__u32 nexthops;
	__u32 groups;    /* multipath groups (of routes and nexthop objects) */
	__u64 overruns;  /* netlink notifications lost (ENOBUFS) */
	__u32 nhobjs;    /* kernel nexthop objects (ip nexthop) mirrored */
	__u32 no_room;   /* routes the kernel forwards because a nexthop,
			  * neighbour or group index was not to be had */
	__u64 parse_errors; /* netlink messages dropped as malformed */
};
_Static_assert(sizeof(struct xfib_daemon) == 72, "xfib_daemon size");

/*
 * The daemon's word for the mirror (xfib_lease, one entry, mmap()ed). The
 * dataplane forwards by its maps only while the kernel's
 * CLOCK_MONOTONIC_COARSE (bpf_ktime_get_coarse_ns()) is before until;
 * after it every packet goes to the kernel (pass_stale). xfibd renews it,
 * to now + lease_ms, only while it is in sync with the kernel: after its
 * first full sync, never while a resync is due, and from its event loop,
 * so a daemon that is killed, stopped or wedged stops renewing, and
 * after the lease the kernel's FIB decides again. until 0: never
 * vouched (maps just created). until is written last, with one aligned
 * 8-byte store; the other fields are for xfibctl status only.
 */
struct xfib_lease {
	__u64 until;     /* CLOCK_MONOTONIC_COARSE, ns */
	__u64 lease_ms;  /* the renewing daemon's --lease */
	__u64 renewed;   /* CLOCK_REALTIME, seconds, of the last renewal */
	__u64 renewals;  /* by the daemon that renewed last */
	__u32 pid;       /* that daemon */
	__u32 pad;
} __attribute__((aligned(8)));
_Static_assert(sizeof(struct xfib_lease) == 40, "xfib_lease size");

/*
 * The flow hash's seed (xfib_hash_seed, one entry): per router, drawn at
 * random by the first xfibd to start on the pin directory, or set with
 * xfibd --hash-seed, and kept in the pinned map, so flows keep their
 * paths across restarts and upgrades of xfib. Distinct seeds keep two
 * tiers of routers from splitting flows alike (polarisation: the second
 * tier would use one path of each group), and keep outsiders from
 * computing which path a flow takes.
 */
enum xfib_seed_origin {
	XFIB_SEED_NONE = 0,   /* no xfibd started yet: seed 0 */
	XFIB_SEED_RANDOM = 1, /* drawn at the first start */
	XFIB_SEED_SET = 2,    /* --hash-seed */
};

struct xfib_hash_seed {
	__u32 seed;
	__u32 origin; /* enum xfib_seed_origin */
};
_Static_assert(sizeof(struct xfib_hash_seed) == 8, "xfib_hash_seed size");

/*
 * xfib_layout's one entry. Its map is array, 1 entry, and version the
 * first 4 bytes of the value, in every layout: that is how a build reads
 * another's. The rest says how the maps came to be, for xfibctl status.
 */
struct xfib_layout {
	__u32 version;      /* XFIB_LAYOUT_VERSION of the build that made them */
	__u32 from_version; /* the layout they replaced by an upgrade; 0: none */
	__u64 upgraded;     /* CLOCK_REALTIME, seconds, of that upgrade */
	__u32 ports;        /* ports switched to the new program */
	__u32 switch_us;    /* first port's replace to the last's */
	__u32 sync_ms;      /* the full sync into the new maps before it */
	__u32 pad;
};
_Static_assert(sizeof(struct xfib_layout) == 32, "xfib_layout size");

struct xfib_counter {
	__u64 packets;
	__u64 bytes;
};
_Static_assert(sizeof(struct xfib_counter) == 16, "xfib_counter size");

/*
 * Per-port counters (xfib_port_stats: per CPU, indexed by ifindex, ports
 * with an ifindex below XFIB_PORT_MAX). in[] counts the packets received
 * on the port by what became of them (enum xfib_reason: forwarded,
 * dropped, or passed to the kernel and why), so their sum is what the port
 * received; tx counts the packets xfib forwarded out of it. xfibctl attach
 * zeroes a port's entry: the counters run from the attach.
 */
struct xfib_port_counters {
	struct xfib_counter in[XFIB_REASON_COUNT];
	struct xfib_counter tx;
};

#endif /* XFIB_MAPS_H */
