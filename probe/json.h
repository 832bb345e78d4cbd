/* SPDX-License-Identifier: MIT */
/*
 * Minimal JSON writer into a growing buffer.  Used only after measurement
 * (report ops), never in a timed loop.  Keys are NULL inside arrays.
 */
#ifndef IOLAB_JSON_H
#define IOLAB_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JSON_MAX_DEPTH 16

struct json {
	char *buf;
	size_t len, cap;
	int depth;
	bool first[JSON_MAX_DEPTH];
	bool oom;
};

void json_init(struct json *js);
void json_free(struct json *js);
void json_obj_begin(struct json *js, const char *key);
void json_obj_end(struct json *js);
void json_arr_begin(struct json *js, const char *key);
void json_arr_end(struct json *js);
void json_u64(struct json *js, const char *key, uint64_t v);
void json_i64(struct json *js, const char *key, int64_t v);
void json_double(struct json *js, const char *key, double v);
void json_bool(struct json *js, const char *key, bool v);
void json_str(struct json *js, const char *key, const char *s);
void json_null(struct json *js, const char *key);
void json_fmt_key(char *buf, size_t len, uint64_t v);
/* write the document and a newline to fd 1; 0 or an errno value */
int json_write_stdout(struct json *js);

#endif
