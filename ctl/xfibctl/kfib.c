// SPDX-License-Identifier: GPL-2.0-only
/*
 * The kernel's side of `xfibctl verify` and `xfibctl lookup`: its answer
 * for a batch of destinations, bpf_fib_lookup() run through
 * BPF_PROG_TEST_RUN (bpf/xfib_verify.bpf.c), the route it matches
 * (`ip route get fibmatch`) and its policy rules' selectors (`ip rule`),
 * over rtnetlink.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <net/if.h>
#include <linux/fib_rules.h>
#include <linux/rtnetlink.h>
#include <libmnl/libmnl.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>

#include "nlreq.h"
#include "verify.h"
#include "verify_priv.h"
#include "xfib_verify.skel.h"


/* ---- the kernel's answers: bpf_fib_lookup() in batches ------------------ */

struct kfib {
	struct xfib_verify_bpf *skel;
};

int kfib_open(struct kfib **kp)
{
	struct kfib *k = calloc(1, sizeof(*k));
	int err;

	if (!k)
		return -ENOMEM;
	k->skel = xfib_verify_bpf__open_and_load();
	if (!k->skel) {
		err = errno ? -errno : -EINVAL;
		free(k);
		return err;
	}
	*kp = k;
	return 0;
}

void kfib_close(struct kfib *k)
{
	if (!k)
		return;
	xfib_verify_bpf__destroy(k->skel);
	free(k);
}

struct xv_query *kfib_queries(struct kfib *k)
{
	return k->skel->bss->xv_queries;
}

int kfib_run(struct kfib *k, __u32 iif, size_t n)
{
	/* Never parsed: the program only needs a context to run in. */
	__u8 frame[64] = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, t, .data_in = frame,
		    .data_size_in = sizeof(frame), .repeat = 1);

	if (n > XV_BATCH)
		return -EINVAL;
	k->skel->bss->xv_count = n;
	k->skel->bss->xv_iif = iif;
	if (bpf_prog_test_run_opts(bpf_program__fd(k->skel->progs.xfib_verify), &t))
		return -errno;
	return t.retval == XDP_PASS ? 0 : -EPROTO;
}

const char *kfib_ret_name(int ret)
{
	static const char *const names[] = {
		[BPF_FIB_LKUP_RET_SUCCESS] = "success",
		[BPF_FIB_LKUP_RET_BLACKHOLE] = "blackhole",
		[BPF_FIB_LKUP_RET_UNREACHABLE] = "unreachable",
		[BPF_FIB_LKUP_RET_PROHIBIT] = "prohibit",
		[BPF_FIB_LKUP_RET_NOT_FWDED] = "not_forwarded",
		[BPF_FIB_LKUP_RET_FWD_DISABLED] = "forwarding_disabled",
		[BPF_FIB_LKUP_RET_UNSUPP_LWT] = "unsupported_lwt",
		[BPF_FIB_LKUP_RET_NO_NEIGH] = "no_neigh",
		[BPF_FIB_LKUP_RET_FRAG_NEEDED] = "frag_needed",
		[BPF_FIB_LKUP_RET_NO_SRC_ADDR] = "no_src_addr",
	};

	if (ret >= 0 && (size_t)ret < sizeof(names) / sizeof(names[0]) && names[ret])
		return names[ret];
	return "error";
}

/* ---- the kernel's route: ip route get fibmatch -------------------------- */

const char *kroute_type_name(__u8 type)
{
	switch (type) {
	case RTN_UNICAST:
		return "unicast";
	case RTN_LOCAL:
		return "local";
	case RTN_BROADCAST:
		return "broadcast";
	case RTN_ANYCAST:
		return "anycast";
	case RTN_MULTICAST:
		return "multicast";
	case RTN_BLACKHOLE:
		return "blackhole";
	case RTN_UNREACHABLE:
		return "unreachable";
	case RTN_PROHIBIT:
		return "prohibit";
	case RTN_THROW:
		return "throw";
	case RTN_NAT:
		return "nat";
	default:
		return "unknown";
	}
}

