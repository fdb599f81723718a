"""Port of langsmith-sdk python/tests/unit_tests/test_client.py, in our words.

Upstream, a ``Client`` talks to a mocked HTTP session and each test reads the bodies it
posted; here the client is assay's real ``Client`` on a temporary store, and each test
reads back what was stored. Most upstream tests are about LangSmith's server: URLs, API
keys and workspaces, retries and status codes, batching, compression, sampling, queues,
OpenTelemetry modes, the prompt hub; TALLY.md lists them as not applicable, with why.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import inspect
import itertools
import json
import pathlib
import re
import uuid
from datetime import date, datetime, timezone
from enum import Enum
from io import BytesIO
from pathlib import Path
from typing import Any, NamedTuple
from unittest.mock import MagicMock

import pytest
from pydantic import BaseModel, field_serializer

from assay import Client, aevaluate, evaluate
from assay import schemas as ls_schemas
from assay.errors import AttachmentError
from assay.evaluation import EvaluationResult
from assay.evaluation.evaluator import RunEvaluator
from assay.evaluation.types import EvaluateOptions
from assay.schemas import Run

_CREATED_AT = datetime(2015, 1, 1, 0, 0, 0, tzinfo=timezone.utc)
_SECRET = "[SECRET_DETECTED]"


@pytest.fixture
def client(tmp_path: Path) -> Client:
    return Client(str(tmp_path / "store.db"))


def _secret_anonymizer(value: Any) -> Any:
    """LangSmith's ``create_secret_anonymizer`` for these tests: API-key shapes replaced
    wherever they are in a JSON value (assay takes any ``Callable[[dict], dict]``)."""
    if isinstance(value, dict):
        return {k: _secret_anonymizer(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_secret_anonymizer(v) for v in value]
    if isinstance(value, str):
        return re.sub(r"sk-ant-api03-[A-Za-z0-9_-]{20,}", _SECRET, value)
    return value


def _error_traceback_with_secret() -> tuple[str, str]:
    fake_key = "sk-ant-api03-" + "A" * 30
    traceback_str = (
        "Traceback (most recent call last):\n"
        '  ClientResponseError: 401, request_info=headers={"Authorization": '
        f'"Bearer {fake_key}"}}'
    )
    return fake_key, traceback_str


def test_upload_csv(client: Client) -> None:
    csv_file = ("test.csv", BytesIO(b"input,output\n1,2\n3,4\n"))
    dataset = client.upload_csv(
        csv_file, description="Test dataset", input_keys=["input"], output_keys=["output"]
    )
    assert dataset.name == "test.csv"
    assert dataset.description == "Test dataset"
    examples = client.list_examples(dataset_id=dataset.id)
    assert [(e.inputs, e.outputs) for e in examples] == [
        ({"input": "1"}, {"output": "2"}),
        ({"input": "3"}, {"output": "4"}),
    ]


def test_async_methods() -> None:
    sync_methods = [
        m
        for m in dir(Client)
        if not m.startswith("_")
        and callable(getattr(Client, m))
        and not asyncio.iscoroutinefunction(getattr(Client, m))
    ]
    async_methods = [
        m for m in dir(Client) if not m.startswith("_") and asyncio.iscoroutinefunction(getattr(Client, m))
    ]
    assert async_methods  # aevaluate at least
    for async_method in async_methods:
        sync_method = async_method[1:]
        assert sync_method in sync_methods
        sync_args = set(inspect.signature(getattr(Client, sync_method)).parameters)
        async_args = set(inspect.signature(getattr(Client, async_method)).parameters)
        assert not sync_args - async_args, f"extra args for {async_method}: {sync_args - async_args}"


def test_create_run_unicode(client: Client) -> None:
    inputs = {
        "foo": "これは私の友達です",
        "bar": "این یک کتاب است",
        "baz": "😊🌺🎉💻🚀🌈🍕🏄‍♂️🎁🐶🌟🏖️👍🚲🎈",
        "qux": "나는\u3000밥을\u3000먹었습니다.",
        "는\u3000밥": "나는\u3000밥을\u3000먹었습니다.",
    }
    id_ = uuid.uuid4()
    client.create_run("my_run", inputs=inputs, run_type="llm", id=id_)
    client.update_run(id_, status="completed")
    assert client.read_run(id_).inputs == inputs


def test_create_run_mutate(client: Client) -> None:
    inputs: dict[str, Any] = {"messages": ["hi"], "mygen": (i for i in range(10))}
    id_ = uuid.uuid4()
    dotted_order = f"{datetime.now(timezone.utc):%Y%m%dT%H%M%S%fZ}{id_}"
    client.create_run(
        id=id_, name="my_run", inputs=inputs, run_type="llm", trace_id=id_, dotted_order=dotted_order
    )
    inputs["messages"].append("there")
    outputs = {"messages": ["hi", "there"]}
    client.update_run(
        id_, outputs=outputs, end_time=datetime.now(timezone.utc), trace_id=id_, dotted_order=dotted_order
    )
    run = client.read_run(id_)
    assert run.inputs["messages"] == ["hi"]  # the mutation after the post is not stored
    assert run.inputs["mygen"].startswith("<generator object test_create_run_mutate.<locals>.")
    assert run.outputs == outputs
    assert run.trace_id == id_


@pytest.mark.parametrize("auto_batch_tracing", [True, False])
def test_create_run_with_filters(tmp_path: Path, auto_batch_tracing: bool) -> None:
    def filter_inputs(inputs: dict[str, Any]) -> dict[str, Any]:
        return {"hi there": "woah"}

    def filter_outputs(outputs: dict[str, Any]) -> dict[str, Any]:
        return {k: v + "goodbye" for k, v in outputs.items()}

    with pytest.warns(UserWarning, match="auto_batch_tracing"):
        client = Client(
            str(tmp_path / "s.db"),
            auto_batch_tracing=auto_batch_tracing,
            hide_inputs=filter_inputs,
            hide_outputs=filter_outputs,
        )
    expected = []
    for _ in range(3):
        id_ = uuid.uuid4()
        client.create_run("my_run", inputs={"foo": "bar"}, run_type="llm", id=id_)
        output_val = uuid.uuid4().hex[:5]
        client.update_run(id_, end_time=datetime.now(), outputs={"theoutput": output_val})
        expected.append(output_val + "goodbye")
    runs = list(client.list_runs(project_name="default"))
    assert [r.inputs for r in runs] == [{"hi there": "woah"}] * 3
    assert sorted(r.outputs["theoutput"] for r in runs if r.outputs) == sorted(expected)


@pytest.mark.parametrize(
    "hide_metadata_config, expected_metadata_key_present",
    [
        (True, False),
        (False, True),
        (None, True),
        (lambda metadata: {**metadata, "modified": True}, True),
    ],
)
def test_hide_metadata(
    tmp_path: Path, hide_metadata_config: Any, expected_metadata_key_present: bool
) -> None:
    client = Client(str(tmp_path / "s.db"), hide_metadata=hide_metadata_config)
    initial_metadata = {"initial_key": "initial_value"}
    run_id = uuid.uuid4()
    client.create_run(
        "my_run_metadata_test",
        inputs={"in": "put"},
        run_type="llm",
        id=run_id,
        extra={"metadata": initial_metadata},
    )
    metadata = client.read_run(run_id).metadata
    if expected_metadata_key_present:
        if callable(hide_metadata_config):
            assert metadata.get("modified") is True
        assert metadata["initial_key"] == "initial_value"
    else:
        assert all(k not in metadata for k in initial_metadata)


def test_anonymizer_redacts_error_field_on_create(tmp_path: Path) -> None:
    fake_key, traceback_str = _error_traceback_with_secret()
    client = Client(str(tmp_path / "s.db"), anonymizer=_secret_anonymizer)
    run_id = uuid.uuid4()
    client.create_run("errored_run", inputs={"in": "put"}, run_type="llm", id=run_id, error=traceback_str)
    error = client.read_run(run_id).error or ""
    assert fake_key not in error and _SECRET in error


def test_anonymizer_redacts_error_field_on_update(tmp_path: Path) -> None:
    fake_key, traceback_str = _error_traceback_with_secret()
    client = Client(str(tmp_path / "s.db"), anonymizer=_secret_anonymizer)
    run_id = uuid.uuid4()
    client.create_run("r", inputs={"in": "put"}, run_type="llm", id=run_id)
    client.update_run(run_id, error=traceback_str)
    error = client.read_run(run_id).error or ""
    assert fake_key not in error and _SECRET in error


def test_hide_run_error_passthrough_without_anonymizer(client: Client) -> None:
    _, traceback_str = _error_traceback_with_secret()
    run_id = uuid.uuid4()
    client.create_run("r", inputs={}, run_type="llm", id=run_id, error=traceback_str)
    assert client.read_run(run_id).error == traceback_str


def test_hide_metadata_callable_applied_once_per_key(tmp_path: Path) -> None:
    """Upstream's version also adds LangSmith's runtime-environment metadata; assay adds
    none, so this is the user's metadata alone, through create and update."""
    client = Client(
        str(tmp_path / "s.db"), hide_metadata=lambda metadata: {f"masked_{k}": v for k, v in metadata.items()}
    )
    run_id = uuid.uuid4()
    client.create_run("r", inputs={}, run_type="llm", id=run_id, extra={"metadata": {"initial_key": "v"}})
    client.update_run(run_id, extra={"metadata": {"later": "w"}})
    assert client.read_run(run_id).metadata == {"masked_initial_key": "v", "masked_later": "w"}


