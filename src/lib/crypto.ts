export const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const encoder = new TextEncoder();

/** Uniformly random base62 string (rejection sampling, no modulo bias). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of crypto.getRandomValues(new Uint8Array(length * 2))) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

export function toHex(bytes: ArrayBuffer | Uint8Array): string {
  return [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

export async function sha256Hex(value: string): Promise<string> {
  return toHex(await crypto.subtle.digest('SHA-256', encoder.encode(value)));
}

/** Constant-time string comparison: both sides are hashed first so length differences leak nothing either. */
export async function timingSafeEqualStrings(a: string, b: string): Promise<boolean> {
  const [ha, hb] = await Promise.all([
    crypto.subtle.digest('SHA-256', encoder.encode(a)),
    crypto.subtle.digest('SHA-256', encoder.encode(b)),
  ]);
  return crypto.subtle.timingSafeEqual(ha, hb);
}

export async function hmacSha256Hex(secret: string, message: string): Promise<string> {
  const key = await crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, [
    'sign',
  ]);
  return toHex(await crypto.subtle.sign('HMAC', key, encoder.encode(message)));
}

/** Bytes of a hex string, or null when it is not one (odd length, other characters). */
export function hexToBytes(hex: string): Uint8Array | null {
  if (!/^(?:[0-9a-fA-F]{2})*$/.test(hex)) return null;
  return Uint8Array.from(hex.match(/../g) ?? [], (pair) => parseInt(pair, 16));
}

/**
 * Whether `signatureHex` is the HMAC of `message` under `secret`: WebCrypto's verify, which compares in constant
 * time. A signature that is not hex is simply not valid.
 */
export async function verifyHmacHex(hash: 'SHA-256' | 'SHA-512', secret: string, message: string, signatureHex: string): Promise<boolean> {
  const signature = hexToBytes(signatureHex);
  if (!signature || signature.length === 0) return false;
  const key = await crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash }, false, ['verify']);
  return crypto.subtle.verify('HMAC', key, signature, encoder.encode(message));
}

/** MD5 as hex: only for vendors whose legacy signature scheme is built on it (workerd has it as a non-standard digest). */
export async function md5Hex(value: string): Promise<string> {
  return toHex(await crypto.subtle.digest('MD5', encoder.encode(value)));
}

/** Base64 of a string's UTF-8 bytes. */
export const base64Utf8 = (value: string) => toBase64(encoder.encode(value));

// Workers cap PBKDF2 at 100,000 iterations.
const PBKDF2_ITERATIONS = 100_000;

function toBase64(bytes: Uint8Array): string {
  let binary = '';
  // In slices: spreading a whole large array into one call overflows the argument limit.
  for (let at = 0; at < bytes.length; at += 0x8000) binary += String.fromCharCode(...bytes.subarray(at, at + 0x8000));
  return btoa(binary);
}

function fromBase64(text: string): Uint8Array {
  return Uint8Array.from(atob(text), (ch) => ch.charCodeAt(0));
}

async function pbkdf2(password: string, salt: Uint8Array, iterations: number): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey('raw', encoder.encode(password), 'PBKDF2', false, ['deriveBits']);
  const bits = await crypto.subtle.deriveBits({ name: 'PBKDF2', hash: 'SHA-256', salt, iterations }, key, 256);
  return new Uint8Array(bits);
}

/** `pbkdf2_sha256$<iterations>$<salt b64>$<hash b64>` */
export async function hashPassword(password: string): Promise<string> {
  const salt = crypto.getRandomValues(new Uint8Array(16));
  const hash = await pbkdf2(password, salt, PBKDF2_ITERATIONS);
  return `pbkdf2_sha256$${PBKDF2_ITERATIONS}$${toBase64(salt)}$${toBase64(hash)}`;
}

/**
 * A well-formed hash that no password matches (its digest is random, not derived from anything): verifying against it
 * costs exactly what checking a real password costs, so an unknown account is not told apart by timing.
 */
export function decoyPasswordHash(): string {
  const random = (length: number) => toBase64(crypto.getRandomValues(new Uint8Array(length)));
  return `pbkdf2_sha256$${PBKDF2_ITERATIONS}$${random(16)}$${random(32)}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, iterations, salt, expected] = stored.split('$');
  if (scheme !== 'pbkdf2_sha256' || !iterations || !salt || !expected) return false;
  const actual = await pbkdf2(password, fromBase64(salt), Number(iterations));
  return crypto.subtle.timingSafeEqual(actual, fromBase64(expected));
}

/** An AES-256-GCM key derived (HKDF-SHA256) from a secret, for one purpose. */
async function sealingKey(secret: string, purpose: string): Promise<CryptoKey> {
  const material = await crypto.subtle.importKey('raw', encoder.encode(secret), 'HKDF', false, ['deriveKey']);
  return crypto.subtle.deriveKey(
    { name: 'HKDF', hash: 'SHA-256', salt: new Uint8Array(0), info: encoder.encode(purpose) },
    material,
    { name: 'AES-GCM', length: 256 },
    false,
    ['encrypt', 'decrypt'],
  );
}

/** Encrypts `plaintext` so that only a holder of `secret` can read it: base64 of a random IV and the ciphertext. */
export async function sealText(secret: string, purpose: string, plaintext: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = await crypto.subtle.encrypt({ name: 'AES-GCM', iv }, await sealingKey(secret, purpose), encoder.encode(plaintext));
  return toBase64(new Uint8Array([...iv, ...new Uint8Array(sealed)]));
}

/** The plaintext of `sealText`, or null when it was sealed under another secret (or altered). */
export async function openSealed(secret: string, purpose: string, sealed: string): Promise<string | null> {
  try {
    const bytes = fromBase64(sealed);
    const plain = await crypto.subtle.decrypt({ name: 'AES-GCM', iv: bytes.slice(0, 12) }, await sealingKey(secret, purpose), bytes.slice(12));
    return new TextDecoder().decode(plain);
  } catch {
    return null;
  }
}
