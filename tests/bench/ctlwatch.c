// SPDX-License-Identifier: GPL-2.0-only
/*
 * ctlwatch: how far the dataplane trails the kernel while something else
 * (a routing daemon) installs routes.
 *
 *   ctlwatch --pin-dir DIR --routes N [--proto P] [--timeout-ms MS]
 *
 * Runs in the router's namespace (nsenter --net=..., so the pins stay
 * visible), started before the install. It listens to the kernel's route
 * notifications (the IPv4 and IPv6 route groups, as xfibd does) and
 * counts the new routes of table main (of protocol P only, if given),
 * noting when the kernel announced each; every millisecond it reads the
 * prefixes of xfibd's published instances (the xfib_fib_info map, both
 * families) and counts those above what they held at the start. The i-th
 * route counts as published at the first read that shows i or more; its
 * lag is that time minus the time the kernel announced the i-th route.
 * (Counts, not prefixes: right for an install, where both only grow.)
 *
 * Stops when the kernel has announced N routes and the dataplane holds N
 * more prefixes, or after --timeout-ms (600000). Prints one JSON object:
 * install_ms (first to N-th kernel announcement), mirror_lag_ms (N-th
 * announcement to the dataplane holding all N), the lag's percentiles
 * over the N routes, the largest backlog (routes announced, not yet
 * published), and lost (notifications lost to a full socket buffer: the
 * figures are void if it is not 0).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "pin.h"
#include "xfib/maps.h"

#define ROUTES_MAX 10000000

struct watch {
	int proto;       /* rtm_protocol to count, -1: all */
	long n;          /* routes expected */
	long seen;       /* routes announced so far */
	double *kt;      /* kt[i]: when the kernel announced route i + 1 */
	unsigned long lost;
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int on_msg(const struct nlmsghdr *nlh, void *data)
{
	const struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);
	struct watch *w = data;

	if (nlh->nlmsg_type != RTM_NEWROUTE || rtm->rtm_table != RT_TABLE_MAIN ||
	    rtm->rtm_type != RTN_UNICAST ||
	    (w->proto >= 0 && rtm->rtm_protocol != w->proto))
		return MNL_CB_OK;
	if (w->seen < w->n)
		w->kt[w->seen] = now_ms();
	w->seen++;
	return MNL_CB_OK;
}

/* Reads every pending notification; 0, or -errno. */
static int drain(struct mnl_socket *nl, struct watch *w)
{
	static char buf[1 << 16];
	ssize_t len;

	for (;;) {
		len = recv(mnl_socket_get_fd(nl), buf, sizeof(buf), MSG_DONTWAIT);
		if (len < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			if (errno == ENOBUFS) {
				w->lost++;
				continue;
			}
			return -errno;
		}
		if (mnl_cb_run(buf, len, 0, 0, on_msg, w) < 0)
			return -errno;
	}
}

/* Prefixes in both families' published instances. */
static long published(int fd)
{
	struct xfib_fib_info fi;
	long sum = 0;
	__u32 key;

	for (key = 0; key < 2; key++)
		if (!bpf_map_lookup_elem(fd, &key, &fi))
			sum += fi.routes;
	return sum;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void usage(void)
{
	fprintf(stderr, "usage: ctlwatch --pin-dir DIR --routes N [--proto P] [--timeout-ms MS]\n");
	exit(2);
}

static struct mnl_socket *listen_routes(void)
{
	int buf = 256 << 20;
	struct mnl_socket *nl = mnl_socket_open(NETLINK_ROUTE);

	if (!nl || mnl_socket_bind(nl, RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE,
				   MNL_SOCKET_AUTOPID) < 0)
		return NULL;
	if (setsockopt(mnl_socket_get_fd(nl), SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf)))
		setsockopt(mnl_socket_get_fd(nl), SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
	return nl;
}

static void report(struct watch *w, double *lag, long done, double t_all, bool timeout)
{
	double last = w->seen >= w->n ? w->kt[w->n - 1] : 0;

	qsort(lag, done, sizeof(*lag), cmp_double);
	printf("{\"routes\":%ld,\"announced\":%ld,\"published\":%ld,\"timeout\":%s,"
	       "\"lost\":%lu,\"install_ms\":%.1f,\"mirror_lag_ms\":%.1f,"
	       "\"lag_ms\":{\"p50\":%.1f,\"p90\":%.1f,\"p99\":%.1f,\"max\":%.1f}",
	       w->n, w->seen, done, timeout ? "true" : "false", w->lost,
	       last && w->seen ? last - w->kt[0] : 0, last && t_all ? t_all - last : 0,
	       done ? lag[(done - 1) / 2] : 0, done ? lag[(done - 1) * 9 / 10] : 0,
	       done ? lag[(done - 1) * 99 / 100] : 0, done ? lag[done - 1] : 0);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pin-dir", required_argument, NULL, 'p' },
		{ "routes", required_argument, NULL, 'n' },
		{ "proto", required_argument, NULL, 'P' },
		{ "timeout-ms", required_argument, NULL, 't' },
		{}
	};
	const struct timespec poll_gap = { 0, 1000000 };
	struct watch w = { .proto = -1 };
	struct xfib_fwd_bpf *skel = NULL;
	double timeout = 600000, t0, t, t_all = 0, *lag;
	long base, x, done = 0, backlog = 0;
	const char *pin_dir = NULL;
	struct mnl_socket *nl;
	int c, err, fd;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			pin_dir = optarg;
			break;
		case 'n':
			w.n = atol(optarg);
			break;
		case 'P':
			w.proto = atoi(optarg);
			break;
		case 't':
			timeout = atof(optarg);
			break;
		default:
			usage();
		}
	}
	if (!pin_dir || w.n < 1 || w.n > ROUTES_MAX)
		usage();
	w.kt = calloc(w.n, sizeof(*w.kt));
	lag = calloc(w.n, sizeof(*lag));
	nl = listen_routes();
	if (!w.kt || !lag || !nl) {
		perror("ctlwatch: setup");
		return 1;
	}
	err = xfib_open(pin_dir, 0, &skel);
	if (err) {
		fprintf(stderr, "ctlwatch: %s: %s\n", pin_dir, strerror(-err));
		return 1;
	}
	fd = bpf_map__fd(skel->maps.xfib_fib_info);
	base = published(fd);
	/* Ready: the caller may start the install. */
	fprintf(stderr, "ctlwatch: listening, %ld prefixes published\n", base);
	t0 = now_ms();
	for (;;) {
		err = drain(nl, &w);
		if (err) {
			fprintf(stderr, "ctlwatch: netlink: %s\n", strerror(-err));
			return 1;
		}
		x = published(fd) - base;
		t = now_ms();
		for (; done < x && done < w.n; done++)
			lag[done] = done < w.seen ? t - w.kt[done] : 0;
		if (w.seen - x > backlog)
			backlog = w.seen - x;
		if (done >= w.n && w.seen >= w.n) {
			t_all = t;
			break;
		}
		if (t - t0 > timeout)
			break;
		nanosleep(&poll_gap, NULL);
	}
	report(&w, lag, done, t_all, !t_all);
	printf(",\"backlog_max\":%ld}\n", backlog);
	xfib_fwd_bpf__destroy(skel);
	mnl_socket_close(nl);
	return t_all ? 0 : 1;
}
