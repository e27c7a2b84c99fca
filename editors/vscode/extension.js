// The VS Code side of evaldsl: highlighting comes from syntaxes/ (declared in package.json);
// everything else (diagnostics, completion, hover, go to definition, outline, formatting)
// comes from `evaldsl lsp`, started over stdio with the command in the `evaldsl.command` setting.
const vscode = require("vscode");
const { LanguageClient, TransportKind } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const [command, ...args] = vscode.workspace.getConfiguration("evaldsl").get("command", ["evaldsl", "lsp"]);
  client = new LanguageClient(
    "evaldsl",
    "evaldsl",
    { command, args, transport: TransportKind.stdio },
    { documentSelector: [{ scheme: "file", language: "evl" }] }
  );
  context.subscriptions.push({ dispose: () => client && client.stop() });
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
