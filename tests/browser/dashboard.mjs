// Drives Debian's Chromium (through playwright-core) against a running dispatcher's dashboard:
// waits for the numbers to move, retries one dead row, takes a screenshot, pauses the queue.
// The C++ test that starts it (tests/http/test_browser.cpp) checks the effects in MySQL and
// Redis. Exits non-zero with a message on any failure.
//
//   node dashboard.mjs --url http://127.0.0.1:PORT/ --token TOKEN --queue users \
//       --dead-id 2 [--worker ID:HOST:LANG:VERSION:DONE] [--screenshot out.png] [--pause]
//   node dashboard.mjs --url ... --queue tenants --key TEXT --key-limits LIMITS
//       (group_by: the Keys and Per-key limits tables show the key TEXT, which may hold markup,
//       as text, with LIMITS; no script of it ran)
import { chromium } from "playwright-core";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";

const { values: args } = parseArgs({
  options: {
    url: { type: "string" },
    token: { type: "string" },
    queue: { type: "string", default: "users" },
    "dead-id": { type: "string" },
    worker: { type: "string" },
    screenshot: { type: "string" },
    pause: { type: "boolean", default: false },
    key: { type: "string" },
    "key-limits": { type: "string" },
    chromium: { type: "string", default: "/usr/bin/chromium" },
  },
});
const step = (text) => console.log(`[dashboard.mjs] ${text}`);

const profile = mkdtempSync(join(tmpdir(), "rowpump-chromium-"));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: args.chromium,
  headless: true,
  viewport: { width: 1280, height: 900 },
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
try {
  const page = context.pages()[0] || (await context.newPage());
  page.setDefaultTimeout(20000);
  page.on("pageerror", (e) => step(`page error: ${e.message}`));
  await page.goto(args.url);
  const queue = page.locator(`#queue-${args.queue}`);
  await queue.waitFor();
  step("the page shows the queue");

  if (args.key !== undefined) {
    // The key's row: the one whose key cell holds the key's first line.
    const rowOf = (table) => queue.locator(`.${table} tbody tr`).filter({
      has: page.locator("td.key", { hasText: args.key.split("\n")[0] }) });
    const keyRow = rowOf("key-rows");
    await keyRow.first().waitFor();
    const cells = await keyRow.first().locator("td").evaluateAll((tds) => tds.map((td) => td.textContent));
    if (cells[0] !== args.key) throw new Error(`key cell ${JSON.stringify(cells[0])}, expected ${JSON.stringify(args.key)}`);
    if (cells[5] !== args["key-limits"]) throw new Error(`limits cell ${JSON.stringify(cells[5])}`);
    const limitRow = rowOf("key-limits");
    await limitRow.first().waitFor();
    const limitCells = await limitRow.first().locator("td").evaluateAll((tds) => tds.map((td) => td.textContent));
    if (JSON.stringify(limitCells) !== JSON.stringify([args.key, args["key-limits"]]))
      throw new Error(`per-key limits row ${JSON.stringify(limitCells)}`);
    const injected = await page.evaluate(() => ({ ran: window.rp_xss, scripts: document.scripts.length }));
    if (injected.ran !== undefined || injected.scripts !== 1)
      throw new Error(`markup of the key was run: ${JSON.stringify(injected)}`);
    step(`the Keys table shows the key as text: ${JSON.stringify(cells)}`);
  } else {
    // The numbers change: the done/s tile shows work, and the completed count moves on.
    await page.waitForFunction((q) => {
      const text = document.querySelector(`#queue-${q} .done_rate`).textContent;
      return /^[0-9,]+$/.test(text) && Number(text.replace(/,/g, "")) > 0;
    }, args.queue);
    const first = await queue.locator(".dispatched_rate").textContent();
    step(`done/s > 0; dispatched/s ${first}`);
  }

  if (args.worker) {
    // The Workers table shows what the worker's heartbeat says, as text.
    const [id, host, lang, version, done] = args.worker.split(":");
    const row = queue.locator(`.worker-rows tbody tr[data-id="${id}"]`);
    await row.waitFor();
    const cells = await row.locator("td").allTextContents();
    const want = [id, host, lang, version, "0", done];
    if (JSON.stringify(cells.slice(0, 6)) !== JSON.stringify(want)) {
      throw new Error(`worker row ${JSON.stringify(cells)}, expected ${JSON.stringify(want)} first`);
    }
    if (!/ ago$/.test(cells[6])) throw new Error(`last heartbeat '${cells[6]}'`);
    step(`the Workers table shows ${cells.join(" | ")}`);
  }
  if (args["dead-id"]) {
    await page.fill("#token", args.token);
    const row = queue.locator(`tbody tr[data-id="${args["dead-id"]}"]`);
    await row.waitFor();
    await row.locator('button[data-action="retry"]').click();
    await page.locator("#toast", { hasText: "1 dead row(s) due again" }).waitFor();
    await row.waitFor({ state: "detached" });
    step(`retried dead row ${args["dead-id"]}`);
  }
  if (args.screenshot) {
    // Let the charts gather a few more points: three samples more than they hold now.
    const held = await page.evaluate((q) => queues.get(q).history.length, args.queue);
    await page.waitForFunction(([q, n]) => queues.get(q).history.length >= n,
                               [args.queue, held + 3]);
    await page.screenshot({ path: args.screenshot, fullPage: true });
    step(`screenshot ${args.screenshot}`);
  }
  if (args.pause) {
    await page.fill("#token", args.token);
    await queue.locator("button.pause").click();
    await queue.locator(".state", { hasText: "paused" }).waitFor();
    step("paused");
  }
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
