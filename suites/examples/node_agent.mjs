// node_agent.mjs: an agent in Node.js, tested by evaldsl with no evaldsl code in it.
//
// It speaks the JSON Lines form of `--agent-cmd` (docs/agents.md): one user
// line in per turn, one reply line out. It calls its model through
// OPENAI_BASE_URL with plain fetch and answers the model's calculator calls
// itself. It reports no tool calls: evaldsl's recording proxy sees them.
//
//   evaldsl run suites/examples/node_agent.evl --agent-cmd "node suites/examples/node_agent.mjs"
import readline from "node:readline";

const base = process.env.OPENAI_BASE_URL ?? "https://api.openai.com/v1";
const model = process.env.NODE_AGENT_MODEL ?? "gpt-4o-mini";
const tools = [{
  type: "function",
  function: {
    name: "calculator", description: "Does arithmetic",
    parameters: { type: "object", properties: { op: { type: "string" }, a: { type: "number" }, b: { type: "number" } } },
  },
}];

function calculate({ op, a, b }) {
  const ops = { add: a + b, sub: a - b, mul: a * b, div: a / b };
  return op in ops ? String(ops[op]) : `unknown op ${op}`;
}

async function complete(messages) {
  const response = await fetch(`${base}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${process.env.OPENAI_API_KEY ?? ""}` },
    body: JSON.stringify({ model, messages, tools }),
  });
  if (!response.ok) throw new Error(`model answered HTTP ${response.status}`);
  return (await response.json()).choices[0].message;
}

const history = [];
for await (const raw of readline.createInterface({ input: process.stdin })) {
  const line = JSON.parse(raw);
  history.push({ role: "user", content: line.content });
  try {
    for (let step = 0; step < 10; step++) {
      const message = await complete(history);
      history.push(message);
      if (!message.tool_calls?.length) break;
      for (const call of message.tool_calls) {
        const result = calculate(JSON.parse(call.function.arguments || "{}"));
        history.push({ role: "tool", tool_call_id: call.id, content: result });
      }
    }
    const last = history[history.length - 1];
    console.log(JSON.stringify({ type: "reply", content: last.content ?? "" }));
  } catch (error) {
    console.error(error.stack);
    console.log(JSON.stringify({ type: "error", message: String(error.message) }));
  }
}
