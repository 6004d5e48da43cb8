// SPDX-License-Identifier: GPL-2.0-only
/*
 * Each attached port's counters (xfib_port_stats): read for status and
 * stats --prometheus, shown by stats --ports as a table, JSON, or rates
 * every interval (-i).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "output.h"
#include "xfibctl.h"

bool reason_is_fwd(enum xfib_reason r)
{
	return !strncmp(reason_name(r), "forwarded_", 10);
}

bool reason_is_drop(enum xfib_reason r)
{
	return !strncmp(reason_name(r), "drop_", 5);
}

void port_totals(const struct xfib_port_counters *c, struct port_totals *t)
{
	__u32 r;

	memset(t, 0, sizeof(*t));
	for (r = 0; r < XFIB_REASON_COUNT; r++) {
		struct xfib_counter *to = reason_is_fwd(r) ? &t->forwarded :
					  reason_is_drop(r) ? &t->dropped :
							      &t->to_kernel;

		to->packets += c->in[r].packets;
		to->bytes += c->in[r].bytes;
		t->rx.packets += c->in[r].packets;
		t->rx.bytes += c->in[r].bytes;
	}
	t->tx = c->tx;
}

int ports_read_counters(struct xfib_fwd_bpf *skel, struct port *ports, size_t n)
{
	int fd = bpf_map__fd(skel->maps.xfib_port_stats);
	int ncpu = libbpf_num_possible_cpus(), cpu;
	struct xfib_port_counters *pc;
	size_t i;
	__u32 r;

	if (ncpu < 1)
		return ncpu;
	pc = calloc(ncpu, sizeof(*pc));
	if (!pc)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct port *p = &ports[i];

		memset(&p->c, 0, sizeof(p->c));
		p->counted = p->ifindex < XFIB_PORT_MAX;
		if (!p->counted)
			continue;
		if (bpf_map_lookup_elem(fd, &p->ifindex, pc)) {
			int err = -errno;

			err_cmd("read port counters: %s", strerror(-err));
			free(pc);
			return err;
		}
		for (cpu = 0; cpu < ncpu; cpu++) {
			for (r = 0; r < XFIB_REASON_COUNT; r++) {
				p->c.in[r].packets += pc[cpu].in[r].packets;
				p->c.in[r].bytes += pc[cpu].in[r].bytes;
			}
			p->c.tx.packets += pc[cpu].tx.packets;
			p->c.tx.bytes += pc[cpu].tx.bytes;
		}
	}
	free(pc);
	return 0;
}

int port_counters_zero(struct xfib_fwd_bpf *skel, __u32 ifindex)
{
	int ncpu = libbpf_num_possible_cpus(), err = 0;
	struct xfib_port_counters *zero;

	if (ifindex >= XFIB_PORT_MAX)
		return 0;
	if (ncpu < 1)
		return ncpu;
	zero = calloc(ncpu, sizeof(*zero));
	if (!zero)
		return -ENOMEM;
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.xfib_port_stats), &ifindex,
				zero, BPF_ANY))
		err = -errno;
	free(zero);
	return err;
}

/* ---- one snapshot ------------------------------------------------------------ */

static void ports_text(const struct port *ports, size_t n)
{
	static const char *const uncounted = "(ifindex >= 1024: not counted)";
	size_t i;
	__u32 r;

	printf("%-15s %12s %14s %12s %14s %12s %12s %12s\n", "port", "rx packets",
	       "rx bytes", "tx packets", "tx bytes", "forwarded", "to kernel",
	       "dropped");
	for (i = 0; i < n; i++) {
		struct port_totals t;

		if (!ports[i].counted) {
			printf("%-15s %s\n", ports[i].name, uncounted);
			continue;
		}
		port_totals(&ports[i].c, &t);
		printf("%-15s %12llu %14llu %12llu %14llu %12llu %12llu %12llu\n",
		       ports[i].name, (unsigned long long)t.rx.packets,
		       (unsigned long long)t.rx.bytes,
		       (unsigned long long)t.tx.packets,
		       (unsigned long long)t.tx.bytes,
		       (unsigned long long)t.forwarded.packets,
		       (unsigned long long)t.to_kernel.packets,
		       (unsigned long long)t.dropped.packets);
	}
	/* What each port received, by what became of it: the counters that
	 * are not zero. */
	printf("\n%-15s %-26s %14s %16s\n", "port", "received as", "packets", "bytes");
	for (i = 0; i < n; i++)
		for (r = 0; ports[i].counted && r < XFIB_REASON_COUNT; r++)
			if (ports[i].c.in[r].packets)
				printf("%-15s %-26s %14llu %16llu\n", ports[i].name,
				       reason_name(r),
				       (unsigned long long)ports[i].c.in[r].packets,
				       (unsigned long long)ports[i].c.in[r].bytes);
}

static json_object *counter_json(const struct xfib_counter *c)
{
	json_object *o = json_object_new_object();

	js_set(o, "packets", js_u64(c->packets));
	js_set(o, "bytes", js_u64(c->bytes));
	return o;
}

json_object *port_totals_json(const struct port *p)
{
	json_object *o = json_object_new_object();
	struct port_totals t;

	port_totals(&p->c, &t);
	js_set(o, "counted", js_bool(p->counted));
	js_set(o, "rx", counter_json(&t.rx));
	js_set(o, "tx", counter_json(&t.tx));
	js_set(o, "forwarded", counter_json(&t.forwarded));
	js_set(o, "to_kernel", counter_json(&t.to_kernel));
	js_set(o, "dropped", counter_json(&t.dropped));
	return o;
}

