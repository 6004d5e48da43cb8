// SPDX-License-Identifier: GPL-2.0-only
/*
 * xfibctl: attach the xfib forwarder to ports, and look at its state.
 * Exit codes: 0 success, 1 the command failed, 2 usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <net/if.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "log.h"
#include "pin.h"
#include "fib.h"
#include "verify.h"
#include "xfib/counters.h"
#include "xfib/maps.h"

#define XFIB_PROG_NAME "xfib_fwd"

struct ctl {
	const char *pin_opt;
	char pin_dir[XFIB_PIN_DIR_MAX];
	bool json;
	enum xdp_attach_mode mode;
	unsigned long random; /* verify --random */
	__u32 iif;            /* lookup, verify --iif */
	double interval;      /* stats --interval, seconds; 0: one snapshot */
	unsigned long count;  /* stats --count; 0: until SIGINT */
	bool prometheus;      /* stats --prometheus */
};

struct cmd {
	const char *name;
	const char *args;
	const char *help;
	int (*fn)(struct ctl *c, int argc, char **argv);
	bool needs_root;
};

static const struct cmd *current_cmd;

#define err_cmd(fmt, ...) \
	fprintf(stderr, "xfibctl: %s " fmt "\n", current_cmd->name, ##__VA_ARGS__)

/* ---- helpers --------------------------------------------------------- */

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

static int open_dataplane(struct ctl *c, unsigned int flags,
			  struct xfib_fwd_bpf **skel)
{
	int err = xfib_pin_dir(c->pin_opt, c->pin_dir, sizeof(c->pin_dir));

	if (err) {
		err_cmd("%s: %s", "pin directory", strerror(-err));
		return err;
	}
	err = xfib_open(c->pin_dir, flags, skel);
	if (err == -ENOENT)
		err_cmd("%s: no xfib dataplane here (attach a port or start xfibd)",
			c->pin_dir);
	else if (err == -ENOTSUP)
		err_cmd("%s: not on a BPF filesystem (mount -t bpf bpf /sys/fs/bpf)",
			c->pin_dir);
	else if (err == -EPERM || err == -EACCES)
		err_cmd("%s: permission denied (run as root)", c->pin_dir);
	else if (err)
		err_cmd("%s: cannot load the dataplane: %s", c->pin_dir,
			strerror(-err));
	return err;
}

/* The id of the XDP program on ifindex and how it is attached (0: none). */
static __u32 xdp_prog_on(int ifindex, __u8 *mode)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);

	if (bpf_xdp_query(ifindex, 0, &q))
		return 0;
	if (mode)
		*mode = q.attach_mode;
	switch (q.attach_mode) {
	case XDP_ATTACHED_DRV:
		return q.drv_prog_id;
	case XDP_ATTACHED_SKB:
		return q.skb_prog_id;
	case XDP_ATTACHED_HW:
		return q.hw_prog_id;
	case XDP_ATTACHED_MULTI:
		return q.drv_prog_id ? q.drv_prog_id : q.skb_prog_id;
	default:
		return 0;
	}
}

static bool prog_is_xfib(__u32 id, char *name, size_t len)
{
	struct bpf_prog_info info = { 0 };
	__u32 ilen = sizeof(info);
	int fd = bpf_prog_get_fd_by_id(id);
	bool ours;

	if (fd < 0)
		return false;
	ours = !bpf_obj_get_info_by_fd(fd, &info, &ilen) &&
	       !strcmp(info.name, XFIB_PROG_NAME);
	if (name)
		snprintf(name, len, "%s", info.name);
	close(fd);
	return ours;
}

static const char *mode_name(__u8 mode)
{
	switch (mode) {
	case XDP_ATTACHED_DRV:
		return "native";
	case XDP_ATTACHED_SKB:
		return "generic";
	case XDP_ATTACHED_HW:
		return "offload";
	case XDP_ATTACHED_MULTI:
		return "multi";
	default:
		return "none";
	}
}

static int resolve_ifaces(char **names, int n, int *ifindex)
{
	int i;

	for (i = 0; i < n; i++) {
		ifindex[i] = if_nametoindex(names[i]);
		if (!ifindex[i]) {
			err_cmd("%s: no such interface", names[i]);
			return -ENODEV;
		}
	}
	return 0;
}

/* ---- attach / detach ---------------------------------------------------- */

static int detach_one(struct xfib_fwd_bpf *skel, int ifindex, __u32 prog_id,
		      __u8 mode)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, o, .old_prog_fd = -1);
	__u32 flags = mode == XDP_ATTACHED_SKB ? XDP_FLAGS_SKB_MODE :
						 XDP_FLAGS_DRV_MODE;
	int err, fd;

	/* Remove the egress entry first: no packet is redirected to a port
	 * that is about to stop being ours. */
	if (skel)
		bpf_map_delete_elem(bpf_map__fd(skel->maps.xfib_tx_ports), &ifindex);
	/* Replace only our program, even if someone swapped it meanwhile. */
	fd = bpf_prog_get_fd_by_id(prog_id);
	if (fd >= 0) {
		o.old_prog_fd = fd;
		flags |= XDP_FLAGS_REPLACE;
	}
	err = bpf_xdp_attach(ifindex, -1, flags, &o);
	if (fd >= 0)
		close(fd);
	return err;
}

static int cmd_attach(struct ctl *c, int argc, char **argv)
{
	struct xfib_fwd_bpf *skel = NULL;
	struct xdp_program *xp = NULL;
	int *ifindex, i, done = 0, err;
	char name[BPF_OBJ_NAME_LEN];

	if (argc < 1) {
		err_cmd("needs at least one interface");
		return -EINVAL;
	}
	ifindex = calloc(argc, sizeof(*ifindex));
	if (!ifindex)
		return -ENOMEM;
	err = resolve_ifaces(argv, argc, ifindex);
	if (err)
		goto out;
	/* Check every port before touching any: all or nothing. */
	for (i = 0; i < argc; i++) {
		__u32 id = xdp_prog_on(ifindex[i], NULL);
		int j;

		for (j = 0; j < i; j++) {
			if (ifindex[j] == ifindex[i]) {
				err_cmd("%s: named twice", argv[i]);
				err = -EINVAL;
				goto out;
			}
		}
		if (!id)
			continue;
		if (prog_is_xfib(id, name, sizeof(name)))
			err_cmd("%s: already attached", argv[i]);
		else
			err_cmd("%s: another XDP program is attached (id %u, %s)",
				argv[i], id, name);
		err = -EEXIST;
		goto out;
	}
	err = open_dataplane(c, XFIB_OPEN_PROG | XFIB_OPEN_CREATE, &skel);
	if (err)
		goto out;
	xp = xdp_program__from_fd(bpf_program__fd(skel->progs.xfib_fwd));
	if (!xp || libxdp_get_error(xp)) {
		err = xp ? (int)libxdp_get_error(xp) : -ENOMEM;
		xp = NULL;
		err_cmd("%s: %s", XFIB_PROG_NAME, strerror(-err));
		goto out;
	}
	for (i = 0; i < argc; i++, done++) {
		struct bpf_devmap_val dv = { .ifindex = ifindex[i] };

		err = xdp_program__attach(xp, ifindex[i], c->mode, 0);
		if (err) {
			if (err == -EOPNOTSUPP && c->mode == XDP_MODE_NATIVE)
				err_cmd("%s: the driver has no native XDP (try --mode generic)",
					argv[i]);
			else
				err_cmd("%s: %s", argv[i], strerror(-err));
			goto rollback;
		}
		/* A port is an egress once it is in the devmap. */
		if (bpf_map_update_elem(bpf_map__fd(skel->maps.xfib_tx_ports),
					&ifindex[i], &dv, BPF_ANY)) {
			err = -errno;
			err_cmd("%s: add to egress ports: %s", argv[i], strerror(errno));
			done++;
			goto rollback;
		}
	}
	err = 0;
	goto out;
rollback:
	for (i = 0; i < done; i++) {
		__u8 mode = 0;
		__u32 id = xdp_prog_on(ifindex[i], &mode);

		if (id)
			detach_one(skel, ifindex[i], id, mode);
	}
out:
	if (xp)
		xdp_program__close(xp);
	xfib_fwd_bpf__destroy(skel);
	free(ifindex);
	return err;
}

