import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

// CI installs Chromium and must run the browser tests; a laptop without it gets a loud skip rather than a red suite.
export const browserAvailable = existsSync(CHROMIUM) || process.env.CI === 'true';
if (!browserAvailable) console.warn(`Skipping browser tests: no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH).`);

export const launchBrowser = () =>
  chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
