/* opterr: see opterr.h. The walk follows glibc's getopt_long: words up to
 * "--"; "-" and words not starting with '-' are operands (permuted past);
 * "--name[=value]" matches a long option exactly or by an unambiguous
 * prefix (prefixes of options with the same meaning, --color / --colour,
 * are not ambiguous); "-abc" is a cluster of short options, the first one
 * that takes a value taking the rest of the word or else the next word. */
#include "opterr.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/diag.h"
#include "core/util.h"

/* The long option name[0..n) names: exact, or the only meaning of a prefix;
 * NULL with *ambiguous set when the prefix has more than one. */
static const struct option *long_match(const struct option *longopts, const char *name, size_t n,
					bool *ambiguous)
{
	const struct option *found = NULL;
	*ambiguous = false;
	for (const struct option *o = longopts; o && o->name; o++)
		if (strlen(o->name) == n && strncmp(o->name, name, n) == 0)
			return o;
	for (const struct option *o = longopts; o && o->name; o++) {
		if (strncmp(o->name, name, n) != 0)
			continue;
		if (!found)
			found = o;
		else if (o->has_arg != found->has_arg || o->flag != found->flag || o->val != found->val)
			*ambiguous = true;
	}
	return *ambiguous ? NULL : found;
}

/* The options a prefix may mean, for the message: "--format, --fail-on or
 * --force". Owned. */
static char *meanings(const struct option *longopts, const char *name, size_t n)
{
	struct buf b = {0};
	size_t k = 0, total = 0;
	for (const struct option *o = longopts; o->name; o++)
		total += strncmp(o->name, name, n) == 0;
	for (const struct option *o = longopts; o->name; o++)
		if (strncmp(o->name, name, n) == 0)
			buf_printf(&b, "%s--%s", k++ == 0 ? "" : k == total ? " or " : ", ", o->name);
	return buf_steal(&b);
}

/* "--format" or, for an abbreviation, "--form (--format)". Owned. */
static char *long_name(const char *typed, size_t n, const struct option *o)
{
	if (strlen(o->name) == n)
		return xasprintf("--%s", o->name);
	return xasprintf("--%.*s (--%s)", (int)n, typed, o->name);
}

/* Diagnoses one long-option word at argv[*i]; true when it is the fault
 * (said), else moves *i past the value it takes. */
static bool long_fault(const char *cmd, int argc, char *const *argv, int *i, const struct option *longopts)
{
	const char *word = argv[*i], *name = word + 2;
	size_t n = strcspn(name, "=");
	bool has_value = name[n] == '=', ambiguous;
	const struct option *o = long_match(longopts, name, n, &ambiguous);
	if (ambiguous) {
		char *m = meanings(longopts, name, n);
		diag_error("%s: option '--%.*s' is ambiguous: it may be %s (see `gpuopt %s --help`)", cmd,
			   (int)n, name, m, cmd);
		free(m);
		return true;
	}
	if (!o) {
		diag_error("%s: unknown option '--%.*s' (see `gpuopt %s --help`)", cmd, (int)n, name, cmd);
		return true;
	}
	char *shown = long_name(name, n, o);
	bool fault = true;
	if (has_value && o->has_arg == no_argument)
		diag_error("%s: option %s takes no value, but '%s' gives it one", cmd, shown, word);
	else if (!has_value && o->has_arg == required_argument && *i + 1 >= argc)
		diag_error("%s: option %s needs a value", cmd, shown);
	else
		fault = false;
	if (!fault && !has_value && o->has_arg == required_argument)
		++*i;
	free(shown);
	return fault;
}

/* Diagnoses one cluster of short options at argv[*i], as long_fault. */
static bool short_fault(const char *cmd, int argc, char *const *argv, int *i, const char *shortopts)
{
	const char *word = argv[*i];
	for (const char *p = word + 1; *p; p++) {
		const char *spec = *p != ':' ? strchr(shortopts, *p) : NULL;
		if (!spec) {
			if (word[2])
				diag_error("%s: unknown option '-%c' in '%s' (see `gpuopt %s --help`)", cmd, *p, word,
					   cmd);
			else
				diag_error("%s: unknown option '%s' (see `gpuopt %s --help`)", cmd, word, cmd);
			return true;
		}
		if (spec[1] != ':')
			continue;
		if (p[1] || spec[2] == ':') /* the rest of the word is its value (or an optional one) */
			return false;
		if (*i + 1 >= argc) {
			if (word[2])
				diag_error("%s: option -%c (in '%s') needs a value", cmd, *p, word);
			else
				diag_error("%s: option -%c needs a value", cmd, *p);
			return true;
		}
		++*i;
		return false;
	}
	return false;
}

void option_error(const char *cmd, int argc, char *const *argv, const char *shortopts,
		  const struct option *longopts)
{
	shortopts += strspn(shortopts, "+-:"); /* getopt's mode characters */
	for (int i = 1; i < argc; i++) {
		const char *word = argv[i];
		if (strcmp(word, "--") == 0)
			break;
		if (word[0] != '-' || word[1] == '\0')
			continue; /* an operand, or "-" for stdin */
		if (word[1] == '-' ? long_fault(cmd, argc, argv, &i, longopts)
				   : short_fault(cmd, argc, argv, &i, shortopts))
			return;
	}
	/* not reached when getopt_long refused something; said all the same */
	diag_error("%s: invalid options (see `gpuopt %s --help`)", cmd, cmd);
}
