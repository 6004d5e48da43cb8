// SPDX-License-Identifier: GPL-2.0-only
/*
 * xfibctl status, algo: the daemon, the attached ports and each family's
 * lookup instance; forcing an algorithm. A field of the daemon record or of
 * an instance shows in both outputs through one line in each of
 * daemon_text/daemon_json or fib_info_text/fib_info_json.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "algo_names.h"
#include "lease.h"
#include "output.h"
#include "xfibctl.h"

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

/* "YYYY-MM-DD hh:mm:ss" local time, or "never" for 0. */
static const char *when_str(__u64 secs, char *buf, size_t len)
{
	time_t t = secs;

	snprintf(buf, len, "never");
	if (t)
		strftime(buf, len, "%Y-%m-%d %H:%M:%S", localtime(&t));
	return buf;
}

static double bytes_per_prefix(const struct xfib_fib_info *fi)
{
	return fi->routes ? (double)fi->mem_bytes / fi->routes : 0.0;
}

void status_read(struct xfib_fwd_bpf *skel, const char *pin_dir,
		 struct status *st)
{
	__u32 key = 0, fam;

	memset(st, 0, sizeof(*st));
	st->pin_dir = pin_dir;
	st->pid = xfib_daemon_pid(skel);
	bpf_map_lookup_elem(bpf_map__fd(skel->maps.xfib_daemon), &key, &st->daemon);
	xfib_lease_read(skel, &st->lease);
	bpf_map_lookup_elem(bpf_map__fd(skel->maps.xfib_hash_seed), &key, &st->seed);
	bpf_map_lookup_elem(bpf_map__fd(skel->maps.xfib_layout), &key, &st->layout);
	st->lease_now = xfib_lease_clock();
	st->cap_neighs = bpf_map__max_entries(skel->maps.xfib_neighs);
	st->cap_nexthops = bpf_map__max_entries(skel->maps.xfib_nexthops);
	st->cap_groups = bpf_map__max_entries(skel->maps.xfib_nh_groups);
	for (fam = 0; fam < XFIB_FAMILIES; fam++) {
		bpf_map_lookup_elem(bpf_map__fd(skel->maps.xfib_fib_info), &fam,
				    &st->fi[fam]);
		bpf_map_lookup_elem(bpf_map__fd(skel->maps.xfib_nf_info), &fam,
				    &st->nf[fam]);
	}
	nf_status_read(skel, st);
	xfrm_status_read(skel, st);
	rules_status_read(skel, st);
	kernel_status_read(skel, st);
	ports_attached(&st->ports, &st->nports);
	ports_read_xmit(st->ports, st->nports);
	/* Without them status still says the rest; the reason is printed. */
	ports_read_counters(skel, st->ports, st->nports);
}

void status_free(struct status *st)
{
	free(st->ports);
	st->ports = NULL;
}

/* ---- one family's instance, for status and algo -------------------------- */

