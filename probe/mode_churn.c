/* SPDX-License-Identifier: MIT */
/*
 * churn: a phased metadata workload, each phase timed on its own.  The
 * default phases are the f2fs NAT-readahead reproducer:
 *
 *   create       --workers threads create files "1".."N" in --dir
 *                (like `seq 1 N | xargs -P 16 -n 1 touch`: the next name
 *                goes to whichever worker is free)
 *   sync         sync(2) (or syncfs(2) with --sync=syncfs)
 *   delete       unlink every K-th file: "K", "2K", ... (one thread)
 *   drop_caches  write "3" to /proc/sys/vm/drop_caches (root)
 *   sync         the sync whose time the f2fs patch measures
 *
 * --report-phase=NAME names the phase the caller cares about (the last
 * phase of that name, or NAME#k for the k-th); it is echoed with its time.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json.h"
#include "probe.h"

enum { PH_CREATE, PH_SYNC, PH_DELETE, PH_DROP_CACHES, PH_NTYPES };
static const char *const churn_phase_names[] = { "create", "sync", "delete",
						 "drop_caches" };
static const char *const churn_syncs[] = { "sync", "syncfs", NULL };

#define CHURN_MAX_PHASES 32
#define CHURN_MAX_WORKERS 1024
#define CHURN_MAX_FILE_BYTES (64ull << 20)
#define DROP_CACHES "/proc/sys/vm/drop_caches"

struct churn_state {
	const char *dir, *phases_arg, *report_phase;
	uint64_t files, workers, delete_every, file_bytes;
	int sync_kind;

	int dirfd;
	char *names;
	size_t stride;
	char *fbuf;
	int phases[CHURN_MAX_PHASES];
	unsigned nphases;
	int report_idx;
	uint64_t phase_ns[CHURN_MAX_PHASES], phase_ops[CHURN_MAX_PHASES];
	uint64_t created, deleted, total_ns;
	struct rusage ru0, ru1;

	/* start gate: workers wait until the clock starts */
	pthread_mutex_t gate_lock;
	pthread_cond_t gate_cond;
	bool gate_open;
	atomic_uint_fast64_t next;
	atomic_uint_fast64_t ncreated;
	atomic_int failed;
	pthread_mutex_t err_lock;
	const char *err_call;
	int err_errno;
	uint64_t err_file;
};

static struct churn_state churn_state = {
	.err_lock = PTHREAD_MUTEX_INITIALIZER,
	.gate_lock = PTHREAD_MUTEX_INITIALIZER,
	.gate_cond = PTHREAD_COND_INITIALIZER,
};

static const struct probe_param churn_params[] = {
	{ .name = "dir", .type = P_STR, .off = offsetof(struct churn_state, dir),
	  .metavar = "PATH",
	  .help = "directory for the files (required); created if missing, "
		  "must be empty" },
	{ .name = "files", .type = P_COUNT,
	  .off = offsetof(struct churn_state, files), .defval = "10000",
	  .min = 1, .help = "files to create (the f2fs seed: 650000)" },
	{ .name = "workers", .type = P_COUNT,
	  .off = offsetof(struct churn_state, workers), .defval = "16",
	  .min = 1, .help = "threads creating files" },
	{ .name = "delete-every", .type = P_COUNT,
	  .off = offsetof(struct churn_state, delete_every), .defval = "455",
	  .min = 1, .help = "delete phase: unlink 1 file in every K" },
	{ .name = "file-bytes", .type = P_SIZE,
	  .off = offsetof(struct churn_state, file_bytes), .defval = "0",
	  .help = "bytes written into each created file (at most 64M)" },
	{ .name = "phases", .type = P_STR,
	  .off = offsetof(struct churn_state, phases_arg), .metavar = "LIST",
	  .defval = "create,sync,delete,drop_caches,sync",
	  .help = "comma list of create, sync, delete, drop_caches" },
	{ .name = "sync", .type = P_ENUM,
	  .off = offsetof(struct churn_state, sync_kind), .defval = "sync",
	  .choices = churn_syncs,
	  .help = "what a sync phase calls: sync(2) (all filesystems) or "
		  "syncfs(2) on --dir's filesystem" },
	{ .name = "report-phase", .type = P_STR,
	  .off = offsetof(struct churn_state, report_phase), .metavar = "NAME",
	  .help = "phase to single out: NAME (its last occurrence) or NAME#k" },
	PARAM_END
};

