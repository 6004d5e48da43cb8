// SPDX-License-Identifier: GPL-2.0-only
/*
 * status: what xfibd found on the host's netfilter forward path and what
 * the dataplane does about it, per family (xfib_nf_info).
 */
#include <stdio.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "output.h"
#include "xfibctl.h"

static const char *option_name(__u8 o)
{
	switch (o) {
	case XFIB_NF_OPT_CONNTRACK:
		return "conntrack";
	case XFIB_NF_OPT_PASS:
		return "pass";
	case XFIB_NF_OPT_IGNORE:
		return "ignore";
	default:
		return "unknown";
	}
}

const char *nf_mode_name(__u8 m)
{
	switch (m) {
	case XFIB_NF_OFF:
		return "forward";
	case XFIB_NF_GATE:
		return "gate";
	case XFIB_NF_PASS:
		return "pass";
	default:
		return "unknown";
	}
}

static const char *mode_text(const struct xfib_nf_info *in)
{
	switch (in->mode) {
	case XFIB_NF_GATE:
		return "conntrack gate";
	case XFIB_NF_PASS:
		return "all to the kernel";
	default:
		return in->sources && in->option == XFIB_NF_OPT_IGNORE ?
			       "forward, rules ignored" : "forward";
	}
}

/* "nftables, iptables-legacy" */
static void sources_text(__u8 s, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s%s", s & XFIB_NF_SRC_NFT ? "nftables" : "",
		 (s & XFIB_NF_SRC_NFT) && (s & XFIB_NF_SRC_LEGACY) ? ", " : "",
		 s & XFIB_NF_SRC_LEGACY ? "iptables-legacy" : "",
		 s & XFIB_NF_SRC_ERROR ? "unreadable" : "");
}

void nf_status_read(struct xfib_fwd_bpf *skel, struct status *st)
{
	int fd = bpf_map__fd(skel->maps.xfib_nf_ports);
	__u32 key, next;
	bool first = true;

	st->nf_nports = 0;
	for (; st->nf_nports < sizeof(st->nf_port) / sizeof(st->nf_port[0]) &&
	       !bpf_map_get_next_key(fd, first ? NULL : &key, &next); key = next) {
		first = false;
		if (bpf_map_lookup_elem(fd, &next, &st->nf_port_dir[st->nf_nports]))
			continue;
		st->nf_port[st->nf_nports++] = next;
	}
}

static const char *port_dir_name(__u32 d)
{
	return d == (XFIB_NF_PORT_IN | XFIB_NF_PORT_OUT) ? "ingress, egress" :
	       d & XFIB_NF_PORT_IN ? "ingress" : "egress";
}

void nf_status_text(const struct status *st)
{
	char when[32] = "never", src[64];
	time_t t = st->nf[0].checked;
	__u32 fam;

	if (!t) {
		printf("netfilter:   not checked yet\n");
		return;
	}
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", localtime(&t));
	printf("netfilter:   --netfilter=%s, checked %s\n", option_name(st->nf[0].option),
	       when);
	for (fam = 0; fam < XFIB_FAMILIES; fam++) {
		const struct xfib_nf_info *in = &st->nf[fam];

		sources_text(in->sources, src, sizeof(src));
		printf("             %s: %s", fam_name(fam), mode_text(in));
		if (in->sources & (XFIB_NF_SRC_NFT | XFIB_NF_SRC_LEGACY))
			printf(" (rules: %s, %u chain%s)", src, in->chains,
			       in->chains == 1 ? "" : "s");
		else if (in->sources & XFIB_NF_SRC_ERROR)
			printf(" (rules: %s)", src);
		else
			printf(" (no rules on the forward path)");
		if (in->why[0])
			printf(": %.*s", (int)sizeof(in->why), in->why);
		printf("\n");
		if (in->mode == XFIB_NF_GATE || in->learned || in->learn_errors)
			printf("                   %llu flows prepared for XDP, %llu failed; %llu rule changes\n",
			       (unsigned long long)in->learned,
			       (unsigned long long)in->learn_errors,
			       (unsigned long long)in->changes);
	}
	if (st->nf_nports) {
		char name[IF_NAMESIZE];
		unsigned int i;

		printf("             ports with ingress/egress rules, their packets to the kernel:");
		for (i = 0; i < st->nf_nports; i++)
			printf("%s %s (%s)", i ? "," : "", dev_str(st->nf_port[i], name),
			       port_dir_name(st->nf_port_dir[i]));
		printf("\n");
	}
}

