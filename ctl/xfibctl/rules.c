// SPDX-License-Identifier: GPL-2.0-only
/*
 * xfibctl rules: the policy rules xfibd mirrors (xfib_rules,
 * include/xfib/rules.h), written as `ip rule` writes them (iproute2's
 * print_rule: the same words in the same order, and with -j the same
 * keys), each with what xfib could do with it for a forwarded packet, and
 * per family whether its rules let XDP forward it at all.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <linux/fib_rules.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "algo_names.h"
#include "output.h"
#include "xfibctl.h"
#include "xfib/rules.h"

#define REASON_TEXT(name, cls, text) [XFIB_RULE_R_##name] = text,
static const char *const reason_text[XFIB_RULE_R_COUNT] = {
	XFIB_RULE_REASONS(REASON_TEXT)
};

static const char *const class_name[] = {
	[XFIB_RULE_EXACT] = "exact",
	[XFIB_RULE_NEVER] = "never",
	[XFIB_RULE_KERNEL] = "kernel",
};

static const char *const fallback_name[] = {
	[XFIB_RULES_OK] = "none",
	[XFIB_RULES_ORDER] = "order",
	[XFIB_RULES_TOO_MANY] = "too_many",
	[XFIB_RULES_UNREADABLE] = "unreadable",
	[XFIB_RULES_LOCAL_ROUTES] = "local_routes",
};
#define FALLBACKS (sizeof(fallback_name) / sizeof(fallback_name[0]))

static const char *const table_state_name[] = {
	[XFIB_TABLE_EMPTY] = "empty",
	[XFIB_TABLE_READY] = "xdp",
	[XFIB_TABLE_KERNEL] = "kernel",
	[XFIB_TABLE_INSTANCE] = "xdp",
};
#define TABLE_STATES (sizeof(table_state_name) / sizeof(table_state_name[0]))

static const char *const table_reason_text[] = {
	[XFIB_TABLE_R_NONE] = "its routes are being read",
	[XFIB_TABLE_R_TOO_LARGE] = "too large",
	[XFIB_TABLE_R_UNSUPPORTED] = "a source-specific route",
	[XFIB_TABLE_R_BUILD_FAILED] = "its instance could not be built",
};
#define TABLE_REASONS (sizeof(table_reason_text) / sizeof(table_reason_text[0]))

/* The slots' tables (xfib_table_info) of both families, zeroed if the
 * map cannot be read; and slot 0's, the family's instance, as one of
 * them (from xfib_fib_info: its prefixes, whether it is in XDP). */
struct tables_view {
	struct xfib_table_info in[XFIB_FAMILIES * XFIB_TABLE_SLOTS];
	struct xfib_table_info main[XFIB_FAMILIES];
};

static void tables_read(struct xfib_fwd_bpf *skel, struct tables_view *tv)
{
	int fd = bpf_map__fd(skel->maps.xfib_table_info);
	int ffd = bpf_map__fd(skel->maps.xfib_fib_info);
	struct xfib_fib_info fi;
	__u32 k;

	memset(tv, 0, sizeof(*tv));
	for (k = 0; k < XFIB_FAMILIES * XFIB_TABLE_SLOTS; k++)
		if (bpf_map_lookup_elem(fd, &k, &tv->in[k]))
			memset(&tv->in[k], 0, sizeof(tv->in[k]));
	for (k = 0; k < XFIB_FAMILIES; k++) {
		if (bpf_map_lookup_elem(ffd, &k, &fi))
			memset(&fi, 0, sizeof(fi));
		tv->main[k].routes = fi.routes;
		tv->main[k].state = fi.algo ? XFIB_TABLE_READY : XFIB_TABLE_KERNEL;
	}
}

/* A lookup of main on slot 0 that suppresses the answers of default
 * routes, which slot 0's nexthop indexes mark (include/xfib/maps.h). */
static bool rule_main_mark(const struct xfib_rule *x)
{
	return x->action == FR_ACT_TO_TBL && x->tslot == XFIB_TSLOT_MAIN &&
	       x->suppress_prefixlen != 0xffffffff;
}

/* The table of rule x of fam, NULL for main (but a lookup with the
 * mark), local and none. */
