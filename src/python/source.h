/* source: one unit of Python text ready to scan — a .py file decoded to
 * UTF-8, or a notebook's code cells joined into one module — plus the map
 * from its lines back to notebook cells, and column arithmetic. */
#ifndef GPUOPT_SOURCE_H
#define GPUOPT_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Larger files are refused: a dense 10 MB module already takes the parser
 * about 1 GB. Notebooks may be far larger (embedded outputs), their code not. */
#define SOURCE_SIZE_LIMIT ((size_t)16 << 20)
#define NOTEBOOK_SIZE_LIMIT ((size_t)128 << 20)

struct source {
	char *path;    /* as the user named it (owned) */
	char *text;    /* UTF-8, NUL-terminated (owned) */
	size_t len;
	bool notebook;
	/* A notebook whose kernel's language is not Python ("R", owned; NULL:
	 * Python or not said): its cells are not read, text is empty. */
	char *language;
	/* Notebooks only: for each 0-based line of text, its 1-based cell index
	 * among all cells and its 0-based line within that cell. */
	uint32_t *line_cell;
	uint32_t *line_in_cell;
	uint32_t *line_file;   /* the 1-based .ipynb line its text is on (0: unknown) */
	size_t nlines;
	/* For source_column, made on its first call: the UTF-8 continuation
	 * bytes before each SOURCE_COL_BLOCK-byte block (NULL: none at all). */
	uint32_t *cont_blocks;
	bool cont_ready;
};
#define SOURCE_COL_BLOCK 4096

/* Reads and decodes `path` ("-" = stdin, as Python). A path ending in .ipynb
 * is read as a notebook. On failure returns false with *why (owned) saying
 * what is wrong with the file; out is then empty. */
bool source_load(const char *path, struct source *out, char **why);

/* Takes ownership of nothing: copies bytes into out->text after checking
 * they are Python source text (no NUL, UTF-8 or a latin-1 coding cookie). */
bool source_from_python(const char *path, const char *bytes, size_t len,
			struct source *out, char **why);

void source_free(struct source *s); /* accepts a zeroed source */

/* Python ends a line at LF, CR LF or a CR alone (universal newlines): each
 * CR alone in text[0..len) becomes an LF, in place, so every reader after
 * this one (the lexer, both parsers, line numbers, columns) sees LF or CR
 * LF only. Byte offsets do not move. Cannot fail. */
void source_newlines(char *text, size_t len);

/* 1-based column, in Unicode code points, of byte offset `byte_col` within
 * the line starting at text + line_start. Constant time whatever the line's
 * length (at most a block is counted), so a long line of many findings
 * stays linear. Not for two threads on one source at once. */
uint32_t source_column(const struct source *s, size_t line_start, uint32_t byte_col);

/* Validates UTF-8; returns the offset of the first bad byte or len if OK. */
size_t utf8_check(const unsigned char *p, size_t len);

#endif
