"""AST -> runnable checks: argument matchers, predicates and the compiler."""
