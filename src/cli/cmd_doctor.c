/* cmd_doctor: `gpuopt doctor` — can GPU work start on this machine, and if
 * not, exactly what to do. Options, help, the one-screen text report or
 * JSON, and the exit code; the rules are the doctor engine's
 * (doctor/doctor.h). */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "opterr.h"
#include "core/diag.h"
#include "core/fileio.h"
#include "core/util.h"
#include "doctor/doctor.h"

static const char help[] =
	"Usage: gpuopt doctor [OPTIONS]\n"
	"\n"
	"Say whether GPU work can start here and, if not, exactly what to do.\n"
	"\n"
	"The GPUs, read through NVML and the CUDA driver (loaded at run time, so this\n"
	"works on a machine without them): name, compute capability, memory total and\n"
	"free, the driver and the highest CUDA it serves, PCIe generation and width\n"
	"(now and at most), clocks, persistence and MIG mode, ECC errors, the processes\n"
	"using each GPU, NUMA node and nearby CPUs; with several GPUs, how each pair is\n"
	"linked (NVLink or PCIe, nvidia-smi topo's level) and whether peer access works.\n"
	"\n"
	"The Python side, asked of the interpreter itself (it runs a probe with -c; no\n"
	"gpuopt code is imported): its version and path; which of numpy, scipy, pandas,\n"
	"scikit-learn, networkx, scikit-image, numba, dask, cupy, numba-cuda, cudf,\n"
	"cuml, cugraph, nx-cugraph, cucim, cuvs, kvikio, pylibraft, cuspatial,\n"
	"dask-cuda, warp, newton, torch and jax are installed and import, their\n"
	"versions, the CUDA major each GPU package was built for (from its wheel name,\n"
	"its version or its own runtime), and whether it can use the device (CuPy's\n"
	"runtime and device count, torch.cuda.is_available(), a one-element allocation).\n"
	"Each package's import and device check has a time limit of its own: one that\n"
	"crashes the interpreter or does not finish in time is reported as exactly that,\n"
	"and the other packages are still asked, without it. The interpreter answers on\n"
	"a channel of gpuopt's own (a socket given as its standard input, each answer\n"
	"marked with a token new for each run), so nothing a package prints or writes to\n"
	"any file descriptor is taken for an answer.\n"
	"\n"
	"Problems, each with its fix (pip and conda commands with the right -cu12 /\n"
	"-cu13 suffix, from the libraries' install pages; the data is in data/doctor/):\n"
	"no driver or no GPU; a driver older than a package's CUDA; a GPU too old for\n"
	"CUDA 13 builds; a package that cannot reach the device; CUDA 12 and CUDA 13\n"
	"builds side by side (two builds of one package too), or two CUDA runtimes\n"
	"loaded in one process; RAPIDS on a Python, GPU or driver it does not support;\n"
	"cuSpatial beside a newer RAPIDS; warp.sim gone from Warp >= 1.10; RAPIDS\n"
	"26.08+ without CuPy 14 / NumPy 2; MIG, ECC errors, persistence off, a narrow\n"
	"PCIe link, a GPU busy with other work.\n"
	"\n"
	"Options:\n"
	"      --python PY       the interpreter to ask (default python3): a path, or a\n"
	"                        command line such as 'conda run -n ENV python' (one\n"
	"                        that passes its standard input on to Python)\n"
	"      --no-python       leave the Python side out\n"
	"      --timeout S       seconds the Python probe may take in all (default 180)\n"
	"      --package-timeout S\n"
	"                        seconds one package's import and device check may take\n"
	"                        (default 60)\n"
	"  -f, --format FORMAT   text (default) or json\n"
	"  -o, --output FILE     write the report to FILE (whole or not at all)\n"
	"  -v, --verbose         text: where each fact was read from, and the GPU's peers\n"
	"  -h, --help            show this help\n"
	"\n"
	"Exit codes: 0 GPU work can start (no blocker); 1 something blocks it (what\n"
	"blocks is printed first); 2 usage error.\n";

static void gib(struct buf *b, const json_t *v)
{
	if (json_is_integer(v))
		buf_printf(b, "%.1f GiB", (double)json_integer_value(v) / (1024.0 * 1024 * 1024));
	else
		buf_puts(b, "?");
}

