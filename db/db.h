/* db.h — the map of db/: the tuning database. Every measurement the tuner makes
 * is kept in one SQLite file; best configs are looked up from it; JSON-lines
 * logs and other databases are brought in and validated as untrusted input.
 * Prefix: db_. Depends on support/ only (and on SQLite and jansson): records are
 * plain data — keys, configs as JSON text, costs — never IR objects.
 *
 * Errors: functions that can fail return false (or -1) and leave a message in
 * the handle (db_errmsg); messages name the file and say what to do. Strings
 * handed out by queries live in an arena the caller passes and frees.
 *
 * The schema is described in docs/database.md, the log format in
 * docs/log-format.md. One block per source file. */
#ifndef RT_DB_H
#define RT_DB_H

#include "support/support.h"

typedef struct db db;

/* ---- plain data: what a record holds ------------------------------------- */

/* The machine and code generator a record was measured for. Lookups match on
 * `name` (the canonical target string); the rest describes the host. */
typedef struct db_target {
    const char *name;   /* target string, e.g. "cpu -mcpu=skylake-avx512 -cores=8" */
    const char *cpu;    /* host CPU model ("" when unknown) */
    const char *isa;    /* ISA features, lowercase, space-separated ("" when unknown) */
    int cores;          /* cores the kernel may use (0 when unknown) */
    const char *os;     /* operating system and version ("" when unknown) */
} db_target;

/* A tuning task: one primitive function with its shapes, attributes and dtype. */
typedef struct db_workload {
    const char *key;    /* canonical workload key ("conv2d_nchwc|float32|data=1x64x56x56|...") */
    const char *tmpl;   /* schedule template name ("conv2d_nchwc.x86") */
    const char *args;   /* JSON object: shapes and attributes (NULL means {}) */
    double flops;       /* floating-point operations of one run (0 when unknown) */
} db_workload;

/* One measurement of one config. On input, strings may be NULL where "" is
 * meant; on output every string is set (arena-owned). */
typedef struct db_record {
    int64_t id;             /* row id in this database (output only) */
    db_workload workload;   /* what was tuned */
    db_target target;       /* where it was measured */
    int64_t config_index;   /* index of the config in its template's space */
    const char *config;     /* JSON object {"index": N, "entities": [...]} */
    bool is_default;        /* the config is the template's default (the speedup baseline) */
    const double *costs;    /* seconds of each repeat */
    size_t ncosts;          /* number of repeats (>= 1 unless error != NONE) */
    double mean_cost;       /* output only: mean of costs (0 when ncosts == 0) */
    su_merr error;          /* how the measurement ended */
    const char *error_msg;  /* the compiler's or runner's message ("" when none) */
    const char *counters;   /* JSON object: hardware counter name -> value (NULL means {}) */
    double build_time;      /* seconds spent compiling the candidate */
    double run_time;        /* seconds spent running it, repeats included */
    const char *tuner;      /* which tuner proposed it ("xgb", "random", "import", ...) */
    const char *session;    /* uuid of the tuning session, or NULL */
    const char *model;      /* model of that session ("" when unknown); output and import only */
    double timestamp;       /* when it was measured: seconds since 1970-01-01 UTC */
    const char *host;       /* host name of the measuring machine ("" when unknown) */
} db_record;

/* Counts reported by every path that brings records in. */
typedef struct db_counts {
    size_t added;        /* new records stored */
    size_t duplicates;   /* exact duplicates of stored records, skipped */
    size_t rejected;     /* invalid records, skipped (lenient mode only) */
} db_counts;

/* Called for each rejected record in lenient mode: index in the batch, reason. */
typedef void (*db_reject_fn)(void *ctx, size_t index, const char *why);

/* Checks a config against its template's space. db/ cannot: templates live
 * above it. The tuner installs one with db_set_config_check; until then only
 * the structure of configs is checked. Returns false and writes the reason to
 * why when the config does not fit. */
typedef bool (*db_config_check_fn)(void *ctx, const char *tmpl, const char *workload_key,
                                   int64_t config_index, const char *config_json, su_buf *why);

/* ---- schema.c: open, create, check, migrate -------------------------------- */

