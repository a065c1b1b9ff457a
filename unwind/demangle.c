/* demangle: thin wrapper over libiberty's demangler (see demangle.h). */
#include "demangle.h"

#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

/* A Rust legacy hash: "::h" followed by exactly 16 hex digits at the end of the name. */
static void strip_rust_hash(char *s)
{
	size_t len = strlen(s);

	if (len < 19 || memcmp(s + len - 19, "::h", 3) != 0)
		return;
	for (size_t i = len - 16; i < len; i++) {
		char c = s[i];
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return;
	}
	s[len - 19] = '\0';
}

char *sym_demangle(const char *mangled)
{
	/* _Z: Itanium C++ and Rust legacy (which wraps it); _R: Rust v0.  Checking the prefix
	 * first keeps plain C names from a round trip through the demangler. */
	if (!mangled || mangled[0] != '_' || (mangled[1] != 'Z' && mangled[1] != 'R'))
		return NULL;

	/* DMGL_AUTO lets libiberty try the Rust grammars before GNU v3. */
	char *out = cplus_demangle(mangled, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
	if (out)
		strip_rust_hash(out);
	return out;
}
