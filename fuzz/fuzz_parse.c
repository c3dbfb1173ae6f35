/* fuzz_parse.c — libFuzzer harness for the Relay front end. Any input must be
 * either rejected with a diagnostic or accepted; nothing may crash, hang or
 * leak. For accepted, well-typed input it also checks the printer's contract:
 * the printout parses and type-checks again and prints identically (a fixed
 * point), which catches printer/parser disagreements, not just crashes.
 *   make fuzz-run FUZZ_SECONDS=600 */
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

static char *print_module(ir_module *m)
{
    su_buf b = {0};
    ir_print_module(&b, m, NULL);
    return su_buf_take(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    su_diags d = {0};
    ir_module *m = ir_parse("fuzz.relay", (const char *)data, size, &d);
    bool typed = m && ir_infer_types(m, &d);
    if (m && d.len) {
        /* every diagnostic must print without crashing */
        FILE *null = fopen("/dev/null", "w");
        su_diags_print(null, &d);
        fclose(null);
    }
    if (typed) {
        char *once = print_module(m);
        su_diags d2 = {0};
        ir_module *m2 = ir_parse("printed.relay", once, strlen(once), &d2);
        if (!m2 || !ir_infer_types(m2, &d2)) {
            fprintf(stderr, "printout does not parse back:\n%s\n", once);
            su_diags_print(stderr, &d2);
            abort();
        }
        char *twice = print_module(m2);
        if (strcmp(once, twice) != 0) {
            fprintf(stderr, "print is not a fixed point:\n--- once\n%s\n--- twice\n%s\n", once, twice);
            abort();
        }
        free(twice);
        free(once);
        ir_module_free(m2);
        su_diags_free(&d2);
    } else if (!m && d.errors == 0) {
        fprintf(stderr, "parse failed without a diagnostic\n");
        abort();
    }
    ir_module_free(m);
    su_diags_free(&d);
    return 0;
}
