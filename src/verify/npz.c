/* npz: see npz.h. Zip structures (APPNOTE 6.3): the end-of-central-directory
 * record (with the zip64 locator and record before it when the 16/32-bit
 * fields overflow), central-directory headers (with the zip64 extra field
 * 0x0001), and the local headers, read only for the length of their name
 * and extra field. Every offset and length is checked against the archive
 * before it is used, and a deflated member's size against what its
 * compressed bytes can inflate to. */
#include "npz.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/util.h"

/* The most a deflate stream can expand: a 258-byte match in two bits. */
#define DEFLATE_MAX_RATIO 1032

static uint16_t rd16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t rd32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t rd64(const unsigned char *p)
{
	return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

void npz_free(struct npz *z)
{
	for (size_t i = 0; i < z->n; i++)
		free(z->members[i].name);
	free(z->members);
	z->members = NULL;
	z->n = 0;
}

static bool fail(struct npz *z, char **why, char *msg)
{
	npz_free(z);
	*why = msg;
	return false;
}

/* Reads the zip64 extra field of a central-directory entry: the 64-bit
 * values of the fields whose 32-bit (16-bit for disk) slot is all ones. */
static bool zip64_extra(const unsigned char *ex, size_t elen, uint64_t *usize, uint64_t *csize,
			uint64_t *off, uint32_t *disk)
{
	size_t i = 0;
	while (i + 4 <= elen) {
		uint16_t id = rd16(ex + i), n = rd16(ex + i + 2);
		if (i + 4 + n > elen)
			return false;
		if (id == 0x0001) {
			const unsigned char *p = ex + i + 4, *end = p + n;
			if (*usize == 0xffffffffu) {
				if (end - p < 8)
					return false;
				*usize = rd64(p);
				p += 8;
			}
			if (*csize == 0xffffffffu) {
				if (end - p < 8)
					return false;
				*csize = rd64(p);
				p += 8;
			}
			if (*off == 0xffffffffu) {
				if (end - p < 8)
					return false;
				*off = rd64(p);
				p += 8;
			}
			if (*disk == 0xffffu) {
				if (end - p < 4)
					return false;
				*disk = rd32(p);
			}
			return true;
		}
		i += 4 + (size_t)n;
	}
	return *usize != 0xffffffffu && *csize != 0xffffffffu && *off != 0xffffffffu &&
	       *disk != 0xffffu;
}

bool npz_open(const unsigned char *buf, size_t len, struct npz *z, char **why)
{
	memset(z, 0, sizeof *z);
	*why = NULL;
	if (len < 22)
		return fail(z, why, xstrdup(len >= 4 && rd32(buf) == 0x04034b50
						    ? "truncated: the zip's end-of-directory record is missing"
						    : "not a zip archive (an .npz file is a zip of .npy files)"));
	/* The end-of-central-directory record: 22 bytes and a comment of up to 64 KB. */
	size_t eocd = (size_t)-1;
	size_t lowest = len - 22 > 65535 ? len - 22 - 65535 : 0;
	for (size_t p = len - 22 + 1; p-- > lowest;) {
		if (rd32(buf + p) == 0x06054b50 && p + 22 + rd16(buf + p + 20) <= len) {
			eocd = p;
			break;
		}
	}
	if (eocd == (size_t)-1)
		return fail(z, why, xstrdup(rd32(buf) == 0x04034b50
						    ? "truncated or damaged zip: no end-of-central-directory record"
						    : "not a zip archive (an .npz file is a zip of .npy files)"));
	const unsigned char *e = buf + eocd;
	uint64_t disk = rd16(e + 4), cd_disk = rd16(e + 6), entries = rd16(e + 10);
	uint64_t cd_size = rd32(e + 12), cd_off = rd32(e + 16);
	uint64_t cd_limit = eocd;
	if (eocd >= 20 && rd32(buf + eocd - 20) == 0x07064b50) {
		/* zip64: the locator points at the zip64 end-of-directory record. */
		const unsigned char *loc = buf + eocd - 20;
		uint64_t z64 = rd64(loc + 8);
		if (z64 > eocd - 20 || eocd - 20 - z64 < 56 || rd32(buf + z64) != 0x06064b50)
			return fail(z, why, xstrdup("bad central directory: the zip64 end-of-directory "
						    "record is missing or out of place"));
		const unsigned char *r = buf + z64;
		disk = rd32(r + 16);
		cd_disk = rd32(r + 20);
		entries = rd64(r + 32);
		cd_size = rd64(r + 40);
		cd_off = rd64(r + 48);
		cd_limit = z64;
	} else if (entries == 0xffff || cd_size == 0xffffffffu || cd_off == 0xffffffffu) {
		return fail(z, why, xstrdup("bad central directory: zip64 sizes without a zip64 record"));
	}
	if (disk != 0 || cd_disk != 0)
		return fail(z, why, xstrdup("multi-disk zip archives are not supported"));
	if (cd_off > cd_limit || cd_size > cd_limit - cd_off)
		return fail(z, why, xasprintf("bad central directory: it says it lies at bytes %llu-%llu "
					      "of a %zu-byte file", (unsigned long long)cd_off,
					      (unsigned long long)(cd_off + cd_size), len));
	if (entries > cd_size / 46)
		return fail(z, why, xasprintf("bad central directory: %llu entries cannot fit in %llu bytes",
					      (unsigned long long)entries, (unsigned long long)cd_size));
	z->members = xcalloc(entries ? (size_t)entries : 1, sizeof *z->members);
	const unsigned char *p = buf + cd_off, *end = p + cd_size;
	for (uint64_t i = 0; i < entries; i++) {
		if (end - p < 46 || rd32(p) != 0x02014b50)
			return fail(z, why, xasprintf("bad central directory: entry %llu is damaged",
						      (unsigned long long)i + 1));
		uint16_t flags = rd16(p + 8), method = rd16(p + 10);
		uint64_t csize = rd32(p + 20), usize = rd32(p + 24), off = rd32(p + 42);
		uint32_t dstart = rd16(p + 34);
		size_t nlen = rd16(p + 28), elen = rd16(p + 30), clen = rd16(p + 32);
		if ((size_t)(end - p) < 46 + nlen + elen + clen)
			return fail(z, why, xasprintf("bad central directory: entry %llu runs past its end",
						      (unsigned long long)i + 1));
		char *name = xstrndup((const char *)p + 46, nlen);
		struct npz_member *m = &z->members[z->n++];
		m->name = name;
		if (!zip64_extra(p + 46 + nlen, elen, &usize, &csize, &off, &dstart))
			return fail(z, why, xasprintf("bad central directory: the zip64 field of '%s' is "
						      "damaged", name));
		if (flags & 1)
			return fail(z, why, xasprintf("member '%s' is encrypted", name));
		if (method != 0 && method != 8)
			return fail(z, why, xasprintf("member '%s' uses compression method %u (gpuopt reads "
						      "stored and deflated members)", name, method));
		if (dstart != 0)
			return fail(z, why, xstrdup("multi-disk zip archives are not supported"));
		if (method == 0 && csize != usize)
			return fail(z, why, xasprintf("bad central directory: stored member '%s' has two "
						      "different sizes", name));
		if (method == 8 && usize / DEFLATE_MAX_RATIO > csize + 1)
			return fail(z, why, xasprintf("bad central directory: member '%s' says it inflates "
						      "from %llu bytes to %llu, more than deflate can expand "
						      "(at most %d to 1)", name, (unsigned long long)csize,
						      (unsigned long long)usize, DEFLATE_MAX_RATIO));
		if (off > len || len - off < 30 || rd32(buf + off) != 0x04034b50)
			return fail(z, why, xasprintf("bad central directory: the local header of '%s' is not "
						      "where the directory says", name));
		uint64_t data = off + 30 + rd16(buf + off + 26) + rd16(buf + off + 28);
		if (data > len || csize > len - data)
			return fail(z, why, xasprintf("truncated: member '%s' runs past the end of the file",
						      name));
		for (size_t k = 0; k + 1 < z->n; k++)
			if (strcmp(z->members[k].name, name) == 0)
				return fail(z, why, xasprintf("the archive holds '%s' twice", name));
		m->method = method;
		m->crc = rd32(p + 16);
		m->csize = csize;
		m->usize = usize;
		m->data = data;
		p += 46 + nlen + elen + clen;
	}
	return true;
}

const struct npz_member *npz_find(const struct npz *z, const char *name)
{
	for (size_t i = 0; i < z->n; i++)
		if (strcmp(z->members[i].name, name) == 0)
			return &z->members[i];
	return NULL;
}

bool npz_reader_open(struct npz_reader *r, const unsigned char *zip, const struct npz_member *m,
		     char **why)
{
	memset(r, 0, sizeof *r);
	*why = NULL;
	r->zip = zip;
	r->m = m;
	r->crc = (uint32_t)crc32(0L, Z_NULL, 0);
	if (m->method == 0)
		return true;
	if (m->method != 8) {
		*why = xasprintf("member '%s' uses compression method %u", m->name, m->method);
		return false;
	}
	z_stream *zs = xcalloc(1, sizeof *zs);
	if (inflateInit2(zs, -MAX_WBITS) != Z_OK) {
		free(zs);
		*why = xstrdup("zlib could not start inflating");
		return false;
	}
	r->zs = zs;
	r->cap = m->usize < NPZ_MAX_PEEK ? (size_t)m->usize + 1 : NPZ_MAX_PEEK + 1;
	r->win = xmalloc(r->cap);
	return true;
}

static bool check_end(struct npz_reader *r, char **why)
{
	if (r->crc != r->m->crc) {
		*why = xasprintf("member '%s' is damaged: its CRC-32 does not match", r->m->name);
		return false;
	}
	r->finished = true;
	return true;
}

bool npz_reader_peek(struct npz_reader *r, size_t want, const unsigned char **p, size_t *avail,
		     char **why)
{
	*why = NULL;
	uint64_t left = r->m->usize - r->out_done;
	if (want > left)
		want = (size_t)left;
	if (want > NPZ_MAX_PEEK)
		want = NPZ_MAX_PEEK;
	if (r->m->method == 0) {
		*p = r->zip + r->m->data + r->out_done;
		*avail = (size_t)(left < NPZ_MAX_PEEK ? left : NPZ_MAX_PEEK);
		return true;
	}
	z_stream *zs = r->zs;
	if (r->end - r->start < want) {
		memmove(r->win, r->win + r->start, r->end - r->start);
		r->end -= r->start;
		r->start = 0;
	}
	/* Inflate until `want` bytes are here; once every byte is out, go on
	 * to the end of the deflate stream so that its end is checked too. */
	while (r->end - r->start < want || (r->produced == r->m->usize && !r->finished)) {
		if (zs->avail_in == 0 && r->in_used < r->m->csize) {
			uint64_t in_left = r->m->csize - r->in_used;
			uInt n = in_left > (1u << 30) ? (1u << 30) : (uInt)in_left;
			zs->next_in = (Bytef *)(uintptr_t)(r->zip + r->m->data + r->in_used);
			zs->avail_in = n;
			r->in_used += n;
		}
		unsigned char spare;
		bool room = r->end < r->cap;
		zs->next_out = room ? r->win + r->end : &spare;
		zs->avail_out = room ? (uInt)(r->cap - r->end) : 1;
		uInt before = zs->avail_out;
		int rc = inflate(zs, Z_NO_FLUSH);
		size_t got = before - zs->avail_out;
		if (got && !room)
			r->produced = r->m->usize + 1;
		if (room) {
			r->crc = (uint32_t)crc32(r->crc, r->win + r->end, (uInt)got);
			r->end += got;
			r->produced += got;
		}
		if (r->produced > r->m->usize) {
			*why = xasprintf("member '%s' inflates to more bytes than the directory says",
					 r->m->name);
			return false;
		}
		if (rc == Z_STREAM_END) {
			if (r->produced != r->m->usize) {
				*why = xasprintf("member '%s' inflates to %llu bytes, the directory says %llu",
						 r->m->name, (unsigned long long)r->produced,
						 (unsigned long long)r->m->usize);
				return false;
			}
			if (!check_end(r, why))
				return false;
			break;
		}
		if ((rc != Z_OK && rc != Z_BUF_ERROR) ||
		    (got == 0 && zs->avail_in == 0 && r->in_used >= r->m->csize)) {
			*why = xasprintf("member '%s' is damaged: %s", r->m->name,
					 rc == Z_OK || rc == Z_BUF_ERROR ? "its compressed data ends early"
					 : zs->msg ? zs->msg : "inflate failed");
			return false;
		}
	}
	*p = r->win + r->start;
	*avail = r->end - r->start;
	return true;
}

void npz_reader_consume(struct npz_reader *r, size_t n)
{
	if (r->m->method == 0) {
		const unsigned char *p = r->zip + r->m->data + r->out_done;
		size_t done = 0;
		while (done < n) {
			uInt k = n - done > (1u << 30) ? (1u << 30) : (uInt)(n - done);
			r->crc = (uint32_t)crc32(r->crc, p + done, k);
			done += k;
		}
		r->out_done += n;
		return;
	}
	r->start += n;
	r->out_done += n;
}

uint64_t npz_reader_input_offset(const struct npz_reader *r)
{
	if (r->m->method == 0)
		return r->m->data + r->out_done;
	const z_stream *zs = r->zs;
	return zs->next_in ? (uint64_t)(zs->next_in - r->zip) : r->m->data;
}

bool npz_reader_verified(const struct npz_reader *r)
{
	if (r->m->method == 0)
		return r->out_done == r->m->usize && r->crc == r->m->crc;
	return r->finished && r->out_done == r->m->usize;
}

void npz_reader_close(struct npz_reader *r)
{
	if (r->zs) {
		inflateEnd(r->zs);
		free(r->zs);
	}
	free(r->win);
	memset(r, 0, sizeof *r);
}
