// SPDX-License-Identifier: GPL-2.0-only
/*
 * Legacy iptables and ip6tables (x_tables, Debian's iptables-legacy): the
 * tables this namespace has instantiated (ip{,6}_tables_names in /proc/net)
 * read with IPT_SO_GET_INFO / IPT_SO_GET_ENTRIES into the check's form
 * (nfrules.h). x_tables sends no notifications: xfibd reads the tables
 * again every second and compares a hash of the blobs, counters left out.
 *
 * A table's blob is its entries back to back. A built-in chain runs from
 * its hook's entry to its underflow, the policy entry; a user chain starts
 * after an ERROR entry naming it and ends before the next ERROR entry; a
 * standard target is a verdict (negative) or the offset of the entry to
 * jump to.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <linux/netfilter_ipv4/ip_tables.h>
#include <linux/netfilter_ipv6/ip6_tables.h>
#include <linux/netfilter/nf_tables.h>

#include "fnv.h"
#include "nfrules.h"
#include "ipt.h"

static const char *const hook_names[NF_INET_NUMHOOKS] = {
	"PREROUTING", "INPUT", "FORWARD", "OUTPUT", "POSTROUTING",
};

/* One table's blob, whichever the family: the layouts differ only in the
 * address part of an entry. */
struct blob {
	bool v6;
	const __u8 *p;
	unsigned int size;
	unsigned int hook_entry[NF_INET_NUMHOOKS], underflow[NF_INET_NUMHOOKS];
	unsigned int valid_hooks;
};

struct entry {
	const void *ip;		/* struct ipt_ip / ip6t_ip6 */
	size_t iplen;
	unsigned int matches;	/* offset of the first match */
	unsigned int target;	/* offset of the target */
	unsigned int next;	/* offset of the next entry */
};

static int entry_at(const struct blob *b, unsigned int off, struct entry *e)
{
	size_t hdr = b->v6 ? sizeof(struct ip6t_entry) : sizeof(struct ipt_entry);
	__u16 toff, noff;

	if (off + hdr > b->size)
		return -EINVAL;
	if (b->v6) {
		const struct ip6t_entry *x = (const void *)(b->p + off);

		e->ip = &x->ipv6, e->iplen = sizeof(x->ipv6);
		toff = x->target_offset, noff = x->next_offset;
	} else {
		const struct ipt_entry *x = (const void *)(b->p + off);

		e->ip = &x->ip, e->iplen = sizeof(x->ip);
		toff = x->target_offset, noff = x->next_offset;
	}
	if (toff < hdr || noff < toff + sizeof(struct xt_entry_target) ||
	    off + noff > b->size)
		return -EINVAL;
	e->matches = off + hdr;
	e->target = off + toff;
	e->next = off + noff;
	return 0;
}

static const struct xt_entry_target *target_of(const struct blob *b,
					       const struct entry *e)
{
	return (const void *)(b->p + e->target);
}

static bool is_error(const struct blob *b, const struct entry *e)
{
	return !strcmp(target_of(b, e)->u.user.name, XT_ERROR_TARGET);
}

/* The standard target's verdict, or false if the target is another. */
static bool std_verdict(const struct blob *b, const struct entry *e, int *v)
{
	const struct xt_entry_target *t = target_of(b, e);

	if (strcmp(t->u.user.name, XT_STANDARD_TARGET) ||
	    t->u.user.target_size < sizeof(*t) + sizeof(int))
		return false;
	memcpy(v, t->data, sizeof(int));
	return true;
}

/* The name of the user chain starting at offset off, or NULL. */
static const char *chain_at(const struct blob *b, unsigned int off)
{
	unsigned int o = 0, prev = ~0u;
	struct entry e;

	for (; o < b->size && !entry_at(b, o, &e); o = e.next) {
		if (o == off && prev != ~0u) {
			struct entry pe;

			if (!entry_at(b, prev, &pe) && is_error(b, &pe))
				return ((const struct xt_error_target *)target_of(b, &pe))->errorname;
			return NULL;
		}
		prev = o;
	}
	return NULL;
}