/* The current schema version (PRAGMA user_version of a database we write). */
#define DB_SCHEMA_VERSION 7
/* PRAGMA application_id of a relay-tune database: "RTDB". */
#define DB_APPLICATION_ID 0x52544442

enum {
    DB_OPEN_NO_CREATE = 1,   /* fail when the file does not exist */
    DB_OPEN_READONLY = 2,    /* open read-only (an older schema is read as is, not migrated) */
    DB_OPEN_NO_CHECK = 4,    /* skip PRAGMA quick_check (tests and benchmarks only) */
};

typedef struct db_open_opts {
    int flags;            /* DB_OPEN_* */
    int busy_ms;          /* how long to wait for another writer (0 means 30000) */
    int upto_version;     /* migrate only up to this version (tests; 0 means current) */
} db_open_opts;

/* Opens or creates a database; NULL with a message in err when the file is not
 * a relay-tune database, is corrupt (quick_check), is newer than this program,
 * or cannot be opened. ":memory:" opens a private in-memory database. */
db *db_open(const char *path, const db_open_opts *opts, su_buf *err);
/* Closes the handle (NULL is fine). */
void db_close(db *d);
/* The last error message ("" when none). */
const char *db_errmsg(const db *d);
/* The path the database was opened with. */
const char *db_path(const db *d);
/* The schema version of the open file. */
int db_schema_version(const db *d);
/* Runs PRAGMA quick_check; false with the first problem in db_errmsg. */
bool db_quick_check(db *d);
/* Installs the template check applied to every record brought in (NULL removes it). */
void db_set_config_check(db *d, db_config_check_fn fn, void *ctx);

/* ---- check.c: what makes a record valid ------------------------------------- */

/* Checks a record's fields: types, ranges, JSON structure of config, args and
 * counters (not the template hook). False with the reason in why. */
bool db_record_check(const db_record *r, su_buf *why);

/* ---- records.c: storing and looking up measurements ------------------------ */
/* Adds n records in one transaction, skipping exact duplicates. With on_reject
 * NULL the batch is all or nothing: an invalid record fails it (false, message
 * names the record). With on_reject set, invalid records are reported, counted
 * and skipped. False on a database error, with nothing stored. counts may be NULL. */
bool db_add_records(db *d, const db_record *recs, size_t n, db_counts *counts,
                    db_reject_fn on_reject, void *ctx);
/* The best successful record for (workload key, target name): lowest mean cost,
 * ties broken by lower config index, then earlier timestamp, then content
 * digest — the same answer whatever order records arrived in. 1 found, 0 none,
 * -1 error. */
int db_best(db *d, const char *key, const char *target, su_arena *a, db_record *out);
/* Up to k best successful records in the order of db_best; *out in the arena. */
bool db_top_k(db *d, const char *key, const char *target, size_t k, su_arena *a, db_record **out,
              size_t *n);
/* Up to k best successful records of a workload measured on any target
 * whose ISA features are `isa`, in db_best's order (the fallback for a
 * target string never tuned). */
bool db_top_k_isa(db *d, const char *key, const char *isa, size_t k, su_arena *a, db_record **out, size_t *n);
/* Every record of a workload (failures included, for cost-model training), in
 * insertion order; target NULL means any target. */
bool db_workload_records(db *d, const char *key, const char *target, su_arena *a, db_record **out,
                         size_t *n);
/* The union of two workload args objects that agree on every field both
 * have, canonical, in a; NULL when they disagree. A key known with other
 * args takes records whose args merge with its own (a newer writer adds
 * fields, "func" for one; an older one lacks them), and keeps the union. */
const char *db_args_merge(const char *stored, const char *incoming, su_arena *a);
/* Records for transfer learning: those of template tmpl measured on targets
 * whose ISA features are isa (NULL: any), except workload key's own on
 * target `target` (NULL: key's records on every target are kept). The most
 * recent first, at most limit (0: no limit). */
bool db_similar_records(db *d, const char *tmpl, const char *key, const char *target, const char *isa, size_t limit,
                        su_arena *a, db_record **out, size_t *n);

