/* schema.c — opening a tuning database: refusing files that are not ours or
 * are damaged, creating the schema, and migrating older files forward.
 *
 * A relay-tune database is an SQLite file whose header carries our
 * application_id ("RTDB") and whose user_version is the schema version. A
 * file with another application_id, or with tables but no application_id, is
 * someone else's and is never touched. Every open runs PRAGMA quick_check, so
 * a damaged file is refused with a message before anything is read from it or
 * written to it. Migrations are a list of SQL steps, each taking the file
 * from version N-1 to N inside one transaction with the version bump, so a
 * migration is never half applied. The file runs in WAL mode (readers never
 * block the writer), with synchronous=FULL (a committed batch survives a
 * crash of the process and of the machine) and a busy timeout (two tuners on
 * one file take turns instead of failing). */
#include <errno.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>

#include "db/db.h"

/* Each step takes the schema from version i to i + 1; see docs/database.md. */
static const char *const migrations[DB_SCHEMA_VERSION] = {
    /* 1: targets, workloads, sessions and records */
    "CREATE TABLE targets ("
    "  id INTEGER PRIMARY KEY,"
    "  target TEXT NOT NULL,"
    "  cpu TEXT NOT NULL,"
    "  isa TEXT NOT NULL,"
    "  cores INTEGER NOT NULL,"
    "  os TEXT NOT NULL,"
    "  UNIQUE (target, cpu, isa, cores, os));"
    "CREATE TABLE workloads ("
    "  id INTEGER PRIMARY KEY,"
    "  key TEXT NOT NULL UNIQUE,"
    "  hash TEXT NOT NULL,"
    "  template TEXT NOT NULL,"
    "  args TEXT NOT NULL,"
    "  flops REAL NOT NULL);"
    "CREATE INDEX workloads_template ON workloads (template);"
    "CREATE TABLE sessions ("
    "  id INTEGER PRIMARY KEY,"
    "  uuid TEXT NOT NULL UNIQUE,"
    "  model TEXT NOT NULL,"
    "  target TEXT NOT NULL,"
    "  started REAL NOT NULL,"
    "  ended REAL,"
    "  trials INTEGER NOT NULL DEFAULT 0,"
    "  command TEXT NOT NULL,"
    "  host TEXT NOT NULL);"
    "CREATE TABLE records ("
    "  id INTEGER PRIMARY KEY,"
    "  workload_id INTEGER NOT NULL REFERENCES workloads (id),"
    "  target_id INTEGER NOT NULL REFERENCES targets (id),"
    "  config_index INTEGER NOT NULL,"
    "  config TEXT NOT NULL,"
    "  is_default INTEGER NOT NULL,"
    "  costs TEXT NOT NULL,"
    "  mean_cost REAL,"
    "  error INTEGER NOT NULL,"
    "  error_msg TEXT NOT NULL,"
    "  counters TEXT NOT NULL,"
    "  build_time REAL NOT NULL,"
    "  run_time REAL NOT NULL,"
    "  tuner TEXT NOT NULL,"
    "  session_id INTEGER REFERENCES sessions (id),"
    "  timestamp REAL NOT NULL,"
    "  host TEXT NOT NULL,"
    "  digest INTEGER NOT NULL);"
    "CREATE INDEX records_lookup ON records (workload_id, target_id, error, mean_cost, timestamp);",
    /* 2: end-to-end benchmark results */
    "CREATE TABLE benchmarks ("
    "  id INTEGER PRIMARY KEY,"
    "  model TEXT NOT NULL,"
    "  target TEXT NOT NULL,"
    "  config_source TEXT NOT NULL,"
    "  mean REAL NOT NULL,"
    "  median REAL NOT NULL,"
    "  min REAL NOT NULL,"
    "  max REAL NOT NULL,"
    "  stddev REAL NOT NULL,"
    "  repeats INTEGER NOT NULL,"
    "  commit_id TEXT NOT NULL,"
    "  timestamp REAL NOT NULL,"
    "  UNIQUE (model, target, config_source, timestamp, mean, median, min, max, stddev,"
    "          repeats, commit_id));"
    "CREATE INDEX benchmarks_model ON benchmarks (model, timestamp);",
    /* 3: the host of each benchmark result ("" for results from before) */
    "ALTER TABLE benchmarks ADD COLUMN host TEXT NOT NULL DEFAULT '';",
    /* 4: the host's ISA and FMA peak, and the threads, of each benchmark
     * result ('' and 0 for results from before) */
    "ALTER TABLE benchmarks ADD COLUMN isa TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE benchmarks ADD COLUMN peak_gflops REAL NOT NULL DEFAULT 0;"
    "ALTER TABLE benchmarks ADD COLUMN threads INTEGER NOT NULL DEFAULT 0;",
    /* 5: how often the session's model calls each task (workload hash), so
     * that the model's estimated latency weighs each task by its calls */
    "CREATE TABLE session_tasks ("
    "  session_id INTEGER NOT NULL REFERENCES sessions (id),"
    "  hash TEXT NOT NULL,"
    "  calls INTEGER NOT NULL,"
    "  PRIMARY KEY (session_id, hash));",
    /* 6: configs claimed by a running tuner (claims.c), so that two tuners
     * sharing the file never measure one config twice */
    "CREATE TABLE claims ("
    "  key TEXT NOT NULL,"
    "  target TEXT NOT NULL,"
    "  config TEXT NOT NULL,"
    "  owner TEXT NOT NULL,"
    "  expires REAL NOT NULL,"
    "  PRIMARY KEY (key, target, config));"
    "CREATE INDEX claims_owner ON claims (owner);",
    /* 7: a task's best configs re-measured side by side (confirmations.c) */
    "CREATE TABLE confirmations ("
    "  id INTEGER PRIMARY KEY,"
    "  key TEXT NOT NULL,"
    "  target TEXT NOT NULL,"
    "  isa TEXT NOT NULL,"
    "  rank INTEGER NOT NULL,"
    "  config_index INTEGER NOT NULL,"
    "  config TEXT NOT NULL,"
    "  costs TEXT NOT NULL,"
    "  median REAL NOT NULL,"
    "  session_id INTEGER REFERENCES sessions (id),"
    "  timestamp REAL NOT NULL);"
    "CREATE INDEX confirmations_lookup ON confirmations (key, target, isa, timestamp);",
};

