// Drives Debian's Chromium (headless, playwright-core) through the hosted reference as a
// partner would: /docs/ is titled and headed with the service's name, shows that one title only
// with the contract version (info.version) under it, has no "Explore" bar and links the error
// pages, the changelog and both OpenAPI documents (each answering 200); it lists
// ping with its summary, and "Execute" works at once (try-it-out is on from the first load),
// showing 200 with pong true, the service-request-id header and the curl snippet of the
// request; the operation shows its code samples (x-codeSamples), each language's exactly, and
// its shared error responses as one compact list linking each code, and the envelope, to
// /docs/errors. /docs/errors shows every code and /docs/errors#rate_limited scrolls to it. A repeat
// visit of /docs/ comes from the browser's cache or 304s: the bytes transferred are counted and
// must be under a twentieth of the first visit's. Fails on any console error (a breach of the
// Content-Security-Policy is one) and on any request that leaves the server's origin (the
// reference must work on a network without internet).
// Then, at a desktop (1366x900) and two phone (390x844, 320x640) viewports, each of /docs/
// (ping expanded and executed, its live 200 shown), /docs/errors and /docs/changelog (every
// <details> open) is audited with axe-core against WCAG 2.0, 2.1 and 2.2 A and AA and axe's
// best practices: any violation of any impact fails (low contrast is one), and so does a page
// wider than the viewport (document.documentElement.scrollWidth > window.innerWidth:
// horizontal scrolling).
// axe-core is evaluated through the DevTools protocol (page.evaluate), which the page's
// Content-Security-Policy does not apply to, so the audit runs with the policy enforced.
// Screenshots go to target/browser/ for a person to look at: reference.png, try-it-out.png,
// errors-rate-limited.png, and per page, width and colour scheme a full page and its first
// screen, e.g. reference-390.png, reference-390-top.png, errors-1366-dark.png,
// changelog-320-dark-top.png.
// For development only: with PARTNER_API_ASSETS_DIR set to a directory (src/docs/assets), the
// browser gets docs.css and reference.js from there instead of from the server, so a change to
// them can be checked without rebuilding; routing disables the browser's cache, so the repeat
// visit's byte count is then reported but not checked. scripts/check-browser never sets it.
// With KEYED_ORIGIN (the example server's origin) and PARTNER_API_KEY set, it audits that
// server's reference instead, every keyed operation expanded and executed
// (auditKeyedReference).
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
// WCAG 2.0 to 2.2 A and AA, and axe's best practices (one main landmark, all content in
// landmarks, headings in order): any violation of any impact fails.
const WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"];
// A desktop and two phones.
const VIEWPORTS = [
  { width: 1366, height: 900 }, { width: 390, height: 844 }, { width: 320, height: 640 },
];

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

