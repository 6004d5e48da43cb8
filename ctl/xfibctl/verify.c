// SPDX-License-Identifier: GPL-2.0-only
/*
 * xfib against the kernel, destination by destination.
 *
 * xfib's side is the live instance looked up with the dataplane's own code
 * (dplookup.c). The kernel's side is bpf_fib_lookup(), the same function
 * the kernel's forwarding path is built on, run in batches of XV_BATCH
 * through BPF_PROG_TEST_RUN (bpf/xfib_verify.bpf.c). Both run in the
 * network namespace of the caller, which must be the router's.
 *
 * Destinations: for every prefix of the tables xfibd mirrors (its table
 * and the local table, dumped here over rtnetlink), its first and last
 * address and the addresses just before and after it, where longest-match
 * bugs live; then N random ones per family, half uniform over the address
 * space and half inside a randomly chosen prefix (a uniform IPv6 address
 * almost never falls into any prefix but the default route).
 *
 * Flows: where a family's policy rules are walked, the destinations are
 * asked again as packets the rules tell apart, from a source, entering
 * by a port, with a protocol, ports and a TOS taken from the selectors
 * of the rules xfib mirrors and of the kernel's (verify_flow.c); each flow for a few destinations drawn from
 * the same points. Both sides answer the same flow: xfib's walk with all
 * of it (struct xfib_rflow), the kernel's bpf_fib_lookup() with the
 * query's source, TOS, protocol and ports, entering by the flow's port.
 *
 * A disagreement can be a change in flight: the kernel already has it and
 * xfibd has not published it yet (it batches changes, rebuilds take
 * time). So every disagreeing destination is looked up again on both
 * sides after a pause, and only one that persists is a mismatch.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <net/if.h>
#include <arpa/inet.h>
#include <linux/rtnetlink.h>
#include <libmnl/libmnl.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>

#include "monoclock.h"
#include "pin.h"
#include "verify.h"
#include "verify_priv.h"

#define RECHECK_PAUSE_MS 200
#define DPL_TRIES 100

/* ---- comparing ---------------------------------------------------------------- */

/*
 * xfib's nexthop kind against bpf_fib_lookup()'s verdict, the route each
 * side would use:
 *
 *   xfib                      kernel
 *   GATEWAY(ifindex, gw)      SUCCESS, same egress ifindex, and the gateway
 *                             written over the destination, in gw's family
 *                             (an IPv6 gateway of an IPv4 route switches
 *                             the answer to AF_INET6)
 *   CONNECTED(ifindex)        SUCCESS, same egress ifindex, destination
 *                             unchanged (no gateway)
 *   BLACKHOLE                 BLACKHOLE
 *   UNREACHABLE               UNREACHABLE or PROHIBIT (xfib does not tell
 *                             them apart: the kernel sends the ICMP), or
 *                             NOT_FWDED (a throw route, which xfib also
 *                             maps to UNREACHABLE, falls through to no
 *                             route)
 *   LOCAL                     NOT_FWDED (local, broadcast, anycast,
 *                             multicast)
 *   NONE (no route)           NOT_FWDED or UNREACHABLE
 *
 * Deferred, never a mismatch: xfib's UNSUPPORTED (the dataplane passes the
 * packet, so the kernel decides), a family with no published instance,
 * destinations the dataplane passes before any lookup (dpl_special), and
 * any answer where the kernel says FWD_DISABLED (the ingress port does not
 * forward: the dataplane checks the same flag per packet). Anything else
 * is a disagreement, which verify_compare() then weighs by what the
 * dataplane does with the packet.
 */
