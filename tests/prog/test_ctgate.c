// SPDX-License-Identifier: GPL-2.0-only
/*
 * The conntrack gate (bpf/lib/ctgate.h) with BPF_PROG_TEST_RUN on built
 * frames, against real conntrack entries: the test moves into a fresh
 * network namespace, creates veths (xt0 ingress, xt1 egress), fills the
 * maps with two connected routes, and creates the entries each case needs
 * over ctnetlink (ctl/lib/ctnl.c), in that namespace, where the program's
 * lookups (the ingress device's namespace) find them, and fills
 * xfib_nf_ports for the port cases. Every case checks
 * the verdict, that exactly the expected counter moved by one packet, and
 * a forwarded frame's bytes; some check what the program did to the entry
 * (its timeout) or told xfibd (xfib_ct_events).
 *
 *   198.18.0.0/24        connected on xt1, host 198.18.0.10 resolved
 *   2001:db8:0:1::/64    connected on xt1, host 2001:db8:0:1::10 resolved
 *
 * Frames come from 198.18.200.7 / 2001:db8:ffff::7 on xt0.
 *
 * Exit status: 0 pass, 1 failure, 77 cannot run here (reason on stdout).
 */
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <sys/socket.h>

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/nf_conntrack_tcp.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "xfib/maps.h"
#include "xfib/counters.h"
#include "xfib/netfilter.h"
#include "ctnl.h"
#include "pin.h"
#include "reasons.h"
#include "lease.h"

#define SKIP 77
#define SRC4 "198.18.200.7"
#define DST4 "198.18.0.10"
#define SRC6 "2001:db8:ffff::7"
#define DST6 "2001:db8:0:1::10"
#define NH_CONN XFIB_NH_IDX_FIRST_FREE
#define NB_HOST4 1
#define NB_HOST6 2
/* The flow cache's time in the program this test loads. */
#define CACHE_NS 2000000000ull

#define TH_FIN 0x01
#define TH_SYN 0x02
#define TH_RST 0x04
#define TH_PSH 0x08
#define TH_ACK 0x10
#define TH_URG 0x20

static const __u8 mac_in[ETH_ALEN] = { 0x02, 0, 0, 0, 0x00, 0x01 };
static const __u8 mac_out[ETH_ALEN] = { 0x02, 0, 0, 0, 0x00, 0x02 };
static const __u8 mac_host[ETH_ALEN] = { 0x02, 0, 0, 0, 0x00, 0xaa };
static const __u8 mac_dst[ETH_ALEN] = { 0x02, 0, 0, 0, 0x10, 0x02 };

static struct xfib_fwd_bpf *skel;
static struct mnl_socket *ct;
static struct ring_buffer *rb;
static __u32 if_in, if_out;
static int ncpus, ncases, nfailed, nevents;
static bool quiet; /* the harness's self-check: count and print nothing */
static bool reached[XFIB_REASON_COUNT]; /* a case moved the counter */
static struct xfib_ct_event last_event;

static const char *const reason_name[XFIB_REASON_COUNT] = {
#define XFIB_REASON_NAME(name, str, help) [XFIB_##name] = str,
	XFIB_REASONS(XFIB_REASON_NAME)
#undef XFIB_REASON_NAME
};