def test_anonymizer_redacts_metadata_on_create(tmp_path: Path) -> None:
    fake_key, _ = _error_traceback_with_secret()
    client = Client(str(tmp_path / "s.db"), anonymizer=_secret_anonymizer)
    run_id = uuid.uuid4()
    client.create_run(
        "my_run",
        inputs={"in": "put"},
        run_type="llm",
        id=run_id,
        extra={"metadata": {"config": {"authorization": f"Bearer {fake_key}"}}},
    )
    metadata = json.dumps(client.read_run(run_id).metadata)
    assert fake_key not in metadata and _SECRET in metadata


def test_anonymizer_redacts_metadata_on_update(tmp_path: Path) -> None:
    fake_key, _ = _error_traceback_with_secret()
    client = Client(str(tmp_path / "s.db"), anonymizer=_secret_anonymizer)
    run_id = uuid.uuid4()
    client.create_run("my_run", inputs={"in": "put"}, run_type="llm", id=run_id)
    client.update_run(run_id, extra={"metadata": {"config": {"authorization": f"Bearer {fake_key}"}}})
    metadata = json.dumps(client.read_run(run_id).metadata)
    assert fake_key not in metadata and _SECRET in metadata


@pytest.mark.parametrize("source_type", ["api", "model"])
def test_create_feedback_string_source_type(client: Client, source_type: str) -> None:
    id_ = uuid.uuid4()
    client.create_run("r", inputs={}, run_type="chain", id=id_)
    feedback = client.create_feedback(id_, key="Foo", feedback_source_type=source_type)
    assert client.read_feedback(feedback.id).feedback_source == {"type": source_type, "metadata": {}}


