/* npz: the members of a NumPy .npz archive, which is a zip file of .npy
 * files. Reads the zip's central directory (zip64 records and extra fields
 * included; one disk, no encryption), checks every entry against the
 * archive's bounds (and a deflated member's size against what its
 * compressed bytes can inflate to, at most 1032 to 1), and streams a
 * member's bytes front to back: stored members straight from the archive's
 * memory, deflated ones through zlib's inflate in a fixed-size window. The CRC-32 of every member is checked as
 * its last byte is read.
 *
 * Ownership: struct npz owns its member table (npz_free); the archive bytes
 * stay the caller's and must outlive the npz and its readers. Errors come
 * back as owned messages (*why) that the caller frees. */
#ifndef GPUOPT_NPZ_H
#define GPUOPT_NPZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct npz_member {
	char *name;         /* as stored, e.g. "x.npy" */
	uint16_t method;    /* 0 stored, 8 deflated */
	uint32_t crc;
	uint64_t csize;     /* bytes in the archive */
	uint64_t usize;     /* bytes once inflated */
	uint64_t data;      /* offset of the member's bytes in the archive */
};

struct npz {
	struct npz_member *members; /* in central-directory order */
	size_t n;
};

/* Reads the directory of the zip archive buf[0..len). Returns false with
 * *why set on a damaged or unsupported archive ("not a zip archive",
 * "the central directory is cut short", a member that says it inflates to
 * more than deflate can, ...); *z is then empty. */
bool npz_open(const unsigned char *buf, size_t len, struct npz *z, char **why);

/* Accepts a zeroed or already freed npz. */
void npz_free(struct npz *z);

/* The member called name, or NULL. */
const struct npz_member *npz_find(const struct npz *z, const char *name);

/* A member being read. Memory: a fixed window (plus zlib's own state)
 * whatever the member's size. */
struct npz_reader {
	const unsigned char *zip;
	const struct npz_member *m;
	void *zs;              /* z_stream, deflated members only */
	unsigned char *win;    /* deflated members: inflated bytes not yet consumed */
	size_t cap, start, end;
	uint64_t in_used;      /* compressed bytes given to inflate */
	uint64_t out_done;     /* bytes consumed by the caller */
	uint64_t produced;     /* bytes inflated so far */
	uint32_t crc;          /* of the bytes produced so far */
	bool finished;
};

/* Starts reading member m of the archive zip. Returns false with *why on
 * an unsupported compression method or when zlib cannot start. */
bool npz_reader_open(struct npz_reader *r, const unsigned char *zip, const struct npz_member *m,
		     char **why);

/* Makes the next min(want, bytes left) bytes of the member readable at *p
 * (want may be at most NPZ_MAX_PEEK). Returns false with *why when the
 * compressed data is damaged, the member is not the size the directory
 * says, or (once the last byte is reached) its CRC-32 does not match. */
enum { NPZ_MAX_PEEK = 4 << 20 };
bool npz_reader_peek(struct npz_reader *r, size_t want, const unsigned char **p, size_t *avail,
		     char **why);

/* Marks n bytes (at most what the last peek made available) as read. */
void npz_reader_consume(struct npz_reader *r, size_t n);

/* The offset in the archive before which no byte will be read again. */
uint64_t npz_reader_input_offset(const struct npz_reader *r);

/* True when the whole member was read and its CRC-32 matched. */
bool npz_reader_verified(const struct npz_reader *r);

/* Releases the reader's memory. Accepts a zeroed or closed reader. */
void npz_reader_close(struct npz_reader *r);

#endif
