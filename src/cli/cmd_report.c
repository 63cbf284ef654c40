/* cmd_report: `gpuopt report RESULTS_DIR` — render what `gpuopt try` saved
 * as one self-contained HTML page, or Markdown for a pull-request comment.
 * Reads the directory (report/page.h), renders, writes the file whole. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "opterr.h"
#include "core/diag.h"
#include "core/fileio.h"
#include "report/page.h"

static const char help[] =
	"Usage: gpuopt report [OPTIONS] RESULTS_DIR\n"
	"\n"
	"Render the results `gpuopt try` saved in RESULTS_DIR: the verdict first, then each\n"
	"candidate (its verification table, the CPU fallbacks it reported, every measured\n"
	"run's time and the speedup with its 95% interval, the trace when one was taken),\n"
	"the contract, the environment, the scan findings and the commands to reproduce.\n"
	"The HTML page is one self-contained file: inline CSS and SVG plots, no script, no\n"
	"fonts or anything else fetched, so it can be attached to a pull request or a paper.\n"
	"Results of a try that did not finish are rendered as far as they go, and say so.\n"
	"\n"
	"Options:\n"
	"  -f, --format FORMAT   html (default) or markdown\n"
	"  -o, --output FILE     where to write it (default: RESULTS_DIR/report.html or\n"
	"                        report.md; - for stdout), whole or not at all; never one\n"
	"                        of the results it reads\n"
	"      --force           let -o replace an existing .py, .ipynb, .npy, .npz, .csv or\n"
	"                        .tsv file\n"
	"  -h, --help            show this help\n"
	"\n"
	"Exit codes: 0 written; 1 written, but a file of the results is damaged (named on\n"
	"stderr and on the page, and left out), or the last try did not finish and some\n"
	"results are an earlier try's (said on stderr and on the page); 2 RESULTS_DIR\n"
	"cannot be read or holds no try results, or the file cannot or may not be written.\n";

static int run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"format", required_argument, NULL, 'f'}, {"output", required_argument, NULL, 'o'},
		{"force", no_argument, NULL, 'F'},
		{NULL, 0, NULL, 0},
	};
	const char *format = "html", *output = NULL;
	bool force = false;
	int c;
	optind = 1;
	opterr = 0;
	static const char shortopts[] = "f:o:";
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			format = optarg;
			if (strcmp(format, "html") && strcmp(format, "markdown") && strcmp(format, "md")) {
				diag_error("report: --format: '%s' is not html or markdown", format);
				return EXIT_USAGE;
			}
			break;
		case 'o': output = optarg; break;
		case 'F': force = true; break;
		default:
			option_error("report", argc, argv, shortopts, longopts);
			return EXIT_USAGE;
		}
	}
	if (argc - optind != 1) {
		diag_error("report: give one RESULTS_DIR (usage: gpuopt report [OPTIONS] RESULTS_DIR)");
		return EXIT_USAGE;
	}
	const char *dir = argv[optind];
	bool md = strcmp(format, "html") != 0;
	struct page_input in;
	char *why = NULL;
	char *dirs[] = {(char *)dir};
	/* every file of a results directory is its own: the reference arrays,
	 * the logs and the runs a later try resumes from, not only its JSON */
	struct output_inputs reads = {dirs, 1, "*"};
	if (output && !output_check(output, &reads, force, &why)) {
		diag_error("report: -o '%s': %s", output, why);
		free(why);
		return EXIT_USAGE;
	}
	if (!page_read(dir, &in, &why)) {
		diag_error("report: %s", why);
		free(why);
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < in.ndamaged; i++)
		diag_error("report: %s/%s: damaged, left out of the report", dir, in.damaged[i]);
	if (in.unfinished)
		diag_error("report: %s: %s", dir, in.unfinished);
	if (in.nstale)
		diag_error("report: %s: %zu saved result%s from an earlier try, not confirmed by the last one "
			   "(said on the page)", dir, in.nstale, in.nstale == 1 ? " is" : "s are");
	char *doc = page_render(&in, md ? PAGE_MARKDOWN : PAGE_HTML);
	if (md) /* text read in a terminal as often as rendered: the saved names and output made safe */
		doc = term_safe_take(doc);
	char *path = output ? xstrdup(output) : xasprintf("%s/report.%s", dir, md ? "md" : "html");
	int rc = EXIT_OK;
	if (!write_file_atomic(path, doc, strlen(doc), &why)) {
		if (strcmp(path, "-") != 0) /* stdout's failure is said once, as every command's (main.c) */
			diag_error("report: cannot write '%s': %s", path, why);
		free(why);
		rc = EXIT_USAGE;
	} else {
		if (strcmp(path, "-") != 0) {
			fputs("wrote ", stdout);
			term_safe_fputs(path, stdout);
			fputc('\n', stdout);
		}
		if (in.ndamaged || in.unfinished || in.nstale)
			rc = EXIT_FAIL;
	}
	free(path);
	free(doc);
	page_input_free(&in);
	return rc;
}

const struct command cmd_report = {
	.name = "report",
	.summary = "render a try's results as one self-contained HTML page, or Markdown",
	.help = help,
	.run = run,
};
