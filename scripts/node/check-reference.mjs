// Drives Debian's Chromium (headless, playwright-core) through the hosted reference as a
// partner would: /docs/ is titled and headed with the service's name, shows that one title only
// with the contract version (info.version) under it, has no "Explore" bar and links the error
// pages, the changelog and both OpenAPI documents (each answering 200); it lists
// ping with its summary, and "Execute" works at once (try-it-out is on from the first load),
// showing 200 with pong true, the service-request-id header and the curl snippet of the
// request. /docs/errors shows every code and /docs/errors#rate_limited scrolls to it. A repeat
// visit of /docs/ comes from the browser's cache or 304s: the bytes transferred are counted and
// must be under a twentieth of the first visit's. Fails on any console error (a breach of the
// Content-Security-Policy is one) and on any request that leaves the server's origin (the
// reference must work on a network without internet).
// Then, at a desktop (1366x900) and a phone (390x844) viewport, each of /docs/ (ping expanded
// and executed, its live 200 shown), /docs/errors and /docs/changelog (every <details> open) is
// audited with axe-core against WCAG 2.0, 2.1 and 2.2 A and AA: any violation of impact
// "serious" or "critical" fails (low contrast is one), and so does a page wider than the
// viewport (document.documentElement.scrollWidth > window.innerWidth: horizontal scrolling).
// axe-core is evaluated through the DevTools protocol (page.evaluate), which the page's
// Content-Security-Policy does not apply to, so the audit runs with the policy enforced.
// Screenshots go to target/browser/ for a person to look at: reference.png, try-it-out.png,
// errors-rate-limited.png, and a full page per page and width, e.g. reference-390.png,
// errors-1366.png, changelog-390.png.
// For development only: with PARTNER_API_ASSETS_DIR set to a directory (src/docs/assets), the
// browser gets docs.css and reference.js from there instead of from the server, so a change to
// them can be checked without rebuilding; routing disables the browser's cache, so the repeat
// visit's byte count is then reported but not checked. scripts/check-browser never sets it.
// Usage: node check-reference.mjs <origin> <screenshot dir> <code> [<code> ...]
import { chromium } from "playwright-core";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const [origin, shots, ...codes] = process.argv.slice(2);
const problems = [];
fs.mkdirSync(shots, { recursive: true });
const assetsDir = process.env.PARTNER_API_ASSETS_DIR;
const axeSource = fs.readFileSync(
  path.join(path.dirname(fileURLToPath(import.meta.url)), "node_modules/axe-core/axe.min.js"),
  "utf8",
);
// The rule sets the audit runs: WCAG 2.0, 2.1 and 2.2, levels A and AA.
const WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"];

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

// Records console errors, page errors and requests that leave the origin.
function watch(page) {
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
}

// With PARTNER_API_ASSETS_DIR set, every page of `context` gets docs.css and reference.js from
// that directory (development only: see the header).
async function overrideAssets(context) {
  if (!assetsDir) return;
  for (const [name, type] of [["docs.css", "text/css"], ["reference.js", "text/javascript"]]) {
    await context.route(`**/docs/${name}`, (route) => route.fulfill({
      status: 200,
      contentType: `${type}; charset=utf-8`,
      body: fs.readFileSync(path.join(assetsDir, name), "utf8"),
    }));
  }
}

