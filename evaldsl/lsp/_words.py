"""The words the language server offers and explains: completions by context, and one-line meanings.

The meanings restate docs/language.md in one line each; a test checks that
every keyword of the grammar has one.
"""

from __future__ import annotations

HEAD_STATEMENTS = ("suite", "description", "use", "tags", "repeat", "pass rate at least", "timeout", "system",
                   "mode", "max turns", "expect", "tool", "case", "world", "user turns", "tools")
CASE_STATEMENTS = ("prompt", "expect", "setup", "examples", "examples from", "tags", "repeat", "pass rate at least",
                   "timeout", "system", "mode", "max turns", "skip", "xfail", "case", "tool",
                   "then", "and", "or", "else", "user", "simulated user", "user turns", "given", "tools")
TOOL_STATEMENTS = ("param", "when", "otherwise returns", "otherwise fails", "case", "tool")
PREDICATES = ("called", "calls are", "only called", "first call", "last call", "every call", "no tool calls",
              "no error", "final text", "final number", "final json", "tokens at most", "duration at most",
              "judge", "world", "not", "valid arguments")
AFTER_FINAL = ("text", "number", "json")
AFTER_FINAL_TEXT = ("contains", "is", "is empty", "starts with", "ends with", "matches")
AFTER_FINAL_NUMBER = ("is", "at least", "at most", "above", "below", "between")
MODES = ("agent", "single-turn")
AFTER_GIVEN_TOOL = ("with", "returns", "fails")
"""After `given TOOL` (v2)."""
AFTER_THEN_ANSWER = ("returns", "fails")
"""After the `then` of an answer sequence (v2): the next step's verb (left out, the step's before)."""
AFTER_STEP_LIST = ("in any order",)
AFTER_WITH = ("only",)
PARAM_TYPES = ("string", "number", "integer", "boolean", "object", "array of", "one of")

