// SPDX-License-Identifier: GPL-2.0-only
/*
 * xfibctl lookup, verify: the dataplane's answers beside the kernel's.
 * The comparing is verify.c's; this file asks and shows the outcome.
 */
#include <errno.h>
#include <string.h>
#include <netdb.h>
#include <arpa/inet.h>
#include <linux/bpf.h>
#include <linux/fib_rules.h>

#include "algo_names.h"
#include "output.h"
#include "verify.h"
#include "xfibctl.h"

/* ---- the kernel's answer, bpf_fib_lookup() ------------------------------------ */

/* The kernel's gateway, if bpf_fib_lookup() wrote one over dst. */
static bool kfib_gateway(int af, const __u8 *dst, const struct xv_query *k)
{
	return k->ret == BPF_FIB_LKUP_RET_SUCCESS &&
	       (k->family != af || memcmp(k->addr, dst, af == AF_INET ? 4 : 16));
}

static void kfib_answer_str(int af, const __u8 *dst, const struct xv_query *k,
			    char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN], dev[IF_NAMESIZE];

	if (k->ret != BPF_FIB_LKUP_RET_SUCCESS)
		snprintf(buf, len, "%s", kfib_ret_name(k->ret));
	else if (kfib_gateway(af, dst, k))
		snprintf(buf, len, "success via %s dev %s",
			 addr_str(k->family, k->addr, a, sizeof(a)),
			 dev_str(k->ifindex, dev));
	else
		snprintf(buf, len, "success dev %s", dev_str(k->ifindex, dev));
}

static json_object *kfib_json(int af, const __u8 *dst, const struct xv_query *k)
{
	json_object *o = json_object_new_object();
	char a[INET6_ADDRSTRLEN], dev[IF_NAMESIZE];

	js_set(o, "result", js_str(kfib_ret_name(k->ret)));
	if (k->ret == BPF_FIB_LKUP_RET_SUCCESS) {
		js_set(o, "ifindex", js_u64(k->ifindex));
		js_set(o, "dev", js_str(dev_str(k->ifindex, dev)));
		if (kfib_gateway(af, dst, k))
			js_set(o, "gateway", js_str(addr_str(k->family, k->addr, a, sizeof(a))));
	}
	return o;
}

/* ---- lookup ----------------------------------------------------------------------- */

/* Everything lookup shows about one address. */
struct lookup {
	struct dpl_result r;         /* xfib's answer */
	struct kroute kr;            /* the kernel's route */
	struct xv_query k;           /* the kernel's FIB lookup */
	enum verify_outcome agree;
	__u32 iif;                   /* the port the kernel's lookup entered by */
	__u8 nf_mode;                /* the family's netfilter mode */
};

static int parse_addr(const char *s, int *fam, __u8 *addr)
{
	memset(addr, 0, 16);
	if (inet_pton(AF_INET, s, addr) == 1)
		*fam = XFIB_V4;
	else if (inet_pton(AF_INET6, s, addr) == 1)
		*fam = XFIB_V6;
	else
		return -EAFNOSUPPORT;
	return 0;
}

int lookup_check(struct ctl *c, int argc, char **argv)
{
	int fam;

	if (parse_addr(argv[0], &c->fam, c->addr)) {
		err_cmd("%s: not an IPv4 or IPv6 address", argv[0]);
		return -EINVAL;
	}
	if ((c->sport >= 0 || c->dport >= 0) && c->proto < 0) {
		err_cmd("--sport and --dport need --proto");
		return -EINVAL;
	}
	if (!c->from_arg)
		return 0;
	if (parse_addr(c->from_arg, &fam, c->from)) {
		err_cmd("--from %s: not an IPv4 or IPv6 address", c->from_arg);
		return -EINVAL;
	}
	if (fam != c->fam) {
		err_cmd("--from %s: not of the family of %s", c->from_arg, argv[0]);
		return -EINVAL;
	}
	return 0;
}

/* The ingress port's rp_filter mode as the dataplane holds it. */
static const char *rpf_mode(const struct dpl_result *r)
{
	if (r->fam != XFIB_V4)
		return "none (IPv6)";
	if (!(r->in.flags & XFIB_IF_RPF))
		return "off";
	return r->in.flags & XFIB_IF_RPF_LOOSE ? "loose" : "strict";
}

