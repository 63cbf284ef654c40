/* fileio: whole-file reads with a size limit, and whole-or-nothing writes
 * (a temporary file in the same directory, then rename), shared by every
 * command that writes a file:
 *  - an output path that is a symbolic link is followed: its target is
 *    replaced, the link stays (a device or a pipe, /dev/null or /dev/stdout,
 *    is written in place);
 *  - output_check refuses, before any work, an output that is a directory,
 *    one of the inputs, or an existing .py / .ipynb / .npy / .npz / .csv /
 *    .tsv file (unless forced);
 *  - a temporary is removed when gpuopt exits or dies of SIGINT, SIGTERM,
 *    SIGHUP or SIGQUIT while writing it: nothing half-written is left, and
 *    nothing half-written ever has the final name. */
#ifndef GPUOPT_FILEIO_H
#define GPUOPT_FILEIO_H

#include <stdbool.h>
#include <stdio.h>

#include "util.h"

/* How long open_read waits for a FIFO's writer. */
#define FIFO_WAIT_S 10

/* Opens path for reading (O_CLOEXEC, blocking afterwards) without hanging
 * on a FIFO nobody writes to: a FIFO (or bash's <(...)) is waited on for at
 * most wait_s seconds for data or a writer's end, then fails with errno
 * ETIMEDOUT. -1 with errno on failure; open_read_error says it. */
int open_read(const char *path, double wait_s);
/* strerror, but for ETIMEDOUT: "a FIFO that nothing wrote to for 10 s". */
const char *open_read_error(int err);

/* Opens a device or a pipe for writing (O_CLOEXEC, blocking afterwards)
 * without hanging on a FIFO that no process reads from: it is waited on for
 * at most FIFO_WAIT_S seconds, and a signal gpuopt catches (core/runner.h:
 * bench, trace, try pass them on to their command) ends the wait. -1 with
 * errno ENXIO (nobody read), EINTR (that signal) or open's; direct_error
 * says it. Writes to it through write_file_atomic / atomic_file wait for a
 * slow reader but stop at such a signal too. */
int open_direct(const char *path);
const char *direct_error(int err);

/* An anonymous temporary file to collect a child's output: a descriptor
 * above 2 with O_CLOEXEC, or -1 (errno set). */
int temp_fd(void);
/* What the temporary file fd holds from its start, at most limit bytes;
 * owned, never NULL ("" when empty or unreadable). */
char *temp_fd_text(int fd, size_t limit);

/* Reads all of `path` ("-" = stdin) into out (appended; NUL-terminated).
 * Returns true on success. On failure returns false and sets *why to a
 * static or owned message: the caller frees *why_owned if non-NULL. */
bool read_file(const char *path, size_t limit, struct buf *out, char **why);
/* The same from an open descriptor, read from where it stands to its end
 * (limit counts from there); the caller closes fd. */
bool read_fd(int fd, size_t limit, struct buf *out, char **why);

/* Writes all len bytes of data to fd, retrying short writes and EINTR.
 * False (errno set) on an error. */
bool write_all(int fd, const char *data, size_t len);

/* What a command reads (or is about to): an output may never replace one
 * of these, whether named directly, found in a directory or reached through
 * a link, not even with --force. */
struct output_inputs {
	char *const *paths;    /* files and directories read ("-" and NULL entries ignored) */
	size_t n;
	const char *dir_reads; /* endings of the files read inside an input directory, space-
				* separated (".json"); "*": every file in it is the input's;
				* NULL: those of source and data files, .py .ipynb .npy .npz
				* .csv .tsv */
	const char *written;   /* what goes to the output, for the messages ("the
				* commands' output"); NULL: "the report" */
};

/* Checks, before the work, that a report may be written to path: not a
 * directory, not one of the inputs (device and inode, links followed), not
 * an existing file that an input directory's reading would take in, not an
 * existing source or data file (.py, .ipynb, .npy, .npz, .csv, .tsv) unless
 * force, and in a writable directory. "-" (stdout) always may. in may be
 * NULL (no inputs). False with *why (owned) saying why not. The one rule
 * for every output path of every command. */
bool output_check(const char *path, const struct output_inputs *in, bool force, char **why);

/* Whether two output paths name one file (links followed; a file not
 * there yet by its resolved path): two outputs of one command may not, or
 * one replaces the other. "-" and NULL name none. */
bool output_same(const char *a, const char *b);

/* The words of a command line that name existing files (owned strings
 * appended to out): what a traced or benchmarked command is about to read
 * (its script, its data), for output_inputs. */
void output_command_files(char *const *argv, struct ptrvec *out);

/* Writes data to path atomically: the file is either the whole new content
 * or untouched. "-" writes to stdout. Returns false and sets *why (owned,
 * caller frees) on failure. */
bool write_file_atomic(const char *path, const char *data, size_t len, char **why);

/* The same without waiting for the disk: readers see the old or the new
 * content, never a mix, but a crash may lose the new one. For caches. */
bool write_file_replace(const char *path, const char *data, size_t len, char **why);

/* A file written whole or not at all: writes go to a temporary file in the
 * same directory, which atomic_commit renames over path. Path "-" writes to
 * stdout directly. */
struct atomic_file {
	FILE *f;     /* fully buffered with a large buffer */
	char *tmp;   /* owned; NULL for stdout or a device */
	char *path;  /* owned: the file replaced (a link's target) */
	char *buf;   /* owned: f's buffer */
	int fd;      /* what f writes to */
	int err;     /* the first write's error, 0 if none */
	int slot;    /* the temporary's place in the table of those to remove */
	bool direct; /* a device or a pipe, written in place */
};
/* af must stay where it is (f's writes refer to it) until commit or abort. */
/* Returns false and sets *why (owned) if the temporary cannot be created. */
bool atomic_open(struct atomic_file *af, const char *path, char **why);
/* Flushes and renames (no fsync: readers see the old file or the new one,
 * but a power cut may lose the new one); on failure (a write that failed
 * earlier included) removes the temporary, returns false and sets *why
 * (owned), the first error's. Frees af's strings either way. */
bool atomic_commit(struct atomic_file *af, char **why);
/* Drops what was written (the target is untouched). */
void atomic_abort(struct atomic_file *af);

/* Flushes stdout and says whether all that was written to it arrived:
 * 0, or the error (an errno) of the flush, else of a write that failed
 * earlier (asked of the descriptor again: a write of nothing to a closed
 * or full stdout fails as the lost one did; EIO when it does not say).
 * For the end of every command: output that went nowhere is an error, not
 * exit 0 (a closed stdout, a full disk). Cannot fail itself. */
int stdout_flush_error(void);

/* Makes directory path and its missing parents (mode 0755); true when it
 * exists afterwards. */
bool make_dirs(const char *path);

/* gpuopt's cache directory: $XDG_CACHE_HOME/gpuopt, else ~/.cache/gpuopt
 * (owned); NULL when neither variable is set. A relative XDG_CACHE_HOME is
 * ignored, as the XDG Base Directory spec says. Not created here. */
char *user_cache_dir(void);

#endif