static int churn_parse(void *state, const char *key, const char *val)
{
	return params_set("churn", churn_params, state, key, val, NULL);
}

static int churn_phase_type(const char *name, size_t len)
{
	int t;

	for (t = 0; t < PH_NTYPES; t++)
		if (strlen(churn_phase_names[t]) == len &&
		    !strncmp(churn_phase_names[t], name, len))
			return t;
	return -1;
}

static int churn_parse_phases(struct churn_state *s)
{
	const char *p = s->phases_arg;

	s->nphases = 0;
	while (*p) {
		size_t n = strcspn(p, ",");
		int t = churn_phase_type(p, n);

		if (t < 0) {
			probe_err("churn: unknown phase '%.*s' in --phases "
				  "(phases: create, sync, delete, drop_caches)",
				  (int)n, p);
			return PROBE_EUSAGE;
		}
		if (s->nphases == CHURN_MAX_PHASES) {
			probe_err("churn: more than %d phases in --phases",
				  CHURN_MAX_PHASES);
			return PROBE_EUSAGE;
		}
		s->phases[s->nphases++] = t;
		p += n;
		if (*p == ',')
			p++;
	}
	if (!s->nphases) {
		probe_err("churn: --phases lists no phase");
		return PROBE_EUSAGE;
	}
	return PROBE_OK;
}

/* NAME: the last phase of that name; NAME#k: the k-th, from 1 */
static int churn_resolve_report(struct churn_state *s)
{
	const char *rp = s->report_phase, *hash;
	uint64_t k = 0, seen = 0;
	size_t len;
	unsigned i;
	int t;

	s->report_idx = -1;
	if (!rp)
		return PROBE_OK;
	hash = strchr(rp, '#');
	len = hash ? (size_t)(hash - rp) : strlen(rp);
	t = churn_phase_type(rp, len);
	if (t < 0 || (hash && (parse_count(hash + 1, &k) || k == 0))) {
		probe_err("churn: bad --report-phase=%s (expected a phase name "
			  "such as sync, or sync#2 for the second)", rp);
		return PROBE_EUSAGE;
	}
	for (i = 0; i < s->nphases; i++) {
		if (s->phases[i] != t)
			continue;
		seen++;
		if (!k || seen == k)
			s->report_idx = (int)i;
		if (k && seen == k)
			break;
	}
	if (s->report_idx < 0) {
		probe_err("churn: --report-phase=%s is not in --phases=%s", rp,
			  s->phases_arg);
		return PROBE_EUSAGE;
	}
	return PROBE_OK;
}

static int churn_open_dir(struct churn_state *s)
{
	struct dirent *de;
	DIR *d;
	int fd;

	if (mkdir(s->dir, 0755) && errno != EEXIST) {
		probe_syserr("mkdir", errno, "path %s", s->dir);
		return PROBE_ERUN;
	}
	fd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		probe_syserr("open", errno, "path %s, flags O_DIRECTORY", s->dir);
		return PROBE_ERUN;
	}
	d = fdopendir(dup(fd));
	if (!d) {
		probe_syserr("fdopendir", errno, "path %s", s->dir);
		close(fd);
		return PROBE_ERUN;
	}
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			probe_err("churn: --dir=%s is not empty (it holds %s); "
				  "the phases need an empty directory", s->dir,
				  de->d_name);
			closedir(d);
			close(fd);
			return PROBE_ERUN;
		}
	}
	closedir(d);
	s->dirfd = fd;
	return PROBE_OK;
}

static int churn_setup(void *state)
{
	struct churn_state *s = state;
	unsigned digits = 1;
	uint64_t i, v;
	int rc;

	s->dirfd = -1;
	if (!s->dir) {
		probe_err("churn: --dir=PATH is required");
		return PROBE_EUSAGE;
	}
	if (s->workers > CHURN_MAX_WORKERS) {
		probe_err("churn: --workers=%" PRIu64 " is above %d", s->workers,
			  CHURN_MAX_WORKERS);
		return PROBE_EUSAGE;
	}
	if (s->file_bytes > CHURN_MAX_FILE_BYTES) {
		probe_err("churn: --file-bytes=%" PRIu64 " is above 64M",
			  s->file_bytes);
		return PROBE_EUSAGE;
	}
	rc = churn_parse_phases(s);
	if (!rc)
		rc = churn_resolve_report(s);
	if (rc)
		return rc;

	/* every name made before timing: "1".."N", fixed stride */
	for (v = s->files; v >= 10; v /= 10)
		digits++;
	s->stride = digits + 1;
	s->names = malloc(s->files * s->stride);
	s->fbuf = s->file_bytes ? malloc((size_t)s->file_bytes) : NULL;
	if (!s->names || (s->file_bytes && !s->fbuf)) {
		probe_syserr("malloc", ENOMEM, "names of %" PRIu64 " files",
			     s->files);
		return PROBE_ERUN;
	}
	for (i = 0; i < s->files; i++)
		snprintf(s->names + i * s->stride, s->stride, "%" PRIu64, i + 1);
	if (s->fbuf)
		memset(s->fbuf, 0xa5, (size_t)s->file_bytes);
	return churn_open_dir(s);
}

