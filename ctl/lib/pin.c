// SPDX-License-Identifier: GPL-2.0-only
/*
 * Opening the dataplane: the forwarder's object (with the conntrack
 * kfuncs where the kernel has them), its maps pinned or reused from the
 * pin directory (pindir.c) after checking their shapes, and the
 * mmap()ed views of them.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "layout.h"
#include "log.h"
#include "xfib/maps.h"
#include "xfib/netfilter.h"
#include "pin.h"
#include "xfib/tables.h"
#include "xfib_fwd_ct.skel.h"

/* The kfuncs the conntrack gate calls (bpf/lib/ctgate.h). */
static const char *const ct_kfuncs[] = {
	"bpf_xdp_ct_lookup", "bpf_ct_release", "bpf_ct_change_timeout",
	"bpf_ct_change_status",
};

static bool btf_has_ct_kfuncs(const struct btf *btf)
{
	size_t i;

	for (i = 0; i < sizeof(ct_kfuncs) / sizeof(ct_kfuncs[0]); i++)
		if (btf__find_by_name_kind(btf, ct_kfuncs[i], BTF_KIND_FUNC) < 0)
			return false;
	return true;
}

bool xfib_ct_kfuncs(void)
{
	struct btf *vmlinux, *mod;
	bool found;

	vmlinux = btf__load_vmlinux_btf();
	if (libbpf_get_error(vmlinux))
		vmlinux = NULL;
	found = vmlinux && btf_has_ct_kfuncs(vmlinux);
	if (vmlinux && !found && !access("/sys/kernel/btf/nf_conntrack", R_OK)) {
		/* nf_conntrack as a module brings them with its BTF. */
		mod = btf__load_module_btf("nf_conntrack", vmlinux);
		if (!libbpf_get_error(mod)) {
			found = btf_has_ct_kfuncs(mod);
			btf__free(mod);
		}
	}
	btf__free(vmlinux);
	return found;
}

struct xfib_fwd_bpf *xfib_fwd_open(const struct bpf_object_open_opts *opts,
				   bool with_ct)
{
	struct xfib_fwd_bpf *obj = calloc(1, sizeof(*obj));
	int err, ncpu;

	if (!obj) {
		errno = ENOMEM;
		return NULL;
	}
	err = xfib_fwd_bpf__create_skeleton(obj);
	if (!err && with_ct)
		obj->skeleton->data =
			(void *)xfib_fwd_ct_bpf__elf_bytes(&obj->skeleton->data_sz);
	err = err ?: bpf_object__open_skeleton(obj->skeleton, opts);
	/* The flow cache holds the sets of every CPU, one after another
	 * (bpf/lib/ctgate.h). */
	if (!err && (ncpu = libbpf_num_possible_cpus()) > 0)
		err = bpf_map__set_max_entries(obj->maps.xfib_ct_cache,
					       ncpu * XFIB_CT_CACHE_SETS);
	if (err) {
		xfib_fwd_bpf__destroy(obj);
		errno = -err;
		return NULL;
	}
	return obj;
}

/* "hash, 4096 x 16-byte values" */
static void map_shape(char *buf, size_t len, enum bpf_map_type type,
		      __u32 max_entries, __u32 value_size, __u32 flags)
{
	const char *t = libbpf_bpf_map_type_str(type);

	snprintf(buf, len, "%s, %u x %u-byte values, flags 0x%x",
		 t ? t : "unknown type", max_entries, value_size, flags);
}

/* 1 with why filled in if the map of info is not what m defines. */
static int shape_differs(const struct bpf_map_info *info,
			 const struct bpf_map *m, const char *what,
			 char *why, size_t len)
{
	char have[96], want[96];

	if (info->type == bpf_map__type(m) &&
	    info->key_size == bpf_map__key_size(m) &&
	    info->value_size == bpf_map__value_size(m) &&
	    info->max_entries == bpf_map__max_entries(m) &&
	    info->map_flags == bpf_map__map_flags(m))
		return 0;
	map_shape(have, sizeof(have), info->type, info->max_entries,
		  info->value_size, info->map_flags);
	map_shape(want, sizeof(want), bpf_map__type(m), bpf_map__max_entries(m),
		  bpf_map__value_size(m), bpf_map__map_flags(m));
	snprintf(why, len, "%s: pinned %s; this xfib defines %s", what, have,
		 want);
	return 1;
}

