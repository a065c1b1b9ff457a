/*
 * A Pod through the Kubernetes API from inside the node's profiler Pod, as client-go's
 * in-cluster configuration does it: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT,
 * the service account's CA and bearer token (read again for every request: the kubelet
 * rotates it).  RUSTPROFILE_K8S_SERVICEACCOUNT_DIR replaces the service account directory,
 * for tests.  NODE_NAME (the DaemonSet's downward API) is this node: a Pod elsewhere is
 * refused, as its processes are not ours to see.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctarget.h"
#include "ctrcgroup.h"
#include "ctrhttp.h"
#include "errbuf.h"
#include "k8s.h"

#define SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"
#define SA_ENV "RUSTPROFILE_K8S_SERVICEACCOUNT_DIR"
#define TOKEN_MAX 65536

/* A DNS-1123 name (namespace, Pod): it goes into the URL as it is. */
static int
dns_name(const char *s, size_t n)
{
	if (n == 0 || n > 253 || !isalnum((unsigned char)s[0]))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!(islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]) ||
		      s[i] == '-' || s[i] == '.'))
			return 0;
	return 1;
}

static int
read_token(const char *dir, char *out, size_t len, char *err, size_t errlen)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/token", dir);
	FILE *f = fopen(path, "re");
	if (!f)
		return errbuf_fail(err, errlen, "cannot read the service account token %s: %s",
				   path, strerror(errno));
	size_t n = fread(out, 1, len - 1, f);
	int big = n == len - 1 && fgetc(f) != EOF;
	fclose(f);
	while (n && isspace((unsigned char)out[n - 1]))
		n--;
	out[n] = 0;
	if (big || !n || strpbrk(out, "\r\n"))
		return errbuf_fail(err, errlen, "the service account token %s is not one line", path);
	return 0;
}

/* GET the Pod: 0 and parsed; 1 when the API says 404; -1 with err. */
static int
get_pod(const char *ns, const char *name, const char *want, struct ctr_identity *id,
	char *err, size_t errlen)
{
	const char *host = getenv("KUBERNETES_SERVICE_HOST"), *port = getenv("KUBERNETES_SERVICE_PORT");
	const char *dir = getenv(SA_ENV) && *getenv(SA_ENV) ? getenv(SA_ENV) : SA_DIR;
	char ca[4200], url[1400], why[400], msg[600];
	static char token[TOKEN_MAX];
	struct ctr_reply r;

	if (!host || !*host || !port || !*port)
		return errbuf_fail(err, errlen, "--k8s-pod needs in-cluster execution: "
				   "KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set");
	if (strlen(host) > 255 || strlen(port) > 5 || strpbrk(host, "/?#@ ") || strpbrk(port, "/?#@ "))
		return errbuf_fail(err, errlen, "KUBERNETES_SERVICE_HOST/PORT are not a host and port");
	if (read_token(dir, token, sizeof(token), err, errlen) < 0)
		return -1;
	snprintf(ca, sizeof(ca), "%s/ca.crt", dir);
	snprintf(url, sizeof(url), strchr(host, ':') ? "https://[%s]:%s/api/v1/namespaces/%s/pods/%s"
		 : "https://%s:%s/api/v1/namespaces/%s/pods/%s", host, port, ns, name);
	struct ctr_http h = { .ca_file = ca, .bearer = token };
	if (ctr_http_get(&h, url, &r, why, sizeof(why)) < 0)
		return errbuf_fail(err, errlen, "kubernetes: GET pod %s/%s: %s", ns, name, why);
	int rc = 0;
	if (r.status != 200) {
		if (ctr_api_message(r.body, r.len, msg, sizeof(msg)) < 0)
			msg[0] = 0;
		rc = r.status == 404 ? 1 : -1;
		errbuf_fail(err, errlen, "kubernetes: %s%sHTTP status %ld", msg, msg[0] ? " (" : "",
			    r.status);
		if (msg[0])
			snprintf(err + strlen(err), errlen - strlen(err), ")");
	} else if (ctr_pod_parse(r.body, r.len, want, id, why, sizeof(why)) < 0) {
		rc = errbuf_fail(err, errlen, "kubernetes: %s", why);
	}
	ctr_reply_free(&r);
	return rc;
}

static int
same_node(const struct ctr_identity *id, char *err, size_t errlen)
{
	const char *node = getenv("NODE_NAME");
	if (!node || !*node)
		return errbuf_fail(err, errlen, "NODE_NAME is not set: the profiler Pod must set it "
				   "from spec.nodeName (the same-node check needs it)");
	if (!id->node[0])
		return errbuf_fail(err, errlen, "Pod %s/%s is not scheduled on a node yet", id->ns,
				   id->pod);
	if (strcmp(id->node, node) != 0)
		return errbuf_fail(err, errlen, "Pod %s/%s runs on node %s, not on this node (%s): "
				   "cross-node targets are rejected", id->ns, id->pod, id->node, node);
	return 0;
}

int
k8s_split(const char *sel, char *ns, size_t nslen, char *name, size_t namelen)
{
	const char *slash = strchr(sel, '/');
	if (!slash || !dns_name(sel, (size_t)(slash - sel)) || !dns_name(slash + 1, strlen(slash + 1)) ||
	    (size_t)(slash - sel) >= nslen || strlen(slash + 1) >= namelen)
		return -1;
	snprintf(ns, nslen, "%.*s", (int)(slash - sel), sel);
	snprintf(name, namelen, "%s", slash + 1);
	return 0;
}

int
k8s_resolve(const char *sel, const char *want, struct ctr_identity *id, char *err,
	    size_t errlen)
{
	char ns[254], name[254];
	if (k8s_split(sel, ns, sizeof(ns), name, sizeof(name)) < 0)
		return errbuf_fail(err, errlen, "--k8s-pod '%s' is not NAMESPACE/NAME", sel);
	if (want && !dns_name(want, strlen(want)))
		return errbuf_fail(err, errlen, "--container '%s' is not a container name", want);
	if (get_pod(ns, name, want, id, err, errlen) != 0 || same_node(id, err, errlen) < 0)
		return -1;
	if (strcmp(id->status, "running") != 0)
		return errbuf_fail(err, errlen, "container '%s' of Pod %s/%s is not running (%s)",
				   id->name, ns, name, id->status);
	return ctr_pod_cgroup(id, err, errlen);
}

enum ctr_state
k8s_follow(struct ctr_identity *id, pid_t old_pid, char *err, size_t errlen)
{
	struct ctr_identity now;
	int rc = get_pod(id->ns, id->pod, id->name, &now, err, errlen);
	if (rc == 1) {
		snprintf(err, errlen, "Pod %s/%s was deleted", id->ns, id->pod);
		return CTR_GONE;
	}
	if (rc == 0 && strcmp(now.pod_uid, id->pod_uid) != 0) {
		snprintf(err, errlen, "Pod %s/%s was replaced (uid %s, not %s): not followed",
			 id->ns, id->pod, now.pod_uid, id->pod_uid);
		return CTR_GONE;
	}
	if (rc < 0 || strcmp(now.status, "running") != 0)
		return CTR_DOWN;
	if (ctr_pod_cgroup(&now, err, errlen) < 0 || now.pid == old_pid)
		return CTR_DOWN;
	*id = now;
	return CTR_RESTARTED;
}
