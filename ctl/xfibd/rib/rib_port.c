// SPDX-License-Identifier: GPL-2.0-only
/*
 * The ports' entries in xfib_ifaces (struct xfib_port in
 * include/xfib/maps.h): an array indexed by ifindex, so that the program's
 * lookups are inlined, double-buffered so that no packet reads an entry
 * half written.
 *
 * An array value is written in place, not replaced as a hash map's is
 * (which RCU frees, so that a reader keeps the whole old value). Each port
 * therefore has two copies of its struct xfib_iface and a word, live,
 * naming the one in use. A change is written into the other copy, then
 * published by one release store of live + 1. The copy just left is
 * written again only once an RCU grace period has passed since it was
 * left (rib_rcu_sync counts them, the same grace periods that guard the
 * nexthop and neighbour indexes): until then a packet that loaded live
 * before the flip may still be reading it. A change that comes sooner
 * waits in struct rib_port and is written after the next grace period
 * (rib_reclaim); a later change replaces it, so a port flips at most once
 * per grace period. Removing a port is one store of live = 0 and writes
 * no copy.
 */
#include <string.h>

#include "rib_priv.h"

void port_init(struct rib *r)
{
	__u32 i;

	/* What a previous xfibd left: packets may be reading either copy of
	 * any port, so none is rewritten before our first grace period. */
	r->epoch = 1;
	for (i = 0; i < XFIB_PORT_MAX; i++) {
		r->ports[i].last = r->dp.port[i].live;
		r->ports[i].flip_epoch = r->epoch;
		r->ports[i].pending = false;
	}
	r->ports_pending = false;
}

/* The copy not in use is free to be written. */
static bool port_idle_copy_free(const struct rib *r, const struct rib_port *s)
{
	return r->epoch > s->flip_epoch;
}

void port_write(struct rib *r, __u32 ifindex, const struct xfib_iface *v)
{
	struct xfib_port *e;
	struct rib_port *s;
	__u32 live, next;

	if (ifindex >= XFIB_PORT_MAX)
		return;
	e = &r->dp.port[ifindex];
	s = &r->ports[ifindex];
	live = e->live; /* only we write it */
	s->pending = false;
	if (!v) {
		if (live)
			__atomic_store_n(&e->live, 0, __ATOMIC_RELEASE);
		return;
	}
	if (live && !memcmp(xfib_port_iface(e, live), v, sizeof(*v)))
		return;
	if (!port_idle_copy_free(r, s)) {
		s->want = *v;
		s->pending = true;
		r->ports_pending = true;
		return;
	}
	/* Counts up, never 0 (absent); copy[next & 1] is not copy[last & 1]. */
	next = s->last + 1 ?: 2;
	e->copy[next & 1] = *v;
	__atomic_store_n(&e->live, next, __ATOMIC_RELEASE);
	s->last = next;
	s->flip_epoch = r->epoch;
}

void port_flush(struct rib *r)
{
	__u32 i;

	if (!r->ports_pending)
		return;
	r->ports_pending = false;
	for (i = 0; i < XFIB_PORT_MAX; i++)
		if (r->ports[i].pending)
			port_write(r, i, &r->ports[i].want);
}

void port_sweep(struct rib *r)
{
	__u32 i;

	for (i = 0; i < XFIB_PORT_MAX; i++)
		if ((r->dp.port[i].live || r->ports[i].pending) &&
		    !htab_find(&r->links, &(int){ (int)i }))
			port_write(r, i, NULL);
}
