/* init: `gpuopt try --init SCRIPT` — a commented starter contract from what
 * the scan finds in the script: the baseline, the outputs the script
 * appears to write (string literals given to np.save, savez, to_csv,
 * to_parquet, savetxt, ...), the accelerator modes that apply, and where a
 * hand-written GPU candidate would go. Written whole, never over an
 * existing file unless asked. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/data.h"
#include "core/fileio.h"
#include "core/shellsplit.h"
#include "scan/kb.h"
#include "scan/scan.h"
#include "try.h"

struct init_scan {
	struct ptrvec targets; /* char *, distinct, in order */
	size_t findings;
};

static void init_path_error(void *ctx, const char *path, const char *message)
{
	(void)ctx;
	(void)path;
	(void)message;
}

static void init_file(void *ctx, const struct scan_file *sf)
{
	struct init_scan *is = ctx;
	if (!sf->ok)
		return;
	for (size_t i = 0; i < sf->res.n; i++) {
		const char *t = sf->res.items[i].target;
		is->findings++;
		if (!t)
			continue;
		bool seen = false;
		for (size_t k = 0; k < is->targets.len; k++)
			seen |= strcmp(is->targets.items[k], t) == 0;
		if (!seen)
			ptrvec_push(&is->targets, xstrdup(t));
	}
}

/* String literals passed first to a writer call: np.save("x.npy", ...). */
static void guess_outputs(const char *text, struct ptrvec *out)
{
	static const char *const writers[] = {"save(", "savez(", "savez_compressed(", "savetxt(", "to_csv(",
					      "to_parquet(", "to_json(", "tofile(", "write_csv(", NULL};
	for (size_t w = 0; writers[w]; w++) {
		for (const char *p = strstr(text, writers[w]); p; p = strstr(p + 1, writers[w])) {
			const char *q = p + strlen(writers[w]);
			while (*q == ' ')
				q++;
			if (*q == 'f' && (q[1] == '"' || q[1] == '\''))
				continue; /* an f-string: not a fixed name */
			if (*q != '"' && *q != '\'')
				continue;
			char quote = *q++;
			const char *e = strchr(q, quote);
			if (!e || e == q || e - q > 200 || memchr(q, '\n', (size_t)(e - q)) || *q == '/')
				continue;
			char *name = xstrndup(q, (size_t)(e - q));
			bool seen = false;
			for (size_t k = 0; k < out->len; k++)
				seen |= strcmp(out->items[k], name) == 0;
			if (!seen && out->len < 20)
				ptrvec_push(out, name);
			else
				free(name);
		}
	}
}

static void toml_string(struct buf *b, const char *s)
{
	buf_putc(b, '"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			buf_putc(b, '\\');
		buf_putc(b, *s);
	}
	buf_putc(b, '"');
}

