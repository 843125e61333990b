"""Reading stack files and `--set` values: as the Pulumi CLI does, and never a traceback."""

from __future__ import annotations

import contextlib
import io
import json
import string
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st
from program_runs import IMAGE, REPO

from mlcc.cli import main
from mlcc.stackfiles import resolve as stackfiles

PROJECT = stackfiles.load_project(REPO)


def stack_dir(tmp_path: Path, text: str | bytes, stack: str = "s") -> Path:
    path = tmp_path / f"Pulumi.{stack}.yaml"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return tmp_path


def resolved(text: str, *sets: str, tmp_path: Path) -> dict[str, str]:
    config = stackfiles.load_stack(stack_dir(tmp_path, text), "s")
    overrides = stackfiles.parse_overrides(sets)
    return stackfiles.resolve(PROJECT, config, stack="s", overrides=overrides).values


MODEL = "config:\n  hp:model: org/model\n"


# --- files ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("config:\n\thp:model: org/model\n", "line 2, column 1: "),
        ("config:\n  hp:model: [org/model\n", "line 3, column 1: "),
        ("- config\n- hp:model\n", "must be a map with a 'config:' section, not a list"),
        ("just a string\n", "must be a map with a 'config:' section, not a single value"),
        ("config: [1, 2]\n", "'config' must be a map of keys to values"),
        ("config:\n  hp:model: a\n  hp:model: b\n", "line 3: key 'hp:model' appears twice"),
        ("config:\n  [a]: b\n", "line 2: a key must be a plain name"),
        ("config: {}\n---\nconfig: {}\n", "single document in the stream, but found another"),
    ],
)
def test_a_broken_stack_file_is_one_line_naming_the_file(
    tmp_path: Path, text: str, message: str
) -> None:
    with pytest.raises(stackfiles.StackFileError) as raised:
        stackfiles.load_stack(stack_dir(tmp_path, text), "s")
    assert str(raised.value).startswith("Pulumi.s.yaml: ")
    assert message in str(raised.value)
    assert "\n" not in str(raised.value)


def test_tabs_get_a_hint(tmp_path: Path) -> None:
    with pytest.raises(stackfiles.StackFileError, match="indent with spaces, YAML does not allow"):
        stackfiles.load_stack(stack_dir(tmp_path, "config:\n\thp:model: org/model\n"), "s")


