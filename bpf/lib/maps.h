/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The dataplane's maps. All are pinned by name under the router's pin
 * directory (LIBBPF_PIN_BY_NAME with the pin root set by the loader), so
 * xfibd, xfibctl and every attached program share one set, and the
 * dataplane outlives the daemon.
 */
#ifndef XFIB_BPF_MAPS_H
#define XFIB_BPF_MAPS_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "xfib/maps.h"
#include "xfib/counters.h"
#include "xfib/trace.h"
#include "xfib/lookup_dir24.h"
#include "xfib/lookup_dxr.h"
#include "xfib/lookup_trie6.h"
#include "xfib/tbl8_pool.h"
#include "xfib/lookup_poptrie6.h"
#include "xfib/xfrm.h"
#include "xfib/rules.h"
#include "xfib/tables.h"

/* Published instance per family; read once per packet. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, XFIB_FAMILIES);
	__type(key, __u32);
	__type(value, struct xfib_active);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xfib_active SEC(".maps");

/*
 * dir24_8 (IPv4) and trie6 (IPv6) instances, main's and those of the
 * rules' large tables (XFIB_INST_SLOTS, include/xfib/tables.h): each slot
 * holds a tbl24 of
 * 2^24 __u32 entries, and a pool of tbl8 groups of 256 entries, in chunk
 * maps of a fixed size (include/xfib/tbl8_pool.h). Every inner map has its
 * template's size, so the verifier inlines all of these lookups: no
 * helper call.
 *
 * tbl24 is one 64 MiB value: a packet fetches its address once, and each
 * read is then a plain load at an index the verifier knows to be below
 * 2^24, with no map lookup, bounds check and null test of its own.
 * (Linux takes array values up to 2 GiB since before bpf_loop(), 5.17,
 * which the forwarder needs anyway.) Declared by size, not by a BTF type:
 * libbpf 1.1 fails to size a BTF value type of 2^24 entries.
 */
_Static_assert(XFIB_DIR24_TBL24_BYTES == XFIB_TRIE6_TBL24_BYTES,
	       "dir24_8 and trie6 share the tbl24 template");
struct xfib_tbl24_inner {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, XFIB_DIR24_TBL24_BYTES);
};

struct xfib_tbl8_inner {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, XFIB_POOL_CHUNK_VALUES);
	__type(key, __u32);
	__type(value, __u64);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, XFIB_INST_SLOTS);
	__type(key, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__array(values, struct xfib_tbl24_inner);
} xfib_dir24_tbl24 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, XFIB_INST_SLOTS * XFIB_POOL_SLOT_CHUNKS);
	__type(key, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__array(values, struct xfib_tbl8_inner);
} xfib_dir24_tbl8 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, XFIB_INST_SLOTS);
	__type(key, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__array(values, struct xfib_tbl24_inner);
} xfib_trie6_tbl24 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, XFIB_INST_SLOTS * XFIB_POOL_SLOT_CHUNKS);
	__type(key, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__array(values, struct xfib_tbl8_inner);
} xfib_trie6_tbl8 SEC(".maps");

/* The maps' layout (include/xfib/maps.h); not read by the program. Never
 * change this map's definition: builds read each other's. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xfib_layout);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xfib_layout SEC(".maps");

/* Operator requests to the daemon (xfibctl algo). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XFIB_FAMILIES);
	__type(key, __u32);
	__type(value, struct xfib_control);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xfib_control SEC(".maps");

/* Status of each family's instance (not read by the fast path). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XFIB_FAMILIES);
	__type(key, __u32);
	__type(value, struct xfib_fib_info);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xfib_fib_info SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xfib_daemon);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xfib_daemon SEC(".maps");

/* struct xfib_prog_info: written by the program's loader; not read here. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xfib_prog_info);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xfib_prog_info SEC(".maps");

/* The daemon's lease on the mirror (include/xfib/maps.h), read per
 * packet: an array, so the lookup is inlined. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xfib_lease);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xfib_lease SEC(".maps");

/* The flow hash's seed (include/xfib/maps.h), read per multipath
 * packet. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xfib_hash_seed);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xfib_hash_seed SEC(".maps");

/* bsearch ranges, two slots per family. mmap()able so the daemon fills a
 * slot with plain stores and xfibctl runs the same lookup on it. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 2 * XFIB_BS4_SLOT_SIZE);
	__type(key, __u32);
	__type(value, struct xfib_bs4_range);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xfib_bs4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 2 * XFIB_BS6_SLOT_SIZE);
	__type(key, __u32);
	__type(value, struct xfib_bs6_range);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xfib_bs6 SEC(".maps");

/* dxr tables (include/xfib/lookup_dxr.h), two slots each: __u32 entries,
 * two per value. Fixed arrays, so the verifier inlines every read. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, XFIB_DXR_DIRECT_VALUES);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xfib_dxr_direct SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, XFIB_DXR_RANGE_VALUES);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xfib_dxr_ranges SEC(".maps");

/* poptrie6 tables (include/xfib/lookup_poptrie6.h), two slots each:
 * direct and leaves hold two __u32 entries per value, nodes one node.
 * Fixed arrays, so the verifier inlines every read. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, XFIB_PT6_DIRECT_VALUES);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xfib_pt6_direct SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, XFIB_PT6_NODE_VALUES);
	__type(key, __u32);
	__type(value, struct xfib_pt6_node);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xfib_pt6_nodes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, XFIB_PT6_LEAF_VALUES);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xfib_pt6_leaves SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, XFIB_NEXTHOP_MAX);
	__type(key, __u32);
	__type(value, struct xfib_nexthop);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xfib_nexthops SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, XFIB_NEIGH_MAX);
	__type(key, __u32);
	__type(value, struct xfib_neigh);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xfib_neighs SEC(".maps");

/* Multipath groups: member nexthop index per flow-hash bucket. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, XFIB_GROUP_MAX);
	__type(key, __u32);
	__type(value, struct xfib_nh_group);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xfib_nh_groups SEC(".maps");

/* (ifindex, address) -> neighbour index, for on-link destinations. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC); /* RCU-freed: no torn reads */
	__uint(max_entries, XFIB_NEIGH_HOSTS_MAX);
	__type(key, struct xfib_neigh_key);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xfib_neigh_hosts SEC(".maps");