static json_object *nf_ports_json(const struct status *st)
{
	json_object *a = json_object_new_array();
	char name[IF_NAMESIZE];
	unsigned int i;

	for (i = 0; a && i < st->nf_nports; i++) {
		json_object *p = json_object_new_object();

		js_set(p, "name", js_str(dev_str(st->nf_port[i], name)));
		js_set(p, "ifindex", js_u64(st->nf_port[i]));
		js_set(p, "ingress", js_bool(st->nf_port_dir[i] & XFIB_NF_PORT_IN));
		js_set(p, "egress", js_bool(st->nf_port_dir[i] & XFIB_NF_PORT_OUT));
		json_object_array_add(a, p);
	}
	return a;
}

json_object *nf_status_json(const struct status *st)
{
	json_object *o = json_object_new_object();
	__u32 fam;

	js_set(o, "option", js_str(option_name(st->nf[0].option)));
	js_set(o, "checked", js_u64(st->nf[0].checked));
	for (fam = 0; fam < XFIB_FAMILIES; fam++) {
		const struct xfib_nf_info *in = &st->nf[fam];
		json_object *f = json_object_new_object(), *src = json_object_new_array();
		char why[XFIB_NF_WHY_MAX + 1];

		snprintf(why, sizeof(why), "%.*s", (int)sizeof(in->why), in->why);
		if (src && (in->sources & XFIB_NF_SRC_NFT))
			json_object_array_add(src, js_str("nftables"));
		if (src && (in->sources & XFIB_NF_SRC_LEGACY))
			json_object_array_add(src, js_str("iptables-legacy"));
		if (src && (in->sources & XFIB_NF_SRC_ERROR))
			json_object_array_add(src, js_str("unreadable"));
		js_set(f, "mode", js_str(nf_mode_name(in->mode)));
		js_set(f, "rules", js_bool(in->sources != 0));
		js_set(f, "sources", src);
		js_set(f, "chains", js_u64(in->chains));
		js_set(f, "reason", js_str(why));
		js_set(f, "changes", js_u64(in->changes));
		js_set(f, "flows_prepared", js_u64(in->learned));
		js_set(f, "prepare_errors", js_u64(in->learn_errors));
		js_set(o, fam_name(fam), f);
	}
	js_set(o, "ports", nf_ports_json(st));
	return o;
}

void nf_status_prom(const struct status *st)
{
	__u32 fam;

	printf("# HELP xfib_netfilter_mode_info What the dataplane does while the host's netfilter forward path has rules (forward, gate: established flows only, pass: all to the kernel).\n"
	       "# TYPE xfib_netfilter_mode_info gauge\n");
	for (fam = 0; fam < XFIB_FAMILIES; fam++)
		printf("xfib_netfilter_mode_info{family=\"%s\",mode=\"%s\"} 1\n", fam_name(fam),
		       nf_mode_name(st->nf[fam].mode));
	printf("# HELP xfib_netfilter_flows_prepared_total Flows xfibd prepared for the conntrack gate's fast path.\n"
	       "# TYPE xfib_netfilter_flows_prepared_total counter\n");
	for (fam = 0; fam < XFIB_FAMILIES; fam++)
		printf("xfib_netfilter_flows_prepared_total{family=\"%s\"} %llu\n", fam_name(fam),
		       (unsigned long long)st->nf[fam].learned);
}
