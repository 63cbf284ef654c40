/* The flow model (scan/flow.h) and the project facts (scan/project.h),
 * called directly: each test runs the model over a snippet with the real
 * knowledge data and a pass that records the events, then asserts what the
 * model saw — which value reached a copy, a truth test, a clock, where (loop
 * depth, throttled, hot through a call) — in both directions: the pattern
 * that must be seen, and the one beside it that must not. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>

#include "python/pyparse.h"
#include "scan/flow.h"
#include "scan/nodes.h"
#include "scan/project.h"

const TSLanguage *tree_sitter_python(void);

struct rec {
	enum flow_ev kind;
	uint32_t line, depth, loop_line;
	bool throttled, async, hot_func, invariant, via;
	unsigned fam;
	uint32_t back_line;
	char what[80];
};

struct recorder {
	struct rec ev[256];
	size_t n;
};

static void record(struct flow *f, const struct flow_event *ev, void *ctx)
{
	struct recorder *r = ctx;
	if (r->n == 256)
		return;
	struct rec *x = &r->ev[r->n++];
	uint32_t cell;
	x->kind = ev->kind;
	x->line = flow_user_line(f, ev->at, &cell);
	x->depth = ev->place.depth;
	x->loop_line = ev->place.loop_line;
	x->throttled = ev->place.throttled;
	x->async = ev->async;
	x->hot_func = ev->place.hot_func;
	x->via = ev->place.via != NULL;
	x->invariant = ev->data_invariant;
	x->fam = ev->value.fam;
	x->back_line = ev->back_line;
	snprintf(x->what, sizeof x->what, "%s", ev->what ? ev->what : "");
}

static const struct flow_pass passes[] = {{"record", record}};

static struct kb *kb;
static struct nodeinfo ni;

static int setup(void **state)
{
	(void)state;
	char *why = NULL;
	kb = kb_load(&why);
	if (!kb) {
		fprintf(stderr, "kb: %s\n", why);
		return -1;
	}
	nodeinfo_init(&ni, tree_sitter_python());
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	kb_free(kb);
	nodeinfo_free(&ni);
	return 0;
}

/* Runs the model over code (as `path`, module `module`, with `project`),
 * recording events; fills sum when not NULL. */
static struct recorder *run_model(const char *path, const char *module, const struct project *project,
				  const char *code, struct flow_summary *sum)
{
	struct recorder *r = calloc(1, sizeof *r);
	struct source src;
	char *why = NULL;
	assert_true(source_from_python(path, code, strlen(code), &src, &why));
	struct pyparser *p = pyparser_new(tree_sitter_python());
	struct pt_tree t;
	pt_init(&t);
	assert_true(pyparse(p, src.text, (uint32_t)src.len, &t));
	struct flow_options o = {.kb = kb, .ni = &ni, .src = &src, .module = module, .project = project,
				 .passes = passes, .npasses = 1, .pass_ctx = r, .summary = sum};
	flow_run(&o, pn_root(&t));
	pt_free(&t);
	pyparser_free(p);
	source_free(&src);
	return r;
}

static struct recorder *model(const char *code)
{
	return run_model("t.py", "t", NULL, code, NULL);
}

/* The event of this kind at this line, or NULL. */
static const struct rec *at(const struct recorder *r, enum flow_ev kind, uint32_t line)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->ev[i].kind == kind && r->ev[i].line == line)
			return &r->ev[i];
	return NULL;
}

static size_t count(const struct recorder *r, enum flow_ev kind)
{
	size_t k = 0;
	for (size_t i = 0; i < r->n; i++)
		k += r->ev[i].kind == kind;
	return k;
}

/* ---- PyTorch values ---- */

static void test_torch_device_variable(void **state)
{
	(void)state;
	struct recorder *r = model(
		"import torch\n"
		"device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
		"def train(model, device, loader, criterion):\n"
		"    for x, y in loader:\n"
		"        x, y = x.to(device), y.to(device)\n"
		"        loss = criterion(model(x), y)\n"                 /* 6 */
		"        print(loss.item())\n"                              /* 7: found */
		"        n = x.size(0)\n"                                   /* 8: host metadata */
		"        acc = model(x).argmax(1).eq(y).sum().item()\n"    /* 9: found */
		"train(None, device, [], None)\n");
	const struct rec *e = at(r, FE_D2H, 7);
	assert_non_null(e);
	assert_int_equal(e->depth, 1);
	assert_int_equal(e->fam, FAM_TORCH);
	assert_non_null(at(r, FE_D2H, 9));
	assert_null(at(r, FE_D2H, 8));
	free(r);
}

/* torch.device() of a string the model cannot read (args.device) may be the
 * GPU, as a bare args.device is; torch.device("cpu"), or of a name bound to
 * "cpu", is the CPU. */
static void test_torch_device_of_unknown_string(void **state)
{
	(void)state;
	struct recorder *r = model(
		"import torch\n"
		"device = torch.device(args.device)\n"
		"cpu = torch.device('cpu')\n"
		"name = 'cpu'\n"
		"cpu2 = torch.device(name)\n"
		"for x in loader:\n"
		"    a = x.to(device)\n"
		"    print(a.sum().item())\n"              /* 8: found */
		"    b = x.to(cpu)\n"
		"    print(b.sum().item())\n"              /* 10: quiet */
		"    c = x.to(cpu2)\n"
		"    print(c.sum().item())\n");            /* 12: quiet */
	assert_non_null(at(r, FE_D2H, 8));
	assert_null(at(r, FE_D2H, 10));
	assert_null(at(r, FE_D2H, 12));
	free(r);
}

/* `x is not None` (one token to the parser) and `x is None` are identity
 * tests: no truth test of the device value; `if x:` is one. */
static void test_identity_is_no_truth_test(void **state)
{
	(void)state;
	struct recorder *r = model(
		"import torch\n"
		"x = torch.ones(3, device='cuda')\n"
		"for i in range(10):\n"
		"    if x is not None:\n"                   /* 4: quiet */
		"        pass\n"
		"    if x is None:\n"                       /* 6: quiet */
		"        pass\n"
		"    if x:\n"                               /* 8: found */
		"        pass\n");
	assert_null(at(r, FE_TRUTH, 4));
	assert_null(at(r, FE_TRUTH, 6));
	assert_non_null(at(r, FE_TRUTH, 8));
	free(r);
}