/* Keeps the attributes of a known type whose payload fits their type. */
int route_attr_cb(const struct nlattr *a, void *data)
{
	const struct nlattr **tb = data;
	int type = mnl_attr_get_type(a);

	if (mnl_attr_type_valid(a, RTA_MAX) < 0)
		return MNL_CB_OK;
	switch (type) {
	case RTA_TABLE:
	case RTA_OIF:
	case RTA_PRIORITY:
		if (mnl_attr_validate(a, MNL_TYPE_U32) < 0)
			return MNL_CB_OK;
		break;
	default:
		break;
	}
	tb[type] = a;
	return MNL_CB_OK;
}

__u32 route_table(const struct rtmsg *rtm, const struct nlattr **tb)
{
	return tb[RTA_TABLE] ? mnl_attr_get_u32(tb[RTA_TABLE]) : rtm->rtm_table;
}

static int fibmatch_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[RTA_MAX + 1] = { 0 };
	const struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);
	struct kroute *kr = data;
	size_t alen;

	if (nlh->nlmsg_type != RTM_NEWROUTE ||
	    mnl_nlmsg_get_payload_len(nlh) < sizeof(*rtm))
		return MNL_CB_OK;
	mnl_attr_parse(nlh, sizeof(*rtm), route_attr_cb, tb);
	alen = rtm->rtm_family == AF_INET ? 4 : 16;
	kr->family = rtm->rtm_family;
	kr->plen = rtm->rtm_dst_len;
	kr->type = rtm->rtm_type;
	kr->table = route_table(rtm, tb);
	if (tb[RTA_DST] && mnl_attr_get_payload_len(tb[RTA_DST]) == alen)
		memcpy(kr->dst, mnl_attr_get_payload(tb[RTA_DST]), alen);
	if (tb[RTA_OIF])
		kr->oif = mnl_attr_get_u32(tb[RTA_OIF]);
	if (tb[RTA_PRIORITY])
		kr->priority = mnl_attr_get_u32(tb[RTA_PRIORITY]);
	if (tb[RTA_GATEWAY] && mnl_attr_get_payload_len(tb[RTA_GATEWAY]) == alen) {
		kr->gw_family = rtm->rtm_family;
		memcpy(kr->gw, mnl_attr_get_payload(tb[RTA_GATEWAY]), alen);
	} else if (tb[RTA_VIA] &&
		   mnl_attr_get_payload_len(tb[RTA_VIA]) == sizeof(struct rtvia) + 16) {
		/* An IPv4 route via an IPv6 gateway. */
		const struct rtvia *v = mnl_attr_get_payload(tb[RTA_VIA]);

		if (v->rtvia_family == AF_INET6) {
			kr->gw_family = AF_INET6;
			memcpy(kr->gw, v->rtvia_addr, 16);
		}
	}
	return MNL_CB_OK;
}

struct mnl_socket *rtnl_open(unsigned int *portid)
{
	struct mnl_socket *nl = nlreq_open(NETLINK_ROUTE, 0);

	if (nl)
		*portid = mnl_socket_get_portid(nl);
	return nl;
}

int kroute_fibmatch(int fam, const __u8 *addr, struct kroute *kr)
{
	char *buf = malloc(MNL_SOCKET_BUFFER_SIZE);
	struct mnl_socket *nl = NULL;
	struct nlmsghdr *nlh;
	struct rtmsg *rtm;
	unsigned int portid, seq = time(NULL);
	ssize_t n;
	int err = 0, ret;

	memset(kr, 0, sizeof(*kr));
	if (!buf)
		return -ENOMEM;
	nl = rtnl_open(&portid);
	if (!nl) {
		err = -errno;
		goto out;
	}
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_GETROUTE;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	nlh->nlmsg_seq = seq;
	rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	rtm->rtm_family = fam_af(fam);
	rtm->rtm_dst_len = fam_alen(fam) * 8;
	/* The route that matched, not the resulting dst entry. */
	rtm->rtm_flags = RTM_F_FIB_MATCH;
	mnl_attr_put(nlh, RTA_DST, fam_alen(fam), addr);
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0) {
		err = -errno;
		goto out;
	}
	n = mnl_socket_recvfrom(nl, buf, MNL_SOCKET_BUFFER_SIZE);
	if (n < 0) {
		err = -errno;
		goto out;
	}
	ret = mnl_cb_run(buf, n, seq, portid, fibmatch_cb, kr);
	/* An error message is the kernel's answer (no route, blackhole...). */
	if (ret < 0)
		kr->err = errno ? -errno : -EPROTO;