static enum verify_outcome compare_route(int fam, const __u8 *addr, bool ready,
					 const struct xfib_nexthop *nh,
					 const struct xv_query *k)
{
	size_t alen = fam_alen(fam);
	bool ok;

	if (!ready || dpl_special(fam, addr) || nh->kind == XFIB_NH_UNSUPPORTED ||
	    k->ret == BPF_FIB_LKUP_RET_FWD_DISABLED)
		return VERIFY_DEFERRED;
	switch (nh->kind) {
	case XFIB_NH_GATEWAY:
		ok = k->ret == BPF_FIB_LKUP_RET_SUCCESS && k->ifindex == nh->ifindex &&
		     k->family == nh->family &&
		     !memcmp(k->addr, nh->gw, nh->family == AF_INET ? 4 : 16);
		break;
	case XFIB_NH_CONNECTED:
		ok = k->ret == BPF_FIB_LKUP_RET_SUCCESS && k->ifindex == nh->ifindex &&
		     k->family == fam_af(fam) && !memcmp(k->addr, addr, alen);
		break;
	case XFIB_NH_BLACKHOLE:
		ok = k->ret == BPF_FIB_LKUP_RET_BLACKHOLE;
		break;
	case XFIB_NH_UNREACHABLE:
		ok = k->ret == BPF_FIB_LKUP_RET_UNREACHABLE ||
		     k->ret == BPF_FIB_LKUP_RET_PROHIBIT ||
		     k->ret == BPF_FIB_LKUP_RET_NOT_FWDED;
		break;
	case XFIB_NH_LOCAL:
		ok = k->ret == BPF_FIB_LKUP_RET_NOT_FWDED;
		break;
	case XFIB_NH_NONE:
		ok = k->ret == BPF_FIB_LKUP_RET_NOT_FWDED ||
		     k->ret == BPF_FIB_LKUP_RET_UNREACHABLE;
		break;
	default:
		ok = false;
		break;
	}
	return ok ? VERIFY_MATCH : VERIFY_MISMATCH;
}

/*
 * True when the dataplane hands packets for nh to the kernel because its
 * egress port is down or has no carrier (XFIB_PASS_EGRESS_DOWN, the check
 * bpf/xfib_fwd.bpf.c makes on xfib_ifaces). The kernel's own answer for
 * such a port depends on state xfib does not model (a route whose
 * nexthop lost its carrier is skipped with ignore_routes_with_linkdown,
 * the next duplicate or a covering route answers instead), and the kernel
 * handles these packets itself: whatever it would do happens.
 */
static bool handed_over_egress_down(const struct dpl *d,
				    const struct xfib_nexthop *nh)
{
	struct xfib_iface ifc;

	if (nh->kind != XFIB_NH_GATEWAY && nh->kind != XFIB_NH_CONNECTED)
		return false;
	/* Unknown, or beyond XFIB_PORT_MAX: XFIB_PASS_EGRESS_DOWN too. */
	if (!dpl_port(d, nh->ifindex, &ifc))
		return true;
	return !(ifc.flags & XFIB_IF_UP);
}

/* A local IPv4 address the forwarder would not look up as a source on a
 * port without rp_filter (xfib_nonlocal4): it would forward packets the
 * kernel drops as martians. */
static bool local_ruled_out(const struct dpl *d, int fam,
			   const struct xfib_nexthop *nh, const __u8 *addr)
{
	return fam == XFIB_V4 && nh->kind == XFIB_NH_LOCAL &&
	       !dpl_source_wanted4(d, addr);
}

/*
 * What the dataplane does with a packet to addr against what the kernel
 * would: forwarding out of the same port to the same next hop, or
 * dropping where the kernel drops, matches; handing the packet to the
 * kernel for what the route says (local, unreachable, no route) matches
 * the kernel saying so. A route xfib would forward by but the kernel
 * would not is a mismatch even while the dataplane still passes its
 * packets for an unresolved neighbour or an unattached port, because it
 * forwards them wrongly once that changes; but not when it passes them
 * because the egress port is down (handed_over_egress_down): that is the
 * kernel's decision to make, and the dataplane lets it.
 */