/* The route back to the source, as lookup shows a nexthop. */
static void route_back_str(const struct dpl_result *r, char *buf, size_t len)
{
	char dev[IF_NAMESIZE];
	const struct xfib_nexthop *nh = &r->src_nh;

	if (nh->kind == XFIB_NH_GATEWAY || nh->kind == XFIB_NH_CONNECTED)
		snprintf(buf, len, "nexthop %u, %s, dev %s", r->src_nh_idx,
			 dpl_kind_name(nh->kind), dev_str(nh->ifindex, dev));
	else
		snprintf(buf, len, "nexthop %u, %s%s", r->src_nh_idx,
			 dpl_kind_name(nh->kind),
			 r->src_nh_idx == XFIB_NH_IDX_NONE ? " (no route)" : "");
}

static void lookup_from_text(const struct dpl_result *r)
{
	char a[INET6_ADDRSTRLEN], dev[IF_NAMESIZE], back[96];

	printf("from:       %s, entering by %s (ifindex %u): ",
	       addr_str(fam_af(r->fam), r->src, a, sizeof(a)),
	       dev_str(r->iif, dev), r->iif);
	if (r->have_in)
		printf("rp_filter %s\n", rpf_mode(r));
	else
		printf("unknown to xfibd\n");
	if (r->fam == XFIB_V4 && r->ready) {
		route_back_str(r, back, sizeof(back));
		printf("route back: %s\n", back);
	}
}

static json_object *lookup_from_json(const struct dpl_result *r)
{
	json_object *o, *nh;
	char a[INET6_ADDRSTRLEN], dev[IF_NAMESIZE];

	if (!r->have_src)
		return NULL;
	o = json_object_new_object();
	js_set(o, "address", js_str(addr_str(fam_af(r->fam), r->src, a, sizeof(a))));
	js_set(o, "iif", js_str(dev_str(r->iif, dev)));
	js_set(o, "known", js_bool(r->have_in));
	js_set(o, "rp_filter", r->have_in ? js_str(rpf_mode(r)) : NULL);
	nh = NULL;
	if (r->fam == XFIB_V4 && r->ready) {
		nh = json_object_new_object();
		js_set(nh, "index", js_u64(r->src_nh_idx));
		js_set(nh, "kind", js_str(dpl_kind_name(r->src_nh.kind)));
		if (r->src_nh.kind == XFIB_NH_GATEWAY ||
		    r->src_nh.kind == XFIB_NH_CONNECTED)
			js_set(nh, "dev", js_str(dev_str(r->src_nh.ifindex, dev)));
	}
	js_set(o, "route_back", nh);
	return o;
}

/* The nexthop sends packets out of a port (gateway or connected). */
static bool nh_has_egress(const struct xfib_nexthop *nh)
{
	return nh->kind == XFIB_NH_GATEWAY || nh->kind == XFIB_NH_CONNECTED;
}

static const char *action_str(enum xfib_reason a)
{
	if (a == XFIB_FWD_V4 || a == XFIB_FWD_V6)
		return "forward";
	if (a == XFIB_DROP_BLACKHOLE)
		return "drop";
	return "pass";
}

static void lookup_egress_text(const struct dpl_result *r)
{
	char a[INET6_ADDRSTRLEN], m1[18], m2[18], dev[IF_NAMESIZE];

	printf("egress:     %s (ifindex %u): %s, %s\n",
	       dev_str(r->nh.ifindex, dev), r->nh.ifindex,
	       !r->have_iface ? "unknown to xfibd" :
	       (r->iface.flags & XFIB_IF_UP) ? "up" : "down",
	       r->attached ? "attached" : "not attached");
	if (r->tx_ifindex && r->tx_ifindex != r->nh.ifindex)
		printf("bridge:     by member %s (ifindex %u), from its FDB\n",
		       dev_str(r->tx_ifindex, dev), r->tx_ifindex);
	if (r->nh.kind == XFIB_NH_GATEWAY)
		printf("gateway:    %s\n", addr_str(r->nh.family, r->nh.gw, a, sizeof(a)));
	if (r->have_neigh)
		printf("neighbour:  %u, %s, dst %s, src %s\n", r->neigh_idx,
		       r->neigh.state == XFIB_NEIGH_VALID ? "valid" : "not resolved",
		       mac_str(r->neigh.dmac, m1, sizeof(m1)),
		       mac_str(r->neigh.smac, m2, sizeof(m2)));
	else
		printf("neighbour:  none\n");
}

