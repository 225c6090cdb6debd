//===- SizeBindings.h - named dims bound to sizes (internal) --------------===//
#pragma once

#include "frontends/json/GraphError.h"
#include "frontends/json/GraphReader.h"

namespace fusec::json {

/// Replaces the named dims of every shape the graph states (inputs,
/// parameters, a node's stated shape, a `shape` attribute) by the sizes
/// `sizes` gives them; throws GraphError for a size given for no name of the
/// graph (reported first: a typo) and for a name left unbound, at its place.
void bindSizes(Json &doc, const SizeBindings &sizes);

} // namespace fusec::json