/* SQL text of each cached statement (db_stmt_id order). */
static const char *const stmt_sql[DB_ST_COUNT] = {
    [DB_ST_TARGET_FIND] = "SELECT id FROM targets WHERE target = ?1 AND cpu = ?2 AND isa = ?3 "
                          "AND cores = ?4 AND os = ?5",
    [DB_ST_TARGET_ADD] = "INSERT INTO targets (target, cpu, isa, cores, os) VALUES (?1, ?2, ?3, ?4, ?5)",
    [DB_ST_WORKLOAD_FIND] = "SELECT id, template, args, flops FROM workloads WHERE key = ?1",
    [DB_ST_WORKLOAD_ADD] = "INSERT INTO workloads (key, hash, template, args, flops) "
                           "VALUES (?1, ?2, ?3, ?4, ?5)",
    [DB_ST_SESSION_FIND] = "SELECT id, model FROM sessions WHERE uuid = ?1",
    [DB_ST_SESSION_ADD] = "INSERT INTO sessions (uuid, model, target, started, command, host) "
                          "VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    [DB_ST_DUP_FIND] = "SELECT workload_id, target_id, config_index, config, is_default, costs, error, "
                       "error_msg, counters, build_time, run_time, tuner, timestamp, host "
                       "FROM records WHERE workload_id = ?2 AND target_id = ?3 AND error = ?4 AND mean_cost IS ?5 "
                       "AND timestamp = ?6 AND digest = ?1",
    [DB_ST_RECORD_ADD] = "INSERT INTO records (workload_id, target_id, config_index, config, is_default, "
                         "costs, mean_cost, error, error_msg, counters, build_time, run_time, tuner, "
                         "session_id, timestamp, host, digest) "
                         "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
    [DB_ST_BEST] = "SELECT " DB_RECORD_COLUMNS ", r.digest FROM " DB_RECORD_FROM
                   " WHERE r.workload_id = ?1 AND r.target_id = ?2 AND r.error = 0"
                   " ORDER BY " DB_BEST_ORDER " LIMIT ?3",
    [DB_ST_TARGET_IDS] = "SELECT id FROM targets WHERE target = ?1 ORDER BY id",
    [DB_ST_CLAIM_EXPIRE] = "DELETE FROM claims WHERE expires < ?1",
    [DB_ST_CLAIM_OWNERS] = "SELECT DISTINCT owner FROM claims",
    [DB_ST_CLAIM_RECORDED] = "SELECT 1 FROM records r JOIN workloads w ON w.id = r.workload_id "
                             "JOIN targets t ON t.id = r.target_id WHERE w.key = ?1 AND t.target = ?2 "
                             "AND r.config = ?3 LIMIT 1",
    [DB_ST_CLAIM_PUT] = "INSERT INTO claims (key, target, config, owner, expires) VALUES (?1, ?2, ?3, ?4, ?5) "
                        "ON CONFLICT (key, target, config) DO UPDATE SET expires = excluded.expires "
                        "WHERE owner = excluded.owner",
    [DB_ST_CLAIM_RELEASE] = "DELETE FROM claims WHERE owner = ?1",
};

