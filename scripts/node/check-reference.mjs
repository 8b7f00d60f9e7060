// Drives Debian's Chromium (headless, playwright-core) through the hosted reference as a
// partner would: /docs lists ping with its summary, "Try it out" then "Execute" shows 200 with
// pong true and the service-request-id header, /docs/errors shows every code and
// /docs/errors#rate_limited scrolls to it. Fails on any console error and on any request that
// leaves the server's origin (the reference must work on a network without internet).
// Screenshots go to target/browser/ for a person to look at.
// Usage: node check-reference.mjs <origin> <screenshot dir> <code> [<code> ...]
import { chromium } from "playwright-core";
import fs from "node:fs";
import path from "node:path";

const [origin, shots, ...codes] = process.argv.slice(2);
const problems = [];
fs.mkdirSync(shots, { recursive: true });

const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  headless: true,
  args: [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
  ],
  // No --user-data-dir: playwright starts every launch with a fresh, temporary profile.
});

async function expectVisible(page, locator, what) {
  try {
    await locator.first().waitFor({ state: "visible", timeout: 15000 });
  } catch {
    await page.screenshot({ path: path.join(shots, "failure.png"), fullPage: true });
    throw new Error(`not found on ${page.url()}: ${what} (screenshot: ${shots}/failure.png)`);
  }
}

try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console error: ${message.text()}`);
  });
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("request", (request) => {
    const url = new URL(request.url());
    if (url.protocol !== "data:" && url.protocol !== "blob:" && url.origin !== origin) {
      problems.push(`request left the origin: ${request.url()}`);
    }
  });

  // The reference lists ping with its summary.
  await page.goto(`${origin}/docs/`);
  const ping = page.locator("#operations-Utility-ping");
  await expectVisible(page, ping, "the ping operation (#operations-Utility-ping)");
  await expectVisible(page, ping.getByText("Check that the API is reachable"), "ping's summary");
  await page.screenshot({ path: path.join(shots, "reference.png"), fullPage: true });

  // Try it out, Execute: 200, pong true, the request id header.
  await ping.locator(".opblock-summary").first().click();
  await expectVisible(page, ping.getByRole("button", { name: "Try it out" }), "Try it out");
  await ping.getByRole("button", { name: "Try it out" }).click();
  await expectVisible(page, ping.getByRole("button", { name: "Execute" }), "Execute");
  await ping.getByRole("button", { name: "Execute" }).click();
  const live = ping.locator(".live-responses-table");
  await expectVisible(page, live.locator(".response-col_status", { hasText: "200" }), "status 200");
  await expectVisible(page, live.getByText('"pong": true'), '"pong": true in the response body');
  await expectVisible(page, live.getByText("service-request-id"), "the service-request-id header");
  await page.screenshot({ path: path.join(shots, "try-it-out.png"), fullPage: true });

  // The error pages: every code, and the anchor of rate_limited.
  await page.goto(`${origin}/docs/errors`);
  for (const code of codes) {
    await expectVisible(page, page.locator(`section[id="${code}"]`), `the entry of ${code}`);
  }
  await page.goto(`${origin}/docs/errors#rate_limited`);
  const entry = page.locator("section#rate_limited");
  await expectVisible(page, entry, "section#rate_limited");
  const box = await entry.boundingBox();
  const viewport = page.viewportSize();
  if (!box || box.y < 0 || box.y > viewport.height / 2) {
    problems.push(`/docs/errors#rate_limited did not scroll to its entry (top at ${box?.y})`);
  }
  await page.screenshot({ path: path.join(shots, "errors-rate-limited.png") });
} finally {
  await browser.close();
}

if (problems.length > 0) {
  console.error(problems.map((problem) => `FAIL: ${problem}`).join("\n"));
  process.exit(1);
}
console.log(`ok: reference, try-it-out and ${codes.length} error entries checked; screenshots in ${shots}`);
