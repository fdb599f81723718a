"""The summarization scorer's three prompts (alignment, questions, coverage). Print them;
override with ``prompts=``."""

from __future__ import annotations

#: Call 1, alignment: the summary's claims checked against the source.
#: Placeholders: {source}, {summary}.
SUMMARY_ALIGNMENT_PROMPT = """You are checking a summary against the source text it condenses.

Break the summary into its individual factual claims: short, self-contained statements of one fact each. For each claim, decide whether the source text supports it. A claim is supported only if the source states it or it follows directly from the source; a claim that adds, changes or contradicts a detail is not supported.

[Source text]
{source}

[Summary]
{summary}

In "claims", give one entry per claim of the summary, with "claim" (the claim), "reason" (why the source does or does not support it) and "supported" (true or false). If the summary makes no factual claim, give an empty list."""

#: Call 2, questions: closed questions the source answers "yes". Placeholders: {source},
#: {max_questions}.
SUMMARY_QUESTIONS_PROMPT = """You are preparing questions that test whether a summary keeps the important information of a source text.

Write at most {max_questions} closed questions about the most important facts of the source text. Each question must be answerable with "yes" from the source text alone, and specific enough that a summary either clearly does or does not answer it.

[Source text]
{source}

Put the questions in "questions". If the source text states no facts, give an empty list."""

#: Call 3, coverage: the questions answered from the summary ALONE. This prompt never
#: carries the source text: a judge that saw the source would answer from it and hide
#: the omissions this step measures. Placeholders: {summary}, {questions}.
SUMMARY_COVERAGE_PROMPT = """You are checking which questions a summary answers. Use ONLY the summary below: you do not have the source text, and you must not use outside knowledge. A question is answered only if the summary states the information needed to answer it "yes".

[Summary]
{summary}

[Questions]
{questions}

In "answers", give one entry per question, in the same order, with "question" (the question as written), "reason" (what in the summary answers it, or what is missing) and "answered" (true or false)."""