class _ChildPydantic(BaseModel):
    uid: uuid.UUID
    child_path_keys: dict[pathlib.Path, pathlib.Path]


class _MyPydantic(BaseModel):
    foo: str
    uid: uuid.UUID
    tim: datetime
    ex: str | None = None
    child: _ChildPydantic | None = None
    path_keys: dict[pathlib.Path, pathlib.Path]


def test_pydantic_serialize(client: Client) -> None:
    """Upstream serializes with the client's private JSON default; here the values go
    through ``create_run`` and are read back."""
    test_uuid = uuid.uuid4()
    test_time = datetime.now()
    obj = _MyPydantic(
        foo="bar",
        uid=test_uuid,
        tim=test_time,
        child=_ChildPydantic(uid=test_uuid, child_path_keys={pathlib.Path("foo"): pathlib.Path("bar")}),
        path_keys={pathlib.Path("foo"): pathlib.Path("bar")},
    )
    expected = {
        "foo": "bar",
        "uid": str(test_uuid),
        "tim": test_time.isoformat(),
        "child": {"uid": str(test_uuid), "child_path_keys": {"foo": "bar"}},
        "path_keys": {"foo": "bar"},
    }
    run_id = uuid.uuid4()
    client.create_run("r", inputs={"output": obj}, run_type="chain", id=run_id)
    assert client.read_run(run_id).inputs == {"output": expected}


