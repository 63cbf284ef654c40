/* cmd_fit: `gpuopt fit` — this machine's measured ceilings and, for a
 * working set, whether the GPU can pay before anyone ports. Options, help,
 * the text or JSON report and the exit code; the measuring and the
 * arithmetic are the fit engine's (fit/fit.h). */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "opterr.h"
#include "core/diag.h"
#include "core/fileio.h"
#include "core/util.h"
#include "fit/fit.h"

static const char help[] =
	"Usage: gpuopt fit [OPTIONS] [FILE.npy...]\n"
	"\n"
	"Measure this machine's real ceilings, then answer whether a working set can\n"
	"pay off on the GPU before anyone ports it.\n"
	"\n"
	"Measured through the CUDA driver API, per GPU: host->device and device->host\n"
	"copies of pageable and of pinned memory at sizes from 4 KiB to 1 GiB;\n"
	"first-touch pageable copies (memory never used before, as a new array is);\n"
	"device-to-device copies (counting bytes read + written); with several GPUs,\n"
	"copies to each other GPU with and without peer access; the cost of a kernel\n"
	"launch (host side, back to back on the GPU, and launch + wait) and of a\n"
	"synchronize; with --python, a tiny operation from Python through CuPy or\n"
	"PyTorch. The method is nvbandwidth's, extended to pageable memory: copies\n"
	"wait behind a spin kernel until all are enqueued, CUDA events time them, each\n"
	"size is one warm-up and the median of 7 trials with their coefficient of\n"
	"variation, the thread runs on the CPUs next to the GPU; the share of the\n"
	"pageable buffers in transparent huge pages is recorded beside (on a VM,\n"
	"pageable rates move with it). The numbers are shown beside the GPU's\n"
	"published peaks and its PCIe link's rate, and kept per GPU, driver and\n"
	"gpuopt version in $XDG_CACHE_HOME/gpuopt/ceilings (else\n"
	"~/.cache/gpuopt/ceilings): later runs use them until --refresh.\n"
	"\n"
	"The working set (all that is given adds up):\n"
	"  FILE.npy...           arrays: the sizes from their headers (the data is not read)\n"
	"      --bytes N         N bytes: 123, 1.5e9, 512MiB, 8GiB, 8G (powers of 1024),\n"
	"                        8GB (powers of 1000); given again, the sizes add up\n"
	"      --dtype T --shape S  one array: --dtype float32 --shape 1000000,64; given\n"
	"                        again, one more array (the i-th --dtype goes with the\n"
	"                        i-th --shape)\n"
	"      --out-bytes N     what comes back to the host (default: as much as goes in)\n"
	"      --temp-factor F   device memory needed per byte of working set, for the\n"
	"                        temporaries the computation makes (default 3; 1 to 100)\n"
	"      --cpu-seconds T   the CPU baseline's measured time for the part that would\n"
	"                        move (gpuopt bench gives it): then the best speedup\n"
	"                        possible if GPU compute were free, and a verdict (0 to 1e7)\n"
	"      --min-speedup S   how much the transfer floor must leave for \"room to\n"
	"                        gain\" (default 2: the transfers at most half the CPU time;\n"
	"                        1 to 1e6)\n"
	"\n"
	"The answer: whether it fits free device memory with room for temporaries (and a\n"
	"512 MiB reserve for the CUDA context); the seconds to move it in and out at the\n"
	"measured pageable, first-touch and pinned rates; with --cpu-seconds the best\n"
	"end-to-end speedups and the verdict: \"cannot pay\", \"can pay only if the data\n"
	"stays on the device\" or \"room to gain\". Too big: a chunk size that fits and the\n"
	"pointer to Dask for several GPUs.\n"
	"\n"
	"Options:\n"
	"      --refresh         measure again even when the cache has this GPU's ceilings\n"
	"      --quick           fewer sizes (4 KiB to 256 MiB by x16) and 5 trials\n"
	"      --trials N        timed trials per size (default 7, at least 3)\n"
	"      --max-bytes N     the largest copy (default 1 GiB)\n"
	"      --gpu N           this GPU only (nvidia-smi's index; default every GPU)\n"
	"      --no-peers        leave out the copies between GPUs\n"
	"      --python PY       also time a tiny operation from this Python (CuPy, else\n"
	"                        PyTorch on cuda)\n"
	"      --ceilings FILE   take the ceilings from FILE (a file of the cache, on any\n"
	"                        machine) instead of measuring a GPU here\n"
	"      --timeout S       seconds the measurement may take (default 600; 1 to 1e7)\n"
	"  -f, --format FORMAT   text (default) or json\n"
	"  -o, --output FILE     write the report to FILE (whole or not at all)\n"
	"  -v, --verbose         text: every size measured, the method, the sources\n"
	"  -q, --quiet           no progress lines on stderr\n"
	"  -h, --help            show this help\n"
	"\n"
	"Exit codes: 0 measured (and, with a verdict, it is not \"cannot pay\"); 1 no\n"
	"GPU could be measured (no NVIDIA driver, ...) or the verdict is \"cannot pay\";\n"
	"2 usage or input error (an unreadable .npy file, a bad size).\n";