bool db_fail(db *d, const char *fmt, ...)
{
    va_list ap;
    su_buf_clear(&d->err);
    va_start(ap, fmt);
    su_buf_vprintf(&d->err, fmt, ap);
    va_end(ap);
    return false;
}

/* Adds what a user can do about the common SQLite failures. */
static const char *advice(int rc)
{
    switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return " (another process held the database longer than the busy timeout; try again)";
    case SQLITE_FULL:
        return " (the disk is full; nothing of this batch was stored)";
    case SQLITE_READONLY:
        return " (the file or its folder is not writable)";
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
        return " (the file is damaged; restore a backup, or recover what is readable with sqlite3's .recover)";
    case SQLITE_IOERR:
        return " (an I/O error: check the disk and the file system)";
    default:
        return "";
    }
}

bool db_fail_sql(db *d, int rc, const char *doing)
{
    return db_fail(d, "%s: %s: %s%s", d->path, doing, d->sql ? sqlite3_errmsg(d->sql) : sqlite3_errstr(rc),
                   advice(rc));
}

const char *db_errmsg(const db *d)
{
    return su_buf_str(&d->err);
}

const char *db_path(const db *d)
{
    return d->path;
}

int db_schema_version(const db *d)
{
    return d->version;
}

void db_set_config_check(db *d, db_config_check_fn fn, void *ctx)
{
    d->check = fn;
    d->check_ctx = ctx;
}

sqlite3_stmt *db_stmt(db *d, db_stmt_id id)
{
    sqlite3_stmt *st = d->st[id];
    if (!st) {
        int rc = sqlite3_prepare_v3(d->sql, stmt_sql[id], -1, SQLITE_PREPARE_PERSISTENT, &d->st[id], NULL);
        if (rc != SQLITE_OK) {
            db_fail_sql(d, rc, "preparing a statement");
            return NULL;
        }
        return d->st[id];
    }
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return st;
}

bool db_exec(db *d, const char *sql)
{
    char *msg = NULL;
    int rc = sqlite3_exec(d->sql, sql, NULL, NULL, &msg);
    if (rc != SQLITE_OK) {
        db_fail(d, "%s: %s%s", d->path, msg ? msg : sqlite3_errstr(rc), advice(rc));
        sqlite3_free(msg);
        return false;
    }
    return true;
}

void db_cache_clear(db *d)
{
    su_map_free(&d->targets);
    su_map_free(&d->workloads);
    su_map_free(&d->sessions);
    su_arena_free(&d->cache);
    su_buf_free(&d->last_target);
    su_buf_free(&d->last_wkey);
    su_buf_free(&d->last_wtmpl);
    su_buf_free(&d->last_wargs);
    d->last_wid = 0;
}

