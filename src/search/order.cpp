// catalog::catalog compiles <catalog/impl/search/order.ipp> here; a header-only host compiles
// it through <catalog/src.hpp> instead.
#include <catalog/impl/search/order.ipp>