/* A retry loop (a count the body makes smaller, around a try that returns
 * on success or counted as retries) is cold, as is a loop over a name bound
 * only to a short hand-written list; a countdown of steps, or a list that
 * grows, is hot. */
static void test_retry_loops_and_named_lists(void **state)
{
	(void)state;
	struct recorder *r = model(
		"import torch\n"
		"w = torch.ones(8, device='cuda')\n"
		"def a(bs):\n"
		"    while bs:\n"
		"        try:\n"
		"            return w.sum().item()\n"          /* 6: cold */
		"        except RuntimeError:\n"
		"            pass\n"
		"        bs = decay(bs)\n"
		"def b(n):\n"
		"    retries = 2\n"
		"    while retries > 0:\n"
		"        retries -= 1\n"
		"        try:\n"
		"            print(w.sum().item())\n"          /* 15: cold */
		"        except RuntimeError:\n"
		"            pass\n"
		"    while n:\n"
		"        n -= 1\n"
		"        try:\n"
		"            print(w.sum().item())\n"          /* 21: hot */
		"        except RuntimeError:\n"
		"            pass\n"
		"    fns = (torch.sin, torch.cos)\n"
		"    for fn in fns:\n"
		"        print(w.sum().item())\n"              /* 26: cold */
		"    more = [torch.sin]\n"
		"    more.append(torch.cos)\n"
		"    for fn in more:\n"
		"        print(w.sum().item())\n");            /* 30: hot */
	const struct rec *e;
	assert_true((e = at(r, FE_D2H, 6)) && e->depth == 0);
	assert_true((e = at(r, FE_D2H, 15)) && e->depth == 0);
	assert_true((e = at(r, FE_D2H, 21)) && e->depth == 1);
	assert_true((e = at(r, FE_D2H, 26)) && e->depth == 0);
	assert_true((e = at(r, FE_D2H, 30)) && e->depth == 1);
	free(r);
}

/* A loop over a dict's entries (.items(), .values(), .keys()) or over the
 * types of a case (for iou_type in ...) is cold; the batch loop around one
 * stays hot. In a project, fvcore's counts (a kb library) are host values,
 * where a helper the scan did not see keeps device tensors on the device. */
static void test_dict_sweeps_and_library_counts(void **state)
{
	(void)state;
	struct recorder *r = model(
		"import torch\n"
		"w = torch.ones(8, device='cuda')\n"
		"for name, m in meters.items():\n"
		"    print(w.sum().item())\n"                  /* 4: cold */
		"for m in meters.values():\n"
		"    print(w.sum().item())\n"                  /* 6: cold */
		"for iou_type in iou_types:\n"
		"    print(w.sum().item())\n"                  /* 8: cold */
		"for batch in loader:\n"
		"    for k in losses.keys():\n"
		"        print(w.sum().item())\n");            /* 11: hot */
	const struct rec *e;
	assert_true((e = at(r, FE_D2H, 4)) && e->depth == 0);
	assert_true((e = at(r, FE_D2H, 6)) && e->depth == 0);
	assert_true((e = at(r, FE_D2H, 8)) && e->depth == 0);
	assert_true((e = at(r, FE_D2H, 11)) && e->depth == 1);
	free(r);
	struct project *p = project_new();
	project_finish(p);
	r = run_model("t.py", "t", p,
		      "import torch\n"
		      "from fvcore.nn import FlopCountAnalysis\n"
		      "from helpers import count\n"
		      "x = torch.ones(3, device='cuda')\n"
		      "for i in range(10):\n"
		      "    fca = FlopCountAnalysis(model, x)\n"
		      "    print(round(fca.total() / 1e9))\n"     /* 7: a host int */
		      "    print(round(count(model, x) / 1e9))\n", /* 8: a device tensor */
		      NULL);
	assert_null(at(r, FE_D2H, 7));
	assert_non_null(at(r, FE_D2H, 8));
	free(r);
	project_free(p);
}

/* A loop whose every iteration ends synchronized is taken to run at least
 * once: the copies queued before it are not pending at its exit (no clock
 * event after it); without the synchronize in the body they are. */
static void test_loop_that_always_synchronizes(void **state)
{
	(void)state;
	struct recorder *r = model(
		"import time\n"
		"import cupy as cp\n"
		"t0 = time.time()\n"
		"a = cp.ones(4096)\n"
		"for i in range(n):\n"
		"    a = a + 1\n"
		"    cp.cuda.Stream.null.synchronize()\n"
		"t1 = time.time()\n"                          /* 8: quiet */
		"t2 = time.time()\n"
		"b = cp.ones(4096)\n"
		"for i in range(n):\n"
		"    b = b + 1\n"
		"t3 = time.time()\n"                          /* 13: found */
		"print(t1 - t0, t3 - t2)\n");
	assert_null(at(r, FE_CLOCK, 8));
	assert_non_null(at(r, FE_CLOCK, 13));
	free(r);
}

static void test_torch_accelerator_and_names(void **state)
{
	(void)state;
	struct recorder *r = model(
		"import torch\n"
		"dev = torch.accelerator.current_accelerator()\n"
		"cpu = torch.device('cpu')\n"
		"for batch in range(100):\n"
		"    a = torch.ones(3).to(dev)\n"
		"    b = torch.ones(3).to(cpu)\n"
		"    c = torch.ones(3).cuda(0)\n"
		"    float(a)\n"           /* 8: found */
		"    float(b)\n"           /* 9: a CPU tensor */
		"    float(c)\n");         /* 10: found */
	assert_non_null(at(r, FE_D2H, 8));
	assert_null(at(r, FE_D2H, 9));
	assert_non_null(at(r, FE_D2H, 10));
	free(r);
}

