"""`rtorch attach HOST:JOB` over a real sshd: the test starts Debian's sshd on a loopback port with a host key
and a user key made for it (its own sshd_config: no PAM, key login only, StrictModes no), runs an attachable
`rtorch run --attach` job, attaches through `ssh HOST rtorch relay` with RT_SSH naming the port and key, and
checks that the recorded store session holds the job's ops; the same for both ranks of an `rtorch launch
--attach` job (one `ssh HOST rtorch relay` per rank). Another test puts sshd and the job in one
network namespace and the client in another, joined by a veth pair, as two hosts (root and `ip netns` only)."""
import getpass
import json
import os
import shutil
import socket
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from attached_job import JOB_SCRIPT, clean_env, free_port, record_until_done, start_job, wait_for
from conftest import RTORCH, run

SSHD = "/usr/sbin/sshd"

class Sshd:
    """sshd on ADDRESS:PORT with keys made for the test; `netns` runs it inside a network namespace."""

    def __init__(self, home: Path, address: str, runtime_dir: Path, netns=None):
        if not Path(SSHD).exists():
            pytest.skip(f"{SSHD} is not installed (openssh-server; scripts/setup.sh installs it)")
        self.home = home
        self.address = address
        self.netns = netns
        self.port = free_port() if netns is None else 2222
        for name in ("host_key", "user_key"):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(home / name)], check=True)
        shutil.copy(home / "user_key.pub", home / "authorized_keys")
        os.chmod(home / "authorized_keys", 0o600)
        config = home / "sshd_config"
        config.write_text(
            f"Port {self.port}\n"
            f"ListenAddress {address}\n"
            f"HostKey {home / 'host_key'}\n"
            f"PidFile {home / 'sshd.pid'}\n"
            f"AuthorizedKeysFile {home / 'authorized_keys'}\n"
            "UsePAM no\n"
            "PasswordAuthentication no\n"
            "KbdInteractiveAuthentication no\n"
            "PubkeyAuthentication yes\n"
            "PermitRootLogin prohibit-password\n"
            "StrictModes no\n"
            f"AllowUsers {getpass.getuser()}\n"
            # The relay must find the job's agents: the job's runtime folder.
            f"SetEnv RT_RUNTIME_DIR={runtime_dir}\n"
            "LogLevel ERROR\n")
        if os.geteuid() == 0:
            Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation folder
        cmd = [SSHD, "-D", "-e", "-f", str(config)]
        if netns:
            cmd = ["ip", "netns", "exec", netns, *cmd]
        self.log = open(home / "sshd.log", "w")
        self.process = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT)
        wait_for(self._listening, "sshd to listen", 20)

    def _listening(self):
        if self.process.poll() is not None:
            pytest.fail(f"sshd exited: {(self.home / 'sshd.log').read_text()}")
        prefix = ["ip", "netns", "exec", self.netns] if self.netns else []
        r = subprocess.run([*prefix, "ss", "-ltnH", f"sport = :{self.port}"], capture_output=True, text=True)
        return "LISTEN" in r.stdout

    def ssh_env(self):
        return {"RT_SSH": f"ssh -p {self.port} -i {self.home / 'user_key'} -o StrictHostKeyChecking=no "
                          f"-o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR",
                "RT_REMOTE_RTORCH": str(RTORCH)}

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()


def test_attach_over_ssh_records_the_remote_job(tmp_path):
    runtime_dir = tmp_path / "rt"
    runtime_dir.mkdir(mode=0o700)
    home = tmp_path / "ssh"
    home.mkdir()
    sshd = Sshd(home, "127.0.0.1", runtime_dir)
    job = f"ssh-job-{uuid.uuid4().hex[:8]}"
    try:
        process, stop = start_job(tmp_path, runtime_dir, job)
        # The client's own runtime folder is empty: the job is reachable only over ssh.
        client_runtime = tmp_path / "client-rt"
        client_runtime.mkdir(mode=0o700)
        env = clean_env(**sshd.ssh_env(), RT_RUNTIME_DIR=str(client_runtime))

        wrong = run([RTORCH, "attach", "127.0.0.1:no-such-job", "--quiet"], env=env)
        assert wrong.returncode == 2 and f"running: {job}" in wrong.stderr, wrong.stderr

        store = tmp_path / "store.sqlite"
        record_until_done([str(RTORCH), "attach", f"127.0.0.1:{job}", "--record", str(store), "--quiet"], env,
                          runtime_dir, job, process, stop, store)
    finally:
        sshd.stop()


