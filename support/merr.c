/* merr.c — names and descriptions of the measurement error codes (the table is
 * SU_MERRS in support.h). Codes are numbered explicitly and densely from 0, so
 * a number read from a database is checked by range alone. */
#include <string.h>

#include "support/support.h"

static const char *const names[] = {
#define X(id, num, name, desc) [num] = name,
    SU_MERRS(X)
#undef X
};

static const char *const descs[] = {
#define X(id, num, name, desc) [num] = desc,
    SU_MERRS(X)
#undef X
};

bool su_merr_valid(long long n)
{
    return n >= 0 && n < SU_MERR_COUNT;
}

const char *su_merr_name(su_merr e)
{
    return su_merr_valid(e) ? names[e] : "?";
}

const char *su_merr_desc(su_merr e)
{
    return su_merr_valid(e) ? descs[e] : "unknown error code";
}

bool su_merr_parse(const char *name, su_merr *out)
{
    for (int i = 0; i < SU_MERR_COUNT; i++)
        if (!strcmp(name, names[i])) {
            *out = (su_merr)i;
            return true;
        }
    return false;
}
