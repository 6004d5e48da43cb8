// SPDX-License-Identifier: GPL-2.0-only
/*
 * From the host's netfilter rules to each family's mode (nfgate.h). The
 * rules are read when they change (nftables notifications) or may have
 * (every second: legacy iptables, which has no notifications; the
 * sysctls; devices that appeared, for device-bound chains), checked
 * (nfcheck.c), and the outcome published in xfib_nf_conf, xfib_nf_ports
 * and xfib_nf_info. A failure to read is taken as rules the gate cannot
 * decide: the family goes to the kernel.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <libmnl/libmnl.h>

#include "ctnl.h"
#include "log.h"
#include "pin.h"
#include "ipt.h"
#include "nft.h"
#include "nfgate.h"

#define TICK_MS 1000
#define READ_TRIES 3

static const char *const option_names[] = {
	[XFIB_NF_OPT_CONNTRACK] = "conntrack",
	[XFIB_NF_OPT_PASS] = "pass",
	[XFIB_NF_OPT_IGNORE] = "ignore",
};

int nfgate_option(const char *s)
{
	unsigned int i;

	for (i = 0; i < sizeof(option_names) / sizeof(option_names[0]); i++)
		if (!strcmp(s, option_names[i]))
			return i;
	return -1;
}

static const char *mode_word(int mode)
{
	return mode == XFIB_NF_GATE ? "conntrack gate" :
	       mode == XFIB_NF_PASS ? "all to the kernel" : "forward";
}

/* ---- reading ------------------------------------------------------------------ */

static __u32 sysctl_u32(const char *name, __u32 dflt)
{
	char path[128];
	unsigned long v;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/sys/net/netfilter/%s", name);
	f = fopen(path, "re");
	if (!f)
		return dflt;
	if (fscanf(f, "%lu", &v) != 1 || v > 0xffffffffUL)
		v = dflt;
	fclose(f);
	return v;
}

static void read_sysctls(struct nf_sysctls *s)
{
	static bool warned;

	if (!warned && access("/proc/sys/net/netfilter/nf_conntrack_udp_timeout", R_OK)) {
		pr_warn("cannot read conntrack's sysctls in /proc/sys/net/netfilter: using the kernel's default timeouts");
		warned = true;
	}
	/* The kernel's defaults where a sysctl is missing. */
	s->tcp_s = sysctl_u32("nf_conntrack_tcp_timeout_established", 432000);
	s->udp_s = sysctl_u32("nf_conntrack_udp_timeout", 30);
	s->udp_stream_s = sysctl_u32("nf_conntrack_udp_timeout_stream", 120);
	s->icmp_s = sysctl_u32("nf_conntrack_icmp_timeout", 30);
	s->icmpv6_s = sysctl_u32("nf_conntrack_icmpv6_timeout", 30);
	s->acct = sysctl_u32("nf_conntrack_acct", 0) != 0;
}

static void read_nft(struct nfgate *g)
{
	int err = nft_read(&g->nft);

	/* No nf_tables in this kernel: no nftables rules. */
	if (err == -EOPNOTSUPP || err == -EPROTONOSUPPORT)
		err = 0;
	if (err != g->nft_err)
		pr_warn("%s nftables ruleset%s%s", err ? "cannot read the" : "read the",
			err ? ": " : " again", err ? strerror(-err) : "");
	g->nft_err = err;
	g->nft_dirty = false;
}

/* Legacy tables, read again only when their hash changed. */
static void read_ipt(struct nfgate *g)
{
	struct nfx_ruleset rs = { 0 };
	int err = 0, i;
	__u64 hash = 0;

	for (i = 0; i < READ_TRIES; i++) {
		nfx_ruleset_free(&rs);
		err = ipt_read(&rs, &hash);
		if (err != -EAGAIN)
			break;
	}
	if (err != g->ipt_err)
		pr_warn("%s legacy iptables%s%s", err ? "cannot read" : "read",
			err ? ": " : " again", err ? strerror(-err) : "");
	g->ipt_err = err;
	if (err || hash != g->ipt_hash) {
		nfx_ruleset_free(&g->ipt);
		g->ipt = rs;
		g->ipt_hash = err ? 0 : hash;
		return;
	}
	nfx_ruleset_free(&rs);
}

/* A port whose ingress or egress rules the check found (nfx_port_fn). */
static void add_port(const char *dev, unsigned int dir, void *ctx)
{
	struct nfgate *g = ctx;
	__u32 ifindex = if_nametoindex(dev), d;
	unsigned int i;

	if (!ifindex)
		return; /* no such device here (yet): the next check sees it */
	d = (dir & NFX_PORT_IN ? XFIB_NF_PORT_IN : 0) |
	    (dir & NFX_PORT_OUT ? XFIB_NF_PORT_OUT : 0);
	for (i = 0; i < g->nports; i++)
		if (g->port_ifindex[i] == ifindex) {
			g->port_dir[i] |= d;
			return;
		}
	if (g->nports == XFIB_NF_PORTS_MAX) {
		pr_warn("more than %d ports with netfilter ingress/egress rules: %s left out",
			XFIB_NF_PORTS_MAX, dev);
		return;
	}
	g->port_ifindex[g->nports] = ifindex;
	g->port_dir[g->nports++] = d;
}

