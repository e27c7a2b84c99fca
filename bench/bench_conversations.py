"""Cost of the language v2 forms at compile time: N conversation cases beside N single-prompt cases.

Both suites have the same number of statements a case (a conversation's
three `user` lines and two `given` lines stand where the prompt suite has
a prompt, two settings and two more expectations), so the difference is
what scoping turns, `given` rules and answer sequences cost in `check` and
in a full compile. Prints CPU seconds (best of 3) and microseconds a case.

    python bench/bench_conversations.py [--cases N]
"""

from __future__ import annotations

import argparse
import time

from evaldsl.compile._compiler import check_suite, compile_suite

TOOLS = """\
tool lookup_order "Look an order up"
  param id: integer
  when <id: 42> returns "delivered" then "refunded"
  otherwise fails "no such order"

tool refund_order "Refund an order"
  param id: integer
  param reason?: string
  otherwise returns "refunded"

"""


def conversation(i: int) -> str:
    return f"""case "refund {i}"
  expect called refund_order once
  user "I want a refund for order {i}"
    expect called lookup_order with <id: {i}>
    expect final text contains "blue" ignoring case
  user "Yes, the blue one"
    expect called refund_order with <id: {i}>
  user "Thanks"
    expect no tool calls
  given lookup_order with <id: {i}> returns "busy" then "delivered, blue"
  given refund_order fails "payments are down" then returns "refunded"
"""


def single(i: int) -> str:
    return f"""case "refund {i}"
  expect called refund_order once
  prompt "I want a refund for order {i}"
  expect called lookup_order with <id: {i}>
  expect final text contains "blue" ignoring case
  repeat 2
  expect called refund_order with <id: {i}>
  timeout 30s
  expect no tool calls
  expect called lookup_order then refund_order
  expect not called delete_order
"""


def best_cpu(fn: object, runs: int = 3) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.process_time()
        fn()  # type: ignore[operator]
        best = min(best, time.process_time() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=5000)
    n = parser.parse_args().cases
    texts = {"single prompt": TOOLS + "\n".join(single(i) for i in range(n)),
             "conversation": TOOLS + "\n".join(conversation(i) for i in range(n))}
    print(f"{n} cases, CPU seconds (best of 3), µs a case")
    for label, text in texts.items():
        checked = best_cpu(lambda text=text: check_suite(text, "bench.evl"))
        compiled = best_cpu(lambda text=text: compile_suite(text, "bench.evl"))
        print(f"  {label:<14} check {checked:6.2f} s ({checked / n * 1e6:5.0f} µs)   "
              f"compile {compiled:6.2f} s ({compiled / n * 1e6:5.0f} µs)")


if __name__ == "__main__":
    main()
