"""Make this process attachable by the studio and ``rtorch attach`` (remote attach).

    import rustytorch as rt
    info = rt.remote.serve()            # or RT_ATTACH=1, `rtorch run --attach`, `rtorch launch --attach`
    print("attach with: rtorch attach", info["job"])
    train()                             # unchanged: the agent only observes
    rt.remote.stop()                    # also done at exit

One agent thread per process listens on a private Unix socket (a 0700 folder of this user, a 0600 socket; only
this user's connections are served) and writes a manifest beside it, which ``rtorch ps`` and
``rt.remote.list_jobs()`` read. A client that subscribes receives the profiling session recorded in this
process, or one the agent records from attach time when none does. The agent never runs code sent to it.
See docs/remote-attach.md.

``RT_ATTACH=1`` serves at ``import rustytorch``, in this process only: processes it starts (DataLoader
workers, subprocesses) do not serve unless they call ``serve()`` themselves.
"""
import atexit
import os

from . import _C

__all__ = ["serve", "stop", "serving", "list_jobs", "Client"]

# A headless client of one process's agent (the studio and `rtorch attach` use the same C++ client):
#
#   c = rt.remote.Client(rt.remote.list_jobs()[0]["socket"])
#   c.request("subscribe")                    # the session, live; c.op_counts() grows
#   c.request("pause")                        # the next backward stops before its first node
#   while c.poll(0.5) != "notice": pass       # {"event": "paused", "node": {...}, ...} in c.notices
#   print(c.request("paused_state"))          # the node, its received gradients' statistics
#   c.request("step"); c.request("continue")
#
# request() returns the result's JSON text and raises RuntimeError with the agent's message when refused.
Client = _C._remote.Client


def serve(job=None, rank=None, world_size=None, buffer_bytes=64 << 20, listen=None, listen_auth="auto"):
    """Starts this process's agent (once; later calls return the running agent's manifest).

    listen="ADDR:PORT" (or "PORT": 127.0.0.1) also accepts TCP connections there; off loopback clients must
    prove a token (listen_auth "auto"; "token" requires one on loopback too; "none" is refused off loopback).
    The tokens are in the manifest's "connection_file" (mode 0600). See docs/remote-attach.md.

    job, rank, world_size default to the launcher's environment (RT_LAUNCH_JOB_ID, TORCHELASTIC_RUN_ID or
    SLURM_JOB_ID; RANK; WORLD_SIZE), else "<program>-<pid>", 0 and 1. buffer_bytes bounds what waits for each
    client: one that falls behind loses the oldest records and is told how many. Returns the manifest as a
    dict (job, rank, world_size, host, pid, start_time_ms, program, rt_version, protocol, socket, listen,
    connection_file).
    """
    if rank is not None and rank < 0:
        raise ValueError(f"rank must be >= 0, got {rank}")
    if world_size is not None and world_size < 1:
        raise ValueError(f"world_size must be >= 1, got {world_size}")
    if buffer_bytes < 1 << 16:
        raise ValueError(f"buffer_bytes must be at least 65536, got {buffer_bytes}")
    if listen_auth not in ("auto", "token", "none"):
        raise ValueError(f"listen_auth must be 'auto', 'token' or 'none', got {listen_auth!r}")
    return _C._remote.serve(job or "", -1 if rank is None else rank, -1 if world_size is None else world_size,
                            buffer_bytes, str(listen) if listen is not None else "", listen_auth)


def stop(flush_timeout_s=2.0):
    """Stops the agent: subscribers get what they have not received yet (for at most flush_timeout_s), then
    every connection closes and the socket and manifest are removed. Does nothing when not serving."""
    _C._remote.stop(flush_timeout_s)


def serving():
    """The running agent's manifest (a dict), or None."""
    return _C._remote.serving()


def list_jobs():
    """Every attachable process of this user on this machine, as manifests (dicts), sorted by job and rank;
    manifests of processes that are gone are removed."""
    return _C._remote.list_manifests()


def _serve_if_requested():
    # RT_ATTACH=1 serves this process, then marks the environment so that its children do not.
    if os.environ.get("RT_ATTACH") != "1":
        return
    info = serve()
    # Flush subscribers while the interpreter is whole (the library's own exit handler would too, later).
    atexit.register(stop)
    os.environ["RT_ATTACH"] = f"served:{info['pid']}"