static int cmd_detach(struct ctl *c, int argc, char **argv)
{
	struct xfib_fwd_bpf *skel = NULL;
	int *ifindex, i, err;
	__u32 *ids;
	__u8 *modes;

	if (argc < 1) {
		err_cmd("needs at least one interface");
		return -EINVAL;
	}
	ifindex = calloc(argc, sizeof(*ifindex));
	ids = calloc(argc, sizeof(*ids));
	modes = calloc(argc, sizeof(*modes));
	if (!ifindex || !ids || !modes) {
		err = -ENOMEM;
		goto out;
	}
	err = resolve_ifaces(argv, argc, ifindex);
	if (err)
		goto out;
	for (i = 0; i < argc; i++) {
		ids[i] = xdp_prog_on(ifindex[i], &modes[i]);
		if (!ids[i] || !prog_is_xfib(ids[i], NULL, 0)) {
			err_cmd("%s: not attached", argv[i]);
			err = -ENOENT;
			goto out;
		}
	}
	/* The maps may be gone (pin dir removed); detaching still works. */
	if (xfib_pin_dir(c->pin_opt, c->pin_dir, sizeof(c->pin_dir)) ||
	    xfib_open(c->pin_dir, 0, &skel))
		skel = NULL;
	for (i = 0; i < argc; i++) {
		err = detach_one(skel, ifindex[i], ids[i], modes[i]);
		if (err) {
			err_cmd("%s: %s", argv[i], strerror(-err));
			goto out;
		}
	}
out:
	xfib_fwd_bpf__destroy(skel);
	free(ifindex);
	free(ids);
	free(modes);
	return err;
}

/* ---- status ----------------------------------------------------------------- */

static const char *fallback_name(__u32 f)
{
	switch (f) {
	case XFIB_FALLBACK_NONE:
		return "none";
	case XFIB_FALLBACK_TOO_LARGE:
		return "too_large";
	case XFIB_FALLBACK_RULES:
		return "policy_rules";
	default:
		return "unknown";
	}
}

static const char *fallback_help(__u32 f)
{
	switch (f) {
	case XFIB_FALLBACK_TOO_LARGE:
		return "the table is too large for the lookup algorithm";
	case XFIB_FALLBACK_RULES:
		return "policy rules (ip rule) select routes by more than the destination";
	default:
		return "unknown reason";
	}
}

static const char *fam_name(__u32 fam)
{
	return fam == XFIB_V4 ? "ipv4" : "ipv6";
}

/* One family's instance, for status and algo. */
static void print_fib_info(struct ctl *c, __u32 fam, const struct xfib_fib_info *fi)
{
	char when[32] = "never";
	time_t t = fi->last_swap;
	unsigned int a;
	bool first = true;

	if (t)
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", localtime(&t));
	if (c->json) {
		printf(",\"%s\":{\"algorithm\":\"%s\",\"forced\":%s,"
		       "\"routes\":%u,\"ranges\":%u,\"capacity\":%u,"
		       "\"generation\":%u,\"swaps\":%llu,\"last_swap\":%llu,"
		       "\"updates\":%llu,\"build_us\":%llu,\"memory\":%llu,"
		       "\"bytes_per_prefix\":%.1f,\"fallback\":\"%s\","
		       "\"build_error\":\"%s\","
		       "\"preferences\":{",
		       fam_name(fam), fib_algo_name(fi->algo),
		       fi->forced ? "true" : "false", fi->routes, fi->ranges,
		       fi->capacity, fi->generation,
		       (unsigned long long)fi->swaps,
		       (unsigned long long)fi->last_swap,
		       (unsigned long long)fi->updates,
		       (unsigned long long)fi->build_us,
		       (unsigned long long)fi->mem_bytes,
		       fi->routes ? (double)fi->mem_bytes / fi->routes : 0.0,
		       fallback_name(fi->fallback),
		       fi->build_error ? strerror(fi->build_error) : "");
		for (a = 1; a < XFIB_ALGO_COUNT; a++) {
			if (fib_algo_family(a) != (int)fam)
				continue;
			printf("%s\"%s\":%u", first ? "" : ",", fib_algo_name(a),
			       fi->pref[a]);
			first = false;
		}
		printf("}}");
		return;
	}
	printf("%s:        %s%s, %u prefixes, generation %u, %llu swaps (last %s)\n",
	       fam_name(fam), fib_algo_name(fi->algo),
	       fi->forced ? " (forced)" : "", fi->routes, fi->generation,
	       (unsigned long long)fi->swaps, when);
	if (fi->algo)
		printf("             %.1f MiB, %.1f bytes/prefix, %s %u of %u, built in %llu us, %llu in-place updates\n",
		       fi->mem_bytes / 1048576.0,
		       fi->routes ? (double)fi->mem_bytes / fi->routes : 0.0,
		       fi->algo == XFIB_ALGO_DIR24_8 || fi->algo == XFIB_ALGO_TRIE6 ?
			       "groups" : "ranges",
		       fi->ranges, fi->capacity,
		       (unsigned long long)fi->build_us,
		       (unsigned long long)fi->updates);
	if (fi->fallback)
		printf("             all traffic to the kernel: %s\n",
		       fallback_help(fi->fallback));
	if (fi->build_error)
		printf("             last build failed: %s (retrying; the instance above keeps serving)\n",
		       strerror(fi->build_error));
}

