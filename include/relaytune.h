/* relaytune.h — the public C API of librelaytune, which the relay-tune program
 * itself uses. Everything here is prefixed rt_; nothing else is exported.
 *
 * Errors: functions that can fail on user input take a `FILE *errs` and write
 * diagnostics there in the form "FILE:LINE:COL: error: MESSAGE" followed by the
 * source line and a caret; pass NULL to discard them. */
#ifndef RELAYTUNE_H
#define RELAYTUNE_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A parsed, type-checked Relay module. */
typedef struct rt_module rt_module;

/* Flags for rt_module_to_text. */
enum {
    RT_PRINT_TYPES = 1,   /* annotate bindings with their types (TVM's ty= comments) */
};

/* The library version ("0.1.0"). */
const char *rt_version(void);

/* Parses and type-checks a Relay text file; NULL after reporting errors to errs. */
rt_module *rt_module_load(const char *path, FILE *errs);
/* Parses and type-checks Relay text held in memory; name is used in messages. */
rt_module *rt_module_parse(const char *name, const char *text, size_t len, FILE *errs);
/* The module as canonical Relay text (malloc'd; free with free()). */
char *rt_module_to_text(const rt_module *m, int flags);
/* Number of global functions in the module. */
size_t rt_module_num_functions(const rt_module *m);
/* Frees a module (NULL is fine). */
void rt_module_free(rt_module *m);

#ifdef __cplusplus
}
#endif
#endif
