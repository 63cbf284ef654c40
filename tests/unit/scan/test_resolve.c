/* Import resolution and call matching, against a small knowledge base
 * written here so the tests pin the scanner's logic, not the data files
 * (test_knowledge.c checks those). Each test scans a snippet and asserts
 * which qualified name, rule and target each line resolves to. */
#include "testutil.h"

#include <stdlib.h>

#include "core/data.h"

static const char rules_json[] =
	"{\"rules\": ["
	"{\"id\":\"GPU101\",\"name\":\"numpy-to-cupy\",\"category\":\"library-port\",\"severity\":\"note\",\"summary\":\"s\"},"
	"{\"id\":\"GPU104\",\"name\":\"sk\",\"category\":\"library-port\",\"severity\":\"note\",\"summary\":\"s\"},"
	"{\"id\":\"GPU201\",\"name\":\"np-no\",\"category\":\"no-gpu-path\",\"severity\":\"warning\",\"summary\":\"s\"},"
	"{\"id\":\"GPU203\",\"name\":\"sk-no\",\"category\":\"no-gpu-path\",\"severity\":\"warning\",\"summary\":\"s\"},"
	"{\"id\":\"GPU103\",\"name\":\"pd\",\"category\":\"library-port\",\"severity\":\"note\",\"summary\":\"s\"},"
	"{\"id\":\"GPU206\",\"name\":\"pd-no\",\"category\":\"no-gpu-path\",\"severity\":\"warning\",\"summary\":\"s\"},"
	"{\"id\":\"GPU301\",\"name\":\"fb\",\"category\":\"no-gpu-path\",\"severity\":\"warning\",\"summary\":\"s\"},"
	"{\"id\":\"GPU501\",\"name\":\"torch\",\"category\":\"gpu-native-framework\",\"severity\":\"note\",\"summary\":\"s\"}"
	"]}";

static const char numpy_json[] =
	"{\"library\":\"numpy\",\"modules\":[\"numpy\"],\"source\":\"test\",\"target\":\"cupy\","
	"\"rule\":\"GPU101\",\"gpu_prefix\":[[\"numpy.\",\"cupy.\"]],\"message\":\"{name} -> {gpu_name}\","
	"\"fix\":\"use {gpu_name}\",\"no_gpu\":{\"rule\":\"GPU201\"},"
	"\"unlisted\":{\"functions\":\"port\",\"classes\":\"port\",\"methods\":\"ignore\"},"
	"\"apis\":[{\"name\":\"numpy.nanpercentile\",\"gpu\":false,\"why\":\"CuPy lacks it\"},"
	"{\"name\":\"numpy.testing.*\",\"ignore\":true},"
	"{\"name\":\"numpy.fromfile\",\"fallback\":[{\"arg\":\"sep\",\"pos\":3,\"not_in\":[\"\"],\"why\":\"text\"}]}]}";

static const char sklearn_json[] =
	"{\"library\":\"sklearn\",\"modules\":[\"sklearn\"],\"source\":\"test\",\"target\":\"cuml.accel\","
	"\"rule\":\"GPU104\",\"fix\":\"python -m cuml.accel {script}\",\"no_gpu\":{\"rule\":\"GPU203\"},"
	"\"unlisted\":{\"classes\":\"no-gpu\",\"functions\":\"ignore\",\"methods\":\"ignore\"},"
	"\"apis\":[{\"name\":\"sklearn.cluster.KMeans\",\"fallback\":[{\"arg\":\"init\",\"callable\":true}]},"
	"{\"name\":\"sklearn.decomposition.PCA\",\"fallback\":[{\"arg\":\"n_components\",\"pos\":0,\"equals\":[\"mle\"]}]},"
	"{\"name\":\"sklearn.cluster.SpectralClustering\",\"fallback\":[{\"arg\":\"affinity\",\"equals\":[\"rbf\"],\"default\":\"rbf\"}]},"
	"{\"name\":\"sklearn.ensemble.RandomForestClassifier\",\"fallback\":[{\"arg\":\"ccp_alpha\",\"not_in\":[0]}]},"
	"{\"name\":\"sklearn.neighbors.NearestNeighbors\"},"
	"{\"name\":\"sklearn.neighbors.NearestNeighbors.radius_neighbors\",\"gpu\":false},"
	"{\"name\":\"sklearn.*.fit\",\"ignore\":true,\"returns\":\"self\"}]}";