/*
 * The instance slots of each family's outer maps that the published state
 * in a pin directory says hold an instance: main's (xfib_active, when it
 * runs dir24_8 or trie6, whose maps they are) and the rules' large
 * tables' (xfib_tables descriptors in state INSTANCE); every slot where
 * there is no published state. Only these are read: before Linux 6.7 every lookup in a map-in-map from userspace,
 * found or not, waits for an RCU grace period (maybe_wait_bpf_programs()
 * in bpf_map_copy_value()), milliseconds each on Debian 12's 6.1, and a
 * scan of every slot made each xfibctl command take seconds there.
 */
struct filled_slots {
	__u32 slot[XFIB_FAMILIES][XFIB_INST_SLOTS];
	size_t n[XFIB_FAMILIES];
};

static int pinned_fd(const char *dir, const char *name)
{
	char path[XFIB_PIN_DIR_MAX + 32];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return bpf_obj_get(path);
}

static void filled_slots_read(const char *dir, struct filled_slots *f)
{
	struct xfib_active act;
	struct xfib_table_desc d;
	__u32 fam, s, k;
	int fd;

	memset(f, 0, sizeof(*f));
	fd = pinned_fd(dir, "xfib_active");
	if (fd < 0) {
		/* No published state (not an xfib's, or one that never ran):
		 * every slot is read. */
		for (fam = 0; fam < XFIB_FAMILIES; fam++)
			for (s = 0; s < XFIB_INST_SLOTS; s++)
				f->slot[fam][f->n[fam]++] = s;
		return;
	}
	for (fam = 0; fam < XFIB_FAMILIES; fam++)
		if (!bpf_map_lookup_elem(fd, &fam, &act) && act.slot < XFIB_SLOTS &&
		    act.algo == (fam == XFIB_V4 ? XFIB_ALGO_DIR24_8 : XFIB_ALGO_TRIE6))
			f->slot[fam][f->n[fam]++] = act.slot;
	close(fd);
	fd = pinned_fd(dir, "xfib_tables");
	for (fam = 0; fd >= 0 && fam < XFIB_FAMILIES; fam++)
		for (s = 1; s < XFIB_TABLE_SLOTS; s++) {
			k = fam * XFIB_TABLE_SLOTS + s;
			if (!bpf_map_lookup_elem(fd, &k, &d) &&
			    d.state == XFIB_TABLE_INSTANCE && d.off < XFIB_INST_SLOTS)
				f->slot[fam][f->n[fam]++] = d.off;
		}
	if (fd >= 0)
		close(fd);
}

/* The family whose instances an outer map of XFIB_INST_SLOTS runs holds,
 * by its name; -1 for another. */
static int outer_family(const struct bpf_map *m)
{
	const char *name = bpf_map__name(m);

	if (!strncmp(name, "xfib_dir24_", 11))
		return XFIB_V4;
	if (!strncmp(name, "xfib_trie6_", 11))
		return XFIB_V6;
	return -1;
}

/*
 * 1 with why filled in if the outer map outer_fd (pinned for m, of
 * max_entries keys) holds an inner map other than m's template. libbpf
 * reuses a pinned outer map by its own shape only, and another xfib's
 * inner maps would then fail in the verifier or at the first insert. An
 * instance map's keys are XFIB_INST_SLOTS equal runs, one per slot, and a
 * filled slot's run starts at its first key (tbl24 at the slot, a pool's
 * chunk 0 at slot * XFIB_POOL_SLOT_CHUNKS): only those of the slots f
 * names are read (an outer map of fewer keys: each), the first filled one
 * tells. An outer map with none filled cannot be told apart.
 */
