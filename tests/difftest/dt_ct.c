// SPDX-License-Identifier: GPL-2.0-only
/*
 * dt_ct: the conntrack entries of the differential test's NAT run
 * (tests/difftest/run.sh -N), created over ctnetlink in the router's
 * namespace before each run, so that every run starts from the same
 * conntrack state. One entry per line of standard input:
 *
 *   tcp|udp|icmp SRC SPORT DST DPORT [snat ADDR PORT] [dnat ADDR PORT]
 *
 * the flow's original tuple (icmp: an echo request, SPORT its identifier,
 * DPORT 0), then its NAT: the source translated to ADDR (PORT 0 keeps the
 * port) and/or the destination to ADDR, PORT. Each entry is made as a flow
 * that went both ways for a while leaves it: replied and assured, TCP
 * ESTABLISHED with BE_LIBERAL in both directions (so that neither the
 * kernel's window tracking nor xfib's learning step decides what happens
 * to a segment), with a timeout of ten minutes. Every entry is then read
 * back and checked: status, TCP state and flags, and the reply tuple the
 * NAT must have given it. Prints what it created; exits 1 on any error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/nf_conntrack_tcp.h>

#include "ctnl.h"

#define MAX_ENTRIES 100000

struct want {
	struct ctnl_tuple orig;
	struct ctnl_tuple reply; /* what the NAT must make of the reply tuple */
	unsigned int line;
	bool nat;
};

static int parse_addr(const char *s, __u8 *family, __u8 *to)
{
	if (inet_pton(AF_INET, s, to) == 1)
		*family = AF_INET;
	else if (inet_pton(AF_INET6, s, to) == 1)
		*family = AF_INET6;
	else
		return -1;
	return 0;
}

static int parse_port(const char *s, __be16 *to)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (!*s || *end || v > 65535)
		return -1;
	*to = htons(v);
	return 0;
}

/* One line into w and c (c's snat and dnat point into snat and dnat). */
static int parse_line(char *line, struct want *w, struct ctnl_change *c,
		      __u8 *snat, __u8 *dnat)
{
	char *tok[11], *save = NULL, *p;
	__u8 fam2;
	int n = 0, i;

	for (p = strtok_r(line, " \t\n", &save); p && n < 11;
	     p = strtok_r(NULL, " \t\n", &save))
		tok[n++] = p;
	if (p || (n != 5 && n != 8 && n != 11))
		return -1;
	memset(w, 0, sizeof(*w));
	if (!strcmp(tok[0], "tcp"))
		w->orig.proto = IPPROTO_TCP;
	else if (!strcmp(tok[0], "udp"))
		w->orig.proto = IPPROTO_UDP;
	else if (strcmp(tok[0], "icmp"))
		return -1;
	if (parse_addr(tok[1], &w->orig.family, w->orig.src) ||
	    parse_port(tok[2], &w->orig.sport) ||
	    parse_addr(tok[3], &fam2, w->orig.dst) || fam2 != w->orig.family ||
	    parse_port(tok[4], &w->orig.dport))
		return -1;
	if (!w->orig.proto) {
		w->orig.proto = w->orig.family == AF_INET ? IPPROTO_ICMP : IPPROTO_ICMPV6;
		w->orig.icmp_type = w->orig.family == AF_INET ? 8 : 128;
		w->orig.dport = 0;
	}
	ctnl_tuple_invert(&w->orig, &w->reply);
	memset(c, 0, sizeof(*c));
	c->status = IPS_SEEN_REPLY | IPS_ASSURED;
	c->timeout = 600;
	c->tcp_state = -1;
	if (w->orig.proto == IPPROTO_TCP) {
		c->tcp_state = TCP_CONNTRACK_ESTABLISHED;
		c->tcp_liberal = true;
	}
	for (i = 5; i < n; i += 3) {
		bool src = !strcmp(tok[i], "snat");
		__u8 *a = src ? snat : dnat;
		__be16 port;

		if ((!src && strcmp(tok[i], "dnat")) || (src ? c->snat : c->dnat) ||
		    parse_addr(tok[i + 1], &fam2, a) || fam2 != w->orig.family ||
		    parse_port(tok[i + 2], &port))
			return -1;
		/* The reply goes from the translated destination back to the
		 * translated source. */
		if (src) {
			c->snat = a;
			c->snat_port = port;
			memcpy(w->reply.dst, a, 16);
			if (port)
				w->reply.dport = port;
		} else {
			c->dnat = a;
			c->dnat_port = port;
			memcpy(w->reply.src, a, 16);
			if (port)
				w->reply.sport = port;
		}
		w->nat = true;
	}
	/* An echo's reply tuple carries the (translated) identifier too. */
	if (w->orig.proto != IPPROTO_TCP && w->orig.proto != IPPROTO_UDP && c->snat_port)
		w->reply.sport = c->snat_port;
	return 0;
}

