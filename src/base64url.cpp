// catalog::catalog compiles <catalog/impl/base64url.ipp> here; a header-only host compiles it
// through <catalog/src.hpp> instead.
#include <catalog/impl/base64url.ipp>