static const struct xfib_table_info *rule_table_info(const struct tables_view *tv,
						     __u32 fam,
						     const struct xfib_rule *x)
{
	if (rule_main_mark(x))
		return &tv->main[fam];
	if (x->tslot == XFIB_TSLOT_MAIN || x->tslot >= XFIB_TABLE_SLOTS)
		return NULL;
	return &tv->in[fam * XFIB_TABLE_SLOTS + x->tslot];
}
/*
 * The family's published rules, as one generation: the half named by
 * xfib_rules_active, read again until the daemon did not write meanwhile.
 * -ENOENT: none published yet.
 */
static int rules_read(struct xfib_fwd_bpf *skel, __u32 fam,
		      struct xfib_rule_set *set)
{
	int afd = bpf_map__fd(skel->maps.xfib_rules_active);
	int rfd = bpf_map__fd(skel->maps.xfib_rules);
	struct xfib_rules_active a, b;
	int tries;

	for (tries = 0; tries < 100; tries++) {
		__u32 key;

		if (bpf_map_lookup_elem(afd, &fam, &a))
			return -errno;
		if (!a.generation)
			return -ENOENT;
		key = fam * 2 + (a.half & 1);
		if (bpf_map_lookup_elem(rfd, &key, set) ||
		    bpf_map_lookup_elem(afd, &fam, &b))
			return -errno;
		if (!memcmp(&a, &b, sizeof(a)) &&
		    set->hdr.generation == a.generation)
			return 0;
	}
	return -EBUSY;
}

/* ---- status ------------------------------------------------------------- */

void rules_status_read(struct xfib_fwd_bpf *skel, struct status *st)
{
	struct xfib_rule_set *set = malloc(sizeof(*set));
	int fd = bpf_map__fd(skel->maps.xfib_table_info);
	__u32 fam, k;

	for (fam = 0; fam < XFIB_FAMILIES; fam++) {
		st->rules_fallback[fam] = -1;
		if (set && !rules_read(skel, fam, set)) {
			st->rules_fallback[fam] = set->hdr.fallback;
			st->rules_total[fam] = set->hdr.total;
		}
	}
	free(set);
	for (k = 0; k < XFIB_FAMILIES * XFIB_TABLE_SLOTS; k++) {
		struct xfib_table_info *ti =
			&st->tables[k / XFIB_TABLE_SLOTS][k % XFIB_TABLE_SLOTS];

		if (k % XFIB_TABLE_SLOTS == XFIB_TSLOT_MAIN ||
		    bpf_map_lookup_elem(fd, &k, ti))
			memset(ti, 0, sizeof(*ti));
	}
}

/* The structure a rules' table runs: its algorithm, or why the kernel
 * answers for it. */
static const char *table_algo_text(const struct xfib_table_info *ti)
{
	if (ti->state == XFIB_TABLE_READY || ti->state == XFIB_TABLE_INSTANCE)
		return xfib_algo_name(ti->algo);
	if (ti->state == XFIB_TABLE_EMPTY)
		return "empty";
	return "kernel";
}

/* "tables: 100 bsearch4 (4 routes, 0 KiB), 200 dir24_8 (1501 routes,
 * 66560 KiB)": those with routes (every router's rules reach the empty
 * table default); -j lists them all. */
static void tables_status_text(const struct status *st, __u32 fam)
{
	const char *sep = "             tables: ";
	__u32 s;

	for (s = 1; s < XFIB_TABLE_SLOTS; s++) {
		const struct xfib_table_info *ti = &st->tables[fam][s];
		char tb[16];

		if (!ti->table || ti->state == XFIB_TABLE_EMPTY)
			continue;
		printf("%s%s%s %s (%u routes, %llu KiB)", sep,
		       table_str(ti->table, tb, sizeof(tb)),
		       ti->main_copy ? " (copy)" : "", table_algo_text(ti),
		       ti->routes, (unsigned long long)(ti->mem_bytes >> 10));
		sep = ", ";
	}
	if (sep[0] == ',')
		printf("\n");
}

