/* checks: doctor's rules. Each looks at the facts (r->gpu, r->python,
 * r->packages) and adds problems with their fixes; the numbers and commands
 * come from data/doctor/ through the kb, the reasoning is here. The ids are
 * stable (tests and agents match them):
 *   no-driver, no-gpu, gpu-query-failed, python-missing, python-probe-failed,
 *   import-crashed, import-hangs, device-check-hangs, import-fails,
 *   probe-incomplete, no-gpu-package, driver-too-old,
 *   cuda-too-new-for-gpu, cannot-reach-device, mixed-cuda, duplicate-build, older-cuda-build,
 *   minor-version-compat, rapids-python, rapids-compute-capability,
 *   rapids-driver, cuspatial-conflict, requires, warp-sim-removed,
 *   two-cuda-runtimes, mig-enabled, ecc-errors, persistence-off,
 *   pcie-narrow, gpu-busy, gpu-memory-low, no-peer-access. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor_int.h"

static const char *jstr(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static double cc_value(const json_t *dev)
{
	const char *cc = jstr(dev, "compute_capability");
	return cc ? atof(cc) : 0;
}

static const char *source_of(const json_t *o)
{
	return jstr(o, "source");
}

static void set_source(struct doctor_problem *p, const char *s)
{
	if (s && !p->source)
		p->source = xstrdup(s);
}

/* The CUDA major that fixes should use: the driver's, else the newest. */
static int target_major(const struct doctor_result *r)
{
	return r->driver_cuda_major >= 12 ? (r->driver_cuda_major > 13 ? 13 : r->driver_cuda_major) : 13;
}

static bool gpu_present(const struct doctor_result *r)
{
	return json_is_true(json_object_get(r->gpu, "found"));
}

/* The fixes that install package name for CUDA major: pip, then conda. */
static void fix_install(const struct doctor_kb *kb, struct doctor_problem *p, const char *name, int major)
{
	problem_fix(p, install_command(kb, name, major, "pip"));
	problem_fix(p, install_command(kb, name, major, "conda"));
	json_t *e = json_object_get(json_object_get(kb->install, "packages"), name);
	set_source(p, source_of(e));
}

/* ---- the GPU ---- */

