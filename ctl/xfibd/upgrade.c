// SPDX-License-Identifier: GPL-2.0-only
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "layout.h"
#include "log.h"
#include "monoclock.h"
#include "upgrade.h"

/* Ports switched at most; a router has a handful. */
#define UPGRADE_PORTS_MAX 256

/* A port the old program runs on, in one XDP mode. */
struct port {
	int ifindex;
	__u32 mode; /* XDP_FLAGS_DRV_MODE or XDP_FLAGS_SKB_MODE */
	int old_fd; /* the old program, held until the switch is done */
};

/* Unpins everything in dir and removes it: 0 or -errno. */
static int pins_remove(const char *dir)
{
	struct dirent *e;
	int err = 0;
	DIR *d = opendir(dir);

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
		    unlinkat(dirfd(d), e->d_name, 0) && !err)
			err = -errno;
	closedir(d);
	if (rmdir(dir) && !err)
		err = -errno;
	return err;
}

static int old_map_fd(const struct upgrade *u, const char *name)
{
	char path[XFIB_PIN_DIR_MAX + 32];

	snprintf(path, sizeof(path), "%s/%s", u->pin_dir, name);
	return bpf_obj_get(path);
}

/*
 * Copies entries 0..n-1 of the old array map name into map, if the old
 * one's values are of the same size (what they mean is the same in every
 * layout so far: a layout that changes it must convert here). 0, or
 * -errno if it was there and could not be copied.
 */
static int carry_array(const struct upgrade *u, const char *name,
		       const struct bpf_map *map, __u32 n)
{
	struct bpf_map_info info = {};
	__u32 ilen = sizeof(info), key;
	char val[64];
	int fd = old_map_fd(u, name), err = 0;

	if (fd < 0)
		return 0;
	if (bpf_obj_get_info_by_fd(fd, &info, &ilen))
		err = -errno;
	else if (info.value_size != bpf_map__value_size(map) ||
		 info.value_size > sizeof(val) || info.max_entries < n)
		pr_warn("upgrade: %s of another shape: not carried over", name);
	else
		for (key = 0; key < n && !err; key++)
			if (bpf_map_lookup_elem(fd, &key, val) ||
			    bpf_map_update_elem(bpf_map__fd(map), &key, val, BPF_ANY))
				err = -errno;
	close(fd);
	if (err)
		pr_warn("upgrade: carrying %s over: %s", name, strerror(-err));
	return err;
}

/*
 * Makes the new egress devmap hold what the old one holds: the ports the
 * old dataplane redirects to, attached (or detached) by xfibctl until
 * now. 0 or -errno.
 */
static int egress_sync(const struct upgrade *u, struct xfib_fwd_bpf *skel)
{
	int nfd = bpf_map__fd(skel->maps.xfib_tx_ports);
	int ofd = old_map_fd(u, "xfib_tx_ports");
	__u32 key, next, *prev = NULL;
	struct bpf_devmap_val v;
	int err = 0;

	if (ofd < 0)
		return errno == ENOENT ? 0 : -errno;
	while (!err && !bpf_map_get_next_key(ofd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(ofd, &key, &v))
			continue; /* deleted meanwhile */
		v = (struct bpf_devmap_val){ .ifindex = v.ifindex };
		if (bpf_map_update_elem(nfd, &key, &v, BPF_ANY))
			err = -errno;
	}
	/* Ports detached from the old dataplane since the last copy. */
	for (prev = NULL; !err && !bpf_map_get_next_key(nfd, prev, &next);) {
		key = next;
		if (bpf_map_lookup_elem(ofd, &key, &v) && errno == ENOENT &&
		    !bpf_map_delete_elem(nfd, &key))
			continue; /* the walk starts over, without it */
		prev = &key;
	}
	close(ofd);
	return err;
}

