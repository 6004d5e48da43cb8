// SPDX-License-Identifier: GPL-2.0-only
/*
 * xfibctl stats: the dataplane's counters, as a table, JSON, rates every
 * interval (-i), or the Prometheus text format (prom.c).
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "output.h"
#include "xfibctl.h"

static const char *const reason_names[] = {
#define X(name, str, help) str,
	XFIB_REASONS(X)
#undef X
};

static const char *const reason_helps[] = {
#define X(name, str, help) help,
	XFIB_REASONS(X)
#undef X
};

const char *reason_name(enum xfib_reason r)
{
	return reason_names[r];
}

const char *reason_help(enum xfib_reason r)
{
	return reason_helps[r];
}

const char *pass_why(enum xfib_reason r)
{
	static const char lead[] = "to kernel: ";
	const char *h = reason_help(r);

	return strncmp(h, lead, strlen(lead)) ? h : h + strlen(lead);
}

/* Options of stats that do not go together. */
int stats_check(struct ctl *c, int argc, char **argv)
{
	if (c->prometheus && c->interval > 0) {
		err_cmd("--prometheus is a snapshot: it does not take --interval");
		return -EINVAL;
	}
	if (c->prometheus && c->json) {
		err_cmd("--prometheus and --json are two output formats: choose one");
		return -EINVAL;
	}
	if (c->ports && c->prometheus) {
		err_cmd("--prometheus always has the ports: it does not take --ports");
		return -EINVAL;
	}
	if (c->count && !c->interval) {
		err_cmd("--count needs --interval");
		return -EINVAL;
	}
	return 0;
}

/* Every counter summed over the CPUs. */
static int stats_read(struct xfib_fwd_bpf *skel, struct xfib_counter *sum)
{
	int fd = bpf_map__fd(skel->maps.xfib_stats), ncpu = libbpf_num_possible_cpus();
	struct xfib_counter *pc;
	int cpu, err = 0;
	__u32 r;

	if (ncpu < 1)
		return ncpu;
	pc = calloc(ncpu, sizeof(*pc));
	if (!pc)
		return -ENOMEM;
	for (r = 0; r < XFIB_REASON_COUNT; r++) {
		if (bpf_map_lookup_elem(fd, &r, pc)) {
			err = -errno;
			err_cmd("read counters: %s", strerror(-err));
			break;
		}
		sum[r].packets = 0;
		sum[r].bytes = 0;
		for (cpu = 0; cpu < ncpu; cpu++) {
			sum[r].packets += pc[cpu].packets;
			sum[r].bytes += pc[cpu].bytes;
		}
	}
	free(pc);
	return err;
}

/* ---- one snapshot ------------------------------------------------------------ */

static void counters_text(const struct xfib_counter *sum)
{
	__u32 r;

	printf("%-26s %14s %16s\n", "counter", "packets", "bytes");
	for (r = 0; r < XFIB_REASON_COUNT; r++)
		printf("%-26s %14llu %16llu  %s\n", reason_name(r),
		       (unsigned long long)sum[r].packets,
		       (unsigned long long)sum[r].bytes, reason_help(r));
}

static json_object *counters_json(const struct xfib_counter *sum)
{
	json_object *o = json_object_new_object();
	__u32 r;

	for (r = 0; r < XFIB_REASON_COUNT; r++) {
		json_object *e = json_object_new_object();

		js_set(e, "packets", js_u64(sum[r].packets));
		js_set(e, "bytes", js_u64(sum[r].bytes));
		js_set(o, reason_name(r), e);
	}
	return o;
}

/* ---- rates, every interval ------------------------------------------------------ */

/* The counters that moved in one interval, per second. */
struct rates {
	double time;     /* CLOCK_REALTIME at the end of the interval */
	double interval; /* seconds actually elapsed */
	bool moved[XFIB_REASON_COUNT];
	double pps[XFIB_REASON_COUNT], bps[XFIB_REASON_COUNT];
};

static void rates_compute(struct rates *rt, const struct xfib_counter *prev,
			  const struct xfib_counter *cur)
{
	__u32 r;

	for (r = 0; r < XFIB_REASON_COUNT; r++) {
		/* Counters only grow; guard the subtraction anyway. */
		__u64 dp = cur[r].packets >= prev[r].packets ?
				   cur[r].packets - prev[r].packets : 0;
		__u64 db = cur[r].bytes >= prev[r].bytes ?
				   cur[r].bytes - prev[r].bytes : 0;

		rt->moved[r] = dp;
		rt->pps[r] = dp / rt->interval;
		rt->bps[r] = db * 8 / rt->interval;
	}
}

