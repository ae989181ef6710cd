"""as_tensor and frombuffer: tensors over existing memory (numpy arrays, Python buffers) without a copy where
the dtype and device allow it, as torch's do."""
import warnings

import numpy as _np

from . import _C

__all__ = ["as_tensor", "frombuffer"]

_NUMPY_DTYPES = {_C.float64: _np.float64, _C.float32: _np.float32, _C.float16: _np.float16, _C.int64: _np.int64,
                 _C.int32: _np.int32, _C.uint8: _np.uint8, _C.bool: _np.bool_}


def as_tensor(data, dtype=None, device=None):
    """data as a tensor, sharing memory where it can: a tensor comes back as itself (or .to(dtype, device) when
    those differ), a numpy array on the CPU with a matching (or no) dtype shares the array's memory as
    from_numpy does; anything else (lists, numbers, a conversion) is copied as rt.tensor copies."""
    if isinstance(data, _C.Tensor):
        return data.to(dtype=dtype, device=device)
    if isinstance(data, _np.ndarray):
        t = _C.from_numpy(data)
        return t.to(dtype=dtype, device=device)
    return _C.tensor(data, dtype=dtype, device=device)


def _numpy_dtype(dtype):
    if dtype not in _NUMPY_DTYPES:
        raise TypeError(f"frombuffer: dtype {dtype} has no numpy equivalent to read the buffer with; read it as "
                        "another dtype of the same size and convert")
    return _np.dtype(_NUMPY_DTYPES[dtype])


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D tensor over an object implementing the buffer protocol (bytearray, memoryview, array.array, mmap,
    ...), sharing its memory: writes to one show in the other. count=-1 reads to the end of the buffer; offset
    skips that many bytes first. A read-only buffer (bytes) gives a warning, as in torch: writing to the tensor
    would write to memory Python considers immutable."""
    try:
        view = memoryview(buffer)
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    item = _numpy_dtype(dtype).itemsize
    length = view.nbytes
    if length == 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if not 0 <= offset < length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than buffer length ({length} "
                         "bytes) minus 1")
    if count < 0:
        if (length - offset) % item != 0:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} bytes) must be a "
                             f"multiple of element size ({item})")
        count = (length - offset) // item
    elif offset + count * item > length:
        raise ValueError(f"requested buffer length ({count} * {item} bytes) after offset ({offset} bytes) must not "
                         f"be greater than actual buffer length ({length} bytes)")
    if view.readonly:
        warnings.warn("The given buffer is not writable, and rustytorch does not support non-writable tensors. "
                      "This means you can write to the underlying (supposedly non-writable) buffer using the "
                      "tensor. You may want to copy the buffer to protect its data or make it writable before "
                      "converting it to a tensor.", UserWarning, stacklevel=2)
    array = _np.frombuffer(view.cast("B"), dtype=_numpy_dtype(dtype), count=count, offset=offset)
    t = _C.from_numpy(array)
    return t.requires_grad_() if requires_grad else t
