"""Port of langsmith-sdk python/tests/unit_tests/test_run_trees.py, in our words.

The upstream tests give the tree a ``MagicMock(spec=Client)``; here the client is assay's
real ``Client`` on a temporary store. Tests of LangSmith's wire format (multipart bodies,
replica credentials, id remapping for replica projects, private helpers) have nothing to
test here; TALLY.md lists them as not applicable.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from pydantic import BaseModel

from assay import Client
from assay.run_trees import RunTree


@pytest.fixture
def client(tmp_path: Path) -> Client:
    return Client(store=str(tmp_path / "store.db"))


def test_run_tree_accepts_tpe(client: Client) -> None:
    with ThreadPoolExecutor() as executor:
        tree = RunTree(name="My Chat Bot", inputs={"text": "hi"}, client=client, executor=executor)
    assert tree.inputs == {"text": "hi"}


def test_lazy_rt(client: Client) -> None:
    assert RunTree(name="foo").client is None
    assert RunTree(name="foo", client=client).client is client
    assert RunTree(name="foo", ls_client=client).client is client


def test_json_serializable(client: Client) -> None:
    for tree in (
        RunTree(name="foo"),
        RunTree(name="foo", ls_client=client),
        RunTree(name="foo", client=client),
    ):
        for fields in (tree.dict(), json.loads(tree.json())):
            assert not fields.get("client") and not fields.get("ls_client")
            assert fields["name"] == "foo"


def test_run_tree_events_not_null(client: Client) -> None:
    tree = RunTree(name="My Chat Bot", inputs={"text": "hi"}, client=client, events=None)
    assert tree.events == []


def test_nested_run_trees_from_dotted_order(client: Client) -> None:
    grandparent = RunTree(name="Grandparent", inputs={"text": "hi"}, client=client)
    parent = grandparent.create_child(name="Parent")
    child = parent.create_child(name="Child")
    for original in (child, parent, grandparent):
        assert original.dotted_order is not None
        clone = RunTree.from_dotted_order(dotted_order=original.dotted_order, name="Clone", client=client)
        assert clone.id == original.id
        assert clone.parent_run_id == original.parent_run_id
        assert clone.dotted_order == original.dotted_order
    assert RunTree.from_dotted_order(grandparent.dotted_order or "").parent_run_id is None


def test_create_child_enforces_timestamp_order(client: Client) -> None:
    parent_time = datetime(2025, 12, 22, 23, 43, 8, 14739, tzinfo=timezone.utc)
    parent = RunTree(name="Parent", start_time=parent_time, client=client)

    child = parent.create_child(name="Child", start_time=parent_time - timedelta(milliseconds=3))
    assert child.start_time == parent.start_time
    assert child.parent_run_id == parent.id

    later = parent_time + timedelta(milliseconds=10)
    assert parent.create_child(name="Child2", start_time=later).start_time == later
    assert parent.create_child(name="Child3").start_time >= parent.start_time


def test_create_child_propagates_thread_metadata(client: Client) -> None:
    root = RunTree(name="Root", inputs={}, client=client, extra={"metadata": {"thread_id": "thread-abc"}})
    child = root.create_child(name="Child")
    assert child.extra["metadata"]["thread_id"] == "thread-abc"
    own = root.create_child(name="Child2", extra={"metadata": {"thread_id": "child-override"}})
    assert own.extra["metadata"]["thread_id"] == "child-override"
    assert child.create_child(name="Grandchild").extra["metadata"]["thread_id"] == "thread-abc"


def test_trace_start_time(client: Client) -> None:
    root = RunTree(name="root", client=client)
    child1 = root.create_child(name="child1")
    grandchild = child1.create_child(name="grandchild")
    child2 = root.create_child(name="child2")
    for tree in (root, child1, grandchild, child2):
        assert tree.trace_start_time == root.start_time
    assert root.trace_start_time.tzinfo == timezone.utc
    assert child1.trace_start_time.tzinfo == timezone.utc


def test_to_headers_does_not_serialize_replicas(client: Client) -> None:
    """Replicas are LangSmith's multi-project writes; assay accepts the option and
    never puts credentials in a header."""
    replicas = [{"api_key": "secret-key", "api_url": "https://attacker.com", "project_name": "safe-project"}]
    tree = RunTree(name="test", run_type="chain", client=client, replicas=replicas)
    baggage = tree.to_headers().get("baggage", "")
    for secret in ("replicas", "secret-key", "attacker.com", "safe-project"):
        assert secret not in baggage


class _Inner(BaseModel):
    val: int


class _Query(BaseModel):
    query: str


class _Nested(BaseModel):
    query: str
    nested: _Inner


class _Answer(BaseModel):
    answer: str


def test_runtree_accepts_pydantic_basemodel_as_constructor_inputs() -> None:
    assert RunTree(name="test", run_type="chain", inputs=_Query(query="hello")).inputs == {"query": "hello"}


def test_runtree_accepts_pydantic_basemodel_as_constructor_outputs() -> None:
    tree = RunTree(name="test", run_type="chain", inputs={}, outputs=_Answer(answer="hi"))
    assert tree.outputs == {"answer": "hi"}


def test_runtree_end_accepts_pydantic_basemodel_outputs() -> None:
    tree = RunTree(name="test", run_type="chain", inputs={})
    tree.end(outputs=_Answer(answer="goodbye"))  # type: ignore[arg-type]
    assert tree.outputs == {"answer": "goodbye"}


def test_runtree_set_accepts_nested_pydantic_basemodel_inputs() -> None:
    tree = RunTree(name="test", run_type="chain", inputs={})
    tree.set(inputs=_Nested(query="hello", nested=_Inner(val=42)))  # type: ignore[arg-type]
    assert tree.inputs == {"query": "hello", "nested": {"val": 42}}


def test_runtree_set_accepts_pydantic_basemodel_outputs() -> None:
    tree = RunTree(name="test", run_type="chain", inputs={})
    tree.set(outputs=_Answer(answer="hi"))  # type: ignore[arg-type]
    assert tree.outputs == {"answer": "hi"}
