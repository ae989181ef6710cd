"""`rtorch run` behaves like /usr/bin/python3 on the same script, with rustytorch importable."""
import os
import re
import signal
import subprocess
import textwrap

from conftest import BUILD_DIR, PYTHON, RTORCH, run


def write(tmp_path, name, code):
    path = tmp_path / name
    path.write_text(textwrap.dedent(code))
    return path


def both(tmp_path, script, *args):
    """Runs the script with rtorch and with python3 from tmp_path; returns (rtorch, python3) results."""
    return (run([RTORCH, "run", script, *args], cwd=tmp_path), run([PYTHON, script, *args], cwd=tmp_path))


def test_argv_name_and_path0(tmp_path, rtorch):
    write(tmp_path, "show.py", """
        import os, sys
        print(repr(sys.argv)); print(__name__); print(sys.path[0] == os.path.dirname(os.path.abspath(__file__)))
    """)
    r = rtorch("run", "show.py", "a", "b c", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["['show.py', 'a', 'b c']", "__main__", "True"]


def test_arguments_after_the_script_belong_to_it(tmp_path, rtorch):
    write(tmp_path, "show.py", "import sys; print(sys.argv[1:])\n")
    r = rtorch("run", "show.py", "--threads", "3", "--help", "-c", "x", "run", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "['--threads', '3', '--help', '-c', 'x', 'run']"


def test_command_and_module(tmp_path, rtorch):
    r = rtorch("run", "-c", "import sys; print(sys.argv); print(repr(sys.path[0]))", "x", "--help", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["['-c', 'x', '--help']", "''"]
    write(tmp_path, "mymod.py", "import sys\nif __name__ == '__main__': print(sys.argv[1:], sys.argv[0].endswith('mymod.py'))\n")
    r = rtorch("run", "-m", "mymod", "--help", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "['--help'] True"


def test_exit_codes_match_python(tmp_path):
    cases = {"exit3.py": "import sys\nsys.exit(3)\n", "exitmsg.py": "import sys\nsys.exit('stopping: bad input')\n",
             "exitnone.py": "raise SystemExit\n"}
    expected = {"exit3.py": 3, "exitmsg.py": 1, "exitnone.py": 0}
    for name, code in cases.items():
        write(tmp_path, name, code)
        ours, theirs = both(tmp_path, name)
        assert ours.returncode == theirs.returncode == expected[name], name
        assert ours.stderr == theirs.stderr
    ours, _ = both(tmp_path, "exitmsg.py")
    assert ours.stderr.strip() == "stopping: bad input"


def test_uncaught_exception_traceback_matches_python(tmp_path):
    write(tmp_path, "boom.py", """
        import sys
        print("before", flush=False)
        def inner(x):
            return 1 / x
        def outer():
            try:
                inner(0)
            except ZeroDivisionError as e:
                raise ValueError("wrapped") from e
        outer()
    """)
    ours, theirs = both(tmp_path, "boom.py")
    assert ours.returncode == theirs.returncode == 1
    assert ours.stdout == theirs.stdout == "before\n"  # buffered stdout is flushed at exit
    assert ours.stderr == theirs.stderr
    assert "ValueError: wrapped" in ours.stderr and "ZeroDivisionError" in ours.stderr


def test_syntax_error_matches_python(tmp_path):
    write(tmp_path, "bad.py", "x = 1\nif x ==\n    pass\n")
    ours, theirs = both(tmp_path, "bad.py")
    assert ours.returncode == theirs.returncode == 1
    assert ours.stderr == theirs.stderr
    assert "SyntaxError" in ours.stderr


def test_keyboard_interrupt_like_python(tmp_path):
    write(tmp_path, "wait.py", "import time\nprint('ready', flush=True)\ntime.sleep(60)\n")
    results = []
    for cmd in ([RTORCH, "run", "wait.py"], [PYTHON, "wait.py"]):
        p = subprocess.Popen([str(c) for c in cmd], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
        assert p.stdout.readline() == "ready\n"
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=30)
        results.append((p.returncode, err))
    (ours_code, ours_err), (theirs_code, theirs_err) = results
    assert ours_code == theirs_code == -signal.SIGINT  # a shell reports 130
    for err in (ours_err, theirs_err):  # the interrupted line depends on timing, the form does not
        assert err.startswith("Traceback (most recent call last):\n")
        assert err.endswith("\nKeyboardInterrupt\n")
        assert 'wait.py", line ' in err


def test_stdin_and_stdout_like_python(tmp_path):
    write(tmp_path, "echo.py", "import sys\nfor line in sys.stdin:\n    print(line.strip().upper())\n"
                               "print('err', file=sys.stderr)\n")
    ours = run([RTORCH, "run", "echo.py"], cwd=tmp_path, input="ab\ncd\n")
    assert ours.returncode == 0
    assert ours.stdout == "AB\nCD\n" and ours.stderr == "err\n"


def test_missing_script(tmp_path, rtorch):
    r = rtorch("run", "nope.py", cwd=tmp_path)
    assert r.returncode == 2
    assert r.stderr.strip() == "rtorch run: cannot open 'nope.py': No such file or directory"


def test_nothing_to_run(rtorch):
    r = rtorch("run")
    assert r.returncode == 2
    assert "nothing to run" in r.stderr and "--help" in r.stderr


def test_site_packages_as_python3(tmp_path, rtorch):
    code = "import sys, numpy; print(sys.executable); print(numpy.__file__)"
    ours = rtorch("run", "-c", code, cwd=tmp_path)
    theirs = run([PYTHON, "-c", code], cwd=tmp_path)
    assert ours.returncode == 0, ours.stderr
    assert ours.stdout == theirs.stdout


def test_rustytorch_importable_and_one_engine(tmp_path, rtorch):
    code = textwrap.dedent("""
        import re, rustytorch, rustytorch._C
        print(rustytorch._C.__file__)
        libs = sorted(set(re.findall(r'\\S*/librt_(?:engine|profiler)\\.so\\S*', open('/proc/self/maps').read())))
        print('\\n'.join(libs))
    """)
    r = rtorch("run", "-c", code, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert os.path.realpath(lines[0]).startswith(os.path.realpath(BUILD_DIR / "python" / "rustytorch"))
    engines = [l for l in lines[1:] if "librt_engine" in l]
    assert [os.path.realpath(l) for l in engines] == [os.path.realpath(BUILD_DIR / "lib" / "librt_engine.so")]
    for lib in lines[1:]:  # librt_profiler too: one copy, the build's
        assert os.path.dirname(os.path.realpath(lib)) == os.path.realpath(BUILD_DIR / "lib")


def test_pythonpath_override_and_user_pythonpath(tmp_path, rtorch):
    pkg = tmp_path / "alt" / "rustytorch"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("WHERE = 'alt'\n")
    user = tmp_path / "user"
    user.mkdir()
    (user / "usermod.py").write_text("X = 7\n")
    r = rtorch("run", "-c", "import rustytorch, usermod; print(rustytorch.WHERE, usermod.X)", cwd=tmp_path,
               env={"RT_PYTHONPATH": str(tmp_path / "alt"), "PYTHONPATH": str(user)})
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "alt 7"


def test_threads_reach_the_script(tmp_path, rtorch):
    r = rtorch("--threads", "3", "run", "-c", "import os; print(os.environ['OMP_NUM_THREADS'])", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "3"
    r = rtorch("run", "--threads", "2", "-c", "import os; print(os.environ['OPENBLAS_NUM_THREADS'])", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "2"
