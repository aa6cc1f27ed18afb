// The local PAYMENT_BASE_URL and PUBLIC_BASE_URL follow the port `npm run dev` listens on, so every deposit's
// payment_url (and the dashboard's Add funds) and every link in an email lead to this server. A base set to another
// host (a tunnel, to receive a vendor's webhooks) in .dev.vars, or given with `--var NAME:<url>`, is kept as it is.
import { existsSync, readFileSync } from 'node:fs';

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** The `name` line of a .dev.vars file, unquoted, or undefined. */
export function devVarsValue(name, file = '.dev.vars') {
  if (!existsSync(file)) return undefined;
  const line = readFileSync(file, 'utf8').split(/\r?\n/).find((l) => new RegExp(`^\\s*${name}\\s*=`).test(l));
  return line?.slice(line.indexOf('=') + 1).trim().replace(/^(["'])(.*)\1$/, '$2');
}

/** The PAYMENT_BASE_URL line of a .dev.vars file, unquoted, or undefined. */
export const devVarsPaymentBaseUrl = (file = '.dev.vars') => devVarsValue('PAYMENT_BASE_URL', file);

const isLocal = (url) => {
  try {
    return LOCAL_HOSTS.has(new URL(url).hostname);
  } catch {
    return false;
  }
};

/**
 * The base `name` the server will use, and the `--var` that sets it when it must follow the port (none when the
 * command line names one, or .dev.vars names a host other than this machine).
 */
export function localBaseUrl(name, port, args, configured = devVarsValue(name)) {
  const given = args.find((arg) => arg.startsWith(`${name}:`));
  if (given) return { url: given.slice(name.length + 1), varArgs: [] };
  if (configured && !isLocal(configured)) return { url: configured, varArgs: [] };
  const url = `http://localhost:${port}`;
  return { url, varArgs: ['--var', `${name}:${url}`] };
}

export const localPaymentBaseUrl = (port, args, configured = devVarsPaymentBaseUrl()) => localBaseUrl('PAYMENT_BASE_URL', port, args, configured);

/** The shop's public origin, for the links in emails (PUBLIC_BASE_URL). */
export const localPublicBaseUrl = (port, args, configured = devVarsValue('PUBLIC_BASE_URL')) => localBaseUrl('PUBLIC_BASE_URL', port, args, configured);
