/* SPDX-License-Identifier: MIT */
/*
 * iolab-probe MODE [--key=value ...]
 *
 * Chains the stages of one measurement: check the mode table, parse the
 * command line into the mode's state, pin, measure the clock, setup, run,
 * report one JSON object on stdout, teardown.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json.h"
#include "probe.h"

static const struct probe_mode *const probe_modes[] = {
	&lat_mode,
	&batch_mode,
	&uring_mode,
	&churn_mode,
};

#define NMODES (sizeof(probe_modes) / sizeof(probe_modes[0]))

static const char *const clock_names[] = { "monotonic_raw", "monotonic", NULL };
static const clockid_t clock_ids[] = { CLOCK_MONOTONIC_RAW, CLOCK_MONOTONIC };

/* options every mode takes, handled here */
struct common_opts {
	uint64_t cpu;
	bool cpu_set;
	int clock;
};

static struct common_opts common;

static const struct probe_param common_params[] = {
	{ .name = "cpu", .type = P_COUNT, .off = offsetof(struct common_opts, cpu),
	  .help = "pin to this CPU (sched_setaffinity) before anything else" },
	{ .name = "clock", .type = P_ENUM,
	  .off = offsetof(struct common_opts, clock), .defval = "monotonic_raw",
	  .choices = clock_names, .help = "clock_gettime clock for all timing" },
	PARAM_END
};

/* a mode table with a hole is a bug: refuse to run at all */
static int modes_check(void)
{
	size_t i, j;

	for (i = 0; i < NMODES; i++) {
		const struct probe_mode *m = probe_modes[i];
		const char *missing = !m->name ? "name" :
				      !m->summary ? "summary" :
				      !m->params ? "params" :
				      !m->state ? "state" :
				      !m->parse ? "parse" :
				      !m->setup ? "setup" :
				      !m->run ? "run" :
				      !m->report ? "report" :
				      !m->teardown ? "teardown" : NULL;
		const struct probe_param *p;

		if (missing) {
			probe_err("internal error: mode #%zu (%s) has no .%s",
				  i, m->name ? m->name : "?", missing);
			return PROBE_ERUN;
		}
		for (j = 0; j < i; j++)
			if (!strcmp(probe_modes[j]->name, m->name)) {
				probe_err("internal error: two modes named %s",
					  m->name);
				return PROBE_ERUN;
			}
		for (p = m->params; p->name; p++)
			if (!p->help || (p->type == P_ENUM && !p->choices)) {
				probe_err("internal error: mode %s: parameter "
					  "--%s is incomplete", m->name, p->name);
				return PROBE_ERUN;
			}
	}
	return PROBE_OK;
}

static void usage_modes(FILE *out)
{
	size_t i;

	for (i = 0; i < NMODES; i++)
		fprintf(out, "  %-8s %s\n", probe_modes[i]->name,
			probe_modes[i]->summary);
}

static void help_mode(const struct probe_mode *m, FILE *out)
{
	fprintf(out, "\n%s: %s\n", m->name, m->summary);
	params_help(m->params, out);
}

static void help(FILE *out, const struct probe_mode *only)
{
	size_t i;

	fprintf(out,
		"usage: " PROBE_NAME " MODE [--key=value ...]\n"
		"       " PROBE_NAME " --help | MODE --help | --describe | "
		"--version\n\n"
		"Runs one micro-benchmark and prints one JSON object on "
		"stdout.\nErrors go to stderr; exit status 0 ok, 1 runtime "
		"error, 2 usage error.\nSizes take k/m/g (powers of 1024); "
		"durations are seconds or take ns/us/ms/s/m/h.\n\n"
		"modes:\n");
	usage_modes(out);
	fprintf(out, "\noptions of every mode:\n");
	params_help(common_params, out);
	for (i = 0; i < NMODES; i++)
		if (!only || only == probe_modes[i])
			help_mode(probe_modes[i], out);
}

static int describe(void)
{
	struct json js;
	size_t i;
	int err;

	json_init(&js);
	json_obj_begin(&js, NULL);
	json_u64(&js, "probe_version", PROBE_VERSION);
	json_obj_begin(&js, "common");
	params_describe(common_params, &js);
	json_obj_end(&js);
	json_arr_begin(&js, "modes");
	for (i = 0; i < NMODES; i++) {
		json_obj_begin(&js, NULL);
		json_str(&js, "name", probe_modes[i]->name);
		json_str(&js, "summary", probe_modes[i]->summary);
		params_describe(probe_modes[i]->params, &js);
		json_obj_end(&js);
	}
	json_arr_end(&js);
	json_obj_end(&js);
	err = json_write_stdout(&js);
	json_free(&js);
	if (err) {
		probe_syserr("write", err, "stdout");
		return PROBE_ERUN;
	}
	return PROBE_OK;
}

static const struct probe_mode *find_mode(const char *name)
{
	size_t i;

	for (i = 0; i < NMODES; i++)
		if (!strcmp(probe_modes[i]->name, name))
			return probe_modes[i];
	return NULL;
}