static void tables_status_json(const struct status *st, __u32 fam,
			       struct json_object *o)
{
	json_object *a = json_object_new_array();
	__u32 s;

	for (s = 1; a && s < XFIB_TABLE_SLOTS; s++) {
		const struct xfib_table_info *ti = &st->tables[fam][s];
		json_object *e;

		if (!ti->table)
			continue;
		e = json_object_new_object();
		js_set(e, "table", js_u64(ti->table));
		js_set(e, "slot", js_u64(s));
		js_set(e, "main_copy", js_bool(ti->main_copy));
		js_set(e, "algo", js_str(table_algo_text(ti)));
		js_set(e, "routes", js_u64(ti->routes));
		js_set(e, "mem_bytes", js_u64(ti->mem_bytes));
		json_object_array_add(a, e);
	}
	js_set(o, "tables", a);
}

/* Says more than status's fallback line (which is about the order of
 * the rules) only when that is not the reason. */
void rules_status_text(const struct status *st, __u32 fam)
{
	tables_status_text(st, fam);
	if (st->fi[fam].fallback != XFIB_FALLBACK_RULES)
		return;
	if (st->rules_fallback[fam] == XFIB_RULES_TOO_MANY)
		printf("             %u policy rules, more than the %u xfib holds (xfibctl rules)\n",
		       st->rules_total[fam], XFIB_RULES_MAX);
	else if (st->rules_fallback[fam] == XFIB_RULES_UNREADABLE)
		printf("             a policy rule xfibd could not read\n");
	else if (st->rules_fallback[fam] == XFIB_RULES_ORDER)
		printf("             the first policy rule is not \"lookup local\" for every packet\n");
	else if (st->rules_fallback[fam] == XFIB_RULES_LOCAL_ROUTES)
		printf("             the local table holds routes other than local ones, and rules follow it\n");
}

void rules_status_json(const struct status *st, __u32 fam,
		       struct json_object *o)
{
	int f = st->rules_fallback[fam];

	tables_status_json(st, fam, o);
	if (st->fi[fam].fallback != XFIB_FALLBACK_RULES || f < 0)
		return;
	js_set(o, "rules_fallback", js_str((size_t)f < FALLBACKS ? fallback_name[f] : "unknown"));
	js_set(o, "rules_total", js_u64(st->rules_total[fam]));
}

/* ---- a rule's words, as iproute2 writes them -------------------------------- */

/* Where a rule's words go: into buf as text, or, with -j, as keys of o
 * (each put_* says both forms of one of print_rule's items). */
struct rule_out {
	json_object *o; /* NULL: text */
	char *buf;
	size_t len, off;
};

static void __attribute__((format(printf, 2, 3)))
words(struct rule_out *w, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	w->off += vsnprintf(w->buf + w->off, w->off < w->len ? w->len - w->off : 0,
			    fmt, ap);
	va_end(ap);
}

static void put_str(struct rule_out *w, const char *key, const char *text,
		    const char *val)
{
	if (w->o && key)
		js_set(w->o, key, val ? js_str(val) : NULL);
	else if (!w->o)
		words(w, "%s", text);
}

static void put_u64(struct rule_out *w, const char *key, __u64 v)
{
	if (w->o)
		js_set(w->o, key, js_u64(v));
}

static void put_prefix(struct rule_out *w, int af, const char *word,
		       const char *key, const __u8 *a, __u8 len)
{
	char addr[64];
	unsigned int host = af == AF_INET ? 32 : 128;

	addr_str(af, a, addr, sizeof(addr));
	if (!w->o) {
		words(w, " %s %s", word, addr);
		if (len != host)
			words(w, "/%u", len);
		return;
	}
	js_set(w->o, key, js_str(addr));
	if (len != host)
		js_set(w->o, !strcmp(key, "src") ? "srclen" : "dstlen", js_u64(len));
}

static void put_ports(struct rule_out *w, const char *name, __u16 lo, __u16 hi)
{
	char text[32];

	if (lo == hi) {
		snprintf(text, sizeof(text), " %s %u", name, lo);
		put_str(w, NULL, text, NULL);
		put_u64(w, name, lo);
		return;
	}
	snprintf(text, sizeof(text), " %s %u-%u", name, lo, hi);
	put_str(w, NULL, text, NULL);
	put_u64(w, !strcmp(name, "sport") ? "sport_start" : "dport_start", lo);
	put_u64(w, !strcmp(name, "sport") ? "sport_end" : "dport_end", hi);
}