/* Which records db_foreach_record visits (NULL fields match anything). */
typedef struct db_filter {
    const char *key;      /* workload key */
    const char *target;   /* target name */
} db_filter;
/* Calls fn on each matching record in insertion order; the record's strings
 * live until fn returns. fn returns false to stop. False on a database error. */
bool db_foreach_record(db *d, const db_filter *f, bool (*fn)(void *ctx, const db_record *r), void *ctx);

/* ---- sessions.c: tuning-session bookkeeping -------------------------------- */

/* A tuning session: one run of the tuner over a model. */
typedef struct db_session {
    const char *uuid;      /* 36-character id, unique across machines */
    const char *model;     /* model file or name */
    const char *target;    /* target name ("" when unknown) */
    double started;        /* seconds since the epoch */
    double ended;          /* 0 while running (or when unknown) */
    int64_t trials;        /* measurements made */
    const char *command;   /* command line that started it */
    const char *host;      /* host name */
} db_session;

/* Starts a session (started = now); writes its new uuid (37 bytes with NUL). */
bool db_session_begin(db *d, const char *model, const char *target, const char *command,
                      char uuid[37]);
/* Ends a session: sets the end time and trial count. False when unknown. */
bool db_session_end(db *d, const char *uuid, int64_t trials);
/* Records that session uuid's model calls the task of workload hash
 * hashes[i] calls[i] times (n tasks; a task given again keeps the newest). */
bool db_session_set_tasks(db *d, const char *uuid, size_t n, const char *const *hashes, const int *calls);
/* Looks a session up: 1 found, 0 unknown, -1 error. */
int db_session_get(db *d, const char *uuid, su_arena *a, db_session *out);
/* Every session, oldest first. */
bool db_sessions(db *d, su_arena *a, db_session **out, size_t *n);
/* True when s is a well-formed uuid (8-4-4-4-12 lowercase hex digits). */
bool db_uuid_valid(const char *s);

/* ---- benchmarks.c: benchmark results ------------------------------------------ */

/* One latency measurement of a compiled model, or of one kernel of it
 * (benchmarks/bench_kernels: model names the task, docs/benchmarks.md). */
typedef struct db_bench {
    const char *model;         /* model file or name */
    const char *target;        /* target name */
    const char *config_source; /* where the configs came from ("tuned", "default", a db path) */
    double mean, median, min, max, stddev;   /* latency statistics, seconds */
    int64_t repeats;           /* runs timed */
    const char *commit;        /* source revision of relay-tune ("" when unknown) */
    double timestamp;          /* seconds since the epoch */
    const char *host;          /* host name of the machine that ran it ("" when unknown) */
    const char *isa;           /* the host's widest vector ISA, "avx512", "avx2", "sse" ("" when unknown) */
    double peak_gflops;        /* the host's FP32 FMA peak on `threads` threads, measured in the same run (0: unknown) */
    int64_t threads;           /* threads of the run and of the peak (0: unknown) */
} db_bench;

/* Stores a benchmark result (validated: finite, ordered statistics). */
bool db_add_bench(db *d, const db_bench *b);
/* Stores n results in one transaction: all, or none when one is invalid. */
bool db_add_benches(db *d, const db_bench *b, size_t n);
/* Benchmark results of a model (NULL: all), newest first. */
bool db_benches(db *d, const char *model, su_arena *a, db_bench **out, size_t *n);
/* Parses one result from a JSON object (fields as db_bench's, "commit",
 * "timestamp", "host", "isa", "peak_gflops" and "threads" optional; unknown fields refused); strings in the
 * arena. False with the reason in why. Values are checked by db_add_bench. */
bool db_bench_parse(const char *line, size_t len, su_arena *a, db_bench *out, su_buf *why);
/* Prints results as a table for people (times in ms), or as a JSON array of
 * the objects db_bench_parse reads when json. */
void db_benches_print(const db_bench *rows, size_t n, bool json, su_buf *out);

/* ---- log.c: JSON-lines export and import ------------------------------------ */

/* The version of the log format written (the "v" field of each line). */
#define DB_LOG_VERSION 1
/* Longest line import accepts, in bytes. */
#define DB_LOG_MAX_LINE (1 << 20)

