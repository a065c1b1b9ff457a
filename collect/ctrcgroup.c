/*
 * Where a container's processes are.  A Docker container's init process is known (the
 * inspect answer's State.Pid): its own /proc/PID/cgroup names the directory.  A Pod's
 * container is known by its ID only: its directory is one of the kubelet's layouts for the
 * Pod's QoS class (systemd or cgroupfs driver) with the runtime's leaf name, and its init
 * process the one of cgroup.procs whose parent is outside the cgroup.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cgroup.h"
#include "ctarget.h"
#include "ctrcgroup.h"
#include "errbuf.h"

/* The runtime's leaf for the container: systemd scope or cgroupfs directory. */
static void
leaf(const struct ctr_identity *id, int systemd, char *out, size_t len)
{
	int crio = strcmp(id->runtime, "cri-o") == 0;
	if (systemd)
		snprintf(out, len, "%s-%s.scope", crio ? "crio" :
			 strcmp(id->runtime, "docker") == 0 ? "docker" : "cri-containerd", id->id);
	else
		snprintf(out, len, "%s%s", crio ? "crio-" : "", id->id);
}

static size_t
add(char out[][PATH_MAX], size_t n, size_t max, const char *fmt, const char *mnt,
    const char *a, const char *b, const char *c, const char *d)
{
	if (n < max && snprintf(out[n], PATH_MAX, fmt, mnt, a, b, c, d) < PATH_MAX)
		n++;
	return n;
}

size_t
ctr_pod_cgroup_candidates(const char *mnt, const struct ctr_identity *id,
			  char out[][PATH_MAX], size_t max)
{
	static const char *const classes[] = { "guaranteed", "burstable", "besteffort" };
	char uid_[sizeof(id->pod_uid)], sd[120], fs[120], q[32];
	size_t n = 0;

	snprintf(uid_, sizeof(uid_), "%s", id->pod_uid);
	for (char *p = uid_; *p; p++)
		if (*p == '-')
			*p = '_';
	leaf(id, 1, sd, sizeof(sd));
	leaf(id, 0, fs, sizeof(fs));
	snprintf(q, sizeof(q), "%s", id->qos);
	for (char *p = q; *p; p++)
		*p = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
	for (size_t i = 0; i < 3; i++) {
		/* An unknown class: every layout, the most likely first. */
		if (q[0] && strcmp(q, classes[i]) != 0)
			continue;
		if (i == 0) {
			n = add(out, n, max, "%s/kubepods.slice/kubepods-pod%s.slice/%s%s%s", mnt,
				uid_, sd, "", "");
			n = add(out, n, max, "%s/kubepods/pod%s/%s%s%s", mnt, id->pod_uid, fs, "",
				"");
			continue;
		}
		const char *c = classes[i];
		char slice[200];
		snprintf(slice, sizeof(slice), "kubepods-%s.slice/kubepods-%s-pod%s.slice", c, c,
			 uid_);
		n = add(out, n, max, "%s/kubepods.slice/%s/%s%s%s", mnt, slice, sd, "", "");
		n = add(out, n, max, "%s/kubepods/%s/pod%s/%s%s", mnt, c, id->pod_uid, fs, "");
	}
	return n;
}

static pid_t
parent_of(pid_t pid)
{
	char path[40], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	char *p = strrchr(buf, ')');
	int ppid;
	/* "PID (COMM) STATE PPID": the name may hold anything, even ") ". */
	if (!p || sscanf(p + 1, " %*c %d", &ppid) != 1)
		return -1;
	return (pid_t)ppid;
}

pid_t
ctr_init_pid(const char *dir)
{
	struct launch_cgroup g = { .fd = -1 };
	pid_t *procs, init = 0;
	size_t n;

	snprintf(g.path, sizeof(g.path), "%s", dir);
	if (cgroup_procs(&g, &procs, &n) < 0)
		return 0;
	for (size_t i = 0; i < n && !init; i++) {
		pid_t pp = parent_of(procs[i]);
		int inside = 0;
		for (size_t k = 0; k < n && pp > 0; k++)
			inside |= procs[k] == pp;
		if (pp >= 0 && !inside)
			init = procs[i];
	}
	free(procs);
	return init;
}

int
ctr_pod_cgroup(struct ctr_identity *id, char *err, size_t errlen)
{
	char mnt[PATH_MAX], cand[8][PATH_MAX];
	struct stat st;

	if (!cgroup_mount_point(mnt, sizeof(mnt), NULL, 0))
		return errbuf_fail(err, errlen, "no cgroup v2 hierarchy is mounted");
	size_t n = ctr_pod_cgroup_candidates(mnt, id, cand, 8);
	for (size_t i = 0; i < n; i++) {
		if (stat(cand[i], &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		/* both PATH_MAX: a bounded copy (some compilers cannot tell the row's size) */
		size_t len = strnlen(cand[i], sizeof(id->cgroup) - 1);
		memcpy(id->cgroup, cand[i], len);
		id->cgroup[len] = 0;
		id->pid = ctr_init_pid(id->cgroup);
		if (id->pid <= 0)
			return errbuf_fail(err, errlen, "cgroup %s of container %.12s has no process",
					   id->cgroup, id->id);
		return 0;
	}
	return errbuf_fail(err, errlen, "no cgroup of container %s://%.12s of Pod uid %s under "
			   "%s (kubelet layouts for QoS class '%s')", id->runtime, id->id,
			   id->pod_uid, mnt, id->qos[0] ? id->qos : "unknown");
}

int
ctr_task_cgroup(struct ctr_identity *id, char *err, size_t errlen)
{
	if (cgroup_of_task(id->pid, id->cgroup, sizeof(id->cgroup)) < 0)
		return errbuf_fail(err, errlen, "cannot read the cgroup v2 of pid %d (container "
				   "%.12s) from /proc/%d/cgroup", (int)id->pid, id->id, (int)id->pid);
	/* Seen from another cgroup namespace the path would be the wrong one. */
	if (!strstr(id->cgroup, id->id))
		return errbuf_fail(err, errlen, "the cgroup of pid %d, %s, does not name container "
				   "%.12s: run in the host's cgroup namespace", (int)id->pid,
				   id->cgroup, id->id);
	return 0;
}
