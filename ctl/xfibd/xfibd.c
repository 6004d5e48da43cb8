// SPDX-License-Identifier: GPL-2.0-only
/*
 * xfibd: mirrors the kernel FIB of the network namespace it runs in into
 * the pinned xfib dataplane maps, and keeps them in sync until stopped.
 * Stopping it leaves the dataplane forwarding with the last state, for as
 * long as its lease on the mirror runs (lease_renew.h): a successor that
 * syncs within it takes over without a gap; without one, the kernel
 * forwards everything after it.
 */
#include <errno.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include <bpf/bpf.h>

#include "log.h"
#include "monoclock.h"
#include "kernel/netlink.h"
#include "pin.h"
#include "fib/fib.h"
#include "hash_seed.h"
#include "lease_renew.h"
#include "nf/nfgate.h"
#include "layout.h"
#include "options.h"
#include "rib/rib.h"
#include "xdpfeat.h"
#include "upgrade.h"
#include "xfrm/xfrm.h"

#define RESYNC_MIN_INTERVAL_MS 1000

struct daemon {
	struct xfib_fwd_bpf *skel;
	struct rib_dp dp; /* the pinned maps, as the RIB writes them */
	struct rib rib;
	struct fib fib;
	int fresh_tbl24; /* for fib_init(), from xfib_open_tbl24() */
	struct nl nl;
	struct nfgate nf;
	struct xdpfeat xf; /* which ports take XDP-redirected frames */
	struct xfrm_watch xfrm;
	struct lease_renew lease;
	struct upgrade up; /* maps of an older layout being upgraded */
	int lock_fd;       /* the pin directory's lock */
	/* The last full sync succeeded: with no resync due, the mirror is
	 * the kernel's FIB and the lease may be renewed. */
	bool synced;
	int batch_ms;
	__u32 eval_changes, eval_ms;
	__u64 started, last_sync, resyncs;
	__u64 last_resync_ms;
	__u64 fdb_renewed; /* CLOCK_MONOTONIC ms of the last fdb_renew */
};

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static void write_daemon_info(struct daemon *d)
{
	struct xfib_daemon info = {
		.started = d->started,
		.last_sync = d->last_sync,
		.resyncs = d->resyncs,
		.overruns = d->nl.overruns,
		.parse_errors = d->nl.parse_errors,
	};

	rib_write_daemon_info(&d->rib, &info);
}

/* Packets may be XDP-forwarded to ifindex: the port is attached. */
static bool port_attached(void *ctx, int ifindex)
{
	struct daemon *d = ctx;
	struct bpf_devmap_val v;
	__u32 key = ifindex;

	return !bpf_map_lookup_elem(bpf_map__fd(d->skel->maps.xfib_tx_ports),
				    &key, &v);
}

static void on_xmit(void *ctx, int ifindex, bool xmit)
{
	struct daemon *d = ctx;

	rib_link_xmit(&d->rib, ifindex, xmit);
}

/* The XDP features of every link (after a dump of the links, or when one
 * is new): 0 or -errno. */
static int xmit_sync(struct daemon *d)
{
	int err = xdpfeat_dump(&d->xf, on_xmit, d);

	if (err)
		pr_warn("reading the ports' XDP features: %s", strerror(-err));
	else
		d->rib.xmit_wanted = false;
	return err;
}

/* Notifications of XDP feature changes (a veth peer's GRO or XDP program
 * changed; without the netdev family, the links' changes that may); a
 * lost one means reading them all again. */
static void xmit_events(struct daemon *d)
{
	int err = xdpfeat_read(&d->xf, on_xmit, d);

	if (err == -ENOBUFS) {
		pr_warn("XDP feature notifications lost: reading them again");
		d->rib.xmit_wanted = true;
	} else if (err) {
		pr_warn("XDP feature notifications: %s", strerror(-err));
		d->rib.xmit_wanted = true;
	}
	if (d->rib.xmit_wanted)
		xmit_sync(d);
}

static int flush(struct daemon *d)
{
	int err = fib_flush(&d->fib, mono_ms());

	if (err)
		pr_warn("updating the dataplane: %s", strerror(-err));
	return err;
}

/*
 * Vouches for the mirror if it is the kernel's FIB as far as xfibd knows:
 * the last full sync succeeded, no resync is due (lost notifications,
 * changes the RIB could not apply), and every change read is in the
 * dataplane (the event loop reads the socket dry each time, so a daemon
 * back from SIGSTOP renews only once its backlog is applied). Called from
 * the event loop: a daemon that no longer runs it renews nothing.
 */
static bool in_sync(const struct daemon *d)
{
	return d->synced && !d->rib.resync_wanted && !rib_pending(&d->rib);
}

