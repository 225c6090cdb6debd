//===- SharedLibrary.cpp - libfusec.so: fusec_api, whole -------------------===//
//
// libfusec.so has no code of its own: it is the static fusec_api library
// linked whole (every public entry point kept) with what that uses.
//
//===----------------------------------------------------------------------===//
