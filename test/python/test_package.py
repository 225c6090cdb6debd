"""The Python package (python/fusec) without a GPU: compile, inspect, save an
artifact, and the errors a caller gets, DLPack inputs checked before any
launch. A small DLPack producer (ctypes) stands in for PyTorch's tensors."""
import ctypes
import os
import tempfile
import unittest

import fusec

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "examples")


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


PyCapsule_New = ctypes.pythonapi.PyCapsule_New
PyCapsule_New.restype = ctypes.py_object
PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class FakeTensor:
    """A DLPack producer: `device_type` 1 is the host, 2 a GPU (kDLCUDA)."""

    def __init__(self, shape, code=4, bits=16, device_type=1, address=4096, strides=None,
                 device_id=0):
        self.shape = (ctypes.c_int64 * len(shape))(*shape)
        self.strides = (ctypes.c_int64 * len(shape))(*strides) if strides else None
        self.managed = DLManagedTensor()
        t = self.managed.dl_tensor
        t.data = address
        t.device = DLDevice(device_type, device_id)
        t.ndim = len(shape)
        t.dtype = DLDataType(code, bits, 1)
        t.shape = self.shape
        t.strides = self.strides
        t.byte_offset = 0

    def __dlpack__(self, stream=None):
        return PyCapsule_New(ctypes.addressof(self.managed), b"dltensor", None)

    def __dlpack_device__(self):
        return (self.managed.dl_tensor.device.device_type, 0)


class PackageTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.program = fusec.compile(os.path.join(EXAMPLES, "softmax.json"), arch="sm_90a")

    def test_version(self):
        self.assertRegex(fusec.__version__, r"^\d+\.\d+\.\d+$")

    def test_inputs_outputs_and_kernels(self):
        p = self.program
        self.assertEqual(p.inputs, [("x", "bf16", [4096, 4096])])
        self.assertEqual(p.outputs, [("y", "bf16", [4096, 4096])])
        kernels = p.kernels()
        self.assertEqual(len(kernels), 1)
        self.assertEqual(kernels[0]["family"], "row_reduction")
        self.assertEqual(kernels[0]["nodes"], ["y"])
        self.assertIn("extern \"C\" __global__", kernels[0]["source"])
        self.assertGreater(kernels[0]["predicted_us"], 0)
        self.assertIn("fusec.fusion", p.fused_mlir())

    def test_save_writes_an_artifact(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "softmax.fusec")
            self.program.save(path)
            with open(path, "rb") as f:
                self.assertEqual(f.read(8), b"FUSECART")
            try:
                g = fusec.load(path)
            except fusec.Error as e:  # no GPU here (or not a Hopper): read, checked, refused
                self.assertIn(e.code, ("no_gpu", "wrong_architecture"))
            else:
                self.assertEqual(g.inputs, self.program.inputs)

    def test_damaged_artifact(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "bad.fusec")
            with open(path, "wb") as f:
                f.write(b"FUSECART" + b"\0" * 40)
            with self.assertRaises(fusec.Error) as cm:
                fusec.load(path)
            self.assertEqual(cm.exception.code, "invalid_artifact")
            self.assertIn("bad.fusec", str(cm.exception))

    def test_compile_errors(self):
        with self.assertRaises(fusec.Error) as cm:
            fusec.compile(os.path.join(EXAMPLES, "no_such_graph.json"))
        self.assertEqual(cm.exception.code, "invalid_graph")
        self.assertIn("no_such_graph.json", str(cm.exception))
        with self.assertRaises(fusec.Error) as cm:
            fusec.compile_text('{"fusec": 1, "nodes": []', "broken.json")
        self.assertEqual(cm.exception.code, "invalid_graph")
        self.assertTrue(issubclass(fusec.Error, RuntimeError))

    def test_inputs_are_checked_before_any_launch(self):
        p = self.program
        cases = [
            ((), "takes 1 input(s) (x), 0 given"),
            ((1,), "is not a tensor with __dlpack__"),
            ((FakeTensor([4096, 4096]),), "is not in GPU memory"),
            ((FakeTensor([4096, 4095], device_type=2),), "is not bf16 [4096, 4096]"),
            ((FakeTensor([4096, 4096], code=2, device_type=2),), "is not bf16 [4096, 4096]"),
            ((FakeTensor([4096, 4096], device_type=2, strides=[1, 4096]),), "is not contiguous"),
            ((FakeTensor([4096, 4096], device_type=2, address=4098),), "is not 16-byte aligned"),
            ((FakeTensor([4096, 4096], device_type=2, device_id=1),), "is on GPU 1, the graph runs on GPU 0"),
        ]
        for args, message in cases:
            with self.assertRaises(fusec.Error, msg=message) as cm:
                p(*args)
            self.assertEqual(cm.exception.code, "invalid_argument", message)
            self.assertIn(message, str(cm.exception))

    def test_parameters_and_their_binding(self):
        params = os.path.join(ROOT, "test", "lit", "frontend", "Inputs", "params.json")
        p = fusec.compile(params, arch="sm_90a")
        self.assertEqual([p.is_parameter(i) for i in range(3)], [False, True, True])
        self.assertFalse(p.weights_bound)
        # Unbound, a call takes every input.
        with self.assertRaises(fusec.Error) as cm:
            p(FakeTensor([2, 4], code=2, bits=32, device_type=2))
        self.assertIn("takes 3 input(s) (x, w, b), 1 given", str(cm.exception))
        # Binding needs the GPU (the weights go there); without one it says so.
        with tempfile.TemporaryDirectory() as d:
            try:
                p.bind_weights([os.path.join(d, "none.safetensors")])
            except fusec.Error as e:
                self.assertIn(e.code, ("no_gpu", "invalid_argument"))
            else:
                self.fail("binding a file that does not exist succeeded")

    def test_a_split_program_is_one_ranks(self):
        block = os.path.join(EXAMPLES, "tp_llama_block.json")
        whole = fusec.compile(block, arch="sm_90a")
        self.assertEqual((whole.ranks, whole.rank), (1, -1))
        split = fusec.compile(block, arch="sm_90a", ranks=2, shards=["w_up=1"])
        self.assertEqual((split.ranks, split.rank), (2, -1))
        shapes = {name: shape for name, _, shape in split.inputs}
        self.assertEqual(shapes["w_q"], [32, 64])   # the graph's own shard 0
        self.assertEqual(shapes["w_up"], [128, 32])  # --shard's dim 1 over its shard 0
        with self.assertRaises(fusec.Error) as cm:
            whole.join_group(0, b"x" * 128)
        self.assertEqual(cm.exception.code, "invalid_argument")
        self.assertIn("not split", str(cm.exception))
        with self.assertRaises(fusec.Error) as cm:
            split.join_group(0, b"short")
        self.assertIn("128 bytes", str(cm.exception))
        with self.assertRaises(fusec.Error) as cm:
            fusec.compile(block, arch="sm_90a", ranks=2, shards=["nothing=0"])
        self.assertIn("Options::shards 'nothing=0'", str(cm.exception))
        try:
            gid = fusec.new_group_id()
        except fusec.Error as e:  # no NCCL on this machine
            self.assertIn("libnccl", str(e))
        else:
            self.assertEqual(len(gid), 128)
            self.assertNotEqual(gid, fusec.new_group_id())

    def test_max_sizes_resize_between_padded_compiles(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "rows.json")
            with open(path, "w") as f:
                f.write('{"fusec": 1, "name": "rows", "inputs": [{"name": "x", "dtype": "f32", '
                        '"shape": ["S", 8]}], "nodes": [{"name": "y", "op": "softmax", '
                        '"inputs": ["x"], "attrs": {"axis": 0}}], "outputs": ["y"]}')
            p = fusec.compile(path, arch="sm_90a", max_sizes={"S": 100})
            self.assertEqual(p.sizes, {"S": 100})
            p.resize(S=7)
            self.assertEqual((p.sizes, p.padded_sizes, p.compiles), ({"S": 7}, {"S": 8}, 2))
            self.assertEqual(p.inputs, [("x", "f32", [7, 8])])
            self.assertEqual(p.outputs, [("y", "f32", [7, 8])])
            p.resize(S=8)  # the same padded size: no compile
            self.assertEqual(p.compiles, 2)
            with self.assertRaises(fusec.Error) as cm:
                p.resize(S=101)
            self.assertEqual(cm.exception.code, "invalid_argument")
            self.assertIn("S=101 is outside 1..100", str(cm.exception))
            with self.assertRaises(fusec.Error) as cm:
                p.resize(T=3)
            self.assertIn("'T' is not a size that varies", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