def test_serialize_json(client: Client) -> None:
    class MyClass:
        def __init__(self, x: int) -> None:
            self.x = x
            self.y = "y"

        def __repr__(self) -> str:
            return "I fell back"

        def __hash__(self) -> int:
            return 1

    class ClassWithTee:
        def __init__(self) -> None:
            self.tee_a, self.tee_b = itertools.tee(range(10))

        def __repr__(self) -> str:
            return "tee_a, tee_b"

    class MyPydantic(BaseModel):
        foo: str
        bar: int
        path_keys: dict[pathlib.Path, MyPydantic]

    @dataclasses.dataclass
    class MyDataclass:
        foo: str
        bar: int

    class MyEnum(str, Enum):
        FOO = "foo"
        BAR = "bar"

    class ClassWithFakeDict:
        def dict(self) -> dict[str, Any]:
            raise ValueError("This should not be called")

        def to_dict(self) -> dict[str, Any]:
            return {"foo": "bar"}

    class MyNamedTuple(NamedTuple):
        foo: str
        bar: int

    uid = uuid.uuid4()
    current_time = datetime.now()
    to_serialize = {
        "uid": uid,
        "time": current_time,
        "my_class": MyClass(1),
        "class_with_tee": ClassWithTee(),
        "my_dataclass": MyDataclass("foo", 1),
        "my_enum": MyEnum.FOO,
        "my_pydantic": MyPydantic(
            foo="foo", bar=1, path_keys={pathlib.Path("foo"): MyPydantic(foo="foo", bar=1, path_keys={})}
        ),
        "my_pydantic_class": MyPydantic,
        "a_bool": True,
        "a_none": None,
        "a_str": "foo",
        "an_int": 1,
        "a_float": 1.1,
        "named_tuple": MyNamedTuple(foo="foo", bar=1),
        "fake_json": ClassWithFakeDict(),
        "some_set": set("a"),
        "set_with_class": {MyClass(1)},
        "my_mock": MagicMock(text="Hello, world"),
    }
    run_id = uuid.uuid4()
    client.create_run("r", inputs=to_serialize, run_type="chain", id=run_id)
    res = client.read_run(run_id).inputs
    expected: dict[str, Any] = {
        "uid": str(uid),
        "time": current_time.isoformat(),
        "my_class": "I fell back",
        "class_with_tee": "tee_a, tee_b",
        "my_dataclass": {"foo": "foo", "bar": 1},
        "my_enum": "foo",
        "my_pydantic": {
            "foo": "foo",
            "bar": 1,
            "path_keys": {"foo": {"foo": "foo", "bar": 1, "path_keys": {}}},
        },
        "my_pydantic_class": lambda x: "MyPydantic" in x,
        "a_bool": True,
        "a_none": None,
        "a_str": "foo",
        "an_int": 1,
        "a_float": 1.1,
        "named_tuple": {"bar": 1, "foo": "foo"},
        "fake_json": {"foo": "bar"},
        "some_set": ["a"],
        "set_with_class": ["I fell back"],
        "my_mock": lambda x: "Mock" in x,
    }
    assert set(expected) == set(res)
    for key, want in expected.items():
        if callable(want):
            assert want(res[key]), key
        else:
            assert res[key] == want, key

    @dataclasses.dataclass
    class CyclicClass:
        other: CyclicClass | None

        def __repr__(self) -> str:
            return "my_cycles..."

    my_cyclic = CyclicClass(other=CyclicClass(other=None))
    my_cyclic.other.other = my_cyclic  # type: ignore[union-attr]
    cyclic_id = uuid.uuid4()
    client.create_run("r", inputs={"cyclic": my_cyclic}, run_type="chain", id=cyclic_id)
    assert client.read_run(cyclic_id).inputs == {"cyclic": "my_cycles..."}


def _stored(client: Client, value: Any) -> Any:
    """``value`` as ``create_run`` stores it (upstream calls the private ``_dumps_json``)."""
    run_id = uuid.uuid4()
    client.create_run("r", inputs={"v": value}, run_type="chain", id=run_id)
    return client.read_run(run_id).inputs["v"]


