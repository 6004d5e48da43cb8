// SPDX-License-Identifier: GPL-2.0-only
/*
 * xfibctl flows: the flows the conntrack gate decides on, and what the
 * dataplane does with their packets. xfib holds no flow table of its own:
 * conntrack is the truth. So conntrack's TCP, UDP and ICMP echo entries
 * are dumped over ctnetlink, in the namespace xfibctl runs in, and the
 * echo flows xfib_ct_echo still holds that conntrack no longer does are
 * added. For each, the gate's verdict by the program's own conditions
 * (bpf/lib/ctgate.h: ct_entry_check, ct_echo) and reason names, and for
 * each direction the dataplane's own lookup (ctl/lib/dplookup.h) of the
 * destination the program routes. Nothing here writes to conntrack or to
 * the maps.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/nf_conntrack_tcp.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "ctnl.h"
#include "dplookup.h"
#include "monoclock.h"
#include "output.h"
#include "xfibctl.h"

/* The gate lets the flow through (the program's XFIB_NEXT). */
#define GATE_OK XFIB_REASON_COUNT

#define ICMP_ECHO_ 8
#define ICMPV6_ECHO_REQUEST_ 128

/* A flow listed: conntrack's entry, or for an echo flow only
 * xfib_ct_echo holds, one made from its key. */
struct flow {
	struct ctnl_entry e;
	bool in_ct;	 /* conntrack holds it */
	bool echo;	 /* an ICMP echo flow */
	bool echo_valid; /* ... that xfib_ct_echo holds, valid now */
};

/* What the gate says of a flow: GATE_OK, or the reason its packets go to
 * the kernel; why, in words (may be empty). */
struct gate {
	enum xfib_reason reason;
	char why[160];
};

/* One direction: the destination the program routes, the dataplane's
 * answer for it, and the counter the direction's packets go to. */
struct dir {
	__u8 dst[16];
	struct dpl_result r;
	enum xfib_reason reason;
	__u32 nf_port; /* pass_netfilter for this port's rules ... */
	__u32 nf_dir;  /* ... of this direction (enum xfib_nf_port_dir) */
};

struct flows {
	struct xfib_fwd_bpf *skel;
	struct dpl d[XFIB_FAMILIES];
	struct xfib_nf_conf conf[XFIB_FAMILIES];
	__u32 prog_flags; /* enum xfib_prog_flags of the program loaded */
	__u64 now;	  /* CLOCK_MONOTONIC ns, as in xfib_ct_echo */
	struct flow *v;
	size_t n, cap;
};

static const char *proto_name(__u8 p)
{
	switch (p) {
	case IPPROTO_TCP:
		return "tcp";
	case IPPROTO_UDP:
		return "udp";
	case IPPROTO_ICMP:
		return "icmp";
	default:
		return "icmpv6";
	}
}

static const char *tcp_state_name(__u8 s)
{
	static const char *const names[] = {
		[TCP_CONNTRACK_NONE] = "none",
		[TCP_CONNTRACK_SYN_SENT] = "syn_sent",
		[TCP_CONNTRACK_SYN_RECV] = "syn_recv",
		[TCP_CONNTRACK_ESTABLISHED] = "established",
		[TCP_CONNTRACK_FIN_WAIT] = "fin_wait",
		[TCP_CONNTRACK_CLOSE_WAIT] = "close_wait",
		[TCP_CONNTRACK_LAST_ACK] = "last_ack",
		[TCP_CONNTRACK_TIME_WAIT] = "time_wait",
		[TCP_CONNTRACK_CLOSE] = "close",
		[TCP_CONNTRACK_SYN_SENT2] = "syn_sent2",
	};

	return s < sizeof(names) / sizeof(names[0]) && names[s] ? names[s] : "unknown";
}

static int fam_of(const struct flow *f)
{
	return af_fam(f->e.orig.family);
}

/* ---- collecting --------------------------------------------------------------- */

