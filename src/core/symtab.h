/* symtab: a string-keyed hash table of name bindings for one Python scope
 * (the scanner), also the cache's pool of interned strings. Keys are copied
 * (the table owns them, and a key keeps its address while the table
 * grows); so are the qualified names. A key must not contain a NUL. */
#ifndef GPUOPT_SYMTAB_H
#define GPUOPT_SYMTAB_H

#include <stddef.h>

enum bkind {
	B_QUAL,   /* a module or library object: qual = "sklearn.cluster.KMeans" */
	B_VALUE,  /* a value of a known type: qual = "pandas.DataFrame" */
	B_FUNC,   /* a function or class defined in this file */
	B_SHADOW, /* bound to something gpuopt does not know */
};

struct binding {
	char *name; /* NULL = empty slot */
	enum bkind kind;
	char *qual; /* B_QUAL / B_VALUE only */
	int func;   /* B_FUNC: index of the function's record in the scanner, or -1 */
};

struct symtab {
	struct binding *slots;
	size_t cap, n;
};

/* Binds name[0..len) (replacing any earlier binding); qual is copied. */
void symtab_set(struct symtab *t, const char *name, size_t len, enum bkind kind, const char *qual,
		int func);
const struct binding *symtab_get(const struct symtab *t, const char *name, size_t len);
void symtab_free(struct symtab *t);

#endif
