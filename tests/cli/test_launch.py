"""`rtorch launch`: torchrun's environment over mpirun, tagged output, failure summaries and restarts.
Every test runs real processes in their own session and kills the whole session when it ends."""
import os
import signal
import subprocess
import textwrap
import time

import pytest

from conftest import RTORCH

HANG_GUARD = 120  # seconds; only a bound against a hung launcher, never a timing check

ENV_KEYS = ["RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "MASTER_ADDR", "MASTER_PORT",
            "TORCHELASTIC_RESTART_COUNT", "RT_LAUNCH_JOB_ID"]

SHOW_ENV = """
    import os, sys
    print(" ".join(f"{k}={os.environ.get(k)}" for k in %r), "ARGS=" + ",".join(sys.argv[1:]))
""" % ENV_KEYS


def write(tmp_path, name, code):
    path = tmp_path / name
    path.write_text(textwrap.dedent(code))
    return path


def clean_env(extra=None):
    env = dict(os.environ)
    for var in ("PYTHONPATH", "RT_PYTHONPATH", "RT_LAUNCH_JOB_ID", "RT_LAUNCH_STATUS_DIR", "MASTER_ADDR",
                "MASTER_PORT", "TORCHELASTIC_RESTART_COUNT"):
        env.pop(var, None)
    env.update(extra or {})
    return env