static void __attribute__((noreturn, format(printf, 1, 2))) die(const char *fmt, ...)
{
	va_list ap;

	printf("FAIL setup: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	exit(1);
}

static void __attribute__((format(printf, 2, 3))) result(bool ok, const char *fmt, ...)
{
	va_list ap;

	if (quiet)
		return;
	ncases++;
	if (!ok)
		nfailed++;
	printf("%s ", ok ? "ok  " : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

/* ---- frames ------------------------------------------------------------------ */

struct frame {
	__u8 b[256];
	unsigned int len;
};

/* What a case sends: family, protocol and its header fields. */
struct flow {
	int v6;
	__u8 proto;	/* IPPROTO_TCP, _UDP, _ICMP(V6), or another */
	__u16 sport, dport; /* TCP/UDP; ICMP: type and echo id in sport/dport */
	__u8 flags;	/* TCP flags */
	bool reverse;	/* entries only: the other direction */
	const char *src, *dst; /* addresses other than SRC and DST, or NULL */
};

static __u32 sum16(__u32 s, const __u8 *p, size_t n)
{
	for (; n > 1; p += 2, n -= 2)
		s += (__u32)p[0] << 8 | p[1];
	if (n)
		s += (__u32)p[0] << 8;
	return s;
}

static __u16 fold(__u32 s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return ~s & 0xffff;
}

static void put16(__u8 *p, __u16 v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static void addrs(const struct flow *fl, __u8 *src, __u8 *dst)
{
	const char *s = fl->v6 ? SRC6 : SRC4, *d = fl->v6 ? DST6 : DST4;
	int af = fl->v6 ? AF_INET6 : AF_INET;

	if (fl->src)
		s = fl->src;
	if (fl->dst)
		d = fl->dst;
	inet_pton(af, fl->reverse ? d : s, src);
	inet_pton(af, fl->reverse ? s : d, dst);
}

/* The transport header and 16 bytes of payload at l4; its length. */
static unsigned int put_l4(const struct flow *fl, __u8 *l4)
{
	unsigned int n = 16;

	switch (fl->proto) {
	case IPPROTO_TCP:
		put16(l4, fl->sport);
		put16(l4 + 2, fl->dport);
		l4[12] = 5 << 4;
		l4[13] = fl->flags;
		put16(l4 + 14, 64240);
		return 20 + n;
	case IPPROTO_UDP:
		put16(l4, fl->sport);
		put16(l4 + 2, fl->dport);
		put16(l4 + 4, 8 + n);
		return 8 + n;
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		l4[0] = fl->sport; /* type */
		put16(l4 + 4, fl->dport); /* id */
		put16(l4 + 6, 1);
		return 8 + n;
	default:
		return n;
	}
}

/* Ethernet + IP + the flow's transport header, checksums filled. */
static struct frame build(const struct flow *fl)
{
	struct frame f = { 0 };
	__u8 *ip = f.b + ETH_HLEN, *l4;
	unsigned int hl = fl->v6 ? 40 : 20, l4len;
	__u32 ps;
	int ck;

	memcpy(f.b, mac_in, ETH_ALEN);
	memcpy(f.b + ETH_ALEN, mac_host, ETH_ALEN);
	put16(f.b + 12, fl->v6 ? ETH_P_IPV6 : ETH_P_IP);
	l4 = ip + hl;
	l4len = put_l4(fl, l4);
	if (fl->v6) {
		ip[0] = 0x60;
		put16(ip + 4, l4len);
		ip[6] = fl->proto;
		ip[7] = 64;
		addrs(fl, ip + 8, ip + 24);
		ps = sum16(0, ip + 8, 32);
	} else {
		ip[0] = 0x45;
		put16(ip + 2, hl + l4len);
		put16(ip + 6, 0x4000);
		ip[8] = 64;
		ip[9] = fl->proto;
		addrs(fl, ip + 12, ip + 16);
		put16(ip + 10, fold(sum16(0, ip, 20)));
		ps = sum16(0, ip + 12, 8);
	}
	ck = fl->proto == IPPROTO_TCP ? 16 : fl->proto == IPPROTO_UDP ? 6 :
	     fl->proto == IPPROTO_ICMP || fl->proto == IPPROTO_ICMPV6 ? 2 : -1;
	if (ck >= 0) {
		/* ICMPv4 has no pseudo-header. */
		__u32 s = fl->proto == IPPROTO_ICMP ? 0 : ps + fl->proto + l4len;

		put16(l4 + ck, fold(sum16(s, l4, l4len)) ?: 0xffff);
	}
	f.len = ETH_HLEN + hl + l4len;
	return f;
}

/* The frame xfib sends on: MACs rewritten, TTL / hop limit one lower. */
static struct frame forwarded(const struct frame *in, int v6)
{
	struct frame o = *in;
	__u8 *ip = o.b + ETH_HLEN;

	memcpy(o.b, mac_dst, ETH_ALEN);
	memcpy(o.b + ETH_ALEN, mac_out, ETH_ALEN);
	if (v6) {
		ip[7]--;
	} else {
		ip[8]--;
		put16(ip + 10, 0);
		put16(ip + 10, fold(sum16(0, ip, 20)));
	}
	return o;
}

/* ---- maps, entries, running ------------------------------------------------------ */

static void update(struct bpf_map *m, const void *k, const void *v)
{
	if (bpf_map_update_elem(bpf_map__fd(m), k, v, BPF_ANY))
		die("update %s: %s", bpf_map__name(m), strerror(errno));
}

/* The family's mode, and conntrack timeouts: TCP 3600 s, UDP 60/180 s.
 * ports: look the ports up in xfib_nf_ports. */
static void set_mode_ports(int fam, __u8 mode, __u8 ports)
{
	struct xfib_nf_conf c = { .mode = mode, .ports = ports, .tcp_ms = 3600000,
				  .udp_ms = 60000, .udp_stream_ms = 180000 };
	__u32 k = fam;

	update(skel->maps.xfib_nf_conf, &k, &c);
}

static void set_mode(int fam, __u8 mode)
{
	set_mode_ports(fam, mode, 0);
}

static void tuple_of(const struct flow *fl, struct ctnl_tuple *t)
{
	memset(t, 0, sizeof(*t));
	t->family = fl->v6 ? AF_INET6 : AF_INET;
	t->proto = fl->proto;
	addrs(fl, t->src, t->dst);
	if (fl->proto == IPPROTO_ICMP || fl->proto == IPPROTO_ICMPV6) {
		t->icmp_type = fl->sport;
		t->sport = htons(fl->dport);
	} else {
		t->sport = htons(fl->reverse ? fl->dport : fl->sport);
		t->dport = htons(fl->reverse ? fl->sport : fl->dport);
	}
}

/* A conntrack entry with original direction fl. */
static void entry(const struct flow *fl, __u32 status, int tcp_state, bool liberal,
		  __u32 timeout, __u16 zone, const char *snat)
{
	struct ctnl_change c = { .timeout = timeout, .status = status,
				 .tcp_state = tcp_state, .tcp_liberal = liberal,
				 .zone = zone };
	struct ctnl_tuple t;
	__u8 nat[16];
	int err;

	tuple_of(fl, &t);
	if (snat) {
		inet_pton(fl->v6 ? AF_INET6 : AF_INET, snat, nat);
		c.snat = nat;
	}
	err = ctnl_create(ct, &t, &c);
	if (err)
		die("create a conntrack entry: %s", strerror(-err));
}

/* An established, liberal TCP entry with a helper attached. */
static void entry_helper(const struct flow *fl, const char *helper)
{
	struct ctnl_change c = { .timeout = 100, .status = IPS_SEEN_REPLY | IPS_ASSURED,
				 .tcp_state = TCP_CONNTRACK_ESTABLISHED,
				 .tcp_liberal = true, .helper = helper };
	struct ctnl_tuple t;
	int err;

	tuple_of(fl, &t);
	err = ctnl_create(ct, &t, &c);
	if (err)
		die("create a conntrack entry with helper %s: %s", helper, strerror(-err));
}

static __u32 entry_timeout(const struct flow *fl)
{
	struct ctnl_tuple t;
	struct ctnl_entry e;

	tuple_of(fl, &t);
	return ctnl_get(ct, &t, &e) ? 0 : e.timeout;
}

static __u32 entry_status(const struct flow *fl)
{
	struct ctnl_tuple t;
	struct ctnl_entry e;

	tuple_of(fl, &t);
	return ctnl_get(ct, &t, &e) ? 0 : e.status;
}

static int on_event(void *ctx, void *data, size_t len)
{
	if (len >= sizeof(last_event)) {
		memcpy(&last_event, data, sizeof(last_event));
		nevents++;
	}
	return 0;
}

static void stats(struct xfib_counter *sum, bool reset)
{
	struct xfib_counter v[ncpus];
	__u32 k;
	int c;

	for (k = 0; k < XFIB_REASON_COUNT; k++) {
		if (reset) {
			memset(v, 0, sizeof(v));
			update(skel->maps.xfib_stats, &k, v);
			continue;
		}
		if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.xfib_stats), &k, v))
			die("read xfib_stats: %s", strerror(errno));
		sum[k] = (struct xfib_counter){ 0 };
		for (c = 0; c < ncpus; c++)
			sum[k].packets += v[c].packets;
	}
}

static bool reason_forwards(int reason)
{
	return reason == XFIB_FWD_V4 || reason == XFIB_FWD_V6 ||
	       reason == XFIB_FWD_NAT_V4 || reason == XFIB_FWD_NAT_V6;
}

/*
 * Sends frame f once and checks: verdict XDP_REDIRECT with frame want if
 * reason forwards, else XDP_PASS with the frame unchanged; exactly
 * reason's counter moved, by one packet. The events the program sent to
 * xfibd are counted into nevents.
 */
static bool run_want(const char *name, const struct frame *f,
		     const struct frame *want_fwd, int reason)
{
	bool fwd = reason_forwards(reason);
	struct frame want = fwd ? *want_fwd : *f;
	struct xdp_md ctx = { .data_end = f->len, .ingress_ifindex = if_in };
	struct xfib_counter cnt[XFIB_REASON_COUNT];
	__u8 out[256];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f->b, .data_size_in = f->len,
		    .data_out = out, .data_size_out = sizeof(out), .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx), .repeat = 1);
	char why[160] = "";
	__u32 k;

	stats(NULL, true);
	if (bpf_prog_test_run_opts(bpf_program__fd(skel->progs.xfib_fwd), &o))
		snprintf(why, sizeof(why), "test run: %s", strerror(errno));
	else if (o.retval != (fwd ? XDP_REDIRECT : XDP_PASS))
		snprintf(why, sizeof(why), "verdict %u", o.retval);
	else if (o.data_size_out != want.len || memcmp(out, want.b, want.len))
		snprintf(why, sizeof(why), "output frame differs");
	stats(cnt, false);
	for (k = 0; k < XFIB_REASON_COUNT; k++)
		if (!quiet && cnt[k].packets)
			reached[k] = true;
	for (k = 0; k < XFIB_REASON_COUNT && !why[0]; k++)
		if (cnt[k].packets != ((int)k == reason))
			snprintf(why, sizeof(why), "counter %s moved by %llu, expected %s",
				 reason_name[k], (unsigned long long)cnt[k].packets,
				 reason_name[reason]);
	ring_buffer__consume(rb);
	result(!why[0], "%s%s%s", name, why[0] ? ": " : "", why);
	return !why[0];
}