def test__dumps_json(client: Client) -> None:
    """Documented difference: LangSmith drops lone surrogates (``\\ud800``...) from a
    string; assay's store keeps every code point (a high surrogate followed by a low one
    reads back as the one character the pair encodes, as UTF-16 reads them)."""
    chars = "".join(chr(cp) for cp in range(0, 0x10FFFF + 1))
    as_utf16_reads_it = chars.encode("utf-16", "surrogatepass").decode("utf-16", "surrogatepass")
    assert _stored(client, chars) == as_utf16_reads_it
    assert "\ud800" in _stored(client, "a\ud800b")


def test__dumps_json_normalizes_unsupported_dict_keys(client: Client) -> None:
    class TupleKeyedDict:
        def to_dict(self) -> dict[Any, Any]:
            return {(1, 2): "custom"}

    value = {
        (1, 2): "value",
        pathlib.Path("path-key"): "path",
        frozenset({1}): "frozen",
        "nested": [{("a", "b"): pathlib.Path("c")}],
        "custom": TupleKeyedDict(),
    }
    assert _stored(client, value) == {
        "(1, 2)": "value",
        "path-key": "path",
        "[1]": "frozen",
        "nested": [{"('a', 'b')": "c"}],
        "custom": {"(1, 2)": "custom"},
    }


def test__dumps_json_coerces_json_native_dict_keys(client: Client) -> None:
    value = {1: "int", 2.5: "float", None: "none", date(2020, 1, 2): "date"}
    assert _stored(client, value) == {"1": "int", "2.5": "float", "null": "none", "2020-01-02": "date"}
    assert _stored(client, {True: "bool"}) == {"true": "bool"}


def test__dumps_json_coerces_enum_dict_keys_by_value(client: Client) -> None:
    class StrValued(Enum):
        FOO = "foo"

    class IntValued(Enum):
        BAR = 3

    class BytesValued(Enum):
        BAZ = b"x"

    assert _stored(client, {StrValued.FOO: 1}) == {"foo": 1}
    assert _stored(client, {IntValued.BAR: 1}) == {"3": 1}
    assert _stored(client, {BytesValued.BAZ: 1}) == {"BytesValued.BAZ": 1}


def test__dumps_json_honors_json_only_field_serializer(client: Client) -> None:
    class Redacted(BaseModel):
        token: str

        @field_serializer("token", when_used="json")
        def _redact(self, _value: str) -> str:
            return "REDACTED"

    class Holder(BaseModel):
        payload: Any = None

    secret = Redacted(token="actual-secret")
    for obj in (secret, Holder(payload=secret), {"k": secret}, [secret]):
        assert "actual-secret" not in json.dumps(_stored(client, obj))


def test__dumps_json_honors_model_dump_override(client: Client) -> None:
    class Overridden(BaseModel):
        value: str

        def model_dump(self, **kwargs: Any) -> dict[str, Any]:  # type: ignore[override]
            return {"overridden": True}

    assert _stored(client, Overridden(value="x")) == {"overridden": True}


def test__dumps_json_does_not_swallow_keyboard_interrupt(client: Client) -> None:
    class _RaisesInterrupt:
        def model_dump(self, **kwargs: Any) -> dict[str, Any]:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        client.create_run("r", inputs={"x": _RaisesInterrupt()}, run_type="chain")
    assert list(client.list_runs(project_name="default")) == []


def test__dumps_json_type_object_serializes_as_str(client: Client) -> None:
    class Meta(type):
        def to_dict(cls) -> dict[str, Any]:
            return {"meta": "yes"}

    class WithClassLevelToDict(metaclass=Meta):
        pass

    assert isinstance(_stored(client, {"cls": WithClassLevelToDict})["cls"], str)


def test_select_eval_results(client: Client) -> None:
    """Upstream calls the client's private ``_select_eval_results``; here each return
    form comes from an evaluator given to ``evaluate_run``."""
    expected = EvaluationResult(key="foo", value="bar", score=7899082, metadata={"a": "b"}, comment="hi")
    run_id = uuid.uuid4()
    client.create_run("r", inputs={}, run_type="chain", id=run_id)
    run = client.read_run(run_id)
    for count, returned in [
        (1, expected),
        (1, expected.model_dump()),
        (1, {"results": [expected]}),
        (1, {"results": [expected.model_dump()]}),
        (2, {"results": [expected.model_dump(), expected.model_dump()]}),
        (2, {"results": [expected, expected]}),
    ]:
        got = client.evaluate_run(run, lambda run, example, r=returned: r)
        got = got.results if hasattr(got, "results") else [got]
        assert len(got) == count
        assert [(g.key, g.score, g.value, g.comment) for g in got] == [("foo", 7899082, "bar", "hi")] * count