// Audits the page as it is now with axe-core, and its width against the viewport's; saves a
// full-page screenshot as <name>-<width>.png. Records problems rather than throwing, so that
// one run reports every page at every width.
async function audit(page, name) {
  const width = page.viewportSize().width;
  const where = `${name} at ${width} px`;
  const scroll = await page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth,
    innerWidth: window.innerWidth,
  }));
  if (scroll.scrollWidth > scroll.innerWidth) {
    // The elements whose box, or right margin (a flex item's counts), passes the right edge.
    const widest = await page.evaluate((limit) => [...document.querySelectorAll("body *")]
      .map((element) => ({
        element,
        right: element.getBoundingClientRect().right +
          Math.max(0, parseFloat(getComputedStyle(element).marginRight) || 0),
      }))
      .filter(({ right }) => right > limit + 0.5)
      .slice(-3)
      .map(({ element, right }) => {
        const classes = typeof element.className === "string" && element.className.trim()
          ? `.${element.className.trim().split(/\s+/).join(".")}` : "";
        return `${element.tagName.toLowerCase()}${classes} (to ${Math.round(right)} px)`;
      }), scroll.innerWidth);
    problems.push(`${where} scrolls sideways: scrollWidth ${scroll.scrollWidth} > ` +
      `innerWidth ${scroll.innerWidth}; sticking out: ${widest.join("; ")}`);
  }
  if (!(await page.evaluate(() => typeof window.axe === "object"))) await page.evaluate(axeSource);
  const violations = await page.evaluate((tags) => window.axe
    .run(document, { runOnly: { type: "tag", values: tags } })
    .then((results) => results.violations.map((violation) => ({
      id: violation.id,
      impact: violation.impact,
      help: violation.help,
      count: violation.nodes.length,
      targets: violation.nodes.slice(0, 4).map((node) => node.target.join(" ")),
    }))), WCAG_TAGS);
  const summary = violations.map((violation) => `${violation.id} (${violation.impact}, ` +
    `${violation.count}×)`).join(", ") || "none";
  console.log(`${where}: scrollWidth ${scroll.scrollWidth} of ${scroll.innerWidth}; ` +
    `axe violations: ${summary}`);
  for (const violation of violations) {
    if (violation.impact === "serious" || violation.impact === "critical") {
      problems.push(`${where}: axe ${violation.id} (${violation.impact}): ${violation.help}; ` +
        `${violation.count} element(s), e.g. ${violation.targets.join(" | ")}`);
    }
  }
  await page.screenshot({ path: path.join(shots, `${name}-${width}.png`), fullPage: true });
}

// Counts the bytes the page receives over the network (headers and bodies as sent, so a cache
// hit counts 0 and a 304 only its headers), and how each response was served.
async function countTransfer(context, page) {
  const session = await context.newCDPSession(page);
  await session.send("Network.enable");
  let bytes = 0;
  const served = {};
  session.on("Network.loadingFinished", (event) => { bytes += event.encodedDataLength; });
  const count = (how) => { served[how] = (served[how] ?? 0) + 1; };
  // The status as sent on the wire (a revalidated file is a 304 there, a 200 to the page).
  session.on("Network.responseReceivedExtraInfo", (event) => count(`${event.statusCode} sent`));
  session.on("Network.responseReceived", (event) => {
    if (event.response.fromDiskCache) count("from disk cache");
  });
  session.on("Network.requestServedFromCache", () => count("from memory cache"));
  return {
    bytes: () => bytes,
    statuses: () => Object.entries(served).map(([how, times]) => `${times}× ${how}`).join(", "),
  };
}