/* Appends one record as one JSON line (with the newline). */
void db_log_format(const db_record *r, su_buf *out);
/* Parses one line into a record whose strings and costs live in the arena.
 * Rejects (false, reason in why) bad JSON, wrong types, missing or unknown
 * fields, unknown versions and values out of range. */
bool db_log_parse(const char *line, size_t len, su_arena *a, db_record *out, su_buf *why);
/* Writes every record matching f as JSON lines; *written counts them. */
bool db_export(db *d, const db_filter *f, FILE *out, size_t *written);
/* Reads a log, storing valid lines in batches (each batch one transaction) and
 * counting duplicates and rejected lines; each rejection is passed to on_reject
 * with its 1-based line number. name is used in messages. False only on a read
 * or database error (records of batches already committed stay). */
bool db_import(db *d, FILE *in, const char *name, db_counts *counts, db_reject_fn on_reject, void *ctx);

/* ---- merge.c: merging another database -------------------------------------- */

/* Brings every record, session and benchmark result of the database at
 * other_path in, validating each record as untrusted input. The other file is
 * opened read-only and checked like any database. */
bool db_merge(db *d, const char *other_path, db_counts *counts, db_reject_fn on_reject, void *ctx);

/* ---- query.c: summaries for people and scripts ------------------------------ */

/* What `relay-tune db stats` shows. */
typedef struct db_stats {
    int64_t workloads, records, ok_records, targets, sessions, benches;
    int64_t errors[SU_MERR_COUNT];   /* records by error code */
    int64_t file_bytes;              /* size of the database file */
    int schema_version;
} db_stats;

/* Counts records, workloads, targets, sessions and errors by kind. */
bool db_stats_get(db *d, db_stats *out);
/* Prints stats as text for people, or as one JSON object when json. */
void db_stats_print(const db *d, const db_stats *s, bool json, su_buf *out);

/* The best config of one workload on one target, with its context. */
typedef struct db_best_row {
    db_record best;        /* the best record (db_best's order) */
    double gflops;         /* workload flops / best mean cost / 1e9 (0 when flops unknown) */
    double speedup;        /* default config's cost / best cost; 0 when no default measured */
    int64_t records;       /* records of the workload on that target, failures included */
} db_best_row;

/* The best record of every (workload, target name) pair, optionally of one
 * target, ordered by key then target. */
bool db_best_all(db *d, const char *target, su_arena *a, db_best_row **out, size_t *n);
/* Prints best rows as a table for people, or as a JSON array when json. */
void db_best_print(const db_best_row *rows, size_t n, bool json, su_buf *out);
/* Deletes failed records measured more than days ago (relative to now), then
 * vacuums. *deleted counts them. */
bool db_gc(db *d, double days, double now, int64_t *deleted);

/* ---- claims.c: configs claimed by running tuners ---------------------------- */

/* What db_claim found for one config. */
enum { DB_CLAIM_OURS = 0, DB_CLAIM_TAKEN = 1, DB_CLAIM_RECORDED = 2 };
/* A claim owner's name for this process: "host:pid:session". */
void db_claim_owner(const char *session, char *out, size_t n);
/* Claims record-JSON configs of workload key on target for owner until
 * expires, in one transaction (void claims, expired at now or of exited
 * processes of this host, are dropped first): state[i] is DB_CLAIM_OURS
 * (claimed, or our claim renewed), _TAKEN (another owner's live claim) or
 * _RECORDED (a record of it exists). False on an error, nothing claimed. */
bool db_claim(db *d, const char *key, const char *target, const char *const *configs, size_t n,
              const char *owner, double now, double expires, int *state);
/* Drops every claim of owner. */
bool db_release_claims(db *d, const char *owner);
/* The number of claims held (live or not); -1 on an error. */
int64_t db_claims_count(db *d);

/* ---- confirmations.c: a task's best configs re-measured side by side ---------- */

/* One re-measured config of a confirmation. */
typedef struct db_confirmed {
    int64_t config_index;
    const char *config;     /* record JSON (canonical when read back) */
    double *costs;          /* seconds, one per round */
    size_t ncosts;
    double median;          /* of costs */
    double timestamp;       /* when the confirmation was stored (read back only) */
} db_confirmed;