static const char pandas_json[] =
	"{\"library\":\"pandas\",\"modules\":[\"pandas\"],\"source\":\"test\",\"target\":\"cudf.pandas\","
	"\"rule\":\"GPU103\",\"fix\":\"python -m cudf.pandas {script}\",\"notebook_fix\":\"%load_ext cudf.pandas\","
	"\"no_gpu\":{\"rule\":\"GPU206\"},\"types\":{\"pandas.DataFrame\":{\"methods\":\"port\"}},"
	"\"unlisted\":{\"classes\":\"port\",\"functions\":\"port\",\"methods\":\"port\"},"
	"\"apis\":[{\"name\":\"pandas.read_csv\",\"returns\":\"pandas.DataFrame\"},"
	"{\"name\":\"pandas.DataFrame\",\"returns\":\"pandas.DataFrame\"},"
	"{\"name\":\"pandas.DataFrame.iterrows\",\"gpu\":false},"
	"{\"name\":\"pandas.DataFrame.apply\",\"fallback\":[{\"arg\":\"axis\",\"pos\":1,\"equals\":[1,\"columns\"]}]}]}";

static const char torch_json[] =
	"{\"library\":\"torch\",\"modules\":[\"torch\"],\"source\":\"test\",\"target\":null,"
	"\"imports\":[{\"module\":\"torch\",\"rule\":\"GPU501\",\"message\":\"stay in {name}\"}]}";

static struct kb *kb;

static int setup(void **state)
{
	(void)state;
	const struct data_file files[] = {
		{"rules.json", sizeof rules_json - 1, rules_json},
		{"knowledge/numpy.json", sizeof numpy_json - 1, numpy_json},
		{"knowledge/pandas.json", sizeof pandas_json - 1, pandas_json},
		{"knowledge/sklearn.json", sizeof sklearn_json - 1, sklearn_json},
		{"knowledge/torch.json", sizeof torch_json - 1, torch_json},
	};
	char *why = NULL;
	kb = kb_load_files(files, sizeof files / sizeof *files, &why);
	if (!kb)
		fprintf(stderr, "kb: %s\n", why);
	return kb ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	kb_free(kb);
	return 0;
}

static void expect(const struct scan_result *r, uint32_t line, const char *symbol, const char *rule,
		   const char *target)
{
	const struct finding *f = finding_at(r, line, 0);
	if (!f)
		fail_msg("no finding on line %u (wanted %s)", line, symbol);
	assert_string_equal(f->symbol, symbol);
	assert_string_equal(f->rule->id, rule);
	if (target)
		assert_string_equal(f->target, target);
	else
		assert_null(f->target);
}

static void test_import_forms(void **state)
{
	(void)state;
	struct scan_result r = scan_snippet(kb, "t.py",
		"import numpy as np\n"                       /* 1 */
		"from sklearn.cluster import KMeans\n"       /* 2 */
		"import sklearn.cluster as skc\n"            /* 3 */
		"import sklearn.decomposition\n"             /* 4 */
		"from numpy.linalg import svd\n"             /* 5 */
		"np.fft.fft(x)\n"                            /* 6 */
		"KMeans(3)\n"                                /* 7 */
		"skc.KMeans(3)\n"                            /* 8 */
		"sklearn.decomposition.PCA(2)\n"             /* 9 */
		"svd(a)\n"                                   /* 10 */
		"import numpy\n"                             /* 11 */
		"numpy.linalg.solve(a, b)\n"                 /* 12 */
		"from numpy import linalg as LA\n"           /* 13 */
		"LA.eigh(a)\n");                             /* 14 */
	expect(&r, 6, "numpy.fft.fft", "GPU101", "cupy");
	expect(&r, 7, "sklearn.cluster.KMeans", "GPU104", "cuml.accel");
	expect(&r, 8, "sklearn.cluster.KMeans", "GPU104", "cuml.accel");
	expect(&r, 9, "sklearn.decomposition.PCA", "GPU104", "cuml.accel");
	expect(&r, 10, "numpy.linalg.svd", "GPU101", "cupy");
	expect(&r, 12, "numpy.linalg.solve", "GPU101", "cupy");
	expect(&r, 14, "numpy.linalg.eigh", "GPU101", "cupy");
	assert_string_equal(finding_at(&r, 6, 0)->message, "numpy.fft.fft -> cupy.fft.fft");
	assert_int_equal(r.n, 7);
	scan_result_free(&r);
}