static char *gbps_text(double g)
{
	if (!isfinite(g))
		return xstrdup("?");
	return g >= 1000 ? xasprintf("%.0f", g) : g >= 100 ? xasprintf("%.1f", g) : xasprintf("%.2f", g);
}

static char *secs_text(double s)
{
	if (!isfinite(s))
		return xstrdup("?");
	if (s >= 1)
		return xasprintf("%.2f s", s);
	if (s >= 1e-3)
		return xasprintf("%.3g ms", s * 1e3);
	return xasprintf("%.1f µs", s * 1e6);
}

static char *times_text(double x)
{
	if (!isfinite(x))
		return xstrdup("?");
	if (x > 1000)
		return xstrdup(">1000×");
	return x >= 100 ? xasprintf("%.0f×", x) : x >= 10 ? xasprintf("%.1f×", x) : xasprintf("%.2f×", x);
}

static void put_time(struct buf *b, const char *what, const struct ceil_time *t)
{
	if (t->n)
		buf_printf(b, "%s %.1f µs", what, t->us);
}

static void curves_text(struct buf *b, const struct ceilings *c, const struct fit_gpu *g, bool verbose)
{
	/* the columns: every size with -v, else every other one and the last */
	size_t n = c->npoints[CEIL_H2D_PINNED];
	bool col[CEIL_MAX_POINTS] = {0};
	for (size_t i = 0; i < n; i++)
		col[i] = verbose || i % 2 == 0 || i == n - 1;
	buf_printf(b, "  %-24s", "GB/s");
	for (size_t i = 0; i < n; i++)
		if (col[i]) {
			char *s = fit_bytes_text(c->curve[CEIL_H2D_PINNED][i].bytes);
			buf_printf(b, " %8s", s);
			free(s);
		}
	buf_puts(b, "   largest cv\n");
	static const enum ceil_kind order[] = {CEIL_H2D_PINNED, CEIL_D2H_PINNED, CEIL_H2D_PAGEABLE,
					       CEIL_D2H_PAGEABLE};
	for (int k = 0; k < 4; k++) {
		enum ceil_kind kind = order[k];
		buf_printf(b, "  %-24s", ceil_kind_text(kind));
		double maxcv = 0, best = 0;
		for (size_t i = 0; i < c->npoints[kind]; i++) {
			const struct ceil_point *p = &c->curve[kind][i];
			if (p->cv > maxcv)
				maxcv = p->cv;
			if (p->gbps > best)
				best = p->gbps;
			if (i < CEIL_MAX_POINTS && col[i]) {
				char *s = gbps_text(p->gbps);
				buf_printf(b, " %8s", s);
				free(s);
			}
		}
		buf_printf(b, "   %.1f%%", maxcv * 100);
		bool pinned = kind == CEIL_H2D_PINNED || kind == CEIL_D2H_PINNED;
		if (pinned && isfinite(g->link_gbps) && g->link_gbps > 0)
			buf_printf(b, "   %.0f%% of the link", 100 * best / g->link_gbps);
		buf_putc(b, '\n');
	}
}

/* A share of huge pages as "98%", or "?" (unknown). */
static char *share_text(double x)
{
	return x >= 0 ? xasprintf("%.0f%%", 100 * x) : xstrdup("?");
}

/* How much of the pageable buffers Linux backed with huge pages: pageable
 * rates on a VM move with it, so two measurements can be told apart. */
