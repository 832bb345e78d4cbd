/* SPDX-License-Identifier: MIT */
/*
 * --key=value parameters, described by one table per mode: the same table
 * parses the command line, echoes the values into the JSON "params" object
 * and prints --help, so the three cannot disagree.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "json.h"
#include "probe.h"

static const struct {
	const char *name;
	uint32_t flag;
} rwf_names[] = {
	{ "hipri", RWF_HIPRI },
	{ "dsync", RWF_DSYNC },
	{ "sync", RWF_SYNC },
	{ "nowait", RWF_NOWAIT },
	{ "dontcache", RWF_DONTCACHE },
};

#define NRWF (sizeof(rwf_names) / sizeof(rwf_names[0]))

int parse_count(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (!s || !*s)
		return -1;
	for (; *s; s++) {
		if (!isdigit((unsigned char)*s))
			return -1;
		if (v > (UINT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return 0;
}

/* 4096, 4k, 4K, 4KiB, 4kb, 64M, 1G, 1T: all powers of 1024 */
int parse_size(const char *s, uint64_t *out)
{
	char digits[32];
	const char *p = s;
	uint64_t v, mult = 1;
	size_t n;

	if (!s)
		return -1;
	while (isdigit((unsigned char)*p))
		p++;
	n = (size_t)(p - s);
	if (n == 0 || n >= sizeof(digits))
		return -1;
	memcpy(digits, s, n);
	digits[n] = '\0';
	if (parse_count(digits, &v))
		return -1;
	if (*p) {
		switch (tolower((unsigned char)*p)) {
		case 'b':
			mult = 1;
			break;
		case 'k':
			mult = 1ull << 10;
			break;
		case 'm':
			mult = 1ull << 20;
			break;
		case 'g':
			mult = 1ull << 30;
			break;
		case 't':
			mult = 1ull << 40;
			break;
		default:
			return -1;
		}
		p++;
		if (mult != 1) {
			if (!strcasecmp(p, "ib") || !strcasecmp(p, "b"))
				p += strlen(p);
		}
		if (*p)
			return -1;
	}
	if (v && mult > UINT64_MAX / v)
		return -1;
	*out = v * mult;
	return 0;
}

/* seconds by default: 10, 2.5, 10s, 500ms, 100us, 50ns, 2m, 1h */
int parse_duration(const char *s, uint64_t *out_ns)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = {
		{ "", 1e9 }, { "s", 1e9 }, { "ms", 1e6 }, { "us", 1e3 },
		{ "ns", 1 }, { "m", 60e9 }, { "h", 3600e9 },
	};
	char *end;
	double v;
	size_t i;

	if (!s || !*s || !(isdigit((unsigned char)*s) || *s == '.'))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || !isfinite(v) || v < 0)
		return -1;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strcmp(end, units[i].unit)) {
			double ns = v * units[i].ns;

			if (ns >= 1.8e19)
				return -1;
			*out_ns = (uint64_t)llround(ns);
			return 0;
		}
	}
	return -1;
}

/* "dontcache,nowait"; "" and "none" mean no flags */
int parse_rwf(const char *s, uint32_t *out)
{
	uint32_t flags = 0;
	const char *p = s;

	if (!s)
		return -1;
	if (!strcmp(s, "none")) {
		*out = 0;
		return 0;
	}
	while (*p) {
		size_t n = strcspn(p, ",");
		size_t i;

		for (i = 0; i < NRWF; i++) {
			if (strlen(rwf_names[i].name) == n &&
			    !strncmp(p, rwf_names[i].name, n))
				break;
		}
		if (i == NRWF)
			return -1;
		flags |= rwf_names[i].flag;
		p += n;
		if (*p == ',')
			p++;
	}
	*out = flags;
	return 0;
}