/* The same, the frame forwarded as is (MACs, TTL). */
static bool run(const char *name, const struct frame *f, int v6, int reason)
{
	struct frame want = forwarded(f, v6);

	return run_want(name, f, &want, reason);
}

static bool send_flow(const char *name, const struct flow *fl, int reason)
{
	struct frame f = build(fl);

	return run(name, &f, fl->v6, reason);
}

/* ---- setup -------------------------------------------------------------------- */

static void sh(const char *cmd)
{
	if (system(cmd)) {
		printf("SKIP: '%s' failed\n", cmd);
		exit(SKIP);
	}
}

static void put_neigh(__u32 idx, int af, const char *addr)
{
	struct xfib_neigh n = { .state = XFIB_NEIGH_VALID, .family = af, .ifindex = if_out };
	struct xfib_neigh_key k = { .ifindex = if_out, .family = af };

	memcpy(n.dmac, mac_dst, ETH_ALEN);
	memcpy(n.smac, mac_out, ETH_ALEN);
	inet_pton(af, addr, n.addr);
	memcpy(k.addr, n.addr, sizeof(k.addr));
	update(skel->maps.xfib_neighs, &idx, &n);
	update(skel->maps.xfib_neigh_hosts, &k, &idx);
}

static void fill_maps(void)
{
	struct xfib_bs4_range r4[2] = { { 0, 0 }, { 0xc6120000, NH_CONN } };
	struct xfib_bs6_range r6[2] = { { 0, 0, 0, 0 }, { 0x20010db800000001ull, 0, NH_CONN, 0 } };
	struct xfib_iface in = { .flags = XFIB_IF_UP | XFIB_IF_FWD4 | XFIB_IF_FWD6,
				 .mtu = 1500, .ifindex = if_in };
	struct xfib_iface out = in;
	struct xfib_nexthop nh = { .kind = XFIB_NH_CONNECTED, .ifindex = if_out };
	struct xfib_active a4 = { .algo = XFIB_ALGO_BSEARCH4, .log2n = 1 };
	struct xfib_active a6 = { .algo = XFIB_ALGO_BSEARCH6, .log2n = 1 };
	struct bpf_devmap_val tx = { .ifindex = if_out };
	__u32 k;

	/* Two ranges each: 0.0.0.0 (none), 198.18.0.0.. (connected); the
	 * IPv4 one ends at 198.18.255.255 for this test's purposes. */
	for (k = 0; k < 2; k++) {
		update(skel->maps.xfib_bs4, &k, &r4[k]);
		update(skel->maps.xfib_bs6, &k, &r6[k]);
	}
	memcpy(in.mac, mac_in, ETH_ALEN);
	out.ifindex = if_out;
	memcpy(out.mac, mac_out, ETH_ALEN);
	update(skel->maps.xfib_ifaces, &if_in,
	       &(struct xfib_port){ .live = 1, .copy[1] = in });
	update(skel->maps.xfib_ifaces, &if_out,
	       &(struct xfib_port){ .live = 1, .copy[1] = out });
	update(skel->maps.xfib_tx_ports, &if_out, &tx);
	k = NH_CONN;
	update(skel->maps.xfib_nexthops, &k, &nh);
	put_neigh(NB_HOST4, AF_INET, DST4);
	put_neigh(NB_HOST6, AF_INET6, DST6);
	k = XFIB_V4;
	update(skel->maps.xfib_active, &k, &a4);
	k = XFIB_V6;
	update(skel->maps.xfib_active, &k, &a6);
	/* xfibd's word, for the whole test. */
	k = 0;
	update(skel->maps.xfib_lease, &k, &(struct xfib_lease){
		.until = xfib_lease_clock() + 3600 * 1000000000ull });
}

/* Whether this kernel's verifier takes the UDP stream time read
 * (bpf/lib/ctgate.h: Linux 6.1's does not). */
static bool stream_readable = true;

/* Loads the forwarder built with or without the conntrack kfuncs (and
 * with or without reading conntrack's UDP stream time), with private
 * maps, and fills them; 0 or -errno. */