static int inner_differs(int outer_fd, __u32 max_entries,
			 const struct bpf_map *m, const struct filled_slots *f,
			 char *why, size_t len)
{
	const struct bpf_map *tmpl = bpf_map__inner_map((struct bpf_map *)m);
	int fam = outer_family(m);
	char what[XFIB_PIN_DIR_MAX + 64];
	__u32 i, n, key, id;

	if (!tmpl)
		return 0;
	if (max_entries >= XFIB_INST_SLOTS && fam < 0)
		return 0;
	n = max_entries < XFIB_INST_SLOTS ? max_entries : f->n[fam];
	for (i = 0; i < n; i++) {
		struct bpf_map_info info = {};
		__u32 ilen = sizeof(info);
		int fd, err;

		key = max_entries < XFIB_INST_SLOTS ? i :
		      f->slot[fam][i] * (max_entries / XFIB_INST_SLOTS);
		if (bpf_map_lookup_elem(outer_fd, &key, &id))
			continue;
		fd = bpf_map_get_fd_by_id(id);
		if (fd < 0)
			return 0;
		err = bpf_obj_get_info_by_fd(fd, &info, &ilen);
		close(fd);
		if (err)
			return 0;
		snprintf(what, sizeof(what), "%s, its inner map %u",
			 bpf_map__pin_path(m) ?: bpf_map__name(m), key);
		return shape_differs(&info, tmpl, what, why, len);
	}
	return 0;
}

/* 1 with why filled in if the map pinned for m is not what m defines;
 * *pinned: whether there is one. */
static int pin_differs(const struct bpf_map *m, const struct filled_slots *f,
		       bool *pinned, char *why, size_t len)
{
	struct bpf_map_info info = {};
	__u32 ilen = sizeof(info);
	const char *path = bpf_map__pin_path(m);
	int fd, differs = 0;

	*pinned = false;
	if (!path)
		return 0;
	fd = bpf_obj_get(path);
	if (fd < 0)
		return 0;
	*pinned = true;
	if (!bpf_obj_get_info_by_fd(fd, &info, &ilen))
		differs = shape_differs(&info, m, path, why, len) ||
			  inner_differs(fd, info.max_entries, m, f, why, len);
	close(fd);
	return differs;
}

/* The maps of the object pins_differ() reports on (checked[]): more are
 * looked at again after the load. */
#define XFIB_OBJ_MAPS_MAX 128

/* Whether a loaded object reused an outer map holding another xfib's
 * inner maps that was pinned after pins_differ() looked (by another
 * loader meanwhile): libbpf checks a pinned map's own shape only. */
static bool inner_maps_differ(const struct bpf_object *obj, const char *dir,
			      const bool *checked)
{
	struct filled_slots f;
	struct bpf_map *m;
	bool read = false;
	char why[8];
	size_t i = 0;

	bpf_object__for_each_map(m, obj) {
		bool seen = i < XFIB_OBJ_MAPS_MAX && checked[i];

		i++;
		if (seen || !bpf_map__inner_map(m))
			continue;
		if (!read) {
			filled_slots_read(dir, &f);
			read = true;
		}
		if (inner_differs(bpf_map__fd(m), bpf_map__max_entries(m), m,
				  &f, why, sizeof(why)))
			return true;
	}
	return false;
}

/* 1 with why filled in if a map pinned for the opened (not yet loaded)
 * object skel is not what it defines; checked[i] (if not NULL): the i-th
 * map was pinned and looked at. */
static int pins_differ(struct xfib_fwd_bpf *skel, const char *dir,
		       bool *checked, char *why, size_t len)
{
	struct filled_slots f;
	struct bpf_map *m;
	bool pinned;
	size_t i = 0;

	filled_slots_read(dir, &f);
	bpf_object__for_each_map(m, skel->obj) {
		if (pin_differs(m, &f, &pinned, why, len))
			return 1;
		if (checked && i < XFIB_OBJ_MAPS_MAX)
			checked[i] = pinned;
		i++;
	}
	return 0;
}

int xfib_pin_mismatch(const char *pin_dir, char *why, size_t len)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .pin_root_path = pin_dir);
	struct xfib_fwd_bpf *skel = xfib_fwd_open(&opts, false);
	int found;

	if (!skel)
		return 0;
	found = pins_differ(skel, pin_dir, NULL, why, len);
	xfib_fwd_bpf__destroy(skel);
	return found;
}