static int cmd_status(struct ctl *c, int argc, char **argv)
{
	struct xfib_fwd_bpf *skel = NULL;
	struct if_nameindex *ifs, *it;
	struct xfib_daemon d = { 0 };
	struct xfib_fib_info fi[XFIB_FAMILIES] = { 0 };
	__u32 key = 0, fam;
	int pid, nif = 0, err;

	if (argc) {
		err_cmd("unexpected argument '%s'", argv[0]);
		return -EINVAL;
	}
	err = open_dataplane(c, 0, &skel);
	if (err)
		return err;
	pid = xfib_daemon_pid(skel);
	bpf_map_lookup_elem(bpf_map__fd(skel->maps.xfib_daemon), &key, &d);
	for (fam = 0; fam < XFIB_FAMILIES; fam++)
		bpf_map_lookup_elem(bpf_map__fd(skel->maps.xfib_fib_info), &fam,
				    &fi[fam]);
	ifs = if_nameindex();

	if (c->json) {
		printf("{\"pin_dir\":");
		json_str(c->pin_dir);
		printf(",\"daemon\":{\"running\":%s,\"pid\":%d,\"table\":%u,"
		       "\"synced\":%s,\"started\":%llu,\"last_sync\":%llu,"
		       "\"resyncs\":%llu,\"overruns\":%llu,\"links\":%u,"
		       "\"neighbours\":%u,\"nexthops\":%u,\"groups\":%u},"
		       "\"interfaces\":[",
		       pid ? "true" : "false", pid, d.table,
		       pid && d.last_sync ? "true" : "false",
		       (unsigned long long)d.started,
		       (unsigned long long)d.last_sync,
		       (unsigned long long)d.resyncs,
		       (unsigned long long)d.overruns, d.links, d.neighs,
		       d.nexthops, d.groups);
	} else {
		printf("pin dir:     %s\n", c->pin_dir);
		if (pid) {
			char when[32] = "never";
			time_t t = d.last_sync;

			if (t)
				strftime(when, sizeof(when), "%F %T", localtime(&t));
			printf("daemon:      running (pid %d), table %u, %s\n",
			       pid, d.table, d.last_sync ? "synced" : "syncing");
			printf("mirror:      %u links, %u neighbours, %u nexthops, %u groups;\n"
			       "             last full sync %s, %llu resyncs after %llu overruns\n",
			       d.links, d.neighs, d.nexthops, d.groups, when,
			       (unsigned long long)d.resyncs,
			       (unsigned long long)d.overruns);
		}
		else
			printf("daemon:      not running (the dataplane forwards with its last state)\n");
		printf("interfaces:");
	}
	for (it = ifs; it && it->if_index; it++) {
		__u8 mode = 0;
		__u32 id = xdp_prog_on(it->if_index, &mode);

		if (!id || !prog_is_xfib(id, NULL, 0))
			continue;
		if (c->json) {
			printf("%s{\"name\":", nif ? "," : "");
			json_str(it->if_name);
			printf(",\"ifindex\":%u,\"mode\":\"%s\",\"prog_id\":%u}",
			       it->if_index, mode_name(mode), id);
		} else {
			printf(" %s (%s)", it->if_name, mode_name(mode));
		}
		nif++;
	}
	if (c->json)
		printf("]");
	else
		printf("%s\n", nif ? "" : " none");
	for (fam = 0; fam < XFIB_FAMILIES; fam++)
		print_fib_info(c, fam, &fi[fam]);
	if (c->json)
		printf("}\n");
	if (ifs)
		if_freenameindex(ifs);
	xfib_fwd_bpf__destroy(skel);
	return 0;
}

/* ---- algo ------------------------------------------------------------------ */

static int parse_family(const char *s)
{
	if (!strcmp(s, "ipv4") || !strcmp(s, "4") || !strcmp(s, "inet"))
		return XFIB_V4;
	if (!strcmp(s, "ipv6") || !strcmp(s, "6") || !strcmp(s, "inet6"))
		return XFIB_V6;
	return -1;
}

static int cmd_algo(struct ctl *c, int argc, char **argv)
{
	int fd_info, fd_ctl, fam = -1, want = -1, err, i;
	struct xfib_fwd_bpf *skel = NULL;
	struct xfib_fib_info fi;
	struct xfib_control ctl;
	__u32 key;

	if (argc > 2) {
		err_cmd("unexpected argument '%s'", argv[2]);
		return -EINVAL;
	}
	if (argc >= 1) {
		fam = parse_family(argv[0]);
		if (fam < 0) {
			err_cmd("%s: not a family (ipv4, ipv6)", argv[0]);
			return -EINVAL;
		}
	}
	if (argc == 2) {
		want = strcmp(argv[1], "auto") ? fib_algo_by_name(argv[1]) : XFIB_ALGO_NONE;
		if (want < 0 || (want && fib_algo_family(want) != fam)) {
			err_cmd("%s: not an %s algorithm (%s, auto)", argv[1],
				fam_name(fam), fam == XFIB_V4 ? "bsearch4, dir24_8" :
								"bsearch6, trie6");
			return -EINVAL;
		}
	}
	err = open_dataplane(c, 0, &skel);
	if (err)
		return err;
	fd_info = bpf_map__fd(skel->maps.xfib_fib_info);
	fd_ctl = bpf_map__fd(skel->maps.xfib_control);
	if (want >= 0) {
		key = fam;
		if (bpf_map_lookup_elem(fd_ctl, &key, &ctl)) {
			err = -errno;
			goto out;
		}
		ctl.algo = want;
		ctl.seq++;
		if (bpf_map_update_elem(fd_ctl, &key, &ctl, BPF_ANY)) {
			err = -errno;
			err_cmd("%s: %s", fam_name(fam), strerror(errno));
			goto out;
		}
		if (!xfib_daemon_pid(skel)) {
			fprintf(stderr, "xfibctl: algo %s: xfibd is not running; it applies the request when it starts\n",
				fam_name(fam));
			goto out;
		}
		/* The daemon builds and swaps; wait for it to report. */
		for (i = 0; i < 300; i++) {
			if (!bpf_map_lookup_elem(fd_info, &key, &fi) &&
			    fi.forced == (__u32)want &&
			    (!want || fi.algo == (__u32)want || fi.fallback ||
			     fi.build_error))
				break;
			usleep(20000);
		}
		if (i == 300) {
			err = -ETIMEDOUT;
			err_cmd("%s: xfibd did not apply %s within 6 s", fam_name(fam),
				argv[1]);
			goto out;
		}
		if (want && fi.algo != (__u32)want && fi.build_error) {
			err = -fi.build_error;
			err_cmd("%s: building %s failed: %s; xfibd retries with backoff, %s keeps serving",
				fam_name(fam), argv[1], strerror(fi.build_error),
				fib_algo_name(fi.algo));
			goto out;
		}
		if (want && fi.algo != (__u32)want) {
			err = -ENOSPC;
			err_cmd("%s: %s cannot hold this table: %s", fam_name(fam),
				argv[1], fallback_help(fi.fallback));
			goto out;
		}
	}
	if (c->json)
		printf("{\"pin_dir\":"), json_str(c->pin_dir);
	for (key = 0; key < XFIB_FAMILIES; key++) {
		if (fam >= 0 && key != (__u32)fam)
			continue;
		if (bpf_map_lookup_elem(fd_info, &key, &fi))
			memset(&fi, 0, sizeof(fi));
		print_fib_info(c, key, &fi);
		if (!c->json) {
			unsigned int a;

			printf("             preferences:");
			for (a = 1; a < XFIB_ALGO_COUNT; a++)
				if (fib_algo_family(a) == (int)key)
					printf(" %s %u%s", fib_algo_name(a), fi.pref[a],
					       a == fi.algo ? " (current)" : "");
			printf("\n");
		}
	}
	if (c->json)
		printf("}\n");
out:
	xfib_fwd_bpf__destroy(skel);
	return err;
}

/* ---- stats -------------------------------------------------------------------- */

static const char *const reason_names[] = {
#define X(name, str, help) str,
	XFIB_REASONS(X)
#undef X
};

static const char *const reason_help[] = {
#define X(name, str, help) help,
	XFIB_REASONS(X)
#undef X
};

/* Every counter summed over the CPUs; pc is scratch for one per-CPU value. */
static int stats_read(int fd, struct xfib_counter *pc, int ncpu,
		      struct xfib_counter *sum)
{
	__u32 r;
	int cpu;

	for (r = 0; r < XFIB_REASON_COUNT; r++) {
		if (bpf_map_lookup_elem(fd, &r, pc)) {
			int err = -errno;

			err_cmd("read counters: %s", strerror(-err));
			return err;
		}
		sum[r].packets = 0;
		sum[r].bytes = 0;
		for (cpu = 0; cpu < ncpu; cpu++) {
			sum[r].packets += pc[cpu].packets;
			sum[r].bytes += pc[cpu].bytes;
		}
	}
	return 0;
}

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A bit rate with an SI prefix, as ifstat and tc print them. */
static const char *bitrate_str(double bps, char *buf, size_t len)
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

static volatile sig_atomic_t stats_stop;

static void stats_on_signal(int sig)
{
	stats_stop = 1;
}

/*
 * stats -i: rates of the counters that moved, every interval. Deadlines
 * are absolute on CLOCK_MONOTONIC so the output does not drift, but each
 * rate is computed over the time actually elapsed between two reads: a
 * late wake-up must not inflate it.
 */
