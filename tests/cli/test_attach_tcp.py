"""TCP attach, only on request: `rtorch run --attach --listen ADDR:PORT` (and `rtorch launch --listen`), tokens
off loopback in a 0600 connection file, `rtorch attach --tcp ADDR:PORT --connection-file FILE --record`, and
a non-loopback listen without a token refused with the reason."""
import json
import stat
import subprocess
import uuid

from attached_job import clean_env, free_port, record_until_done, start_job, wait_for
from conftest import RTORCH, run


def manifests(runtime_dir):
    return [json.loads(p.read_text()) for p in sorted(runtime_dir.glob("*.json"))]


def test_attach_over_tcp_with_a_token(tmp_path):
    runtime_dir = tmp_path / "rt"
    runtime_dir.mkdir(mode=0o700)
    job = f"tcp-{uuid.uuid4().hex[:8]}"
    process, stop = start_job(tmp_path, runtime_dir, job, run_options=("--listen", "0.0.0.0:0"))
    try:
        manifest = manifests(runtime_dir)[0]
        assert manifest["listen"].startswith("0.0.0.0:")
        port = manifest["listen"].rsplit(":", 1)[1]
        connection_file = runtime_dir / (manifest["socket"].rsplit("/", 1)[1][:-len(".sock")] + ".connection")
        assert stat.S_IMODE(connection_file.stat().st_mode) == 0o600
        env = {"RT_RUNTIME_DIR": str(tmp_path)}  # the client finds nothing locally: TCP only

        no_token = run([RTORCH, "attach", "--tcp", f"127.0.0.1:{port}", "--quiet"], env=env)
        assert no_token.returncode == 1 and "requires a token" in no_token.stderr, no_token.stderr

        store = tmp_path / "store.sqlite"
        record_until_done([str(RTORCH), "attach", "--tcp", f"127.0.0.1:{port}", "--connection-file",
                           str(connection_file), "--record", str(store), "--quiet"], clean_env(**env), runtime_dir,
                          job, process, stop, store)
    finally:
        if process.poll() is None:
            stop.write_text("")
            process.communicate(timeout=60)
    assert not connection_file.exists()  # the tokens die with the agent


def test_listening_off_loopback_without_a_token_is_refused(tmp_path):
    runtime_dir = tmp_path / "rt"
    runtime_dir.mkdir(mode=0o700)
    r = run([RTORCH, "run", "--listen", "0.0.0.0:0", "--listen-auth", "none", "-c", "print('ran')"],
            env={"RT_RUNTIME_DIR": str(runtime_dir)})
    assert r.returncode == 1
    assert "without a token" in r.stderr and "0.0.0.0" in r.stderr, r.stderr
    assert "ran" not in r.stdout
    assert list(runtime_dir.iterdir()) == []


def test_python_serve_listens_on_loopback(tmp_path):
    runtime_dir = tmp_path / "rt"
    runtime_dir.mkdir(mode=0o700)
    for auth, has_file in (("auto", False), ("token", True)):
        code = (f"import rustytorch as rt; info = rt.remote.serve(job='py', listen='0', listen_auth='{auth}'); "
                "print(info['listen'], info['connection_file'] or '-'); rt.remote.stop()")
        r = run([RTORCH, "run", "-c", code], env={"RT_RUNTIME_DIR": str(runtime_dir)})
        assert r.returncode == 0, r.stderr
        listen, connection_file = r.stdout.split()
        assert listen.startswith("127.0.0.1:") and listen != "127.0.0.1:0"
        assert connection_file.endswith(".connection") if has_file else connection_file == "-"
    r = run([RTORCH, "run", "-c", "import rustytorch as rt; rt.remote.serve(listen='0', listen_auth='open')"],
            env={"RT_RUNTIME_DIR": str(runtime_dir)})
    assert r.returncode != 0 and "listen_auth must be" in r.stderr


def test_launch_gives_each_rank_its_own_port(tmp_path):
    runtime_dir = tmp_path / "rt"
    runtime_dir.mkdir(mode=0o700)
    script = tmp_path / "wait.py"
    stop = tmp_path / "stop"
    script.write_text("import os, sys, time\nwhile not os.path.exists(sys.argv[1]):\n    time.sleep(0.05)\n")
    port = free_port()
    launch = subprocess.Popen([str(RTORCH), "launch", "--nproc-per-node", "2", "--listen", f"127.0.0.1:{port}",
                               "--master-port", str(free_port()), str(script), str(stop)],
                              env=clean_env(RT_RUNTIME_DIR=str(runtime_dir)), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        found = wait_for(lambda: len(manifests(runtime_dir)) == 2 and manifests(runtime_dir) or launch.poll() is not None,
                         "both ranks' manifests")
        assert launch.poll() is None, launch.communicate()
        assert sorted((m["rank"], m["listen"]) for m in found) == [(0, f"127.0.0.1:{port}"), (1, f"127.0.0.1:{port + 1}")]
    finally:
        stop.write_text("")
        out, err = launch.communicate(timeout=120)
    assert launch.returncode == 0, err
