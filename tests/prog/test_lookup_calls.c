// SPDX-License-Identifier: GPL-2.0-only
/*
 * The forwarding program's table reads are inlined: loads xfib_fwd (its
 * own, unpinned maps), takes the program the verifier produced (xlated)
 * and names the target of every helper call from /proc/kallsyms. None may
 * be an array map's lookup (array_map_lookup_elem,
 * percpu_array_map_lookup_elem, array_of_map_lookup_elem): the verifier
 * inlines lookups in array maps of a known size, and leaves a call where
 * it cannot, as for an inner map whose size it does not know
 * (BPF_F_INNER_MAP). dir24_8 and trie6 read their tbl8 groups from chunk
 * maps of a fixed size (include/xfib/tbl8_pool.h) for this; a call here
 * costs every packet an indirect call (a retpoline on this kernel).
 *
 * Every call must resolve to a function symbol, so a dump whose call
 * targets are hidden (kptr_restrict) cannot pass for a clean one.
 *
 * Exit status: 0 pass, 1 failure, 77 cannot run here (reason on stdout).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "pin.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct ksym {
	unsigned long long addr;
	char name[128];
};

static struct ksym *syms;
static size_t nsyms;

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The kernel's text symbols; 0 if their addresses are hidden from us. */
static int ksyms_load(void)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	size_t cap = 0;
	char line[512], type;
	struct ksym s;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %127s", &s.addr, &type, s.name) != 3 ||
		    (type != 't' && type != 'T') || !s.addr)
			continue;
		if (nsyms == cap) {
			cap = cap ? cap * 2 : 65536;
			syms = realloc(syms, cap * sizeof(*syms));
			if (!syms) {
				fclose(f);
				return -ENOMEM;
			}
		}
		syms[nsyms++] = s;
	}
	fclose(f);
	qsort(syms, nsyms, sizeof(*syms), ksym_cmp);
	return 0;
}

static const struct ksym *ksym_at(unsigned long long addr)
{
	struct ksym key = { .addr = addr };

	return bsearch(&key, syms, nsyms, sizeof(*syms), ksym_cmp);
}

static const struct ksym *ksym_named(const char *name)
{
	size_t i;

	for (i = 0; i < nsyms; i++)
		if (!strcmp(syms[i].name, name))
			return &syms[i];
	return NULL;
}

static const char *const array_lookups[] = {
	"array_map_lookup_elem",
	"percpu_array_map_lookup_elem",
	"array_of_map_lookup_elem",
};

static struct bpf_insn *xlated(int fd, __u32 *n)
{
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info);
	struct bpf_insn *insns;

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return NULL;
	*n = info.xlated_prog_len / sizeof(*insns);
	insns = calloc(*n, sizeof(*insns));
	if (!insns)
		return NULL;
	memset(&info, 0, sizeof(info));
	info.xlated_prog_len = *n * sizeof(*insns);
	info.xlated_prog_insns = (__u64)(unsigned long)insns;
	len = sizeof(info);
	if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
		free(insns);
		return NULL;
	}
	return insns;
}

int main(void)
{
	const struct ksym *base;
	struct xfib_fwd_bpf *skel;
	struct bpf_insn *insns;
	struct bpf_map *map;
	__u32 n, i, calls = 0, bad = 0;
	size_t j;

	if (ksyms_load() || !nsyms) {
		printf("skip: kernel symbol addresses are not readable\n");
		return 77;
	}
	base = ksym_named("__bpf_call_base");
	if (!base) {
		printf("skip: no __bpf_call_base in /proc/kallsyms\n");
		return 77;
	}
	skel = xfib_fwd_open(NULL, xfib_ct_kfuncs()); /* the build attach would load */
	if (!skel) {
		printf("FAIL open skeleton: %s\n", strerror(errno));
		return 1;
	}
	/* Private maps: nothing is pinned or reused from /sys/fs/bpf. */
	bpf_object__for_each_map(map, skel->obj)
		bpf_map__set_pin_path(map, NULL);
	if (xfib_fwd_bpf__load(skel)) {
		printf("FAIL load xfib_fwd: %s\n", strerror(errno));
		return 1;
	}
	insns = xlated(bpf_program__fd(skel->progs.xfib_fwd), &n);
	if (!insns) {
		printf("FAIL xlated program: %s\n", strerror(errno));
		return 1;
	}
	for (i = 0; i < n; i++) {
		const struct ksym *s;

		if (insns[i].code != (BPF_JMP | BPF_CALL) || insns[i].src_reg)
			continue; /* not a helper call */
		calls++;
		s = ksym_at(base->addr + (long long)insns[i].imm);
		if (!s) {
			printf("FAIL insn %u: helper call to %#llx, no symbol\n",
			       i, base->addr + (long long)insns[i].imm);
			bad++;
			continue;
		}
		for (j = 0; j < ARRAY_SIZE(array_lookups); j++)
			if (!strcmp(s->name, array_lookups[j])) {
				printf("FAIL insn %u: calls %s\n", i, s->name);
				bad++;
			}
	}
	printf("%s xfib_fwd: %u insns, %u helper calls, %u of them array map\n"
	       "     lookups or unresolved\n", bad ? "FAIL" : "ok  ", n, calls, bad);
	free(insns);
	xfib_fwd_bpf__destroy(skel);
	return bad ? 1 : 0;
}
