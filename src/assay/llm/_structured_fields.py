"""Where each kind of server reads a JSON schema to constrain decoding.

OpenAI (and vLLM, Ollama, llama.cpp in their OpenAI-compatible modes) read
``response_format``; for servers that reject it, vLLM reads ``guided_json``, Ollama
``format`` and the llama.cpp server ``json_schema``, each a grammar built from the schema.
A server ignores the fields of the others, so ``"grammar"`` sends all three at once. On
every rung but ``response_format`` the schema is in the prompt too: a grammar fixes the
form of the reply, the model still has to know what the fields mean.
"""

from __future__ import annotations

from typing import Any

from assay.llm.chat import ResponseSchema

__all__ = ["FALLBACK", "GRAMMAR_FIELDS", "schema_fields"]

GRAMMAR_FIELDS: dict[str, tuple[str, ...]] = {
    "vllm": ("guided_json",),
    "ollama": ("format",),
    "llamacpp": ("json_schema",),
}
GRAMMAR_FIELDS["grammar"] = tuple(name for names in GRAMMAR_FIELDS.values() for name in names)

#: the next rung of the "auto" ladder after a server rejected one
FALLBACK = {"json_schema": "grammar", "grammar": "prompt"}


def schema_fields(mode: str, schema: ResponseSchema) -> dict[str, Any]:
    """The request fields that carry ``schema`` on the rung ``mode`` (none for ``prompt``)."""
    if mode == "json_schema":
        return {
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": schema.name, "schema": schema.schema, "strict": True},
            }
        }
    return {name: schema.schema for name in GRAMMAR_FIELDS.get(mode, ())}
