/*
 * The engine's side of the egdb interface, for tests/egdb.rs: a program written against
 * egdb.h as an engine would be, compiled as C and as C++ with gcc and clang and linked with
 * libegdb (shared or static). Each command prints what it found and exits non-zero when a
 * check fails.
 *
 *   probe_test sample DIR FILE THREADS CACHE_MB
 *       FILE: lines "FEN black white king color" (hex, EGDB_NORMAL layout). Prints each
 *       position's value (win, loss, draw or the number returned), looked up through an
 *       EGDB_NORMAL handle and an EGDB_ROW_REVERSED one (converted here); then THREADS
 *       threads look every position up again, both layouts, on fresh handles of CACHE_MB,
 *       and must give the same answers.
 *   probe_test cl DIR FILE          conditional lookups on a cold handle
 *   probe_test pieces DIR FILE      EGDB_SUBDB_UNAVAILABLE beyond the pieces opened
 *   probe_test memory DIR FILE CACHE_MB   anonymous memory grown by opening and probing (KiB)
 *   probe_test identify DIR         egdb_identify's answer
 *   probe_test open DIR             egdb_open's messages; exit 0 if it opened, 3 if NULL
 *   probe_test verify DIR           verify()'s result as the exit status (0 right, 1 damaged)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egdb.h"

typedef struct {
	EGDB_BITBOARD normal;
	int color;
	int pieces;
} SAMPLE;

static SAMPLE *samples;
static int nsamples;

static void print_msg(char *msg)
{
	fprintf(stderr, "egdb: %s", msg);
}

static int failures;

static void fail(const char *what)
{
	fprintf(stderr, "FAIL: %s\n", what);
	++failures;
}

static int popcount(unsigned int x)
{
	int n = 0;
	for (; x; x &= x - 1)
		++n;
	return n;
}

/* Square n is bit n-1 in KingsRow's layout, bit 4r+3-c (r, c = (n-1)/4, (n-1)%4) in Cake's. */
static unsigned int row_reversed(unsigned int normal)
{
	unsigned int out = 0;
	int bit;
	for (bit = 0; bit < 32; ++bit)
		if (normal & (1u << bit))
			out |= 1u << (4 * (bit / 4) + 3 - bit % 4);
	return out;
}

static EGDB_BITBOARD to_row_reversed(const EGDB_BITBOARD *n)
{
	EGDB_BITBOARD r;
	unsigned int b = row_reversed(n->normal.black);
	unsigned int w = row_reversed(n->normal.white);
	unsigned int k = row_reversed(n->normal.king);
	r.row_reversed.black_man = b & ~k;
	r.row_reversed.black_king = b & k;
	r.row_reversed.white_man = w & ~k;
	r.row_reversed.white_king = w & k;
	return r;
}

static void load_samples(const char *file)
{
	FILE *f = fopen(file, "r");
	char fen[256];
	unsigned int b, w, k;
	int color, cap = 1 << 16;
	if (!f) {
		perror(file);
		exit(2);
	}
	samples = (SAMPLE *)malloc(sizeof(SAMPLE) * cap);
	while (fscanf(f, "%255s %x %x %x %d", fen, &b, &w, &k, &color) == 5) {
		if (nsamples == cap) {
			cap *= 2;
			samples = (SAMPLE *)realloc(samples, sizeof(SAMPLE) * cap);
		}
		samples[nsamples].normal.normal.black = b;
		samples[nsamples].normal.normal.white = w;
		samples[nsamples].normal.normal.king = k;
		samples[nsamples].color = color;
		samples[nsamples].pieces = popcount(b | w);
		++nsamples;
	}
	fclose(f);
}

static EGDB_DRIVER *open_or_die(EGDB_BITBOARD_TYPE type, int pieces, int cache_mb, const char *dir)
{
	EGDB_DRIVER *h = egdb_open(type, pieces, cache_mb, dir, print_msg);
	if (!h) {
		fprintf(stderr, "FAIL: egdb_open(%d, %d, %d, %s) returned NULL\n", (int)type, pieces,
			cache_mb, dir);
		exit(1);
	}
	return h;
}

static const char *value_name(int v)
{
	static char other[16];
	switch (v) {
	case EGDB_WIN: return "win";
	case EGDB_LOSS: return "loss";
	case EGDB_DRAW: return "draw";
	default:
		snprintf(other, sizeof other, "%d", v);
		return other;
	}
}

typedef struct {
	EGDB_DRIVER *normal, *reversed;
	const int *expected;
	int first, step, mismatches;
} WORK;

