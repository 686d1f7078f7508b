// Debian's Chromium (`apt-get install chromium`), driven by playwright-core, for the dashboard's
// real-browser tests. No browser download: playwright-core only speaks to the one installed.
//
// Usage (top-level, so vitest knows at collection time whether to skip):
//   const browser = findChromium();
//   describe.skipIf("skipped" in browser)("...", () => { ... });
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";

export const CHROMIUM_PATH = "/usr/bin/chromium";

// Without the background-networking flags Chromium's own connections (updates, sync, field
// trials) are refused on the test machines, and it stalls on them.
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Chromium's path, or why it is skipped. On CI (`CI=true`) a missing Chromium fails instead. */
export function findChromium(): { path: string } | { skipped: string } {
  if (existsSync(CHROMIUM_PATH)) return { path: CHROMIUM_PATH };
  const why = `${CHROMIUM_PATH} is missing: install Debian's chromium (apt-get install chromium; bash .ci/run does)`;
  if (process.env.CI === "true") throw new Error(`the dashboard's browser tests need Chromium on CI: ${why}`);
  console.warn(`!!! dashboard browser tests SKIPPED: ${why}`);
  return { skipped: why };
}

export type RunningChromium = { context: BrowserContext; close(): Promise<void> };

/** A headless Chromium with a fresh profile of its own, removed at close. */
export async function launchChromium(executablePath: string): Promise<RunningChromium> {
  const userDataDir = await mkdtemp(join(tmpdir(), "tollgate-chromium-"));
  const context = await chromium.launchPersistentContext(userDataDir, { executablePath, headless: true, args: CHROMIUM_ARGS, acceptDownloads: true });
  return {
    context,
    close: async () => {
      await context.close();
      await rm(userDataDir, { recursive: true, force: true });
    },
  };
}

/**
 * What went wrong inside a page: uncaught errors, and console errors (a Content-Security-Policy
 * violation is reported there, as is a failed load of the page's script or style). Chromium also
 * logs every HTTP error answer to a fetch; `expected(url)` says which of those a test asked for.
 */
export function watchPageProblems(page: Page, expected: (url: string) => boolean = () => false): string[] {
  const problems: string[] = [];
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("console", (message) => {
    const text = message.text();
    if (text.startsWith("Failed to load resource: the server responded with a status of") && expected(message.location().url)) return;
    if (message.type() === "error" || /Content[- ]Security[- ]Policy|Trusted Type/i.test(text)) problems.push(`console ${message.type()}: ${text}`);
  });
  return problems;
}