static int flow_add(struct flows *fl, const struct flow *f)
{
	if (fl->n == fl->cap) {
		size_t cap = fl->cap ? 2 * fl->cap : 256;
		struct flow *v = realloc(fl->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		fl->v = v;
		fl->cap = cap;
	}
	fl->v[fl->n++] = *f;
	return 0;
}

/* An echo flow's entry: the request is its original direction. */
static bool is_echo(const struct ctnl_tuple *t)
{
	return (t->proto == IPPROTO_ICMP && t->icmp_type == ICMP_ECHO_) ||
	       (t->proto == IPPROTO_ICMPV6 && t->icmp_type == ICMPV6_ECHO_REQUEST_);
}

/* The entries the gate decides on: TCP, UDP, ICMP echo. The packets of
 * the others go to the kernel (pass_ct_proto). */
static int ct_entry(const struct ctnl_entry *e, void *arg)
{
	struct flow f = { .e = *e, .in_ct = true, .echo = is_echo(&e->orig) };

	if (af_fam(e->orig.family) < 0 ||
	    (e->orig.proto != IPPROTO_TCP && e->orig.proto != IPPROTO_UDP && !f.echo))
		return 0;
	return flow_add(arg, &f);
}

static int ports_cmp(__be16 a, __be16 b)
{
	return ntohs(a) < ntohs(b) ? -1 : ntohs(a) > ntohs(b);
}

/* Family, protocol, source, its port, destination, its port, zone. */
static int tuple_cmp(const void *pa, const void *pb)
{
	const struct flow *a = pa, *b = pb;
	const struct ctnl_tuple *x = &a->e.orig, *y = &b->e.orig;

	if (x->family != y->family)
		return x->family < y->family ? -1 : 1;
	if (x->proto != y->proto)
		return x->proto < y->proto ? -1 : 1;
	return memcmp(x->src, y->src, 16) ?: ports_cmp(x->sport, y->sport) ?:
	       memcmp(x->dst, y->dst, 16) ?: ports_cmp(x->dport, y->dport) ?:
	       (a->e.zone > b->e.zone) - (a->e.zone < b->e.zone);
}

/* The same, then conntrack's entries first, by id. */
static int flow_cmp(const void *pa, const void *pb)
{
	const struct flow *a = pa, *b = pb;

	return tuple_cmp(a, b) ?: (int)b->in_ct - (int)a->in_ct ?:
	       (a->e.id > b->e.id) - (a->e.id < b->e.id);
}

/* Sorted; an entry a resize of conntrack's table showed twice, once. */
static void flows_sort(struct flows *fl)
{
	size_t i, n = 0;

	if (!fl->n)
		return; /* and fl->v may be NULL, which qsort() may not get */
	qsort(fl->v, fl->n, sizeof(*fl->v), flow_cmp);
	for (i = 0; i < fl->n; i++)
		if (!n || flow_cmp(&fl->v[n - 1], &fl->v[i]))
			fl->v[n++] = fl->v[i];
	fl->n = n;
}

/* The xfib_ct_echo key of an echo flow, as xfibd writes it. */
static void echo_key(const struct ctnl_tuple *t, struct xfib_ct_echo_key *k)
{
	memset(k, 0, sizeof(*k));
	k->family = t->family;
	k->id = t->sport;
	memcpy(k->requester, t->src, sizeof(k->requester));
	memcpy(k->responder, t->dst, sizeof(k->responder));
}

/* The echo flow of key k (the requester's side), value v, as conntrack
 * would key it: the reply tuple from v's translation, if any. */
static void echo_flow(const struct xfib_ct_echo_key *k, const struct xfib_ct_echo *v,
		      __u64 now, struct flow *f)
{
	struct ctnl_tuple *t = &f->e.orig;

	memset(f, 0, sizeof(*f));
	f->echo = true;
	f->echo_valid = true;
	t->family = k->family;
	t->proto = k->family == AF_INET ? IPPROTO_ICMP : IPPROTO_ICMPV6;
	t->icmp_type = k->family == AF_INET ? ICMP_ECHO_ : ICMPV6_ECHO_REQUEST_;
	t->sport = k->id;
	memcpy(t->src, k->requester, sizeof(t->src));
	memcpy(t->dst, k->responder, sizeof(t->dst));
	ctnl_tuple_invert(t, &f->e.reply);
	if (v->nat == XFIB_ECHO_NAT_REQUEST) {
		f->e.status = IPS_SRC_NAT | IPS_DST_NAT | IPS_NAT_DONE_MASK;
		f->e.reply.sport = v->id;
		memcpy(f->e.reply.src, v->daddr, sizeof(f->e.reply.src));
		memcpy(f->e.reply.dst, v->saddr, sizeof(f->e.reply.dst));
	}
	f->e.timeout = (v->valid_until - now) / 1000000000ull;
}

/*
 * Marks the echo flows of conntrack (the first nct, sorted) that
 * xfib_ct_echo holds valid, and adds those it holds that conntrack no
 * longer does: the dataplane forwards them until they run out, or xfibd
 * notices. fam: only this family, or -1.
 */
static int echo_flows(struct flows *fl, int fam, size_t nct)
{
	int fd = bpf_map__fd(fl->skel->maps.xfib_ct_echo);
	struct xfib_ct_echo_key key, next;
	struct xfib_ct_echo v;
	struct flow f;
	bool first = true;
	size_t i;
	int err;

	for (i = 0; i < nct; i++) {
		if (!fl->v[i].echo)
			continue;
		echo_key(&fl->v[i].e.orig, &key);
		fl->v[i].echo_valid = !fl->v[i].e.zone &&
				      !bpf_map_lookup_elem(fd, &key, &v) &&
				      fl->now < v.valid_until;
	}
	for (; !bpf_map_get_next_key(fd, first ? NULL : &key, &next); key = next) {
		first = false;
		/* A translated flow's responder side is listed with its
		 * requester's. */
		if (bpf_map_lookup_elem(fd, &next, &v) || fl->now >= v.valid_until ||
		    v.nat == XFIB_ECHO_NAT_REPLY ||
		    af_fam(next.family) < 0 || (fam >= 0 && af_fam(next.family) != fam))
			continue;
		echo_flow(&next, &v, fl->now, &f);
		if (nct && bsearch(&f, fl->v, nct, sizeof(*fl->v), tuple_cmp))
			continue;
		err = flow_add(fl, &f);
		if (err)
			return err;
	}
	return 0;
}

/* Conntrack's flows of family fam (-1: both) and the dataplane's echo
 * flows, sorted; the modes and the program's flags. */
static int flows_read(struct flows *fl, int fam)
{
	int conf_fd = bpf_map__fd(fl->skel->maps.xfib_nf_conf);
	struct xfib_prog_info prog = { 0 };
	struct mnl_socket *nl;
	size_t nct;
	__u32 key;
	int err;

	for (key = 0; key < XFIB_FAMILIES; key++)
		bpf_map_lookup_elem(conf_fd, &key, &fl->conf[key]);
	key = 0;
	bpf_map_lookup_elem(bpf_map__fd(fl->skel->maps.xfib_prog_info), &key, &prog);
	fl->prog_flags = prog.flags;
	err = ctnl_open(&nl);
	if (err) {
		err_cmd("conntrack (ctnetlink socket): %s", strerror(-err));
		return err;
	}
	err = ctnl_dump(nl, fam < 0 ? AF_UNSPEC : fam_af(fam), ct_entry, fl);
	ctnl_close(nl);
	if (err == -EPERM || err == -EACCES)
		err_cmd("conntrack dump: permission denied (needs CAP_NET_ADMIN in this network namespace)");
	else if (err)
		err_cmd("conntrack dump: %s", strerror(-err));
	if (err)
		return err;
	fl->now = mono_ns();
	flows_sort(fl);
	nct = fl->n;
	err = echo_flows(fl, fam, nct);
	if (err) {
		err_cmd("%s", strerror(-err));
		return err;
	}
	if (fl->n > nct)
		flows_sort(fl);
	return 0;
}

/* ---- the gate ------------------------------------------------------------------ */

static enum xfib_reason __attribute__((format(printf, 3, 4)))
say(struct gate *g, enum xfib_reason r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(g->why, sizeof(g->why), fmt, ap);
	va_end(ap);
	return r;
}

/*
 * ct_entry_check() on what ctnetlink shows of a TCP or UDP entry, in its
 * order; first the kfunc's lookup, which finds flows of the default zone
 * only. The helper is named only while it is registered: the program
 * also passes an entry whose helper went, which the dump cannot show.
 */
static enum xfib_reason entry_gate(const struct flows *fl, const struct ctnl_entry *e,
				   struct gate *g)
{
	__u32 s = e->status;

	if (e->zone)
		return say(g, XFIB_PASS_CT_NEW, "in conntrack zone %u: the dataplane looks flows up in the default zone",
			   e->zone);
	if (!(s & IPS_CONFIRMED) || !(s & IPS_SEEN_REPLY))
		return say(g, XFIB_PASS_CT_NEW, "not replied yet");
	if (s & IPS_DYING)
		return say(g, XFIB_PASS_CT_NEW, "being destroyed");
	if (s & IPS_SEQ_ADJUST)
		return say(g, XFIB_PASS_CT_NAT, "sequence-adjusted: the kernel rewrites its packets");
	if ((s & IPS_NAT_MASK) && (s & IPS_NAT_DONE_MASK) != IPS_NAT_DONE_MASK)
		return say(g, XFIB_PASS_CT_NAT, "NAT not yet set up in both directions");
	if ((s & IPS_HELPER) || e->helper[0])
		return say(g, XFIB_PASS_CT_NAT, "conntrack helper %s: the kernel inspects its packets",
			   e->helper[0] ? e->helper : "(unnamed)");
	if (e->orig.proto == IPPROTO_TCP) {
		if (!(s & IPS_ASSURED))
			return say(g, XFIB_PASS_CT_NEW, "not assured yet");
		if (e->tcp_state != TCP_CONNTRACK_ESTABLISHED)
			return say(g, XFIB_PASS_CT_NEW, "TCP %s, not established",
				   tcp_state_name(e->tcp_state));
		if (!(e->tcp_flags[0] & e->tcp_flags[1] & IP_CT_TCP_FLAG_BE_LIBERAL))
			return say(g, XFIB_PASS_CT_LEARN, "not liberal in both directions yet (xfibd makes it so when the dataplane reports the flow)");
	} else if (!(fl->prog_flags & XFIB_PROG_CT_UDP_STREAM) && !(s & IPS_ASSURED)) {
		return say(g, XFIB_PASS_CT_NEW, "not assured yet (on this kernel a UDP flow is forwarded in XDP once conntrack made it assured: xfibctl status)");
	}
	return GATE_OK;
}

/*
 * ct_echo(): an echo flow is forwarded while xfib_ct_echo holds it. xfibd
 * writes it there on the dataplane's word if conntrack holds it as
 * ctl/xfibd/nf/ctlearn.c echo_established() requires, whose conditions
 * say why it does not.
 */
static enum xfib_reason echo_gate(const struct flow *f, struct gate *g)
{
	const struct ctnl_entry *e = &f->e;
	__u32 s = e->status;

	if (f->echo_valid)
		return f->in_ct ? GATE_OK :
		       say(g, GATE_OK, "no longer in conntrack: forwarded until xfibd's next check (within a second) or the end of its validity");
	if (e->zone)
		return say(g, XFIB_PASS_CT_LEARN, "in conntrack zone %u: xfibd prepares echo flows of the default zone only",
			   e->zone);
	if (!(s & IPS_CONFIRMED) || !(s & IPS_SEEN_REPLY))
		return say(g, XFIB_PASS_CT_LEARN, "not replied yet");
	if (s & IPS_DYING)
		return say(g, XFIB_PASS_CT_LEARN, "being destroyed");
	if ((s & IPS_NAT_MASK) && (s & IPS_NAT_DONE_MASK) != IPS_NAT_DONE_MASK)
		return say(g, XFIB_PASS_CT_LEARN, "its NAT not yet set up in both directions");
	if (s & (IPS_SEQ_ADJUST | IPS_HELPER))
		return say(g, XFIB_PASS_CT_LEARN, "with a helper or sequence adjustment");
	if (e->timeout <= 1)
		return say(g, XFIB_PASS_CT_LEARN, "about to expire");
	return say(g, XFIB_PASS_CT_LEARN, "not prepared by xfibd yet (it is when the dataplane reports the flow's next packet)");
}

/* xfib_ct_gate_pre() and ct_gate() (bpf/lib/ctgate.h): the family's mode, then the flow. */
static void gate_of(const struct flows *fl, const struct flow *f, struct gate *g)
{
	__u8 mode = fl->conf[fam_of(f)].mode;

	g->why[0] = '\0';
	if (mode == XFIB_NF_OFF)
		g->reason = say(g, GATE_OK, "netfilter forward: no rules on the forward path, conntrack is not asked");
	else if (mode != XFIB_NF_GATE)
		g->reason = say(g, XFIB_PASS_NETFILTER, "netfilter pass: every packet of the family goes to the kernel (xfibctl status says why)");
	else if (f->echo)
		g->reason = echo_gate(f, g);
	else if (!(fl->prog_flags & XFIB_PROG_CT_KFUNCS))
		g->reason = say(g, XFIB_PASS_CT_UNAVAILABLE, "the program was loaded without the conntrack kfuncs (xfibctl status)");
	else
		g->reason = entry_gate(fl, &f->e, g);
}

/* ---- the directions --------------------------------------------------------- */

/* Conntrack's NAT changes the flow's packets (ct_nat_changes): its
 * tuples are not each other's inverse. */
static bool flow_nat(const struct flow *f)
{
	struct ctnl_tuple inv;

	if (!(f->e.status & IPS_NAT_MASK))
		return false;
	ctnl_tuple_invert(&f->e.orig, &inv);
	return memcmp(inv.src, f->e.reply.src, 16) || memcmp(inv.dst, f->e.reply.dst, 16) ||
	       inv.sport != f->e.reply.sport || inv.dport != f->e.reply.dport;
}

/* The port a direction's route sends packets out of; 0: none. */
static __u32 egress_of(const struct dpl_result *r)
{
	return r->nh.kind == XFIB_NH_GATEWAY || r->nh.kind == XFIB_NH_CONNECTED ?
		       r->nh.ifindex : 0;
}

/* Port ifindex has netfilter rules for packets going dir (enum
 * xfib_nf_port_dir). */
static bool port_rules(const struct flows *fl, __u32 ifindex, __u32 dir)
{
	__u32 d;

	return ifindex && !bpf_map_lookup_elem(bpf_map__fd(fl->skel->maps.xfib_nf_ports),
					       &ifindex, &d) && (d & dir);
}

/*
 * The dataplane's answer for direction i's packet (0 original, 1 reply),
 * as received. The program reads conntrack's translation only when the
 * gate forwards the flow (ct_lookup), and then routes the translated
 * destination: the other tuple's source.
 */
static int dir_resolve(struct flows *fl, const struct flow *f, bool nat, int i,
		       struct dir *o)
{
	const struct ctnl_tuple *t = i ? &f->e.reply : &f->e.orig;
	const struct ctnl_tuple *other = i ? &f->e.orig : &f->e.reply;
	struct dpl_flow pf = { .proto = t->proto, .sport = t->sport, .dport = t->dport };

	memcpy(pf.src, t->src, sizeof(pf.src));
	memcpy(pf.dst, t->dst, sizeof(pf.dst));
	memcpy(o->dst, nat ? other->src : t->dst, sizeof(o->dst));
	o->nf_port = 0;
	return dpl_resolve_flow(&fl->d[fam_of(f)], o->dst, &pf, &o->r);
}

/*
 * ct_gate() after a route that forwards: the ports' rules (the port the
 * direction enters by taken as the one the other leaves by), then the
 * gate; the counter of what is forwarded.
 */
static void dir_reason(const struct flows *fl, const struct flow *f,
		       const struct gate *g, bool nat, struct dir *o, __u32 in)
{
	enum xfib_reason a = o->r.action;
	__u32 out = egress_of(&o->r);

	o->reason = a;
	if (a != XFIB_FWD_V4 && a != XFIB_FWD_V6)
		return;
	if (fl->conf[fam_of(f)].ports && port_rules(fl, in, XFIB_NF_PORT_IN)) {
		o->reason = XFIB_PASS_NETFILTER;
		o->nf_port = in;
		o->nf_dir = XFIB_NF_PORT_IN;
	} else if (fl->conf[fam_of(f)].ports && port_rules(fl, out, XFIB_NF_PORT_OUT)) {
		o->reason = XFIB_PASS_NETFILTER;
		o->nf_port = out;
		o->nf_dir = XFIB_NF_PORT_OUT;
	} else if (g->reason != GATE_OK) {
		o->reason = g->reason;
	} else if (nat) {
		o->reason = a == XFIB_FWD_V4 ? XFIB_FWD_NAT_V4 : XFIB_FWD_NAT_V6;
	}
}

/* The gate's verdict on f and both directions' answers. */
static int flow_eval(struct flows *fl, const struct flow *f, struct gate *g,
		     struct dir d[2])
{
	bool nat;
	int i, err;

	gate_of(fl, f, g);
	nat = g->reason == GATE_OK && fl->conf[fam_of(f)].mode == XFIB_NF_GATE &&
	      flow_nat(f);
	for (i = 0; i < 2; i++) {
		err = dir_resolve(fl, f, nat, i, &d[i]);
		if (err) {
			err_cmd("%s lookup: %s", fam_name(fam_of(f)), strerror(-err));
			return err;
		}
	}
	for (i = 0; i < 2; i++)
		dir_reason(fl, f, g, nat, &d[i], egress_of(&d[!i].r));
	return 0;
}

/* ---- output ------------------------------------------------------------------ */

/* "198.18.1.2:40000", "[2001:db8:1::2]:40000"; an echo flow's address. */
static const char *endpoint_str(const struct flow *f, const __u8 *a, __be16 port,
				char *buf, size_t len)
{
	char s[INET6_ADDRSTRLEN];
	int af = f->e.orig.family;

	addr_str(af, a, s, sizeof(s));
	if (f->echo)
		snprintf(buf, len, "%s", s);
	else
		snprintf(buf, len, af == AF_INET6 ? "[%s]:%u" : "%s:%u", s, ntohs(port));
	return buf;
}

/*
 * What conntrack's NAT rewrites, read from the reply tuple: the original
 * direction's source (snat, masquerade; an echo flow's identifier goes
 * with it) and destination (dnat). Replies get the reverse.
 */
static bool snat_of(const struct flow *f)
{
	const struct ctnl_entry *e = &f->e;

	return (e->status & IPS_NAT_MASK) &&
	       (memcmp(e->orig.src, e->reply.dst, 16) ||
		e->orig.sport != (f->echo ? e->reply.sport : e->reply.dport));
}

static bool dnat_of(const struct flow *f)
{
	const struct ctnl_entry *e = &f->e;

	return (e->status & IPS_NAT_MASK) &&
	       (memcmp(e->orig.dst, e->reply.src, 16) ||
		(!f->echo && e->orig.dport != e->reply.sport));
}

static void nat_text(const struct flow *f)
{
	const struct ctnl_entry *e = &f->e;
	char a[INET6_ADDRSTRLEN + 8], b[INET6_ADDRSTRLEN + 8];
	bool s = snat_of(f), d = dnat_of(f);

	if (!s && !d)
		return;
	printf("  nat:       ");
	if (s) {
		printf("snat %s -> %s",
		       endpoint_str(f, e->orig.src, e->orig.sport, a, sizeof(a)),
		       endpoint_str(f, e->reply.dst, e->reply.dport, b, sizeof(b)));
		if (f->echo && e->orig.sport != e->reply.sport)
			printf(" (id %u -> %u)", ntohs(e->orig.sport), ntohs(e->reply.sport));
	}
	if (d)
		printf("%sdnat %s -> %s", s ? ", " : "",
		       endpoint_str(f, e->orig.dst, e->orig.dport, a, sizeof(a)),
		       endpoint_str(f, e->reply.src, e->reply.sport, b, sizeof(b)));
	printf("\n");
}

/* "established, assured, 431999 s left" */
static void state_text(const struct flow *f)
{
	const struct ctnl_entry *e = &f->e;

	if (!f->in_ct) {
		printf("not in conntrack, %u s left\n", e->timeout);
		return;
	}
	if (e->orig.proto == IPPROTO_TCP)
		printf("%s, ", tcp_state_name(e->tcp_state));
	printf("%s", e->status & IPS_SEEN_REPLY ? "replied" : "unreplied");
	if (e->status & IPS_ASSURED)
		printf(", assured");
	if (e->orig.proto == IPPROTO_TCP &&
	    (e->tcp_flags[0] & e->tcp_flags[1] & IP_CT_TCP_FLAG_BE_LIBERAL))
		printf(", liberal");
	if (e->zone)
		printf(", zone %u", e->zone);
	if (e->helper[0])
		printf(", helper %s", e->helper);
	printf(", %u s left\n", e->timeout);
}

/* Direction i (0 original, 1 reply): the counter its packets go to, the
 * destination routed if translated, the egress port, and why not. */
static void dir_text(const struct flow *f, const struct gate *g, const struct dir *o,
		     int i)
{
	const struct ctnl_tuple *t = i ? &f->e.reply : &f->e.orig;
	char a[INET6_ADDRSTRLEN], dev[IF_NAMESIZE];
	__u32 out = egress_of(&o->r);

	printf("  %-10s %s", i ? "reply:" : "original:", reason_name(o->reason));
	if (memcmp(o->dst, t->dst, 16))
		printf(" to %s", addr_str(t->family, o->dst, a, sizeof(a)));
	if (out)
		printf(" out %s", dev_str(out, dev));
	if (o->nf_port)
		printf(": %s has %s rules", dev_str(o->nf_port, dev),
		       o->nf_dir == XFIB_NF_PORT_IN ? "ingress" : "egress");
	else if (!reason_is_fwd(o->reason) && o->reason != g->reason)
		printf(": %s", pass_why(o->reason));
	printf("\n");
}

static void flow_text(const struct flow *f, const struct gate *g, const struct dir d[2])
{
	const struct ctnl_tuple *t = &f->e.orig;
	char a[INET6_ADDRSTRLEN + 8], b[INET6_ADDRSTRLEN + 8];

	printf("%s %s -> %s", proto_name(t->proto),
	       endpoint_str(f, t->src, t->sport, a, sizeof(a)),
	       endpoint_str(f, t->dst, t->dport, b, sizeof(b)));
	if (f->echo)
		printf(" id %u", ntohs(t->sport));
	printf(": ");
	state_text(f);
	nat_text(f);
	if (g->reason == GATE_OK)
		printf("  fast path: yes%s%s%s\n", g->why[0] ? " (" : "", g->why,
		       g->why[0] ? ")" : "");
	else
		printf("  fast path: no: %s: %s\n", reason_name(g->reason), g->why);
	dir_text(f, g, &d[0], 0);
	dir_text(f, g, &d[1], 1);
}

static json_object *nat_side_json(const struct flow *f, const __u8 *a, __be16 port,
				  bool id)
{
	json_object *o = json_object_new_object();
	char s[INET6_ADDRSTRLEN];

	js_set(o, "address", js_str(addr_str(f->e.orig.family, a, s, sizeof(s))));
	if (!f->echo || id)
		js_set(o, f->echo ? "id" : "port", js_u64(ntohs(port)));
	return o;
}

static json_object *nat_json(const struct flow *f)
{
	const struct ctnl_entry *e = &f->e;
	bool s = snat_of(f), d = dnat_of(f);
	json_object *o;

	if (!s && !d)
		return NULL;
	o = json_object_new_object();
	js_set(o, "snat", s ? nat_side_json(f, e->reply.dst,
					    f->echo ? e->reply.sport : e->reply.dport,
					    true) : NULL);
	js_set(o, "dnat", d ? nat_side_json(f, e->reply.src, e->reply.sport, false) : NULL);
	return o;
}

static json_object *dir_json(const struct flow *f, const struct dir *o)
{
	json_object *j = json_object_new_object(), *eg = NULL;
	char a[INET6_ADDRSTRLEN], dev[IF_NAMESIZE];
	__u32 out = egress_of(&o->r);

	js_set(j, "dst", js_str(addr_str(f->e.orig.family, o->dst, a, sizeof(a))));
	js_set(j, "action", js_str(reason_is_fwd(o->reason) ? "forward" :
				   reason_is_drop(o->reason) ? "drop" : "pass"));
	js_set(j, "reason", js_str(reason_name(o->reason)));
	if (out) {
		eg = json_object_new_object();
		js_set(eg, "ifindex", js_u64(out));
		js_set(eg, "name", js_str(dev_str(out, dev)));
	}
	js_set(j, "egress", eg);
	return j;
}

/* The entry's own fields: tuple, state, NAT. */
static void entry_json(json_object *o, const struct flow *f)
{
	const struct ctnl_entry *e = &f->e;
	bool tcp = e->orig.proto == IPPROTO_TCP;
	char a[INET6_ADDRSTRLEN];

	js_set(o, "family", js_str(fam_name(fam_of(f))));
	js_set(o, "protocol", js_str(proto_name(e->orig.proto)));
	js_set(o, "src", js_str(addr_str(e->orig.family, e->orig.src, a, sizeof(a))));
	js_set(o, "sport", f->echo ? NULL : js_u64(ntohs(e->orig.sport)));
	js_set(o, "dst", js_str(addr_str(e->orig.family, e->orig.dst, a, sizeof(a))));
	js_set(o, "dport", f->echo ? NULL : js_u64(ntohs(e->orig.dport)));
	js_set(o, "id", f->echo ? js_u64(ntohs(e->orig.sport)) : NULL);
	js_set(o, "conntrack", js_bool(f->in_ct));
	js_set(o, "state", tcp && f->in_ct ? js_str(tcp_state_name(e->tcp_state)) : NULL);
	js_set(o, "replied", js_bool(e->status & IPS_SEEN_REPLY));
	js_set(o, "assured", js_bool(e->status & IPS_ASSURED));
	js_set(o, "liberal", tcp ? js_bool(e->tcp_flags[0] & e->tcp_flags[1] &
					   IP_CT_TCP_FLAG_BE_LIBERAL) : NULL);
	js_set(o, "zone", js_u64(e->zone));
	js_set(o, "helper", e->helper[0] ? js_str(e->helper) : NULL);
	js_set(o, "timeout", js_u64(e->timeout));
	js_set(o, "nat", nat_json(f));
}

static json_object *flow_json(const struct flows *fl, const struct flow *f,
			      const struct gate *g, const struct dir d[2])
{
	json_object *o = json_object_new_object();

	entry_json(o, f);
	js_set(o, "netfilter", js_str(nf_mode_name(fl->conf[fam_of(f)].mode)));
	js_set(o, "fast_path", js_bool(g->reason == GATE_OK));
	js_set(o, "reason", g->reason == GATE_OK ? NULL : js_str(reason_name(g->reason)));
	js_set(o, "why", g->why[0] ? js_str(g->why) : NULL);
	js_set(o, "original", dir_json(f, &d[0]));
	js_set(o, "reply", dir_json(f, &d[1]));
	return o;
}

/* A family's line: its mode, and how many flows follow. */
static void family_text(const struct flows *fl, int fam, size_t n)
{
	static const char *const what[] = {
		[XFIB_NF_OFF] = "no rules on the forward path: flows forwarded without conntrack",
		[XFIB_NF_GATE] = "flows conntrack holds established both ways forwarded in XDP",
		[XFIB_NF_PASS] = "every packet of the family to the kernel",
	};
	__u8 m = fl->conf[fam].mode;

	printf("%s: netfilter %s (%s), %zu flow%s\n", fam_name(fam), nf_mode_name(m),
	       m < sizeof(what) / sizeof(what[0]) ? what[m] : "unknown mode",
	       n, n == 1 ? "" : "s");
}

static int flows_show(struct ctl *c, struct flows *fl)
{
	struct out_list l;
	struct gate g;
	struct dir d[2];
	size_t i, j, n;
	int fam, err = 0;

	if (c->json)
		out_list_begin(&l);
	for (fam = 0, i = 0; fam < XFIB_FAMILIES && !err; fam++) {
		if (c->fam >= 0 && c->fam != fam)
			continue;
		for (n = 0; i + n < fl->n && fam_of(&fl->v[i + n]) == fam; n++)
			;
		if (!c->json)
			family_text(fl, fam, n);
		for (j = i; j < i + n && !err; j++) {
			err = flow_eval(fl, &fl->v[j], &g, d);
			if (err)
				break;
			if (c->json)
				out_list_add(&l, flow_json(fl, &fl->v[j], &g, d));
			else
				flow_text(&fl->v[j], &g, d);
		}
		i += n;
	}
	if (c->json)
		err = out_list_end(&l) ?: err;
	return err;
}

int cmd_flows(struct ctl *c, int argc, char **argv)
{
	struct flows fl = { 0 };
	int fam, err;

	err = open_dataplane(c, 0, &fl.skel);
	if (err)
		return err;
	for (fam = 0; fam < XFIB_FAMILIES && !err; fam++) {
		if (c->fam >= 0 && c->fam != fam)
			continue;
		err = dpl_open(&fl.d[fam], fl.skel, fam);
		if (err)
			err_cmd("open the %s lookup table: %s", fam_name(fam),
				strerror(-err));
	}
	err = err ?: flows_read(&fl, c->fam);
	err = err ?: flows_show(c, &fl);
	for (fam = 0; fam < XFIB_FAMILIES; fam++)
		if (fl.d[fam].skel)
			dpl_close(&fl.d[fam]);
	free(fl.v);
	xfib_fwd_bpf__destroy(fl.skel);
	return err;
}