static int stage_create(struct upgrade *u)
{
	int err, holder;

	if ((size_t)snprintf(u->stage, sizeof(u->stage), "%s-upgrade",
			     u->pin_dir) >= sizeof(u->stage))
		return -ENAMETOOLONG;
	/* "-upgrade", not ".upgrade": bpffs refuses names with a dot. Left
	 * by an upgrade that died before its switch: we hold the pin
	 * directory's lock, so nobody else is making it. */
	err = pins_remove(u->stage);
	if (err) {
		pr_warn("upgrade: removing the staging directory %s left behind: %s",
			u->stage, strerror(-err));
		return err;
	}
	err = xfib_pin_dir_create(u->stage);
	if (err) {
		pr_warn("upgrade: creating %s: %s", u->stage, strerror(-err));
		return err;
	}
	u->stage_lock = xfib_pin_lock(u->stage, &holder);
	if (u->stage_lock < 0) {
		pr_warn("upgrade: locking %s: %s", u->stage, strerror(-u->stage_lock));
		return u->stage_lock;
	}
	return 0;
}

int upgrade_open(struct upgrade *u, const char *pin_dir, int from,
		 struct xfib_fwd_bpf **skel, int *tbl24_fd)
{
	int err;

	*u = (struct upgrade){ .on = true, .from = from, .stage_lock = -1 };
	*skel = NULL;
	if (tbl24_fd)
		*tbl24_fd = -1;
	snprintf(u->pin_dir, sizeof(u->pin_dir), "%s", pin_dir);
	pr_info("%s: the pinned maps are layout %d, an older xfib's: upgrading them to layout %d; the old dataplane forwards until the new one is complete",
		pin_dir, from, XFIB_LAYOUT_VERSION);
	err = stage_create(u);
	if (err)
		goto err;
	/* The program too: it replaces the old one on the ports. */
	err = xfib_open_tbl24(u->stage, XFIB_OPEN_CREATE | XFIB_OPEN_PROG, skel,
			      tbl24_fd);
	if (err) {
		pr_warn("upgrade: loading the new dataplane in %s: %s%s%s", u->stage,
			strerror(-err), log_verifier_tail() ? "; the verifier said:\n" : "",
			log_verifier_tail() ?: "");
		goto err;
	}
	/* Before the first sync: flows keep their paths, a forced algorithm
	 * stays forced, and the neighbours of the egress ports are kept
	 * resolved. */
	err = carry_array(u, "xfib_hash_seed", (*skel)->maps.xfib_hash_seed, 1);
	err = err ?: carry_array(u, "xfib_control", (*skel)->maps.xfib_control,
				 XFIB_FAMILIES);
	err = err ?: egress_sync(u, *skel);
	if (err) {
		pr_warn("upgrade: carrying the old maps' state over: %s", strerror(-err));
		goto err;
	}
	pr_info("upgrade: new maps and program in %s; syncing them with the kernel",
		u->stage);
	return 0;
err:
	if (*skel)
		xfib_fwd_bpf__destroy(*skel);
	*skel = NULL;
	if (tbl24_fd && *tbl24_fd >= 0)
		close(*tbl24_fd);
	if (tbl24_fd)
		*tbl24_fd = -1;
	upgrade_abort(u);
	return err;
}

/* Whether the program of prog_fd reads the map of id map_id. */
static bool prog_uses_map(int prog_fd, __u32 map_id)
{
	struct bpf_prog_info info = {};
	__u32 ilen = sizeof(info), ids[64], i;

	if (bpf_obj_get_info_by_fd(prog_fd, &info, &ilen))
		return false;
	if (info.nr_map_ids > sizeof(ids) / sizeof(ids[0]))
		return false;
	i = info.nr_map_ids;
	memset(&info, 0, sizeof(info));
	info.nr_map_ids = i;
	info.map_ids = (__u64)(unsigned long)ids;
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &ilen))
		return false;
	for (i = 0; i < info.nr_map_ids; i++)
		if (ids[i] == map_id)
			return true;
	return false;
}

/*
 * Adds (ifindex, mode) to p if prog_id is a program of the old maps. 0, or
 * -EOPNOTSUPP for libxdp's multi-program dispatcher (where the kernel
 * lets libxdp use it), which may run the old program as an extension:
 * replacing the dispatcher would drop its other programs, leaving it
 * would leave the port to maps nobody keeps.
 */
