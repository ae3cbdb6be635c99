// catalog::catalog compiles <catalog/impl/admin/dump.ipp> here; a header-only host compiles it
// through <catalog/src.hpp> instead.
#include <catalog/impl/admin/dump.ipp>
