#!/usr/bin/env python3
"""Exports the ONNX test models of issue 32 and onnxruntime's outputs for them.

Runs where torch, transformers, onnx and onnxruntime are installed (the GPU
machine; no GPU is used). Each model is built from a configuration with
random weights (no download), small enough to commit (under 8 MB), and
exported by torch.onnx.export (the TorchScript path) with named dynamic axes
`batch` and `sequence`. For two sequence lengths it stores the inputs and
onnxruntime's outputs, which CI checks without a GPU:

  fusec eval test/models/gpt2/model.onnx --bind batch=2,sequence=7 \
      --inputs test/models/gpt2/inputs_s7.safetensors \
      --expect test/models/gpt2/expected_s7.safetensors --tolerance 1e-4

The text models take token ids (`input_ids`; BERT also an attention mask with
padding); the vision transformer (ViT) takes 32 x 32 images (`pixel_values`),
its dynamic axis the batch (sizes 1 and 3, files `*_b1`, `*_b3`). Usage:

  python3 test/models/make_models.py [--out test/models] [--models gpt2,llama,bert,vit]
"""
import argparse
import os

import numpy as np
import onnxruntime as ort
import torch
import transformers
from safetensors.numpy import save_file

SEQUENCES = (7, 33)
BATCH = 2
HIDDEN = 128


class Hidden(torch.nn.Module):
    """The model's last hidden state from embeddings (and a mask)."""

    def __init__(self, model, masked):
        super().__init__()
        self.model = model
        self.masked = masked

    def forward(self, input_ids, attention_mask=None):
        if self.masked is None:  # a vision model: input_ids are its pixel values
            return self.model(pixel_values=input_ids).last_hidden_state
        kwargs = {"input_ids": input_ids, "use_cache": False} if not self.masked else {
            "input_ids": input_ids, "attention_mask": attention_mask}
        return self.model(**kwargs).last_hidden_state


def build(name):
    if name == "gpt2":
        cfg = transformers.GPT2Config(n_layer=2, n_embd=HIDDEN, n_head=4, n_inner=512,
                                      n_positions=256, vocab_size=1000, resid_pdrop=0.0,
                                      embd_pdrop=0.0, attn_pdrop=0.0)
        return transformers.GPT2Model(cfg), False
    if name == "llama":
        cfg = transformers.LlamaConfig(hidden_size=HIDDEN, intermediate_size=344,
                                       num_hidden_layers=2, num_attention_heads=8,
                                       num_key_value_heads=2, vocab_size=1000,
                                       max_position_embeddings=256, rms_norm_eps=1e-5)
        return transformers.LlamaModel(cfg), False
    if name == "bert":
        cfg = transformers.BertConfig(hidden_size=HIDDEN, num_hidden_layers=2,
                                      num_attention_heads=4, intermediate_size=512,
                                      vocab_size=1000, max_position_embeddings=256,
                                      hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
        return transformers.BertModel(cfg), True
    if name == "vit":
        cfg = transformers.ViTConfig(hidden_size=HIDDEN, num_hidden_layers=2,
                                     num_attention_heads=4, intermediate_size=512,
                                     image_size=32, patch_size=8, num_channels=3,
                                     hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
        return transformers.ViTModel(cfg, add_pooling_layer=False), None
    raise SystemExit(f"unknown model {name}")


def sizes(masked):
    """(file suffix, size) of each stored case: sequence lengths, or a vision model's batches."""
    if masked is None:
        return [("b%d" % b, b) for b in (1, 3)]
    return [("s%d" % s, s) for s in SEQUENCES]


def inputs_for(masked, seq, seed):
    g = torch.Generator().manual_seed(seed)
    if masked is None:  # `seq` is the batch: images of 3 x 32 x 32
        return {"pixel_values": torch.randn(seq, 3, 32, 32, generator=g)}
    x = {"input_ids": torch.randint(0, 1000, (BATCH, seq), generator=g)}
    if masked:  # the second sequence padded in its last 3 positions
        mask = torch.ones(BATCH, seq, dtype=torch.int64)
        mask[1, -3:] = 0
        x["attention_mask"] = mask
    return x


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--models", default="gpt2,llama,bert,vit")
    args = ap.parse_args()
    for name in args.models.split(","):
        torch.manual_seed(0)
        model, masked = build(name)
        model.config._attn_implementation = "eager"  # the softmax written out, as fusec reads it
        model.eval()
        wrapper = Hidden(model, masked)
        folder = os.path.join(args.out, name)
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, "model.onnx")
        example = inputs_for(masked, 2 if masked is None else SEQUENCES[0], 1)
        names = list(example)
        dims = {0: "batch"} if masked is None else {0: "batch", 1: "sequence"}
        axes = {n: dims for n in names}
        axes["hidden"] = dims
        # The TorchScript exporter where it takes the model, else the dynamo one
        # (newer transformers build masks with ops TorchScript cannot export).
        exporter = "torchscript"
        with torch.no_grad():
            try:
                torch.onnx.export(wrapper, tuple(example.values()), path, input_names=names,
                                  output_names=["hidden"], dynamic_axes=axes, opset_version=17,
                                  do_constant_folding=True, dynamo=False)
            except Exception as e:  # noqa: BLE001 - any exporter failure falls back
                print(f"{name}: TorchScript export failed ({type(e).__name__}: "
                      f"{str(e).splitlines()[0]}); exporting with dynamo")
                exporter = "dynamo"
                torch.onnx.export(wrapper, tuple(example.values()), path, input_names=names,
                                  output_names=["hidden"], dynamic_axes=axes, opset_version=18,
                                  dynamo=True, external_data=False)
        session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        for suffix, seq in sizes(masked):
            x = {k: v.numpy() for k, v in inputs_for(masked, seq, seq).items()}
            (hidden,) = session.run(["hidden"], x)
            with torch.no_grad():
                torch_hidden = wrapper(*[torch.from_numpy(v) for v in x.values()]).numpy()
            err = np.abs(hidden - torch_hidden).max()
            save_file(x, os.path.join(folder, f"inputs_{suffix}.safetensors"))
            save_file({"hidden": hidden}, os.path.join(folder, f"expected_{suffix}.safetensors"))
            print(f"{name}: {suffix}: onnxruntime vs torch max abs error {err:.2e}")
        print(f"{name}: {path} ({exporter}), {os.path.getsize(path) / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