static int parse_args(const struct probe_mode *m, int argc, char **argv)
{
	int i, rc;

	if (params_defaults("common", common_params, &common) ||
	    params_defaults(m->name, m->params, m->state)) {
		probe_err("internal error: a default of mode %s does not parse",
			  m->name);
		return PROBE_ERUN;
	}
	for (i = 2; i < argc; i++) {
		char key[64];
		const char *arg = argv[i], *eq, *val;
		size_t klen;

		if (strncmp(arg, "--", 2) || !arg[2]) {
			probe_err("%s: expected --key=value, got '%s' (see "
				  PROBE_NAME " %s --help)", m->name, arg,
				  m->name);
			return PROBE_EUSAGE;
		}
		arg += 2;
		eq = strchr(arg, '=');
		klen = eq ? (size_t)(eq - arg) : strlen(arg);
		val = eq ? eq + 1 : NULL;
		if (klen == 0 || klen >= sizeof(key)) {
			probe_err("%s: bad parameter '%s'", m->name, argv[i]);
			return PROBE_EUSAGE;
		}
		memcpy(key, arg, klen);
		key[klen] = '\0';

		rc = params_set(m->name, common_params, &common, key, val, NULL);
		if (rc == PROBE_OK && !strcmp(key, "cpu"))
			common.cpu_set = true;
		if (rc == PROBE_EUNKNOWN)
			rc = m->parse(m->state, key, val);
		if (rc == PROBE_EUNKNOWN) {
			probe_err("%s: unknown parameter --%s (see " PROBE_NAME
				  " %s --help)", m->name, key, m->name);
			return PROBE_EUSAGE;
		}
		if (rc)
			return rc;
	}
	return PROBE_OK;
}

static int pin_cpu(void)
{
	cpu_set_t set;

	if (!common.cpu_set)
		return PROBE_OK;
	if (common.cpu >= CPU_SETSIZE) {
		probe_err("--cpu=%llu is beyond CPU_SETSIZE (%d)",
			  (unsigned long long)common.cpu, CPU_SETSIZE);
		return PROBE_EUSAGE;
	}
	CPU_ZERO(&set);
	CPU_SET((int)common.cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		int err = errno;

		probe_syserr("sched_setaffinity", err, "--cpu=%llu, %ld CPUs "
			     "online", (unsigned long long)common.cpu,
			     sysconf(_SC_NPROCESSORS_ONLN));
		return err == EINVAL ? PROBE_EUSAGE : PROBE_ERUN;
	}
	return PROBE_OK;
}

static int output(const struct probe_mode *m)
{
	struct json js;
	int err;

	json_init(&js);
	json_obj_begin(&js, NULL);
	json_u64(&js, "probe_version", PROBE_VERSION);
	json_str(&js, "mode", m->name);
	json_obj_begin(&js, "params");
	params_report(m->params, m->state, &js);
	if (common.cpu_set)
		json_u64(&js, "cpu", common.cpu);
	else
		json_null(&js, "cpu");
	json_str(&js, "clock", clock_names[common.clock]);
	json_obj_end(&js);
	m->report(m->state, &js);
	json_obj_end(&js);
	err = json_write_stdout(&js);
	json_free(&js);
	if (err) {
		probe_syserr("write", err, "JSON result to stdout");
		return PROBE_ERUN;
	}
	return PROBE_OK;
}

int main(int argc, char **argv)
{
	const struct probe_mode *m;
	int rc, i;

	if (modes_check())
		return PROBE_ERUN;
	if (argc < 2) {
		probe_err("no MODE given; usage: " PROBE_NAME " MODE "
			  "[--key=value ...] (see " PROBE_NAME " --help)");
		return PROBE_EUSAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		help(stdout, NULL);
		return PROBE_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf(PROBE_NAME " %d\n", PROBE_VERSION);
		return PROBE_OK;
	}
	if (!strcmp(argv[1], "--describe"))
		return describe();
	m = find_mode(argv[1]);
	if (!m) {
		char names[128] = "";
		size_t k;

		for (k = 0; k < NMODES; k++) {
			strncat(names, k ? ", " : "", sizeof(names) - strlen(names) - 1);
			strncat(names, probe_modes[k]->name,
				sizeof(names) - strlen(names) - 1);
		}
		probe_err("unknown mode '%s' (modes: %s; see " PROBE_NAME
			  " --help)", argv[1], names);
		return PROBE_EUSAGE;
	}
	for (i = 2; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			help(stdout, m);
			return PROBE_OK;
		}

	rc = parse_args(m, argc, argv);
	if (rc)
		return rc;
	rc = pin_cpu();
	if (rc)
		return rc;
	probe_clock = clock_ids[common.clock];
	probe_timer_overhead_ns = probe_measure_timer_overhead();

	rc = m->setup(m->state);
	if (!rc)
		rc = m->run(m->state);
	if (!rc)
		rc = output(m);
	m->teardown(m->state);
	return rc;
}