@pytest.mark.parametrize("target", ["evaluate", "aevaluate"])
def test_evaluate_methods(target: str) -> None:
    """``Client.evaluate`` / ``aevaluate`` take ``evaluate``'s keywords (assay declares
    them once, as a typed ``**options``)."""
    function = evaluate if target == "evaluate" else aevaluate
    eval_args = set(inspect.signature(function).parameters) - {"client", "target"}
    client_params = inspect.signature(getattr(Client, target)).parameters
    assert set(client_params) == {"self", "target", "options"}
    assert set(EvaluateOptions.__annotations__) == eval_args


@pytest.mark.parametrize(
    "kwargs, expected",
    [
        ({}, {}),
        ({"upsert": True}, {}),
        (
            {"description": "Test description", "metadata": {"key": "value"}},
            {"description": "Test description", "metadata": {"key": "value"}},
        ),
        (
            {"project_extra": {"custom": "data"}, "metadata": {"key": "value"}},
            {"metadata": {"key": "value", "project_extra": {"custom": "data"}}},
        ),
        ({"reference_dataset_id": "DATASET"}, {"reference_dataset_id": "DATASET"}),
        ({"tag_value_ids": ["550e8400-e29b-41d4-a716-446655440000"]}, {}),
        (
            {
                "description": "Full test",
                "metadata": {"key": "value"},
                "upsert": True,
                "project_extra": {"custom": "data"},
                "reference_dataset_id": "DATASET",
            },
            {
                "description": "Full test",
                "metadata": {"key": "value", "project_extra": {"custom": "data"}},
                "reference_dataset_id": "DATASET",
            },
        ),
    ],
)
def test_create_project(client: Client, kwargs: dict[str, Any], expected: dict[str, Any]) -> None:
    dataset = client.create_dataset("d")
    kwargs = {k: dataset.id if v == "DATASET" else v for k, v in kwargs.items()}
    created = client.create_project("test-project", **kwargs)
    project = client.read_project(project_name="test-project")
    assert project.id == created.id and project.name == "test-project"
    assert project.description == expected.get("description")
    assert project.extra == {"metadata": expected.get("metadata", {})}
    assert project.reference_dataset_id == (dataset.id if "reference_dataset_id" in expected else None)
    if kwargs.get("upsert"):
        assert client.create_project("test-project", **kwargs).id == created.id


def test_create_dataset_with_tag_value_ids(client: Client) -> None:
    tag_value_ids = [uuid.uuid4(), uuid.uuid4()]
    client.create_dataset("test-dataset", tag_value_ids=tag_value_ids)
    stored = client.read_dataset(dataset_name="test-dataset")
    assert stored.metadata == {"tag_value_ids": [str(t) for t in tag_value_ids]}


def test_client_repr_hides_sensitive_info(tmp_path: Path) -> None:
    with pytest.warns(UserWarning, match="api_key"):
        client = Client(
            str(tmp_path / "s.db"),
            api_url="https://api.smith.langchain.com",
            api_key="super-secret-api-key-12345",
        )
    text = repr(client)
    assert "super-secret-api-key-12345" not in text
    assert text == f"Client (store: {client.store.url})"


def test_client_close_releases_session_and_unregisters_atexit(tmp_path: Path) -> None:
    """No session nor atexit handler here: close() closes the store, and again is fine."""
    client = Client(str(tmp_path / "s.db"))
    client.create_dataset("d")
    client.close()
    client.close()
    reopened = Client(str(tmp_path / "s.db"))
    assert reopened.has_dataset(dataset_name="d")


def test_client_close_idempotent_no_error(client: Client) -> None:
    client.close()
    client.close()