static void lookup_kernel_text(const struct lookup *l)
{
	static const char *const agree_str[] = {
		[VERIFY_MATCH] = "agrees",
		[VERIFY_DEFERRED] = "deferred to the kernel",
		[VERIFY_MISMATCH] = "MISMATCH",
	};
	const struct kroute *kr = &l->kr;
	char a[INET6_ADDRSTRLEN], dev[IF_NAMESIZE], t[16], ans[128];

	if (kr->err) {
		printf("kernel:     %s\n", strerror(-kr->err));
	} else {
		printf("kernel:     %s/%u table %s type %s",
		       addr_str(kr->family, kr->dst, a, sizeof(a)), kr->plen,
		       table_str(kr->table, t, sizeof(t)), kroute_type_name(kr->type));
		if (kr->gw_family)
			printf(" via %s", addr_str(kr->gw_family, kr->gw, a, sizeof(a)));
		if (kr->oif)
			printf(" dev %s", dev_str(kr->oif, dev));
		printf("\n");
	}
	kfib_answer_str(fam_af(l->r.fam), l->r.addr, &l->k, ans, sizeof(ans));
	printf("kernel fib: %s (bpf_fib_lookup from %s): %s\n", ans,
	       dev_str(l->iif, dev), agree_str[l->agree]);
}

/* What decided among the policy rules, for lookup's text and JSON. */
static const char *rules_verdict(const struct dpl_rules_answer *a)
{
	if (!a->walked)
		return "lookup local, then main";
	if (a->fallback)
		return "the family's rules are the kernel's (xfibctl rules)";
	if (a->w.rule >= a->count)
		return "no rule chose a route";
	if (a->reason != XFIB_NEXT)
		return "a rule xfib leaves to the kernel";
	return "chose the route";
}

static void rules_text(const char *label, const struct dpl_rules_answer *a)
{
	if (!a->walked)
		return;
	printf("%-12s", label);
	if (a->w.rule < a->count)
		printf("rule %u (priority %u", a->w.rule, a->rule.priority);
	if (a->w.rule < a->count && a->rule.action == FR_ACT_TO_TBL)
		printf(", lookup %u", a->rule.table);
	if (a->w.rule < a->count)
		printf("): ");
	printf("%s%s\n", rules_verdict(a), a->w.suppressed ?
	       ", after an earlier rule's answer was suppressed (suppress_prefixlength)" : "");
}

static json_object *rules_json(const struct dpl_rules_answer *a)
{
	json_object *o;

	if (!a->walked)
		return NULL;
	o = json_object_new_object();
	js_set(o, "verdict", js_str(rules_verdict(a)));
	if (a->w.rule < a->count) {
		js_set(o, "rule", js_u64(a->w.rule));
		js_set(o, "priority", js_u64(a->rule.priority));
		js_set(o, "action", js_u64(a->rule.action));
		if (a->rule.action == FR_ACT_TO_TBL)
			js_set(o, "table", js_u64(a->rule.table));
	}
	js_set(o, "reason", js_str(a->reason == XFIB_NEXT ? "route" :
				   reason_name(a->reason)));
	js_set(o, "suppressed", js_bool(a->w.suppressed));
	return o;
}