/* xfib_nf_ports := the ports found; entries first, then the flag in
 * xfib_nf_conf that makes the dataplane look at them. */
static int sync_ports(struct nfgate *g)
{
	int fd = bpf_map__fd(g->skel->maps.xfib_nf_ports), err = 0;
	__u32 key, next, *gone = NULL, *p;
	unsigned int i, ngone = 0;
	bool first = true;

	for (; !bpf_map_get_next_key(fd, first ? NULL : &key, &next); key = next) {
		first = false;
		for (i = 0; i < g->nports && g->port_ifindex[i] != next; i++)
			;
		if (i < g->nports)
			continue;
		p = realloc(gone, (ngone + 1) * sizeof(*gone));
		if (!p)
			break;
		gone = p;
		gone[ngone++] = next;
	}
	for (i = 0; i < ngone; i++)
		bpf_map_delete_elem(fd, &gone[i]);
	free(gone);
	for (i = 0; i < g->nports; i++)
		if (bpf_map_update_elem(fd, &g->port_ifindex[i], &g->port_dir[i], BPF_ANY))
			err = -errno;
	return err;
}

/* ---- deciding ------------------------------------------------------------------ */

static void merge(struct nfx_result *a, const struct nfx_result *b)
{
	if (b->rules && !b->gate_ok && !a->why[0])
		memcpy(a->why, b->why, sizeof(a->why));
	a->rules |= b->rules;
	a->gate_ok &= b->gate_ok || !b->rules;
	a->nat |= b->nat;
	a->ct_used |= b->ct_used;
	a->chains += b->chains;
}

static void why(struct xfib_nf_info *in, const char *fmt, const char *arg)
{
	snprintf(in->why, sizeof(in->why), fmt, arg);
}

/* The mode of family fam from what was read. */
static void decide(struct nfgate *g, unsigned int fam, struct xfib_nf_info *in)
{
	struct nfx_result r, l;

	nfx_check(&g->nft, fam, add_port, g, &r);
	nfx_check(&g->ipt, fam, add_port, g, &l);
	g->marks[fam] = g->nft_err || g->ipt_err ||
			nfx_marks_before_routing(&g->nft, fam) ||
			nfx_marks_before_routing(&g->ipt, fam);
	g->bridge_chains = g->option != XFIB_NF_OPT_IGNORE &&
			   (g->nft_err || nfx_bridge_chains(&g->nft));
	in->sources = (r.rules ? XFIB_NF_SRC_NFT : 0) | (l.rules ? XFIB_NF_SRC_LEGACY : 0);
	merge(&r, &l);
	in->chains = r.chains;
	in->option = g->option;
	in->why[0] = '\0';
	if (g->nft_err || g->ipt_err) {
		in->sources |= XFIB_NF_SRC_ERROR;
		r.rules = true;
		r.gate_ok = false;
		why(in, "cannot read the %s", g->nft_err ? "nftables ruleset" :
						      "legacy iptables tables");
	}
	if (r.rules && g->sys.acct)
		in->sources |= XFIB_NF_SRC_ACCT;
	if (g->option == XFIB_NF_OPT_IGNORE || !r.rules) {
		in->mode = XFIB_NF_OFF;
	} else if (g->option == XFIB_NF_OPT_PASS) {
		in->mode = XFIB_NF_PASS;
		why(in, "%s", "--netfilter=pass");
	} else if (!r.gate_ok) {
		in->mode = XFIB_NF_PASS;
		if (!in->why[0])
			memcpy(in->why, r.why, sizeof(in->why));
	} else if (g->sys.acct) {
		in->mode = XFIB_NF_PASS;
		why(in, "%s", "nf_conntrack_acct=1: conntrack counts every packet");
	} else if (!r.nat && !r.ct_used) {
		/* Every rule accepts every packet unchanged (counters). */
		in->mode = XFIB_NF_OFF;
		why(in, "%s", "the rules accept every packet unchanged");
	} else {
		in->mode = XFIB_NF_GATE;
	}
}

static __u32 ms(__u32 s)
{
	return s > 0xffffffffu / 1000 ? 0xffffffffu : s * 1000;
}