def test_an_alias_bomb_is_refused_quickly(tmp_path: Path) -> None:
    lines = ["config:", "  hp:tags:", "    a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"    a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    with pytest.raises(stackfiles.StackFileError, match="aliases expand to more than"):
        stackfiles.load_stack(stack_dir(tmp_path, "\n".join(lines) + "\n"), "s")


def test_modest_aliases_are_fine(tmp_path: Path) -> None:
    text = MODEL + "  hp:tags: &t {team: a}\n  hp:engineArgs: {seed: 1}\n"
    assert json.loads(resolved(text, tmp_path=tmp_path)["hp:tags"]) == {"team": "a"}


@pytest.mark.parametrize("depth", [40, 5000])
def test_deep_nesting_is_refused(tmp_path: Path, depth: int) -> None:
    text = MODEL + "  hp:tags: " + "[" * depth + "]" * depth + "\n"
    with pytest.raises(stackfiles.StackFileError, match="nested too deeply"):
        stackfiles.load_stack(stack_dir(tmp_path, text), "s")


def test_a_file_that_is_not_utf8_is_a_file_error(tmp_path: Path) -> None:
    with pytest.raises(
        stackfiles.StackFileError,
        match=r"Pulumi.s.yaml: is not UTF-8 text \(byte 0xff at offset 20\)",
    ):
        stackfiles.load_stack(stack_dir(tmp_path, b"config:\n  hp:model: \xff\xfe\n"), "s")


# --- values ---------------------------------------------------------------------------------


def test_top_level_values_keep_their_text_as_the_cli_does(tmp_path: Path) -> None:
    values = resolved(MODEL + "  hp:kubernetesVersion: 1.30\n", tmp_path=tmp_path)
    assert values["hp:kubernetesVersion"] == "1.30"
    with pytest.raises(stackfiles.StackConfigError, match=r"'integer' .*, got '0x10'"):
        resolved(MODEL + "  hp:replicas: 0x10\n", tmp_path=tmp_path)


def test_structured_values_use_yaml_1_2_scalars(tmp_path: Path) -> None:
    text = MODEL + "  hp:engineArgs: {a: yes, b: 'true', c: true, d: 010, e: 1.50, f: ~}\n"
    args = json.loads(resolved(text, tmp_path=tmp_path)["hp:engineArgs"])
    assert args == {"a": "yes", "b": "true", "c": True, "d": 10, "e": 1.5, "f": None}


@pytest.mark.parametrize(
    ("line", "key", "message"),
    [
        ("  hp:replicas:\n", "hp:replicas", "has no value; give it one or remove the line"),
        ("  hp:replicas: " + "9" * 30 + "\n", "hp:replicas", "must be of type 'integer'"),
        ("  hp:engineArgs: {seed: " + "9" * 30 + "}\n", "hp:engineArgs.seed", "out of range"),
        ("  hp:engineArgs: {seed: " + "9" * 5000 + "}\n", "hp:engineArgs.seed", "too large"),
        ("  hp:engineArgs: {seed: 1e999}\n", "hp:engineArgs.seed", "not a finite number"),
        ("  hp:engineArgs: {seed: .nan}\n", "hp:engineArgs.seed", "not a finite number"),
    ],
)
def test_a_bad_value_is_a_config_problem_naming_its_path(
    tmp_path: Path, line: str, key: str, message: str
) -> None:
    with pytest.raises(stackfiles.StackConfigError) as raised:
        resolved(MODEL + line, tmp_path=tmp_path)
    (problem,) = raised.value.problems
    assert problem.key == key
    assert message in problem.message
    assert len(str(problem)) < 200


def test_a_secure_value_inside_a_map_is_redacted_and_marks_the_key_secret(
    tmp_path: Path,
) -> None:
    text = MODEL + "  hp:tags:\n    owner: {secure: v1:abc}\n    team: a\n"
    config = stackfiles.load_stack(stack_dir(tmp_path, text), "s")
    result = stackfiles.resolve(PROJECT, config, stack="s")
    assert json.loads(result.values["hp:tags"]) == {"owner": "[secret]", "team": "a"}
    assert "hp:tags" in result.secret_keys


# --- --set ----------------------------------------------------------------------------------


def test_paths_edit_the_structured_value_and_create_what_is_missing(tmp_path: Path) -> None:
    values = resolved(
        MODEL + "  hp:tags: {team: a}\n",
        "hp:tags.owner=alice",
        'hp:tags["cost.center"]=42',
        'hp:tags.["x.y"]=z',
        "hp:instanceGroups[0].name=gpu",
        "hp:instanceGroups[0].instanceCount=2",
        "hp:instanceGroups[0].deepHealthChecks[0]=InstanceStress",
        "engineArgs.enforce-eager=true",
        tmp_path=tmp_path,
    )
    assert json.loads(values["hp:tags"]) == {
        "team": "a",
        "owner": "alice",
        "cost.center": 42,
        "x.y": "z",
    }
    assert json.loads(values["hp:instanceGroups"]) == [
        {"name": "gpu", "instanceCount": 2, "deepHealthChecks": ["InstanceStress"]}
    ]
    assert json.loads(values["hp:engineArgs"]) == {"enforce-eager": True}


def test_a_whole_key_value_stays_a_string_unless_it_is_a_map_or_list(tmp_path: Path) -> None:
    values = resolved(
        MODEL, "hp:engineVersion=0.5.10", "hp:engineArgs=[1, {a: b}]", tmp_path=tmp_path
    )
    assert values["hp:engineVersion"] == "0.5.10"
    assert values["hp:engineArgs"] == '[1,{"a":"b"}]'


def test_an_empty_value_removes_a_key_or_an_entry(tmp_path: Path) -> None:
    text = MODEL + "  hp:tags: {team: a, owner: b}\n  hp:replicas: 3\n"
    values = resolved(text, "hp:tags.owner=", "replicas=", tmp_path=tmp_path)
    assert json.loads(values["hp:tags"]) == {"team": "a"}
    assert values["hp:replicas"] == "1"  # the project default again


def test_later_sets_apply_after_earlier_ones(tmp_path: Path) -> None:
    values = resolved(
        MODEL,
        "hp:tags.a=1",
        "hp:tags={b: 2}",
        "hp:tags.c=3",
        "hp:instanceGroups[0]={name: x}",
        "hp:instanceGroups[1]={name: y}",
        "hp:instanceGroups[0].name=z",
        tmp_path=tmp_path,
    )
    assert json.loads(values["hp:tags"]) == {"b": 2, "c": 3}
    assert [g["name"] for g in json.loads(values["hp:instanceGroups"])] == ["z", "y"]


@pytest.mark.parametrize(
    ("assignment", "message"),
    [
        ("hp:instanceGroups[1].name=x", "index 1 is past the end of a list of 0 (use [0]"),
        ("hp:tags[0]=x", "[0] needs a list there, found a map"),
        ("hp:model.x=1", "hp:model holds 'org/model', not a map or list"),
        ("hp:hfToken.x=1", "is a secret that cannot be decrypted offline"),
        ("hp:tags.a.b[", "--set expects KEY=VALUE"),
        ("hp:tags..a=1", "not a config path"),
        ("hp:tags={a: [}", "write it as JSON"),
        (
            "hp:tags=[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
            "nested too deeply",
        ),
        ("=1", "--set expects KEY=VALUE"),
    ],
)
def test_a_malformed_set_is_one_line_saying_what_to_change(
    tmp_path: Path, assignment: str, message: str
) -> None:
    text = MODEL + "  hp:hfToken: {secure: v1:abc}\n"
    with pytest.raises(stackfiles.OverrideError) as raised:
        resolved(text, assignment, tmp_path=tmp_path)
    assert message in str(raised.value)
    assert "\n" not in str(raised.value)


# --- fuzz: any text, never a traceback ------------------------------------------------------

KEYS = [key.removeprefix("hp:") for key in ("hp:model", "hp:tags", "hp:engineArgs")]
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
)
structures = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=8,
)
config_keys = st.sampled_from(
    ["hp:model", "hp:tags", "hp:engineArgs", "hp:replicas", "hp:instanceGroups", "aws:region"]
) | st.text(max_size=10)
yaml_documents = st.dictionaries(config_keys, structures, max_size=4).map(
    lambda config: yaml.safe_dump({"config": config}, allow_unicode=True)
)
noise = st.sampled_from(
    ["\t", "&a ", "*a", "[", "{", "}", ": ", "- ", "\n", "!!", "'", "#", "<<: *a\n", "<<: [*a]"]
)
mutated_documents = st.tuples(yaml_documents, st.integers(0, 400), noise).map(
    lambda t: t[0][: t[1]] + t[2] + t[0][t[1] :]
)
stack_texts = st.one_of(st.text(max_size=200), yaml_documents, mutated_documents)
DEV_TEXT = (REPO / "Pulumi.dev.yaml").read_text(encoding="utf-8")
# The dev stack, whole or with noise: most of these reach the program itself.
dev_texts = st.just(DEV_TEXT) | st.tuples(st.integers(0, len(DEV_TEXT)), noise).map(
    lambda t: DEV_TEXT[: t[0]] + t[1] + DEV_TEXT[t[0] :]
)
set_keys = st.one_of(
    st.sampled_from(
        ["hp:tags.owner", "hp:instanceGroups[0].instanceCount", "hp:engineArgs", "tags[1]"]
    ),
    st.text(alphabet=string.printable, max_size=20),
)
set_values = st.one_of(
    st.text(max_size=30), st.sampled_from(["{a: 1}", "[1, 2", "{", "true", "1" * 40, "[]"])
)
assignments = st.lists(
    st.tuples(set_keys, set_values).map(lambda kv: f"{kv[0]}={kv[1]}") | st.text(max_size=20),
    max_size=3,
)
plausible_sets = st.lists(
    st.sampled_from(
        [
            "hp:tags.owner=alice",
            "hp:engineArgs.seed=3",
            "hp:replicas=2",
            "hp:speculativeAlgorithm=ngram",
            "hp:speculativeNumTokens=3",
            "hp:instanceGroups[0].instanceCount=0",
            "hp:engineArgs={max-model-len: 4096}",
        ]
    ),
    max_size=3,
)
EXPECTED = (stackfiles.StackFileError, stackfiles.StackConfigError, stackfiles.OverrideError)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=stack_texts, sets=assignments)
# A map key holding line breaks, under a value out of range: the error names the key escaped.
@example(text="config:\n 0:\n    ? '\n\n'\n    : 9223372036854775808", sets=[])
def test_any_stack_text_and_sets_give_values_or_one_line_errors(
    tmp_path_factory: pytest.TempPathFactory, text: str, sets: list[str]
) -> None:
    folder = tmp_path_factory.mktemp("fuzz")
    try:
        config = stackfiles.load_stack(stack_dir(folder, text), "s")
        overrides = stackfiles.parse_overrides(sets)
        result = stackfiles.resolve(PROJECT, config, stack="s", overrides=overrides)
    except stackfiles.StackConfigError as error:
        assert error.problems and all("\n" not in str(p) for p in error.problems)
    except EXPECTED as error:
        assert str(error) and "\n" not in str(error)
    else:
        assert all(isinstance(v, str) for v in result.values.values())