static void test_invariant_host_to_device(void **state)
{
	(void)state;
	struct recorder *r = model(
		"import torch\n"
		"device = 'cuda'\n"
		"for data in loader:\n"
		"    x = data.to(device)\n"                  /* 4: changes every batch */
		"    ones = torch.ones(8, 1).to(device)\n"   /* 5: the same every step */
		"    noise = torch.randn(8, 1).to(device)\n"); /* 6: random, changes */
	const struct rec *a = at(r, FE_H2D, 4), *b = at(r, FE_H2D, 5), *c = at(r, FE_H2D, 6);
	assert_non_null(a);
	assert_false(a->invariant);
	assert_non_null(b);
	assert_true(b->invariant);
	assert_non_null(c);
	assert_false(c->invariant);
	free(r);
}

/* ---- values lost on the way, before ---- */

static void test_and_or_abs_formatting(void **state)
{
	(void)state;
	struct recorder *r = model(
		"import cupy as cp\n"
		"x = cp.ones(3)\n"
		"for i in range(100):\n"
		"    d = x.sum() - 1\n"
		"    if d > 0 and i > 2:\n"          /* 5: found (left of and) */
		"        pass\n"
		"    if abs(d) < 1e-3:\n"            /* 7: found (abs keeps it on the device) */
		"        pass\n"
		"    s = f'{d:.3f}'\n"               /* 9: found */
		"    t = '%f' % d\n"                 /* 10: found */
		"    u = 'step {}'.format(i)\n");    /* 11: a host int: not */
	assert_non_null(at(r, FE_TRUTH, 5));
	assert_non_null(at(r, FE_TRUTH, 7));
	assert_non_null(at(r, FE_D2H, 9));
	assert_non_null(at(r, FE_D2H, 10));
	assert_null(at(r, FE_D2H, 11));
	free(r);
}

static void test_tuples_and_two_functions(void **state)
{
	(void)state;
	struct recorder *r = model(
		"import cupy as cp\n"
		"import cupyx.scipy.sparse.linalg\n"
		"def step(x):\n"
		"    return x.sum(), 3\n"
		"real = True\n"
		"dot = cp.dot if real else cp.vdot\n"
		"x = cp.ones(3)\n"
		"for i in range(100):\n"
		"    s, k = step(x)\n"
		"    float(s)\n"                  /* 10: found: a tuple element */
		"    float(k)\n"                  /* 11: a host int */
		"    float(dot(x, x))\n"          /* 12: found: one of two library functions */
		"    y = cupyx.scipy.sparse.linalg.norm(x)\n"
		"    float(y)\n");                /* 14: found: cupyx.scipy returns device data */
	assert_non_null(at(r, FE_D2H, 10));
	assert_null(at(r, FE_D2H, 11));
	assert_non_null(at(r, FE_D2H, 12));
	assert_non_null(at(r, FE_D2H, 14));
	free(r);
}

static void test_numba_copies(void **state)
{
	(void)state;
	struct recorder *r = model(
		"import numpy as np\n"
		"from numba import cuda\n"
		"d = cuda.to_device(np.ones(3))\n"
		"for i in range(100):\n"
		"    h = d.copy_to_host()\n"       /* 5: found */
		"    g = d.to_host()\n"            /* 6: found */
		"    e = cuda.as_cuda_array(d)\n");/* 7: zero-copy: no transfer */
	assert_non_null(at(r, FE_D2H, 5));
	assert_non_null(at(r, FE_D2H, 6));
	assert_null(at(r, FE_H2D, 7));
	assert_int_equal(count(r, FE_H2D), 1); /* the to_device at line 3 */
	free(r);
}

/* ---- array modules ---- */

static void test_array_module_alias(void **state)
{
	(void)state;
	struct recorder *r = model(
		"import numpy as np\n"
		"import cupy\n"
		"def solve(a, b):\n"
		"    xp = cupy.get_array_module(a)\n"
		"    for i in range(100):\n"
		"        if xp.vdot(a, b).item() < 1:\n"  /* 6: found, for the GPU call only */
		"            break\n"
		"    return xp.zeros(3)\n"
		"x_cpu = solve(np.ones(3), np.ones(3))\n"
		"x_gpu = solve(cupy.ones(3), cupy.ones(3))\n"
		"print(np.linalg.norm(x_cpu))\n"           /* 11: a host array: not a CPU call on device data */
		"use_gpu = True\n"
		"xq = cupy if use_gpu else np\n"
		"for i in range(100):\n"
		"    float(xq.ones(3).sum())\n"            /* 15: found: code written for both runs on the GPU */
		"    if xq is cupy:\n"                      /* 16: comparing modules is no copy */
		"        pass\n");
	const struct rec *e = at(r, FE_D2H, 6);
	assert_non_null(e);
	assert_true(e->depth == 1);
	assert_null(at(r, FE_CPU_CALL, 11));
	assert_non_null(at(r, FE_D2H, 15));
	assert_null(at(r, FE_TRUTH, 16));
	free(r);
}

/* ---- false alarms of the old scanner ---- */

static void test_order_and_host_values(void **state)
{
	(void)state;
	struct recorder *r = model(
		"import numpy as np\n"
		"import cupy as cp\n"
		"x = cp.ones(3)\n"
		"for i in range(100):\n"
		"    rho = x.sum().item()\n"      /* 5: found */
		"    if abs(rho) < 1e-3:\n"       /* 6: rho is a host float now */
		"        break\n"
		"x = np.zeros(3)\n"
		"for i in range(100):\n"
		"    float(x)\n"                  /* 10: reassigned to a host array */
		"    h = cp.asarray(cp.ones(3))\n"); /* 11: already on the device: no transfer */
	assert_non_null(at(r, FE_D2H, 5));
	assert_null(at(r, FE_TRUTH, 6));
	assert_null(at(r, FE_D2H, 10));
	assert_null(at(r, FE_H2D, 11));
	free(r);
}

static void test_numpy_dispatch_keeps_device_values(void **state)
{
	(void)state;
	struct recorder *r = model(
		"import numpy as np\n"
		"import cupy as cp\n"
		"x = cp.ones(3)\n"
		"for i in range(100):\n"
		"    s = np.sqrt(x)\n"            /* 5: a CPU call on device data (the rule decides) */
		"    float(np.sum(s))\n");        /* 6: found: NumPy handed it to CuPy, the result is on the GPU */
	assert_non_null(at(r, FE_CPU_CALL, 5));
	assert_non_null(at(r, FE_D2H, 6));
	free(r);
}

