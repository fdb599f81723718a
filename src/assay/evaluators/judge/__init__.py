"""LLM-as-judge evaluators: criteria, LLM feedback, question answering.

Every judge takes ``model=``: ``"openai/<model>"``, an ``assay.llm.ChatModel``, any
``assay.llm.ChatClient``, or nothing (``ASSAY_JUDGE_MODEL``, ``OPENAI_BASE_URL``,
``OPENAI_API_KEY``). The prompts are the module-level constants re-exported here
(``print(judge.CRITERIA_PROMPT)``); pass ``prompt=`` to override one.
"""

from assay.evaluators.judge._base import LLMJudge
from assay.evaluators.judge._core import JudgeCore
from assay.evaluators.judge._criteria import (
    CriteriaEvaluator,
    LabeledCriteriaEvaluator,
    LLMFeedbackEvaluator,
    resolve_criteria,
)
from assay.evaluators.judge._prompts import (
    BUILTIN_CRITERIA,
    CONTEXT_QA_PROMPT,
    COT_QA_PROMPT,
    CRITERIA_PROMPT,
    FEEDBACK_PROMPT,
    FEEDBACK_REFERENCE_BLOCK,
    LABELED_CRITERIA_PROMPT,
    QA_PROMPT,
)
from assay.evaluators.judge._qa import (
    QAEvaluator,
    context_qa_evaluator,
    cot_qa_evaluator,
    qa_evaluator,
)
from assay.evaluators.judge._self_consistency import SelfConsistency
from assay.evaluators.judge._text import check_template
from assay.evaluators.judge._verdicts import AnyVerdicts, ExtractedItems, Verdicts, YesNoVerdicts

#: the name before 0.1.0 settled on one casing of LLM
LlmFeedbackEvaluator = LLMFeedbackEvaluator

__all__ = [
    # what judges and scorers of your own are built on (the LLM scorers are): the model call
    # with its usage metered, a prompt template checked, and the verdict shapes
    "AnyVerdicts",
    "ExtractedItems",
    "JudgeCore",
    "Verdicts",
    "YesNoVerdicts",
    "check_template",
    # the judges
    "LlmFeedbackEvaluator",
    "BUILTIN_CRITERIA",
    "CONTEXT_QA_PROMPT",
    "COT_QA_PROMPT",
    "CRITERIA_PROMPT",
    "FEEDBACK_PROMPT",
    "FEEDBACK_REFERENCE_BLOCK",
    "LABELED_CRITERIA_PROMPT",
    "QA_PROMPT",
    "CriteriaEvaluator",
    "LLMJudge",
    "LabeledCriteriaEvaluator",
    "LLMFeedbackEvaluator",
    "QAEvaluator",
    "SelfConsistency",
    "context_qa_evaluator",
    "cot_qa_evaluator",
    "qa_evaluator",
    "resolve_criteria",
]
