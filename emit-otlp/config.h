/*
 * The export's settings, from emit-otlp's options (the driver's --otlp-* options) and the
 * environment, with the manual's precedence ("OTLP Profiles export"): an option given on
 * the command line, else the Profiles variable (OTEL_EXPORTER_OTLP_PROFILES_*), else the
 * generic one (OTEL_EXPORTER_OTLP_*), else the default.  Each setting is taken whole from
 * the first place that has it (headers included: Profiles headers replace the generic
 * ones).  Resource attributes are merged by key instead, later winning: the detected ones,
 * OTEL_RESOURCE_ATTRIBUTES, OTEL_SERVICE_NAME, --resource-attribute.
 *
 * A bad value is one line naming where it came from (option or variable), never a header
 * value: those are secrets (Authorization), kept only to be sent and to be blotted out of
 * any message (config_redact).
 */
#ifndef EO_CONFIG_H
#define EO_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#define CONFIG_MAX_HEADERS 64
#define CONFIG_MAX_ATTRS 64
#define OTLP_PATH "/v1development/profiles"

struct config_kv {
	char *key, *value;
};

/* What the command line gave (NULL or 0: not given). */
struct config_cli {
	const char *endpoint, *timeout, *compression, *ca;
	const char *headers[CONFIG_MAX_HEADERS];
	size_t nheaders;
	const char *attrs[CONFIG_MAX_ATTRS];
	size_t nattrs;
};

struct config {
	int enabled;            /* an endpoint was given somewhere */
	char *url;              /* where requests go */
	int https;
	uint16_t port;
	char *host;
	struct config_kv headers[CONFIG_MAX_HEADERS];
	size_t nheaders;
	uint64_t timeout_ms;
	int gzip;
	char *ca;               /* extra PEM CA file, or NULL */
	/* From the user, merged: OTEL_RESOURCE_ATTRIBUTES, OTEL_SERVICE_NAME (as service.name),
	 * --resource-attribute */
	struct config_kv attrs[CONFIG_MAX_ATTRS];
	size_t nattrs;
};

/* Resolves c from cli and the environment; 0, or -1 with one line in err. */
int config_resolve(struct config *c, const struct config_cli *cli, char *err, size_t errlen);
void config_release(struct config *c);
/* Blots every header value of c (of 4 bytes or more) out of s, in place, with "***". */
void config_redact(const struct config *c, char *s);

#endif
