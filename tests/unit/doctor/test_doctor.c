/* doctor's rules on facts recorded on the H200 (tests/e2e/fixtures/
 * h200_doctor.json: the GPU record and the Python side as `gpuopt doctor`
 * saw them there), as recorded and then changed one fact at a time — an
 * older driver, an older GPU, a CUDA 12 wheel beside CUDA 13 ones, RAPIDS
 * and cuSpatial, Warp without warp.sim, two CUDA runtimes, a second GPU
 * made from the first one's record, no driver at all — each change giving
 * its problem with the right fix. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "doctor/doctor.h"

#define FIXTURE GPUOPT_SOURCE_ROOT "/tests/e2e/fixtures/h200_doctor.json"

static json_t *recorded;

static int setup(void **state)
{
	(void)state;
	json_error_t err;
	recorded = json_load_file(FIXTURE, 0, &err);
	if (!recorded)
		fprintf(stderr, "%s: %s\n", FIXTURE, err.text);
	return recorded ? 0 : 1;
}

static int teardown(void **state)
{
	(void)state;
	json_decref(recorded);
	return 0;
}

static json_t *gpu_facts(void)
{
	return json_deep_copy(json_object_get(recorded, "gpu"));
}

static json_t *python_facts(void)
{
	return json_deep_copy(json_object_get(recorded, "python"));
}

static json_t *device0(json_t *gpu)
{
	return json_array_get(json_object_get(gpu, "devices"), 0);
}

static json_t *package(json_t *py, const char *name)
{
	size_t i;
	json_t *p;
	json_array_foreach(json_object_get(py, "packages"), i, p)
		if (strcmp(json_string_value(json_object_get(p, "name")), name) == 0)
			return p;
	fail_msg("no package %s in the facts", name);
	return NULL;
}

/* Makes package name installed as dist version, built for CUDA major. */
static void install(json_t *py, const char *name, const char *dist, const char *version, int major)
{
	json_t *p = package(py, name);
	json_object_set_new(p, "installed", json_true());
	json_object_set_new(p, "dist", json_string(dist));
	json_object_set_new(p, "version", json_string(version));
	json_object_set_new(p, "cuda_major", major ? json_integer(major) : json_null());
	json_object_set_new(p, "importable", json_true());
	json_object_set_new(p, "device_ok", json_true());
	json_object_set_new(p, "device_count", json_integer(1));
	if (!major) /* then nothing says which CUDA it has */
		json_object_set_new(p, "runtime_version", json_null());
}

static const struct doctor_problem *find(const struct doctor_result *r, const char *id)
{
	for (size_t i = 0; i < r->nproblems; i++)
		if (strcmp(r->problems[i].id, id) == 0)
			return &r->problems[i];
	return NULL;
}

static bool has_fix(const struct doctor_problem *p, const char *text)
{
	for (size_t i = 0; p && i < p->nfixes; i++)
		if (strstr(p->fixes[i], text))
			return true;
	return false;
}

static struct doctor_result *check(json_t *gpu, json_t *py)
{
	struct doctor_result *r = doctor_check(gpu, py);
	json_decref(gpu);
	json_decref(py);
	assert_null(r->error);
	return r;
}

static void test_the_h200_as_recorded_is_ready(void **state)
{
	(void)state;
	struct doctor_result *r = check(gpu_facts(), python_facts());
	assert_true(r->ready);
	assert_int_equal(r->blockers, 0);
	assert_int_equal(r->driver_cuda_major, 13);
	/* CuPy 14.2 brings CUDA 13.2 on a driver that serves 13.0 */
	const struct doctor_problem *p = find(r, "minor-version-compat");
	assert_non_null(p);
	assert_int_equal(p->severity, DOCTOR_NOTE);
	for (size_t i = 0; i < r->npackages; i++) {
		const struct doctor_package *k = &r->packages[i];
		if (k->installed && k->gpu) {
			assert_int_equal(k->cuda_major, 13);
			assert_true(k->device_ok);
		}
	}
	/* the JSON form carries the same facts again */
	json_t *j = doctor_result_json(r);
	struct doctor_result *again = doctor_check(json_object_get(j, "gpu"), json_object_get(j, "python"));
	assert_int_equal(again->nproblems, r->nproblems);
	assert_true(again->ready);
	doctor_result_free(again);
	json_decref(j);
	doctor_result_free(r);
}

