// The local PAYMENT_BASE_URL follows the port `npm run dev` listens on, so every deposit's payment_url (and the
// dashboard's Add funds) leads to this server. A base set to another host (a tunnel, to receive a vendor's webhooks)
// in .dev.vars, or given with `--var PAYMENT_BASE_URL:<url>`, is kept as it is.
import { existsSync, readFileSync } from 'node:fs';

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** The PAYMENT_BASE_URL line of a .dev.vars file, unquoted, or undefined. */
export function devVarsPaymentBaseUrl(file = '.dev.vars') {
  if (!existsSync(file)) return undefined;
  const line = readFileSync(file, 'utf8').split(/\r?\n/).find((l) => /^\s*PAYMENT_BASE_URL\s*=/.test(l));
  return line?.slice(line.indexOf('=') + 1).trim().replace(/^(["'])(.*)\1$/, '$2');
}

const isLocal = (url) => {
  try {
    return LOCAL_HOSTS.has(new URL(url).hostname);
  } catch {
    return false;
  }
};

/**
 * The base the server will use, and the `--var` that sets it when it must follow the port (none when the command line
 * names one, or .dev.vars names a host other than this machine).
 */
export function localPaymentBaseUrl(port, args, configured = devVarsPaymentBaseUrl()) {
  const given = args.find((arg) => arg.startsWith('PAYMENT_BASE_URL:'));
  if (given) return { url: given.slice('PAYMENT_BASE_URL:'.length), varArgs: [] };
  if (configured && !isLocal(configured)) return { url: configured, varArgs: [] };
  const url = `http://localhost:${port}`;
  return { url, varArgs: ['--var', `PAYMENT_BASE_URL:${url}`] };
}