static void lookup_text(const struct lookup *l)
{
	const struct dpl_result *r = &l->r;
	char a[INET6_ADDRSTRLEN];

	printf("address:    %s (%s)\n", addr_str(fam_af(r->fam), r->addr, a, sizeof(a)),
	       fam_name(r->fam));
	printf("instance:   %s, generation %u\n", xfib_algo_name(r->act.algo),
	       r->act.generation);
	if (r->have_src)
		lookup_from_text(r);
	rules_text("rules:", &r->rules);
	if (r->have_src && r->fam == XFIB_V4 && r->src_rules.walked)
		rules_text("rules back:", &r->src_rules);
	if (r->ready && r->group)
		printf("multipath:  nexthop %u, group %u of %u members; a flow with no\n"
		       "            ports takes:\n", r->group_nh_idx, r->group_nh.group,
		       r->members);
	if (r->ready)
		printf("nexthop:    %u, %s%s\n", r->nh_idx, dpl_kind_name(r->nh.kind),
		       r->nh_idx == XFIB_NH_IDX_NONE ? " (no route)" : "");
	if (nh_has_egress(&r->nh))
		lookup_egress_text(r);
	if (r->action == XFIB_FWD_V4 || r->action == XFIB_FWD_V6)
		printf("action:     forward\n");
	else if (r->action == XFIB_DROP_BLACKHOLE)
		printf("action:     drop (blackhole)\n");
	else
		printf("action:     pass to the kernel: %s\n", pass_why(r->action));
	if (l->nf_mode == XFIB_NF_GATE)
		printf("netfilter:  conntrack gate: forwarded in XDP only for flows\n"
		       "            conntrack holds as established (xfibctl status)\n");
	else if (l->nf_mode == XFIB_NF_PASS)
		printf("netfilter:  every packet of the family to the kernel (xfibctl status)\n");
	lookup_kernel_text(l);
}

/* The egress port, gateway and neighbour members of lookup -j. */
static void lookup_egress_json(json_object *o, const struct dpl_result *r)
{
	bool out = nh_has_egress(&r->nh);
	json_object *e = NULL, *n = NULL;
	char a[INET6_ADDRSTRLEN], m[18], dev[IF_NAMESIZE];

	if (out) {
		e = json_object_new_object();
		js_set(e, "ifindex", js_u64(r->nh.ifindex));
		js_set(e, "name", js_str(dev_str(r->nh.ifindex, dev)));
		js_set(e, "known", js_bool(r->have_iface));
		js_set(e, "up", js_bool(r->have_iface && (r->iface.flags & XFIB_IF_UP)));
		js_set(e, "attached", js_bool(r->attached));
		/* A bridge: the member its FDB names. */
		if (r->tx_ifindex && r->tx_ifindex != r->nh.ifindex)
			js_set(e, "bridge_port",
			       js_str(dev_str(r->tx_ifindex, dev)));
	}
	js_set(o, "egress", e);
	js_set(o, "gateway", r->nh.kind == XFIB_NH_GATEWAY ?
		   js_str(addr_str(r->nh.family, r->nh.gw, a, sizeof(a))) : NULL);
	if (out && r->have_neigh) {
		n = json_object_new_object();
		js_set(n, "index", js_u64(r->neigh_idx));
		js_set(n, "state", js_str(r->neigh.state == XFIB_NEIGH_VALID ?
						  "valid" : "invalid"));
		js_set(n, "dst_mac", js_str(mac_str(r->neigh.dmac, m, sizeof(m))));
		js_set(n, "src_mac", js_str(mac_str(r->neigh.smac, m, sizeof(m))));
	}
	js_set(o, "neighbour", n);
}

static json_object *kroute_json(const struct kroute *kr)
{
	json_object *o = json_object_new_object();
	char a[INET6_ADDRSTRLEN + 4], dev[IF_NAMESIZE], t[16];
	size_t n;

	if (kr->err) {
		js_set(o, "error", js_str(strerror(-kr->err)));
		return o;
	}
	addr_str(kr->family, kr->dst, a, sizeof(a));
	n = strlen(a);
	snprintf(a + n, sizeof(a) - n, "/%u", kr->plen);
	js_set(o, "prefix", js_str(a));
	js_set(o, "table", js_str(table_str(kr->table, t, sizeof(t))));
	js_set(o, "type", js_str(kroute_type_name(kr->type)));
	if (kr->oif)
		js_set(o, "dev", js_str(dev_str(kr->oif, dev)));
	if (kr->gw_family)
		js_set(o, "gateway", js_str(addr_str(kr->gw_family, kr->gw, a, sizeof(a))));
	return o;
}