// Records console errors, page errors and requests that leave the origin. Where operations
// are executed (`executed`), the browser's own line for an API answer of 4xx (a 404 once a
// thing is deleted) is the answer shown, not an error of the page.
function watch(page, allowed = origin, executed = false) {
  page.on("console", (message) => {
    if (message.type() !== "error") return;
    const answered = executed && message.location().url.startsWith(`${allowed}/v1/`) &&
      /^Failed to load resource: the server responded with a status of 4\d\d/.test(message.text());
    if (!answered) problems.push(`console error: ${message.text()} (${message.location().url})`);
  });
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("request", (request) => {
    const url = new URL(request.url());
    if (url.protocol !== "data:" && url.protocol !== "blob:" && url.origin !== allowed) {
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

// Keyboard focus on `locator`, reached with Tab (so that :focus-visible applies), must show
// an outline at least 2 px wide whose colour has at least 3:1 contrast against both its
// neighbours: the background around the control outside, and inside the control's own, or,
// for a ring offset from the control, the background around again (WCAG 2.2, 2.4.7 and
// 2.4.11).
async function checkFocusRing(page, locator, what) {
  await locator.focus();
  await page.keyboard.press("Shift+Tab");
  await page.keyboard.press("Tab");
  const ring = await page.evaluate(() => {
    const parse = (colour) => {
      const [r, g, b, a = 1] = colour.match(/[\d.]+/g).map(Number);
      return { r, g, b, a };
    };
    // The first opaque-enough background at or above `element`, white at the top.
    const background = (element) => {
      for (let at = element; at; at = at.parentElement) {
        const colour = parse(getComputedStyle(at).backgroundColor);
        if (colour.a > 0.5) return colour;
      }
      return { r: 255, g: 255, b: 255, a: 1 };
    };
    const luminance = ({ r, g, b }) => [r, g, b]
      .map((value) => value / 255)
      .map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4))
      .reduce((sum, c, index) => sum + c * [0.2126, 0.7152, 0.0722][index], 0);
    const contrast = (a, b) => {
      const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x);
      return (light + 0.05) / (dark + 0.05);
    };
    const focused = document.activeElement;
    const style = getComputedStyle(focused);
    const outline = parse(style.outlineColor);
    return {
      tag: focused.tagName.toLowerCase() + (focused.textContent || "").trim().slice(0, 20),
      visible: focused.matches(":focus-visible"),
      style: style.outlineStyle,
      width: parseFloat(style.outlineWidth),
      offset: parseFloat(style.outlineOffset) || 0,
      around: contrast(outline, background(focused.parentElement)),
      // The ring's inner neighbour: the control itself, unless the ring stands off it, when
      // the background around shows between the two.
      own: contrast(outline, background(parseFloat(style.outlineOffset) > 0
        ? focused.parentElement : focused)),
      colours: `${style.outlineColor} on ${JSON.stringify(background(focused.parentElement))}`,
    };
  });
  const summary = `${what}: focus ${ring.tag}, outline ${ring.style} ${ring.width} px ` +
    `${ring.offset} px off the control, contrast ${ring.around.toFixed(1)}:1 outside, ` +
    `${ring.own.toFixed(1)}:1 inside (${ring.colours})`;
  console.log(summary);
  if (!ring.visible || ring.style === "none" || ring.width < 2 || ring.around < 3 || ring.own < 3) {
    problems.push(`keyboard focus not visible enough: ${summary}`);
  }
}

// Audits the page as it is now with axe-core, and its width against the viewport's; saves a
// full-page screenshot as <name>-<width>.png. Records problems rather than throwing, so that
// one run reports every page at every width.
async function audit(page, name, scheme) {
  const width = page.viewportSize().width;
  const dark = scheme === "dark";
  const where = `${name} at ${width} px${dark ? ", dark" : ""}`;
  // The page follows the reader's colour scheme: a dark page under a dark system.
  const shade = await page.evaluate(() => {
    // A transparent body shows the light canvas: the dark pages set their own background.
    const [r, g, b, a = 1] = getComputedStyle(document.body).backgroundColor.match(/[\d.]+/g)
      .map(Number);
    return a === 0 ? 255 : (r + g + b) / 3;
  });
  if (dark !== shade < 80) {
    problems.push(`${where}: the page's background (${shade.toFixed(0)} of 255) is not ${scheme}`);
  }
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
  // Nothing lies over an answer or an example: Swagger UI's Download and Copy buttons stand
  // beside the block, not in its corner over the text.
  const covered = await page.evaluate(() => [...document.querySelectorAll(
    ".highlight-code > .download-contents, .highlight-code > .copy-to-clipboard")]
    .filter((button) => {
      const block = button.closest(".highlight-code").querySelector("pre");
      if (!block) return false;
      const b = button.getBoundingClientRect();
      const a = block.getBoundingClientRect();
      return b.bottom > a.top && b.top < a.bottom && b.right > a.left && b.left < a.right;
    }).length);
  if (covered > 0) problems.push(`${where}: a Download or Copy button lies over ${covered} block(s)`);
  if (!(await page.evaluate(() => typeof window.axe === "object"))) await page.evaluate(axeSource);
  const violations = await page.evaluate((tags) => window.axe
    .run(document, { runOnly: { type: "tag", values: tags } })
    .then((results) => results.violations.map((violation) => ({
      id: violation.id,
      impact: violation.impact,
      help: violation.help,
      count: violation.nodes.length,
      targets: violation.nodes.slice(0, 4).map((node) => node.target.join(" ")),
      detail: violation.nodes.map((node) => {
        const data = (node.any[0] || {}).data || {};
        return `${node.target.join(" ").split(" ").slice(-2).join(" ")} ${data.fgColor} on ${data.bgColor}`;
      }),
    }))), WCAG_TAGS);
  const summary = violations.map((violation) => `${violation.id} (${violation.impact}, ` +
    `${violation.count}×)`).join(", ") || "none";
  console.log(`${where}: scrollWidth ${scroll.scrollWidth} of ${scroll.innerWidth}; ` +
    `axe violations: ${summary}`);
  for (const violation of violations) {
    if (process.env.AXE_DETAIL) console.log([...new Set(violation.detail)].join("\n"));
    problems.push(`${where}: axe ${violation.id} (${violation.impact}): ${violation.help}; ` +
      `${violation.count} element(s), e.g. ${violation.targets.join(" | ")}`);
  }
  await page.screenshot({
    path: path.join(shots, `${name}-${width}${dark ? "-dark" : ""}.png`), fullPage: true,
  });
  // And what the reader sees first, at a size a person can look at.
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: path.join(shots, `${name}-${width}${dark ? "-dark" : ""}-top.png`) });
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