/* ---- cold and throttled places ---- */

static void test_cold_and_throttled(void **state)
{
	(void)state;
	struct recorder *r = model(
		"import cupy as cp\n"
		"x = cp.ones(3)\n"
		"for epoch in range(100):\n"
		"    float(x)\n"                          /* 4: once per epoch: depth 0 */
		"    for i in range(1000):\n"
		"        if i % 10 == 0:\n"
		"            float(x)\n"                  /* 7: throttled */
		"        if verbose:\n"
		"            print(x)\n"                  /* 9: throttled */
		"        float(x)\n"                      /* 10: hot */
		"for i in range(0, 1000, check_every):\n"
		"    float(x)\n"                          /* 12: once per check */
		"for gpu_id in range(n):\n"
		"    with cp.cuda.Device(gpu_id):\n"
		"        y = cp.asarray(h)\n"             /* 15: one copy per device */
		"for j in range(3):\n"
		"    float(x)\n"                          /* 17: a handful of iterations */
		"for shape in shapes:\n"
		"    float(x)\n"                          /* 19: once per problem shape */
		"for row in rows:\n"
		"    float(x)\n");                        /* 21: hot */
	assert_int_equal(at(r, FE_D2H, 4)->depth, 0);
	assert_true(at(r, FE_D2H, 7)->throttled);
	assert_true(at(r, FE_D2H, 9)->throttled);
	const struct rec *hot = at(r, FE_D2H, 10);
	assert_int_equal(hot->depth, 1);
	assert_false(hot->throttled);
	assert_int_equal(hot->loop_line, 5);
	assert_int_equal(at(r, FE_D2H, 12)->depth, 0);
	assert_int_equal(at(r, FE_H2D, 15)->depth, 0);
	assert_int_equal(at(r, FE_D2H, 17)->depth, 0);
	assert_int_equal(at(r, FE_D2H, 19)->depth, 0);
	assert_int_equal(at(r, FE_D2H, 21)->depth, 1);
	free(r);
}

static void test_async_copies(void **state)
{
	(void)state;
	struct recorder *r = model(
		"import cupy as cp\n"
		"x = cp.ones(3)\n"
		"s = cp.cuda.Stream()\n"
		"for k in range(100):\n"
		"    h = cp.asnumpy(x, blocking=False)\n"  /* 5: async */
		"    x.get(out=pinned)\n"                  /* 6: async, into pinned memory */
		"    with s:\n"
		"        x.get()\n"                        /* 8: queued on a stream */
		"    x.get()\n");                          /* 9: blocking */
	assert_true(at(r, FE_D2H, 5)->async);
	assert_true(at(r, FE_D2H, 6)->async);
	assert_true(at(r, FE_D2H, 8)->async);
	assert_false(at(r, FE_D2H, 9)->async);
	free(r);
}

/* ---- the flow itself: loops and branches ---- */

static void test_loop_fixed_point_and_branches(void **state)
{
	(void)state;
	struct recorder *r = model(
		"import numpy as np\n"
		"import cupy as cp\n"
		"h = np.ones(3)\n"
		"x = h\n"
		"for i in range(100):\n"
		"    float(x)\n"                     /* 6: found: x is on the device from the 2nd iteration */
		"    x = cp.asarray(h)\n"
		"if flag:\n"
		"    y = cp.ones(3)\n"
		"else:\n"
		"    y = np.ones(3)\n"
		"for i in range(100):\n"
		"    float(y)\n"                     /* 13: found: may be on the device */
		"z = cp.ones(3)\n"
		"if backend_is_gpu:\n"
		"    z = z.get()\n"                  /* brought home on the only path that had it */
		"for i in range(100):\n"
		"    float(z)\n"                     /* 18: host */
		"state = cp.zeros(3)\n"
		"for i in range(100):\n"
		"    hs = cp.asnumpy(state)\n"
		"    state = cp.asarray(hs)\n");     /* 22: there and back */
	assert_non_null(at(r, FE_D2H, 6));
	assert_non_null(at(r, FE_D2H, 13));
	assert_null(at(r, FE_D2H, 18));
	const struct rec *b = at(r, FE_H2D, 22);
	assert_non_null(b);
	assert_int_equal(b->back_line, 21);
	free(r);
}

/* ---- timing ---- */

static void test_clock_reads(void **state)
{
	(void)state;
	struct recorder *r = model(
		"import time\n"
		"import cupy as cp\n"
		"import torch\n"
		"a = cp.ones(3)\n"
		"def wait():\n"
		"    torch.cuda.synchronize()\n"
		"t0 = time.perf_counter()\n"
		"b = a @ a\n"
		"t1 = time.perf_counter()\n"          /* 9: found */
		"b = a @ a\n"
		"s = b.sum().item()\n"
		"t2 = time.perf_counter()\n"          /* 12: the .item() waited */
		"b = a @ a\n"
		"wait()\n"
		"t3 = time.perf_counter()\n"          /* 15: a helper synchronized */
		"b = a @ a\n"
		"st = cp.cuda.Stream()\n"
		"with st.auto_synchronize():\n"
		"    c = a @ a\n"
		"t4 = time.perf_counter()\n"          /* 20: the with synchronized on exit */
		"c = a @ a\n"
		"t5 = time.perf_counter()\n"          /* 22: found: the sync comes after the clock */
		"c.get()\n"
		"def todo(x):\n"
		"    \"\"\"Write the GPU version.\"\"\"\n"
		"    raise NotImplementedError\n"
		"c = a @ a\n"
		"todo(c)\n"
		"t6 = time.perf_counter()\n");       /* 29: a stub may do anything: quiet */
	assert_non_null(at(r, FE_CLOCK, 9));
	assert_null(at(r, FE_CLOCK, 12));
	assert_null(at(r, FE_CLOCK, 15));
	assert_null(at(r, FE_CLOCK, 20));
	assert_non_null(at(r, FE_CLOCK, 22));
	assert_null(at(r, FE_CLOCK, 29));
	free(r);
}

