/*
 * One HTTP attempt of an export (libcurl): POST the body to the configured URL with the
 * headers exporter_prepare made, at most the configured timeout, and judge the answer
 * (response.h).  A failure of the transfer itself is transient (worth another attempt)
 * when it is one of resolution, connection, I/O, timeout or a broken HTTP answer; a TLS,
 * certificate or URL error is not.  Every message is sanitized and has the header values
 * blotted out (config_redact).
 */
#ifndef EO_TRANSPORT_H
#define EO_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#include "response.h"

struct exporter;

void transport_attempt(struct exporter *x, const uint8_t *body, size_t len, struct verdict *v);

#endif