static enum verify_outcome compare_one(const struct dpl *d, int fam,
				       const __u8 *addr, bool ready,
				       const struct xfib_nexthop *nh,
				       const struct xv_query *k)
{
	enum verify_outcome o = compare_route(fam, addr, ready, nh, k);

	if (o == VERIFY_MISMATCH && handed_over_egress_down(d, nh))
		return VERIFY_DEFERRED;
	if (o == VERIFY_MATCH && local_ruled_out(d, fam, nh, addr))
		return VERIFY_MISMATCH;
	return o;
}

/*
 * A multipath group agrees when the kernel's answer is one of its members:
 * the kernel picks a path with its own hash, xfib with its own, and each
 * keeps a flow on one path.
 */
enum verify_outcome verify_compare(const struct dpl *d, int fam,
				   const __u8 *addr, bool ready,
				   const struct xfib_nexthop *nh,
				   const struct xv_query *k)
{
	enum verify_outcome best = VERIFY_MISMATCH, o;
	__u32 m[XFIB_GROUP_BUCKETS];
	struct xfib_nexthop mnh;
	size_t i, n;

	if (!ready || nh->kind != XFIB_NH_GROUP)
		return compare_one(d, fam, addr, ready, nh, k);
	n = dpl_group_members(d->grp, nh, m, NULL);
	for (i = 0; i < n && best != VERIFY_MATCH; i++) {
		dpl_nexthop(d, m[i], &mnh);
		o = compare_one(d, fam, addr, ready, &mnh, k);
		if (o == VERIFY_MATCH || (o == VERIFY_DEFERRED && best == VERIFY_MISMATCH))
			best = o;
	}
	return best;
}

int verify_default_iif(struct xfib_fwd_bpf *skel)
{
	int fd = bpf_map__fd(skel->maps.xfib_tx_ports);
	__u32 key, next, best = 0;
	char name[IF_NAMESIZE];
	void *prev = NULL;
	unsigned int lo;

	/* Lowest ifindex, so the choice does not depend on hash order. The
	 * devmap may hold ports of another namespace if run elsewhere. */
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		if ((!best || next < best) && if_indextoname(next, name))
			best = next;
		key = next;
		prev = &key;
	}
	if (best)
		return best;
	lo = if_nametoindex("lo");
	return lo ? (int)lo : 1;
}

/* ---- a run ----------------------------------------------------------------- */

/* One question: a destination, and the flow it is asked for. */
struct vq {
	__u8 addr[16];
	struct verify_flow fl;
};

/* Questions of one family entering by one port (the kernel's side runs
 * per port), all of the sweep or all of rule flows. */
struct batch {
	size_t n;
	__u32 iif;
	bool flows;
	struct vq q[XV_BATCH];
	__u32 nh_idx[XV_BATCH];
	struct xfib_nexthop nh[XV_BATCH];
};

struct vq_list {
	struct vq *v;
	size_t n, cap;
};

struct run {
	struct verify_report *rep;
	const struct verify_opts *o;
	struct kfib *k;
	struct dpl d[XFIB_FAMILIES];
	struct batch *b;
	/* disagreements to look at again: [fam][flows] */
	struct vq_list again[XFIB_FAMILIES][2];
};

static int list_add(struct vq_list *l, const struct vq *q)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 1024;
		void *p = realloc(l->v, cap * sizeof(*l->v));

		if (!p)
			return -ENOMEM;
		l->v = p;
		l->cap = cap;
	}
	l->v[l->n++] = *q;
	return 0;
}

static void report_err(struct verify_report *rep, const char *what, int err)
{
	snprintf(rep->err, sizeof(rep->err), "%s: %s", what, strerror(-err));
}

/* xfib's answers for the batch, all from one instance. */
/* An answer that is the kernel's (a rule or table xfib leaves to it),
 * or one the referee cannot judge (dpl_rules_judgeable). */
#define DEFER_TO_KERNEL 0xffffffffu