static int port_add(struct port *p, int *n, int ifindex, __u32 mode,
		    __u32 prog_id, __u32 map_id)
{
	struct bpf_prog_info info = {};
	__u32 ilen = sizeof(info);
	int fd;

	if (!prog_id || *n == UPGRADE_PORTS_MAX)
		return 0;
	fd = bpf_prog_get_fd_by_id(prog_id);
	if (fd < 0)
		return 0;
	if (!bpf_obj_get_info_by_fd(fd, &info, &ilen) &&
	    !strcmp(info.name, "xdp_dispatcher")) {
		pr_warn("upgrade: ifindex %d runs libxdp's dispatcher, which this upgrade cannot switch: detach the ports, remove the pins and attach again",
			ifindex);
		close(fd);
		return -EOPNOTSUPP;
	}
	if (!prog_uses_map(fd, map_id)) {
		close(fd);
		return 0;
	}
	p[(*n)++] = (struct port){ .ifindex = ifindex, .mode = mode, .old_fd = fd };
	return 0;
}

/*
 * The ports running the old dataplane's program: those whose XDP program
 * reads the old xfib_active (not merely one named like ours: another pin
 * directory's). 0 or -errno; *n ports in p.
 */
static int ports_find(const struct upgrade *u, struct port *p, int *n)
{
	struct bpf_map_info info = {};
	__u32 ilen = sizeof(info);
	struct if_nameindex *ifs, *it;
	int fd = old_map_fd(u, "xfib_active"), err = 0;

	*n = 0;
	if (fd < 0)
		return -errno;
	if (bpf_obj_get_info_by_fd(fd, &info, &ilen)) {
		close(fd);
		return -errno;
	}
	close(fd);
	ifs = if_nameindex();
	if (!ifs)
		return -errno;
	for (it = ifs; !err && it->if_index; it++) {
		LIBBPF_OPTS(bpf_xdp_query_opts, q);

		if (bpf_xdp_query(it->if_index, 0, &q))
			continue;
		err = port_add(p, n, it->if_index, XDP_FLAGS_DRV_MODE,
			       q.drv_prog_id, info.id) ?:
		      port_add(p, n, it->if_index, XDP_FLAGS_SKB_MODE,
			       q.skb_prog_id, info.id);
	}
	if_freenameindex(ifs);
	return err;
}

static void ports_close(struct port *p, int n)
{
	while (n--)
		close(p[n].old_fd);
}

/* Puts from_fd on port p in place of to_fd (the replace the kernel does
 * at once: a packet runs one program or the other). 0 or -errno. */
static int port_replace(const struct port *p, int to_fd, int from_fd)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, o, .old_prog_fd = from_fd);

	return bpf_xdp_attach(p->ifindex, to_fd, XDP_FLAGS_REPLACE | p->mode, &o);
}

/* XFIB_TEST_UPGRADE_FAULT=WHERE: a failure the upgrade test injects. */
static bool fault(const char *where)
{
	const char *f = getenv("XFIB_TEST_UPGRADE_FAULT");

	if (!f || strcmp(f, where))
		return false;
	pr_warn("upgrade: failure injected %s (XFIB_TEST_UPGRADE_FAULT=%s)",
		!strcmp(where, "sync") ? "after the sync, before the switch" :
		"at the second port's switch", where);
	return true;
}

/*
 * Replaces the old program by new_fd on every port, each at once; on a
 * failure the ports switched so far get the old one back. 0 or -errno
 * after saying why; *us the time from the first replace to the last.
 */
static int ports_switch(struct port *p, int n, int new_fd, __u64 *us)
{
	char name[IF_NAMESIZE] = "?";
	__u64 t0 = mono_us();
	int i, j, err = 0;

	for (i = 0; i < n && !err; i++) {
		if (i == 1 && fault("switch"))
			err = -EIO;
		else
			err = port_replace(&p[i], new_fd, p[i].old_fd);
	}
	*us = mono_us() - t0;
	if (!err)
		return 0;
	i--;
	if_indextoname(p[i].ifindex, name);
	pr_warn("upgrade: replacing the program on %s (ifindex %d): %s; putting the old one back on the %d ports switched",
		name, p[i].ifindex, strerror(-err), i);
	for (j = 0; j < i; j++) {
		int e = port_replace(&p[j], p[j].old_fd, new_fd);

		if (e)
			pr_warn("upgrade: putting the old program back on ifindex %d: %s",
				p[j].ifindex, strerror(-e));
	}
	return err;
}

