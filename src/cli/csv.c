/* csv.c - RFC 4180 fields and records (see csv.h). */
#include "cli/csv.h"

#include <string.h>

void tw_cli_csv_field(FILE *f, const char *s, int last)
{
    if (!s)
        s = "";
    if (strpbrk(s, ",\"\r\n")) {
        fputc('"', f);
        for (const char *p = s; *p; p++) {
            if (*p == '"')
                fputc('"', f);
            fputc(*p, f);
        }
        fputc('"', f);
    } else {
        fputs(s, f);
    }
    fputs(last ? "\r\n" : ",", f);
}

void tw_cli_csv_num(FILE *f, double v, int last)
{
    char s[48] = "";
    if (v == v)
        snprintf(s, sizeof(s), "%.10g", v);
    tw_cli_csv_field(f, s, last);
}

void tw_cli_csv_row(FILE *f, const char *const *fields, size_t n)
{
    for (size_t i = 0; i < n; i++)
        tw_cli_csv_field(f, fields[i], i + 1 == n);
}

double tw_cli_num_or_nan(const json_t *v)
{
    return json_is_number(v) ? json_number_value(v) : 0.0 / 0.0;
}