/*
 * The policy rules' answer for question q, the one the referee asks the
 * kernel (bpf_fib_lookup() through the rules, with q's flow), into
 * *nh_idx, which holds slot 0's: the rules' nexthop, or DEFER_TO_KERNEL.
 */
static int rules_answer(const struct dpl *d, const struct vq *q,
			__u32 *nh_idx)
{
	struct dpl_rules_answer a;
	struct xfib_rflow f = {
		.iif = q->fl.iif,
		.sport = q->fl.sport,
		.dport = q->fl.dport,
		.tos = q->fl.tos,
		.proto = q->fl.proto,
	};
	int err;

	dpl_rflow_addr(d->fam, q->addr, &f.dst_hi, &f.dst_lo);
	dpl_rflow_addr(d->fam, q->fl.src, &f.src_hi, &f.src_lo);
	/* No packet, no flow hash: an IPv6 multipath answer that
	 * suppress_ifgroup judged on the member it picks is not judged
	 * (dpl_rules_judgeable). */
	err = dpl_rules_route(d, &f, *nh_idx, 0, &a);
	if (err)
		return err;
	if (a.walked)
		*nh_idx = a.reason == XFIB_NEXT && dpl_rules_judgeable(d->fam, &a) ?
			  a.nh : DEFER_TO_KERNEL;
	return 0;
}

/* The tables policy rules reach, as xfibd mirrors them (xfib_table_info
 * of both families) into tables[XFIB_FAMILIES * XFIB_TABLE_SLOTS]; how
 * many. */
static size_t rule_tables(struct xfib_fwd_bpf *skel, __u32 *tables)
{
	int fd = bpf_map__fd(skel->maps.xfib_table_info);
	struct xfib_table_info ti;
	size_t n = 0;
	__u32 k;

	for (k = 0; k < XFIB_FAMILIES * XFIB_TABLE_SLOTS; k++)
		if (!bpf_map_lookup_elem(fd, &k, &ti) && ti.table && !ti.main_copy)
			tables[n++] = ti.table;
	return n;
}

static int xfib_answers(struct run *r, int fam, bool *ready)
{
	struct dpl *d = &r->d[fam];
	struct batch *b = r->b;
	int tries, err;
	size_t i;

	for (tries = 0; tries < DPL_TRIES; tries++) {
		for (i = 0; i < b->n; i++) {
			b->nh_idx[i] = dpl_lookup(d, b->q[i].addr);
			err = rules_answer(d, &b->q[i], &b->nh_idx[i]);
			if (err)
				return err;
			dpl_nexthop(d, b->nh_idx[i], &b->nh[i]);
			if (b->nh_idx[i] == DEFER_TO_KERNEL)
				b->nh[i].kind = XFIB_NH_UNSUPPORTED;
		}
		/* Without the lease the program forwards by no table. */
		*ready = d->ready && dpl_lease_check(d) != XFIB_PASS_STALE;
		err = dpl_refresh(d);
		if (err <= 0)
			return err;
	}
	return -EBUSY;
}

/* The kernel's query for question vq of family fam. */
static void kernel_query(int fam, const struct vq *vq, struct xv_query *q)
{
	size_t alen = fam_alen(fam);

	memset(q, 0, sizeof(*q));
	q->family = fam_af(fam);
	memcpy(q->addr, vq->addr, alen);
	memcpy(q->src, vq->fl.src, alen);
	q->tos = vq->fl.tos;
	q->l4_protocol = vq->fl.proto;
	q->sport = htons(vq->fl.sport);
	q->dport = htons(vq->fl.dport);
}

/* The details of the batch's question i, a mismatch, while fewer than
 * max_reports are kept. */