static int stats_monitor(struct ctl *c, int fd, struct xfib_counter *pc, int ncpu)
{
	/* No SA_RESTART: SIGINT must cut the sleep short. */
	struct sigaction sa = { .sa_handler = stats_on_signal };
	struct xfib_counter prev[XFIB_REASON_COUNT], cur[XFIB_REASON_COUNT];
	double t0, t1, next, dt;
	unsigned long n;
	int err;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	t0 = clock_s(CLOCK_MONOTONIC);
	err = stats_read(fd, pc, ncpu, prev);
	if (err)
		return err;
	next = t0;
	for (n = 0; !c->count || n < c->count; n++) {
		struct timespec ts;
		char when[32], b[32];
		bool moved = false;
		time_t now_s;
		double now;
		__u32 r;

		next += c->interval;
		ts.tv_sec = (time_t)next;
		ts.tv_nsec = (long)((next - ts.tv_sec) * 1e9);
		while (!stats_stop &&
		       clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		if (stats_stop)
			break;
		t1 = clock_s(CLOCK_MONOTONIC);
		now = clock_s(CLOCK_REALTIME);
		err = stats_read(fd, pc, ncpu, cur);
		if (err)
			return err;
		dt = t1 - t0;
		/* Suspended (SIGSTOP, a slow terminal): skip the missed ticks
		 * rather than print a burst of them. */
		if (t1 - next > c->interval)
			next = t1;
		if (c->json) {
			printf("{\"time\":%.3f,\"interval\":%.3f,\"rates\":{", now, dt);
		} else {
			now_s = (time_t)now;
			strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S",
				 localtime(&now_s));
			printf("%s.%03d  (%.3f s)\n", when,
			       (int)((now - now_s) * 1000), dt);
		}
		for (r = 0; r < XFIB_REASON_COUNT; r++) {
			/* Counters only grow; guard the subtraction anyway. */
			__u64 dp = cur[r].packets >= prev[r].packets ?
					   cur[r].packets - prev[r].packets : 0;
			__u64 db = cur[r].bytes >= prev[r].bytes ?
					   cur[r].bytes - prev[r].bytes : 0;

			if (!dp)
				continue;
			if (c->json)
				printf("%s\"%s\":{\"pps\":%.3f,\"bps\":%.3f}",
				       moved ? "," : "", reason_names[r], dp / dt,
				       db * 8 / dt);
			else
				printf("  %-26s %14.1f pps %16s\n", reason_names[r],
				       dp / dt, bitrate_str(db * 8 / dt, b, sizeof(b)));
			moved = true;
		}
		if (c->json)
			printf("}}\n");
		else if (!moved)
			printf("  no counter moved\n");
		/* Each interval reaches a pipe (jq, a log) when it ends. */
		fflush(stdout);
		memcpy(prev, cur, sizeof(prev));
		t0 = t1;
	}
	return 0;
}

/* A label value of the Prometheus text format: \, " and newline escaped. */
static void prom_label(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			printf("\\%c", *s);
		else if (*s == '\n')
			printf("\\n");
		else
			putchar(*s);
	}
	putchar('"');
}