/* RTPROT_* as iproute2 names them (without /etc/iproute2/rt_protos). */
static const char *proto_str(__u8 p, char *buf, size_t len)
{
	static const char *const name[] = {
		[RTPROT_UNSPEC] = "unspec", [RTPROT_REDIRECT] = "redirect",
		[RTPROT_KERNEL] = "kernel", [RTPROT_BOOT] = "boot",
		[RTPROT_STATIC] = "static", [RTPROT_GATED] = "gated",
		[RTPROT_RA] = "ra", [RTPROT_MRT] = "mrt",
		[RTPROT_ZEBRA] = "zebra", [RTPROT_BIRD] = "bird",
		[RTPROT_DNROUTED] = "dnrouted", [RTPROT_XORP] = "xorp",
		[RTPROT_NTK] = "ntk", [RTPROT_DHCP] = "dhcp",
	};

	if (p < sizeof(name) / sizeof(name[0]) && name[p])
		return name[p];
	snprintf(buf, len, "%u", p);
	return buf;
}

/* IP protocol names as iproute2 writes them (getprotobynumber). */
static const char *ipproto_str(__u8 p, char *buf, size_t len)
{
	struct protoent *pe = getprotobynumber(p);

	if (pe)
		return pe->p_name;
	snprintf(buf, len, "ipproto-%u", p);
	return buf;
}

/* Selectors, in print_rule's order: from, to, tos, fwmark, iif, oif,
 * l3mdev, uidrange, ipproto, sport, dport, tun_id. */
static void rule_selectors(struct rule_out *w, int af, const struct xfib_rule *x)
{
	char text[64], v[32];

	if (x->flags & XFIB_RULE_F_INVERT)
		put_str(w, "not", " not", NULL);
	if (x->src_len)
		put_prefix(w, af, "from", "src", x->src, x->src_len);
	else
		put_str(w, "src", " from all", "all");
	if (x->dst_len)
		put_prefix(w, af, "to", "dst", x->dst, x->dst_len);
	if (x->tos) {
		snprintf(v, sizeof(v), "0x%02x", x->tos);
		snprintf(text, sizeof(text), " tos %s", v);
		put_str(w, "tos", text, v);
	}
	/* "%#x": 0 is "0", as iproute2 writes it; the mask unless all ones
	 * (the kernel sends one with every mark). */
	if (x->flags & XFIB_RULE_F_FWMARK) {
		snprintf(v, sizeof(v), "%#x", x->fwmark);
		snprintf(text, sizeof(text), " fwmark %s", v);
		put_str(w, "fwmark", text, v);
		if (x->fwmask != 0xffffffff) {
			snprintf(v, sizeof(v), "%#x", x->fwmask);
			snprintf(text, sizeof(text), "/%s", v);
			put_str(w, "fwmask", text, v);
		}
	}
	if (x->flags & XFIB_RULE_F_IIF) {
		snprintf(text, sizeof(text), " iif %s", x->iifname);
		put_str(w, "iif", text, x->iifname);
		if (x->flags & XFIB_RULE_F_IIF_DETACHED)
			put_str(w, "iif_detached", " [detached]", NULL);
	}
	if (x->flags & XFIB_RULE_F_OIF) {
		snprintf(text, sizeof(text), " oif %s", x->oifname);
		put_str(w, "oif", text, x->oifname);
		if (x->flags & XFIB_RULE_F_OIF_DETACHED)
			put_str(w, "oif_detached", " [detached]", NULL);
	}
	if (x->flags & XFIB_RULE_F_L3MDEV)
		put_str(w, "l3mdev", " lookup [l3mdev-table]", NULL);
	if (x->flags & XFIB_RULE_F_UID) {
		snprintf(text, sizeof(text), " uidrange %u-%u", x->uid_start, x->uid_end);
		put_str(w, NULL, text, NULL);
		put_u64(w, "uid_start", x->uid_start);
		put_u64(w, "uid_end", x->uid_end);
	}
	if (x->ip_proto) {
		const char *p = ipproto_str(x->ip_proto, v, sizeof(v));

		snprintf(text, sizeof(text), " ipproto %s", p);
		put_str(w, "ipproto", text, p);
	}
	if (x->flags & XFIB_RULE_F_SPORT)
		put_ports(w, "sport", x->sport_lo, x->sport_hi);
	if (x->flags & XFIB_RULE_F_DPORT)
		put_ports(w, "dport", x->dport_lo, x->dport_hi);
	if (x->flags & XFIB_RULE_F_TUN_ID) {
		snprintf(text, sizeof(text), " tun_id %llu", (unsigned long long)x->tun_id);
		put_str(w, NULL, text, NULL);
		put_u64(w, "tun_id", x->tun_id);
	}
}