static void keep_mismatch(struct run *r, int fam, size_t i,
			  const struct xv_query *k)
{
	const struct batch *b = r->b;
	struct verify_mismatch *m;

	if (r->rep->nmis >= r->o->max_reports)
		return;
	m = &r->rep->mis[r->rep->nmis++];
	m->fam = fam;
	memcpy(m->addr, b->q[i].addr, 16);
	m->nh_idx = b->nh_idx[i];
	m->nh = b->nh[i];
	m->kernel = *k;
	m->source_ruled_out = local_ruled_out(&r->d[fam], fam, &m->nh, m->addr);
	m->rule_flow = b->flows;
	m->flow = b->q[i].fl;
}

/* Checks the batch. Until `final`, disagreements are set aside for a
 * second look rather than counted. */
static int check_batch(struct run *r, int fam, bool final)
{
	struct verify_family *vf = &r->rep->fam[fam];
	struct xv_query *q = kfib_queries(r->k);
	struct batch *b = r->b;
	struct verify_counts *c = b->flows ? &vf->flow : &vf->dests;
	size_t i;
	bool ready;
	int err;

	if (!b->n)
		return 0;
	err = xfib_answers(r, fam, &ready);
	if (err) {
		report_err(r->rep, fam == XFIB_V4 ? "ipv4: read xfib's lookup table" :
						   "ipv6: read xfib's lookup table", err);
		return err;
	}
	if (!ready) {
		/* No instance, or no lease on it: the dataplane passes every
		 * packet, whatever the kernel would answer. */
		if (r->d[fam].ready)
			r->rep->stale += b->n;
		c->checked += b->n;
		c->deferred += b->n;
		b->n = 0;
		return 0;
	}
	for (i = 0; i < b->n; i++)
		kernel_query(fam, &b->q[i], &q[i]);
	err = kfib_run(r->k, b->iif, b->n);
	if (err) {
		report_err(r->rep, "kernel lookups (BPF_PROG_TEST_RUN of xfib_verify)", err);
		return err;
	}
	for (i = 0; i < b->n; i++) {
		enum verify_outcome o;

		if (q[i].ret < 0) {
			char what[64];

			snprintf(what, sizeof(what), "bpf_fib_lookup (ingress ifindex %u)",
				 b->iif);
			report_err(r->rep, what, q[i].ret);
			return q[i].ret;
		}
		o = verify_compare(&r->d[fam], fam, b->q[i].addr, ready, &b->nh[i], &q[i]);
		if (o == VERIFY_MISMATCH && !final) {
			err = list_add(&r->again[fam][b->flows], &b->q[i]);
			if (err) {
				report_err(r->rep, "keep a disagreement", err);
				return err;
			}
			continue;
		}
		c->checked++;
		if (o == VERIFY_MATCH) {
			c->matched++;
		} else if (o == VERIFY_DEFERRED) {
			c->deferred++;
		} else {
			c->mismatched++;
			keep_mismatch(r, fam, i, &q[i]);
		}
	}
	b->n = 0;
	return 0;
}

/* Adds question q to the batch, checking the batch first if it is full
 * or enters by another port. */
static int batch_add(struct run *r, int fam, bool final, const struct vq *q)
{
	struct batch *b = r->b;
	int err;

	if (b->n && (b->n == XV_BATCH || b->iif != q->fl.iif)) {
		err = check_batch(r, fam, final);
		if (err)
			return err;
	}
	b->iif = q->fl.iif;
	b->q[b->n++] = *q;
	return 0;
}

static int check_family(struct run *r, int fam, const struct pfxs *p, __u64 seed)
{
	struct gen g = { .fam = fam, .p = p, .rnd_left = r->o->random, .rng = seed };
	struct vq q = { .fl.iif = r->rep->iif };
	int err;

	r->b->n = 0;
	r->b->flows = false;
	while (gen_next(&g, q.addr)) {
		err = batch_add(r, fam, false, &q);
		if (err)
			return err;
	}
	return check_batch(r, fam, false);
}

/* The ports xfib is attached to in this namespace, ascending, into
 * ports[XFIB_PORT_MAX]; how many. */