static void huge_text(struct buf *b, const struct ceilings *c)
{
	if (c->huge_share_pageable < 0 && c->huge_share_first_touch[0] < 0 && c->huge_share_first_touch[1] < 0)
		return;
	char *r = share_text(c->huge_share_pageable), *h = share_text(c->huge_share_first_touch[0]),
	     *d = share_text(c->huge_share_first_touch[1]);
	buf_printf(b, "  pageable memory in huge pages: %s of the reused buffer; first touch %s host→device, "
		   "%s device→host\n", r, h, d);
	free(r);
	free(h);
	free(d);
}

static void gpu_text(struct buf *b, const struct fit_gpu *g, size_t i, bool verbose)
{
	if (g->index >= 0)
		buf_printf(b, "GPU %d: %s", g->index, g->name ? g->name : "?");
	else
		buf_printf(b, "GPU: %s", g->name ? g->name : "?");
	(void)i;
	if (g->error) {
		buf_printf(b, ": not measured: %s\n", g->error);
		return;
	}
	const struct ceilings *c = &g->ceil;
	buf_printf(b, " — %s\n", g->source ? g->source : "");
	if (g->cache_note)
		buf_printf(b, "  (%s)\n", g->cache_note);
	if (g->link || g->peak.found) {
		buf_puts(b, "  ");
		if (g->link) {
			char *r = gbps_text(g->link_gbps);
			buf_printf(b, "link %s: %s GB/s each way", g->link, r);
			free(r);
		}
		if (g->peak.found)
			buf_printf(b, "%spublished (%s): memory %.0f GB/s, %s %.0f GB/s each way%s", g->link ? "; " : "",
				   g->peak.name, g->peak.memory_gbps, g->peak.host_link, g->peak.host_gbps,
				   g->peak.nvlink_gbps > 0 ? "" : "");
		buf_putc(b, '\n');
	}
	curves_text(b, c, g, verbose);
	if (c->have_first_touch[0] || c->have_first_touch[1]) {
		char *sz = fit_bytes_text(c->first_touch[c->have_first_touch[0] ? 0 : 1].bytes);
		char *h = gbps_text(c->first_touch[0].gbps), *d = gbps_text(c->first_touch[1].gbps);
		buf_printf(b, "  first touch (%s of pageable memory never used before): host→device %s GB/s, "
			   "device→host %s GB/s\n", sz, c->have_first_touch[0] ? h : "?",
			   c->have_first_touch[1] ? d : "?");
		free(sz);
		free(h);
		free(d);
	}
	huge_text(b, c);
	if (c->have_d2d) {
		char *r = gbps_text(c->d2d.gbps);
		buf_printf(b, "  device→device: %s GB/s counting bytes read + written", r);
		if (g->peak.found && g->peak.memory_gbps > 0)
			buf_printf(b, " (%.0f%% of the published %.0f GB/s)", 100 * c->d2d.gbps / g->peak.memory_gbps,
				   g->peak.memory_gbps);
		buf_putc(b, '\n');
		free(r);
	}
	for (size_t k = 0; k < c->npeers; k++) {
		const struct ceil_peer *p = &c->peers[k];
		char *r = gbps_text(p->pt.gbps);
		buf_printf(b, "  to GPU %d (CUDA ordinal), peer access %s: %s GB/s\n", p->to_cuda_index,
			   p->peer_access ? "on" : "off", r);
		free(r);
	}
	if (c->launch.n || c->sync.n) {
		buf_puts(b, "  latency:");
		put_time(b, " launch", &c->launch);
		put_time(b, ", back to back", &c->launch_gpu);
		put_time(b, ", launch + wait", &c->launch_sync);
		put_time(b, "; synchronize (idle)", &c->sync);
		buf_putc(b, '\n');
	}
	if (c->python_via) {
		buf_printf(b, "  from Python (%s):", c->python_via);
		put_time(b, " a tiny operation", &c->python_op);
		put_time(b, ", with a synchronize", &c->python_op_sync);
		buf_putc(b, '\n');
	}
	if (verbose) {
		if (c->method)
			buf_printf(b, "  method: %s\n", c->method);
		if (g->peak.found)
			buf_printf(b, "  published peaks from: %s\n", g->peak.source);
		if (g->cache_path)
			buf_printf(b, "  cache: %s\n", g->cache_path);
	}
}