static void test_a_driver_older_than_the_wheels(void **state)
{
	(void)state;
	json_t *gpu = gpu_facts();
	json_object_set_new(gpu, "cuda_driver_version", json_string("12.4"));
	json_object_set_new(gpu, "driver_version", json_string("550.54.15"));
	struct doctor_result *r = check(gpu, python_facts());
	assert_false(r->ready);
	const struct doctor_problem *p = find(r, "driver-too-old");
	assert_non_null(p);
	assert_int_equal(p->severity, DOCTOR_BLOCKER);
	assert_int_equal(r->problems[0].severity, DOCTOR_BLOCKER); /* what blocks comes first */
	/* the fix: the same package built for CUDA 12, or a driver for CUDA 13 */
	bool cupy = false;
	for (size_t i = 0; i < r->nproblems; i++)
		if (strcmp(r->problems[i].id, "driver-too-old") == 0 && strstr(r->problems[i].title, "cupy-cuda13x")) {
			cupy = true;
			assert_true(has_fix(&r->problems[i], "pip uninstall -y cupy-cuda13x"));
			assert_true(has_fix(&r->problems[i], "pip install \"cupy-cuda12x[ctk]\""));
			assert_true(has_fix(&r->problems[i], "conda install -c conda-forge cupy \"cuda-version=12\""));
			assert_true(has_fix(&r->problems[i], "R580"));
		}
	assert_true(cupy);
	doctor_result_free(r);
}

static void test_a_gpu_too_old_for_cuda_13(void **state)
{
	(void)state;
	json_t *gpu = gpu_facts();
	json_object_set_new(device0(gpu), "compute_capability", json_string("7.0"));
	json_object_set_new(device0(gpu), "name", json_string("Tesla V100-SXM2-32GB"));
	struct doctor_result *r = check(gpu, python_facts());
	const struct doctor_problem *p = find(r, "cuda-too-new-for-gpu");
	assert_non_null(p);
	assert_int_equal(p->severity, DOCTOR_BLOCKER);
	assert_non_null(strstr(p->title, "7.5"));
	doctor_result_free(r);
}

/* cupy-cuda12x installed beside the recorded cupy-cuda13x: the probe's
 * cuda_dists list both, the package table one. */
static void test_two_builds_of_one_package(void **state)
{
	(void)state;
	json_t *py = python_facts();
	struct doctor_result *r = check(gpu_facts(), json_deep_copy(py));
	assert_null(find(r, "duplicate-build")); /* as recorded: one build */
	doctor_result_free(r);
	json_t *dists = json_object_get(py, "cuda_dists");
	assert_true(json_is_array(dists));
	json_array_append_new(dists, json_pack("{s:s, s:s, s:i}", "name", "cupy_cuda12x", "version", "14.1.0",
					       "cuda_major", 12));
	r = check(gpu_facts(), py);
	const struct doctor_problem *p = find(r, "duplicate-build");
	assert_non_null(p);
	assert_int_equal(p->severity, DOCTOR_WARNING);
	assert_non_null(strstr(p->title, "cupy is installed 2 times"));
	assert_non_null(strstr(p->title, "cupy_cuda12x 14.1.0 (CUDA 12)"));
	assert_true(has_fix(p, "pip uninstall -y cupy-cuda13x cupy_cuda12x"));
	assert_true(has_fix(p, "pip install \"cupy-cuda13x[ctk]\"")); /* the H200's driver serves 13 */
	doctor_result_free(r);
}