static json_object *lookup_json(const struct lookup *l)
{
	static const char *const verdict[] = {
		[VERIFY_MATCH] = "match",
		[VERIFY_DEFERRED] = "deferred",
		[VERIFY_MISMATCH] = "mismatch",
	};
	const struct dpl_result *r = &l->r;
	json_object *o = json_object_new_object(), *nh = json_object_new_object();
	char a[INET6_ADDRSTRLEN], dev[IF_NAMESIZE];

	js_set(o, "address", js_str(addr_str(fam_af(r->fam), r->addr, a, sizeof(a))));
	js_set(o, "family", js_str(fam_name(r->fam)));
	js_set(o, "algorithm", js_str(xfib_algo_name(r->act.algo)));
	js_set(o, "generation", js_u64(r->act.generation));
	js_set(nh, "index", js_u64(r->nh_idx));
	js_set(nh, "kind", js_str(dpl_kind_name(r->nh.kind)));
	js_set(nh, "mtu", js_u64(r->nh.mtu));
	js_set(o, "nexthop", nh);
	if (r->group) {
		json_object *g = json_object_new_object();

		js_set(g, "nexthop", js_u64(r->group_nh_idx));
		js_set(g, "index", js_u64(r->group_nh.group));
		js_set(g, "members", js_u64(r->members));
		js_set(o, "group", g);
	}
	lookup_egress_json(o, r);
	js_set(o, "from", lookup_from_json(r));
	js_set(o, "rules", rules_json(&r->rules));
	js_set(o, "action", js_str(action_str(r->action)));
	js_set(o, "reason", js_str(reason_name(r->action)));
	js_set(o, "netfilter", js_str(nf_mode_name(l->nf_mode)));
	js_set(o, "kernel", kroute_json(&l->kr));
	js_set(o, "kernel_fib", kfib_json(fam_af(r->fam), r->addr, &l->k));
	js_set(o, "iif", js_str(dev_str(l->iif, dev)));
	js_set(o, "verdict", js_str(verdict[l->agree]));
	return o;
}

/* The kernel's FIB lookup of addr (given as arg) for a packet entering by
 * iif, from src (NULL: none) with f's protocol, ports and TOS (NULL:
 * none), through the policy rules. */
static int kfib_ask(const char *arg, int fam, const __u8 *addr, __u32 iif,
		    const __u8 *src, const struct dpl_flow *f,
		    struct xv_query *out)
{
	struct kfib *kf = NULL;
	struct xv_query *k;
	int err;

	err = kfib_open(&kf);
	if (err) {
		err_cmd("load the kernel lookup program xfib_verify: %s", strerror(-err));
		return err;
	}
	k = kfib_queries(kf);
	memset(k, 0, sizeof(*k));
	k->family = fam_af(fam);
	memcpy(k->addr, addr, 16);
	if (src)
		memcpy(k->src, src, 16);
	if (f) {
		k->tos = f->tos;
		k->l4_protocol = f->proto;
		k->sport = f->sport;
		k->dport = f->dport;
	}
	err = kfib_run(kf, iif, 1);
	if (!err && k->ret < 0)
		err = k->ret;
	if (err)
		err_cmd("%s: bpf_fib_lookup: %s", arg, strerror(-err));
	*out = *k;
	kfib_close(kf);
	return err;
}

/* The family's netfilter mode (xfib_nf_conf), XFIB_NF_OFF if unknown. */
static __u8 nf_mode_of(struct xfib_fwd_bpf *skel, int fam)
{
	struct xfib_nf_conf conf = { 0 };
	__u32 key = fam;

	bpf_map_lookup_elem(bpf_map__fd(skel->maps.xfib_nf_conf), &key, &conf);
	return conf.mode;
}

