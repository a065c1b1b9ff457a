/* page: the gallery's page at GET /.  The page is static; its script lists the windows from
 * GET /api/profiles, so what it shows is what the API answers. */
#include <stdlib.h>
#include <string.h>

#include "gallery.h"

static const char page[] =
"<!DOCTYPE html>\n"
"<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
"<title>rustprofile gallery</title>\n"
"<style>body{font:14px sans-serif;margin:2em}table{border-collapse:collapse}"
"td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}th{background:#eee}</style>\n"
"</head><body>\n"
"<h1>rustprofile gallery</h1>\n"
"<p id=\"status\">Loading the list of windows&hellip;</p>\n"
"<table id=\"windows\"><thead><tr><th>Window</th><th>Start (UTC)</th><th>Duration</th>"
"<th>CPU samples</th><th>Target</th><th>Profile</th><th>Open</th></tr></thead>"
"<tbody></tbody></table>\n"
"<script>\n"
"'use strict';\n"
"function cell(tr, text, href) {\n"
"  const td = document.createElement('td');\n"
"  if (href) { const a = document.createElement('a'); a.href = href; a.textContent = text;\n"
"    td.appendChild(a); } else { td.textContent = text; }\n"
"  tr.appendChild(td);\n"
"}\n"
"function when(ns) { return ns == null ? '?' :\n"
"  new Date(Number(BigInt(ns) / 1000000n)).toISOString().replace('T', ' ').replace('Z', ''); }\n"
"fetch('api/profiles').then(r => r.json()).then(list => {\n"
"  const body = document.querySelector('#windows tbody');\n"
"  for (const p of list.profiles) {\n"
"    const d = p.diagnostics || {}, tr = document.createElement('tr');\n"
"    tr.className = 'window';\n"
"    cell(tr, d.window_index != null ? String(d.window_index) : '?');\n"
"    cell(tr, when(d.window_start_unix_nanos));\n"
"    cell(tr, d.window_start_unix_nanos != null && d.window_end_unix_nanos != null ?\n"
"      (Number(BigInt(d.window_end_unix_nanos) - BigInt(d.window_start_unix_nanos)) / 1e9)\n"
"        .toFixed(3) + ' s' : '?');\n"
"    cell(tr, d.cpu_samples != null ? String(d.cpu_samples) : (d.note || '?'));\n"
"    cell(tr, d.comm ? d.comm + ' (pid ' + d.pid + ') ' + (d.executable || '') : '?');\n"
"    cell(tr, p.file, p.url);\n"
"    cell(tr, 'Firefox Profiler', p.firefox_url);\n"
"    body.appendChild(tr);\n"
"  }\n"
"  document.getElementById('status').textContent = list.profiles.length + ' window' +\n"
"    (list.profiles.length == 1 ? '' : 's') + (list.truncated ? ' (list truncated)' : '');\n"
"}).catch(e => { document.getElementById('status').textContent = 'Cannot list: ' + e; });\n"
"</script>\n"
"</body></html>\n";

void
gallery_page(struct serve *s, struct answer *a)
{
	(void)s;
	free(a->body);
	a->body = strdup(page);
	a->len = a->body ? strlen(a->body) : 0;
	a->status = a->body ? 200 : 500;
	a->type = "text/html; charset=utf-8";
}
