// SPDX-License-Identifier: GPL-2.0-only
/*
 * The flows `xfibctl verify` asks the policy rules about, taken from the
 * rules xfibd published (include/xfib/rules.h) and the kernel's own
 * (verify.c reads both into one set): without them every
 * query has no source, no transport and one ingress port, and a walk
 * that gets a rule's from, iif, ipproto, sport, dport or tos wrong never
 * shows.
 *
 * For each selector, the values a wrong comparison would answer
 * differently for, where bugs in range and prefix tests live:
 *  - sources: each from prefix's first and last address and the ones
 *    just before and after it; a unicast one that no prefix holds (not
 *    none: the sweep asks without a source, and a packet has one, which
 *    `ip route get ... iif` needs to reproduce a mismatch);
 *  - ingress ports: each attached port a rule's iif names, and one that
 *    none names (the destination sweep's if it is not named);
 *  - transport: no protocol; a protocol without ports (ICMP); each
 *    rule's ipproto (TCP and UDP where a rule has ports but no protocol)
 *    with its sport and dport ranges' edges lo - 1, lo, hi, hi + 1, the
 *    other port inside its range; the same ports with another protocol;
 *  - tos: none, each rule's, and each rule's with the ECN bit the
 *    comparison must ignore.
 * Every combination of them is a flow, unless there are more than the
 * bound: then a random sample of up to that many, the same share per
 * port.
 * Flows are grouped by ingress port, since the kernel's lookups are run
 * in batches for one port (bpf/xfib_verify.bpf.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>

#include "verify.h"
#include "verify_priv.h"

/* Ports of a flow a port range does not decide: an ephemeral source
 * port, a service's destination port. */
#define FLOW_SPORT 33000
#define FLOW_DPORT 443

/* No hidden padding: values are compared as bytes. */
struct l4 {
	__u16 sport, dport;
	__u8 proto;
	__u8 pad;
};

/* Small sets of values, each value once. */
struct vals {
	void *v;
	size_t n, cap, size;
};

static int vals_add(struct vals *s, const void *x)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (!memcmp((char *)s->v + i * s->size, x, s->size))
			return 0;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		void *p = realloc(s->v, cap * s->size);

		if (!p)
			return -ENOMEM;
		s->v = p;
		s->cap = cap;
	}
	memcpy((char *)s->v + s->n++ * s->size, x, s->size);
	return 0;
}

/* A rule the walk reads the selectors of (rule_walk.h: none of one
 * whose selectors xfibd found never to match). */
static bool selectors_read(const struct xfib_rule *x)
{
	return !(x->flags & XFIB_RULE_F_MATCH_NONE);
}

static bool prefix_holds(const __u8 *pfx, __u8 plen, const __u8 *a, size_t alen)
{
	size_t i;

	for (i = 0; i < alen && plen; i++) {
		unsigned int bits = plen >= 8 ? 8 : plen;
		__u8 m = (__u8)(0xff00 >> bits);

		if ((pfx[i] ^ a[i]) & m)
			return false;
		plen -= bits;
	}
	return true;
}

static bool in_any_from(int fam, const struct xfib_rule_set *set, const __u8 *a)
{
	__u32 i;

	for (i = 0; i < set->hdr.count && i < XFIB_RULES_MAX; i++) {
		const struct xfib_rule *x = &set->rule[i];

		if (x->src_len && prefix_holds(x->src, x->src_len, a, fam_alen(fam)))
			return true;
	}
	return false;
}

static int sources(int fam, const struct xfib_rule_set *set, __u64 *rng,
		   struct vals *s)
{
	size_t alen = fam_alen(fam);
	__u8 a[16] = { 0 };
	int which, tries, err = 0;
	__u32 i;

