// The ceilings of `npm run bench`, served by the same runtime, harness and D1 database as the API under test, with
// no framework, no middleware and no auth: the least each route must do, alone.
//   GET  /empty      a small JSON body and nothing else: what the runtime costs per request;
//                    ?bytes=N answers an N-byte body instead (a response as big as GET /stock).
//   POST /d1-write   one bound INSERT of one row into a bench-only table (created by the bench, never by the
//                    migrations): what one D1 write costs.
//   GET  /d1-read    one SELECT of one row by primary key (users.balance_cents): one D1 round trip, the least an
//                    authenticated read must do, shown next to the keyed read.
//   GET  /keyed-read what every request with an API key must do, alone (the fair ceiling of GET /wallet/balance):
//                    the key's SHA-256 (X-API-Key), one rate-limiter call on the hash, one D1 read of the key's user's
//                    balance by that hash, and one JSON log line, as the API logs every request.
//   POST /purchase-batch  {key_hash, product_id, quantity}: a purchase's own batch, once, on the raw binding: the
//                    statements src/services/orders/orders.ts `purchase` builds (with the same code, so they never drift),
//                    for an API key given by its hash; no framework, middleware, rate limit, retry wrapper, cache
//                    purge or log (the ceiling of POST /orders).
//   GET  /cache-hit  one caches.default.match that hits (an entry stored on first use; ?bytes=N for an N-byte body:
//                    at the size of GET /stock, the ceiling of a cached GET /stock).
// and one more platform primitive the routes are made of, to explain the ratios:
//   GET  /ratelimit  one call of the Rate Limiting binding (limits raised for the bench, as for the API).
//   GET  /pbkdf2     one PBKDF2-SHA256 of 100,000 iterations, as the API's password check does (src/lib/crypto.ts).
// This worker exists only in the bench: it is not part of the production bundle or of wrangler.toml. It imports the
// purchase from src, so it is bundled before use (bench/harness.mjs, bundleCeiling).
import { apiKeyCaller } from '../src/services/caller';
import { purchase } from '../src/services/orders/orders';

const CREATE_TABLE = 'CREATE TABLE IF NOT EXISTS bench_writes (id INTEGER PRIMARY KEY, note TEXT NOT NULL, created_at TEXT NOT NULL)';
let tableCreated = false;
const EMPTY = JSON.stringify({ success: true, data: {} });
const json = { 'Content-Type': 'application/json' };
// A JSON body of about `bytes` bytes (the empty worker's body when 0).
// Large bodies are encoded once and kept as bytes, so a response costs what sending them costs, not re-encoding a string.
const bodies = new Map();
const bodyOf = (bytes) => {
  if (bytes <= EMPTY.length) return EMPTY;
  if (!bodies.has(bytes)) bodies.set(bytes, new TextEncoder().encode(JSON.stringify({ success: true, data: 'x'.repeat(bytes - 27) })));
  return bodies.get(bytes);
};
const ok = (data, status = 200) => new Response(JSON.stringify({ success: true, data }), { status, headers: json });

export default {
  async fetch(request, env, ctx) {
    const { pathname, origin, searchParams } = new URL(request.url);
    switch (pathname) {
      case '/empty':
        return new Response(bodyOf(Number(searchParams.get('bytes') ?? 0)), { headers: json });
      case '/d1-write': {
        if (!tableCreated) {
          // bench/run.mjs creates the table too; this serves other harnesses (bench/compare-harnesses.mjs)
          await env.DB.prepare(CREATE_TABLE).run();
          tableCreated = true;
        }
        const { meta } = await env.DB.prepare('INSERT INTO bench_writes (note, created_at) VALUES (?1, ?2)')
          .bind('ceiling', new Date().toISOString())
          .run();
        return ok({ id: meta.last_row_id }, 201);
      }
      case '/d1-read': {
        const row = await env.DB.prepare('SELECT balance_cents FROM users WHERE id = ?1').bind(1).first();
        return ok(row);
      }
      case '/keyed-read': {
        const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(request.headers.get('X-API-Key') ?? ''));
        const keyHash = [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, '0')).join('');
        await env.RATE_LIMITER.limit({ key: keyHash });
        const row = await env.DB.prepare('SELECT u.balance_cents FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.key_hash = ?1').bind(keyHash).first();
        console.log(JSON.stringify({ level: 'info', msg: 'ceiling', route: pathname, status: 200 }));
        return ok(row);
      }
      case '/purchase-batch': {
        const { key_hash: keyHash, product_id: productId, quantity } = await request.json();
        const { order } = await purchase(env.DB, apiKeyCaller(keyHash), { productId, quantity }, { origin });
        return ok({ id: order.id }, 201);
      }
      case '/ratelimit': {
        const { success } = await env.RATE_LIMITER.limit({ key: 'bench' });
        return ok({ success });
      }
      case '/cache-hit': {
        const bytes = Number(searchParams.get('bytes') ?? 0);
        const key = new Request(`${origin}/cached-entry/${bytes}`);
        const hit = await caches.default.match(key);
        if (hit) return new Response(hit.body, hit);
        const response = new Response(bodyOf(bytes), { headers: { ...json, 'Cache-Control': 'public, max-age=3600' } });
        ctx.waitUntil(caches.default.put(key, response.clone()));
        return response;
      }
      case '/pbkdf2': {
        const key = await crypto.subtle.importKey('raw', new TextEncoder().encode('bench-password'), 'PBKDF2', false, ['deriveBits']);
        const salt = crypto.getRandomValues(new Uint8Array(16));
        await crypto.subtle.deriveBits({ name: 'PBKDF2', hash: 'SHA-256', salt, iterations: 100_000 }, key, 256);
        return ok({ iterations: 100_000 });
      }
      default:
        return new Response(JSON.stringify({ success: false, code: 'NOT_FOUND' }), { status: 404, headers: json });
    }
  },
};
