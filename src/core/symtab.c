/* symtab: see symtab.h. Open addressing with linear probing, FNV-1a. */
#include "symtab.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static uint64_t hash(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603u;
	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211u;
	}
	return h;
}

static struct binding *find(const struct symtab *t, const char *name, size_t len)
{
	size_t mask = t->cap - 1;
	for (size_t i = hash(name, len) & mask;; i = (i + 1) & mask) {
		struct binding *b = &t->slots[i];
		if (!b->name || (strncmp(b->name, name, len) == 0 && b->name[len] == '\0'))
			return b;
	}
}

static void grow(struct symtab *t)
{
	struct symtab bigger = {xcalloc(t->cap ? t->cap * 2 : 16, sizeof(struct binding)),
				t->cap ? t->cap * 2 : 16, t->n};
	for (size_t i = 0; i < t->cap; i++)
		if (t->slots[i].name)
			*find(&bigger, t->slots[i].name, strlen(t->slots[i].name)) = t->slots[i];
	free(t->slots);
	*t = bigger;
}

void symtab_set(struct symtab *t, const char *name, size_t len, enum bkind kind, const char *qual,
		int func)
{
	if ((t->n + 1) * 4 >= t->cap * 3)
		grow(t);
	struct binding *b = find(t, name, len);
	if (!b->name) {
		b->name = xstrndup(name, len);
		t->n++;
	} else {
		free(b->qual);
	}
	b->kind = kind;
	b->qual = qual ? xstrdup(qual) : NULL;
	b->func = func;
}

const struct binding *symtab_get(const struct symtab *t, const char *name, size_t len)
{
	if (!t->cap)
		return NULL;
	const struct binding *b = find(t, name, len);
	return b->name ? b : NULL;
}

void symtab_free(struct symtab *t)
{
	for (size_t i = 0; i < t->cap; i++) {
		free(t->slots[i].name);
		free(t->slots[i].qual);
	}
	free(t->slots);
	memset(t, 0, sizeof *t);
}