def test_attach_over_ssh_records_every_rank_of_a_launched_job(tmp_path):
    runtime_dir = tmp_path / "rt"
    runtime_dir.mkdir(mode=0o700)
    home = tmp_path / "ssh"
    home.mkdir()
    sshd = Sshd(home, "127.0.0.1", runtime_dir)
    job = f"ssh-ddp-{uuid.uuid4().hex[:8]}"
    script = tmp_path / "job.py"
    script.write_text(JOB_SCRIPT)
    stop = tmp_path / "stop"
    launch = subprocess.Popen([str(RTORCH), "launch", "--nproc-per-node", "2", "--attach", "--master-port",
                               str(free_port()), str(script), str(stop)],
                              env=clean_env(RT_RUNTIME_DIR=str(runtime_dir), RT_LAUNCH_JOB_ID=job),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: len(list(runtime_dir.glob(f"{job}.r*.json"))) == 2 or launch.poll() is not None,
                 "both ranks' manifests")
        assert launch.poll() is None, launch.communicate()
        client_runtime = tmp_path / "client-rt"
        client_runtime.mkdir(mode=0o700)
        env = clean_env(**sshd.ssh_env(), RT_RUNTIME_DIR=str(client_runtime))
        store = tmp_path / "store.sqlite"
        out = record_until_done([str(RTORCH), "attach", f"127.0.0.1:{job}", "--record", str(store), "--quiet"], env,
                                runtime_dir, job, launch, stop, store, ranks=2)
        assert "rank 0" in out and "rank 1" in out
    finally:
        if launch.poll() is None:
            stop.write_text("")
            launch.communicate(timeout=120)
        sshd.stop()


def test_ssh_failures_reach_the_user(tmp_path):
    closed_port = free_port()
    env = {"RT_SSH": f"ssh -p {closed_port} -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null "
                     "-o BatchMode=yes", "RT_RUNTIME_DIR": str(tmp_path)}
    r = run([RTORCH, "attach", "127.0.0.1:some-job", "--quiet"], env=env)
    assert r.returncode == 1
    assert f"ssh: connect to host 127.0.0.1 port {closed_port}: Connection refused" in r.stderr, r.stderr


def test_relay_lists_jobs_and_refuses_a_peer_that_does_not_speak_the_protocol(tmp_path):
    runtime_dir = tmp_path / "rt"
    runtime_dir.mkdir(mode=0o700)
    job = f"relay-{uuid.uuid4().hex[:8]}"
    process, stop = start_job(tmp_path, runtime_dir, job)
    try:
        env = {"RT_RUNTIME_DIR": str(runtime_dir)}
        r = subprocess.run([str(RTORCH), "relay", "--job", job], env=clean_env(**env), input=b"GET / HTTP/1.1\r\n\r\n",
                           capture_output=True, timeout=60)
        assert r.returncode == 2
        assert b"not the remote-attach protocol" in r.stderr
        assert r.stdout.startswith(b"RTRA")  # an Error frame, which a client shows
        assert b"not the remote-attach protocol" in r.stdout
        listed = run([RTORCH, "relay", "--list"], env=env)
        assert listed.returncode == 0
        assert [json.loads(line)["job"] for line in listed.stdout.splitlines()] == [job]
    finally:
        stop.write_text("")
        process.communicate(timeout=60)


def netns_unavailable():
    if os.geteuid() != 0:
        return "needs root to create network namespaces"
    if shutil.which("ip") is None:
        return "`ip` (iproute2) is not installed"
    probe = f"rtprobe{os.getpid()}"
    r = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if r.returncode != 0:
        return f"`ip netns add` is unavailable here: {r.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


def test_attach_over_ssh_between_two_network_namespaces(tmp_path):
    reason = netns_unavailable()
    if reason:
        pytest.skip(reason)
    tag = uuid.uuid4().hex[:6]
    server_ns, client_ns = f"rts{tag}", f"rtc{tag}"
    net = 10 + int(tag[:2], 16) % 200  # 10.N.0.0/24
    server_ip, client_ip = f"10.{net}.0.1", f"10.{net}.0.2"

    def ip(*args):
        subprocess.run(["ip", *args], check=True, capture_output=True)

    ip("netns", "add", server_ns)
    ip("netns", "add", client_ns)
    try:
        ip("link", "add", f"rv{tag}s", "type", "veth", "peer", "name", f"rv{tag}c")
        ip("link", "set", f"rv{tag}s", "netns", server_ns)
        ip("link", "set", f"rv{tag}c", "netns", client_ns)
        for ns, dev, addr in ((server_ns, f"rv{tag}s", server_ip), (client_ns, f"rv{tag}c", client_ip)):
            ip("-n", ns, "addr", "add", f"{addr}/24", "dev", dev)
            ip("-n", ns, "link", "set", dev, "up")
            ip("-n", ns, "link", "set", "lo", "up")

        runtime_dir = tmp_path / "rt"
        runtime_dir.mkdir(mode=0o700)
        home = tmp_path / "ssh"
        home.mkdir()
        sshd = Sshd(home, server_ip, runtime_dir, netns=server_ns)
        job = f"netns-job-{tag}"
        try:
            process, stop = start_job(tmp_path, runtime_dir, job, prefix=("ip", "netns", "exec", server_ns))
            client_runtime = tmp_path / "client-rt"
            client_runtime.mkdir(mode=0o700)
            env = clean_env(**sshd.ssh_env(), RT_RUNTIME_DIR=str(client_runtime))
            # From the client's namespace the job's host is 10.N.0.1, reached only through the veth pair.
            store = tmp_path / "store.sqlite"
            out = record_until_done(["ip", "netns", "exec", client_ns, str(RTORCH), "attach", f"{server_ip}:{job}",
                                     "--record", str(store), "--quiet"], env, runtime_dir, job, process, stop, store)
            assert "rank 0" in out
        finally:
            sshd.stop()
    finally:
        subprocess.run(["ip", "netns", "del", server_ns], capture_output=True)
        subprocess.run(["ip", "netns", "del", client_ns], capture_output=True)
