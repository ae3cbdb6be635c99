#ifndef CATALOG_DETAIL_EXPORT_HPP
#define CATALOG_DETAIL_EXPORT_HPP

// CATALOG_DECL marks the declarations a shared libcatalog (and libcatalog_rest,
// libcatalog_postgres) exports: the public API and the few functions its inline code calls.
// The libraries are compiled with hidden visibility, so everything else (the engine, the key
// schema, the search index, the storage internals) stays inside them and may change in any
// release without breaking the ABI (docs/COMPATIBILITY.md). The same headers serve a static
// library and header-only use (<catalog/src.hpp>), where the mark changes nothing.
#if defined(__GNUC__) || defined(__clang__)
#define CATALOG_DECL __attribute__((visibility("default")))
/// Marks a class nested in an exported one as the library's own: not exported either.
#define CATALOG_LOCAL __attribute__((visibility("hidden")))
#else
#define CATALOG_DECL
#define CATALOG_LOCAL
#endif

#endif  // CATALOG_DETAIL_EXPORT_HPP