/* The outer maps outer_maps_create() pinned, and the templates it made. */
struct outer_pins {
	const struct bpf_map *pinned[8];
	int npinned;
	struct {
		const struct bpf_map *inner; /* the shape */
		int fd;
	} tmpl[4];
	int ntmpl;
	int tbl24; /* the index in tmpl of the tbl24 shape's, or -1 */
};

static bool same_shape(const struct bpf_map *a, const struct bpf_map *b)
{
	return bpf_map__type(a) == bpf_map__type(b) &&
	       bpf_map__key_size(a) == bpf_map__key_size(b) &&
	       bpf_map__value_size(a) == bpf_map__value_size(b) &&
	       bpf_map__max_entries(a) == bpf_map__max_entries(b) &&
	       bpf_map__map_flags(a) == bpf_map__map_flags(b);
}

/* A map of inner's shape, made once per shape: -errno if it cannot be.
 * The one of the tbl24 shape goes on to be a tbl24, and is named so. */
static int template_fd(struct outer_pins *op, const struct bpf_map *inner,
		       const struct bpf_map *tbl24)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = bpf_map__map_flags(inner));
	bool is_tbl24 = same_shape(inner, tbl24);
	int i, fd;

	for (i = 0; i < op->ntmpl; i++)
		if (same_shape(op->tmpl[i].inner, inner))
			return op->tmpl[i].fd;
	if (op->ntmpl == (int)(sizeof(op->tmpl) / sizeof(op->tmpl[0])))
		return -E2BIG;
	fd = bpf_map_create(bpf_map__type(inner),
			    is_tbl24 ? "xfib_tbl24" : "xfib_template",
			    bpf_map__key_size(inner), bpf_map__value_size(inner),
			    bpf_map__max_entries(inner), &o);
	if (fd < 0)
		return -errno;
	if (is_tbl24)
		op->tbl24 = op->ntmpl;
	op->tmpl[op->ntmpl].inner = inner;
	op->tmpl[op->ntmpl++].fd = fd;
	return fd;
}

/*
 * Creates and pins the outer (map-in-map) maps missing from the pin
 * directory, for libbpf to reuse. libbpf would make each outer map a
 * template of its own, a throwaway inner map of the inner map's shape,
 * which the kernel allocates and zeroes in full: on a fresh directory,
 * two 64 MiB tbl24 values and two 1 MiB tbl8 chunks, more than the
 * dataplane's other maps together, for nothing. Here outer maps of one
 * inner shape share one template. (The outer maps carry no BTF either
 * way.) A loader that pins a map first wins; libbpf then reuses its.
 * Returns 0 or -errno; what was pinned is in op either way.
 */
static int outer_maps_create(struct xfib_fwd_bpf *skel, struct outer_pins *op)
{
	const struct bpf_map *tbl24 =
		bpf_map__inner_map(skel->maps.xfib_dir24_tbl24);
	struct bpf_map *m;

	bpf_object__for_each_map(m, skel->obj) {
		const struct bpf_map *inner = bpf_map__inner_map(m);
		const char *path = bpf_map__pin_path(m);
		LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = bpf_map__map_flags(m));
		int fd, err;

		if (!inner || !path || !access(path, F_OK))
			continue;
		if (op->npinned == (int)(sizeof(op->pinned) / sizeof(op->pinned[0])))
			return -E2BIG;
		fd = template_fd(op, inner, tbl24);
		if (fd < 0)
			return fd;
		o.inner_map_fd = fd;
		fd = bpf_map_create(bpf_map__type(m), bpf_map__name(m),
				    bpf_map__key_size(m), bpf_map__value_size(m),
				    bpf_map__max_entries(m), &o);
		if (fd < 0)
			return -errno;
		err = bpf_obj_pin(fd, path) ? -errno : 0;
		close(fd);
		if (err == -EEXIST)
			continue;
		if (err)
			return err;
		op->pinned[op->npinned++] = m;
	}
	return 0;
}

/* Closes the templates, but for the one of the tbl24 shape if tbl24_fd
 * wants it: a fresh, zeroed tbl24 for the caller (-1 if none was made). */