static void prom_head(const char *name, const char *type, const char *help)
{
	printf("# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/*
 * stats --prometheus: the text exposition format, for node_exporter's
 * textfile collector (write to a temporary file and rename it into the
 * collector's directory, so it never reads half a file).
 */
static void stats_prometheus(struct xfib_fwd_bpf *skel, const struct xfib_counter *sum)
{
	struct xfib_fib_info fi[XFIB_FAMILIES] = { 0 };
	struct if_nameindex *ifs, *it;
	struct xfib_daemon d = { 0 };
	__u32 key = 0, fam, r;
	int pid;

	pid = xfib_daemon_pid(skel);
	bpf_map_lookup_elem(bpf_map__fd(skel->maps.xfib_daemon), &key, &d);
	for (fam = 0; fam < XFIB_FAMILIES; fam++)
		bpf_map_lookup_elem(bpf_map__fd(skel->maps.xfib_fib_info), &fam,
				    &fi[fam]);

	prom_head("xfib_packets_total", "counter",
		  "Packets seen by the XDP forwarder, by outcome: forwarded, dropped, or passed to the kernel and why.");
	for (r = 0; r < XFIB_REASON_COUNT; r++)
		printf("xfib_packets_total{reason=\"%s\"} %llu\n", reason_names[r],
		       (unsigned long long)sum[r].packets);
	prom_head("xfib_bytes_total", "counter",
		  "Bytes of the packets in xfib_packets_total (frame length).");
	for (r = 0; r < XFIB_REASON_COUNT; r++)
		printf("xfib_bytes_total{reason=\"%s\"} %llu\n", reason_names[r],
		       (unsigned long long)sum[r].bytes);

	prom_head("xfib_routes", "gauge", "Prefixes in the published lookup instance.");
	for (fam = 0; fam < XFIB_FAMILIES; fam++)
		printf("xfib_routes{family=\"%s\"} %u\n", fam_name(fam), fi[fam].routes);
	prom_head("xfib_algorithm_info", "gauge",
		  "Lookup algorithm of the published instance (none: every packet goes to the kernel).");
	for (fam = 0; fam < XFIB_FAMILIES; fam++) {
		printf("xfib_algorithm_info{family=\"%s\",algorithm=", fam_name(fam));
		prom_label(fib_algo_name(fi[fam].algo));
		printf("} 1\n");
	}
	prom_head("xfib_generation", "gauge", "Generation of the published lookup instance.");
	for (fam = 0; fam < XFIB_FAMILIES; fam++)
		printf("xfib_generation{family=\"%s\"} %u\n", fam_name(fam),
		       fi[fam].generation);
	prom_head("xfib_swaps_total", "counter",
		  "Lookup instances published (builds and algorithm switches).");
	for (fam = 0; fam < XFIB_FAMILIES; fam++)
		printf("xfib_swaps_total{family=\"%s\"} %llu\n", fam_name(fam),
		       (unsigned long long)fi[fam].swaps);
	prom_head("xfib_instance_bytes", "gauge", "Memory of the published lookup instance.");
	for (fam = 0; fam < XFIB_FAMILIES; fam++)
		printf("xfib_instance_bytes{family=\"%s\"} %llu\n", fam_name(fam),
		       (unsigned long long)fi[fam].mem_bytes);

	prom_head("xfib_daemon_up", "gauge",
		  "1 if xfibd maintains the maps; at 0 the dataplane forwards with its last state.");
	printf("xfib_daemon_up %d\n", pid ? 1 : 0);
	prom_head("xfib_resyncs_total", "counter",
		  "Full netlink dumps xfibd made after losing messages (socket overruns).");
	printf("xfib_resyncs_total %llu\n", (unsigned long long)d.resyncs);
	prom_head("xfib_netlink_overruns_total", "counter",
		  "Netlink notifications xfibd lost to receive buffer overruns.");
	printf("xfib_netlink_overruns_total %llu\n", (unsigned long long)d.overruns);

	/* Attached ports as status finds them: our program on the port. */
	prom_head("xfib_attached", "gauge",
		  "1 for every interface the XDP forwarder is attached to, with the attach mode.");
	ifs = if_nameindex();
	for (it = ifs; it && it->if_index; it++) {
		__u8 mode = 0;
		__u32 id = xdp_prog_on(it->if_index, &mode);

		if (!id || !prog_is_xfib(id, NULL, 0))
			continue;
		printf("xfib_attached{interface=");
		prom_label(it->if_name);
		printf(",mode=\"%s\"} 1\n", mode_name(mode));
	}
	if (ifs)
		if_freenameindex(ifs);
}

static int cmd_stats(struct ctl *c, int argc, char **argv)
{
	struct xfib_counter sum[XFIB_REASON_COUNT];
	struct xfib_fwd_bpf *skel = NULL;
	int ncpu = libbpf_num_possible_cpus(), err = 0;
	struct xfib_counter *pc;
	__u32 r;

	if (argc) {
		err_cmd("unexpected argument '%s'", argv[0]);
		return -EINVAL;
	}
	if (ncpu < 1)
		return ncpu;
	pc = calloc(ncpu, sizeof(*pc));
	if (!pc)
		return -ENOMEM;
	err = open_dataplane(c, 0, &skel);
	if (err)
		goto out;
	if (c->interval > 0) {
		err = stats_monitor(c, bpf_map__fd(skel->maps.xfib_stats), pc, ncpu);
		goto out;
	}
	err = stats_read(bpf_map__fd(skel->maps.xfib_stats), pc, ncpu, sum);
	if (err)
		goto out;
	if (c->prometheus) {
		stats_prometheus(skel, sum);
		goto out;
	}
	if (c->json)
		printf("{");
	else
		printf("%-26s %14s %16s\n", "counter", "packets", "bytes");
	for (r = 0; r < XFIB_REASON_COUNT; r++) {
		if (c->json)
			printf("%s\"%s\":{\"packets\":%llu,\"bytes\":%llu}",
			       r ? "," : "", reason_names[r],
			       (unsigned long long)sum[r].packets,
			       (unsigned long long)sum[r].bytes);
		else
			printf("%-26s %14llu %16llu  %s\n", reason_names[r],
			       (unsigned long long)sum[r].packets,
			       (unsigned long long)sum[r].bytes, reason_help[r]);
	}
	if (c->json)
		printf("}\n");
out:
	xfib_fwd_bpf__destroy(skel);
	free(pc);
	return err;
}

/* A stats option (-i/--interval, -c/--count, --prometheus); false if valid. */
static bool stats_opt(struct ctl *c, const struct cmd *cmd, int opt, const char *arg)
{
	char *end;

	if (cmd->fn != cmd_stats) {
		err_cmd("--%s applies to stats only", opt == 'I' ? "interval" :
			opt == 'c' ? "count" : "prometheus");
		return true;
	}
	switch (opt) {
	case 'I':
		errno = 0;
		c->interval = strtod(arg, &end);
		/* 1 ms floor: a smaller interval only spins on the map reads. */
		if (*end || end == arg || errno || !isfinite(c->interval) ||
		    c->interval < 0.001 || c->interval > 86400) {
			err_cmd("--interval '%s': not a number of seconds from 0.001 to 86400",
				arg);
			return true;
		}
		return false;
	case 'c':
		errno = 0;
		c->count = strtoul(arg, &end, 10);
		if (*end || end == arg || errno || *arg == '-' || !c->count) {
			err_cmd("--count '%s': not a number of intervals > 0", arg);
			return true;
		}
		return false;
	default:
		c->prometheus = true;
		return false;
	}
}

/* Options that do not go together; false if these do. */
static bool stats_opts_check(const struct ctl *c)
{
	if (c->prometheus && c->interval > 0) {
		err_cmd("--prometheus is a snapshot: it does not take --interval");
		return true;
	}
	if (c->prometheus && c->json) {
		err_cmd("--prometheus and --json are two output formats: choose one");
		return true;
	}
	if (c->count && !c->interval) {
		err_cmd("--count needs --interval");
		return true;
	}
	return false;
}

/* ---- lookup / verify ------------------------------------------------------------ */

static const char *addr_str(int af, const __u8 *a, char *buf, size_t len)
{
	if (!inet_ntop(af, a, buf, len))
		snprintf(buf, len, "?");
	return buf;
}

static const char *mac_str(const __u8 *m, char *buf, size_t len)
{
	snprintf(buf, len, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2],
		 m[3], m[4], m[5]);
	return buf;
}

/* Names are those of our namespace (the router's): ask the kernel, not
 * /sys, which nsenter leaves pointing at another namespace. */
static const char *dev_str(__u32 ifindex, char *buf)
{
	if (!ifindex || !if_indextoname(ifindex, buf))
		snprintf(buf, IF_NAMESIZE, "if%u", ifindex);
	return buf;
}

static const char *table_str(__u32 table, char *buf, size_t len)
{
	if (table == RT_TABLE_MAIN)
		return "main";
	if (table == RT_TABLE_LOCAL)
		return "local";
	if (table == RT_TABLE_DEFAULT)
		return "default";
	snprintf(buf, len, "%u", table);
	return buf;
}

/* A pass reason's help without its "to kernel: " lead. */
static const char *pass_why(enum xfib_reason a)
{
	static const char lead[] = "to kernel: ";
	const char *h = reason_help[a];

	return strncmp(h, lead, strlen(lead)) ? h : h + strlen(lead);
}

static const char *action_str(enum xfib_reason a)
{
	if (a == XFIB_FWD_V4 || a == XFIB_FWD_V6)
		return "forward";
	if (a == XFIB_DROP_BLACKHOLE)
		return "drop";
	return "pass";
}

/* xfib's answer in a few words: "gateway 198.18.2.2 dev r-sink (nexthop 5)". */
static void xfib_answer_str(const struct xfib_nexthop *nh, __u32 idx,
			    char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN], dev[IF_NAMESIZE];

	if (nh->kind == XFIB_NH_GATEWAY)
		snprintf(buf, len, "gateway %s dev %s (nexthop %u)",
			 addr_str(nh->family, nh->gw, a, sizeof(a)),
			 dev_str(nh->ifindex, dev), idx);
	else if (nh->kind == XFIB_NH_CONNECTED)
		snprintf(buf, len, "connected dev %s (nexthop %u)",
			 dev_str(nh->ifindex, dev), idx);
	else
		snprintf(buf, len, "%s (nexthop %u)", dpl_kind_name(nh->kind), idx);
}

/* The kernel's gateway, if bpf_fib_lookup() wrote one over dst. */
static bool kfib_gateway(int af, const __u8 *dst, const struct xv_query *k)
{
	return k->ret == BPF_FIB_LKUP_RET_SUCCESS &&
	       (k->family != af || memcmp(k->addr, dst, af == AF_INET ? 4 : 16));
}

static void kfib_answer_str(int af, const __u8 *dst, const struct xv_query *k,
			    char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN], dev[IF_NAMESIZE];

	if (k->ret != BPF_FIB_LKUP_RET_SUCCESS)
		snprintf(buf, len, "%s", kfib_ret_name(k->ret));
	else if (kfib_gateway(af, dst, k))
		snprintf(buf, len, "success via %s dev %s",
			 addr_str(k->family, k->addr, a, sizeof(a)),
			 dev_str(k->ifindex, dev));
	else
		snprintf(buf, len, "success dev %s", dev_str(k->ifindex, dev));
}

static void json_kfib(int af, const __u8 *dst, const struct xv_query *k)
{
	char a[INET6_ADDRSTRLEN], dev[IF_NAMESIZE];

	printf("{\"result\":\"%s\"", kfib_ret_name(k->ret));
	if (k->ret == BPF_FIB_LKUP_RET_SUCCESS) {
		printf(",\"ifindex\":%u,\"dev\":", k->ifindex);
		json_str(dev_str(k->ifindex, dev));
		if (kfib_gateway(af, dst, k))
			printf(",\"gateway\":\"%s\"",
			       addr_str(k->family, k->addr, a, sizeof(a)));
	}
	printf("}");
}

