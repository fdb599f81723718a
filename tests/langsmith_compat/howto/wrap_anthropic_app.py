"""A LangSmith how-to, "Trace Anthropic calls with wrap_anthropic": an app whose model
calls are traced, plain, streamed and through the stream helper, inside one trace.
Written for LangSmith; run on assay with ``langsmith`` replaced by ``assay``. The model
is whatever ANTHROPIC_BASE_URL points to (the test's loopback server)."""

import anthropic
from langsmith import traceable
from langsmith.run_helpers import trace
from langsmith.wrappers import wrap_anthropic

client = wrap_anthropic(anthropic.Anthropic(max_retries=0))


@traceable(run_type="tool", name="lookup")
def lookup(city: str) -> str:
    return f"sunny in {city}"


@traceable(name="assistant")
def assistant(question: str) -> str:
    first = client.messages.create(
        model="claude-opus-4-6",
        max_tokens=100,
        system="You answer in one line.",
        messages=[{"role": "user", "content": question}],
    )
    fact = lookup("Paris")
    streamed = client.messages.create(
        model="claude-opus-4-6",
        max_tokens=100,
        messages=[{"role": "user", "content": f"rephrase {fact}"}],
        stream=True,
    )
    pieces = [event.delta.text for event in streamed if event.type == "content_block_delta"]
    with client.messages.stream(
        model="claude-opus-4-6", max_tokens=100, messages=[{"role": "user", "content": "summarize"}]
    ) as stream:
        summary = "".join(stream.text_stream)
    return " | ".join([first.content[0].text, "".join(pieces), summary])


with trace("weather app", inputs={"question": "weather in Paris?"}) as root:
    answer = assistant("weather in Paris?")
    root.end(outputs={"answer": answer})

print(answer)


def show(run, depth=0):
    outputs = run.outputs or {}
    usage = outputs.get("usage_metadata") or {}
    content = outputs.get("content")
    text = content[0]["text"] if isinstance(content, list) and content else outputs.get("output", "")
    print("  " * depth + f"{run.name} [{run.run_type}] {text!r} tokens={usage.get('total_tokens')}")
    for child in run.child_runs:
        show(child, depth + 1)


show(root)
llm_runs = [run for run in root.child_runs[0].child_runs if run.run_type == "llm"]
print(llm_runs[0].inputs["messages"][0])
print(sorted(key for key in llm_runs[0].metadata if key.startswith("ls_")))