static void renew(struct daemon *d)
{
	if (in_sync(d))
		lease_renew(&d->lease);
}

static int full_sync(struct daemon *d, const char *why)
{
	__u64 t0 = mono_ms();
	struct rib_mem mem;
	int err;

	d->last_resync_ms = t0; /* a failed one is retried a second later */
	d->synced = false;
	err = nl_dump_all(&d->nl);
	if (err) {
		pr_warn("netlink dump: %s", strerror(-err));
		return err;
	}
	err = xmit_sync(d);
	if (err)
		return err;
	rib_sweep_stale(&d->rib);
	rib_rules_publish(&d->rib);
	xfrm_watch_resync(&d->xfrm, mono_ms());
	d->rib.fam[XFIB_V4].dirty = d->rib.fam[XFIB_V6].dirty = true;
	rib_resync_done(&d->rib);
	err = flush(d);
	if (err)
		return err;
	/* In sync, and not before: the dataplane may forward by the mirror
	 * again (after a start, an adoption or a resync). */
	d->synced = true;
	renew(d);
	d->last_sync = time(NULL);
	d->last_resync_ms = mono_ms(); /* the next one a second after this */
	pr_info("sync (%s) done in %llu ms: %zu links, %u ipv4 routes, %u ipv6 routes, %zu neighbours, %zu nexthops",
		why, (unsigned long long)(mono_ms() - t0), d->rib.links.count,
		d->rib.fam[XFIB_V4].routes, d->rib.fam[XFIB_V6].routes,
		d->rib.neighs.count, d->rib.nexthops.count);
	/* The dump's and the builds' scratch is free now: give it back. */
	malloc_trim(0);
	rib_mem(&d->rib, &mem);
	pr_info("routing memory: %.1f MiB routes, %.1f MiB prefix trees, %.1f MiB hash buckets",
		mem.routes / 1048576.0, mem.trees / 1048576.0,
		mem.buckets / 1048576.0);
	write_daemon_info(d);
	return 0;
}

/* How long the loop may sleep in poll(): until the batch is due, the
 * fib's next timed work, an expiry, the netfilter or XFRM watchers,
 * the bridge FDB's renewal, or the next allowed resync; a second at
 * most. */
static int poll_timeout(struct daemon *d, __u64 now, __u64 *first_change)
{
	int timeout = 1000, t;

	/* Coalesce a burst of changes (a table being loaded) into one
	 * update of the dataplane, at most batch_ms late. */
	if (rib_pending(&d->rib)) {
		if (!*first_change)
			*first_change = now;
		timeout = *first_change + d->batch_ms > now ?
			  (int)(*first_change + d->batch_ms - now) : 0;
	}
	t = fib_timeout(&d->fib, now);
	if (t >= 0 && t < timeout)
		timeout = t;
	/* Routes whose lifetime ends (rib_expire). */
	if (rib_next_expiry(&d->rib)) {
		__u64 e = rib_next_expiry(&d->rib);

		t = e > now ? (int)(e - now < 1000 ? e - now : 1000) : 0;
		if (t < timeout)
			timeout = t;
	}
	if (d->rib.rules_changed)
		timeout = 0;
	/* Renewals a quarter of the lease apart at most. */
	if (d->lease.lease_ms / 4 < (__u64)timeout)
		timeout = d->lease.lease_ms / 4;
	t = nfgate_timeout(&d->nf, now);
	if (t < timeout)
		timeout = t;
	t = xfrm_watch_timeout(&d->xfrm, now);
	if (t < timeout)
		timeout = t;
	if (d->rib.fdb.count) {
		__u64 due = d->fdb_renewed + rib_fdb_renew_ms(&d->rib);

		t = due > now ? (int)(due - now) : 0;
		if (t < timeout)
			timeout = t;
	}
	if (rib_resync_wanted(&d->rib)) {
		/* Resyncs are at least RESYNC_MIN_INTERVAL_MS apart,
		 * failed ones too: wait for the next, do not spin. */
		__u64 next = d->last_resync_ms + RESYNC_MIN_INTERVAL_MS;

		t = next > now ? (int)(next - now) : 0;
		if (t < timeout)
			timeout = t;
	}
	return timeout;
}

/* Whether netfilter may mark packets before routing, which fwmark rules
 * depend on, and whether bridge-family chains act on frames: from the
 * netfilter room to the RIB. */
static void marks_sync(struct daemon *d)
{
	int fam;

	for (fam = 0; fam < XFIB_FAMILIES; fam++)
		rib_rules_marks(&d->rib, fam, d->nf.marks[fam]);
	rib_bridge_nf(&d->rib, d->nf.bridge_chains);
}

