// -fusec-partition refuses a split it cannot make, naming the argument.
// RUN: fusec-opt %s -split-input-file -verify-diagnostics -fusec-partition=ranks=2

// expected-error @+1 {{argument 'w': dim 0 (3) is not a multiple of the ranks (2)}}
func.func @odd(%w: tensor<3x4xf32> {fusec.name = "w", fusec.shard = 0 : i64}) -> tensor<3x4xf32> {
  return %w : tensor<3x4xf32>
}

// -----

// (The name is printed escaped: argument 'w\x0a'.)
// expected-error @+1 {{': shard dim 2 is out of range for shape [4, 4]}}
func.func @out_of_range(%w: tensor<4x4xf32> {fusec.name = "w\n", fusec.shard = 2 : i64}) -> tensor<4x4xf32> {
  return %w : tensor<4x4xf32>
}
