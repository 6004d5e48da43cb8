/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The instructions the verifier processed for a BPF program: the figure
 * it compares against its limit (1,000,000) and gives up at. Kernels and
 * even builds of one kernel differ in how many they process for the same
 * program, so tests and benchmarks report it with its margin.
 *
 * prog_insns_of_fd(): a loaded program's count, from bpf_prog_info
 * (verified_insns, Linux >= 5.16; 0 before). prog_insns_load(): loads an
 * object with the verifier's statistics (BPF_LOG_STATS) captured for one
 * of its programs, and gives its count from the log's "processed N insns"
 * line, which every kernel prints, also when the load fails.
 *
 * From a shell, for a program already loaded (e.g. by xfibctl attach):
 * scripts/prog-insns.sh, which reads the same field through bpftool.
 */
#ifndef XFIB_PROG_INSNS_H
#define XFIB_PROG_INSNS_H

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

/* The verifier's limit on processed instructions (BPF_COMPLEXITY_LIMIT_INSNS). */
#define XFIB_VERIFIER_LIMIT 1000000u
#define XFIB_LOG_STATS 4 /* BPF_LOG_STATS: the summary lines only */

static inline __u32 prog_insns_of_fd(int fd)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return 0;
	return info.verified_insns;
}

/* The N of the log's last "processed N insns", 0 if there is none. */
static inline __u32 prog_insns_of_log(const char *log)
{
	const char *p, *last = NULL;
	unsigned int n;

	for (p = log; (p = strstr(p, "processed ")); p++)
		last = p;
	if (!last || sscanf(last, "processed %u insns", &n) != 1)
		return 0;
	return n;
}

/*
 * Loads obj, prog being one of its programs set to load, and sets *insns
 * to the instructions processed for prog (also when the verifier refused
 * it: then up to the limit). Returns bpf_object__load()'s result.
 */
static inline int prog_insns_load(struct bpf_object *obj,
				  struct bpf_program *prog, __u32 *insns)
{
	/* The statistics are a few lines, but the verifier also writes
	 * messages it takes back (it rewinds the log) and fails the load
	 * with ENOSPC if those overflow: 64 KiB was too little for a
	 * program of 100k processed instructions. Pages never written cost
	 * nothing. */
	static char log[4 << 20];
	int err;

	log[0] = '\0';
	*insns = 0;
	if (bpf_program__set_log_buf(prog, log, sizeof(log)) ||
	    bpf_program__set_log_level(prog, XFIB_LOG_STATS))
		return -EINVAL;
	err = bpf_object__load(obj);
	if (!err)
		*insns = prog_insns_of_fd(bpf_program__fd(prog));
	if (!*insns)
		*insns = prog_insns_of_log(log);
	return err;
}

#endif /* XFIB_PROG_INSNS_H */
