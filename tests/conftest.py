"""Shared fixtures. ../shared (beside the checkout) holds the data tests may read."""

from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from hostile_host import Host

    from codereval.executors.ray_local import LocalRayCluster
    from codereval.runners.program import ProgramRunner

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
SHARED_DATA = SHARED / "data"


def pytest_configure(config: pytest.Config) -> None:
    # A suite started in the background by a script (`cmd &`, nohup) inherits SIGINT ignored,
    # and so would every process it starts: the tests that interrupt a run with Ctrl-C, and the
    # ones comparing a sample's signal handlers with a fresh interpreter's, specify behaviour
    # under a normal launch.
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


UNGROUPED = pytest.StashKey[str]()


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Tests that share an xdist_group must run on one worker: the fork-bomb checks count a
    # bomb's processes host-wide, the Ray tests share one cluster. pytest-xdist marks a grouped
    # test by suffixing its node id with "@group"; a pytest whose node ids ignore that
    # (pytest-xdist#1386) would quietly spread a group over the workers.
    if not getattr(config.option, "loadgroup", False):
        return
    for item in items:
        if item.get_closest_marker("xdist_group") is not None and "@" not in item.nodeid:
            item.stash[UNGROUPED] = (
                f"--dist loadgroup does not group this test with pytest {pytest.__version__} "
                "and this pytest-xdist (pytest-xdist#1386): install the versions pyproject.toml "
                "pins (make test)"
            )


def pytest_runtest_setup(item: pytest.Item) -> None:
    if UNGROUPED in item.stash:
        pytest.fail(item.stash[UNGROUPED], pytrace=False)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.fail(f"../shared/data not found beside the checkout ({SHARED_DATA})")
    return SHARED_DATA


@pytest.fixture(scope="module")
def hx(shared_data: Path) -> Path:
    """HumanEval-X's data, six languages (a test module may name its own ``hx``)."""
    return shared_data / "humanevalx"


@pytest.fixture(scope="module")
def runner() -> Iterator[ProgramRunner]:
    """One program runner per test module (HumanEval, HumanEval-X), closed after it."""
    from codereval.runners.program import ProgramRunner

    runner = ProgramRunner()
    yield runner
    runner.close()


@pytest.fixture(scope="session")
def java_env_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The mini Java projects' environments, built once for the whole run: shared by the
    xdist workers (the builder locks) and by every test module that runs mini-java."""
    root = tmp_path_factory.getbasetemp().parent / "java-envs"
    root.mkdir(exist_ok=True)
    return root


@pytest.fixture(scope="session")
def ujb_env_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """mini-coderujb's bug versions, built once for the whole run: shared by the xdist workers
    (the builder locks) and by every test module that runs them."""
    root = tmp_path_factory.getbasetemp().parent / "ujb-envs"
    root.mkdir(exist_ok=True)
    return root


@pytest.fixture()
def host(tmp_path: Path) -> Iterator[Host]:
    """What hostile programs aim at on the host (tests/hostile_host.py), watched."""
    from hostile_host import open_host

    with open_host(tmp_path) as opened:
        yield opened


class CliResult:
    def __init__(self, exit_code: int, stdout: str, stderr: str) -> None:
        self.exit_code = exit_code
        self.stdout = stdout
        self.stderr = stderr

    def __repr__(self) -> str:
        return f"CliResult(exit={self.exit_code}, stderr={self.stderr[-500:]!r})"


@pytest.fixture()
def run_cli(capsys: pytest.CaptureFixture[str]):  # type: ignore[no-untyped-def]
    """Run `codereval ARGS...` in-process; returns exit code, stdout and stderr."""
    from codereval.cli.app import main

    def run(*args: str) -> CliResult:
        capsys.readouterr()
        code = 0
        try:
            main([str(a) for a in args])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        out = capsys.readouterr()
        return CliResult(code, out.out, out.err)

    return run


# -- one local Ray cluster per session (tests marked xdist_group("ray-cluster")) -----------------


@pytest.fixture(scope="session")
def node_homes(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    # Each node its own environment cache, as separate machines have: what a node evaluates,
    # it builds (or finds) itself.
    return [tmp_path_factory.mktemp("home-head"), tmp_path_factory.mktemp("home-worker")]


# A Ray driver is a process of its own, as a user's `codereval evaluate --executor ray` is:
# Ray's core worker ends the process that holds it on a fatal error (a lost GCS, a check
# failed), which in-process would take the xdist worker and every test it was to run with it
# and say only "worker crashed"; and one driver after another in one process (ray.init after
# ray.shutdown) is a path no user takes. Here a driver that dies is this test's failure, with
# what it printed.
_CHILD = """
import pickle, sys
with open(sys.argv[1], "rb") as f:
    fn, args, kwargs = pickle.load(f)
value = fn(*args, **kwargs)
with open(sys.argv[2], "wb") as f:
    pickle.dump(value, f)
"""


def in_own_process(fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` in a new Python process, given 15 minutes (fn, its arguments
    and its value are pickled; a test module's own function is found as the tests directory
    is on its path)."""
    with tempfile.TemporaryDirectory(prefix="codereval-driver-") as scratch:
        call, value = Path(scratch) / "call.pkl", Path(scratch) / "value.pkl"
        call.write_bytes(pickle.dumps((fn, args, kwargs)))
        path = os.pathsep.join([str(Path(__file__).parent), *filter(None, sys.path)])
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, str(call), str(value)],
            capture_output=True, text=True, timeout=900,
            env={**os.environ, "PYTHONPATH": path},
        )  # fmt: skip
        if done.returncode != 0:
            tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-40:])
            pytest.fail(f"{fn.__name__} exited {done.returncode} in its own process:\n{tail}")
        return pickle.loads(value.read_bytes())


@pytest.fixture(scope="session")
def cluster(node_homes: list[Path]) -> Iterator[LocalRayCluster]:
    """A head and a worker on loopback. Shared by every module that uses it: one cluster per
    session, which those modules' xdist_group("ray-cluster") keeps on one xdist worker."""
    pytest.importorskip("ray", reason="the ray extra is not installed")
    from codereval.executors.ray_local import LocalRayCluster

    envs = [{"CODEREVAL_HOME": str(home)} for home in node_homes]
    with LocalRayCluster(workers=1, node_envs=envs) as running:
        yield running