	for (i = 0; !err && i < set->hdr.count && i < XFIB_RULES_MAX; i++) {
		const struct xfib_rule *x = &set->rule[i];
		struct pfx p = { .plen = x->src_len };

		if (!x->src_len || !selectors_read(x))
			continue;
		memcpy(p.dst, x->src, alen);
		for (which = 0; !err && which < 4; which++)
			if (pfx_point(&p, alen, which, a))
				err = vals_add(s, a);
	}
	/* A source no from prefix holds: rules with one do not match it. */
	for (tries = 0; !err && tries < 64; tries++) {
		__u64 r[2] = { splitmix64(rng), splitmix64(rng) };

		memset(a, 0, sizeof(a));
		memcpy(a, r, alen);
		/* unicast: IPv4 1-223 but 127 (no martian), IPv6 2000::/3 */
		if (fam == XFIB_V4)
			a[0] = 1 + a[0] % 223;
		else
			a[0] = 0x20 | (a[0] & 0x1f);
		if ((fam == XFIB_V4 && a[0] == 127) || in_any_from(fam, set, a))
			continue;
		return vals_add(s, a);
	}
	/* from prefixes cover the unicast space: their edges will do */
	return err;
}

static bool port_listed(const __u32 *ports, size_t n, __u32 ifindex)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (ports[i] == ifindex)
			return true;
	return false;
}

static int ingress_ports(const struct xfib_rule_set *set, const __u32 *ports,
			 size_t nports, __u32 iif, struct vals *s)
{
	size_t k;
	__u32 i;
	int err = 0;

	for (i = 0; !err && i < set->hdr.count && i < XFIB_RULES_MAX; i++) {
		const struct xfib_rule *x = &set->rule[i];

		/* A port xfib is not attached to: its packets never reach
		 * the walk. */
		if ((x->flags & XFIB_RULE_F_IIF) && selectors_read(x) &&
		    port_listed(ports, nports, x->iif))
			err = vals_add(s, &x->iif);
	}
	if (err)
		return err;
	if (!port_listed(s->v, s->n, iif))
		return vals_add(s, &iif);
	for (k = 0; k < nports; k++)
		if (!port_listed(s->v, s->n, ports[k]))
			return vals_add(s, &ports[k]);
	return 0;
}

static int port_edges(__u16 lo, __u16 hi, __u16 *e)
{
	int n = 0;

	if (lo > 0)
		e[n++] = lo - 1;
	e[n++] = lo;
	e[n++] = hi;
	if (hi < 65535)
		e[n++] = hi + 1;
	return n;
}

static int transports(int fam, const struct xfib_rule_set *set, struct vals *s)
{
	struct l4 t = { 0 };
	__u16 e[4];
	__u32 i;
	int err, k, p, n;

	err = vals_add(s, &t); /* no protocol */
	t.proto = fam == XFIB_V4 ? IPPROTO_ICMP : IPPROTO_ICMPV6;
	err = err ?: vals_add(s, &t); /* one without ports */
	for (i = 0; !err && i < set->hdr.count && i < XFIB_RULES_MAX; i++) {
		const struct xfib_rule *x = &set->rule[i];
		bool sp = x->flags & XFIB_RULE_F_SPORT, dp = x->flags & XFIB_RULE_F_DPORT;
		__u8 protos[2];

		if ((!x->ip_proto && !sp && !dp) || !selectors_read(x))
			continue;
		/* The rule's protocol, and one it does not name with the
		 * same ports. */
		protos[0] = x->ip_proto ? x->ip_proto : IPPROTO_TCP;
		protos[1] = protos[0] == IPPROTO_TCP ? IPPROTO_UDP : IPPROTO_TCP;
		for (p = 0; !err && p < 2; p++) {
			__u16 sport = sp ? x->sport_lo : FLOW_SPORT;
			__u16 dport = dp ? x->dport_lo : FLOW_DPORT;

			t = (struct l4){ .proto = protos[p], .sport = sport, .dport = dport };
			err = vals_add(s, &t);
			n = dp ? port_edges(x->dport_lo, x->dport_hi, e) : 0;
			for (k = 0; !err && k < n; k++) {
				t.dport = e[k];
				err = vals_add(s, &t);
			}
			t.dport = dport;
			n = sp ? port_edges(x->sport_lo, x->sport_hi, e) : 0;
			for (k = 0; !err && k < n; k++) {
				t.sport = e[k];
				err = vals_add(s, &t);
			}
		}
	}
	return err;
}

static int tos_values(const struct xfib_rule_set *set, struct vals *s)
{
	__u8 tos = 0, ecn;
	__u32 i;
	int err;

	err = vals_add(s, &tos);
	for (i = 0; !err && i < set->hdr.count && i < XFIB_RULES_MAX; i++) {
		const struct xfib_rule *x = &set->rule[i];

		if (!x->tos || !selectors_read(x))
			continue;
		err = vals_add(s, &x->tos);
		/* ECN's lowest bit: outside every kernel's mask */
		ecn = x->tos | 0x01;
		err = err ?: vals_add(s, &ecn);
	}
	return err;
}

