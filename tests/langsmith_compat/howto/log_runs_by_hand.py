"""A LangSmith how-to, "Log traces with the API" (``Client.create_run`` / ``update_run``):
a pipeline logs its runs by hand, posting each when it starts and patching it when it
ends, then reads the trace back and scores it. Written for LangSmith; run on assay with
``langsmith`` replaced by ``assay``."""

import uuid
from datetime import datetime, timedelta, timezone

from langsmith import Client

client = Client()
project = "howto-manual-tracing"
start = datetime(2026, 3, 1, 12, 0, 0, tzinfo=timezone.utc)

root_id = uuid.uuid4()
client.create_run(
    id=root_id,
    name="qa pipeline",
    run_type="chain",
    inputs={"question": "What is the capital of France?"},
    project_name=project,
    start_time=start,
    extra={"metadata": {"user": "u-17"}},
    tags=["manual"],
)

retriever_id = uuid.uuid4()
client.create_run(
    id=retriever_id,
    parent_run_id=root_id,
    name="retrieve",
    run_type="retriever",
    inputs={"query": "capital of France"},
    project_name=project,
    start_time=start + timedelta(milliseconds=20),
)
client.update_run(
    retriever_id,
    outputs={"documents": ["Paris is the capital of France."]},
    end_time=start + timedelta(milliseconds=120),
)

llm_id = uuid.uuid4()
client.create_run(
    id=llm_id,
    parent_run_id=root_id,
    name="answer",
    run_type="llm",
    inputs={"messages": [{"role": "user", "content": "What is the capital of France?"}]},
    project_name=project,
    start_time=start + timedelta(milliseconds=130),
)
client.update_run(llm_id, error="RateLimitError: try again", end_time=start + timedelta(milliseconds=200))
client.update_run(
    root_id,
    outputs={"answer": "Paris"},
    end_time=start + timedelta(milliseconds=450),
    extra={"metadata": {"revision": "v2"}},
)

client.create_feedback(root_id, key="correct", score=1, comment="checked by hand")

root = client.read_run(root_id, load_child_runs=True)
elapsed = (root.end_time - root.start_time).total_seconds() * 1000
print(root.name, root.outputs, f"{elapsed:.0f} ms")
print(sorted(root.extra["metadata"].items()))
for child in root.child_runs:
    print(" ", child.name, child.run_type, child.outputs, child.error)
print([run.name for run in client.list_runs(project_name=project, is_root=True)])
print([run.name for run in client.list_runs(project_name=project, error=True)])
print([(f.key, f.score) for f in client.list_feedback(run_ids=[root_id])])