static void rules_gpu(const struct doctor_kb *kb, struct doctor_result *r)
{
	const json_t *gpu = r->gpu;
	if (!gpu_present(r)) {
		const char *reason = jstr(gpu, "reason");
		bool nvml = json_is_true(json_object_get(json_object_get(gpu, "nvml"), "loaded"));
		const char *cuda_err = jstr(json_object_get(gpu, "cuda"), "error");
		const char *nvml_err = jstr(json_object_get(gpu, "nvml"), "error");
		bool no_lib = (!cuda_err || strstr(cuda_err, "libcuda.so.1")) &&
			      (!nvml_err || strstr(nvml_err, "libnvidia-ml.so.1")) && !nvml;
		const char *status = jstr(gpu, "status");
		json_t *drv = json_object_get(kb->install, "driver");
		struct doctor_problem *p;
		if (status && strcmp(status, "GPU query failed") == 0) {
			p = problem_add(r, DOCTOR_BLOCKER, "gpu-query-failed",
					xasprintf("the NVIDIA driver did not answer: %s", reason ? reason : "?"));
			problem_fix(p, xstrdup("nvidia-smi   # does it answer? if it hangs too, the driver needs "
					       "a reset or a reboot"));
		} else if (no_lib) {
			p = problem_add(r, DOCTOR_BLOCKER, "no-driver",
					xstrdup("no NVIDIA driver: libcuda.so.1 and libnvidia-ml.so.1 cannot be loaded"));
			p->detail = reason ? xstrdup(reason) : NULL;
			size_t i;
			json_t *f;
			json_array_foreach(json_object_get(drv, "fix"), i, f)
				problem_fix(p, xstrdup(json_string_value(f)));
			set_source(p, source_of(drv));
		} else {
			p = problem_add(r, DOCTOR_BLOCKER, "no-gpu",
					xstrdup("the NVIDIA driver is here but shows no GPU"));
			p->detail = reason ? xstrdup(reason) : NULL;
			const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
			if (cvd)
				problem_fix(p, xasprintf("CUDA_VISIBLE_DEVICES is '%s' here: unset it or name a GPU "
							 "that exists", cvd));
			problem_fix(p, xstrdup("nvidia-smi   # must list the GPU; if it does not, the driver "
					       "does not match the kernel or the GPU (reinstall it, then reboot)"));
			problem_fix(p, xstrdup("in a container: start it with `--gpus all` (the NVIDIA "
					       "Container Toolkit)"));
		}
		return;
	}
	size_t ndev = json_array_size(json_object_get(gpu, "devices"));
	size_t i;
	json_t *d;
	json_array_foreach(json_object_get(gpu, "devices"), i, d) {
		long long index = json_integer_value(json_object_get(d, "index"));
		const char *name = jstr(d, "name");
		json_t *mig = json_object_get(d, "mig_mode");
		if (json_is_true(json_object_get(mig, "enabled"))) {
			struct doctor_problem *p = problem_add(r, DOCTOR_NOTE, "mig-enabled",
				xasprintf("GPU %lld (%s) is in MIG mode: CUDA programs see MIG instances, each with "
					  "a slice of its memory and multiprocessors", index, name ? name : "?"));
			problem_fix(p, xstrdup("nvidia-smi -L   # lists the instances; CUDA_VISIBLE_DEVICES=MIG-<uuid> picks one"));
		}
		json_t *ecc = json_object_get(d, "ecc");
		json_t *unc = json_object_get(ecc, "uncorrected_volatile");
		if (json_is_integer(unc) && json_integer_value(unc) > 0) {
			struct doctor_problem *p = problem_add(r, DOCTOR_WARNING, "ecc-errors",
				xasprintf("GPU %lld has had %lld uncorrected ECC memory errors since the driver loaded: "
					  "results may be wrong", index, (long long)json_integer_value(unc)));
			problem_fix(p, xstrdup("nvidia-smi -q -d ECC,PAGE_RETIREMENT   # then have the GPU "
					       "checked or replaced if they keep coming"));
		}
		if (json_is_false(json_object_get(d, "persistence_mode"))) {
			struct doctor_problem *p = problem_add(r, DOCTOR_NOTE, "persistence-off",
				xasprintf("GPU %lld has persistence mode off: the driver may unload between "
					  "programs, and each program's first CUDA call then waits for it", index));
			problem_fix(p, xstrdup("sudo systemctl enable --now nvidia-persistenced   # or: sudo nvidia-smi -pm 1"));
		}
		json_t *pcie = json_object_get(d, "pcie");
		json_t *w = json_object_get(pcie, "width"), *mw = json_object_get(pcie, "max_width");
		if (json_is_integer(w) && json_is_integer(mw) && json_integer_value(w) > 0 &&
		    json_integer_value(w) < json_integer_value(mw)) {
			struct doctor_problem *p = problem_add(r, DOCTOR_WARNING, "pcie-narrow",
				xasprintf("GPU %lld's PCIe link runs x%lld of x%lld lanes: host<->device copies get "
					  "at most %lld%% of the link", index, (long long)json_integer_value(w),
					  (long long)json_integer_value(mw),
					  (long long)(100 * json_integer_value(w) / json_integer_value(mw))));
			problem_fix(p, xstrdup("put the GPU in a slot wired for all its lanes (the board's manual "
					       "says which), and check `nvidia-smi -q -d PCIE` under load"));
		}
		json_t *procs = json_object_get(d, "processes");
		json_t *used = json_object_get(d, "memory_used_bytes"), *total = json_object_get(d, "memory_total_bytes");
		json_t *freeb = json_object_get(d, "memory_free_bytes");
		if (json_array_size(procs) > 0) {
			double share = json_is_integer(used) && json_is_integer(total) && json_integer_value(total) > 0
				? (double)json_integer_value(used) / (double)json_integer_value(total) : 0;
			struct buf b = {0};
			size_t k;
			json_t *pr;
			json_array_foreach(procs, k, pr) {
				const char *pn = jstr(pr, "name");
				json_t *mem = json_object_get(pr, "memory_used_bytes");
				buf_printf(&b, "%s%lld (%s", k ? ", " : "", (long long)json_integer_value(json_object_get(pr, "pid")),
					   pn ? pn : "?");
				if (json_is_integer(mem))
					buf_printf(&b, ", %.1f GiB", (double)json_integer_value(mem) / (1 << 30));
				buf_putc(&b, ')');
			}
			struct doctor_problem *p = problem_add(r, share > 0.5 ? DOCTOR_WARNING : DOCTOR_NOTE, "gpu-busy",
				xasprintf("GPU %lld is in use by %zu other process%s, holding %.0f%% of its memory",
					  index, json_array_size(procs), json_array_size(procs) == 1 ? "" : "es",
					  share * 100));
			p->detail = buf_steal(&b);
			problem_fix(p, xstrdup("nvidia-smi   # see who; timings taken while they run are not this program's alone"));
		} else if (json_is_integer(freeb) && json_is_integer(total) && json_integer_value(total) > 0 &&
			   json_integer_value(freeb) * 10 < json_integer_value(total)) {
			problem_add(r, DOCTOR_WARNING, "gpu-memory-low",
				    xasprintf("GPU %lld has only %.1f GiB of %.1f GiB free", index,
					      (double)json_integer_value(freeb) / (1 << 30),
					      (double)json_integer_value(total) / (1 << 30)));
		}
		size_t k;
		json_t *peer;
		json_array_foreach(json_object_get(d, "peers"), k, peer) {
			long long j = json_integer_value(json_object_get(peer, "index"));
			if (ndev > 1 && j > index && json_is_false(json_object_get(peer, "cuda_can_access_peer"))) {
				struct doctor_problem *p = problem_add(r, DOCTOR_NOTE, "no-peer-access",
					xasprintf("GPUs %lld and %lld cannot access each other's memory (%s%s%s): "
						  "copies between them go through host memory", index, j,
						  jstr(peer, "link") ? jstr(peer, "link") : "?",
						  jstr(peer, "topology") ? ", " : "",
						  jstr(peer, "topology") ? jstr(peer, "topology") : ""));
				problem_fix(p, xstrdup("nvidia-smi topo -m   # how the GPUs are linked; peer access "
						       "needs NVLink or a PCIe switch shared by both"));
			}
		}
	}
}