bool try_init(const char *script, const char *out, bool force, char **written, char **why)
{
	*why = NULL;
	*written = NULL;
	struct buf src = {0};
	char *err = NULL;
	if (!read_file(script, 16u << 20, &src, &err)) {
		*why = xasprintf("cannot read '%s': %s", script, err);
		free(err);
		buf_free(&src);
		return false;
	}
	char *dir = xstrdup(script);
	char *slash = strrchr(dir, '/');
	const char *base = slash ? slash + 1 : script;
	if (slash)
		*slash = '\0';
	char *target = out ? xstrdup(out) : slash ? xasprintf("%s/gpuopt.toml", dir) : xstrdup("gpuopt.toml");
	if (!force && strcmp(target, "-") != 0 && access(target, F_OK) == 0) {
		*why = xasprintf("'%s' exists: give --force to replace it, or -o FILE", target);
		goto fail;
	}
	char *scripts[] = {(char *)script};
	struct output_inputs in = {scripts, 1, ""};
	char *owhy = NULL;
	if (!output_check(target, &in, force, &owhy)) {
		*why = xasprintf("'%s': %s", target, owhy);
		free(owhy);
		goto fail;
	}
	char *kwhy = NULL;
	struct kb *kb = kb_load(&kwhy);
	if (!kb) {
		*why = xasprintf("knowledge data: %s", kwhy);
		free(kwhy);
		goto fail;
	}
	struct init_scan is = {0};
	struct scan_options so = {.kb = kb, .jobs = 1};
	struct scan_sink sink = {.path_error = init_path_error, .file = init_file, .ctx = &is};
	char *paths[] = {(char *)script};
	scan_paths(&so, paths, 1, &sink, NULL);
	kb_free(kb);
	struct ptrvec outs = {0};
	guess_outputs(src.data ? src.data : "", &outs);

	struct buf b = {0};
	buf_printf(&b, "# gpuopt try contract for %s, written by `gpuopt try --init`.\n", base);
	buf_puts(&b, "# Edit it, then run `gpuopt try` in this directory; `gpuopt report gpuopt-try/`\n"
		     "# renders the results. Keys: `gpuopt try --help`.\n\n");
	buf_puts(&b, "# The command whose outputs and time are the reference (run in a private\n"
		     "# copy of this directory, so its outputs never overwrite yours).\n");
	struct buf q = {0};
	shell_quote(&q, base, 0);
	char *cmd = xasprintf("python3 %s", q.data);
	buf_free(&q);
	buf_puts(&b, "baseline = ");
	toml_string(&b, cmd);
	free(cmd);
	buf_puts(&b, "\n\n# What it writes, compared between the baseline and every candidate with\n"
		     "# `gpuopt verify`'s tests (torch.testing's defaults per dtype unless set).\n");
	if (outs.len) {
		buf_puts(&b, "# Found in the script as names given to a writer; check them.\noutputs = [");
		for (size_t i = 0; i < outs.len; i++) {
			buf_puts(&b, i ? ", " : "");
			toml_string(&b, outs.items[i]);
		}
		buf_puts(&b, "]\n");
	} else {
		buf_puts(&b, "# None found in the script: without `outputs`, every file the baseline\n"
			     "# creates is compared.\n# outputs = [\"result.npy\", {path = \"table.csv\", key = \"id\"}]\n");
	}
	buf_puts(&b, "# [tolerance]   # for every output: rtol, atol, ulp, equal_nan, allow_dtype\n"
		     "# rtol = 1e-5\n\n");
	buf_printf(&b, "# The scan of %s found %zu call site%s", base, is.findings, is.findings == 1 ? "" : "s");
	if (is.targets.len) {
		buf_puts(&b, " with a GPU path through:");
		for (size_t i = 0; i < is.targets.len; i++)
			buf_printf(&b, "%s %s", i ? "," : "", (char *)is.targets.items[i]);
		buf_puts(&b, ".\n# \"auto\" tries each accelerator mode that applies (cudf.pandas,\n"
			     "# cuml.accel, nx-cugraph) before your own candidates.\n");
	} else {
		buf_puts(&b, ", none with an accelerator mode.\n");
	}
	buf_puts(&b, "accelerators = \"auto\"\n\n"
		     "# Your own GPU versions, each writing the same outputs as the baseline.\n"
		     "# candidates = [{name = \"cupy port\", command = \"python3 ");
	char *stem = xstrndup(base, str_ends_with(base, ".py") ? strlen(base) - 3 : strlen(base));
	buf_printf(&b, "%s_gpu.py\"}]\n\n", stem);
	free(stem);
	buf_puts(&b, "# How long to measure, and the smallest speedup that counts (percent).\n"
		     "warmup = 1\nmin_runs = 10\nmax_time = 60\nmin_effect = 5\n");
	for (size_t i = 0; i < outs.len; i++)
		free(outs.items[i]);
	ptrvec_free(&outs);
	for (size_t i = 0; i < is.targets.len; i++)
		free(is.targets.items[i]);
	ptrvec_free(&is.targets);
	if (!write_file_atomic(target, b.data, b.len, &err)) {
		*why = xasprintf("cannot write '%s': %s", target, err);
		free(err);
		buf_free(&b);
		goto fail;
	}
	buf_free(&b);
	buf_free(&src);
	free(dir);
	*written = target;
	return true;
fail:
	buf_free(&src);
	free(dir);
	free(target);
	return false;
}
