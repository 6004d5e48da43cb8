// SPDX-License-Identifier: GPL-2.0-only
/*
 * Preparing flows for the fast path, on the dataplane's word
 * (xfib_ct_events; bpf/lib/ctgate.h says why each step is needed):
 *
 *  - a TCP flow conntrack holds as established: its entry is made
 *    BE_LIBERAL in both directions over ctnetlink, so that the kernel,
 *    which stops seeing its packets, accepts the FIN that ends it;
 *  - an ICMP echo flow: xfibd asks conntrack whether it holds the flow as
 *    replied, without helper, in the default zone; if so it refreshes the
 *    entry's timeout and writes the flow into xfib_ct_echo, valid until a
 *    second before the entry could expire: one key, or for a flow
 *    conntrack translates one per side with the translation (struct
 *    xfib_ct_echo). Every second, echo flows used since their last
 *    refresh are refreshed again (and checked again); the others run
 *    out.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <netinet/in.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/netfilter/nf_conntrack_common.h>

#include "ctnl.h"
#include "log.h"
#include "monoclock.h"
#include "pin.h"
#include "nfgate.h"

#define NS 1000000000ull
/* An echo flow stops being fast-pathed this long before conntrack could
 * expire it. */
#define ECHO_MARGIN_NS NS
#define ECHO_REFRESH_NS (NS / 2)

#define ICMP_ECHO_ 8
#define ICMPV6_ECHO_REQUEST_ 128
#define ICMP_ECHOREPLY_ 0
#define ICMPV6_ECHO_REPLY_ 129

static unsigned int fam_of(__u8 af)
{
	return af == AF_INET6 ? XFIB_V6 : XFIB_V4;
}

static void map_clear(int fd)
{
	char key[64];

	/* The first key each time: the one just deleted cannot be followed. */
	while (!bpf_map_get_next_key(fd, NULL, key))
		if (bpf_map_delete_elem(fd, key))
			break;
}

void ctlearn_reset(struct nfgate *g)
{
	_Static_assert(sizeof(struct xfib_ct_echo_key) <= 64 &&
		       sizeof(struct xfib_ct_event) <= 64, "map_clear's key buffer");
	map_clear(bpf_map__fd(g->skel->maps.xfib_ct_echo));
	map_clear(bpf_map__fd(g->skel->maps.xfib_ct_pending));
}

static void learned(struct nfgate *g, __u8 af, int err, const char *what)
{
	struct xfib_nf_info *in = &g->info[fam_of(af)];

	if (!err) {
		in->learned++;
		return;
	}
	in->learn_errors++;
	pr_warn("preparing a %s flow for the fast path: %s", what, strerror(-err));
}

/* ---- echo flows --------------------------------------------------------------- */

static __u32 echo_timeout_s(const struct nfgate *g, __u8 af)
{
	return af == AF_INET6 ? g->sys.icmpv6_s : g->sys.icmp_s;
}

/* A tuple of the echo flow of key k (value v), as conntrack keys it: the
 * request direction, or the reply's for a translated flow's responder
 * side, whose request direction conntrack does not know. */
static void echo_tuple(const struct xfib_ct_echo_key *k, const struct xfib_ct_echo *v,
		       struct ctnl_tuple *t)
{
	bool reply = v->nat == XFIB_ECHO_NAT_REPLY;

	memset(t, 0, sizeof(*t));
	t->family = k->family;
	t->proto = k->family == AF_INET6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP;
	t->icmp_type = k->family == AF_INET6 ? ICMPV6_ECHO_REQUEST_ : ICMP_ECHO_;
	if (reply)
		t->icmp_type = k->family == AF_INET6 ? ICMPV6_ECHO_REPLY_ : ICMP_ECHOREPLY_;
	t->sport = k->id;
	memcpy(t->src, reply ? k->responder : k->requester, sizeof(t->src));
	memcpy(t->dst, reply ? k->requester : k->responder, sizeof(t->dst));
}

/* conntrack holds the flow of t as an echo flow the gate may forward. */
static bool echo_established(const struct ctnl_entry *e)
{
	__u8 req = e->orig.family == AF_INET6 ? ICMPV6_ECHO_REQUEST_ : ICMP_ECHO_;

	return (e->status & IPS_SEEN_REPLY) && (e->status & IPS_CONFIRMED) &&
	       !(e->status & (IPS_SEQ_ADJUST | IPS_HELPER | IPS_DYING)) &&
	       (!(e->status & IPS_NAT_MASK) ||
		(e->status & IPS_NAT_DONE_MASK) == IPS_NAT_DONE_MASK) &&
	       !e->zone && e->orig.icmp_type == req && e->timeout > 1;
}

/*
 * Refreshes the echo flow of t and says until when the dataplane may
 * forward it: 0 with *until set (and *e, if given, the entry), -ENOENT if
 * conntrack does not hold it established (any more), or -errno. The
 * timeout is set first and read back after: whatever happened in between,
 * the entry read lives at least as long as it says, and it is the one
 * checked.
 */
static int echo_refresh(struct nfgate *g, const struct ctnl_tuple *t, __u64 *until,
			struct ctnl_entry *ep)
{
	struct ctnl_change c = { .timeout = echo_timeout_s(g, t->family), .tcp_state = -1 };
	struct ctnl_entry e;
	__u64 t0;
	int err;

	err = ctnl_update(g->ct, t, &c);
	if (err)
		return err;
	t0 = mono_ns();
	err = ctnl_get(g->ct, t, &e);
	if (err)
		return err;
	if (!echo_established(&e))
		return -ENOENT;
	if (ep)
		*ep = e;
	*until = t0 + e.timeout * NS - ECHO_MARGIN_NS;
	return 0;
}

