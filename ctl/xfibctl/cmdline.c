// SPDX-License-Identifier: GPL-2.0-only
/*
 * xfibctl's command line from the tables of main.c: getopt_long's tables,
 * the usage lines and the help, and finding a command by a prefix.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "xfibctl.h"

static const struct cmd_opt help_opt = { "help", 'h', NULL, "this help", NULL };

/* "-m, --mode native|generic" or "    --prometheus". */
static int opt_label(char *buf, size_t len, const struct cmd_opt *o)
{
	char s[8] = "   ";

	if (o->key)
		snprintf(s, sizeof(s), "-%c,", o->key);
	return snprintf(buf, len, "%s --%s%s%s", s, o->name, o->arg ? " " : "",
			o->arg ? o->arg : "");
}

static void opts_help(FILE *f, const struct cmd_opt *opts)
{
	const struct cmd_opt *o;
	char label[64];
	int w = 0, l;

	for (o = opts; o->name; o++) {
		l = opt_label(label, sizeof(label), o);
		w = l > w ? l : w;
	}
	for (o = opts; ; o++) {
		const char *h, *nl;

		if (!o->name)
			o = &help_opt;
		opt_label(label, sizeof(label), o);
		fprintf(f, "  %-*s  ", w, label);
		for (h = o->help; (nl = strchr(h, '\n')); h = nl + 1)
			fprintf(f, "%.*s\n  %-*s  ", (int)(nl - h), h, w, "");
		fprintf(f, "%s\n", h);
		if (o == &help_opt)
			break;
	}
}

/* The usage line's options: "[-m native|generic] [--prometheus]". */
static void opts_synopsis(FILE *f, const struct cmd_opt *opts)
{
	const struct cmd_opt *o;

	for (o = opts; o->name; o++) {
		if (o->key)
			fprintf(f, " [-%c", o->key);
		else
			fprintf(f, " [--%s", o->name);
		fprintf(f, "%s%s]", o->arg ? " " : "", o->arg ? o->arg : "");
	}
}

void usage(FILE *f)
{
	size_t i;

	fprintf(f, "Usage: xfibctl");
	opts_synopsis(f, xfibctl_global_opts);
	fprintf(f, " COMMAND [OPTIONS] [ARGS]\n"
		   "       xfibctl COMMAND -h\n\nCommands:\n");
	for (i = 0; i < xfibctl_ncmds; i++)
		fprintf(f, "  %-11s %s\n", xfibctl_cmds[i].name, xfibctl_cmds[i].help);
	fprintf(f, "\nOptions:\n");
	opts_help(f, xfibctl_global_opts);
	fprintf(f, "\nCommands may be shortened to a unique prefix (\"neigh\" is neighbours).\n"
		   "Exit status: 0 success, 1 failure, 2 usage error.\n");
}

void cmd_usage(FILE *f, const struct cmd *cmd)
{
	fprintf(f, "Usage: xfibctl %s", cmd->name);
	opts_synopsis(f, cmd->opts);
	fprintf(f, "%s%s\n", *cmd->args ? " " : "", cmd->args);
	if (cmd->alias)
		fprintf(f, "       xfibctl %s ...\n", cmd->alias);
	fprintf(f, "%c%s.\n\nOptions:\n", toupper((unsigned char)cmd->help[0]),
		cmd->help + 1);
	opts_help(f, cmd->opts);
}

/* Commands may be abbreviated to any unique prefix of a name or alias. */
const struct cmd *find_cmd(const char *name)
{
	const struct cmd *found = NULL;
	size_t i, len = strlen(name);

	for (i = 0; i < xfibctl_ncmds; i++) {
		const struct cmd *k = &xfibctl_cmds[i];

		if (!strcmp(k->name, name) || (k->alias && !strcmp(k->alias, name)))
			return k;
		if (strncmp(k->name, name, len) &&
		    (!k->alias || strncmp(k->alias, name, len)))
			continue;
		if (found) {
			fprintf(stderr, "xfibctl: '%s' is ambiguous (%s, %s)\n",
				name, found->name, k->name);
			return NULL;
		}
		found = k;
	}
	if (!found)
		fprintf(stderr, "xfibctl: unknown command '%s' (see xfibctl -h)\n", name);
	return found;
}

/*
 * Parses the options of opts (and -h) from argv[1..] with getopt_long,
 * its tables built from opts. Returns OPT_HELP for -h, 0, or -EINVAL
 * after printing one line naming the command, if any, and the option.
 * Global options stop at the command ('+'); a command's may follow its
 * arguments (xfibctl lookup ADDR -j). getopt's own messages are off
 * (opterr): they would not name the command.
 */
int parse_opts(struct ctl *c, const struct cmd_opt *opts, bool global,
	       int argc, char **argv)
{
	struct option lo[16]; /* the longest table has 4 options, plus -h */
	char so[48] = "", *p = so;
	const char *what = global ? "" : current_cmd->name;
	const struct cmd_opt *o;
	int n = 0, opt, li;

	p += sprintf(p, "%s:h", global ? "+" : "");
	for (o = opts; o->name && n < 14; o++, n++) {
		lo[n] = (struct option){ o->name, o->arg ? required_argument : no_argument,
					 NULL, 256 + n };
		if (o->key)
			p += sprintf(p, "%c%s", o->key, o->arg ? ":" : "");
	}
	lo[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	lo[n] = (struct option){ 0 };
	opterr = 0;
	optind = 0; /* glibc: start over, with this optstring's mode */
	while ((opt = getopt_long(argc, argv, so, lo, NULL)) != -1) {
		const char *bad = argv[optind - 1];

		if (opt == 'h')
			return OPT_HELP;
		if (opt == '?' || opt == ':') {
			char sh[3] = { '-', (char)optopt, 0 };

			/* optopt names a bad short option; a long one is in argv. */
			if (optopt && optopt < 256)
				bad = sh;
			fprintf(stderr, "xfibctl: %s%s%s: %s (see xfibctl %s%s-h)\n",
				what, *what ? " " : "", bad,
				opt == ':' ? "needs an argument" : "unknown option",
				what, *what ? " " : "");
			return -EINVAL;
		}
		for (li = 0, o = opts; o->name; o++, li++)
			if (opt == 256 + li || (o->key && opt == o->key))
				break;
		if (o->set(c, optarg))
			return -EINVAL;
	}
	return 0;
}