static int publish(struct nfgate *g)
{
	int fd_conf = bpf_map__fd(g->skel->maps.xfib_nf_conf);
	int fd_info = bpf_map__fd(g->skel->maps.xfib_nf_info);
	struct xfib_nf_info in[XFIB_FAMILIES];
	unsigned int nports = g->nports;
	__u32 fam;
	int err;

	g->nports = 0;
	for (fam = 0; fam < XFIB_FAMILIES; fam++) {
		in[fam] = g->info[fam];
		decide(g, fam, &in[fam]);
	}
	if (g->nports != nports || (!g->published && g->nports))
		pr_info("netfilter: %u port%s with ingress or egress rules: their packets to the kernel",
			g->nports, g->nports == 1 ? "" : "s");
	err = sync_ports(g);
	for (fam = 0; fam < XFIB_FAMILIES; fam++) {
		struct xfib_nf_conf c = {
			.mode = in[fam].mode,
			.ports = g->nports > 0,
			.tcp_ms = ms(g->sys.tcp_s),
			.udp_ms = ms(g->sys.udp_s),
			.udp_stream_ms = ms(g->sys.udp_stream_s),
		};

		in[fam].ports = g->nports > 255 ? 255 : g->nports;
		in[fam].checked = time(NULL);
		if (memcmp(&c, &g->conf[fam], sizeof(c)) || !g->published) {
			if (bpf_map_update_elem(fd_conf, &fam, &c, BPF_ANY))
				err = -errno;
			if (!g->published || c.mode != g->conf[fam].mode ||
			    strcmp(in[fam].why, g->info[fam].why))
				pr_info("netfilter %s: %s%s%s", fam ? "ipv6" : "ipv4",
					mode_word(c.mode), in[fam].why[0] ? ": " : "",
					in[fam].why);
			if (g->published && (c.mode != g->conf[fam].mode ||
					     in[fam].chains != g->info[fam].chains))
				in[fam].changes++;
			g->conf[fam] = c;
		}
		if (bpf_map_update_elem(fd_info, &fam, &in[fam], BPF_ANY))
			err = -errno;
		g->info[fam] = in[fam];
	}
	g->published = true;
	return err;
}

/* ---- the daemon's hooks ------------------------------------------------------------ */

static int on_event(void *ctx, void *data, size_t len)
{
	if (len >= sizeof(struct xfib_ct_event))
		ctlearn_event(ctx, data);
	return 0;
}

int nfgate_init(struct nfgate *g, struct xfib_fwd_bpf *skel, int option)
{
	int err;

	memset(g, 0, sizeof(*g));
	g->skel = skel;
	g->option = option;
	/* Subscribe before reading: a change during the read is then seen
	 * at least once, as a notification. */
	err = nft_notify_open(&g->notify);
	if (err && err != -EOPNOTSUPP && err != -EPROTONOSUPPORT) {
		pr_warn("nftables notifications: %s", strerror(-err));
		return err;
	}
	err = ctnl_open(&g->ct);
	if (err) {
		pr_warn("ctnetlink: %s", strerror(-err));
		return err;
	}
	g->rb = ring_buffer__new(bpf_map__fd(skel->maps.xfib_ct_events), on_event, g, NULL);
	if (!g->rb) {
		err = -errno;
		pr_warn("xfib_ct_events: %s", strerror(-err));
		return err;
	}
	ctlearn_reset(g);
	read_sysctls(&g->sys);
	read_nft(g);
	read_ipt(g);
	return publish(g);
}

void nfgate_fini(struct nfgate *g)
{
	ring_buffer__free(g->rb);
	ctnl_close(g->ct);
	if (g->notify)
		mnl_socket_close(g->notify);
	nfx_ruleset_free(&g->nft);
	nfx_ruleset_free(&g->ipt);
}

int nfgate_fds(struct nfgate *g, struct pollfd *pfd)
{
	int n = 0;

	if (g->notify)
		pfd[n++] = (struct pollfd){ .fd = mnl_socket_get_fd(g->notify),
					    .events = POLLIN };
	pfd[n++] = (struct pollfd){ .fd = ring_buffer__epoll_fd(g->rb), .events = POLLIN };
	return n;
}

int nfgate_timeout(struct nfgate *g, __u64 now_ms)
{
	if (g->nft_dirty)
		return 0;
	return g->next_tick_ms > now_ms ? (int)(g->next_tick_ms - now_ms) : 0;
}

void nfgate_run(struct nfgate *g, __u64 now_ms)
{
	bool changed = false;
	int err;

	if (g->notify) {
		err = nft_notify_drain(g->notify);
		if (err > 0)
			g->nft_dirty = true;
		else if (err < 0)
			pr_warn("nftables notifications: %s", strerror(-err));
	}
	if (g->nft_dirty) {
		read_nft(g);
		changed = true;
	}
	ring_buffer__consume(g->rb);
	if (now_ms >= g->next_tick_ms) {
		g->next_tick_ms = now_ms + TICK_MS;
		read_sysctls(&g->sys);
		read_ipt(g);
		ctlearn_tick(g);
		changed = true;
	}
	if (changed && publish(g))
		pr_warn("publishing the netfilter modes failed");
}
