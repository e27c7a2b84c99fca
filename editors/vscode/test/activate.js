// Activate extension.js outside VS Code and check that it starts the language server.
// `vscode` and `vscode-languageclient/node` exist only inside the editor, so both are stood in for
// here: the stand-in LanguageClient does what the real one does first, spawning the server options
// that extension.js gave it (command, args, stdio) and sending `initialize` over JSON-RPC. Prints one
// JSON object: the client's arguments and the server's answer. The Python test reads it.
// Usage: node test/activate.js '["evaldsl", "lsp"]'   (the `evaldsl.command` setting to use)
const Module = require("module");
const childProcess = require("child_process");

const setting = JSON.parse(process.argv[2]);
let made = null;

function frame(message) {
  const body = Buffer.from(JSON.stringify(message), "utf8");
  return Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`, "ascii"), body]);
}

class LanguageClient {
  constructor(id, name, serverOptions, clientOptions) {
    made = { id, name, serverOptions, clientOptions };
  }
  start() {
    const { command, args } = made.serverOptions;
    this.child = childProcess.spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
    return new Promise((resolve, reject) => {
      let buffer = Buffer.alloc(0);
      const timer = setTimeout(() => reject(new Error("no answer to initialize in 60 s")), 60000);
      this.child.on("error", reject);
      this.child.stdout.on("data", (chunk) => {
        buffer = Buffer.concat([buffer, chunk]);
        const end = buffer.indexOf("\r\n\r\n");
        if (end < 0) return;
        const length = Number(/Content-Length: (\d+)/i.exec(buffer.subarray(0, end).toString())[1]);
        if (buffer.length < end + 4 + length) return;
        clearTimeout(timer);
        resolve(JSON.parse(buffer.subarray(end + 4, end + 4 + length).toString("utf8")));
      });
      this.child.stdin.write(frame({ jsonrpc: "2.0", id: 1, method: "initialize",
                                     params: { processId: process.pid, rootUri: null, capabilities: {} } }));
    });
  }
  stop() {
    if (!this.child) return Promise.resolve();
    this.child.stdin.write(frame({ jsonrpc: "2.0", id: 2, method: "shutdown", params: null }));
    this.child.stdin.write(frame({ jsonrpc: "2.0", method: "exit", params: null }));
    const child = this.child;
    this.child = null;
    return new Promise((resolve) => child.on("exit", (code) => resolve(code)));
  }
}

const standIns = {
  vscode: {
    workspace: {
      getConfiguration: (section) => ({
        get: (key, fallback) => (section === "evaldsl" && key === "command" ? setting : fallback),
      }),
    },
  },
  "vscode-languageclient/node": { LanguageClient, TransportKind: { stdio: "stdio" } },
};
const load = Module._load;
Module._load = function (request, ...rest) {
  return Object.prototype.hasOwnProperty.call(standIns, request) ? standIns[request] : load.call(this, request, ...rest);
};

const extension = require("../extension.js");
const context = { subscriptions: [] };
extension.activate(context).then(async (answer) => {
  let exitCode = null;
  for (const item of context.subscriptions) exitCode = await item.dispose();
  process.stdout.write(JSON.stringify({ made, answer, exitCode }));
}, (error) => {
  process.stderr.write(String(error && error.stack || error));
  process.exit(1);
});