static void json_xfib_nh(const struct xfib_nexthop *nh, __u32 idx)
{
	char a[INET6_ADDRSTRLEN], dev[IF_NAMESIZE];

	printf("{\"nexthop\":%u,\"kind\":\"%s\"", idx, dpl_kind_name(nh->kind));
	if (nh->kind == XFIB_NH_GATEWAY || nh->kind == XFIB_NH_CONNECTED) {
		printf(",\"ifindex\":%u,\"dev\":", nh->ifindex);
		json_str(dev_str(nh->ifindex, dev));
	}
	if (nh->kind == XFIB_NH_GATEWAY)
		printf(",\"gateway\":\"%s\"", addr_str(nh->family, nh->gw, a, sizeof(a)));
	printf("}");
}

static int parse_addr(const char *s, int *fam, __u8 *addr)
{
	memset(addr, 0, 16);
	if (inet_pton(AF_INET, s, addr) == 1)
		*fam = XFIB_V4;
	else if (inet_pton(AF_INET6, s, addr) == 1)
		*fam = XFIB_V6;
	else
		return -EAFNOSUPPORT;
	return 0;
}

static void print_lookup(struct ctl *c, const struct dpl_result *r,
			 const struct kroute *kr, const struct xv_query *k,
			 enum verify_outcome agree, __u32 iif)
{
	int af = r->fam == XFIB_V4 ? AF_INET : AF_INET6;
	char a[INET6_ADDRSTRLEN], m1[18], m2[18], dev[IF_NAMESIZE], t[16], ans[128];
	bool out = r->nh.kind == XFIB_NH_GATEWAY || r->nh.kind == XFIB_NH_CONNECTED;
	static const char *const agree_str[] = {
		[VERIFY_MATCH] = "agrees",
		[VERIFY_DEFERRED] = "deferred to the kernel",
		[VERIFY_MISMATCH] = "MISMATCH",
	};

	if (c->json) {
		printf("{\"address\":\"%s\",\"family\":\"%s\",\"algorithm\":\"%s\","
		       "\"generation\":%u,\"nexthop\":{\"index\":%u,\"kind\":\"%s\",\"mtu\":%u},",
		       addr_str(af, r->addr, a, sizeof(a)), fam_name(r->fam),
		       fib_algo_name(r->act.algo), r->act.generation, r->nh_idx,
		       dpl_kind_name(r->nh.kind), r->nh.mtu);
		if (r->group)
			printf("\"group\":{\"nexthop\":%u,\"index\":%u,\"members\":%u},",
			       r->group_nh_idx, r->group_nh.group, r->members);
		printf("\"egress\":");
		if (out) {
			printf("{\"ifindex\":%u,\"name\":", r->nh.ifindex);
			json_str(dev_str(r->nh.ifindex, dev));
			printf(",\"known\":%s,\"up\":%s,\"attached\":%s}",
			       r->have_iface ? "true" : "false",
			       r->have_iface && (r->iface.flags & XFIB_IF_UP) ? "true" : "false",
			       r->attached ? "true" : "false");
		} else {
			printf("null");
		}
		if (r->nh.kind == XFIB_NH_GATEWAY)
			printf(",\"gateway\":\"%s\"", addr_str(r->nh.family, r->nh.gw, a, sizeof(a)));
		else
			printf(",\"gateway\":null");
		printf(",\"neighbour\":");
		if (out && r->have_neigh)
			printf("{\"index\":%u,\"state\":\"%s\",\"dst_mac\":\"%s\",\"src_mac\":\"%s\"}",
			       r->neigh_idx,
			       r->neigh.state == XFIB_NEIGH_VALID ? "valid" : "invalid",
			       mac_str(r->neigh.dmac, m1, sizeof(m1)),
			       mac_str(r->neigh.smac, m2, sizeof(m2)));
		else
			printf("null");
		printf(",\"action\":\"%s\",\"reason\":\"%s\",\"kernel\":{",
		       action_str(r->action), reason_names[r->action]);
		if (kr->err) {
			printf("\"error\":");
			json_str(strerror(-kr->err));
		} else {
			printf("\"prefix\":\"%s/%u\",\"table\":\"%s\",\"type\":\"%s\"",
			       addr_str(kr->family, kr->dst, a, sizeof(a)), kr->plen,
			       table_str(kr->table, t, sizeof(t)), kroute_type_name(kr->type));
			if (kr->oif) {
				printf(",\"dev\":");
				json_str(dev_str(kr->oif, dev));
			}
			if (kr->gw_family)
				printf(",\"gateway\":\"%s\"",
				       addr_str(kr->gw_family, kr->gw, a, sizeof(a)));
		}
		printf("},\"kernel_fib\":");
		json_kfib(af, r->addr, k);
		printf(",\"iif\":");
		json_str(dev_str(iif, dev));
		printf(",\"verdict\":\"%s\"}\n", agree == VERIFY_MATCH ? "match" :
						 agree == VERIFY_DEFERRED ? "deferred" : "mismatch");
		return;
	}

	printf("address:    %s (%s)\n", addr_str(af, r->addr, a, sizeof(a)), fam_name(r->fam));
	printf("instance:   %s, generation %u\n", fib_algo_name(r->act.algo),
	       r->act.generation);
	if (r->ready && r->group)
		printf("multipath:  nexthop %u, group %u of %u members; a flow with no\n"
		       "            ports takes:\n", r->group_nh_idx, r->group_nh.group,
		       r->members);
	if (r->ready)
		printf("nexthop:    %u, %s%s\n", r->nh_idx, dpl_kind_name(r->nh.kind),
		       r->nh_idx == XFIB_NH_IDX_NONE ? " (no route)" : "");
	if (out) {
		printf("egress:     %s (ifindex %u): %s, %s\n",
		       dev_str(r->nh.ifindex, dev), r->nh.ifindex,
		       !r->have_iface ? "unknown to xfibd" :
		       (r->iface.flags & XFIB_IF_UP) ? "up" : "down",
		       r->attached ? "attached" : "not attached");
		if (r->nh.kind == XFIB_NH_GATEWAY)
			printf("gateway:    %s\n", addr_str(r->nh.family, r->nh.gw, a, sizeof(a)));
		if (r->have_neigh)
			printf("neighbour:  %u, %s, dst %s, src %s\n", r->neigh_idx,
			       r->neigh.state == XFIB_NEIGH_VALID ? "valid" : "not resolved",
			       mac_str(r->neigh.dmac, m1, sizeof(m1)),
			       mac_str(r->neigh.smac, m2, sizeof(m2)));
		else
			printf("neighbour:  none\n");
	}
	if (r->action == XFIB_FWD_V4 || r->action == XFIB_FWD_V6)
		printf("action:     forward\n");
	else if (r->action == XFIB_DROP_BLACKHOLE)
		printf("action:     drop (blackhole)\n");
	else
		printf("action:     pass to the kernel: %s\n", pass_why(r->action));
	if (kr->err) {
		printf("kernel:     %s\n", strerror(-kr->err));
	} else {
		printf("kernel:     %s/%u table %s type %s",
		       addr_str(kr->family, kr->dst, a, sizeof(a)), kr->plen,
		       table_str(kr->table, t, sizeof(t)), kroute_type_name(kr->type));
		if (kr->gw_family)
			printf(" via %s", addr_str(kr->gw_family, kr->gw, a, sizeof(a)));
		if (kr->oif)
			printf(" dev %s", dev_str(kr->oif, dev));
		printf("\n");
	}
	kfib_answer_str(af, r->addr, k, ans, sizeof(ans));
	printf("kernel fib: %s (bpf_fib_lookup from %s): %s\n", ans,
	       dev_str(iif, dev), agree_str[agree]);
}

