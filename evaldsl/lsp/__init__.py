"""The language server (`evaldsl lsp`): check's diagnostics, formatting, completion, hover,
go to definition and an outline for `.evl` files, built on the public API. Needs the `lsp`
extra (pygls): `pip install 'evaldsl[lsp]'`."""
