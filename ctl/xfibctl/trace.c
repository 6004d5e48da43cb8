// SPDX-License-Identifier: GPL-2.0-only
/*
 * xfibctl trace: the dataplane's decision for each packet that matches a
 * filter, live (include/xfib/trace.h has the program's side). The filter
 * and the sampling run in the program, so a busy router sends only what
 * was asked for; here each event is completed with names and the kernel
 * route its destination matches, and printed as a line or a JSON object.
 * One trace at a time per router: the filter is one map entry.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "output.h"
#include "verify.h"
#include "xfib/trace.h" /* its families are AF_INET, AF_INET6 */
#include "xfibctl.h"

struct tracer {
	struct ctl *c;
	struct xfib_fwd_bpf *skel;
	double mono_to_real;	/* CLOCK_REALTIME - CLOCK_MONOTONIC, seconds */
	unsigned long events;
	bool draining;		/* events of an earlier trace: dropped */
};

static volatile sig_atomic_t trace_stop;

static void trace_on_signal(int sig)
{
	trace_stop = 1;
}

/* ---- options ------------------------------------------------------------------ */

/* "198.18.0.0/15", "2001:db8::/32" or an address (a host prefix). */
int parse_prefix(const char *s, int *fam, __u8 *addr, __u8 *plen)
{
	char buf[INET6_ADDRSTRLEN + 8], *slash, *end;
	unsigned long len;
	int bits, i;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	slash = strchr(buf, '/');
	if (slash)
		*slash = 0;
	memset(addr, 0, 16);
	if (inet_pton(AF_INET, buf, addr) == 1)
		*fam = XFIB_V4;
	else if (inet_pton(AF_INET6, buf, addr) == 1)
		*fam = XFIB_V6;
	else
		return -EINVAL;
	bits = *fam == XFIB_V4 ? 32 : 128;
	len = bits;
	if (slash) {
		errno = 0;
		len = strtoul(slash + 1, &end, 10);
		if (!slash[1] || *end || errno || len > (unsigned long)bits)
			return -EINVAL;
	}
	/* Host bits off, so the program compares whole bytes. */
	for (i = 0; i < 16; i++) {
		int keep = (int)len - 8 * i;

		if (keep <= 0)
			addr[i] = 0;
		else if (keep < 8)
			addr[i] &= 0xff00 >> keep;
	}
	*plen = (__u8)len;
	return 0;
}

/* "pass_ttl,drop": reasons by name, or every reason of a kind by its
 * name's first word (forwarded, drop, pass). */
int parse_reasons(const char *s, __u64 *mask)
{
	char *dup = strdup(s), *tok, *save = NULL;
	int err = 0;
	__u32 r;

	if (!dup)
		return -ENOMEM;
	*mask = 0;
	for (tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		size_t len = strlen(tok);
		__u64 m = 0;

		for (r = 0; r < XFIB_REASON_COUNT; r++) {
			const char *n = reason_name(r);

			if (!strcmp(n, tok) || (!strncmp(n, tok, len) && n[len] == '_'))
				m |= 1ull << r;
		}
		if (!m) {
			err = -EINVAL;
			break;
		}
		*mask |= m;
	}
	free(dup);
	return err;
}

/* The prefixes and --family name one family. */
int trace_check(struct ctl *c, int argc, char **argv)
{
	int fam = c->fam;

	if (c->src_fam >= 0 && c->dst_fam >= 0 && c->src_fam != c->dst_fam) {
		err_cmd("--src and --dst are of different families");
		return -EINVAL;
	}
	if (c->src_fam >= 0 && fam >= 0 && c->src_fam != fam) {
		err_cmd("--src is not of --family %s", fam_name(fam));
		return -EINVAL;
	}
	if (c->dst_fam >= 0 && fam >= 0 && c->dst_fam != fam) {
		err_cmd("--dst is not of --family %s", fam_name(fam));
		return -EINVAL;
	}
	/* A prefix implies its family (and never matches a non-IP frame). */
	if (fam < 0)
		c->fam = c->src_fam >= 0 ? c->src_fam : c->dst_fam;
	return 0;
}

/* ---- one event ---------------------------------------------------------------- */

static void proto_str(__u8 p, char *buf, size_t len)
{
	static const char *const names[256] = {
		[1] = "icmp", [6] = "tcp", [17] = "udp", [58] = "icmp6",
	};

	if (names[p])
		snprintf(buf, len, "%s", names[p]);
	else
		snprintf(buf, len, "proto %u", p);
}

static const char *action_of(__u32 reason)
{
	if (reason_is_fwd(reason))
		return "forward";
	return reason_is_drop(reason) ? "drop" : "pass";
}

/* What trace shows of one event, names resolved. */
struct trace_view {
	const struct xfib_trace_event *e;
	double time;
	char in[IF_NAMESIZE], out[IF_NAMESIZE];
	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];
	char proto[16], dmac[18], smac[18];
	char route[INET6_ADDRSTRLEN + 8]; /* "" if none */
	char nexthop[128];		  /* "" if none */
};

