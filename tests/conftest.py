"""Suite-wide settings: property tests judge behaviour, not speed (CI shares 2 cores); the
cyclic collector leaves alone what lives for the whole session."""

import gc
import os

import pytest
from hypothesis import HealthCheck, settings

# Collecting imports the SDKs and rewrites every test module's asserts: millions of objects
# that live for the session, which the cyclic collector would scan again and again. It runs
# again once they are collected (and frozen), below.
gc.disable()
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


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto` starts one worker more than there are cores: a fifth of the suite waits on
    local test servers and deadlines, and the spare worker runs tests meanwhile (on 2 cores,
    3 workers finish the suite about 3 s sooner than 2)."""
    return len(os.sched_getaffinity(0)) + 1