static void test_cuda_12_beside_cuda_13(void **state)
{
	(void)state;
	json_t *py = python_facts();
	install(py, "cudf", "cudf-cu12", "26.10.2", 12);
	struct doctor_result *r = check(gpu_facts(), py);
	const struct doctor_problem *p = find(r, "mixed-cuda");
	assert_non_null(p);
	assert_int_equal(p->severity, DOCTOR_WARNING);
	assert_non_null(strstr(p->detail, "CUDA 12: cudf-cu12"));
	/* the driver serves 13: the CUDA 12 one is the one to replace */
	assert_true(has_fix(p, "pip uninstall -y cudf-cu12"));
	assert_true(has_fix(p, "pip install --extra-index-url=https://pypi.nvidia.com \"cudf-cu13==26.10.*\""));
	assert_false(has_fix(p, "cupy-cuda13x"));
	doctor_result_free(r);
	/* CUDA 12 wheels alone on a CUDA 13 driver: a note with the current build */
	py = python_facts();
	install(py, "cupy", "cupy-cuda12x", "14.2.0", 12);
	install(py, "torch", "torch", "2.11.0", 0);
	install(py, "jax", "jax", "0.11.2", 0);
	install(py, "numba-cuda", "numba-cuda", "0.30.4", 0);
	json_object_set_new(package(py, "cupy"), "runtime_version", json_string("12.9"));
	r = check(gpu_facts(), py);
	assert_null(find(r, "mixed-cuda"));
	p = find(r, "older-cuda-build");
	assert_non_null(p);
	assert_true(has_fix(p, "cupy-cuda13x"));
	doctor_result_free(r);
}

static void test_rapids_python_and_cuspatial(void **state)
{
	(void)state;
	json_t *py = python_facts();
	install(py, "cudf", "cudf-cu13", "26.10.2", 13);
	json_object_set_new(py, "version", json_string("3.10.14"));
	struct doctor_result *r = check(gpu_facts(), py);
	const struct doctor_problem *p = find(r, "rapids-python");
	assert_non_null(p);
	assert_int_equal(p->severity, DOCTOR_BLOCKER);
	assert_non_null(strstr(p->title, "3.11, 3.12, 3.13, 3.14"));
	doctor_result_free(r);
	/* nothing of RAPIDS installed yet: only a note that it cannot be */
	py = python_facts();
	json_object_set_new(py, "version", json_string("3.10.14"));
	r = check(gpu_facts(), py);
	p = find(r, "rapids-python");
	assert_non_null(p);
	assert_int_equal(p->severity, DOCTOR_NOTE);
	doctor_result_free(r);
	/* cuSpatial 25.04 beside cuDF 26.10 */
	py = python_facts();
	install(py, "cudf", "cudf-cu12", "26.10.2", 12);
	install(py, "cuspatial", "cuspatial-cu12", "25.4.0", 12);
	r = check(gpu_facts(), py);
	p = find(r, "cuspatial-conflict");
	assert_non_null(p);
	assert_int_equal(p->severity, DOCTOR_BLOCKER);
	assert_non_null(strstr(p->title, "cudf-cu12==25.4.*"));
	assert_true(has_fix(p, "cuspatial-env/bin/pip install"));
	doctor_result_free(r);
}

static void test_versions_that_need_each_other(void **state)
{
	(void)state;
	json_t *py = python_facts();
	install(py, "cudf", "cudf-cu13", "26.10.2", 13);
	json_object_set_new(package(py, "cupy"), "version", json_string("13.6.0"));
	struct doctor_result *r = check(gpu_facts(), py);
	const struct doctor_problem *p = find(r, "requires");
	assert_non_null(p);
	assert_non_null(strstr(p->title, "cupy 14.0.1"));
	assert_true(has_fix(p, "cupy-cuda13x"));
	doctor_result_free(r);
	/* Warp 1.19 has no warp.sim */
	py = python_facts();
	install(py, "warp", "warp-lang", "1.19.0", 13);
	json_object_set_new(package(py, "warp"), "submodules",
			    json_pack("{s:s}", "warp.sim", "ModuleNotFoundError: No module named 'warp.sim'"));
	r = check(gpu_facts(), py);
	p = find(r, "warp-sim-removed");
	assert_non_null(p);
	assert_true(has_fix(p, "pip install newton"));
	doctor_result_free(r);
}