/* The table and its arguments, realms, the action, the originator. */
static void rule_action(struct rule_out *w, const struct xfib_rule *x)
{
	char text[64], v[32];

	if (x->table) {
		const char *t = table_str(x->table, v, sizeof(v));

		snprintf(text, sizeof(text), " lookup %s", t);
		put_str(w, "table", text, t);
		if (x->suppress_prefixlen != 0xffffffff) {
			snprintf(text, sizeof(text), " suppress_prefixlength %d",
				 (int)x->suppress_prefixlen);
			put_str(w, NULL, text, NULL);
			put_u64(w, "suppress_prefixlen", x->suppress_prefixlen);
		}
		if (x->suppress_ifgroup != 0xffffffff) {
			if (x->suppress_ifgroup)
				snprintf(v, sizeof(v), "%u", x->suppress_ifgroup);
			else
				snprintf(v, sizeof(v), "default");
			snprintf(text, sizeof(text), " suppress_ifgroup %s", v);
			put_str(w, "suppress_ifgroup", text, v);
		}
	}
	if (x->flags & XFIB_RULE_F_REALMS) {
		__u32 from = x->realms >> 16, to = x->realms & 0xffff;

		put_str(w, NULL, " realms ", NULL);
		if (from) {
			snprintf(v, sizeof(v), "%u", from);
			snprintf(text, sizeof(text), "%s/", v);
			put_str(w, "flow_from", text, v);
		}
		snprintf(v, sizeof(v), "%u", to);
		put_str(w, "flow_to", v, v);
	}
	if (x->action == FR_ACT_GOTO) {
		snprintf(text, sizeof(text), " goto %u", x->goto_prio);
		put_str(w, NULL, text, NULL);
		put_u64(w, "goto", x->goto_prio);
		if (x->flags & XFIB_RULE_F_UNRESOLVED)
			put_str(w, "unresolved", " [unresolved]", NULL);
	} else if (x->action == FR_ACT_NOP) {
		put_str(w, "nop", " nop", NULL);
	} else if (x->action != FR_ACT_TO_TBL) {
		static const char *const act[] = {
			[FR_ACT_BLACKHOLE] = "blackhole",
			[FR_ACT_UNREACHABLE] = "unreachable",
			[FR_ACT_PROHIBIT] = "prohibit",
		};

		if (x->action < sizeof(act) / sizeof(act[0]) && act[x->action])
			snprintf(v, sizeof(v), "%s", act[x->action]);
		else
			snprintf(v, sizeof(v), "%u", x->action);
		snprintf(text, sizeof(text), " %s", v);
		put_str(w, "action", text, v);
	}
	if (x->protocol && x->protocol != RTPROT_KERNEL) {
		const char *p = proto_str(x->protocol, v, sizeof(v));

		snprintf(text, sizeof(text), " proto %s", p);
		put_str(w, "protocol", text, p);
	}
}

/* What xfib could do with the rule: "exact", "never: why", ... */
static const char *class_text(const struct xfib_rule *x, char *buf, size_t len)
{
	const char *cls = x->cls < 3 ? class_name[x->cls] : "?";
	const char *why = x->reason < XFIB_RULE_R_COUNT ? reason_text[x->reason] : "?";

	if (!*why)
		snprintf(buf, len, "%s", cls);
	else if (x->reason == XFIB_RULE_R_ATTR || x->reason == XFIB_RULE_R_ACTION)
		snprintf(buf, len, "%s: %s (%u)", cls, why, x->reason_arg);
	else
		snprintf(buf, len, "%s: %s", cls, why);
	return buf;
}