static void trace_view_fill(struct tracer *t, const struct xfib_trace_event *e,
			    struct trace_view *v)
{
	int af = e->af == AF_INET ? AF_INET : AF_INET6;
	struct xfib_nexthop nh;
	struct kroute kr;

	memset(v, 0, sizeof(*v));
	v->e = e;
	v->time = e->ts / 1e9 + t->mono_to_real;
	dev_str(e->in_ifindex, v->in);
	if (e->out_ifindex)
		dev_str(e->out_ifindex, v->out);
	if (e->af) {
		addr_str(af, e->saddr, v->src, sizeof(v->src));
		addr_str(af, e->daddr, v->dst, sizeof(v->dst));
		proto_str(e->proto, v->proto, sizeof(v->proto));
	}
	mac_str(e->dmac, v->dmac, sizeof(v->dmac));
	mac_str(e->smac, v->smac, sizeof(v->smac));
	/* The route the lookup matched, as the kernel has it now: xfib's
	 * tables are the kernel's, compiled. */
	if (e->af && e->nh_idx &&
	    !kroute_fibmatch(af_fam(af), e->daddr, &kr) && !kr.err) {
		char a[INET6_ADDRSTRLEN];

		snprintf(v->route, sizeof(v->route), "%s/%u",
			 addr_str(af, kr.dst, a, sizeof(a)), kr.plen);
	}
	if (e->nh_idx &&
	    !bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.xfib_nexthops),
				 &e->nh_idx, &nh))
		nexthop_str(&nh, e->nh_idx, v->nexthop, sizeof(v->nexthop));
}

static void trace_text(const struct trace_view *v)
{
	const struct xfib_trace_event *e = v->e;
	time_t s = (time_t)v->time;
	char when[16];

	strftime(when, sizeof(when), "%H:%M:%S", localtime(&s));
	printf("%s.%06d %s ", when, (int)((v->time - s) * 1e6), v->in);
	if (!e->af)
		printf("ethertype 0x%04x", e->ethertype);
	else if (e->sport || e->dport)
		printf("%s %s %s%s%s:%u > %s%s%s:%u", e->af == AF_INET ? "ipv4" : "ipv6",
		       v->proto, e->af == AF_INET6 ? "[" : "", v->src,
		       e->af == AF_INET6 ? "]" : "", e->sport,
		       e->af == AF_INET6 ? "[" : "", v->dst,
		       e->af == AF_INET6 ? "]" : "", e->dport);
	else
		printf("%s %s %s > %s", e->af == AF_INET ? "ipv4" : "ipv6",
		       v->proto, v->src, v->dst);
	printf(" len %u", e->len);
	if (e->af)
		printf(" ttl %u", e->ttl);
	printf(": %s %s", action_of(e->reason), reason_name(e->reason));
	if (*v->route)
		printf(", route %s", v->route);
	if (*v->nexthop)
		printf(", %s", v->nexthop);
	if (reason_is_fwd(e->reason))
		printf(", out %s %s > %s", v->out, v->smac, v->dmac);
	else if (e->out_ifindex)
		printf(", egress %s", v->out);
	printf("\n");
}

static json_object *trace_json(const struct trace_view *v)
{
	const struct xfib_trace_event *e = v->e;
	json_object *o = json_object_new_object();

	js_set(o, "time", js_fixed(v->time, 6));
	js_set(o, "ifname", js_str(v->in));
	js_set(o, "ifindex", js_u64(e->in_ifindex));
	js_set(o, "len", js_u64(e->len));
	js_set(o, "ethertype", js_u64(e->ethertype));
	if (e->af) {
		js_set(o, "family", js_str(e->af == AF_INET ? "ipv4" : "ipv6"));
		js_set(o, "src", js_str(v->src));
		js_set(o, "dst", js_str(v->dst));
		js_set(o, "protocol", js_u64(e->proto));
		js_set(o, "ttl", js_u64(e->ttl));
		if (e->sport || e->dport) {
			js_set(o, "sport", js_u64(e->sport));
			js_set(o, "dport", js_u64(e->dport));
		}
	}
	js_set(o, "action", js_str(action_of(e->reason)));
	js_set(o, "reason", js_str(reason_name(e->reason)));
	js_set(o, "why", js_str(reason_help(e->reason)));
	js_set(o, "route", *v->route ? js_str(v->route) : NULL);
	js_set(o, "nexthop", e->nh_idx ? js_u64(e->nh_idx) : NULL);
	js_set(o, "egress", e->out_ifindex ? js_str(v->out) : NULL);
	js_set(o, "egress_ifindex", e->out_ifindex ? js_u64(e->out_ifindex) : NULL);
	if (reason_is_fwd(e->reason)) {
		js_set(o, "src_mac", js_str(v->smac));
		js_set(o, "dst_mac", js_str(v->dmac));
	}
	return o;
}