bool db_begin(db *d)
{
    int rc = sqlite3_exec(d->sql, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    return rc == SQLITE_OK || db_fail_sql(d, rc, "starting a transaction");
}

bool db_commit(db *d)
{
    int rc = sqlite3_exec(d->sql, "COMMIT", NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        return true;
    db_fail_sql(d, rc, "committing");
    db_rollback(d);
    return false;
}

void db_rollback(db *d)
{
    if (!sqlite3_get_autocommit(d->sql))
        sqlite3_exec(d->sql, "ROLLBACK", NULL, NULL, NULL);
    db_cache_clear(d);
}

/* Reads one integer from a single-row query; false with the SQLite code in *rc. */
static bool query_int(db *d, const char *sql, int64_t *out, int *rc)
{
    sqlite3_stmt *st;
    *rc = sqlite3_prepare_v2(d->sql, sql, -1, &st, NULL);
    if (*rc != SQLITE_OK)
        return false;
    *rc = sqlite3_step(st);
    if (*rc == SQLITE_ROW) {
        *out = sqlite3_column_int64(st, 0);
        *rc = SQLITE_OK;
    } else if (*rc == SQLITE_DONE) {
        *out = 0;
        *rc = SQLITE_OK;
    }
    sqlite3_finalize(st);
    return *rc == SQLITE_OK;
}

/* Message for a file SQLite cannot read at all. */
static bool refuse_unreadable(db *d, int rc)
{
    int code = rc & 0xff;
    if (code == SQLITE_NOTADB)
        return db_fail(d, "%s: not a relay-tune database (not an SQLite file, or its header is damaged)",
                       d->path);
    if (code == SQLITE_CORRUPT)
        return db_fail(d, "%s: the database is corrupt (%s); restore a backup, or recover what is "
                       "readable with sqlite3's .recover", d->path, sqlite3_errmsg(d->sql));
    return db_fail_sql(d, rc, "reading the database header");
}

/* Who owns the file: 1 ours, 0 empty (new), -1 refused (message set). The
 * three values are read in one read transaction (unless the caller holds a
 * write transaction already): another process may be creating the file,
 * and its schema objects and application_id must be seen together, never
 * the objects without the id. */
static int ownership(db *d)
{
    int64_t app, ver, objects;
    int rc;
    bool own_txn = sqlite3_get_autocommit(d->sql) && sqlite3_exec(d->sql, "BEGIN", NULL, NULL, NULL) == SQLITE_OK;
    bool read = query_int(d, "PRAGMA application_id", &app, &rc) && query_int(d, "PRAGMA user_version", &ver, &rc) &&
                query_int(d, "SELECT count(*) FROM sqlite_master", &objects, &rc);
    if (own_txn)
        sqlite3_exec(d->sql, "COMMIT", NULL, NULL, NULL);
    if (!read) {
        refuse_unreadable(d, rc);
        return -1;
    }
    if ((uint32_t)app == DB_APPLICATION_ID) {
        d->version = (int)ver;
        return 1;
    }
    if (app == 0 && ver == 0 && objects == 0)
        return 0;
    if (app != 0)
        db_fail(d, "%s: not a relay-tune database (an SQLite file of another program, application_id "
                "0x%08x); refusing to touch it", d->path, (unsigned)(uint32_t)app);
    else
        db_fail(d, "%s: not a relay-tune database (an SQLite file with %lld schema objects but without "
                "relay-tune's application_id); refusing to touch it", d->path, (long long)objects);
    return -1;
}

bool db_quick_check(db *d)
{
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(d->sql, "PRAGMA quick_check(5)", -1, &st, NULL);
    if (rc != SQLITE_OK)
        return refuse_unreadable(d, rc);
    su_buf problems = {0};
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *line = (const char *)sqlite3_column_text(st, 0);
        if (line && strcmp(line, "ok") != 0)
            su_buf_printf(&problems, "%s%s", problems.len ? "; " : "", line);
    }
    sqlite3_finalize(st);
    bool good = true;
    if (rc != SQLITE_DONE)
        good = refuse_unreadable(d, rc);
    else if (problems.len)
        good = db_fail(d, "%s: the database is corrupt (quick_check: %s); restore a backup, or recover "
                       "what is readable with sqlite3's .recover", d->path, su_buf_str(&problems));
    su_buf_free(&problems);
    return good;
}

/* Brings the schema to `upto` inside one write transaction. Another process
 * may have created or migrated the file since we looked, so the version is
 * read again under the lock. */
static bool migrate(db *d, int upto)
{
    if (!db_begin(d))
        return false;
    int own = ownership(d);
    if (own < 0) {
        db_rollback(d);
        return false;
    }
    int from = own ? d->version : 0;
    if (from > DB_SCHEMA_VERSION) {
        db_rollback(d);
        return db_fail(d, "%s: schema version %d is newer than this relay-tune understands (%d); "
                       "upgrade relay-tune", d->path, from, DB_SCHEMA_VERSION);
    }
    for (int v = from; v < upto; v++) {
        if (!db_exec(d, migrations[v])) {
            su_buf msg = {0};
            su_buf_printf(&msg, "%s (migrating to schema version %d)", db_errmsg(d), v + 1);
            db_rollback(d);
            db_fail(d, "%s", su_buf_str(&msg));
            su_buf_free(&msg);
            return false;
        }
    }
    if (from < upto) {
        char sql[96];
        snprintf(sql, sizeof sql, "PRAGMA application_id = %d; PRAGMA user_version = %d",
                 (int)DB_APPLICATION_ID, upto);
        if (!db_exec(d, sql)) {
            db_rollback(d);
            return false;
        }
    }
    if (!db_commit(d))
        return false;
    d->version = from > upto ? from : upto;
    return true;
}

/* Applies the connection settings. journal_mode=WAL changes the file and may
 * meet another process doing the same on a new file, so it is retried. */
static bool configure(db *d, bool memory, bool readonly)
{
    if (!db_exec(d, "PRAGMA foreign_keys = ON; PRAGMA page_size = 16384; PRAGMA synchronous = FULL; PRAGMA cache_size = -131072; PRAGMA mmap_size = 1073741824; PRAGMA wal_autocheckpoint = 8192; PRAGMA journal_size_limit = 134217728"))
        return false;
    if (memory || readonly)
        return true;
    for (int tries = 0;; tries++) {
        char *msg = NULL;
        int rc = sqlite3_exec(d->sql, "PRAGMA journal_mode = WAL", NULL, NULL, &msg);
        sqlite3_free(msg);
        if (rc == SQLITE_OK)
            return true;
        if ((rc & 0xff) != SQLITE_BUSY || tries >= 200)
            return db_fail_sql(d, rc, "switching to WAL mode");
        sqlite3_sleep(10);
    }
}

db *db_open(const char *path, const db_open_opts *opts, su_buf *err)
{
    db_open_opts o = opts ? *opts : (db_open_opts){0};
    int busy = o.busy_ms > 0 ? o.busy_ms : 30000;
    int upto = o.upto_version > 0 && o.upto_version < DB_SCHEMA_VERSION ? o.upto_version : DB_SCHEMA_VERSION;
    bool memory = !strcmp(path, ":memory:");
    bool readonly = (o.flags & DB_OPEN_READONLY) != 0;
    if (!memory) {
        struct stat sb;
        if (stat(path, &sb) != 0) {
            if (errno != ENOENT || (o.flags & (DB_OPEN_NO_CREATE | DB_OPEN_READONLY))) {
                su_buf_printf(err, "%s: cannot open the database: %s", path, strerror(errno));
                return NULL;
            }
        } else if (!S_ISREG(sb.st_mode)) {
            su_buf_printf(err, "%s: not a relay-tune database (not a regular file)", path);
            return NULL;
        }
    }
    db *d = su_calloc(1, sizeof *d);
    d->path = su_strdup(path);
    int flags = readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
    int rc = sqlite3_open_v2(path, &d->sql, flags | SQLITE_OPEN_NOMUTEX, NULL);
    bool good = rc == SQLITE_OK || db_fail_sql(d, rc, "cannot open the database");
    if (good) {
        sqlite3_extended_result_codes(d->sql, 1);
        sqlite3_busy_timeout(d->sql, busy);
    }
    int own = good ? ownership(d) : -1;
    good = own >= 0;
    if (good && own == 0 && readonly)
        good = db_fail(d, "%s: not a relay-tune database (the file is empty)", path);
    if (good && own == 1 && !(o.flags & DB_OPEN_NO_CHECK))
        good = db_quick_check(d);
    if (good && own == 1 && d->version > DB_SCHEMA_VERSION)
        good = db_fail(d, "%s: schema version %d is newer than this relay-tune understands (%d); upgrade "
                       "relay-tune", path, d->version, DB_SCHEMA_VERSION);
    if (good && own == 1 && readonly && d->version < 1)
        good = db_fail(d, "%s: the database was never initialized (schema version 0)", path);
    if (good)
        good = configure(d, memory, readonly);
    if (good && !readonly && (own == 0 || d->version < upto))
        good = migrate(d, upto);
    if (!good) {
        su_buf_puts(err, db_errmsg(d));
        db_close(d);
        return NULL;
    }
    return d;
}

void db_close(db *d)
{
    if (!d)
        return;
    for (int i = 0; i < DB_ST_COUNT; i++)
        sqlite3_finalize(d->st[i]);
    if (d->sql)
        sqlite3_close_v2(d->sql);
    db_cache_clear(d);
    su_buf_free(&d->err);
    su_buf_free(&d->args_raw);
    su_buf_free(&d->args_canon);
    free(d->path);
    free(d);
}