/* The median of n values (NAN when n is 0). */
double db_median(const double *v, size_t n);
/* Stores a confirmation of workload key on target t made by session (a uuid,
 * or NULL): rows best first (ranks 1, 2, ...), in one transaction; false
 * with a message (nothing stored) on bad rows or a database error. */
bool db_add_confirmation(db *d, const char *key, const db_target *t, const char *session, const db_confirmed *rows,
                         size_t n);
/* The latest confirmation of key on target t (its string and ISA), best
 * first, in the arena; *n 0 when there is none. */
bool db_confirmed_latest(db *d, const char *key, const db_target *t, su_arena *a, db_confirmed **out, size_t *n);

/* ---- dashboard_query.c: read-only JSON views for the dashboard ------------- */
/* Each appends one JSON document to out (strings escaped as JSON); never
 * writes the database. now (seconds since the epoch) decides whether a
 * session without an end time is still live. Fields: docs/dashboard.md. */

/* Every session, newest first: its row, records, failures by kind, rate, live. */
bool db_dash_sessions(db *d, double now, su_buf *out);
/* One session with its tasks (default and best cost) and failure messages:
 * 1, 0 when no session has that uuid, -1 on error. */
int db_dash_session(db *d, const char *uuid, double now, su_buf *out);
/* The measurements of a session with record id above after, in order, each
 * numbered from the session's first: 1, 0 unknown session, -1 error. */
int db_dash_measurements(db *d, const char *uuid, int64_t after, su_buf *out);
/* The workload with this 16-digit hash on target (NULL: the target with the
 * most records): every successful config best first, with knobs, GFLOP/s
 * and speedup over the default: 1, 0 unknown hash, -1 error. */
int db_dash_task(db *d, const char *hash, const char *target, su_buf *out);
/* Benchmark results oldest first: whole models, and kernels with GFLOP/s. */
bool db_dash_benchmarks(db *d, su_buf *out);

/* ---- internal to db/ (not for other parts) ----------------------------------- */

typedef struct sqlite3 sqlite3;
typedef struct sqlite3_stmt sqlite3_stmt;

/* Cached prepared statements, one per fixed SQL text. */
typedef enum {
    DB_ST_TARGET_FIND, DB_ST_TARGET_ADD, DB_ST_WORKLOAD_FIND, DB_ST_WORKLOAD_ADD,
    DB_ST_SESSION_FIND, DB_ST_SESSION_ADD, DB_ST_DUP_FIND, DB_ST_RECORD_ADD,
    DB_ST_BEST, DB_ST_TARGET_IDS, DB_ST_CLAIM_EXPIRE, DB_ST_CLAIM_OWNERS, DB_ST_CLAIM_RECORDED,
    DB_ST_CLAIM_PUT, DB_ST_CLAIM_RELEASE, DB_ST_COUNT
} db_stmt_id;

struct db {
    sqlite3 *sql;                  /* the connection */
    char *path;                    /* as given to db_open */
    su_buf err;                    /* last error message */
    int version;                   /* schema version of the file */
    sqlite3_stmt *st[DB_ST_COUNT]; /* prepared on first use */
    su_map targets;                /* target identity text -> db_cached (committed rows only) */
    su_map workloads;              /* workload key -> db_cached */
    su_map sessions;               /* session uuid -> db_cached */
    su_arena cache;                /* keys and values of the three maps */
    su_buf args_raw, args_canon;   /* the last args text canonicalized, and the result */
    su_buf last_target;            /* identity text of the target resolved last ... */
    int64_t last_target_id;        /* ... and its row id (forgotten with the caches) */
    su_buf last_wkey, last_wtmpl, last_wargs;  /* the workload resolved last (key, template, args) ... */
    double last_wflops;            /* ... its flops ... */
    int64_t last_wid;              /* ... and its row id; 0 when none */
    db_config_check_fn check;      /* template check, or NULL */
    void *check_ctx;               /* its context */
};

/* A row id remembered with a digest of the row's description, so that a
 * conflicting description is noticed without a query. */
typedef struct db_cached {
    int64_t id;
    uint64_t desc;
} db_cached;

