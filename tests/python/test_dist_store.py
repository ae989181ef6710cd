"""rustytorch._C._dist's stores (HashStore, FileStore, TCPStore, PrefixStore): the Python surface,
errors that name what they waited for, the GIL released while blocked, two processes meeting through a
TCPStore, and the same sequence of operations giving the same answers as torch.distributed's stores."""
import datetime
import os
import subprocess
import sys
import textwrap
import threading

import pytest

from rustytorch._C import _dist as dist

MS = datetime.timedelta(milliseconds=1)


@pytest.fixture(params=["HashStore", "FileStore", "TCPStore", "PrefixStore"])
def store(request, tmp_path):
    kind = request.param
    if kind == "HashStore":
        return dist.HashStore()
    if kind == "FileStore":
        return dist.FileStore(str(tmp_path / "store"), -1)
    if kind == "TCPStore":
        return dist.TCPStore("127.0.0.1", 0, 1, True, datetime.timedelta(seconds=10))
    return dist.PrefixStore("group", dist.HashStore())


def test_methods(store):
    store.set("a", "text")
    store.set("b", b"\x00\xff")
    store.set("c", bytearray(b"xy"))
    assert store.get("a") == b"text"
    assert store.get("b") == b"\x00\xff"
    assert store.get("c") == b"xy"
    assert store.add("n", 2) == 2 and store.add("n", -5) == -3
    assert store.get("n") == b"-3"
    assert store.compare_set("a", "text", "new") == b"new"
    assert store.compare_set("a", "text", "newer") == b"new"
    assert store.compare_set("missing", "x", "y") == b"x"
    assert store.compare_set("created", "", "y") == b"y"
    assert store.check(["a", "b"]) and not store.check(["a", "missing"])
    assert store.num_keys() == 5
    assert store.delete_key("a") and not store.delete_key("a")
    store.wait(["b", "n"])
    store.wait(["b"], datetime.timedelta(seconds=1))
    with pytest.raises(TypeError, match="str or bytes"):
        store.set("k", 3)


def test_add_on_a_non_number_names_the_key(store):
    store.set("word", "abc")
    with pytest.raises(dist.DistStoreError, match=r"word'.*'abc'.*not a decimal integer"):
        store.add("word", 1)


def test_timeouts_name_key_and_timeout(store):
    store.set_timeout(200 * MS)
    assert store.timeout == 200 * MS
    with pytest.raises(dist.DistStoreError) as info:
        store.get("absent")
    assert "absent'" in str(info.value) and "200 ms" in str(info.value)
    with pytest.raises(dist.DistStoreError) as info:
        store.wait(["k1", "k2"], 150 * MS)
    assert "k1'" in str(info.value) and "k2'" in str(info.value) and "150 ms" in str(info.value)
    assert isinstance(info.value, dist.DistError) and isinstance(info.value, RuntimeError)


def test_tcpstore_timeout_names_host_and_port():
    store = dist.TCPStore("127.0.0.1", 0, 1, True, 300 * MS)
    with pytest.raises(dist.DistStoreError, match=f"TCPStore at 127.0.0.1:{store.port}: timed out after 300 ms waiting for key 'absent'"):
        store.get("absent")
    assert store.host == "127.0.0.1" and store.port != 0


def test_tcpstore_connect_failure_names_host_port_and_timeout():
    probe = dist.TCPStore("127.0.0.1", 0, 1, True, datetime.timedelta(seconds=10))
    port = probe.port
    del probe  # the server stops: nothing listens on `port` now
    with pytest.raises(dist.DistNetworkError, match=f"127.0.0.1:{port}.*300 ms"):
        dist.TCPStore("127.0.0.1", port, 2, False, 300 * MS)
    with pytest.raises(ValueError, match="0..65535"):
        dist.TCPStore("127.0.0.1", 70000, 1, True)


def test_the_gil_is_released_while_waiting(store):
    """A thread blocked in wait must let the main thread run the set that wakes it."""
    store.set_timeout(datetime.timedelta(seconds=30))
    got = []
    t = threading.Thread(target=lambda: got.append(store.get("late")))
    t.start()
    store.set("late", "here")
    t.join(timeout=60)
    assert got == [b"here"]