static void test_function_scopes(void **state)
{
	(void)state;
	struct scan_result r = scan_snippet(kb, "t.py",
		"def load():\n"                              /* 1 */
		"    import numpy as np\n"                   /* 2 */
		"    return np.zeros(3)\n"                   /* 3 */
		"np.zeros(3)\n"                              /* 4: np is not bound here */
		"import numpy as np\n"                       /* 5 */
		"def f(np):\n"                               /* 6 */
		"    return np.zeros(3)\n"                   /* 7: parameter shadows */
		"def g():\n"                                 /* 8 */
		"    np = object()\n"                        /* 9 */
		"    return np.zeros(3)\n"                   /* 10: local shadows */
		"class C:\n"                                 /* 11 */
		"    from sklearn.cluster import KMeans\n"   /* 12 */
		"    def m(self):\n"                         /* 13 */
		"        return KMeans()\n"                  /* 14: class scope is not visible */
		"    k = KMeans()\n"                         /* 15 */
		"np.ones(2)\n");                             /* 16 */
	expect(&r, 3, "numpy.zeros", "GPU101", "cupy");
	assert_int_equal(findings_on(&r, 4), 0);
	assert_int_equal(findings_on(&r, 7), 0);
	assert_int_equal(findings_on(&r, 10), 0);
	assert_int_equal(findings_on(&r, 14), 0);
	expect(&r, 15, "sklearn.cluster.KMeans", "GPU104", "cuml.accel");
	expect(&r, 16, "numpy.ones", "GPU101", "cupy");
	scan_result_free(&r);
}

static void test_aliases_star_and_guards(void **state)
{
	(void)state;
	struct scan_result r = scan_snippet(kb, "t.py",
		"from numpy import *\n"                      /* 1 */
		"nanpercentile(a, 5)\n"                      /* 2 */
		"try:\n"                                     /* 3 */
		"    import numpy as xp\n"                   /* 4 */
		"except ImportError:\n"                      /* 5 */
		"    xp = None\n"                            /* 6 */
		"xp.sum(a)\n"                                /* 7 */
		"KM = __import__('x')\n"                     /* 8 */
		"import sklearn.cluster\n"                   /* 9 */
		"Est = sklearn.cluster.KMeans\n"             /* 10 */
		"Est(4)\n"                                   /* 11 */
		"from . import numpy as local\n"             /* 12 */
		"local.zeros(1)\n"                           /* 13 */
		"import numpy.testing as npt\n"              /* 14 */
		"npt.assert_allclose(a, b)\n");              /* 15 */
	expect(&r, 2, "numpy.nanpercentile", "GPU201", NULL);
	expect(&r, 7, "numpy.sum", "GPU101", "cupy");
	expect(&r, 11, "sklearn.cluster.KMeans", "GPU104", "cuml.accel");
	assert_int_equal(findings_on(&r, 13), 0);
	assert_int_equal(findings_on(&r, 15), 0);
	scan_result_free(&r);
}

static void test_fallbacks(void **state)
{
	(void)state;
	struct scan_result r = scan_snippet(kb, "t.py",
		"from sklearn.cluster import KMeans, SpectralClustering\n"  /* 1 */
		"from sklearn.decomposition import PCA\n"                   /* 2 */
		"from sklearn.ensemble import RandomForestClassifier as RF\n" /* 3 */
		"def my_init(X, k, random_state): return X[:k]\n"           /* 4 */
		"KMeans(3, init=my_init)\n"                                 /* 5: callable */
		"KMeans(3, init=lambda X, k, r: X[:k])\n"                   /* 6: callable */
		"KMeans(3, init='k-means++')\n"                             /* 7: fine */
		"PCA('mle')\n"                                              /* 8: positional */
		"PCA(n_components='mle')\n"                                 /* 9: keyword */
		"PCA(n_components=mode)\n"                                  /* 10: unknown: no fallback */
		"SpectralClustering(3)\n"                                   /* 11: default rbf */
		"SpectralClustering(3, affinity='nearest_neighbors')\n"     /* 12: fine */
		"SpectralClustering(3, **kw)\n"                             /* 13: unknown */
		"RF(ccp_alpha=0.0)\n"                                       /* 14: fine (0 == 0.0) */
		"RF(ccp_alpha=0.01)\n"                                      /* 15: fallback */
		"import numpy as np\n"                                      /* 16 */
		"np.fromfile(p, np.float32, -1, ',')\n"                     /* 17: text mode */
		"np.fromfile(p, dtype=np.float32)\n");                      /* 18: fine */
	expect(&r, 5, "sklearn.cluster.KMeans", "GPU301", NULL);
	expect(&r, 6, "sklearn.cluster.KMeans", "GPU301", NULL);
	expect(&r, 7, "sklearn.cluster.KMeans", "GPU104", "cuml.accel");
	expect(&r, 8, "sklearn.decomposition.PCA", "GPU301", NULL);
	expect(&r, 9, "sklearn.decomposition.PCA", "GPU301", NULL);
	expect(&r, 10, "sklearn.decomposition.PCA", "GPU104", "cuml.accel");
	expect(&r, 11, "sklearn.cluster.SpectralClustering", "GPU301", NULL);
	expect(&r, 12, "sklearn.cluster.SpectralClustering", "GPU104", "cuml.accel");
	expect(&r, 13, "sklearn.cluster.SpectralClustering", "GPU104", "cuml.accel");
	expect(&r, 14, "sklearn.ensemble.RandomForestClassifier", "GPU104", "cuml.accel");
	expect(&r, 15, "sklearn.ensemble.RandomForestClassifier", "GPU301", NULL);
	expect(&r, 17, "numpy.fromfile", "GPU301", NULL);
	expect(&r, 18, "numpy.fromfile", "GPU101", "cupy");
	/* The finding points at the argument, not the whole call. */
	const struct finding *f = finding_at(&r, 9, 0);
	assert_int_equal(f->col, 5);
	assert_int_equal(f->end_col, 23);
	assert_non_null(strstr(f->message, "n_components='mle'"));
	scan_result_free(&r);
}