static void churn_fail(struct churn_state *s, const char *call, int err,
		       uint64_t file)
{
	pthread_mutex_lock(&s->err_lock);
	if (!atomic_load(&s->failed)) {
		s->err_call = call;
		s->err_errno = err;
		s->err_file = file;
		atomic_store(&s->failed, 1);
	}
	pthread_mutex_unlock(&s->err_lock);
}

static void *churn_worker(void *arg)
{
	struct churn_state *s = arg;
	const int dirfd = s->dirfd;
	const size_t nbytes = (size_t)s->file_bytes;
	uint64_t mine = 0;

	pthread_mutex_lock(&s->gate_lock);
	while (!s->gate_open)
		pthread_cond_wait(&s->gate_cond, &s->gate_lock);
	pthread_mutex_unlock(&s->gate_lock);
	for (;;) {
		uint64_t i;
		const char *name;
		int fd;

		if (atomic_load_explicit(&s->failed, memory_order_relaxed))
			break;
		i = atomic_fetch_add_explicit(&s->next, 1, memory_order_relaxed);
		if (i >= s->files)
			break;
		name = s->names + i * s->stride;
		fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_NOCTTY |
			    O_CLOEXEC, 0644);
		if (fd < 0) {
			churn_fail(s, "openat", errno, i + 1);
			break;
		}
		if (nbytes) {
			ssize_t r = write(fd, s->fbuf, nbytes);

			if (r != (ssize_t)nbytes) {
				churn_fail(s, "write", r < 0 ? errno : ENOSPC,
					   i + 1);
				close(fd);
				break;
			}
		}
		if (close(fd)) {
			churn_fail(s, "close", errno, i + 1);
			break;
		}
		mine++;
	}
	atomic_fetch_add(&s->ncreated, mine);
	return NULL;
}

static void churn_gate_open(struct churn_state *s)
{
	pthread_mutex_lock(&s->gate_lock);
	s->gate_open = true;
	pthread_cond_broadcast(&s->gate_cond);
	pthread_mutex_unlock(&s->gate_lock);
}

static int churn_create(struct churn_state *s, uint64_t *ns, uint64_t *ops)
{
	pthread_t tids[CHURN_MAX_WORKERS];
	unsigned n = (unsigned)s->workers, i, started;
	uint64_t t0;
	int err = 0;

	atomic_store(&s->next, 0);
	atomic_store(&s->ncreated, 0);
	atomic_store(&s->failed, 0);
	s->gate_open = false;
	for (started = 0; started < n; started++) {
		err = pthread_create(&tids[started], NULL, churn_worker, s);
		if (err)
			break;
	}
	if (err) {
		probe_syserr("pthread_create", err, "worker %u of %u", started + 1,
			     n);
		atomic_store(&s->failed, 1);
		churn_gate_open(s);
		for (i = 0; i < started; i++)
			pthread_join(tids[i], NULL);
		return PROBE_ERUN;
	}
	t0 = probe_now();
	churn_gate_open(s);
	for (i = 0; i < n; i++)
		pthread_join(tids[i], NULL);
	*ns = probe_now() - t0;
	*ops = atomic_load(&s->ncreated);
	s->created += *ops;
	if (atomic_load(&s->failed)) {
		probe_syserr(s->err_call, s->err_errno, "file %s/%" PRIu64
			     ", create phase", s->dir, s->err_file);
		return PROBE_ERUN;
	}
	return PROBE_OK;
}