int cmd_lookup(struct ctl *c, int argc, char **argv)
{
	struct xfib_fwd_bpf *skel = NULL;
	struct dpl_flow flow = { 0 };
	struct dpl d = { 0 };
	const char *arg = argv[0];
	int fam = c->fam, err;
	struct lookup l;

	err = resolve_ifname("--iif", c->iif_name, &c->iif);
	err = err ?: open_dataplane(c, 0, &skel);
	if (err)
		return err;
	l.iif = c->iif ? c->iif : (__u32)verify_default_iif(skel);
	err = dpl_open(&d, skel, fam);
	if (err) {
		err_cmd("%s: open the %s lookup table: %s", arg, fam_name(fam),
			strerror(-err));
		goto out;
	}
	flow.proto = c->proto > 0 ? c->proto : 0;
	flow.sport = htobe16(c->sport > 0 ? c->sport : 0);
	flow.dport = htobe16(c->dport > 0 ? c->dport : 0);
	flow.tos = c->tos > 0 ? c->tos : 0;
	flow.iif = l.iif;
	err = dpl_resolve_packet(&d, c->addr, c->from_arg ? c->from : NULL,
				 c->from_arg ? l.iif : XFIB_IFINDEX_NONE, &flow,
				 &l.r);
	if (err) {
		err_cmd("%s: %s lookup: %s", arg, fam_name(fam), strerror(-err));
		goto out;
	}
	err = kroute_fibmatch(fam, c->addr, &l.kr);
	if (err) {
		err_cmd("%s: ask the kernel (rtnetlink RTM_GETROUTE): %s", arg,
			strerror(-err));
		goto out;
	}
	err = kfib_ask(arg, fam, c->addr, l.iif, c->from_arg ? c->from : NULL,
		       &flow, &l.k);
	if (err)
		goto out;
	l.nf_mode = nf_mode_of(skel, fam);
	l.agree = verify_compare(&d, fam, c->addr, l.r.ready,
				 l.r.group ? &l.r.group_nh : &l.r.nh, &l.k);
	if (!dpl_rules_judgeable(fam, &l.r.rules))
		l.agree = VERIFY_DEFERRED;
	if (c->json)
		err = out_json(lookup_json(&l));
	else
		lookup_text(&l);
out:
	if (d.skel)
		dpl_close(&d);
	xfib_fwd_bpf__destroy(skel);
	return err;
}

/* ---- verify ----------------------------------------------------------------------- */

/* Lines of mismatches shown; the summary counts them all. */
#define VERIFY_SHOW 20

static json_object *nexthop_json(const struct xfib_nexthop *nh, __u32 idx)
{
	json_object *o = json_object_new_object();
	char a[INET6_ADDRSTRLEN], dev[IF_NAMESIZE];

	js_set(o, "nexthop", js_u64(idx));
	js_set(o, "kind", js_str(dpl_kind_name(nh->kind)));
	if (nh_has_egress(nh)) {
		js_set(o, "ifindex", js_u64(nh->ifindex));
		js_set(o, "dev", js_str(dev_str(nh->ifindex, dev)));
	}
	if (nh->kind == XFIB_NH_GATEWAY)
		js_set(o, "gateway", js_str(addr_str(nh->family, nh->gw, a, sizeof(a))));
	return o;
}

/* A transport protocol as `ip route get ... ipproto` takes it. */
static const char *ipproto_arg(__u8 p, char *buf, size_t len)
{
	struct protoent *pe = getprotobynumber(p);

	if (pe)
		return pe->p_name;
	snprintf(buf, len, "%u", p);
	return buf;
}

/* A rule flow's selectors after the destination, in `ip route get`'s
 * words, so that the line reproduces it: from SRC iif PORT ipproto P
 * sport N dport N tos T (each where the flow has it). */
static void flow_str(int fam, const struct verify_flow *f, char *buf, size_t len)
{
	static const __u8 zero[16];
	char a[INET6_ADDRSTRLEN], dev[IF_NAMESIZE], p[8];
	size_t alen = fam == XFIB_V4 ? 4 : 16;
	int n = 0;

	buf[0] = 0;
	if (memcmp(f->src, zero, alen))
		n += snprintf(buf + n, len - n, " from %s",
			      addr_str(fam_af(fam), f->src, a, sizeof(a)));
	n += snprintf(buf + n, len - n, " iif %s", dev_str(f->iif, dev));
	if (f->proto)
		n += snprintf(buf + n, len - n, " ipproto %s",
			      ipproto_arg(f->proto, p, sizeof(p)));
	if (f->sport || f->dport)
		n += snprintf(buf + n, len - n, " sport %u dport %u", f->sport,
			      f->dport);
	if (f->tos)
		snprintf(buf + n, len - n, " tos 0x%02x", f->tos);
}