/* A start read (t0 = clock(), only ever subtracted: clock() - t0) is not
 * reported, whatever was queued before it; an end read is, also when it is
 * stored first (t1 = clock(); dt = t1 - t0). */
static void test_start_reads(void **state)
{
	(void)state;
	struct recorder *r = model(
		"import time\n"
		"import cupy as cp\n"
		"for case in ('cpu', 'gpu'):\n"
		"    a = cp.ones(1000) * 2\n"
		"    tstart = time.time()\n"                 /* 5: a start read: quiet */
		"    b = a @ a\n"
		"    dur = time.time() - tstart\n"           /* 7: an end read: found */
		"    a = cp.ones(1000) * 2\n"
		"    t0 = time.time()\n"
		"    b = a @ a\n"
		"    t1 = time.time()\n"                     /* 11: subtracted from: found */
		"    print(t1 - t0)\n"
		"    float(b)\n");
	assert_null(at(r, FE_CLOCK, 5));
	assert_non_null(at(r, FE_CLOCK, 7));
	assert_non_null(at(r, FE_CLOCK, 11));
	free(r);
}

/* A clock read under one name that becomes the next interval's start under
 * another (time_now = time.time(); ...; start = time_now) is a start read;
 * one that is also subtracted from is an end read. */
static void test_start_read_through_an_alias(void **state)
{
	(void)state;
	struct recorder *r = model(
		"import time\n"
		"import cupy as cp\n"
		"start = time.time()\n"
		"for i in range(10):\n"
		"    a = cp.ones(1000) * 2\n"
		"    now = time.time()\n"                   /* 6: a start read: quiet */
		"    start = now\n"
		"    b = cp.ones(1000) * 2\n"
		"    t_end = time.time()\n"                 /* 9: subtracted from: found */
		"    print(t_end - start)\n"
		"    float(b)\n");
	assert_null(at(r, FE_CLOCK, 6));
	assert_non_null(at(r, FE_CLOCK, 9));
	free(r);
}

/* Boolean-mask indexing of a CuPy array (x[x > 0], x[x > 0] = v) counts the
 * mask on the host (a synchronize: per iteration of a loop, a copy); an
 * integer index, or a torch tensor (no such fact), is not. */
static void test_mask_indexing(void **state)
{
	(void)state;
	struct recorder *r = model(
		"import cupy as cp\n"
		"import torch\n"
		"x = cp.ones(1000)\n"
		"idx = cp.arange(10)\n"
		"t = torch.ones(1000, device='cuda')\n"
		"for i in range(100):\n"
		"    x[(x > 0.5) & (x < 2)] = 0\n"           /* 7: found */
		"    y = x[~(x > 0)]\n"                      /* 8: found */
		"    x[idx] = 1\n"                            /* 9: an integer index: quiet */
		"    z = x[idx]\n"                            /* 10: quiet */
		"    t[t > 0] = 0\n");                        /* 11: torch: quiet */
	assert_non_null(at(r, FE_D2H, 7));
	assert_non_null(at(r, FE_D2H, 8));
	assert_null(at(r, FE_D2H, 9));
	assert_null(at(r, FE_D2H, 10));
	assert_null(at(r, FE_D2H, 11));
	free(r);
}

/* A comparison of device values makes a mask: through a name, with ~ and &,
 * among several indices (x[:, idx]), CuPy's mask indexing counts it on the
 * host; an integer index array, a host mask, a torch mask do not. */
static void test_mask_indexing_by_name(void **state)
{
	(void)state;
	struct recorder *r = model(
		"import cupy as cp\n"
		"import numpy as np\n"
		"import torch\n"
		"x = cp.ones((2, 1000))\n"
		"v = cp.ones(1000)\n"
		"order = cp.arange(10)\n"
		"h = np.ones(1000)\n"
		"t = torch.ones(1000, device='cuda')\n"
		"for i in range(100):\n"
		"    idx = abs(v) <= 0.5\n"
		"    y = v[idx]\n"                          /* 11: found */
		"    idx = ~idx\n"
		"    x[:, idx] = 0\n"                       /* 13: found */
		"    m = idx & (v > 1)\n"
		"    v[m] = 1\n"                            /* 15: found */
		"    z = v[order]\n"                        /* 16: quiet */
		"    hm = h > 0\n"
		"    h[hm] = 0\n"                           /* 18: quiet */
		"    tm = t > 0\n"
		"    t[tm] = 0\n"                           /* 20: quiet */
		"    p = x.T[~cp.isnan(x.T).any(axis=1)]\n" /* 21: found (the kb's mask functions) */
		"    q = x.T[cp.isnan(x.T).sum(axis=1)]\n"  /* 22: a count: quiet */
		"    n = cp.isnan(v)\n"
		"    v[n] = 0\n");                           /* 24: found */
	assert_non_null(at(r, FE_D2H, 11));
	assert_non_null(at(r, FE_D2H, 13));
	assert_non_null(at(r, FE_D2H, 15));
	assert_null(at(r, FE_D2H, 16));
	assert_null(at(r, FE_D2H, 18));
	assert_null(at(r, FE_D2H, 20));
	assert_non_null(at(r, FE_D2H, 21));
	assert_null(at(r, FE_D2H, 22));
	assert_non_null(at(r, FE_D2H, 24));
	free(r);
}

/* Old PyTorch code: the typed CUDA tensors (torch.cuda.FloatTensor), chosen
 * by a conditional, make device data; host data given to them is copied. */