static int try_load(bool with_ct, bool udp_stream)
{
	struct bpf_map *m;
	int err;

	if (rb)
		ring_buffer__free(rb);
	rb = NULL;
	xfib_fwd_bpf__destroy(skel);
	skel = xfib_fwd_open(NULL, with_ct);
	if (!skel)
		die("open: %s", strerror(errno));
	skel->rodata->xfib_ct_udp_stream = udp_stream;
	/* The flow cache holds a flow long enough for two sends on any
	 * machine (cases_cache). */
	skel->rodata->xfib_ct_cache_ns = CACHE_NS;
	bpf_object__for_each_map(m, skel->obj)
		bpf_map__set_pin_path(m, NULL);
	err = xfib_fwd_bpf__load(skel);
	if (err)
		return err;
	rb = ring_buffer__new(bpf_map__fd(skel->maps.xfib_ct_events), on_event, NULL, NULL);
	if (!rb)
		die("ring buffer: %s", strerror(errno));
	fill_maps();
	return 0;
}

static void load_program(bool with_ct, bool udp_stream)
{
	int err = try_load(with_ct, udp_stream);

	if (err)
		die("load: %s", strerror(-err));
}

static void setup(void)
{
	int err;

	if (geteuid()) {
		printf("SKIP: needs root\n");
		exit(SKIP);
	}
	if (unshare(CLONE_NEWNET)) {
		printf("SKIP: unshare(CLONE_NEWNET): %s\n", strerror(errno));
		exit(SKIP);
	}
	sh("ip link add xt0 type veth peer name xt0p && ip link add xt1 type veth peer name xt1p");
	sh("ip link set lo up && ip link set xt0 up && ip link set xt0p up && "
	   "ip link set xt1 up && ip link set xt1p up");
	if_in = if_nametoindex("xt0");
	if_out = if_nametoindex("xt1");
	ncpus = libbpf_num_possible_cpus();
	/* ctnetlink loads nf_conntrack where it is a module, and with it
	 * the kfuncs the gate calls. */
	err = ctnl_open(&ct);
	if (err)
		die("ctnetlink: %s", strerror(-err));
	if (!xfib_ct_kfuncs())
		die("conntrack is there, but its kfuncs are not in the kernel's BTF");
	/* As xfib_open() does where the verifier refuses the read. */
	if (try_load(true, true)) {
		printf("this verifier refuses the UDP stream time read: the program "
		       "without it, as xfib_open() loads it\n");
		stream_readable = false;
		load_program(true, false);
	}
}


/* ---- cases ------------------------------------------------------------------- */

#define EST (IPS_SEEN_REPLY | IPS_ASSURED)

static struct flow tcp(int v6, __u16 sport, __u8 flags)
{
	return (struct flow){ v6, IPPROTO_TCP, sport, 5201, flags, false, NULL, NULL };
}

static struct flow udp(int v6, __u16 sport)
{
	return (struct flow){ v6, IPPROTO_UDP, sport, 5001, 0, false, NULL, NULL };
}

/* An echo request or reply; frames here all go from the source host to
 * the destination host, so a reply is one the destination host asked for. */
static struct flow echo(int v6, bool request, __u16 id)
{
	__u8 type = v6 ? (request ? 128 : 129) : (request ? 8 : 0);

	return (struct flow){ v6, v6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP, type, id, 0, false, NULL, NULL };
}

/* The reference expectation must hold and wrong ones must fail. */
static void self_check(void)
{
	struct flow f = tcp(0, 41000, TH_ACK);
	bool right, wrong_reason, wrong_verdict;

	set_mode(XFIB_V4, XFIB_NF_PASS);
	quiet = true;
	right = send_flow("", &f, XFIB_PASS_NETFILTER);
	wrong_reason = send_flow("", &f, XFIB_PASS_CT_NEW);
	wrong_verdict = send_flow("", &f, XFIB_FWD_V4);
	quiet = false;
	result(right && !wrong_reason && !wrong_verdict,
	       "harness detects a wrong counter and a wrong verdict");
}

/* Without rules the gate is not there; PASS sends all to the kernel. */
static void cases_modes(void)
{
	struct flow f = tcp(0, 41000, TH_ACK);

	set_mode(XFIB_V4, XFIB_NF_OFF);
	send_flow("mode off: a TCP segment without a conntrack entry is forwarded", &f,
		  XFIB_FWD_V4);
	set_mode(XFIB_V4, XFIB_NF_PASS);
	send_flow("mode pass: the same segment goes to the kernel", &f, XFIB_PASS_NETFILTER);
	set_mode(XFIB_V4, XFIB_NF_GATE);
	send_flow("mode gate: without an entry it goes to the kernel", &f, XFIB_PASS_CT_NEW);
}

/* Ports with ingress or egress rules: their packets to the kernel in any
 * mode, when the flag says to look. */
static void cases_ports(void)
{
	struct flow f = tcp(0, 41000, TH_ACK);
	__u32 in = XFIB_NF_PORT_IN, out = XFIB_NF_PORT_OUT;
	int fd = bpf_map__fd(skel->maps.xfib_nf_ports);

	update(skel->maps.xfib_nf_ports, &if_in, &in);
	set_mode_ports(XFIB_V4, XFIB_NF_OFF, 1);
	send_flow("mode off, ingress port with ingress rules: kernel", &f, XFIB_PASS_NETFILTER);
	set_mode_ports(XFIB_V4, XFIB_NF_OFF, 0);
	send_flow("... without the flag the ports are not looked at", &f, XFIB_FWD_V4);
	update(skel->maps.xfib_nf_ports, &if_in, &out);
	set_mode_ports(XFIB_V4, XFIB_NF_OFF, 1);
	send_flow("... its rules are egress rules: forwarded", &f, XFIB_FWD_V4);
	bpf_map_delete_elem(fd, &if_in);
	update(skel->maps.xfib_nf_ports, &if_out, &out);
	send_flow("egress port with egress rules: kernel", &f, XFIB_PASS_NETFILTER);
	bpf_map_delete_elem(fd, &if_out);
	set_mode(XFIB_V4, XFIB_NF_GATE);
}

