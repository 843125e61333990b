"""Model answers read for what they say (issue #43, item 8): a safetensors index whose
total_size is a whole number written as a float, and a target config.json with no
architectures, refused naming that field, never as "not an EAGLE-3 target"."""

from __future__ import annotations

import pytest
from test_hostile_hub import CONFIG, LLAMA, cache, fetched, index_answer

from mlcc.preflight.facts import model_facts
from mlcc.preflight.hub import Fetched
from mlcc.preflight.rules import draft_fit
from mlcc.serving.engines import Engine

__all__ = ["cache"]  # the fixture, used by name


def test_a_total_size_written_as_a_whole_float_is_that_size() -> None:
    result = fetched({(LLAMA, "model.safetensors.index.json"): index_answer(16060522496.0)})
    assert isinstance(result, Fetched) and result.notes == ()
    assert result.facts.weight_bytes == 16_060_522_496 and not result.facts.weights_estimated


@pytest.mark.parametrize("architectures", [[], None])
@pytest.mark.parametrize("algorithm", ["eagle3", "mtp"])
@pytest.mark.parametrize("engine", list(Engine))
def test_a_target_without_architectures_is_refused_naming_the_field(
    architectures: object, algorithm: str, engine: Engine
) -> None:
    target = model_facts({**CONFIG, "architectures": architectures}, None)
    (finding,) = draft_fit(engine, algorithm, target, None)
    assert finding.key == "model" and finding.error
    assert finding.message.startswith("its config.json has no architectures (empty or null)")
    assert "is not one" not in finding.message
