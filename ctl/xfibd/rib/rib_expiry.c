// SPDX-License-Identifier: GPL-2.0-only
/*
 * Route expiry. IPv6 routes may carry a lifetime ("expires", router
 * advertisements). The kernel stops using a route the moment its
 * lifetime ends, but deletes it, and says so, only at its next garbage
 * collection, up to net.ipv6.route.gc_interval (30 s) later. xfibd keeps
 * the deadline of every such route and, a little before it, hands the
 * route's prefix to the kernel (an unsupported answer), which is right
 * whether the route has expired or had its lifetime extended without a
 * message (router advertisements refresh lifetimes silently). A route
 * still present well after its deadline is read again with a resync.
 * The deadlines wait in a min-heap of route keys; a route is found again
 * through its prefix when its time comes (routes gone or re-announced
 * since leave harmless entries).
 */
#include <stdlib.h>
#include <arpa/inet.h>

#include "log.h"
#include "monoclock.h"
#include "rib_priv.h"

/* Hand an expiring route to the kernel this long before its deadline: the
 * kernel's own clock decides the moment, and a notification may have
 * waited in the socket a little. */
#define EXPIRE_EARLY_MS 200
/* An expired route the kernel still holds this long after its deadline
 * has probably been refreshed silently: resync. */
#define EXPIRED_RECHECK_MS 60000

static void expiry_swap(struct rib *r, size_t a, size_t b)
{
	struct rib_expiry t = r->exp[a];

	r->exp[a] = r->exp[b];
	r->exp[b] = t;
}

static void expiry_push(struct rib *r, __u64 when, const struct rib_route_key *k)
{
	size_t i;

	if (r->nexp == r->exp_cap) {
		size_t cap = r->exp_cap ? 2 * r->exp_cap : 64;
		void *p = realloc(r->exp, cap * sizeof(*r->exp));

		if (!p) {
			/* Without a timer the route would be forwarded past
			 * its end: give it to the kernel now. */
			rib_want_resync(r);
			return;
		}
		r->exp = p;
		r->exp_cap = cap;
	}
	i = r->nexp++;
	r->exp[i].when = when;
	r->exp[i].key = *k;
	while (i && r->exp[(i - 1) / 2].when > r->exp[i].when) {
		expiry_swap(r, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static void expiry_pop(struct rib *r)
{
	size_t i = 0;

	r->exp[0] = r->exp[--r->nexp];
	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= r->nexp)
			break;
		if (c + 1 < r->nexp && r->exp[c + 1].when < r->exp[c].when)
			c++;
		if (r->exp[i].when <= r->exp[c].when)
			break;
		expiry_swap(r, i, c);
		i = c;
	}
}

__u64 rib_next_expiry(const struct rib *r)
{
	return r->nexp ? r->exp[0].when : 0;
}

void variant_expiry_set(struct rib *r, struct rib_variant *v,
			       const struct rib_route_msg *m)
{
	__u64 now;

	v->expires = 0;
	v->expired = v->expiry_seen = false;
	if (!m->has_expires)
		return;
	now = mono_ms();
	v->expires = m->expires_ms > 0 ? now + m->expires_ms : now;
	v->expiry_seen = m->expires_ms <= 0;
	if (v->expires > now + EXPIRE_EARLY_MS) {
		expiry_push(r, v->expires - EXPIRE_EARLY_MS, &m->key);
		return;
	}
	v->expired = true;
	if (!v->expiry_seen)
		expiry_push(r, v->expires + EXPIRED_RECHECK_MS, &m->key);
}

/* Checks the variants of one route against the clock. */
static void route_expire(struct rib *r, struct rib_route *rt, __u64 now)
{
	struct rib_variant *v;
	char a[INET6_ADDRSTRLEN];
	struct rib_route_key k;

	route_key_of(rt, &k);
	for (v = rt->vars; v; v = v->next) {
		if (!v->expires)
			continue;
		if (!v->expired && v->expires <= now + EXPIRE_EARLY_MS) {
			v->expired = true;
			route_changed(r, rt);
			pr_debug("route %s/%u expires: the kernel forwards to it until it deletes it",
				 inet_ntop(k.family, k.dst, a, sizeof(a)), k.plen);
			if (!v->expiry_seen)
				expiry_push(r, v->expires + EXPIRED_RECHECK_MS,
					    &k);
		} else if (v->expired && !v->expiry_seen &&
			   v->expires + EXPIRED_RECHECK_MS <= now) {
			pr_info("route %s/%u still held %u s after it expired: resync",
				inet_ntop(k.family, k.dst, a, sizeof(a)),
				k.plen, EXPIRED_RECHECK_MS / 1000);
			v->expiry_seen = true;
			rib_want_resync(r);
		}
	}
}

void rib_expire(struct rib *r, __u64 now)
{
	while (r->nexp && r->exp[0].when <= now) {
		struct rib_route_key k = r->exp[0].key;
		struct rib_route *rt;

		expiry_pop(r);
		/* Entries of routes gone or re-announced since are harmless:
		 * the variants say what is due. */
		rt = route_find(r, &k);
		if (rt)
			route_expire(r, rt, now);
	}
}