static void answer_text(struct buf *b, const struct fit_result *r)
{
	const struct fit_answer *a = &r->answer;
	char *in = fit_bytes_text(a->in_bytes), *out = fit_bytes_text(a->out_bytes);
	buf_printf(b, "\nWorking set: %s in", in);
	if (a->out_bytes != a->in_bytes)
		buf_printf(b, ", %s out", out);
	buf_puts(b, " (");
	for (size_t i = 0; i < a->narrays; i++) {
		const struct fit_array *x = &a->arrays[i];
		char *s = fit_bytes_text(x->bytes);
		buf_printf(b, "%s%s", i ? "; " : "", x->label);
		if (x->dtype && strcmp(x->label, x->dtype) != 0 && !strstr(x->label, x->dtype))
			buf_printf(b, " %s %s", x->dtype, x->shape);
		if (a->narrays > 1)
			buf_printf(b, ": %s", s);
		free(s);
	}
	buf_puts(b, ")\n");
	char *need = fit_bytes_text(a->need_bytes), *freeb = fit_bytes_text(a->free_bytes);
	const struct fit_gpu *g = &r->gpus[a->gpu];
	buf_printf(b, "  %s: needs %s (×%g for temporaries, and the CUDA context) of %s free on GPU %d\n",
		   a->fits ? "fits" : "does not fit", need, a->temp_factor, freeb, g->index >= 0 ? g->index : 0);
	if (!a->fits && a->chunk_bytes == 0) {
		buf_puts(b, "  in chunks: none fits with its temporaries beside the CUDA context\n");
	} else if (!a->fits) {
		char *chunk = fit_bytes_text(a->chunk_bytes);
		buf_printf(b, "  in chunks: %s each", chunk);
		if (a->chunk_rows)
			buf_printf(b, " (%llu rows of the first axis)", (unsigned long long)a->chunk_rows);
		buf_printf(b, ", %llu chunks; %s\n", (unsigned long long)a->chunks, a->too_big ? a->too_big : "");
		free(chunk);
	}
	char *pg = secs_text(a->in_pageable + a->out_pageable), *pin = secs_text(a->in_pinned + a->out_pinned);
	char *fr = secs_text(a->in_fresh + a->out_fresh);
	char *pgi = secs_text(a->in_pageable), *pgo = secs_text(a->out_pageable);
	buf_printf(b, "  moving it in and out: %s pageable (%s in, %s out), %s first-touch pageable, %s pinned\n",
		   pg, pgi, pgo, fr, pin);
	if (isfinite(a->cpu_seconds)) {
		char *bp = times_text(a->best_pageable), *bf = times_text(a->best_fresh);
		char *bq = times_text(a->best_pinned), *br = times_text(a->best_resident);
		buf_printf(b, "  CPU %.3g s → best speedup if GPU compute were free: %s pageable, %s first-touch, "
			   "%s pinned, %s with the data on the GPU\n", a->cpu_seconds, bp, bf, bq, br);
		buf_printf(b, "\nverdict: %s — %s\n", fit_verdict_name(a->verdict), a->why ? a->why : "");
		free(bp);
		free(bf);
		free(bq);
		free(br);
	} else {
		buf_puts(b, "  (give --cpu-seconds, the CPU baseline's time, for the best possible speedup and a verdict)\n");
	}
	free(pg);
	free(pin);
	free(fr);
	free(pgi);
	free(pgo);
	free(need);
	free(freeb);
	free(in);
	free(out);
}

static char *report_text(const struct fit_result *r, bool verbose)
{
	struct buf b = {0};
	for (size_t i = 0; i < r->ngpus; i++) {
		if (i)
			buf_putc(&b, '\n');
		gpu_text(&b, &r->gpus[i], i, verbose);
	}
	if (r->answer.have)
		answer_text(&b, r);
	return buf_steal(&b);
}

static bool parse_count(const char *opt, const char *s, long lo, long hi, long *out)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (!*s || *end || v < lo || v > hi) {
		diag_error("fit: %s: '%s' is not a whole number from %ld to %ld", opt, s, lo, hi);
		return false;
	}
	*out = v;
	return true;
}