/* "dontcache,nowait" (the accepted spelling), "" for none */
void rwf_describe(uint32_t rwf, char *buf, size_t len)
{
	size_t i, used = 0;

	if (len)
		buf[0] = '\0';
	for (i = 0; i < NRWF; i++) {
		int n;

		if (!(rwf & rwf_names[i].flag))
			continue;
		n = snprintf(buf + used, len - used, "%s%s", used ? "," : "",
			     rwf_names[i].name);
		if (n < 0 || (size_t)n >= len - used)
			return;
		used += (size_t)n;
	}
}

static bool parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = { "", "1", "true", "yes", "on" };
	static const char *const no[] = { "0", "false", "no", "off" };
	size_t i;

	if (!s) {
		*out = true;
		return true;
	}
	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		if (!strcasecmp(s, yes[i])) {
			*out = true;
			return true;
		}
	for (i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		if (!strcasecmp(s, no[i])) {
			*out = false;
			return true;
		}
	return false;
}

static void choices_join(const char *const *c, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (; c && *c; c++) {
		int n = snprintf(buf + used, len - used, "%s%s",
				 used ? "|" : "", *c);

		if (n < 0 || (size_t)n >= len - used)
			return;
		used += (size_t)n;
	}
}

static const char *type_metavar(const struct probe_param *p)
{
	if (p->metavar)
		return p->metavar;
	switch (p->type) {
	case P_SIZE:
		return "SIZE";
	case P_COUNT:
		return "N";
	case P_DURATION:
		return "SECONDS";
	case P_BOOL:
		return "BOOL";
	case P_STR:
		return "STR";
	case P_ENUM:
		return "CHOICE";
	case P_RWF:
		return "FLAGS";
	}
	return "?";
}

static const char *type_expect(enum param_type t)
{
	switch (t) {
	case P_SIZE:
		return "a size in bytes, e.g. 4096, 4k, 64M, 1G";
	case P_COUNT:
		return "a non-negative decimal integer";
	case P_DURATION:
		return "a duration, e.g. 10, 2.5, 10s, 500ms";
	case P_BOOL:
		return "1, 0, true, false, yes or no";
	case P_STR:
		return "a string";
	case P_ENUM:
		return "one of the choices";
	case P_RWF:
		return "a comma list of hipri,dsync,sync,nowait,dontcache";
	}
	return "?";
}

int params_set(const char *mode, const struct probe_param *params, void *state,
	       const char *key, const char *val, int *index)
{
	const struct probe_param *p;
	char *field;

	for (p = params; p->name; p++)
		if (!strcmp(p->name, key))
			break;
	if (!p->name)
		return PROBE_EUNKNOWN;
	if (index)
		*index = (int)(p - params);
	field = (char *)state + p->off;

	if (!val && p->type != P_BOOL) {
		probe_err("%s: --%s needs a value (--%s=%s)", mode, key, key,
			  type_metavar(p));
		return PROBE_EUSAGE;
	}

	switch (p->type) {
	case P_SIZE:
	case P_COUNT:
	case P_DURATION: {
		uint64_t v;
		int rc = p->type == P_SIZE ? parse_size(val, &v) :
			 p->type == P_COUNT ? parse_count(val, &v) :
			 parse_duration(val, &v);

		if (rc) {
			probe_err("%s: bad value for --%s: '%s' (expected %s)",
				  mode, key, val, type_expect(p->type));
			return PROBE_EUSAGE;
		}
		if (v < p->min) {
			probe_err("%s: --%s must be at least %" PRIu64
				  "%s (got '%s')", mode, key, p->min,
				  p->type == P_DURATION ? " ns" : "", val);
			return PROBE_EUSAGE;
		}
		memcpy(field, &v, sizeof(v));
		return PROBE_OK;
	}
	case P_BOOL: {
		bool b;

		if (!parse_bool(val, &b)) {
			probe_err("%s: bad value for --%s: '%s' (expected %s)",
				  mode, key, val, type_expect(p->type));
			return PROBE_EUSAGE;
		}
		memcpy(field, &b, sizeof(b));
		return PROBE_OK;
	}
	case P_STR:
		if (!*val) {
			probe_err("%s: --%s must not be empty", mode, key);
			return PROBE_EUSAGE;
		}
		memcpy(field, &val, sizeof(val));
		return PROBE_OK;
	case P_ENUM: {
		int i;
		char all[256];

		for (i = 0; p->choices[i]; i++) {
			if (!strcmp(p->choices[i], val)) {
				memcpy(field, &i, sizeof(i));
				return PROBE_OK;
			}
		}
		choices_join(p->choices, all, sizeof(all));
		probe_err("%s: bad value for --%s: '%s' (expected %s)", mode,
			  key, val, all);
		return PROBE_EUSAGE;
	}
	case P_RWF: {
		uint32_t f;

		if (parse_rwf(val, &f)) {
			probe_err("%s: bad value for --%s: '%s' (expected %s)",
				  mode, key, val, type_expect(p->type));
			return PROBE_EUSAGE;
		}
		memcpy(field, &f, sizeof(f));
		return PROBE_OK;
	}
	}
	return PROBE_EUSAGE;
}

