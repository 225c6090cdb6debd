//===- FusecOps.td - all fusec ops ----------------------------------------===//
#ifndef FUSEC_OPS_TD
#define FUSEC_OPS_TD

include "compiler/dialect/ElementwiseOps.td"
include "compiler/dialect/ReductionOps.td"
include "compiler/dialect/LayoutOps.td"
include "compiler/dialect/CompositeOps.td"
include "compiler/dialect/CollectiveOps.td"
include "compiler/dialect/FusionAttrs.td"
include "compiler/dialect/FusionOps.td"

#endif // FUSEC_OPS_TD
