/* test_claims.c — configs claimed by running tuners (db/claims.c): claiming,
 * refusing what another owner holds or what is recorded, renewal, expiry,
 * owners that have exited, release, atomic failure on bad input, migration
 * from schema 5, and two processes racing for the same configs. */
#include <sqlite3.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "db/db.h"
#include "tests/tap.h"

static char tmpdir[] = "/tmp/rt-test-claims-XXXXXX";
static const char *KEY = "conv2d_nchw|float32|wl", *TARGET = "cpu -mcpu=znver1 -cores=2";

static const char *tpath(const char *name)
{
    static char buf[4][256];
    static int k;
    char *p = buf[k++ % 4];
    snprintf(p, 256, "%s/%s", tmpdir, name);
    return p;
}

static db *open_db(const char *path, int upto)
{
    su_buf err = {0};
    db_open_opts o = {.upto_version = upto};
    db *d = db_open(path, &o, &err);
    if (!d)
        diag("open %s: %s", path, su_buf_str(&err));
    su_buf_free(&err);
    return d;
}

/* Config i as record JSON; spaced says whether to write it with other spacing
 * and knob text than the canonical form (claims compare canonical texts). */
static const char *cfg(int i, bool spaced, su_arena *a)
{
    return spaced ? su_arena_printf(a, "{ \"entities\" : [[\"tile\", \"sp\", [-1, %d]]], \"index\" : %d }", i + 1, i)
                  : su_arena_printf(a, "{\"index\":%d,\"entities\":[[\"tile\",\"sp\",[-1,%d]]]}", i, i + 1);
}

static bool claim(db *d, const char *owner, int from, int n, double now, int *state, su_arena *a)
{
    const char *c[64];
    for (int i = 0; i < n; i++)
        c[i] = cfg(from + i, false, a);
    bool r = db_claim(d, KEY, TARGET, c, (size_t)n, owner, now, now + 600, state);
    if (!r)
        diag("claim: %s", db_errmsg(d));
    return r;
}

static void on_reject(void *ctx, size_t i, const char *why)
{
    (void)ctx;
    diag("record %zu rejected: %s", i, why);
}

static int count_state(const int *s, int n, int want)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        k += s[i] == want;
    return k;
}

static void test_claims(void)
{
    su_arena a;
    su_arena_init(&a);
    db *d = open_db(tpath("c.db"), 0);
    ok(d && db_schema_version(d) == DB_SCHEMA_VERSION && DB_SCHEMA_VERSION >= 6, "a new file has the claims table");
    int st[16];
    ok(claim(d, "h:1:a", 0, 4, 1000, st, &a) && count_state(st, 4, DB_CLAIM_OURS) == 4, "four free configs claimed");
    is_int(db_claims_count(d), 4, "four claims held");
    ok(claim(d, "h:2:b", 2, 4, 1001, st, &a), "a second owner claims an overlapping range");
    ok(st[0] == DB_CLAIM_TAKEN && st[1] == DB_CLAIM_TAKEN && st[2] == DB_CLAIM_OURS && st[3] == DB_CLAIM_OURS,
       "the other owner's live claims are refused, the free ones granted");
    ok(claim(d, "h:1:a", 0, 2, 1002, st, &a) && st[0] == DB_CLAIM_OURS && st[1] == DB_CLAIM_OURS,
       "an owner renews its own claims");

    /* a record of config 6, written with other spacing than the claim's */
    db_record r = {0};
    r.workload = (db_workload){KEY, "conv2d_nchw", "{\"data\":[1,3,8,8]}", 1e6};
    r.target = (db_target){TARGET, "AMD EPYC", "avx2 fma", 2, "Linux"};
    r.config_index = 6;
    r.config = cfg(6, true, &a);
    double costs[] = {1e-3};
    r.costs = costs;
    r.ncosts = 1;
    r.counters = "{}";
    r.tuner = "random";
    r.timestamp = 1700000000;
    r.host = "h";
    ok(db_add_records(d, &r, 1, NULL, on_reject, NULL), "a record of config 6 stored");
    ok(claim(d, "h:3:c", 6, 2, 1003, st, &a) && st[0] == DB_CLAIM_RECORDED && st[1] == DB_CLAIM_OURS,
       "a recorded config is refused (canonical texts compared), a free one granted");

    ok(claim(d, "h:3:c", 0, 1, 1602, st, &a) && st[0] == DB_CLAIM_TAKEN, "a claim holds until it expires");
    ok(claim(d, "h:3:c", 0, 1, 1603, st, &a) && st[0] == DB_CLAIM_OURS, "an expired claim is void");

    /* an owner of this host whose process has exited */
    pid_t pid = fork();
    if (pid == 0)
        _exit(0);
    waitpid(pid, NULL, 0);
    char dead[300], me[300];
    db_claim_owner("s", me, sizeof me);
    char host[256];
    gethostname(host, sizeof host);
    host[255] = 0;
    snprintf(dead, sizeof dead, "%s:%ld:s", host, (long)pid);
    ok(strstr(me, host) == me && strstr(me, ":s"), "an owner's name is host:pid:session (%s)", me);
    ok(claim(d, dead, 20, 2, 1700, st, &a) && count_state(st, 2, DB_CLAIM_OURS) == 2, "the exited process's claims");
    ok(claim(d, me, 20, 2, 1701, st, &a) && count_state(st, 2, DB_CLAIM_OURS) == 2,
       "claims of an exited process of this host are void at once");
    ok(claim(d, me, 20, 1, 1702, st, &a) && st[0] == DB_CLAIM_OURS, "a live owner's own claims survive the check");

    int64_t before = db_claims_count(d);
    const char *bad[] = {cfg(30, false, &a), "{\"index\": 1", cfg(31, false, &a)};
    ok(!db_claim(d, KEY, TARGET, bad, 3, me, 1800, 2400, st) && strstr(db_errmsg(d), "cannot claim config 1"),
       "a malformed config is an error naming it (%s)", db_errmsg(d));
    is_int(db_claims_count(d), before, "nothing of a failed claim is kept");
    ok(db_release_claims(d, me) && db_claims_count(d) == before - 2, "release drops the owner's claims only");
    db_close(d);
    su_arena_free(&a);
}