static int trace_event(void *ctx, void *data, size_t size)
{
	struct tracer *t = ctx;
	struct trace_view v;
	int err = 0;

	if (t->draining || size < sizeof(struct xfib_trace_event))
		return 0;
	if (trace_stop || (t->c->trace_max && t->events >= t->c->trace_max))
		return 0;
	trace_view_fill(t, data, &v);
	if (t->c->json)
		err = out_json(trace_json(&v));
	else
		trace_text(&v);
	fflush(stdout);
	if (++t->events == t->c->trace_max)
		trace_stop = 1;
	return err;
}

/* ---- the filter in the map ------------------------------------------------------ */

/* Takes the router's trace: refused while another xfibctl that is alive
 * holds it. */
static int trace_claim(struct xfib_fwd_bpf *skel)
{
	int fd = bpf_map__fd(skel->maps.xfib_trace_cfg);
	struct xfib_trace_cfg cur;
	__u32 zero = 0;

	if (bpf_map_lookup_elem(fd, &zero, &cur))
		return -errno;
	if (cur.on && cur.owner && cur.owner != (__u32)getpid() &&
	    (!kill((pid_t)cur.owner, 0) || errno == EPERM)) {
		err_cmd("another trace runs on this router (pid %u)", cur.owner);
		return -EBUSY;
	}
	return 0;
}

static int trace_set(struct xfib_fwd_bpf *skel, const struct xfib_trace_cfg *cfg)
{
	__u32 zero = 0;

	if (bpf_map_update_elem(bpf_map__fd(skel->maps.xfib_trace_cfg), &zero, cfg,
				BPF_ANY))
		return -errno;
	return 0;
}

static void trace_cfg_fill(const struct ctl *c, struct xfib_trace_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->on = 1;
	cfg->owner = (__u32)getpid();
	cfg->ifindex = c->iif;
	if (c->fam >= 0)
		cfg->af = c->fam == XFIB_V4 ? AF_INET : AF_INET6;
	cfg->src_len = c->src_len;
	cfg->dst_len = c->dst_len;
	memcpy(cfg->src, c->src, 16);
	memcpy(cfg->dst, c->dst, 16);
	cfg->reasons = c->reasons;
	cfg->rate = c->rate;
	cfg->max = c->trace_max;
}

static void trace_summary(struct tracer *t)
{
	struct xfib_trace_state st = {};
	__u32 zero = 0;

	bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.xfib_trace_state), &zero, &st);
	fprintf(stderr, "%lu packets traced, %llu left out by sampling, %llu lost (ring full)\n",
		t->events, (unsigned long long)st.sampled, (unsigned long long)st.lost);
}

static int trace_run(struct tracer *t, struct ring_buffer *rb)
{
	struct xfib_trace_state st0 = {};
	struct xfib_trace_cfg cfg;
	__u32 zero = 0;
	int err;

	/* Events an earlier trace left in the ring are not ours. */
	t->draining = true;
	ring_buffer__consume(rb);
	t->draining = false;
	if (bpf_map_update_elem(bpf_map__fd(t->skel->maps.xfib_trace_state), &zero,
				&st0, BPF_ANY))
		return -errno;
	trace_cfg_fill(t->c, &cfg);
	err = trace_set(t->skel, &cfg);
	if (err)
		return err;
	while (!trace_stop) {
		err = ring_buffer__poll(rb, 200);
		if (err == -EINTR) {
			err = 0;
			continue;
		}
		if (err < 0)
			break;
		err = 0;
	}
	memset(&cfg, 0, sizeof(cfg));
	trace_set(t->skel, &cfg);
	/* What the program wrote before it saw the filter go. */
	if (!err)
		ring_buffer__consume(rb);
	return err;
}

int cmd_trace(struct ctl *c, int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = trace_on_signal };
	struct tracer t = { .c = c };
	struct ring_buffer *rb = NULL;
	int err;

	err = resolve_ifname("--dev", c->dev_name, &c->iif);
	err = err ?: open_dataplane(c, 0, &t.skel);
	if (err)
		return err;
	err = trace_claim(t.skel);
	if (err)
		goto out;
	rb = ring_buffer__new(bpf_map__fd(t.skel->maps.xfib_trace_ring), trace_event,
			      &t, NULL);
	if (!rb) {
		err = -errno;
		err_cmd("ring buffer: %s", strerror(-err));
		goto out;
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	/* A reader that went away (head, a closed pipe) ends the trace too. */
	sigaction(SIGPIPE, &sa, NULL);
	t.mono_to_real = clock_s(CLOCK_REALTIME) - clock_s(CLOCK_MONOTONIC);
	err = trace_run(&t, rb);
	if (err)
		err_cmd("%s", strerror(-err));
	trace_summary(&t);
out:
	ring_buffer__free(rb);
	xfib_fwd_bpf__destroy(t.skel);
	return err;
}
