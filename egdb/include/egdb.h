/*
 * egdb.h: nowdb's English-checkers endgame databases behind the egdb driver interface
 * that checkers engines and GUIs probe through (KingsRow, Cake, CheckerBoard ...).
 *
 * An engine written against KingsRow's egdb.h compiles against this header unchanged, as C
 * or C++, and links with nowdb's library instead:
 *
 *     cc engine.c -I nowdb/egdb/include -L nowdb/target/release -legdb
 *
 * (libegdb.so; or libegdb.a with -lpthread -ldl -lm). The names, signatures, values and
 * bit layouts below are the interface; the comments say what nowdb's driver does.
 *
 * The directory given to egdb_identify() and egdb_open() is a nowdb database: a site's db/
 * directory, or a copy of it alone (`dbprobe --site SITE --ship DIR`). It holds VERSION
 * and one <slice>.ndb file per slice. A database built with moves to conversion (`--mtc`)
 * also has db/mtc/ (VERSION and one <slice>.mtc per slice): given that directory,
 * egdb_identify() reports EGDB_KINGSROW32_MTC and egdb_open() opens an MTC handle, which
 * reads the win/loss/draw values from db/, its parent.
 *
 * Written for nowdb (MIT OR Apache-2.0); no code of KingsRow's or Cake's is in it.
 */
#ifndef NOWDB_EGDB_H
#define NOWDB_EGDB_H

