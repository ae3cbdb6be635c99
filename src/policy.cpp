// catalog::catalog compiles <catalog/impl/policy.ipp> here; a header-only host compiles it
// through <catalog/src.hpp> instead.
#include <catalog/impl/policy.ipp>
