#ifndef CATALOG_SRC_HPP
#define CATALOG_SRC_HPP

// The whole of catalog::catalog, for a host that uses the library header-only (the way
// <boost/json/src.hpp> works): include this file in exactly one translation unit of the program,
// and link what catalog::catalog links: LMDB (liblmdb), OpenSSL's libcrypto, utf8proc, libstemmer,
// Boost.JSON and Boost.System. Every other translation unit includes the public headers as usual. A host that
// links catalog::catalog must not include this file: each function would be defined twice.
//
// catalog::rest (the HTTP surface, with Boost.URL) and catalog::postgres (libpq) stay compiled
// libraries; they link on top of either form.

#include <catalog/impl/admin/admin.ipp>
#include <catalog/impl/admin/dump.ipp>
#include <catalog/impl/auth/jwt.ipp>
#include <catalog/impl/base64url.ipp>
#include <catalog/impl/engine/authorization.ipp>
#include <catalog/impl/engine/create.ipp>
#include <catalog/impl/engine/cursor.ipp>
#include <catalog/impl/engine/events.ipp>
#include <catalog/impl/engine/keys.ipp>
#include <catalog/impl/engine/lifecycle.ipp>
#include <catalog/impl/engine/list.ipp>
#include <catalog/impl/engine/patch.ipp>
#include <catalog/impl/engine/record.ipp>
#include <catalog/impl/engine/references.ipp>
#include <catalog/impl/engine/render.ipp>
#include <catalog/impl/engine/social.ipp>
#include <catalog/impl/engine/tx.ipp>
#include <catalog/impl/engine/upgrade.ipp>
#include <catalog/impl/engine/validate.ipp>
#include <catalog/impl/engine/values.ipp>
#include <catalog/impl/engine/verify.ipp>
#include <catalog/impl/search/analyzer.ipp>
#include <catalog/impl/search/candidates.ipp>
#include <catalog/impl/search/check.ipp>
#include <catalog/impl/search/facets.ipp>
#include <catalog/impl/search/filter.ipp>
#include <catalog/impl/search/highlight.ipp>
#include <catalog/impl/search/index.ipp>
#include <catalog/impl/search/index_writes.ipp>
#include <catalog/impl/search/order.ipp>
#include <catalog/impl/search/query.ipp>
#include <catalog/impl/search/query_parse.ipp>
#include <catalog/impl/search/suggest.ipp>
#include <catalog/impl/fqn.ipp>
#include <catalog/impl/json.ipp>
#include <catalog/impl/entity_layouts.ipp>
#include <catalog/impl/json_mapping.ipp>
#include <catalog/impl/json_patch.ipp>
#include <catalog/impl/kind.ipp>
#include <catalog/impl/policy.ipp>
#include <catalog/impl/principal.ipp>
#include <catalog/impl/storage/backend.ipp>
#include <catalog/impl/storage/lmdb_backend.ipp>
#include <catalog/impl/storage/memory_backend.ipp>
#include <catalog/impl/store/counting.ipp>
#include <catalog/impl/store/store.ipp>
#include <catalog/impl/store/store_events.ipp>
#include <catalog/impl/store/store_lifecycle.ipp>
#include <catalog/impl/store/store_list.ipp>
#include <catalog/impl/store/store_search.ipp>
#include <catalog/impl/store/store_social.ipp>
#include <catalog/impl/store/store_verify.ipp>
#include <catalog/impl/uuid.ipp>
#include <catalog/impl/version.ipp>

#endif  // CATALOG_SRC_HPP