/* ---- Python and its packages ---- */

static double min_cc(const struct doctor_result *r)
{
	double m = 0;
	size_t i;
	json_t *d;
	json_array_foreach(json_object_get(r->gpu, "devices"), i, d) {
		double cc = cc_value(d);
		if (cc > 0 && (m == 0 || cc < m))
			m = cc;
	}
	return m;
}

static const char *python_version(const struct doctor_result *r)
{
	return jstr(r->python, "version");
}

/* "3.11.2" -> "3.11" */
static char *python_minor(const char *v)
{
	if (!v)
		return NULL;
	const char *dot = strchr(v, '.');
	const char *dot2 = dot ? strchr(dot + 1, '.') : NULL;
	return dot2 ? xstrndup(v, (size_t)(dot2 - v)) : xstrdup(v);
}

static bool in_list(const json_t *list, const char *s)
{
	size_t i;
	json_t *v;
	json_array_foreach(list, i, v)
		if (s && json_is_string(v) && strcmp(json_string_value(v), s) == 0)
			return true;
	return false;
}

static char *list_text(const json_t *list)
{
	struct buf b = {0};
	size_t i;
	json_t *v;
	json_array_foreach(list, i, v)
		buf_printf(&b, "%s%s", i ? ", " : "", json_string_value(v));
	return buf_steal(&b);
}

/* The RAPIDS release row for version v: the newest listed one not newer. */
static const json_t *rapids_release(const struct doctor_kb *kb, const char *v)
{
	const json_t *best = NULL;
	size_t i;
	json_t *rel;
	json_array_foreach(json_object_get(json_object_get(kb->conflicts, "rapids"), "releases"), i, rel) {
		const char *rv = jstr(rel, "version");
		if (!v || doctor_version_cmp(rv, v) <= 0)
			best = rel;
	}
	return best;
}

/* The module that package name is imported as (packages.json's "import",
 * else its name). Borrowed from the kb. */
static const char *import_name(const struct doctor_kb *kb, const char *name)
{
	size_t i;
	json_t *t;
	json_array_foreach(json_object_get(kb->packages, "packages"), i, t) {
		const char *n = jstr(t, "name");
		if (n && strcmp(n, name) == 0)
			return jstr(t, "import") ? jstr(t, "import") : name;
	}
	return name;
}

/* A package whose import or device check did not finish in its time: what
 * it was given, and how to see where it waits. */