/* What the entry says. */
static void cases_entries(int v6)
{
	int fwd = v6 ? XFIB_FWD_V6 : XFIB_FWD_V4;
	struct flow est = tcp(v6, 40000, TH_ACK), rev = tcp(v6, 40010, TH_ACK);
	struct flow f;
	char name[128];
	const char *fam = v6 ? "v6" : "v4";

#define NAME(s) (snprintf(name, sizeof(name), "%s %s", fam, s), name)
	entry(&est, EST, TCP_CONNTRACK_ESTABLISHED, true, 100, 0, NULL);
	send_flow(NAME("TCP, established and liberal: forwarded"), &est, fwd);
	result(entry_timeout(&est) > 3500,
	       "%s the entry's timeout refreshed to conntrack's (3600 s): %u s", fam,
	       entry_timeout(&est));
	rev.reverse = true; /* the entry's original direction is the reply's */
	entry(&rev, EST, TCP_CONNTRACK_ESTABLISHED, true, 100, 0, NULL);
	rev.reverse = false;
	send_flow(NAME("TCP in the entry's reply direction: forwarded"), &rev, fwd);

	f = tcp(v6, 40002, TH_ACK);
	entry(&f, 0, TCP_CONNTRACK_SYN_SENT, true, 100, 0, NULL);
	send_flow(NAME("TCP not replied: kernel"), &f, XFIB_PASS_CT_NEW);
	f = tcp(v6, 40004, TH_ACK);
	entry(&f, EST, TCP_CONNTRACK_FIN_WAIT, true, 100, 0, NULL);
	send_flow(NAME("TCP after a FIN (FIN_WAIT): kernel"), &f, XFIB_PASS_CT_NEW);
	f = tcp(v6, 40005, TH_ACK);
	entry(&f, EST, TCP_CONNTRACK_ESTABLISHED, true, 100, 1, NULL);
	send_flow(NAME("TCP established in zone 1 only: kernel"), &f, XFIB_PASS_CT_NEW);
	f = tcp(v6, 40008, TH_ACK);
	entry_helper(&f, "ftp");
	send_flow(NAME("TCP with a conntrack helper (ftp): kernel"), &f, XFIB_PASS_CT_NAT);
	f = tcp(v6, 40007, TH_ACK);
	entry(&f, EST | IPS_FIXED_TIMEOUT, TCP_CONNTRACK_ESTABLISHED, true, 100, 0, NULL);
	send_flow(NAME("TCP with a fixed timeout: forwarded"), &f, fwd);
	result(entry_timeout(&f) <= 100, "%s ... and its timeout left alone: %u s", fam,
	       entry_timeout(&f));

	f = udp(v6, 40000);
	entry(&f, IPS_SEEN_REPLY, -1, false, 10, 0, NULL);
	if (stream_readable) {
		send_flow(NAME("UDP replied, a stream by now: forwarded"), &f, fwd);
		/* An entry made over ctnetlink has no stream time: past it. */
		result(entry_timeout(&f) > 170 && (entry_status(&f) & IPS_ASSURED),
		       "%s ... its timeout set to the stream one (180 s), and assured, as the kernel would: %u s, status 0x%x",
		       fam, entry_timeout(&f), entry_status(&f));
	} else {
		send_flow(NAME("UDP replied, not assured, no stream time read: kernel"),
			  &f, XFIB_PASS_CT_NEW);
	}
	f = udp(v6, 40003);
	entry(&f, EST, -1, false, 10, 0, NULL);
	send_flow(NAME("UDP assured: forwarded"), &f, fwd);
	result(entry_timeout(&f) > 170, "%s ... its timeout set to the stream one (180 s): %u s",
	       fam, entry_timeout(&f));
	f = udp(v6, 40001);
	entry(&f, 0, -1, false, 10, 0, NULL);
	send_flow(NAME("UDP not replied: kernel"), &f, XFIB_PASS_CT_NEW);
#undef NAME
}

static void entry_delete(const struct flow *fl)
{
	struct ctnl_tuple t;
	int err;

	tuple_of(fl, &t);
	err = ctnl_delete(ct, &t);
	if (err)
		die("delete a conntrack entry: %s", strerror(-err));
}

/*
 * The flow cache (bpf/lib/ctgate.h): a forwarded flow is forwarded for
 * the cache time without asking conntrack again, then asked again; its
 * own SYN, FIN or RST makes the next segment ask at once. The test runs on
 * one CPU, so every run sees the same per-CPU cache. Its cache time is
 * CACHE_NS, not the 25 ms of XFIB_CT_CACHE_NS, so that the case does not
 * depend on the machine's speed.
 */
static void cases_cache(void)
{
	struct flow f = tcp(0, 40100, TH_ACK), fin;
	struct timespec past = { .tv_sec = CACHE_NS / 1000000000ull,
				 /* The coarse clock moves a jiffy at a time:
				  * 10 ms at HZ=100. */
				 .tv_nsec = 12000000 };

	entry(&f, EST, TCP_CONNTRACK_ESTABLISHED, true, 100, 0, NULL);
	send_flow("cache: an established flow: forwarded", &f, XFIB_FWD_V4);
	entry_delete(&f);
	send_flow("cache: its entry just deleted: forwarded from the cache", &f, XFIB_FWD_V4);
	nanosleep(&past, NULL);
	send_flow("cache: ... and once the cache time has passed, conntrack asked: kernel",
		  &f, XFIB_PASS_CT_NEW);

	f = tcp(0, 40101, TH_ACK);
	entry(&f, EST, TCP_CONNTRACK_ESTABLISHED, true, 100, 0, NULL);
	send_flow("cache: another established flow: forwarded", &f, XFIB_FWD_V4);
	entry_delete(&f);
	fin = f;
	fin.flags = TH_FIN | TH_ACK;
	send_flow("cache: its FIN: kernel", &fin, XFIB_PASS_CT_TCP_FLAGS);
	send_flow("cache: ... and the next segment at once asks conntrack, which lost it: kernel",
		  &f, XFIB_PASS_CT_NEW);
}

/* Segments of an established, liberal flow by their flags and header. */
static void cases_tcp_packets(void)
{
	static const struct {
		const char *name;
		__u8 flags;
		int reason;
	} t[] = {
		{ "ACK|PSH", TH_ACK | TH_PSH, XFIB_FWD_V4 },
		{ "ACK|URG", TH_ACK | TH_URG, XFIB_FWD_V4 },
		{ "SYN", TH_SYN, XFIB_PASS_CT_TCP_FLAGS },
		{ "SYN|ACK", TH_SYN | TH_ACK, XFIB_PASS_CT_TCP_FLAGS },
		{ "FIN|ACK", TH_FIN | TH_ACK, XFIB_PASS_CT_TCP_FLAGS },
		{ "RST", TH_RST, XFIB_PASS_CT_TCP_FLAGS },
		{ "no flags", 0, XFIB_PASS_CT_INVALID },
		{ "PSH without ACK", TH_PSH, XFIB_PASS_CT_INVALID },
	};
	struct flow f = tcp(0, 40000, 0);
	struct frame fr;
	char name[96];
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		f.flags = t[i].flags;
		snprintf(name, sizeof(name), "v4 TCP %s on an established flow", t[i].name);
		send_flow(name, &f, t[i].reason);
	}
	f.flags = TH_ACK;
	fr = build(&f);
	fr.b[ETH_HLEN + 20 + 12] = 4 << 4;
	run("v4 TCP data offset 4: kernel", &fr, 0, XFIB_PASS_CT_INVALID);
	fr = build(&f);
	fr.b[ETH_HLEN + 20 + 12] = 15 << 4;
	run("v4 TCP data offset past the packet: kernel", &fr, 0, XFIB_PASS_CT_INVALID);
	f = udp(0, 40000);
	fr = build(&f);
	put16(fr.b + ETH_HLEN + 20 + 4, 7);
	run("v4 UDP length 7: kernel", &fr, 0, XFIB_PASS_CT_INVALID);
	fr = build(&f);
	put16(fr.b + ETH_HLEN + 20 + 4, 200);
	run("v4 UDP length past the packet: kernel", &fr, 0, XFIB_PASS_CT_INVALID);
}