/* "table 100: 3 routes, 7 ranges in XDP", "table 100: not mirrored: too
 * large", "table main: the XDP instance, ...", ... */
static void table_text(const struct xfib_rule *x,
		       const struct xfib_table_info *in, char *buf, size_t len)
{
	char tb[16];
	const char *t = table_str(x->table, tb, sizeof(tb));
	const char *copy = in && in->main_copy ? " (copy)" : "";

	if (rule_main_mark(x) && in && in->state == XFIB_TABLE_READY)
		snprintf(buf, len, "table %s: the XDP instance, %u prefixes with local; its default routes' answers marked",
			 t, in->routes);
	else if (rule_main_mark(x))
		snprintf(buf, len, "table %s: no XDP instance (xfibctl status)", t);
	else if (x->tslot == XFIB_TSLOT_NONE)
		snprintf(buf, len, "table %s: not mirrored: no slot left", t);
	else if (!in || in->state == XFIB_TABLE_EMPTY)
		snprintf(buf, len, "table %s%s: no routes", t, copy);
	else if (in->state == XFIB_TABLE_READY)
		snprintf(buf, len, "table %s%s: %u routes, %u ranges in XDP (%s)", t,
			 copy, in->routes, in->ranges, xfib_algo_name(in->algo));
	else if (in->state == XFIB_TABLE_INSTANCE)
		snprintf(buf, len, "table %s: %u routes in XDP by its own %s instance, %u groups, %llu MiB",
			 t, in->routes, xfib_algo_name(in->algo), in->ranges,
			 (unsigned long long)(in->mem_bytes >> 20));
	else
		snprintf(buf, len, "table %s%s: not mirrored: %s", t, copy,
			 in->reason < TABLE_REASONS ? table_reason_text[in->reason] : "?");
}

static json_object *table_json(const struct xfib_rule *x,
			       const struct xfib_table_info *in)
{
	json_object *o = json_object_new_object();
	char text[160];
	bool inst = in && !rule_main_mark(x) && in->state == XFIB_TABLE_INSTANCE;

	js_set(o, "slot", x->tslot == XFIB_TSLOT_NONE ? NULL : js_u64(x->tslot));
	js_set(o, "main_copy", js_bool(in && in->main_copy));
	js_set(o, "default_mark", js_bool(rule_main_mark(x)));
	js_set(o, "state", js_str(x->tslot == XFIB_TSLOT_NONE ? "none" :
				  !in ? "empty" : in->state < TABLE_STATES ?
				  table_state_name[in->state] : "?"));
	/* The structure serving it: ranges (bsearch4/bsearch6) or an
	 * instance of its own (dir24_8/trie6); main's: xfibctl status. */
	js_set(o, "algo", in && !rule_main_mark(x) && in->algo ?
			  js_str(xfib_algo_name(in->algo)) : NULL);
	js_set(o, "routes", js_u64(in ? in->routes : 0));
	js_set(o, "ranges", js_u64(in && !inst ? in->ranges : 0));
	js_set(o, "groups", js_u64(inst ? in->ranges : 0));
	js_set(o, "mem_bytes", js_u64(in && !rule_main_mark(x) ? in->mem_bytes : 0));
	table_text(x, in, text, sizeof(text));
	js_set(o, "text", js_str(text));
	return o;
}

/* How many rules from x on the walk reads as one run on the source
 * (include/xfib/rules.h), 0 if none starts at x. */
static __u32 run_rules(const struct xfib_rule_set *set, const struct xfib_rule *x)
{
	__u32 i = x - set->rule, end;

	if (!x->run)
		return 0;
	end = set->range[x->run_off % XFIB_RUN_RANGES].run_end;
	return end > i ? end - i : 0;
}