static void test_migration(void)
{
    db *d = open_db(tpath("m.db"), 5);
    ok(d && db_schema_version(d) == 5, "a schema 5 file");
    db_close(d);
    d = open_db(tpath("m.db"), 0);
    ok(d && db_schema_version(d) == DB_SCHEMA_VERSION && db_claims_count(d) == 0, "migrated: claims table empty");
    db_close(d);
}

/* Two processes claim configs 0..99 in opposite orders, one at a time; each
 * writes what it got. No config may go to both, none may be lost. */
static void test_race(void)
{
    enum { N = 100 };
    db *d = open_db(tpath("r.db"), 0);
    db_close(d);
    pid_t kids[2];
    for (int k = 0; k < 2; k++) {
        if ((kids[k] = fork()) == 0) {
            su_arena a;
            su_arena_init(&a);
            db *c = open_db(tpath("r.db"), 0);
            char owner[64], out[64];
            snprintf(owner, sizeof owner, "racer:%d:x", k);
            snprintf(out, sizeof out, "%s/got%d", tmpdir, k);
            FILE *f = fopen(out, "w");
            for (int j = 0; c && f && j < N; j++) {
                int i = k ? N - 1 - j : j, s;
                if (claim(c, owner, i, 1, 1000, &s, &a) && s == DB_CLAIM_OURS)
                    fprintf(f, "%d\n", i);
            }
            if (f)
                fclose(f);
            db_close(c);
            su_arena_free(&a);
            _exit(c && f ? 0 : 1);
        }
    }
    int good = 0;
    for (int k = 0; k < 2; k++) {
        int status;
        waitpid(kids[k], &status, 0);
        good += WIFEXITED(status) && WEXITSTATUS(status) == 0;
    }
    ok(good == 2, "both racers ran");
    int seen[N] = {0};
    for (int k = 0; k < 2; k++) {
        FILE *f = fopen(tpath(k ? "got1" : "got0"), "r");
        int i;
        while (f && fscanf(f, "%d", &i) == 1)
            if (i >= 0 && i < N)
                seen[i]++;
        if (f)
            fclose(f);
    }
    int once = 0, twice = 0;
    for (int i = 0; i < N; i++) {
        once += seen[i] == 1;
        twice += seen[i] > 1;
    }
    is_int(twice, 0, "no config was claimed by both processes");
    is_int(once, N, "every config went to one of them");
}

int main(void)
{
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    test_claims();
    test_migration();
    test_race();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        diag("could not remove %s", tmpdir);
    return tap_done();
}