/* A bit rate with an SI prefix, as ifstat and tc print them. */
const char *bitrate_str(double bps, char *buf, size_t len)
{
	static const char *const unit[] = { "bit/s", "kbit/s", "Mbit/s", "Gbit/s",
					    "Tbit/s" };
	unsigned int u = 0;

	while (bps >= 1000 && u < sizeof(unit) / sizeof(unit[0]) - 1) {
		bps /= 1000;
		u++;
	}
	snprintf(buf, len, "%.2f %s", bps, unit[u]);
	return buf;
}

void interval_head(double now, double secs)
{
	time_t now_s = (time_t)now;
	char when[32];

	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", localtime(&now_s));
	printf("%s.%03d  (%.3f s)\n", when, (int)((now - now_s) * 1000), secs);
}

static void rates_text(const struct rates *rt)
{
	bool moved = false;
	char b[32];
	__u32 r;

	interval_head(rt->time, rt->interval);
	for (r = 0; r < XFIB_REASON_COUNT; r++) {
		if (!rt->moved[r])
			continue;
		printf("  %-26s %14.1f pps %16s\n", reason_name(r), rt->pps[r],
		       bitrate_str(rt->bps[r], b, sizeof(b)));
		moved = true;
	}
	if (!moved)
		printf("  no counter moved\n");
}

static json_object *rates_json(const struct rates *rt)
{
	json_object *o = json_object_new_object(), *rates = json_object_new_object();
	__u32 r;

	js_set(o, "time", js_fixed(rt->time, 3));
	js_set(o, "interval", js_fixed(rt->interval, 3));
	for (r = 0; r < XFIB_REASON_COUNT; r++) {
		json_object *e;

		if (!rt->moved[r])
			continue;
		e = json_object_new_object();
		js_set(e, "pps", js_fixed(rt->pps[r], 3));
		js_set(e, "bps", js_fixed(rt->bps[r], 3));
		js_set(rates, reason_name(r), e);
	}
	js_set(o, "rates", rates);
	return o;
}

double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static volatile sig_atomic_t stats_stop;

static void stats_on_signal(int sig)
{
	stats_stop = 1;
}

void monitor_signals(void)
{
	/* No SA_RESTART: SIGINT must cut the sleep short. */
	struct sigaction sa = { .sa_handler = stats_on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

bool sleep_until(double deadline)
{
	struct timespec ts;

	ts.tv_sec = (time_t)deadline;
	ts.tv_nsec = (long)((deadline - ts.tv_sec) * 1e9);
	while (!stats_stop &&
	       clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
	return !stats_stop;
}

/*
 * stats -i: rates of the counters that moved, every interval. Deadlines
 * are absolute on CLOCK_MONOTONIC so the output does not drift, but each
 * rate is computed over the time actually elapsed between two reads: a
 * late wake-up must not inflate it.
 */
static int stats_monitor(struct ctl *c, struct xfib_fwd_bpf *skel)
{
	struct xfib_counter prev[XFIB_REASON_COUNT], cur[XFIB_REASON_COUNT];
	double t0, t1, next;
	struct rates rt;
	unsigned long n;
	int err;

	monitor_signals();
	t0 = clock_s(CLOCK_MONOTONIC);
	err = stats_read(skel, prev);
	if (err)
		return err;
	next = t0;
	for (n = 0; !c->count || n < c->count; n++) {
		next += c->interval;
		if (!sleep_until(next))
			break;
		t1 = clock_s(CLOCK_MONOTONIC);
		rt.time = clock_s(CLOCK_REALTIME);
		err = stats_read(skel, cur);
		if (err)
			return err;
		rt.interval = t1 - t0;
		/* Suspended (SIGSTOP, a slow terminal): skip the missed ticks
		 * rather than print a burst of them. */
		if (t1 - next > c->interval)
			next = t1;
		rates_compute(&rt, prev, cur);
		if (c->json) {
			err = out_json(rates_json(&rt));
			if (err)
				return err;
		} else {
			rates_text(&rt);
		}
		/* Each interval reaches a pipe (jq, a log) when it ends. */
		fflush(stdout);
		memcpy(prev, cur, sizeof(prev));
		t0 = t1;
	}
	return 0;
}

int cmd_stats(struct ctl *c, int argc, char **argv)
{
	struct xfib_counter sum[XFIB_REASON_COUNT];
	struct xfib_fwd_bpf *skel = NULL;
	struct status st;
	int err;

	err = open_dataplane(c, 0, &skel);
	if (err)
		return err;
	if (c->ports) {
		err = stats_ports(c, skel);
		goto out;
	}
	if (c->interval > 0) {
		err = stats_monitor(c, skel);
		goto out;
	}
	err = stats_read(skel, sum);
	if (err)
		goto out;
	if (c->prometheus) {
		status_read(skel, c->pin_dir, &st);
		stats_prometheus(&st, sum);
		status_free(&st);
	} else if (c->json) {
		err = out_json(counters_json(sum));
	} else {
		counters_text(sum);
	}
out:
	xfib_fwd_bpf__destroy(skel);
	return err;
}