/* Fragments and protocols the gate does not follow. */
static void cases_protocols(void)
{
	struct flow f = tcp(0, 40000, TH_ACK);
	struct frame fr = build(&f);
	__u8 *ip = fr.b + ETH_HLEN;

	put16(ip + 6, 0x2000); /* MF */
	put16(ip + 10, 0);
	put16(ip + 10, fold(sum16(0, ip, 20)));
	run("v4 first fragment of an established flow: kernel", &fr, 0, XFIB_PASS_CT_PROTO);
	f = (struct flow){ 0, 47, 0, 0, 0, false, NULL, NULL };
	send_flow("v4 GRE: kernel", &f, XFIB_PASS_CT_PROTO);
	f = (struct flow){ 1, 44, 0, 0, 0, false, NULL, NULL };
	send_flow("v6 fragment header: kernel", &f, XFIB_PASS_CT_PROTO);
	f = echo(0, true, 7);
	f.sport = 3; /* destination unreachable */
	send_flow("v4 ICMP error: kernel", &f, XFIB_PASS_CT_PROTO);
	f = (struct flow){ 1, IPPROTO_ICMP, 8, 7, 0, false, NULL, NULL };
	send_flow("v6 carrying ICMPv4: kernel", &f, XFIB_PASS_CT_PROTO);
}

/*
 * NATed flows (bpf/lib/nat.h), both directions: forwarded with
 * conntrack's translation, the frame as built from scratch with the
 * translated addresses and ports (so the checksums the program updated
 * incrementally are the ones a full computation gives). The replies go
 * to SRC, resolved for these cases only.
 */
#define NAT_SRC4 "198.18.200.99"
#define NAT_SRC6 "2001:db8:ffff::99"
#define NAT_PUB4 "198.18.0.99"
#define NAT_PUB6 "2001:db8:0:1::99"
#define NB_SRC 3

/* An entry with original direction fl, established both ways, with
 * source NAT to snat and/or destination NAT to dnat, port dport. */
static void entry_nat(const struct flow *fl, __u32 status, const char *snat,
		      const char *dnat, __u16 dport)
{
	bool is_tcp = fl->proto == IPPROTO_TCP;
	struct ctnl_change c = { .timeout = 100, .status = status,
				 .tcp_state = is_tcp ? TCP_CONNTRACK_ESTABLISHED : -1,
				 .tcp_liberal = is_tcp };
	int af = fl->v6 ? AF_INET6 : AF_INET, err;
	struct ctnl_tuple t;
	__u8 sa[16], da[16];

	tuple_of(fl, &t);
	if (snat) {
		inet_pton(af, snat, sa);
		c.snat = sa;
	}
	if (dnat) {
		inet_pton(af, dnat, da);
		c.dnat = da;
		c.dnat_port = htons(dport);
	}
	err = ctnl_create(ct, &t, &c);
	if (err)
		die("create a NAT conntrack entry: %s", strerror(-err));
}

/* Sends fl, which must leave as out (and the MACs, TTL), counted as the
 * family's NAT forward. nocsum: a UDP datagram without a checksum. */
static void send_nat(const char *name, const struct flow *fl,
		     const struct flow *out, bool nocsum)
{
	struct frame f = build(fl), o = build(out), want;
	unsigned int ck = ETH_HLEN + (fl->v6 ? 40 : 20) + 6;

	if (nocsum) {
		put16(f.b + ck, 0);
		put16(o.b + ck, 0);
	}
	want = forwarded(&o, fl->v6);
	run_want(name, &f, &want, fl->v6 ? XFIB_FWD_NAT_V6 : XFIB_FWD_NAT_V4);
}

static void cases_nat(int v6)
{
	const char *src = v6 ? SRC6 : SRC4, *dst = v6 ? DST6 : DST4;
	const char *nsrc = v6 ? NAT_SRC6 : NAT_SRC4, *pub = v6 ? NAT_PUB6 : NAT_PUB4;
	const char *fam = v6 ? "v6" : "v4";
	int af = v6 ? AF_INET6 : AF_INET;
	struct xfib_neigh_key k = { .ifindex = if_out, .family = af };
	struct flow f, o;
	char name[128];

#define NAME(s) (snprintf(name, sizeof(name), "%s %s", fam, s), name)
	put_neigh(NB_SRC, af, src);

	/* Source NAT (masquerade): out with the NAT address, the reply
	 * back to the host behind it. */
	f = tcp(v6, 40030, TH_ACK);
	entry_nat(&f, EST, nsrc, NULL, 0);
	o = f;
	o.src = nsrc;
	send_nat(NAME("TCP source-NATed: forwarded from the NAT address"), &f, &o, false);
	send_nat(NAME("... again, with the NAT from the flow cache"), &f, &o, false);
	f = (struct flow){ v6, IPPROTO_TCP, 5201, 40030, TH_ACK, false, dst, nsrc };
	o = f;
	o.dst = src;
	send_nat(NAME("... its reply: forwarded to the host behind the NAT"), &f, &o, false);

	/* Destination NAT with a port (a port forward): pub:8080 to
	 * dst:5201, and the reply from pub:8080 again. */
	f = (struct flow){ v6, IPPROTO_TCP, 40040, 8080, TH_ACK, false, NULL, pub };
	entry_nat(&f, EST, NULL, dst, 5201);
	o = f;
	o.dst = dst;
	o.dport = 5201;
	send_nat(NAME("TCP destination-NATed with its port: forwarded to the server"),
		 &f, &o, false);
	f = (struct flow){ v6, IPPROTO_TCP, 5201, 40040, TH_ACK, false, dst, src };
	o = f;
	o.src = pub;
	o.sport = 8080;
	send_nat(NAME("... its reply: forwarded from the public address and port"),
		 &f, &o, false);

	f = udp(v6, 40050);
	entry_nat(&f, EST, nsrc, NULL, 0);
	o = f;
	o.src = nsrc;
	send_nat(NAME("UDP source-NATed: forwarded from the NAT address"), &f, &o, false);
	/* IPv6 requires a UDP checksum; nf_nat leaves a zero one alone in
	 * either family. */
	send_nat(NAME("... a datagram without a checksum keeps none"), &f, &o, true);

	f = udp(v6, 40060);
	entry_nat(&f, 0, nsrc, NULL, 0);
	send_flow(NAME("UDP source-NATed, not replied: kernel"), &f, XFIB_PASS_CT_NEW);
	f = tcp(v6, 40070, TH_ACK);
	entry_helper(&f, "ftp");
	send_flow(NAME("TCP with a conntrack helper (ftp): kernel"), &f, XFIB_PASS_CT_NAT);

	memcpy(k.addr, (__u8[16]){ 0 }, 16);
	inet_pton(af, src, k.addr);
	bpf_map_delete_elem(bpf_map__fd(skel->maps.xfib_neigh_hosts), &k);
#undef NAME
}