static size_t attached_ports(struct xfib_fwd_bpf *skel, __u32 *ports)
{
	int fd = bpf_map__fd(skel->maps.xfib_tx_ports);
	char name[IF_NAMESIZE];
	__u32 key, next, t;
	void *prev = NULL;
	size_t n = 0, i, j;

	while (n < XFIB_PORT_MAX && !bpf_map_get_next_key(fd, prev, &next)) {
		if (if_indextoname(next, name))
			ports[n++] = next;
		key = next;
		prev = &key;
	}
	for (i = 1; i < n; i++) /* a few ports: insertion sort */
		for (j = i; j > 0 && ports[j - 1] > ports[j]; j--) {
			t = ports[j];
			ports[j] = ports[j - 1];
			ports[j - 1] = t;
		}
	return n;
}

/*
 * The rules flows are made from, into set: xfib's copy, then the
 * kernel's own selectors while there is room, so that a rule xfib's copy
 * lacks, or holds as one that never matches, still gets its flows (the
 * values both have are asked once).
 */
static int flow_rules(struct run *r, int fam, struct xfib_rule_set *set)
{
	size_t n = set->hdr.count < XFIB_RULES_MAX ? set->hdr.count : XFIB_RULES_MAX;
	size_t added;
	int err;

	err = krules_dump(fam, &set->rule[n], XFIB_RULES_MAX - n, &added);
	if (err) {
		report_err(r->rep, "dump the kernel's policy rules (rtnetlink)", err);
		return err;
	}
	set->hdr.count = n + added;
	return 0;
}

/*
 * The rule flows of a family whose rules are walked, each asked for
 * o->flow_dests destinations drawn from the sweep's points (p) and the
 * rules' own destination prefixes.
 */
static int check_family_flows(struct run *r, int fam, const struct pfxs *p,
			      const __u32 *ports, size_t nports, __u64 seed)
{
	static struct xfib_rule_set set; /* 24 KiB: not on the stack */
	struct verify_family *vf = &r->rep->fam[fam];
	struct pfxs pool[2] = { *p, { 0 } };
	struct flows fl = { 0 };
	unsigned long k;
	__u64 rng = seed;
	struct vq q;
	size_t i;
	int err;

	if (!r->o->flows || !r->o->flow_dests)
		return 0;
	err = dpl_rules_snapshot(&r->d[fam], &set);
	if (err) {
		report_err(r->rep, "read xfib's policy rules", err);
		return err;
	}
	if (!set.hdr.walk || set.hdr.fallback != XFIB_RULES_OK)
		return 0;
	err = flow_rules(r, fam, &set);
	if (err)
		return err;
	err = rule_dst_prefixes(fam, &set, &pool[1]);
	err = err ?: rule_flows(fam, &set, ports, nports, r->rep->iif, r->o->flows,
				&rng, &fl);
	if (err) {
		report_err(r->rep, "derive flows from the policy rules", err);
		goto out;
	}
	vf->flows = fl.n;
	vf->combinations = fl.combinations;
	r->b->n = 0;
	r->b->flows = true;
	for (i = 0; i < fl.n; i++) {
		q.fl = fl.v[i];
		for (k = 0; k < r->o->flow_dests; k++) {
			gen_pick(fam, pool, &rng, q.addr);
			err = batch_add(r, fam, false, &q);
			if (err)
				goto out;
		}
	}
	err = check_batch(r, fam, false);
out:
	free(pool[1].v);
	free(fl.v);
	return err;
}

static int recheck_family(struct run *r, int fam, bool flows)
{
	struct vq_list *l = &r->again[fam][flows];
	struct verify_family *vf = &r->rep->fam[fam];
	size_t i;
	int err;

	(flows ? &vf->flow : &vf->dests)->rechecked = l->n;
	r->b->n = 0;
	r->b->flows = flows;
	for (i = 0; i < l->n; i++) {
		err = batch_add(r, fam, true, &l->v[i]);
		if (err)
			return err;
	}
	return check_batch(r, fam, true);
}

