// SPDX-License-Identifier: GPL-2.0-only
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "log.h"

int log_level = LOG_LEVEL_WARN;
static const char *log_prog = "xfib";
static int log_syslog;

void log_init(const char *prog, int use_syslog)
{
	log_prog = prog;
	log_syslog = use_syslog;
	if (use_syslog)
		openlog(prog, LOG_PID, LOG_DAEMON);
}

static void log_vmsg(enum log_level level, const char *fmt, va_list ap)
{
	static const int prio[] = { LOG_WARNING, LOG_INFO, LOG_DEBUG };

	if ((int)level > log_level)
		return;
	if (log_syslog) {
		vsyslog(prio[level], fmt, ap);
		return;
	}
	fprintf(stderr, "%s: ", log_prog);
	vfprintf(stderr, fmt, ap);
	if (!*fmt || fmt[strlen(fmt) - 1] != '\n')
		fputc('\n', stderr);
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(level, fmt, ap);
	va_end(ap);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	/* libbpf warns about things we handle (e.g. a missing pin we then
	 * create); show them only when asked. */
	if (level == LIBBPF_DEBUG && log_level < LOG_LEVEL_DEBUG + 1)
		return 0;
	if (level != LIBBPF_DEBUG && log_level < LOG_LEVEL_DEBUG)
		return 0;
	log_vmsg(LOG_LEVEL_DEBUG, fmt, ap);
	return 0;
}

static int libxdp_print(enum libxdp_print_level level, const char *fmt,
			va_list ap)
{
	if (log_level < LOG_LEVEL_DEBUG)
		return 0;
	log_vmsg(LOG_LEVEL_DEBUG, fmt, ap);
	return 0;
}

void log_setup_libbpf(void)
{
	libbpf_set_print(libbpf_print);
	libxdp_set_print(libxdp_print);
}