static int add_verdict(struct nfx_rule *r, const struct blob *b,
		       const struct entry *e, int v)
{
	struct nfx_expr *x = nfx_expr_add(r);
	const struct ipt_ip *ip4 = e->ip;
	const struct ip6t_ip6 *ip6 = e->ip;
	bool go = b->v6 ? ip6->flags & IP6T_F_GOTO : ip4->flags & IPT_F_GOTO;
	const char *name;

	if (!x)
		return -ENOMEM;
	x->kind = NFX_VERDICT;
	x->what = "verdict";
	if (v >= 0) {
		name = chain_at(b, v);
		x->verdict = go ? NFT_GOTO : NFT_JUMP;
		x->name = strdup(name ? name : "?");
		return x->name ? 0 : -ENOMEM;
	}
	switch (v) {
	case -NF_ACCEPT - 1:
		x->verdict = NF_ACCEPT;
		break;
	case -NF_DROP - 1:
		x->verdict = NF_DROP;
		break;
	case XT_RETURN:
		x->verdict = NFT_RETURN;
		break;
	default:
		x->verdict = NF_QUEUE; /* the check calls it what it is: not safe */
	}
	return 0;
}

/* The entry as a rule of c: its address part, matches and target. */
static int add_rule(struct nfx_chain *c, const struct blob *b,
		    const struct entry *e, __u64 n)
{
	struct nfx_rule *r = nfx_rule_add(c, n);
	unsigned char zero[sizeof(struct ip6t_ip6)] = { 0 };
	unsigned char ip[sizeof(struct ip6t_ip6)];
	const struct xt_entry_target *t = target_of(b, e);
	struct nfx_expr *x;
	unsigned int o;
	int v;

	if (!r)
		return -ENOMEM;
	/* Every legacy rule counts what it matches. */
	if (!(x = nfx_expr_add(r)))
		return -ENOMEM;
	x->kind = NFX_ACCOUNT;
	memcpy(ip, e->ip, e->iplen);
	if (b->v6)
		((struct ip6t_ip6 *)ip)->flags &= ~IP6T_F_GOTO;
	else
		((struct ipt_ip *)ip)->flags &= ~IPT_F_GOTO;
	if (memcmp(ip, zero, e->iplen)) {
		if (!(x = nfx_expr_add(r)))
			return -ENOMEM;
		x->kind = NFX_COND;
		x->what = "address match";
	}
	for (o = e->matches; o + sizeof(struct xt_entry_match) <= e->target;) {
		const struct xt_entry_match *m = (const void *)(b->p + o);

		if (m->u.user.match_size < sizeof(*m) || o + m->u.user.match_size > e->target)
			return -EINVAL;
		if (!(x = nfx_expr_add(r)))
			return -ENOMEM;
		nfx_xt_match(x, m->u.user.name, m->u.user.revision, m->data,
			     m->u.user.match_size - sizeof(*m));
		o += m->u.user.match_size;
	}
	if (std_verdict(b, e, &v))
		return add_verdict(r, b, e, v);
	if (!(x = nfx_expr_add(r)))
		return -ENOMEM;
	nfx_xt_target(x, t->u.user.name, t->u.user.revision, t->data,
		      t->u.user.target_size - sizeof(*t));
	return 0;
}

/* Rules from offset off until offset end (or an ERROR entry). */
static int add_rules(struct nfx_chain *c, const struct blob *b,
		     unsigned int off, unsigned int end)
{
	struct entry e;
	__u64 n = 1;
	int err;

	for (; off < end; off = e.next) {
		if (entry_at(b, off, &e))
			return -EINVAL;
		if (is_error(b, &e))
			break;
		err = add_rule(c, b, &e, n++);
		if (err)
			return err;
	}
	return 0;
}

/* Priorities of the legacy tables' hooks (NF_IP_PRI_*). */
static __s32 table_prio(const char *table, unsigned int hook)
{
	if (!strcmp(table, "raw"))
		return -300;
	if (!strcmp(table, "mangle"))
		return -150;
	if (!strcmp(table, "nat"))
		return hook == NF_INET_PRE_ROUTING || hook == NF_INET_LOCAL_OUT ? -100 : 100;
	if (!strcmp(table, "security"))
		return 50;
	return 0;
}

static int blob_to_table(const struct blob *b, const char *name,
			 struct nfx_table *t)
{
	struct nfx_chain *c;
	struct entry e;
	unsigned int h, off;
	int err, v;

