/* opterr: what getopt_long refused, said as the user typed it. getopt
 * tells only a character (optopt, the long option's value for a long one)
 * and leaves optind where its walk stopped, which inside a cluster of short
 * options ("-rf.py") or after a long option is not the word at fault; so
 * the words are walked again, the way getopt_long reads them, to the first
 * one it refuses, and that word is named. */
#ifndef GPUOPT_OPTERR_H
#define GPUOPT_OPTERR_H

#include <getopt.h>

/* Prints (diag_error, "gpuopt: CMD: ...") why getopt_long(argc, argv,
 * shortopts, longopts) refused argv: an unknown option (the letter, and the
 * word it sits in), an ambiguous abbreviation (with what it may mean), a
 * value missing, or one given to an option that takes none. Call it when
 * getopt_long returned '?' (with opterr = 0). Cannot fail. */
void option_error(const char *cmd, int argc, char *const *argv, const char *shortopts,
		  const struct option *longopts);

#endif
