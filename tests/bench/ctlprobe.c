// SPDX-License-Identifier: GPL-2.0-only
/*
 * ctlprobe: how long a single route change takes to reach the dataplane.
 *
 *   ctlprobe --pin-dir DIR --prefix ADDR/LEN --via GW@DEV --via GW@DEV
 *            [--changes N] [--gap-ms MS] [--timeout-ms MS] [--cpu N]
 *
 * Runs in the router's namespace (nsenter --net=..., so the pins stay
 * visible). Each change replaces the route to PREFIX, alternating between
 * the two gateways, with one rtnetlink request (what `ip route replace`
 * sends), then polls the live dataplane maps, through the lookup code the
 * XDP program runs (ctl/lib/dplookup.c, the tables mmap()ed), until the
 * prefix's address resolves to a gateway nexthop leaving by the new
 * gateway's port. The latency of a change is from just before the request
 * is sent to the first poll that sees the new egress: the kernel's work,
 * the notification, xfibd's batching and its update of the maps. Polls
 * are 20 us apart, so the figure is at most that late.
 *
 * Between changes it waits --gap-ms (20) plus a random share of it, so
 * that each change is a batch of its own and the changes do not fall in
 * step with the daemon's timers.
 *
 * Prints one JSON object: percentiles and mean of the latency, of the
 * kernel's acknowledgement, and the number of changes not seen within
 * --timeout-ms (1000). The latency figures (latency_ms) are over every
 * change: one not seen in time counts as the time waited for it, a lower
 * bound of its latency, so timeouts push the percentiles up instead of
 * dropping out of them (a percentile above timeout_ms is such a bound).
 * latency_seen_ms has the figures of the changes seen only.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>
#include <bpf/libbpf.h>

#include "dplookup.h"
#include "pin.h"

#define CHANGES_MAX 100000

struct via {
	int af;
	__u8 gw[16];
	unsigned int oif;
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int parse_prefix(const char *s, int *af, __u8 addr[16], int *len)
{
	char buf[INET6_ADDRSTRLEN + 8], *slash;

	snprintf(buf, sizeof(buf), "%s", s);
	slash = strchr(buf, '/');
	if (!slash)
		return -EINVAL;
	*slash = '\0';
	*len = atoi(slash + 1);
	memset(addr, 0, 16);
	*af = strchr(buf, ':') ? AF_INET6 : AF_INET;
	if (inet_pton(*af, buf, addr) != 1)
		return -EINVAL;
	return *len >= 0 && *len <= (*af == AF_INET ? 32 : 128) ? 0 : -EINVAL;
}

static int parse_via(const char *s, struct via *v)
{
	char buf[INET6_ADDRSTRLEN + IFNAMSIZ + 2], *at;

	snprintf(buf, sizeof(buf), "%s", s);
	at = strchr(buf, '@');
	if (!at)
		return -EINVAL;
	*at = '\0';
	v->oif = if_nametoindex(at + 1);
	v->af = strchr(buf, ':') ? AF_INET6 : AF_INET;
	memset(v->gw, 0, sizeof(v->gw));
	if (!v->oif || inet_pton(v->af, buf, v->gw) != 1)
		return -EINVAL;
	return 0;
}

/* ip route replace PREFIX via GW dev DEV, in the main table; waits for
 * the kernel's acknowledgement. */
static int route_replace(struct mnl_socket *nl, int af, const __u8 *dst,
			 int len, const struct via *v, __u32 seq)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct rtmsg *rtm;
	int n, alen = af == AF_INET ? 4 : 16;

	nlh->nlmsg_type = RTM_NEWROUTE;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_REPLACE;
	nlh->nlmsg_seq = seq;
	rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	rtm->rtm_family = af;
	rtm->rtm_dst_len = len;
	rtm->rtm_table = RT_TABLE_MAIN;
	rtm->rtm_protocol = RTPROT_STATIC;
	rtm->rtm_scope = RT_SCOPE_UNIVERSE;
	rtm->rtm_type = RTN_UNICAST;
	mnl_attr_put(nlh, RTA_DST, alen, dst);
	mnl_attr_put(nlh, RTA_GATEWAY, alen, v->gw);
	mnl_attr_put_u32(nlh, RTA_OIF, v->oif);
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
	if (n < 0)
		return -errno;
	if (mnl_cb_run(buf, n, seq, mnl_socket_get_portid(nl), NULL, NULL) < 0)
		return -errno;
	return 0;
}

