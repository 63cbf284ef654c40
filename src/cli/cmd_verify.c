/* cmd_verify: `gpuopt verify REFERENCE CANDIDATE` — step 5 of the method,
 * semantics before speed: compares what a CPU run and a GPU run wrote, with
 * explicit tolerances, and says where they differ. Reads the command line
 * into verify options, runs the engine (verify/verify.h: verify_paths) and
 * writes the report it returns, whole, in the format asked for. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "core/diag.h"
#include "core/fileio.h"
#include "verify/verify.h"

static const char help[] =
	"Usage: gpuopt verify [OPTIONS] REFERENCE CANDIDATE\n"
	"\n"
	"Compare what a reference run (the CPU version) wrote with what a candidate run\n"
	"(the GPU version) wrote, with explicit tolerances, and say where they differ.\n"
	"REFERENCE and CANDIDATE are two files of the same kind, or two directories:\n"
	"  .npy   arrays: bool, int8-int64, uint8-uint64, float16/32/64, complex64/128,\n"
	"         any byte order, C or Fortran order, 0-d to N-d, format 1.0, 2.0, 3.0.\n"
	"         Object (pickled) arrays are refused, never loaded.\n"
	"  .npz   archives (stored or deflated, zip64 too): arrays compared by the name\n"
	"         np.load gives them (\"x\" for member x.npy or x, x first when both);\n"
	"         a member on one side only is a difference.\n"
	"  .csv, .tsv  tables with a header row: columns matched by name (the headers\n"
	"         must hold the same names); rows compared in order, by --key, or as a\n"
	"         multiset with --unordered. A column of numbers (empty, NA, NaN, null\n"
	"         cells count as NaN) is compared with tolerances as int64 or float64;\n"
	"         any other column exactly, as text.\n"
	"  directories: every .npy, .npz, .csv and .tsv file under REFERENCE (hidden\n"
	"         ones skipped) against the same relative path under CANDIDATE; a file\n"
	"         missing from CANDIDATE is a difference, one only in CANDIDATE a note;\n"
	"         no such file under REFERENCE at all is an error (nothing compared).\n"
	"         Symbolic links are followed only where they lead inside the directory\n"
	"         given: one that leads out of it (sys -> /usr, data -> ../inputs) is not\n"
	"         followed nor compared, with a note; in CANDIDATE, where REFERENCE has\n"
	"         the file, it is a difference.\n"
	"\n"
	"The test, element by element, with REFERENCE as ref:\n"
	"    |cand − ref| ≤ atol + rtol·|ref|\n"
	"(numpy.isclose(cand, ref); complex values by modulus). Infinities must match in\n"
	"sign; NaN equals NaN unless --no-equal-nan. Default tolerances by dtype, as\n"
	"torch.testing.assert_close has them (rtol / atol): float16 1e-3 / 1e-5,\n"
	"float32 and complex64 1.3e-6 / 1e-5, float64 and complex128 1e-7 / 1e-7;\n"
	"integers and bools exact. (bfloat16 has no .npy type: save it as float32 and\n"
	"give torch's bfloat16 tolerances, --rtol 1.6e-2 --atol 1e-5.) float32 is\n"
	"compared in float32 arithmetic and float16 in float32, like numpy. Shapes must\n"
	"match, and dtypes unless --allow-dtype.\n"
	"\n"
	"Options:\n"
	"      --rtol R           relative tolerance (replaces the dtype's default)\n"
	"      --atol A           absolute tolerance (replaces the dtype's default)\n"
	"      --ulp N            instead of rtol / atol: pass when cand and ref are at most\n"
	"                         N representable values apart (units in the last place;\n"
	"                         floats of one dtype only; for integers, |cand − ref| ≤ N)\n"
	"      --equal-nan        NaN in both at the same place is equal (the default)\n"
	"      --no-equal-nan     NaN never equals anything\n"
	"      --allow-dtype      compare arrays of different dtypes in the wider type\n"
	"                         (e.g. float64 against float32 as float64); the report\n"
	"                         notes the change; tolerances are the larger defaults\n"
	"      --key COL[,COL]    tables: pair rows by the values of these columns\n"
	"      --unordered        tables: ignore row order (sort both by all columns)\n"
	"      --recall-k K       nearest-neighbour results: REFERENCE and CANDIDATE are\n"
	"                         (n_queries, >= K) .npy arrays of neighbour ids (exact and\n"
	"                         approximate search); report recall@K per query, by id sets\n"
	"                         (negative ids, such as Faiss's -1 for none, never count)\n"
	"      --distances REF_D CAND_D\n"
	"                         with --recall-k: (n_queries, >= K) .npy distances\n"
	"                         (smaller is nearer); a neighbour counts when its distance\n"
	"                         is within the true K-th distance + epsilon, as\n"
	"                         ann-benchmarks counts ties\n"
	"      --epsilon E        the tie epsilon of --distances (default 1e-3)\n"
	"      --min-recall R     with --recall-k: pass when the mean recall is >= R\n"
	"                         (default 0.9)\n"
	"      --show N           list the first N mismatches of each item (default 5,\n"
	"                         at most 100)\n"
	"  -f, --format FORMAT    text (default) or json\n"
	"  -o, --output FILE      write the report to FILE (whole or not at all); a\n"
	"                         symbolic link is followed; FILE may not be one of the\n"
	"                         inputs, nor an existing .py, .ipynb, .npy, .npz, .csv\n"
	"                         or .tsv file\n"
	"      --force            write the report over such a file all the same\n"
	"  -v, --verbose          text: details for passing items too\n"
	"  -h, --help             show this help\n"
	"\n"
	"The report: pass or fail per array (per column for tables) and overall; for a\n"
	"difference, the number and share of mismatched elements, the largest absolute\n"
	"and relative errors with their indices, the first mismatches (index, ref, cand;\n"
	"in the reference's memory order), NaN-pattern differences counted apart, and\n"
	"the relative L2 error ||cand − ref|| / ||ref||. In JSON, non-finite numbers are\n"
	"the strings \"nan\", \"inf\", \"-inf\" and complex values [re, im].\n"
	"\n"
	"Files are memory-mapped and compared in one streaming pass in constant memory\n"
	"(a C-order array against a Fortran-order one is read out of order, and a\n"
	"deflated .npz member of that kind is inflated whole first: one larger than\n"
	"this process can take, by the memory available, its cgroup and ulimit, is\n"
	"refused naming the member and its size).\n"
	"\n"
	"Exit codes: 0 everything within tolerance; 1 a difference; 2 an input that\n"
	"cannot be read or compared (missing, damaged, shapes or dtypes that differ,\n"
	"changed while being compared), or a usage error. Each such problem is in the\n"
	"report and on stderr (once, when both go to the same terminal or file).\n";

/* ---- the command line ---- */