static void test_values_and_methods(void **state)
{
	(void)state;
	struct scan_result r = scan_snippet(kb, "t.py",
		"import pandas as pd\n"                               /* 1 */
		"df = pd.read_csv('x.csv')\n"                         /* 2 */
		"g = df.groupby('k').agg('sum')\n"                    /* 3: two calls */
		"for _, row in df.iterrows():\n"                      /* 4 */
		"    pass\n"                                          /* 5 */
		"df.apply(f, axis=1)\n"                               /* 6 */
		"df['a'].apply(f)\n"                                  /* 7 */
		"from sklearn.neighbors import NearestNeighbors\n"    /* 8 */
		"nn = NearestNeighbors(n_neighbors=3).fit(X)\n"       /* 9 */
		"nn.radius_neighbors(X)\n"                            /* 10 */
		"df = 3\n"                                            /* 11 */
		"df.apply(f, axis=1)\n");                             /* 12: rebound */
	expect(&r, 2, "pandas.read_csv", "GPU103", "cudf.pandas");
	assert_int_equal(findings_on(&r, 3), 2);
	expect(&r, 4, "pandas.DataFrame.iterrows", "GPU206", NULL);
	expect(&r, 6, "pandas.DataFrame.apply", "GPU301", NULL);
	expect(&r, 7, "pandas.DataFrame.apply", "GPU103", "cudf.pandas");
	expect(&r, 9, "sklearn.neighbors.NearestNeighbors", "GPU104", "cuml.accel");
	assert_int_equal(findings_on(&r, 9), 1); /* fit() is ignored */
	expect(&r, 10, "sklearn.neighbors.NearestNeighbors.radius_neighbors", "GPU203", NULL);
	assert_int_equal(findings_on(&r, 12), 0);
	assert_string_equal(finding_at(&r, 2, 0)->fix, "python -m cudf.pandas t.py");
	scan_result_free(&r);
}

static void test_imports_and_unlisted(void **state)
{
	(void)state;
	struct scan_result r = scan_snippet(kb, "t.py",
		"import torch, torch.nn\n"                   /* 1: one finding per statement */
		"from torch import nn\n"                     /* 2: already reported */
		"torch.zeros(3)\n"                           /* 3: calls are not reported */
		"from sklearn.cluster import Birch\n"        /* 4 */
		"Birch()\n"                                  /* 5: unlisted class -> no-gpu */
		"from sklearn.model_selection import train_test_split\n" /* 6 */
		"train_test_split(X)\n"                      /* 7: unlisted function -> ignore */
		"import os\n"                                /* 8 */
		"os.path.join('a')\n");                      /* 9: unknown library */
	expect(&r, 1, "torch", "GPU501", NULL);
	assert_int_equal(findings_on(&r, 1), 1);
	assert_int_equal(findings_on(&r, 2), 0);
	assert_int_equal(findings_on(&r, 3), 0);
	expect(&r, 5, "sklearn.cluster.Birch", "GPU203", NULL);
	assert_int_equal(findings_on(&r, 7), 0);
	assert_int_equal(findings_on(&r, 9), 0);
	assert_string_equal(finding_at(&r, 1, 0)->message, "stay in torch");
	scan_result_free(&r);
}

static void test_positions_and_errors(void **state)
{
	(void)state;
	struct scan_result r = scan_snippet(kb, "t.py",
		"import numpy as np\n"
		"s = 'é'; np.zeros(3)\n"        /* columns count code points */
		"def broken(:\n"
		"np.ones(\n"
		"    2)\n");
	const struct finding *f = finding_at(&r, 2, 0);
	assert_non_null(f);
	assert_int_equal(f->col, 10);
	assert_int_equal(f->end_col, 21);
	assert_int_not_equal(r.syntax_error_line, 0);
	scan_result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_import_forms),
		cmocka_unit_test(test_function_scopes),
		cmocka_unit_test(test_aliases_star_and_guards),
		cmocka_unit_test(test_fallbacks),
		cmocka_unit_test(test_values_and_methods),
		cmocka_unit_test(test_imports_and_unlisted),
		cmocka_unit_test(test_positions_and_errors),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