class Launch:
    """A running `rtorch launch` in its own session; kill() ends it and everything it started."""

    def __init__(self, args, cwd, env=None):
        self.proc = subprocess.Popen([str(RTORCH), "launch", *map(str, args)], cwd=cwd, env=clean_env(env),
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     start_new_session=True)

    def wait(self):
        try:
            out, err = self.proc.communicate(timeout=HANG_GUARD)
        except subprocess.TimeoutExpired:
            self.kill()
            out, err = self.proc.communicate()
            pytest.fail(f"rtorch launch did not end within {HANG_GUARD} s\nstdout:\n{out}\nstderr:\n{err}")
        return subprocess.CompletedProcess(self.proc.args, self.proc.returncode, out, err)

    def kill(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@pytest.fixture
def launch(tmp_path):
    started = []

    def start(*args, env=None):
        job = Launch(args, tmp_path, env)
        started.append(job)
        return job

    yield start
    for job in started:
        job.kill()
        job.proc.wait(timeout=30)


def run_launch(launch, *args, env=None):
    return launch(*args, env=env).wait()


def env_lines(stdout):
    """{rank: {key: value}} from SHOW_ENV's lines, with or without the [rank N]: tag."""
    ranks = {}
    for line in stdout.splitlines():
        body = line.split("]: ", 1)[1] if line.startswith("[rank ") else line
        fields = dict(f.split("=", 1) for f in body.split())
        ranks[int(fields["RANK"])] = fields
    return ranks


@pytest.mark.parametrize("world", [2, 3, 4])
def test_each_rank_gets_torchruns_environment(tmp_path, launch, world):
    write(tmp_path, "show.py", SHOW_ENV)
    r = run_launch(launch, "--nproc-per-node", world, "show.py", "a", "--b")
    assert r.returncode == 0, r.stderr
    ranks = env_lines(r.stdout)
    assert sorted(ranks) == list(range(world))
    job_ids = {fields["RT_LAUNCH_JOB_ID"] for fields in ranks.values()}
    assert len(job_ids) == 1, job_ids
    job_id = job_ids.pop()
    assert job_id not in ("None", "", "none")
    for rank, fields in ranks.items():
        assert fields == {"RANK": str(rank), "LOCAL_RANK": str(rank), "WORLD_SIZE": str(world),
                          "LOCAL_WORLD_SIZE": str(world), "GROUP_RANK": "0", "MASTER_ADDR": "127.0.0.1",
                          "MASTER_PORT": "29500", "TORCHELASTIC_RESTART_COUNT": "0",
                          "RT_LAUNCH_JOB_ID": job_id,
                          "ARGS": "a,--b"}


def test_multi_node_numbering_and_underscore_spellings(tmp_path, launch):
    write(tmp_path, "show.py", SHOW_ENV)
    r = run_launch(launch, "--nproc_per_node", 2, "--nnodes", 3, "--node_rank", 2, "--master_addr", "10.1.2.3",
                   "--master_port", 1234, "show.py")
    assert r.returncode == 0, r.stderr
    ranks = env_lines(r.stdout)
    assert sorted(ranks) == [4, 5]
    for rank, fields in ranks.items():
        assert (fields["LOCAL_RANK"], fields["WORLD_SIZE"], fields["LOCAL_WORLD_SIZE"], fields["GROUP_RANK"],
                fields["MASTER_ADDR"], fields["MASTER_PORT"]) == (str(rank - 4), "6", "2", "2", "10.1.2.3", "1234")


def test_output_lines_are_tagged_unless_no_prefix(tmp_path, launch):
    write(tmp_path, "talk.py", """
        import os, sys
        r = os.environ["RANK"]
        print(f"out {r} one"); print(f"out {r} two")
        print(f"err {r}", file=sys.stderr)
        sys.stdout.write(f"tail {r} without newline")
    """)
    r = run_launch(launch, "--nproc-per-node", 2, "talk.py")
    assert r.returncode == 0, r.stderr
    for rank in (0, 1):
        for line in (f"out {rank} one", f"out {rank} two", f"tail {rank} without newline"):
            assert f"[rank {rank}]: {line}" in r.stdout.splitlines()
        assert f"[rank {rank}]: err {rank}" in r.stderr.splitlines()
    assert all(line.startswith("[rank ") for line in r.stdout.splitlines())

    r = run_launch(launch, "--nproc-per-node", 2, "--no-prefix", "talk.py")
    assert r.returncode == 0, r.stderr
    assert "[rank" not in r.stdout + r.stderr
    for rank in (0, 1):  # untagged output is passed on unchanged (a line without newline stays so)
        for text in (f"out {rank} one\n", f"out {rank} two\n", f"tail {rank} without newline"):
            assert text in r.stdout
        assert f"err {rank}" in r.stderr.splitlines()
    assert r.stdout.count("\n") == 4


def test_failing_rank_is_named_with_its_code_and_last_lines(tmp_path, launch):
    write(tmp_path, "fail.py", """
        import os, sys, time
        rank = int(os.environ["RANK"])
        if rank == 1:
            for i in range(30):
                print(f"line {i} of rank 1")
            print("giving up: bad shard", file=sys.stderr)
            sys.exit(3)
        time.sleep(60)
    """)
    r = run_launch(launch, "--nproc-per-node", 3, "fail.py")
    assert r.returncode == 3, r.stderr
    summary = r.stderr[r.stderr.index("rtorch launch: rank"):]
    assert summary.startswith("rtorch launch: rank 1 failed first: exit code 3")
    body = summary.splitlines()
    assert "    giving up: bad shard" in body
    assert "    line 29 of rank 1" in body
    assert "    line 5 of rank 1" not in body  # only the last lines are kept
    # The others are stopped by mpirun: SIGTERM, which their supervisors report, or, when a loaded machine
    # keeps a supervisor from writing its status within mpirun's grace period, SIGKILL and no status.
    for rank in (0, 2):
        assert (f"rank {rank}: signal SIGTERM (15), stopped by mpirun" in summary
                or f"rank {rank}: no status (killed before it could report)" in summary), summary
    assert "rtorch launch: restart" not in r.stderr


def test_killed_rank_is_restarted_once(tmp_path, launch):
    write(tmp_path, "victim.py", """
        import os, sys, time
        rank = int(os.environ["RANK"]); restart = int(os.environ["TORCHELASTIC_RESTART_COUNT"])
        print(f"start {rank} restart {restart}")
        if rank == 1 and restart == 0:
            with open("pid.tmp", "w") as f:
                f.write(str(os.getpid()))
            os.rename("pid.tmp", "pid")
            time.sleep(60)
        print(f"done {rank} restart {restart}")
    """)
    job = launch("--nproc-per-node", 2, "--max-restarts", 1, "victim.py")
    pid_file = tmp_path / "pid"
    deadline = time.monotonic() + HANG_GUARD
    while not pid_file.exists():
        assert job.proc.poll() is None, job.proc.communicate()
        assert time.monotonic() < deadline, "rank 1 never wrote its pid"
        time.sleep(0.05)
    victim = int(pid_file.read_text())
    os.kill(victim, signal.SIGKILL)
    r = job.wait()
    assert r.returncode == 0, r.stderr
    assert "rtorch launch: rank 1 failed first: signal SIGKILL (9)" in r.stderr
    assert f"(pid {victim}, local rank 1, restart 0)" in r.stderr
    assert "rtorch launch: restart 1/1" in r.stderr.splitlines()
    for rank in (0, 1):
        assert f"[rank {rank}]: done {rank} restart 1" in r.stdout.splitlines()
    assert "[rank 1]: done 1 restart 0" not in r.stdout


def test_restarts_run_out(tmp_path, launch):
    write(tmp_path, "always.py", """
        import os, sys
        print("restart", os.environ["TORCHELASTIC_RESTART_COUNT"])
        sys.exit(5 if os.environ["RANK"] == "0" else 0)
    """)
    r = run_launch(launch, "--nproc-per-node", 2, "--max-restarts", 2, "always.py")
    assert r.returncode == 5
    assert [l for l in r.stderr.splitlines() if "restart " in l and l.startswith("rtorch launch: restart")] == \
        ["rtorch launch: restart 1/2", "rtorch launch: restart 2/2"]
    assert "[rank 0]: restart 2" in r.stdout.splitlines()
    assert "all 2 restarts used" in r.stderr


def test_signal_death_gives_128_plus_signal(tmp_path, launch):
    write(tmp_path, "abort.py", "import os, signal\nos.kill(os.getpid(), signal.SIGABRT)\n")
    r = run_launch(launch, "--nproc-per-node", 1, "abort.py")
    assert r.returncode == 128 + signal.SIGABRT
    assert "rank 0 failed first: signal SIGABRT (6)" in r.stderr


@pytest.mark.parametrize("args, message", [
    (["--nproc-per-node", "0", "x.py"], "--nproc-per-node must be at least 1 (got 0)"),
    (["--nproc-per-node", "2"], "no script given"),
    (["--nproc-per-node", "2", "missing.py"], "cannot open 'missing.py'"),
    (["--nnodes", "2", "--node-rank", "2", "x.py"], "--node-rank must be between 0 and 1"),
    (["--max-restarts", "-1", "x.py"], "--max-restarts must be 0 or more"),
])
def test_bad_arguments_are_explained(tmp_path, launch, args, message):
    write(tmp_path, "x.py", "print('should not run')\n")
    r = run_launch(launch, *args)
    assert r.returncode == 2
    assert message in r.stderr
    assert "should not run" not in r.stdout


def test_help_documents_the_command(launch):
    r = run_launch(launch, "--help")
    assert r.returncode == 0
    for text in ("--nproc-per-node", "--nnodes", "--node-rank", "--master-addr", "--master-port", "--max-restarts",
                 "--monitor-interval", "--no-prefix", "TORCHELASTIC_RESTART_COUNT", "docs/launch.md"):
        assert text in r.stdout


def test_launch_rank_reads_slurm_variables(tmp_path):
    """srun can start `rtorch launch-rank -- SCRIPT` directly: the rank comes from SLURM_* variables."""
    write(tmp_path, "show.py", SHOW_ENV)
    env = clean_env({"SLURM_PROCID": "5", "SLURM_LOCALID": "1", "SLURM_NTASKS": "8", "SLURM_NNODES": "2",
                     "SLURM_NODEID": "1", "SLURM_JOB_ID": "777", "MASTER_ADDR": "node0"})
    for var in [v for v in env if v.startswith(("OMPI_", "PMIX_"))]:
        env.pop(var)
    r = subprocess.run([str(RTORCH), "launch-rank", "--", "show.py"], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=HANG_GUARD)
    assert r.returncode == 0, r.stderr
    assert env_lines(r.stdout)[5] == {"RANK": "5", "LOCAL_RANK": "1", "WORLD_SIZE": "8", "LOCAL_WORLD_SIZE": "4",
                                      "GROUP_RANK": "1", "MASTER_ADDR": "node0", "MASTER_PORT": "29500",
                                      "TORCHELASTIC_RESTART_COUNT": "0", "RT_LAUNCH_JOB_ID": "777", "ARGS": ""}


def test_launch_rank_without_a_launcher_says_so(tmp_path):
    write(tmp_path, "show.py", SHOW_ENV)
    env = {k: v for k, v in clean_env().items() if not k.startswith(("OMPI_", "PMIX_", "SLURM_"))}
    r = subprocess.run([str(RTORCH), "launch-rank", "--", "show.py"], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=HANG_GUARD)
    assert r.returncode == 1
    assert "no rank given by a launcher" in r.stderr