/* Renews the bridge FDB entries of the hosts whose frames the dataplane
 * routed (rib_fdb.c), a few times per ageing time (which may change at
 * any time: the period is asked each time). */
static void fdb_renew(struct daemon *d, __u64 now)
{
	__u32 n;

	if (now - d->fdb_renewed < rib_fdb_renew_ms(&d->rib))
		return;
	n = rib_fdb_renew(&d->rib, nl_fdb_use, &d->nl);
	if (n)
		pr_debug("bridge FDB: %u entries renewed", n);
	d->fdb_renewed = now;
}

/* Reads the policy rules again if the kernel announced a change, and
 * publishes them if they, or the devices their iif names, changed. */
static void rules_sync(struct daemon *d)
{
	if (d->rib.rules_changed && nl_check_rules(&d->nl))
		pr_warn("reading policy rules failed; retrying");
	if (d->rib.rules_dirty)
		rib_rules_publish(&d->rib);
}

/* On SIGTERM/SIGINT: a full lease for a successor (a restart, an
 * upgrade), which takes over without a gap if it syncs within it. */
static void stop_renew(struct daemon *d)
{
	if (d->synced && !d->rib.resync_wanted && rib_pending(&d->rib))
		flush(d);
	renew(d);
	if (in_sync(d))
		pr_info("stopping on signal %d; the dataplane keeps forwarding for the %llu s lease",
			(int)stop_signal, (unsigned long long)d->lease.lease_ms / 1000);
	else
		pr_info("stopping on signal %d, not in sync: the dataplane forwards until the last lease runs out",
			(int)stop_signal);
}

static int run(struct daemon *d)
{
	struct pollfd pfd[6] = {
		{ .fd = nl_event_fd(&d->nl), .events = POLLIN },
		{ .fd = xdpfeat_fd(&d->xf), .events = POLLIN },
	};
	int npfd = 2 + nfgate_fds(&d->nf, pfd + 2);
	__u64 first_change = 0, last_info = 0;
	/* Why the next resync: ours (an overrun), else the RIB's request. */
	const char *resync_why = NULL;
	char why[96];
	int err;

	npfd += xfrm_watch_fds(&d->xfrm, pfd + npfd);
	while (!stop_signal) {
		__u64 now = mono_ms();
		int timeout = poll_timeout(d, now, &first_change);

		if (poll(pfd, npfd, timeout) < 0 && errno != EINTR)
			return -errno;
		if (stop_signal)
			break;

		err = nl_read_events(&d->nl);
		if (err == -ENOBUFS) {
			pr_warn("netlink receive buffer overrun: resynchronising");
			rib_want_resync(&d->rib);
			resync_why = "netlink receive buffer overrun";
		} else if (err) {
			pr_warn("netlink: %s", strerror(-err));
			return err;
		}
		xmit_events(d);
		nfgate_run(&d->nf, mono_ms());
		marks_sync(d);
		xfrm_watch_run(&d->xfrm, mono_ms());
		if (d->nl.nstale)
			nl_neigh_use(&d->nl, port_attached, d);
		if (d->nl.nrefresh)
			nl_link_refresh(&d->nl);
		fdb_renew(d, mono_ms());
		rib_fdb_moving_settle(&d->rib);
		rib_expire(&d->rib, mono_ms());
		rules_sync(d);
		fib_poll_control(&d->fib);

		now = mono_ms();
		if (rib_resync_wanted(&d->rib) &&
		    now - d->last_resync_ms >= RESYNC_MIN_INTERVAL_MS) {
			d->resyncs++;
			snprintf(why, sizeof(why), "resync %llu: %s",
				 (unsigned long long)d->resyncs,
				 resync_why ? resync_why :
				 "changes the mirror cannot apply one by one");
			if (full_sync(d, why))
				pr_warn("%s failed; retrying", why);
			else
				resync_why = NULL;
			first_change = 0;
			continue;
		}
		if (rib_pending(&d->rib)) {
			if (first_change && now - first_change >= (__u64)d->batch_ms) {
				flush(d);
				first_change = 0;
			}
		} else if (fib_timeout(&d->fib, now) == 0 ||
			   rib_retired_pending(&d->rib)) {
			/* Timed work (selection, a retry), or indexes retired
			 * by neighbour removals. */
			flush(d);
		}
		renew(d);
		if (now - last_info >= 1000) {
			rib_report_no_room(&d->rib);
			write_daemon_info(d);
			log_flush_repeats(0);
			last_info = now;
		}
	}
	stop_renew(d);
	return 0;
}