// The reference of the example server (examples/rehearsal: every kind of operation, behind a
// key), as a partner with a key uses it, at each width and colour scheme: the key given
// through Authorize, every operation expanded and executed (the creates with their bodies'
// examples), each answer shown; then audited as above (axe-core with no violation of any
// impact, no sideways scrolling) and screenshot (reference-keyed-<width>[-dark].png).
async function auditKeyedReference(keyedOrigin, key) {
  for (const scheme of ["light", "dark"]) for (const viewport of VIEWPORTS) {
    const audited = await browser.newContext({ viewport, colorScheme: scheme });
    const at = `${viewport.width} px${scheme === "dark" ? ", dark" : ""}`;
    await overrideAssets(audited);
    const tab = await audited.newPage();
    watch(tab, keyedOrigin, true);
    await tab.goto(`${keyedOrigin}/docs/`);
    const operations = tab.locator(".opblock");
    await expectVisible(tab, operations, `the operations at ${at}`);
    await tab.locator(".auth-wrapper button.authorize").click();
    const dialog = tab.locator(".dialog-ux");
    await dialog.locator("input").first().fill(key);
    await dialog.locator("button.modal-btn.authorize").click();
    await dialog.locator("button.modal-btn.btn-done").click();
    const count = await operations.count();
    for (let index = 0; index < count; index += 1) {
      const operation = operations.nth(index);
      await operation.locator(".opblock-summary").first().click();
      await expectVisible(tab, operation.getByRole("button", { name: "Execute" }),
        `Execute of operation ${index + 1} at ${at}`);
    }
    for (let index = 0; index < count; index += 1) {
      const operation = operations.nth(index);
      await operation.getByRole("button", { name: "Execute" }).click();
      const answered = operation.locator(".live-responses-table tbody .response-col_status");
      await expectVisible(tab, answered, `the live answer of operation ${index + 1} at ${at}`);
      const status = (await answered.first().innerText()).trim();
      if (status === "401" || status === "403") {
        problems.push(`operation ${index + 1} at ${at} answered ${status}: Authorize did not take the key`);
      }
      if ((await operation.locator(".code-samples").count()) !== 1 ||
        (await operation.locator(".request-snippets").count()) !== 0) {
        problems.push(`operation ${index + 1} at ${at} has not exactly one block of code samples`);
      }
    }
    await tab.waitForLoadState("networkidle");
    console.log(`${count} operations expanded and executed at ${at}`);
    await audit(tab, "reference-keyed", scheme);
    await audited.close();
  }
}

