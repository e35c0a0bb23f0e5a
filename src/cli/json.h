/* SPDX-License-Identifier: MIT */
/* nvtape CLI: a small streaming JSON writer, the one every command's --json output goes through.
 * Strings are escaped for any input bytes (control characters as \uXXXX, bytes that are not
 * UTF-8 as \u00XX of their Latin-1 value) and numbers that are not finite are written as null. */
#ifndef NVT_CLI_JSON_H
#define NVT_CLI_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 16

struct json {
	FILE *f;
	unsigned depth;
	bool comma[JSON_MAX_DEPTH]; /* a value was written at this depth: the next needs a ',' */
};

/* Every writer takes the member's key, or NULL for an array element (or the top value). */
void json_begin(struct json *j, FILE *f); /* the top-level object: "{" */
void json_end(struct json *j);            /* "}\n" and flush */
void json_obj(struct json *j, const char *key);
void json_obj_end(struct json *j);
void json_arr(struct json *j, const char *key);
void json_arr_end(struct json *j);
void json_str(struct json *j, const char *key, const char *s); /* NULL: null */
void json_int(struct json *j, const char *key, int64_t v);
void json_uint(struct json *j, const char *key, uint64_t v);
/* decimals: digits after the point; NaN and infinities are written as null */
void json_num(struct json *j, const char *key, double v, int decimals);
void json_bool(struct json *j, const char *key, bool v);
void json_null(struct json *j, const char *key);

/* the string s as a JSON string literal (quotes included) */
void json_write_string(FILE *f, const char *s);
/* Length of the well-formed UTF-8 sequence at s (1..4), or 0 when s does not start one: no
 * overlong forms, no surrogates, nothing above U+10FFFF. */
int json_utf8_len(const unsigned char *s);

#endif