static void rule_hung(const struct doctor_kb *kb, struct doctor_result *r, const struct doctor_package *p,
		      const char *interp)
{
	char in[48] = "in time";
	if (p->time_limit_s > 0)
		snprintf(in, sizeof in, "in %g s", p->time_limit_s);
	double wait = p->time_limit_s > 0 ? p->time_limit_s : 60;
	const char *mod = import_name(kb, p->name);
	struct doctor_problem *q;
	if (strcmp(p->timed_out, "device check") == 0) {
		q = problem_add(r, p->gpu ? DOCTOR_BLOCKER : DOCTOR_WARNING, "device-check-hangs",
				xasprintf("%s imports, but its device check (its first use of the GPU) did "
					  "not finish %s", p->name, in));
		q->detail = xstrdup("the probe stopped it there; a program's first use of the GPU through "
				    "it waits the same way");
		problem_fix(q, xstrdup("nvidia-smi   # does the driver answer? if it hangs too, the GPU "
				       "needs a reset or the machine a reboot"));
	} else {
		q = problem_add(r, p->gpu ? DOCTOR_BLOCKER : DOCTOR_WARNING, "import-hangs",
				xasprintf("importing %s did not finish %s", p->name, in));
		q->detail = xasprintf("the probe stopped it there and asked the other packages without "
				      "it; `import %s` in a program waits the same way", mod);
		problem_fix(q, xasprintf("%s -c 'import faulthandler; faulthandler.dump_traceback_later(%g, "
					 "exit=True); import %s'   # where it waits", interp, wait, mod));
	}
	/* stopped short of its own limit: the probe's time for all ran out then */
	json_t *own = json_object_get(r->python, "package_timeout_s");
	json_t *all = json_object_get(r->python, "timeout_s");
	if (json_is_number(own) && p->time_limit_s > 0 && p->time_limit_s + 0.05 < json_number_value(own))
		problem_fix(q, xasprintf("gpuopt doctor --timeout %g   # the time for all packages ran out "
					 "while it waited", json_is_number(all) ? json_number_value(all) * 3 : 600));
	else
		problem_fix(q, xasprintf("gpuopt doctor --package-timeout %g   # if it is only slow (a first "
					 "run that compiles, a cold network file system)", wait * 4));
}

static void rules_python(const struct doctor_kb *kb, struct doctor_result *r)
{
	const json_t *py = r->python;
	if (!py)
		return;
	const char *interp = jstr(py, "interpreter");
	const char *err = jstr(py, "error");
	if (!json_is_true(json_object_get(py, "found"))) {
		struct doctor_problem *p = problem_add(r, DOCTOR_BLOCKER, "python-missing",
			xasprintf("no Python: '%s': %s", interp ? interp : "python3", err ? err : "cannot be run"));
		problem_fix(p, xstrdup("give --python the interpreter your code runs with: a path such as "
				       "./venv/bin/python, or a command such as 'conda run -n ENV python'"));
		return;
	}
	if (err && !python_version(r)) {
		struct doctor_problem *p = problem_add(r, DOCTOR_BLOCKER, "python-probe-failed",
			xasprintf("the interpreter '%s' could not be asked about its packages", interp));
		p->detail = xstrdup(err);
		problem_fix(p, xasprintf("%s -c 'import sys; print(sys.version)'   # Python 3.8 or newer "
					 "is needed", interp));
		return;
	}
	int major = target_major(r);
	bool any_gpu = false;
	struct buf not_asked = {0};
	for (size_t i = 0; i < r->npackages; i++) {
		const struct doctor_package *p = &r->packages[i];
		if (!p->installed)
			continue;
		if (p->gpu)
			any_gpu = true;
		if (!p->asked) {
			buf_printf(&not_asked, "%s%s", not_asked.len ? ", " : "", p->name);
			continue;
		}
		if (p->timed_out) {
			rule_hung(kb, r, p, interp);
			continue;
		}
		if (p->crashed) {
			struct doctor_problem *q = problem_add(r, p->gpu ? DOCTOR_BLOCKER : DOCTOR_WARNING,
				"import-crashed", xasprintf("importing %s stops the interpreter: it %s", p->name, p->crashed));
			problem_fix(q, xasprintf("%s -c 'import %s'   # run it alone to see the error", interp,
						 import_name(kb, p->name)));
			if (p->gpu)
				fix_install(kb, q, p->name, major);
			continue;
		}
		if (!p->importable) {
			struct doctor_problem *q = problem_add(r, p->gpu ? DOCTOR_BLOCKER : DOCTOR_WARNING,
				"import-fails", xasprintf("%s %s is installed but does not import", p->dist ? p->dist : p->name,
							  p->version ? p->version : ""));
			q->detail = p->import_error ? xstrdup(p->import_error) : NULL;
			if (p->gpu)
				fix_install(kb, q, p->name, p->cuda_major ? p->cuda_major : major);
			else
				problem_fix(q, xasprintf("%s -m pip install --force-reinstall %s", interp,
							 p->dist ? p->dist : p->name));
			continue;
		}
	}
	if (not_asked.len) {
		json_t *limit = json_object_get(py, "timeout_s");
		double t = json_is_number(limit) ? json_number_value(limit) : 0;
		char in[48] = "";
		if (t > 0)
			snprintf(in, sizeof in, " (%g s)", t);
		struct doctor_problem *q = problem_add(r, DOCTOR_WARNING, "probe-incomplete",
			xasprintf("the Python probe's time%s ran out before it came to %s: installed, but "
				  "whether they import and can use the GPU is not known", in, not_asked.data));
		problem_fix(q, xasprintf("gpuopt doctor --timeout %g", t > 0 ? t * 3 : 600));
	}
	buf_free(&not_asked);
	if (!any_gpu) {
		struct doctor_problem *q = problem_add(r, DOCTOR_BLOCKER, "no-gpu-package",
			xasprintf("no GPU library is installed for %s (%s)", interp,
				  python_version(r) ? python_version(r) : "?"));
		q->detail = xasprintf("none of CuPy, cuDF, cuML, cuGraph, nx-cugraph, cuCIM, cuVS, KvikIO, "
				      "numba-cuda, Warp, PyTorch or JAX; these commands are for CUDA %d%s", major,
				      r->driver_cuda_major ? ", what the driver serves" : "");
		fix_install(kb, q, "cupy", major);
		problem_fix(q, install_command(kb, "cudf", major, "pip"));
	}
}