/* A flow not yet liberal is reported to xfibd, once per retry time. */
static void cases_learn(void)
{
	struct flow f = tcp(0, 40001, TH_ACK);
	int n0;

	entry(&f, EST, TCP_CONNTRACK_ESTABLISHED, false, 100, 0, NULL);
	n0 = nevents;
	send_flow("v4 TCP established, not yet liberal: kernel", &f, XFIB_PASS_CT_LEARN);
	result(nevents == n0 + 1 && last_event.proto == IPPROTO_TCP &&
	       last_event.sport == htons(40001) && last_event.dport == htons(5201),
	       "... and reported to xfibd (%d events)", nevents - n0);
	send_flow("v4 the next segment: kernel", &f, XFIB_PASS_CT_LEARN);
	result(nevents == n0 + 1, "... not reported again within the retry time (%d events)",
	       nevents - n0);
}

/* Flows reported to xfibd are budgeted per CPU: a stream of echo
 * requests with new identifiers makes at most XFIB_CT_LEARN_BURST events
 * per window. The test runs on one CPU, and the burst well inside one
 * window (it is retried if the machine was too slow for that). */
static void cases_budget(void)
{
	struct timespec t0, t1;
	int n0, sent, i, try;
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	if (sched_setaffinity(0, sizeof(one), &one))
		die("sched_setaffinity: %s", strerror(errno));
	for (try = 0; try < 3; try++) {
		/* A fresh window: the last one has passed. */
		usleep(XFIB_CT_LEARN_WINDOW_NS / 1000 + 1000);
		n0 = nevents;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (i = 0; i < XFIB_CT_LEARN_BURST + 100; i++) {
			struct flow f = echo(0, true, 1000 + try * 1000 + i);
			struct frame fr = build(&f);
			struct xdp_md ctx = { .data_end = fr.len, .ingress_ifindex = if_in };
			LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = fr.b, .data_size_in = fr.len,
				    .ctx_in = &ctx, .ctx_size_in = sizeof(ctx), .repeat = 1);

			bpf_prog_test_run_opts(bpf_program__fd(skel->progs.xfib_fwd), &o);
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		ring_buffer__consume(rb);
		sent = nevents - n0;
		if ((t1.tv_sec - t0.tv_sec) * 1000000000ll + t1.tv_nsec - t0.tv_nsec <
		    (long long)XFIB_CT_LEARN_WINDOW_NS)
			break;
	}
	result(sent == XFIB_CT_LEARN_BURST, "%d new echo flows in one window: %d reported to xfibd (budget %d)",
	       XFIB_CT_LEARN_BURST + 100, sent, XFIB_CT_LEARN_BURST);
}

/* Echo flows: forwarded while xfib_ct_echo says so, both ways. */
static void cases_echo(int v6)
{
	struct flow req = echo(v6, true, 77), rep = echo(v6, false, 77);
	struct xfib_ct_echo_key k = { .family = v6 ? AF_INET6 : AF_INET, .id = htons(77) };
	struct xfib_ct_echo v = { .valid_until = ~0ull };
	int fwd = v6 ? XFIB_FWD_V6 : XFIB_FWD_V4, n0 = nevents;
	struct timespec ts;

	send_flow(v6 ? "v6 echo request, flow unknown: kernel" :
		       "v4 echo request, flow unknown: kernel", &req, XFIB_PASS_CT_LEARN);
	result(nevents == n0 + 1 && last_event.icmp_type == req.sport,
	       "%s ... and reported to xfibd", v6 ? "v6" : "v4");
	addrs(&req, k.requester, k.responder);
	update(skel->maps.xfib_ct_echo, &k, &v);
	send_flow(v6 ? "v6 echo request of a known flow: forwarded" :
		       "v4 echo request of a known flow: forwarded", &req, fwd);
	/* The reply's flow: the destination host asked the source host. */
	addrs(&req, k.responder, k.requester);
	update(skel->maps.xfib_ct_echo, &k, &v);
	send_flow(v6 ? "v6 echo reply of a known flow: forwarded" :
		       "v4 echo reply of a known flow: forwarded", &rep, fwd);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	v.valid_until = ts.tv_sec * 1000000000ull + ts.tv_nsec - 1;
	update(skel->maps.xfib_ct_echo, &k, &v);
	send_flow(v6 ? "v6 echo reply past its validity: kernel" :
		       "v4 echo reply past its validity: kernel", &rep, XFIB_PASS_CT_LEARN);
}

/*
 * An echo flow conntrack translates (SRC masqueraded to NAT_SRC, its
 * identifier 77 to 99), as xfibd writes it: a key per side. Requests of
 * the requester's side and replies of the responder's leave translated,
 * the ICMP checksum (ICMPv6's with its pseudo-header) as a full
 * computation gives it; a packet of the other kind with either key is not
 * the flow's.
 */