static int cmd_lookup(struct ctl *c, int argc, char **argv)
{
	struct xfib_fwd_bpf *skel = NULL;
	struct kfib *kf = NULL;
	struct dpl_result r;
	struct kroute kr;
	struct xv_query *k;
	struct dpl d = { 0 };
	const char *arg = NULL;
	enum verify_outcome agree;
	__u8 addr[16];
	int fam, i, err;
	__u32 iif;

	/* Option parsing stops at the address: take options after it too. */
	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "-j") || !strcmp(argv[i], "--json")) {
			c->json = true;
		} else if (!strcmp(argv[i], "-i") || !strcmp(argv[i], "--iif")) {
			if (++i == argc) {
				err_cmd("%s needs an interface", argv[i - 1]);
				return -EINVAL;
			}
			c->iif = if_nametoindex(argv[i]);
			if (!c->iif) {
				err_cmd("--iif %s: no such interface", argv[i]);
				return -ENODEV;
			}
		} else if (!arg) {
			arg = argv[i];
		} else {
			err_cmd("unexpected argument '%s'", argv[i]);
			return -EINVAL;
		}
	}
	if (!arg) {
		err_cmd("needs an address");
		return -EINVAL;
	}
	err = parse_addr(arg, &fam, addr);
	if (err) {
		err_cmd("%s: not an IPv4 or IPv6 address", arg);
		return err;
	}
	err = open_dataplane(c, 0, &skel);
	if (err)
		return err;
	iif = c->iif;
	if (!iif)
		iif = verify_default_iif(skel);
	err = dpl_open(&d, skel, fam);
	if (err) {
		err_cmd("%s: open the %s lookup table: %s", arg, fam_name(fam),
			strerror(-err));
		goto out;
	}
	err = dpl_resolve(&d, addr, &r);
	if (err) {
		err_cmd("%s: %s lookup: %s", arg, fam_name(fam), strerror(-err));
		goto out;
	}
	err = kroute_fibmatch(fam, addr, &kr);
	if (err) {
		err_cmd("%s: ask the kernel (rtnetlink RTM_GETROUTE): %s", arg,
			strerror(-err));
		goto out;
	}
	err = kfib_open(&kf);
	if (err) {
		err_cmd("load the kernel lookup program xfib_verify: %s", strerror(-err));
		goto out;
	}
	k = kfib_queries(kf);
	memset(k, 0, sizeof(*k));
	k->family = fam == XFIB_V4 ? AF_INET : AF_INET6;
	memcpy(k->addr, addr, 16);
	err = kfib_run(kf, iif, 1);
	if (!err && k->ret < 0)
		err = k->ret;
	if (err) {
		err_cmd("%s: bpf_fib_lookup: %s", arg, strerror(-err));
		goto out;
	}
	agree = verify_compare(&d, fam, addr, r.ready, r.group ? &r.group_nh : &r.nh, k);
	print_lookup(c, &r, &kr, k, agree, iif);
out:
	kfib_close(kf);
	if (d.skel)
		dpl_close(&d);
	xfib_fwd_bpf__destroy(skel);
	return err;
}

/* Lines of mismatches shown; the summary counts them all. */
#define VERIFY_SHOW 20

static int cmd_verify(struct ctl *c, int argc, char **argv)
{
	struct verify_opts o = { .random = c->random, .iif = c->iif,
				 .max_reports = VERIFY_SHOW };
	struct xfib_fwd_bpf *skel = NULL;
	struct verify_report rep;
	unsigned long total = 0, bad = 0;
	char a[INET6_ADDRSTRLEN], x[128], k[128], dev[IF_NAMESIZE], t[16];
	size_t i;
	int fam, err;

	if (argc) {
		err_cmd("unexpected argument '%s'", argv[0]);
		return -EINVAL;
	}
	err = open_dataplane(c, 0, &skel);
	if (err)
		return err;
	if (!xfib_daemon_pid(skel))
		fprintf(stderr, "xfibctl: verify: xfibd is not running: checking the state it left\n");
	err = verify_run(skel, &o, &rep);
	if (err) {
		err_cmd("%s", rep.err);
		goto out;
	}
	for (fam = 0; fam < XFIB_FAMILIES; fam++) {
		total += rep.fam[fam].checked;
		bad += rep.fam[fam].mismatched;
	}
	if (c->json) {
		printf("{\"table\":\"%s\",\"iif\":", table_str(rep.table, t, sizeof(t)));
		json_str(dev_str(rep.iif, dev));
		printf(",\"seconds\":%.3f", rep.seconds);
		for (fam = 0; fam < XFIB_FAMILIES; fam++) {
			const struct verify_family *f = &rep.fam[fam];

			printf(",\"%s\":{\"algorithm\":\"%s\",\"generation\":%u,"
			       "\"prefixes\":%zu,\"checked\":%lu,\"matched\":%lu,"
			       "\"deferred\":%lu,\"mismatched\":%lu,\"rechecked\":%lu}",
			       fam_name(fam), fib_algo_name(f->act.algo),
			       f->act.generation, f->prefixes, f->checked, f->matched,
			       f->deferred, f->mismatched, f->rechecked);
		}
		printf(",\"mismatches\":[");
		for (i = 0; i < rep.nmis; i++) {
			const struct verify_mismatch *m = &rep.mis[i];
			int af = m->fam == XFIB_V4 ? AF_INET : AF_INET6;

			printf("%s{\"family\":\"%s\",\"address\":\"%s\",\"xfib\":",
			       i ? "," : "", fam_name(m->fam),
			       addr_str(af, m->addr, a, sizeof(a)));
			json_xfib_nh(&m->nh, m->nh_idx);
			printf(",\"kernel\":");
			json_kfib(af, m->addr, &m->kernel);
			printf("}");
		}
		printf("]}\n");
	} else {
		for (i = 0; i < rep.nmis; i++) {
			const struct verify_mismatch *m = &rep.mis[i];
			int af = m->fam == XFIB_V4 ? AF_INET : AF_INET6;

			xfib_answer_str(&m->nh, m->nh_idx, x, sizeof(x));
			kfib_answer_str(af, m->addr, &m->kernel, k, sizeof(k));
			printf("mismatch: %s %s: xfib %s, kernel %s\n", fam_name(m->fam),
			       addr_str(af, m->addr, a, sizeof(a)), x, k);
		}
		if (bad > rep.nmis)
			printf("... and %lu more mismatches\n", bad - rep.nmis);
		for (fam = 0; fam < XFIB_FAMILIES; fam++) {
			const struct verify_family *f = &rep.fam[fam];

			printf("%s: %s generation %u, %zu prefixes: %lu checked, %lu matched, "
			       "%lu deferred to the kernel, %lu mismatched\n",
			       fam_name(fam), fib_algo_name(f->act.algo),
			       f->act.generation, f->prefixes, f->checked, f->matched,
			       f->deferred, f->mismatched);
		}
		printf("%lu addresses in %.2f s (%.0f/s), table %s, kernel lookups from %s\n",
		       total, rep.seconds, rep.seconds > 0 ? total / rep.seconds : 0.0,
		       table_str(rep.table, t, sizeof(t)), dev_str(rep.iif, dev));
	}
	/* Exit status 1: the dataplane disagrees with the kernel. */
	err = bad ? 1 : 0;
out:
	verify_report_free(&rep);
	xfib_fwd_bpf__destroy(skel);
	return err;
}

/* ---- command table ----------------------------------------------------------- */

