/*
 * A Docker container through the Engine API on its unix socket ($DOCKER_HOST when it is a
 * unix:// address, else /var/run/docker.sock).  The API version is negotiated: the daemon's
 * own (GET /_ping, Api-Version) up to the newest this client knows, so both a 20.10 daemon
 * (1.41) and a 29.x one (minimum 1.44) answer.  The container is then asked for by its full
 * ID only, which a new container of the same name never has.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctarget.h"
#include "ctrcgroup.h"
#include "ctrhttp.h"
#include "docker.h"
#include "errbuf.h"

#define DEFAULT_SOCKET "/var/run/docker.sock"
#define NEWEST_API "1.44"

static int
socket_path(char *out, size_t len, char *err, size_t errlen)
{
	const char *h = getenv("DOCKER_HOST");
	if (!h || !*h)
		h = "unix://" DEFAULT_SOCKET;
	if (strncmp(h, "unix://", 7) != 0)
		return errbuf_fail(err, errlen, "DOCKER_HOST '%s': only a unix:// socket is "
				   "supported", h);
	if (snprintf(out, len, "%s", h + 7) >= (int)len || !out[0])
		return errbuf_fail(err, errlen, "DOCKER_HOST '%s' is not a socket path", h);
	return 0;
}

/* "1.41" < "1.44": major and minor compared as numbers. */
static int
older(const char *a, const char *b)
{
	unsigned am, an, bm, bn;
	if (sscanf(a, "%u.%u", &am, &an) != 2 || sscanf(b, "%u.%u", &bm, &bn) != 2)
		return 0;
	return am < bm || (am == bm && an < bn);
}

static int
api_version(struct ctr_http *h, char *ver, size_t len, char *err, size_t errlen)
{
	struct ctr_reply r;
	char why[400];
	h->want_header = "Api-Version";
	int rc = ctr_http_get(h, "http://docker/_ping", &r, why, sizeof(why));
	h->want_header = NULL;
	if (rc < 0)
		return errbuf_fail(err, errlen, "cannot reach the Docker Engine API at %s: %s",
				   h->unix_socket, why);
	unsigned m, n;
	int ok = r.status == 200 && sscanf(r.header, "%u.%u", &m, &n) == 2;
	snprintf(ver, len, "%.15s", ok && older(r.header, NEWEST_API) ? r.header : NEWEST_API);
	ctr_reply_free(&r);
	if (!ok)
		return errbuf_fail(err, errlen, "the Docker Engine API at %s answered /_ping "
				   "without an Api-Version", h->unix_socket);
	return 0;
}

/* A name or ID goes into the URL path as it is: only the characters Docker allows. */
static int
valid_ref(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 253 || !isalnum((unsigned char)s[0]))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("_.-", s[i]))
			return 0;
	return 1;
}

/* GET /containers/REF/json: 0 and parsed; 1 when the daemon says 404; -1 with err. */
static int
inspect(const char *ref, struct ctr_identity *id, char *err, size_t errlen)
{
	char sock[4096], ver[32], url[512], why[400], msg[512];
	struct ctr_http h = { .unix_socket = sock };
	struct ctr_reply r;

	if (socket_path(sock, sizeof(sock), err, errlen) < 0 ||
	    api_version(&h, ver, sizeof(ver), err, errlen) < 0)
		return -1;
	snprintf(url, sizeof(url), "http://docker/v%s/containers/%s/json", ver, ref);
	if (ctr_http_get(&h, url, &r, why, sizeof(why)) < 0)
		return errbuf_fail(err, errlen, "docker inspect %s: %s", ref, why);
	int rc = 0;
	if (r.status != 200) {
		if (ctr_api_message(r.body, r.len, msg, sizeof(msg)) < 0)
			snprintf(msg, sizeof(msg), "HTTP status %ld", r.status);
		rc = r.status == 404 ? 1 : -1;
		errbuf_fail(err, errlen, "docker: %s", msg);
	} else if (ctr_docker_parse(r.body, r.len, id, why, sizeof(why)) < 0) {
		rc = errbuf_fail(err, errlen, "docker inspect %s: %s", ref, why);
	}
	ctr_reply_free(&r);
	return rc;
}

int
docker_resolve(const char *ref, struct ctr_identity *id, char *err, size_t errlen)
{
	if (!valid_ref(ref))
		return errbuf_fail(err, errlen, "--docker-container '%s' is not a container ID or "
				   "name", ref);
	if (inspect(ref, id, err, errlen) != 0)
		return -1;
	if (id->pid <= 0)
		return errbuf_fail(err, errlen, "docker container %s (%.12s) is not running "
				   "(status %s)", id->name, id->id, id->status);
	return ctr_task_cgroup(id, err, errlen);
}

enum ctr_state
docker_follow(struct ctr_identity *id, pid_t old_pid, char *err, size_t errlen)
{
	struct ctr_identity now;
	int rc = inspect(id->id, &now, err, errlen);
	if (rc == 1) {
		snprintf(err, errlen, "docker container %s (%.12s) was removed", id->name, id->id);
		return CTR_GONE;
	}
	if (rc < 0 || now.pid <= 0 || now.pid == old_pid) {
		if (rc == 0)
			snprintf(id->status, sizeof(id->status), "%s", now.status);
		return CTR_DOWN;
	}
	if (ctr_task_cgroup(&now, err, errlen) < 0)
		return CTR_DOWN; /* the new process may not be in its cgroup yet: ask again */
	*id = now;
	return CTR_RESTARTED;
}