	for (h = 0; h < NF_INET_NUMHOOKS; h++) {
		if (!(b->valid_hooks & (1u << h)))
			continue;
		c = nfx_chain_add(t, hook_names[h]);
		if (!c)
			return -ENOMEM;
		c->base = true;
		c->hook = h;
		c->prio = table_prio(name, h);
		c->nat = !strcmp(name, "nat");
		err = add_rules(c, b, b->hook_entry[h], b->underflow[h]);
		if (err)
			return err;
		if (entry_at(b, b->underflow[h], &e) || !std_verdict(b, &e, &v))
			return -EINVAL;
		c->policy = v == -NF_ACCEPT - 1 ? NF_ACCEPT : NF_DROP;
	}
	for (off = 0; off < b->size && !entry_at(b, off, &e); off = e.next) {
		const char *cname;

		if (!is_error(b, &e))
			continue;
		cname = ((const struct xt_error_target *)target_of(b, &e))->errorname;
		if (!strcmp(cname, XT_ERROR_TARGET))
			continue; /* the table's end */
		c = nfx_chain_add(t, cname);
		if (!c)
			return -ENOMEM;
		err = add_rules(c, b, e.next, b->size);
		if (err)
			return err;
	}
	return 0;
}


/* The blob's hash without the counters, which move with every packet. */
static __u64 blob_hash(__u64 h, const struct blob *b)
{
	size_t cnt_off = b->v6 ? offsetof(struct ip6t_entry, counters) :
				 offsetof(struct ipt_entry, counters);
	unsigned int off;
	struct entry e;

	h = xfib_fnv1a(h, b->hook_entry, sizeof(b->hook_entry));
	h = xfib_fnv1a(h, b->underflow, sizeof(b->underflow));
	for (off = 0; off < b->size && !entry_at(b, off, &e); off = e.next) {
		h = xfib_fnv1a(h, b->p + off, cnt_off);
		h = xfib_fnv1a(h, b->p + off + cnt_off + sizeof(struct xt_counters),
			e.next - off - cnt_off - sizeof(struct xt_counters));
	}
	return h;
}

/* Reads table name of the family of socket fd into rs; *hash mixed in. */
static int read_table(int fd, bool v6, const char *name, struct nfx_ruleset *rs,
		      __u64 *hash)
{
	int level = v6 ? SOL_IPV6 : SOL_IP;
	struct ipt_getinfo info = { 0 };
	struct ipt_get_entries *ent;
	struct blob b = { .v6 = v6 };
	char tname[96];
	socklen_t len = sizeof(info);
	struct nfx_table *t;
	int err = 0;

	/* ip6t_getinfo and ip6t_get_entries have the same layout. */
	if (strlen(name) >= sizeof(info.name))
		return -EINVAL;
	memcpy(info.name, name, strlen(name) + 1);
	if (getsockopt(fd, level, v6 ? IP6T_SO_GET_INFO : IPT_SO_GET_INFO, &info, &len))
		return errno == ENOENT ? 0 : -errno;
	len = sizeof(*ent) + info.size;
	ent = calloc(1, len);
	if (!ent)
		return -ENOMEM;
	memcpy(ent->name, info.name, sizeof(ent->name));
	ent->size = info.size;
	if (getsockopt(fd, level, v6 ? IP6T_SO_GET_ENTRIES : IPT_SO_GET_ENTRIES, ent, &len)) {
		/* EAGAIN: the table changed between the two calls. */
		err = -errno;
		goto out;
	}
	b.p = (const __u8 *)ent->entrytable;
	b.size = info.size;
	b.valid_hooks = info.valid_hooks;
	memcpy(b.hook_entry, info.hook_entry, sizeof(b.hook_entry));
	memcpy(b.underflow, info.underflow, sizeof(b.underflow));
	*hash = blob_hash(xfib_fnv1a(*hash, name, strlen(name) + 1), &b);
	snprintf(tname, sizeof(tname), "%s %s", v6 ? "ip6tables-legacy" : "iptables-legacy",
		 name);
	t = nfx_table_add(rs, v6 ? NFPROTO_IPV6 : NFPROTO_IPV4, tname, true);
	err = t ? blob_to_table(&b, name, t) : -ENOMEM;
out:
	free(ent);
	return err;
}

int ipt_read(struct nfx_ruleset *rs, __u64 *hash)
{
	/* /proc/self/net: the namespace of this process, also where only
	 * the process part of /proc is mounted. */
	static const char *const names[2] = { "/proc/self/net/ip_tables_names",
					      "/proc/self/net/ip6_tables_names" };
	int v6, err = 0;

	*hash = XFIB_FNV1A_BASIS;
	for (v6 = 0; v6 < 2 && !err; v6++) {
		FILE *f = fopen(names[v6], "re");
		char line[XT_TABLE_MAXNAMELEN + 2];
		int fd;

		if (!f)
			continue; /* no legacy tables in this kernel */
		fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			err = -errno;
			fclose(f);
			break;
		}
		while (!err && fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\n")] = '\0';
			if (*line)
				err = read_table(fd, v6, line, rs, hash);
		}
		close(fd);
		fclose(f);
	}
	return err;
}