static void test_two_cuda_runtimes_and_a_package_that_fails(void **state)
{
	(void)state;
	json_t *py = python_facts();
	json_array_append_new(json_object_get(py, "cudart"),
			      json_pack("{s:s, s:i}", "path", "/x/nvidia/cuda_runtime/lib/libcudart.so.12", "major", 12));
	json_t *torch = package(py, "torch");
	json_object_set_new(torch, "device_ok", json_false());
	json_object_set_new(torch, "device_error", json_string("RuntimeError: CUDA error: out of memory"));
	struct doctor_result *r = check(gpu_facts(), py);
	assert_non_null(find(r, "two-cuda-runtimes"));
	const struct doctor_problem *p = find(r, "cannot-reach-device");
	assert_non_null(p);
	assert_int_equal(p->severity, DOCTOR_BLOCKER);
	assert_non_null(strstr(p->detail, "out of memory"));
	assert_true(has_fix(p, "download.pytorch.org/whl/cu130"));
	assert_false(r->ready);
	doctor_result_free(r);
	/* an import that crashed the interpreter */
	py = python_facts();
	json_array_append_new(json_object_get(py, "failures"),
			      json_pack("{s:s, s:s, s:s}", "name", "jax", "how", "killed by signal 11 (Segmentation fault)",
					"stderr", "Fatal Python error"));
	json_t *list = json_object_get(py, "packages");
	for (size_t i = 0; i < json_array_size(list); i++)
		if (strcmp(json_string_value(json_object_get(json_array_get(list, i), "name")), "jax") == 0)
			json_array_remove(list, i);
	r = check(gpu_facts(), py);
	p = find(r, "import-crashed");
	assert_non_null(p);
	assert_non_null(strstr(p->title, "signal 11"));
	doctor_result_free(r);
}

static void test_no_driver_and_no_python(void **state)
{
	(void)state;
	json_t *gpu = json_pack("{s:b, s:s, s:s, s:n, s:n, s:n, s:{s:b, s:s}, s:{s:b, s:s}, s:[]}", "found", 0,
				"status", "no NVIDIA GPU", "reason",
				"NVML: libnvidia-ml.so.1: cannot open shared object file; CUDA: libcuda.so.1: cannot open "
				"shared object file", "driver_version", "cuda_driver_version", "nvml_version", "nvml",
				"loaded", 0, "error", "libnvidia-ml.so.1: cannot open shared object file", "cuda", "loaded",
				0, "error", "libcuda.so.1: cannot open shared object file", "devices");
	struct doctor_result *r = check(gpu, NULL);
	assert_false(r->ready);
	assert_string_equal(r->problems[0].id, "no-driver");
	assert_true(has_fix(&r->problems[0], "R580"));
	assert_int_equal(r->driver_cuda_major, 0);
	doctor_result_free(r);
	json_t *py = json_pack("{s:s, s:b, s:s}", "interpreter", "python9", "found", 0, "error", "command not found");
	r = check(gpu_facts(), py);
	assert_non_null(find(r, "python-missing"));
	doctor_result_free(r);
	/* an interpreter without one GPU package */
	py = python_facts();
	const char *gpu_pkgs[] = {"cupy", "numba-cuda", "torch", "jax"};
	for (size_t i = 0; i < 4; i++)
		json_object_set_new(package(py, gpu_pkgs[i]), "installed", json_false());
	r = check(gpu_facts(), py);
	const struct doctor_problem *p = find(r, "no-gpu-package");
	assert_non_null(p);
	assert_true(has_fix(p, "pip install \"cupy-cuda13x[ctk]\""));
	doctor_result_free(r);
}