/* The bridges' forwarding databases (struct xfib_fdb_key): which member
 * a MAC is behind. A replaced entry is RCU-freed, so a reader sees the
 * old value or the new one, whole. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, XFIB_FDB_MAX);
	__type(key, struct xfib_fdb_key);
	__type(value, struct xfib_fdb);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xfib_fdb SEC(".maps");

/* Per bridge (by ifindex): MACs seen moving, not yet mirrored
 * (include/xfib/maps.h). mmap()ed by xfibd: 8-byte values, the stride of
 * an array's values in its mmap()ed region. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, XFIB_PORT_MAX);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xfib_br_moving SEC(".maps");

/* ifindex -> interface state, written by xfibd. An array, so that the
 * verifier inlines the two lookups per packet; double-buffered against
 * torn reads (struct xfib_port). mmap()ed by xfibd and xfibctl. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, XFIB_PORT_MAX);
	__type(key, __u32);
	__type(value, struct xfib_port);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xfib_ifaces SEC(".maps");

/*
 * ifindex -> egress port; an entry exists iff xfibctl attached the port.
 * Pinned by the loader (ctl/lib/pin.c), not by libbpf: the kernel adds
 * BPF_F_RDONLY_PROG to every devmap, which libbpf 1.1 then takes for a
 * definition mismatch and refuses to reuse the pin.
 */
struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP_HASH);
	__uint(max_entries, XFIB_IFACE_MAX);
	__type(key, __u32);
	__type(value, struct bpf_devmap_val);
} xfib_tx_ports SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XFIB_REASON_COUNT);
	__type(key, __u32);
	__type(value, struct xfib_counter);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xfib_stats SEC(".maps");

/* Per-port counters, indexed by ifindex (include/xfib/maps.h). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XFIB_PORT_MAX);
	__type(key, __u32);
	__type(value, struct xfib_port_counters);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xfib_port_stats SEC(".maps");

/* xfibctl trace (include/xfib/trace.h): what to trace, the sampling
 * state, and the events. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xfib_trace_cfg);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xfib_trace_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xfib_trace_state);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xfib_trace_state SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, XFIB_TRACE_RING_BYTES);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xfib_trace_ring SEC(".maps");

/* Where an IPv4 source cannot be local (include/xfib/maps.h), mmap()ed
 * and written by xfibd. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, XFIB_NONLOCAL4_WORDS);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xfib_nonlocal4 SEC(".maps");

/* Per family: IPsec policies or states the kernel would apply to
 * forwarded packets (include/xfib/xfrm.h), written by xfibd. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XFIB_FAMILIES);
	__type(key, __u32);
	__type(value, struct xfib_xfrm_info);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xfib_xfrm SEC(".maps");

/* The policy rules, two halves per family, and the half in use
 * (include/xfib/rules.h), mmap()ed and written by xfibd; walked by
 * include/xfib/rule_walk.h. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 2 * XFIB_FAMILIES);
	__type(key, __u32);
	__type(value, struct xfib_rule_set);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xfib_rules SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, XFIB_FAMILIES);
	__type(key, __u32);
	__type(value, struct xfib_rules_active);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xfib_rules_active SEC(".maps");

/* The tables rules reach besides main (include/xfib/tables.h): per
 * family and slot a descriptor, read once per lookup, and what xfibctl
 * shows; the ranges in one pool per family. mmap()ed by xfibd. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, XFIB_FAMILIES * XFIB_TABLE_SLOTS);
	__type(key, __u32);
	__type(value, struct xfib_table_desc);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xfib_tables SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, XFIB_FAMILIES * XFIB_TABLE_SLOTS);
	__type(key, __u32);
	__type(value, struct xfib_table_info);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xfib_table_info SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, XFIB_TPOOL4_SIZE);
	__type(key, __u32);
	__type(value, struct xfib_tr4);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xfib_tpool4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, XFIB_TPOOL6_SIZE);
	__type(key, __u32);
	__type(value, struct xfib_tr6);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xfib_tpool6 SEC(".maps");

/*
 * Not used by the program: an update of a map-in-map returns only after an
 * RCU grace period (the kernel waits for running programs), which gives the
 * daemon a cheap "all packets that saw the old table are done" barrier
 * before it reuses a slot or an index.
 */
struct xfib_rcu_inner {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__array(values, struct xfib_rcu_inner);
} xfib_rcu_sync SEC(".maps");

#endif /* XFIB_BPF_MAPS_H */