try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await overrideAssets(context);
  const page = await context.newPage();
  watch(page);

  // The reference names the service, has no Explore bar, and links what a partner needs.
  const firstVisit = await countTransfer(context, page);
  await page.goto(`${origin}/docs/`);
  const ping = page.locator("#operations-Utility-ping");
  await expectVisible(page, ping, "the ping operation (#operations-Utility-ping)");
  await expectVisible(page, ping.getByText("Check that the API is reachable"), "ping's summary");
  await page.waitForLoadState("networkidle");
  const firstBytes = firstVisit.bytes();
  const title = await page.title();
  if (title !== "API reference · partner-api") problems.push(`page title is "${title}"`);
  const heading = await page.locator("h1").first().innerText();
  if (heading !== "partner-api reference") problems.push(`page heading is "${heading}"`);
  if ((await page.locator(".topbar").count()) !== 0) problems.push("the Explore bar is shown");
  // One title (Swagger UI's own is hidden), and the contract version shown under it.
  const headings = (await page.locator("h1:visible").allInnerTexts())
    .map((text) => text.replace(/\s+/g, " ").trim());
  if (headings.length !== 1) problems.push(`the reference shows ${headings.length} titles: ${headings.join(" | ")}`);
  const { info } = await (await page.request.get(`${origin}/openapi/v1.json`)).json();
  await page.locator("header.reference").getByText(info.version).first()
    .waitFor({ state: "visible", timeout: 5000 })
    .catch(() => problems.push(`the contract version ${info.version} is not under the heading`));
  for (const href of ["errors", "changelog", "../openapi/v1.yaml", "../openapi/v1.json",
    "../openapi/v1.oas30.yaml", "../openapi/v1.oas30.json"]) {
    const link = page.locator(`nav a[href="${href}"]`);
    if ((await link.count()) === 0) {
      problems.push(`no link to ${href}`);
      continue;
    }
    const target = new URL(href, `${origin}/docs/`).toString();
    const answer = await page.request.get(target);
    if (answer.status() !== 200) problems.push(`${target} answered ${answer.status()}`);
  }
  await page.screenshot({ path: path.join(shots, "reference.png"), fullPage: true });

  // Execute works at once (no "Try it out" click): 200, pong true, the request id header, and
  // the curl snippet of the request.
  await ping.locator(".opblock-summary").first().click();
  await expectVisible(page, ping.getByRole("button", { name: "Execute" }), "Execute, without Try it out");
  await ping.getByRole("button", { name: "Execute" }).click();
  const live = ping.locator(".live-responses-table");
  await expectVisible(page, live.locator(".response-col_status", { hasText: "200" }), "status 200");
  await expectVisible(page, live.getByText('"pong": true'), '"pong": true in the response body');
  await expectVisible(page, live.getByText("service-request-id"), "the service-request-id header");
  await expectVisible(page, ping.locator(".request-snippets"), "the request snippets");
  const snippet = await ping.locator(".request-snippets").first().innerText();
  if (!snippet.includes("curl -X 'GET'") || !snippet.includes(`${origin}/v1/ping`)) {
    problems.push(`the curl snippet is not the request: ${snippet}`);
  }
  await page.screenshot({ path: path.join(shots, "try-it-out.png"), fullPage: true });

  // A repeat visit, as a partner coming back: from the cache, or 304s.
  const again = await context.newPage();
  watch(again);
  const repeat = await countTransfer(context, again);
  await again.goto(`${origin}/docs/`);
  await expectVisible(again, again.locator("#operations-Utility-ping"), "ping, on the repeat visit");
  await again.waitForLoadState("networkidle");
  const repeatBytes = repeat.bytes();
  console.log(`first visit: ${firstBytes} bytes transferred; repeat visit: ${repeatBytes} bytes ` +
    `(${repeat.statuses()})`);
  if (assetsDir) {
    console.log("PARTNER_API_ASSETS_DIR is set: routing disables the cache, repeat visit not checked");
  } else if (firstBytes < 100000 || repeatBytes * 20 > firstBytes) {
    problems.push(`the repeat visit transferred ${repeatBytes} bytes of the first visit's ${firstBytes}`);
  }
  await again.close();

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
  await context.close();

  // Accessibility and width, on a desktop and on a phone.
  for (const viewport of [{ width: 1366, height: 900 }, { width: 390, height: 844 }]) {
    const audited = await browser.newContext({ viewport });
    await overrideAssets(audited);
    const tab = await audited.newPage();
    watch(tab);

    // The reference as a partner uses it: ping open and executed, its live answer shown.
    await tab.goto(`${origin}/docs/`);
    const operation = tab.locator("#operations-Utility-ping");
    await expectVisible(tab, operation, `the ping operation at ${viewport.width} px`);
    await operation.locator(".opblock-summary").first().click();
    await expectVisible(tab, operation.getByRole("button", { name: "Execute" }), "Execute");
    await operation.getByRole("button", { name: "Execute" }).click();
    await expectVisible(tab, operation.locator(".live-responses-table .response-col_status",
      { hasText: "200" }), `the live 200 of ping at ${viewport.width} px`);
    await tab.waitForLoadState("networkidle");
    await audit(tab, "reference");

    await tab.goto(`${origin}/docs/errors`);
    await audit(tab, "errors");

    await tab.goto(`${origin}/docs/changelog`);
    await tab.locator("details").evaluateAll((all) => all.forEach((details) => { details.open = true; }));
    await audit(tab, "changelog");
    await audited.close();
  }
} finally {
  await browser.close();
}

if (problems.length > 0) {
  console.error(problems.map((problem) => `FAIL: ${problem}`).join("\n"));
  process.exit(1);
}
console.log(`ok: reference, try-it-out and ${codes.length} error entries checked, three pages ` +
  `audited at two widths; screenshots in ${shots}`);
