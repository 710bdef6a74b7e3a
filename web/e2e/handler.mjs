// The apps' handler for the end-to-end stack, in the test process: a custom handler as Shoal
// calls one (docs/triggers.md, "Handler call"): `POST {handler.url}/{function}` with
// `{"Data": {"<binding>": "<message>"}, "Metadata": {"DequeueCount", …}}`, answered with
// `{"Outputs", "Logs", "ReturnValue"}`. Each message is JSON naming its order and what the
// handler does with it:
//   ok        2xx at once, with a log line;
//   hold      2xx once the test releases the gate (`hold()`): a backlog builds while held;
//   decline   HTTP 500, a failure (the worker keeps the answer's body in the error);
//   oversize  2xx with `Logs` and an `Outputs.receipt` larger than a queue message may be, so
//             writing the output fails: a failed attempt that keeps the handler's `Logs`.
// A declining order answers as `ok` once the test says the handler works again for it
// (`recover(order)`), as a fixed handler would when its failed messages are replayed.
// Every answer is recorded with the worker and instance that asked (`X-Shoal-Worker`,
// `X-Shoal-Instance`) and the message's DequeueCount (a queue's) or DeliveryCount (Service
// Bus's), so the journeys compare what the workers report with what happened.
// An HTTP trigger's request (`Data.<binding>` with its `Method`, `Query`, `Body`) is read the
// same way from its body, and answered through `ReturnValue` (the function's `$return` http
// output) with the order and the query it came with.

import { createServer } from "node:http";

/// Larger than the 64 KiB a Storage queue message may hold.
const OVERSIZE = "r".repeat(80 * 1024);

export async function startHandler() {
  const received = [];
  const answered = [];
  let gate = null;
  const recovered = new Set();

  const server = createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const fn = decodeURIComponent(new URL(req.url, "http://handler").pathname.split("/").pop());
    let message;
    let dequeueCount;
    let deliveryCount;
    let http;
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      const data = Object.values(body.Data ?? {})[0];
      http = data !== null && typeof data === "object" && typeof data.Method === "string" ? data : null;
      message = http ? JSON.parse(http.Body || "{}") : typeof data === "string" ? JSON.parse(data) : data;
      dequeueCount = Number(body.Metadata?.DequeueCount);
      deliveryCount = Number(body.Metadata?.DeliveryCount);
    } catch (e) {
      res.writeHead(400).end(String(e));
      return;
    }
    const worker = req.headers["x-shoal-worker"];
    const instance = req.headers["x-shoal-instance"];
    received.push({
      function: fn,
      order: message.order,
      outcome: message.outcome,
      dequeueCount,
      deliveryCount,
      worker,
      instance,
    });
    if (message.outcome === "hold" && gate) await gate.promise;
    const order = message.order;
    let status = 200;
    let reply;
    const outcome = message.outcome === "decline" && recovered.has(order) ? "ok" : message.outcome;
    switch (http ? "http" : outcome) {
      case "http":
        reply = {
          Logs: [`quoted order ${order}`],
          ReturnValue: {
            statusCode: 200,
            headers: { "Content-Type": "application/json" },
            body: JSON.stringify({ order, quoted: true, query: http.Query }),
          },
        };
        break;
      case "decline":
        status = 500;
        reply = { Logs: [`charging order ${order}`, "card declined"] };
        break;
      case "oversize":
        reply = {
          Outputs: { receipt: OVERSIZE },
          Logs: [`charging order ${order}`, `receipt for order ${order}: ${OVERSIZE.length} characters`],
          ReturnValue: null,
        };
        break;
      default:
        reply = { Outputs: {}, Logs: [`shipped order ${order}`], ReturnValue: null };
    }
    const text = JSON.stringify(reply);
    res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) });
    res.end(text, () =>
      answered.push({
        function: fn,
        order,
        outcome: message.outcome,
        status,
        dequeueCount,
        deliveryCount,
        worker,
        instance,
      }),
    );
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();

  return {
    url: `http://127.0.0.1:${port}/api`,
    /// Every request so far, as it arrived (held ones included).
    received: () => [...received],
    /// Every answer so far, in order.
    answered: () => [...answered],
    /// From now on `order` is shipped, not declined.
    recover(order) {
      recovered.add(order);
    },
    /// Holds `hold` messages until the returned function is called.
    hold() {
      let release;
      const promise = new Promise((resolve) => (release = resolve));
      gate = { promise, release };
      return () => {
        gate = null;
        release();
      };
    },
    async stop() {
      gate?.release();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