static bool parse_real(const char *opt, const char *s, double lo, double hi, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (!*s || *end || errno || !isfinite(v) || v < lo || v > hi) {
		if (hi < INFINITY)
			diag_error("verify: %s: '%s' is not a number from %g to %g", opt, s, lo, hi);
		else
			diag_error("verify: %s: '%s' is not a number >= %g", opt, s, lo);
		return false;
	}
	*out = v;
	return true;
}

static bool parse_count(const char *opt, const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (!*s || *s == '-' || *end || errno || v < lo || v > hi) {
		diag_error("verify: %s: '%s' is not a whole number from %llu to %llu", opt, s,
			   (unsigned long long)lo, (unsigned long long)hi);
		return false;
	}
	*out = v;
	return true;
}

static char **split_keys(const char *s)
{
	size_t n = 1;
	for (const char *p = s; *p; p++)
		n += *p == ',';
	char **keys = xcalloc(n + 1, sizeof *keys);
	size_t k = 0;
	const char *start = s;
	for (const char *p = s;; p++) {
		if (*p == ',' || !*p) {
			if (p > start)
				keys[k++] = xstrndup(start, (size_t)(p - start));
			if (!*p)
				break;
			start = p + 1;
		}
	}
	return keys;
}

/* Options that take a value. */
static const char *const valued[] = {
	"--rtol", "--atol", "--ulp", "--key", "--recall-k", "--distances", "--epsilon",
	"--min-recall", "--show", "--format", "--output", "-f", "-o", NULL,
};