@pytest.mark.parametrize(
    "attachment, expected",
    [
        (("text/plain", b"inline"), False),
        (["text/plain", b"inline"], False),
        (("text/plain", "/etc/passwd"), True),
        (["text/plain", "/etc/passwd"], True),
        (("text/plain", pathlib.Path("/etc/passwd")), True),
        (["text/plain", pathlib.Path("/etc/passwd")], True),
        (b"inline", False),
        ("/etc/passwd", True),
        (pathlib.Path("/etc/passwd"), True),
    ],
)
def test_attachment_references_filesystem(client: Client, attachment: Any, expected: bool) -> None:
    """Upstream tests the private guard; here ``create_run`` with each shape: a path is
    refused unless ``dangerously_allow_filesystem=True``."""
    if expected:
        with pytest.raises(ValueError, match="dangerously_allow_filesystem"):
            client.create_run(name="x", inputs={}, run_type="chain", attachments={"a": attachment})
    else:
        run_id = uuid.uuid4()
        client.create_run(name="x", inputs={}, run_type="chain", id=run_id, attachments={"a": attachment})
        assert client.read_run(run_id).attachments["a"][1] == b"inline"  # type: ignore[index]


def test_create_run_blocks_list_form_filesystem_attachment(client: Client) -> None:
    with pytest.raises(ValueError, match="dangerously_allow_filesystem"):
        client.create_run(
            name="x", inputs={}, run_type="chain", attachments={"exfil": ["text/plain", "/etc/passwd"]}
        )
    assert list(client.list_runs(project_name="default")) == []


def test_create_run_allows_inline_bytes_attachment(client: Client) -> None:
    client.create_run(name="x", inputs={}, run_type="chain", attachments={"ok": ("text/plain", b"data")})
    [run] = client.list_runs(project_name="default")
    assert run.attachments == {"ok": ("text/plain", b"data")}


class _StubEvaluator(RunEvaluator):
    def evaluate_run(self, run: Run, example: Any = None) -> EvaluationResult:
        return EvaluationResult(key="stub", score=1)


def test_evaluate_run_deprecation_warning(client: Client) -> None:
    """Documented difference: LangSmith (after 0.15) deprecates ``evaluate_run``; assay
    keeps it, without a warning, and stores the result as feedback on the run."""
    run_id = uuid.uuid4()
    client.create_run("stub", inputs={}, run_type="chain", id=run_id, start_time=_CREATED_AT)
    result = client.evaluate_run(client.read_run(run_id), _StubEvaluator())
    assert (result.key, result.score) == ("stub", 1)
    assert [f.key for f in client.list_feedback(run_ids=[run_id])] == ["stub"]


# --- stored attachments: upsert_examples_multipart, updates, reading them back ---


def _files(example: Any) -> dict[str, tuple[str, bytes]]:
    return {name: (a["mime_type"], a["reader"].read()) for name, a in (example.attachments or {}).items()}


def test_upsert_examples_multipart(client: Client) -> None:
    """Upstream reads the multipart body; here the stored example is read back, its given
    ``created_at`` included."""
    dataset = client.create_dataset("files")
    example_id = uuid.uuid4()
    example = ls_schemas.ExampleUpsertWithAttachments(
        id=example_id,
        dataset_id=dataset.id,
        created_at=_CREATED_AT,
        inputs={"input": "test input"},
        outputs={"output": "test output"},
        metadata={"meta": "data"},
        split="train",
        attachments={
            "file1": ("text/plain", b"test data"),
            "file2": ls_schemas.Attachment(mime_type="application/json", data=b'{"key": "value"}'),
        },
    )
    response = client.upsert_examples_multipart(upserts=[example])
    assert response["count"] == 1
    assert response["example_ids"] == [str(example_id)]
    assert response["as_of"] == client.read_dataset(dataset_id=dataset.id).version  # an int here

    stored = client.read_example(example_id)
    assert (stored.dataset_id, stored.inputs, stored.outputs) == (
        dataset.id,
        {"input": "test input"},
        {"output": "test output"},
    )
    assert stored.metadata == {"meta": "data", "dataset_split": "train"}
    assert client.list_dataset_splits(dataset_id=dataset.id) == ["train"]
    assert _files(stored) == {
        "file1": ("text/plain", b"test data"),
        "file2": ("application/json", b'{"key": "value"}'),
    }
    assert stored.created_at == _CREATED_AT


