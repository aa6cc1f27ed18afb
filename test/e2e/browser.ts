import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

// CI installs Chromium and must run the browser tests; a laptop without it gets a loud skip rather than a red suite.
export const browserAvailable = existsSync(CHROMIUM) || process.env.CI === 'true';
if (!browserAvailable) console.warn(`Skipping browser tests: no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH).`);

const launchBrowser = () =>
  chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });

/**
 * One Chromium for the tests of the calling `describe`: launched before them, closed after (call it inside a
 * `describe.skipIf(!browserAvailable)`, so a machine without Chromium launches nothing). Answers the browser.
 */
export function useBrowser(): () => Browser {
  let browser: Browser | undefined;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });
  return () => browser!;
}

/** Waits until the page is as a person sees it: loaded, every linked stylesheet applied, the fonts settled. */
export async function settled(page: Page) {
  await page.waitForLoadState('load');
  const deadline = Date.now() + 15_000;
  const styled = () =>
    page.evaluate(() =>
      [...document.querySelectorAll<HTMLLinkElement>('link[rel="stylesheet"]')].every((link) => (link.sheet?.cssRules.length ?? 0) > 0),
    );
  while (!(await styled())) {
    if (Date.now() > deadline) throw new Error(`${page.url()}: the stylesheet was never applied`);
    await page.waitForTimeout(50);
  }
  await page.evaluate(() => document.fonts.ready.then(() => undefined));
}

/** A phone's viewport: the width every page must fit without scrolling sideways. */
export const PHONE = { width: 375, height: 812 };

/** Nothing wider than the phone: neither the page nor a table scrolls sideways (tables stack their rows). */
export async function fitsThePhone(page: Page) {
  await settled(page);
  expect(await page.evaluate(() => document.documentElement.scrollWidth), `${page.url()} scrolls sideways`).toBeLessThanOrEqual(PHONE.width);
  const wideTables = await page.evaluate(() => [...document.querySelectorAll('.table-wrap')].filter((wrap) => wrap.scrollWidth > wrap.clientWidth).length);
  expect(wideTables, `${page.url()}: a table scrolls sideways`).toBe(0);
}

/** A laptop's viewport: the other width every dashboard page is checked at. */
export const DESKTOP = { width: 1280, height: 900 };

/**
 * At the page's own viewport width: the page does not scroll sideways, no table does, and every visible action (a
 * button, a submit input, a link styled as a button) lies wholly inside the width, none cut off or pushed off to the right.
 */
export async function actionsInView(page: Page) {
  await settled(page);
  const width = page.viewportSize()!.width;
  expect(await page.evaluate(() => document.documentElement.scrollWidth), `${page.url()} scrolls sideways at ${width} px`).toBeLessThanOrEqual(width);
  const wideTables = await page.evaluate(() => [...document.querySelectorAll('.table-wrap')].filter((wrap) => wrap.scrollWidth > wrap.clientWidth).length);
  expect(wideTables, `${page.url()}: a table scrolls sideways at ${width} px`).toBe(0);
  const outside = await page.evaluate((limit) => {
    const actions = [...document.querySelectorAll<HTMLElement>('button, input[type="submit"]')];
    return actions
      .map((el) => ({ name: (el.textContent || (el as HTMLInputElement).value || '').trim(), box: el.getBoundingClientRect() }))
      .filter(({ box }) => box.width > 0 && (box.left < 0 || box.right > limit))
      .map(({ name, box }) => `"${name}" at ${Math.round(box.left)}..${Math.round(box.right)} px`);
  }, width);
  expect(outside, `${page.url()}: actions outside the ${width} px window`).toEqual([]);
}