/* Sets the handle's error message (printf-style); returns false. */
bool db_fail(db *d, const char *fmt, ...) SU_PRINTF(2, 3);
/* Sets the error from SQLite's message for rc, prefixed with what was being done. */
bool db_fail_sql(db *d, int rc, const char *doing);
/* The cached statement for id, reset and with bindings cleared; NULL on error. */
sqlite3_stmt *db_stmt(db *d, db_stmt_id id);
/* Runs SQL without results; false with a message. */
bool db_exec(db *d, const char *sql);
/* BEGIN IMMEDIATE (waiting up to busy_ms for other writers), COMMIT, ROLLBACK.
 * Rollback forgets the id caches, which may hold rows of the dropped transaction. */
bool db_begin(db *d);
bool db_commit(db *d);
void db_rollback(db *d);
/* Forgets the id caches. */
void db_cache_clear(db *d);
/* Reads column i as a string copied into the arena ("" for NULL). */
const char *db_col_str(sqlite3_stmt *st, int i, su_arena *a);
/* This machine's host name into out ("" when unknown). */
void db_host_name(char *out, size_t n);
/* Fills a record from a row of the DB_RECORD_COLUMNS select. */
void db_row_to_record(sqlite3_stmt *st, su_arena *a, db_record *r);
/* Columns of a full record, for "SELECT " DB_RECORD_COLUMNS " FROM " DB_RECORD_FROM. */
#define DB_RECORD_COLUMNS \
    "r.id, w.key, w.template, w.args, w.flops, t.target, t.cpu, t.isa, t.cores, t.os, " \
    "r.config_index, r.config, r.is_default, r.costs, r.mean_cost, r.error, r.error_msg, " \
    "r.counters, r.build_time, r.run_time, r.tuner, s.uuid, s.model, r.timestamp, r.host"
#define DB_RECORD_FROM \
    "records r JOIN workloads w ON w.id = r.workload_id JOIN targets t ON t.id = r.target_id " \
    "LEFT JOIN sessions s ON s.id = r.session_id"
/* The best-first order of db_best: the tie-break that makes it stable. */
#define DB_BEST_ORDER "r.mean_cost, r.config_index, r.timestamp, r.digest, r.id"
/* A record's fields in canonical form, as stored (check.c). */
typedef struct db_canon {
    const char *args, *config, *counters, *costs;  /* canonical JSON texts */
    double mean;                                    /* mean cost (0 when no costs) */
    double flops, build_time, run_time;             /* with -0 made +0 */
    uint64_t digest;                                /* content digest (db_digest) */
} db_canon;
/* db_record_check producing the canonical form; d (may be NULL) memoizes args. */
bool db_check_record(db *d, const db_record *r, su_arena *a, db_canon *c, su_buf *why);
/* The content digest: every stored field except ids and the session. */
uint64_t db_digest(const db_record *r, const db_canon *c);
/* FNV-1a of a string with its terminator, and of a double's bits, continuing h. */
uint64_t db_hash_str(uint64_t h, const char *s);
uint64_t db_hash_f64(uint64_t h, double v);
/* Canonical JSON text of a JSON value given as text (sorted keys, compact),
 * in the arena; NULL with the reason in why when it is not JSON of the kind
 * expected ('o' object, 'a' array). */
const char *db_json_canon(const char *text, int kind, su_arena *a, su_buf *why);
/* A record's config text in the canonical form records store (its index read
 * from the text), in the arena; NULL with the reason in why. */
const char *db_config_canon(const char *text, su_arena *a, su_buf *why);
/* Appends s as a JSON string (s is valid UTF-8; quotes and controls escaped). */
void db_json_put_str(su_buf *b, const char *s);
/* Appends a finite number with the fewest of 15/16/17 digits that read back exactly. */
void db_json_put_num(su_buf *b, double v);
/* Formats costs as a JSON array of numbers that read back exactly. */
void db_costs_format(const double *costs, size_t n, su_buf *out);
/* Parses a costs array written by db_costs_format into the arena. */
bool db_costs_parse(const char *text, su_arena *a, double **costs, size_t *n);
/* Generates a random uuid (version 4). */
void db_uuid_new(char out[37]);
/* Seconds since the epoch, now. */
double db_now(void);

#endif
