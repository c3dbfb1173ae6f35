/* hash.c — FNV-1a hashing (stable across machines and runs, which workload keys
 * and tuning logs rely on) and a small open-addressing string map. */
#include <stdlib.h>
#include <string.h>

#include "support/support.h"

uint64_t su_hash_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++) {
        h ^= s[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

uint64_t su_hash_u64(uint64_t h, uint64_t v)
{
    unsigned char b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    return su_hash_bytes(h, b, 8);
}

uint64_t su_hash_str(const char *s)
{
    return su_hash_bytes(SU_HASH_INIT, s, strlen(s));
}

static su_map_entry *find(const su_map *m, const char *key, uint64_t h)
{
    size_t mask = m->cap - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        su_map_entry *e = &m->slots[i];
        if (!e->key || (e->hash == h && strcmp(e->key, key) == 0))
            return e;
    }
}

void *su_map_get(const su_map *m, const char *key)
{
    if (!m->cap)
        return NULL;
    su_map_entry *e = find(m, key, su_hash_str(key));
    return e->key ? e->value : NULL;
}

static void grow(su_map *m)
{
    su_map old = *m;
    m->cap = old.cap ? old.cap * 2 : 16;
    m->slots = su_calloc(m->cap, sizeof *m->slots);
    m->len = 0;
    for (size_t i = 0; i < old.cap; i++)
        if (old.slots[i].key) {
            *find(m, old.slots[i].key, old.slots[i].hash) = old.slots[i];
            m->len++;
        }
    free(old.slots);
}

void *su_map_put(su_map *m, const char *key, void *value)
{
    if ((m->len + 1) * 4 > m->cap * 3)
        grow(m);
    uint64_t h = su_hash_str(key);
    su_map_entry *e = find(m, key, h);
    void *prev = e->key ? e->value : NULL;
    if (!e->key)
        m->len++;
    e->key = key;
    e->hash = h;
    e->value = value;
    return prev;
}

void su_map_free(su_map *m)
{
    free(m->slots);
    memset(m, 0, sizeof *m);
}
