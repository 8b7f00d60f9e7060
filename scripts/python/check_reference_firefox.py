"""The hosted reference in Firefox: Debian's firefox-esr, headless, driven through Marionette
(Mozilla's marionette_driver; Playwright's Firefox needs its own patched build, and its WebDriver
BiDi path needs commands this Firefox lacks). What scripts/node/check-reference.mjs audits in
Chromium, audited again here, at 1366, 390 and 320 CSS pixels, light and dark:

- the published reference with ping expanded and executed, the errors page, the changelog
  (every <details> open) and the guide;
- with a key, the example server's reference: the key given through Authorize, every operation
  expanded and executed.

Each page is audited with axe-core (WCAG 2.0 to 2.2 A and AA and best practices: any violation
of any impact fails) and must be no wider than the viewport; no answer or example may lie under
its Download or Copy button. A screenshot of what the reader sees first lands in
SHOTS as firefox-<page>-<width>[-dark].png.

Firefox's window is at least 500 pixels wide, so a phone's width is its page area narrowed
inside the window, as its Responsive Design Mode does (the tab's <browser> element held to
that width, from Firefox's own chrome, which -remote-allow-system-access lets Marionette
script): the page sees exactly 390 or 320 CSS pixels.

    check_reference_firefox.py ORIGIN SHOTS AXE [KEYED_ORIGIN KEY]
"""

import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from marionette_driver.marionette import Marionette

ORIGIN, SHOTS, AXE = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]).read_text()
KEYED = sys.argv[4:6] if len(sys.argv) > 5 else None
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]
VIEWPORTS = [(1366, 900), (390, 844), (320, 640)]
problems = []


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Firefox:
    """A headless firefox-esr of its own profile, showing `width` CSS pixels in `scheme`."""

    def __init__(self, width, height, scheme):
        self.profile = tempfile.mkdtemp(prefix="partner-api-firefox-")
        self.port = free_port()
        prefs = {
            "marionette.port": self.port,
            # 0: dark, 1: light, as the reader's system would ask.
            "layout.css.prefers-color-scheme.content-override": 0 if scheme == "dark" else 1,
            "browser.shell.checkDefaultBrowser": "false",
            "datareporting.policy.dataSubmissionEnabled": "false",
            "toolkit.telemetry.reportingpolicy.firstRun": "false",
            "app.update.disabledForTesting": "true",
        }
        lines = [f'user_pref("{name}", {value});' for name, value in prefs.items()]
        Path(self.profile, "user.js").write_text("\n".join(lines) + "\n")
        self.process = subprocess.Popen(
            ["/usr/bin/firefox-esr", "--headless", "--marionette", "-remote-allow-system-access",
             "--no-remote", "--profile", self.profile],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env=dict(os.environ, HOME=self.profile, MOZ_CRASHREPORTER_DISABLE="1"))
        self.client = Marionette(host="127.0.0.1", port=self.port)
        self.client.start_session()
        self.client.set_window_rect(width=max(width, 600), height=height + 90)
        if width < 600:
            with self.client.using_context("chrome"):
                self.client.execute_script("""
                    const page = Services.wm.getMostRecentWindow("navigator:browser")
                      .gBrowser.selectedBrowser;
                    for (const element of [page, page.parentElement]) {
                      element.style.setProperty("min-width", arguments[0] + "px");
                      element.style.setProperty("max-width", arguments[0] + "px");
                    }""", script_args=[width])
        self.width = width
        self.scheme = scheme

    def close(self):
        try:
            self.client.delete_session()
        finally:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)

    def where(self, name):
        return f"Firefox: {name} at {self.width} px{', dark' if self.scheme == 'dark' else ''}"

    def wait_for(self, script, what, seconds=15):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.client.execute_script(script):
                return
            time.sleep(0.1)
        raise RuntimeError(f"not found on {self.client.get_url()}: {what}")

    def click(self, css):
        self.client.find_element("css selector", css).click()

    def audit(self, name):
        where = self.where(name)
        inner = self.client.execute_script("return window.innerWidth")
        if inner != self.width:
            problems.append(f"{where}: the page sees {inner} px, not {self.width}")
        dark = self.client.execute_script(
            "return matchMedia('(prefers-color-scheme: dark)').matches")
        if dark != (self.scheme == "dark"):
            problems.append(f"{where}: the page is not shown {self.scheme}")
        wide = self.client.execute_script("return document.documentElement.scrollWidth")
        if wide > inner:
            problems.append(f"{where} scrolls sideways: scrollWidth {wide} > innerWidth {inner}")
        covered = self.client.execute_script("""
            return [...document.querySelectorAll(
                '.highlight-code > .download-contents, .highlight-code > .copy-to-clipboard')]
              .filter((button) => {
                const answer = button.closest('.highlight-code')?.querySelector('pre');
                if (!answer) return false;
                const b = button.getBoundingClientRect(), a = answer.getBoundingClientRect();
                return b.bottom > a.top && b.top < a.bottom && b.right > a.left && b.left < a.right;
              }).length""")
        if covered:
            problems.append(f"{where}: a Download or Copy button lies over {covered} answer(s)")
        violations = self.client.execute_async_script(AXE + """
            const done = arguments[arguments.length - 1];
            axe.run(document, { runOnly: { type: "tag", values: arguments[0] } })
              .then((results) => done(results.violations.map((violation) =>
                `${violation.id} (${violation.impact}, ${violation.nodes.length}x): ` +
                violation.nodes.slice(0, 3).map((node) => node.target.join(" ")).join(" | "))));
        """, script_args=[TAGS], script_timeout=120000)
        print(f"{where}: scrollWidth {wide} of {inner}; axe violations: "
              f"{', '.join(v.split(':')[0] for v in violations) or 'none'}")
        problems.extend(f"{where}: axe {violation}" for violation in violations)
        self.client.execute_script("window.scrollTo(0, 0)")
        dark = "-dark" if self.scheme == "dark" else ""
        shot = SHOTS / f"firefox-{name}-{self.width}{dark}.png"
        shot.write_bytes(self.client.screenshot(format="binary", full=False))