out:
	if (nl)
		mnl_socket_close(nl);
	free(buf);
	return err;
}

/* ---- the kernel's policy rules: ip rule ---------------------------------- */

struct krules {
	int fam;
	struct xfib_rule *v;
	size_t n, max;
};

static int krule_attr_cb(const struct nlattr *a, void *data)
{
	const struct nlattr **tb = data;

	if (mnl_attr_type_valid(a, FRA_MAX) < 0)
		return MNL_CB_OK;
	tb[mnl_attr_get_type(a)] = a;
	return MNL_CB_OK;
}

/* A prefix attribute of alen bytes into addr and *len, if it is one. */
static void krule_prefix(const struct nlattr *a, __u8 plen, size_t alen,
			 __u8 *addr, __u8 *len)
{
	if (!a || plen > alen * 8 || mnl_attr_get_payload_len(a) != alen)
		return;
	memcpy(addr, mnl_attr_get_payload(a), alen);
	*len = plen;
}

/* A port range attribute into *lo, *hi; whether it is one. */
static bool krule_ports(const struct nlattr *a, __u16 *lo, __u16 *hi)
{
	struct fib_rule_port_range r;

	if (!a || mnl_attr_get_payload_len(a) != sizeof(r))
		return false;
	memcpy(&r, mnl_attr_get_payload(a), sizeof(r));
	*lo = r.start;
	*hi = r.end;
	return true;
}

static int krule_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[FRA_MAX + 1] = { 0 };
	const struct fib_rule_hdr *h = mnl_nlmsg_get_payload(nlh);
	struct krules *k = data;
	size_t alen = fam_alen(k->fam);
	struct xfib_rule *x;

	if (nlh->nlmsg_type != RTM_NEWRULE ||
	    mnl_nlmsg_get_payload_len(nlh) < sizeof(*h) ||
	    h->family != fam_af(k->fam) || k->n >= k->max)
		return MNL_CB_OK;
	mnl_attr_parse(nlh, sizeof(*h), krule_attr_cb, tb);
	x = &k->v[k->n++];
	memset(x, 0, sizeof(*x));
	x->action = h->action;
	x->tos = h->tos;
	krule_prefix(tb[FRA_SRC], h->src_len, alen, x->src, &x->src_len);
	krule_prefix(tb[FRA_DST], h->dst_len, alen, x->dst, &x->dst_len);
	if (tb[FRA_IIFNAME] && mnl_attr_validate(tb[FRA_IIFNAME], MNL_TYPE_NUL_STRING) >= 0) {
		x->iif = if_nametoindex(mnl_attr_get_str(tb[FRA_IIFNAME]));
		x->flags |= x->iif ? XFIB_RULE_F_IIF : XFIB_RULE_F_IIF_DETACHED;
	}
	if (tb[FRA_IP_PROTO] && mnl_attr_validate(tb[FRA_IP_PROTO], MNL_TYPE_U8) >= 0)
		x->ip_proto = mnl_attr_get_u8(tb[FRA_IP_PROTO]);
	if (krule_ports(tb[FRA_SPORT_RANGE], &x->sport_lo, &x->sport_hi))
		x->flags |= XFIB_RULE_F_SPORT;
	if (krule_ports(tb[FRA_DPORT_RANGE], &x->dport_lo, &x->dport_hi))
		x->flags |= XFIB_RULE_F_DPORT;
	return MNL_CB_OK;
}

int krules_dump(int fam, struct xfib_rule *v, size_t max, size_t *n)
{
	struct krules k = { .fam = fam, .v = v, .max = max };
	char buf[NLREQ_BUF];
	struct mnl_socket *nl;
	struct fib_rule_hdr *h;
	struct nlmsghdr *nlh;
	int err;

	*n = 0;
	nl = nlreq_open(NETLINK_ROUTE, 0);
	if (!nl)
		return -errno;
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_GETRULE;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	h = mnl_nlmsg_put_extra_header(nlh, sizeof(*h));
	h->family = fam_af(fam);
	err = nlreq_run(nl, nlh, time(NULL), krule_cb, &k);
	mnl_socket_close(nl);
	if (!err)
		*n = k.n;
	return err;
}
