// Tokenise .evl files with the engine VS Code uses (vscode-textmate + vscode-oniguruma) and print
// one JSON object: for each file, its lines' tokens as [text, scopes] pairs. The Python tests read it.
// Usage: node test/tokenize.js FILE...
const fs = require("fs");
const path = require("path");
const vsctm = require("vscode-textmate");
const oniguruma = require("vscode-oniguruma");

const wasm = fs.readFileSync(path.join(path.dirname(require.resolve("vscode-oniguruma")), "onig.wasm")).buffer;
const onigLib = oniguruma.loadWASM(wasm).then(() => ({
  createOnigScanner: (patterns) => new oniguruma.OnigScanner(patterns),
  createOnigString: (s) => new oniguruma.OnigString(s),
}));
const grammarPath = path.join(__dirname, "..", "syntaxes", "evl.tmLanguage.json");
const registry = new vsctm.Registry({
  onigLib,
  loadGrammar: async (scopeName) =>
    scopeName === "source.evl" ? vsctm.parseRawGrammar(fs.readFileSync(grammarPath, "utf8"), grammarPath) : null,
});

async function main(files) {
  const grammar = await registry.loadGrammar("source.evl");
  const out = {};
  for (const file of files) {
    let state = vsctm.INITIAL;
    out[file] = fs.readFileSync(file, "utf8").split(/\r?\n/).map((line) => {
      const result = grammar.tokenizeLine(line, state);
      state = result.ruleStack;
      return result.tokens.map((t) => [line.substring(t.startIndex, t.endIndex), t.scopes.slice(1)]);
    });
  }
  process.stdout.write(JSON.stringify(out));
}

main(process.argv.slice(2)).catch((err) => { console.error(err); process.exit(1); });