static void fib_info_text(__u32 fam, const struct xfib_fib_info *fi)
{
	char when[32];

	printf("%s:        %s%s, %u prefixes, generation %u, %llu swaps (last %s)\n",
	       fam_name(fam), xfib_algo_name(fi->algo),
	       fi->forced ? " (forced)" : "", fi->routes, fi->generation,
	       (unsigned long long)fi->swaps,
	       when_str(fi->last_swap, when, sizeof(when)));
	if (fi->algo)
		printf("             %.1f MiB, %.1f bytes/prefix, %s %u of %u, built in %llu us, %llu in-place updates\n",
		       fi->mem_bytes / 1048576.0, bytes_per_prefix(fi),
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

/* algo's extra line: each algorithm of the family and its preference. */
static void preferences_text(__u32 fam, const struct xfib_fib_info *fi)
{
	unsigned int a;

	printf("             preferences:");
	for (a = 1; a < XFIB_ALGO_COUNT; a++)
		if (xfib_algo_family(a) == (int)fam)
			printf(" %s %u%s", xfib_algo_name(a), fi->pref[a],
			       a == fi->algo ? " (current)" : "");
	printf("\n");
}

static json_object *fib_info_json(__u32 fam, const struct xfib_fib_info *fi)
{
	json_object *o = json_object_new_object(), *pref = json_object_new_object();
	unsigned int a;

	js_set(o, "algorithm", js_str(xfib_algo_name(fi->algo)));
	js_set(o, "forced", js_bool(fi->forced));
	js_set(o, "routes", js_u64(fi->routes));
	js_set(o, "ranges", js_u64(fi->ranges));
	js_set(o, "capacity", js_u64(fi->capacity));
	js_set(o, "generation", js_u64(fi->generation));
	js_set(o, "swaps", js_u64(fi->swaps));
	js_set(o, "last_swap", js_u64(fi->last_swap));
	js_set(o, "updates", js_u64(fi->updates));
	js_set(o, "build_us", js_u64(fi->build_us));
	js_set(o, "memory", js_u64(fi->mem_bytes));
	js_set(o, "bytes_per_prefix", js_fixed(bytes_per_prefix(fi), 1));
	js_set(o, "fallback", js_str(fallback_name(fi->fallback)));
	js_set(o, "build_error", js_str(fi->build_error ? strerror(fi->build_error) : ""));
	for (a = 1; a < XFIB_ALGO_COUNT; a++)
		if (xfib_algo_family(a) == (int)fam)
			js_set(pref, xfib_algo_name(a), js_u64(fi->pref[a]));
	js_set(o, "preferences", pref);
	return o;
}

/* ---- status ---------------------------------------------------------------- */

/* ms the lease has left (> 0), or has been expired for (<= 0). */
static long long lease_left_ms(const struct status *st)
{
	return ((long long)st->lease.until - (long long)st->lease_now) / 1000000;
}

/* Whether the dataplane forwards by the mirror, and for how long. */
static void lease_text(const struct status *st)
{
	const struct xfib_lease *l = &st->lease;
	long long left = lease_left_ms(st);

	if (!l->until) {
		printf("lease:       never given: every packet goes to the kernel (pass_stale) until xfibd syncs\n");
		return;
	}
	if (xfib_lease_valid(l, st->lease_now)) {
		printf("lease:       %llu s, renewed by xfibd (pid %u): %.1f s left\n",
		       (unsigned long long)l->lease_ms / 1000, l->pid,
		       left / 1000.0);
		return;
	}
	printf("lease:       %llu s, expired %.1f s ago: every packet goes to the kernel (pass_stale) until xfibd syncs\n",
	       (unsigned long long)l->lease_ms / 1000, -left / 1000.0);
}

static const char *seed_origin(__u32 origin)
{
	switch (origin) {
	case XFIB_SEED_RANDOM:
		return "random";
	case XFIB_SEED_SET:
		return "set";
	default:
		return "none";
	}
}

/* The multipath flow hash's seed, and where it came from. */
static void seed_text(const struct status *st)
{
	static const char *const why[] = {
		[XFIB_SEED_NONE] = "none yet: xfibd draws one at its first start",
		[XFIB_SEED_RANDOM] = "drawn at random at the first start",
		[XFIB_SEED_SET] = "set with xfibd --hash-seed",
	};
	__u32 o = st->seed.origin <= XFIB_SEED_SET ? st->seed.origin : 0;

	printf("ecmp hash:   seed 0x%08x (%s)\n", st->seed.seed, why[o]);
}

static json_object *seed_json(const struct status *st)
{
	json_object *o = json_object_new_object();

	js_set(o, "seed", js_u64(st->seed.seed));
	js_set(o, "origin", js_str(seed_origin(st->seed.origin)));
	return o;
}

/* The maps' layout, and the upgrade that made them if one did. */
static void layout_text(const struct status *st)
{
	const struct xfib_layout *l = &st->layout;
	char when[32];

	printf("layout:      %u", l->version);
	if (l->from_version)
		printf(", upgraded from layout %u %s on %u ports (the switch %.3f ms, after a full sync of %u ms)",
		       l->from_version, when_str(l->upgraded, when, sizeof(when)),
		       l->ports, l->switch_us / 1000.0, l->sync_ms);
	printf("\n");
}

static json_object *layout_json(const struct status *st)
{
	const struct xfib_layout *l = &st->layout;
	json_object *o = json_object_new_object(), *u = NULL;

	js_set(o, "version", js_u64(l->version));
	if (l->from_version) {
		u = json_object_new_object();
		js_set(u, "from_version", js_u64(l->from_version));
		js_set(u, "time", js_u64(l->upgraded));
		js_set(u, "ports", js_u64(l->ports));
		js_set(u, "switch_us", js_u64(l->switch_us));
		js_set(u, "sync_ms", js_u64(l->sync_ms));
	}
	js_set(o, "upgrade", u);
	return o;
}

static json_object *lease_json(const struct status *st)
{
	const struct xfib_lease *l = &st->lease;
	json_object *o = json_object_new_object();
	long long left = lease_left_ms(st);
	bool valid = xfib_lease_valid(l, st->lease_now);

	js_set(o, "valid", js_bool(valid));
	js_set(o, "given", js_bool(l->until));
	js_set(o, "seconds", js_u64(l->lease_ms / 1000));
	js_set(o, "left_ms", js_u64(valid ? left : 0));
	js_set(o, "expired_ms", js_u64(!valid && l->until ? -left : 0));
	js_set(o, "pid", js_u64(l->pid));
	js_set(o, "renewals", js_u64(l->renewals));
	js_set(o, "renewed", js_u64(l->renewed));
	return o;
}

static void daemon_text(const struct status *st)
{
	const struct xfib_daemon *d = &st->daemon;
	char when[32];

	if (!st->pid) {
		printf("daemon:      not running (the dataplane forwards with its last state while the lease runs)\n");
		return;
	}
	when_str(d->last_sync, when, sizeof(when));
	printf("daemon:      running (pid %d), table %u, %s\n",
	       st->pid, d->table, d->last_sync ? "synced" : "syncing");
	printf("mirror:      %u links, %u neighbours, %u nexthops, %u groups, %u nexthop objects;\n"
	       "             last full sync %s, %llu resyncs after %llu overruns, %llu parse errors\n",
	       d->links, d->neighs, d->nexthops, d->groups, d->nhobjs, when,
	       (unsigned long long)d->resyncs, (unsigned long long)d->overruns,
	       (unsigned long long)d->parse_errors);
	printf("capacity:    %u neighbours, %u nexthops, %u groups; %u routes to the kernel for want of room\n",
	       st->cap_neighs, st->cap_nexthops, st->cap_groups, d->no_room);
}

static json_object *daemon_json(const struct status *st)
{
	const struct xfib_daemon *d = &st->daemon;
	json_object *o = json_object_new_object(), *cap;

	js_set(o, "running", js_bool(st->pid));
	js_set(o, "pid", js_int(st->pid));
	js_set(o, "table", js_u64(d->table));
	js_set(o, "synced", js_bool(st->pid && d->last_sync));
	js_set(o, "started", js_u64(d->started));
	js_set(o, "last_sync", js_u64(d->last_sync));
	js_set(o, "resyncs", js_u64(d->resyncs));
	js_set(o, "overruns", js_u64(d->overruns));
	js_set(o, "parse_errors", js_u64(d->parse_errors));
	js_set(o, "links", js_u64(d->links));
	js_set(o, "neighbours", js_u64(d->neighs));
	js_set(o, "nexthops", js_u64(d->nexthops));
	js_set(o, "groups", js_u64(d->groups));
	js_set(o, "nexthop_objects", js_u64(d->nhobjs));
	js_set(o, "no_room", js_u64(d->no_room));
	cap = json_object_new_object();
	js_set(cap, "neighbours", js_u64(st->cap_neighs));
	js_set(cap, "nexthops", js_u64(st->cap_nexthops));
	js_set(cap, "groups", js_u64(st->cap_groups));
	js_set(o, "capacity", cap);
	return o;
}

/* One port's totals since it was attached. */
static void port_status_text(const struct port *p)
{
	struct port_totals t;

	if (!p->counted) {
		printf("  %s: not counted (ifindex %u >= %u)\n", p->name,
		       p->ifindex, XFIB_PORT_MAX);
		return;
	}
	port_totals(&p->c, &t);
	printf("  %s: rx %llu packets (%llu bytes): forwarded %llu, to kernel %llu, dropped %llu; tx %llu packets (%llu bytes)\n",
	       p->name, (unsigned long long)t.rx.packets,
	       (unsigned long long)t.rx.bytes,
	       (unsigned long long)t.forwarded.packets,
	       (unsigned long long)t.to_kernel.packets,
	       (unsigned long long)t.dropped.packets,
	       (unsigned long long)t.tx.packets, (unsigned long long)t.tx.bytes);
}

static void status_text(const struct status *st)
{
	__u32 fam;
	size_t i;

	printf("pin dir:     %s\n", st->pin_dir);
	layout_text(st);
	daemon_text(st);
	lease_text(st);
	seed_text(st);
	printf("interfaces:  ");
	for (i = 0; i < st->nports; i++)
		printf("%s%s (%s)", i ? ", " : "", st->ports[i].name,
		       mode_name(st->ports[i].mode));
	printf("%s\n", st->nports ? "" : "none");
	for (i = 0; i < st->nports; i++)
		port_status_text(&st->ports[i]);
	for (i = 0; i < st->nports; i++)
		if (!st->ports[i].xmit)
			printf("  %s: %s: %s\n", st->ports[i].name,
			       XFIB_NO_XMIT_TEXT, st->ports[i].no_xmit_why);
	for (fam = 0; fam < XFIB_FAMILIES; fam++) {
		fib_info_text(fam, &st->fi[fam]);
		rules_status_text(st, fam);
	}
	nf_status_text(st);
	xfrm_status_text(st);
	kernel_status_text(st);
}

static json_object *status_json(const struct status *st)
{
	json_object *o = json_object_new_object(), *ifs = json_object_new_array();
	__u32 fam;
	size_t i;

	js_set(o, "pin_dir", js_str(st->pin_dir));
	js_set(o, "layout", layout_json(st));
	js_set(o, "daemon", daemon_json(st));
	js_set(o, "lease", lease_json(st));
	js_set(o, "hash_seed", seed_json(st));
	for (i = 0; ifs && i < st->nports; i++) {
		const struct port *p = &st->ports[i];
		json_object *e = json_object_new_object();

		js_set(e, "name", js_str(p->name));
		js_set(e, "ifindex", js_u64(p->ifindex));
		js_set(e, "mode", js_str(mode_name(p->mode)));
		js_set(e, "prog_id", js_u64(p->prog_id));
		js_set(e, "counters", port_totals_json(p));
		/* null when the kernel cannot tell (before Linux 6.3) */
		js_set(e, "xdp_redirect_target",
		       p->xmit < 0 ? NULL : json_object_new_boolean(p->xmit));
		if (!p->xmit)
			js_set(e, "no_redirect_reason", js_str(p->no_xmit_why));
		json_object_array_add(ifs, e);
	}
	js_set(o, "interfaces", ifs);
	for (fam = 0; fam < XFIB_FAMILIES; fam++) {
		json_object *fo = fib_info_json(fam, &st->fi[fam]);

		rules_status_json(st, fam, fo);
		js_set(o, fam_name(fam), fo);
	}
	js_set(o, "netfilter", nf_status_json(st));
	js_set(o, "xfrm", xfrm_status_json(st));
	js_set(o, "kernel", kernel_status_json(st));
	return o;
}

int cmd_status(struct ctl *c, int argc, char **argv)
{
	struct xfib_fwd_bpf *skel = NULL;
	struct status st;
	int err;

	err = open_dataplane(c, 0, &skel);
	if (err)
		return err;
	status_read(skel, c->pin_dir, &st);
	if (c->json)
		err = out_json(status_json(&st));
	else
		status_text(&st);
	status_free(&st);
	xfib_fwd_bpf__destroy(skel);
	return err;
}

/* ---- algo ------------------------------------------------------------------ */

/* algo [FAMILY [NAME|auto]]: a usage error unless both name something. */
int algo_check(struct ctl *c, int argc, char **argv)
{
	int fam = -1, want = -1;

	if (argc >= 1) {
		fam = parse_family(argv[0]);
		if (fam < 0) {
			err_cmd("%s: not a family (ipv4, ipv6)", argv[0]);
			return -EINVAL;
		}
	}
	if (argc == 2) {
		want = strcmp(argv[1], "auto") ? xfib_algo_by_name(argv[1]) : XFIB_ALGO_NONE;
		if (want < 0 || (want && xfib_algo_family(want) != fam)) {
			char names[128] = "";
			unsigned int a;

			/* The family's algorithms in enum order. */
			for (a = 1; a < XFIB_ALGO_COUNT; a++)
				if (xfib_algo_family(a) == fam)
					snprintf(names + strlen(names),
						 sizeof(names) - strlen(names), "%s, ",
						 xfib_algo_name(a));
			err_cmd("%s: not an %s algorithm (%sauto)", argv[1],
				fam_name(fam), names);
			return -EINVAL;
		}
	}
	c->fam = fam;
	c->algo_want = want;
	return 0;
}

/*
 * Asks xfibd for algorithm want (XFIB_ALGO_NONE: automatic) on family fam
 * and waits until it reports the outcome; name is the algorithm as given.
 * 0 when applied, 1 when left for an xfibd not running, or -errno after
 * saying why.
 */
static int algo_request(struct xfib_fwd_bpf *skel, __u32 fam, int want,
			const char *name)
{
	int fd_info = bpf_map__fd(skel->maps.xfib_fib_info);
	int fd_ctl = bpf_map__fd(skel->maps.xfib_control);
	struct xfib_fib_info fi;
	struct xfib_control ctl;
	int i;

	if (bpf_map_lookup_elem(fd_ctl, &fam, &ctl))
		return -errno;
	ctl.algo = want;
	ctl.seq++;
	if (bpf_map_update_elem(fd_ctl, &fam, &ctl, BPF_ANY)) {
		int err = -errno;

		err_cmd("%s: %s", fam_name(fam), strerror(-err));
		return err;
	}
	if (!xfib_daemon_pid(skel)) {
		fprintf(stderr, "xfibctl: algo %s: xfibd is not running; it applies the request when it starts\n",
			fam_name(fam));
		return 1;
	}
	/* The daemon builds and swaps; wait for it to report. */
	for (i = 0; i < 300; i++) {
		if (!bpf_map_lookup_elem(fd_info, &fam, &fi) &&
		    fi.forced == (__u32)want &&
		    (!want || fi.algo == (__u32)want || fi.fallback || fi.build_error))
			break;
		usleep(20000);
	}
	if (i == 300) {
		err_cmd("%s: xfibd did not apply %s within 6 s", fam_name(fam), name);
		return -ETIMEDOUT;
	}
	if (want && fi.algo != (__u32)want && fi.build_error) {
		err_cmd("%s: building %s failed: %s; xfibd retries with backoff, %s keeps serving",
			fam_name(fam), name, strerror(fi.build_error),
			xfib_algo_name(fi.algo));
		return -fi.build_error;
	}
	if (want && fi.algo != (__u32)want) {
		err_cmd("%s: %s cannot hold this table: %s", fam_name(fam), name,
			fallback_help(fi.fallback));
		return -ENOSPC;
	}
	return 0;
}

int cmd_algo(struct ctl *c, int argc, char **argv)
{
	struct xfib_fwd_bpf *skel = NULL;
	struct xfib_fib_info fi;
	json_object *o = NULL;
	__u32 fam;
	int err;

	err = open_dataplane(c, 0, &skel);
	if (err)
		return err;
	if (c->algo_want >= 0) {
		err = algo_request(skel, c->fam, c->algo_want, argv[1]);
		if (err) {
			/* Nothing changed yet that could be shown. */
			err = err > 0 ? 0 : err;
			goto out;
		}
	}
	if (c->json) {
		o = json_object_new_object();
		js_set(o, "pin_dir", js_str(c->pin_dir));
	}
	for (fam = 0; fam < XFIB_FAMILIES; fam++) {
		if (c->fam >= 0 && fam != (__u32)c->fam)
			continue;
		if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.xfib_fib_info), &fam, &fi))
			memset(&fi, 0, sizeof(fi));
		if (c->json) {
			js_set(o, fam_name(fam), fib_info_json(fam, &fi));
		} else {
			fib_info_text(fam, &fi);
			preferences_text(fam, &fi);
		}
	}
	if (c->json)
		err = out_json(o);
out:
	xfib_fwd_bpf__destroy(skel);
	return err;
}
