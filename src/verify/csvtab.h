/* csvtab: a CSV or TSV table with a header row, read whole into memory.
 * Quoting as RFC 4180 has it: a field in double quotes may hold the
 * separator, line breaks and "" for one quote. Lines end in LF, CRLF or a
 * lone CR; a UTF-8 byte-order mark is skipped; blank lines are skipped, as
 * pandas does. Every row must have as many fields as the header, and the
 * header's names must be unique: anything else is an error naming the line.
 *
 * Ownership: a table owns its text (fields are unescaped in place and
 * NUL-terminated) and its arrays; csvtab_free releases them and accepts a
 * zeroed or freed table. Errors come back as owned messages (*why). */
#ifndef GPUOPT_CSVTAB_H
#define GPUOPT_CSVTAB_H

#include <stdbool.h>
#include <stddef.h>

struct csvtab {
	char *text;
	char sep;
	size_t ncols;
	size_t nrows;  /* data rows; the header is not counted */
	char **cells;  /* (nrows + 1) * ncols, row-major; row 0 is the header */
	size_t *lines; /* nrows + 1: the line each row starts on (1-based) */
	size_t *by_name; /* ncols: the columns in the order of their names */
};

/* Parses text[0..len) (text must be malloc'd with room for a NUL at
 * text[len]; the table takes it over, also on failure). Returns false with
 * *why set on a malformed table; *t is then freed. */
bool csvtab_parse(char *text, size_t len, char sep, struct csvtab *t, char **why);

/* Reads and parses the file at path, separated by csvtab_sep_for(path). */
bool csvtab_read(const char *path, struct csvtab *t, char **why);

/* '\t' for names ending in .tsv or .tab, ',' otherwise. */
char csvtab_sep_for(const char *path);

/* Data row `row` (0-based), column `col`. */
static inline const char *csvtab_cell(const struct csvtab *t, size_t row, size_t col)
{
	return t->cells[(row + 1) * t->ncols + col];
}

static inline const char *csvtab_name(const struct csvtab *t, size_t col)
{
	return t->cells[col];
}

/* The column called name, or -1 (a binary search: a table of many columns
 * matched against another stays n log n). */
long csvtab_column(const struct csvtab *t, const char *name);

void csvtab_free(struct csvtab *t);

#endif