static void cases_echo_nat(int v6)
{
	const char *src = v6 ? SRC6 : SRC4, *dst = v6 ? DST6 : DST4;
	const char *nsrc = v6 ? NAT_SRC6 : NAT_SRC4, *fam = v6 ? "v6" : "v4";
	int af = v6 ? AF_INET6 : AF_INET;
	struct xfib_ct_echo_key k = { .family = af, .id = htons(77) };
	struct xfib_ct_echo v = { .valid_until = ~0ull, .nat = XFIB_ECHO_NAT_REQUEST,
				  .id = htons(99) };
	struct xfib_neigh_key nk = { .ifindex = if_out, .family = af };
	struct flow f, o;
	char name[128];

#define NAME(s) (snprintf(name, sizeof(name), "%s %s", fam, s), name)
	put_neigh(NB_SRC, af, src);
	inet_pton(af, src, k.requester);
	inet_pton(af, dst, k.responder);
	inet_pton(af, nsrc, v.saddr);
	inet_pton(af, dst, v.daddr);
	update(skel->maps.xfib_ct_echo, &k, &v);
	f = echo(v6, true, 77);
	o = echo(v6, true, 99);
	o.src = nsrc;
	send_nat(NAME("echo request, masqueraded flow: forwarded from the NAT address, identifier 99"),
		 &f, &o, false);
	f = echo(v6, false, 77);
	f.reverse = true;
	send_flow(NAME("... an echo reply with the requester's key: kernel"), &f,
		  XFIB_PASS_CT_NAT);

	memset(&k, 0, sizeof(k));
	k.family = af;
	k.id = htons(99);
	inet_pton(af, nsrc, k.requester);
	inet_pton(af, dst, k.responder);
	v.nat = XFIB_ECHO_NAT_REPLY;
	v.id = htons(77);
	inet_pton(af, dst, v.saddr);
	inet_pton(af, src, v.daddr);
	update(skel->maps.xfib_ct_echo, &k, &v);
	f = (struct flow){ v6, v6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP, v6 ? 129 : 0, 99, 0, false,
			   dst, nsrc };
	o = f;
	o.dport = 77;
	o.dst = src;
	send_nat(NAME("echo reply to the NAT address: forwarded to the host behind it, identifier 77"),
		 &f, &o, false);
	f = echo(v6, true, 99);
	f.src = nsrc;
	send_flow(NAME("... an echo request with the responder's key: kernel"), &f,
		  XFIB_PASS_CT_NAT);
	inet_pton(af, src, nk.addr);
	bpf_map_delete_elem(bpf_map__fd(skel->maps.xfib_neigh_hosts), &nk);
#undef NAME
}

/* The program a verifier that cannot read the UDP stream time takes
 * (Linux 6.1): a replied UDP flow stays with the kernel until conntrack
 * has made it assured, then it is forwarded with the stream timeout. */
static void cases_udp_without_stream_time(void)
{
	struct flow f;
	int v6;

	load_program(true, false);
	set_mode(XFIB_V4, XFIB_NF_GATE);
	set_mode(XFIB_V6, XFIB_NF_GATE);
	for (v6 = 0; v6 <= 1; v6++) {
		f = udp(v6, 40200);
		entry(&f, IPS_SEEN_REPLY, -1, false, 10, 0, NULL);
		send_flow(v6 ? "no stream time: v6 UDP replied, not assured: kernel" :
			       "no stream time: v4 UDP replied, not assured: kernel",
			  &f, XFIB_PASS_CT_NEW);
		result(!(entry_status(&f) & IPS_ASSURED),
		       "no stream time: ... and left unassured: status 0x%x",
		       entry_status(&f));
		f = udp(v6, 40201);
		entry(&f, EST, -1, false, 10, 0, NULL);
		send_flow(v6 ? "no stream time: v6 UDP assured: forwarded" :
			       "no stream time: v4 UDP assured: forwarded",
			  &f, v6 ? XFIB_FWD_V6 : XFIB_FWD_V4);
		result(entry_timeout(&f) > 170,
		       "no stream time: ... its timeout set to the stream one (180 s): %u s",
		       entry_timeout(&f));
	}
}

/* The build without the kfuncs (loaded where nf_conntrack was not): what
 * conntrack would be asked about goes to the kernel, counted apart, and
 * the rest is decided as with them. */
static void cases_without_kfuncs(void)
{
	struct flow est = tcp(0, 40100, TH_ACK), est6 = tcp(1, 40100, TH_ACK);
	struct flow syn = tcp(0, 40101, TH_SYN);

	load_program(false, false);
	set_mode(XFIB_V4, XFIB_NF_GATE);
	set_mode(XFIB_V6, XFIB_NF_GATE);
	entry(&est, EST, TCP_CONNTRACK_ESTABLISHED, true, 100, 0, NULL);
	entry(&est6, EST, TCP_CONNTRACK_ESTABLISHED, true, 100, 0, NULL);
	send_flow("no kfuncs: v4 TCP established and liberal: kernel", &est,
		  XFIB_PASS_CT_UNAVAILABLE);
	send_flow("no kfuncs: v6 TCP established and liberal: kernel", &est6,
		  XFIB_PASS_CT_UNAVAILABLE);
	send_flow("no kfuncs: v4 TCP SYN: kernel, as with them", &syn,
		  XFIB_PASS_CT_TCP_FLAGS);
	set_mode(XFIB_V4, XFIB_NF_OFF);
	send_flow("no kfuncs: mode off: forwarded", &est, XFIB_FWD_V4);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	setup();
	set_mode(XFIB_V4, XFIB_NF_GATE);
	set_mode(XFIB_V6, XFIB_NF_GATE);
	self_check();
	cases_modes();
	cases_ports();
	cases_entries(0);
	cases_entries(1);
	cases_nat(0);
	cases_nat(1);
	cases_cache();
	cases_tcp_packets();
	cases_protocols();
	cases_learn();
	cases_echo(0);
	cases_echo(1);
	cases_echo_nat(0);
	cases_echo_nat(1);
	cases_budget();
	cases_udp_without_stream_time();
	cases_without_kfuncs();
	ncases++;
	if (reasons_check(RC_BIT(RC_CTGATE), reached, reason_name, NULL))
		nfailed++;
	else
		printf("ok   every outcome of the conntrack gate was reached\n");
	ring_buffer__free(rb);
	ctnl_close(ct);
	xfib_fwd_bpf__destroy(skel);
	printf("\n%d cases, %d failed\n", ncases, nfailed);
	return nfailed ? 1 : 0;
}
