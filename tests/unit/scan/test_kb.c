/* The knowledge base: the compiled-in data loads and holds the facts the
 * brief states; malformed data is refused with a message naming the file and
 * the entry; lookups prefer exact names over patterns, longer patterns over
 * shorter ones. */
#include "testutil.h"

#include <stdlib.h>

#include "core/data.h"

static void test_compiled_data_loads(void **state)
{
	(void)state;
	char *why = NULL;
	struct kb *kb = kb_load(&why);
	assert_non_null(kb);
	assert_true(kb->nrules >= 27);
	for (size_t i = 0; i < kb->nrules; i++) {
		const struct rule *r = &kb->rules[i];
		assert_non_null(r->why);
		assert_non_null(r->before);
		assert_non_null(r->after);
		assert_ptr_equal(kb_rule(kb, r->id), r);
		assert_ptr_equal(kb_rule(kb, r->name), r);
	}
	/* Every library names where its facts come from. */
	for (size_t i = 0; i < kb->nlibs; i++)
		assert_true(strlen(kb->libs[i].source) > 10);
	kb_free(kb);
}

static const struct kb_entry *entry(const struct kb *kb, const char *name)
{
	const struct kb_library *lib = kb_library_for(kb, name);
	assert_non_null(lib);
	return kb_lookup(lib, name);
}

static void test_brief_facts(void **state)
{
	(void)state;
	char *why = NULL;
	struct kb *kb = kb_load(&why);
	assert_non_null(kb);
	/* cuml.accel: 35 estimators accelerated, e.g. KMeans; not Agglomerative. */
	const struct kb_entry *e = entry(kb, "sklearn.cluster.KMeans");
	assert_non_null(e);
	assert_true(e->gpu && !e->ignore);
	e = entry(kb, "sklearn.cluster.AgglomerativeClustering");
	assert_true(e && !e->gpu);
	/* CuPy lacks nanpercentile; covers numpy.fft. */
	e = entry(kb, "numpy.nanpercentile");
	assert_true(e && !e->gpu);
	e = entry(kb, "numpy.fft.fft");
	assert_true(!e || e->gpu);
	assert_string_equal(kb_library_for(kb, "numpy.fft.fft")->target, "cupy");
	/* nothing for scipy.optimize */
	e = entry(kb, "scipy.optimize.minimize");
	assert_true(e && !e->gpu);
	/* pagerank falls back when dangling is given */
	e = entry(kb, "networkx.pagerank");
	assert_non_null(e);
	bool dangling = false;
	for (size_t i = 0; i < e->nfallbacks; i++)
		dangling |= strcmp(e->fallbacks[i].arg, "dangling") == 0;
	assert_true(dangling);
	/* accelerator modes first */
	assert_string_equal(kb_library_for(kb, "pandas.read_csv")->target, "cudf.pandas");
	assert_string_equal(kb_library_for(kb, "sklearn.svm.SVC")->target, "cuml.accel");
	assert_string_equal(kb_library_for(kb, "networkx.pagerank")->target, "nx-cugraph");
	/* legacy libraries at their imports */
	e = kb_import(kb, "cuspatial");
	assert_non_null(e);
	assert_string_equal(e->rule->category, "legacy-library");
	e = kb_import(kb, "warp.sim.model");
	assert_non_null(e);
	assert_string_equal(e->target, "newton");
	assert_null(kb_import(kb, "warp"));
	kb_free(kb);
}

static const char rules[] =
	"{\"rules\":[{\"id\":\"GPU101\",\"name\":\"a\",\"category\":\"library-port\",\"severity\":\"note\",\"summary\":\"s\"}]}";

/* Loads rules.json plus one knowledge file; returns the error or NULL. */
static char *load_one(const char *json)
{
	struct data_file files[] = {{"rules.json", sizeof rules - 1, rules},
				    {"knowledge/x.json", strlen(json), json}};
	char *why = NULL;
	struct kb *kb = kb_load_files(files, 2, &why);
	kb_free(kb);
	return why;
}

static void expect_error(const char *json, const char *needle)
{
	char *why = load_one(json);
	if (!why || !strstr(why, needle))
		fail_msg("wanted an error containing '%s', got '%s'", needle, why ? why : "(none)");
	assert_non_null(strstr(why, "knowledge/x.json"));
	free(why);
}

static void test_bad_data_is_refused(void **state)
{
	(void)state;
	const char *base = "\"library\":\"x\",\"modules\":[\"x\"],\"source\":\"t\"";
	char buf[512];
	expect_error("{\"library\": ", "line");
	expect_error("{\"modules\":[\"x\"]}", "needs \"library\"");
	snprintf(buf, sizeof buf, "{%s,\"target\":\"gpu-magic\"}", base);
	expect_error(buf, "unknown target");
	snprintf(buf, sizeof buf, "{%s,\"rule\":\"GPU999\"}", base);
	expect_error(buf, "unknown rule 'GPU999'");
	snprintf(buf, sizeof buf, "{%s,\"apis\":[{\"name\":\"x.f\",\"fallback\":[{\"arg\":\"a\"}]}]}", base);
	expect_error(buf, "x.f: fallback #1");
	snprintf(buf, sizeof buf, "{%s,\"apis\":[{\"name\":\"x.f\"},{\"name\":\"x.f\"}]}", base);
	expect_error(buf, "x.f: duplicate name");
	snprintf(buf, sizeof buf, "{%s,\"unlisted\":{\"classes\":\"maybe\"}}", base);
	expect_error(buf, "unlisted");
	snprintf(buf, sizeof buf, "{%s,\"apis\":[{\"gpu\":false}]}", base);
	expect_error(buf, "entry without \"name\"");
	snprintf(buf, sizeof buf, "{%s,\"imports\":[{\"module\":\"x\"}]}", base);
	expect_error(buf, "needs a rule");
	snprintf(buf, sizeof buf, "{%s,\"device_arrays\":\"copies\"}", base);
	expect_error(buf, "\"device_arrays\" is \"pass-through\" or \"converts\"");
	snprintf(buf, sizeof buf, "{%s}", base);
	char *why = load_one(buf);
	assert_null(why);
}

static void test_lookup_precedence(void **state)
{
	(void)state;
	const char *json = "{\"library\":\"x\",\"modules\":[\"x\"],\"source\":\"t\",\"apis\":["
			   "{\"name\":\"x.*\",\"gpu\":false},"
			   "{\"name\":\"x.sub.*\",\"ignore\":true},"
			   "{\"name\":\"x.sub.f\"}]}";
	struct data_file files[] = {{"rules.json", sizeof rules - 1, rules},
				    {"knowledge/x.json", strlen(json), json}};
	char *why = NULL;
	struct kb *kb = kb_load_files(files, 2, &why);
	assert_non_null(kb);
	const struct kb_library *lib = kb_library_for(kb, "x.sub.f");
	assert_non_null(lib);
	assert_string_equal(kb_lookup(lib, "x.sub.f")->name, "x.sub.f");
	assert_string_equal(kb_lookup(lib, "x.sub.g")->name, "x.sub.*");
	assert_string_equal(kb_lookup(lib, "x.other")->name, "x.*");
	assert_null(kb_library_for(kb, "xy.f"));
	assert_null(kb_library_for(kb, "y"));
	kb_free(kb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compiled_data_loads),
		cmocka_unit_test(test_brief_facts),
		cmocka_unit_test(test_bad_data_is_refused),
		cmocka_unit_test(test_lookup_precedence),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
