// SPDX-License-Identifier: GPL-2.0-only
/*
 * status: the kernel xfib runs on, the forwarder as it was loaded here
 * (struct xfib_prog_info, written by attach), and what this kernel lacks
 * that xfib would use, with what goes to the kernel because of it.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/utsname.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "output.h"
#include "pin.h"
#include "xdpfeat.h"
#include "xfibctl.h"

#define VERIFIER_LIMIT 1000000.0

/* What a kernel may lack, what follows, and how it shows in status. */
static const struct {
	enum xfib_kernel_lack lack;
	const char *name, *text;
} lacks[] = {
	{ XFIB_LACKS_CT_KFUNCS, "conntrack_kfuncs",
	  "conntrack kfuncs (nf_conntrack was not loaded when the program was): "
	  "packets of stateful rulesets' flows go to the kernel "
	  "(pass_ct_unavailable)" },
	{ XFIB_LACKS_CT_KFUNCS_SINCE, "conntrack_kfuncs_until_reattach",
	  "conntrack kfuncs when the program was loaded; the kernel has them "
	  "now: detach and attach the ports again to gate stateful flows in XDP" },
	{ XFIB_LACKS_UDP_STREAM, "udp_stream_time",
	  "a verifier that reads conntrack's UDP stream time (Linux 6.1): UDP "
	  "flows through stateful rulesets are forwarded in XDP only once "
	  "conntrack has made them assured, two seconds into the flow" },
	{ XFIB_LACKS_NETDEV_FAMILY, "netdev_netlink_family",
	  "the netdev netlink family (Linux 6.3): whether a veth takes redirected "
	  "frames is read from its peer instead (up, with GRO or an XDP program), "
	  "in the peer's namespace, and followed; a veth whose peer cannot be "
	  "read (its namespace not found, or no right to enter it) is left to the "
	  "kernel, and another driver is taken to take them, unchecked (one "
	  "without ndo_xdp_xmit drops what xfib redirects to it)" },
};

void kernel_status_read(struct xfib_fwd_bpf *skel, struct status *st)
{
	struct xdpfeat x = {};
	struct utsname u;
	__u32 key = 0;

	if (!uname(&u))
		snprintf(st->release, sizeof(st->release), "%s", u.release);
	bpf_map_lookup_elem(bpf_map__fd(skel->maps.xfib_prog_info), &key, &st->prog);
	st->lacks = 0;
	if (st->prog.loaded && !(st->prog.flags & XFIB_PROG_CT_KFUNCS))
		st->lacks |= xfib_ct_kfuncs() ? XFIB_LACKS_CT_KFUNCS_SINCE :
						XFIB_LACKS_CT_KFUNCS;
	if ((st->prog.flags & XFIB_PROG_CT_KFUNCS) &&
	    !(st->prog.flags & XFIB_PROG_CT_UDP_STREAM))
		st->lacks |= XFIB_LACKS_UDP_STREAM;
	if (!xdpfeat_open(&x, false) && !x.family)
		st->lacks |= XFIB_LACKS_NETDEV_FAMILY;
	xdpfeat_close(&x);
}

void kernel_status_text(const struct status *st)
{
	char when[32];
	time_t t = st->prog.loaded;
	bool first = true;
	size_t i;

	printf("kernel:      %s", st->release);
	if (st->prog.loaded) {
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", localtime(&t));
		printf("; xfib_fwd loaded %s %s conntrack kfuncs, %u instructions "
		       "verified (%.1f%% of the limit)", when,
		       st->prog.flags & XFIB_PROG_CT_KFUNCS ? "with" : "without",
		       st->prog.verified_insns,
		       100.0 * st->prog.verified_insns / VERIFIER_LIMIT);
	}
	printf("\n");
	for (i = 0; i < sizeof(lacks) / sizeof(lacks[0]); i++) {
		if (!(st->lacks & lacks[i].lack))
			continue;
		printf("             %s %s\n", first ? "lacks:" : "      ", lacks[i].text);
		first = false;
	}
}

json_object *kernel_status_json(const struct status *st)
{
	json_object *o = json_object_new_object(), *l = json_object_new_array();
	json_object *p = NULL;
	size_t i;

	js_set(o, "release", js_str(st->release));
	if (st->prog.loaded) {
		p = json_object_new_object();
		js_set(p, "loaded", js_u64(st->prog.loaded));
		js_set(p, "verified_insns", js_u64(st->prog.verified_insns));
		js_set(p, "conntrack_kfuncs",
		       js_bool(st->prog.flags & XFIB_PROG_CT_KFUNCS));
		js_set(p, "udp_stream_time",
		       js_bool(st->prog.flags & XFIB_PROG_CT_UDP_STREAM));
	}
	js_set(o, "program", p);
	for (i = 0; l && i < sizeof(lacks) / sizeof(lacks[0]); i++)
		if (st->lacks & lacks[i].lack)
			json_object_array_add(l, js_str(lacks[i].name));
	js_set(o, "lacks", l);
	return o;
}