static json_object *flow_json(int fam, const struct verify_flow *f)
{
	json_object *o = json_object_new_object();
	char a[INET6_ADDRSTRLEN], dev[IF_NAMESIZE];

	js_set(o, "from", js_str(addr_str(fam_af(fam), f->src, a, sizeof(a))));
	js_set(o, "iif", js_str(dev_str(f->iif, dev)));
	js_set(o, "ipproto", js_u64(f->proto));
	js_set(o, "sport", js_u64(f->sport));
	js_set(o, "dport", js_u64(f->dport));
	js_set(o, "tos", js_u64(f->tos));
	return o;
}

static void counts_json(json_object *o, const struct verify_counts *c)
{
	js_set(o, "checked", js_u64(c->checked));
	js_set(o, "matched", js_u64(c->matched));
	js_set(o, "deferred", js_u64(c->deferred));
	js_set(o, "mismatched", js_u64(c->mismatched));
	js_set(o, "rechecked", js_u64(c->rechecked));
}

static json_object *verify_json(const struct verify_report *rep)
{
	json_object *o = json_object_new_object(), *mis = json_object_new_array();
	char a[INET6_ADDRSTRLEN], dev[IF_NAMESIZE], t[16];
	size_t i;
	int fam;

	js_set(o, "table", js_str(table_str(rep->table, t, sizeof(t))));
	js_set(o, "iif", js_str(dev_str(rep->iif, dev)));
	js_set(o, "seconds", js_fixed(rep->seconds, 3));
	js_set(o, "stale", js_u64(rep->stale));
	for (fam = 0; fam < XFIB_FAMILIES; fam++) {
		const struct verify_family *f = &rep->fam[fam];
		json_object *e = json_object_new_object();
		json_object *rf = json_object_new_object();

		js_set(e, "algorithm", js_str(xfib_algo_name(f->act.algo)));
		js_set(e, "generation", js_u64(f->act.generation));
		js_set(e, "prefixes", js_u64(f->prefixes));
		counts_json(e, &f->dests);
		js_set(rf, "flows", js_u64(f->flows));
		js_set(rf, "combinations", js_u64(f->combinations));
		js_set(rf, "destinations_per_flow", js_u64(f->flows ? rep->flow_dests : 0));
		counts_json(rf, &f->flow);
		js_set(e, "rule_flows", rf);
		js_set(o, fam_name(fam), e);
	}
	for (i = 0; mis && i < rep->nmis; i++) {
		const struct verify_mismatch *m = &rep->mis[i];
		json_object *e = json_object_new_object();
		int af = fam_af(m->fam);

		js_set(e, "family", js_str(fam_name(m->fam)));
		js_set(e, "address", js_str(addr_str(af, m->addr, a, sizeof(a))));
		if (m->rule_flow)
			js_set(e, "flow", flow_json(m->fam, &m->flow));
		js_set(e, "xfib", nexthop_json(&m->nh, m->nh_idx));
		js_set(e, "kernel", kfib_json(af, m->addr, &m->kernel));
		if (m->source_ruled_out)
			js_set(e, "source", js_str("ruled out as local by xfib_nonlocal4"));
		json_object_array_add(mis, e);
	}
	js_set(o, "mismatches", mis);
	return o;
}

