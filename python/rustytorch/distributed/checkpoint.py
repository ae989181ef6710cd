"""Training checkpoints that survive a crash at any moment: rank 0 writes, every rank resumes.

    import rustytorch.distributed.checkpoint as ckpt

    os.makedirs("ckpt", exist_ok=True)
    start = ckpt.load_latest("ckpt", model=model, optimizer=opt, sampler=sampler) or 0
    for step in range(start, steps):
        ...train one step...
        ckpt.save("ckpt", model=model, optimizer=opt, sampler=sampler, step=step + 1)   # the step to run next

`save` is called by every rank at the same point (it is collective, like a barrier): the ranks send their
RNG states to rank 0, rank 0 writes, and every rank returns only once the checkpoint is committed (or
raises the same CheckpointError if rank 0 could not write it). `load_latest` is called by every rank; each
reads the newest complete checkpoint itself (the directory must be visible to every rank) and, when a
process group is initialized, the ranks check that they all chose the same one.

Layout of `path_dir`:

    latest                  the name of the newest committed checkpoint ("step-000123"), replaced by rename
    step-000123/            one checkpoint
        model.safetensors       the model's state_dict (DDP: model.module's, so it loads into a plain model)
        optimizer.safetensors   optimizer.state_dict() (only when an optimizer was given)
        state.safetensors       step, sampler state, every rank's RNG state, `extra`
        manifest.json           written last: format, step, world size, size and sha256 of every file above
    .tmp-step-000124-<pid>/ a checkpoint being written (a leftover one is removed by the next save)

See Note [Checkpoint commit] for the order of writes and what a crash at each point leaves behind.
"""
import hashlib
import json
import os
import random
import re
import shutil
import warnings

import rustytorch as rt

__all__ = ["save", "load_latest", "list_checkpoints", "CheckpointError", "CheckpointWarning"]

FORMAT = "rustytorch.distributed.checkpoint"
FORMAT_VERSION = 1
LATEST = "latest"
MANIFEST = "manifest.json"
MODEL_FILE = "model.safetensors"
OPTIMIZER_FILE = "optimizer.safetensors"
STATE_FILE = "state.safetensors"

_NAME = re.compile(r"^step-(\d+)$")
_TMP_PREFIX = ".tmp-"
_TRASH_PREFIX = ".old-"

# Note [Checkpoint commit]
# rank 0 writes step-N in this order; a crash at any point leaves a loadable directory:
#   1. every file into .tmp-step-N-<pid>/, each fsync'ed, manifest.json (with the files' hashes) last
#   2. fsync the temporary folder, rename it to step-N, fsync path_dir     <- step-N now exists, complete
#   3. write .latest-<pid>, fsync, rename over `latest`, fsync path_dir    <- the commit point
#   4. delete checkpoints beyond the newest `keep` and leftover temporary folders
# A crash in 1 leaves a .tmp- folder that nothing reads; in 2-3 a complete step-N that `latest` does not name
# yet (load_latest follows `latest`, so it resumes from the previous one and step N is simply redone);
# in 4 a few extra old folders. Files cut short or damaged later fail their sha256 in load_latest, which then
# warns and falls back to the newest older checkpoint that verifies.


class CheckpointError(RuntimeError):
    """A checkpoint could not be written, or no complete checkpoint could be read."""


class CheckpointWarning(UserWarning):
    """load_latest skipped a damaged or incomplete checkpoint."""


# ---- helpers -----------------------------------------------------------------------------------

def _dist():
    import rustytorch.distributed as dist
    return dist if dist.is_initialized() else None


def _rank_and_world():
    dist = _dist()
    return (dist.get_rank(), dist.get_world_size()) if dist is not None else (0, 1)


def _unwrap(model):
    """A DistributedDataParallel's wrapped module; any other module as it is."""
    from ..nn.parallel.distributed import DistributedDataParallel
    return model.module if isinstance(model, DistributedDataParallel) else model


def _folder_name(step):
    return f"step-{step:06d}"


def _check_step(step):
    if isinstance(step, bool) or not isinstance(step, int):
        raise TypeError(f"checkpoint.save: step must be an int, got {type(step).__name__}")
    if step < 0:
        raise ValueError(f"checkpoint.save: step must be 0 or more, got {step}")