static void rules_cuda(const struct doctor_kb *kb, struct doctor_result *r)
{
	if (!r->python)
		return;
	json_t *drv_min = json_object_get(json_object_get(kb->conflicts, "driver_minimum"), "cuda");
	json_t *cc_min = json_object_get(json_object_get(kb->conflicts, "cuda_min_compute_capability"), "cuda");
	const char *drv_src = source_of(json_object_get(kb->conflicts, "driver_minimum"));
	const char *cc_src = source_of(json_object_get(kb->conflicts, "cuda_min_compute_capability"));
	const char *driver = jstr(r->gpu, "driver_version");
	const char *cuda_drv = jstr(r->gpu, "cuda_driver_version");
	int D = r->driver_cuda_major;
	double cc = min_cc(r);
	bool present = gpu_present(r);
	int majors[4] = {0};
	size_t nmajors = 0;
	for (size_t i = 0; i < r->npackages; i++) {
		const struct doctor_package *p = &r->packages[i];
		if (!p->installed || !p->gpu || !p->cuda_major)
			continue;
		int M = p->cuda_major;
		bool known = false;
		for (size_t k = 0; k < nmajors; k++)
			known |= majors[k] == M;
		if (!known && nmajors < 4)
			majors[nmajors++] = M;
		char key[8];
		snprintf(key, sizeof key, "%d", M);
		const char *need = json_string_value(json_object_get(drv_min, key));
		if (D && D < M) {
			struct doctor_problem *q = problem_add(r, DOCTOR_BLOCKER, "driver-too-old",
				xasprintf("%s is built for CUDA %d; the driver (%s) serves CUDA %s at most",
					  p->dist ? p->dist : p->name, M, driver ? driver : "?", cuda_drv ? cuda_drv : "?"));
			char *dist_now = install_dist(kb, p->name, D);
			if (dist_now && p->dist && strcmp(dist_now, p->dist) != 0)
				problem_fix(q, xasprintf("pip uninstall -y %s", p->dist));
			free(dist_now);
			fix_install(kb, q, p->name, D);
			if (need)
				problem_fix(q, xasprintf("or upgrade the driver to R%s or newer (CUDA %d)", need, M));
			set_source(q, drv_src);
			continue;
		}
		if (present && M >= 13) {
			char *need_cc = (char *)json_string_value(json_object_get(cc_min, key));
			if (need_cc && cc > 0 && cc < atof(need_cc)) {
				struct doctor_problem *q = problem_add(r, DOCTOR_BLOCKER, "cuda-too-new-for-gpu",
					xasprintf("%s is built for CUDA %d, which needs compute capability %s or "
						  "higher; this GPU has %.1f", p->dist ? p->dist : p->name, M, need_cc, cc));
				if (p->dist)
					problem_fix(q, xasprintf("pip uninstall -y %s", p->dist));
				fix_install(kb, q, p->name, 12);
				set_source(q, cc_src);
				continue;
			}
		}
		if (present && p->device_checked && !p->device_ok && !p->timed_out) {
			struct doctor_problem *q = problem_add(r, DOCTOR_BLOCKER, "cannot-reach-device",
				xasprintf("%s (%s %s) cannot use the GPU", p->name, p->dist ? p->dist : "?",
					  p->version ? p->version : "?"));
			q->detail = p->device_error ? xstrdup(p->device_error) : NULL;
			fix_install(kb, q, p->name, D >= 12 ? (D > 13 ? 13 : D) : M);
		}
		if (D == M && p->runtime_version && cuda_drv &&
		    doctor_version_cmp(p->runtime_version, cuda_drv) > 0) {
			struct doctor_problem *q = problem_add(r, DOCTOR_NOTE, "minor-version-compat",
				xasprintf("%s brings CUDA %s, newer than the driver's %s: it runs through minor "
					  "version compatibility, but code it compiles at run time for the newer "
					  "CUDA (PTX) fails", p->name, p->runtime_version, cuda_drv));
			if (need)
				problem_fix(q, xasprintf("a driver that serves CUDA %s avoids it (any R%s+ driver "
							 "runs CUDA %d code)", p->runtime_version, need, M));
			set_source(q, drv_src);
		}
	}
	if (nmajors > 1) {
		int keep = D >= 12 ? (D > 13 ? 13 : D) : 0;
		if (!keep) { /* else the major most packages have */
			int best = 0, best_n = -1;
			for (size_t k = 0; k < nmajors; k++) {
				int n = 0;
				for (size_t i = 0; i < r->npackages; i++)
					n += r->packages[i].installed && r->packages[i].gpu &&
					     r->packages[i].cuda_major == majors[k];
				if (n > best_n)
					best = majors[k], best_n = n;
			}
			keep = best;
		}
		struct buf b = {0};
		for (size_t k = 0; k < nmajors; k++) {
			buf_printf(&b, "%sCUDA %d:", k ? "; " : "", majors[k]);
			for (size_t i = 0; i < r->npackages; i++) {
				const struct doctor_package *p = &r->packages[i];
				if (p->installed && p->gpu && p->cuda_major == majors[k])
					buf_printf(&b, " %s", p->dist ? p->dist : p->name);
			}
		}
		struct doctor_problem *q = problem_add(r, DOCTOR_WARNING, "mixed-cuda",
			xasprintf("packages built for different CUDA majors are installed together: each loads "
				  "its own CUDA libraries, and RAPIDS packages of different majors do not work "
				  "with each other"));
		q->detail = buf_steal(&b);
		for (size_t i = 0; i < r->npackages; i++) {
			const struct doctor_package *p = &r->packages[i];
			if (!p->installed || !p->gpu || !p->cuda_major || p->cuda_major == keep)
				continue;
			if (p->dist)
				problem_fix(q, xasprintf("pip uninstall -y %s", p->dist));
			problem_fix(q, install_command(kb, p->name, keep, "pip"));
		}
	} else if (nmajors == 1 && D >= 13 && majors[0] < D) {
		for (size_t i = 0; i < r->npackages; i++) {
			const struct doctor_package *p = &r->packages[i];
			if (!p->installed || !p->gpu || p->cuda_major != majors[0])
				continue;
			char *now = install_dist(kb, p->name, D);
			if (!now || (p->dist && strcmp(now, p->dist) == 0)) {
				free(now);
				continue;
			}
			struct doctor_problem *q = problem_add(r, DOCTOR_NOTE, "older-cuda-build",
				xasprintf("%s is built for CUDA %d; the driver serves CUDA %d: it works (drivers "
					  "run older CUDA), but %s is the current build", p->dist ? p->dist : p->name,
					  p->cuda_major, D, now));
			free(now);
			if (p->dist)
				problem_fix(q, xasprintf("pip uninstall -y %s", p->dist));
			problem_fix(q, install_command(kb, p->name, D, "pip"));
		}
	}
	/* two runtimes in one process */
	json_t *cudart = json_object_get(r->python, "cudart");
	int first = 0;
	bool two = false;
	size_t i;
	json_t *lib;
	json_array_foreach(cudart, i, lib) {
		int m = (int)json_integer_value(json_object_get(lib, "major"));
		if (first && m != first)
			two = true;
		if (!first)
			first = m;
	}
	if (two) {
		struct doctor_problem *q = problem_add(r, DOCTOR_WARNING, "two-cuda-runtimes",
			xstrdup("importing the GPU packages together loads two CUDA runtimes of different majors "
				"into one process: they do not share memory pools or streams, and each holds its "
				"own context memory"));
		struct buf b = {0};
		json_array_foreach(cudart, i, lib)
			buf_printf(&b, "%s%s", i ? ", " : "", jstr(lib, "path"));
		q->detail = buf_steal(&b);
		problem_fix(q, xstrdup("install every GPU package for the same CUDA major (see mixed-cuda)"));
	}
}