/* What the maps came from, for xfibctl status. */
static void layout_record(struct xfib_fwd_bpf *skel, const struct upgrade *u,
			  int ports, __u64 switch_us, __u64 sync_ms)
{
	struct xfib_layout l = {
		.version = XFIB_LAYOUT_VERSION,
		.from_version = u->from,
		.upgraded = time(NULL),
		.ports = ports,
		.switch_us = switch_us,
		.sync_ms = sync_ms,
	};
	__u32 key = 0;

	bpf_map_update_elem(bpf_map__fd(skel->maps.xfib_layout), &key, &l, BPF_ANY);
}

/*
 * The staging directory takes the pin directory's name in one rename, so
 * a reader finds either every old pin there or every new one; the old
 * ones, under the staging name now, are removed. Then the lock held on
 * the pin directory is the one on the new one.
 */
static int pins_exchange(struct upgrade *u, int *lock_fd)
{
	int err;

	if (renameat2(AT_FDCWD, u->stage, AT_FDCWD, u->pin_dir, RENAME_EXCHANGE)) {
		err = -errno;
		pr_warn("upgrade: exchanging %s with %s: %s", u->stage, u->pin_dir,
			strerror(-err));
		return err;
	}
	u->switched = true;
	err = pins_remove(u->stage);
	if (err)
		pr_warn("upgrade: removing the old pins (now in %s): %s", u->stage,
			strerror(-err));
	close(*lock_fd);
	*lock_fd = u->stage_lock;
	u->stage_lock = -1;
	return 0;
}

int upgrade_switch(struct upgrade *u, struct xfib_fwd_bpf *skel, int *lock_fd,
		   __u64 sync_ms)
{
	int new_fd = bpf_program__fd(skel->progs.xfib_fwd), n = 0, i, err;
	struct port *p = calloc(UPGRADE_PORTS_MAX, sizeof(*p));
	__u64 us = 0;

	if (!p)
		return -ENOMEM;
	err = fault("sync") ? -EIO : 0;
	/* The egress ports once more, as close to the switch as can be. */
	err = err ?: egress_sync(u, skel);
	err = err ?: ports_find(u, p, &n);
	if (err) {
		pr_warn("upgrade: before the switch: %s; the old dataplane keeps forwarding",
			strerror(-err));
		goto out;
	}
	err = ports_switch(p, n, new_fd, &us);
	if (!err) {
		err = pins_exchange(u, lock_fd);
		/* Switched, but the pins could not follow: back, whole. */
		for (i = 0; err && i < n; i++)
			port_replace(&p[i], p[i].old_fd, new_fd);
	}
	if (err) {
		pr_warn("upgrade from layout %d to %d failed: the old dataplane keeps forwarding",
			u->from, XFIB_LAYOUT_VERSION);
		goto out;
	}
	layout_record(skel, u, n, us, sync_ms);
	pr_info("upgraded the dataplane from layout %d to %d on %d ports in %.3f ms (%.3f ms per port), after a full sync of %llu ms into the new maps; %s holds them now",
		u->from, XFIB_LAYOUT_VERSION, n, us / 1000.0,
		n ? us / 1000.0 / n : 0.0, (unsigned long long)sync_ms, u->pin_dir);
out:
	ports_close(p, n);
	free(p);
	return err;
}

void upgrade_abort(struct upgrade *u)
{
	int err;

	if (!u->on || u->switched)
		return;
	err = pins_remove(u->stage);
	if (err)
		pr_warn("upgrade: removing %s: %s", u->stage, strerror(-err));
	else
		pr_info("upgrade: not done, %s removed; the old dataplane forwards on",
			u->stage);
	if (u->stage_lock >= 0)
		close(u->stage_lock);
	u->stage_lock = -1;
	u->on = false;
}
