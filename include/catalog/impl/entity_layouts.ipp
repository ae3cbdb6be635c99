#ifndef CATALOG_IMPL_ENTITY_LAYOUTS_IPP
#define CATALOG_IMPL_ENTITY_LAYOUTS_IPP

// The one definition of the conversion table of each described struct of the public headers,
// which entities.hpp and change_event.hpp declare `extern template`: every other translation
// unit calls these instead of instantiating fields<T>() and the member conversions again.

#include <catalog/change_event.hpp>
#include <catalog/detail/json_mapping.hpp>
#include <catalog/entities.hpp>

namespace catalog::detail {
CATALOG_DETAIL_ENTITY_LAYOUTS_()
template CATALOG_DECL const Layout& layout<ChangeEvent>();
}  // namespace catalog::detail

#endif  // CATALOG_IMPL_ENTITY_LAYOUTS_IPP