static void rules_rapids(const struct doctor_kb *kb, struct doctor_result *r)
{
	if (!r->python || !python_version(r))
		return;
	json_t *rapids = json_object_get(kb->conflicts, "rapids");
	char *minor = python_minor(python_version(r));
	const struct doctor_package *any = NULL;
	for (size_t i = 0; i < r->npackages; i++)
		if (r->packages[i].installed && r->packages[i].rapids && r->packages[i].version &&
		    strcmp(r->packages[i].name, "cuspatial") != 0) {
			any = &r->packages[i];
			break;
		}
	const char *current = jstr(rapids, "current");
	const json_t *rel = rapids_release(kb, any ? any->version : current);
	json_t *pys = json_object_get(rel, "python");
	if (rel && !in_list(pys, minor)) {
		char *list = list_text(pys);
		struct doctor_problem *q = any
			? problem_add(r, DOCTOR_BLOCKER, "rapids-python",
				      xasprintf("%s %s (RAPIDS %s) supports Python %s; this Python is %s", any->dist,
						any->version, jstr(rel, "version"), list, minor))
			: problem_add(r, DOCTOR_NOTE, "rapids-python",
				      xasprintf("RAPIDS %s (cuDF, cuML, cuGraph, ...) supports Python %s; this "
						"Python is %s: RAPIDS cannot be installed for it", jstr(rel, "version"),
						list, minor));
		problem_fix(q, xasprintf("use a Python that RAPIDS supports: conda create -n rapids -c "
					 "rapidsai -c conda-forge python=%s rapids=%s",
					 json_string_value(json_array_get(pys, json_array_size(pys) > 1 ? 1 : 0)),
					 jstr(rel, "version")));
		set_source(q, source_of(rapids));
		free(list);
	}
	if (any && gpu_present(r)) {
		int M = any->cuda_major ? any->cuda_major : target_major(r);
		char key[8];
		snprintf(key, sizeof key, "%d", M);
		json_t *row = json_object_get(json_object_get(rel, "cuda"), key);
		const char *need_cc = jstr(row, "min_compute_capability");
		const char *need_drv = jstr(row, "driver");
		const char *driver = jstr(r->gpu, "driver_version");
		double cc = min_cc(r);
		if (need_cc && cc > 0 && cc < atof(need_cc)) {
			struct doctor_problem *q = problem_add(r, DOCTOR_BLOCKER, "rapids-compute-capability",
				xasprintf("RAPIDS %s on CUDA %d needs compute capability %s or higher; this GPU "
					  "has %.1f", jstr(rel, "version"), M, need_cc, cc));
			if (M >= 13 && cc >= 7.0)
				fix_install(kb, q, any->name, 12);
			else
				problem_fix(q, xstrdup("RAPIDS needs a Volta (7.0) or newer GPU for CUDA 12, "
						       "Turing (7.5) or newer for CUDA 13"));
			set_source(q, source_of(rapids));
		}
		if (need_drv && driver && doctor_version_cmp(driver, need_drv) < 0 &&
		    r->driver_cuda_major >= M) {
			struct doctor_problem *q = problem_add(r, DOCTOR_BLOCKER, "rapids-driver",
				xasprintf("RAPIDS %s on CUDA %d needs driver R%s or newer; this one is %s",
					  jstr(rel, "version"), M, need_drv, driver));
			problem_fix(q, xasprintf("upgrade the NVIDIA driver to R%s or newer", need_drv));
			set_source(q, source_of(rapids));
		}
	}
	free(minor);
	const struct doctor_package *cs = package_get(r, "cuspatial");
	json_t *csk = json_object_get(kb->conflicts, "cuspatial");
	if (cs && cs->installed) {
		const struct doctor_package *other = NULL;
		for (size_t i = 0; i < r->npackages; i++) {
			const struct doctor_package *p = &r->packages[i];
			if (p->installed && p->rapids && p != cs && p->version &&
			    doctor_version_cmp(p->version, jstr(csk, "last_release")) > 0)
				other = p;
		}
		struct doctor_problem *q = problem_add(r, other ? DOCTOR_BLOCKER : DOCTOR_WARNING,
			"cuspatial-conflict",
			other ? xasprintf("cuSpatial (%s %s) beside %s %s: %s", cs->dist, cs->version, other->dist,
					  other->version, jstr(csk, "why"))
			      : xasprintf("cuSpatial (%s %s) holds this environment at RAPIDS %s: %s", cs->dist,
					  cs->version ? cs->version : "?", jstr(csk, "last_release"), jstr(csk, "why")));
		size_t i;
		json_t *f;
		json_array_foreach(json_object_get(csk, "fix"), i, f)
			problem_fix(q, xstrdup(json_string_value(f)));
		set_source(q, source_of(csk));
	}
}