#ifdef __cplusplus
extern "C" {
#endif

/* Exported by libegdb; engines include this header to import them. */
#if defined(_WIN32)
#define EGDB_API
#define EGDB_CDECL __cdecl
#else
#define EGDB_API __attribute__((visibility("default")))
#define EGDB_CDECL
#endif

/* The side to move, lookup()'s color argument. */
enum EGDB_COLOR {
	EGDB_BLACK = 0,
	EGDB_WHITE = 1
};

/* What lookup() returns. */
enum LOOKUP_VALUE {
	EGDB_SUBDB_UNAVAILABLE = -2, /* more pieces than opened, or a slice the directory lacks */
	EGDB_NOT_IN_CACHE = -1,      /* cl != 0 and a block the answer needs is not in memory */
	EGDB_UNKNOWN = 0,            /* not a legal position, or the database could not be read */
	EGDB_WIN = 1,                /* for the side to move */
	EGDB_LOSS = 2,
	EGDB_DRAW = 3,
	EGDB_DRAW_OR_LOSS = 4,       /* never returned by nowdb: its values are exact */
	EGDB_WIN_OR_DRAW = 5         /* never returned by nowdb */
};

/* What lookup() returns on an MTC handle besides the plies to conversion: MTC_UNKNOWN for
 * a draw, MTC_LESS_THAN_THRESHOLD for a won or lost position fewer than MTC_THRESHOLD plies
 * from a conversion (a capture or a man's move), else the plies rounded down to even (the
 * true number is that or one more, as with KingsRow's). Capture positions have values too
 * (1: every move captures). */
enum MTC_VALUE {
	MTC_UNKNOWN = 0,
	MTC_LESS_THAN_THRESHOLD = 1,
	MTC_THRESHOLD = 10
};

/* The kinds of database egdb_identify() can report. A nowdb WLD database reports
 * EGDB_KINGSROW32_WLD: exact win/loss/draw values, English rules; its mtc/ directory
 * EGDB_KINGSROW32_MTC. */
typedef enum {
	EGDB_KINGSROW_WLD = 0,
	EGDB_KINGSROW_MTC,
	EGDB_CAKE_WLD,
	EGDB_CHINOOK_WLD,
	EGDB_KINGSROW32_WLD,
	EGDB_KINGSROW32_MTC,
	EGDB_CHINOOK_ITALIAN_WLD,
	EGDB_KINGSROW32_ITALIAN_WLD,
	EGDB_KINGSROW32_ITALIAN_MTC,
	EGDB_KINGSROW32_WLD_TUN,
	EGDB_KINGSROW32_ITALIAN_WLD_TUN,
	EGDB_KINGSROW_DTW,
	EGDB_KINGSROW_ITALIAN_DTW
} EGDB_TYPE;

/* How the positions given to lookup() are laid out (egdb_open()'s first argument). */
typedef enum {
	EGDB_NORMAL = 0,   /* EGDB_NORMAL_BITBOARD */
	EGDB_ROW_REVERSED  /* EGDB_ROW_REVERSED_BITBOARD */
} EGDB_BITBOARD_TYPE;

/* Counts since egdb_open() or reset_stats(). */
typedef struct {
	unsigned int lru_cache_hits;          /* block reads answered by the cache */
	unsigned int lru_cache_loads;         /* blocks read from disk */
	unsigned int autoload_hits;           /* always 0: nowdb preloads nothing */
	unsigned int db_requests;             /* lookup() calls */
	unsigned int db_returns;              /* of them answered win, loss or draw */
	unsigned int db_not_present_requests; /* of them answered EGDB_SUBDB_UNAVAILABLE */
} EGDB_STATS;

/* KingsRow's layout: bit n-1 is square n in the standard numbering 1..32, where Black
 * starts on 1..12 and White on 21..32. king has a bit for every king of either colour. */
typedef struct {
	unsigned int black;
	unsigned int white;
	unsigned int king;
} EGDB_NORMAL_BITBOARD;

/* Cake's layout: the order of the four squares of each row reversed, so that bit 3 is
 * square 1, bit 2 square 2, bit 1 square 3, bit 0 square 4, bit 7 square 5, ... (the
 * layout nowdb computes in, so it costs no conversion). */
typedef struct {
	unsigned int black_man;
	unsigned int black_king;
	unsigned int white_man;
	unsigned int white_king;
} EGDB_ROW_REVERSED_BITBOARD;

typedef union {
	EGDB_NORMAL_BITBOARD normal;
	EGDB_ROW_REVERSED_BITBOARD row_reversed;
} EGDB_BITBOARD;

/* The handle egdb_open() returns. lookup() may be called from any number of threads at
 * once; close() only when no other call on the handle is running.
 *
 * lookup(handle, position, color, cl): the value of position for color to move (on an MTC
 *   handle, its MTC_VALUE or plies, as above).
 *   cl != 0 (conditional lookup): answer only from memory, else EGDB_NOT_IN_CACHE.
 *   Positions where the side to move has a capture, and in some slices positions where
 *   the other side threatens one, are not stored. KingsRow's drivers return an arbitrary
 *   value where either side has a capture; nowdb returns the true value, found by
 *   searching the moves through the database (with cl != 0, every lookup of that search
 *   must be in memory). What it costs, warm, one thread, random 6-piece positions
 *   (egdb/benches/lookup.rs): a quiet position (no capture for either side) 0.34 us; a
 *   capture position 0.29 us (its captures lead into smaller slices, mostly cached); a
 *   non-stored threat, searched one move deep, about 3 us (7 % of non-capture positions).
 * reset_stats(handle): sets the counts to 0.
 * get_stats(handle): the counts; the pointer is valid until the next get_stats or close.
 * verify(handle): reads every block of every opened file and checks its CRC; 0 when all
 *   are right, 1 when any is damaged (each damaged file named through msg_fn).
 * close(handle): frees the handle and everything it holds; returns 0.
 */
typedef struct egdb_driver {
	int (EGDB_CDECL *lookup)(struct egdb_driver *handle, EGDB_BITBOARD *position, int color, int cl);
	void (EGDB_CDECL *reset_stats)(struct egdb_driver *handle);
	EGDB_STATS *(EGDB_CDECL *get_stats)(struct egdb_driver *handle);
	int (EGDB_CDECL *verify)(struct egdb_driver *handle);
	int (EGDB_CDECL *close)(struct egdb_driver *handle);
	void *internal_data;
} EGDB_DRIVER;

/* Opens the database in directory for probing: every slice of at most pieces pieces (the
 * others answer EGDB_SUBDB_UNAVAILABLE), within cache_mb MiB of memory in all (the files'
 * indexes, then a block cache in the rest). Start-up and error messages go to msg_fn (may
 * be NULL), each a line ending in '\n'. NULL, with the reason through msg_fn, when the
 * directory is missing, not a nowdb database, or a file header is damaged. */
EGDB_API EGDB_DRIVER *EGDB_CDECL egdb_open(EGDB_BITBOARD_TYPE bitboard_type,
		int pieces,
		int cache_mb,
		const char *directory,
		void (EGDB_CDECL *msg_fn)(char *));

/* Identifies the database in directory: 0, with *egdb_type (EGDB_KINGSROW32_WLD) and
 * *max_pieces (the most pieces of any slice) set; non-zero when there is none, and then
 * both are left as they were. */
EGDB_API int EGDB_CDECL egdb_identify(const char *directory, EGDB_TYPE *egdb_type, int *max_pieces);

/* The driver's version: major * 10000 + minor * 100 + patch of nowdb. */
EGDB_API extern unsigned int egdb_version;

#ifdef __cplusplus
}
#endif

#endif /* NOWDB_EGDB_H */