/* A finite number from lo to hi, else false after a usage error naming opt. */
static bool parse_real(const char *opt, const char *s, double lo, double hi, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (!*s || *end || errno || !isfinite(v) || v < lo || v > hi) {
		diag_error("fit: %s: '%s' is not a number from %g to %g", opt, s, lo, hi);
		return false;
	}
	*out = v;
	return true;
}

static bool parse_size(const char *opt, const char *s, uint64_t lo, uint64_t *out)
{
	if (!fit_parse_bytes(s, out) || *out < lo) {
		diag_error("fit: %s: '%s' is not a size of at least %llu bytes (123, 64KiB, 8GiB, 8GB)", opt, s,
			   (unsigned long long)lo);
		return false;
	}
	return true;
}

/* The ranges of the numbers: a computation whose temporaries take more than
 * 100 times its working set is not one fit's arithmetic describes (NumPy's
 * and CuPy's temporaries are a few copies of it); seconds as bench takes
 * them (up to 10^7, about 16 weeks); a speedup of more than 10^6 is asked of
 * no transfer. */
#define TEMP_FACTOR_MAX 100.0
#define SECONDS_MAX 1e7
#define MIN_SPEEDUP_MAX 1e6

enum { O_BYTES = 256, O_DTYPE, O_SHAPE, O_OUT_BYTES, O_TEMP, O_CPU, O_MIN, O_REFRESH, O_QUICK,
       O_TRIALS, O_MAX, O_GPU, O_NO_PEERS, O_PYTHON, O_CEILINGS, O_TIMEOUT };