/*
 * What xfibd needs is CAP_BPF (maps) and CAP_NET_ADMIN (the devmap,
 * netlink's SO_RCVBUFFORCE, neighbour probes), not uid 0: the systemd
 * unit runs it with those two alone. Lists the missing ones in why;
 * returns true if any is.
 */
static bool missing_caps(char *why, size_t len)
{
	static const struct {
		int cap;
		const char *name;
	} need[] = { { CAP_BPF, "CAP_BPF" }, { CAP_NET_ADMIN, "CAP_NET_ADMIN" } };
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = { 0 };
	size_t i, off = 0;

	*why = '\0';
	if (syscall(SYS_capget, &hdr, data)) {
		snprintf(why, len, "capget: %s", strerror(errno));
		return true;
	}
	for (i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if (!(data[need[i].cap / 32].effective & (1U << (need[i].cap % 32))))
			off += snprintf(why + off, off < len ? len - off : 0, "%s%s",
					off ? " " : "", need[i].name);
	return *why;
}

/*
 * Creates or checks the pin directory and takes the daemon's lock on it,
 * before anything in it is adopted: two xfibd on one dataplane would hand
 * out the same nexthop and neighbour indexes. Returns the lock's fd, or
 * -errno after saying why.
 */
static int lock_pin_dir(const char *pin_dir)
{
	char why[64];
	int err, holder;

	err = xfib_pin_dir_create(pin_dir);
	if (err == -ENOTSUP) {
		pr_warn("%s: not on a BPF filesystem (mount -t bpf -o mode=0700 bpf /sys/fs/bpf)",
			pin_dir);
		return err;
	} else if (err == -EPERM && xfib_pin_dir_safe(pin_dir, why, sizeof(why)) == -EPERM) {
		pr_warn("%s: refusing a pin directory that others could change: %s "
			"(make it root's with mode 0700, or remove it)", pin_dir, why);
		return err;
	} else if (err) {
		pr_warn("%s: %s", pin_dir, strerror(-err));
		return err;
	}
	err = xfib_pin_lock(pin_dir, &holder);
	if (err == -EWOULDBLOCK && holder)
		pr_warn("%s: another xfibd (pid %d) is running on this pin directory",
			pin_dir, holder);
	else if (err == -EWOULDBLOCK)
		pr_warn("%s: another xfibd is running on this pin directory", pin_dir);
	else if (err < 0)
		pr_warn("%s: lock: %s", pin_dir, strerror(-err));
	return err;
}

/* Locks the pin directory into *lock_fd and opens (or creates) the pinned
 * maps into d->skel. 0, or -errno after saying why. */
static int open_pins(struct daemon *d, const struct options *o, char *pin_dir,
		     size_t len, int *lock_fd)
{
	enum xfib_stale stale;
	char why[512];
	int err, layout;

	err = xfib_pin_dir(o->pin_dir, pin_dir, len);
	if (err) {
		pr_warn("pin directory: %s", strerror(-err));
		return err;
	}
	*lock_fd = lock_pin_dir(pin_dir);
	if (*lock_fd < 0)
		return *lock_fd;
	err = xfib_open_tbl24(pin_dir, XFIB_OPEN_CREATE, &d->skel,
			      &d->fresh_tbl24);
	stale = err == -ESTALE ? xfib_stale_why(pin_dir, &layout, why, sizeof(why)) :
				 XFIB_STALE_NONE;
	if (stale == XFIB_STALE_OLDER)
		return upgrade_open(&d->up, pin_dir, layout, &d->skel,
				    &d->fresh_tbl24);
	if (stale == XFIB_STALE_MISMATCH) {
		pr_warn("%s: %s (to upgrade: xfibctl detach every port, rm -r %s, "
			"then attach and start xfibd again)", pin_dir, why, pin_dir);
		return err;
	}
	if (stale == XFIB_STALE_NEWER) {
		pr_warn("%s: %s", pin_dir, why);
		return err;
	}
	if (err) {
		pr_warn("%s: cannot create or reuse the pinned maps: %s", pin_dir, strerror(-err));
		return err;
	}
	return 0;
}

/* Says we are gone; the maps and the forwarding stay. */
static void clear_daemon_info(struct daemon *d)
{
	struct xfib_daemon info = { 0 };
	__u32 key = 0;

	bpf_map_update_elem(bpf_map__fd(d->skel->maps.xfib_daemon), &key, &info,
			    BPF_ANY);
}

/* Mirrors the FIB into d->skel's maps until a signal stops it. */
static int serve(struct daemon *d, const struct options *o, const char *pin_dir)
{
	__u64 t0;
	int err;

	d->started = time(NULL);
	err = rib_dp_bpf_open(&d->dp, d->skel);
	err = err ?: rib_init(&d->rib, &d->dp, o->table);
	err = err ?: rib_adopt(&d->rib);
	err = err ?: fib_init(&d->fib, &d->rib, d->skel, d->fresh_tbl24,
			      d->eval_changes, d->eval_ms);
	if (err) {
		pr_warn("initialise: %s", strerror(-err));
		goto out;
	}
	/* The netfilter and IPsec modes are published before anything the
	 * dataplane forwards by (interfaces, routes). */
	err = nfgate_init(&d->nf, d->skel, o->netfilter);
	if (err) {
		pr_warn("netfilter: %s", strerror(-err));
		goto out;
	}
	marks_sync(d);
	err = xfrm_watch_init(&d->xfrm, d->skel);
	if (err)
		goto out;
	/* Before the first renewal: no packet is hashed with another. */
	err = hash_seed_init(d->skel, o->hash_seed_set, o->hash_seed);
	if (err)
		goto out;
	err = lease_renew_open(&d->lease, d->skel, o->lease_s * 1000);
	if (err) {
		pr_warn("lease: %s", strerror(-err));
		goto out;
	}
	/* Subscribe before dumping: a change made during the dump is then
	 * seen at least once, as a notification. */
	err = nl_open(&d->nl, &d->rib, o->rcvbuf);
	if (err) {
		pr_warn("netlink: %s", strerror(-err));
		goto out;
	}
	/* Without the netdev family the veths' peers are probed instead
	 * (vethwatch.h) and other ports count as redirect targets, as before
	 * the family existed. If neither can be asked, every port counts as
	 * one; the kernel drops what one refuses. */
	err = xdpfeat_open(&d->xf, true);
	if (err)
		pr_warn("checking which ports take XDP-redirected frames: %s: ports are not checked",
			strerror(-err));
	else if (!d->xf.family)
		pr_info("the kernel has no netdev netlink family (Linux < 6.3): veth ports are checked by probing their peers, other drivers are taken to take XDP-redirected frames");
	d->rib.xmit_learned = !err && xdpfeat_known(&d->xf);
	if (stop_signal) { /* while starting: no sync, no switch */
		err = 0; /* xdpfeat_open()'s is only a warning */
		goto out;
	}
	pr_info("mirroring table %llu into %s", o->table,
		d->up.on ? d->up.stage : pin_dir);
	t0 = mono_ms();
	err = full_sync(d, "start");
	/* The new dataplane is complete: it takes the ports over, unless a
	 * stop came meanwhile (the old one then forwards on). */
	if (!err && d->up.on && !stop_signal)
		err = upgrade_switch(&d->up, d->skel, &d->lock_fd, mono_ms() - t0);
	if (!err && (!d->up.on || d->up.switched))
		err = run(d);
out:
	clear_daemon_info(d);
	lease_renew_close(&d->lease);
	xfrm_watch_fini(&d->xfrm);
	nfgate_fini(&d->nf);
	xdpfeat_close(&d->xf);
	nl_close(&d->nl);
	fib_fini(&d->fib);
	rib_fini(&d->rib);
	rib_dp_bpf_close(&d->dp);
	return err;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct options o;
	struct daemon d = { 0 };
	char pin_dir[XFIB_PIN_DIR_MAX], why[64];
	int err;

	err = options_parse(argc, argv, &o);
	if (err)
		return err > 0 ? 0 : 2;
	d.batch_ms = o.batch_ms;
	d.eval_changes = o.eval_changes;
	d.eval_ms = o.eval_ms;
	log_level = LOG_LEVEL_INFO + o.verbose > 3 ? 3 : LOG_LEVEL_INFO + o.verbose;
	log_init("xfibd", XLOG_DAEMON | (o.syslog ? XLOG_SYSLOG : 0));
	log_setup_libbpf();

	if (missing_caps(why, sizeof(why))) {
		pr_warn("missing capabilities: %s (run as root, or grant them)", why);
		return 1;
	}
	/* From here on a stop signal is seen, not fatal: an upgrade stopped
	 * while it builds its dataplane removes it before exiting. */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	d.lock_fd = -1;
	err = open_pins(&d, &o, pin_dir, sizeof(pin_dir), &d.lock_fd);
	if (!err)
		err = serve(&d, &o, pin_dir);
	xfib_fwd_bpf__destroy(d.skel);
	/* An upgrade that did not switch leaves nothing behind. */
	upgrade_abort(&d.up);
	if (d.lock_fd >= 0)
		close(d.lock_fd);
	log_flush_repeats(1);
	return err ? 1 : 0;
}