def test_prefix_store_puts_keys_under_the_prefix():
    base = dist.HashStore()
    p = dist.PrefixStore("g", base)
    p.set("k", "v")
    assert base.get("g/k") == b"v"
    assert p.underlying_store is base


def test_two_processes_rendezvous_through_tcpstore(tmp_path):
    master = dist.TCPStore("127.0.0.1", 0, 3, True, datetime.timedelta(seconds=60), wait_for_workers=False)
    worker = textwrap.dedent(f"""
        import datetime, sys
        from rustytorch._C import _dist as dist
        rank = int(sys.argv[1])
        s = dist.TCPStore("127.0.0.1", {master.port}, 3, False, datetime.timedelta(seconds=60))
        s.set(f"addr/{{rank}}", f"worker{{rank}}")
        s.add("arrived", 1)
        s.set(f"ready/{{rank}}", "1")
        s.wait(["addr/1", "addr/2", "go"])
        other = 3 - rank
        assert s.get(f"addr/{{other}}") == f"worker{{other}}".encode()
        s.set(f"done/{{rank}}", "ok")
    """)
    env = dict(os.environ)
    procs = [subprocess.Popen([sys.executable, "-c", worker, str(r)], env=env) for r in (1, 2)]
    try:
        master.wait(["ready/1", "ready/2"])
        assert master.get("arrived") == b"2"
        master.set("go", "1")
        master.wait(["done/1", "done/2"])
        assert [p.wait(timeout=60) for p in procs] == [0, 0]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()


def test_file_store_last_close_removes_the_file(tmp_path):
    path = str(tmp_path / "rdzv")
    a = dist.FileStore(path, 2)
    b = dist.FileStore(path, 2)
    a.set("k", "v")
    assert b.get("k") == b"v"
    assert a.path == path
    del a
    assert os.path.exists(path)
    del b
    assert not os.path.exists(path)


# ---- parity with torch.distributed -----------------------------------------------------------------

def operations(store):
    """What every store answers for one sequence of operations. torch 1.13's stores have bugs we do not
    copy (FileStore.num_keys hangs on an empty file and delete_key of a missing key says True; an add on
    a non-number kills TCPStore's server), so the sequence avoids those; num_keys is compared as a
    difference because torch's TCPStore counts a key of its own."""
    out = []
    store.set("a", "1")
    base = store.num_keys()
    out.append(store.get("a"))
    store.set("b", b"\x00bytes")
    out.append(store.get("b"))
    out.append(store.add("counter", 5))
    out.append(store.add("counter", -2))
    out.append(store.get("counter"))
    out.append(store.add("a", 10))
    out.append(store.compare_set("cs", "x", "y"))   # missing, expected non-empty
    out.append(store.compare_set("cs", "", "y"))    # missing, expected empty: created
    out.append(store.compare_set("cs", "y", "z"))   # matches: swapped
    out.append(store.compare_set("cs", "y", "w"))   # does not match
    out.append(store.get("cs"))
    out.append(store.num_keys() - base)
    out.append(store.delete_key("b"))
    out.append(store.num_keys() - base)
    store.set("b", "again")
    out.append(store.get("b"))
    try:
        store.wait(["never"], 100 * MS)
        out.append("no timeout")
    except RuntimeError:
        out.append("timeout")
    return out


def make_pair(td, kind, tmp_path):
    ten_s = datetime.timedelta(seconds=10)
    if kind == "HashStore":
        return dist.HashStore(), td.HashStore()
    if kind == "FileStore":
        return dist.FileStore(str(tmp_path / "rt"), 1), td.FileStore(str(tmp_path / "torch"), 1)
    if kind == "TCPStore":
        return dist.TCPStore("127.0.0.1", 0, 1, True, ten_s), td.TCPStore("127.0.0.1", 0, 1, True, ten_s)
    return dist.PrefixStore("p", dist.HashStore()), td.PrefixStore("p", td.HashStore())


@pytest.mark.parametrize("kind", ["HashStore", "FileStore", "TCPStore", "PrefixStore"])
def test_parity_with_torch_distributed(torch, kind, tmp_path):
    td = pytest.importorskip("torch.distributed")
    ours, theirs = make_pair(td, kind, tmp_path)
    assert operations(ours) == operations(theirs)
