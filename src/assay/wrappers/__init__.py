"""LangSmith's ``langsmith.wrappers``, with only the import swapped: every model call an
app makes through the official client is traced as an ``llm`` run under the current run
(inside an experiment's target, stored with the row).

- ``wrap_openai(OpenAI())``: chat completions (``AsyncOpenAI`` too, streamed ones included);
- ``wrap_anthropic(Anthropic())``: messages, ``create`` and the ``stream`` helper
  (``AsyncAnthropic`` too, ``stream=True`` included).
"""

from assay.wrappers._anthropic import wrap_anthropic
from assay.wrappers._openai import wrap_openai

__all__ = ["wrap_anthropic", "wrap_openai"]