static const char *js(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static void problem_text(struct buf *b, const struct doctor_problem *p, bool verbose)
{
	buf_printf(b, "%s [%s] %s\n", doctor_severity_name(p->severity), p->id, p->title);
	if (p->detail)
		buf_printf(b, "    why: %s\n", p->detail);
	for (size_t i = 0; i < p->nfixes; i++)
		buf_printf(b, "    %s %s\n", i ? "    " : "fix:", p->fixes[i]);
	if (verbose && p->source)
		buf_printf(b, "    from: %s\n", p->source);
}

static void gpu_text(struct buf *b, const json_t *gpu, bool verbose)
{
	if (!json_is_true(json_object_get(gpu, "found"))) {
		buf_printf(b, "GPU: none (%s)\n", js(gpu, "reason") ? js(gpu, "reason") : "?");
		return;
	}
	const char *driver = js(gpu, "driver_version"), *cuda = js(gpu, "cuda_driver_version");
	size_t i;
	json_t *d;
	json_array_foreach(json_object_get(gpu, "devices"), i, d) {
		buf_printf(b, "GPU %lld: %s, ", (long long)json_integer_value(json_object_get(d, "index")),
			   js(d, "name") ? js(d, "name") : "?");
		gib(b, json_object_get(d, "memory_total_bytes"));
		buf_puts(b, " (");
		gib(b, json_object_get(d, "memory_free_bytes"));
		buf_printf(b, " free), compute capability %s\n",
			   js(d, "compute_capability") ? js(d, "compute_capability") : "?");
		buf_printf(b, "       driver %s (CUDA %s)", driver ? driver : "?", cuda ? cuda : "?");
		json_t *pcie = json_object_get(d, "pcie");
		if (json_is_object(pcie)) {
			json_t *g = json_object_get(pcie, "generation"), *mg = json_object_get(pcie, "max_generation");
			json_t *w = json_object_get(pcie, "width"), *mw = json_object_get(pcie, "max_width");
			buf_printf(b, ", PCIe Gen%lld x%lld (max Gen%lld x%lld)", (long long)json_integer_value(g),
				   (long long)json_integer_value(w), (long long)json_integer_value(mg),
				   (long long)json_integer_value(mw));
		}
		json_t *clk = json_object_get(d, "clocks_mhz"), *mx = json_object_get(d, "max_clocks_mhz");
		if (json_is_integer(json_object_get(clk, "sm")))
			buf_printf(b, ", SM %lld MHz (max %lld), memory %lld MHz",
				   (long long)json_integer_value(json_object_get(clk, "sm")),
				   (long long)json_integer_value(json_object_get(mx, "sm")),
				   (long long)json_integer_value(json_object_get(clk, "memory")));
		buf_puts(b, "\n       ");
		json_t *pm = json_object_get(d, "persistence_mode");
		buf_printf(b, "persistence %s", json_is_boolean(pm) ? (json_is_true(pm) ? "on" : "off") : "?");
		json_t *mig = json_object_get(d, "mig_mode");
		buf_printf(b, ", MIG %s", json_is_object(mig) ? (json_is_true(json_object_get(mig, "enabled")) ? "on" : "off")
							     : "n/a");
		json_t *ecc = json_object_get(d, "ecc");
		if (json_is_object(ecc)) {
			json_t *u = json_object_get(ecc, "uncorrected_volatile");
			buf_printf(b, ", ECC %s", json_is_true(json_object_get(ecc, "enabled")) ? "on" : "off");
			if (json_is_integer(u))
				buf_printf(b, " (%lld uncorrected errors)", (long long)json_integer_value(u));
		} else {
			buf_puts(b, ", ECC n/a");
		}
		json_t *procs = json_object_get(d, "processes");
		if (json_is_array(procs))
			buf_printf(b, ", %zu other process%s", json_array_size(procs),
				   json_array_size(procs) == 1 ? "" : "es");
		json_t *node = json_object_get(d, "numa_node");
		if (json_is_integer(node))
			buf_printf(b, ", NUMA node %lld", (long long)json_integer_value(node));
		if (js(d, "local_cpus"))
			buf_printf(b, ", CPUs %s", js(d, "local_cpus"));
		buf_putc(b, '\n');
		size_t k;
		json_t *p;
		json_array_foreach(json_object_get(d, "peers"), k, p) {
			long long j = json_integer_value(json_object_get(p, "index"));
			if (j < json_integer_value(json_object_get(d, "index")) && !verbose)
				continue; /* each pair once */
			json_t *can = json_object_get(p, "cuda_can_access_peer");
			json_t *nl = json_object_get(p, "nvlinks_direct");
			buf_printf(b, "       GPU %lld <-> GPU %lld: %s", (long long)json_integer_value(json_object_get(d, "index")),
				   j, js(p, "link") ? js(p, "link") : "?");
			if (json_is_integer(nl) && json_integer_value(nl) > 0)
				buf_printf(b, " (%lld links)", (long long)json_integer_value(nl));
			if (js(p, "topology"))
				buf_printf(b, ", topology %s", js(p, "topology"));
			buf_printf(b, ", peer access %s\n", json_is_boolean(can) ? (json_is_true(can) ? "yes" : "no") : "?");
		}
	}
}

static void python_text(struct buf *b, const struct doctor_result *r)
{
	const json_t *py = r->python;
	if (!py)
		return;
	const char *interp = js(py, "interpreter");
	if (!json_is_true(json_object_get(py, "found")) || !js(py, "version")) {
		buf_printf(b, "Python: %s: %s\n", interp ? interp : "?", js(py, "error") ? js(py, "error") : "?");
		return;
	}
	buf_printf(b, "Python %s: %s", js(py, "version"), js(py, "executable") ? js(py, "executable") : interp);
	if (json_is_true(json_object_get(py, "virtualenv")))
		buf_printf(b, " (virtual environment %s)", js(py, "prefix") ? js(py, "prefix") : "");
	else if (json_is_true(json_object_get(py, "conda")))
		buf_printf(b, " (conda environment %s)", js(py, "prefix") ? js(py, "prefix") : "");
	buf_putc(b, '\n');
	bool header = false;
	struct buf missing = {0};
	for (size_t i = 0; i < r->npackages; i++) {
		const struct doctor_package *p = &r->packages[i];
		if (!p->installed) {
			buf_printf(&missing, "%s%s", missing.len ? ", " : "", p->name);
			continue;
		}
		if (!header) {
			buf_printf(b, "  %-13s %-17s %-10s %-5s %s\n", "package", "distribution", "version", "CUDA",
				   "can use the GPU");
			header = true;
		}
		char cuda[8] = "-";
		if (p->cuda_major)
			snprintf(cuda, sizeof cuda, "%d", p->cuda_major);
		buf_printf(b, "  %-13s %-17s %-10s %-5s ", p->name, p->dist ? p->dist : "?",
			   p->version ? p->version : "?", cuda);
		if (p->crashed)
			buf_printf(b, "import crashed: %s", p->crashed);
		else if (!p->asked)
			buf_puts(b, "not asked: the probe's time ran out first");
		else if (p->timed_out && strcmp(p->timed_out, "import") == 0 && p->time_limit_s > 0)
			buf_printf(b, "import did not finish in %g s", p->time_limit_s);
		else if (p->timed_out && strcmp(p->timed_out, "import") == 0)
			buf_puts(b, "import did not finish in time");
		else if (!p->importable)
			buf_printf(b, "does not import: %s", p->import_error ? p->import_error : "?");
		else if (!p->gpu)
			buf_puts(b, "-");
		else if (!p->device_checked)
			buf_puts(b, "imports (not checked)");
		else if (p->device_ok)
			buf_printf(b, "yes%s", p->device_count > 0 ? "" : "");
		else
			buf_printf(b, "no: %s", p->device_error ? p->device_error : "?");
		if (p->device_ok && p->device_count > 0)
			buf_printf(b, " (%d device%s)", p->device_count, p->device_count == 1 ? "" : "s");
		buf_putc(b, '\n');
	}
	if (missing.len)
		buf_printf(b, "  not installed: %s\n", missing.data);
	buf_free(&missing);
}

static char *report_text(const struct doctor_result *r, bool verbose)
{
	struct buf b = {0};
	if (r->ready)
		buf_printf(&b, "gpuopt doctor: GPU work can start here");
	else
		buf_printf(&b, "gpuopt doctor: GPU work cannot start here");
	buf_printf(&b, " (%zu blocker%s, %zu warning%s, %zu note%s)\n", r->blockers, r->blockers == 1 ? "" : "s",
		   r->warnings, r->warnings == 1 ? "" : "s", r->notes, r->notes == 1 ? "" : "s");
	bool first = true;
	for (size_t i = 0; i < r->nproblems; i++)
		if (r->problems[i].severity == DOCTOR_BLOCKER) {
			buf_puts(&b, first ? "\n" : "");
			problem_text(&b, &r->problems[i], verbose);
			first = false;
		}
	buf_putc(&b, '\n');
	gpu_text(&b, r->gpu, verbose);
	buf_putc(&b, '\n');
	python_text(&b, r);
	first = true;
	for (size_t i = 0; i < r->nproblems; i++)
		if (r->problems[i].severity != DOCTOR_BLOCKER) {
			buf_puts(&b, first ? "\n" : "");
			problem_text(&b, &r->problems[i], verbose);
			first = false;
		}
	return buf_steal(&b);
}

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{"python", required_argument, NULL, 'p'}, {"no-python", no_argument, NULL, 'n'},
		{"timeout", required_argument, NULL, 't'}, {"package-timeout", required_argument, NULL, 'P'},
		{"format", required_argument, NULL, 'f'},
		{"output", required_argument, NULL, 'o'}, {"verbose", no_argument, NULL, 'v'},
		{NULL, 0, NULL, 0},
	};
	struct doctor_settings s = {0};
	const char *format = "text", *output = NULL;
	bool verbose = false;
	optind = 1;
	opterr = 0;
	int c;
	static const char shortopts[] = ":f:o:v";
	while ((c = getopt_long(argc, argv, shortopts, opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			s.python = optarg;
			break;
		case 'n':
			s.no_python = true;
			break;
		case 't':
		case 'P': {
			char *end;
			double v = strtod(optarg, &end);
			if (end == optarg || *end || !(v > 0) || !isfinite(v)) {
				diag_error("doctor: %s: '%s' is not a number of seconds above 0",
					   c == 't' ? "--timeout" : "--package-timeout", optarg);
				return EXIT_USAGE;
			}
			*(c == 't' ? &s.timeout_s : &s.package_timeout_s) = v;
			break;
		}
		case 'f':
			format = optarg;
			if (strcmp(format, "text") && strcmp(format, "json")) {
				diag_error("doctor: --format: '%s' is not text or json", format);
				return EXIT_USAGE;
			}
			break;
		case 'o':
			output = optarg;
			break;
		case 'v':
			verbose = true;
			break;
		default: /* '?' or ':' */
			option_error("doctor", argc, argv, shortopts, opts);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		diag_error("doctor: unexpected argument '%s' (doctor takes options only)", argv[optind]);
		return EXIT_USAGE;
	}
	if (s.python && s.no_python) {
		diag_error("doctor: --python and --no-python: give one or the other");
		return EXIT_USAGE;
	}
	struct doctor_result *r = doctor_run(&s);
	if (r->error) {
		diag_error("doctor: %s", r->error);
		doctor_result_free(r);
		return EXIT_USAGE;
	}
	const char *perr = json_string_value(json_object_get(r->python, "error"));
	if (s.python && !json_is_true(json_object_get(r->python, "found")) && perr) {
		diag_error("doctor: --python '%s': %s", s.python, perr);
		doctor_result_free(r);
		return EXIT_USAGE;
	}
	char *doc;
	if (strcmp(format, "json") == 0) {
		json_t *j = doctor_result_json(r);
		char *text = json_dumps(j, JSON_INDENT(2) | JSON_REAL_PRECISION(9));
		doc = xasprintf("%s\n", text ? text : "{}");
		free(text);
		json_decref(j);
	} else {
		/* what the machine and Python said, as a terminal may show them */
		doc = term_safe_take(report_text(r, verbose));
	}
	int rc = r->ready ? EXIT_OK : EXIT_FAIL;
	char *err;
	if (!write_file_atomic(output ? output : "-", doc, strlen(doc), &err)) {
		if (output && strcmp(output, "-") != 0) /* stdout's failure is said once, as every command's (main.c) */
			diag_error("doctor: cannot write '%s': %s", output, err);
		free(err);
		rc = EXIT_USAGE;
	}
	free(doc);
	doctor_result_free(r);
	return rc;
}

const struct command cmd_doctor = {
	.name = "doctor",
	.summary = "say whether GPU work can start here, and what to fix if not",
	.help = help,
	.run = run,
};