@pytest.fixture(scope="module")
def fuzz_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("project")
    for entry in REPO.iterdir():
        if not entry.name.startswith("Pulumi.") or entry.name == "Pulumi.yaml":
            (project / entry.name).symlink_to(entry)
    return project


CLEAR_LINE = ("error: ", "warning: ", "mlcc plan: error: ", "usage: ", "  ")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=stack_texts | dev_texts, sets=plausible_sets | assignments)
def test_mlcc_plan_exits_0_1_or_2_with_clear_lines(
    fuzz_project: Path, text: str, sets: list[str], monkeypatch_module: Any
) -> None:
    (fuzz_project / "Pulumi.fuzz.yaml").write_text(text, encoding="utf-8")
    argv = [
        "plan",
        "--stack",
        "fuzz",
        "--out",
        str(fuzz_project / "out"),
        f"--set=hp:image={IMAGE}",
    ]
    argv += [f"--set={assignment}" for assignment in sets]
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        try:
            code = main(argv)
        except SystemExit as exit_:  # argparse's own usage errors
            code = int(exit_.code or 0)
    err = stderr.getvalue()
    event(f"exit {code}")
    assert code in {0, 1, 2}, err
    assert "Traceback" not in err + stdout.getvalue()
    assert "the program failed" not in err, err  # a crash the config checks should have caught
    for line in err.splitlines():
        assert line.startswith(CLEAR_LINE) or "configuration error(s)" in line, line


@pytest.fixture(scope="module")
def monkeypatch_module(fuzz_project: Path) -> Any:
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(fuzz_project)
        yield patch