static void rules_versions(const struct doctor_kb *kb, struct doctor_result *r)
{
	if (!r->python)
		return;
	size_t i;
	json_t *rule;
	json_array_foreach(json_object_get(kb->conflicts, "requires"), i, rule) {
		const struct doctor_package *a = package_get(r, jstr(rule, "if"));
		const struct doctor_package *b = package_get(r, jstr(rule, "needs"));
		const char *need = jstr(rule, "needs_version");
		if (!a || !a->installed || !a->version || doctor_version_cmp(a->version, jstr(rule, "min_version")) < 0)
			continue;
		if (b && b->installed && b->version && doctor_version_cmp(b->version, need) >= 0)
			continue;
		struct doctor_problem *q = problem_add(r, DOCTOR_WARNING, "requires",
			xasprintf("%s %s needs %s %s or newer; %s", a->dist ? a->dist : a->name, a->version,
				  jstr(rule, "needs"), need,
				  b && b->installed ? "an older one is installed" : "it is not installed"));
		q->detail = xstrdup(jstr(rule, "why"));
		if (b && b->installed && b->gpu)
			fix_install(kb, q, b->name, b->cuda_major ? b->cuda_major : target_major(r));
		else
			problem_fix(q, xasprintf("pip install \"%s>=%s\"", jstr(rule, "needs"), need));
		set_source(q, source_of(rule));
	}
	const struct doctor_package *w = package_get(r, "warp");
	json_t *ws = json_object_get(kb->conflicts, "warp_sim");
	const char *removed = jstr(ws, "removed_in");
	if (w && w->installed && w->importable && w->version && removed &&
	    doctor_version_cmp(w->version, removed) >= 0) {
		size_t k;
		json_t *f;
		const char *sub = jstr(w->submodules, jstr(ws, "module"));
		if (sub) {
			struct doctor_problem *q = problem_add(r, DOCTOR_NOTE, "warp-sim-removed",
				xasprintf("warp-lang %s has no warp.sim (%s): %s", w->version, sub, jstr(ws, "why")));
			json_array_foreach(json_object_get(ws, "fix"), k, f)
				problem_fix(q, xstrdup(json_string_value(f)));
			set_source(q, source_of(ws));
		}
	}
}