static void test_legacy_cuda_tensor_types(void **state)
{
	(void)state;
	struct recorder *r = model(
		"import numpy as np\n"
		"import torch\n"
		"cuda = torch.cuda.is_available()\n"
		"Tensor = torch.FloatTensor if not cuda else torch.cuda.FloatTensor\n"
		"for i, (imgs, _) in enumerate(loader):\n"
		"    valid = Tensor(imgs.size(0), 1).fill_(1.0)\n"        /* 6: made on the device */
		"    ones = Tensor(np.ones((imgs.size(0), 1)))\n"         /* 7: the same ones, copied */
		"    z = Tensor(np.random.normal(0, 1, (4, 8)))\n"        /* 8: new noise */
		"    print(valid.sum().item())\n"                         /* 9: found */
		"h = torch.FloatTensor(3, 4)\n"
		"for i in range(100):\n"
		"    print(h.sum().item())\n");                           /* 12: a CPU tensor: quiet */
	assert_null(at(r, FE_H2D, 6));
	const struct rec *a = at(r, FE_H2D, 7), *b = at(r, FE_H2D, 8);
	assert_non_null(a);
	assert_true(a->invariant);
	assert_non_null(b);
	assert_false(b->invariant);
	assert_non_null(at(r, FE_D2H, 9));
	assert_null(at(r, FE_D2H, 12));
	free(r);
}

/* x.type(T) with a CUDA tensor type (picked by a flag, named, or a string)
 * puts the data on the device; with a CPU type it stays on the host. */
static void test_type_conversions(void **state)
{
	(void)state;
	struct recorder *r = model(
		"import torch\n"
		"cuda = torch.cuda.is_available()\n"
		"Tensor = torch.cuda.FloatTensor if cuda else torch.Tensor\n"
		"for i, batch in enumerate(loader):\n"
		"    a = batch['A'].type(Tensor)\n"                     /* 5: a copy to the device */
		"    print(a.mean().item())\n"                          /* 6: found */
		"    b = batch['B'].type('torch.cuda.LongTensor')\n"
		"    print(b.sum().item())\n"                           /* 8: found */
		"    c = batch['C'].type(torch.FloatTensor)\n"          /* 9: a CPU type */
		"    print(c.sum().item())\n");                         /* 10: quiet */
	assert_non_null(at(r, FE_H2D, 5));
	assert_non_null(at(r, FE_D2H, 6));
	assert_non_null(at(r, FE_D2H, 8));
	assert_null(at(r, FE_H2D, 9));
	assert_null(at(r, FE_D2H, 10));
	free(r);
}

/* self.conv(x) in a module's forward calls the layer the instance holds:
 * device tensors in, device tensors out, through a returned tuple. */
static void test_self_attribute_calls(void **state)
{
	(void)state;
	struct recorder *r = model(
		"import torch\n"
		"import torch.nn as nn\n"
		"class D(nn.Module):\n"
		"    def __init__(self):\n"
		"        super().__init__()\n"
		"        self.conv = nn.Sequential(nn.Linear(4, 4))\n"
		"        self.adv = nn.Linear(4, 1)\n"
		"    def forward(self, x):\n"
		"        out = self.conv(x)\n"
		"        return self.adv(out), out\n"
		"d = D()\n"
		"for x in loader:\n"
		"    p, aux = d(x.cuda())\n"
		"    acc = aux.data.cpu().numpy()\n"                    /* 14: found */
		"    q, haux = d(x)\n"
		"    acc = haux.data.cpu().numpy()\n");                 /* 16: host data: quiet */
	assert_non_null(at(r, FE_D2H, 14));
	assert_null(at(r, FE_D2H, 16));
	free(r);
}

/* A module that keeps its device in self.device and an LSTM: the outputs of
 * layers called on device tensors are device tensors, through nested tuple
 * targets (out, (h, c) = self.lstm(x, h)); the same module on a CPU device
 * gives host tensors. */
static void test_module_device_and_lstm_tuples(void **state)
{
	(void)state;
	struct recorder *r = model(
		"import torch\n"
		"import torch.nn as nn\n"
		"class RNN(nn.Module):\n"
		"    def __init__(self, dev):\n"
		"        super().__init__()\n"
		"        self.device = torch.device(dev)\n"
		"        self.lstm = nn.LSTM(8, 8)\n"
		"    def forward(self, x, h):\n"
		"        out, (h, c) = self.lstm(x.to(self.device), h)\n"
		"        return out, (h, c)\n"
		"gpu = RNN('cuda')\n"
		"for i in range(1000):\n"
		"    output, (h, c) = gpu(inp, None)\n"
		"    w = torch.multinomial(output.exp(), 1).item()\n"   /* 14: found */
		"    hv = c.sum().item()\n");                           /* 15: found */
	assert_non_null(at(r, FE_D2H, 14));
	assert_non_null(at(r, FE_D2H, 15));
	free(r);
	r = model(
		"import torch\n"
		"import torch.nn as nn\n"
		"class RNN(nn.Module):\n"
		"    def __init__(self, dev):\n"
		"        super().__init__()\n"
		"        self.device = torch.device(dev)\n"
		"        self.lstm = nn.LSTM(8, 8)\n"
		"    def forward(self, x, h):\n"
		"        out, (h, c) = self.lstm(x.to(self.device), h)\n"
		"        return out, (h, c)\n"
		"cpu = RNN('cpu')\n"
		"for i in range(1000):\n"
		"    output, (h, c) = cpu(inp, None)\n"
		"    w = torch.multinomial(output.exp(), 1).item()\n"   /* 14: a CPU device: quiet */
		"    hv = c.sum().item()\n");                           /* 15: quiet */
	assert_null(at(r, FE_D2H, 14));
	assert_null(at(r, FE_D2H, 15));
	free(r);
}

/* self.device read through a @property runs it (next(self.net.parameters())
 * .device, or a CPU device); map(lambda t: t.item(), ...) runs the lambda on
 * each element; zip of device values and tqdm(x) keep the elements. */