/*
 * The dataplane's keys of the echo flow of entry e, with their values
 * (valid_until and last_used left to the caller): the requester's side,
 * keyed by the original tuple, whose requests leave with the reply
 * tuple's addresses swapped and its identifier; and, if conntrack
 * translates the flow, the responder's side, keyed by the reply tuple,
 * whose replies leave with the original tuple's. Returns how many (1, 2).
 */
static int echo_keys(const struct ctnl_entry *e, struct xfib_ct_echo_key k[2],
		     struct xfib_ct_echo v[2])
{
	const struct ctnl_tuple *o = &e->orig, *r = &e->reply;
	bool nat = o->sport != r->sport || memcmp(o->src, r->dst, sizeof(o->src)) ||
		   memcmp(o->dst, r->src, sizeof(o->dst));

	memset(k, 0, 2 * sizeof(*k));
	memset(v, 0, 2 * sizeof(*v));
	k[0].family = k[1].family = o->family;
	k[0].id = o->sport;
	memcpy(k[0].requester, o->src, sizeof(k[0].requester));
	memcpy(k[0].responder, o->dst, sizeof(k[0].responder));
	if (!nat)
		return 1;
	v[0].nat = XFIB_ECHO_NAT_REQUEST;
	v[0].id = r->sport;
	memcpy(v[0].saddr, r->dst, sizeof(v[0].saddr));
	memcpy(v[0].daddr, r->src, sizeof(v[0].daddr));
	k[1].id = r->sport;
	memcpy(k[1].requester, r->dst, sizeof(k[1].requester));
	memcpy(k[1].responder, r->src, sizeof(k[1].responder));
	v[1].nat = XFIB_ECHO_NAT_REPLY;
	v[1].id = o->sport;
	memcpy(v[1].saddr, o->dst, sizeof(v[1].saddr));
	memcpy(v[1].daddr, o->src, sizeof(v[1].daddr));
	return 2;
}

static void learn_echo(struct nfgate *g, const struct ctnl_tuple *t)
{
	struct xfib_ct_echo_key key[2];
	struct xfib_ct_echo v[2];
	struct ctnl_entry e;
	__u64 until;
	int err, n, i;

	err = echo_refresh(g, t, &until, &e);
	if (err == -ENOENT)
		return; /* not (yet) replied: the dataplane asks again */
	if (!err) {
		n = echo_keys(&e, key, v);
		for (i = 0; i < n && !err; i++) {
			v[i].valid_until = until;
			v[i].last_used = mono_ns();
			if (bpf_map_update_elem(bpf_map__fd(g->skel->maps.xfib_ct_echo),
						&key[i], &v[i], BPF_ANY))
				err = -errno;
		}
	}
	learned(g, t->family, err, "ICMP echo");
}

/* ---- events -------------------------------------------------------------------- */

void ctlearn_event(struct nfgate *g, const struct xfib_ct_event *ev)
{
	struct ctnl_tuple t = {
		.family = ev->family,
		.proto = ev->proto,
		.icmp_type = ev->icmp_type,
		.sport = ev->sport,
		.dport = ev->dport,
	};
	int err;

	if (ev->family != AF_INET && ev->family != AF_INET6)
		return;
	memcpy(t.src, ev->saddr, sizeof(t.src));
	memcpy(t.dst, ev->daddr, sizeof(t.dst));
	if (ev->proto == IPPROTO_ICMP || ev->proto == IPPROTO_ICMPV6) {
		learn_echo(g, &t);
	} else if (ev->proto == IPPROTO_TCP) {
		struct ctnl_change c = { .tcp_liberal = true, .tcp_state = -1 };

		err = ctnl_update(g->ct, &t, &c);
		if (err != -ENOENT) /* gone already: nothing to prepare */
			learned(g, t.family, err, "TCP");
	}
}

/* ---- every second ----------------------------------------------------------------- */

void ctlearn_tick(struct nfgate *g)
{
	int fd = bpf_map__fd(g->skel->maps.xfib_ct_echo);
	struct xfib_ct_echo_key key, next, *gone = NULL, *p;
	size_t ngone = 0, i;
	struct xfib_ct_echo v;
	struct ctnl_tuple t;
	__u64 now = mono_ns(), window, refreshed;
	bool first = true;

	for (; !bpf_map_get_next_key(fd, first ? NULL : &key, &next); key = next) {
		first = false;
		if (bpf_map_lookup_elem(fd, &next, &v))
			continue;
		window = echo_timeout_s(g, next.family) * NS - ECHO_MARGIN_NS;
		refreshed = v.valid_until - window;
		if (v.last_used > refreshed && now - refreshed >= ECHO_REFRESH_NS) {
			echo_tuple(&next, &v, &t);
			if (!echo_refresh(g, &t, &v.valid_until, NULL)) {
				bpf_map_update_elem(fd, &next, &v, BPF_EXIST);
				continue;
			}
		} else if (now < v.valid_until) {
			continue;
		}
		/* Run out, or conntrack let it go: the dataplane stopped
		 * (or stops now) forwarding it. Deleted after the walk,
		 * which a deletion would restart. */
		p = realloc(gone, (ngone + 1) * sizeof(*gone));
		if (!p)
			break;
		gone = p;
		gone[ngone++] = next;
	}
	for (i = 0; i < ngone; i++)
		bpf_map_delete_elem(fd, &gone[i]);
	free(gone);
}