def execute_every_operation(browser):
    """Expands every operation, then executes each and waits for its answer."""
    count = browser.client.execute_script("return document.querySelectorAll('.opblock').length")
    for index in range(count):
        browser.client.find_elements("css selector", ".opblock .opblock-summary-control")[index].click()
        browser.wait_for(
            f"return document.querySelectorAll('.opblock')[{index}].querySelector('.execute')",
            f"Execute of operation {index + 1}")
    for index in range(count):
        operation = f"document.querySelectorAll('.opblock')[{index}]"
        browser.client.execute_script(f"{operation}.querySelector('.execute').scrollIntoView()")
        browser.client.find_elements("css selector", ".opblock .btn.execute")[index].click()
        browser.wait_for(
            f"return {operation}.querySelector('.live-responses-table tbody .response-col_status')",
            f"the answer of operation {index + 1}")
    return count


def published(browser):
    browser.client.navigate(f"{ORIGIN}/docs/")
    browser.wait_for("return document.querySelector('#operations-Utility-ping')", "ping")
    browser.click("#operations-Utility-ping .opblock-summary-control")
    browser.wait_for("return document.querySelector('#operations-Utility-ping .execute')", "Execute")
    browser.click("#operations-Utility-ping .execute")
    browser.wait_for(
        "return document.querySelector('#operations-Utility-ping .live-responses-table tbody')",
        "ping's answer")
    browser.audit("reference")
    for page in ["errors", "changelog", "guide"]:
        browser.client.navigate(f"{ORIGIN}/docs/{page}")
        browser.wait_for("return document.querySelector('main h1')", f"the {page} page")
        browser.client.execute_script(
            "document.querySelectorAll('details').forEach((d) => { d.open = true; })")
        browser.audit(page)


def keyed(browser, origin, key):
    browser.client.navigate(f"{origin}/docs/")
    browser.wait_for("return document.querySelector('.auth-wrapper .authorize')", "Authorize")
    browser.click(".auth-wrapper button.authorize")
    browser.wait_for("return document.querySelector('.dialog-ux input')", "the key's field")
    browser.client.find_element("css selector", ".dialog-ux input").send_keys(key)
    browser.click(".dialog-ux button.modal-btn.authorize")
    browser.click(".dialog-ux button.modal-btn.btn-done")
    count = execute_every_operation(browser)
    unauthorised = browser.client.execute_script("""
        return [...document.querySelectorAll('.live-responses-table tbody .response-col_status')]
          .filter((status) => ['401', '403'].includes(status.textContent.trim())).length""")
    if unauthorised:
        problems.append(f"{browser.where('reference-keyed')}: {unauthorised} answers 401 or 403")
    print(f"{browser.where('reference-keyed')}: {count} operations expanded and executed")
    browser.audit("reference-keyed")


SHOTS.mkdir(parents=True, exist_ok=True)
for scheme in ["light", "dark"]:
    for width, height in VIEWPORTS:
        browser = Firefox(width, height, scheme)
        try:
            if KEYED:
                keyed(browser, *KEYED)
            else:
                published(browser)
        finally:
            browser.close()

if problems:
    print("\n".join(f"FAIL: {problem}" for problem in problems), file=sys.stderr)
    sys.exit(1)
print("ok: Firefox " + ("the keyed reference, every operation executed" if KEYED
                         else "the reference, errors, changelog and guide")
      + ", audited at three widths, light and dark")
