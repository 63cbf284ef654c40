/* tracetext: reading a saved trace's text (`gpuopt trace -o`, see
 * tracefile.h) without a JSON tree of its timeline.
 *
 * A saved trace is mostly its events: one array of 19 integers each, about
 * 65 bytes of text that a jansson tree holds in about 1,000 (an object per
 * number, one per row). tracetext_load hands the text to jansson as a
 * stream and, on the way, reads each process's "events" array straight
 * into struct trace_event records; jansson sees an empty array in its place
 * (with the same line breaks, so its errors name the same lines). An
 * "events" array that is not plain rows of in-range integers (a negative
 * number, a fraction, a row of another length, an escaped key) is not
 * lifted but handed to jansson as it is, so every malformed file gets the
 * error it always got from the JSON reader (tracefile.c's events_from_json).
 * Only the arrays at root."processes"[i]."events" are lifted; ids (the
 * strings and sites each event names) are checked by the caller.
 *
 * The text may be a mapped file: the pages read are handed back to the
 * kernel as the reading goes (mapfile_release), and a file cut short while
 * it is read (SIGBUS) ends the reading with an error instead of killing
 * gpuopt. */
#ifndef GPUOPT_TRACE_TRACETEXT_H
#define GPUOPT_TRACE_TRACETEXT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/mapfile.h"
#include "tracefmt.h"

/* A saved event: this many integers, in the order of struct trace_event
 * (type, kind, hostkind, flags, device, stream, correlation, start, end,
 * bytes, name, site, tid, grid[3], block[3]). */
#define TRACE_EVENT_FIELDS 19

/* Fills e from a saved row; false when a value is out of its field's range
 * (the first four 0-255, start, end and bytes any, the rest 32 bits). */
bool trace_event_from_row(const uint64_t v[TRACE_EVENT_FIELDS], struct trace_event *e);

/* One process's lifted timeline. */
struct tracetext_events {
	struct trace_event *ev; /* owned; NULL when not lifted */
	size_t n;
	bool lifted;
};

struct tracetext {
	struct tracetext_events *procs; /* by index in root."processes" */
	size_t nprocs;
	bool shrank; /* the mapped file was cut short while read */
};

/* Parses text[0..len) as JSON (jansson flags) with the timelines lifted
 * into tt (which the caller zeroes first and frees with tracetext_free,
 * whatever this returns). map, when not NULL, is the mapping text lies in
 * (for releasing pages and catching SIGBUS). Returns the root (a new
 * reference), or NULL with *err as jansson fills it (tt->shrank says when
 * the cause was the file shrinking). */
json_t *tracetext_load(struct tracetext *tt, const char *text, size_t len, struct mapfile *map,
		       size_t flags, json_error_t *err);

/* Hands process i's lifted events to the caller (who frees *ev); false
 * when its "events" array was not lifted (then read it from the JSON). */
bool tracetext_take(struct tracetext *tt, size_t i, struct trace_event **ev, size_t *n);

/* Frees what was not taken. Accepts a zeroed struct. */
void tracetext_free(struct tracetext *tt);

#endif
