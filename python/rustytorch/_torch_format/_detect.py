"""Which format a checkpoint is in, from its first bytes, and which format rt.save writes for a target."""
import os
import struct

ZIP, LEGACY, SAFETENSORS = "torch-zip", "torch-legacy", "safetensors"

# names PyTorch users give torch.save files; rt.save writes PyTorch's zip format for them
TORCH_SUFFIXES = (".pt", ".pth", ".ckpt", ".bin", ".tar", ".pkl", ".pickle")


def detect(head, where):
    """ZIP, LEGACY or SAFETENSORS from a file's first 512 bytes (or fewer if the file is shorter)."""
    if head[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        return ZIP
    if len(head) >= 10 and head[0] == 0x80 and head[1] in range(2, 6) and head[2] == 0x8A:
        return LEGACY      # pickle protocol 2+, then a LONG1: the magic number
    if head[:1] == b"L" and head[1:2].isdigit():
        return LEGACY      # the magic number pickled with protocol 0/1
    if len(head) >= 9:
        (n,) = struct.unpack("<Q", head[:8])
        if 2 <= n < (1 << 32) and head[8:9] == b"{":
            return SAFETENSORS
    if len(head) >= 262 and head[257:262] == b"ustar":
        raise RuntimeError(f"rt.load: {where} is a tar archive: PyTorch's pre-1.0 tar checkpoint format is not "
                           "supported; load it with torch and save it again with torch.save")
    if not head:
        raise RuntimeError(f"rt.load: {where} is empty")
    raise RuntimeError(f"rt.load: {where} is not a checkpoint rustytorch knows: neither PyTorch's zip or legacy "
                       f"format nor safetensors (it starts with {bytes(head[:8])!r})")


def save_format(f, use_new_zipfile):
    """The format rt.save writes: False -> legacy, True -> zip; else by suffix (file objects: zip)."""
    if use_new_zipfile is not None:
        return ZIP if use_new_zipfile else LEGACY
    if not isinstance(f, (str, bytes, os.PathLike)):
        return ZIP
    name = os.fsdecode(os.fspath(f)).lower()
    return ZIP if name.endswith(TORCH_SUFFIXES) else SAFETENSORS
