/* demangle: C++ (Itanium) and Rust (legacy and v0) symbol names made readable. */
#ifndef RP_DEMANGLE_H
#define RP_DEMANGLE_H

/* Returns a malloc'ed readable name the caller frees, or NULL when `mangled` is not a
 * mangled name we understand (the caller then keeps the raw name).  Rust legacy names lose
 * their "::h<16 hex digits>" hash suffix, as rustc's own backtraces print them. */
char *sym_demangle(const char *mangled);

#endif