static void *probe_share(void *arg)
{
	WORK *w = (WORK *)arg;
	int i;
	for (i = w->first; i < nsamples; i += w->step) {
		EGDB_BITBOARD r = to_row_reversed(&samples[i].normal);
		/* Alternate which layout goes first, so that both meet cold blocks. */
		int a, b;
		if (i & 1) {
			a = w->normal->lookup(w->normal, &samples[i].normal, samples[i].color, 0);
			b = w->reversed->lookup(w->reversed, &r, samples[i].color, 0);
		} else {
			b = w->reversed->lookup(w->reversed, &r, samples[i].color, 0);
			a = w->normal->lookup(w->normal, &samples[i].normal, samples[i].color, 0);
		}
		if (a != w->expected[i] || b != w->expected[i])
			++w->mismatches;
	}
	return NULL;
}

static int cmd_sample(const char *dir, const char *file, int threads, int cache_mb)
{
	EGDB_DRIVER *n, *r;
	int *expected, i, t, mismatches = 0;
	pthread_t *ids;
	WORK *work;
	EGDB_STATS *stats;

	load_samples(file);
	n = open_or_die(EGDB_NORMAL, 0, 64, dir);
	r = open_or_die(EGDB_ROW_REVERSED, 0, 64, dir);
	expected = (int *)malloc(sizeof(int) * (nsamples + 1));
	for (i = 0; i < nsamples; ++i) {
		EGDB_BITBOARD rr = to_row_reversed(&samples[i].normal);
		int a = n->lookup(n, &samples[i].normal, samples[i].color, 0);
		int b = r->lookup(r, &rr, samples[i].color, 0);
		if (a != b) {
			fprintf(stderr, "FAIL: line %d: EGDB_NORMAL %d, EGDB_ROW_REVERSED %d\n", i + 1,
				a, b);
			++failures;
		}
		expected[i] = a;
		printf("%s\n", value_name(a));
	}
	stats = n->get_stats(n);
	if (stats->db_requests != (unsigned int)nsamples
	    || stats->db_returns + stats->db_not_present_requests != (unsigned int)nsamples)
		fail("get_stats: db_requests, or db_returns and db_not_present_requests, do not add "
		     "up to the number of lookups");
	if (stats->lru_cache_loads == 0 || stats->lru_cache_hits == 0)
		fail("get_stats: no cache loads or hits counted");
	n->reset_stats(n);
	if (n->get_stats(n)->db_requests != 0)
		fail("reset_stats did not reset");
	n->close(n);
	r->close(r);

	/* Threads share fresh handles whose cache is smaller than the database: they load,
	 * evict and probe the same blocks at once. */
	n = open_or_die(EGDB_NORMAL, 0, cache_mb, dir);
	r = open_or_die(EGDB_ROW_REVERSED, 0, cache_mb, dir);
	ids = (pthread_t *)malloc(sizeof(pthread_t) * threads);
	work = (WORK *)malloc(sizeof(WORK) * threads);
	for (t = 0; t < threads; ++t) {
		work[t].normal = n;
		work[t].reversed = r;
		work[t].expected = expected;
		work[t].first = t;
		work[t].step = threads;
		work[t].mismatches = 0;
		pthread_create(&ids[t], NULL, probe_share, &work[t]);
	}
	for (t = 0; t < threads; ++t) {
		pthread_join(ids[t], NULL);
		mismatches += work[t].mismatches;
	}
	if (mismatches) {
		fprintf(stderr, "FAIL: %d lookups under %d threads differ from one thread's\n",
			mismatches, threads);
		++failures;
	}
	fprintf(stderr, "sample: %d positions, %d threads: %d mismatches\n", nsamples, threads,
		mismatches);
	n->close(n);
	r->close(r);
	return failures != 0;
}

static int cmd_cl(const char *dir, const char *file)
{
	EGDB_DRIVER *h;
	int i, not_in_cache = 0, checked = 0;
	load_samples(file);
	h = open_or_die(EGDB_NORMAL, 0, 64, dir);
	for (i = 0; i < nsamples && i < 2000; ++i) {
		SAMPLE *s = &samples[i];
		int cold = h->lookup(h, &s->normal, s->color, 1);
		int value = h->lookup(h, &s->normal, s->color, 0);
		int warm = h->lookup(h, &s->normal, s->color, 1);
		if (value < EGDB_WIN || value > EGDB_DRAW)
			fail("cl=0 lookup gave no value");
		if (cold != EGDB_NOT_IN_CACHE && cold != value)
			fail("cl=1 on a cold block answered neither EGDB_NOT_IN_CACHE nor the value");
		if (warm != value)
			fail("cl=1 after the block was loaded did not answer the value");
		not_in_cache += cold == EGDB_NOT_IN_CACHE;
		++checked;
	}
	printf("cl: %d positions, %d not in cache at first, then all answered\n", checked,
		not_in_cache);
	if (not_in_cache == 0)
		fail("no conditional lookup on a cold handle answered EGDB_NOT_IN_CACHE");
	h->close(h);
	return failures != 0;
}