static void test_properties_map_and_zip(void **state)
{
	(void)state;
	struct recorder *r = model(
		"import torch\n"
		"from tqdm import tqdm\n"
		"class S(torch.nn.Module):\n"
		"    @property\n"
		"    def device(self):\n"
		"        return next(self.net.parameters()).device\n"
		"    @property\n"
		"    def host(self):\n"
		"        return torch.device('cpu')\n"
		"    def sample(self, n):\n"
		"        sigmas = torch.arange(n, device=self.device) ** 7\n"
		"        for i in tqdm(range(n - 1)):\n"
		"            d = sigmas[i].item()\n"                            /* 13: found */
		"        pairs = list(zip(sigmas[:-1], sigmas[1:]))\n"
		"        for s, t in tqdm(pairs):\n"
		"            s, t = map(lambda x: x.item(), (s, t))\n"         /* 16: found */
		"        cpu = torch.arange(n, device=self.host) ** 7\n"
		"        for i in range(n - 1):\n"
		"            d = cpu[i].item()\n"                               /* 19: a CPU tensor: quiet */
		"        hp = list(zip(cpu[:-1], cpu[1:]))\n"
		"        for s, t in tqdm(hp):\n"
		"            s, t = map(lambda x: x.item(), (s, t))\n");       /* 22: quiet */
	assert_non_null(at(r, FE_D2H, 13));
	assert_non_null(at(r, FE_D2H, 16));
	assert_null(at(r, FE_D2H, 19));
	assert_null(at(r, FE_D2H, 22));
	free(r);
}

/* accelerate's Accelerator (a kb type): its .device is a device that may be
 * the GPU, whatever the name it is given; prepare(x) moves tensors there.
 * Another object's .device, under a name that does not say so, is not. */
static void test_accelerator_device(void **state)
{
	(void)state;
	struct recorder *r = model(
		"import torch\n"
		"from accelerate import Accelerator\n"
		"accelerator = Accelerator()\n"
		"d = accelerator.device\n"
		"w = accelerator.prepare(torch.ones(3))\n"
		"o = Other()\n"
		"e = o.device\n"
		"for batch in loader:\n"
		"    x = batch.to(d)\n"
		"    print(x.sum().item())\n"               /* 10: found */
		"    print(w.sum().item())\n"               /* 11: found */
		"    y = batch.to(e)\n"
		"    print(y.sum().item())\n"               /* 13: quiet */
		"    print(torch.ones(3).sum().item())\n"); /* 14: quiet */
	assert_non_null(at(r, FE_D2H, 10));
	assert_non_null(at(r, FE_D2H, 11));
	assert_null(at(r, FE_D2H, 13));
	assert_null(at(r, FE_D2H, 14));
	free(r);
}

/* A @cuda.jit kernel given a NumPy array copies it back after the launch
 * (a synchronize); map(float, x) of a device array copies too. */
static void test_kernel_host_args_and_map(void **state)
{
	(void)state;
	struct recorder *r = model(
		"import time\n"
		"import numpy as np\n"
		"import cupy as cp\n"
		"from numba import cuda\n"
		"@cuda.jit\n"
		"def k(a):\n"
		"    a[0] = 1\n"
		"h = np.zeros(8)\n"
		"d = cuda.to_device(h)\n"
		"t0 = time.time()\n"
		"k[1, 1](h)\n"
		"t1 = time.time()\n"                 /* 12: the host array came back: quiet */
		"k[1, 1](d)\n"
		"t2 = time.time()\n"                 /* 14: a device array: found */
		"x = cp.ones(3)\n"
		"lo, hi = map(float, cp.percentile(x, [1, 99]))\n"   /* 16: a copy */
		"t3 = time.time()\n"                 /* 17: it waited: quiet */
		"y = x * 2\n"
		"names = list(map(str, ['a', 'b']))\n"
		"t4 = time.time()\n");               /* 20: found */
	assert_null(at(r, FE_CLOCK, 12));
	assert_non_null(at(r, FE_CLOCK, 14));
	assert_non_null(at(r, FE_D2H, 16));
	assert_null(at(r, FE_CLOCK, 17));
	assert_non_null(at(r, FE_CLOCK, 20));
	free(r);
}

/* A loop over a hand-written list of up to 8 functions is a sweep over
 * cases; a list of 5 numbers is data. */
static void test_cold_literal_lists(void **state)
{
	(void)state;
	struct recorder *r = model(
		"import cupy as cp\n"
		"x = cp.ones(3)\n"
		"for func in [cp.sin, cp.cos, cp.tan, cp.exp, cp.log]:\n"
		"    print(float(func(x).sum()))\n"          /* 4: one per case: cold */
		"for n in [256, 512, 1024, 2048, 4096]:\n"
		"    print(float(cp.ones(n).sum()))\n");     /* 6: hot */
	const struct rec *a = at(r, FE_D2H, 4), *b = at(r, FE_D2H, 6);
	assert_non_null(a);
	assert_int_equal(a->depth, 0);
	assert_non_null(b);
	assert_int_equal(b->depth, 1);
	free(r);
}

/* ---- functions, summaries and the project ---- */

static void test_hot_through_calls(void **state)
{
	(void)state;
	struct recorder *r = model(
		"import cupy as cp\n"
		"def helper(x):\n"
		"    return float(x.sum())\n"        /* 3: hot through the loop's call */
		"def once(x):\n"
		"    return float(x.sum())\n"        /* 5: called once */
		"x = cp.ones(3)\n"
		"for i in range(100):\n"
		"    helper(x)\n"
		"once(x)\n");
	const struct rec *h = at(r, FE_D2H, 3);
	assert_non_null(h);
	assert_true(h->hot_func);
	assert_int_equal(h->loop_line, 7);
	const struct rec *o = at(r, FE_D2H, 5);
	assert_non_null(o);
	assert_false(o->hot_func);
	assert_int_equal(o->depth, 0);
	free(r);
}

static void test_methods_and_overrides(void **state)
{
	(void)state;
	struct recorder *r = model(
		"import cupy as cp\n"
		"class Alg:\n"
		"    def update(self):\n"
		"        self._update()\n"
		"class CG(Alg):\n"
		"    def __init__(self, x):\n"
		"        self.x = x\n"
		"    def _update(self):\n"
		"        float(self.x.sum())\n"      /* 9: found: CG._update runs per iteration */
		"cg = CG(cp.ones(3))\n"
		"for i in range(100):\n"
		"    cg.update()\n");
	const struct rec *e = at(r, FE_D2H, 9);
	assert_non_null(e);
	assert_true(e->hot_func);
	free(r);
}