static const char *tuple_str(const struct ctnl_tuple *t, char *buf, size_t len)
{
	char s[INET6_ADDRSTRLEN] = "?", d[INET6_ADDRSTRLEN] = "?";

	if (!inet_ntop(t->family, t->src, s, sizeof(s)) ||
	    !inet_ntop(t->family, t->dst, d, sizeof(d)))
		strcpy(s, "?");
	snprintf(buf, len, "%s:%u > %s:%u", s, ntohs(t->sport), d, ntohs(t->dport));
	return buf;
}

static bool tuple_eq(const struct ctnl_tuple *a, const struct ctnl_tuple *b)
{
	size_t alen = a->family == AF_INET ? 4 : 16;

	return a->proto == b->proto && !memcmp(a->src, b->src, alen) &&
	       !memcmp(a->dst, b->dst, alen) && a->sport == b->sport &&
	       (a->proto == IPPROTO_ICMP || a->proto == IPPROTO_ICMPV6 ||
		a->dport == b->dport);
}

/* The entry of w as conntrack holds it: NULL if it is as asked, else what
 * is not. */
static const char *check(struct mnl_socket *nl, const struct want *w)
{
	__u32 need = IPS_CONFIRMED | IPS_SEEN_REPLY | IPS_ASSURED;
	struct ctnl_entry e;
	int err;

	if (w->nat)
		need |= IPS_SRC_NAT_DONE | IPS_DST_NAT_DONE;
	err = ctnl_get(nl, &w->orig, &e);
	if (err)
		return strerror(-err);
	if ((e.status & need) != need)
		return "status";
	if (!tuple_eq(&e.reply, &w->reply))
		return "reply tuple";
	if (w->orig.proto != IPPROTO_TCP)
		return NULL;
	if (!e.tcp || e.tcp_state != TCP_CONNTRACK_ESTABLISHED)
		return "TCP state";
	if (!(e.tcp_flags[0] & e.tcp_flags[1] & IP_CT_TCP_FLAG_BE_LIBERAL))
		return "TCP flags";
	return NULL;
}

int main(void)
{
	static struct want wants[MAX_ENTRIES];
	unsigned int n = 0, line = 0, i, per[3] = { 0 };
	struct mnl_socket *nl;
	char buf[512], t1[128], t2[128];
	int err;

	err = ctnl_open(&nl);
	if (err) {
		fprintf(stderr, "dt_ct: ctnetlink: %s\n", strerror(-err));
		return 1;
	}
	while (fgets(buf, sizeof(buf), stdin)) {
		__u8 snat[16] = { 0 }, dnat[16] = { 0 };
		struct ctnl_change c;
		struct want *w = &wants[n];

		line++;
		if (buf[strspn(buf, " \t\n")] == '\0' || buf[0] == '#')
			continue;
		if (n == MAX_ENTRIES || parse_line(buf, w, &c, snat, dnat)) {
			fprintf(stderr, "dt_ct: line %u: not an entry (or too many)\n", line);
			goto fail;
		}
		w->line = line;
		err = ctnl_create(nl, &w->orig, &c);
		if (err) {
			fprintf(stderr, "dt_ct: line %u: %s: %s\n", line,
				tuple_str(&w->orig, t1, sizeof(t1)), strerror(-err));
			goto fail;
		}
		per[w->orig.proto == IPPROTO_TCP ? 0 : w->orig.proto == IPPROTO_UDP ? 1 : 2]++;
		n++;
	}
	for (i = 0; i < n; i++) {
		const char *bad = check(nl, &wants[i]);
		struct ctnl_entry e;

		if (!bad)
			continue;
		memset(&e, 0, sizeof(e));
		ctnl_get(nl, &wants[i].orig, &e);
		fprintf(stderr, "dt_ct: line %u: %s: %s not as asked (status %#x, "
			"reply %s, wanted %s, TCP state %u flags %#x %#x)\n",
			wants[i].line, tuple_str(&wants[i].orig, t1, sizeof(t1)), bad,
			e.status, tuple_str(&e.reply, t2, sizeof(t2)),
			tuple_str(&wants[i].reply, buf, sizeof(buf)), e.tcp_state,
			e.tcp_flags[0], e.tcp_flags[1]);
		goto fail;
	}
	ctnl_close(nl);
	printf("dt_ct: %u entries (%u TCP, %u UDP, %u ICMP echo) created and "
	       "read back as asked\n", n, per[0], per[1], per[2]);
	return 0;
fail:
	ctnl_close(nl);
	return 1;
}