static int cmd_pieces(const char *dir, const char *file)
{
	EGDB_DRIVER *h;
	EGDB_BITBOARD seven;
	int i, most = 0, fewer_ok = 0, more_out = 0;
	load_samples(file);
	for (i = 0; i < nsamples; ++i)
		if (samples[i].pieces > most)
			most = samples[i].pieces;
	/* Four black kings and three white men: 7 pieces. */
	seven.normal.black = 0x0000000f;
	seven.normal.white = 0x00e00000;
	seven.normal.king = 0x0000000f;
	h = open_or_die(EGDB_NORMAL, most, 64, dir);
	if (h->lookup(h, &seven, EGDB_BLACK, 0) != EGDB_SUBDB_UNAVAILABLE
	    || h->lookup(h, &seven, EGDB_WHITE, 0) != EGDB_SUBDB_UNAVAILABLE)
		fail("a 7-piece position did not answer EGDB_SUBDB_UNAVAILABLE");
	if (h->get_stats(h)->db_not_present_requests != 2)
		fail("db_not_present_requests did not count the unavailable lookups");
	h->close(h);

	/* Opened with one piece fewer than the database has. */
	h = open_or_die(EGDB_NORMAL, most - 1, 64, dir);
	for (i = 0; i < nsamples && i < 20000; ++i) {
		int v = h->lookup(h, &samples[i].normal, samples[i].color, 0);
		if (samples[i].pieces == most) {
			if (v != EGDB_SUBDB_UNAVAILABLE)
				fail("a position beyond the pieces opened answered a value");
			++more_out;
		} else {
			if (v < EGDB_WIN || v > EGDB_DRAW)
				fail("a position within the pieces opened answered no value");
			++fewer_ok;
		}
	}
	printf("pieces: 7-piece position unavailable; opened %d: %d answered, %d unavailable\n",
		most - 1, fewer_ok, more_out);
	h->close(h);
	return failures != 0;
}

/* Resident anonymous memory (the heap; the library's code pages are shared with the file). */
static long resident_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kib = -1;
	while (f && fgets(line, sizeof line, f))
		if (strncmp(line, "RssAnon:", 8) == 0)
			kib = atol(line + 8);
	if (f)
		fclose(f);
	return kib;
}

static int cmd_memory(const char *dir, const char *file, int cache_mb)
{
	EGDB_DRIVER *h;
	long before;
	int i, round;
	load_samples(file);
	before = resident_kib();
	h = open_or_die(EGDB_NORMAL, 0, cache_mb, dir);
	for (round = 0; round < 2; ++round)
		for (i = 0; i < nsamples; ++i)
			h->lookup(h, &samples[i].normal, samples[i].color, 0);
	printf("%ld\n", resident_kib() - before);
	h->close(h);
	return 0;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";
	if (strcmp(cmd, "sample") == 0 && argc == 6)
		return cmd_sample(argv[2], argv[3], atoi(argv[4]), atoi(argv[5]));
	if (strcmp(cmd, "cl") == 0 && argc == 4)
		return cmd_cl(argv[2], argv[3]);
	if (strcmp(cmd, "pieces") == 0 && argc == 4)
		return cmd_pieces(argv[2], argv[3]);
	if (strcmp(cmd, "memory") == 0 && argc == 5)
		return cmd_memory(argv[2], argv[3], atoi(argv[4]));
	if (strcmp(cmd, "identify") == 0 && argc == 3) {
		EGDB_TYPE type = EGDB_CAKE_WLD;
		int pieces = -1, r = egdb_identify(argv[2], &type, &pieces);
		printf("%d %d %d\n", r, (int)type, pieces);
		return 0;
	}
	if (strcmp(cmd, "open") == 0 && argc == 3) {
		EGDB_DRIVER *h = egdb_open(EGDB_NORMAL, 0, 16, argv[2], print_msg);
		if (!h)
			return 3;
		return h->close(h);
	}
	if (strcmp(cmd, "values") == 0 && argc == 4) {
		/* Every sampled position's lookup() as a number, a line each (for MTC handles). */
		EGDB_DRIVER *h = open_or_die(EGDB_NORMAL, 0, 16, argv[2]);
		int i;
		load_samples(argv[3]);
		for (i = 0; i < nsamples; ++i)
			printf("%d\n", h->lookup(h, &samples[i].normal, samples[i].color, 0));
		h->close(h);
		return 0;
	}
	if (strcmp(cmd, "verify") == 0 && argc == 3) {
		EGDB_DRIVER *h = open_or_die(EGDB_NORMAL, 0, 16, argv[2]);
		int r = h->verify(h);
		h->close(h);
		return r;
	}
	fprintf(stderr, "usage: probe_test sample|cl|pieces|memory|identify|open|values|verify ... "
			"(see the comment at the top of probe_test.c)\n");
	return 2;
}