static int churn_delete(struct churn_state *s, uint64_t *ns, uint64_t *ops)
{
	const uint64_t k = s->delete_every;
	uint64_t i, t0, n = 0;

	t0 = probe_now();
	for (i = k; i <= s->files; i += k) {
		if (unlinkat(s->dirfd, s->names + (i - 1) * s->stride, 0)) {
			probe_syserr("unlinkat", errno, "file %s/%" PRIu64
				     ", delete phase", s->dir, i);
			return PROBE_ERUN;
		}
		n++;
	}
	*ns = probe_now() - t0;
	*ops = n;
	s->deleted += n;
	return PROBE_OK;
}

static int churn_sync(struct churn_state *s, uint64_t *ns)
{
	uint64_t t0 = probe_now();

	if (s->sync_kind == 0) {
		sync();
	} else if (syncfs(s->dirfd)) {
		probe_syserr("syncfs", errno, "dir %s", s->dir);
		return PROBE_ERUN;
	}
	*ns = probe_now() - t0;
	return PROBE_OK;
}

static int churn_drop_caches(uint64_t *ns)
{
	uint64_t t0 = probe_now();
	int fd = open(DROP_CACHES, O_WRONLY | O_CLOEXEC);

	if (fd < 0 || write(fd, "3", 1) != 1) {
		int err = errno;

		probe_syserr(fd < 0 ? "open" : "write", err, "writing 3 to "
			     DROP_CACHES);
		if (err == EACCES || err == EPERM || err == EROFS)
			probe_hint("drop_caches needs root (CAP_SYS_ADMIN) "
				   "and a writable /proc/sys; leave it out of "
				   "--phases to run without it");
		if (fd >= 0)
			close(fd);
		return PROBE_ERUN;
	}
	close(fd);
	*ns = probe_now() - t0;
	return PROBE_OK;
}

static int churn_run(void *state)
{
	struct churn_state *s = state;
	unsigned i;
	int rc = PROBE_OK;

	getrusage(RUSAGE_SELF, &s->ru0);
	for (i = 0; i < s->nphases && !rc; i++) {
		uint64_t *ns = &s->phase_ns[i], *ops = &s->phase_ops[i];

		*ops = 1;
		switch (s->phases[i]) {
		case PH_CREATE:
			rc = churn_create(s, ns, ops);
			break;
		case PH_SYNC:
			rc = churn_sync(s, ns);
			break;
		case PH_DELETE:
			rc = churn_delete(s, ns, ops);
			break;
		case PH_DROP_CACHES:
			rc = churn_drop_caches(ns);
			break;
		}
		s->total_ns += *ns;
	}
	getrusage(RUSAGE_SELF, &s->ru1);
	return rc;
}

static void churn_report(void *state, struct json *js)
{
	struct churn_state *s = state;
	unsigned i;

	json_u64(js, "files", s->files);
	json_u64(js, "created", s->created);
	json_u64(js, "deleted", s->deleted);
	json_u64(js, "workers", s->workers);
	json_arr_begin(js, "phases");
	for (i = 0; i < s->nphases; i++) {
		json_obj_begin(js, NULL);
		json_str(js, "name", churn_phase_names[s->phases[i]]);
		json_u64(js, "ns", s->phase_ns[i]);
		json_u64(js, "ops", s->phase_ops[i]);
		json_obj_end(js);
	}
	json_arr_end(js);
	if (s->report_idx >= 0) {
		json_obj_begin(js, "report_phase");
		json_str(js, "name", churn_phase_names[s->phases[s->report_idx]]);
		json_u64(js, "index", (uint64_t)s->report_idx);
		json_u64(js, "ns", s->phase_ns[s->report_idx]);
		json_obj_end(js);
		json_u64(js, "report_phase_ns", s->phase_ns[s->report_idx]);
	} else {
		json_null(js, "report_phase");
		json_null(js, "report_phase_ns");
	}
	json_u64(js, "total_ns", s->total_ns);
	json_u64(js, "timer_overhead_ns", probe_timer_overhead_ns);
	json_rusage(js, "rusage", &s->ru0, &s->ru1);
}

static void churn_teardown(void *state)
{
	struct churn_state *s = state;

	if (s->dirfd >= 0)
		close(s->dirfd);
	s->dirfd = -1;
	free(s->names);
	free(s->fbuf);
	s->names = s->fbuf = NULL;
}

const struct probe_mode churn_mode = {
	.name = "churn",
	.summary = "phased metadata workload (create, sync, delete 1 in K, "
		   "drop_caches, sync), each phase timed",
	.params = churn_params,
	.state = &churn_state,
	.parse = churn_parse,
	.setup = churn_setup,
	.run = churn_run,
	.report = churn_report,
	.teardown = churn_teardown,
};