/* Flow k of the combinations of one port: source, transport, tos. */
static void flow_of(int fam, size_t k, __u32 iif, const struct vals *src,
		    const struct vals *l4, const struct vals *tos,
		    struct verify_flow *f)
{
	const struct l4 *t = &((const struct l4 *)l4->v)[k / src->n % l4->n];

	memset(f, 0, sizeof(*f));
	memcpy(f->src, (const __u8 *)src->v + (k % src->n) * 16, fam_alen(fam));
	f->iif = iif;
	f->proto = t->proto;
	f->sport = t->sport;
	f->dport = t->dport;
	f->tos = ((const __u8 *)tos->v)[k / src->n / l4->n % tos->n];
}

static int idx_cmp(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

/* Which of n combinations to ask, at most quota of them, into idx: all,
 * or a random sample of distinct ones (random rather than evenly spaced,
 * which would line up with the period of one selector's values). How
 * many. */
static size_t sample(size_t n, size_t quota, __u64 *rng, size_t *idx)
{
	size_t i, j;

	if (n <= quota) {
		for (i = 0; i < n; i++)
			idx[i] = i;
		return n;
	}
	for (i = 0; i < quota; i++)
		idx[i] = splitmix64(rng) % n;
	qsort(idx, quota, sizeof(*idx), idx_cmp);
	for (i = 1, j = 1; i < quota; i++)
		if (idx[i] != idx[j - 1])
			idx[j++] = idx[i];
	return j;
}

int rule_flows(int fam, const struct xfib_rule_set *set, const __u32 *ports,
	       size_t nports, __u32 iif, unsigned long max, __u64 *rng,
	       struct flows *out)
{
	struct vals src = { .size = 16 }, in = { .size = sizeof(__u32) },
		    l4 = { .size = sizeof(struct l4) }, tos = { .size = 1 };
	size_t per_port, quota, k, p, *idx = NULL;
	int err;

	memset(out, 0, sizeof(*out));
	if (!max)
		return 0;
	err = sources(fam, set, rng, &src);
	err = err ?: ingress_ports(set, ports, nports, iif, &in);
	err = err ?: transports(fam, set, &l4);
	err = err ?: tos_values(set, &tos);
	if (err)
		goto out;
	per_port = src.n * l4.n * tos.n;
	out->combinations = per_port * in.n;
	quota = max / in.n ? max / in.n : 1;
	if (quota > per_port)
		quota = per_port;
	out->v = calloc(quota * in.n, sizeof(*out->v));
	if (!out->v) {
		err = -ENOMEM;
		goto out;
	}
	idx = calloc(quota, sizeof(*idx));
	if (!idx) {
		err = -ENOMEM;
		goto out;
	}
	for (p = 0; p < in.n; p++) {
		__u32 ifindex = ((__u32 *)in.v)[p];
		size_t n = sample(per_port, quota, rng, idx);

		for (k = 0; k < n; k++)
			flow_of(fam, idx[k], ifindex, &src, &l4, &tos, &out->v[out->n++]);
	}
out:
	free(idx);
	free(src.v);
	free(in.v);
	free(l4.v);
	free(tos.v);
	return err;
}

int rule_dst_prefixes(int fam, const struct xfib_rule_set *set,
		      struct pfxs *out)
{
	size_t alen = fam_alen(fam);
	__u32 i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < set->hdr.count && i < XFIB_RULES_MAX; i++) {
		const struct xfib_rule *x = &set->rule[i];

		if (!x->dst_len || !selectors_read(x))
			continue;
		if (out->n == out->cap) {
			size_t cap = out->cap ? 2 * out->cap : 16;
			void *p = realloc(out->v, cap * sizeof(*out->v));

			if (!p)
				return -ENOMEM;
			out->v = p;
			out->cap = cap;
		}
		memset(&out->v[out->n], 0, sizeof(out->v[0]));
		memcpy(out->v[out->n].dst, x->dst, alen);
		out->v[out->n++].plen = x->dst_len;
	}
	return 0;
}