static json_object *rule_json(int af, const struct xfib_rule_set *set,
			      const struct xfib_rule *x,
			      const struct xfib_table_info *in)
{
	json_object *o = json_object_new_object(), *xf = json_object_new_object();
	struct rule_out w = { .o = o };
	const char *why;

	js_set(o, "priority", js_u64(x->priority));
	rule_selectors(&w, af, x);
	rule_action(&w, x);
	js_set(xf, "class", js_str(x->cls < 3 ? class_name[x->cls] : "?"));
	why = x->reason < XFIB_RULE_R_COUNT ? reason_text[x->reason] : "?";
	if (*why)
		js_set(xf, "reason", js_str(why));
	if (x->reason == XFIB_RULE_R_ATTR || x->reason == XFIB_RULE_R_ACTION)
		js_set(xf, "reason_arg", js_u64(x->reason_arg));
	if ((x->flags & XFIB_RULE_F_IIF) && x->iif)
		js_set(xf, "iif_index", js_u64(x->iif));
	if (x->action == FR_ACT_GOTO && x->goto_idx != XFIB_RULE_NO_TARGET)
		js_set(xf, "goto_index", js_u64(x->goto_idx));
	if (x->tos)
		js_set(xf, "tos_mask", js_u64(x->tos_mask));
	if (run_rules(set, x)) {
		json_object *r = json_object_new_object();

		js_set(r, "rules", js_u64(run_rules(set, x)));
		js_set(r, "ranges", js_u64(1u << x->run_log2n));
		js_set(xf, "run", r);
	}
	/* Main and local are the family's instance (status), shown only
	 * where a rule's suppression reads its marks. */
	if (x->action == FR_ACT_TO_TBL && x->tslot != XFIB_TSLOT_LOCAL &&
	    (x->tslot != XFIB_TSLOT_MAIN || rule_main_mark(x)))
		js_set(xf, "table", table_json(x, in));
	js_set(o, "xfib", xf);
	return o;
}

static void rule_text(int af, const struct xfib_rule_set *set,
		      const struct xfib_rule *x, const struct xfib_table_info *in)
{
	char line[512], cls[160], tbl[160] = "", run[96] = "";
	struct rule_out w = { .buf = line, .len = sizeof(line) };

	*line = '\0';
	rule_selectors(&w, af, x);
	rule_action(&w, x);
	if (x->action == FR_ACT_TO_TBL && x->tslot != XFIB_TSLOT_LOCAL &&
	    (x->tslot != XFIB_TSLOT_MAIN || rule_main_mark(x))) {
		memcpy(tbl, "; ", 3);
		table_text(x, in, tbl + 2, sizeof(tbl) - 2);
	}
	if (run_rules(set, x))
		snprintf(run, sizeof(run), "; with the next %u, one run on the source: %u ranges",
			 run_rules(set, x) - 1, 1u << x->run_log2n);
	/* print_rule writes "not " right after the tab, then "from". */
	printf("%u:\t%s\t[%s%s%s]\n", x->priority,
	       line[0] == ' ' ? line + 1 : line,
	       class_text(x, cls, sizeof(cls)), tbl, run);
}

/* ---- the family ------------------------------------------------------------ */

/* Whether the family's rules let XDP forward it, as xfibd decides today. */
static const char *family_verdict(const struct xfib_rule_set *set,
				  __u32 table, char *buf, size_t len)
{
	char tb[16];
	const char *t = table_str(table, tb, sizeof(tb));

	switch (set->hdr.fallback) {
	case XFIB_RULES_OK:
		if (set->hdr.walk)
			snprintf(buf, len, "its rules let XDP forward it: \"lookup local\" comes first, for every packet; XDP walks the rules after it, and leaves to the kernel the packets a rule it cannot evaluate may match");
		else
			snprintf(buf, len, "its rules let XDP forward it: \"lookup local\" then \"lookup %s\" come first, for every packet; what %s does not route goes to the kernel, which walks the other rules",
				 t, t);
		break;
	case XFIB_RULES_LOCAL_ROUTES:
		snprintf(buf, len, "its rules send it to the kernel: the local table holds routes other than local ones, and rules other than \"lookup %s\" follow \"lookup local\"",
			 t);
		break;
	case XFIB_RULES_TOO_MANY:
		snprintf(buf, len, "its rules send it to the kernel: %u rules, more than the %u xfib holds (the first %u are listed)",
			 set->hdr.total, XFIB_RULES_MAX, set->hdr.count);
		break;
	case XFIB_RULES_UNREADABLE:
		snprintf(buf, len, "its rules send it to the kernel: a rule xfibd could not read (not listed)");
		break;
	default:
		snprintf(buf, len, "its rules send it to the kernel: the first rule is not \"lookup local\" for every packet");
		break;
	}
	return buf;
}

