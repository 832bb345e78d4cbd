/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json.h"

void json_init(struct json *js)
{
	memset(js, 0, sizeof(*js));
	js->first[0] = true;
}

void json_free(struct json *js)
{
	free(js->buf);
	js->buf = NULL;
	js->len = js->cap = 0;
}

static void put(struct json *js, const char *s, size_t n)
{
	if (js->oom)
		return;
	if (js->len + n + 1 > js->cap) {
		size_t cap = js->cap ? js->cap : 4096;
		char *nb;

		while (cap < js->len + n + 1)
			cap *= 2;
		nb = realloc(js->buf, cap);
		if (!nb) {
			js->oom = true;
			return;
		}
		js->buf = nb;
		js->cap = cap;
	}
	memcpy(js->buf + js->len, s, n);
	js->len += n;
	js->buf[js->len] = '\0';
}

static void puts_(struct json *js, const char *s)
{
	put(js, s, strlen(s));
}

static void putf(struct json *js, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void putf(struct json *js, const char *fmt, ...)
{
	char tmp[64];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(tmp)) {
		js->oom = true;
		return;
	}
	put(js, tmp, (size_t)n);
}

static void put_string(struct json *js, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	puts_(js, "\"");
	for (; *p; p++) {
		switch (*p) {
		case '"':
			puts_(js, "\\\"");
			break;
		case '\\':
			puts_(js, "\\\\");
			break;
		case '\n':
			puts_(js, "\\n");
			break;
		case '\t':
			puts_(js, "\\t");
			break;
		case '\r':
			puts_(js, "\\r");
			break;
		default:
			if (*p < 0x20)
				putf(js, "\\u%04x", *p);
			else
				put(js, (const char *)p, 1);
		}
	}
	puts_(js, "\"");
}

/* separator and key for the next value at the current depth */
static void key(struct json *js, const char *k)
{
	if (!js->first[js->depth])
		puts_(js, ",");
	js->first[js->depth] = false;
	if (k) {
		put_string(js, k);
		puts_(js, ":");
	}
}

static void open_(struct json *js, const char *k, const char *bracket)
{
	key(js, k);
	puts_(js, bracket);
	if (js->depth + 1 >= JSON_MAX_DEPTH) {
		js->oom = true;
		return;
	}
	js->depth++;
	js->first[js->depth] = true;
}

void json_obj_begin(struct json *js, const char *k)
{
	open_(js, k, "{");
}

void json_obj_end(struct json *js)
{
	if (js->depth > 0)
		js->depth--;
	puts_(js, "}");
}

void json_arr_begin(struct json *js, const char *k)
{
	open_(js, k, "[");
}

void json_arr_end(struct json *js)
{
	if (js->depth > 0)
		js->depth--;
	puts_(js, "]");
}

void json_u64(struct json *js, const char *k, uint64_t v)
{
	key(js, k);
	putf(js, "%" PRIu64, v);
}

void json_i64(struct json *js, const char *k, int64_t v)
{
	key(js, k);
	putf(js, "%" PRId64, v);
}

void json_double(struct json *js, const char *k, double v)
{
	key(js, k);
	if (!isfinite(v))
		puts_(js, "null");
	else
		putf(js, "%.10g", v);
}

void json_bool(struct json *js, const char *k, bool v)
{
	key(js, k);
	puts_(js, v ? "true" : "false");
}

void json_str(struct json *js, const char *k, const char *s)
{
	key(js, k);
	if (!s)
		puts_(js, "null");
	else
		put_string(js, s);
}

void json_null(struct json *js, const char *k)
{
	key(js, k);
	puts_(js, "null");
}

void json_fmt_key(char *buf, size_t len, uint64_t v)
{
	snprintf(buf, len, "%" PRIu64, v);
}

int json_write_stdout(struct json *js)
{
	size_t off = 0;

	put(js, "\n", 1);
	if (js->oom)
		return ENOMEM;
	while (off < js->len) {
		ssize_t n = write(STDOUT_FILENO, js->buf + off, js->len - off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		off += (size_t)n;
	}
	return 0;
}