def test_upsert_examples_multipart_missing_file(client: Client, tmp_path: Path) -> None:
    """Documented difference: LangSmith skips a file that is not there (with a warning) and
    stores the rest; assay refuses the upsert, naming the example, the attachment and the
    path, and stores nothing (a missing file is an error, not a silently smaller example)."""
    dataset = client.create_dataset("files")
    example_id = uuid.uuid4()
    missing_path = tmp_path / "no-file.txt"
    example = ls_schemas.ExampleUpsertWithAttachments(
        id=example_id,
        dataset_id=dataset.id,
        inputs={"input": "test"},
        outputs={"output": "out"},
        attachments={"missing": ("text/plain", missing_path), "good": ("text/plain", b"data")},
    )
    with pytest.raises(AttachmentError) as refused:
        client.upsert_examples_multipart(upserts=[example], dangerously_allow_filesystem=True)
    for needle in (str(example_id), "'missing'", str(missing_path)):
        assert needle in str(refused.value)
    assert list(client.list_examples(dataset_id=dataset.id)) == []


def test_update_example_multipart_none_preserves_existing(client: Client) -> None:
    dataset = client.create_dataset("files")
    existing = client.create_example(
        {"existing": "input"},
        dataset_id=dataset.id,
        outputs={"existing": "output"},
        attachments={"kept": ("text/plain", b"kept")},
    )
    client.update_example(example_id=existing.id, metadata={"updated": "metadata"})
    updated = client.read_example(existing.id)
    assert updated.inputs == {"existing": "input"}
    assert updated.outputs == {"existing": "output"}
    assert updated.metadata == {"updated": "metadata"}
    assert _files(updated) == {"kept": ("text/plain", b"kept")}


def test__convert_stored_attachments_to_attachments_dict(client: Client) -> None:
    """Documented difference: LangSmith turns the server's ``attachment.<name>`` presigned
    URLs into ``{name: {presigned_url, mime_type, reader}}``, downloading each; assay's
    stored files come back in that shape with a ``data:`` URL of the file as
    ``presigned_url`` and the stored bytes as ``reader`` (nothing to download)."""
    dataset = client.create_dataset("files")
    with_files = client.create_example(
        {"q": 1},
        dataset_id=dataset.id,
        attachments={
            "test_file": ("text/plain", b"test attachment data"),
            "test_file2": ("image/png", b"\x89PNG"),
        },
    )
    without = client.create_example({"q": 2}, dataset_id=dataset.id)
    result = client.read_example(with_files.id).attachments
    assert result is not None and set(result) == {"test_file", "test_file2"}  # no "attachment." prefix
    assert result["test_file"]["mime_type"] == "text/plain"
    assert result["test_file"]["reader"].read() == b"test attachment data"
    url = result["test_file2"]["presigned_url"]
    assert url.startswith("data:image/png;base64,")
    assert base64.b64decode(url.split(",", 1)[1]) == b"\x89PNG"
    assert not client.read_example(without.id).attachments  # none stored: an empty dict or None


def test_get_test_results_joins_reference_examples(client: Client) -> None:
    """Upstream checks both LangSmith query backends; here the experiment is real and
    stored, and its one row joins the run to its reference example."""
    client.create_dataset("gtr")
    client.create_example({"q": "hi"}, outputs={"a": "yo"}, dataset_name="gtr")

    def correctness(outputs: dict[str, Any]) -> dict[str, Any]:
        return {"key": "correctness", "score": 0.75}

    results = evaluate(lambda inputs: {"a": "yo"}, data="gtr", evaluators=[correctness], client=client)
    df = client.get_test_results(project_name=results.experiment_name)
    assert len(df) == 1, f"expected 1 joined row, got {len(df)}"
    row = df.iloc[0]
    assert row["reference.a"] == "yo"
    assert row["input.q"] == "hi"
    assert row["outputs.a"] == "yo"
    assert row["feedback.correctness"] == 0.75
    [run] = client.list_runs(project_name=results.experiment_name, is_root=True)
    assert run.end_time is not None
    assert row["execution_time"] == (run.end_time - run.start_time).total_seconds()