static void test_summary_and_project(void **state)
{
	(void)state;
	struct flow_summary sa = {0}, sb = {0};
	struct recorder *a = run_model("pkg/driver.py", "pkg.driver", NULL,
				       "from pkg import helpers\n"
				       "import cupy as cp\n"
				       "x = cp.ones(3)\n"
				       "for chunk in range(100):\n"
				       "    helpers.process(x)\n", &sa);
	struct recorder *b = run_model("pkg/helpers.py", "pkg.helpers", NULL,
				       "import cupy as cp\n"
				       "def process(x):\n"
				       "    return _pad(x), 1\n"
				       "def _pad(x):\n"
				       "    return int(cp.ceil(x.shape[0] / 32))\n", &sb);
	/* the driver's summary: the call, in the loop at line 4, with a device array */
	bool seen = false;
	for (size_t i = 0; i < sa.ncalls; i++)
		if (!strcmp(sa.calls[i].callee, "pkg.helpers.process")) {
			seen = true;
			assert_int_equal(sa.calls[i].loop_line, 4);
			assert_true(val_on_device(&sa.calls[i].args[0]));
		}
	assert_true(seen);
	struct project *p = project_new();
	project_add(p, "pkg/driver.py", "pkg.driver", &sa);
	project_add(p, "pkg/helpers.py", "pkg.helpers", &sb);
	project_finish(p);
	const struct project_func *pf = project_func(p, "pkg.helpers.process");
	assert_non_null(pf);
	assert_true(pf->hot);
	assert_int_equal(pf->hot_line, 4);
	assert_string_equal(pf->hot_path, "pkg/driver.py");
	const struct project_func *pad = project_func(p, "pkg.helpers._pad");
	assert_non_null(pad);
	assert_true(pad->hot); /* through process, in its own module */
	/* helpers again, inside the project: the copy in _pad runs from the driver's loop */
	struct recorder *c = run_model("pkg/helpers.py", "pkg.helpers", p,
				       "import cupy as cp\n"
				       "def process(x):\n"
				       "    return _pad(x), 1\n"
				       "def _pad(x):\n"
				       "    return int(cp.ceil(x.shape[0] / 32))\n", NULL);
	const struct rec *e = at(c, FE_D2H, 5);
	assert_non_null(e);
	assert_true(e->hot_func);
	assert_true(e->via);
	assert_int_equal(e->loop_line, 4);
	/* and alone, without the project, nothing makes it hot */
	const struct rec *alone = at(b, FE_D2H, 5);
	assert_non_null(alone);
	assert_false(alone->hot_func);
	project_free(p);
	flow_summary_free(&sa);
	flow_summary_free(&sb);
	free(a);
	free(b);
	free(c);
}

static void test_module_names(void **state)
{
	(void)state;
	char *m = project_module_name("./src/tomocupy/processing/retrieve_phase.py");
	assert_string_equal(m, "src.tomocupy.processing.retrieve_phase");
	free(m);
	m = project_module_name("pkg/__init__.py");
	assert_string_equal(m, "pkg");
	free(m);
	m = project_module_name("notebooks/run 1.ipynb");
	assert_string_equal(m, "notebooks.run 1");
	free(m);
}

static void test_candidates(void **state)
{
	(void)state;
	const char *yes[] = {"import cupy as cp\n", "from torch import nn\n", "xp = backend.get_array_module(x)\n",
			     "y = device.xp.zeros(3)\n", "from numba import cuda\n", "import os, cupy\n",
			     "try:\n    from cupyx.scipy import signal\nexcept ImportError:\n    pass\n",
			     "import numba\nk = numba.cuda.jit(f)\n", "import jax.numpy as jnp", "x = 1\nimport torch"};
	const char *no[] = {"import numpy as np\n", "import cupyx_like\n", "t = node.xpath('a')\n", "# torches\n",
			    "\"\"\"\n>>> import torch\n\"\"\"\n", "import torchvision\n", "import numba\n",
			    "from mylib import cupy_helpers\n", "reimport cupy\n"};
	for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
		assert_true(pyscan_gpu_candidate(yes[i], strlen(yes[i])));
	for (size_t i = 0; i < sizeof no / sizeof *no; i++)
		assert_false(pyscan_gpu_candidate(no[i], strlen(no[i])));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_torch_device_variable),
		cmocka_unit_test(test_torch_accelerator_and_names),
		cmocka_unit_test(test_torch_device_of_unknown_string),
		cmocka_unit_test(test_identity_is_no_truth_test),
		cmocka_unit_test(test_retry_loops_and_named_lists),
		cmocka_unit_test(test_dict_sweeps_and_library_counts),
		cmocka_unit_test(test_loop_that_always_synchronizes),
		cmocka_unit_test(test_invariant_host_to_device),
		cmocka_unit_test(test_and_or_abs_formatting),
		cmocka_unit_test(test_tuples_and_two_functions),
		cmocka_unit_test(test_numba_copies),
		cmocka_unit_test(test_array_module_alias),
		cmocka_unit_test(test_order_and_host_values),
		cmocka_unit_test(test_numpy_dispatch_keeps_device_values),
		cmocka_unit_test(test_cold_and_throttled),
		cmocka_unit_test(test_async_copies),
		cmocka_unit_test(test_loop_fixed_point_and_branches),
		cmocka_unit_test(test_clock_reads),
		cmocka_unit_test(test_start_reads),
		cmocka_unit_test(test_start_read_through_an_alias),
		cmocka_unit_test(test_mask_indexing),
		cmocka_unit_test(test_mask_indexing_by_name),
		cmocka_unit_test(test_legacy_cuda_tensor_types),
		cmocka_unit_test(test_type_conversions),
		cmocka_unit_test(test_self_attribute_calls),
		cmocka_unit_test(test_module_device_and_lstm_tuples),
		cmocka_unit_test(test_properties_map_and_zip),
		cmocka_unit_test(test_accelerator_device),
		cmocka_unit_test(test_kernel_host_args_and_map),
		cmocka_unit_test(test_cold_literal_lists),
		cmocka_unit_test(test_hot_through_calls),
		cmocka_unit_test(test_methods_and_overrides),
		cmocka_unit_test(test_summary_and_project),
		cmocka_unit_test(test_module_names),
		cmocka_unit_test(test_candidates),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