static const struct cmd cmds[] = {
	{ "attach", "[--mode native|generic] IFNAME...",
	  "attach the forwarder to ports (all or none)", cmd_attach, true },
	{ "detach", "IFNAME...", "detach the forwarder from ports", cmd_detach, true },
	{ "status", "[-j]", "daemon, attached ports, lookup instances", cmd_status, true },
	{ "stats", "[-i SECS [-c N]] [--prometheus] [-j]",
	  "packets forwarded, dropped, and passed to the kernel by reason",
	  cmd_stats, true },
	{ "algo", "[ipv4|ipv6 [NAME|auto]]",
	  "show the lookup algorithms' preferences, or force one", cmd_algo, true },
	{ "lookup", "ADDR [--iif IFNAME] [-j]",
	  "the dataplane's answer for an address, beside the kernel's", cmd_lookup, true },
	{ "verify", "[--random N] [--iif IFNAME] [-j]",
	  "check the dataplane's answers against the kernel's FIB", cmd_verify, true },
};

#define NCMDS (sizeof(cmds) / sizeof(cmds[0]))

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "Usage: xfibctl [-p DIR] [-j] COMMAND [ARGS]\n\nCommands:\n");
	for (i = 0; i < NCMDS; i++)
		fprintf(f, "  %-8s %-36s %s\n", cmds[i].name, cmds[i].args, cmds[i].help);
	fprintf(f, "\nOptions:\n"
		   "  -p, --pin-dir DIR   pinned maps of the router (default: per network namespace)\n"
		   "  -j, --json          JSON output\n"
		   "  -v, --verbose       show library messages\n"
		   "  -h, --help          this help; COMMAND -h for a command's\n"
		   "\nExit status: 0 success, 1 failure, 2 usage error.\n");
}

static void cmd_usage(FILE *f, const struct cmd *cmd)
{
	fprintf(f, "Usage: xfibctl %s %s\n%s\n", cmd->name, cmd->args, cmd->help);
	if (cmd->fn == cmd_attach)
		fprintf(f, "  -m, --mode native|generic  XDP mode (default: native)\n");
	if (cmd->fn == cmd_verify)
		fprintf(f, "  -r, --random N             also check N random addresses per family\n");
	if (cmd->fn == cmd_verify || cmd->fn == cmd_lookup)
		fprintf(f, "  -i, --iif IFNAME           port the kernel's lookups enter by\n"
			   "                             (default: the first attached port, else lo)\n");
	if (cmd->fn == cmd_stats)
		fprintf(f, "  -i, --interval SECS        every SECS (fractional, >= 0.001), the rate of\n"
			   "                             each counter that moved; -j: one JSON object a line\n"
			   "  -c, --count N              stop after N intervals (default: at SIGINT)\n"
			   "      --prometheus           Prometheus text format (node_exporter textfile)\n");
	fprintf(f, "  -j, --json                 JSON output\n");
}

/* Commands may be abbreviated to any unique prefix. */
static const struct cmd *find_cmd(const char *name)
{
	const struct cmd *found = NULL;
	size_t i, len = strlen(name);

	for (i = 0; i < NCMDS; i++) {
		if (!strcmp(cmds[i].name, name))
			return &cmds[i];
		if (!strncmp(cmds[i].name, name, len)) {
			if (found) {
				fprintf(stderr, "xfibctl: '%s' is ambiguous (%s, %s)\n",
					name, found->name, cmds[i].name);
				return NULL;
			}
			found = &cmds[i];
		}
	}
	if (!found)
		fprintf(stderr, "xfibctl: unknown command '%s' (see xfibctl -h)\n", name);
	return found;
}

int main(int argc, char **argv)
{
	static const struct option gopts[] = {
		{ "pin-dir", required_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	static const struct option copts[] = {
		{ "mode", required_argument, NULL, 'm' },
		{ "random", required_argument, NULL, 'r' },
		{ "iif", required_argument, NULL, 'i' },
		/* stats reads -i as --interval; --iif is lookup and verify's */
		{ "interval", required_argument, NULL, 'I' },
		{ "count", required_argument, NULL, 'c' },
		{ "prometheus", no_argument, NULL, 'P' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct ctl c = { .mode = XDP_MODE_NATIVE };
	const struct cmd *cmd;
	int opt, err, longi = -1;

	/* '+': stop at the command; its own options are parsed below. */
	while ((opt = getopt_long(argc, argv, "+p:jvh", gopts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			c.pin_opt = optarg;
			break;
		case 'j':
			c.json = true;
			break;
		case 'v':
			log_level++;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	cmd = find_cmd(argv[optind]);
	if (!cmd)
		return 2;
	current_cmd = cmd;
	argc -= optind;
	argv += optind;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "+m:r:i:c:jh", copts, &longi)) != -1) {
		/* The short -i of stats is its interval (--iif stays --iif). */
		if (opt == 'i' && longi < 0 && cmd->fn == cmd_stats)
			opt = 'I';
		longi = -1;
		switch (opt) {
		case 'm':
			if (cmd->fn != cmd_attach) {
				err_cmd("--mode applies to attach only");
				return 2;
			}
			if (!strcmp(optarg, "native"))
				c.mode = XDP_MODE_NATIVE;
			else if (!strcmp(optarg, "generic"))
				c.mode = XDP_MODE_SKB;
			else {
				err_cmd("--mode '%s': use native or generic", optarg);
				return 2;
			}
			break;
		case 'r': {
			char *end;

			if (cmd->fn != cmd_verify) {
				err_cmd("--random applies to verify only");
				return 2;
			}
			c.random = strtoul(optarg, &end, 0);
			if (*end || !*optarg || *optarg == '-') {
				err_cmd("--random '%s': not a number of addresses", optarg);
				return 2;
			}
			break;
		}
		case 'i':
			if (cmd->fn != cmd_verify && cmd->fn != cmd_lookup) {
				err_cmd("--iif applies to lookup and verify only");
				return 2;
			}
			c.iif = if_nametoindex(optarg);
			if (!c.iif) {
				err_cmd("--iif %s: no such interface", optarg);
				return 1;
			}
			break;
		case 'I':
		case 'c':
		case 'P':
			if (stats_opt(&c, cmd, opt, optarg))
				return 2;
			break;
		case 'j':
			c.json = true;
			break;
		case 'h':
			cmd_usage(stdout, cmd);
			return 0;
		default:
			cmd_usage(stderr, cmd);
			return 2;
		}
	}
	if (cmd->fn == cmd_stats && stats_opts_check(&c))
		return 2;
	log_init("xfibctl", 0);
	log_level = log_level > 0 ? log_level + 1 : LOG_LEVEL_WARN;
	log_setup_libbpf();
	if (cmd->needs_root && geteuid() != 0) {
		/* Name what was asked for: the ports, or the router's maps. */
		if (argc - optind > 0)
			err_cmd("%s: permission denied: needs root (CAP_BPF, CAP_NET_ADMIN, CAP_SYS_ADMIN)",
				argv[optind]);
		else if (!xfib_pin_dir(c.pin_opt, c.pin_dir, sizeof(c.pin_dir)))
			err_cmd("%s: permission denied: needs root (CAP_BPF, CAP_NET_ADMIN, CAP_SYS_ADMIN)",
				c.pin_dir);
		else
			err_cmd("permission denied: needs root");
		return 1;
	}
	err = cmd->fn(&c, argc - optind, argv + optind);
	if (err == -EINVAL && (cmd->fn == cmd_attach || cmd->fn == cmd_detach) &&
	    argc - optind < 1)
		return 2;
	/* lookup and verify: -EINVAL is a usage error. */
	if (err == -EINVAL && (cmd->fn == cmd_lookup || cmd->fn == cmd_verify))
		return 2;
	/* stats: only its argument check returns -EINVAL. */
	if (err == -EINVAL && cmd->fn == cmd_stats)
		return 2;
	return err ? 1 : 0;
}