/* Distribution names compared as pip does (case, '-', '_' and '.' alike). */
static bool same_dist(const char *a, const char *b)
{
	for (;; a++, b++) {
		char x = *a == '_' || *a == '.' ? '-' : (char)(*a >= 'A' && *a <= 'Z' ? *a + 32 : *a);
		char y = *b == '_' || *b == '.' ? '-' : (char)(*b >= 'A' && *b <= 'Z' ? *b + 32 : *b);
		if (x != y)
			return false;
		if (!x)
			return true;
	}
}

/* One package installed as two of its builds (cupy-cuda12x beside
 * cupy-cuda13x, nx-cugraph-cu12 beside nx-cugraph-cu13): both write the same
 * module, so what imports depends on the order pip ran, and uninstalling one
 * deletes files the other needs. The probe's cuda_dists list every installed
 * distribution with a CUDA major; the package table reports only the first. */
static void rules_duplicates(const struct doctor_kb *kb, struct doctor_result *r)
{
	json_t *dists = r->python ? json_object_get(r->python, "cuda_dists") : NULL;
	if (!json_is_array(dists))
		return;
	size_t i, k, j;
	json_t *t, *d, *x;
	json_array_foreach(json_object_get(kb->packages, "packages"), i, t) {
		const char *name = jstr(t, "name");
		struct buf which = {0}, names = {0};
		int found = 0;
		json_array_foreach(json_object_get(t, "dists"), k, d) {
			json_array_foreach(dists, j, x) {
				const char *dn = jstr(x, "name");
				if (!dn || !json_string_value(d) || !same_dist(dn, json_string_value(d)))
					continue;
				json_t *m = json_object_get(x, "cuda_major");
				buf_printf(&which, "%s%s %s (CUDA %d)", found ? " and " : "", dn,
					   jstr(x, "version") ? jstr(x, "version") : "?",
					   json_is_integer(m) ? (int)json_integer_value(m) : 0);
				buf_printf(&names, " %s", dn);
				found++;
			}
		}
		if (found >= 2 && name) {
			char *w = buf_steal(&which), *n = buf_steal(&names);
			struct doctor_problem *q = problem_add(r, DOCTOR_WARNING, "duplicate-build",
				xasprintf("%s is installed %d times, as %s: they write the same module, so which "
					  "one imports depends on the order pip ran, and uninstalling one breaks "
					  "the other", name, found, w));
			problem_fix(q, xasprintf("pip uninstall -y%s", n));
			problem_fix(q, install_command(kb, name, target_major(r), "pip"));
			free(w);
			free(n);
		} else {
			free(buf_steal(&which));
			free(buf_steal(&names));
		}
	}
}

void doctor_rules(const struct doctor_kb *kb, struct doctor_result *r)
{
	rules_gpu(kb, r);
	rules_python(kb, r);
	rules_cuda(kb, r);
	rules_duplicates(kb, r);
	rules_rapids(kb, r);
	rules_versions(kb, r);
}