static int run(int argc, char **argv)
{
	struct verify_opts o = {.equal_nan = true, .show = 5, .min_recall = 0.9, .epsilon = 1e-3};
	const char *format = "text", *output = NULL;
	const char *pos[2];
	int npos = 0, rc = EXIT_USAGE;
	bool epsilon_set = false, min_recall_set = false, no_more_options = false, force = false;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		if (no_more_options || arg[0] != '-' || strcmp(arg, "-") == 0) {
			if (npos == 2) {
				diag_error("verify: too many paths ('%s'): give REFERENCE and CANDIDATE", arg);
				goto out;
			}
			pos[npos++] = arg;
			continue;
		}
		if (strcmp(arg, "--") == 0) {
			no_more_options = true;
			continue;
		}
		/* --opt=value or --opt value */
		char opt[32];
		const char *val = NULL, *eq = strchr(arg, '=');
		size_t olen = eq && arg[1] == '-' ? (size_t)(eq - arg) : strlen(arg);
		snprintf(opt, sizeof opt, "%.*s", (int)(olen < 31 ? olen : 31), arg);
		bool takes = false;
		for (size_t k = 0; valued[k]; k++)
			takes |= strcmp(opt, valued[k]) == 0;
		if (takes) {
			if (eq && arg[1] == '-')
				val = eq + 1;
			else if (i + 1 < argc)
				val = argv[++i];
			else {
				diag_error("verify: option %s needs a value", opt);
				goto out;
			}
		} else if (eq && arg[1] == '-') {
			diag_error("verify: option %s takes no value", opt);
			goto out;
		}
		if (strcmp(opt, "--rtol") == 0) {
			if (!parse_real(opt, val, 0, INFINITY, &o.rtol))
				goto out;
			o.rtol_set = true;
		} else if (strcmp(opt, "--atol") == 0) {
			if (!parse_real(opt, val, 0, INFINITY, &o.atol))
				goto out;
			o.atol_set = true;
		} else if (strcmp(opt, "--ulp") == 0) {
			if (!parse_count(opt, val, 0, UINT64_MAX, &o.ulp))
				goto out;
			o.by_ulp = true;
		} else if (strcmp(opt, "--equal-nan") == 0) {
			o.equal_nan = true;
		} else if (strcmp(opt, "--no-equal-nan") == 0) {
			o.equal_nan = false;
		} else if (strcmp(opt, "--allow-dtype") == 0) {
			o.allow_dtype = true;
		} else if (strcmp(opt, "--key") == 0) {
			strv_free(o.keys);
			o.keys = split_keys(val);
			if (!o.keys[0]) {
				diag_error("verify: --key: name at least one column");
				goto out;
			}
		} else if (strcmp(opt, "--unordered") == 0) {
			o.unordered = true;
		} else if (strcmp(opt, "--recall-k") == 0) {
			if (!parse_count(opt, val, 1, 1000000, &o.recall_k))
				goto out;
		} else if (strcmp(opt, "--distances") == 0) {
			if (i + 1 >= argc) {
				diag_error("verify: --distances needs two files: REF_D CAND_D");
				goto out;
			}
			o.dist_ref = val;
			o.dist_cand = argv[++i];
		} else if (strcmp(opt, "--epsilon") == 0) {
			if (!parse_real(opt, val, 0, INFINITY, &o.epsilon))
				goto out;
			epsilon_set = true;
		} else if (strcmp(opt, "--min-recall") == 0) {
			if (!parse_real(opt, val, 0, 1, &o.min_recall))
				goto out;
			min_recall_set = true;
		} else if (strcmp(opt, "--show") == 0) {
			uint64_t n;
			if (!parse_count(opt, val, 0, CMP_MAX_SHOW, &n))
				goto out;
			o.show = (unsigned)n;
		} else if (strcmp(opt, "--format") == 0 || strcmp(opt, "-f") == 0) {
			format = val;
			if (strcmp(format, "text") && strcmp(format, "json")) {
				diag_error("verify: --format: '%s' is not text or json", format);
				goto out;
			}
		} else if (strcmp(opt, "--output") == 0 || strcmp(opt, "-o") == 0) {
			output = val;
		} else if (strcmp(opt, "--verbose") == 0 || strcmp(opt, "-v") == 0) {
			o.verbose = true;
		} else if (strcmp(opt, "--force") == 0) {
			force = true;
		} else {
			diag_error("verify: unknown option '%s' (see `gpuopt verify --help`)", arg);
			goto out;
		}
	}
	if (npos != 2) {
		diag_error("verify: %s (usage: gpuopt verify [OPTIONS] REFERENCE CANDIDATE)",
			   npos == 0 ? "which files? give REFERENCE and CANDIDATE" : "give CANDIDATE too");
		goto out;
	}
	if (o.by_ulp && (o.rtol_set || o.atol_set)) {
		diag_error("verify: --ulp replaces --rtol / --atol: give one or the other");
		goto out;
	}
	if (o.keys && o.unordered) {
		diag_error("verify: --key and --unordered: give one or the other");
		goto out;
	}
	if (!o.recall_k && (o.dist_ref || min_recall_set || epsilon_set)) {
		diag_error("verify: --distances, --min-recall and --epsilon go with --recall-k");
		goto out;
	}
	if (epsilon_set && !o.dist_ref) {
		diag_error("verify: --epsilon goes with --distances");
		goto out;
	}

	char *err;
	char *inputs[4] = {(char *)pos[0], (char *)pos[1], (char *)o.dist_ref, (char *)o.dist_cand};
	struct output_inputs in = {inputs, o.dist_ref ? 4 : 2, NULL};
	if (output && !output_check(output, &in, force, &err)) {
		diag_error("verify: -o '%s': %s", output, err);
		free(err);
		goto out;
	}

	struct verify_report *r = verify_paths(&o, pos[0], pos[1]);
	bool json = strcmp(format, "json") == 0;
	/* text: file names and a table's cells as a terminal may show them */
	char *doc = json ? verify_report_json(r) : term_safe_take(verify_report_text(r));
	/* Each error goes to stderr (`gpuopt: verify: ...`) too, unless the text
	 * report says it on the very same stream (a terminal, or 2>&1): once. */
	struct stat so, se;
	bool same = !output && !json && fstat(STDOUT_FILENO, &so) == 0 && fstat(STDERR_FILENO, &se) == 0 &&
		    so.st_dev == se.st_dev && so.st_ino == se.st_ino;
	if (!same)
		for (size_t i = 0; i < r->items.len; i++) {
			const struct vitem *it = r->items.items[i];
			if (it->status == V_ERROR && it->error)
				diag_error("verify: %s", it->error);
			for (size_t k = 0; k < it->ncols; k++)
				if (it->cols[k]->status == V_ERROR && it->cols[k]->error)
					diag_error("verify: %s", it->cols[k]->error);
		}
	rc = verify_exit_code(r);
	if (!write_file_atomic(output ? output : "-", doc, strlen(doc), &err)) {
		if (output && strcmp(output, "-") != 0) /* stdout's failure is said once, as every command's (main.c) */
			diag_error("verify: cannot write '%s': %s", output, err);
		free(err);
		rc = EXIT_USAGE;
	}
	free(doc);
	verify_report_free(r);
out:
	strv_free(o.keys);
	return rc;
}

const struct command cmd_verify = {
	.name = "verify",
	.summary = "check a GPU run's outputs against the CPU run's, with explicit tolerances",
	.help = help,
	.run = run,
};
