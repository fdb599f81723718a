"""``Client.create_example`` as LangSmith's: its parameters in its order, a given
``created_at`` kept (here and in ``create_examples``), the split where LangSmith keeps it,
and an example made from a stored run's inputs, outputs and files. On both backends."""

from __future__ import annotations

import inspect
import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

import pytest

from assay import Client
from assay.errors import ExampleInputError
from assay.schemas import Attachment, ExampleCreate

WHEN = datetime(2015, 1, 1, 12, 30, tzinfo=timezone(timedelta(hours=2)))


@pytest.fixture
def client(store_url: str) -> Iterator[Client]:
    made = Client(store_url)
    made.create_dataset("d")
    yield made
    made.close()


def _stored(client: Client) -> list[tuple[object, ...]]:
    return [(e.inputs, e.outputs, e.metadata) for e in client.list_examples(dataset_name="d")]


#: ``langsmith.Client.create_example``'s parameters that may be passed by position, in its
#: order (LangSmith 0.15.1; ``outputs`` is keyword-only there); the suite does not install it
LANGSMITH_POSITIONAL = [
    "inputs", "dataset_id", "dataset_name", "created_at", "reference_outputs", "metadata", "split",
    "example_id", "source_run_id", "use_source_run_io", "use_source_run_attachments", "attachments",
]  # fmt: skip


def test_the_positional_parameters_are_langsmiths_in_its_order() -> None:
    parameters = inspect.signature(Client.create_example).parameters.values()
    positional = [p.name for p in parameters if p.kind is p.POSITIONAL_OR_KEYWORD and p.name != "self"]
    assert positional == LANGSMITH_POSITIONAL
    keyword_only = {
        p.name
        for p in inspect.signature(Client.create_example).parameters.values()
        if p.kind is p.KEYWORD_ONLY
    }
    assert "outputs" in keyword_only  # keyword-only there too


def test_langsmiths_positional_call_stores_in_the_named_dataset(client: Client) -> None:
    dataset = client.read_dataset(dataset_name="d")
    client.create_example({"q": 1}, dataset.id)
    client.create_example({"q": 2}, None, "d", None, {"a": 2}, {"m": 1}, "train")
    assert _stored(client) == [
        ({"q": 1}, None, None),
        ({"q": 2}, {"a": 2}, {"m": 1, "dataset_split": "train"}),
    ]
    assert client.list_dataset_splits(dataset_name="d") == ["base", "train"]  # "base": no split given


@pytest.mark.parametrize(
    "call",
    [
        lambda c: c.create_example({"q": 1}, {"a": 1}, dataset_name="d"),  # assay's older order
        lambda c: c.create_example({"q": 1}, None, {"a": 1}),
    ],
)
def test_a_dict_where_the_dataset_goes_is_refused_saying_what_to_pass(client: Client, call: object) -> None:
    with pytest.raises(TypeError, match=r"LangSmith's order: pass the reference outputs as outputs="):
        call(client)  # type: ignore[operator]
    assert _stored(client) == []


def test_a_given_created_at_is_kept_and_a_naive_one_is_utc(client: Client) -> None:
    aware = client.create_example({"q": 1}, dataset_name="d", created_at=WHEN)
    naive = client.create_example({"q": 2}, dataset_name="d", created_at=datetime(2016, 2, 3, 4, 5))
    assert client.read_example(aware.id).created_at == WHEN
    assert client.read_example(naive.id).created_at == datetime(2016, 2, 3, 4, 5, tzinfo=timezone.utc)
    now = client.create_example({"q": 3}, dataset_name="d")
    assert client.read_example(now.id).created_at > WHEN  # not given: when it was stored
    with pytest.raises(TypeError, match=r"created_at= takes a datetime; got str"):
        client.create_example({"q": 4}, dataset_name="d", created_at="yesterday")  # type: ignore[arg-type]
    assert len(_stored(client)) == 3


def test_create_examples_keeps_each_items_created_at(client: Client) -> None:
    client.create_examples(
        dataset_name="d",
        examples=[
            {"inputs": {"q": 1}, "created_at": WHEN},
            ExampleCreate(inputs={"q": 2}, created_at=WHEN + timedelta(days=1)),
            {"inputs": {"q": 3}},
        ],
    )
    times = {e.inputs["q"]: e.created_at for e in client.list_examples(dataset_name="d")}
    assert times[1] == WHEN and times[2] == WHEN + timedelta(days=1)
    assert times[3] > WHEN + timedelta(days=1)


def test_the_llm_chat_and_run_shapes_keep_created_at(client: Client) -> None:
    llm = client.create_llm_example("hi", "yo", dataset_name="d", created_at=WHEN)
    chat = client.create_chat_example([{"role": "user", "content": "hi"}], dataset_name="d", created_at=WHEN)
    assert client.read_example(llm.id).created_at == WHEN
    assert client.read_example(chat.id).created_at == WHEN


def test_both_names_of_the_reference_outputs_are_refused(client: Client) -> None:
    with pytest.raises(ValueError, match=r"reference_outputs= or outputs="):
        client.create_example({"q": 1}, dataset_name="d", reference_outputs={"a": 1}, outputs={"a": 2})
    with pytest.raises(ExampleInputError, match=r"split= takes a split's name or a list of names"):
        client.create_example({"q": 1}, dataset_name="d", split=3)  # type: ignore[arg-type]
    assert _stored(client) == []


def _a_stored_run(client: Client) -> uuid.UUID:
    run_id = uuid.uuid4()
    client.create_run(
        "answer",
        inputs={"question": "2+2"},
        run_type="chain",
        id=run_id,
        outputs={"answer": "4"},
        attachments={"photo": Attachment("image/png", b"\x89PNG"), "log": ("text/plain", b"L")},
    )
    return run_id


def test_an_example_from_a_stored_runs_inputs_outputs_and_files(client: Client) -> None:
    run_id = _a_stored_run(client)
    made = client.create_example(
        dataset_name="d", source_run_id=run_id, use_source_run_io=True, use_source_run_attachments=["photo"]
    )
    stored = client.read_example(made.id)
    assert (stored.inputs, stored.outputs) == ({"question": "2+2"}, {"answer": "4"})
    assert {name: (a["mime_type"], a["reader"].read()) for name, a in (stored.attachments or {}).items()} == {
        "photo": ("image/png", b"\x89PNG")
    }


def test_copying_from_a_run_that_lacks_the_file_or_is_not_named_stores_nothing(client: Client) -> None:
    run_id = _a_stored_run(client)
    with pytest.raises(
        ExampleInputError, match=r"has no attachment \['audio'\] \(it has \['log', 'photo'\]\)"
    ):
        client.create_example(
            dataset_name="d", source_run_id=run_id, use_source_run_attachments=["audio"], inputs={}
        )
    with pytest.raises(ValueError, match=r"need source_run_id="):
        client.create_example(dataset_name="d", use_source_run_io=True)
    with pytest.raises(ValueError, match=r"needs inputs="):
        client.create_example(dataset_name="d")
    assert _stored(client) == []
