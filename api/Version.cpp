//===- Version.cpp - the library's version ---------------------------------===//
#include "fusec/fusec.h"

namespace fusec {

const char *version() { return FUSEC_VERSION; }

} // namespace fusec