static json_object *family_json(__u32 fam, const struct xfib_rule_set *set,
				__u32 table, const struct tables_view *tv)
{
	json_object *o = json_object_new_object(), *l = json_object_new_array();
	int af = fam_af(fam);
	char why[256];
	__u32 i;

	js_set(o, "generation", js_u64(set->hdr.generation));
	js_set(o, "count", js_u64(set->hdr.count));
	js_set(o, "total", js_u64(set->hdr.total));
	js_set(o, "xdp", js_bool(set->hdr.fallback == XFIB_RULES_OK));
	js_set(o, "fallback", js_str(set->hdr.fallback < FALLBACKS ?
				     fallback_name[set->hdr.fallback] : "unknown"));
	js_set(o, "walk", js_bool(set->hdr.walk));
	if (set->hdr.walk)
		js_set(o, "first", js_u64(set->hdr.first));
	js_set(o, "why", js_str(family_verdict(set, table, why, sizeof(why))));
	for (i = 0; i < set->hdr.count && i < XFIB_RULES_MAX; i++)
		json_object_array_add(l, rule_json(af, set, &set->rule[i],
			rule_table_info(tv, fam, &set->rule[i])));
	js_set(o, "rules", l);
	return o;
}

static void family_text(__u32 fam, const struct xfib_rule_set *set, __u32 table,
			const struct tables_view *tv)
{
	int af = fam_af(fam);
	char why[256];
	__u32 i;

	printf("%s: %u rules, generation %u: %s\n", fam_name(fam),
	       set->hdr.total, set->hdr.generation,
	       family_verdict(set, table, why, sizeof(why)));
	for (i = 0; i < set->hdr.count && i < XFIB_RULES_MAX; i++)
		rule_text(af, set, &set->rule[i],
			  rule_table_info(tv, fam, &set->rule[i]));
}

int cmd_rules(struct ctl *c, int argc, char **argv)
{
	struct xfib_fwd_bpf *skel = NULL;
	struct xfib_rule_set *set = NULL;
	struct tables_view *tv = NULL;
	json_object *all = NULL;
	struct xfib_daemon d = { 0 };
	__u32 fam, key = 0;
	int err;

	err = open_dataplane(c, 0, &skel);
	if (err)
		return err;
	set = malloc(sizeof(*set));
	tv = malloc(sizeof(*tv));
	if (!set || !tv) {
		err = -ENOMEM;
		err_cmd("%s", strerror(ENOMEM));
		goto out;
	}
	bpf_map_lookup_elem(bpf_map__fd(skel->maps.xfib_daemon), &key, &d);
	if (!d.table)
		d.table = RT_TABLE_MAIN;
	tables_read(skel, tv);
	if (c->json)
		all = json_object_new_object();
	for (fam = 0; fam < XFIB_FAMILIES; fam++) {
		if (c->fam >= 0 && (__u32)c->fam != fam)
			continue;
		err = rules_read(skel, fam, set);
		if (err == -ENOENT) {
			err_cmd("%s: no rules published (xfibd has not run here)",
				fam_name(fam));
			goto out;
		} else if (err) {
			err_cmd("%s: reading xfib_rules: %s", fam_name(fam),
				strerror(-err));
			goto out;
		}
		if (all)
			js_set(all, fam_name(fam), family_json(fam, set, d.table, tv));
		else
			family_text(fam, set, d.table, tv);
	}
	if (all) {
		err = out_json(all);
		all = NULL;
	}
out:
	json_object_put(all);
	free(set);
	free(tv);
	xfib_fwd_bpf__destroy(skel);
	return err;
}