// The published reference, its pages and every check above.
async function checkPublishedReference() {
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
  // The schema list holds what the operations use, not what the document publishes for the
  // endpoints to come.
  const listed = page.locator("section.models .json-schema-2020-12__title");
  await expectVisible(page, listed.getByText("Ping", { exact: true }), "the Ping schema in the list");
  const names = (await listed.allInnerTexts()).map((name) => name.trim());
  for (const unused of ["ListEnvelope", "ListCursor", "ListLimit", "Id"]) {
    if (names.includes(unused)) {
      problems.push(`the schema list shows ${unused}, which no operation uses: ${names.join(", ")}`);
    }
  }
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
  // One block of code samples per operation: Swagger UI's own request snippets stay off.
  if ((await ping.locator(".request-snippets").count()) !== 0) {
    problems.push("ping shows Swagger UI's request snippets beside its code samples");
  }
  if ((await ping.locator(".code-samples").count()) !== 1) {
    problems.push(`ping shows ${await ping.locator(".code-samples").count()} blocks of code samples`);
  }
  await page.screenshot({ path: path.join(shots, "try-it-out.png"), fullPage: true });

  // The code samples: one per language of the document's x-codeSamples, curl shown first,
  // each button showing its language's sample exactly, naming the served origin.
  const { paths } = await (await page.request.get(`${origin}/openapi/v1.json`)).json();
  const pingGet = paths["/ping"].get;
  const samples = ping.locator(".code-samples");
  await expectVisible(page, samples.locator("pre.code-sample"), "the code samples");
  const firstShown = await samples.locator("pre.code-sample").innerText();
  if (firstShown.trim() !== pingGet["x-codeSamples"][0].source.trim()) {
    problems.push(`the first sample shown is not ${pingGet["x-codeSamples"][0].label}: ${firstShown}`);
  }
  for (const sample of pingGet["x-codeSamples"]) {
    const button = samples.getByRole("button", { name: sample.label, exact: true });
    await button.click();
    const shown = await samples.locator("pre.code-sample").innerText();
    if ((await button.getAttribute("aria-pressed")) !== "true" || shown.trim() !== sample.source.trim()) {
      problems.push(`the ${sample.label} button shows: ${shown}`);
    }
    if (!shown.includes(`${origin}/v1/ping`)) problems.push(`the ${sample.label} sample does not call ${origin}/v1/ping`);
  }
  // The shared errors: no response block of their own, one compact list whose codes link to
  // their entries on /docs/errors, and the envelope to that page, which shows it.
  for (const status of Object.keys(pingGet.responses).filter((status) => !status.startsWith("2"))) {
    if ((await ping.locator(`.responses-table tr.response[data-code="${status}"]`).count()) !== 0) {
      problems.push(`ping renders a response block for ${status}, not only the compact list`);
    }
  }
  const sharedErrors = ping.locator(".shared-errors");
  await expectVisible(page, sharedErrors, "the compact list of shared errors");
  for (const code of codes.filter((code) => code !== "resource_missing")) {
    if ((await sharedErrors.locator(`a[href="errors#${code}"]`).count()) !== 1) {
      problems.push(`the compact error list has no link to errors#${code}`);
    }
  }
  for (const status of ["502", "503", "504"]) {
    if (!(await sharedErrors.innerText()).includes(status)) problems.push(`the compact error list omits ${status}`);
  }
  if ((await sharedErrors.getByRole("link", { name: "error envelope", exact: true }).getAttribute("href")) !== "errors") {
    problems.push("the compact error list does not link the error envelope to the errors page, which shows it");
  }

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
  for (const scheme of ["light", "dark"]) for (const viewport of VIEWPORTS) {
    const audited = await browser.newContext({ viewport, colorScheme: scheme });
    const at = `${viewport.width} px${scheme === "dark" ? ", dark" : ""}`;
    await overrideAssets(audited);
    const tab = await audited.newPage();
    watch(tab);

    // The reference as a partner uses it: ping open and executed, its live answer shown.
    await tab.goto(`${origin}/docs/`);
    const operation = tab.locator("#operations-Utility-ping");
    await expectVisible(tab, operation, `the ping operation at ${at}`);
    await operation.locator(".opblock-summary").first().click();
    await expectVisible(tab, operation.getByRole("button", { name: "Execute" }), "Execute");
    await operation.getByRole("button", { name: "Execute" }).click();
    await expectVisible(tab, operation.locator(".live-responses-table .response-col_status",
      { hasText: "200" }), `the live 200 of ping at ${at}`);
    await tab.waitForLoadState("networkidle");
    await checkFocusRing(tab, operation.getByRole("button", { name: "Execute" }), `Execute at ${at}`);
    await checkFocusRing(tab, tab.locator("nav.site a").nth(1), `the navigation at ${at}`);
    await audit(tab, "reference", scheme);

    await tab.goto(`${origin}/docs/errors`);
    await checkFocusRing(tab, tab.locator("main section h3 a").first(),
      `an entry's link on the errors page at ${at}`);
    await audit(tab, "errors", scheme);

    await tab.goto(`${origin}/docs/changelog`);
    await tab.locator("details").evaluateAll((all) => all.forEach((details) => { details.open = true; }));
    await audit(tab, "changelog", scheme);

    await tab.goto(`${origin}/docs/guide`);
    await expectVisible(tab, tab.locator("h2#support-and-escalation"), `the guide's support section at ${at}`);
    await audit(tab, "guide", scheme);
    await audited.close();
  }
}

try {
  if (process.env.KEYED_ORIGIN) {
    await auditKeyedReference(process.env.KEYED_ORIGIN, process.env.PARTNER_API_KEY);
  } else {
    await checkPublishedReference();
  }
} finally {
  await browser.close();
}

if (problems.length > 0) {
  console.error(problems.map((problem) => `FAIL: ${problem}`).join("\n"));
  process.exit(1);
}
console.log(process.env.KEYED_ORIGIN
  ? `ok: the keyed reference, every operation executed, audited at three widths, light and dark; screenshots in ${shots}`
  : `ok: reference, try-it-out and ${codes.length} error entries checked, ` +
    `four pages audited at three widths, light and dark; screenshots in ${shots}`);
