"""Starting benchmark ranks and collecting what they print; shared by the scripts in bench/dist/.

A job is one configuration run once: `world_size` real processes started either the way `rtorch launch` starts
them (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT; a fresh free port per job) or by
`mpirun -np N --oversubscribe --bind-to none` (the mpi backend takes rank and size from mpirun). Each rank hands
its result to emit(), which writes it as JSON into the job's result folder (mpirun merges the ranks' stdout, so
lines printed by two ranks can interleave); run_job returns those dicts sorted by their "rank". A rank that
fails, or a job that runs past its timeout, raises JobFailure with every rank's output."""
import json
import os
import platform
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


class JobFailure(RuntimeError):
    pass


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def have_mpirun():
    return shutil.which("mpirun") is not None


def _base_env(threads):
    env = dict(os.environ)
    env.update({"OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads),
                # both gloos (ours and PyTorch's) over loopback, whatever the host name resolves to
                "GLOO_SOCKET_IFNAME": "lo"})
    return env


RESULT_DIR_VAR = "RT_BENCH_RESULT_DIR"


def emit(result):
    """Called by a rank: its result (a dict with "rank") for the driver."""
    folder = os.environ.get(RESULT_DIR_VAR)
    if folder:
        path = os.path.join(folder, f"rank-{result.get('rank', 0)}.json")
        with open(path + ".tmp", "w") as f:
            json.dump(result, f)
        os.replace(path + ".tmp", path)
    else:
        print("RESULT " + json.dumps(result), flush=True)


def _collect(procs, timeout, what, folder):
    deadline = time.monotonic() + timeout
    try:
        while any(p.poll() is None for p in procs):
            if time.monotonic() > deadline:
                raise JobFailure(f"{what}: still running after {timeout} s")
            if any(p.poll() not in (None, 0) for p in procs):
                break
            time.sleep(0.02)
    finally:
        for p in procs:
            if p.poll() is None:
                # each job runs in its own session: end its process group (mpirun and the ranks it started)
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        outputs = [p.communicate() + (p.returncode,) for p in procs]
    for out, err, code in outputs:
        if code != 0:
            raise JobFailure(f"{what}: a process exited with {code}:\n{out}\n{err}")
    results = []
    for name in sorted(os.listdir(folder)):
        if name.endswith(".json"):
            with open(os.path.join(folder, name)) as f:
                results.append(json.load(f))
    return sorted(results, key=lambda r: r.get("rank", 0))


def run_job(script, worker_args, world_size, launcher="env", threads=1, timeout=600, extra_env=None):
    """Runs `python3 script *worker_args` as world_size ranks (launcher "env" or "mpirun"), or as one plain
    process when world_size is 1 and launcher is "single"; extra_env is added to every rank's environment. Returns the ranks' results (dicts)."""
    folder = tempfile.mkdtemp(prefix="rt-dist-bench-")
    env = _base_env(threads)
    env[RESULT_DIR_VAR] = folder
    env.update(extra_env or {})
    cmd = [sys.executable, script, *worker_args]
    what = f"{os.path.basename(script)} {' '.join(worker_args)}"
    if launcher == "single":
        procs = [subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  start_new_session=True)]
    elif launcher == "env":
        port = free_port()
        procs = []
        for rank in range(world_size):
            e = dict(env, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world_size),
                     LOCAL_WORLD_SIZE=str(world_size), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
            procs.append(subprocess.Popen(cmd, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                          start_new_session=True))
    elif launcher == "mpirun":
        env.update({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"})
        mpi = ["mpirun", "-np", str(world_size), "--oversubscribe", "--bind-to", "none"]
        for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "PYTHONPATH", "GLOO_SOCKET_IFNAME", RESULT_DIR_VAR,
                    *(extra_env or {})):
            if var in env:
                mpi += ["-x", var]
        procs = [subprocess.Popen(mpi + cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  start_new_session=True)]
    else:
        raise ValueError(f"unknown launcher {launcher!r}")
    try:
        results = _collect(procs, timeout, what, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if len(results) != world_size:
        raise JobFailure(f"{what}: expected {world_size} results, got {len(results)}")
    return results


def rounds_order(configs, r):
    """Round r runs the configurations rotated by r, so no configuration always comes first or last."""
    k = r % len(configs)
    return configs[k:] + configs[:k]


def med(xs):
    return statistics.median(xs)


def spread(xs, fmt="{:.2f}"):
    """'median (min..max)'."""
    return f"{fmt.format(med(xs))} ({fmt.format(min(xs))}..{fmt.format(max(xs))})"


def machine_line():
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores, {platform.system()} {platform.release()}"


def load_average():
    try:
        return "{:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
    except OSError:
        return "unknown"


def torch_version():
    probe = subprocess.run([sys.executable, "-c", "import torch; print(torch.__version__)"], capture_output=True,
                           text=True)
    return probe.stdout.strip() if probe.returncode == 0 else None