static __u32 mirrored_table(struct xfib_fwd_bpf *skel)
{
	struct xfib_daemon info;
	__u32 key = 0;

	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.xfib_daemon), &key, &info) ||
	    !info.table)
		return RT_TABLE_MAIN;
	return info.table;
}

static int open_families(struct run *r, struct xfib_fwd_bpf *skel)
{
	int fam, err;

	for (fam = 0; fam < XFIB_FAMILIES; fam++) {
		err = dpl_open(&r->d[fam], skel, fam);
		if (err) {
			char what[64];

			snprintf(what, sizeof(what), "%s: open xfib's lookup table",
				 fam_str(fam));
			report_err(r->rep, what, err);
			return err;
		}
	}
	return 0;
}

int verify_run(struct xfib_fwd_bpf *skel, const struct verify_opts *o,
	       struct verify_report *rep)
{
	struct pfxs pf[XFIB_FAMILIES] = { { 0 } };
	__u32 tables[XFIB_FAMILIES * XFIB_TABLE_SLOTS];
	struct run r = { .rep = rep, .o = o };
	double t0 = mono_ns() / 1e9;
	__u32 ports[XFIB_PORT_MAX];
	size_t nports;
	bool again = false;
	int fam, err;

	memset(rep, 0, sizeof(*rep));
	rep->table = o->table ? o->table : mirrored_table(skel);
	rep->iif = o->iif ? o->iif : (__u32)verify_default_iif(skel);
	rep->seed = o->seed ? o->seed : ((__u64)time(NULL) << 20) ^ (__u64)getpid();
	rep->flow_dests = o->flows ? o->flow_dests : 0;
	if (o->max_reports) {
		rep->mis = calloc(o->max_reports, sizeof(*rep->mis));
		if (!rep->mis) {
			err = -ENOMEM;
			report_err(rep, "allocate", err);
			return err;
		}
	}
	r.b = malloc(sizeof(*r.b));
	if (!r.b) {
		err = -ENOMEM;
		report_err(rep, "allocate", err);
		goto out;
	}
	err = dump_prefixes(rep->table, tables, rule_tables(skel, tables), pf);
	if (err) {
		report_err(rep, "dump the kernel's routes (rtnetlink)", err);
		goto out;
	}
	err = kfib_open(&r.k);
	if (err) {
		report_err(rep, "load the kernel lookup program xfib_verify", err);
		goto out;
	}
	err = open_families(&r, skel);
	if (err)
		goto out;
	nports = attached_ports(skel, ports);
	for (fam = 0; fam < XFIB_FAMILIES; fam++) {
		rep->fam[fam].prefixes = pf[fam].n;
		/* Distinct but reproducible streams per family. */
		err = check_family(&r, fam, &pf[fam], rep->seed + fam);
		err = err ?: check_family_flows(&r, fam, &pf[fam], ports, nports,
						rep->seed + XFIB_FAMILIES + fam);
		if (err)
			goto out;
		again |= r.again[fam][0].n || r.again[fam][1].n;
	}
	if (again)
		usleep(RECHECK_PAUSE_MS * 1000);
	for (fam = 0; fam < XFIB_FAMILIES; fam++) {
		err = recheck_family(&r, fam, false);
		err = err ?: recheck_family(&r, fam, true);
		if (err)
			goto out;
		rep->fam[fam].act = r.d[fam].act;
	}
out:
	rep->seconds = mono_ns() / 1e9 - t0;
	for (fam = 0; fam < XFIB_FAMILIES; fam++) {
		if (r.d[fam].skel)
			dpl_close(&r.d[fam]);
		free(r.again[fam][0].v);
		free(r.again[fam][1].v);
		free(pf[fam].v);
	}
	kfib_close(r.k);
	free(r.b);
	return err;
}

void verify_report_free(struct verify_report *rep)
{
	free(rep->mis);
	rep->mis = NULL;
	rep->nmis = 0;
}
