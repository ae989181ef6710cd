"""PyTorch's element types as they appear in checkpoint files, and their rustytorch and numpy counterparts.

A storage record holds raw little-endian elements; `StorageKind` says how to read them (numpy dtype of the
raw bytes), what rustytorch dtype they become, and the names PyTorch pickles for them (`torch.FloatStorage`,
`torch.float32`). bfloat16 has no numpy dtype: its raw bytes are read as uint16 and widened to float32
exactly (bfloat16 is the top half of a float32), then converted.
"""
import numpy as np

import rustytorch as rt


class StorageKind:
    def __init__(self, name, storage, raw, itemsize):
        self.name = name            # torch dtype name: "float32"
        self.storage = storage      # torch storage class name: "FloatStorage"
        self.raw = np.dtype(raw)    # numpy dtype of the raw elements (bfloat16: uint16)
        self.itemsize = itemsize

    @property
    def rt_dtype(self):
        """The rustytorch dtype, or None where the engine has none (then loading refuses it)."""
        return getattr(rt, self.name, None)

    def __repr__(self):
        return f"torch.{self.name}"


KINDS = [
    StorageKind("float32", "FloatStorage", np.float32, 4),
    StorageKind("float64", "DoubleStorage", np.float64, 8),
    StorageKind("float16", "HalfStorage", np.float16, 2),
    StorageKind("bfloat16", "BFloat16Storage", np.uint16, 2),
    StorageKind("bool", "BoolStorage", np.bool_, 1),
    StorageKind("uint8", "ByteStorage", np.uint8, 1),
    StorageKind("int8", "CharStorage", np.int8, 1),
    StorageKind("int16", "ShortStorage", np.int16, 2),
    StorageKind("int32", "IntStorage", np.int32, 4),
    StorageKind("int64", "LongStorage", np.int64, 8),
]
BY_STORAGE = {k.storage: k for k in KINDS}
BY_NAME = {k.name: k for k in KINDS}

# torch dtype attribute names that are aliases of the ones above
DTYPE_ALIASES = {"float": "float32", "double": "float64", "half": "float16", "short": "int16", "int": "int32",
                 "long": "int64"}

# PyTorch element types that exist in its files but not in rustytorch
UNSUPPORTED_STORAGES = {
    "ComplexFloatStorage": "complex64", "ComplexDoubleStorage": "complex128", "QInt8Storage": "qint8",
    "QUInt8Storage": "quint8", "QInt32Storage": "qint32", "QUInt4x2Storage": "quint4x2",
    "QUInt2x4Storage": "quint2x4", "UntypedStorage": "untyped bytes", "ByteStorageBase": "untyped bytes",
}
UNSUPPORTED_DTYPES = {"complex32", "complex64", "complex128", "cfloat", "cdouble", "chalf", "qint8", "quint8",
                      "qint32", "quint4x2", "quint2x4", "uint16", "uint32", "uint64", "float8_e4m3fn",
                      "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"}

SUPPORTED_NAMES = ", ".join(k.name for k in KINDS if k.rt_dtype is not None)


def kind_of(dtype):
    """The StorageKind of a rustytorch dtype."""
    name = str(dtype).rsplit(".", 1)[-1]
    kind = BY_NAME.get(name)
    if kind is None or kind.rt_dtype is None:
        raise TypeError(f"rt.save: tensors of dtype {dtype} cannot be written in PyTorch's format")
    return kind


def raw_to_tensor(raw, kind):
    """A rustytorch CPU tensor over a numpy array of raw elements; shares its memory where the dtype allows."""
    if kind.name == "bfloat16":
        widened = (raw.astype(np.uint32) << 16).view(np.float32)
        return rt.from_numpy(widened).to(rt.bfloat16)
    try:
        return rt.from_numpy(raw)
    except TypeError:  # numpy dtype the binding does not take (int8/int16 once the engine has them)
        return rt.from_numpy(raw.astype(np.int64)).to(kind.rt_dtype)


def tensor_to_raw(t, kind):
    """The raw little-endian elements of a contiguous CPU tensor, as a 1-D numpy array."""
    if kind.name == "bfloat16":
        return (t.to(rt.float32).numpy().reshape(-1).view(np.uint32) >> 16).astype(np.uint16)
    return np.ascontiguousarray(t.numpy()).reshape(-1).astype(kind.raw.newbyteorder("<"), copy=False)