static void outer_pins_done(struct outer_pins *op, int *tbl24_fd)
{
	int i;

	for (i = 0; i < op->ntmpl; i++) {
		if (i == op->tbl24 && tbl24_fd)
			*tbl24_fd = op->tmpl[i].fd;
		else
			close(op->tmpl[i].fd);
	}
	op->ntmpl = 0;
	op->tbl24 = -1;
}

/* The outer maps of a load that failed are unpinned. */
static void outer_pins_undo(struct outer_pins *op)
{
	int i;

	for (i = 0; i < op->npinned; i++)
		unlink(bpf_map__pin_path(op->pinned[i]));
	op->npinned = 0;
}

/* What the loaded program may do here (struct xfib_prog_info), for status. */
static void prog_info_record(struct xfib_fwd_bpf *skel, __u32 flags)
{
	struct xfib_prog_info pi = { .flags = flags, .loaded = time(NULL) };
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), key = 0;

	if (!bpf_obj_get_info_by_fd(bpf_program__fd(skel->progs.xfib_fwd), &info, &len))
		pi.verified_insns = info.verified_insns;
	bpf_map_update_elem(bpf_map__fd(skel->maps.xfib_prog_info), &key, &pi, 0);
}

/* The pin directory is on a bpffs, safe, there (or made, with
 * XFIB_OPEN_CREATE), and holds no maps of another layout: 0 or -errno. */
static int pin_dir_usable(const char *pin_dir, unsigned int flags)
{
	int err = xfib_check_bpffs(pin_dir);

	if (err)
		return err;
	if (!(flags & XFIB_OPEN_CREATE) && access(pin_dir, F_OK))
		return -errno;
	err = xfib_pin_dir_create(pin_dir);
	if (err)
		return err;
	/* Refused before anything is opened: an older xfib's maps are for
	 * this one's xfibd to upgrade, a newer one's are not this build's
	 * to touch (xfib_stale_why). */
	err = xfib_pin_layout(pin_dir);
	if (err > 0 && err != XFIB_LAYOUT_VERSION)
		return -ESTALE;
	return 0;
}

static int xfib_open_once(const char *pin_dir, unsigned int flags, bool with_ct,
			  bool udp_stream, struct xfib_fwd_bpf **skelp, int *tbl24_fd)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .pin_root_path = pin_dir,
		    .kconfig = with_ct ? xfib_kconfig(true) : NULL);
	char tx_path[XFIB_PIN_DIR_MAX + 32];
	struct outer_pins op = { .tbl24 = -1 };
	bool checked[XFIB_OBJ_MAPS_MAX] = { false };
	char why[8];
	struct xfib_fwd_bpf *skel;
	int err, tx_fd;

	err = pin_dir_usable(pin_dir, flags);
	if (err)
		return err;

	/* Only a program calls the kfuncs: the maps alone load anywhere. */
	skel = xfib_fwd_open(&opts, with_ct);
	if (!skel)
		return -errno;
	skel->rodata->xfib_ct_udp_stream = udp_stream;
	if (!(flags & XFIB_OPEN_PROG))
		bpf_program__set_autoload(skel->progs.xfib_fwd, false);

	/* xfib_tx_ports is pinned here rather than by libbpf (see maps.h). */
	snprintf(tx_path, sizeof(tx_path), "%s/xfib_tx_ports", pin_dir);
	tx_fd = bpf_obj_get(tx_path);
	if (tx_fd >= 0) {
		err = bpf_map__reuse_fd(skel->maps.xfib_tx_ports, tx_fd);
		close(tx_fd);
		if (err)
			goto err;
	} else if (errno != ENOENT) {
		err = -errno;
		goto err;
	}
	/* Pins of another xfib are refused before anything is created:
	 * libbpf would refuse a map of another shape only after creating and
	 * pinning the maps before it, and reuse an outer map holding inner
	 * maps of another shape. */
	if (pins_differ(skel, pin_dir, checked, why, sizeof(why))) {
		err = -ESTALE;
		goto err;
	}
	err = outer_maps_create(skel, &op);
	err = err ?: xfib_fwd_bpf__load(skel);
	if (err) {
		/* As libbpf unpins the maps it pinned when its load fails. Not
		 * after a load that worked: another loader may have taken the
		 * outer maps by then (xfibctl polling a starting xfibd). */
		outer_pins_undo(&op);
		/* libbpf says EINVAL for a pin it cannot reuse, made meanwhile. */
		if (xfib_pin_mismatch(pin_dir, why, sizeof(why)))
			err = -ESTALE;
		goto err;
	}
	/* One pinned by another loader meanwhile. */
	if (inner_maps_differ(skel->obj, pin_dir, checked)) {
		err = -ESTALE;
		goto err;
	}
	if (tx_fd < 0) {
		err = bpf_map__pin(skel->maps.xfib_tx_ports, tx_path);
		if (err)
			goto err;
	}
	outer_pins_done(&op, tbl24_fd);
	xfib_layout_stamp(skel);
	if (flags & XFIB_OPEN_PROG)
		prog_info_record(skel, (with_ct ? XFIB_PROG_CT_KFUNCS : 0) |
				       (with_ct && udp_stream ? XFIB_PROG_CT_UDP_STREAM : 0));
	*skelp = skel;
	return 0;