def _fsync_file(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(path):
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _rng_state():
    """This process's random state: rustytorch's default generator, Python's `random`, numpy's global one."""
    state = {"rustytorch": rt.get_rng_state(), "python": random.getstate()}
    try:
        import numpy as np
    except ImportError:
        np = None
    if np is not None:
        kind, keys, pos, has_gauss, cached = np.random.get_state()
        state["numpy"] = [kind, [int(k) for k in keys], int(pos), int(has_gauss), float(cached)]
    return state


def _set_rng_state(state):
    rt.set_rng_state(state["rustytorch"])
    version, internal, gauss = state["python"]
    random.setstate((version, tuple(internal), gauss))
    if "numpy" in state:
        import numpy as np
        kind, keys, pos, has_gauss, cached = state["numpy"]
        np.random.set_state((kind, np.array(keys, dtype=np.uint32), pos, has_gauss, cached))


def _sampler_state(sampler):
    if hasattr(sampler, "state_dict"):
        return {"state_dict": sampler.state_dict()}
    if hasattr(sampler, "epoch"):
        return {"epoch": int(sampler.epoch)}
    raise TypeError(f"checkpoint.save: cannot save a {type(sampler).__name__} as sampler: it has neither "
                    "state_dict() nor an `epoch` attribute (DistributedSampler has the latter)")


def _load_sampler_state(sampler, state, where):
    if "state_dict" in state:
        if not hasattr(sampler, "load_state_dict"):
            raise CheckpointError(f"{where} holds a sampler state_dict but {type(sampler).__name__} has no "
                                  "load_state_dict()")
        sampler.load_state_dict(state["state_dict"])
    elif hasattr(sampler, "set_epoch"):
        sampler.set_epoch(state["epoch"])
    else:
        sampler.epoch = state["epoch"]


# ---- save --------------------------------------------------------------------------------------

def save(path_dir, *, model, optimizer=None, sampler=None, step, extra=None, keep=2):
    """Writes checkpoint `step` of model (a DDP's module), optimizer, sampler, every rank's RNG state and `extra`
    (anything rt.save stores) into path_dir/step-NNNNNN and points `latest` at it. Collective: call it on every
    rank at the same point; only rank 0 touches the file system. Keeps the newest `keep` checkpoints."""
    path_dir = os.fspath(path_dir)
    _check_step(step)
    if isinstance(keep, bool) or not isinstance(keep, int) or keep < 1:
        raise ValueError(f"checkpoint.save: keep must be an int of at least 1, got {keep!r}")
    rank, world = _rank_and_world()
    dist = _dist()
    states = [None] * world
    if dist is not None:
        dist.all_gather_object(states, _rng_state())
    else:
        states[0] = _rng_state()

    error = None
    if rank == 0:
        try:
            _write(path_dir, model=_unwrap(model), optimizer=optimizer, sampler=sampler, step=step, extra=extra,
                   rng=states, world=world, keep=keep)
        except Exception as e:  # every rank raises it, so none runs ahead of a checkpoint that was not written
            error = f"{type(e).__name__}: {e}"
            if dist is None:
                raise
    if dist is not None:
        status = [error]
        dist.broadcast_object_list(status, src=0)  # also the barrier: nobody continues before the commit
        if status[0] is not None:
            raise CheckpointError(f"checkpoint.save: rank 0 could not write step {step} to '{path_dir}': "
                                  f"{status[0]}")


def _write(path_dir, *, model, optimizer, sampler, step, extra, rng, world, keep):
    if os.path.exists(path_dir) and not os.path.isdir(path_dir):
        raise NotADirectoryError(f"checkpoint.save: '{path_dir}' exists and is not a directory")
    os.makedirs(path_dir, exist_ok=True)
    name = _folder_name(step)
    tmp = os.path.join(path_dir, f"{_TMP_PREFIX}{name}-{os.getpid()}")
    if os.path.exists(tmp):
        shutil.rmtree(tmp)
    os.mkdir(tmp)
    try:
        files = {MODEL_FILE: model.state_dict()}
        if optimizer is not None:
            files[OPTIMIZER_FILE] = optimizer.state_dict()
        files[STATE_FILE] = {"step": step, "world_size": world, "rng": rng,
                             "sampler": None if sampler is None else _sampler_state(sampler), "extra": extra}
        manifest = {"format": FORMAT, "version": FORMAT_VERSION, "step": step, "world_size": world, "files": {}}
        for fname, obj in files.items():
            target = os.path.join(tmp, fname)
            rt.save(obj, target)
            _fsync_file(target)
            manifest["files"][fname] = {"bytes": os.path.getsize(target), "sha256": _sha256(target)}
        target = os.path.join(tmp, MANIFEST)
        with open(target, "w") as f:
            json.dump(manifest, f, indent=1, sort_keys=True)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        _fsync_dir(tmp)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise

    final = os.path.join(path_dir, name)
    trash = None
    if os.path.lexists(final):  # a step redone after a resume from an older checkpoint: replace it
        trash = os.path.join(path_dir, f"{_TRASH_PREFIX}{name}-{os.getpid()}")
        os.rename(final, trash)
    os.rename(tmp, final)
    _fsync_dir(path_dir)
    _point_latest(path_dir, name)
    if trash is not None:
        shutil.rmtree(trash, ignore_errors=True)
    _prune(path_dir, keep, name)


def _point_latest(path_dir, name):
    tmp = os.path.join(path_dir, f".{LATEST}-{os.getpid()}")
    with open(tmp, "w") as f:
        f.write(name + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, os.path.join(path_dir, LATEST))
    _fsync_dir(path_dir)


def _prune(path_dir, keep, current):
    """Deletes all but the newest `keep` checkpoints (never `current`) and leftover temporary folders."""
    for entry in os.listdir(path_dir):
        if entry.startswith((_TMP_PREFIX, _TRASH_PREFIX, f".{LATEST}-")):
            full = os.path.join(path_dir, entry)
            if os.path.isdir(full):
                shutil.rmtree(full, ignore_errors=True)
            else:
                try:
                    os.unlink(full)
                except FileNotFoundError:
                    pass
    steps = list_checkpoints(path_dir)
    for _, entry in steps[:max(0, len(steps) - keep)]:
        if entry != current:
            shutil.rmtree(os.path.join(path_dir, entry), ignore_errors=True)


# ---- load --------------------------------------------------------------------------------------

def list_checkpoints(path_dir):
    """[(step, folder name)] of the checkpoint folders in path_dir, oldest first (complete or not)."""
    found = []
    for entry in os.listdir(path_dir):
        m = _NAME.match(entry)
        if m and os.path.isdir(os.path.join(path_dir, entry)):
            found.append((int(m.group(1)), entry))
    return sorted(found)


def _verify(path_dir, name):
    """The manifest of path_dir/name when every file it lists is there with its size and sha256; otherwise
    raises CheckpointError saying what is wrong."""
    folder = os.path.join(path_dir, name)
    where = f"checkpoint '{folder}'"
    if not os.path.isdir(folder):
        raise CheckpointError(f"{where} does not exist")
    manifest_path = os.path.join(folder, MANIFEST)
    if not os.path.exists(manifest_path):
        raise CheckpointError(f"{where} has no {MANIFEST} (it was not finished)")
    try:
        with open(manifest_path) as f:
            manifest = json.load(f)
    except (OSError, ValueError) as e:
        raise CheckpointError(f"{where}: {MANIFEST} cannot be read ({e})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT or not isinstance(manifest.get("files"),
                                                                                             dict):
        raise CheckpointError(f"{where}: {MANIFEST} is not a {FORMAT} manifest")
    if manifest.get("version") != FORMAT_VERSION:
        raise CheckpointError(f"{where} has format version {manifest.get('version')}; this rustytorch reads "
                              f"version {FORMAT_VERSION}")
    for required in (MODEL_FILE, STATE_FILE):
        if required not in manifest["files"]:
            raise CheckpointError(f"{where}: {MANIFEST} does not list {required}")
    for fname, info in manifest["files"].items():
        if os.path.basename(fname) != fname:
            raise CheckpointError(f"{where}: {MANIFEST} lists '{fname}', which is not a plain file name")
        full = os.path.join(folder, fname)
        if not os.path.isfile(full):
            raise CheckpointError(f"{where}: {fname} is missing")
        size = os.path.getsize(full)
        if size != info.get("bytes"):
            raise CheckpointError(f"{where}: {fname} has {size} bytes, the manifest says {info.get('bytes')} "
                                  "(cut short or overwritten)")
        digest = _sha256(full)
        if digest != info.get("sha256"):
            raise CheckpointError(f"{where}: {fname} has sha256 {digest[:16]}..., the manifest says "
                                  f"{str(info.get('sha256'))[:16]}... (damaged)")
    return manifest


def _choose(path_dir):
    """(name, manifest) of the checkpoint to load, or None when path_dir holds none; warns about every
    checkpoint it skips and raises CheckpointError when checkpoints exist but none is complete."""
    folders = list_checkpoints(path_dir)
    latest_path = os.path.join(path_dir, LATEST)
    pointed = None
    problems = []
    if os.path.exists(latest_path):
        try:
            with open(latest_path) as f:
                pointed = f.read().strip()
        except OSError as e:
            problems.append(f"'{latest_path}' cannot be read ({e})")
        if pointed is not None and not _NAME.match(pointed):
            problems.append(f"'{latest_path}' holds {pointed!r}, not a checkpoint name")
            pointed = None
    elif folders:
        problems.append(f"'{latest_path}' is missing")
    if pointed is not None:
        limit = int(_NAME.match(pointed).group(1))
        candidates = [pointed] + [n for s, n in reversed(folders) if s < limit]
    else:
        candidates = [n for _, n in reversed(folders)]
    if not candidates and not problems:
        return None
    for name in candidates:
        try:
            manifest = _verify(path_dir, name)
        except CheckpointError as e:
            problems.append(str(e))
            continue
        if problems:
            warnings.warn(f"checkpoint.load_latest: loading '{os.path.join(path_dir, name)}' (step "
                          f"{manifest['step']}) instead of the latest: " + "; ".join(problems), CheckpointWarning,
                          stacklevel=3)
        return name, manifest
    raise CheckpointError(f"checkpoint.load_latest: no complete checkpoint in '{path_dir}': " + "; ".join(problems))


def load_latest(path_dir, *, model, optimizer=None, sampler=None, map_location=None, return_extra=False):
    """Loads the newest complete checkpoint of path_dir into model (a DDP's module), optimizer and sampler and
    restores this rank's RNG state; returns its step, or None when path_dir holds no checkpoint yet (the
    model and the rest are then untouched). With return_extra=True returns (step, extra). Call it on every
    rank; with a process group, the ranks check that they loaded the same step."""
    path_dir = os.fspath(path_dir)
    rank, world = _rank_and_world()
    try:
        if not os.path.exists(path_dir):
            raise FileNotFoundError(f"checkpoint.load_latest: no such directory: '{path_dir}'. Hint: create it "
                                    "before the first run (an empty directory means: no checkpoint yet, start from "
                                    "scratch)")
        if not os.path.isdir(path_dir):
            raise NotADirectoryError(f"checkpoint.load_latest: '{path_dir}' is not a directory")
        chosen = _choose(path_dir)
        failure = None
    except (OSError, CheckpointError) as e:
        chosen, failure = None, e
    _agree(path_dir, None if chosen is None else chosen[0], failure)
    if chosen is None:
        return (None, None) if return_extra else None
    name, manifest = chosen
    folder = os.path.join(path_dir, name)
    where = f"checkpoint '{folder}'"

    state = rt.load(os.path.join(folder, STATE_FILE), map_location=map_location)
    _unwrap(model).load_state_dict(rt.load(os.path.join(folder, MODEL_FILE), map_location=map_location))
    if optimizer is not None:
        if OPTIMIZER_FILE not in manifest["files"]:
            raise CheckpointError(f"{where} holds no optimizer state (it was saved without optimizer=); load it "
                                  "without optimizer= or start the optimizer afresh")
        optimizer.load_state_dict(rt.load(os.path.join(folder, OPTIMIZER_FILE), map_location=map_location))
    if sampler is not None:
        if state.get("sampler") is None:
            raise CheckpointError(f"{where} holds no sampler state (it was saved without sampler=)")
        _load_sampler_state(sampler, state["sampler"], where)
    rng = state["rng"]
    if rank < len(rng):
        _set_rng_state(rng[rank])
    else:
        warnings.warn(f"checkpoint.load_latest: {where} was written by {len(rng)} ranks and has no RNG state for "
                      f"rank {rank}; its random state is left as it is", CheckpointWarning, stacklevel=2)
    step = int(state["step"])
    return (step, state.get("extra")) if return_extra else step


def _agree(path_dir, name, failure):
    """Every rank must have chosen the same checkpoint (they read the files each); a rank that could not choose
    makes every rank raise, so none waits in a collective for it. Raises this rank's own failure as it is."""
    dist = _dist()
    if dist is None or dist.get_world_size() == 1:
        if failure is not None:
            raise failure
        return
    choices = [None] * dist.get_world_size()
    dist.all_gather_object(choices, ("error", f"{type(failure).__name__}: {failure}") if failure is not None
                           else ("ok", name))
    if failure is not None:
        raise failure
    failed = [f"rank {r}: {what}" for r, (kind, what) in enumerate(choices) if kind == "error"]
    if failed:
        raise CheckpointError(f"checkpoint.load_latest: other ranks could not read '{path_dir}': " + "; ".join(failed))
    names = [what for _, what in choices]
    if len(set(names)) != 1:
        seen = ", ".join(f"rank {r}: {n or 'none'}" for r, n in enumerate(names))
        raise CheckpointError(f"checkpoint.load_latest: the ranks found different checkpoints in '{path_dir}' "
                              f"({seen}). Hint: path_dir must be one directory every rank sees (a shared file "
                              "system), not a per-node copy")