static void test_a_second_gpu_and_the_gpu_state(void **state)
{
	(void)state;
	/* two GPUs: the recorded device twice, linked over PCIe without peer access */
	json_t *gpu = gpu_facts();
	json_t *devs = json_object_get(gpu, "devices");
	json_t *second = json_deep_copy(device0(gpu));
	json_object_set_new(second, "index", json_integer(1));
	json_object_set_new(second, "cuda_index", json_integer(1));
	json_array_append_new(devs, second);
	for (int i = 0; i < 2; i++)
		json_object_set_new(json_array_get(devs, (size_t)i), "peers",
				    json_pack("[{s:i, s:s, s:i, s:s, s:b, s:b}]", "index", 1 - i, "link", "PCIe",
					      "nvlinks_direct", 0, "topology", "SYS", "p2p_read", 0,
					      "cuda_can_access_peer", 0));
	json_t *d0 = device0(gpu);
	json_object_set_new(d0, "mig_mode", json_pack("{s:b, s:b}", "enabled", 1, "pending", 1));
	json_object_set_new(json_object_get(d0, "ecc"), "uncorrected_volatile", json_integer(3));
	json_object_set_new(d0, "persistence_mode", json_false());
	json_object_set_new(json_object_get(d0, "pcie"), "width", json_integer(8));
	json_object_set_new(d0, "processes",
			    json_pack("[{s:i, s:s, s:I}]", "pid", 4242, "name", "python3", "memory_used_bytes",
				      (json_int_t)100 << 30));
	json_object_set_new(d0, "memory_used_bytes", json_integer((json_int_t)100 << 30));
	struct doctor_result *r = check(gpu, python_facts());
	const char *ids[] = {"no-peer-access", "mig-enabled", "ecc-errors", "persistence-off", "pcie-narrow",
			     "gpu-busy"};
	for (size_t i = 0; i < sizeof ids / sizeof *ids; i++)
		if (!find(r, ids[i]))
			fail_msg("no %s problem", ids[i]);
	assert_non_null(strstr(find(r, "no-peer-access")->title, "GPUs 0 and 1"));
	assert_int_equal(find(r, "gpu-busy")->severity, DOCTOR_WARNING); /* 100 of 140 GiB */
	assert_non_null(strstr(find(r, "gpu-busy")->detail, "4242 (python3"));
	assert_non_null(strstr(find(r, "pcie-narrow")->title, "x8 of x16"));
	assert_true(r->ready); /* none of these blocks GPU work */
	doctor_result_free(r);
}

static void test_versions_compare_by_number(void **state)
{
	(void)state;
	assert_true(doctor_version_cmp("26.10.02", "26.8") > 0);
	assert_true(doctor_version_cmp("1.9.0", "1.10") < 0);
	assert_true(doctor_version_cmp("1.10", "1.10.0") == 0);
	assert_true(doctor_version_cmp("2.11.0+cu130", "2.11.0") == 0);
	assert_true(doctor_version_cmp("25.4.0", "25.04") == 0);
	assert_true(doctor_version_cmp("", "0") == 0);
	assert_true(doctor_version_cmp("3.9", "3.10") < 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_the_h200_as_recorded_is_ready),
		cmocka_unit_test(test_a_driver_older_than_the_wheels),
		cmocka_unit_test(test_a_gpu_too_old_for_cuda_13),
		cmocka_unit_test(test_cuda_12_beside_cuda_13),
		cmocka_unit_test(test_rapids_python_and_cuspatial),
		cmocka_unit_test(test_versions_that_need_each_other),
		cmocka_unit_test(test_two_builds_of_one_package),
		cmocka_unit_test(test_two_cuda_runtimes_and_a_package_that_fails),
		cmocka_unit_test(test_no_driver_and_no_python),
		cmocka_unit_test(test_a_second_gpu_and_the_gpu_state),
		cmocka_unit_test(test_versions_compare_by_number),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