err:
	outer_pins_done(&op, NULL);
	xfib_fwd_bpf__destroy(skel);
	return err;
}

int xfib_open_tbl24(const char *pin_dir, unsigned int flags,
		    struct xfib_fwd_bpf **skelp, int *tbl24_fd)
{
	bool with_ct = (flags & XFIB_OPEN_PROG) && xfib_ct_kfuncs();
	bool udp_stream = with_ct;
	int tries = 0, err;

	if (tbl24_fd)
		*tbl24_fd = -1;
	/* Two loaders starting together (xfibd and xfibctl) may both find a
	 * map missing and race to pin it; the loser reuses the winner's. */
	for (;;) {
		err = xfib_open_once(pin_dir, flags, with_ct, udp_stream, skelp,
				     tbl24_fd);
		if (err == -EEXIST && ++tries < 5)
			continue;
		/* A verifier that refuses to read conntrack's UDP stream time
		 * (Linux 6.1, bpf/lib/ctgate.h) takes the program without the
		 * read; a program it refuses for any other reason is refused
		 * again, and that log is the one reported. */
		if ((err == -EACCES || err == -EINVAL) && udp_stream &&
		    log_verifier_tail()) {
			pr_debug("the verifier refused the program reading conntrack's "
				 "UDP stream time; loading it without the read");
			udp_stream = false;
			continue;
		}
		return err;
	}
}

int xfib_open(const char *pin_dir, unsigned int flags, struct xfib_fwd_bpf **skelp)
{
	return xfib_open_tbl24(pin_dir, flags, skelp, NULL);
}

void *xfib_map_mmap(const struct bpf_map *map, bool writable, size_t *len)
{
	size_t page = sysconf(_SC_PAGESIZE);
	size_t vsz = (bpf_map__value_size(map) + 7) & ~7UL;
	size_t sz = vsz * bpf_map__max_entries(map);
	void *p;

	sz = (sz + page - 1) & ~(page - 1);
	p = mmap(NULL, sz, PROT_READ | (writable ? PROT_WRITE : 0), MAP_SHARED,
		 bpf_map__fd(map), 0);
	if (p == MAP_FAILED)
		return NULL;
	if (len)
		*len = sz;
	return p;
}

int xfib_daemon_pid(struct xfib_fwd_bpf *skel)
{
	struct xfib_daemon d;
	char path[64], comm[32] = "";
	__u32 key = 0;
	ssize_t n;
	int fd;

	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.xfib_daemon), &key, &d))
		return 0;
	if (!d.pid || (kill(d.pid, 0) && errno == ESRCH))
		return 0;
	/* The pid may have been reused by something else since. */
	snprintf(path, sizeof(path), "/proc/%u/comm", d.pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, comm, sizeof(comm) - 1);
	close(fd);
	if (n <= 0 || strncmp(comm, "xfibd", 5))
		return 0;
	return d.pid;
}
