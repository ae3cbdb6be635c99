// catalog::catalog compiles <catalog/impl/engine/render.ipp> here; a header-only host compiles
// it through <catalog/src.hpp> instead.
#include <catalog/impl/engine/render.ipp>