MEANINGS: dict[str, str] = {
    "suite": "`suite \"name\"`: the suite's display name (default: the file's stem).",
    "description": "`description \"...\"`: a line that says what the suite is for.",
    "use": "`use \"lib.evl\"`: bring in that file's tool declarations (relative to this file).",
    "tags": "`tags a, b`: labels for selection with -m / --tag; a case's tags add to the suite's.",
    "repeat": "`repeat N`: run the case N times (default 1).",
    "pass": "`pass rate at least F`: the fraction of the repeats that must pass (0 < F <= 1, default 1.0).",
    "rate": "`pass rate at least F`: the fraction of the repeats that must pass (0 < F <= 1, default 1.0).",
    "timeout": "`timeout D`: wall-clock bound on one run of the agent (default 60s).",
    "system": "`system \"...\"`: the system prompt of model runs.",
    "mode": "`mode agent` (full tool loop) or `mode single-turn` (stop after the first reply): model runs.",
    "max": "`max turns N`: bound on model calls in one run of a model (default 10).",
    "turns": "`max turns N`: bound on model calls in one user turn of a model run (default 10); "
             "`user turns N`: bound on a simulated user's messages (default 10, 1 to 100).",
    "user": "`user \"...\"`: one user message of a conversation; the `expect` lines under it judge that turn. "
            "`simulated user \"...\"`: a model plays the user. `user turns N`: its bound.",
    "simulated": "`simulated user \"...\"`: a model (--user-model) plays the user, with this text as its "
                 "instructions; the case's expectations judge the whole conversation.",
    "given": "`given TOOL [with ARGS] returns \"...\"` (or `fails`): this case's own answer for a tool, "
             "tried before the tool's `when` lines; `then \"...\"` adds later answers.",
    "world": "`world \"file.py:Class\"` (suite): tools backed by a Python class, one instance per run; "
             "`expect world PATTERN`: the world's state matches the pattern.",
    "skip": "`skip \"why\"`: the case is reported as skipped and never run.",
    "xfail": "`xfail \"why\"`: expected to fail; a pass is reported as XPASS.",
    "case": "`case \"name\"`: a test case; its block runs to the next `case` or `tool`.",
    "prompt": "`prompt \"...\"`: the instruction sent to the agent; one per case, unless the case is a "
              "conversation (`user` lines), where `prompt \"x\"` means the same as one `user \"x\"`.",
    "setup": "`setup <...>`: the value handed to Harness.setup (a literal, array or object).",
    "expect": "`expect EXPR`: one expectation; `not` > `and` > `or`, then `else ... for N` fallbacks.",
    "examples": "`examples` + a table, or `examples from \"file\"`: one case per row ($name, {{ name }}).",
    "from": "`examples from \"cases.csv\"`: rows from a .csv, .jsonl or .json file next to this one.",
    "tool": "`tool NAME \"description\"`: declare a tool: its params (JSON Schema) and canned answers.",
    "param": "`param name[?]: TYPE \"description\"`: a tool parameter; `?` marks it optional.",
    "when": "`when <ARGS> returns \"...\"`: the canned answer for calls whose arguments match.",
    "otherwise": "`otherwise returns \"...\"`: the answer to calls no `when` matched.",
    "returns": "`returns \"...\"`: the text the mock tool answers; `returns \"a\" then \"b\"`: the first call "
               "this line answers gets a, the second b, later ones the last (counted per run).",
    "fails": "`fails \"...\"`: the mock tool reports an error with this text (also as a step: "
             "`then fails \"...\"`).",
    "called": "`called T [with ARGS] [COUNT]`: T was called (with matching arguments, so many times).",
    "calls": "`calls are S1 then S2`: the whole call sequence is exactly these steps.",
    "are": "`calls are S1 then S2`: the whole call sequence is exactly these steps.",
    "only": "`only called T1, T2`: every call was to one of these tools (none is required); "
            "`only <...>`: an object with no key besides those named (a closed pattern).",
    "first": "`first call T [with ARGS]`: the first call was to T.",
    "last": "`last call T [with ARGS]`: the last call was to T.",
    "every": "`every call T with ARGS`: every call of T matches ARGS (true when T was never called).",
    "call": "`first call` / `last call` / `every call`: a predicate over one call or each call.",
    "no": "`no tool calls`: no call at all (a negative case); `no error`: the run reported no error.",
    "error": "`no error`: the run reported no error.",
    "final": "`final text ...` / `final number ...` / `final json ...`: predicates over the final answer.",
    "text": "`final text contains / is / starts with / ends with / matches / is empty`.",
    "number": "`final number is X [within E]`, `at least`, `at most`, `above`, `below`, `between`: the LAST number.",
    "json": "`final json PATTERN`: the answer (or its one ```json block) parses and matches PATTERN.",
    "tokens": "`tokens at most N`: the run reported at most N tokens.",
    "duration": "`duration at most D`: the run took at most D.",
    "judge": "`judge \"rubric\" [at least F]`: an LLM judge scores the answer at F (default 0.5) or more.",
    "with": "`with <key: PATTERN>`: the call's arguments match by subset (other keys ignored); "
            "`with only <...>`: no other key; `with <a: 1> or <b: 2>`: either object pattern.",
    "then": "`A then B`: the steps occur in this relative order (other calls may come between); "
            "after an answer, `then \"...\"` is the next answer of a sequence.",
    "any": "`any tool`: a call to any tool; as a pattern, `any`: the key is present with any value.",
    "once": "`once`: exactly one time.",
    "twice": "`twice`: exactly two times.",
    "times": "`N times`, `at least N times`, `at most N times`, `between N and M times`.",
    "at": "`at least X` / `at most X`: a bound, inclusive.",
    "least": "`at least X`: X or more.",
    "most": "`at most X`: X or less.",
    "between": "`between X and Y`: both bounds included.",
    "above": "`above X`: more than X.",
    "below": "`below X`: less than X.",
    "within": "`X within E`: a number within E of X (absolute tolerance).",
    "is": "`is \"s\"`: equal once surrounding white space is trimmed; `is empty`: no text or only spaces.",
    "empty": "`final text is empty`: no final text, or only white space.",
    "contains": "`contains \"s\"`: a substring; in a pattern, also an array with a matching element.",
    "starts": "`starts with \"s\"`: the (trimmed) text starts with s.",
    "ends": "`ends with \"s\"`: the (trimmed) text ends with s.",
    "matches": "`matches /re/flags`: the regex (Python `re`) matches anywhere.",
    "ignoring": "`ignoring case`: compare Unicode-casefolded.",
    "absent": "`absent`: the key is not present; `absent or P`: missing, or present and matching P "
              "(an optional parameter). Only as a key's pattern.",
    "one": "`one of [v1, v2]`: equal to one of the values.",
    "of": "`one of [...]` / `array of TYPE`.",
    "array": "`array of TYPE`: a param type.",
    "not": "`not EXPR`: the expression does not hold; `not called T` is a safety rule.",
    "and": "`A and B`: both hold (binds tighter than `or`).",
    "or": "`A or B`: either holds.",
    "else": "`else EXPR for N`: a fallback that still passes, for credit N (0 < N <= 1).",
    "for": "`else EXPR for N`: the fallback's credit.",
    "true": "`true`: the JSON literal.",
    "false": "`false`: the JSON literal.",
    "null": "`null`: the JSON literal.",
    "loosely": "`\"s\" loosely`: equal once both are casefolded and stripped of white space, punctuation "
               "and symbols (`\"New York, NY\" loosely` matches `new york ny`).",
    "in": "`called [S1, S2] in any order`: each step matched by a call of its own, in any order.",
    "order": "`in any order`: `called [S1, S2] in any order` (other calls may come too); "
             "`calls are [S1, S2] in any order` (exactly these calls, in some order).",
    "valid": "`valid arguments`: every call was to a declared tool, its arguments valid for its params "
             "(required present, no unknown key, types: `integer` is a number without fraction or exponent).",
    "arguments": "`valid arguments`: every call's arguments validate against its tool's params.",
    "tools": "`tools T1, T2`: the declared tools a case offers (model runs, the case context); "
             "default: every declared tool.",
    "agent": "`mode agent`: model runs loop over tool calls until the model answers.",
    "single-turn": "`mode single-turn`: model runs stop after the model's first reply.",
}
