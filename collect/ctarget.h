/*
 * Container targets (manual: "record", "Docker and Kubernetes deployment", "Target
 * lifecycle, signals, and partial mode"): a Docker container by ID or name, or a Kubernetes
 * Pod's application container, resolved to the host pid of its init process, the directory
 * of its cgroup v2 and its identity.  The identity is fixed at the start (the full container
 * ID; for a Pod its UID and container name); ctr_follow asks again after the init process
 * ended and tells a restart of the same identity from a container that is gone.
 *
 * This unit knows nothing of the recording: record, launch and check call it alike.
 */
#ifndef COLLECT_CTARGET_H
#define COLLECT_CTARGET_H

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

enum ctr_kind { CTR_NONE, CTR_DOCKER, CTR_K8S };

struct ctr_selector {
	enum ctr_kind kind;
	const char *docker;             /* --docker-container ID_OR_NAME */
	const char *pod;                /* --k8s-pod NAMESPACE/NAME */
	const char *container;          /* --container NAME (Kubernetes only) */
};

/* What a container runtime or the Pod API says of the selected container. */
struct ctr_identity {
	enum ctr_kind kind;
	char runtime[16];               /* "docker", "containerd", "cri-o", ... */
	char id[65];                    /* the full container ID, lower-case hex */
	char name[254];                 /* Docker: the name without '/'; Kubernetes: container */
	char status[32];                /* "running", or why not (exited, waiting, ...) */
	char started_at[64];            /* RFC 3339, as the API says; "" when not running */
	pid_t pid;                      /* the init process on the host; 0 when not running */
	/* Kubernetes */
	char ns[254], pod[254], pod_uid[64], node[254], qos[32];
	/* The cgroup v2 directory of the container (absolute, under the cgroup2 mount). */
	char cgroup[PATH_MAX];
};

/* The outcome of asking again while the init process is gone. */
enum ctr_state { CTR_DOWN, CTR_RESTARTED, CTR_GONE };

/* Resolves the selector to a running container: 0 with id filled, or -1 with a one-line
 * err (the API's own reason when it refused, e.g. "No such container: x"). */
int ctr_resolve(const struct ctr_selector *sel, struct ctr_identity *id, char *err,
		size_t errlen);
/* Asks again for the container id names (its fixed identity): CTR_RESTARTED with the new
 * pid, start time and cgroup in id, CTR_DOWN while it is not running (a transient API
 * failure too, with err set), CTR_GONE with err saying why (removed, a replaced Pod). */
enum ctr_state ctr_follow(struct ctr_identity *id, pid_t old_pid, char *err, size_t errlen);

/* ---- the pieces, for the unit tests and the fuzz target ---- */

/* GET /containers/{id}/json: 0 with the fields filled (pid 0 unless running), or -1. */
int ctr_docker_parse(const char *json, size_t len, struct ctr_identity *id, char *err,
		     size_t errlen);
/* A Pod object: metadata, node and the application container `want` (NULL: the only one)
 * with its status.  -1 with err for a selection the manual refuses (init or ephemeral
 * container, several application containers and no --container, no such container). */
int ctr_pod_parse(const char *json, size_t len, const char *want, struct ctr_identity *id,
		  char *err, size_t errlen);
/* The error text of an API answer: Docker's {"message":...}, Kubernetes' Status message;
 * 0, or -1 when the body has none. */
int ctr_api_message(const char *json, size_t len, char *out, size_t outlen);
/* "containerd://HEX" -> runtime and id; -1 when the ID is not 64 hex digits. */
int ctr_split_container_id(const char *s, char *runtime, size_t rlen, char *id, size_t idlen);
/* The cgroup directories a Pod's container may have under mnt, most likely first (the
 * kubelet's systemd and cgroupfs layouts for its QoS class, the runtime's leaf name); the
 * number written to out (at most max). */
size_t ctr_pod_cgroup_candidates(const char *mnt, const struct ctr_identity *id,
				 char out[][PATH_MAX], size_t max);

#endif