static void verify_text(const struct verify_report *rep, unsigned long total,
			unsigned long bad)
{
	char a[INET6_ADDRSTRLEN], x[128], k[128], dev[IF_NAMESIZE], t[16], fl[160];
	unsigned long flow_queries = 0;
	size_t i;
	int fam;

	for (i = 0; i < rep->nmis; i++) {
		const struct verify_mismatch *m = &rep->mis[i];
		int af = fam_af(m->fam);

		nexthop_str(&m->nh, m->nh_idx, x, sizeof(x));
		kfib_answer_str(af, m->addr, &m->kernel, k, sizeof(k));
		fl[0] = 0;
		if (m->rule_flow)
			flow_str(m->fam, &m->flow, fl, sizeof(fl));
		printf("mismatch: %s %s%s: xfib %s, kernel %s%s\n", fam_name(m->fam),
		       addr_str(af, m->addr, a, sizeof(a)), fl, x, k,
		       m->source_ruled_out ?
			       "; as a source, ruled out as local by xfib_nonlocal4" : "");
	}
	if (bad > rep->nmis)
		printf("... and %lu more mismatches\n", bad - rep->nmis);
	for (fam = 0; fam < XFIB_FAMILIES; fam++) {
		const struct verify_family *f = &rep->fam[fam];

		printf("%s: %s generation %u, %zu prefixes: %lu checked, %lu matched, "
		       "%lu deferred to the kernel, %lu mismatched\n",
		       fam_name(fam), xfib_algo_name(f->act.algo),
		       f->act.generation, f->prefixes, f->dests.checked,
		       f->dests.matched, f->dests.deferred, f->dests.mismatched);
	}
	for (fam = 0; fam < XFIB_FAMILIES; fam++) {
		const struct verify_family *f = &rep->fam[fam];

		if (!f->flows)
			continue;
		flow_queries += f->flow.checked;
		printf("%s rule flows: %lu of %lu from the rules' selectors, %lu "
		       "destinations each: %lu checked, %lu matched, %lu deferred "
		       "to the kernel, %lu mismatched\n",
		       fam_name(fam), f->flows, f->combinations, rep->flow_dests,
		       f->flow.checked, f->flow.matched, f->flow.deferred,
		       f->flow.mismatched);
	}
	total -= flow_queries;
	if (flow_queries)
		printf("%lu addresses and %lu rule flow queries in %.2f s (%.0f/s), "
		       "table %s, kernel lookups from %s and the flows' ports\n",
		       total, flow_queries, rep->seconds,
		       rep->seconds > 0 ? (total + flow_queries) / rep->seconds : 0.0,
		       table_str(rep->table, t, sizeof(t)), dev_str(rep->iif, dev));
	else
		printf("%lu addresses in %.2f s (%.0f/s), table %s, kernel lookups from %s\n",
		       total, rep->seconds, rep->seconds > 0 ? total / rep->seconds : 0.0,
		       table_str(rep->table, t, sizeof(t)), dev_str(rep->iif, dev));
	if (rep->stale)
		printf("%lu of them deferred because xfibd's lease had expired: the dataplane hands every packet to the kernel (pass_stale) until xfibd syncs\n",
		       rep->stale);
}

int cmd_verify(struct ctl *c, int argc, char **argv)
{
	struct verify_opts o = { .random = c->random, .max_reports = VERIFY_SHOW,
				 .flows = c->flows, .flow_dests = c->flow_dests };
	struct xfib_fwd_bpf *skel = NULL;
	unsigned long total = 0, bad = 0;
	struct verify_report rep;
	int fam, err;

	err = resolve_ifname("--iif", c->iif_name, &c->iif);
	err = err ?: open_dataplane(c, 0, &skel);
	if (err)
		return err;
	o.iif = c->iif;
	if (!xfib_daemon_pid(skel))
		fprintf(stderr, "xfibctl: verify: xfibd is not running: checking the state it left\n");
	err = verify_run(skel, &o, &rep);
	if (err) {
		err_cmd("%s", rep.err);
		goto out;
	}
	for (fam = 0; fam < XFIB_FAMILIES; fam++) {
		total += rep.fam[fam].dests.checked + rep.fam[fam].flow.checked;
		bad += rep.fam[fam].dests.mismatched + rep.fam[fam].flow.mismatched;
	}
	if (rep.stale)
		fprintf(stderr, "xfibctl: verify: xfibd's lease has expired: the dataplane forwards nothing in XDP\n");
	if (c->json)
		err = out_json(verify_json(&rep));
	else
		verify_text(&rep, total, bad);
	/* Exit status 1: the dataplane disagrees with the kernel. */
	if (!err)
		err = bad ? 1 : 0;
out:
	verify_report_free(&rep);
	xfib_fwd_bpf__destroy(skel);
	return err;
}
