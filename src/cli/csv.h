/*
 * csv.h - tables as CSV for programs (--csv), RFC 4180: fields separated
 * by commas, records ended by CRLF, a field holding a comma, a double
 * quote, CR or LF enclosed in double quotes with its quotes doubled, and
 * a header record first.  An absent value is an empty field.
 */
#ifndef TW_CLI_CSV_H
#define TW_CLI_CSV_H

#include <stdio.h>

#include <jansson.h>

/* Writes S (NULL: an empty field) as one field, quoted when it must be,
 * followed by a comma, or by CRLF when LAST. */
void tw_cli_csv_field(FILE *f, const char *s, int last);

/* Writes V as a field: "%.10g", or empty when V is NaN. */
void tw_cli_csv_num(FILE *f, double v, int last);

/* V's number, or NaN when V is no number (an empty field, a "-" in text). */
double tw_cli_num_or_nan(const json_t *v);

/* Writes N fields as one record. */
void tw_cli_csv_row(FILE *f, const char *const *fields, size_t n);

#endif
