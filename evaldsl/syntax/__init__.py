"""Text -> AST: the parser, AST models, formatter and diagnostics."""