/* run() with room for every --dtype and --shape argv may hold. */
static int run_with(int argc, char **argv, const char **dtypes, const char **shapes)
{
	static const struct option opts[] = {
		{"bytes", required_argument, NULL, O_BYTES}, {"dtype", required_argument, NULL, O_DTYPE},
		{"shape", required_argument, NULL, O_SHAPE}, {"out-bytes", required_argument, NULL, O_OUT_BYTES},
		{"temp-factor", required_argument, NULL, O_TEMP},
		{"cpu-seconds", required_argument, NULL, O_CPU},
		{"min-speedup", required_argument, NULL, O_MIN}, {"refresh", no_argument, NULL, O_REFRESH},
		{"quick", no_argument, NULL, O_QUICK}, {"trials", required_argument, NULL, O_TRIALS},
		{"max-bytes", required_argument, NULL, O_MAX}, {"gpu", required_argument, NULL, O_GPU},
		{"no-peers", no_argument, NULL, O_NO_PEERS}, {"python", required_argument, NULL, O_PYTHON},
		{"ceilings", required_argument, NULL, O_CEILINGS}, {"timeout", required_argument, NULL, O_TIMEOUT},
		{"format", required_argument, NULL, 'f'}, {"output", required_argument, NULL, 'o'},
		{"verbose", no_argument, NULL, 'v'}, {"quiet", no_argument, NULL, 'q'},
		{NULL, 0, NULL, 0},
	};
	struct fit_settings s = {.gpu = -1, .peers = true, .cpu_seconds = -1};
	s.dtypes = dtypes;
	s.shapes = shapes;
	const char *format = "text", *output = NULL;
	bool verbose = false, quiet = false;
	long n;
	uint64_t size;
	optind = 1;
	opterr = 0;
	int c;
	static const char shortopts[] = ":f:o:vq";
	while ((c = getopt_long(argc, argv, shortopts, opts, NULL)) != -1) {
		switch (c) {
		case O_BYTES: /* given again, the sizes add up */
			if (!parse_size("--bytes", optarg, 1, &size))
				return EXIT_USAGE;
			if (size > UINT64_MAX - s.bytes) {
				diag_error("fit: --bytes: '%s' makes the sizes given add up to more than "
					   "16 EiB", optarg);
				return EXIT_USAGE;
			}
			s.bytes += size;
			break;
		case O_DTYPE: /* the i-th with the i-th --shape: arrays add up */
			dtypes[s.ndtypes++] = optarg;
			break;
		case O_SHAPE:
			shapes[s.nshapes++] = optarg;
			break;
		case O_OUT_BYTES:
			if (!parse_size("--out-bytes", optarg, 0, &s.out_bytes))
				return EXIT_USAGE;
			s.out_bytes_set = true;
			break;
		case O_TEMP:
			if (!parse_real("--temp-factor", optarg, 1, TEMP_FACTOR_MAX, &s.temp_factor))
				return EXIT_USAGE;
			break;
		case O_CPU:
			if (!parse_real("--cpu-seconds", optarg, 0, SECONDS_MAX, &s.cpu_seconds))
				return EXIT_USAGE;
			break;
		case O_MIN:
			if (!parse_real("--min-speedup", optarg, 1, MIN_SPEEDUP_MAX, &s.min_speedup))
				return EXIT_USAGE;
			break;
		case O_REFRESH:
			s.refresh = true;
			break;
		case O_QUICK:
			s.quick = true;
			break;
		case O_TRIALS:
			if (!parse_count("--trials", optarg, 3, 1000, &n))
				return EXIT_USAGE;
			s.trials = (unsigned)n;
			break;
		case O_MAX:
			if (!parse_size("--max-bytes", optarg, 1 << 20, &s.max_bytes))
				return EXIT_USAGE;
			break;
		case O_GPU:
			if (!parse_count("--gpu", optarg, 0, 4095, &n))
				return EXIT_USAGE;
			s.gpu = (int)n;
			break;
		case O_NO_PEERS:
			s.peers = false;
			break;
		case O_PYTHON:
			s.python = optarg;
			break;
		case O_CEILINGS:
			s.ceilings_file = optarg;
			break;
		case O_TIMEOUT:
			if (!parse_real("--timeout", optarg, 1, SECONDS_MAX, &s.timeout_s))
				return EXIT_USAGE;
			break;
		case 'f':
			format = optarg;
			if (strcmp(format, "text") && strcmp(format, "json")) {
				diag_error("fit: --format: '%s' is not text or json", format);
				return EXIT_USAGE;
			}
			break;
		case 'o':
			output = optarg;
			break;
		case 'v':
			verbose = true;
			break;
		case 'q':
			quiet = true;
			break;
		default: /* '?' or ':' */
			option_error("fit", argc, argv, shortopts, opts);
			return EXIT_USAGE;
		}
	}
	s.files = (const char *const *)argv + optind;
	s.nfiles = (size_t)(argc - optind);
	if (s.ceilings_file && (s.refresh || s.python || s.gpu >= 0)) {
		diag_error("fit: --ceilings takes the ceilings from a file: --refresh, --python and --gpu "
			   "are for measuring them here");
		return EXIT_USAGE;
	}
	s.progress = !quiet && isatty(STDERR_FILENO);
	struct fit_result *r = fit_run(&s);
	if (r->input_error) {
		diag_error("fit: %s", r->input_error);
		fit_result_free(r);
		return EXIT_USAGE;
	}
	int rc = EXIT_OK;
	if (r->error) {
		diag_error("fit: %s", r->error);
		rc = EXIT_FAIL;
	} else if (r->answer.have && r->answer.verdict == FIT_CANNOT_PAY) {
		rc = EXIT_FAIL;
	}
	char *doc = NULL;
	if (strcmp(format, "json") == 0) {
		json_t *j = fit_result_json(r);
		char *text = json_dumps(j, JSON_INDENT(2) | JSON_REAL_PRECISION(9));
		doc = xasprintf("%s\n", text ? text : "{}");
		free(text);
		json_decref(j);
	} else if (!r->error) {
		/* GPU names and file names, as a terminal may show them */
		doc = term_safe_take(report_text(r, verbose));
	}
	char *err;
	if (doc && !write_file_atomic(output ? output : "-", doc, strlen(doc), &err)) {
		if (output && strcmp(output, "-") != 0) /* stdout's failure is said once, as every command's (main.c) */
			diag_error("fit: cannot write '%s': %s", output, err);
		free(err);
		rc = EXIT_USAGE;
	}
	free(doc);
	fit_result_free(r);
	return rc;
}

static int run(int argc, char **argv)
{
	/* no more of either than words in argv */
	const char **dtypes = xcalloc((size_t)argc + 1, sizeof *dtypes);
	const char **shapes = xcalloc((size_t)argc + 1, sizeof *shapes);
	int rc = run_with(argc, argv, dtypes, shapes);
	free(dtypes);
	free(shapes);
	return rc;
}

const struct command cmd_fit = {
	.name = "fit",
	.summary = "measure the machine's ceilings; say whether a working set can pay on the GPU",
	.help = help,
	.run = run,
};