/* The egress ifindex the dataplane uses for addr now, 0 if none. */
static unsigned int dp_egress(struct dpl *d, const __u8 *addr)
{
	struct xfib_nexthop nh;
	__u32 idx;

	if (dpl_refresh(d) < 0)
		return 0;
	idx = dpl_lookup(d, addr);
	dpl_nexthop(d, idx, &nh);
	return nh.kind == XFIB_NH_GATEWAY ? nh.ifindex : 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted v[0..n). */
static double pct(const double *v, int n, double p)
{
	int i = (int)(p / 100.0 * n + 0.999999) - 1;

	if (n == 0)
		return 0;
	return v[i < 0 ? 0 : i >= n ? n - 1 : i];
}

static void print_stats(const char *name, double *v, int n)
{
	double sum = 0;
	int i;

	qsort(v, n, sizeof(*v), cmp_double);
	for (i = 0; i < n; i++)
		sum += v[i];
	printf(",\"%s\":{\"p50\":%.3f,\"p90\":%.3f,\"p99\":%.3f,\"max\":%.3f,"
	       "\"mean\":%.3f}", name, pct(v, n, 50), pct(v, n, 90),
	       pct(v, n, 99), n ? v[n - 1] : 0, n ? sum / n : 0);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: ctlprobe --pin-dir DIR --prefix ADDR/LEN --via GW@DEV --via GW@DEV\n"
		"                [--changes N] [--gap-ms MS] [--timeout-ms MS] [--cpu N]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pin-dir", required_argument, NULL, 'p' },
		{ "prefix", required_argument, NULL, 'P' },
		{ "via", required_argument, NULL, 'V' },
		{ "changes", required_argument, NULL, 'n' },
		{ "gap-ms", required_argument, NULL, 'g' },
		{ "timeout-ms", required_argument, NULL, 't' },
		{ "cpu", required_argument, NULL, 'c' },
		{}
	};
	const char *pin_dir = NULL, *prefix = NULL;
	int c, af, len, nvia = 0, changes = 1000, cpu = -1, err, i, seen = 0;
	double gap = 20, timeout = 1000, *lat, *lat_seen, *ack, t0, t1, t;
	struct xfib_fwd_bpf *skel = NULL;
	const struct timespec poll_gap = { 0, 20000 };
	struct dpl d = { 0 };
	struct via via[2];
	struct mnl_socket *nl;
	__u8 dst[16];

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			pin_dir = optarg;
			break;
		case 'P':
			prefix = optarg;
			break;
		case 'V':
			if (nvia == 2 || parse_via(optarg, &via[nvia])) {
				fprintf(stderr, "ctlprobe: --via %s: GW@DEV, twice\n", optarg);
				return 2;
			}
			nvia++;
			break;
		case 'n':
			changes = atoi(optarg);
			break;
		case 'g':
			gap = atof(optarg);
			break;
		case 't':
			timeout = atof(optarg);
			break;
		case 'c':
			cpu = atoi(optarg);
			break;
		default:
			usage();
		}
	}
	if (!pin_dir || !prefix || nvia != 2 || changes < 1 ||
	    changes > CHANGES_MAX || parse_prefix(prefix, &af, dst, &len) ||
	    via[0].af != af || via[1].af != af || via[0].oif == via[1].oif)
		usage();
	if (cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	lat = calloc(changes, sizeof(*lat));
	lat_seen = calloc(changes, sizeof(*lat_seen));
	ack = calloc(changes, sizeof(*ack));
	nl = mnl_socket_open(NETLINK_ROUTE);
	if (!lat || !lat_seen || !ack || !nl || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		perror("ctlprobe: setup");
		return 1;
	}
	err = xfib_open(pin_dir, 0, &skel);
	if (!err)
		err = dpl_open(&d, skel, af == AF_INET ? XFIB_V4 : XFIB_V6);
	if (err) {
		fprintf(stderr, "ctlprobe: %s: %s\n", pin_dir, strerror(-err));
		return 1;
	}
	srand(1);
	for (i = 0; i < changes; i++) {
		const struct via *v = &via[i & 1];
		struct timespec g;

		t0 = now_ms();
		err = route_replace(nl, af, dst, len, v, i + 1);
		t1 = now_ms();
		if (err) {
			fprintf(stderr, "ctlprobe: route replace %s: %s\n", prefix,
				strerror(-err));
			return 1;
		}
		ack[i] = t1 - t0;
		for (;;) {
			t = now_ms();
			if (dp_egress(&d, dst) == v->oif) {
				lat_seen[seen++] = t - t0;
				break;
			}
			if (t - t0 > timeout)
				break;
			nanosleep(&poll_gap, NULL);
		}
		lat[i] = t - t0;
		t = gap * (1.0 + (double)rand() / RAND_MAX);
		g.tv_sec = (time_t)(t / 1000);
		g.tv_nsec = (long)((t - g.tv_sec * 1000) * 1e6);
		nanosleep(&g, NULL);
	}
	printf("{\"family\":\"ipv%d\",\"prefix\":\"%s\",\"changes\":%d,"
	       "\"seen\":%d,\"timeouts\":%d,\"timeout_ms\":%.0f",
	       af == AF_INET ? 4 : 6, prefix, changes, seen, changes - seen,
	       timeout);
	print_stats("latency_ms", lat, changes);
	print_stats("latency_seen_ms", lat_seen, seen);
	print_stats("ack_ms", ack, changes);
	printf("}\n");
	dpl_close(&d);
	xfib_fwd_bpf__destroy(skel);
	mnl_socket_close(nl);
	return 0;
}