static json_object *ports_json(const struct port *ports, size_t n)
{
	json_object *a = json_object_new_array();
	size_t i;
	__u32 r;

	for (i = 0; a && i < n; i++) {
		json_object *o = port_totals_json(&ports[i]);
		json_object *in = json_object_new_object();

		js_set(o, "ifname", js_str(ports[i].name));
		js_set(o, "ifindex", js_u64(ports[i].ifindex));
		for (r = 0; r < XFIB_REASON_COUNT; r++)
			js_set(in, reason_name(r), counter_json(&ports[i].c.in[r]));
		js_set(o, "received_as", in);
		json_object_array_add(a, o);
	}
	return a;
}

/* ---- rates, every interval ------------------------------------------------------ */

struct rate {
	double pps, bps;
};

static struct rate rate_of(const struct xfib_counter *prev,
			   const struct xfib_counter *cur, double secs)
{
	__u64 dp = cur->packets >= prev->packets ? cur->packets - prev->packets : 0;
	__u64 db = cur->bytes >= prev->bytes ? cur->bytes - prev->bytes : 0;

	return (struct rate){ dp / secs, db * 8 / secs };
}

static json_object *rate_json(struct rate r)
{
	json_object *o = json_object_new_object();

	js_set(o, "pps", js_fixed(r.pps, 3));
	js_set(o, "bps", js_fixed(r.bps, 3));
	return o;
}

/* One interval: each port's rx and tx rates and its reasons that moved.
 * prev and cur hold the same ports (the set read at the start). */
static int ports_rates_out(struct ctl *c, const struct port *prev,
			   const struct port *cur, size_t n, double now,
			   double secs)
{
	json_object *o = NULL, *a = NULL;
	char b1[32], b2[32];
	size_t i;
	__u32 r;

	if (c->json) {
		o = json_object_new_object();
		a = json_object_new_array();
		js_set(o, "time", js_fixed(now, 3));
		js_set(o, "interval", js_fixed(secs, 3));
	} else {
		interval_head(now, secs);
	}
	for (i = 0; i < n; i++) {
		struct port_totals tp, tc;
		json_object *e = NULL, *rs = NULL;
		struct rate rx, tx;

		port_totals(&prev[i].c, &tp);
		port_totals(&cur[i].c, &tc);
		rx = rate_of(&tp.rx, &tc.rx, secs);
		tx = rate_of(&tp.tx, &tc.tx, secs);
		if (c->json) {
			e = json_object_new_object();
			rs = json_object_new_object();
			js_set(e, "ifname", js_str(cur[i].name));
			js_set(e, "rx", rate_json(rx));
			js_set(e, "tx", rate_json(tx));
		} else {
			printf("  %-15s rx %12.1f pps %16s   tx %12.1f pps %16s\n",
			       cur[i].name, rx.pps, bitrate_str(rx.bps, b1, sizeof(b1)),
			       tx.pps, bitrate_str(tx.bps, b2, sizeof(b2)));
		}
		for (r = 0; r < XFIB_REASON_COUNT; r++) {
			struct rate x = rate_of(&prev[i].c.in[r], &cur[i].c.in[r], secs);

			if (!x.pps)
				continue;
			if (c->json)
				js_set(rs, reason_name(r), rate_json(x));
			else
				printf("    %-26s %12.1f pps %16s\n", reason_name(r),
				       x.pps, bitrate_str(x.bps, b1, sizeof(b1)));
		}
		if (c->json) {
			js_set(e, "received_as", rs);
			json_object_array_add(a, e);
		}
	}
	if (!c->json)
		return 0;
	js_set(o, "ports", a);
	return out_json(o);
}

static int ports_monitor(struct ctl *c, struct xfib_fwd_bpf *skel,
			 struct port *cur, size_t n)
{
	struct port *prev = calloc(n ? n : 1, sizeof(*prev));
	double t0, t1, next;
	unsigned long k;
	int err;

	if (!prev)
		return -ENOMEM;
	monitor_signals();
	t0 = clock_s(CLOCK_MONOTONIC);
	err = ports_read_counters(skel, cur, n);
	next = t0;
	for (k = 0; !err && (!c->count || k < c->count); k++) {
		memcpy(prev, cur, n * sizeof(*cur));
		next += c->interval;
		if (!sleep_until(next))
			break;
		t1 = clock_s(CLOCK_MONOTONIC);
		err = ports_read_counters(skel, cur, n);
		if (err)
			break;
		if (t1 - next > c->interval)
			next = t1;
		err = ports_rates_out(c, prev, cur, n, clock_s(CLOCK_REALTIME),
				      t1 - t0);
		fflush(stdout);
		t0 = t1;
	}
	free(prev);
	return err;
}

int stats_ports(struct ctl *c, struct xfib_fwd_bpf *skel)
{
	struct port *ports;
	size_t n;
	int err;

	ports_attached(&ports, &n);
	if (c->interval > 0) {
		err = ports_monitor(c, skel, ports, n);
	} else {
		err = ports_read_counters(skel, ports, n);
		if (!err && c->json)
			err = out_json(ports_json(ports, n));
		else if (!err)
			ports_text(ports, n);
	}
	free(ports);
	return err;
}
