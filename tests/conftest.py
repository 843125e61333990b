"""Suite-wide settings: property tests judge behaviour, not speed (CI shares 2 cores); the
cyclic collector leaves alone what lives for the whole session; compiled test modules are kept."""

import gc
import os
import sys

import pytest
from hypothesis import HealthCheck, settings

# Collecting imports the SDKs and rewrites every test module's asserts: millions of objects
# that live for the session, which the cyclic collector would scan again and again. It runs
# again once they are collected (and frozen), below.
gc.disable()

# Where PYTHONDONTWRITEBYTECODE is set (this machine and CI set it for everything), every worker
# and every CLI run a test starts would compile the project again and rewrite the asserts of all
# test modules again: about 2 s of CPU per process, on every run. The suite keeps its bytecode in
# the gitignored __pycache__ folders (the serve images' build context and content tag leave
# them out). Set before the workers start, so they and the processes they start inherit it.
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

# The plan's date (mlcc.facts.kubernetes_versions.today): the day the Kubernetes version table
# was read, so the default version, the refusals and the extended-support price do not move
# with the calendar. Set before mlcc is imported (the key table's default is read then), and
# inherited by the CLI runs the tests start. A test of another day sets it again.
os.environ["MLCC_TODAY"] = "2026-12-06"

settings.register_profile("suite", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("suite")


def pytest_collection_finish(session: pytest.Session) -> None:
    """From here the cyclic collector's full passes skip what lives for the whole session (the SDKs'
    modules, the test modules, the collected items): frozen once collected, they were a tenth
    of the suite's CPU, scanned again in every pass. Tests allocate in bursts (plans, Outputs,
    fuzzed documents), so the youngest generation is collected less often, too."""
    gc.enable()
    gc.collect()
    gc.freeze()
    gc.set_threshold(10_000, 20, 20)
    gc.callbacks.append(_freeze_the_survivors)


def _freeze_the_survivors(phase: str, info: dict[str, int]) -> None:
    """What outlives a full pass lives on (the SDK modules the tests import, the session's
    fixtures and caches): frozen too, so later passes, and pytest's collections at exit,
    scan only what the tests made since. Reference counting still frees all of it."""
    if phase == "stop" and info["generation"] == 2:
        gc.freeze()


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto` starts one worker more than there are cores: a fifth of the suite waits on
    local test servers and deadlines, and the spare worker runs tests meanwhile (on 2 cores,
    3 workers finish the suite about 3 s sooner than 2)."""
    return len(os.sched_getaffinity(0)) + 1