int params_defaults(const char *mode, const struct probe_param *params,
		    void *state)
{
	const struct probe_param *p;

	for (p = params; p->name; p++) {
		if (!p->defval)
			continue;
		if (params_set(mode, params, state, p->name, p->defval, NULL))
			return PROBE_ERUN;	/* a bad default is a bug */
	}
	return PROBE_OK;
}

void params_report(const struct probe_param *params, const void *state,
		   struct json *js)
{
	const struct probe_param *p;

	for (p = params; p->name; p++) {
		const char *field = (const char *)state + p->off;

		switch (p->type) {
		case P_SIZE:
		case P_COUNT:
		case P_DURATION: {
			uint64_t v;
			char k[64];

			memcpy(&v, field, sizeof(v));
			snprintf(k, sizeof(k), "%s%s", p->name,
				 p->type == P_DURATION ? "_ns" : "");
			if (!p->defval && v == 0)
				json_null(js, k);
			else
				json_u64(js, k, v);
			break;
		}
		case P_BOOL: {
			bool b;

			memcpy(&b, field, sizeof(b));
			json_bool(js, p->name, b);
			break;
		}
		case P_STR: {
			const char *s;

			memcpy(&s, field, sizeof(s));
			json_str(js, p->name, s);
			break;
		}
		case P_ENUM: {
			int i;

			memcpy(&i, field, sizeof(i));
			json_str(js, p->name, p->choices[i]);
			break;
		}
		case P_RWF: {
			uint32_t f;
			char buf[128];

			memcpy(&f, field, sizeof(f));
			rwf_describe(f, buf, sizeof(buf));
			json_str(js, p->name, buf);
			break;
		}
		}
	}
}

void params_help(const struct probe_param *params, FILE *out)
{
	const struct probe_param *p;

	for (p = params; p->name; p++) {
		char lhs[320], all[256];

		if (p->type == P_ENUM) {
			choices_join(p->choices, all, sizeof(all));
			snprintf(lhs, sizeof(lhs), "--%s=%s", p->name, all);
		} else if (p->type == P_BOOL) {
			snprintf(lhs, sizeof(lhs), "--%s", p->name);
		} else {
			snprintf(lhs, sizeof(lhs), "--%s=%s", p->name,
				 type_metavar(p));
		}
		fprintf(out, "    %-34s %s", lhs, p->help);
		if (p->defval && p->type != P_BOOL)
			fprintf(out, " [%s]", *p->defval ? p->defval : "none");
		fputc('\n', out);
	}
}

void params_describe(const struct probe_param *params, struct json *js)
{
	const struct probe_param *p;
	const char *const *c;

	json_arr_begin(js, "params");
	for (p = params; p->name; p++) {
		json_obj_begin(js, NULL);
		json_str(js, "name", p->name);
		json_str(js, "type", type_metavar(p));
		json_str(js, "default", p->defval);
		json_str(js, "help", p->help);
		if (p->type == P_ENUM) {
			json_arr_begin(js, "choices");
			for (c = p->choices; *c; c++)
				json_str(js, NULL, *c);
			json_arr_end(js);
		}
		json_obj_end(js);
	}
	json_arr_end(js);
}
